/*
 * Delta images (WSNP v2 + PRNT): only the memory pages that differ from a parent image.
 *
 * A delta is a full image's sections as they are (META, MODL, TBLS, GLBS, SEGS, unknown
 * optional ones) with MEMS rewritten to store only the changed pages (a stored page may
 * be all zero: it became zero), plus a required PRNT section naming the parent by the
 * SHA-256 of its bytes. Applying it rebuilds the full image with the same writer code
 * (snap_write_memory), so the result is byte for byte what a full snapshot wrote.
 *
 * The generic reader does not know PRNT and refuses it as an unknown required section:
 * nothing restores a delta as if it were a full image.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"
#include "workspace/wsfs.h"

#define MAX_SECTIONS 32

typedef struct raw_section {
    const uint8_t *tag;   /* 4 bytes */
    uint32_t flags;
    size_t at;            /* header offset */
    size_t len;           /* content length */
} raw_section;

static const uint8_t PRNT_TAG[4] = {'P', 'R', 'N', 'T'};

/* Header, checksum and the section headers' bounds: enough to find sections. The
 * contents are checked by ri_snap_read later. */
static bool walk(const uint8_t *data, size_t len, raw_section *secs, size_t *n, ri_snap_error *err) {
    *n = 0;
    if (!data || len < RI_SNAP_HEADER_BYTES + RI_SNAP_TRAILER_BYTES || memcmp(data, "WSNP", 4) != 0 ||
        data[4] != RI_SNAP_VERSION)
        return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot \u2014 not a WSNP v2 image");
    const uint8_t *trailer = data + len - RI_SNAP_TRAILER_BYTES;
    if (memcmp(trailer, "CSUM", 4) != 0 || ri_le_get64(trailer + 8) != RI_SNAP_CHECKSUM_BYTES ||
        ri_le_get32(trailer + 16) != ri_snap_crc32c(data, len - RI_SNAP_TRAILER_BYTES))
        return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot \u2014 checksum mismatch or no checksum section");
    size_t pos = RI_SNAP_HEADER_BYTES, end = len - RI_SNAP_TRAILER_BYTES;
    while (pos < end) {
        if (end - pos < RI_SNAP_SECTION_HEADER_BYTES || *n == MAX_SECTIONS)
            return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot \u2014 malformed sections");
        uint64_t clen = ri_le_get64(data + pos + 8);
        if (clen > end - pos - RI_SNAP_SECTION_HEADER_BYTES)
            return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot \u2014 a section runs past the end");
        raw_section *s = &secs[(*n)++];
        s->tag = data + pos;
        s->flags = ri_le_get32(data + pos + 4);
        s->at = pos;
        s->len = (size_t)clen;
        pos += RI_SNAP_SECTION_HEADER_BYTES + (size_t)clen;
    }
    return true;
}

static const raw_section *find_prnt(const raw_section *secs, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(secs[i].tag, PRNT_TAG, 4) == 0) return &secs[i];
    return NULL;
}

/* PRNT's content: parent hash and length, compression byte (0 zstd, 1 raw), reserved zeros. */
static bool read_prnt(const uint8_t *c, ri_snap_delta_info *info, ri_snap_error *err) {
    for (size_t k = 41; k < RI_SNAP_PARENT_BYTES; k++)
        if (c[k] || c[40] > 1) return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot \u2014 PRNT: reserved bytes set");
    memcpy(info->parent_sha256, c, RI_SNAP_SHA256_BYTES);
    info->parent_len = ri_le_get64(c + 32);
    info->compression = c[40] ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD;
    return true;
}

bool ri_snap_is_delta(const uint8_t *data, size_t len, ri_snap_delta_info *info) {
    raw_section secs[MAX_SECTIONS];
    size_t n;
    if (!walk(data, len, secs, &n, NULL)) return false;
    const raw_section *p = find_prnt(secs, n);
    if (!p || p->len != RI_SNAP_PARENT_BYTES) return false;
    if (info) {
        const uint8_t *c = data + p->at + RI_SNAP_SECTION_HEADER_BYTES;
        memcpy(info->parent_sha256, c, RI_SNAP_SHA256_BYTES);
        info->parent_len = ri_le_get64(c + 32);
        info->compression = c[40] ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD;
    }
    return true;
}

