/*
 * Reading, writing and positioning descriptors: the standard streams here, workspace
 * files through fs.c. Every iovec array, buffer and result pointer is checked before
 * anything moves, so EFAULT has no effect. The standard streams are not seekable (ESPIPE).
 */
#include <string.h>

#include "wasi_internal.h"

static bool is_stdio(const wasi_fd *f) {
    return f->kind == WASI_FD_STDIN || f->kind == WASI_FD_STDOUT || f->kind == WASI_FD_STDERR;
}

/* stdin into the iovecs; *n bytes. WASI_R_WAIT when there is no input yet and the
 * process may pause. */
static uint32_t stdin_read(wasi_call *c, wasi_fd *f, const wasi_iovs *v, uint64_t *n, bool may_wait) {
    *n = 0;
    if (v->total == 0) return WASI_ESUCCESS;
    switch (wasi_stdin_poll(c->w)) {
    case WASI_IN_READY: break;
    case WASI_IN_EOF: return WASI_ESUCCESS;
    case WASI_IN_ERROR: return WASI_EIO;
    case WASI_IN_AGAIN:
        if ((f->fdflags & FDFL_NONBLOCK) || !may_wait) return WASI_EAGAIN;
        return WASI_R_WAIT;
    }
    size_t avail = wasi_stdin_buffered(c->w);
    uint64_t k = v->total < avail ? v->total : avail;
    *n = wasi_iovs_scatter(&c->mem, v, c->w->in, k);
    wasi_stdin_take(c->w, NULL, (size_t)*n);
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_read) {
    uint32_t e, fd = wasi_arg32(args, 0), iovs = wasi_arg32(args, 1), niovs = wasi_arg32(args, 2);
    uint32_t nread_ptr = wasi_arg32(args, 3);
    wasi_fd *f = wasi_fd_check(c->w, fd, WASI_RIGHT(R_FD_READ), &e);
    if (!f) return e;
    wasi_iovs v;
    if ((e = wasi_iovs_get(&c->mem, iovs, niovs, &v))) return e;
    if (!wasi_mem_range(&c->mem, nread_ptr, 4)) return WASI_EFAULT;
    uint64_t n = 0;
    if (f->kind == WASI_FD_STDIN) {
        e = stdin_read(c, f, &v, &n, wasi_may_pause(c->host));
        if (e == WASI_R_WAIT) {
            c->w->wait = (wasi_wait){WASI_WAIT_READ, iovs, niovs, nread_ptr, 0};
            return e;
        }
    } else if (f->kind == WASI_FD_FILE) {
        e = wasi_fs_read(c->w, f, &c->mem, &v, &f->offset, &n);
    } else {
        e = f->kind == WASI_FD_DIR || f->kind == WASI_FD_PREOPEN ? WASI_EISDIR : WASI_EBADF;
    }
    if (e) return e;
    wasi_store_u32(&c->mem, nread_ptr, (uint32_t)n);
    return WASI_ESUCCESS;
}

bool wasi_read_complete(wasi_call *c, uint32_t iovs, uint32_t niovs, uint32_t nread_ptr) {
    wasi_fd *f = wasi_fd_get(c->w, 0);
    wasi_iovs v;
    uint64_t n = 0;
    if (f && f->kind == WASI_FD_STDIN && !wasi_iovs_get(&c->mem, iovs, niovs, &v)) {
        uint32_t e = stdin_read(c, f, &v, &n, true);
        if (e == WASI_R_WAIT) return false;
    }
    /* (An error now cannot be reported: the call returned 0. The program sees 0 bytes.) */
    wasi_store_u32(&c->mem, nread_ptr, (uint32_t)n);
    return true;
}

WASI_HANDLER(fd_write) {
    uint32_t e, fd = wasi_arg32(args, 0), nwritten_ptr = wasi_arg32(args, 3);
    wasi_fd *f = wasi_fd_check(c->w, fd, WASI_RIGHT(R_FD_WRITE), &e);
    if (!f) return e;
    wasi_iovs v;
    if ((e = wasi_iovs_get(&c->mem, wasi_arg32(args, 1), wasi_arg32(args, 2), &v))) return e;
    if (!wasi_mem_range(&c->mem, nwritten_ptr, 4)) return WASI_EFAULT;
    uint64_t n = 0;
    if (f->kind == WASI_FD_STDOUT || f->kind == WASI_FD_STDERR) {
        ri_wasi_stream s = f->kind == WASI_FD_STDOUT ? RI_WASI_STDOUT : RI_WASI_STDERR;
        for (uint32_t i = 0; i < v.n && !e; i++) {
            uint32_t len;
            const uint8_t *buf = wasi_iov_buf(&c->mem, &v, i, &len);
            e = wasi_stdio_write(c->w, s, buf, len);
            if (!e) n += len;
        }
        if (e && n == 0) return e; /* a partial write reports what went out */
    } else if (f->kind == WASI_FD_FILE) {
        if ((e = wasi_fs_write(c->w, f, &c->mem, &v, &f->offset, (f->fdflags & FDFL_APPEND) != 0, &n))) return e;
    } else {
        return f->kind == WASI_FD_DIR || f->kind == WASI_FD_PREOPEN ? WASI_EISDIR : WASI_EBADF;
    }
    wasi_store_u32(&c->mem, nwritten_ptr, (uint32_t)n);
    return WASI_ESUCCESS;
}

