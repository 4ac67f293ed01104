/* A growable byte buffer (see buf.h). */
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

#include "util/le.h"

bool ri_buf_reserve(ri_buf *b, size_t n) {
    if (b->failed) return false;
    if (n <= b->cap - b->len) return true;
    if (n > SIZE_MAX - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + n;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void ri_buf_put(ri_buf *b, const void *src, size_t n) {
    if (!n || !ri_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, src, n);
    b->len += n;
}

void ri_buf_zeros(ri_buf *b, size_t n) {
    if (!n || !ri_buf_reserve(b, n)) return;
    memset(b->data + b->len, 0, n);
    b->len += n;
}

void ri_buf_u8(ri_buf *b, uint8_t v) { ri_buf_put(b, &v, 1); }

void ri_buf_u16(ri_buf *b, uint16_t v) {
    uint8_t p[2];
    ri_le_put16(p, v);
    ri_buf_put(b, p, 2);
}

void ri_buf_u32(ri_buf *b, uint32_t v) {
    uint8_t p[4];
    ri_le_put32(p, v);
    ri_buf_put(b, p, 4);
}

void ri_buf_u64(ri_buf *b, uint64_t v) {
    uint8_t p[8];
    ri_le_put64(p, v);
    ri_buf_put(b, p, 8);
}

void ri_buf_free(ri_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
