/*
 * Workspace deltas between live file systems (docs/SNAPSHOT_FORMAT.md "WSFS in a delta"):
 * the same bytes as wsfs_delta_encode of the two canonical images, found by walking both
 * inode tables at once and skipping what they share (a fork and its origin share all but
 * what was written since), so the cost follows the changes, not the workspace. And the
 * delta applied to a fork of its base in place: only the inodes it names are touched,
 * then the tree is checked as the parser checks an image.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

static wsfs_status ffail(wsfs_error *err, wsfs_status code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* The canonical serialization's length, from the records' sizes (no bytes written). */
static bool image_size(const wsfs *fs, uint64_t *out) {
    size_t total = WSFS_HEADER_SIZE;
    uint64_t key = 0;
    wsfs_obj *v;
    for (bool more = rx_next(&fs->inodes, 0, &key, &v); more; more = rx_next(&fs->inodes, key + 1, &key, &v))
        if (!fs_record_size((const wsfs_inode *)v, &total)) return false;
    *out = total;
    return true;
}

/* ---- encoding ---------------------------------------------------------------------------- */

/* Byte access to a file's content by blocks (holes and the bytes past the size read as
 * zero: a block's bytes past the size are zero, invariant W6). */
typedef struct cursor {
    const wsfs_inode *in;
    uint64_t idx;
    const uint8_t *data; /* block idx's bytes, NULL for a hole */
    bool valid;
} cursor;

static const uint8_t *block_of(cursor *c, uint64_t idx) {
    if (!c->valid || c->idx != idx) {
        const wsfs_block *b = (const wsfs_block *)rx_get(&c->in->blocks, idx);
        c->data = b ? b->data : NULL;
        c->idx = idx;
        c->valid = true;
    }
    return c->data;
}

static bool same_byte(cursor *b, cursor *c, uint64_t i) {
    const uint8_t *pb = block_of(b, i / WSFS_BLOCK_SIZE), *pc = block_of(c, i / WSFS_BLOCK_SIZE);
    size_t k = (size_t)(i % WSFS_BLOCK_SIZE);
    return (pb ? pb[k] : 0) == (pc ? pc[k] : 0);
}

/* The first offset >= i below the child's size whose byte differs from the base's there
 * (zero past the base's end), or the child's size. Blocks both share are skipped whole. */
static uint64_t next_diff(cursor *b, cursor *c, uint64_t i, uint64_t cs) {
    while (i < cs) {
        uint64_t idx = i / WSFS_BLOCK_SIZE, end = (idx + 1) * WSFS_BLOCK_SIZE;
        if (end > cs) end = cs;
        const uint8_t *pb = block_of(b, idx), *pc = block_of(c, idx);
        if (pb == pc) { /* the same block, or holes in both */
            i = end;
            continue;
        }
        size_t k = (size_t)(i % WSFS_BLOCK_SIZE), stop = (size_t)(end - idx * WSFS_BLOCK_SIZE);
        if (pb && pc) {
            while (k + 64 <= stop && memcmp(pb + k, pc + k, 64) == 0) k += 64;
            while (k < stop && pb[k] == pc[k]) k++;
        } else {
            const uint8_t *p = pb ? pb : pc;
            while (k < stop && !p[k]) k++;
        }
        if (k < stop) return idx * WSFS_BLOCK_SIZE + k;
        i = end;
    }
    return cs;
}

/* The child's bytes [from, from + n) into the delta. */
static void put_content(wsfs_dbuf *d, cursor *c, uint64_t from, uint64_t n) {
    uint8_t *p = wsfs_dbuf_grow(d, (size_t)n);
    if (!p) return;
    while (n) {
        uint64_t idx = from / WSFS_BLOCK_SIZE;
        size_t k = (size_t)(from % WSFS_BLOCK_SIZE), m = WSFS_BLOCK_SIZE - k;
        if (m > n) m = (size_t)n;
        const uint8_t *src = block_of(c, idx);
        if (src) memcpy(p, src + k, m);
        else memset(p, 0, m);
        p += m, from += m, n -= m;
    }
}

