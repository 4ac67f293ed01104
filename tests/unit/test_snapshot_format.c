/*
 * The snapshot layer on the bare engine (ri/snapshot.h): references stored as function
 * indices (imports included) and brought back as the same functions, what no image can
 * hold (a non-null externref, a function of another instance), the reader against
 * hostile images that carry a valid checksum (huge counts and sizes refused before any
 * allocation, broken zstd payloads refused before any change), every flip and
 * truncation, the zstd/raw choice, and v128 globals. Fixtures: tests/wat/snap_engine.wat,
 * snap_v128.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/snapshot.h"
#include "sandbox_test_util.h"

#define PAGE 65536u

static int host_f(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)args;
    results[0] = ri_val_i32(7);
    return 0;
}

typedef struct world {
    ri_module *module;
    ri_store *store;
    ri_func *host;
    ri_instance *inst;
    uint8_t *wasm;
    size_t wasm_len;
} world;

/* Instantiates with the host function as the one import, if the module has one. */
static ri_instance *instantiate(world *w) {
    ri_extern imp;
    imp.kind = RI_EXTERN_FUNC;
    imp.of.func = w->host;
    ri_error err;
    ri_instance *inst = ri_instantiate(w->store, w->module, &imp, w->host ? 1 : 0, &err);
    if (!inst) print_error("instantiate: %s\n", err.message);
    assert_non_null(inst);
    return inst;
}

static world open_fixture(const char *fixture, bool with_host) {
    world w;
    memset(&w, 0, sizeof w);
    w.wasm = read_fixture(fixture, &w.wasm_len);
    ri_error err;
    w.module = ri_module_load(w.wasm, w.wasm_len, NULL, &err);
    assert_non_null(w.module);
    w.store = ri_store_new(NULL);
    assert_non_null(w.store);
    if (with_host) {
        static const ri_valtype i32 = RI_I32;
        ri_functype t = {0, 1, NULL, &i32};
        w.host = ri_func_new_host(w.store, &t, host_f, NULL);
        assert_non_null(w.host);
    }
    w.inst = instantiate(&w);
    return w;
}

static world open_world(void) { return open_fixture("snap_engine", true); }

static void close_world(world *w) {
    ri_store_free(w->store);
    ri_module_free(w->module);
    free(w->wasm);
}

static ri_snap_meta meta_of(const world *w) {
    ri_snap_meta m;
    memset(&m, 0, sizeof m);
    assert_true(ri_snap_sha256(w->wasm, w->wasm_len, m.module_sha256));
    m.module_size = w->wasm_len;
    m.prng_state = 0xDEADBEEF;
    m.gas_used = 12;
    m.event_timestamp = -5;
    return m;
}

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

static blob write_image(const world *w, ri_snap_compression c) {
    ri_snap_meta m = meta_of(w);
    ri_snap_write_options o = {.compression = c};
    blob b;
    ri_snap_error err;
    if (!ri_snap_write(w->inst, &m, &o, &b.data, &b.len, &err)) {
        print_error("write: %s\n", err.message);
        fail();
    }
    return b;
}

static ri_table *table(const world *w, uint32_t i) { return ri_instance_table(w->inst, i); }

/* Recomputes the checksum after a test has edited an image. */
static void reseal(blob b) {
    uint32_t crc = ri_snap_crc32c(b.data, b.len - RI_SNAP_TRAILER_BYTES);
    for (int i = 0; i < 4; i++) b.data[b.len - 4 + i] = (uint8_t)(crc >> (8 * i));
}

