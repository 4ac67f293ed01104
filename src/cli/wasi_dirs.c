/* --dir HOST[::GUEST] and --dir-writeback: copying between the host and the workspace
 * (see wasi_dirs.h). Host entries are handled with lstat, so a host symlink is copied as
 * a symlink and never followed (except HOST itself). */
#include "cli/wasi_dirs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/files.h"
#include "cli/output.h"
#include "workspace/wsfs.h"

#define CHUNK 65536u

/* ---- paths ------------------------------------------------------------------------- */

char *ri_path_join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] == '/';
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    if (!slash) p[a++] = '/';
    memcpy(p + a, name, b + 1);
    return p;
}

/* "/" followed by path's components, "." and empty ones dropped; false for "..". */
static bool normalize(const char *path, char *out, size_t cap) {
    size_t n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        const char *e = p;
        while (*e && *e != '/') e++;
        size_t len = (size_t)(e - p);
        if (len == 2 && p[0] == '.' && p[1] == '.') return false;
        if (len > 0 && !(len == 1 && p[0] == '.')) {
            if (n + len + 2 > cap) return false;
            out[n++] = '/';
            memcpy(out + n, p, len);
            n += len;
        }
        p = e;
    }
    if (n == 0) out[n++] = '/';
    out[n] = '\0';
    return true;
}

int ri_wasi_dir_parse(const char *cmd, const char *spec, ri_wasi_dir *out) {
    const char *sep = strstr(spec, "::");
    size_t hlen = sep ? (size_t)(sep - spec) : strlen(spec);
    if (hlen == 0) return ri_usage(cmd, "--dir '%s': no HOST directory (HOST[::GUEST])", spec);
    char *host = strndup(spec, hlen);
    char guest[4096];
    if (!host) return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    const char *g = sep ? sep + 2 : host;
    if (sep && g[0] != '/') {
        free(host);
        return ri_usage(cmd, "--dir '%s': GUEST must be an absolute path in the workspace (e.g. ::/data)", spec);
    }
    if (!normalize(g, guest, sizeof guest)) {
        free(host);
        return ri_usage(cmd, "--dir '%s': the workspace path may not contain '..' (give one with HOST::/GUEST)", spec);
    }
    out->guest = strdup(guest);
    if (!out->guest) {
        free(host);
        return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    }
    out->host = host;
    return RI_EXIT_OK;
}

/* Host directory entries in byte order (so the workspace's inode numbers do not depend on
 * the host's directory order); "." and ".." left out. */
static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }
static int no_dots(const struct dirent *e) { return strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0; }

/* ---- copy in ----------------------------------------------------------------------- */

static int ws_fail(const char *cmd, const ri_wasi_dir *d, const char *what, const char *path, wsfs_errno e) {
    ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: cannot %s '%s' in the workspace: %s", d->host, what, path, wsfs_errno_name(e));
    if (e == WSFS_ENOSPC) ri_fail(0, cmd, "the workspace holds at most %llu MiB and %u files",
                                  (unsigned long long)(WSFS_DEFAULT_MAX_BYTES >> 20), WSFS_DEFAULT_MAX_INODES);
    return RI_EXIT_INPUT;
}

/* mkdir -p in the workspace (path normalized, absolute). */
static int ws_mkdirs(const char *cmd, wsfs *fs, const ri_wasi_dir *d, const char *path) {
    size_t len = strlen(path);
    for (size_t i = 1; i <= len; i++) {
        if (i < len && path[i] != '/') continue;
        wsfs_errno e = wsfs_mkdir(fs, WSFS_ROOT_INO, path, i);
        wsfs_filestat st;
        if (e == WSFS_EEXIST && wsfs_stat_path(fs, WSFS_ROOT_INO, path, i, true, &st) == WSFS_ESUCCESS &&
            st.filetype == WSFS_FILETYPE_DIRECTORY)
            e = WSFS_ESUCCESS;
        if (e != WSFS_ESUCCESS) return ws_fail(cmd, d, "create the directory", path, e);
    }
    return RI_EXIT_OK;
}

/* Removes the file or symlink at guest so that another entry can take its name (`ri file
 * add` over an earlier version); false when there is none, or a directory. */
static bool replace_entry(wsfs *fs, const char *guest) {
    wsfs_filestat st;
    return wsfs_stat_path(fs, WSFS_ROOT_INO, guest, strlen(guest), false, &st) == WSFS_ESUCCESS &&
           st.filetype != WSFS_FILETYPE_DIRECTORY && wsfs_unlink(fs, WSFS_ROOT_INO, guest, strlen(guest)) == WSFS_ESUCCESS;
}

