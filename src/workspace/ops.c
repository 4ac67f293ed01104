/* Path operations with POSIX semantics: open/create, mkdir, unlink, rmdir, rename, symlink,
 * readlink, link, stat by path. Each one checks everything that can fail before it changes
 * anything, so a failed operation leaves the tree as it was. */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

static void touch(const wsfs *fs, wsfs_inode *in) { in->mtim = in->ctim = fs_now(fs); }

/* The directory a new entry goes into: writable, and not removed. */
static wsfs_inode *target_dir(wsfs *fs, const wsfs_walk *w, wsfs_errno *e) {
    const wsfs_inode *d = fs_inode(fs, w->dir);
    if (!d || d->nlink == 0) {
        *e = WSFS_ENOENT;
        return NULL;
    }
    return fs_inode_mut(fs, w->dir, e);
}

/* Another directory linking `in` (the smallest ino), after its link in `from` went. */
static uint64_t find_parent(const wsfs *fs, uint64_t ino) {
    uint64_t key = 0;
    wsfs_obj *v;
    while (rx_next(&fs->inodes, key, &key, &v)) {
        const wsfs_inode *d = (const wsfs_inode *)v;
        if (d->type == WSFS_FILETYPE_DIRECTORY)
            for (uint64_t i = 0; i < d->size; i++)
                if (d->ents[i].ino == ino) return d->ino;
        key++;
    }
    return 0;
}

/* One link of `in` (not a directory) was removed from directory `from`. */
static void drop_link(wsfs *fs, wsfs_inode *in, uint64_t from) {
    in->nlink--;
    in->ctim = fs_now(fs);
    if (in->nlink == 0) {
        in->parent = 0;
        if (in->pins == 0) fs_inode_drop(fs, in->ino);
    } else if (in->parent == from) {
        in->parent = find_parent(fs, in->ino);
    }
}

/* A directory `in` was removed from its parent `from` (already updated). */
static void drop_dir(wsfs *fs, wsfs_inode *in, wsfs_inode *from) {
    from->nlink--;
    in->nlink = 0;
    in->parent = 0;
    if (in->pins == 0) fs_inode_drop(fs, in->ino);
}

static wsfs_errno new_entry(wsfs *fs, wsfs_walk *w, uint8_t type, wsfs_inode **out) {
    wsfs_errno e = WSFS_ESUCCESS;
    wsfs_inode *d = target_dir(fs, w, &e);
    if (!d) return e;
    if (d->size >= UINT32_MAX) return WSFS_ENOSPC;
    wsfs_inode *in;
    e = fs_inode_create(fs, type, &in);
    if (e) return e;
    e = dir_insert(d, w->name, w->namelen, in->ino);
    if (e) {
        in->nlink = 0;
        fs_inode_drop(fs, in->ino);
        fs->next_ino--; /* nothing saw the number */
        return e;
    }
    in->parent = d->ino;
    in->nlink = type == WSFS_FILETYPE_DIRECTORY ? 2 : 1;
    if (type == WSFS_FILETYPE_DIRECTORY) d->nlink++;
    touch(fs, d);
    *out = in;
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_open(wsfs *fs, uint64_t dir, const char *path, size_t len, uint32_t of, uint64_t *ino) {
    if (of & ~(uint32_t)(WSFS_O_CREAT | WSFS_O_EXCL | WSFS_O_TRUNC | WSFS_O_DIRECTORY | WSFS_O_NOFOLLOW))
        return WSFS_EINVAL;
    bool excl = (of & WSFS_O_CREAT) && (of & WSFS_O_EXCL);
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, !(of & WSFS_O_NOFOLLOW) && !excl, &w);
    if (e) goto out;
    if (!w.ino) {
        if (!(of & WSFS_O_CREAT)) e = WSFS_ENOENT;
        else if (w.trailing_slash) e = WSFS_EISDIR;
        else if (of & WSFS_O_DIRECTORY) e = WSFS_EINVAL;
        else {
            wsfs_inode *in;
            e = new_entry(fs, &w, WSFS_FILETYPE_REGULAR_FILE, &in);
            if (!e) *ino = in->ino;
        }
        goto out;
    }
    if (excl) {
        e = WSFS_EEXIST;
        goto out;
    }
    const wsfs_inode *t = fs_inode(fs, w.ino);
    if (t->type == WSFS_FILETYPE_SYMBOLIC_LINK) e = WSFS_ELOOP;
    else if ((of & WSFS_O_DIRECTORY) && t->type != WSFS_FILETYPE_DIRECTORY) e = WSFS_ENOTDIR;
    else if ((of & WSFS_O_TRUNC) && t->type == WSFS_FILETYPE_DIRECTORY) e = WSFS_EISDIR;
    else if ((of & WSFS_O_TRUNC) && t->size > 0) {
        wsfs_inode *m = fs_inode_mut(fs, w.ino, &e);
        if (m) e = file_set_size(fs, m, 0);
    }
    if (!e) *ino = w.ino;
out:
    walk_done(&w);
    return e;
}

