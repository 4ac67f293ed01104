/*
 * path_*: paths relative to a directory descriptor (a preopen or a directory path_open
 * gave) in the workspace. The descriptor is checked first (EBADF, ENOTDIR, ENOTCAPABLE
 * for a missing right), then the path bytes (EFAULT); an absolute path is ENOTCAPABLE
 * (capabilities come from descriptors only). The workspace answers with WASI errnos.
 */
#include <string.h>

#include "wasi_internal.h"
#include "workspace/wsfs.h"

#define FS(w) ((wsfs *)(w)->fs)
#define LOOKUP_SYMLINK_FOLLOW 1u
enum { O_CREAT_ = 1, O_DIRECTORY_ = 2, O_EXCL_ = 4, O_TRUNC_ = 8 };

typedef struct wpath {
    wasi_fd *dir;
    const char *p;
    uint32_t len;
} wpath;

static uint32_t get_dir(wasi_call *c, uint32_t fd, int right, wasi_fd **out) {
    wasi_fd *f = wasi_fd_get(c->w, fd);
    if (!f) return WASI_EBADF;
    if (f->kind != WASI_FD_PREOPEN && f->kind != WASI_FD_DIR) return WASI_ENOTDIR;
    if (!c->w->fs) return WASI_EBADF;
    if (right >= 0 && !(f->rights_base & WASI_RIGHT(right))) return WASI_ENOTCAPABLE;
    *out = f;
    return WASI_ESUCCESS;
}

static uint32_t get_path(wasi_call *c, uint32_t ptr, uint32_t len, const char **out) {
    const uint8_t *p = wasi_mem_range(&c->mem, ptr, len);
    if (!p) return WASI_EFAULT;
    if (len > 0 && p[0] == '/') return WASI_ENOTCAPABLE;
    if (memchr(p, 0, len)) return WASI_EILSEQ;
    /* ".." may not climb above the directory descriptor (lexically; capabilities). */
    int64_t depth = 0;
    for (uint32_t i = 0; i < len;) {
        uint32_t j = i;
        while (j < len && p[j] != '/') j++;
        if (j - i == 2 && p[i] == '.' && p[i + 1] == '.') {
            if (--depth < 0) return WASI_ENOTCAPABLE;
        } else if (j > i && !(j - i == 1 && p[i] == '.')) {
            depth++;
        }
        i = j + 1;
    }
    *out = (const char *)p;
    return WASI_ESUCCESS;
}

/* The directory descriptor (with `right`) and the path of args[fd_at], args[ptr_at], args[ptr_at + 1]. */
static uint32_t resolve(wasi_call *c, const ri_val *args, int fd_at, int ptr_at, int right, wpath *out) {
    uint32_t e = get_dir(c, wasi_arg32(args, fd_at), right, &out->dir);
    if (e) return e;
    out->len = wasi_arg32(args, ptr_at + 1);
    return get_path(c, wasi_arg32(args, ptr_at), out->len, &out->p);
}

WASI_HANDLER(path_create_directory) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 1, R_PATH_CREATE_DIRECTORY, &p);
    return e ? e : wsfs_mkdir(FS(c->w), p.dir->ino, p.p, p.len);
}

WASI_HANDLER(path_unlink_file) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 1, R_PATH_UNLINK_FILE, &p);
    return e ? e : wsfs_unlink(FS(c->w), p.dir->ino, p.p, p.len);
}

WASI_HANDLER(path_remove_directory) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 1, R_PATH_REMOVE_DIRECTORY, &p);
    return e ? e : wsfs_rmdir(FS(c->w), p.dir->ino, p.p, p.len);
}

WASI_HANDLER(path_filestat_get) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 2, R_PATH_FILESTAT_GET, &p);
    if (e) return e;
    uint8_t *out = wasi_mem_range(&c->mem, wasi_arg32(args, 4), 64);
    if (!out) return WASI_EFAULT;
    wsfs_filestat st;
    if ((e = wsfs_stat_path(FS(c->w), p.dir->ino, p.p, p.len, (wasi_arg32(args, 1) & LOOKUP_SYMLINK_FOLLOW) != 0, &st)))
        return e;
    wasi_filestat_put(out, &st);
    return WASI_ESUCCESS;
}

