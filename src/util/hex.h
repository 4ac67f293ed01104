/* Lower-case hexadecimal: digests, ids and bytes in JSON and file names. */
#ifndef RI_UTIL_HEX_H
#define RI_UTIL_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes 2n digits and a NUL into out (2n + 1 bytes). */
void ri_hex_encode(const uint8_t *data, size_t n, char *out);
/* The same into a new string (malloc'd; NULL on no memory). */
char *ri_hex_dup(const uint8_t *data, size_t n);
/* Reads a NUL-terminated string of exactly 2 * n_bytes lower-case digits into out. */
bool ri_hex_decode(const char *s, size_t n_bytes, uint8_t *out);

#endif
