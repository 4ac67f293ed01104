/*
 * Workspace deltas between live file systems (src/workspace/delta_fs.c): the encoder that
 * walks two trees writes exactly the bytes wsfs_delta_encode writes from their images,
 * for forks (shared blocks skipped) and for unrelated trees alike; applying a delta to a
 * fork of its base gives the workspace wsfs_delta_apply + wsfs_parse give, and refuses
 * every delta they refuse (each truncation, each single-bit flip).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

static void put_at(wsfs *fs, const char *path, const void *data, size_t len, uint64_t off) {
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_open(fs, R, P(path), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, data, len, off, &n), WSFS_ESUCCESS);
}

static uint8_t *image(const wsfs *fs, size_t *len) {
    uint8_t *img = NULL;
    assert_int_equal(wsfs_serialize(fs, &img, len, NULL), WSFS_OK);
    return img;
}

static void fill(wsfs *fs, uint32_t nfiles, size_t bytes) {
    assert_int_equal(wsfs_mkdir(fs, R, P("src")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("gone")), WSFS_ESUCCESS);
    uint8_t *buf = malloc(bytes);
    for (uint32_t i = 0; i < nfiles; i++) {
        for (size_t k = 0; k < bytes; k++) buf[k] = (uint8_t)(i + k * 3);
        char name[32];
        snprintf(name, sizeof name, "src/f%u", i);
        put_at(fs, name, buf, bytes, 0);
    }
    free(buf);
    static uint8_t big[5 * WSFS_BLOCK_SIZE + 7];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7 + 1);
    put_at(fs, "big", big, sizeof big, 0);
    put_at(fs, "gone/x", P("bye"), 0);
    put_at(fs, "sparse", P("end"), 3 * WSFS_BLOCK_SIZE);
    assert_int_equal(wsfs_symlink(fs, P("big"), R, P("link")), WSFS_ESUCCESS);
}

/* Every kind of change, with differences at block edges and runs across blocks. */
static void change(wsfs *fs, bool long_run) {
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_lookup(fs, R, P("src/f1"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "CHANGED", 7, 10, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("big"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "edge", 4, WSFS_BLOCK_SIZE - 2, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "near", 4, WSFS_BLOCK_SIZE + 20, &n), WSFS_ESUCCESS);
    static uint8_t run[WSFS_BLOCK_SIZE + 100];
    memset(run, 0xEE, sizeof run);
    if (long_run) assert_int_equal(wsfs_pwrite(fs, ino, run, sizeof run, 2 * WSFS_BLOCK_SIZE + 50, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "tail", 4, 5 * WSFS_BLOCK_SIZE + 5, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("src/f2"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(fs, ino, 5), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("src/f3"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(fs, ino, 40000), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("sparse"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, "hole", 4, 100, &n), WSFS_ESUCCESS);
    /* the same bytes written again: a copied block equal to the base's */
    assert_int_equal(wsfs_lookup(fs, R, P("src/f2"), true, &ino), WSFS_ESUCCESS);
    uint8_t same[3];
    assert_int_equal(wsfs_pread(fs, ino, same, 3, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, same, 3, 0, &n), WSFS_ESUCCESS);
    put_at(fs, "new", P("fresh file"), 0);
    assert_int_equal(wsfs_unlink(fs, R, P("gone/x")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rmdir(fs, R, P("gone")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(fs, R, P("src/f0"), R, P("moved")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("moved"), R, P("link2")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pin(fs, R), WSFS_ESUCCESS); /* a directory whose fields only change */
}

/* The delta by trees equals the delta by images; applied either way it gives the child. */
static void check_pair(const wsfs *base, const wsfs *child) {
    size_t blen, clen, d1len, d2len, olen;
    uint8_t *bimg = image(base, &blen), *cimg = image(child, &clen), *d1, *d2, *out;
    wsfs_error err;
    assert_int_equal(wsfs_delta_encode(bimg, blen, cimg, clen, &d1, &d1len, &err), WSFS_OK);
    assert_int_equal(wsfs_delta_encode_fs(base, child, &d2, &d2len, &err), WSFS_OK);
    assert_int_equal(d1len, d2len);
    assert_memory_equal(d1, d2, d1len);
    wsfs *applied = NULL;
    assert_int_equal(wsfs_delta_apply_fs(base, d2, d2len, &applied, &err), WSFS_OK);
    out = image(applied, &olen);
    assert_int_equal(olen, clen);
    assert_memory_equal(out, cimg, clen);
    wsfs_free(applied);
    free(out);
    free(bimg);
    free(cimg);
    free(d1);
    free(d2);
}

static void test_encode_equals_image_delta(void **state) {
    (void)state;
    uint64_t clk = 0, clk2 = 0;
    wsfs *fs = mk(&clk);
    fill(fs, 40, 3000);
    wsfs *child = wsfs_fork(fs);
    change(child, true);
    check_pair(fs, child);
    check_pair(child, fs); /* the other way: additions become removals */
    check_pair(fs, fs);    /* nothing: the header alone */
    /* unrelated trees (nothing shared): every inode compared by content */
    wsfs *other = mk(&clk2);
    fill(other, 40, 3000);
    change(other, true);
    check_pair(fs, other);
    check_pair(child, other);
    wsfs_free(other);
    wsfs_free(child);
    wsfs_free(fs);
}

/* The in-place apply refuses exactly what the image apply + parser refuse. */
static void test_apply_refuses_like_the_parser(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(&clk);
    fill(fs, 4, 100);
    wsfs *child = wsfs_fork(fs);
    change(child, false); /* a short delta: every bit of it is flipped */
    size_t blen, dlen;
    uint8_t *bimg = image(fs, &blen), *d;
    wsfs_error err;
    assert_int_equal(wsfs_delta_encode_fs(fs, child, &d, &dlen, &err), WSFS_OK);
    for (size_t cut = 0; cut < dlen; cut++) {
        wsfs *out = (wsfs *)1;
        assert_int_not_equal(wsfs_delta_apply_fs(fs, d, cut, &out, &err), WSFS_OK);
        assert_null(out);
    }
    size_t accepted = 0;
    for (size_t i = 0; i < dlen; i++)
        for (int bit = 0; bit < 8; bit++) {
            d[i] ^= (uint8_t)(1u << bit);
            uint8_t *img = NULL;
            size_t ilen = 0;
            wsfs *parsed = NULL, *applied = NULL;
            bool by_image = wsfs_delta_apply(bimg, blen, d, dlen, &img, &ilen, &err) == WSFS_OK &&
                            wsfs_parse(img, ilen, NULL, &parsed, &err) == WSFS_OK;
            bool in_place = wsfs_delta_apply_fs(fs, d, dlen, &applied, &err) == WSFS_OK;
            if (by_image != in_place) print_error("byte %zu bit %d: image %d, in place %d (%s)\n", i, bit, by_image,
                                                  in_place, err.message);
            assert_int_equal(by_image, in_place);
            if (in_place) {
                size_t alen;
                uint8_t *again = image(applied, &alen);
                assert_int_equal(alen, ilen);
                assert_memory_equal(again, img, ilen);
                free(again);
                accepted++;
            }
            wsfs_free(parsed);
            wsfs_free(applied);
            free(img);
            d[i] ^= (uint8_t)(1u << bit);
        }
    printf("in-place delta bit flips: %zu of %zu accepted, as by image\n", accepted, dlen * 8);
    free(d);
    free(bimg);
    wsfs_free(child);
    wsfs_free(fs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_equals_image_delta),
        cmocka_unit_test(test_apply_refuses_like_the_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