WASI_HANDLER(path_filestat_set_times) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 2, R_PATH_FILESTAT_SET_TIMES, &p);
    if (e) return e;
    uint32_t flags = wasi_arg32(args, 6);
    if ((e = wasi_fst_flags_check(flags))) return e;
    uint64_t ino;
    if ((e = wsfs_lookup(FS(c->w), p.dir->ino, p.p, p.len, (wasi_arg32(args, 1) & LOOKUP_SYMLINK_FOLLOW) != 0, &ino)))
        return e;
    return wsfs_set_times(FS(c->w), ino, wasi_arg64(args, 4), wasi_arg64(args, 5), flags);
}

WASI_HANDLER(path_readlink) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 1, R_PATH_READLINK, &p);
    if (e) return e;
    uint32_t cap = wasi_arg32(args, 4), used_ptr = wasi_arg32(args, 5);
    uint8_t *buf = wasi_mem_range(&c->mem, wasi_arg32(args, 3), cap);
    if (!buf || !wasi_mem_range(&c->mem, used_ptr, 4)) return WASI_EFAULT;
    size_t n = 0;
    if ((e = wsfs_readlink(FS(c->w), p.dir->ino, p.p, p.len, (char *)buf, cap, &n))) return e;
    wasi_store_u32(&c->mem, used_ptr, (uint32_t)(n < cap ? n : cap));
    return WASI_ESUCCESS;
}

WASI_HANDLER(path_symlink) {
    uint32_t tlen = wasi_arg32(args, 1);
    wasi_fd *dir;
    uint32_t e = get_dir(c, wasi_arg32(args, 2), R_PATH_SYMLINK, &dir);
    if (e) return e;
    const uint8_t *target = wasi_mem_range(&c->mem, wasi_arg32(args, 0), tlen);
    if (!target) return WASI_EFAULT;
    if (tlen > 0 && target[0] == '/') return WASI_EPERM; /* it could only point outside the capability */
    const char *path;
    uint32_t len = wasi_arg32(args, 4);
    if ((e = get_path(c, wasi_arg32(args, 3), len, &path))) return e;
    return wsfs_symlink(FS(c->w), (const char *)target, tlen, dir->ino, path, len);
}

WASI_HANDLER(path_link) {
    wpath from, to;
    uint32_t e = resolve(c, args, 0, 2, R_PATH_LINK_SOURCE, &from);
    if (e || (e = resolve(c, args, 4, 5, R_PATH_LINK_TARGET, &to))) return e;
    return wsfs_link(FS(c->w), from.dir->ino, from.p, from.len, (wasi_arg32(args, 1) & LOOKUP_SYMLINK_FOLLOW) != 0,
                     to.dir->ino, to.p, to.len);
}

WASI_HANDLER(path_rename) {
    wpath from, to;
    uint32_t e = resolve(c, args, 0, 1, R_PATH_RENAME_SOURCE, &from);
    if (e || (e = resolve(c, args, 3, 4, R_PATH_RENAME_TARGET, &to))) return e;
    return wsfs_rename(FS(c->w), from.dir->ino, from.p, from.len, to.dir->ino, to.p, to.len);
}

/* Rights a descriptor of a directory can use at all, and a regular file's. */
#define DIR_RIGHTS                                                                                                  \
    (WASI_RIGHTS_ALL & ~(WASI_RIGHT(R_FD_READ) | WASI_RIGHT(R_FD_WRITE) | WASI_RIGHT(R_FD_SEEK) |                  \
                         WASI_RIGHT(R_FD_TELL) | WASI_RIGHT(R_FD_ADVISE) | WASI_RIGHT(R_FD_ALLOCATE) |             \
                         WASI_RIGHT(R_FD_FILESTAT_SET_SIZE) | WASI_RIGHT(R_SOCK_SHUTDOWN) |                         \
                         WASI_RIGHT(R_SOCK_ACCEPT)))
