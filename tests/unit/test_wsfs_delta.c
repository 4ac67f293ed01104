/*
 * Workspace deltas (docs/SNAPSHOT_FORMAT.md "WSFS in a delta"): only what changed since
 * the parent travels, base + delta gives the child's canonical bytes exactly, the parser
 * refuses truncations and inconsistent flips; and through the sandbox, a delta image of a
 * WASI sandbox carries the changed files only and applies to the byte-identical full image.
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

static uint64_t tick(void *ctx) { return ++*(uint64_t *)ctx; }

static wsfs *mk(uint64_t *clock) {
    wsfs_config cfg = {.clock = tick, .clock_ctx = clock};
    wsfs *fs = NULL;
    assert_int_equal(wsfs_new(&cfg, &fs, NULL), WSFS_OK);
    return fs;
}

static uint64_t put_at(wsfs *fs, const char *path, const void *data, size_t len, uint64_t off) {
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_open(fs, R, P(path), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, data, len, off, &n), WSFS_ESUCCESS);
    return ino;
}

static uint8_t *image(const wsfs *fs, size_t *len) {
    uint8_t *img = NULL;
    wsfs_error err;
    assert_int_equal(wsfs_serialize(fs, &img, len, &err), WSFS_OK);
    return img;
}

/* base: a few directories, files (one of several blocks), a symlink. */
static wsfs *base_fs(uint64_t *clk, uint32_t nfiles, size_t file_bytes) {
    wsfs *fs = mk(clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("src")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("gone")), WSFS_ESUCCESS);
    uint8_t *buf = malloc(file_bytes);
    for (uint32_t i = 0; i < nfiles; i++) {
        for (size_t k = 0; k < file_bytes; k++) buf[k] = (uint8_t)(i + k * 3);
        char name[32];
        snprintf(name, sizeof name, "src/f%u", i);
        put_at(fs, name, buf, file_bytes, 0);
    }
    free(buf);
    static uint8_t big[3 * WSFS_BLOCK_SIZE + 7];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7 + 1);
    put_at(fs, "big", big, sizeof big, 0);
    put_at(fs, "gone/x", P("bye"), 0);
    assert_int_equal(wsfs_symlink(fs, P("big"), R, P("link")), WSFS_ESUCCESS);
    return fs;
}

/* Every kind of change: bytes in place, growth, truncation, a new file, a removed file and
 * directory, a rename, a new symlink, a sparse extension. */
