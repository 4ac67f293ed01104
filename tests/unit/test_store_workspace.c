/*
 * The store keeps a workspace's files by content (docs/STORE.md "Workspaces"): each file's
 * 16 KiB chunks are blobs, shared across snapshots and sandboxes; the image comes back byte
 * for byte; gc keeps chunks still named; verify and reads find a damaged chunk.
 */
#include "test_store_util.h"

#include "ri/snapshot.h"
#include "workspace/wsfs.h"

#define NFILES 1000u
#define FILE_BYTES 3000u

typedef struct fx {
    char *dir;
    char path[4200];
    ri_snapstore *st;
    ri_sandboxes *f;
} fx;

static ri_sandbox *wasi_sandbox(fx *f) {
    ri_sandbox_config c = store_config();
    c.enable_wasi = true;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f->f, &c, &err);
    assert_non_null(sb);
    load_fixture(sb, "wasi_calls");
    return sb;
}

static void put_file(wsfs *fs, const char *name, const uint8_t *data, size_t len) {
    uint64_t ino;
    assert_int_equal(wsfs_open(fs, WSFS_ROOT_INO, name, strlen(name), WSFS_O_CREAT | WSFS_O_TRUNC, &ino), 0);
    size_t n;
    assert_int_equal(wsfs_pwrite(fs, ino, data, len, 0, &n), 0);
    assert_int_equal(n, len);
}

/* NFILES files of FILE_BYTES distinct bytes each in d/, and one of 40,000 bytes (3 chunks). */
static void fill(ri_sandbox *sb) {
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    assert_int_equal(wsfs_mkdir(fs, WSFS_ROOT_INO, "d", 1), 0);
    uint8_t buf[FILE_BYTES];
    for (uint32_t i = 0; i < NFILES; i++) {
        for (uint32_t k = 0; k < FILE_BYTES; k++) buf[k] = (uint8_t)(i * 31u + k * 7u + (k >> 8) * i);
        memcpy(buf, &i, sizeof i);
        char name[32];
        snprintf(name, sizeof name, "d/f%04u", i);
        put_file(fs, name, buf, sizeof buf);
    }
    uint8_t *big = malloc(40000);
    for (uint32_t k = 0; k < 40000; k++) big[k] = (uint8_t)(k * 13u + 1);
    put_file(fs, "big", big, 40000);
    free(big);
}

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    f->dir = temp_dir();
    f->st = new_store(f->dir, f->path, sizeof f->path);
    f->f = ri_sandboxes_new();
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    ri_snapstore_close(f->st);
    ri_sandboxes_free(f->f);
    remove_tree(f->dir);
    free(f);
    return 0;
}

static void round_trip(ri_snapstore *st, const char *name, ri_sandbox *sb) {
    for (int compressed = 0; compressed < 2; compressed++) {
        bytes img = snap(sb, false, compressed);
        store_put(st, name, img, NULL);
        bytes back = store_get(st, name, false, compressed);
        assert_bytes_equal(img, back);
        free(img.data);
        free(back.data);
    }
}

static void test_shared_files_stored_once(void **state) {
    fx *f = *state;
    ri_sandbox *a = wasi_sandbox(f), *b = wasi_sandbox(f);
    fill(a);
    fill(b);
    bytes ia = snap(a, false, true), ib = snap(b, false, true);
    ri_snapstore_put_stats s1, s2, s3;
    memset(&s1, 0, sizeof s1), memset(&s2, 0, sizeof s2), memset(&s3, 0, sizeof s3);
    store_put(f->st, "a", ia, &s1);
    /* every file's chunk, big's two distinct ones (its first two chunks are equal) */
    assert_true(s1.blobs_written >= NFILES + 2);
    /* Another sandbox with the same files: nothing new. */
    store_put(f->st, "b", ib, &s2);
    assert_int_equal(s2.blobs_written, 0);
    /* One changed file: its chunk alone. */
    wsfs *fs = ri_sandbox_wasi_workspace(b);
    uint64_t ino;
    assert_int_equal(wsfs_open(fs, WSFS_ROOT_INO, "d/f0500", 7, 0, &ino), 0);
    size_t n;
    assert_int_equal(wsfs_pwrite(fs, ino, "changed", 7, 100, &n), 0);
    bytes ic = snap(b, false, true);
    store_put(f->st, "c", ic, &s3);
    assert_int_equal(s3.blobs_written, 1);
    /* Each comes back exactly; the manifest is small beside the image; c added the manifest
     * and one chunk's compressed bytes. */
    bytes back = store_get(f->st, "c", false, true);
    assert_bytes_equal(ic, back);
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapstore_get_info(f->st, "c", &info, &err), &err);
    assert_true(info.manifest_bytes < 200000);
    assert_true(s3.bytes_written <= info.manifest_bytes + FILE_BYTES + 64);
    ri_snapstore_info_free(&info);
    free(back.data);
    /* And restores: the file's new bytes are there. */
    ri_sandbox *r = wasi_sandbox(f);
    back = store_get(f->st, "c", false, false);
    ri_sandbox_error se;
    if (!ri_sandbox_restore(r, back.data, back.len, &se)) print_error("restore: %s\n", se.message);
    char got[8] = {0};
    assert_int_equal(wsfs_lookup(ri_sandbox_wasi_workspace(r), WSFS_ROOT_INO, "d/f0500", 7, true, &ino), 0);
    assert_int_equal(wsfs_pread(ri_sandbox_wasi_workspace(r), ino, got, 7, 100, &n), 0);
    assert_memory_equal(got, "changed", 7);
    free(back.data);
    /* gc keeps every chunk still named: a and b gone, c whole. */
    bool existed;
    expect_ok(ri_snapstore_delete(f->st, "a", &existed, &err), &err);
    expect_ok(ri_snapstore_delete(f->st, "b", &existed, &err), &err);
    ri_snapstore_gc_stats gs;
    expect_ok(ri_snapstore_gc(f->st, &gs, &err), &err);
    assert_int_equal(gs.blobs_removed, 1); /* f0500's old chunk */
    back = store_get(f->st, "c", false, true);
    assert_bytes_equal(ic, back);
    uint64_t checked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_int_equal(bad, 0);
    free(back.data);
    free(ia.data), free(ib.data), free(ic.data);
    ri_sandbox_free(a), ri_sandbox_free(b), ri_sandbox_free(r);
}