wsfs_errno wsfs_mkdir(wsfs *fs, uint64_t dir, const char *path, size_t len) {
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, false, &w);
    if (!e && w.ino) e = WSFS_EEXIST;
    wsfs_inode *in;
    if (!e) e = new_entry(fs, &w, WSFS_FILETYPE_DIRECTORY, &in);
    walk_done(&w);
    return e;
}

wsfs_errno wsfs_symlink(wsfs *fs, const char *target, size_t tlen, uint64_t dir, const char *path, size_t len) {
    if (tlen == 0) return WSFS_ENOENT;
    if (tlen > fs->lim.max_path) return WSFS_ENAMETOOLONG;
    if (memchr(target, 0, tlen)) return WSFS_EILSEQ;
    if (tlen > fs->lim.max_bytes - fs->bytes) return WSFS_ENOSPC;
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, false, &w);
    if (!e && w.ino) e = WSFS_EEXIST;
    else if (!e && w.trailing_slash) e = WSFS_ENOENT;
    char *copy = e ? NULL : malloc(tlen);
    if (!e && !copy) e = WSFS_ENOMEM;
    wsfs_inode *in;
    if (!e) e = new_entry(fs, &w, WSFS_FILETYPE_SYMBOLIC_LINK, &in);
    if (!e) {
        memcpy(copy, target, tlen);
        in->target = copy;
        in->size = tlen;
        fs->bytes += tlen;
        copy = NULL;
    }
    free(copy);
    walk_done(&w);
    return e;
}

wsfs_errno wsfs_readlink(const wsfs *fs, uint64_t dir, const char *path, size_t len, char *buf, size_t cap,
                         size_t *n) {
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, false, &w);
    const wsfs_inode *t = !e && w.ino ? fs_inode(fs, w.ino) : NULL;
    if (!e && !t) e = WSFS_ENOENT;
    if (!e && t->type != WSFS_FILETYPE_SYMBOLIC_LINK) e = WSFS_EINVAL;
    if (!e) {
        size_t k = cap < t->size ? cap : (size_t)t->size;
        if (k) memcpy(buf, t->target, k);
        *n = (size_t)t->size;
    }
    walk_done(&w);
    return e;
}

wsfs_errno wsfs_stat_path(const wsfs *fs, uint64_t dir, const char *path, size_t len, bool follow,
                          wsfs_filestat *st) {
    uint64_t ino;
    wsfs_errno e = wsfs_lookup(fs, dir, path, len, follow, &ino);
    if (!e) e = wsfs_stat(fs, ino, st);
    return e;
}

wsfs_errno wsfs_link(wsfs *fs, uint64_t odir, const char *opath, size_t olen, bool follow, uint64_t ndir,
                     const char *npath, size_t nlen) {
    uint64_t src;
    wsfs_errno e = wsfs_lookup(fs, odir, opath, olen, follow, &src);
    if (e) return e;
    const wsfs_inode *s = fs_inode(fs, src);
    if (s->type == WSFS_FILETYPE_DIRECTORY) return WSFS_EPERM;
    if (s->nlink == UINT32_MAX) return WSFS_EMLINK;
    wsfs_walk w;
    e = walk_path(fs, ndir, npath, nlen, false, &w);
    if (!e && w.ino) e = WSFS_EEXIST;
    else if (!e && w.trailing_slash) e = WSFS_ENOENT;
    wsfs_inode *d = e ? NULL : target_dir(fs, &w, &e);
    wsfs_inode *m = d ? fs_inode_mut(fs, src, &e) : NULL;
    if (m) e = dir_insert(d, w.name, w.namelen, src);
    if (m && !e) {
        m->nlink++;
        m->ctim = fs_now(fs);
        if (!m->parent) m->parent = d->ino;
        touch(fs, d);
    }
    walk_done(&w);
    return e;
}

wsfs_errno wsfs_unlink(wsfs *fs, uint64_t dir, const char *path, size_t len) {
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, false, &w);
    if (!e && !w.ino) e = WSFS_ENOENT;
    if (!e && (name_is_dot(w.name, w.namelen) || fs_inode(fs, w.ino)->type == WSFS_FILETYPE_DIRECTORY))
        e = WSFS_EISDIR;
    wsfs_inode *d = e ? NULL : fs_inode_mut(fs, w.dir, &e);
    wsfs_inode *t = d ? fs_inode_mut(fs, w.ino, &e) : NULL;
    if (t) {
        dir_remove_at(d, (size_t)dir_find(d, w.name, w.namelen));
        touch(fs, d);
        drop_link(fs, t, d->ino);
    }
    walk_done(&w);
    return e;
}

