/*
 * Deltas whose workspace is the changes from the parent state's (ri_sandbox_snapshot_pages_on)
 * and their restore on the parent's state held in memory (ri_sandbox_restore_delta_on):
 * the delta is small, and the warm restore gives exactly the state the cold restore gives
 * from the parent's bytes (their snapshots are byte for byte equal).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ri/sandbox.h"
#include "ri/snapshot.h"
#include "workspace/wsfs.h"

#define R WSFS_ROOT_INO
#define P(s) (s), strlen(s)

static uint8_t *read_fixture(const char *name, size_t *len) {
    const char *dir = getenv("RI_WAT_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.wasm", dir ? dir : "wat", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static ri_sandbox *wasi_sandbox(ri_sandboxes *f) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000LL;
    c.enable_wasi = true;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    size_t len;
    uint8_t *wasm = read_fixture("wasi_calls", &len);
    assert_true(ri_sandbox_load(sb, wasm, len, &err));
    free(wasm);
    return sb;
}

static void put_at(wsfs *fs, const char *path, const void *data, size_t len, uint64_t off) {
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_open(fs, R, P(path), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, data, len, off, &n), WSFS_ESUCCESS);
}

static void poke(ri_sandbox *sb, int32_t at, int32_t v) {
    ri_val args[2] = {ri_val_i32(at), ri_val_i32(v)};
    ri_sandbox_result r = ri_sandbox_call(sb, "poke8", args, 2);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
}

static uint8_t *snap(ri_sandbox *sb, size_t *len) {
    ri_snapshot_options o = {RI_SNAPSHOT_V2, false, true};
    uint8_t *img;
    ri_sandbox_error err;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &img, len, &err));
    return img;
}

static void test_warm_equals_cold(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = wasi_sandbox(f);
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    uint8_t buf[10000];
    for (uint32_t i = 0; i < 200; i++) {
        for (size_t k = 0; k < sizeof buf; k++) buf[k] = (uint8_t)(i * 13 + k * 7 + (k >> 9));
        char name[32];
        snprintf(name, sizeof name, "f%u", i);
        put_at(fs, name, buf, sizeof buf, 0);
    }
    poke(sb, 100, 7);
    for (int compressed = 0; compressed < 2; compressed++) {
        ri_snapshot_options o = {RI_SNAPSHOT_V2, false, !compressed};
        ri_sandbox_error err;
        size_t plen, dlen, whole_len, clen, wlen;
        uint8_t *parent = snap(sb, &plen), psha[32], bits[8192], *delta, *whole;
        assert_true(ri_snap_sha256(parent, plen, psha));
        ri_checkpoint *cp = ri_sandbox_checkpoint(sb, NULL, &err); /* the parent's state */
        assert_non_null(cp);
        /* changes: memory, a file's bytes, a removal, a new file and directory */
        poke(sb, 200 + compressed, 9);
        uint64_t ino;
        size_t n;
        assert_int_equal(wsfs_lookup(fs, R, P("f7"), true, &ino), WSFS_ESUCCESS);
        assert_int_equal(wsfs_pwrite(fs, ino, "edit", 4, 5000, &n), WSFS_ESUCCESS);
        assert_int_equal(wsfs_unlink(fs, R, P(compressed ? "f8" : "f9")), WSFS_ESUCCESS);
        assert_int_equal(wsfs_mkdir(fs, R, P(compressed ? "d1" : "d0")), WSFS_ESUCCESS);
        put_at(fs, compressed ? "d1/new" : "d0/new", P("fresh"), 0);
        memset(bits, 0, sizeof bits);
        assert_true(ri_sandbox_written_pages(sb, bits, sizeof bits, NULL, &err) >= 0);
        assert_true(ri_sandbox_snapshot_pages_on(sb, &o, bits, sizeof bits, psha, plen, cp, &delta, &dlen, &err));
        assert_true(ri_sandbox_snapshot_pages(sb, &o, bits, sizeof bits, psha, plen, &whole, &whole_len, &err));
        /* the page written and the workspace's changes only: far below the 2 MB of files
         * the whole one carries */
        assert_true(dlen < 65536 + 16384);
        if (!compressed) assert_true(whole_len > 2000000);
        /* cold: from the parent's bytes */
        ri_sandbox *cold = wasi_sandbox(f);
        if (!ri_sandbox_restore_delta(cold, parent, plen, delta, dlen, &err)) print_error("%s\n", err.message);
        uint8_t *cimg = snap(cold, &clen);
        /* warm: on the checkpoint, into a fork of the sandbox (the same module) */
        ri_sandbox *warm = ri_sandbox_fork(f, sb, cp, &err);
        assert_non_null(warm);
        poke(warm, 300, 1); /* whatever the fork did since is replaced */
        uint8_t wrong[32];
        memcpy(wrong, psha, 32);
        wrong[0] ^= 1;
        assert_false(ri_sandbox_restore_delta_on(warm, cp, wrong, plen, delta, dlen, &err));
        assert_non_null(strstr(err.message, "parent mismatch"));
        if (!ri_sandbox_restore_delta_on(warm, cp, psha, plen, delta, dlen, &err)) print_error("%s\n", err.message);
        uint8_t *wimg = snap(warm, &wlen);
        assert_int_equal(wlen, clen);
        assert_memory_equal(wimg, cimg, clen);
        /* the delta with the whole workspace restores to the same state too */
        ri_sandbox *cold2 = wasi_sandbox(f);
        assert_true(ri_sandbox_restore_delta(cold2, parent, plen, whole, whole_len, &err));
        size_t c2len;
        uint8_t *c2img = snap(cold2, &c2len);
        assert_int_equal(c2len, clen);
        assert_memory_equal(c2img, cimg, clen);
        free(parent), free(delta), free(whole), free(cimg), free(wimg), free(c2img);
        ri_sandbox_free(cold);
        ri_sandbox_free(cold2);
        ri_sandbox_free(warm);
        ri_checkpoint_free(cp);
    }
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warm_equals_cold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
