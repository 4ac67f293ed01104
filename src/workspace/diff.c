/* Differences between two file systems (typically a fork and its origin): the inode tables
 * are compared by pointer, so subtrees and blocks both still share are never read. */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

/* "/a/b" for a linked inode, "/" for the root, "" for one with no link (malloc'd). */
static char *path_of(const wsfs *fs, const wsfs_inode *in) {
    size_t cap = 64, start = cap - 1;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    buf[start] = 0;
    if (in->ino == WSFS_ROOT_INO) {
        buf[--start] = '/';
    }
    for (uint64_t steps = 0; in->ino != WSFS_ROOT_INO && steps <= fs->ninodes; steps++) {
        const wsfs_inode *p = in->parent ? fs_inode(fs, in->parent) : NULL;
        const wsfs_entry *e = NULL;
        for (uint64_t i = 0; p && i < p->size && !e; i++)
            if (p->ents[i].ino == in->ino) e = &p->ents[i];
        if (!e) { /* unlinked (an open, removed inode) */
            buf[0] = 0;
            return buf;
        }
        while (start < e->len + 1) {
            char *nb = malloc(cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            memcpy(nb + cap, buf, cap);
            free(buf);
            buf = nb;
            start += cap;
            cap *= 2;
        }
        start -= e->len;
        memcpy(buf + start, e->name, e->len);
        buf[--start] = '/';
        in = p;
    }
    memmove(buf, buf + start, cap - start);
    return buf;
}

typedef struct bytes_diff {
    const wsfs_inode *a, *b;
    uint64_t common; /* min of the two sizes */
    uint64_t n;
} bytes_diff;

static bool block_cb(void *ctx, uint64_t key, wsfs_obj *va, wsfs_obj *vb) {
    bytes_diff *d = ctx;
    uint64_t base = key * WSFS_BLOCK_SIZE;
    if (base >= d->common) return true;
    size_t k = d->common - base < WSFS_BLOCK_SIZE ? (size_t)(d->common - base) : WSFS_BLOCK_SIZE;
    const uint8_t *pa = va ? ((const wsfs_block *)va)->data : NULL, *pb = vb ? ((const wsfs_block *)vb)->data : NULL;
    for (size_t i = 0; i < k; i++)
        if ((pa ? pa[i] : 0) != (pb ? pb[i] : 0)) d->n++;
    return true;
}

/* Byte offsets whose content differs, a size difference counting as differing bytes. */
static uint64_t file_bytes_changed(const wsfs_inode *a, const wsfs_inode *b) {
    bytes_diff d = {.a = a, .b = b, .common = a->size < b->size ? a->size : b->size};
    rx_diff(&a->blocks, &b->blocks, block_cb, &d);
    return d.n + (a->size > b->size ? a->size - b->size : b->size - a->size);
}

typedef struct diff_state {
    const wsfs *from, *to;
    wsfs_change_fn fn;
    void *ctx;
    wsfs_errno e;
} diff_state;

static bool emit(diff_state *s, wsfs_change_kind kind, const wsfs_inode *in, const wsfs *where, const char *old_path,
                 uint64_t bytes) {
    char *path = path_of(where, in);
    if (!path) {
        s->e = WSFS_ENOMEM;
        return false;
    }
    wsfs_change c = {.kind = kind, .ino = in->ino, .filetype = in->type, .path = path, .old_path = old_path,
                     .bytes = bytes};
    if (kind == WSFS_ADDED && in->type == WSFS_FILETYPE_REGULAR_FILE) c.bytes = in->size;
    bool go = s->fn(s->ctx, &c);
    free(path);
    return go;
}

static bool inode_cb(void *ctx, uint64_t key, wsfs_obj *va, wsfs_obj *vb) {
    (void)key;
    diff_state *s = ctx;
    const wsfs_inode *a = (const wsfs_inode *)va, *b = (const wsfs_inode *)vb;
    if (!a) return emit(s, WSFS_ADDED, b, s->to, NULL, 0);
    if (!b) return emit(s, WSFS_REMOVED, a, s->from, NULL, 0);
    if (a->type != b->type) return emit(s, WSFS_REMOVED, a, s->from, NULL, 0) && emit(s, WSFS_ADDED, b, s->to, NULL, 0);
    char *pa = path_of(s->from, a), *pb = path_of(s->to, b);
    bool go = true;
    if (!pa || !pb) {
        s->e = WSFS_ENOMEM;
        go = false;
    } else {
        bool moved = strcmp(pa, pb) != 0;
        uint64_t bytes = 0;
        bool changed = false;
        if (a->type == WSFS_FILETYPE_REGULAR_FILE) {
            bytes = file_bytes_changed(a, b);
            changed = bytes != 0;
        } else if (a->type == WSFS_FILETYPE_SYMBOLIC_LINK) {
            changed = a->size != b->size || memcmp(a->target, b->target, (size_t)a->size) != 0;
        }
        if (changed) go = emit(s, WSFS_CHANGED, b, s->to, moved ? pa : NULL, bytes);
        else if (moved) go = emit(s, WSFS_MOVED, b, s->to, pa, 0);
    }
    free(pa);
    free(pb);
    return go;
}

wsfs_errno wsfs_diff(const wsfs *from, const wsfs *to, wsfs_change_fn fn, void *ctx) {
    diff_state s = {.from = from, .to = to, .fn = fn, .ctx = ctx, .e = WSFS_ESUCCESS};
    rx_diff(&from->inodes, &to->inodes, inode_cb, &s);
    return s.e;
}
