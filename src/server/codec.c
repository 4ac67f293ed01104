/* Output as UTF-8 text that never splits a character across events. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"
#include "util/utf8.h"

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
        uint32_t cp;
        size_t L = ri_utf8_decode(in + i, total - i, &cp);
        if (L) {
            memcpy(o + n, in + i, L);
            n += L;
            i += L;
            continue;
        }
        size_t k = ri_utf8_subpart(in + i, total - i);
        if (k && i + k == total && !flush) {
            /* incomplete at the end: keep for the next write */
            memcpy(st->tail, in + i, k);
            st->ntail = (uint8_t)k;
            i = total;
        } else {
            put_fffd(o, &n); /* a maximal invalid prefix is one U+FFFD */
            i += k ? k : 1;
        }
    }
    free(in);
    o[n] = 0;
    *out_len = n;
    return o;
}
