/*
 * The host's access to a sandbox's workspace (include/ri/files.h): absolute paths checked
 * here, then the workspace's own operations (src/workspace/wsfs.h) from its root, and
 * their WASI errno values turned into error values that name the path.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/files.h"
#include "sandbox/files_ws.h"
#include "sandbox_internal.h"
#include "wasi/wasi.h"
#include "workspace/wsfs.h"

static const char *const kind_names[] = {
    [RI_FILE_OK] = "ok",
    [RI_FILE_NOT_FOUND] = "not_found",
    [RI_FILE_NOT_A_DIRECTORY] = "not_a_directory",
    [RI_FILE_IS_A_DIRECTORY] = "is_a_directory",
    [RI_FILE_EXISTS] = "exists",
    [RI_FILE_NOT_EMPTY] = "not_empty",
    [RI_FILE_QUOTA_EXCEEDED] = "quota_exceeded",
    [RI_FILE_BAD_PATH] = "bad_path",
    [RI_FILE_SYMLINK_LOOP] = "symlink_loop",
    [RI_FILE_NO_WORKSPACE] = "no_workspace",
    [RI_FILE_BUSY] = "busy",
    [RI_FILE_INVALID] = "invalid",
    [RI_FILE_NO_MEMORY] = "out_of_memory",
};
#define NKINDS (sizeof kind_names / sizeof kind_names[0])

const char *ri_file_errkind_name(ri_file_errkind kind) {
    return (size_t)kind < NKINDS ? kind_names[kind] : "unknown";
}

ri_file_errkind ri_file_error_kind(const ri_sandbox_error *err) {
    if (!err || err->code != RI_SANDBOX_FILE_ERROR) return RI_FILE_OK;
    for (size_t k = 1; k < NKINDS; k++)
        if (strcmp(err->trap_kind, kind_names[k]) == 0) return (ri_file_errkind)k;
    return RI_FILE_INVALID;
}

const char *ri_file_type_name(ri_file_type type) {
    switch (type) {
    case RI_FILE_TYPE_DIRECTORY: return "directory";
    case RI_FILE_TYPE_REGULAR: return "file";
    case RI_FILE_TYPE_SYMLINK: return "symlink";
    default: return "unknown";
    }
}

static bool fail(ri_sandbox_error *err, ri_file_errkind kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static bool fail(ri_sandbox_error *err, ri_file_errkind kind, const char *fmt, ...) {
    if (!err) return false;
    memset(err, 0, sizeof *err);
    err->code = RI_SANDBOX_FILE_ERROR;
    snprintf(err->trap_kind, sizeof err->trap_kind, "%s", kind_names[kind]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return false;
}

/* A workspace errno as an error value: op names the operation, path the path asked. */
static bool fail_errno(ri_sandbox_error *err, const wsfs *fs, wsfs_errno e, const char *op, const char *path) {
    switch (e) {
    case WSFS_ENOENT: return fail(err, RI_FILE_NOT_FOUND, "%s '%.300s': no such file or directory", op, path);
    case WSFS_ENOTDIR: return fail(err, RI_FILE_NOT_A_DIRECTORY, "%s '%.300s': a component is not a directory", op, path);
    case WSFS_EISDIR: return fail(err, RI_FILE_IS_A_DIRECTORY, "%s '%.300s': is a directory", op, path);
    case WSFS_EEXIST: return fail(err, RI_FILE_EXISTS, "%s '%.300s': already exists", op, path);
    case WSFS_ENOTEMPTY: return fail(err, RI_FILE_NOT_EMPTY, "%s '%.300s': the directory is not empty", op, path);
    case WSFS_EFBIG:
    case WSFS_ENOSPC: {
        wsfs_usage u;
        wsfs_get_usage(fs, &u);
        const wsfs_limits *l = wsfs_get_limits(fs);
        return fail(err, RI_FILE_QUOTA_EXCEEDED,
                    "%s '%.300s': the workspace's quota is exceeded (%llu of %llu bytes, %llu of %llu inodes in use)",
                    op, path, (unsigned long long)u.bytes, (unsigned long long)l->max_bytes,
                    (unsigned long long)u.inodes, (unsigned long long)l->max_inodes);
    }
    case WSFS_ENAMETOOLONG:
        return fail(err, RI_FILE_BAD_PATH, "%s '%.300s': the path or a name is longer than the workspace allows", op,
                    path);
    case WSFS_EILSEQ: return fail(err, RI_FILE_BAD_PATH, "%s '%.300s': the path holds a NUL byte", op, path);
    case WSFS_ELOOP: return fail(err, RI_FILE_SYMLINK_LOOP, "%s '%.300s': too many symbolic links", op, path);
    case WSFS_EBUSY: return fail(err, RI_FILE_BUSY, "%s '%.300s': the root cannot be removed or renamed", op, path);
    case WSFS_ENOMEM: return fail(err, RI_FILE_NO_MEMORY, "%s '%.300s': out of memory", op, path);
    case WSFS_EINVAL:
        return fail(err, RI_FILE_INVALID, "%s '%.300s': invalid (a directory into itself, or the root)", op, path);
    default:
        return fail(err, RI_FILE_INVALID, "%s '%.300s': %s", op, path, wsfs_errno_name(e));
    }
}

