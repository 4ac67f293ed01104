/* ri-sandbox: what the library exports.
 *
 * The library is built with hidden visibility: only the declarations marked RI_API (every
 * function of the public headers, all named ri_*) are exported from the shared library, so
 * internal functions can change without breaking programs linked against it.
 *
 * ABI within a major version: functions are only added, never removed or changed. The
 * structs a program fills or the library returns by value and that may grow
 * (ri_sandbox_config, ri_sandbox_result with its ri_sandbox_error and ri_sandbox_metrics)
 * end with a `reserved` array: a later field takes reserved bytes, so the size and every
 * existing offset stay the same, and zero there means "as before". Start a config from
 * its _default() function (or zero it), never from uninitialised memory. Other public
 * structs keep their layout within a major version; what they lack comes as new
 * functions. */
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
