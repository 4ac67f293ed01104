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

/* Reads $RI_WAT_DIR/<name>.wasm, which the build compiles from tests/wat/<name>.wat.
 * A missing fixture fails the test. */
static inline uint8_t *read_fixture(const char *name, size_t *len) {
    const char *dir = getenv("RI_WAT_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.wasm", dir ? dir : "wat", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open fixture %s (is RI_WAT_DIR set?)\n", path);
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
