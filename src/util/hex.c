/* Lower-case hexadecimal (see hex.h). */
#include "util/hex.h"

#include <stdlib.h>

static const char DIGITS[] = "0123456789abcdef";

void ri_hex_encode(const uint8_t *data, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = DIGITS[data[i] >> 4];
        out[2 * i + 1] = DIGITS[data[i] & 15];
    }
    out[2 * n] = '\0';
}

char *ri_hex_dup(const uint8_t *data, size_t n) {
    if (n > (SIZE_MAX - 1) / 2) return NULL;
    char *s = malloc(2 * n + 1);
    if (s) ri_hex_encode(data, n, s);
    return s;
}

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

bool ri_hex_decode(const char *s, size_t n_bytes, uint8_t *out) {
    for (size_t i = 0; i < n_bytes; i++) {
        int hi = digit_value(s[2 * i]);
        int lo = hi < 0 ? -1 : digit_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return s[2 * n_bytes] == '\0';
}
