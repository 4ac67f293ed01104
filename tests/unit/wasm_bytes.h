/*
 * Writing a WebAssembly module as bytes, for the tests that build modules the text tools
 * cannot (try_table, one function per SIMD case): LEB128 numbers, names, sections and
 * function bodies with their sizes, into the project's growable buffer (ri_buf).
 * Header-only, like engine_fixture.h; include cmocka.h first. A buffer whose allocation
 * failed fails the test where its bytes are taken (wasm_sized, wasm_done).
 */
#ifndef WASM_BYTES_H
#define WASM_BYTES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* Bytes given in place: WASM_PUT(b, 0x20, 0, 0x6A). */
#define WASM_PUT(b, ...)                                   \
    do {                                                   \
        static const uint8_t wasm_put_[] = {__VA_ARGS__};  \
        ri_buf_put((b), wasm_put_, sizeof wasm_put_);      \
    } while (0)

static inline void wasm_uleb(ri_buf *b, uint64_t v) {
    do {
        uint8_t x = v & 0x7f;
        v >>= 7;
        ri_buf_u8(b, (uint8_t)(x | (v ? 0x80 : 0)));
    } while (v);
}

static inline void wasm_sleb(ri_buf *b, int64_t v) {
    for (;;) {
        uint8_t x = (uint8_t)(v & 0x7f);
        v >>= 7; /* (arithmetic on the compilers we build with) */
        bool done = (v == 0 && !(x & 0x40)) || (v == -1 && (x & 0x40));
        ri_buf_u8(b, (uint8_t)(x | (done ? 0 : 0x80)));
        if (done) return;
    }
}

/* A name: its length, then its bytes. */
static inline void wasm_name(ri_buf *b, const char *s) {
    size_t n = strlen(s);
    wasm_uleb(b, n);
    ri_buf_put(b, s, n);
}

/* The magic number and version 1. */
static inline void wasm_header(ri_buf *b) {
    static const uint8_t header[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
    ri_buf_put(b, header, sizeof header);
}

/* Fails the test if an allocation of b failed. */
static inline void wasm_done(const ri_buf *b) { assert_false(b->failed); }

/* content's size, then content, onto out (a function body in the code section); content
 * is freed and empty after. */
static inline void wasm_sized(ri_buf *out, ri_buf *content) {
    wasm_done(content);
    wasm_uleb(out, content->len);
    ri_buf_put(out, content->data, content->len);
    ri_buf_free(content);
}

/* Section `id` with content (freed and empty after). */
static inline void wasm_section(ri_buf *mod, uint8_t id, ri_buf *content) {
    ri_buf_u8(mod, id);
    wasm_sized(mod, content);
}

#endif
