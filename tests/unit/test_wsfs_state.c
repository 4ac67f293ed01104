/* The workspace file system as state (src/workspace): copy-on-write forks, diffs, the
 * canonical serialization and its strict parser, determinism. Timings are printed, never
 * asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static uint64_t put_at(wsfs *fs, const char *path, const void *data, size_t len, uint64_t off) {
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_open(fs, R, P(path), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, ino, data, len, off, &n), WSFS_ESUCCESS);
    return ino;
}

/* A tree with every kind of inode: directories, files (one sparse, one multi-block), a
 * symlink, a hard link and an unlinked pinned file. */
static wsfs *sample(uint64_t *clock) {
    wsfs *fs = mk(clock);
    assert_int_equal(wsfs_mkdir(fs, R, P("src")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("src/lib")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("empty")), WSFS_ESUCCESS);
    put_at(fs, "src/main.c", P("int main(void) { return 0; }\n"), 0);
    put_at(fs, "src/lib/sparse", "end", 3, 5 * WSFS_BLOCK_SIZE);
    static uint8_t big[3 * WSFS_BLOCK_SIZE + 7];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i * 7 + 1);
    put_at(fs, "big", big, sizeof big, 0);
    assert_int_equal(wsfs_symlink(fs, P("src/main.c"), R, P("link")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_link(fs, R, P("src/main.c"), false, R, P("hard")), WSFS_ESUCCESS);
    uint64_t tmp = put_at(fs, "tmp", P("open but unlinked"), 0);
    assert_int_equal(wsfs_pin(fs, tmp), WSFS_ESUCCESS);
    assert_int_equal(wsfs_unlink(fs, R, P("tmp")), WSFS_ESUCCESS);
    return fs;
}

static uint8_t *image(const wsfs *fs, size_t *len) {
    uint8_t *img = NULL;
    wsfs_error err;
    assert_int_equal(wsfs_serialize(fs, &img, len, &err), WSFS_OK);
    return img;
}

static void assert_same_image(const wsfs *a, const wsfs *b) {
    size_t la, lb;
    uint8_t *ia = image(a, &la), *ib = image(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ia, ib, la);
    free(ia);
    free(ib);
}

