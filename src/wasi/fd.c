/*
 * The descriptor table: 0, 1, 2 are the standard streams; the workspace's preopened
 * directories follow; path_open adds files and directories at the lowest free number.
 * Rights only shrink (fd_fdstat_set_rights); a descriptor's kind decides what it can do.
 */
#include <stdlib.h>
#include <string.h>

#include "wasi_internal.h"

wasi_fd *wasi_fd_get(ri_wasi *w, uint32_t fd) {
    if (fd >= w->nfds || w->fds[fd].kind == WASI_FD_FREE) return NULL;
    return &w->fds[fd];
}

wasi_fd *wasi_fd_check(ri_wasi *w, uint32_t fd, uint64_t rights, uint32_t *e) {
    wasi_fd *f = wasi_fd_get(w, fd);
    if (!f) {
        *e = WASI_EBADF;
        return NULL;
    }
    if ((f->rights_base & rights) != rights) {
        *e = WASI_ENOTCAPABLE;
        return NULL;
    }
    *e = WASI_ESUCCESS;
    return f;
}

uint32_t wasi_fd_alloc(ri_wasi *w, uint32_t *fd) {
    for (uint32_t i = 0; i < w->nfds; i++) {
        if (w->fds[i].kind == WASI_FD_FREE) {
            *fd = i;
            return WASI_ESUCCESS;
        }
    }
    if (w->nfds >= WASI_MAX_FDS) return WASI_EMFILE; /* the process's limit, not the host's memory */
    wasi_fd *grown = realloc(w->fds, (size_t)(w->nfds + 1) * sizeof *grown);
    if (!grown) return WASI_ENOMEM;
    w->fds = grown;
    memset(&w->fds[w->nfds], 0, sizeof w->fds[w->nfds]);
    *fd = w->nfds++;
    return WASI_ESUCCESS;
}

void wasi_fd_release(ri_wasi *w, wasi_fd *f) {
    wasi_fs_unpin(w, f);
    free(f->name);
    memset(f, 0, sizeof *f);
}

WASI_HANDLER(fd_close) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f) return WASI_EBADF;
    wasi_fd_release(c->w, f);
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_renumber) {
    uint32_t from = wasi_arg32(args, 0), to = wasi_arg32(args, 1);
    wasi_fd *f = wasi_fd_get(c->w, from), *t = wasi_fd_get(c->w, to);
    if (!f || !t) return WASI_EBADF;
    if (from == to) return WASI_ESUCCESS;
    wasi_fd_release(c->w, t);
    *t = *f;
    memset(f, 0, sizeof *f); /* moved, not released: the inode stays pinned once */
    return WASI_ESUCCESS;
}

static uint8_t filetype_of(ri_wasi *w, const wasi_fd *f) {
    switch (f->kind) {
    /* A terminal only when the embedder says so (isatty() is true for a character device);
     * else a stream of unknown kind, as a pipe is (programs then print no colours and do not
     * prompt as for a person). */
    case WASI_FD_STDIN: return (w->terminals & RI_WASI_TERMINAL_STDIN) ? FT_CHARACTER_DEVICE : FT_UNKNOWN;
    case WASI_FD_STDOUT: return (w->terminals & RI_WASI_TERMINAL_STDOUT) ? FT_CHARACTER_DEVICE : FT_UNKNOWN;
    case WASI_FD_STDERR: return (w->terminals & RI_WASI_TERMINAL_STDERR) ? FT_CHARACTER_DEVICE : FT_UNKNOWN;
    case WASI_FD_PREOPEN:
    case WASI_FD_DIR: return FT_DIRECTORY;
    case WASI_FD_FILE: return wasi_fs_filetype(w, f->ino);
    case WASI_FD_FREE: break;
    }
    return FT_UNKNOWN;
}

/* fdstat: fs_filetype u8 @0, fs_flags u16 @2, fs_rights_base u64 @8, fs_rights_inheriting u64 @16. */
WASI_HANDLER(fd_fdstat_get) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f) return WASI_EBADF;
    uint8_t *p = wasi_mem_range(&c->mem, wasi_arg32(args, 1), 24);
    if (!p) return WASI_EFAULT;
    memset(p, 0, 24);
    p[0] = filetype_of(c->w, f);
    ri_le_put16(p + 2, f->fdflags);
    ri_le_put64(p + 8, f->rights_base);
    ri_le_put64(p + 16, f->rights_inheriting);
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_fdstat_set_flags) {
    uint32_t e;
    wasi_fd *f = wasi_fd_check(c->w, wasi_arg32(args, 0), WASI_RIGHT(R_FD_FDSTAT_SET_FLAGS), &e);
    if (!f) return e;
    uint32_t flags = wasi_arg32(args, 1);
    if (flags & ~(uint32_t)(FDFL_APPEND | FDFL_DSYNC | FDFL_NONBLOCK | FDFL_RSYNC | FDFL_SYNC)) return WASI_EINVAL;
    f->fdflags = (uint16_t)flags;
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_fdstat_set_rights) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f) return WASI_EBADF;
    uint64_t base = wasi_arg64(args, 1), inheriting = wasi_arg64(args, 2);
    if ((base & ~f->rights_base) || (inheriting & ~f->rights_inheriting)) return WASI_ENOTCAPABLE;
    f->rights_base = base;
    f->rights_inheriting = inheriting;
    return WASI_ESUCCESS;
}

/* prestat: tag u8 @0 (0: dir), pr_name_len u32 @4. */
WASI_HANDLER(fd_prestat_get) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f || f->kind != WASI_FD_PREOPEN) return WASI_EBADF;
    uint8_t *p = wasi_mem_range(&c->mem, wasi_arg32(args, 1), 8);
    if (!p) return WASI_EFAULT;
    memset(p, 0, 8);
    ri_le_put32(p + 4, (uint32_t)strlen(f->name));
    return WASI_ESUCCESS;
}

WASI_HANDLER(fd_prestat_dir_name) {
    wasi_fd *f = wasi_fd_get(c->w, wasi_arg32(args, 0));
    if (!f || f->kind != WASI_FD_PREOPEN) return WASI_EBADF;
    uint32_t len = wasi_arg32(args, 2);
    uint8_t *p = wasi_mem_range(&c->mem, wasi_arg32(args, 1), len);
    if (!p) return WASI_EFAULT;
    size_t n = strlen(f->name);
    if (len < n) return WASI_ENAMETOOLONG;
    memcpy(p, f->name, n);
    return WASI_ESUCCESS;
}

bool wasi_fd_preopen_root(ri_wasi *w) {
    uint32_t fd;
    if (wasi_fd_alloc(w, &fd)) return false;
    char *name = strdup("/");
    if (!name) return false;
    w->fds[fd] = (wasi_fd){.kind = WASI_FD_PREOPEN, .rights_base = wasi_dir_rights(), .rights_inheriting = WASI_RIGHTS_ALL,
                           .ino = 1, .name = name};
    return true;
}