/* Memory `index` of img as pages * 64 KiB bytes (pages not stored are zero). */
static uint8_t *expand(const ri_snap_image *img, uint32_t index, ri_snap_error *err) {
    const ri_snap_memory *m = &img->memories[index];
    size_t bytes = (size_t)m->pages * RI_SNAP_PAGE_BYTES;
    uint8_t *buf = calloc(bytes ? bytes : 1, 1);
    if (!buf) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory expanding memory %u", index), NULL;
    const uint8_t *content;
    uint8_t *owned;
    if (!snap_inflate(m, index, &content, &owned, err)) {
        free(buf);
        return NULL;
    }
    size_t k = 0;
    for (uint32_t p = 0; p < m->pages; p++)
        if (snap_bit(m->bitmap, p))
            memcpy(buf + (size_t)p * RI_SNAP_PAGE_BYTES, content + (k++) * RI_SNAP_PAGE_BYTES, RI_SNAP_PAGE_BYTES);
    free(owned);
    return buf;
}

static ri_memtype type_of(const ri_snap_memory *m) {
    ri_memtype t;
    memset(&t, 0, sizeof t);
    t.limits.min = m->pages;
    t.limits.max = m->max_pages;
    t.limits.has_max = m->has_max;
    t.is64 = m->is64;
    return t;
}

static bool same_shape(const ri_snap_image *parent, const ri_snap_image *img, ri_snap_error *err) {
    if (memcmp(parent->meta.module_sha256, img->meta.module_sha256, RI_SNAP_SHA256_BYTES) != 0)
        return snap_fail(err, RI_SNAP_ERR_MISMATCH, "the parent image was taken with another module");
    if (parent->nmemories != img->nmemories)
        return snap_fail(err, RI_SNAP_ERR_MISMATCH, "the parent image has %u memories, the image %u",
                         parent->nmemories, img->nmemories);
    return true;
}

/* Copies image's sections into a new image, with MEMS replaced by write_mems(ctx) (if
 * not NULL), WSFS by the section in wsfs (if not NULL) and PRNT left out; then appends
 * prnt (if not NULL) and the checksum. */
typedef bool (*mems_writer)(snap_buf *b, void *ctx, ri_snap_error *err);

static bool rewrite(const uint8_t *image, const raw_section *secs, size_t n, mems_writer write_mems, void *ctx,
                    const snap_buf *wsfs, const uint8_t *prnt, uint8_t **out, size_t *out_len, ri_snap_error *err) {
    snap_buf b;
    memset(&b, 0, sizeof b);
    snap_buf_put(&b, image, RI_SNAP_HEADER_BYTES);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        if (memcmp(secs[i].tag, PRNT_TAG, 4) == 0) continue;
        if (write_mems && memcmp(secs[i].tag, "MEMS", 4) == 0) {
            size_t at = snap_buf_begin_section(&b, SNAP_TAG_MEMS, SNAP_FLAG_REQUIRED);
            ok = write_mems(&b, ctx, err);
            snap_buf_end_section(&b, at);
            continue;
        }
        if (wsfs && memcmp(secs[i].tag, "WSFS", 4) == 0) {
            snap_buf_put(&b, wsfs->data, wsfs->len);
            continue;
        }
        snap_buf_put(&b, image + secs[i].at, RI_SNAP_SECTION_HEADER_BYTES + secs[i].len);
    }
    if (ok && prnt) {
        snap_buf_put(&b, PRNT_TAG, 4);
        snap_buf_u32(&b, SNAP_FLAG_REQUIRED);
        snap_buf_u64(&b, RI_SNAP_PARENT_BYTES);
        snap_buf_put(&b, prnt, RI_SNAP_PARENT_BYTES);
    }
    if (ok && !b.failed) {
        uint32_t crc = ri_snap_crc32c(b.data, b.len);
        size_t at = snap_buf_begin_section(&b, SNAP_TAG_CSUM, SNAP_FLAG_REQUIRED);
        snap_buf_u32(&b, crc);
        snap_buf_end_section(&b, at);
    }
    if (ok && b.failed) ok = snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing an image");
    if (!ok) {
        snap_buf_free(&b);
        return false;
    }
    *out = b.data;
    *out_len = b.len;
    return true;
}

/* ---- the workspace ----------------------------------------------------------------------- */

