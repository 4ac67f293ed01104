/* The workspace file system's operations (src/workspace): every operation, its errno
 * paths and the limits, with WASI's errno values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workspace/wsfs.h"

#define R WSFS_ROOT_INO
#define P(s) (s), strlen(s)

static int name_is_dot_test(const char *n, size_t len) {
    return (len == 1 && n[0] == '.') || (len == 2 && n[0] == '.' && n[1] == '.');
}

static uint64_t tick(void *ctx) { return ++*(uint64_t *)ctx; }

static wsfs *mk(const wsfs_limits *lim, uint64_t *clock) {
    wsfs_config cfg = {.clock = tick, .clock_ctx = clock};
    if (lim) cfg.limits = *lim;
    wsfs *fs = NULL;
    wsfs_error err;
    assert_int_equal(wsfs_new(&cfg, &fs, &err), WSFS_OK);
    return fs;
}

static uint64_t creat(wsfs *fs, const char *path) {
    uint64_t ino = 0;
    assert_int_equal(wsfs_open(fs, R, P(path), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    return ino;
}

static void put(wsfs *fs, const char *path, const char *data) {
    uint64_t ino = creat(fs, path);
    size_t n;
    assert_int_equal(wsfs_pwrite(fs, ino, data, strlen(data), 0, &n), WSFS_ESUCCESS);
    assert_int_equal(n, strlen(data));
}

static void test_errno_values(void **state) {
    (void)state;
    /* WASI preview1 numbering (typenames.witx) */
    assert_int_equal(WSFS_EBADF, 8);
    assert_int_equal(WSFS_EEXIST, 20);
    assert_int_equal(WSFS_EINVAL, 28);
    assert_int_equal(WSFS_EISDIR, 31);
    assert_int_equal(WSFS_ELOOP, 32);
    assert_int_equal(WSFS_ENAMETOOLONG, 37);
    assert_int_equal(WSFS_ENOENT, 44);
    assert_int_equal(WSFS_ENOSPC, 51);
    assert_int_equal(WSFS_ENOTDIR, 54);
    assert_int_equal(WSFS_ENOTEMPTY, 55);
    assert_int_equal(WSFS_EPERM, 63);
    assert_string_equal(wsfs_errno_name(WSFS_ENOTEMPTY), "notempty");
    assert_int_equal(WSFS_FILETYPE_DIRECTORY, 3);
    assert_int_equal(WSFS_FILETYPE_REGULAR_FILE, 4);
    assert_int_equal(WSFS_FILETYPE_SYMBOLIC_LINK, 7);
}

static void test_new_root(void **state) {
    (void)state;
    uint64_t clk = 100;
    wsfs *fs = mk(NULL, &clk);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat(fs, R, &st), WSFS_ESUCCESS);
    assert_int_equal(st.ino, 1);
    assert_int_equal(st.filetype, WSFS_FILETYPE_DIRECTORY);
    assert_int_equal(st.nlink, 2);
    assert_int_equal(st.mtim, 101);
    const wsfs_limits *l = wsfs_get_limits(fs);
    assert_int_equal(l->max_bytes, WSFS_DEFAULT_MAX_BYTES);
    assert_int_equal(l->max_inodes, WSFS_DEFAULT_MAX_INODES);
    assert_int_equal(l->max_name, 255);
    assert_int_equal(wsfs_stat(fs, 99, &st), WSFS_EBADF);
    /* no clock: times are 0 */
    wsfs *z = NULL;
    assert_int_equal(wsfs_new(NULL, &z, NULL), WSFS_OK);
    assert_int_equal(wsfs_stat(z, R, &st), WSFS_ESUCCESS);
    assert_int_equal(st.mtim, 0);
    wsfs_free(z);
    wsfs_free(fs);
}