static void test_round_trip(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = sample(&clk);
    size_t len;
    uint8_t *img = image(fs, &len);
    wsfs *back = NULL;
    wsfs_error err;
    assert_int_equal(wsfs_parse(img, len, NULL, &back, &err), WSFS_OK);
    assert_same_image(fs, back);
    /* the parsed tree works: read, write, resolve */
    uint64_t ino;
    char buf[32];
    size_t n;
    assert_int_equal(wsfs_lookup(back, R, P("link"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(back, ino, buf, 3, 0, &n), WSFS_ESUCCESS);
    assert_memory_equal(buf, "int", 3);
    assert_int_equal(wsfs_lookup(back, R, P("src/lib/sparse"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(back, ino, buf, 3, 5 * WSFS_BLOCK_SIZE, &n), WSFS_ESUCCESS);
    assert_memory_equal(buf, "end", 3);
    wsfs_usage u;
    wsfs_get_usage(back, &u);
    assert_int_equal(u.family_blocks, 7); /* big 4, sparse 1 (its zero blocks stay holes), main.c 1, tmp 1 */
    assert_int_equal(wsfs_unpin(back, 9), WSFS_ESUCCESS); /* the unlinked file, pinned */
    assert_int_equal(wsfs_mkdir(back, R, P("new")), WSFS_ESUCCESS);
    wsfs_free(back);
    free(img);
    wsfs_free(fs);
}

static void test_determinism(void **state) {
    (void)state;
    uint64_t c1 = 0, c2 = 0;
    wsfs *a = sample(&c1), *b = sample(&c2);
    assert_same_image(a, b);
    /* a fixed image of a small tree: the same bytes on every machine (little-endian) */
    uint64_t c3 = 0;
    wsfs *s = mk(&c3);
    put_at(s, "f", "hi", 2, 0);
    size_t len;
    uint8_t *img = image(s, &len);
    static const uint8_t expect[] = {
        'W', 'S', 'F', 'S', 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
        /* inode 1: a directory */
        1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* ino type nlink pins */
        1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, /* atim mtim ctim */
        1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,                                     /* parent, 1 entry */
        2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 'f',              /* key 2^32+2, ino 2 */
        /* inode 2: a file */
        2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 'h', 'i'};
    assert_int_equal(len, sizeof expect);
    assert_memory_equal(img, expect, len);
    free(img);
    wsfs_free(s);
    wsfs_free(a);
    wsfs_free(b);
}

static void test_fork_isolation(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *origin = sample(&clk);
    size_t l0;
    uint8_t *before = image(origin, &l0);
    wsfs_usage u0, u1;
    wsfs_get_usage(origin, &u0);
    wsfs *fork = wsfs_fork(origin);
    assert_non_null(fork);
    wsfs_get_usage(fork, &u1);
    assert_int_equal(u1.family_blocks, u0.family_blocks); /* nothing copied */
    assert_int_equal(u1.family_inodes, u0.family_inodes);
    assert_same_image(origin, fork);
    /* a one-byte write in the fork copies one block and the path to it */
    uint64_t big;
    size_t n;
    assert_int_equal(wsfs_lookup(fork, R, P("big"), true, &big), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fork, big, "X", 1, WSFS_BLOCK_SIZE + 3, &n), WSFS_ESUCCESS);
    wsfs_get_usage(fork, &u1);
    assert_int_equal(u1.family_blocks, u0.family_blocks + 1);
    assert_int_equal(u1.family_inodes, u0.family_inodes + 1);
    char c;
    assert_int_equal(wsfs_pread(origin, big, &c, 1, WSFS_BLOCK_SIZE + 3, &n), WSFS_ESUCCESS);
    assert_int_not_equal(c, 'X');
    assert_int_equal(wsfs_pread(fork, big, &c, 1, WSFS_BLOCK_SIZE + 3, &n), WSFS_ESUCCESS);
    assert_int_equal(c, 'X');
    /* structure changes in the fork: invisible in the origin */
    assert_int_equal(wsfs_mkdir(fork, R, P("forkdir")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(fork, R, P("src"), R, P("forkdir/src")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_unlink(fork, R, P("hard")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_unpin(fork, 9), WSFS_ESUCCESS);
    /* and changes in the origin are invisible in the fork */
    put_at(origin, "origin-only", "o", 1, 0);
    uint64_t ino;
    assert_int_equal(wsfs_lookup(fork, R, P("origin-only"), true, &ino), WSFS_ENOENT);
    assert_int_equal(wsfs_lookup(origin, R, P("forkdir"), true, &ino), WSFS_ENOENT);
    assert_int_equal(wsfs_lookup(origin, R, P("src/main.c"), true, &ino), WSFS_ESUCCESS);
    /* the same next inode number on both sides: counters are per version */
    wsfs_usage uo, uf;
    wsfs_get_usage(origin, &uo);
    wsfs_get_usage(fork, &uf);
    assert_int_equal(uo.next_ino, uf.next_ino);
    /* a checkpoint is a fork kept aside: rollback = use it again */
    wsfs *ckpt = wsfs_fork(origin);
    assert_int_equal(wsfs_unlink(origin, R, P("origin-only")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(ckpt, R, P("origin-only"), true, &ino), WSFS_ESUCCESS);
    wsfs_free(origin);
    /* freeing the origin leaves the fork whole */
    assert_int_equal(wsfs_lookup(fork, R, P("forkdir/src/lib/sparse"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(fork, ino, &c, 1, 5 * WSFS_BLOCK_SIZE, &n), WSFS_ESUCCESS);
    assert_int_equal(c, 'e');
    wsfs_free(fork);
    size_t lc;
    uint8_t *ci = image(ckpt, &lc);
    assert_true(lc > l0);
    wsfs_free(ckpt);
    free(ci);
    free(before);
}

typedef struct changes {
    int n;
    wsfs_change_kind kind[32];
    char path[32][64];
    char old[32][64];
    uint64_t bytes[32];
} changes;

static bool collect(void *ctx, const wsfs_change *c) {
    changes *cs = ctx;
    if (cs->n >= 32) return false;
    cs->kind[cs->n] = c->kind;
    snprintf(cs->path[cs->n], 64, "%s", c->path);
    snprintf(cs->old[cs->n], 64, "%s", c->old_path ? c->old_path : "");
    cs->bytes[cs->n] = c->bytes;
    cs->n++;
    return true;
}

static int find_change(const changes *cs, wsfs_change_kind k, const char *path) {
    for (int i = 0; i < cs->n; i++)
        if (cs->kind[i] == k && !strcmp(cs->path[i], path)) return i;
    return -1;
}

static void test_diff(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *a = sample(&clk);
    wsfs *b = wsfs_fork(a);
    changes cs = {0};
    assert_int_equal(wsfs_diff(a, b, collect, &cs), WSFS_ESUCCESS);
    assert_int_equal(cs.n, 0);
    uint64_t big;
    size_t n;
    assert_int_equal(wsfs_lookup(b, R, P("big"), true, &big), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(b, big, "XYZ", 3, 10, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(b, big, "\x01", 1, 0, &n), WSFS_ESUCCESS); /* the same byte: not a change */
    put_at(b, "added.txt", "12345", 5, 0);
    assert_int_equal(wsfs_unlink(b, R, P("link")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(b, R, P("empty"), R, P("moved")), WSFS_ESUCCESS);
    uint64_t sp;
    assert_int_equal(wsfs_lookup(b, R, P("src/lib/sparse"), true, &sp), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(b, sp, 5 * WSFS_BLOCK_SIZE + 13), WSFS_ESUCCESS); /* 10 more bytes */
    assert_int_equal(wsfs_rename(b, R, P("hard"), R, P("src/hard2")), WSFS_ESUCCESS); /* a link moves */
    cs.n = 0;
    assert_int_equal(wsfs_diff(a, b, collect, &cs), WSFS_ESUCCESS);
    int i = find_change(&cs, WSFS_CHANGED, "/big");
    assert_true(i >= 0);
    assert_int_equal(cs.bytes[i], 3);
    i = find_change(&cs, WSFS_ADDED, "/added.txt");
    assert_true(i >= 0);
    assert_int_equal(cs.bytes[i], 5);
    assert_true(find_change(&cs, WSFS_REMOVED, "/link") >= 0);
    i = find_change(&cs, WSFS_MOVED, "/moved");
    assert_true(i >= 0);
    assert_string_equal(cs.old[i], "/empty");
    i = find_change(&cs, WSFS_CHANGED, "/src/lib/sparse");
    assert_true(i >= 0);
    assert_int_equal(cs.bytes[i], 10);
    /* the reverse diff mirrors it */
    changes rev = {0};
    assert_int_equal(wsfs_diff(b, a, collect, &rev), WSFS_ESUCCESS);
    assert_true(find_change(&rev, WSFS_REMOVED, "/added.txt") >= 0);
    assert_true(find_change(&rev, WSFS_ADDED, "/link") >= 0);
    /* stopping early */
    changes one = {.n = 31};
    assert_int_equal(wsfs_diff(a, b, collect, &one), WSFS_ESUCCESS);
    assert_int_equal(one.n, 32);
    /* two unrelated file systems with the same content: nothing differs but pointers */
    uint64_t c2 = 0;
    wsfs *c = sample(&c2);
    changes same = {0};
    assert_int_equal(wsfs_diff(a, c, collect, &same), WSFS_ESUCCESS);
    assert_int_equal(same.n, 0);
    wsfs_free(c);
    wsfs_free(a);
    wsfs_free(b);
}

static void test_parser_refuses_truncations_and_flips(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = sample(&clk);
    /* a small image (the big files out), so that every truncation and flip runs */
    assert_int_equal(wsfs_unlink(fs, R, P("big")), WSFS_ESUCCESS);
    uint64_t sp;
    assert_int_equal(wsfs_lookup(fs, R, P("src/lib/sparse"), true, &sp), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(fs, sp, 40), WSFS_ESUCCESS);
    size_t len;
    uint8_t *img = image(fs, &len);
    wsfs_error err;
    wsfs *out;
    for (size_t cut = 0; cut < len; cut++) {
        out = (wsfs *)1;
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, img, cut);
        wsfs_status st = wsfs_parse(copy, cut, NULL, &out, &err);
        free(copy);
        assert_int_equal(st, WSFS_ERR_MALFORMED);
        assert_null(out);
        assert_true(strlen(err.message) > 0);
    }
    /* trailing bytes */
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, img, len);
    longer[len] = 0;
    assert_int_equal(wsfs_parse(longer, len + 1, NULL, &out, &err), WSFS_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "left over"));
    free(longer);
    /* every single-bit flip: refused, or accepted and then canonical (re-serialized equal) */
    size_t accepted = 0;
    for (size_t i = 0; i < len; i++)
        for (int bit = 0; bit < 8; bit++) {
            img[i] ^= (uint8_t)(1u << bit);
            wsfs_status st = wsfs_parse(img, len, NULL, &out, &err);
            if (st == WSFS_OK) {
                size_t l2;
                uint8_t *again = image(out, &l2);
                assert_int_equal(l2, len);
                assert_memory_equal(again, img, len);
                free(again);
                wsfs_free(out);
                accepted++;
            } else {
                assert_null(out);
            }
            img[i] ^= (uint8_t)(1u << bit);
        }
    /* accepted flips are in times and file bytes only */
    printf("bit flips: %zu of %zu accepted (times, content)\n", accepted, len * 8);
    free(img);
    wsfs_free(fs);
}

/* Hand-made images, each breaking one rule, with the message it must give. */
static void test_parser_specific_errors(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(&clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    put_at(fs, "f", "x", 1, 0);
    size_t len;
    uint8_t *img = image(fs, &len);
    /* layout: header 24; root at 24 (56 + 4 + 2 entries of 19); d at 24+98; f after d */
    const size_t root = 24, ents = root + 60, d = root + 98, f = d + 60;
    struct {
        size_t off;
        uint8_t val;
        const char *msg;
    } cases[] = {
        {0, 'X', "bad magic"},
        {4, 2, "version 2"},
        {16, 9, "cannot fit"},
        {8, 2, "not below the counter"},
        {root + 8, 5, "file type 5"},
        {root + 9, 1, "reserved"},
        {root + 20, 1, "reserved"},
        {root + 48, 2, "not a root"},
        {root + 12, 4, "link count"},
        {ents + 8, 7, "does not exist"},
        {ents + 8, 1, "names inode 1"},
        {ents + 18, '/', "invalid name"},
        {ents + 18, 'g', "name order"},
        {ents + 19 + 4, 0, "cookie"},
        {d + 48, 3, "link count 2 or parent 3"},
        {f + 12, 2, "link count 2, but 1"},
        {f + 48, 2, "does not name it"},
        {d, 1, "not after inode 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *copy = malloc(len);
        memcpy(copy, img, len);
        copy[cases[i].off] = cases[i].val;
        wsfs *out;
        wsfs_error err;
        wsfs_status st = wsfs_parse(copy, len, NULL, &out, &err);
        if (st == WSFS_OK || !strstr(err.message, cases[i].msg))
            fail_msg("case %zu: status %d, message '%s', expected '%s'", i, st, err.message, cases[i].msg);
        free(copy);
    }
    /* limits: a valid image that a stricter configuration refuses */
    wsfs *out;
    wsfs_error err;
    wsfs_config small = {.limits = {.max_inodes = 2}};
    assert_int_equal(wsfs_parse(img, len, &small, &out, &err), WSFS_ERR_LIMIT);
    wsfs_config quota = {.limits = {.max_bytes = 0 + 1}};
    put_at(fs, "g", "yy", 2, 0);
    free(img);
    img = image(fs, &len);
    assert_int_equal(wsfs_parse(img, len, &quota, &out, &err), WSFS_ERR_LIMIT);
    assert_non_null(strstr(err.message, "quota"));
    wsfs_config names = {.limits = {.max_name = 1}};
    assert_int_equal(wsfs_parse(img, len, &names, &out, &err), WSFS_OK); /* names of 1 byte */
    wsfs_free(out);
    free(img);
    /* a directory cycle: d's entry made to name the root's other directory... built by hand */
    wsfs_free(fs);
}

/* A cycle detached from the root: two directories naming each other, link counts right. */
static void test_parser_refuses_cycles(void **state) {
    (void)state;
    uint8_t img[512];
    size_t p = 0;
#define U8(v) img[p++] = (uint8_t)(v)
#define U16(v) U8(v), U8((v) >> 8)
#define U32(v) U16(v), U16((v) >> 16)
#define U64(v) U32(v), U32((uint64_t)(v) >> 32)
    memcpy(img, "WSFS", 4);
    p = 4;
    U32(1);
    U64(4); /* next ino */
    U64(3); /* inodes */
    /* root, empty */
    U64(1); U8(3); U8(0); U8(0); U8(0); U32(2); U32(0); U32(0); U64(0); U64(0); U64(0); U64(1); U32(0);
    /* 2 names 3, parent 3; 3 names 2, parent 2 */
    U64(2); U8(3); U8(0); U8(0); U8(0); U32(3); U32(0); U32(0); U64(0); U64(0); U64(0); U64(3); U32(1);
    U64(10); U64(3); U16(1); U8('b');
    U64(3); U8(3); U8(0); U8(0); U8(0); U32(3); U32(0); U32(0); U64(0); U64(0); U64(0); U64(2); U32(1);
    U64(10); U64(2); U16(1); U8('a');
    wsfs *out;
    wsfs_error err;
    assert_int_equal(wsfs_parse(img, p, NULL, &out, &err), WSFS_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "cycle"));
    /* a huge declared count in a tiny input allocates nothing big */
    p = 16;
    U64(UINT64_MAX);
    assert_int_equal(wsfs_parse(img, 24, NULL, &out, &err), WSFS_ERR_LIMIT);
    wsfs_config many = {.limits = {.max_inodes = UINT32_MAX}};
    p = 16;
    U64(1000000);
    assert_int_equal(wsfs_parse(img, 200, &many, &out, &err), WSFS_ERR_MALFORMED);
    assert_non_null(strstr(err.message, "cannot fit"));
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Measured, printed: fork of a 1,000-file tree, a write after it, serialize and parse. */
static void test_costs(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(&clk);
    static uint8_t data[4096];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)i;
    char path[64];
    for (int d = 0; d < 10; d++) {
        snprintf(path, sizeof path, "dir%d", d);
        assert_int_equal(wsfs_mkdir(fs, R, P(path)), WSFS_ESUCCESS);
        for (int f = 0; f < 100; f++) {
            snprintf(path, sizeof path, "dir%d/file%03d", d, f);
            put_at(fs, path, data, sizeof data, 0);
        }
    }
    wsfs_usage u0, u1;
    wsfs_get_usage(fs, &u0);
    double t0 = now_s();
    enum { FORKS = 1000 };
    wsfs *forks[FORKS];
    for (int i = 0; i < FORKS; i++) forks[i] = wsfs_fork(fs);
    double t1 = now_s();
    uint64_t ino;
    size_t n;
    assert_int_equal(wsfs_lookup(forks[0], R, P("dir5/file050"), true, &ino), WSFS_ESUCCESS);
    double t2 = now_s();
    assert_int_equal(wsfs_pwrite(forks[0], ino, "x", 1, 0, &n), WSFS_ESUCCESS);
    double t3 = now_s();
    wsfs_get_usage(forks[0], &u1);
    assert_int_equal(u1.family_blocks, u0.family_blocks + 1);
    assert_true(u1.family_nodes - u0.family_nodes <= 4); /* the inode-table path and the block's */
    for (int i = 0; i < FORKS; i++) wsfs_free(forks[i]);
    size_t len;
    double t4 = now_s();
    uint8_t *img = image(fs, &len);
    double t5 = now_s();
    wsfs *back;
    wsfs_error err;
    assert_int_equal(wsfs_parse(img, len, NULL, &back, &err), WSFS_OK);
    double t6 = now_s();
    printf("1,011 inodes, 4 MB: fork %.2f us each; first write after a fork %.1f us; serialize %.1f ms (%.0f MB/s); "
           "parse %.1f ms (%.0f MB/s)\n",
           (t1 - t0) / FORKS * 1e6, (t3 - t2) * 1e6, (t5 - t4) * 1e3, (double)len / (t5 - t4) / 1e6,
           (t6 - t5) * 1e3, (double)len / (t6 - t5) / 1e6);
    free(img);
    wsfs_free(back);
    wsfs_free(fs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_fork_isolation),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_parser_refuses_truncations_and_flips),
        cmocka_unit_test(test_parser_specific_errors),
        cmocka_unit_test(test_parser_refuses_cycles),
        cmocka_unit_test(test_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