static bool wsfs_fail(ri_snap_error *err, const wsfs_error *we) {
    return snap_fail(err, we->code == WSFS_ERR_NOMEM ? RI_SNAP_ERR_NOMEM : RI_SNAP_ERR_CORRUPT,
                     "Invalid snapshot \u2014 WSFS: %s", we->message);
}

/* Section WSFS of a delta from parent to img (both whole): the workspace delta. */
static bool wsfs_delta_section(const ri_snap_image *parent, const ri_snap_image *img, bool zstd, snap_buf *sec,
                               ri_snap_error *err) {
    uint8_t *base = NULL, *child = NULL, *d = NULL;
    size_t blen, clen, dlen;
    wsfs_error we;
    bool ok = ri_snap_workspace(parent, &base, &blen, err) && ri_snap_workspace(img, &child, &clen, err);
    if (ok && wsfs_delta_encode(base, blen, child, clen, &d, &dlen, &we) != WSFS_OK) ok = wsfs_fail(err, &we);
    if (ok && !snap_write_wsfs(sec, d, dlen, zstd, SNAP_WSFS_DELTA))
        ok = snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing a workspace delta");
    free(base);
    free(child);
    free(d);
    return ok;
}

/* Section WSFS of the whole workspace that delta image d (read with ri_snap_read, its WSFS
 * a workspace delta) and its parent give: the parent's workspace with the delta applied. */
static bool wsfs_whole_section(const ri_snap_image *parent, const ri_snap_image *d, bool zstd, snap_buf *sec,
                               ri_snap_error *err) {
    if (!parent->has_wasi)
        return snap_fail(err, RI_SNAP_ERR_MISMATCH,
                         "Snapshot parent mismatch \u2014 the delta's workspace is stored against its parent's, but "
                         "the parent image holds no workspace");
    uint8_t *base = NULL, *delta = NULL, *child = NULL;
    size_t blen, dlen, clen;
    wsfs_error we;
    bool ok = ri_snap_workspace(parent, &base, &blen, err) && snap_wsfs_bytes(d, &delta, &dlen, err);
    if (ok && wsfs_delta_apply(base, blen, delta, dlen, &child, &clen, &we) != WSFS_OK) ok = wsfs_fail(err, &we);
    if (ok && !snap_write_wsfs(sec, child, clen, zstd, SNAP_WSFS_WHOLE))
        ok = snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing a workspace");
    free(base);
    free(delta);
    free(child);
    return ok;
}

/* ---- encode ------------------------------------------------------------------------------ */

typedef struct encode_ctx {
    const ri_snap_image *parent, *image;
    ri_snap_compression compression;
} encode_ctx;

static bool write_delta_mems(snap_buf *b, void *vctx, ri_snap_error *err) {
    encode_ctx *c = vctx;
    snap_buf_u32(b, c->image->nmemories);
    for (uint32_t i = 0; i < c->image->nmemories; i++) {
        const ri_snap_memory *m = &c->image->memories[i];
        uint32_t parent_pages = c->parent->memories[i].pages;
        uint8_t *now = expand(c->image, i, err);
        uint8_t *before = now ? expand(c->parent, i, err) : NULL;
        uint8_t *select = before ? calloc(((size_t)m->pages + 7) / 8 + 1, 1) : NULL;
        bool ok = select != NULL;
        if (before && !select) snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory comparing memory %u", i);
        for (uint32_t p = 0; ok && p < m->pages; p++) {
            const uint8_t *page = now + (size_t)p * RI_SNAP_PAGE_BYTES;
            bool differs = p < parent_pages ? memcmp(page, before + (size_t)p * RI_SNAP_PAGE_BYTES, RI_SNAP_PAGE_BYTES) != 0
                                            : !snap_page_is_zero(page);
            if (differs) select[p / 8] |= (uint8_t)(1u << (p % 8));
        }
        ok = ok && snap_write_memory_pages(b, now, m->pages, type_of(m), c->compression, i, select, err);
        free(select);
        free(before);
        free(now);
        if (!ok) return false;
    }
    return true;
}

