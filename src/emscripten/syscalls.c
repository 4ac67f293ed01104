/*
 * The file system syscalls of Emscripten's libc over the sandbox's workspace. Each one
 * runs the WASI layer's own function (src/wasi) on a private buffer standing for guest
 * memory: the path copied in, the results copied out to the guest with bounds checks. So
 * descriptors are WASI's (fd_read, fd_write, fd_seek, fd_close serve them), paths resolve
 * in the workspace preopened as "/" (descriptor 3) and the working directory is always "/".
 * Errors are -errno (Emscripten's errno values are WASI's).
 */
#include <string.h>

#include "emscripten/emsc_internal.h"
#include "workspace/wsfs.h"

#define ROOT_FD 3u
#define AT_FDCWD_ (-100)
#define PATH_MAX_ 4096u
/* musl's flags (Emscripten's libc) */
enum { O_WRONLY_ = 1, O_RDWR_ = 2, O_CREAT_ = 0100, O_EXCL_ = 0200, O_TRUNC_ = 01000, O_APPEND_ = 02000,
       O_DIRECTORY_ = 0200000, O_NOFOLLOW_ = 0400000 };
enum { AT_SYMLINK_NOFOLLOW_ = 0x100, AT_REMOVEDIR_ = 0x200, AT_EMPTY_PATH_ = 0x1000 };

/* A path argument, relative to its directory descriptor, in buf (cap bytes): absolute
 * paths and AT_FDCWD resolve from the workspace's root. 0 or an errno. */
static uint32_t path_in(emsc_ctx *c, int32_t dirfd, uint32_t ptr, uint8_t *buf, uint32_t cap, uint32_t *fd,
                        uint32_t *len) {
    uint32_t n;
    const char *s = emsc_cstring(&c->mem, ptr, PATH_MAX_, &n);
    if (!s) return ptr < c->mem.size ? WASI_ENAMETOOLONG : WASI_EFAULT;
    if (n == 0) return WASI_ENOENT;
    *fd = dirfd == AT_FDCWD_ ? ROOT_FD : (uint32_t)dirfd;
    if (s[0] == '/') {
        while (n && s[0] == '/') s++, n--;
        *fd = ROOT_FD;
        if (n == 0) s = ".", n = 1;
    }
    if (n > cap) return WASI_ENAMETOOLONG;
    memcpy(buf, s, n);
    *len = n;
    return 0;
}

/* Runs WASI function h with `args` on the private memory buf[0, len). */
static uint32_t run(emsc_ctx *c, wasi_handler h, uint8_t *buf, uint32_t len, const ri_val *args) {
    wasi_call wc = {c->w, c->call, {buf, len}};
    return h(&wc, args);
}

static ri_val i32v(uint32_t v) { return ri_val_i32((int32_t)v); }

static void result(ri_val *results, uint32_t e, int32_t ok) { results[0] = e ? emsc_errno(e) : ri_val_i32(ok); }

EMSC_HANDLER(openat) {
    uint8_t buf[PATH_MAX_ + 8];
    uint32_t fd = 0, len = 0, flags = emsc_u32(args, 2);
    uint32_t e = path_in(c, args[0].of.i32, emsc_u32(args, 1), buf, PATH_MAX_, &fd, &len);
    if (e) return result(results, e, 0), 0;
    uint32_t oflags = ((flags & O_CREAT_) ? 1u : 0) | ((flags & O_DIRECTORY_) ? 2u : 0) | ((flags & O_EXCL_) ? 4u : 0) |
                      ((flags & O_TRUNC_) ? 8u : 0);
    uint64_t rights = WASI_RIGHTS_ALL;
    if ((flags & 3) == 0) rights &= ~(WASI_RIGHT(R_FD_WRITE) | WASI_RIGHT(R_FD_ALLOCATE) | WASI_RIGHT(R_FD_FILESTAT_SET_SIZE));
    if ((flags & 3) == O_WRONLY_) rights &= ~(WASI_RIGHT(R_FD_READ) | WASI_RIGHT(R_FD_READDIR));
    ri_val a[9] = {i32v(fd), i32v((flags & O_NOFOLLOW_) ? 0 : 1), i32v(0), i32v(len), i32v(oflags),
                   ri_val_i64((int64_t)rights), ri_val_i64((int64_t)WASI_RIGHTS_ALL),
                   i32v((flags & O_APPEND_) ? 1 : 0), i32v(len)};
    e = run(c, wasi_path_open, buf, len + 4, a);
    result(results, e, (int32_t)ri_le_get32(buf + len));
    return 0;
}

EMSC_HANDLER(unlinkat) {
    uint8_t buf[PATH_MAX_];
    uint32_t fd = 0, len = 0, e = path_in(c, args[0].of.i32, emsc_u32(args, 1), buf, sizeof buf, &fd, &len);
    ri_val a[3] = {i32v(fd), i32v(0), i32v(len)};
    if (!e) e = run(c, (emsc_u32(args, 2) & AT_REMOVEDIR_) ? wasi_path_remove_directory : wasi_path_unlink_file, buf, len, a);
    result(results, e, 0);
    return 0;
}