static void test_open_create(void **state) {
    (void)state;
    uint64_t clk = 0, ino, ino2;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_open(fs, R, P("a"), 0, &ino), WSFS_ENOENT);
    assert_int_equal(wsfs_open(fs, R, P("a"), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, 2);
    assert_int_equal(wsfs_open(fs, R, P("a"), WSFS_O_CREAT, &ino2), WSFS_ESUCCESS);
    assert_int_equal(ino2, ino);
    assert_int_equal(wsfs_open(fs, R, P("a"), WSFS_O_CREAT | WSFS_O_EXCL, &ino2), WSFS_EEXIST);
    assert_int_equal(wsfs_open(fs, R, P("a"), WSFS_O_DIRECTORY, &ino2), WSFS_ENOTDIR);
    assert_int_equal(wsfs_open(fs, R, P("a/"), 0, &ino2), WSFS_ENOTDIR);
    assert_int_equal(wsfs_open(fs, R, P("b/"), WSFS_O_CREAT, &ino2), WSFS_EISDIR);
    assert_int_equal(wsfs_open(fs, R, P("b"), WSFS_O_CREAT | WSFS_O_DIRECTORY, &ino2), WSFS_EINVAL);
    assert_int_equal(wsfs_open(fs, R, P("a"), 1u << 20, &ino2), WSFS_EINVAL);
    assert_int_equal(wsfs_open(fs, R, "", 0, 0, &ino2), WSFS_ENOENT);
    assert_int_equal(wsfs_open(fs, R, "a\0b", 3, 0, &ino2), WSFS_EILSEQ);
    assert_int_equal(wsfs_open(fs, ino, P("x"), 0, &ino2), WSFS_ENOTDIR);
    assert_int_equal(wsfs_open(fs, 77, P("x"), 0, &ino2), WSFS_EBADF);
    assert_int_equal(wsfs_open(fs, R, P("nodir/x"), WSFS_O_CREAT, &ino2), WSFS_ENOENT);
    assert_int_equal(wsfs_open(fs, R, P("a/x"), WSFS_O_CREAT, &ino2), WSFS_ENOTDIR);
    /* directories open; O_TRUNC on one is EISDIR */
    assert_int_equal(wsfs_open(fs, R, P("."), WSFS_O_DIRECTORY, &ino2), WSFS_ESUCCESS);
    assert_int_equal(ino2, R);
    assert_int_equal(wsfs_open(fs, R, P("/"), 0, &ino2), WSFS_ESUCCESS);
    assert_int_equal(ino2, R);
    assert_int_equal(wsfs_open(fs, R, P("."), WSFS_O_TRUNC, &ino2), WSFS_EISDIR);
    /* O_TRUNC empties a file */
    size_t n;
    assert_int_equal(wsfs_pwrite(fs, ino, "hello", 5, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_open(fs, R, P("a"), WSFS_O_TRUNC, &ino2), WSFS_ESUCCESS);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat(fs, ino, &st), WSFS_ESUCCESS);
    assert_int_equal(st.size, 0);
    /* the parent's times move with a new entry */
    uint64_t before = clk;
    creat(fs, "c");
    assert_int_equal(wsfs_stat(fs, R, &st), WSFS_ESUCCESS);
    assert_true(st.mtim > before);
    wsfs_free(fs);
}