bool ri_snap_delta_encode(const uint8_t *parent, size_t parent_len, const uint8_t *image, size_t image_len,
                          ri_snap_compression compression, uint8_t **out, size_t *out_len, ri_snap_error *err) {
    snap_ok(err);
    if (!out || !out_len) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_delta_encode: a NULL argument");
    *out = NULL;
    *out_len = 0;
    ri_snap_image p, img;
    if (!ri_snap_read(parent, parent_len, &p, err)) return false; /* a delta as parent: unknown PRNT */
    if (!ri_snap_read(image, image_len, &img, err)) {
        ri_snap_image_free(&p);
        return false;
    }
    raw_section secs[MAX_SECTIONS];
    size_t n;
    uint8_t prnt[RI_SNAP_PARENT_BYTES];
    memset(prnt, 0, sizeof prnt);
    bool ok = same_shape(&p, &img, err) && walk(image, image_len, secs, &n, err) &&
              ri_snap_sha256(parent, parent_len, prnt);
    if (ok) {
        ri_le_put64(prnt + 32, (uint64_t)parent_len);
        prnt[40] = compression == RI_SNAP_COMPRESS_NONE ? 1 : 0;
        encode_ctx ctx = {&p, &img, compression};
        /* A workspace that the parent has too travels as the changes from the parent's. */
        snap_buf ws;
        memset(&ws, 0, sizeof ws);
        bool has_ws = p.has_wasi && img.has_wasi;
        if (has_ws) ok = wsfs_delta_section(&p, &img, compression == RI_SNAP_COMPRESS_ZSTD, &ws, err);
        if (ok) ok = rewrite(image, secs, n, write_delta_mems, &ctx, has_ws ? &ws : NULL, prnt, out, out_len, err);
        snap_buf_free(&ws);
    }
    ri_snap_image_free(&p);
    ri_snap_image_free(&img);
    return ok;
}

/* ---- apply ------------------------------------------------------------------------------- */

typedef struct apply_ctx {
    const ri_snap_image *parent, *delta;
    ri_snap_compression compression;
} apply_ctx;

static bool write_full_mems(snap_buf *b, void *vctx, ri_snap_error *err) {
    apply_ctx *c = vctx;
    snap_buf_u32(b, c->delta->nmemories);
    for (uint32_t i = 0; i < c->delta->nmemories; i++) {
        const ri_snap_memory *d = &c->delta->memories[i];
        uint32_t parent_pages = c->parent->memories[i].pages;
        uint8_t *changed = expand(c->delta, i, err);
        uint8_t *base = changed ? expand(c->parent, i, err) : NULL;
        if (!base) {
            free(changed);
            return false;
        }
        /* Pages the delta does not store are the parent's (zero past its size). */
        for (uint32_t p = 0; p < d->pages && p < parent_pages; p++)
            if (!snap_bit(d->bitmap, p))
                memcpy(changed + (size_t)p * RI_SNAP_PAGE_BYTES, base + (size_t)p * RI_SNAP_PAGE_BYTES,
                       RI_SNAP_PAGE_BYTES);
        bool ok = snap_write_memory(b, changed, d->pages, type_of(d), c->compression, i, err);
        free(base);
        free(changed);
        if (!ok) return false;
    }
    return true;
}