EMSC_HANDLER(rmdir) {
    ri_val a[3] = {ri_val_i32(AT_FDCWD_), args[0], ri_val_i32(AT_REMOVEDIR_)};
    return emsc_unlinkat(c, a, results);
}

EMSC_HANDLER(mkdirat) {
    uint8_t buf[PATH_MAX_];
    uint32_t fd = 0, len = 0, e = path_in(c, args[0].of.i32, emsc_u32(args, 1), buf, sizeof buf, &fd, &len);
    ri_val a[3] = {i32v(fd), i32v(0), i32v(len)};
    if (!e) e = run(c, wasi_path_create_directory, buf, len, a);
    result(results, e, 0);
    return 0;
}

EMSC_HANDLER(renameat) {
    uint8_t buf[2 * PATH_MAX_];
    uint32_t fd1 = 0, len1 = 0, fd2 = 0, len2 = 0;
    uint32_t e = path_in(c, args[0].of.i32, emsc_u32(args, 1), buf, PATH_MAX_, &fd1, &len1);
    if (!e) e = path_in(c, args[2].of.i32, emsc_u32(args, 3), buf + len1, PATH_MAX_, &fd2, &len2);
    ri_val a[6] = {i32v(fd1), i32v(0), i32v(len1), i32v(fd2), i32v(len1), i32v(len2)};
    if (!e) e = run(c, wasi_path_rename, buf, len1 + len2, a);
    result(results, e, 0);
    return 0;
}

EMSC_HANDLER(readlinkat) {
    uint8_t buf[2 * PATH_MAX_ + 4];
    uint32_t fd = 0, len = 0, out = emsc_u32(args, 2), cap = emsc_u32(args, 3);
    uint32_t e = path_in(c, args[0].of.i32, emsc_u32(args, 1), buf, PATH_MAX_, &fd, &len);
    if (cap > PATH_MAX_) cap = PATH_MAX_;
    uint8_t *dst = wasi_mem_range(&c->mem, out, cap);
    if (!e && !dst) e = WASI_EFAULT;
    ri_val a[6] = {i32v(fd), i32v(0), i32v(len), i32v(len), i32v(cap), i32v(len + cap)};
    if (!e) e = run(c, wasi_path_readlink, buf, len + cap + 4, a);
    uint32_t n = e ? 0 : ri_le_get32(buf + len + cap);
    if (!e) memcpy(dst, buf + len, n);
    result(results, e, (int32_t)n);
    return 0;
}

/* A WASI filestat (64 bytes) as Emscripten's struct stat (96 bytes, the glue's writeStat). */
static uint32_t put_stat(emsc_ctx *c, const uint8_t *fs, uint32_t ptr) {
    uint8_t *p = wasi_mem_range(&c->mem, ptr, 96);
    if (!p) return WASI_EFAULT;
    uint32_t mode;
    switch (fs[16]) {
    case FT_DIRECTORY: mode = 0040000 | 0777; break;
    case FT_SYMBOLIC_LINK: mode = 0120000 | 0777; break;
    case FT_CHARACTER_DEVICE: mode = 0020000 | 0666; break;
    default: mode = 0100000 | 0666; break;
    }
    uint64_t size = ri_le_get64(fs + 32);
    memset(p, 0, 96);
    ri_le_put32(p, (uint32_t)ri_le_get64(fs));
    ri_le_put32(p + 4, mode);
    ri_le_put32(p + 8, (uint32_t)ri_le_get64(fs + 24));
    ri_le_put64(p + 24, size);
    ri_le_put32(p + 32, 4096);
    ri_le_put32(p + 36, (uint32_t)((size + 511) / 512));
    for (int i = 0; i < 3; i++) { /* atime, mtime, ctime: seconds, nanoseconds */
        uint64_t ns = ri_le_get64(fs + 40 + 8 * i);
        ri_le_put64(p + 40 + 16 * i, ns / 1000000000u);
        ri_le_put32(p + 48 + 16 * i, (uint32_t)(ns % 1000000000u));
    }
    ri_le_put64(p + 88, ri_le_get64(fs + 8));
    return 0;
}

static int stat_path(emsc_ctx *c, int32_t dirfd, uint32_t path, uint32_t out, bool follow, ri_val *results) {
    uint8_t buf[PATH_MAX_ + 64];
    uint32_t fd = 0, len = 0, e = path_in(c, dirfd, path, buf, PATH_MAX_, &fd, &len);
    ri_val a[5] = {i32v(fd), i32v(follow ? 1 : 0), i32v(0), i32v(len), i32v(len)};
    if (!e) e = run(c, wasi_path_filestat_get, buf, len + 64, a);
    if (!e) e = put_stat(c, buf + len, out);
    result(results, e, 0);
    return 0;
}

EMSC_HANDLER(stat64) { return stat_path(c, AT_FDCWD_, emsc_u32(args, 0), emsc_u32(args, 1), true, results); }
EMSC_HANDLER(lstat64) { return stat_path(c, AT_FDCWD_, emsc_u32(args, 0), emsc_u32(args, 1), false, results); }

