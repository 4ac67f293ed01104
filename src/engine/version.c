/* The library's version (include/ri/version.h), compiled in so that a program can ask the
 * shared library it runs with. */
#include "ri/version.h"

const char *ri_version(void) { return RI_VERSION_STRING; }

int ri_version_number(void) { return RI_VERSION_NUMBER; }