/* The sandbox's workspace if the host may use it now. */
static wsfs *workspace(ri_sandbox *sb, const char *op, ri_sandbox_error *err) {
    if (!sb) {
        fail(err, RI_FILE_INVALID, "%s: the sandbox is NULL", op);
        return NULL;
    }
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) {
        sb_error_set(err, RI_SANDBOX_INSTANCE_DESTROYED, "Cannot access the files of destroyed instance: %s", sb->id);
        return NULL;
    }
    if (!sb->wasi) {
        fail(err, RI_FILE_NO_WORKSPACE, "%s: the sandbox has no workspace (its configuration does not enable WASI)", op);
        return NULL;
    }
    if (sb->run) {
        fail(err, RI_FILE_BUSY, "%s: a call is running in the sandbox; its files can be used between calls", op);
        return NULL;
    }
    return ri_wasi_workspace(sb->wasi);
}

/* An absolute path within the limits, without "." or ".." components. */
static bool check_path(const wsfs *fs, const char *op, const char *path, ri_sandbox_error *err) {
    if (!path) return fail(err, RI_FILE_BAD_PATH, "%s: the path is NULL", op);
    if (path[0] != '/') return fail(err, RI_FILE_BAD_PATH, "%s '%.300s': not an absolute path (it must start with '/')", op, path);
    const wsfs_limits *l = wsfs_get_limits(fs);
    size_t len = strlen(path);
    if (len > l->max_path)
        return fail(err, RI_FILE_BAD_PATH, "%s '%.100s...': %zu bytes, longer than the workspace's limit of %u", op,
                    path, len, (unsigned)l->max_path);
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        const char *s = p;
        while (*p && *p != '/') p++;
        size_t n = (size_t)(p - s);
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return fail(err, RI_FILE_BAD_PATH, "%s '%.300s': '.' and '..' components are not allowed", op, path);
        if (n > l->max_name)
            return fail(err, RI_FILE_BAD_PATH, "%s '%.300s': a name of %zu bytes, longer than the limit of %u", op, path,
                        n, (unsigned)l->max_name);
    }
    return true;
}

/* The last component of path: [*name, *name + *name_len), and the length of the part
 * before it (the parent's path; 0 for a name right under the root). No name: *name_len 0. */
static void split_last(const char *path, size_t *parent_len, const char **name, size_t *name_len) {
    size_t end = strlen(path);
    while (end > 0 && path[end - 1] == '/') end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/') start--;
    *name = path + start;
    *name_len = end - start;
    *parent_len = start;
}

