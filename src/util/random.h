/* Random bytes from the kernel (getrandom) for ids and tokens: never for anything a
 * sandbox sees, which draws from its own seeded generator. */
#ifndef RI_UTIL_RANDOM_H
#define RI_UTIL_RANDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fills out with n random bytes; false (errno set) if the kernel cannot. */
bool ri_random_bytes(uint8_t *out, size_t n);
/* nhex random lower-case hex digits and a NUL (out has nhex + 1 bytes); nhex <= 128. */
bool ri_random_hex(char *out, size_t nhex);

#endif
