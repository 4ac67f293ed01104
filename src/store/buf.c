/*
 * A growable byte buffer for manifests and images, with little-endian integers. An
 * allocation failure is remembered (failed) and checked once at the end, so writers
 * need not test every put.
 */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

bool ss_buf_reserve(ss_buf *b, size_t more) {
    if (b->failed) return false;
    if (more <= b->cap - b->len) return true;
    if (more > SIZE_MAX - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + more;
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

void ss_buf_put(ss_buf *b, const void *p, size_t n) {
    if (!n || !ss_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void ss_buf_zeros(ss_buf *b, size_t n) {
    if (!n || !ss_buf_reserve(b, n)) return;
    memset(b->data + b->len, 0, n);
    b->len += n;
}

void ss_buf_u8(ss_buf *b, uint8_t v) { ss_buf_put(b, &v, 1); }

void ss_buf_u16(ss_buf *b, uint16_t v) {
    uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    ss_buf_put(b, p, 2);
}

void ss_buf_u32(ss_buf *b, uint32_t v) {
    uint8_t p[4];
    ss_put_u32(p, v);
    ss_buf_put(b, p, 4);
}

void ss_buf_u64(ss_buf *b, uint64_t v) {
    uint8_t p[8];
    ss_put_u64(p, v);
    ss_buf_put(b, p, 8);
}

void ss_buf_free(ss_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

void ss_put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void ss_put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

uint16_t ss_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (uint16_t)p[1] << 8); }

uint32_t ss_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t ss_get_u64(const uint8_t *p) { return (uint64_t)ss_get_u32(p) | (uint64_t)ss_get_u32(p + 4) << 32; }