/* A file that stays a file: as delta.c's encode_file writes it (the same ranges: every
 * differing byte, differences fewer than GAP equal bytes apart merged). */
static void encode_file(wsfs_dbuf *d, const wsfs_inode *bi, const wsfs_inode *ci, const uint8_t *fixed) {
    cursor b = {.in = bi}, c = {.in = ci};
    uint64_t cs = ci->size;
    size_t op = d->len;
    wsfs_dbuf_op(d, ci->ino, WSFS_OP_FILE, 0);
    wsfs_dbuf_put(d, fixed, WSFS_INODE_FIXED);
    uint8_t *sz = wsfs_dbuf_grow(d, 8);
    if (sz) ri_le_put64(sz, cs);
    uint32_t k = 0;
    for (uint64_t i = next_diff(&b, &c, 0, cs); i < cs; i = next_diff(&b, &c, i, cs)) {
        uint64_t start = i, end = i + 1, run = 0;
        for (uint64_t j = i + 1; j < cs && run < WSFS_DELTA_GAP; j++) {
            if (same_byte(&b, &c, j)) run++;
            else run = 0, end = j + 1;
        }
        uint8_t *h = wsfs_dbuf_grow(d, WSFS_DELTA_RANGE_HEADER);
        if (h) ri_le_put64(h, start), ri_le_put64(h + 8, end - start);
        put_content(d, &c, start, end - start);
        k++;
        i = end;
    }
    if (!d->failed) ri_le_put32(d->p + op + 12, k);
}

/* Whether a file's content equals the other's (sizes equal). */
static bool same_content(const wsfs_inode *a, const wsfs_inode *b) {
    cursor ca = {.in = a}, cb = {.in = b};
    return next_diff(&ca, &cb, 0, b->size) == b->size;
}

typedef struct encoder {
    wsfs_dbuf d;
    uint64_t nops;
} encoder;

static void put_whole(encoder *e, const wsfs_inode *in, size_t len) {
    wsfs_dbuf_op(&e->d, in->ino, WSFS_OP_RECORD, 0);
    uint8_t *l = wsfs_dbuf_grow(&e->d, 8);
    if (l) ri_le_put64(l, len);
    uint8_t *p = wsfs_dbuf_grow(&e->d, len);
    if (p) fs_put_record(in, p);
}

static bool encode_inode(void *ctx, uint64_t ino, wsfs_obj *a, wsfs_obj *b) {
    encoder *e = ctx;
    const wsfs_inode *x = (const wsfs_inode *)a, *y = (const wsfs_inode *)b;
    if (x && !y) {
        wsfs_dbuf_op(&e->d, ino, WSFS_OP_REMOVED, 0);
        e->nops++;
        return !e->d.failed;
    }
    size_t ylen = 0;
    if (!fs_record_size(y, &ylen)) return e->d.failed = true, false;
    if (!x) {
        put_whole(e, y, ylen);
        e->nops++;
        return !e->d.failed;
    }
    uint8_t fx[WSFS_INODE_FIXED], fy[WSFS_INODE_FIXED];
    fs_put_fixed(x, fx);
    fs_put_fixed(y, fy);
    if (x->type == WSFS_FILETYPE_REGULAR_FILE && y->type == WSFS_FILETYPE_REGULAR_FILE) {
        if (!memcmp(fx, fy, sizeof fx) && x->size == y->size && same_content(x, y)) return true;
        encode_file(&e->d, x, y, fy);
        e->nops++;
        return !e->d.failed;
    }
    size_t xlen = 0;
    if (!fs_record_size(x, &xlen)) return e->d.failed = true, false;
    if (xlen == ylen && !memcmp(fx, fy, sizeof fx)) { /* compare the rest: directories, symlinks */
        uint8_t *px = malloc(xlen ? xlen : 1), *py = malloc(ylen ? ylen : 1);
        bool same = px && py;
        if (same) {
            fs_put_record(x, px);
            fs_put_record(y, py);
            same = memcmp(px, py, xlen) == 0;
        } else {
            e->d.failed = true;
        }
        free(px);
        free(py);
        if (e->d.failed) return false;
        if (same) return true;
    }
    put_whole(e, y, ylen);
    e->nops++;
    return !e->d.failed;
}