static int copy_file_in(const char *cmd, wsfs *fs, const ri_wasi_dir *d, const char *host, const char *guest) {
    int fd = open(host, O_RDONLY | O_NOFOLLOW);
    if (fd < 0) return ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: cannot read '%s': %s", d->host, host, strerror(errno));
    uint64_t ino;
    uint32_t oflags = WSFS_O_CREAT | WSFS_O_TRUNC | WSFS_O_NOFOLLOW;
    wsfs_errno e = wsfs_open(fs, WSFS_ROOT_INO, guest, strlen(guest), oflags, &ino);
    if (e == WSFS_ELOOP && replace_entry(fs, guest)) /* a symlink there already: replaced by the file */
        e = wsfs_open(fs, WSFS_ROOT_INO, guest, strlen(guest), oflags, &ino);
    if (e != WSFS_ESUCCESS) {
        close(fd);
        return ws_fail(cmd, d, "create", guest, e);
    }
    uint8_t *buf = malloc(CHUNK);
    int rc = buf ? RI_EXIT_OK : ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    uint64_t off = 0;
    while (rc == RI_EXIT_OK) {
        ssize_t n = read(fd, buf, CHUNK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) rc = ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: cannot read '%s': %s", d->host, host, strerror(errno));
        if (n <= 0) break;
        size_t done;
        e = wsfs_pwrite(fs, ino, buf, (size_t)n, off, &done);
        if (e != WSFS_ESUCCESS) rc = ws_fail(cmd, d, "write", guest, e);
        off += (uint64_t)n;
    }
    free(buf);
    close(fd);
    return rc;
}

static int copy_symlink_in(const char *cmd, wsfs *fs, const ri_wasi_dir *d, const char *host, const char *guest,
                           const struct stat *st) {
    size_t cap = (size_t)st->st_size + 2;
    char *target = malloc(cap);
    if (!target) return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    ssize_t n = readlink(host, target, cap);
    if (n < 0 || (size_t)n >= cap) {
        free(target);
        return ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: cannot read the symlink '%s'", d->host, host);
    }
    wsfs_errno e = wsfs_symlink(fs, target, (size_t)n, WSFS_ROOT_INO, guest, strlen(guest));
    if (e == WSFS_EEXIST && replace_entry(fs, guest)) /* a file or symlink there already: replaced */
        e = wsfs_symlink(fs, target, (size_t)n, WSFS_ROOT_INO, guest, strlen(guest));
    free(target);
    return e == WSFS_ESUCCESS ? RI_EXIT_OK : ws_fail(cmd, d, "create the symlink", guest, e);
}

static int copy_tree_in(const char *cmd, wsfs *fs, const ri_wasi_dir *d, const char *host, const char *guest) {
    struct dirent **list;
    int n = scandir(host, &list, no_dots, by_name);
    if (n < 0) return ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: cannot list '%s': %s", d->host, host, strerror(errno));
    int rc = RI_EXIT_OK;
    for (int i = 0; i < n; i++) {
        char *h = rc == RI_EXIT_OK ? ri_path_join(host, list[i]->d_name) : NULL;
        char *g = h ? ri_path_join(guest, list[i]->d_name) : NULL;
        struct stat st;
        if (rc != RI_EXIT_OK) {
        } else if (!h || !g) {
            rc = ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
        } else if (lstat(h, &st) != 0) {
            rc = ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: cannot read '%s': %s", d->host, h, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            wsfs_errno e = wsfs_mkdir(fs, WSFS_ROOT_INO, g, strlen(g));
            wsfs_filestat gs; /* a directory there already (`ri file add` into a tree): merged */
            if (e == WSFS_EEXIST && wsfs_stat_path(fs, WSFS_ROOT_INO, g, strlen(g), false, &gs) == WSFS_ESUCCESS &&
                gs.filetype == WSFS_FILETYPE_DIRECTORY)
                e = WSFS_ESUCCESS;
            rc = e == WSFS_ESUCCESS ? copy_tree_in(cmd, fs, d, h, g) : ws_fail(cmd, d, "create the directory", g, e);
        } else if (S_ISREG(st.st_mode)) {
            rc = copy_file_in(cmd, fs, d, h, g);
        } else if (S_ISLNK(st.st_mode)) {
            rc = copy_symlink_in(cmd, fs, d, h, g, &st);
        } else {
            rc = ri_fail(RI_EXIT_INPUT, cmd,
                         "--dir %s: '%s' is a special file (device, FIFO or socket): only regular files, "
                         "directories and symlinks are copied into the workspace", d->host, h);
        }
        free(h);
        free(g);
        free(list[i]);
    }
    free(list);
    return rc;
}

int ri_wasi_dir_copy_in(const char *cmd, wsfs *fs, const ri_wasi_dir *d) {
    struct stat st;
    if (stat(d->host, &st) != 0)
        return ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: %s", d->host, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return ri_fail(RI_EXIT_INPUT, cmd, "--dir %s: not a directory", d->host);
    int rc = ws_mkdirs(cmd, fs, d, d->guest);
    return rc == RI_EXIT_OK ? copy_tree_in(cmd, fs, d, d->host, d->guest) : rc;
}