EMSC_HANDLER(fstat64) {
    uint8_t buf[64];
    ri_val a[2] = {args[0], i32v(0)};
    uint32_t e = run(c, wasi_fd_filestat_get, buf, sizeof buf, a);
    if (!e) e = put_stat(c, buf, emsc_u32(args, 1));
    result(results, e, 0);
    return 0;
}

EMSC_HANDLER(newfstatat) {
    uint32_t flags = emsc_u32(args, 3), n;
    const char *s = emsc_cstring(&c->mem, emsc_u32(args, 1), PATH_MAX_, &n);
    if (s && n == 0 && (flags & AT_EMPTY_PATH_)) {
        ri_val a[2] = {args[0], args[2]};
        return emsc_fstat64(c, a, results);
    }
    return stat_path(c, args[0].of.i32, emsc_u32(args, 1), emsc_u32(args, 2), !(flags & AT_SYMLINK_NOFOLLOW_), results);
}

/* getdents64 as the glue writes it: records of 280 bytes (d_ino, d_off, d_reclen, d_type,
 * the name), the directory's position (its descriptor's offset) a workspace cookie. */
#define DIRENT_BYTES 280u
EMSC_HANDLER(getdents64) {
    uint32_t e = 0, fd = emsc_u32(args, 0), count = emsc_u32(args, 2);
    wasi_fd *f = wasi_fd_check(c->w, fd, WASI_RIGHT(R_FD_READDIR), &e);
    if (f && ((f->kind != WASI_FD_DIR && f->kind != WASI_FD_PREOPEN) || !c->w->fs)) e = WASI_ENOTDIR;
    uint8_t *out = e ? NULL : wasi_mem_range(&c->mem, emsc_u32(args, 1), count);
    if (!e && !out) e = WASI_EFAULT;
    if (e) return result(results, e, 0), 0;
    if (count < DIRENT_BYTES) return result(results, WASI_EINVAL, 0), 0;
    uint32_t used = 0;
    while (used + DIRENT_BYTES <= count) {
        wsfs_dirent d;
        size_t n = 0;
        if ((e = wsfs_readdir((const wsfs *)c->w->fs, f->ino, f->offset, &d, 1, &n))) return result(results, e, 0), 0;
        if (n == 0) break;
        uint8_t *p = out + used;
        memset(p, 0, DIRENT_BYTES);
        ri_le_put64(p, d.ino);
        ri_le_put64(p + 8, d.next);
        ri_le_put16(p + 16, DIRENT_BYTES);
        p[18] = d.filetype == FT_DIRECTORY ? 4 : d.filetype == FT_SYMBOLIC_LINK ? 10 : d.filetype == FT_CHARACTER_DEVICE ? 2 : 8;
        memcpy(p + 19, d.name, d.namelen < 255 ? d.namelen : 255);
        f->offset = d.next;
        used += DIRENT_BYTES;
    }
    result(results, 0, (int32_t)used);
    return 0;
}

/* The working directory is "/": getcwd says so, chdir accepts only it. */
EMSC_HANDLER(getcwd) {
    uint32_t size = emsc_u32(args, 1);
    if (size < 2) return result(results, 68 /* ERANGE */, 0), 0;
    uint8_t *p = wasi_mem_range(&c->mem, emsc_u32(args, 0), 2);
    if (!p) return result(results, WASI_EFAULT, 0), 0;
    memcpy(p, "/", 2);
    result(results, 0, 2);
    return 0;
}

EMSC_HANDLER(chdir) {
    uint32_t n;
    const char *s = emsc_cstring(&c->mem, emsc_u32(args, 0), PATH_MAX_, &n);
    if (!s) return result(results, WASI_EFAULT, 0), 0;
    bool root = n > 0;
    for (uint32_t i = 0; i < n; i++) root = root && (s[i] == '/' || s[i] == '.');
    result(results, root ? 0 : WASI_ENOSYS, 0);
    return 0;
}

/* Descriptors are not terminals: stdout is then fully buffered (programs flush it). */
EMSC_HANDLER(ioctl) {
    result(results, wasi_fd_get(c->w, emsc_u32(args, 0)) ? 59 /* ENOTTY */ : WASI_EBADF, 0);
    return 0;
}

EMSC_HANDLER(fcntl64) {
    if (!wasi_fd_get(c->w, emsc_u32(args, 0))) return result(results, WASI_EBADF, 0), 0;
    switch (emsc_u32(args, 1)) {
    case 1: case 2: case 4: result(results, 0, 0); break; /* F_GETFD, F_SETFD, F_SETFL */
    case 3: result(results, 0, O_RDWR_); break;            /* F_GETFL */
    default: result(results, WASI_EINVAL, 0); break;
    }
    return 0;
}

/* Not provided (docs/LANGUAGES.md): -ENOSYS. */
EMSC_HANDLER(dup3) { (void)c, (void)args; result(results, WASI_ENOSYS, 0); return 0; }
EMSC_HANDLER(poll) { (void)c, (void)args; result(results, WASI_ENOSYS, 0); return 0; }
EMSC_HANDLER(statfs64) { (void)c, (void)args; result(results, WASI_ENOSYS, 0); return 0; }