bool ri_snap_delta_apply(const uint8_t *parent, size_t parent_len, const uint8_t *delta, size_t delta_len,
                         uint8_t **out, size_t *out_len, ri_snap_error *err) {
    snap_ok(err);
    if (!out || !out_len) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_delta_apply: a NULL argument");
    *out = NULL;
    *out_len = 0;
    raw_section secs[MAX_SECTIONS];
    size_t n;
    if (!walk(delta, delta_len, secs, &n, err)) return false;
    const raw_section *pr = find_prnt(secs, n);
    if (!pr || pr->len != RI_SNAP_PARENT_BYTES)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "not a delta image (no PRNT section)");
    const uint8_t *c = delta + pr->at + RI_SNAP_SECTION_HEADER_BYTES;
    uint8_t digest[RI_SNAP_SHA256_BYTES];
    if (!parent || !ri_snap_sha256(parent, parent_len, digest))
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "cannot hash the parent image");
    if (memcmp(digest, c, RI_SNAP_SHA256_BYTES) != 0 || ri_le_get64(c + 32) != (uint64_t)parent_len) {
        char want[2 * RI_SNAP_SHA256_BYTES + 1], have[2 * RI_SNAP_SHA256_BYTES + 1];
        ri_snap_hex(c, want);
        ri_snap_hex(digest, have);
        return snap_fail(err, RI_SNAP_ERR_MISMATCH,
                         "Snapshot parent mismatch \u2014 the delta was taken on parent sha256:%s, the image given "
                         "is sha256:%s",
                         want, have);
    }
    ri_snap_delta_info info;
    if (!read_prnt(c, &info, err)) return false;
    /* The delta without PRNT reads as an ordinary image (its MEMS holds the changed
     * pages), which checks every content. */
    uint8_t *plain;
    size_t plain_len;
    if (!rewrite(delta, secs, n, NULL, NULL, NULL, NULL, &plain, &plain_len, err)) return false;
    ri_snap_image d, p;
    bool ok = ri_snap_read(plain, plain_len, &d, err);
    if (ok && !ri_snap_read(parent, parent_len, &p, err)) {
        ri_snap_image_free(&d);
        ok = false;
    }
    if (ok) {
        raw_section psecs[MAX_SECTIONS];
        size_t pn;
        apply_ctx ctx = {&p, &d, c[40] ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD};
        snap_buf ws;
        memset(&ws, 0, sizeof ws);
        bool has_ws = d.has_wasi && d.workspace_delta;
        ok = same_shape(&p, &d, err) && walk(plain, plain_len, psecs, &pn, err) &&
             (!has_ws || wsfs_whole_section(&p, &d, ctx.compression == RI_SNAP_COMPRESS_ZSTD, &ws, err)) &&
             rewrite(plain, psecs, pn, write_full_mems, &ctx, has_ws ? &ws : NULL, NULL, out, out_len, err);
        snap_buf_free(&ws);
        ri_snap_image_free(&p);
        ri_snap_image_free(&d);
    }
    free(plain);
    return ok;
}

/* ---- reading one alone -------------------------------------------------------------------- */

bool ri_snap_delta_read(const uint8_t *data, size_t len, ri_snap_delta_info *info, ri_snap_image *out,
                        uint8_t **backing, ri_snap_error *err) {
    return ri_snap_delta_read_with(NULL, 0, data, len, info, out, backing, err);
}

bool ri_snap_delta_read_with(const uint8_t *parent, size_t parent_len, const uint8_t *data, size_t len,
                             ri_snap_delta_info *info, ri_snap_image *out, uint8_t **backing, ri_snap_error *err) {
    snap_ok(err);
    if (!info || !out || !backing) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_delta_read: a NULL argument");
    memset(out, 0, sizeof *out);
    *backing = NULL;
    raw_section secs[MAX_SECTIONS];
    size_t n;
    if (!walk(data, len, secs, &n, err)) return false;
    const raw_section *pr = find_prnt(secs, n);
    if (!pr) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "not a delta image (no PRNT section)");
    if (pr->len != RI_SNAP_PARENT_BYTES)
        return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot \u2014 PRNT: %zu bytes, expected %u", pr->len,
                         RI_SNAP_PARENT_BYTES);
    if (!read_prnt(data + pr->at + RI_SNAP_SECTION_HEADER_BYTES, info, err)) return false;
    /* Without PRNT the delta reads as an ordinary image whose MEMS holds the stored pages. */
    uint8_t *plain;
    size_t plain_len;
    if (!rewrite(data, secs, n, NULL, NULL, NULL, NULL, &plain, &plain_len, err)) return false;
    if (!ri_snap_read(plain, plain_len, out, err)) {
        free(plain);
        return false;
    }
    if (parent && out->has_wasi && out->workspace_delta) {
        /* The whole workspace, raw (a restore decompresses nothing it need not). */
        ri_snap_image p;
        snap_buf ws;
        memset(&ws, 0, sizeof ws);
        raw_section psecs[MAX_SECTIONS];
        size_t pn;
        uint8_t *whole = NULL;
        size_t whole_len = 0;
        bool ok = ri_snap_read(parent, parent_len, &p, err);
        if (ok) {
            ok = wsfs_whole_section(&p, out, false, &ws, err) && walk(plain, plain_len, psecs, &pn, err) &&
                 rewrite(plain, psecs, pn, NULL, NULL, &ws, NULL, &whole, &whole_len, err);
            ri_snap_image_free(&p);
        }
        snap_buf_free(&ws);
        ri_snap_image_free(out);
        free(plain);
        plain = whole;
        if (!ok || !ri_snap_read(whole, whole_len, out, err)) {
            free(whole);
            memset(out, 0, sizeof *out);
            return false;
        }
    }
    *backing = plain;
    return true;
}