/* mkdir -p of path[0, len): every component made unless it is a directory already. */
static wsfs_errno make_parents(wsfs *fs, const char *path, size_t len, bool exclusive_last) {
    size_t i = 0;
    while (i < len) {
        while (i < len && path[i] == '/') i++;
        if (i == len) break;
        while (i < len && path[i] != '/') i++;
        wsfs_errno e = wsfs_mkdir(fs, WSFS_ROOT_INO, path, i);
        if (e == WSFS_EEXIST) {
            bool last = i == len || strspn(path + i, "/") == len - i;
            if (exclusive_last && last) return WSFS_EEXIST;
            wsfs_filestat st;
            e = wsfs_stat_path(fs, WSFS_ROOT_INO, path, i, true, &st);
            if (e == WSFS_ESUCCESS && st.filetype != WSFS_FILETYPE_DIRECTORY) e = WSFS_ENOTDIR;
        }
        if (e != WSFS_ESUCCESS) return e;
    }
    return WSFS_ESUCCESS;
}

static wsfs_errno write_all(wsfs *fs, uint64_t ino, const uint8_t *data, size_t len) {
    size_t done = 0;
    while (done < len) {
        size_t n = 0;
        wsfs_errno e = wsfs_pwrite(fs, ino, data + done, len - done, done, &n);
        if (e != WSFS_ESUCCESS) return e;
        if (n == 0) return WSFS_ENOSPC;
        done += n;
    }
    return WSFS_ESUCCESS;
}

bool files_put(wsfs *fs, const char *path, const uint8_t *data, size_t len, uint32_t flags, ri_sandbox_error *err) {
    static const char op[] = "put";
    if (!check_path(fs, op, path, err)) return false;
    if (len && !data) return fail(err, RI_FILE_INVALID, "put '%.300s': %zu bytes from a NULL pointer", path, len);
    size_t parent_len, name_len;
    const char *name;
    split_last(path, &parent_len, &name, &name_len);
    if (name_len == 0) return fail(err, RI_FILE_IS_A_DIRECTORY, "put '%.300s': the root is a directory", path);
    if (name + name_len != path + strlen(path))
        return fail(err, RI_FILE_IS_A_DIRECTORY, "put '%.300s': a path ending with '/' names a directory", path);
    wsfs_errno e;
    if ((flags & RI_FILE_PARENTS) && (e = make_parents(fs, path, parent_len, false)) != WSFS_ESUCCESS)
        return fail_errno(err, fs, e, op, path);
    uint64_t dir = WSFS_ROOT_INO;
    if (parent_len > 1 && (e = wsfs_lookup(fs, WSFS_ROOT_INO, path, parent_len, true, &dir)) != WSFS_ESUCCESS)
        return fail_errno(err, fs, e, op, path);
    wsfs_filestat st;
    if ((e = wsfs_stat(fs, dir, &st)) != WSFS_ESUCCESS) return fail_errno(err, fs, e, op, path);
    if (st.filetype != WSFS_FILETYPE_DIRECTORY) return fail_errno(err, fs, WSFS_ENOTDIR, op, path);
    e = wsfs_stat_path(fs, dir, name, name_len, false, &st);
    if (e == WSFS_ESUCCESS && (flags & RI_FILE_EXCLUSIVE)) return fail_errno(err, fs, WSFS_EEXIST, op, path);
    if (e == WSFS_ESUCCESS && st.filetype == WSFS_FILETYPE_DIRECTORY) return fail_errno(err, fs, WSFS_EISDIR, op, path);
    if (e != WSFS_ESUCCESS && e != WSFS_ENOENT) return fail_errno(err, fs, e, op, path);

    wsfs_usage u; /* a file that cannot fit is refused before any byte is written */
    wsfs_get_usage(fs, &u);
    uint64_t quota = wsfs_get_limits(fs)->max_bytes, used = u.bytes < quota ? u.bytes : quota;
    if ((uint64_t)len > quota - used) return fail_errno(err, fs, WSFS_ENOSPC, op, path);
    /* The bytes go to a fresh name first, so that the old file stays whole until the rename. */
    char tmp[40];
    uint64_t ino = 0;
    for (unsigned i = 0;; i++) {
        snprintf(tmp, sizeof tmp, ".ri-put-%u", i);
        e = wsfs_open(fs, dir, tmp, strlen(tmp), WSFS_O_CREAT | WSFS_O_EXCL, &ino);
        if (e != WSFS_EEXIST) break;
    }
    if (e != WSFS_ESUCCESS) return fail_errno(err, fs, e, op, path);
    e = write_all(fs, ino, data, len);
    if (e == WSFS_ESUCCESS) e = wsfs_rename(fs, dir, tmp, strlen(tmp), dir, name, name_len);
    if (e != WSFS_ESUCCESS) {
        (void)wsfs_unlink(fs, dir, tmp, strlen(tmp)); /* (a fresh file: removing it cannot fail but for ENOMEM) */
        return fail_errno(err, fs, e, op, path);
    }
    return true;
}

