/* Base64 (see base64.h). */
#include "util/base64.h"

#include <stdlib.h>

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ri_base64_encode(const uint8_t *data, size_t len) {
    if (len > (SIZE_MAX - 1) / 4 * 3 - 3) return NULL;
    size_t n = (len + 2) / 3 * 4;
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len) v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len) v |= data[i + 2];
        out[o++] = ALPHABET[v >> 18 & 63];
        out[o++] = ALPHABET[v >> 12 & 63];
        out[o++] = i + 1 < len ? ALPHABET[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? ALPHABET[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

/* The value of a digit, -1 if it is none; url_safe also takes '-' and '_'. */
static int value_of(char c, bool url_safe) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || (url_safe && c == '-')) return 62;
    if (c == '/' || (url_safe && c == '_')) return 63;
    return -1;
}

bool ri_base64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    if (len % 4) return false;
    size_t pad = len && s[len - 1] == '=' ? (len > 1 && s[len - 2] == '=' ? 2 : 1) : 0;
    size_t n = len / 4 * 3 - pad;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) return false;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        int v[4];
        for (int k = 0; k < 4; k++) {
            bool padded = last && k >= 4 - (int)pad;
            v[k] = padded ? 0 : value_of(s[i + (size_t)k], false);
            if (v[k] < 0) {
                free(buf);
                return false;
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        /* Padding leaves bits unused: they must be zero (one encoding per byte string). */
        if (last && ((pad == 1 && (w & 0xFF)) || (pad == 2 && (w & 0xFFFF)))) {
            free(buf);
            return false;
        }
        buf[o++] = (uint8_t)(w >> 16);
        if (!last || pad < 2) buf[o++] = (uint8_t)(w >> 8);
        if (!last || pad < 1) buf[o++] = (uint8_t)w;
    }
    *out = buf;
    *out_len = o;
    return true;
}

bool ri_base64_decode_lenient(const char *s, size_t len, uint8_t **out, size_t *out_len) {
    *out = NULL;
    *out_len = 0;
    while (len > 0 && s[len - 1] == '=') len--;
    if (len % 4 == 1) return false;
    uint8_t *buf = malloc(len / 4 * 3 + 3);
    if (!buf) return false;
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = value_of(s[i], true);
        if (v < 0) {
            free(buf);
            return false;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[n++] = (uint8_t)(acc >> bits);
        }
    }
    *out = buf;
    *out_len = n;
    return true;
}
