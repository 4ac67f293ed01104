/* A workspace file system: lifetime, forks, limits, the inode table, pins, stat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

static void limits_fill(wsfs_limits *l, const wsfs_limits *in) {
    *l = in ? *in : (wsfs_limits){0};
    if (!l->max_bytes) l->max_bytes = WSFS_DEFAULT_MAX_BYTES;
    if (!l->max_inodes) l->max_inodes = WSFS_DEFAULT_MAX_INODES;
    if (!l->max_path) l->max_path = WSFS_DEFAULT_MAX_PATH;
    if (!l->max_name) l->max_name = WSFS_DEFAULT_MAX_NAME;
    if (!l->max_symlinks) l->max_symlinks = WSFS_DEFAULT_MAX_SYMLINKS;
    /* a directory's entry count is 32-bit; a name's length is 16-bit in the image */
    if (l->max_inodes > UINT32_MAX) l->max_inodes = UINT32_MAX;
    if (l->max_name > UINT16_MAX) l->max_name = UINT16_MAX;
}

static void set_err(wsfs_error *err, wsfs_status code, const char *msg) {
    if (!err) return;
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s", msg);
}

wsfs *fs_alloc(const wsfs_config *cfg) {
    wsfs *fs = calloc(1, sizeof *fs);
    if (!fs) return NULL;
    fs->fam = family_new();
    if (!fs->fam) {
        free(fs);
        return NULL;
    }
    limits_fill(&fs->lim, cfg ? &cfg->limits : NULL);
    if (cfg) {
        fs->clock = cfg->clock;
        fs->clock_ctx = cfg->clock_ctx;
    }
    fs->next_ino = WSFS_ROOT_INO;
    return fs;
}

wsfs_status wsfs_new(const wsfs_config *cfg, wsfs **out, wsfs_error *err) {
    if (!out) {
        set_err(err, WSFS_ERR_ARG, "wsfs_new: out is NULL");
        return WSFS_ERR_ARG;
    }
    *out = NULL;
    wsfs *fs = fs_alloc(cfg);
    wsfs_inode *root = NULL;
    if (!fs || fs_inode_create(fs, WSFS_FILETYPE_DIRECTORY, &root) != WSFS_ESUCCESS) {
        wsfs_free(fs);
        set_err(err, WSFS_ERR_NOMEM, "wsfs_new: out of memory");
        return WSFS_ERR_NOMEM;
    }
    root->nlink = 2;
    root->parent = WSFS_ROOT_INO;
    *out = fs;
    set_err(err, WSFS_OK, "");
    return WSFS_OK;
}

void wsfs_free(wsfs *fs) {
    if (!fs) return;
    rx_clear(fs->fam, &fs->inodes);
    family_release(fs->fam);
    free(fs);
}

wsfs *wsfs_fork(const wsfs *fs) {
    wsfs *f = malloc(sizeof *f);
    if (!f) return NULL;
    *f = *fs;
    rx_share(&f->inodes, &fs->inodes);
    atomic_fetch_add_explicit(&fs->fam->refs, 1, memory_order_relaxed);
    return f;
}

void wsfs_set_clock(wsfs *fs, wsfs_clock_fn clock, void *ctx) {
    fs->clock = clock;
    fs->clock_ctx = ctx;
}

const wsfs_limits *wsfs_get_limits(const wsfs *fs) { return &fs->lim; }

void wsfs_get_usage(const wsfs *fs, wsfs_usage *u) {
    u->bytes = fs->bytes;
    u->inodes = fs->ninodes;
    u->next_ino = fs->next_ino;
    u->family_blocks = (int64_t)atomic_load(&fs->fam->blocks);
    u->family_nodes = (int64_t)atomic_load(&fs->fam->nodes);
    u->family_inodes = (int64_t)atomic_load(&fs->fam->inodes);
}

uint64_t fs_now(const wsfs *fs) { return fs->clock ? fs->clock(fs->clock_ctx) : 0; }

wsfs_inode *fs_inode(const wsfs *fs, uint64_t ino) { return (wsfs_inode *)rx_get(&fs->inodes, ino); }

wsfs_inode *fs_inode_mut(wsfs *fs, uint64_t ino, wsfs_errno *e) {
    if (!fs_inode(fs, ino)) {
        *e = WSFS_EBADF;
        return NULL;
    }
    /* own the table path first: copying a shared node adds a reference to each child, so
     * only then does the inode's count say whether another version still sees it (W1) */
    wsfs_obj **slot = rx_slot(fs->fam, &fs->inodes, ino);
    if (!slot) {
        *e = WSFS_ENOMEM;
        return NULL;
    }
    wsfs_inode *in = (wsfs_inode *)*slot;
    if (!obj_shared(&in->h)) return in;
    wsfs_inode *copy = inode_clone(fs->fam, in);
    if (!copy) {
        *e = WSFS_ENOMEM;
        return NULL;
    }
    obj_release(fs->fam, *slot);
    *slot = &copy->h;
    return copy;
}