bool files_get(const wsfs *fs, const char *path, uint8_t **out, size_t *len, ri_sandbox_error *err) {
    static const char op[] = "get";
    if (out) *out = NULL;
    if (len) *len = 0;
    if (!check_path(fs, op, path, err)) return false;
    if (!out || !len) return fail(err, RI_FILE_INVALID, "get '%.300s': out or len is NULL", path);
    uint64_t ino;
    wsfs_filestat st;
    wsfs_errno e = wsfs_lookup(fs, WSFS_ROOT_INO, path, strlen(path), true, &ino);
    if (e == WSFS_ESUCCESS) e = wsfs_stat(fs, ino, &st);
    if (e != WSFS_ESUCCESS) return fail_errno(err, fs, e, op, path);
    if (st.filetype == WSFS_FILETYPE_DIRECTORY) return fail_errno(err, fs, WSFS_EISDIR, op, path);
    if (st.size > SIZE_MAX - 1) return fail(err, RI_FILE_NO_MEMORY, "get '%.300s': too large for this host", path);
    if (st.size == 0) return true;
    uint8_t *buf = malloc((size_t)st.size);
    if (!buf) return fail_errno(err, fs, WSFS_ENOMEM, op, path);
    size_t done = 0;
    while (done < st.size) {
        size_t n = 0;
        e = wsfs_pread(fs, ino, buf + done, (size_t)st.size - done, done, &n);
        if (e != WSFS_ESUCCESS || n == 0) break;
        done += n;
    }
    if (done != st.size) {
        free(buf);
        return fail_errno(err, fs, e != WSFS_ESUCCESS ? e : WSFS_EINVAL, op, path);
    }
    *out = buf;
    *len = done;
    return true;
}

static void stat_out(const wsfs_filestat *s, ri_file_stat *st) {
    memset(st, 0, sizeof *st);
    st->type = (ri_file_type)s->filetype;
    st->size = s->filetype == WSFS_FILETYPE_DIRECTORY ? 0 : s->size;
    st->ino = s->ino;
    st->nlink = s->nlink;
    st->mtime_ns = s->mtim;
    st->ctime_ns = s->ctim;
}

bool files_stat(const wsfs *fs, const char *path, ri_file_stat *st, ri_sandbox_error *err) {
    static const char op[] = "stat";
    if (!check_path(fs, op, path, err)) return false;
    if (!st) return fail(err, RI_FILE_INVALID, "stat '%.300s': st is NULL", path);
    wsfs_filestat s;
    wsfs_errno e = wsfs_stat_path(fs, WSFS_ROOT_INO, path, strlen(path), false, &s);
    if (e != WSFS_ESUCCESS) return fail_errno(err, fs, e, op, path);
    stat_out(&s, st);
    return true;
}

void ri_file_list_free(ri_file_entry *list, size_t n) {
    if (!list) return;
    for (size_t i = 0; i < n; i++) free(list[i].name);
    free(list);
}

static bool is_dot(const wsfs_dirent *d) {
    return (d->namelen == 1 && d->name[0] == '.') || (d->namelen == 2 && d->name[0] == '.' && d->name[1] == '.');
}

