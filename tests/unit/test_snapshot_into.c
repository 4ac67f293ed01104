/*
 * Snapshots into a caller's buffer (ri_snap_write_into, ri_sandbox_snapshot_into): the
 * bytes are exactly those of ri_snap_write / ri_sandbox_snapshot_with, for zstd and raw,
 * with and without the module, for sparse, dense and incompressible memories (zstd's
 * fallback to raw pages), v1 too; a buffer reused across states; and a buffer that is
 * too small at every cut (header, bitmap, raw payload, zstd frame) gives the exact
 * length needed, a clear error, and no byte written at or beyond its end.
 * Fixtures: tests/wat/snap_engine.wat (snapshot layer), snap_state.wat (sandbox),
 * suspend.wat (a paused call: section FRMS).
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
#include "suspend_sandbox_util.h"

#define PAGE 65536u
#define GUARD 256u
#define GUARD_BYTE 0xA5u

/* ---- the snapshot layer on the bare engine ------------------------------------------------ */

static int host_f(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)args;
    results[0] = ri_val_i32(7);
    return 0;
}

typedef struct world {
    ri_module *module;
    ri_store *store;
    ri_instance *inst;
    uint8_t *wasm;
    size_t wasm_len;
    ri_snap_meta meta;
} world;

static world open_world(void) {
    world w;
    memset(&w, 0, sizeof w);
    w.wasm = read_fixture("snap_engine", &w.wasm_len);
    ri_error err;
    w.module = ri_module_load(w.wasm, w.wasm_len, NULL, &err);
    assert_non_null(w.module);
    w.store = ri_store_new(NULL);
    assert_non_null(w.store);
    static const ri_valtype i32 = RI_I32;
    ri_functype t = {0, 1, NULL, &i32};
    ri_extern imp;
    imp.kind = RI_EXTERN_FUNC;
    imp.of.func = ri_func_new_host(w.store, &t, host_f, NULL);
    assert_non_null(imp.of.func);
    w.inst = ri_instantiate(w.store, w.module, &imp, 1, &err);
    if (!w.inst) print_error("instantiate: %s\n", err.message);
    assert_non_null(w.inst);
    assert_true(ri_snap_sha256(w.wasm, w.wasm_len, w.meta.module_sha256));
    w.meta.module_size = w.wasm_len;
    w.meta.prng_state = 0x1234;
    w.meta.gas_used = 99;
    w.meta.event_timestamp = TS;
    return w;
}

static void close_world(world *w) {
    ri_store_free(w->store);
    ri_module_free(w->module);
    free(w->wasm);
}

/* Grows memory 0 to `pages` pages (the fixture allows 4). */
static void grow_to(world *w, uint32_t pages) {
    ri_memory *m = ri_instance_memory(w->inst, 0);
    uint32_t have = ri_memory_pages(m);
    if (have < pages) assert_int_equal(ri_memory_grow(m, pages - have), have);
    assert_int_equal(ri_memory_pages(m), pages);
}