/* The offset of a section's content in an image. */
static size_t content_at(blob b, const char tag[4]) {
    ri_snap_image img;
    ri_snap_error err;
    assert_true(ri_snap_read(b.data, b.len, &img, &err));
    size_t at = 0;
    for (uint32_t i = 0; i < img.nsections; i++)
        if (memcmp(img.sections[i].tag, tag, 4) == 0) at = (size_t)img.sections[i].offset + 16;
    ri_snap_image_free(&img);
    assert_true(at != 0);
    return at;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void expect_read_error(blob b, ri_snap_errcode code, const char *part) {
    ri_snap_image img;
    ri_snap_error err;
    assert_false(ri_snap_read(b.data, b.len, &img, &err));
    assert_int_equal(err.code, code);
    if (!strstr(err.message, part)) print_error("message: %s\n(expected: %s)\n", err.message, part);
    assert_non_null(strstr(err.message, part));
    assert_int_equal(img.nmemories, 0); /* zeroed on failure */
}

/* ---- the checksum ---------------------------------------------------------------------------- */

static uint32_t crc32c_bitwise(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void crc32c_matches_the_standard(void **state) {
    (void)state;
    assert_int_equal(ri_snap_crc32c((const uint8_t *)"123456789", 9), 0xE3069283u); /* RFC 3720's check value */
    assert_int_equal(ri_snap_crc32c((const uint8_t *)"", 0), 0);
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(i * 37 + 11);
    /* Every length and alignment the word-at-a-time path can meet. */
    for (size_t off = 0; off < 9; off++)
        for (size_t n = 0; n + off <= sizeof buf; n += 7)
            assert_int_equal(ri_snap_crc32c(buf + off, n), crc32c_bitwise(buf + off, n));
}

/* ---- references ----------------------------------------------------------------------------- */

static void funcrefs_are_indices_and_come_back_as_the_same_functions(void **state) {
    (void)state;
    world w = open_world();
    void *f0 = NULL, *f1 = NULL;
    assert_true(ri_table_get(table(&w, 1), 0, &f0));
    assert_true(ri_table_get(table(&w, 1), 1, &f1));
    assert_ptr_equal(f0, w.host); /* the import, index 0 */
    uint32_t index = 99;
    assert_true(ri_instance_func_index(w.inst, f0, &index));
    assert_int_equal(index, 0);
    assert_true(ri_instance_func_index(w.inst, f1, &index));
    assert_int_equal(index, 1);
    assert_ptr_equal(ri_instance_func(w.inst, 1), f1);
    assert_int_equal(ri_instance_func_count(w.inst), 3);

    blob b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    ri_snap_image img;
    assert_true(ri_snap_read(b.data, b.len, &img, NULL));
    assert_int_equal(img.func_count, 3);
    assert_int_equal(img.ntables, 2);
    assert_int_equal(img.tables[1].size, 3);
    const uint8_t want[12] = {0, 0, 0, 0, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    assert_memory_equal(img.tables[1].entries, want, 12);
    assert_int_equal(img.meta.prng_state, 0xDEADBEEF);
    assert_int_equal(img.meta.event_timestamp, -5);

    /* Scramble the table and restore: the same pointers come back. */
    assert_true(ri_table_set(table(&w, 1), 0, f1));
    assert_true(ri_table_set(table(&w, 1), 2, f0));
    assert_true(ri_table_resize(table(&w, 1), 7, f1));
    ri_snap_error err;
    assert_true(ri_snap_restore(w.inst, &img, &err));
    void *g = NULL;
    assert_int_equal(ri_table_size(table(&w, 1)), 3);
    assert_true(ri_table_get(table(&w, 1), 0, &g));
    assert_ptr_equal(g, w.host);
    assert_true(ri_table_get(table(&w, 1), 2, &g));
    assert_null(g);
    ri_snap_image_free(&img);
    free(b.data);
    close_world(&w);
}

static void non_null_externref_cannot_be_saved(void **state) {
    (void)state;
    world w = open_world();
    int marker;
    assert_true(ri_table_set(table(&w, 0), 1, &marker));
    ri_snap_meta m = meta_of(&w);
    uint8_t *out = (uint8_t *)&marker;
    size_t n = 1;
    ri_snap_error err;
    assert_false(ri_snap_write(w.inst, &m, NULL, &out, &n, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_STATE);
    assert_string_equal(err.message, "table 0, entry 1, holds a non-null externref: it points at the embedder's data, "
                                     "which a snapshot cannot hold");
    assert_null(out);
    assert_int_equal(n, 0);
    close_world(&w);
}

static void function_of_another_instance_cannot_be_saved(void **state) {
    (void)state;
    world w = open_world();
    ri_instance *other = instantiate(&w);
    void *foreign = NULL;
    assert_true(ri_table_get(ri_instance_table(other, 1), 1, &foreign)); /* other's $own */
    uint32_t index;
    assert_false(ri_instance_func_index(w.inst, foreign, &index));
    assert_true(ri_table_set(table(&w, 1), 2, foreign));
    ri_snap_meta m = meta_of(&w);
    uint8_t *out;
    size_t n;
    ri_snap_error err;
    assert_false(ri_snap_write(w.inst, &m, NULL, &out, &n, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_STATE);
    assert_non_null(strstr(err.message, "table 1, entry 2, holds a function outside the instance's function index space"));
    close_world(&w);
}

/* ---- canonical bytes, encodings --------------------------------------------------------------- */

static void equal_states_equal_bytes_and_raw_when_zstd_does_not_help(void **state) {
    (void)state;
    world w = open_world();
    blob a = write_image(&w, RI_SNAP_COMPRESS_ZSTD), b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    free(a.data);
    free(b.data);
    /* Pseudo-random bytes do not compress: the page is stored as it is. */
    uint8_t *mem = ri_memory_data(ri_instance_memory(w.inst, 0));
    uint32_t x = 1;
    for (size_t i = 0; i < PAGE; i++) {
        x = x * 1103515245u + 12345u;
        mem[i] = (uint8_t)(x >> 24);
    }
    a = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    ri_snap_image img;
    assert_true(ri_snap_read(a.data, a.len, &img, NULL));
    assert_int_equal(img.memories[0].encoding, RI_SNAP_ENC_RAW);
    assert_int_equal(img.memories[0].payload_len, PAGE);
    ri_snap_image_free(&img);
    free(a.data);
    close_world(&w);
}

static void pages_stream_in_order(void **state) {
    (void)state;
    world w = open_world();
    ri_memory *mem = ri_instance_memory(w.inst, 0);
    assert_true(ri_memory_resize(mem, 4));
    uint8_t *data = ri_memory_data(mem);
    data[5] = 1;
    data[3 * PAGE + 9] = 2;
    for (int c = 0; c < 2; c++) {
        blob b = write_image(&w, c ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD);
        ri_snap_image img;
        assert_true(ri_snap_read(b.data, b.len, &img, NULL));
        ri_snap_error err;
        ri_snap_pages *p = ri_snap_pages_open(&img, 0, &err);
        assert_non_null(p);
        uint32_t page;
        const uint8_t *d;
        assert_int_equal(ri_snap_pages_next(p, &page, &d, &err), 1);
        assert_int_equal(page, 0);
        assert_int_equal(d[5], 1);
        assert_int_equal(ri_snap_pages_next(p, &page, &d, &err), 1);
        assert_int_equal(page, 3);
        assert_int_equal(d[9], 2);
        assert_int_equal(ri_snap_pages_next(p, &page, &d, &err), 0);
        ri_snap_pages_close(p);
        ri_snap_image_free(&img);
        free(b.data);
    }
    close_world(&w);
}

/* ---- hostile images with a valid checksum --------------------------------------------------- */

static void huge_counts_are_refused_without_allocating(void **state) {
    (void)state;
    world w = open_world();
    blob good = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    blob b = {malloc(good.len), good.len};
    assert_non_null(b.data);

    /* MEMS count near 2^32 (META says 1 first; then both say so). */
    memcpy(b.data, good.data, good.len);
    size_t mems = content_at(good, "MEMS");
    put32(b.data + mems, 0xFFFFFFFFu);
    reseal(b);
    expect_read_error(b, RI_SNAP_ERR_CORRUPT, "MEMS holds 4294967295 memories, but META counts 1");
    size_t meta = content_at(good, "META");
    put32(b.data + meta + 68, 0xFFFFFFFFu);
    reseal(b);
    expect_read_error(b, RI_SNAP_ERR_CORRUPT, "MEMS declares 4294967295 memories in");

    /* A table of 2^32 - 1 entries in a few bytes. */
    memcpy(b.data, good.data, good.len);
    size_t tbls = content_at(good, "TBLS");
    put32(b.data + tbls + 4 + 4, 0xFFFFFFFFu);
    reseal(b);
    expect_read_error(b, RI_SNAP_ERR_CORRUPT, "table 0's 4294967295 entries are cut short");

    /* A memory of more pages than WebAssembly allows. */
    memcpy(b.data, good.data, good.len);
    put32(b.data + mems + 4, 65537);
    reseal(b);
    expect_read_error(b, RI_SNAP_ERR_CORRUPT, "memory 0 has 65537 pages (at most 65536)");

    /* A table entry naming a function the module does not have. */
    memcpy(b.data, good.data, good.len);
    size_t second_table = tbls + 4 + 12 + 2 * 4; /* table 0 has 2 entries */
    put32(b.data + second_table + 12, 3);
    reseal(b);
    expect_read_error(b, RI_SNAP_ERR_CORRUPT, "table 1, entry 0, names function 3, but the module has 3 functions");

    /* An unknown status. */
    memcpy(b.data, good.data, good.len);
    put32(b.data + meta + 40, 9);
    reseal(b);
    expect_read_error(b, RI_SNAP_ERR_CORRUPT, "META: unknown sandbox status 9");
    free(b.data);
    free(good.data);
    close_world(&w);
}

static void image_larger_than_the_instance_is_refused_before_decompressing(void **state) {
    (void)state;
    world w = open_world();
    ri_memory *mem = ri_instance_memory(w.inst, 0);
    assert_true(ri_memory_resize(mem, 4));
    ri_memory_data(mem)[3 * PAGE] = 1;
    blob b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    assert_true(ri_memory_resize(mem, 1));
    /* Another instance of the module in a store that caps memories at 2 pages. */
    ri_store_config cfg = ri_store_config_default();
    cfg.max_memory_pages = 2;
    ri_store *small = ri_store_new(&cfg);
    static const ri_valtype i32 = RI_I32;
    ri_functype t = {0, 1, NULL, &i32};
    ri_extern imp = {RI_EXTERN_FUNC, {.func = ri_func_new_host(small, &t, host_f, NULL)}};
    ri_error e;
    ri_instance *inst = ri_instantiate(small, w.module, &imp, 1, &e);
    assert_non_null(inst);
    ri_snap_image img;
    ri_snap_error err;
    assert_true(ri_snap_read(b.data, b.len, &img, &err));
    assert_false(ri_snap_restore(inst, &img, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_MISMATCH);
    assert_string_equal(err.message, "Snapshot does not fit the instance — memory 0 holds 4 pages, above this "
                                     "instance's maximum of 2 pages");
    assert_int_equal(ri_memory_pages(ri_instance_memory(inst, 0)), 1);
    ri_snap_image_free(&img);
    ri_store_free(small);
    free(b.data);
    close_world(&w);
}

static void memory_below_the_declared_minimum_is_refused(void **state) {
    (void)state;
    world w = open_world();
    ri_memory *mem = ri_instance_memory(w.inst, 0);
    assert_true(ri_memory_resize(mem, 0)); /* the engine's API can; WebAssembly cannot */
    blob b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    assert_true(ri_memory_resize(mem, 2));
    ri_snap_image img;
    ri_snap_error err;
    assert_true(ri_snap_read(b.data, b.len, &img, &err));
    assert_false(ri_snap_restore(w.inst, &img, &err));
    assert_string_equal(err.message, "Snapshot does not fit the instance — memory 0 holds 0 pages, below the "
                                     "module's minimum of 1 page");
    assert_int_equal(ri_memory_pages(mem), 2);
    ri_snap_image_free(&img);
    free(b.data);
    close_world(&w);
}

static void broken_zstd_payload_is_refused_and_changes_nothing(void **state) {
    (void)state;
    world w = open_world();
    uint8_t *data = ri_memory_data(ri_instance_memory(w.inst, 0));
    memset(data, 0x11, 4096);
    blob b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    ri_snap_image img;
    assert_true(ri_snap_read(b.data, b.len, &img, NULL));
    assert_int_equal(img.memories[0].encoding, RI_SNAP_ENC_ZSTD);
    size_t payload = (size_t)(img.memories[0].payload - b.data);
    size_t plen = (size_t)img.memories[0].payload_len;
    ri_snap_image_free(&img);
    memset(data, 0x22, 4096);
    ri_global_set(ri_instance_global(w.inst, 0), ri_val_i32(5));

    /* Garble the frame's body, keep its header: a valid checksum, a broken frame. */
    for (size_t i = payload + 8; i < payload + plen; i++) b.data[i] ^= 0x5A;
    reseal(b);
    ri_snap_error err;
    assert_true(ri_snap_read(b.data, b.len, &img, &err)); /* the frame is checked when used */
    assert_false(ri_snap_restore(w.inst, &img, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "memory 0"));
    assert_int_equal(data[0], 0x22);
    assert_int_equal(ri_global_get(ri_instance_global(w.inst, 0)).of.i32, 5);
    ri_snap_pages *p = ri_snap_pages_open(&img, 0, &err);
    if (p) {
        uint32_t page;
        const uint8_t *d;
        int r = ri_snap_pages_next(p, &page, &d, &err);
        if (r == 1) r = ri_snap_pages_next(p, &page, &d, &err);
        assert_int_equal(r, -1);
        ri_snap_pages_close(p);
    }
    ri_snap_image_free(&img);

    /* A frame that declares another content size is refused up front. */
    free(b.data);
    memset(data, 0x11, 4096);
    b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    size_t mems = content_at(b, "MEMS");
    put32(b.data + mems + 4 + 12, 0); /* present 0 ... */
    b.data[mems + 4 + 24] = 0;        /* ... and no page in the bitmap */
    reseal(b);
    assert_true(ri_snap_read(b.data, b.len, &img, &err));
    assert_false(ri_snap_restore(w.inst, &img, &err));
    assert_non_null(strstr(err.message, "does not declare the 0 bytes of its 0 stored pages"));
    ri_snap_image_free(&img);
    free(b.data);
    close_world(&w);
}

static void every_flip_and_truncation_is_refused_by_the_reader(void **state) {
    (void)state;
    world w = open_world();
    ri_memory_data(ri_instance_memory(w.inst, 0))[100] = 3;
    blob good = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    uint8_t *bad = malloc(good.len);
    for (size_t i = 0; i < good.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(bad, good.data, good.len);
            bad[i] ^= (uint8_t)(1u << bit);
            ri_snap_image img;
            ri_snap_error err;
            if (ri_snap_read(bad, good.len, &img, &err)) {
                print_error("flipping bit %d of byte %zu was accepted\n", bit, i);
                fail();
            }
        }
    }
    for (size_t n = 0; n < good.len; n++) {
        ri_snap_image img;
        ri_snap_error err;
        assert_false(ri_snap_read(good.data, n, &img, &err));
    }
    ri_snap_image img;
    ri_snap_error err;
    assert_false(ri_snap_read(NULL, 0, &img, &err));
    assert_string_equal(err.message, "Snapshot too small — missing header");
    free(bad);
    free(good.data);
    close_world(&w);
}

/* Hostile images: random edits with the checksum recomputed, so that every field check
 * (not the checksum) is what stands. Whatever the reader accepts must restore or be
 * refused cleanly, and stream; nothing may crash (run under ASan/UBSan in CI). */
static void resealed_random_edits_never_crash(void **state) {
    (void)state;
    world w = open_world();
    ri_memory *mem = ri_instance_memory(w.inst, 0);
    assert_true(ri_memory_resize(mem, 3));
    memset(ri_memory_data(mem) + PAGE, 0x42, 5000);
    ri_memory_data(mem)[2 * PAGE + 7] = 9;
    blob images[2] = {write_image(&w, RI_SNAP_COMPRESS_ZSTD), write_image(&w, RI_SNAP_COMPRESS_NONE)};
    uint32_t x = 2463534242u;
    size_t accepted = 0;
    for (int k = 0; k < 2; k++) {
        blob good = images[k];
        blob b = {malloc(good.len), good.len};
        assert_non_null(b.data);
        for (int iter = 0; iter < 4000; iter++) {
            memcpy(b.data, good.data, good.len);
            int edits = 1 + iter % 4;
            for (int e = 0; e < edits; e++) {
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                size_t at = x % (good.len - RI_SNAP_TRAILER_BYTES);
                x ^= x << 13, x ^= x >> 17, x ^= x << 5;
                /* Mostly small or extreme values: where length and count checks live. */
                static const uint8_t values[] = {0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF};
                b.data[at] = (x & 1) ? values[(x >> 1) % sizeof values] : (uint8_t)(x >> 8);
            }
            reseal(b);
            ri_snap_image img;
            ri_snap_error err;
            if (!ri_snap_read(b.data, b.len, &img, &err)) {
                assert_true(strlen(err.message) > 0);
                continue;
            }
            accepted++;
            for (uint32_t m = 0; m < img.nmemories; m++) {
                ri_snap_pages *p = ri_snap_pages_open(&img, m, &err);
                uint32_t page;
                const uint8_t *d;
                while (p && ri_snap_pages_next(p, &page, &d, &err) == 1) {
                }
                ri_snap_pages_close(p);
            }
            (void)ri_snap_restore(w.inst, &img, &err);
            ri_snap_image_free(&img);
        }
        free(b.data);
        free(good.data);
    }
    assert_true(accepted > 0); /* some edits only change values (memory bytes, globals) */
    close_world(&w);
}

/* ---- v128 globals ------------------------------------------------------------------------------ */

static ri_snap_image read_image(blob b) {
    ri_snap_image img;
    ri_snap_error err;
    if (!ri_snap_read(b.data, b.len, &img, &err)) {
        print_error("read: %s\n", err.message);
        fail();
    }
    return img;
}

/* A v128 global's record is 8 bytes longer (its bytes 8..15); the records after it are
 * read in place; the value comes back by restore, and a diff shows it as i32x4 text. */
static void v128_globals_are_written_read_restored_and_diffed(void **state) {
    (void)state;
    world w = open_fixture("snap_v128", false);

    blob a = write_image(&w, RI_SNAP_COMPRESS_NONE);
    ri_snap_image img = read_image(a);
    assert_int_equal(img.nglobals, 4);
    assert_int_equal(img.globals[0].type, RI_I32);
    assert_int_equal(img.globals[0].bits, 0xFFFFFFFDu);
    assert_int_equal(img.globals[1].type, RI_V128);
    assert_true(img.globals[1].mutable_);
    assert_int_equal(img.globals[1].bits, 0x0706050403020100ull);
    assert_int_equal(img.globals[1].bits_high, 0x0f0e0d0c0b0a0908ull);
    assert_int_equal(img.globals[2].type, RI_V128);
    assert_false(img.globals[2].mutable_);
    assert_int_equal(img.globals[2].bits, UINT64_MAX);
    assert_int_equal(img.globals[2].bits_high, 0x0123456789abcdefull);
    assert_int_equal(img.globals[3].type, RI_I64);
    assert_int_equal(img.globals[3].bits, 0x1122334455667788ull);
    assert_int_equal(img.globals[3].bits_high, 0);

    /* Change the mutable v128, snapshot again, diff, then restore the first image. */
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = RI_V128;
    for (int i = 0; i < 16; i++) v.of.v128[i] = (uint8_t)(0xA0 + i);
    assert_true(ri_global_set(ri_instance_global(w.inst, 1), v));
    blob b = write_image(&w, RI_SNAP_COMPRESS_ZSTD);
    ri_snap_image img2 = read_image(b);
    ri_snap_diff d;
    ri_snap_error err;
    assert_true(ri_snap_diff_images(&img, &img2, NULL, &d, &err));
    assert_int_equal(d.nglobals, 1);
    assert_int_equal(d.globals[0].index, 1);
    assert_true(d.globals[0].in_old && d.globals[0].in_new);
    assert_int_equal(d.globals[0].new_value.bits_high, 0xAFAEADACABAAA9A8ull);
    char *text = ri_snap_diff_json(&d);
    assert_non_null(text);
    if (!strstr(text, "\"i32x4 0xa3a2a1a0 0xa7a6a5a4 0xabaaa9a8 0xafaeadac\"") ||
        !strstr(text, "\"0x0f0e0d0c0b0a09080706050403020100\""))
        print_error("diff JSON: %s\n", text);
    assert_non_null(strstr(text, "\"i32x4 0xa3a2a1a0 0xa7a6a5a4 0xabaaa9a8 0xafaeadac\""));
    assert_non_null(strstr(text, "\"0x0f0e0d0c0b0a09080706050403020100\""));
    free(text);
    ri_snap_diff_free(&d);

    assert_true(ri_snap_restore(w.inst, &img, &err));
    ri_val back = ri_global_get(ri_instance_global(w.inst, 1));
    for (int i = 0; i < 16; i++) assert_int_equal(back.of.v128[i], i);
    assert_int_equal(ri_global_get(ri_instance_global(w.inst, 3)).of.i64, 0x1122334455667788ll);

    /* A record whose type says otherwise is refused: v128 read as i64 leaves its high
     * bytes as a record of garbage; i32 read as v128 swallows the next record's start. */
    size_t at = content_at(a, "GLBS") + 4;
    for (int k = 0; k < 2; k++) {
        blob c = {malloc(a.len), a.len};
        assert_non_null(c.data);
        memcpy(c.data, a.data, a.len);
        if (k == 0) c.data[at + 16] = RI_I64; /* global 1 */
        else c.data[at] = RI_V128;            /* global 0 */
        reseal(c);
        expect_read_error(c, RI_SNAP_ERR_CORRUPT, "GLBS");
        free(c.data);
    }
    ri_snap_image_free(&img);
    ri_snap_image_free(&img2);
    free(a.data);
    free(b.data);
    close_world(&w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crc32c_matches_the_standard),
        cmocka_unit_test(funcrefs_are_indices_and_come_back_as_the_same_functions),
        cmocka_unit_test(non_null_externref_cannot_be_saved),
        cmocka_unit_test(function_of_another_instance_cannot_be_saved),
        cmocka_unit_test(equal_states_equal_bytes_and_raw_when_zstd_does_not_help),
        cmocka_unit_test(pages_stream_in_order),
        cmocka_unit_test(huge_counts_are_refused_without_allocating),
        cmocka_unit_test(image_larger_than_the_instance_is_refused_before_decompressing),
        cmocka_unit_test(memory_below_the_declared_minimum_is_refused),
        cmocka_unit_test(broken_zstd_payload_is_refused_and_changes_nothing),
        cmocka_unit_test(every_flip_and_truncation_is_refused_by_the_reader),
        cmocka_unit_test(resealed_random_edits_never_crash),
        cmocka_unit_test(v128_globals_are_written_read_restored_and_diffed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