bool files_list(const wsfs *fs, const char *path, ri_file_entry **out, size_t *n, ri_sandbox_error *err) {
    static const char op[] = "list";
    if (out) *out = NULL;
    if (n) *n = 0;
    if (!check_path(fs, op, path, err)) return false;
    if (!out || !n) return fail(err, RI_FILE_INVALID, "list '%.300s': out or n is NULL", path);
    uint64_t dir;
    wsfs_filestat st;
    wsfs_errno e = wsfs_lookup(fs, WSFS_ROOT_INO, path, strlen(path), true, &dir);
    if (e == WSFS_ESUCCESS) e = wsfs_stat(fs, dir, &st);
    if (e == WSFS_ESUCCESS && st.filetype != WSFS_FILETYPE_DIRECTORY) e = WSFS_ENOTDIR;
    if (e != WSFS_ESUCCESS) return fail_errno(err, fs, e, op, path);
    ri_file_entry *list = NULL;
    size_t count = 0, cap = 0;
    uint64_t cookie = 0;
    for (;;) {
        wsfs_dirent batch[64];
        size_t got = 0;
        if ((e = wsfs_readdir(fs, dir, cookie, batch, 64, &got)) != WSFS_ESUCCESS || got == 0) break;
        for (size_t i = 0; i < got && e == WSFS_ESUCCESS; i++) {
            cookie = batch[i].next;
            if (is_dot(&batch[i])) continue;
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                ri_file_entry *g = realloc(list, ncap * sizeof *g);
                if (!g) {
                    e = WSFS_ENOMEM;
                    break;
                }
                list = g;
                cap = ncap;
            }
            ri_file_entry *ent = &list[count];
            memset(ent, 0, sizeof *ent);
            ent->name = malloc((size_t)batch[i].namelen + 1);
            if (!ent->name) {
                e = WSFS_ENOMEM;
                break;
            }
            memcpy(ent->name, batch[i].name, batch[i].namelen);
            ent->name[batch[i].namelen] = '\0';
            count++;
            if ((e = wsfs_stat(fs, batch[i].ino, &st)) == WSFS_ESUCCESS) {
                ent->type = (ri_file_type)st.filetype;
                ent->size = st.filetype == WSFS_FILETYPE_DIRECTORY ? 0 : st.size;
            }
        }
        if (e != WSFS_ESUCCESS || got < 64) break;
    }
    if (e != WSFS_ESUCCESS) {
        ri_file_list_free(list, count);
        return fail_errno(err, fs, e, op, path);
    }
    *out = list;
    *n = count;
    return true;
}

bool files_mkdir(wsfs *fs, const char *path, uint32_t flags, ri_sandbox_error *err) {
    static const char op[] = "mkdir";
    if (!check_path(fs, op, path, err)) return false;
    wsfs_errno e = (flags & RI_FILE_PARENTS) ? make_parents(fs, path, strlen(path), (flags & RI_FILE_EXCLUSIVE) != 0)
                                             : wsfs_mkdir(fs, WSFS_ROOT_INO, path, strlen(path));
    return e == WSFS_ESUCCESS ? true : fail_errno(err, fs, e, op, path);
}

/* Empties directory dir, depth first, one entry at a time (each removal moves the others'
 * positions, so the listing restarts after ".." each time). */
static wsfs_errno empty_tree(wsfs *fs, uint64_t dir) {
    for (;;) {
        wsfs_dirent d[3];
        size_t got = 0;
        wsfs_errno e = wsfs_readdir(fs, dir, 0, d, 3, &got);
        if (e != WSFS_ESUCCESS) return e;
        const wsfs_dirent *ent = NULL;
        for (size_t i = 0; i < got && !ent; i++)
            if (!is_dot(&d[i])) ent = &d[i];
        if (!ent) return WSFS_ESUCCESS;
        char *name = malloc(ent->namelen ? ent->namelen : 1);
        if (!name) return WSFS_ENOMEM;
        size_t namelen = ent->namelen;
        memcpy(name, ent->name, namelen);
        if (ent->filetype == WSFS_FILETYPE_DIRECTORY) {
            e = empty_tree(fs, ent->ino);
            if (e == WSFS_ESUCCESS) e = wsfs_rmdir(fs, dir, name, namelen);
        } else {
            e = wsfs_unlink(fs, dir, name, namelen);
        }
        free(name);
        if (e != WSFS_ESUCCESS) return e;
    }
}

