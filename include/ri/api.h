/* ri-sandbox: what the library exports.
 *
 * The library is built with hidden visibility: only the declarations marked RI_API (every
 * function of the public headers, all named ri_*) are exported from the shared library, so
 * internal functions can change without breaking programs linked against it. */
#ifndef RI_API_H
#define RI_API_H

#if defined(_WIN32)
#  define RI_API
#elif defined(__GNUC__) || defined(__clang__)
#  define RI_API __attribute__((visibility("default")))
#else
#  define RI_API
#endif

#endif
