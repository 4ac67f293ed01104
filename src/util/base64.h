/* Base64 (RFC 4648): the store's JSON export and etcd's gateway (strict), modules on the
 * server's wire (lenient, as the original's clients send them). */
#ifndef RI_UTIL_BASE64_H
#define RI_UTIL_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Standard alphabet, padded; malloc'd and NUL-terminated (NULL on no memory). */
char *ri_base64_encode(const uint8_t *data, size_t len);
/* Strict: standard alphabet, padding required, no whitespace, unused bits zero (one
 * encoding per byte string). *out malloc'd. */
bool ri_base64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len);
/* Lenient: padding optional, the URL-safe alphabet accepted too, no whitespace. */
bool ri_base64_decode_lenient(const char *s, size_t len, uint8_t **out, size_t *out_len);

#endif