bool files_remove(wsfs *fs, const char *path, bool recursive, ri_sandbox_error *err) {
    static const char op[] = "remove";
    if (!check_path(fs, op, path, err)) return false;
    size_t len = strlen(path);
    wsfs_filestat st;
    wsfs_errno e = wsfs_stat_path(fs, WSFS_ROOT_INO, path, len, false, &st);
    if (e != WSFS_ESUCCESS) return fail_errno(err, fs, e, op, path);
    if (st.filetype != WSFS_FILETYPE_DIRECTORY) {
        e = wsfs_unlink(fs, WSFS_ROOT_INO, path, len);
    } else if (st.ino == WSFS_ROOT_INO) {
        e = recursive ? empty_tree(fs, WSFS_ROOT_INO) : WSFS_EBUSY;
    } else {
        e = recursive ? empty_tree(fs, st.ino) : WSFS_ESUCCESS;
        if (e == WSFS_ESUCCESS) e = wsfs_rmdir(fs, WSFS_ROOT_INO, path, len);
    }
    return e == WSFS_ESUCCESS ? true : fail_errno(err, fs, e, op, path);
}

bool files_rename(wsfs *fs, const char *from, const char *to, ri_sandbox_error *err) {
    static const char op[] = "rename";
    if (!check_path(fs, op, from, err) || !check_path(fs, op, to, err)) return false;
    wsfs_errno e = wsfs_rename(fs, WSFS_ROOT_INO, from, strlen(from), WSFS_ROOT_INO, to, strlen(to));
    if (e == WSFS_ESUCCESS) return true;
    /* Name the path the error is about: a missing source is the usual one. */
    wsfs_filestat st;
    bool from_missing = e == WSFS_ENOENT && wsfs_stat_path(fs, WSFS_ROOT_INO, from, strlen(from), false, &st) != WSFS_ESUCCESS;
    return fail_errno(err, fs, e, op, from_missing ? from : to);
}

/* ---- the sandbox's workspace ----------------------------------------------------------- */

bool ri_sandbox_file_put(ri_sandbox *sb, const char *path, const uint8_t *data, size_t len, uint32_t flags,
                         ri_sandbox_error *err) {
    wsfs *fs = workspace(sb, "put", err);
    return fs && files_put(fs, path, data, len, flags, err);
}

bool ri_sandbox_file_get(ri_sandbox *sb, const char *path, uint8_t **out, size_t *len, ri_sandbox_error *err) {
    if (out) *out = NULL;
    if (len) *len = 0;
    wsfs *fs = workspace(sb, "get", err);
    return fs && files_get(fs, path, out, len, err);
}

bool ri_sandbox_file_stat(ri_sandbox *sb, const char *path, ri_file_stat *st, ri_sandbox_error *err) {
    wsfs *fs = workspace(sb, "stat", err);
    return fs && files_stat(fs, path, st, err);
}

bool ri_sandbox_file_list(ri_sandbox *sb, const char *path, ri_file_entry **out, size_t *n, ri_sandbox_error *err) {
    if (out) *out = NULL;
    if (n) *n = 0;
    wsfs *fs = workspace(sb, "list", err);
    return fs && files_list(fs, path, out, n, err);
}

bool ri_sandbox_file_mkdir(ri_sandbox *sb, const char *path, uint32_t flags, ri_sandbox_error *err) {
    wsfs *fs = workspace(sb, "mkdir", err);
    return fs && files_mkdir(fs, path, flags, err);
}

bool ri_sandbox_file_remove(ri_sandbox *sb, const char *path, bool recursive, ri_sandbox_error *err) {
    wsfs *fs = workspace(sb, "remove", err);
    return fs && files_remove(fs, path, recursive, err);
}

bool ri_sandbox_file_rename(ri_sandbox *sb, const char *from, const char *to, ri_sandbox_error *err) {
    wsfs *fs = workspace(sb, "rename", err);
    return fs && files_rename(fs, from, to, err);
}
