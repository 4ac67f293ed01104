/* UTF-8 as the WebAssembly spec and JSON define it: shortest form, no surrogates, at most
 * U+10FFFF. Module names, JSON strings, store descriptions, output streamed as text. */
#ifndef RI_UTIL_UTF8_H
#define RI_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes the sequence at s (n > 0 bytes available). Returns its length (1..4) and the
 * code point in *cp, or 0 if s does not start with a complete valid sequence. */
size_t ri_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);
/* Whether all n bytes are valid UTF-8. */
bool ri_utf8_valid(const uint8_t *s, size_t n);
/* The length of the longest prefix of s (n > 0) that begins a valid sequence (Unicode's
 * "maximal subpart": what one U+FFFD replaces), 0 if s[0] cannot begin one. */
size_t ri_utf8_subpart(const uint8_t *s, size_t n);

#endif