/* ---- write back -------------------------------------------------------------------- */

static int host_fail(const char *cmd, const char *what, const char *path) {
    return ri_fail(RI_EXIT_INPUT, cmd, "--dir-writeback: cannot %s '%s': %s", what, path, strerror(errno));
}

/* rm -r without following symlinks. */
static int remove_host(const char *cmd, const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? RI_EXIT_OK : host_fail(cmd, "inspect", path);
    if (!S_ISDIR(st.st_mode)) return unlink(path) == 0 ? RI_EXIT_OK : host_fail(cmd, "remove", path);
    struct dirent **list;
    int n = scandir(path, &list, no_dots, by_name);
    if (n < 0) return host_fail(cmd, "list", path);
    int rc = RI_EXIT_OK;
    for (int i = 0; i < n; i++) {
        char *p = rc == RI_EXIT_OK ? ri_path_join(path, list[i]->d_name) : NULL;
        if (rc == RI_EXIT_OK) rc = p ? remove_host(cmd, p) : ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
        free(p);
        free(list[i]);
    }
    free(list);
    if (rc == RI_EXIT_OK && rmdir(path) != 0) rc = host_fail(cmd, "remove", path);
    return rc;
}

static int sync_dir_of(const char *path) {
    char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    free(dir);
    if (fd < 0) return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

static int file_back(const char *cmd, const wsfs *fs, const char *guest, const char *host, const struct stat *hst,
                     bool exists) {
    wsfs_filestat ws;
    uint64_t ino;
    wsfs_errno e = wsfs_lookup(fs, WSFS_ROOT_INO, guest, strlen(guest), false, &ino);
    if (e == WSFS_ESUCCESS) e = wsfs_stat(fs, ino, &ws);
    if (e == WSFS_ESUCCESS && ws.size > SIZE_MAX - 1) e = WSFS_EFBIG;
    uint8_t *data = e == WSFS_ESUCCESS ? malloc((size_t)ws.size + 1) : NULL;
    size_t n = 0;
    if (e == WSFS_ESUCCESS && !data) return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    if (e == WSFS_ESUCCESS) e = wsfs_pread(fs, ino, data, (size_t)ws.size, 0, &n);
    if (e != WSFS_ESUCCESS) {
        free(data);
        return ri_fail(RI_EXIT_INPUT, cmd, "--dir-writeback: cannot read '%s' in the workspace: %s", guest,
                       wsfs_errno_name(e));
    }
    int rc = RI_EXIT_OK;
    bool same = false;
    if (exists && S_ISREG(hst->st_mode) && (uint64_t)hst->st_size == n) {
        uint8_t *old = NULL;
        size_t olen = 0;
        char why[256];
        if (ri_read_file(host, n + 1, &old, &olen, why, sizeof why) == RI_EXIT_OK)
            same = olen == n && (n == 0 || memcmp(old, data, n) == 0);
        free(old);
    }
    if (!same) {
        if (exists && S_ISDIR(hst->st_mode)) rc = remove_host(cmd, host);
        char why[256] = "";
        if (rc == RI_EXIT_OK) rc = ri_write_file_atomic(host, data, n, why, sizeof why);
        if (rc != RI_EXIT_OK && why[0]) ri_fail(rc, cmd, "--dir-writeback: cannot write '%s': %s", host, why);
        /* A replaced file keeps its permission bits (an executable stays executable). */
        if (rc == RI_EXIT_OK && exists && S_ISREG(hst->st_mode)) (void)chmod(host, hst->st_mode & 07777);
    }
    free(data);
    return rc;
}

static int symlink_back(const char *cmd, const wsfs *fs, const char *guest, const char *host, const struct stat *hst,
                        bool exists) {
    char target[4097];
    size_t n;
    wsfs_errno e = wsfs_readlink(fs, WSFS_ROOT_INO, guest, strlen(guest), target, sizeof target - 1, &n);
    if (e != WSFS_ESUCCESS || n >= sizeof target)
        return ri_fail(RI_EXIT_INPUT, cmd, "--dir-writeback: cannot read the symlink '%s' in the workspace", guest);
    target[n] = '\0';
    if (exists && S_ISLNK(hst->st_mode)) {
        char old[4097];
        ssize_t m = readlink(host, old, sizeof old - 1);
        if (m >= 0 && (size_t)m == n && memcmp(old, target, n) == 0) return RI_EXIT_OK;
    }
    if (exists && S_ISDIR(hst->st_mode)) {
        int rc = remove_host(cmd, host);
        if (rc != RI_EXIT_OK) return rc;
    }
    /* Atomically: a new link under a temporary name, renamed over the old entry. */
    size_t tcap = strlen(host) + 32;
    char *tmp = malloc(tcap);
    if (!tmp) return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    snprintf(tmp, tcap, "%s.ri-tmp-%ld", host, (long)getpid());
    int rc = RI_EXIT_OK;
    if (symlink(target, tmp) != 0) {
        rc = host_fail(cmd, "create the symlink", tmp);
    } else if (rename(tmp, host) != 0) {
        rc = host_fail(cmd, "rename onto", host);
        (void)unlink(tmp);
    } else {
        (void)sync_dir_of(host);
    }
    free(tmp);
    return rc;
}

/* Is name (under the workspace directory guest) absent there? */
static bool ws_lacks(const wsfs *fs, const char *guest_child) {
    uint64_t ino;
    return wsfs_lookup(fs, WSFS_ROOT_INO, guest_child, strlen(guest_child), false, &ino) == WSFS_ENOENT;
}

static int dir_back(const char *cmd, const wsfs *fs, const char *guest, const char *host);

static int entry_back(const char *cmd, const wsfs *fs, const char *guest, const char *host, uint8_t type) {
    struct stat st;
    bool exists = lstat(host, &st) == 0;
    if (!exists && errno != ENOENT) return host_fail(cmd, "inspect", host);
    if (type == WSFS_FILETYPE_DIRECTORY) {
        if (exists && !S_ISDIR(st.st_mode)) {
            int rc = remove_host(cmd, host);
            if (rc != RI_EXIT_OK) return rc;
            exists = false;
        }
        if (!exists && mkdir(host, 0777) != 0) return host_fail(cmd, "create the directory", host);
        return dir_back(cmd, fs, guest, host);
    }
    if (type == WSFS_FILETYPE_REGULAR_FILE) return file_back(cmd, fs, guest, host, &st, exists);
    if (type == WSFS_FILETYPE_SYMBOLIC_LINK) return symlink_back(cmd, fs, guest, host, &st, exists);
    return RI_EXIT_OK;
}

static int dir_back(const char *cmd, const wsfs *fs, const char *guest, const char *host) {
    uint64_t dir;
    wsfs_errno e = wsfs_lookup(fs, WSFS_ROOT_INO, guest, strlen(guest), false, &dir);
    int rc = RI_EXIT_OK;
    /* The workspace's entries, a batch at a time (names are copied before anything else). */
    uint64_t cookie = 0;
    for (;;) {
        if (e != WSFS_ESUCCESS)
            return ri_fail(RI_EXIT_INPUT, cmd, "--dir-writeback: cannot list '%s' in the workspace: %s", guest,
                           wsfs_errno_name(e));
        wsfs_dirent ents[64];
        size_t n = 0;
        e = wsfs_readdir(fs, dir, cookie, ents, 64, &n);
        if (e != WSFS_ESUCCESS) continue;
        for (size_t i = 0; i < n && rc == RI_EXIT_OK; i++) {
            cookie = ents[i].next;
            char *name = strndup(ents[i].name, ents[i].namelen);
            if (!name) return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
            bool dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
            char *g = dots ? NULL : ri_path_join(guest, name);
            char *h = dots ? NULL : ri_path_join(host, name);
            if (!dots && (!g || !h)) rc = ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
            else if (!dots) rc = entry_back(cmd, fs, g, h, ents[i].filetype);
            free(name);
            free(g);
            free(h);
        }
        if (rc != RI_EXIT_OK || n < 64) break;
    }
    if (rc != RI_EXIT_OK) return rc;
    /* What the program removed. */
    struct dirent **list;
    int n = scandir(host, &list, no_dots, by_name);
    if (n < 0) return host_fail(cmd, "list", host);
    for (int i = 0; i < n; i++) {
        char *g = rc == RI_EXIT_OK ? ri_path_join(guest, list[i]->d_name) : NULL;
        char *h = g ? ri_path_join(host, list[i]->d_name) : NULL;
        if (rc != RI_EXIT_OK) {
        } else if (!g || !h) {
            rc = ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
        } else if (ws_lacks(fs, g)) {
            rc = remove_host(cmd, h);
        }
        free(g);
        free(h);
        free(list[i]);
    }
    free(list);
    return rc;
}

int ri_wasi_dir_write_back(const char *cmd, const wsfs *fs, const ri_wasi_dir *d) {
    wsfs_filestat st;
    if (wsfs_stat_path(fs, WSFS_ROOT_INO, d->guest, strlen(d->guest), false, &st) != WSFS_ESUCCESS ||
        st.filetype != WSFS_FILETYPE_DIRECTORY)
        return ri_fail(RI_EXIT_INPUT, cmd, "--dir-writeback: '%s' is no longer a directory in the workspace; %s is left as it was",
                       d->guest, d->host);
    return dir_back(cmd, fs, d->guest, d->host);
}