wsfs_errno fs_inode_create(wsfs *fs, uint8_t type, wsfs_inode **out) {
    if (fs->ninodes >= fs->lim.max_inodes || fs->next_ino == UINT64_MAX) return WSFS_ENOSPC;
    wsfs_inode *in = inode_alloc(fs->fam, fs->next_ino, type);
    if (!in) return WSFS_ENOMEM;
    wsfs_obj **slot = rx_slot(fs->fam, &fs->inodes, fs->next_ino);
    if (!slot) {
        obj_release(fs->fam, &in->h);
        return WSFS_ENOMEM;
    }
    RI_ASSERT(*slot == NULL, "W2");
    *slot = &in->h;
    in->atim = in->mtim = in->ctim = fs_now(fs);
    fs->next_ino++;
    fs->ninodes++;
    *out = in;
    return WSFS_ESUCCESS;
}

void fs_inode_drop(wsfs *fs, uint64_t ino) {
    wsfs_inode *in = fs_inode(fs, ino);
    if (!in) return;
    RI_ASSERT(in->nlink == 0 && in->pins <= 1, "W3");
    wsfs_obj **slot = rx_slot(fs->fam, &fs->inodes, ino);
    if (!slot) return; /* no memory: the inode stays, unreachable (counted still) */
    if (in->type == WSFS_FILETYPE_REGULAR_FILE || in->type == WSFS_FILETYPE_SYMBOLIC_LINK) fs->bytes -= in->size;
    obj_release(fs->fam, *slot);
    *slot = NULL;
    fs->ninodes--;
}

void fs_fill_stat(const wsfs_inode *in, wsfs_filestat *st) {
    st->dev = 0;
    st->ino = in->ino;
    st->filetype = in->type;
    st->nlink = in->nlink;
    st->size = in->type == WSFS_FILETYPE_DIRECTORY ? 0 : in->size;
    st->atim = in->atim;
    st->mtim = in->mtim;
    st->ctim = in->ctim;
}

wsfs_errno wsfs_stat(const wsfs *fs, uint64_t ino, wsfs_filestat *st) {
    const wsfs_inode *in = fs_inode(fs, ino);
    if (!in) return WSFS_EBADF;
    fs_fill_stat(in, st);
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_pin(wsfs *fs, uint64_t ino) {
    wsfs_errno e = WSFS_ESUCCESS;
    const wsfs_inode *cur = fs_inode(fs, ino);
    if (!cur) return WSFS_EBADF;
    if (cur->pins == UINT32_MAX) return WSFS_ENOSPC;
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    if (!in) return e;
    in->pins++;
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_unpin(wsfs *fs, uint64_t ino) {
    wsfs_errno e = WSFS_ESUCCESS;
    const wsfs_inode *cur = fs_inode(fs, ino);
    if (!cur || cur->pins == 0) return WSFS_EBADF;
    if (cur->pins == 1 && cur->nlink == 0) {
        fs_inode_drop(fs, ino); /* the last reference to an unlinked inode */
        return WSFS_ESUCCESS;
    }
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    if (!in) return e;
    in->pins--;
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_set_times(wsfs *fs, uint64_t ino, uint64_t atim, uint64_t mtim, uint32_t fl) {
    if (fl & ~(uint32_t)(WSFS_ATIM | WSFS_ATIM_NOW | WSFS_MTIM | WSFS_MTIM_NOW)) return WSFS_EINVAL;
    if ((fl & WSFS_ATIM) && (fl & WSFS_ATIM_NOW)) return WSFS_EINVAL;
    if ((fl & WSFS_MTIM) && (fl & WSFS_MTIM_NOW)) return WSFS_EINVAL;
    wsfs_errno e = WSFS_ESUCCESS;
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    if (!in) return e;
    uint64_t now = fs_now(fs);
    if (fl & WSFS_ATIM) in->atim = atim;
    if (fl & WSFS_ATIM_NOW) in->atim = now;
    if (fl & WSFS_MTIM) in->mtim = mtim;
    if (fl & WSFS_MTIM_NOW) in->mtim = now;
    in->ctim = now;
    return WSFS_ESUCCESS;
}

const char *wsfs_errno_name(wsfs_errno e) {
    switch (e) {
    case WSFS_ESUCCESS: return "success";
    case WSFS_EBADF: return "badf";
    case WSFS_EBUSY: return "busy";
    case WSFS_EEXIST: return "exist";
    case WSFS_EFBIG: return "fbig";
    case WSFS_EILSEQ: return "ilseq";
    case WSFS_EINVAL: return "inval";
    case WSFS_EISDIR: return "isdir";
    case WSFS_ELOOP: return "loop";
    case WSFS_EMLINK: return "mlink";
    case WSFS_ENAMETOOLONG: return "nametoolong";
    case WSFS_ENOENT: return "noent";
    case WSFS_ENOMEM: return "nomem";
    case WSFS_ENOSPC: return "nospc";
    case WSFS_ENOTDIR: return "notdir";
    case WSFS_ENOTEMPTY: return "notempty";
    case WSFS_EOVERFLOW: return "overflow";
    case WSFS_EPERM: return "perm";
    case WSFS_ERANGE: return "range";
    case WSFS_EXDEV: return "xdev";
    default: return "other";
    }
}
