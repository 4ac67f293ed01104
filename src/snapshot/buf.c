/*
 * The writer's output buffer: grows geometrically, checks every size computation for
 * overflow, and remembers a failed allocation so that the writer checks once at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

bool snap_buf_reserve(snap_buf *b, size_t n) {
    if (b->failed) return false;
    if (n <= b->cap - b->len) return true;
    if (b->fixed) {
        b->failed = b->too_small = true;
        return false;
    }
    if (n > SIZE_MAX - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + n;
    /* Double for small writes; a large one (a memory's pages) gets what it needs and a
     * little room for the sections after it, not twice that: a buffer far larger than
     * the image costs page faults and stays out of the allocator's reuse. */
    size_t cap = !b->cap ? 4096 : b->cap <= SIZE_MAX / 2 ? b->cap * 2 : SIZE_MAX;
    if (cap < need) cap = need <= SIZE_MAX - need / 16 - 65536 ? need + need / 16 + 65536 : need;
    uint8_t *data = realloc(b->data, cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->cap = cap;
    return true;
}

void snap_buf_put(snap_buf *b, const void *src, size_t n) {
    if (!n || !snap_buf_reserve(b, n)) return;
    memcpy(b->data + b->len, src, n);
    b->len += n;
}

void snap_buf_u8(snap_buf *b, uint8_t v) { snap_buf_put(b, &v, 1); }

void snap_buf_u32(snap_buf *b, uint32_t v) {
    uint8_t p[4];
    ri_le_put32(p, v);
    snap_buf_put(b, p, 4);
}

void snap_buf_u64(snap_buf *b, uint64_t v) {
    uint8_t p[8];
    ri_le_put64(p, v);
    snap_buf_put(b, p, 8);
}

void snap_buf_zeros(snap_buf *b, size_t n) {
    if (!n || !snap_buf_reserve(b, n)) return;
    memset(b->data + b->len, 0, n);
    b->len += n;
}

size_t snap_buf_begin_section(snap_buf *b, snap_tag_id tag, uint32_t flags) {
    size_t at = b->len;
    snap_buf_put(b, snap_tags[tag], 4);
    snap_buf_u32(b, flags);
    snap_buf_u64(b, 0);
    return at;
}

void snap_buf_end_section(snap_buf *b, size_t at) {
    if (b->failed) return;
    ri_le_put64(b->data + at + 8, (uint64_t)(b->len - at - RI_SNAP_SECTION_HEADER_BYTES));
}

uint32_t snap_buf_crc32c(const snap_buf *b) {
    uint32_t reg = 0xFFFFFFFFu;
    size_t pos = 0;
    for (unsigned i = 0; i < b->nspans; i++) {
        const snap_crc_span *s = &b->spans[i];
        if (s->at < pos || s->len > b->len - s->at) break; /* cannot happen: spans are recorded in order */
        reg = snap_crc32c_update(reg, b->data + pos, s->at - pos);
        reg = snap_crc32c_shift(reg, s->len) ^ s->reg;
        pos = s->at + s->len;
    }
    return snap_crc32c_update(reg, b->data + pos, b->len - pos) ^ 0xFFFFFFFFu;
}

void snap_buf_free(snap_buf *b) {
    if (!b->fixed) free(b->data);
    memset(b, 0, sizeof *b);
}
