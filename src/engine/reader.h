/*
 * A bounds-checked cursor over a byte range, with the binary format's LEB128 rules.
 * Shared by the decoder, the validator and the compiler. Every read checks the end;
 * on failure it records the first error (message + offset) and returns 0, so callers
 * may chain reads and test `r->failed` once.
 */
#ifndef RI_ENGINE_READER_H
#define RI_ENGINE_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef struct ri_reader {
    const uint8_t *base;  /* start of the module binary: offsets are reported from here */
    const uint8_t *p;     /* cursor */
    const uint8_t *end;   /* end of the readable range */
    bool failed;
    const char *error;    /* static text, e.g. "unexpected end", "integer too large" */
    uint32_t error_offset;
    bool unsupported;     /* the error names a feature the engine lacks (RI_ERR_UNSUPPORTED) */
} ri_reader;

static inline void ri_reader_init(ri_reader *r, const uint8_t *base, const uint8_t *start, const uint8_t *end) {
    r->base = base;
    r->p = start;
    r->end = end;
    r->failed = false;
    r->error = NULL;
    r->error_offset = 0;
    r->unsupported = false;
}

static inline uint32_t ri_reader_offset(const ri_reader *r) { return (uint32_t)(r->p - r->base); }
static inline bool ri_reader_eof(const ri_reader *r) { return r->p >= r->end; }
static inline size_t ri_reader_left(const ri_reader *r) { return (size_t)(r->end - r->p); }

static inline void ri_reader_fail(ri_reader *r, const char *msg) {
    if (!r->failed) {
        r->failed = true;
        r->error = msg;
        r->error_offset = ri_reader_offset(r);
    }
    r->p = r->end; /* stop any further reads */
}

/* Fails on a feature of a later WebAssembly version that the engine does not implement:
 * the input may well be valid, so it is reported as unsupported, naming the feature. */
static inline void ri_reader_unsupported(ri_reader *r, const char *msg) {
    if (!r->failed) {
        ri_reader_fail(r, msg);
        r->unsupported = true;
    }
    r->p = r->end;
}

static inline uint8_t ri_read_u8(ri_reader *r) {
    if (r->p >= r->end) { ri_reader_fail(r, "unexpected end"); return 0; }
    return *r->p++;
}

static inline const uint8_t *ri_read_bytes(ri_reader *r, size_t n) {
    if ((size_t)(r->end - r->p) < n) { ri_reader_fail(r, "unexpected end"); return NULL; }
    const uint8_t *s = r->p;
    r->p += n;
    return s;
}

/* Unsigned LEB128 of at most `bits` bits (32 or 64). The spec's rules: at most
 * ceil(bits/7) bytes, and the unused bits of the last byte must be zero. */
static inline uint64_t ri_read_uleb(ri_reader *r, unsigned bits) {
    uint64_t result = 0;
    unsigned shift = 0;
    for (;;) {
        if (r->p >= r->end) { ri_reader_fail(r, "unexpected end"); return 0; }
        uint8_t b = *r->p++;
        if (shift + 7 >= bits) {
            /* last permitted byte: no continuation, and no bits beyond `bits` */
            unsigned used = bits - shift;
            if (b & 0x80) { ri_reader_fail(r, "integer representation too long"); return 0; }
            if (used < 7 && (b >> used) != 0) { ri_reader_fail(r, "integer too large"); return 0; }
            result |= (uint64_t)b << shift;
            return result;
        }
        result |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) return result;
        shift += 7;
    }
}

/* Signed LEB128 of at most `bits` bits: the unused bits of the last byte must all
 * equal the sign bit. */
static inline int64_t ri_read_sleb(ri_reader *r, unsigned bits) {
    uint64_t result = 0;
    unsigned shift = 0;
    for (;;) {
        if (r->p >= r->end) { ri_reader_fail(r, "unexpected end"); return 0; }
        uint8_t b = *r->p++;
        if (shift + 7 >= bits) {
            unsigned used = bits - shift; /* value bits in this byte, 1..7 */
            if (b & 0x80) { ri_reader_fail(r, "integer representation too long"); return 0; }
            if (used < 7) {
                /* bits used-1 .. 6 must all be copies of the sign bit */
                uint8_t rest = (uint8_t)((b & 0x7F) >> (used - 1));
                uint8_t all = (uint8_t)(0x7F >> (used - 1));
                if (rest != 0 && rest != all) { ri_reader_fail(r, "integer too large"); return 0; }
            }
            result |= (uint64_t)(b & 0x7F) << shift;
            shift += 7;
            if (shift < 64 && (b & 0x40)) result |= ~(uint64_t)0 << shift;
            return (int64_t)result;
        }
        result |= (uint64_t)(b & 0x7F) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40)) result |= ~(uint64_t)0 << shift;
            return (int64_t)result;
        }
    }
}

static inline uint32_t ri_read_u32(ri_reader *r) { return (uint32_t)ri_read_uleb(r, 32); }
static inline int32_t ri_read_s32(ri_reader *r) { return (int32_t)ri_read_sleb(r, 32); }
static inline int64_t ri_read_s64(ri_reader *r) { return ri_read_sleb(r, 64); }
/* The block type's s33 (a type index when non-negative). */
static inline int64_t ri_read_s33(ri_reader *r) { return ri_read_sleb(r, 33); }

static inline uint32_t ri_read_fixed32(ri_reader *r) {
    const uint8_t *b = ri_read_bytes(r, 4);
    if (!b) return 0;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t ri_read_fixed64(ri_reader *r) {
    uint64_t lo = ri_read_fixed32(r);
    uint64_t hi = ri_read_fixed32(r);
    return lo | hi << 32;
}

#endif