wsfs_errno wsfs_rmdir(wsfs *fs, uint64_t dir, const char *path, size_t len) {
    wsfs_walk w;
    wsfs_errno e = walk_path(fs, dir, path, len, false, &w);
    if (!e && !w.ino) e = WSFS_ENOENT;
    const wsfs_inode *c = e ? NULL : fs_inode(fs, w.ino);
    if (e) {
    } else if (w.namelen == 1 && w.name[0] == '.') e = WSFS_EINVAL;
    else if (name_is_dot(w.name, w.namelen)) e = WSFS_ENOTEMPTY;
    else if (w.ino == WSFS_ROOT_INO) e = WSFS_EBUSY;
    else if (c->type != WSFS_FILETYPE_DIRECTORY) e = WSFS_ENOTDIR;
    else if (c->size) e = WSFS_ENOTEMPTY;
    wsfs_inode *d = e ? NULL : fs_inode_mut(fs, w.dir, &e);
    wsfs_inode *t = d ? fs_inode_mut(fs, w.ino, &e) : NULL;
    if (t) {
        dir_remove_at(d, (size_t)dir_find(d, w.name, w.namelen));
        touch(fs, d);
        drop_dir(fs, t, d);
    }
    walk_done(&w);
    return e;
}

static wsfs_errno rename_check(const wsfs *fs, const wsfs_walk *o, const wsfs_walk *n) {
    if (!o->ino) return WSFS_ENOENT;
    if (name_is_dot(o->name, o->namelen) || name_is_dot(n->name, n->namelen)) return WSFS_EINVAL;
    const wsfs_inode *s = fs_inode(fs, o->ino), *t = n->ino ? fs_inode(fs, n->ino) : NULL;
    const wsfs_inode *nd = fs_inode(fs, n->dir);
    if (nd->nlink == 0) return WSFS_ENOENT;
    if (s->type == WSFS_FILETYPE_DIRECTORY) {
        if (t && t->type != WSFS_FILETYPE_DIRECTORY) return WSFS_ENOTDIR;
        if (t && t != s && t->size) return WSFS_ENOTEMPTY;
        if (dir_is_within(fs, n->dir, s->ino)) return WSFS_EINVAL; /* into its own subtree */
    } else {
        if (t && t->type == WSFS_FILETYPE_DIRECTORY) return WSFS_EISDIR;
        if (n->trailing_slash || o->trailing_slash) return WSFS_ENOTDIR;
    }
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_rename(wsfs *fs, uint64_t odir, const char *opath, size_t olen, uint64_t ndir, const char *npath,
                       size_t nlen) {
    wsfs_walk o, n = {0};
    wsfs_errno e = walk_path(fs, odir, opath, olen, false, &o);
    if (!e) e = walk_path(fs, ndir, npath, nlen, false, &n);
    if (!e) e = rename_check(fs, &o, &n);
    if (e || o.ino == n.ino) goto out; /* the same file: nothing to do (POSIX) */
    /* every inode written, made private first: nothing below fails but the insertion */
    wsfs_inode *od = fs_inode_mut(fs, o.dir, &e);
    wsfs_inode *nd = od ? fs_inode_mut(fs, n.dir, &e) : NULL;
    wsfs_inode *s = nd ? fs_inode_mut(fs, o.ino, &e) : NULL;
    wsfs_inode *t = s && n.ino ? fs_inode_mut(fs, n.ino, &e) : NULL;
    if (!s || (n.ino && !t)) goto out;
    od = fs_inode(fs, o.dir); /* the same object when od == nd */
    bool isdir = s->type == WSFS_FILETYPE_DIRECTORY;
    if (t) nd->ents[dir_find(nd, n.name, n.namelen)].ino = s->ino; /* keeps the entry's cookie */
    else if ((e = dir_insert(nd, n.name, n.namelen, s->ino)) != WSFS_ESUCCESS) goto out;
    long oi = dir_find(od, o.name, o.namelen);
    RI_ASSERT(oi >= 0, "W4");
    dir_remove_at(od, (size_t)oi);
    if (isdir) {
        od->nlink--;
        nd->nlink++;
        RI_ASSERT(od->nlink >= 2 && nd->nlink >= 3, "W5");
    }
    s->parent = nd->ino;
    s->ctim = fs_now(fs);
    touch(fs, od);
    touch(fs, nd);
    if (t) {
        if (t->type == WSFS_FILETYPE_DIRECTORY) drop_dir(fs, t, nd);
        else drop_link(fs, t, nd->ino);
    }
out:
    walk_done(&o);
    walk_done(&n);
    return e;
}