/* Pseudo-random bytes (xorshift): incompressible, so zstd keeps the pages raw. */
static void random_page(uint8_t *p, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < PAGE; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

static uint8_t *page_of(world *w, uint32_t i) {
    return ri_memory_data(ri_instance_memory(w->inst, 0)) + (size_t)i * PAGE;
}

/* Everything ri_snap_write_into must do for one state, against ri_snap_write. */
static void check_into(world *w, ri_snap_compression c, bool module, bool every_cap) {
    ri_snap_write_options o = {.compression = c, .module = module ? w->wasm : NULL, .module_len = module ? w->wasm_len : 0};
    ri_snap_error err;
    uint8_t *ref = NULL;
    size_t ref_len = 0;
    assert_true(ri_snap_write(w->inst, &w->meta, &o, &ref, &ref_len, &err));

    /* The length query. */
    size_t len = 1;
    assert_false(ri_snap_write_into(w->inst, &w->meta, &o, NULL, NULL, 0, &len, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_TOO_SMALL);
    assert_int_equal(len, ref_len);
    assert_non_null(strstr(err.message, "needs"));

    /* Exactly the room needed (ASan sees any write past it). */
    uint8_t *exact = malloc(ref_len);
    assert_non_null(exact);
    assert_true(ri_snap_write_into(w->inst, &w->meta, &o, NULL, exact, ref_len, &len, &err));
    assert_int_equal(len, ref_len);
    assert_memory_equal(exact, ref, ref_len);
    free(exact);

    /* More room than needed: the bytes after the image stay as they were. */
    uint8_t *big = malloc(ref_len + GUARD);
    assert_non_null(big);
    memset(big, GUARD_BYTE, ref_len + GUARD);
    assert_true(ri_snap_write_into(w->inst, &w->meta, &o, NULL, big, ref_len + GUARD, &len, &err));
    assert_int_equal(len, ref_len);
    assert_memory_equal(big, ref, ref_len);
    for (size_t i = ref_len; i < ref_len + GUARD; i++) assert_int_equal(big[i], GUARD_BYTE);

    /* Too small, cut anywhere: refused, the exact length given, nothing written at or
     * past cap. Every cap up to the payloads, and around each page boundary. */
    size_t caps[4096];
    size_t ncaps = 0;
    size_t upto = every_cap ? (ref_len < 1200 ? ref_len : 1200) : 64;
    for (size_t cap = 0; cap < upto; cap++) caps[ncaps++] = cap;
    for (size_t k = 1; k <= 40 && k <= ref_len; k++) caps[ncaps++] = ref_len - k;
    for (size_t at = PAGE; at < ref_len; at += PAGE)
        for (size_t d = 0; d < 3 && ncaps < 4096; d++) caps[ncaps++] = at - 1 + d;
    caps[ncaps++] = ref_len / 2;
    for (size_t i = 0; i < ncaps; i++) {
        size_t cap = caps[i];
        if (cap >= ref_len) continue;
        memset(big, GUARD_BYTE, ref_len + GUARD);
        len = 0;
        memset(&err, 0, sizeof err);
        bool ok = ri_snap_write_into(w->inst, &w->meta, &o, NULL, big, cap, &len, &err);
        if (ok) print_error("cap %zu of %zu accepted\n", cap, ref_len);
        assert_false(ok);
        assert_int_equal(err.code, RI_SNAP_ERR_TOO_SMALL);
        assert_int_equal(len, ref_len);
        for (size_t k = cap; k < ref_len + GUARD; k++)
            if (big[k] != GUARD_BYTE) {
                print_error("cap %zu of %zu: byte %zu written\n", cap, ref_len, k);
                fail();
            }
    }
    free(big);
    free(ref);
}

static void check_all(world *w, bool every_cap) {
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < 2; m++)
            check_into(w, c ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD, m, every_cap && !m);
}

static void engine_zero_memory(void **state) {
    (void)state;
    world w = open_world();
    check_all(&w, true);
    close_world(&w);
}

static void engine_sparse_memory(void **state) {
    (void)state;
    world w = open_world();
    grow_to(&w, 4);
    memset(page_of(&w, 1) + 100, 7, 3000); /* compressible */
    page_of(&w, 3)[PAGE - 1] = 1;          /* non-zero in its last byte only */
    check_all(&w, true);
    close_world(&w);
}

static void engine_incompressible_memory(void **state) {
    (void)state;
    world w = open_world();
    grow_to(&w, 4);
    for (uint32_t i = 0; i < 4; i++) random_page(page_of(&w, i), i + 1);
    /* zstd does not make them smaller: the image stores them raw, in a fixed buffer too. */
    ri_snap_write_options o = {.compression = RI_SNAP_COMPRESS_ZSTD};
    ri_snap_image img;
    ri_snap_error err;
    uint8_t *ref = NULL;
    size_t ref_len = 0;
    assert_true(ri_snap_write(w.inst, &w.meta, &o, &ref, &ref_len, &err));
    assert_true(ri_snap_read(ref, ref_len, &img, &err));
    assert_int_equal(img.memories[0].encoding, RI_SNAP_ENC_RAW);
    ri_snap_image_free(&img);
    free(ref);
    check_all(&w, true);
    close_world(&w);
}

/* One buffer, reused while the state changes: each image is the one ri_snap_write gives. */
static void engine_buffer_reused(void **state) {
    (void)state;
    world w = open_world();
    grow_to(&w, 4);
    size_t cap = 8 * PAGE;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    for (int round = 0; round < 6; round++) {
        for (uint32_t i = 0; i < 4; i++) {
            uint8_t *p = page_of(&w, i);
            if ((round + (int)i) % 3 == 0) memset(p, 0, PAGE);
            else if ((round + (int)i) % 3 == 1) random_page(p, (uint32_t)round * 8 + i);
            else memset(p, round + 1, PAGE / 2);
        }
        for (int c = 0; c < 2; c++) {
            ri_snap_write_options o = {.compression = c ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD};
            ri_snap_error err;
            uint8_t *ref = NULL;
            size_t ref_len = 0, len = 0;
            assert_true(ri_snap_write(w.inst, &w.meta, &o, &ref, &ref_len, &err));
            assert_true(ri_snap_write_into(w.inst, &w.meta, &o, NULL, buf, cap, &len, &err));
            assert_int_equal(len, ref_len);
            assert_memory_equal(buf, ref, ref_len);
            ri_snap_image img; /* and it reads back (the folded checksum holds) */
            assert_true(ri_snap_read(buf, len, &img, &err));
            ri_snap_image_free(&img);
            free(ref);
        }
    }
    free(buf);
    close_world(&w);
}

static void engine_bad_arguments(void **state) {
    (void)state;
    world w = open_world();
    ri_snap_error err;
    size_t len = 5;
    uint8_t buf[16];
    assert_false(ri_snap_write_into(w.inst, &w.meta, NULL, NULL, NULL, 16, &len, &err)); /* NULL buffer, cap 16 */
    assert_int_equal(err.code, RI_SNAP_ERR_ARGUMENT);
    assert_int_equal(len, 0);
    assert_false(ri_snap_write_into(w.inst, &w.meta, NULL, NULL, buf, sizeof buf, NULL, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_ARGUMENT);
    ri_snap_write_options bad = {.compression = (ri_snap_compression)9};
    assert_false(ri_snap_write_into(w.inst, &w.meta, &bad, NULL, buf, sizeof buf, &len, &err));
    assert_int_equal(err.code, RI_SNAP_ERR_ARGUMENT);
    close_world(&w);
}

/* ---- the sandbox ---------------------------------------------------------------------------- */

static void run_void(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "", r.error.message);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
}

static void sandbox_check(ri_sandbox *sb, ri_snapshot_format format, bool module, bool raw) {
    ri_snapshot_options o = {format, module, raw};
    ri_sandbox_error err;
    uint8_t *ref = NULL;
    size_t ref_len = 0, len = 7;
    bool ok = ri_sandbox_snapshot_with(sb, &o, &ref, &ref_len, &err);
    if (!ok) print_error("snapshot: %s\n", err.message);
    assert_true(ok);
    assert_false(ri_sandbox_snapshot_into(sb, &o, NULL, 0, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_non_null(strstr(err.message, "needs"));
    assert_int_equal(len, ref_len);
    uint8_t *buf = malloc(ref_len + GUARD);
    assert_non_null(buf);
    memset(buf, GUARD_BYTE, ref_len + GUARD);
    assert_true(ri_sandbox_snapshot_into(sb, &o, buf, ref_len + GUARD, &len, &err));
    assert_int_equal(len, ref_len);
    assert_memory_equal(buf, ref, ref_len);
    for (size_t i = ref_len; i < ref_len + GUARD; i++) assert_int_equal(buf[i], GUARD_BYTE);
    /* One byte short. */
    memset(buf, GUARD_BYTE, ref_len + GUARD);
    assert_false(ri_sandbox_snapshot_into(sb, &o, buf, ref_len - 1, &len, &err));
    assert_int_equal(len, ref_len);
    for (size_t i = ref_len - 1; i < ref_len + GUARD; i++) assert_int_equal(buf[i], GUARD_BYTE);
    free(buf);
    free(ref);
}

/* v1 only while globals and tables are as at instantiation (v1 cannot hold them). */
static void sandbox_every_option(ri_sandbox *sb, bool v1) {
    if (v1) sandbox_check(sb, RI_SNAPSHOT_V1, false, false);
    for (int m = 0; m < 2; m++)
        for (int r = 0; r < 2; r++) {
            sandbox_check(sb, RI_SNAPSHOT_V2, m, r);
            sandbox_check(sb, RI_SNAPSHOT_DEFAULT, m, r);
        }
}

static void sandbox_sparse_and_dense(void **state) {
    (void)state;
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    env e = open_env_cfg("snap_state", &c);
    sandbox_every_option(e.sb, true); /* one page, zero */
    run_void(e.sb, "grow", "[19]");
    run_void(e.sb, "store", "[70000,5]");
    run_void(e.sb, "store", "[1200000,9]");
    run_void(e.sb, "bump", NULL);
    sandbox_every_option(e.sb, false); /* 20 pages, 2 non-zero */
    run_void(e.sb, "fill", "[0,171,1310720]");
    sandbox_every_option(e.sb, false); /* 20 pages, all non-zero */
    close_env(&e);
}

static void sandbox_bad_arguments(void **state) {
    (void)state;
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    env e = open_env_cfg("snap_state", &c);
    ri_sandbox_error err;
    size_t len = 3;
    uint8_t buf[8];
    assert_false(ri_sandbox_snapshot_into(e.sb, NULL, NULL, 8, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_int_equal(len, 0);
    assert_false(ri_sandbox_snapshot_into(NULL, NULL, buf, sizeof buf, &len, &err));
    ri_snapshot_options bad = {(ri_snapshot_format)7, false, false};
    assert_false(ri_sandbox_snapshot_into(e.sb, &bad, buf, sizeof buf, &len, &err));
    assert_non_null(strstr(err.message, "unknown format"));
    close_env(&e);
}

/* A paused call (section FRMS) goes into the buffer like the rest. */
static void sandbox_paused_call(void **state) {
    (void)state;
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, 200);
    env e = open_env_cfg("suspend", &c);
    ri_sandbox_error err;
    assert_true(ri_sandbox_set_pause_on(e.sb, RI_SUSPEND_ON_GAS, &err));
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "mix", "[12]");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    for (int m = 0; m < 2; m++)
        for (int raw = 0; raw < 2; raw++) sandbox_check(e.sb, RI_SNAPSHOT_V2, m, raw);
    size_t len = 0;
    assert_false(ri_sandbox_snapshot_into(e.sb, NULL, NULL, 0, &len, &err));
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    assert_true(ri_sandbox_snapshot_into(e.sb, NULL, buf, len, &len, &err));
    ri_snap_image img;
    ri_snap_error se;
    assert_true(ri_snap_read(buf, len, &img, &se));
    assert_true(img.has_frames); /* the call is in it */
    ri_snap_image_free(&img);
    free(buf);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(engine_zero_memory),
        cmocka_unit_test(engine_sparse_memory),
        cmocka_unit_test(engine_incompressible_memory),
        cmocka_unit_test(engine_buffer_reused),
        cmocka_unit_test(engine_bad_arguments),
        cmocka_unit_test(sandbox_sparse_and_dense),
        cmocka_unit_test(sandbox_bad_arguments),
        cmocka_unit_test(sandbox_paused_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