static void test_round_trip_exact(void **state) {
    fx *f = *state;
    ri_sandbox *sb = wasi_sandbox(f);
    round_trip(f->st, "empty", sb); /* only the root directory */
    fill(sb);
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    assert_int_equal(wsfs_symlink(fs, "d/f0001", 7, WSFS_ROOT_INO, "link", 4), 0);
    uint64_t ino;
    assert_int_equal(wsfs_open(fs, WSFS_ROOT_INO, "empty", 5, WSFS_O_CREAT, &ino), 0);
    assert_int_equal(wsfs_open(fs, WSFS_ROOT_INO, "sparse", 6, WSFS_O_CREAT, &ino), 0);
    assert_int_equal(wsfs_truncate(fs, ino, 100000), 0); /* zero chunks: one blob for all */
    round_trip(f->st, "full", sb);
    ri_sandbox_free(sb);
}

static void chunk_blob_path(fx *f, const uint8_t *data, size_t len, char *out, size_t cap) {
    uint8_t hash[32];
    assert_true(ri_snap_sha256(data, len, hash));
    char hex[65];
    ri_snap_hex(hash, hex);
    snprintf(out, cap, "%s/blobs/%.2s/%s", f->path, hex, hex);
}

static void test_damaged_chunk_found(void **state) {
    fx *f = *state;
    ri_sandbox *sb = wasi_sandbox(f);
    uint8_t data[5000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 5u + 3);
    put_file(ri_sandbox_wasi_workspace(sb), "victim", data, sizeof data);
    bytes img = snap(sb, false, true);
    store_put(f->st, "v", img, NULL);
    char path[4400];
    chunk_blob_path(f, data, sizeof data, path, sizeof path);
    bytes blob = read_path(path);
    blob.data[blob.len / 2] ^= 0x10;
    write_path(path, blob.data, blob.len);
    uint8_t *out;
    size_t len;
    ri_snapstore_error err;
    assert_false(ri_snapstore_get_image(f->st, "v", NULL, &out, &len, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
    assert_non_null(strstr(err.message, "chunk 0 of file inode 2 in the workspace of snapshot 'v'"));
    uint64_t checked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_true(bad >= 1);
    assert_int_equal(first.code, RI_SNAPSTORE_ERR_CORRUPT);
    /* Missing altogether: verify names the reference. */
    assert_int_equal(unlink(path), 0);
    expect_ok(ri_snapstore_verify(f->st, &checked, &bad, &first, &err), &err);
    assert_true(bad >= 1);
    assert_false(ri_snapstore_get_image(f->st, "v", NULL, &out, &len, NULL, &err));
    free(blob.data);
    free(img.data);
    ri_sandbox_free(sb);
}

static void test_manifest_damage_refused(void **state) {
    fx *f = *state;
    ri_sandbox *sb = wasi_sandbox(f);
    put_file(ri_sandbox_wasi_workspace(sb), "x", (const uint8_t *)"hello", 5);
    bytes img = snap(sb, false, true);
    store_put(f->st, "m", img, NULL);
    char mpath[4400];
    snprintf(mpath, sizeof mpath, "%s/snapshots/m.snap", f->path);
    bytes man = read_path(mpath);
    assert_int_equal(man.data[4], 3); /* version 3: a workspace record */
    /* Every flipped byte is refused with a specific error (the digest), never misread. */
    for (size_t i = 0; i < man.len; i += 7) {
        man.data[i] ^= 1;
        write_path(mpath, man.data, man.len);
        ri_snapstore_info info;
        ri_snapstore_error err;
        uint8_t *out;
        size_t len;
        bool ok = ri_snapstore_get_image(f->st, "m", NULL, &out, &len, &info, &err);
        if (ok) free(out), ri_snapstore_info_free(&info);
        assert_false(ok);
        assert_int_equal(err.code, RI_SNAPSTORE_ERR_CORRUPT);
        man.data[i] ^= 1;
    }
    write_path(mpath, man.data, man.len);
    free(man.data);
    free(img.data);
    ri_sandbox_free(sb);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shared_files_stored_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_chunk_found, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest_damage_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
