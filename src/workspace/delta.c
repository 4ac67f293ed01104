/*
 * A workspace delta (docs/SNAPSHOT_FORMAT.md "WSFS in a delta"): the canonical image of a
 * child workspace as the changes from its base's canonical image. Inodes removed, inodes
 * added or changed as whole records, and regular files that stay files as their new fixed
 * fields and size plus only the byte ranges that differ. Applying it to the base gives the
 * child's canonical bytes exactly. The parser believes nothing: every length is backed by
 * the bytes left, operations come in strictly increasing inode order, each names what the
 * base holds, and the result is exactly the length and inode count the header declares.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

#define DELTA_MAGIC WSFS_DELTA_MAGIC
#define DELTA_VERSION WSFS_DELTA_VERSION
#define DELTA_HEADER WSFS_DELTA_HEADER
#define OP_HEADER WSFS_DELTA_OP_HEADER
#define RANGE_HEADER WSFS_DELTA_RANGE_HEADER
#define MAX_RESULT ((uint64_t)1 << 32) /* a declared result above 4 GiB is refused */
#define GAP WSFS_DELTA_GAP

enum { OP_REMOVED = WSFS_OP_REMOVED, OP_RECORD = WSFS_OP_RECORD, OP_FILE = WSFS_OP_FILE };

static wsfs_status dfail(wsfs_error *err, wsfs_status code, size_t pos, const char *fmt, ...) {
    if (err) {
        err->code = code;
        int n = snprintf(err->message, sizeof err->message, "wsfs delta, byte %zu: ", pos);
        va_list ap;
        va_start(ap, fmt);
        if (n > 0 && (size_t)n < sizeof err->message)
            vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ---- the records of an image ------------------------------------------------------------- */

typedef struct records {
    wsfs_record *r;
    size_t n;
} records;

static wsfs_status index_image(const uint8_t *d, size_t len, records *out, const char *which, wsfs_error *err) {
    out->r = NULL;
    out->n = 0;
    if (!d || len < WSFS_HEADER_SIZE || memcmp(d, WSFS_MAGIC, 4) || ri_le_get32(d + 4) != WSFS_VERSION)
        return dfail(err, WSFS_ERR_MALFORMED, 0, "the %s is not a WSFS image of version 1", which);
    uint64_t count = ri_le_get64(d + 16);
    if (count > (len - WSFS_HEADER_SIZE) / (WSFS_INODE_FIXED + 4))
        return dfail(err, WSFS_ERR_MALFORMED, 0, "the %s declares more inodes than its bytes hold", which);
    out->r = malloc(count ? (size_t)count * sizeof *out->r : 1);
    if (!out->r) return dfail(err, WSFS_ERR_NOMEM, 0, "out of memory");
    size_t pos = WSFS_HEADER_SIZE;
    for (uint64_t i = 0; i < count; i++) {
        const char *why = wsfs_record_at(d, len, pos, false, &out->r[i]);
        if (!why && i && out->r[i].ino <= out->r[i - 1].ino) why = "inodes out of order";
        if (why) {
            free(out->r);
            out->r = NULL;
            return dfail(err, WSFS_ERR_MALFORMED, pos, "the %s: %s", which, why);
        }
        pos = out->r[i].end;
    }
    if (pos != len) {
        free(out->r);
        out->r = NULL;
        return dfail(err, WSFS_ERR_MALFORMED, pos, "the %s has bytes after its last inode", which);
    }
    out->n = (size_t)count;
    return WSFS_OK;
}

/* ---- encoding ---------------------------------------------------------------------------- */

typedef wsfs_dbuf dbuf;

uint8_t *wsfs_dbuf_grow(dbuf *b, size_t n) {
    if (b->failed) return NULL;
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) return b->failed = true, NULL;
            cap *= 2;
        }
        uint8_t *p = realloc(b->p, cap);
        if (!p) return b->failed = true, NULL;
        b->p = p;
        b->cap = cap;
    }
    uint8_t *at = b->p + b->len;
    b->len += n;
    return at;
}

#define grow wsfs_dbuf_grow
#define put_op wsfs_dbuf_op
#define put_bytes wsfs_dbuf_put

void wsfs_dbuf_op(dbuf *b, uint64_t ino, uint8_t kind, uint32_t k) {
    uint8_t *p = grow(b, OP_HEADER);
    if (!p) return;
    ri_le_put64(p, ino);
    p[8] = kind;
    p[9] = p[10] = p[11] = 0;
    ri_le_put32(p + 12, k);
}

