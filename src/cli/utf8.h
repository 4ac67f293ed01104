/* UTF-8 decoding, strict (no overlongs, no surrogates, nothing above U+10FFFF), for the
 * two places that must not pass untrusted bytes through unchanged: JSON strings and text
 * written to a terminal. */
#ifndef RI_CLI_UTF8_H
#define RI_CLI_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the sequence at s (n > 0 bytes available). Returns its length (1..4) and the
 * code point in *cp, or 0 if s does not start with a valid sequence. */
size_t ri_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

#endif