static void change(wsfs *fs) {
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_lookup(fs, R, P("src/f1"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "CHANGED", 7, 10, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("big"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "tail", 4, 3 * WSFS_BLOCK_SIZE + 5, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "x", 1, 20, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("src/f2"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(fs, ino, 5), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("src/f3"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(fs, ino, 40000), WSFS_ESUCCESS);
    put_at(fs, "new", P("fresh file"), 0);
    assert_int_equal(wsfs_unlink(fs, R, P("gone/x")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rmdir(fs, R, P("gone")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(fs, R, P("src/f0"), R, P("moved")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("moved"), R, P("link2")), WSFS_ESUCCESS);
}

typedef struct pair {
    uint8_t *base, *child, *delta;
    size_t blen, clen, dlen;
} pair;

static pair make_pair(uint32_t nfiles, size_t file_bytes) {
    uint64_t clk = 0;
    wsfs *fs = base_fs(&clk, nfiles, file_bytes);
    wsfs *child = wsfs_fork(fs);
    change(child);
    pair p;
    p.base = image(fs, &p.blen);
    p.child = image(child, &p.clen);
    wsfs_error err;
    assert_int_equal(wsfs_delta_encode(p.base, p.blen, p.child, p.clen, &p.delta, &p.dlen, &err), WSFS_OK);
    wsfs_free(child);
    wsfs_free(fs);
    return p;
}

static void pair_free(pair *p) {
    free(p->base);
    free(p->child);
    free(p->delta);
}

static void test_round_trip_small(void **state) {
    (void)state;
    pair p = make_pair(100, 3000);
    uint8_t *out;
    size_t len;
    wsfs_error err;
    assert_int_equal(wsfs_delta_apply(p.base, p.blen, p.delta, p.dlen, &out, &len, &err), WSFS_OK);
    assert_int_equal(len, p.clen);
    assert_memory_equal(out, p.child, len);
    free(out);
    /* Only the changes travel: far smaller than the 300 KB of files. */
    assert_true(p.dlen < 4000);
    /* No change: a delta of the header alone, giving the same bytes. */
    uint8_t *d;
    size_t dlen;
    assert_int_equal(wsfs_delta_encode(p.base, p.blen, p.base, p.blen, &d, &dlen, &err), WSFS_OK);
    assert_int_equal(dlen, 48);
    assert_int_equal(wsfs_delta_apply(p.base, p.blen, d, dlen, &out, &len, &err), WSFS_OK);
    assert_int_equal(len, p.blen);
    assert_memory_equal(out, p.base, len);
    free(out);
    free(d);
    /* Against another base: refused. */
    assert_int_equal(wsfs_delta_apply(p.child, p.clen, p.delta, p.dlen, &out, &len, &err), WSFS_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "base"));
    pair_free(&p);
}

static void test_refuses_truncations_and_flips(void **state) {
    (void)state;
    pair p = make_pair(4, 100);
    uint8_t *out;
    size_t len;
    wsfs_error err;
    for (size_t cut = 0; cut < p.dlen; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, p.delta, cut);
        out = (uint8_t *)1;
        assert_int_equal(wsfs_delta_apply(p.base, p.blen, copy, cut, &out, &len, &err), WSFS_ERR_MALFORMED);
        assert_null(out);
        assert_non_null(strstr(err.message, "wsfs delta, byte "));
        free(copy);
    }
    uint8_t *longer = malloc(p.dlen + 1);
    memcpy(longer, p.delta, p.dlen);
    longer[p.dlen] = 0;
    assert_int_equal(wsfs_delta_apply(p.base, p.blen, longer, p.dlen + 1, &out, &len, &err), WSFS_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "left over"));
    free(longer);
    /* Every single-bit flip: refused, or it gives a workspace that the full parser refuses,
     * or one that is canonical (a flip in a time or in file bytes; the image's CSUM guards those). */
    size_t accepted = 0;
    for (size_t i = 0; i < p.dlen; i++)
        for (int bit = 0; bit < 8; bit++) {
            p.delta[i] ^= (uint8_t)(1u << bit);
            wsfs_status st = wsfs_delta_apply(p.base, p.blen, p.delta, p.dlen, &out, &len, &err);
            if (st == WSFS_OK) {
                wsfs *fs;
                if (wsfs_parse(out, len, NULL, &fs, &err) == WSFS_OK) {
                    size_t l2;
                    uint8_t *again = image(fs, &l2);
                    assert_int_equal(l2, len);
                    assert_memory_equal(again, out, len);
                    free(again);
                    wsfs_free(fs);
                    accepted++;
                }
                free(out);
            } else {
                assert_null(out);
                assert_true(strlen(err.message) > 0);
            }
            p.delta[i] ^= (uint8_t)(1u << bit);
        }
    printf("delta bit flips: %zu of %zu give a valid workspace (times, content)\n", accepted, p.dlen * 8);
    pair_free(&p);
}

static void expect_refused(const uint8_t *base, size_t blen, const uint8_t *d, size_t dlen, const char *text) {
    uint8_t *out;
    size_t len;
    wsfs_error err;
    assert_int_equal(wsfs_delta_apply(base, blen, d, dlen, &out, &len, &err), WSFS_ERR_MALFORMED);
    if (!strstr(err.message, text)) print_error("expected '%s', got '%s'\n", text, err.message);
    assert_non_null(strstr(err.message, text));
}

static void test_specific_errors(void **state) {
    (void)state;
    pair p = make_pair(4, 100);
    uint8_t *d = malloc(p.dlen);
#define BREAK(stmt, text)                                                                                            \
    do {                                                                                                             \
        memcpy(d, p.delta, p.dlen);                                                                                  \
        stmt;                                                                                                        \
        expect_refused(p.base, p.blen, d, p.dlen, text);                                                             \
    } while (0)
    BREAK(d[0] = 'X', "bad magic");
    BREAK(d[4] = 2, "version 2");
    BREAK(d[8] ^= 1, "made against a base");
    BREAK(d[16] ^= 1, "not the length the header declares");
    BREAK(d[32] ^= 1, "not the count the header declares");
    BREAK(d[23] = 0x10, "above 4 GiB");
    BREAK(d[48 + 9] = 1, "reserved bytes");
    BREAK(d[48 + 8] = 9, "unknown operation");
    BREAK(d[40] += 1, "truncated");
#undef BREAK
    free(d);
    pair_free(&p);
}

/* ---- through the sandbox --------------------------------------------------------------------- */

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

static void test_sandbox_delta(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = wasi_sandbox(f);
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    uint8_t buf[10000];
    for (uint32_t i = 0; i < 300; i++) {
        for (size_t k = 0; k < sizeof buf; k++) buf[k] = (uint8_t)(i * 13 + k * 7 + (k >> 9));
        char name[32];
        snprintf(name, sizeof name, "f%u", i);
        put_at(fs, name, buf, sizeof buf, 0);
    }
    for (int compressed = 0; compressed < 2; compressed++) {
        ri_snapshot_options o = {RI_SNAPSHOT_V2, false, !compressed};
        uint8_t *parent, *delta, *full, *applied;
        size_t plen, dlen, flen, alen;
        ri_sandbox_error err;
        assert_true(ri_sandbox_snapshot_with(sb, &o, &parent, &plen, &err));
        uint64_t ino;
        size_t n;
        assert_int_equal(wsfs_lookup(fs, R, P("f7"), true, &ino), WSFS_ESUCCESS);
        assert_int_equal(wsfs_pwrite(fs, ino, "edit", 4, 5000, &n), WSFS_ESUCCESS);
        assert_int_equal(wsfs_unlink(fs, R, P(compressed ? "f8" : "f9")), WSFS_ESUCCESS);
        assert_true(ri_sandbox_snapshot_delta(sb, parent, plen, &o, &delta, &dlen, &err));
        assert_true(ri_sandbox_snapshot_with(sb, &o, &full, &flen, &err));
        /* The delta holds the changes, not the 3 MB workspace. */
        assert_true(dlen < 16384); /* the edit, and the root directory (300 entries) whole */
        ri_snap_error e;
        assert_true(ri_snap_delta_apply(parent, plen, delta, dlen, &applied, &alen, &e));
        assert_int_equal(alen, flen);
        assert_memory_equal(applied, full, flen);
        /* Read alone, the delta describes itself; its workspace is a delta. */
        ri_snap_delta_info info;
        ri_snap_image img;
        uint8_t *backing;
        assert_true(ri_snap_delta_read(delta, dlen, &info, &img, &backing, &e));
        assert_true(img.workspace_delta);
        uint8_t *ws;
        size_t wlen;
        assert_false(ri_snap_workspace(&img, &ws, &wlen, &e));
        assert_non_null(strstr(e.message, "workspace delta"));
        ri_snap_image_free(&img);
        free(backing);
        /* Restored on its parent into another sandbox: the edit is there, f9 is gone. */
        ri_sandbox *r = wasi_sandbox(f);
        if (!ri_sandbox_restore_delta(r, parent, plen, delta, dlen, &err)) print_error("%s\n", err.message);
        wsfs *rfs = ri_sandbox_wasi_workspace(r);
        char got[4];
        assert_int_equal(wsfs_lookup(rfs, R, P("f7"), true, &ino), WSFS_ESUCCESS);
        assert_int_equal(wsfs_pread(rfs, ino, got, 4, 5000, &n), WSFS_ESUCCESS);
        assert_memory_equal(got, "edit", 4);
        assert_int_equal(wsfs_lookup(rfs, R, P(compressed ? "f8" : "f9"), true, &ino), WSFS_ENOENT);
        ri_sandbox_free(r);
        free(parent), free(delta), free(full), free(applied);
    }
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_small),
        cmocka_unit_test(test_refuses_truncations_and_flips),
        cmocka_unit_test(test_specific_errors),
        cmocka_unit_test(test_sandbox_delta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