void wsfs_dbuf_put(dbuf *b, const void *src, size_t n) {
    uint8_t *p = grow(b, n);
    if (p && n) memcpy(p, src, n);
}

void wsfs_dbuf_header(dbuf *b, uint64_t blen, uint64_t clen, uint64_t counter, uint64_t count, uint64_t nops) {
    uint8_t *h = b->p;
    memcpy(h, DELTA_MAGIC, 4);
    ri_le_put32(h + 4, DELTA_VERSION);
    ri_le_put64(h + 8, blen);
    ri_le_put64(h + 16, clen);
    ri_le_put64(h + 24, counter);
    ri_le_put64(h + 32, count);
    ri_le_put64(h + 40, nops);
}

static bool all_zero(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

/* Whether byte i of the new content equals the base's there (zero past the base's end). */
static bool same_at(const uint8_t *bc, uint64_t bs, const uint8_t *cc, uint64_t i) {
    return cc[i] == (i < bs ? bc[i] : 0);
}

/* A file that stays a file: fixed fields, new size, the ranges that differ. */
static void encode_file(dbuf *b, const uint8_t *base, const wsfs_record *br, const uint8_t *child,
                        const wsfs_record *cr) {
    const uint8_t *bc = base + br->content, *cc = child + cr->content;
    uint64_t bs = br->size, cs = cr->size;
    size_t op = b->len;
    put_op(b, cr->ino, OP_FILE, 0);
    put_bytes(b, child + cr->start, WSFS_INODE_FIXED);
    uint8_t *sz = grow(b, 8);
    if (sz) ri_le_put64(sz, cs);
    uint32_t k = 0;
    uint64_t i = 0;
    while (i < cs) {
        /* Skip equal bytes a block at a time where both sides have them. */
        if (i + 64 <= cs && i + 64 <= bs && memcmp(bc + i, cc + i, 64) == 0) {
            i += 64;
            continue;
        }
        if (i + 64 <= cs && i >= bs && all_zero(cc + i, 64)) {
            i += 64;
            continue;
        }
        if (same_at(bc, bs, cc, i)) {
            i++;
            continue;
        }
        uint64_t start = i, end = i + 1, run = 0;
        for (uint64_t j = i + 1; j < cs && run < GAP; j++) {
            if (same_at(bc, bs, cc, j)) run++;
            else run = 0, end = j + 1;
        }
        uint8_t *h = grow(b, RANGE_HEADER);
        if (h) ri_le_put64(h, start), ri_le_put64(h + 8, end - start);
        put_bytes(b, cc + start, (size_t)(end - start));
        k++;
        i = end;
    }
    if (!b->failed) ri_le_put32(b->p + op + 12, k);
}

wsfs_status wsfs_delta_encode(const uint8_t *base, size_t blen, const uint8_t *child, size_t clen, uint8_t **out,
                              size_t *len, wsfs_error *err) {
    *out = NULL;
    *len = 0;
    records br, cr;
    wsfs_status s = index_image(base, blen, &br, "base", err);
    if (s != WSFS_OK) return s;
    if ((s = index_image(child, clen, &cr, "child", err)) != WSFS_OK) {
        free(br.r);
        return s;
    }
    dbuf b = {NULL, 0, 0, false};
    uint8_t *h = grow(&b, DELTA_HEADER);
    uint64_t nops = 0;
    size_t i = 0, j = 0;
    while (i < br.n || j < cr.n) {
        const wsfs_record *x = i < br.n ? &br.r[i] : NULL, *y = j < cr.n ? &cr.r[j] : NULL;
        if (x && (!y || x->ino < y->ino)) {
            put_op(&b, x->ino, OP_REMOVED, 0);
            i++;
        } else if (!x || y->ino < x->ino) {
            put_op(&b, y->ino, OP_RECORD, 0);
            uint8_t *l = grow(&b, 8);
            if (l) ri_le_put64(l, y->end - y->start);
            put_bytes(&b, child + y->start, y->end - y->start);
            j++;
        } else {
            i++, j++;
            if (x->end - x->start == y->end - y->start && !memcmp(base + x->start, child + y->start, x->end - x->start))
                continue;
            if (x->type == WSFS_FILETYPE_REGULAR_FILE && y->type == WSFS_FILETYPE_REGULAR_FILE) {
                encode_file(&b, base, x, child, y);
            } else {
                put_op(&b, y->ino, OP_RECORD, 0);
                uint8_t *l = grow(&b, 8);
                if (l) ri_le_put64(l, y->end - y->start);
                put_bytes(&b, child + y->start, y->end - y->start);
            }
        }
        nops++;
    }
    free(br.r);
    free(cr.r);
    if (b.failed || !h) {
        free(b.p);
        return dfail(err, WSFS_ERR_NOMEM, 0, "out of memory");
    }
    wsfs_dbuf_header(&b, blen, clen, ri_le_get64(child + 8), ri_le_get64(child + 16), nops); /* the child's counter, count */
    *out = b.p;
    *len = b.len;
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}

/* ---- applying ----------------------------------------------------------------------------- */

typedef struct applier {
    const uint8_t *base, *d;
    size_t dlen, pos;
    const records *br;
    uint8_t *out; /* NULL: measuring */
    uint64_t olen, count;
    wsfs_error *err;
} applier;

static void emit(applier *a, const void *src, size_t n) {
    if (a->out && n) memcpy(a->out + a->olen, src, n);
    a->olen += n;
}

static bool need(applier *a, uint64_t n, const char *what) {
    if (n <= a->dlen - a->pos) return true;
    dfail(a->err, WSFS_ERR_MALFORMED, a->pos, "truncated: %s needs %llu bytes, %zu left", what,
          (unsigned long long)n, a->dlen - a->pos);
    return false;
}

static bool bad(applier *a, const char *fmt, unsigned long long v) {
    dfail(a->err, WSFS_ERR_MALFORMED, a->pos, fmt, v);
    return false;
}

/* A file op against base record x: fixed fields, size, ranges. */
static bool apply_file(applier *a, uint64_t ino, uint32_t k, const wsfs_record *x) {
    if (!need(a, WSFS_INODE_FIXED + 8, "a file's fields")) return false;
    const uint8_t *fixed = a->d + a->pos;
    if (ri_le_get64(fixed) != ino || fixed[8] != WSFS_FILETYPE_REGULAR_FILE)
        return bad(a, "file operation on inode %llu: its fields name another inode or type", ino);
    uint64_t size = ri_le_get64(fixed + WSFS_INODE_FIXED);
    if (size > MAX_RESULT) return bad(a, "file operation on inode %llu: a size above 4 GiB", ino);
    a->pos += WSFS_INODE_FIXED + 8;
    emit(a, fixed, WSFS_INODE_FIXED);
    uint8_t sz[8];
    ri_le_put64(sz, size);
    emit(a, sz, 8);
    uint64_t at = a->olen, keep = x->size < size ? x->size : size;
    if (a->out) {
        memcpy(a->out + at, a->base + x->content, (size_t)keep);
        memset(a->out + at + keep, 0, (size_t)(size - keep));
    }
    a->olen += size;
    uint64_t next = 0;
    for (uint32_t r = 0; r < k; r++) {
        if (!need(a, RANGE_HEADER, "a range")) return false;
        uint64_t off = ri_le_get64(a->d + a->pos), n = ri_le_get64(a->d + a->pos + 8);
        if (n == 0 || off < next || off > size || n > size - off)
            return bad(a, "file operation on inode %llu: a range that is empty, out of order or past the size", ino);
        a->pos += RANGE_HEADER;
        if (!need(a, n, "a range's bytes")) return false;
        if (a->out) memcpy(a->out + at + off, a->d + a->pos, (size_t)n);
        a->pos += (size_t)n;
        next = off + n;
    }
    return true;
}

static bool apply_record(applier *a, uint64_t ino) {
    if (!need(a, 8, "a record's length")) return false;
    uint64_t n = ri_le_get64(a->d + a->pos);
    a->pos += 8;
    if (!need(a, n, "a record")) return false;
    wsfs_record r;
    const char *why = n ? wsfs_record_at(a->d + a->pos, (size_t)n, 0, false, &r) : "an empty record";
    if (why || r.end != n) return bad(a, "record of inode %llu is not one well-formed inode record", ino);
    if (r.ino != ino) return bad(a, "record under inode %llu names another inode", ino);
    emit(a, a->d + a->pos, (size_t)n);
    a->pos += (size_t)n;
    return true;
}

static bool run(applier *a) {
    const uint8_t *d = a->d;
    a->pos = DELTA_HEADER;
    a->olen = WSFS_HEADER_SIZE;
    a->count = 0;
    if (a->out) memcpy(a->out, a->base, 8), memcpy(a->out + 8, d + 24, 16);
    uint64_t nops = ri_le_get64(d + 40), prev = 0;
    size_t i = 0;
    for (uint64_t o = 0; o < nops; o++) {
        if (!need(a, OP_HEADER, "an operation")) return false;
        uint64_t ino = ri_le_get64(d + a->pos);
        uint8_t kind = d[a->pos + 8];
        uint32_t k = ri_le_get32(d + a->pos + 12);
        if (d[a->pos + 9] || d[a->pos + 10] || d[a->pos + 11])
            return bad(a, "operation on inode %llu: reserved bytes are not zero", ino);
        if (ino == 0 || (o && ino <= prev)) return bad(a, "operation on inode %llu is not after the previous one", ino);
        if (kind != OP_FILE && k) return bad(a, "operation on inode %llu: ranges on an operation without any", ino);
        prev = ino;
        a->pos += OP_HEADER;
        for (; i < a->br->n && a->br->r[i].ino < ino; i++, a->count++)
            emit(a, a->base + a->br->r[i].start, a->br->r[i].end - a->br->r[i].start);
        const wsfs_record *x = i < a->br->n && a->br->r[i].ino == ino ? &a->br->r[i] : NULL;
        if (x) i++;
        bool ok;
        if (kind == OP_REMOVED) {
            if (!x) return bad(a, "removes inode %llu, which the base does not hold", ino);
            continue;
        } else if (kind == OP_RECORD) {
            ok = apply_record(a, ino);
        } else if (kind == OP_FILE) {
            ok = (x && x->type == WSFS_FILETYPE_REGULAR_FILE) ||
                 bad(a, "file operation on inode %llu, which is not a file of the base", ino);
            ok = ok && apply_file(a, ino, k, x);
        } else {
            ok = bad(a, "unknown operation %llu", kind);
        }
        if (!ok) return false;
        a->count++;
        if (a->olen > MAX_RESULT) return bad(a, "the result exceeds %llu bytes", MAX_RESULT);
    }
    for (; i < a->br->n; i++, a->count++)
        emit(a, a->base + a->br->r[i].start, a->br->r[i].end - a->br->r[i].start);
    if (a->pos != a->dlen) return bad(a, "%llu bytes left over after the last operation", a->dlen - a->pos);
    if (a->olen != ri_le_get64(d + 16))
        return bad(a, "the result is %llu bytes, not the length the header declares", a->olen);
    if (a->count != ri_le_get64(d + 32))
        return bad(a, "the result holds %llu inodes, not the count the header declares", a->count);
    return true;
}

wsfs_status wsfs_delta_apply(const uint8_t *base, size_t blen, const uint8_t *delta, size_t dlen, uint8_t **out,
                             size_t *len, wsfs_error *err) {
    *out = NULL;
    *len = 0;
    if (!delta || dlen < DELTA_HEADER) return dfail(err, WSFS_ERR_MALFORMED, 0, "truncated: the header needs 48 bytes");
    if (memcmp(delta, DELTA_MAGIC, 4)) return dfail(err, WSFS_ERR_MALFORMED, 0, "not a workspace delta (bad magic)");
    if (ri_le_get32(delta + 4) != DELTA_VERSION)
        return dfail(err, WSFS_ERR_MALFORMED, 4, "version %u is not supported (1 is)", ri_le_get32(delta + 4));
    if (ri_le_get64(delta + 8) != blen)
        return dfail(err, WSFS_ERR_MALFORMED, 8, "made against a base of %llu bytes, given one of %zu",
                     (unsigned long long)ri_le_get64(delta + 8), blen);
    if (ri_le_get64(delta + 16) > MAX_RESULT || ri_le_get64(delta + 16) > SIZE_MAX)
        return dfail(err, WSFS_ERR_MALFORMED, 16, "declares a result above 4 GiB");
    records br;
    wsfs_status s = index_image(base, blen, &br, "base", err);
    if (s != WSFS_OK) return s;
    applier a = {base, delta, dlen, 0, &br, NULL, 0, 0, err};
    if (!run(&a)) { /* measured and checked before anything is allocated for the result */
        free(br.r);
        return WSFS_ERR_MALFORMED;
    }
    a.out = malloc(a.olen);
    if (!a.out) {
        free(br.r);
        return dfail(err, WSFS_ERR_NOMEM, 0, "out of memory (%llu bytes)", (unsigned long long)a.olen);
    }
    bool ok = run(&a);
    free(br.r);
    RI_ASSERT(ok, "W7");
    (void)ok;
    *out = a.out;
    *len = (size_t)a.olen;
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}