/* pread/pwrite: files only, at an offset, the descriptor's offset unchanged. */
static uint32_t positioned(wasi_call *c, const ri_val *args, bool write) {
    uint32_t e;
    uint64_t right = WASI_RIGHT(write ? R_FD_WRITE : R_FD_READ) | WASI_RIGHT(R_FD_SEEK);
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f) return WASI_EBADF;
    if (is_stdio(f)) return WASI_ESPIPE;
    if ((f->rights_base & right) != right) return WASI_ENOTCAPABLE;
    wasi_iovs v;
    if ((e = wasi_iovs_get(&c->mem, wasi_arg32(args, 1), wasi_arg32(args, 2), &v))) return e;
    uint32_t out = wasi_arg32(args, 4);
    if (!wasi_mem_range(&c->mem, out, 4)) return WASI_EFAULT;
    if (f->kind != WASI_FD_FILE) return WASI_EISDIR;
    uint64_t off = wasi_arg64(args, 3), n = 0;
    e = write ? wasi_fs_write(c->w, f, &c->mem, &v, &off, false, &n) : wasi_fs_read(c->w, f, &c->mem, &v, &off, &n);
    if (e) return e;
    wasi_store_u32(&c->mem, out, (uint32_t)n);
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_pread) { return positioned(c, args, false); }
WASI_HANDLER(fd_pwrite) { return positioned(c, args, true); }

WASI_HANDLER(fd_seek) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f) return WASI_EBADF;
    if (is_stdio(f)) return WASI_ESPIPE;
    uint32_t whence = wasi_arg32(args, 2), out = wasi_arg32(args, 3);
    uint64_t delta = wasi_arg64(args, 1);
    /* Asking only where we are (cur + 0) needs only fd_tell. */
    uint64_t right = whence == WHENCE_CUR && delta == 0 ? WASI_RIGHT(R_FD_TELL) : WASI_RIGHT(R_FD_SEEK);
    if ((f->rights_base & right) != right) return WASI_ENOTCAPABLE;
    if (f->kind != WASI_FD_FILE) return WASI_EBADF;
    if (!wasi_mem_range(&c->mem, out, 8)) return WASI_EFAULT;
    uint64_t base;
    if (whence == WHENCE_SET) base = 0;
    else if (whence == WHENCE_CUR) base = f->offset;
    else if (whence == WHENCE_END) {
        uint32_t e = wasi_fs_size(c->w, f->ino, &base);
        if (e) return e;
    } else return WASI_EINVAL;
    int64_t d = args[1].of.i64; /* the witx's filedelta is s64 */
    uint64_t pos;
    if (d < 0) {
        uint64_t back = d == INT64_MIN ? (uint64_t)INT64_MAX + 1 : (uint64_t)-d;
        if (back > base) return WASI_EINVAL;
        pos = base - back;
    } else {
        if ((uint64_t)d > (uint64_t)INT64_MAX - (base > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : base))
            return WASI_EOVERFLOW;
        pos = base + (uint64_t)d;
    }
    f->offset = pos;
    wasi_store_u64(&c->mem, out, pos);
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_tell) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f) return WASI_EBADF;
    if (is_stdio(f)) return WASI_ESPIPE;
    if (!(f->rights_base & WASI_RIGHT(R_FD_TELL))) return WASI_ENOTCAPABLE;
    if (f->kind != WASI_FD_FILE) return WASI_EBADF;
    return wasi_store_u64(&c->mem, wasi_arg32(args, 1), f->offset) ? WASI_ESUCCESS : WASI_EFAULT;
}

/* filestat: dev u64 @0, ino u64 @8, filetype u8 @16, nlink u64 @24, size u64 @32,
 * atim u64 @40, mtim u64 @48, ctim u64 @56. */
WASI_HANDLER(fd_filestat_get) {
    uint32_t e;
    wasi_fd *f = wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(R_FD_FILESTAT_GET), &e);
    if (!f) return e;
    uint8_t *p = wasi_mem_range(&c->mem, wasi_arg32(args, 1), 64);
    if (!p) return WASI_EFAULT;
    if (is_stdio(f)) {
        memset(p, 0, 64);
        p[16] = FT_CHARACTER_DEVICE;
        return WASI_ESUCCESS;
    }
    return wasi_fs_filestat(c->w, f->ino, p);
}

/* Hints and syncs: nothing to do for memory-held files; the descriptor must allow them. */
static uint32_t check_only(wasi_call *c, const ri_val *args, int right) {
    uint32_t e;
    return wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(right), &e) ? WASI_ESUCCESS : e;
}

WASI_HANDLER(fd_advise) {
    uint32_t e = check_only(c, args, R_FD_ADVISE);
    if (e) return e;
    return wasi_arg32(args, 3) > 5 ? WASI_EINVAL : WASI_ESUCCESS; /* advice: normal .. noreuse */
}
WASI_HANDLER(fd_datasync) { return check_only(c, args, R_FD_DATASYNC); }
WASI_HANDLER(fd_sync) { return check_only(c, args, R_FD_SYNC); }