uint64_t wasi_dir_rights(void) { return DIR_RIGHTS; }

#define FILE_RIGHTS                                                                                                 \
    (WASI_RIGHT(R_FD_DATASYNC) | WASI_RIGHT(R_FD_READ) | WASI_RIGHT(R_FD_SEEK) | WASI_RIGHT(R_FD_FDSTAT_SET_FLAGS) | \
     WASI_RIGHT(R_FD_SYNC) | WASI_RIGHT(R_FD_TELL) | WASI_RIGHT(R_FD_WRITE) | WASI_RIGHT(R_FD_ADVISE) |             \
     WASI_RIGHT(R_FD_ALLOCATE) | WASI_RIGHT(R_FD_FILESTAT_GET) | WASI_RIGHT(R_FD_FILESTAT_SET_SIZE) |              \
     WASI_RIGHT(R_FD_FILESTAT_SET_TIMES) | WASI_RIGHT(R_POLL_FD_READWRITE))

WASI_HANDLER(path_open) {
    wpath p;
    uint32_t e = resolve(c, args, 0, 2, R_PATH_OPEN, &p);
    if (e) return e;
    uint32_t dirflags = wasi_arg32(args, 1), oflags = wasi_arg32(args, 4), fdflags = wasi_arg32(args, 7);
    uint64_t base = wasi_arg64(args, 5), inheriting = wasi_arg64(args, 6);
    uint32_t fd_ptr = wasi_arg32(args, 8);
    if (!wasi_mem_range(&c->mem, fd_ptr, 4)) return WASI_EFAULT;
    if (oflags & ~(uint32_t)15 || fdflags & ~(uint32_t)31) return WASI_EINVAL;
    if ((oflags & O_CREAT_) && !(p.dir->rights_base & WASI_RIGHT(R_PATH_CREATE_FILE))) return WASI_ENOTCAPABLE;
    if ((oflags & O_TRUNC_) && !(p.dir->rights_base & WASI_RIGHT(R_PATH_FILESTAT_SET_SIZE))) return WASI_ENOTCAPABLE;
    uint32_t wflags = ((oflags & O_CREAT_) ? WSFS_O_CREAT : 0) | ((oflags & O_EXCL_) ? WSFS_O_EXCL : 0) |
                      ((oflags & O_TRUNC_) ? WSFS_O_TRUNC : 0) | ((oflags & O_DIRECTORY_) ? WSFS_O_DIRECTORY : 0) |
                      ((dirflags & LOOKUP_SYMLINK_FOLLOW) ? 0 : WSFS_O_NOFOLLOW);
    /* The descriptor first: a full table (EMFILE) creates nothing. */
    uint32_t fd;
    if ((e = wasi_fd_alloc(c->w, &fd))) return e;
    p.dir = wasi_fd_get(c->w, wasi_arg32(args, 0)); /* (the table may have moved) */
    uint64_t ino;
    if ((e = wsfs_open(FS(c->w), p.dir->ino, p.p, p.len, wflags, &ino))) return e;
    if (wasi_fs_filetype(c->w, ino) == FT_DIRECTORY && (base & WASI_RIGHT(R_FD_WRITE))) return WASI_EISDIR;
    if ((e = wsfs_pin(FS(c->w), ino))) return e;
    wasi_fd *f = &c->w->fds[fd];
    bool dir = wasi_fs_filetype(c->w, ino) == FT_DIRECTORY;
    memset(f, 0, sizeof *f);
    f->kind = dir ? WASI_FD_DIR : WASI_FD_FILE;
    f->ino = ino;
    f->fdflags = (uint16_t)fdflags;
    uint64_t parent_inheriting = c->w->fds[wasi_arg32(args, 0)].rights_inheriting;
    f->rights_base = base & parent_inheriting & (dir ? DIR_RIGHTS : FILE_RIGHTS);
    f->rights_inheriting = inheriting & parent_inheriting;
    wasi_store_u32(&c->mem, fd_ptr, fd);
    return WASI_ESUCCESS;
}
