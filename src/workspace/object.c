/* Shared objects of the workspace file system: reference counts, families, blocks, inodes. */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

void obj_retain(wsfs_obj *o) { atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed); }

/* Acquire: a writer that sees 1 must see every write made before the other owners let go. */
bool obj_shared(const wsfs_obj *o) {
    return atomic_load_explicit(&((wsfs_obj *)o)->refs, memory_order_acquire) != 1;
}

wsfs_family *family_new(void) {
    wsfs_family *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    if (pthread_mutex_init(&f->lock, NULL) != 0) {
        free(f);
        return NULL;
    }
    atomic_init(&f->refs, 1);
    return f;
}

void family_release(wsfs_family *fam) {
    if (!fam || atomic_fetch_sub_explicit(&fam->refs, 1, memory_order_acq_rel) != 1) return;
    slab_release_all(fam);
    pthread_mutex_destroy(&fam->lock);
    free(fam);
}

wsfs_block *block_new(wsfs_family *fam) {
    wsfs_block *b = block_new_filled(fam, NULL, 0);
    if (b) memset(b->data, 0, sizeof b->data);
    return b;
}

wsfs_block *block_new_filled(wsfs_family *fam, const uint8_t *src, size_t n) {
    /* Not calloc: a parsed block is written once, and zeroing 16 KiB first doubled the cost. */
    wsfs_block *b = slab_block_alloc(fam);
    if (!b) {
        b = malloc(sizeof *b);
        if (!b) return NULL;
        b->h.slab = 0;
    }
    if (n) {
        memcpy(b->data, src, n);
        memset(b->data + n, 0, WSFS_BLOCK_SIZE - n); /* W6: zero past the content */
    }
    atomic_init(&b->h.refs, 1);
    b->h.kind = OBJ_BLOCK;
    atomic_fetch_add_explicit(&fam->blocks, 1, memory_order_relaxed);
    return b;
}

wsfs_inode *inode_alloc(wsfs_family *fam, uint64_t ino, uint8_t type) {
    wsfs_inode *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    atomic_init(&in->h.refs, 1);
    in->h.kind = OBJ_INODE;
    in->ino = ino;
    in->type = type;
    atomic_fetch_add_explicit(&fam->inodes, 1, memory_order_relaxed);
    return in;
}

static void inode_free(wsfs_family *fam, wsfs_inode *in) {
    rx_clear(fam, &in->blocks);
    free(in->target);
    for (uint64_t i = 0; in->ents && i < in->size; i++) free(in->ents[i].name);
    free(in->ents);
    atomic_fetch_sub_explicit(&fam->inodes, 1, memory_order_relaxed);
    free(in);
}

wsfs_inode *inode_clone(wsfs_family *fam, const wsfs_inode *src) {
    wsfs_inode *in = inode_alloc(fam, src->ino, src->type);
    if (!in) return NULL;
    in->nlink = src->nlink;
    in->pins = src->pins;
    in->atim = src->atim;
    in->mtim = src->mtim;
    in->ctim = src->ctim;
    in->parent = src->parent;
    in->size = src->size;
    rx_share(&in->blocks, &src->blocks);
    if (src->target) {
        in->target = malloc(src->size ? src->size : 1);
        if (!in->target) goto fail;
        memcpy(in->target, src->target, src->size);
    }
    if (src->type == WSFS_FILETYPE_DIRECTORY && src->size) {
        in->ents = calloc(src->size, sizeof *in->ents);
        if (!in->ents) goto fail;
        in->cap = (uint32_t)src->size;
        for (uint64_t i = 0; i < src->size; i++) {
            in->ents[i] = src->ents[i];
            in->ents[i].name = malloc(src->ents[i].len);
            if (!in->ents[i].name) {
                in->size = i;
                goto fail;
            }
            memcpy(in->ents[i].name, src->ents[i].name, src->ents[i].len);
        }
    }
    return in;
fail:
    if (src->type != WSFS_FILETYPE_DIRECTORY) in->size = 0;
    inode_free(fam, in);
    return NULL;
}

void obj_release(wsfs_family *fam, wsfs_obj *o) {
    if (!o || atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) != 1) return;
    switch (o->kind) {
    case OBJ_NODE: {
        rx_node *n = (rx_node *)o;
        for (unsigned i = 0; i < RX_FAN; i++) obj_release(fam, n->slot[i]);
        atomic_fetch_sub_explicit(&fam->nodes, 1, memory_order_relaxed);
        free(n);
        break;
    }
    case OBJ_INODE: inode_free(fam, (wsfs_inode *)o); break;
    case OBJ_BLOCK:
        atomic_fetch_sub_explicit(&fam->blocks, 1, memory_order_relaxed);
        if (o->slab) slab_block_free(fam, (wsfs_block *)o);
        else free(o);
        break;
    default: RI_ASSERT(0, "W1"); break;
    }
}
