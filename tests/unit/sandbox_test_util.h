/*
 * Helpers shared by the sandbox and snapshot tests (test_sandbox_*.c, test_snapshot_*.c):
 * reading a compiled fixture, and a factory with one loaded sandbox.
 * Header-only: each test is its own program (tests/CMakeLists.txt globs test_*.c), so
 * every helper is static and a test uses what it needs.
 */
#ifndef SANDBOX_TEST_UTIL_H
#define SANDBOX_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"

#ifndef TS
#define TS 1700000000000LL /* the event timestamp of the tests' sandboxes */
#endif

/* The WASI stream `s` a sandbox buffered is exactly `want` (the bytes are printed when not). */
static inline void wasi_stream_is(ri_sandbox *sb, ri_wasi_stream s, const char *want) {
    size_t len;
    const uint8_t *o = ri_sandbox_wasi_output(sb, s, &len);
    if (len != strlen(want) || (len && memcmp(o, want, len))) print_error("got '%.*s'\n", (int)len, (const char *)o);
    assert_int_equal(len, strlen(want));
    if (len) assert_memory_equal(o, want, len);
}

/* Reads <dir>/<name>.wasm; a missing file fails the test (`what` says which folder). */
static inline uint8_t *read_wasm_in(const char *dir, const char *name, const char *what, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.wasm", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open %s (%s)\n", path, what);
        fail();
    }
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Reads $RI_WAT_DIR/<name>.wasm, which the build compiles from tests/wat/<name>.wat.
 * A missing fixture fails the test. */
static inline uint8_t *read_fixture(const char *name, size_t *len) {
    const char *dir = getenv("RI_WAT_DIR");
    return read_wasm_in(dir ? dir : "wat", name, "is RI_WAT_DIR set?", len);
}

/* A snapshot's bytes (malloc'd). */
typedef struct test_blob {
    uint8_t *data;
    size_t len;
} test_blob;

/* A v2 snapshot of sb; fails the test with the library's message when it cannot. */
static inline test_blob snapshot_v2(ri_sandbox *sb, bool embed, bool uncompressed) {
    ri_snapshot_options o = {RI_SNAPSHOT_V2, embed, uncompressed};
    test_blob b = {NULL, 0};
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &o, &b.data, &b.len, &err)) {
        print_error("snapshot: %s\n", err.message);
        fail();
    }
    return b;
}

static inline bool same_blob(test_blob a, test_blob b) { return a.len == b.len && memcmp(a.data, b.data, a.len) == 0; }

/* A factory with one sandbox, freed together by close_env. */
typedef struct env {
    ri_sandboxes *factory;
    ri_sandbox *sb;
} env;

/* A new factory and a sandbox made with cfg and loaded with the fixture; fails the test
 * (with the library's message) when either step fails. */
static inline env open_env_cfg(const char *fixture, const ri_sandbox_config *cfg) {
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    e.sb = ri_sandbox_create(e.factory, cfg, &err);
    if (!e.sb) print_error("create: %s\n", err.message);
    assert_non_null(e.sb);
    size_t len = 0;
    uint8_t *wasm = read_fixture(fixture, &len);
    bool ok = ri_sandbox_load(e.sb, wasm, len, &err);
    free(wasm);
    if (!ok) print_error("load %s: %s\n", fixture, err.message);
    assert_true(ok);
    return e;
}

static inline void close_env(env *e) {
    ri_sandbox_free(e->sb);
    ri_sandboxes_free(e->factory);
}

#endif