static void test_mkdir_rmdir(void **state) {
    (void)state;
    uint64_t clk = 0, ino;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_EEXIST);
    assert_int_equal(wsfs_mkdir(fs, R, P("d/")), WSFS_EEXIST);
    assert_int_equal(wsfs_mkdir(fs, R, P(".")), WSFS_EEXIST);
    assert_int_equal(wsfs_mkdir(fs, R, P("..")), WSFS_EEXIST);
    assert_int_equal(wsfs_mkdir(fs, R, P("x/y")), WSFS_ENOENT);
    assert_int_equal(wsfs_mkdir(fs, R, P("d/e/")), WSFS_ESUCCESS);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat_path(fs, R, P("d"), true, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 3);
    assert_int_equal(wsfs_stat(fs, R, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 3);
    put(fs, "d/f", "x");
    assert_int_equal(wsfs_rmdir(fs, R, P("d")), WSFS_ENOTEMPTY);
    assert_int_equal(wsfs_rmdir(fs, R, P("d/f")), WSFS_ENOTDIR);
    assert_int_equal(wsfs_rmdir(fs, R, P("d/.")), WSFS_EINVAL);
    assert_int_equal(wsfs_rmdir(fs, R, P("d/..")), WSFS_ENOTEMPTY);
    assert_int_equal(wsfs_rmdir(fs, R, P("/")), WSFS_EBUSY);
    assert_int_equal(wsfs_rmdir(fs, R, P("nope")), WSFS_ENOENT);
    assert_int_equal(wsfs_unlink(fs, R, P("d/f")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rmdir(fs, R, P("d/e")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rmdir(fs, R, P("d")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, R, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 2);
    assert_int_equal(wsfs_lookup(fs, R, P("d"), true, &ino), WSFS_ENOENT);
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    assert_int_equal(u.inodes, 1);
    wsfs_free(fs);
}

static void test_dot_dot_never_escapes(void **state) {
    (void)state;
    uint64_t clk = 0, ino, d;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("a")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("a/b")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("a/b"), true, &d), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P(".."), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, R);
    assert_int_equal(wsfs_lookup(fs, d, P("../../../../.."), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, R);
    assert_int_equal(wsfs_lookup(fs, d, P(".."), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, d, P("/a//b/./"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, d);
    assert_int_equal(wsfs_lookup(fs, d, P("/a/b/../../a"), true, &ino), WSFS_ESUCCESS);
    wsfs_free(fs);
}

static void test_read_write_holes(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(NULL, &clk);
    uint64_t ino = creat(fs, "f");
    size_t n;
    char buf[64];
    assert_int_equal(wsfs_pwrite(fs, ino, "abc", 3, 0, &n), WSFS_ESUCCESS);
    /* write past the end: a hole of zeros between */
    uint64_t far = 3ull * WSFS_BLOCK_SIZE + 10;
    assert_int_equal(wsfs_pwrite(fs, ino, "xyz", 3, far, &n), WSFS_ESUCCESS);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat(fs, ino, &st), WSFS_ESUCCESS);
    assert_int_equal(st.size, far + 3);
    assert_int_equal(wsfs_pread(fs, ino, buf, 8, WSFS_BLOCK_SIZE + 5, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 8);
    for (int i = 0; i < 8; i++) assert_int_equal(buf[i], 0);
    assert_int_equal(wsfs_pread(fs, ino, buf, sizeof buf, far - 2, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "\0\0xyz", 5);
    assert_int_equal(wsfs_pread(fs, ino, buf, sizeof buf, far + 3, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 0);
    /* a write across a block boundary */
    assert_int_equal(wsfs_pwrite(fs, ino, "0123456789", 10, WSFS_BLOCK_SIZE - 5, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(fs, ino, buf, 10, WSFS_BLOCK_SIZE - 5, &n), WSFS_ESUCCESS);
    assert_memory_equal(buf, "0123456789", 10);
    /* truncate down then up: the cut bytes read as zeros (W6) */
    assert_int_equal(wsfs_truncate(fs, ino, 1), WSFS_ESUCCESS);
    assert_int_equal(wsfs_truncate(fs, ino, 100), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(fs, ino, buf, 4, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 4);
    assert_memory_equal(buf, "a\0\0\0", 4);
    assert_int_equal(wsfs_truncate(fs, ino, 0), WSFS_ESUCCESS);
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    assert_int_equal(u.family_blocks, 0);
    /* allocate grows, never shrinks */
    assert_int_equal(wsfs_allocate(fs, ino, 10, 20), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, ino, &st), WSFS_ESUCCESS);
    assert_int_equal(st.size, 30);
    assert_int_equal(wsfs_allocate(fs, ino, 0, 5), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, ino, &st), WSFS_ESUCCESS);
    assert_int_equal(st.size, 30);
    assert_int_equal(wsfs_allocate(fs, ino, 0, 0), WSFS_EINVAL);
    assert_int_equal(wsfs_allocate(fs, ino, UINT64_MAX, 2), WSFS_EFBIG);
    assert_int_equal(wsfs_pwrite(fs, ino, "a", 1, UINT64_MAX, &n), WSFS_EFBIG);
    assert_int_equal(wsfs_pwrite(fs, ino, "a", 0, 5, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 0);
    /* not files */
    assert_int_equal(wsfs_pread(fs, R, buf, 1, 0, &n), WSFS_EISDIR);
    assert_int_equal(wsfs_pwrite(fs, R, buf, 1, 0, &n), WSFS_EISDIR);
    assert_int_equal(wsfs_truncate(fs, R, 0), WSFS_EISDIR);
    assert_int_equal(wsfs_pread(fs, 99, buf, 1, 0, &n), WSFS_EBADF);
    assert_int_equal(wsfs_symlink(fs, P("f"), R, P("l")), WSFS_ESUCCESS);
    uint64_t l;
    assert_int_equal(wsfs_lookup(fs, R, P("l"), false, &l), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(fs, l, buf, 1, 0, &n), WSFS_EINVAL);
    wsfs_free(fs);
}

static void test_unlink_open_file_stays_readable(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(NULL, &clk);
    put(fs, "f", "still here");
    uint64_t ino;
    assert_int_equal(wsfs_lookup(fs, R, P("f"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pin(fs, ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_unlink(fs, R, P("f")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("f"), true, &ino), WSFS_ENOENT);
    char buf[16];
    size_t n;
    assert_int_equal(wsfs_pread(fs, ino, buf, sizeof buf, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 10);
    assert_memory_equal(buf, "still here", 10);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat(fs, ino, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 0);
    assert_int_equal(wsfs_pwrite(fs, ino, "!", 1, 10, &n), WSFS_ESUCCESS);
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    assert_int_equal(u.inodes, 2);
    assert_int_equal(u.bytes, 11);
    assert_int_equal(wsfs_unpin(fs, ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, ino, &st), WSFS_EBADF);
    assert_int_equal(wsfs_unpin(fs, ino), WSFS_EBADF);
    wsfs_get_usage(fs, &u);
    assert_int_equal(u.inodes, 1);
    assert_int_equal(u.bytes, 0);
    assert_int_equal(u.family_blocks, 0);
    /* a pinned, removed directory: empty, nothing can be created in it */
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    uint64_t d;
    assert_int_equal(wsfs_lookup(fs, R, P("d"), true, &d), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pin(fs, d), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rmdir(fs, R, P("d")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_open(fs, d, P("x"), WSFS_O_CREAT, &ino), WSFS_ENOENT);
    assert_int_equal(wsfs_mkdir(fs, d, P("x")), WSFS_ENOENT);
    wsfs_dirent ents[4];
    assert_int_equal(wsfs_readdir(fs, d, 0, ents, 4, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(wsfs_unpin(fs, d), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, d, &st), WSFS_EBADF);
    assert_int_equal(wsfs_unpin(fs, R), WSFS_EBADF);
    wsfs_free(fs);
}

static void test_unlink_errors(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    put(fs, "f", "x");
    assert_int_equal(wsfs_unlink(fs, R, P("d")), WSFS_EISDIR);
    assert_int_equal(wsfs_unlink(fs, R, P(".")), WSFS_EISDIR);
    assert_int_equal(wsfs_unlink(fs, R, P("nope")), WSFS_ENOENT);
    assert_int_equal(wsfs_unlink(fs, R, P("f/")), WSFS_ENOTDIR);
    assert_int_equal(wsfs_unlink(fs, R, P("f/x")), WSFS_ENOTDIR);
    /* unlink of a symlink removes the link, not its target */
    assert_int_equal(wsfs_symlink(fs, P("f"), R, P("l")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_unlink(fs, R, P("l")), WSFS_ESUCCESS);
    uint64_t ino;
    assert_int_equal(wsfs_lookup(fs, R, P("f"), true, &ino), WSFS_ESUCCESS);
    wsfs_free(fs);
}

static void test_symlinks(void **state) {
    (void)state;
    uint64_t clk = 0, ino, f;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    put(fs, "d/f", "data");
    assert_int_equal(wsfs_lookup(fs, R, P("d/f"), true, &f), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("d/f"), R, P("rel")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("/d"), R, P("abs")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("../d/f"), R, P("d/up")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("missing"), R, P("dangling")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("x"), R, P("rel")), WSFS_EEXIST);
    assert_int_equal(wsfs_symlink(fs, "", 0, R, P("e")), WSFS_ENOENT);
    assert_int_equal(wsfs_symlink(fs, "a\0", 2, R, P("e")), WSFS_EILSEQ);
    assert_int_equal(wsfs_lookup(fs, R, P("rel"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, f);
    assert_int_equal(wsfs_lookup(fs, R, P("abs/f"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, f);
    assert_int_equal(wsfs_lookup(fs, R, P("d/up"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, f);
    assert_int_equal(wsfs_lookup(fs, R, P("abs/"), false, &ino), WSFS_ESUCCESS); /* a trailing slash follows */
    wsfs_filestat st;
    assert_int_equal(wsfs_stat_path(fs, R, P("rel"), false, &st), WSFS_ESUCCESS);
    assert_int_equal(st.filetype, WSFS_FILETYPE_SYMBOLIC_LINK);
    assert_int_equal(st.size, 3);
    assert_int_equal(wsfs_stat_path(fs, R, P("rel"), true, &st), WSFS_ESUCCESS);
    assert_int_equal(st.filetype, WSFS_FILETYPE_REGULAR_FILE);
    assert_int_equal(wsfs_lookup(fs, R, P("dangling"), true, &ino), WSFS_ENOENT);
    /* O_CREAT through a dangling symlink creates its target; O_EXCL does not follow */
    assert_int_equal(wsfs_open(fs, R, P("dangling"), WSFS_O_CREAT | WSFS_O_EXCL, &ino), WSFS_EEXIST);
    assert_int_equal(wsfs_open(fs, R, P("dangling"), WSFS_O_CREAT, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("missing"), true, &f), WSFS_ESUCCESS);
    assert_int_equal(ino, f);
    assert_int_equal(wsfs_open(fs, R, P("rel"), WSFS_O_NOFOLLOW, &ino), WSFS_ELOOP);
    /* readlink */
    char buf[8];
    size_t n;
    assert_int_equal(wsfs_readlink(fs, R, P("d/up"), buf, sizeof buf, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 6);
    assert_memory_equal(buf, "../d/f", 6);
    assert_int_equal(wsfs_readlink(fs, R, P("d/up"), buf, 2, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 6);
    assert_memory_equal(buf, "..", 2);
    assert_int_equal(wsfs_readlink(fs, R, P("d/f"), buf, sizeof buf, &n), WSFS_EINVAL);
    assert_int_equal(wsfs_readlink(fs, R, P("zz"), buf, sizeof buf, &n), WSFS_ENOENT);
    /* loops */
    assert_int_equal(wsfs_symlink(fs, P("loop2"), R, P("loop1")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("loop1"), R, P("loop2")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("loop1"), true, &ino), WSFS_ELOOP);
    assert_int_equal(wsfs_lookup(fs, R, P("loop1/x"), false, &ino), WSFS_ELOOP);
    assert_int_equal(wsfs_lookup(fs, R, P("loop1"), false, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_open(fs, R, P("loop1"), WSFS_O_CREAT, &ino), WSFS_ELOOP);
    assert_int_equal(wsfs_symlink(fs, P("d/f"), R, P("d/f/x")), WSFS_ENOTDIR);
    wsfs_free(fs);
}

static void test_symlink_depth_limit(void **state) {
    (void)state;
    uint64_t clk = 0, ino;
    wsfs_limits lim = {.max_symlinks = 3};
    wsfs *fs = mk(&lim, &clk);
    put(fs, "f", "x");
    assert_int_equal(wsfs_symlink(fs, P("f"), R, P("l1")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("l1"), R, P("l2")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("l2"), R, P("l3")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("l3"), R, P("l4")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("l3"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("l4"), true, &ino), WSFS_ELOOP);
    wsfs_free(fs);
}

static void test_hard_links(void **state) {
    (void)state;
    uint64_t clk = 0, a, b;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    put(fs, "a", "shared");
    assert_int_equal(wsfs_link(fs, R, P("a"), false, R, P("d/b")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("a"), true, &a), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("d/b"), true, &b), WSFS_ESUCCESS);
    assert_int_equal(a, b);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat(fs, a, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 2);
    assert_int_equal(wsfs_link(fs, R, P("d"), false, R, P("d2")), WSFS_EPERM);
    assert_int_equal(wsfs_link(fs, R, P("a"), false, R, P("d/b")), WSFS_EEXIST);
    assert_int_equal(wsfs_link(fs, R, P("nope"), false, R, P("x")), WSFS_ENOENT);
    assert_int_equal(wsfs_link(fs, R, P("a"), false, R, P("nodir/x")), WSFS_ENOENT);
    /* a link to a symlink, followed or not */
    assert_int_equal(wsfs_symlink(fs, P("a"), R, P("s")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_link(fs, R, P("s"), true, R, P("sf")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("sf"), false, &b), WSFS_ESUCCESS);
    assert_int_equal(b, a);
    assert_int_equal(wsfs_link(fs, R, P("s"), false, R, P("sn")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat_path(fs, R, P("sn"), false, &st), WSFS_ESUCCESS);
    assert_int_equal(st.filetype, WSFS_FILETYPE_SYMBOLIC_LINK);
    assert_int_equal(st.nlink, 2);
    /* removing the first link (the inode's recorded parent) keeps the others working */
    assert_int_equal(wsfs_unlink(fs, R, P("a")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_unlink(fs, R, P("sf")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, a, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 1);
    char buf[8];
    size_t n;
    assert_int_equal(wsfs_pread(fs, a, buf, sizeof buf, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 6);
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    uint8_t *img;
    size_t len;
    wsfs_error err;
    assert_int_equal(wsfs_serialize(fs, &img, &len, &err), WSFS_OK);
    wsfs *back;
    assert_int_equal(wsfs_parse(img, len, NULL, &back, &err), WSFS_OK); /* parents are consistent */
    wsfs_free(back);
    free(img);
    assert_int_equal(wsfs_unlink(fs, R, P("d/b")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, a, &st), WSFS_EBADF);
    wsfs_free(fs);
}

static void test_rename(void **state) {
    (void)state;
    uint64_t clk = 0, ino, f;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("a")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("a/sub")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("b")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("empty")), WSFS_ESUCCESS);
    put(fs, "f", "one");
    put(fs, "g", "two");
    assert_int_equal(wsfs_lookup(fs, R, P("f"), true, &f), WSFS_ESUCCESS);
    /* plain move into another directory */
    assert_int_equal(wsfs_rename(fs, R, P("f"), R, P("b/f2")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("b/f2"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, f);
    assert_int_equal(wsfs_lookup(fs, R, P("f"), true, &ino), WSFS_ENOENT);
    /* replacing a file */
    assert_int_equal(wsfs_rename(fs, R, P("g"), R, P("b/f2")), WSFS_ESUCCESS);
    char buf[4];
    size_t n;
    assert_int_equal(wsfs_lookup(fs, R, P("b/f2"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pread(fs, ino, buf, 3, 0, &n), WSFS_ESUCCESS);
    assert_memory_equal(buf, "two", 3);
    wsfs_filestat st;
    assert_int_equal(wsfs_stat(fs, f, &st), WSFS_EBADF); /* the replaced file is gone */
    /* errors */
    assert_int_equal(wsfs_rename(fs, R, P("nope"), R, P("x")), WSFS_ENOENT);
    assert_int_equal(wsfs_rename(fs, R, P("a"), R, P("a/sub/x")), WSFS_EINVAL);
    assert_int_equal(wsfs_rename(fs, R, P("a"), R, P("a/x")), WSFS_EINVAL);
    assert_int_equal(wsfs_rename(fs, R, P("a"), R, P("b/f2")), WSFS_ENOTDIR);
    assert_int_equal(wsfs_rename(fs, R, P("b/f2"), R, P("a")), WSFS_EISDIR);
    assert_int_equal(wsfs_rename(fs, R, P("empty"), R, P("a")), WSFS_ENOTEMPTY);
    assert_int_equal(wsfs_rename(fs, R, P("."), R, P("z")), WSFS_EINVAL);
    assert_int_equal(wsfs_rename(fs, R, P("a"), R, P("..")), WSFS_EINVAL);
    assert_int_equal(wsfs_rename(fs, R, P("b/f2"), R, P("q/")), WSFS_ENOTDIR);
    assert_int_equal(wsfs_rename(fs, R, P("b/f2"), R, P("nodir/x")), WSFS_ENOENT);
    /* the same file: nothing happens */
    assert_int_equal(wsfs_link(fs, R, P("b/f2"), false, R, P("hl")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(fs, R, P("b/f2"), R, P("hl")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("b/f2"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(fs, R, P("a"), R, P("a")), WSFS_ESUCCESS);
    /* a directory over an empty directory; link counts follow */
    assert_int_equal(wsfs_rename(fs, R, P("a"), R, P("empty")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("empty/sub"), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, R, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 4); /* b, empty (was a) */
    assert_int_equal(wsfs_rename(fs, R, P("empty/sub"), R, P("b/sub")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat_path(fs, R, P("b"), true, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 3);
    assert_int_equal(wsfs_stat_path(fs, R, P("empty"), true, &st), WSFS_ESUCCESS);
    assert_int_equal(st.nlink, 2);
    /* ".." of the moved directory is its new parent */
    uint64_t b;
    assert_int_equal(wsfs_lookup(fs, R, P("b"), true, &b), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("b/sub/.."), true, &ino), WSFS_ESUCCESS);
    assert_int_equal(ino, b);
    /* rename within one directory */
    assert_int_equal(wsfs_rename(fs, b, P("f2"), b, P("aaa")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, b, P("aaa"), true, &ino), WSFS_ESUCCESS);
    /* a symlink is renamed, not followed */
    assert_int_equal(wsfs_symlink(fs, P("b"), R, P("sl")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_rename(fs, R, P("sl"), R, P("sl2")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat_path(fs, R, P("sl2"), false, &st), WSFS_ESUCCESS);
    assert_int_equal(st.filetype, WSFS_FILETYPE_SYMBOLIC_LINK);
    uint8_t *img;
    size_t len;
    wsfs_error err;
    assert_int_equal(wsfs_serialize(fs, &img, &len, &err), WSFS_OK);
    wsfs *back;
    assert_int_equal(wsfs_parse(img, len, NULL, &back, &err), WSFS_OK);
    wsfs_free(back);
    free(img);
    wsfs_free(fs);
}

static void test_readdir(void **state) {
    (void)state;
    uint64_t clk = 0, d;
    wsfs *fs = mk(NULL, &clk);
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("d"), true, &d), WSFS_ESUCCESS);
    const char *names[] = {"zeta", "alpha", "Beta", "mid", "alpha2", "b"};
    for (size_t i = 0; i < 6; i++) {
        char p[16] = "d/";
        strcat(p, names[i]);
        creat(fs, p);
    }
    wsfs_dirent e[16];
    size_t n;
    assert_int_equal(wsfs_readdir(fs, d, 0, e, 16, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 8);
    assert_memory_equal(e[0].name, ".", 1);
    assert_int_equal(e[0].ino, d);
    assert_memory_equal(e[1].name, "..", 2);
    assert_int_equal(e[1].ino, R);
    const char *sorted[] = {"Beta", "alpha", "alpha2", "b", "mid", "zeta"};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(e[2 + i].namelen, strlen(sorted[i]));
        assert_memory_equal(e[2 + i].name, sorted[i], strlen(sorted[i]));
        assert_int_equal(e[2 + i].filetype, WSFS_FILETYPE_REGULAR_FILE);
        if (i) assert_true(e[2 + i].next > e[1 + i].next);
    }
    /* resume in small batches while removing what was read (rm -rf) and adding behind */
    uint64_t cookie = 0;
    size_t seen = 0;
    for (;;) {
        assert_int_equal(wsfs_readdir(fs, d, cookie, e, 2, &n), WSFS_ESUCCESS);
        if (!n) break;
        for (size_t i = 0; i < n; i++) {
            cookie = e[i].next;
            if (name_is_dot_test(e[i].name, e[i].namelen)) continue;
            seen++;
            char name[64] = {0};
            memcpy(name, e[i].name, e[i].namelen);
            assert_int_equal(wsfs_unlink(fs, d, P(name)), WSFS_ESUCCESS);
        }
        if (seen) creat(fs, "d/A-before-everything"); /* behind the cursor: never listed */
    }
    assert_int_equal(seen, 6);
    assert_int_equal(wsfs_readdir(fs, R, 0, e, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 0);
    uint64_t f = creat(fs, "file");
    assert_int_equal(wsfs_readdir(fs, f, 0, e, 4, &n), WSFS_ENOTDIR);
    assert_int_equal(wsfs_readdir(fs, 999, 0, e, 4, &n), WSFS_EBADF);
    wsfs_free(fs);
}

static void test_readdir_cookie_renumbering(void **state) {
    (void)state;
    uint64_t clk = 0;
    wsfs *fs = mk(NULL, &clk);
    /* names that always insert at the front: keys halve until the directory is renumbered */
    char name[80];
    for (int i = 0; i < 70; i++) {
        memset(name, 0, sizeof name);
        memset(name, 'z', (size_t)(70 - i));
        creat(fs, name);
    }
    wsfs_dirent e[80];
    size_t n;
    assert_int_equal(wsfs_readdir(fs, R, 0, e, 80, &n), WSFS_ESUCCESS);
    assert_int_equal(n, 72);
    for (size_t i = 3; i < n; i++) {
        assert_true(e[i].next > e[i - 1].next);
        assert_true(e[i].namelen > e[i - 1].namelen);
    }
    wsfs_free(fs);
}

static void test_set_times(void **state) {
    (void)state;
    uint64_t clk = 1000;
    wsfs *fs = mk(NULL, &clk);
    uint64_t f = creat(fs, "f");
    wsfs_filestat st;
    assert_int_equal(wsfs_set_times(fs, f, 5, 6, WSFS_ATIM | WSFS_MTIM), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, f, &st), WSFS_ESUCCESS);
    assert_int_equal(st.atim, 5);
    assert_int_equal(st.mtim, 6);
    assert_int_equal(st.ctim, clk);
    assert_int_equal(wsfs_set_times(fs, f, 0, 0, WSFS_ATIM_NOW), WSFS_ESUCCESS);
    assert_int_equal(wsfs_stat(fs, f, &st), WSFS_ESUCCESS);
    assert_int_equal(st.atim, clk);
    assert_int_equal(st.mtim, 6);
    assert_int_equal(wsfs_set_times(fs, f, 0, 0, WSFS_ATIM | WSFS_ATIM_NOW), WSFS_EINVAL);
    assert_int_equal(wsfs_set_times(fs, f, 0, 0, WSFS_MTIM | WSFS_MTIM_NOW), WSFS_EINVAL);
    assert_int_equal(wsfs_set_times(fs, f, 0, 0, 64), WSFS_EINVAL);
    assert_int_equal(wsfs_set_times(fs, 99, 0, 0, 0), WSFS_EBADF);
    /* reads change nothing (no atime updates: reads never copy a shared inode) */
    uint64_t before = clk;
    char b[1];
    size_t n;
    assert_int_equal(wsfs_pread(fs, f, b, 1, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(clk, before);
    wsfs_free(fs);
}

static void test_limits(void **state) {
    (void)state;
    uint64_t clk = 0, ino;
    wsfs_limits lim = {.max_bytes = 100, .max_inodes = 4, .max_path = 32, .max_name = 8};
    wsfs *fs = mk(&lim, &clk);
    uint64_t f = creat(fs, "f");
    size_t n;
    char big[200] = {0};
    assert_int_equal(wsfs_pwrite(fs, f, big, 101, 0, &n), WSFS_ENOSPC);
    assert_int_equal(wsfs_pwrite(fs, f, big, 100, 0, &n), WSFS_ESUCCESS);
    assert_int_equal(wsfs_pwrite(fs, f, big, 1, 100, &n), WSFS_ENOSPC);
    assert_int_equal(wsfs_truncate(fs, f, 101), WSFS_ENOSPC);
    assert_int_equal(wsfs_allocate(fs, f, 100, 1), WSFS_ENOSPC);
    assert_int_equal(wsfs_symlink(fs, P("f"), R, P("l")), WSFS_ENOSPC); /* targets count too */
    assert_int_equal(wsfs_truncate(fs, f, 90), WSFS_ESUCCESS);
    assert_int_equal(wsfs_symlink(fs, P("f"), R, P("l")), WSFS_ESUCCESS);
    /* inodes: root, f, l, and one more */
    assert_int_equal(wsfs_mkdir(fs, R, P("d")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("e")), WSFS_ENOSPC);
    assert_int_equal(wsfs_open(fs, R, P("g"), WSFS_O_CREAT, &ino), WSFS_ENOSPC);
    assert_int_equal(wsfs_link(fs, R, P("f"), false, R, P("f2")), WSFS_ESUCCESS); /* links are free */
    /* names and paths */
    assert_int_equal(wsfs_lookup(fs, R, P("123456789"), true, &ino), WSFS_ENAMETOOLONG);
    assert_int_equal(wsfs_lookup(fs, R, P("12345678"), true, &ino), WSFS_ENOENT);
    assert_int_equal(wsfs_lookup(fs, R, P("d/../d/../d/../d/../d/../d/../d/../d"), true, &ino), WSFS_ENAMETOOLONG);
    assert_int_equal(wsfs_lookup(fs, R, P("d/../d/../d/../d/../d/../d/../d/"), true, &ino), WSFS_ESUCCESS);
    char lp[40];
    memset(lp, 'a', sizeof lp);
    assert_int_equal(wsfs_symlink(fs, lp, 33, R, P("x")), WSFS_ENAMETOOLONG);
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    assert_int_equal(u.bytes, 91);
    assert_int_equal(u.inodes, 4);
    /* freeing space makes room again */
    assert_int_equal(wsfs_rmdir(fs, R, P("d")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_mkdir(fs, R, P("e")), WSFS_ESUCCESS);
    wsfs_free(fs);
    /* symlink expansion that grows past max_path */
    wsfs_limits lim2 = {.max_path = 16};
    fs = mk(&lim2, &clk);
    assert_int_equal(wsfs_symlink(fs, P("0123456789ab"), R, P("s")), WSFS_ESUCCESS);
    assert_int_equal(wsfs_lookup(fs, R, P("s/0123456"), true, &ino), WSFS_ENAMETOOLONG);
    wsfs_free(fs);
}

static void test_create_counter_is_deterministic(void **state) {
    (void)state;
    uint64_t clk = 0, a, b;
    wsfs *fs = mk(NULL, &clk);
    a = creat(fs, "a");
    assert_int_equal(wsfs_unlink(fs, R, P("a")), WSFS_ESUCCESS);
    b = creat(fs, "b");
    assert_int_equal(b, a + 1); /* numbers are never reused */
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    assert_int_equal(u.next_ino, b + 1);
    wsfs_free(fs);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errno_values),
        cmocka_unit_test(test_new_root),
        cmocka_unit_test(test_open_create),
        cmocka_unit_test(test_mkdir_rmdir),
        cmocka_unit_test(test_dot_dot_never_escapes),
        cmocka_unit_test(test_read_write_holes),
        cmocka_unit_test(test_unlink_open_file_stays_readable),
        cmocka_unit_test(test_unlink_errors),
        cmocka_unit_test(test_symlinks),
        cmocka_unit_test(test_symlink_depth_limit),
        cmocka_unit_test(test_hard_links),
        cmocka_unit_test(test_rename),
        cmocka_unit_test(test_readdir),
        cmocka_unit_test(test_readdir_cookie_renumbering),
        cmocka_unit_test(test_set_times),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_create_counter_is_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
