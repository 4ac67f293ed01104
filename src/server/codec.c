/* Base64 for modules on the wire, hex, and output as UTF-8 text that never splits a
 * character across events. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static int b64_val(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

bool srv_b64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len) {
    while (len > 0 && in[len - 1] == '=') len--;
    if (len % 4 == 1) return false;
    uint8_t *buf = malloc(len / 4 * 3 + 3);
    if (!buf) return false;
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_val((unsigned char)in[i]);
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

char *srv_hex(const uint8_t *data, size_t n) {
    static const char d[] = "0123456789abcdef";
    char *s = malloc(2 * n + 1);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = d[data[i] >> 4];
        s[2 * i + 1] = d[data[i] & 15];
    }
    s[2 * n] = 0;
    return s;
}

/* Length of the sequence a lead byte starts (0: invalid lead). */
static int seq_len(uint8_t b) {
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

/* Whether continuation byte k (1-based) is valid after lead b. */
static bool cont_ok(uint8_t lead, int k, uint8_t c) {
    if ((c & 0xC0) != 0x80) return false;
    if (k == 1) {
        if (lead == 0xE0 && c < 0xA0) return false;
        if (lead == 0xED && c > 0x9F) return false;
        if (lead == 0xF0 && c < 0x90) return false;
        if (lead == 0xF4 && c > 0x8F) return false;
    }
    return true;
}

static void put_fffd(char *o, size_t *n) {
    o[(*n)++] = (char)0xEF;
    o[(*n)++] = (char)0xBF;
    o[(*n)++] = (char)0xBD;
}

char *srv_utf8_feed(srv_utf8 *st, const uint8_t *data, size_t len, bool flush, size_t *out_len) {
    size_t total = st->ntail + len;
    uint8_t *in = malloc(total ? total : 1);
    char *o = malloc(total * 3 + 4);
    if (!in || !o) {
        free(in);
        free(o);
        return NULL;
    }
    memcpy(in, st->tail, st->ntail);
    if (len) memcpy(in + st->ntail, data, len);
    st->ntail = 0;
    size_t n = 0, i = 0;
    while (i < total) {
        uint8_t b = in[i];
        int L = seq_len(b);
        if (L == 0) {
            put_fffd(o, &n);
            i++;
            continue;
        }
        if (L == 1) {
            o[n++] = (char)b;
            i++;
            continue;
        }
        int k = 1;
        while (k < L && i + (size_t)k < total && cont_ok(b, k, in[i + (size_t)k])) k++;
        if (k == L) {
            memcpy(o + n, in + i, (size_t)L);
            n += (size_t)L;
            i += (size_t)L;
        } else if (i + (size_t)k == total && !flush) {
            /* incomplete at the end: keep for the next write */
            memcpy(st->tail, in + i, (size_t)k);
            st->ntail = (uint8_t)k;
            i = total;
        } else {
            put_fffd(o, &n); /* a maximal invalid prefix is one U+FFFD */
            i += (size_t)k;
        }
    }
    free(in);
    o[n] = 0;
    *out_len = n;
    return o;
}
