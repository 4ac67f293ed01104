/* Persistent radix trees of shared nodes (64 slots a level): the inode table and the
 * block table of each file. A write copies the shared nodes on its path only (W1). */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

static rx_node *node_new(wsfs_family *fam) {
    rx_node *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    atomic_init(&n->h.refs, 1);
    n->h.kind = OBJ_NODE;
    atomic_fetch_add_explicit(&fam->nodes, 1, memory_order_relaxed);
    return n;
}

/* n itself when this tree owns it alone, else a private copy sharing n's children. */
static rx_node *own(wsfs_family *fam, rx_node *n) {
    if (!obj_shared(&n->h)) return n;
    rx_node *c = node_new(fam);
    if (!c) return NULL;
    for (unsigned i = 0; i < RX_FAN; i++) {
        c->slot[i] = n->slot[i];
        if (c->slot[i]) obj_retain(c->slot[i]);
    }
    obj_release(fam, &n->h); /* still referenced by its other owners */
    return c;
}

static bool fits(uint8_t height, uint64_t key) {
    unsigned bits = (unsigned)height * RX_BITS;
    return bits >= 64 || key < ((uint64_t)1 << bits);
}

static unsigned digit(uint64_t key, unsigned level) {
    unsigned shift = level * RX_BITS;
    return shift >= 64 ? 0 : (unsigned)((key >> shift) & (RX_FAN - 1));
}

wsfs_obj *rx_get(const wsfs_radix *t, uint64_t key) {
    if (!t->root || !fits(t->height, key)) return NULL;
    const rx_node *n = t->root;
    for (unsigned level = t->height - 1u; level > 0; level--) {
        n = (const rx_node *)n->slot[digit(key, level)];
        if (!n) return NULL;
    }
    return n->slot[digit(key, 0)];
}

wsfs_obj **rx_slot(wsfs_family *fam, wsfs_radix *t, uint64_t key) {
    if (!t->root) {
        t->root = node_new(fam);
        if (!t->root) return NULL;
        t->height = 1;
    }
    while (!fits(t->height, key)) {
        rx_node *up = node_new(fam);
        if (!up) return NULL;
        up->slot[0] = &t->root->h;
        t->root = up;
        t->height++;
    }
    rx_node *n = own(fam, t->root);
    if (!n) return NULL;
    t->root = n;
    for (unsigned level = t->height - 1u; level > 0; level--) {
        wsfs_obj **pp = &n->slot[digit(key, level)];
        rx_node *c = *pp ? own(fam, (rx_node *)*pp) : node_new(fam);
        if (!c) return NULL;
        *pp = &c->h;
        n = c;
    }
    return &n->slot[digit(key, 0)];
}

static bool next_in(const rx_node *n, unsigned level, uint64_t base, uint64_t from, uint64_t *key,
                    wsfs_obj **val) {
    unsigned shift = level * RX_BITS;
    unsigned start = 0;
    if (from > base) {
        uint64_t d = shift >= 64 ? 0 : (from - base) >> shift;
        if (d >= RX_FAN) return false;
        start = (unsigned)d;
    }
    for (unsigned i = start; i < RX_FAN; i++) {
        if (!n->slot[i]) continue;
        uint64_t b = base + ((uint64_t)i << shift);
        if (level == 0) {
            *key = b;
            *val = n->slot[i];
            return true;
        }
        /* a child after the one holding `from` starts at its own base */
        if (next_in((const rx_node *)n->slot[i], level - 1, b, i == start ? from : b, key, val)) return true;
    }
    return false;
}

bool rx_next(const wsfs_radix *t, uint64_t from, uint64_t *key, wsfs_obj **val) {
    if (!t->root || !fits(t->height, from)) return false;
    return next_in(t->root, t->height - 1u, 0, from, key, val);
}

void rx_share(wsfs_radix *dst, const wsfs_radix *src) {
    *dst = *src;
    if (dst->root) obj_retain(&dst->root->h);
}

void rx_clear(wsfs_family *fam, wsfs_radix *t) {
    if (t->root) obj_release(fam, &t->root->h);
    t->root = NULL;
    t->height = 0;
}

bool rx_truncate(wsfs_family *fam, wsfs_radix *t, uint64_t from) {
    if (from == 0) {
        rx_clear(fam, t);
        return true;
    }
    uint64_t key;
    wsfs_obj *v;
    while (rx_next(t, from, &key, &v)) {
        wsfs_obj **s = rx_slot(fam, t, key);
        if (!s) return false;
        obj_release(fam, *s);
        *s = NULL;
        if (key == UINT64_MAX) break;
        from = key + 1;
    }
    return true;
}

/* The child at slot i of node n (at level ln) seen as a node of a tree at `level`: a lower
 * root is slot 0's descendant of the taller tree's path. */
static const rx_node *view(const rx_node *n, unsigned ln, unsigned level, unsigned i, unsigned *lc) {
    if (!n) return NULL;
    if (ln == level) {
        *lc = level - 1;
        return (const rx_node *)n->slot[i];
    }
    *lc = ln;
    return i == 0 ? n : NULL;
}

static bool diff_rec(const rx_node *a, unsigned la, const rx_node *b, unsigned lb, unsigned level, uint64_t base,
                     rx_diff_fn fn, void *ctx) {
    if (a == b) return true; /* shared, or both absent */
    unsigned shift = level * RX_BITS;
    for (unsigned i = 0; i < RX_FAN; i++) {
        if (shift < 64 && i > 0 && ((uint64_t)i << shift) >> shift != i) break; /* past 2^64 */
        if (shift >= 64 && i > 0) break;
        uint64_t k = base + (shift >= 64 ? 0 : (uint64_t)i << shift);
        if (level == 0) {
            wsfs_obj *va = a ? a->slot[i] : NULL, *vb = b ? b->slot[i] : NULL;
            if (va != vb && !fn(ctx, k, va, vb)) return false;
            continue;
        }
        unsigned lca = 0, lcb = 0;
        const rx_node *ca = view(a, la, level, i, &lca), *cb = view(b, lb, level, i, &lcb);
        if (!diff_rec(ca, lca, cb, lcb, level - 1, k, fn, ctx)) return false;
    }
    return true;
}

bool rx_diff(const wsfs_radix *a, const wsfs_radix *b, rx_diff_fn fn, void *ctx) {
    unsigned h = a->height > b->height ? a->height : b->height;
    if (h == 0) return true;
    return diff_rec(a->root, a->root ? a->height - 1u : 0, b->root, b->root ? b->height - 1u : 0, h - 1u, 0, fn,
                    ctx);
}
