/*
 * Helpers shared by the snapshot store tests (test_store_*.c): fixtures, sandboxes on
 * tests/wat/store_state.wat, calls with i32 arguments, temporary store directories.
 * Header-only: each test is its own program (tests/CMakeLists.txt globs test_*.c).
 */
#ifndef TEST_STORE_UTIL_H
#define TEST_STORE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ri/sandbox.h"
#include "ri/store.h"

#define TS 1700000000000LL
#define PAGE 65536u

typedef struct bytes {
    uint8_t *data;
    size_t len;
} bytes;

static inline bytes read_path(const char *path) {
    bytes b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open %s\n", path);
        fail();
    }
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    b.data = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(b.data);
    assert_int_equal(fread(b.data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b.len = (size_t)n;
    return b;
}

static inline bytes read_fixture(const char *name) {
    const char *dir = getenv("RI_WAT_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.wasm", dir ? dir : "wat", name);
    return read_path(path);
}

static inline void write_path(const char *path, const uint8_t *data, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static inline ri_sandbox_config store_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.deterministic_seed = 7;
    c.max_execution_ms = 60000;
    return c;
}

static inline void load_fixture(ri_sandbox *sb, const char *fixture) {
    bytes wasm = read_fixture(fixture);
    ri_sandbox_error err;
    bool ok = ri_sandbox_load(sb, wasm.data, wasm.len, &err);
    free(wasm.data);
    if (!ok) print_error("load %s: %s\n", fixture, err.message);
    assert_true(ok);
}

static inline ri_sandbox *new_sandbox(ri_sandboxes *f, const char *fixture) {
    ri_sandbox_config c = store_config();
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    if (fixture) load_fixture(sb, fixture);
    return sb;
}

/* fn(args...) with i32 arguments; returns the i32 (or i64) result, 0 without one. */
static inline int64_t call_n(ri_sandbox *sb, const char *fn, int n, const int32_t *args) {
    ri_val v[4];
    for (int i = 0; i < n; i++) v[i] = ri_val_i32(args[i]);
    ri_sandbox_result r = ri_sandbox_call(sb, fn, v, (uint32_t)n);
    if (!r.ok) print_error("%s: %s\n", fn, r.error.message);
    assert_true(r.ok);
    int64_t out = 0;
    if (r.nresults) out = r.results[0].type == RI_I64 ? r.results[0].of.i64 : r.results[0].of.i32;
    ri_sandbox_result_free(&r);
    return out;
}
#define CALL0(sb, fn) call_n(sb, fn, 0, NULL)
#define CALL1(sb, fn, a) call_n(sb, fn, 1, (const int32_t[]){a})
#define CALL2(sb, fn, a, b) call_n(sb, fn, 2, (const int32_t[]){a, b})

/* A v2 image of the sandbox (uncompressed unless asked). */
static inline bytes snap(ri_sandbox *sb, bool include_module, bool compressed) {
    ri_snapshot_options o = {RI_SNAPSHOT_V2, include_module, !compressed};
    bytes b = {NULL, 0};
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &o, &b.data, &b.len, &err)) {
        print_error("snapshot: %s\n", err.message);
        fail();
    }
    return b;
}

static inline void assert_bytes_equal(bytes a, bytes b) {
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
}

/* ---- temporary directories ------------------------------------------------------------ */

static inline char *temp_dir(void) {
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/ri-store-test.XXXXXX", base && base[0] ? base : "/tmp");
    assert_non_null(mkdtemp(path));
    return path;
}

static inline int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void remove_tree(char *path) {
    if (!path) return;
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(path);
}

/* A new store in a new directory (dir/store). */
static inline ri_snapstore *new_store(const char *dir, char *path_out, size_t cap) {
    char path[4096];
    snprintf(path, sizeof path, "%s/store", dir);
    if (path_out) snprintf(path_out, cap, "%s", path);
    ri_snapstore_options o = {true};
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, &o, &err);
    if (!st) print_error("open store: %s\n", err.message);
    assert_non_null(st);
    return st;
}

static inline void expect_ok(bool ok, const ri_snapstore_error *err) {
    if (!ok) print_error("store error %s: %s\n", ri_snapstore_errcode_name(err->code), err->message);
    assert_true(ok);
}

/* A refusal: ok is false, with this code and a message containing text. */
static inline void expect_refused(bool ok, const ri_snapstore_error *err, ri_snapstore_errcode code, const char *text) {
    assert_false(ok);
    if (err->code != code || !strstr(err->message, text))
        print_error("expected %s with '%s', got %s: %s\n", ri_snapstore_errcode_name(code), text,
                    ri_snapstore_errcode_name(err->code), err->message);
    assert_int_equal(err->code, code);
    assert_non_null(strstr(err->message, text));
}

/* Puts image as `name` (replacing); gets it back with these options. */
static inline void store_put(ri_snapstore *st, const char *name, bytes image, ri_snapstore_put_stats *stats) {
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.replace = true;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_put(st, name, image.data, image.len, &o, NULL, stats, &err), &err);
}

static inline bytes store_get(ri_snapstore *st, const char *name, bool module, bool compress) {
    ri_snapstore_image_options o;
    memset(&o, 0, sizeof o);
    o.include_module = module;
    o.compress = compress;
    bytes b = {NULL, 0};
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_image(st, name, &o, &b.data, &b.len, NULL, &err), &err);
    return b;
}

/* Entries of a directory, "." and ".." excluded. */
static inline size_t count_entries(const char *path, const char *prefix) {
    DIR *d = opendir(path);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        n++;
    }
    closedir(d);
    return n;
}

#endif
