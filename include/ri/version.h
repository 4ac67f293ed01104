/* ri-sandbox: the library's version.
 *
 * RI_VERSION_* are the version of the headers a program was compiled with; ri_version() is
 * the version of the library it runs with (they differ when a program built against one
 * release runs with the shared library of another). The numbers follow semantic
 * versioning: a release with the same major number keeps the API and the ABI. */
#ifndef RI_VERSION_H
#define RI_VERSION_H

#include "ri/api.h"

#define RI_VERSION_MAJOR 0
#define RI_VERSION_MINOR 2
#define RI_VERSION_PATCH 0
#define RI_VERSION_STRING "0.2.0"
/* One number that compares in order: 10000 * major + 100 * minor + patch. */
#define RI_VERSION_NUMBER (RI_VERSION_MAJOR * 10000 + RI_VERSION_MINOR * 100 + RI_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version as "MAJOR.MINOR.PATCH". */
RI_API const char *ri_version(void);
/* The library's version as RI_VERSION_NUMBER computes it. */
RI_API int ri_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