wsfs_status wsfs_delta_encode_fs(const wsfs *base, const wsfs *child, uint8_t **out, size_t *len, wsfs_error *err) {
    *out = NULL;
    *len = 0;
    uint64_t blen = 0, clen = 0;
    if (!image_size(base, &blen) || !image_size(child, &clen))
        return ffail(err, WSFS_ERR_NOMEM, "wsfs delta: the image does not fit in memory");
    encoder e = {{NULL, 0, 0, false}, 0};
    wsfs_dbuf_grow(&e.d, WSFS_DELTA_HEADER);
    rx_diff(&base->inodes, &child->inodes, encode_inode, &e);
    if (e.d.failed) {
        free(e.d.p);
        return ffail(err, WSFS_ERR_NOMEM, "wsfs delta: out of memory");
    }
    wsfs_dbuf_header(&e.d, blen, clen, child->next_ino, child->ninodes, e.nops);
    *out = e.d.p;
    *len = e.d.len;
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}

/* ---- applying to a fork ------------------------------------------------------------------ */

typedef struct rd {
    const uint8_t *d;
    size_t len, pos;
    wsfs_error *err;
    wsfs_status code;
} rd;

static bool rfail(rd *r, wsfs_status code, const char *fmt, ...) {
    r->code = code;
    if (r->err) {
        r->err->code = code;
        int n = snprintf(r->err->message, sizeof r->err->message, "wsfs delta, byte %zu: ", r->pos);
        va_list ap;
        va_start(ap, fmt);
        if (n > 0 && (size_t)n < sizeof r->err->message)
            vsnprintf(r->err->message + n, sizeof r->err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool rneed(rd *r, uint64_t n, const char *what) {
    if (n > r->len - r->pos)
        return rfail(r, WSFS_ERR_MALFORMED, "truncated: %s needs %llu bytes, %zu left", what, (unsigned long long)n,
                     r->len - r->pos);
    return true;
}

/* Drops inode ino from fs's table (its bytes off the quota count). */
static bool drop(rd *r, wsfs *fs, uint64_t ino) {
    const wsfs_inode *in = fs_inode(fs, ino);
    wsfs_obj **slot = rx_slot(fs->fam, &fs->inodes, ino);
    if (!slot) return rfail(r, WSFS_ERR_NOMEM, "out of memory");
    if (in->type != WSFS_FILETYPE_DIRECTORY) fs->bytes -= in->size;
    obj_release(fs->fam, *slot);
    *slot = NULL;
    fs->ninodes--;
    return true;
}

static bool apply_file(rd *r, wsfs *fs, uint64_t ino, uint32_t k) {
    if (!rneed(r, WSFS_INODE_FIXED + 8, "a file's fields and size")) return false;
    const uint8_t *f = r->d + r->pos;
    const wsfs_inode *cur = fs_inode(fs, ino);
    if (!cur || cur->type != WSFS_FILETYPE_REGULAR_FILE)
        return rfail(r, WSFS_ERR_MALFORMED, "a file operation on inode %llu, not a file of the base",
                     (unsigned long long)ino);
    if (ri_le_get64(f) != ino || f[8] != WSFS_FILETYPE_REGULAR_FILE || f[9] || f[10] || f[11] || ri_le_get32(f + 20))
        return rfail(r, WSFS_ERR_MALFORMED, "inode %llu: the fields do not name it as a file",
                     (unsigned long long)ino);
    uint64_t size = ri_le_get64(f + WSFS_INODE_FIXED);
    if (size > ((uint64_t)1 << 32)) return rfail(r, WSFS_ERR_MALFORMED, "inode %llu: a size above 4 GiB",
                                                 (unsigned long long)ino);
    r->pos += WSFS_INODE_FIXED + 8;
    wsfs_errno e = WSFS_ESUCCESS;
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    if (!in) return rfail(r, WSFS_ERR_NOMEM, "out of memory");
    if (size != in->size && (e = file_set_size(fs, in, size)) != WSFS_ESUCCESS)
        return e == WSFS_ENOSPC ? rfail(r, WSFS_ERR_LIMIT, "inode %llu: %llu bytes exceed the quota",
                                        (unsigned long long)ino, (unsigned long long)size)
                                : rfail(r, WSFS_ERR_NOMEM, "out of memory");
    uint64_t prev_end = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (!rneed(r, WSFS_DELTA_RANGE_HEADER, "a range")) return false;
        uint64_t off = ri_le_get64(r->d + r->pos), n = ri_le_get64(r->d + r->pos + 8);
        if (n == 0 || off < prev_end || off > size || n > size - off)
            return rfail(r, WSFS_ERR_MALFORMED, "inode %llu: range %u is empty, out of order or past the size",
                         (unsigned long long)ino, i);
        r->pos += WSFS_DELTA_RANGE_HEADER;
        if (!rneed(r, n, "a range's bytes")) return false;
        size_t done = 0;
        if (wsfs_pwrite(fs, ino, r->d + r->pos, (size_t)n, off, &done) != WSFS_ESUCCESS)
            return rfail(r, WSFS_ERR_NOMEM, "out of memory");
        r->pos += (size_t)n;
        prev_end = off + n;
    }
    in = fs_inode(fs, ino); /* still the private copy: pwrite found it unshared */
    in->nlink = ri_le_get32(f + 12);
    in->pins = ri_le_get32(f + 16);
    in->atim = ri_le_get64(f + 24);
    in->mtim = ri_le_get64(f + 32);
    in->ctim = ri_le_get64(f + 40);
    in->parent = ri_le_get64(f + 48);
    return true;
}

static bool run_ops(rd *r, wsfs *fs, uint64_t nops) {
    uint64_t prev = 0;
    for (uint64_t i = 0; i < nops; i++) {
        if (!rneed(r, WSFS_DELTA_OP_HEADER, "an operation")) return false;
        const uint8_t *o = r->d + r->pos;
        uint64_t ino = ri_le_get64(o);
        uint8_t kind = o[8];
        uint32_t k = ri_le_get32(o + 12);
        if (o[9] || o[10] || o[11]) return rfail(r, WSFS_ERR_MALFORMED, "reserved bytes are not zero");
        if (i && ino <= prev) return rfail(r, WSFS_ERR_MALFORMED, "inode %llu is not after inode %llu",
                                           (unsigned long long)ino, (unsigned long long)prev);
        if (kind < WSFS_OP_REMOVED || kind > WSFS_OP_FILE)
            return rfail(r, WSFS_ERR_MALFORMED, "unknown operation %u", kind);
        if (k && kind != WSFS_OP_FILE) return rfail(r, WSFS_ERR_MALFORMED, "ranges on an operation other than a file's");
        prev = ino;
        r->pos += WSFS_DELTA_OP_HEADER;
        if (kind == WSFS_OP_REMOVED) {
            if (!fs_inode(fs, ino))
                return rfail(r, WSFS_ERR_MALFORMED, "removes inode %llu, which the base does not hold",
                             (unsigned long long)ino);
            if (!drop(r, fs, ino)) return false;
        } else if (kind == WSFS_OP_RECORD) {
            if (!rneed(r, 8, "a record's length")) return false;
            uint64_t l = ri_le_get64(r->d + r->pos);
            r->pos += 8;
            if (!rneed(r, l, "a record")) return false;
            if (l < 8 || ri_le_get64(r->d + r->pos) != ino)
                return rfail(r, WSFS_ERR_MALFORMED, "the record does not name inode %llu", (unsigned long long)ino);
            if (fs_inode(fs, ino) && !drop(r, fs, ino)) return false;
            wsfs_error pe;
            wsfs_status s = fs_parse_one(fs, r->d + r->pos, (size_t)l, &pe);
            if (s != WSFS_OK) return rfail(r, s, "inode %llu: %s", (unsigned long long)ino, pe.message);
            r->pos += (size_t)l;
        } else if (!apply_file(r, fs, ino, k)) {
            return false;
        }
    }
    return true;
}

wsfs_status wsfs_delta_apply_fs(const wsfs *base, const uint8_t *delta, size_t dlen, wsfs **out, wsfs_error *err) {
    *out = NULL;
    rd r = {.d = delta, .len = delta ? dlen : 0, .err = err, .code = WSFS_OK};
    if (!rneed(&r, WSFS_DELTA_HEADER, "the header")) return r.code;
    if (memcmp(delta, WSFS_DELTA_MAGIC, 4) || ri_le_get32(delta + 4) != WSFS_DELTA_VERSION)
        return rfail(&r, WSFS_ERR_MALFORMED, "not a workspace delta of version 1"), r.code;
    uint64_t blen = 0;
    if (!image_size(base, &blen)) return rfail(&r, WSFS_ERR_NOMEM, "out of memory"), r.code;
    if (ri_le_get64(delta + 8) != blen)
        return rfail(&r, WSFS_ERR_MALFORMED, "made against a base of %llu bytes, given one of %llu",
                     (unsigned long long)ri_le_get64(delta + 8), (unsigned long long)blen),
               r.code;
    uint64_t clen = ri_le_get64(delta + 16), counter = ri_le_get64(delta + 24), count = ri_le_get64(delta + 32),
             nops = ri_le_get64(delta + 40);
    if (counter == 0 || counter == UINT64_MAX)
        return rfail(&r, WSFS_ERR_MALFORMED, "the inode counter %llu is out of range", (unsigned long long)counter),
               r.code;
    r.pos = WSFS_DELTA_HEADER;
    wsfs *fs = wsfs_fork(base);
    if (!fs) return rfail(&r, WSFS_ERR_NOMEM, "out of memory"), r.code;
    fs->next_ino = counter;
    /* the quota holds for the result, not midway (an operation may grow a file before a
     * later one removes another) */
    uint64_t max_bytes = fs->lim.max_bytes;
    fs->lim.max_bytes = UINT64_MAX;
    bool ok = run_ops(&r, fs, nops);
    fs->lim.max_bytes = max_bytes;
    if (ok && fs->bytes > max_bytes)
        ok = rfail(&r, WSFS_ERR_LIMIT, "the result's %llu bytes exceed the quota of %llu",
                   (unsigned long long)fs->bytes, (unsigned long long)max_bytes);
    if (ok && r.pos != r.len) ok = rfail(&r, WSFS_ERR_MALFORMED, "%zu bytes left over", r.len - r.pos);
    uint64_t have = 0;
    if (ok && (!image_size(fs, &have) || have != clen || fs->ninodes != count))
        ok = rfail(&r, WSFS_ERR_MALFORMED, "the result is not the %llu bytes and %llu inodes the header declares",
                   (unsigned long long)clen, (unsigned long long)count);
    if (ok) {
        /* every inode below the counter, then the tree as the parser checks it */
        uint64_t key = 0;
        wsfs_obj *v;
        for (bool more = rx_next(&fs->inodes, 0, &key, &v); ok && more; more = rx_next(&fs->inodes, key + 1, &key, &v))
            if (key >= counter)
                ok = rfail(&r, WSFS_ERR_MALFORMED, "inode %llu is not below the counter %llu",
                           (unsigned long long)key, (unsigned long long)counter);
        if (ok && fs->ninodes == 0) ok = rfail(&r, WSFS_ERR_MALFORMED, "no root directory (inode 1)");
        wsfs_error te;
        wsfs_status s = ok ? fs_check_tree(fs, &te) : WSFS_OK;
        if (s != WSFS_OK) ok = rfail(&r, s, "the result: %s", te.message);
    }
    if (!ok) {
        wsfs_free(fs);
        return r.code;
    }
    *out = fs;
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}
