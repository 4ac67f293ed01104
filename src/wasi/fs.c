/*
 * The workspace's files behind descriptors (src/workspace/wsfs.h): each WASI context owns
 * one workspace file system, preopened as "/" at descriptor 3, whose clock is the
 * virtual realtime clock (file times are deterministic). Descriptors name inodes and pin
 * them (an unlinked open file stays readable). Errnos pass through: wsfs uses WASI's.
 */
#include <string.h>

#include "wasi_internal.h"
#include "workspace/wsfs.h"

#define FS(w) ((wsfs *)(w)->fs)

static uint64_t fs_clock(void *ctx) { return wasi_clock_now((const ri_wasi *)ctx, CLOCK_REALTIME_ID); }

bool wasi_fs_attach(ri_wasi *w, void *fs) {
    w->fs = fs;
    wsfs_set_clock(fs, fs_clock, w);
    return true;
}

bool wasi_fs_create(ri_wasi *w) {
    wsfs_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.clock = fs_clock;
    cfg.clock_ctx = w;
    wsfs *fs = NULL;
    wsfs_error e;
    if (wsfs_new(&cfg, &fs, &e) != WSFS_OK) return false;
    w->fs = fs;
    return true;
}

void *wasi_fs_fork(const ri_wasi *w) { return w->fs ? wsfs_fork(FS(w)) : NULL; }

void wasi_fs_free(ri_wasi *w) {
    if (w->fs) wsfs_free(FS(w));
    w->fs = NULL;
}

void *ri_wasi_workspace(ri_wasi *w) { return w ? w->fs : NULL; }

void wasi_fs_unpin(ri_wasi *w, wasi_fd *f) {
    if (w->fs && (f->kind == WASI_FD_FILE || f->kind == WASI_FD_DIR)) wsfs_unpin(FS(w), f->ino);
}

uint8_t wasi_fs_filetype(ri_wasi *w, uint64_t ino) {
    wsfs_filestat st;
    if (!w->fs || wsfs_stat(FS(w), ino, &st)) return FT_UNKNOWN;
    return st.filetype;
}

uint32_t wasi_fs_size(ri_wasi *w, uint64_t ino, uint64_t *size) {
    wsfs_filestat st;
    if (!w->fs) return WASI_EBADF;
    uint32_t e = wsfs_stat(FS(w), ino, &st);
    if (!e) *size = st.size;
    return e;
}

void wasi_filestat_put(uint8_t *p, const void *stat) {
    const wsfs_filestat *st = stat;
    memset(p, 0, 64);
    ri_le_put64(p, st->dev);
    ri_le_put64(p + 8, st->ino);
    p[16] = st->filetype;
    ri_le_put64(p + 24, st->nlink);
    ri_le_put64(p + 32, st->size);
    ri_le_put64(p + 40, st->atim);
    ri_le_put64(p + 48, st->mtim);
    ri_le_put64(p + 56, st->ctim);
}

uint32_t wasi_fs_filestat(ri_wasi *w, uint64_t ino, uint8_t *p) {
    wsfs_filestat st;
    if (!w->fs) return WASI_EBADF;
    uint32_t e = wsfs_stat(FS(w), ino, &st);
    if (!e) wasi_filestat_put(p, &st);
    return e;
}

uint32_t wasi_fs_read(ri_wasi *w, wasi_fd *f, const wasi_mem *m, const wasi_iovs *v, uint64_t *off, uint64_t *n) {
    *n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        uint8_t *buf = wasi_iov_buf(m, v, i, &len);
        size_t got = 0;
        uint32_t e = wsfs_pread(FS(w), f->ino, buf, len, *off, &got);
        if (e) return *n ? WASI_ESUCCESS : e;
        *off += got;
        *n += got;
        if (got < len) break;
    }
    return WASI_ESUCCESS;
}

