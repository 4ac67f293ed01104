/* Path resolution: components relative to a directory, bounded symlink expansion, ".." of
 * the root is the root (nothing resolves outside the tree). */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

bool name_is_dot(const char *name, size_t len) {
    return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

void walk_done(wsfs_walk *w) {
    free(w->buf);
    w->buf = NULL;
}

/* The inode a component names in directory d (0: none); "." and ".." included. */
static uint64_t component(const wsfs_inode *d, const char *c, size_t len) {
    if (len == 1 && c[0] == '.') return d->ino;
    if (len == 2 && c[0] == '.' && c[1] == '.') return d->parent; /* 0 for a removed directory */
    long i = dir_find(d, c, len);
    return i >= 0 ? d->ents[i].ino : 0;
}

/* Replaces the path being walked by target + rest (rest starts at its separator). */
static wsfs_errno expand(const wsfs *fs, wsfs_walk *w, const wsfs_inode *link, const char *rest, size_t restlen,
                         size_t *plen) {
    size_t n = (size_t)link->size + restlen;
    if (n > fs->lim.max_path) return WSFS_ENAMETOOLONG;
    char *nb = malloc(n + 1);
    if (!nb) return WSFS_ENOMEM;
    memcpy(nb, link->target, (size_t)link->size);
    memcpy(nb + link->size, rest, restlen);
    free(w->buf);
    w->buf = nb;
    *plen = n;
    return WSFS_ESUCCESS;
}

wsfs_errno walk_path(const wsfs *fs, uint64_t dir, const char *path, size_t len, bool follow, wsfs_walk *w) {
    *w = (wsfs_walk){0};
    if (len == 0) return WSFS_ENOENT;
    if (len > fs->lim.max_path) return WSFS_ENAMETOOLONG;
    if (memchr(path, 0, len)) return WSFS_EILSEQ;
    const wsfs_inode *cur = fs_inode(fs, dir);
    if (!cur) return WSFS_EBADF;
    if (cur->type != WSFS_FILETYPE_DIRECTORY) return WSFS_ENOTDIR;
    w->buf = malloc(len + 1);
    if (!w->buf) return WSFS_ENOMEM;
    memcpy(w->buf, path, len);
    size_t plen = len, pos = 0;
    uint32_t links = 0;
    for (;;) {
        const char *b = w->buf;
        if (pos == 0 && b[0] == '/') cur = fs_inode(fs, WSFS_ROOT_INO);
        while (pos < plen && b[pos] == '/') pos++;
        size_t s = pos;
        while (pos < plen && b[pos] != '/') pos++;
        size_t clen = pos - s, after = pos;
        while (after < plen && b[after] == '/') after++;
        bool last = after == plen;
        if (clen == 0) { /* "/" alone: the root itself, named "/" (not a removable name) */
            w->dir = cur->ino;
            w->ino = cur->ino;
            w->name = "/";
            w->namelen = 1;
            return WSFS_ESUCCESS;
        }
        if (clen > fs->lim.max_name) return WSFS_ENAMETOOLONG;
        uint64_t ino = component(cur, b + s, clen);
        const wsfs_inode *t = ino ? fs_inode(fs, ino) : NULL;
        bool trailing = last && pos < plen;
        if (t && t->type == WSFS_FILETYPE_SYMBOLIC_LINK && (!last || follow || trailing)) {
            if (++links > fs->lim.max_symlinks) return WSFS_ELOOP;
            wsfs_errno e = expand(fs, w, t, b + pos, plen - pos, &plen);
            if (e) return e;
            pos = 0;
            if (plen == 0) return WSFS_ENOENT; /* never: targets are not empty */
            continue;
        }
        if (last) {
            w->dir = cur->ino;
            w->ino = ino;
            w->name = b + s;
            w->namelen = clen;
            w->trailing_slash = trailing;
            if (t && trailing && t->type != WSFS_FILETYPE_DIRECTORY) return WSFS_ENOTDIR;
            return WSFS_ESUCCESS;
        }
        if (!t) return WSFS_ENOENT;
        if (t->type != WSFS_FILETYPE_DIRECTORY) return WSFS_ENOTDIR;
        cur = t;
    }
}

wsfs_errno wsfs_lookup(const wsfs *fs, uint64_t dir, const char *path, size_t len, bool follow, uint64_t *ino) {
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, follow, &w);
    if (!e && !w.ino) e = WSFS_ENOENT;
    if (!e) *ino = w.ino;
    walk_done(&w);
    return e;
}