uint32_t wasi_fs_write(ri_wasi *w, wasi_fd *f, const wasi_mem *m, const wasi_iovs *v, uint64_t *off, bool append,
                       uint64_t *n) {
    *n = 0;
    uint64_t at = *off;
    if (append) {
        uint32_t e = wasi_fs_size(w, f->ino, &at);
        if (e) return e;
    }
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const uint8_t *buf = wasi_iov_buf(m, v, i, &len);
        size_t put = 0;
        uint32_t e = wsfs_pwrite(FS(w), f->ino, buf, len, at, &put);
        if (e) return *n ? WASI_ESUCCESS : e;
        at += put;
        *n += put;
        if (put < len) break;
    }
    *off = at; /* an appending write leaves the offset at the end */
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_allocate) {
    uint32_t e;
    wasi_fd *f = wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(R_FD_ALLOCATE), &e);
    if (!f) return e;
    if (f->kind != WASI_FD_FILE) return f->kind == WASI_FD_DIR || f->kind == WASI_FD_PREOPEN ? WASI_EISDIR : WASI_EBADF;
    return wsfs_allocate(FS(c->w), f->ino, wasi_arg64(args, 1), wasi_arg64(args, 2));
}

WASI_HANDLER(fd_filestat_set_size) {
    uint32_t e;
    wasi_fd *f = wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(R_FD_FILESTAT_SET_SIZE), &e);
    if (!f) return e;
    if (f->kind != WASI_FD_FILE) return f->kind == WASI_FD_DIR || f->kind == WASI_FD_PREOPEN ? WASI_EISDIR : WASI_EINVAL;
    return wsfs_truncate(FS(c->w), f->ino, wasi_arg64(args, 1));
}

uint32_t wasi_fst_flags_check(uint32_t flags) {
    if (flags & ~(uint32_t)15) return WASI_EINVAL;
    if ((flags & 1) && (flags & 2)) return WASI_EINVAL; /* atim and atim_now */
    if ((flags & 4) && (flags & 8)) return WASI_EINVAL; /* mtim and mtim_now */
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_filestat_set_times) {
    uint32_t e;
    wasi_fd *f = wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(R_FD_FILESTAT_SET_TIMES), &e);
    if (!f) return e;
    uint32_t flags = wasi_arg32(args, 3);
    if ((e = wasi_fst_flags_check(flags))) return e;
    if (f->kind == WASI_FD_STDIN || f->kind == WASI_FD_STDOUT || f->kind == WASI_FD_STDERR) return WASI_ESUCCESS;
    return wsfs_set_times(FS(c->w), f->ino, wasi_arg64(args, 1), wasi_arg64(args, 2), flags);
}

/* dirent (24 bytes): d_next u64 @0, d_ino u64 @8, d_namlen u32 @16, d_type u8 @20; the
 * name follows. The buffer is filled completely (the last entry cut short), which tells
 * the program there is more. */
WASI_HANDLER(fd_readdir) {
    uint32_t e;
    wasi_fd *f = wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(R_FD_READDIR), &e);
    if (!f) return e;
    if (f->kind != WASI_FD_DIR && f->kind != WASI_FD_PREOPEN) return WASI_ENOTDIR;
    uint32_t len = wasi_arg32(args, 2), used_ptr = wasi_arg32(args, 4);
    uint8_t *buf = wasi_mem_range(&c->mem, wasi_arg32(args, 1), len);
    if (!buf || !wasi_mem_range(&c->mem, used_ptr, 4)) return WASI_EFAULT;
    uint64_t cookie = wasi_arg64(args, 3);
    uint32_t used = 0;
    while (used < len) {
        wsfs_dirent d[16];
        size_t n = 0;
        if ((e = wsfs_readdir(FS(c->w), f->ino, cookie, d, 16, &n))) return e;
        if (n == 0) break;
        for (size_t i = 0; i < n && used < len; i++) {
            uint8_t head[24];
            memset(head, 0, sizeof head);
            ri_le_put64(head, d[i].next);
            ri_le_put64(head + 8, d[i].ino);
            ri_le_put32(head + 16, d[i].namelen);
            head[20] = d[i].filetype;
            uint32_t k = len - used < 24 ? len - used : 24;
            memcpy(buf + used, head, k);
            used += k;
            k = len - used < d[i].namelen ? len - used : d[i].namelen;
            memcpy(buf + used, d[i].name, k);
            used += k;
            cookie = d[i].next;
        }
        if (n < 16) break;
    }
    wasi_store_u32(&c->mem, used_ptr, used);
    return WASI_ESUCCESS;
}
