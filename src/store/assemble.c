/*
 * A manifest and its blobs back into a WSNP v2 image, exactly as it went in: the sections
 * in the image's order with their flags (the writer's, META, [RIMD], [MODL], MEMS, TBLS,
 * GLBS, SEGS, CSUM, unless the manifest records another layout), the sections the store
 * does not rebuild (FRMS, unknown ones) as they were, payloads raw, or zstd with the
 * writer's parameters fed one page at a time (and raw when zstd does not make them
 * smaller), so an image that went through the store comes out byte for byte as it went
 * in. RIMD (the metadata, on request) goes right after META; MODL, when asked for and the
 * image did not have it, right before MEMS, where the writer puts it.
 *
 * Every page comes from a blob verified against its hash, or from the cache when the
 * cache holds bytes with that very hash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "store_internal.h"

#define FLAG_REQUIRED 1u
#define ENC_RAW 0u
#define ENC_ZSTD 1u
#define ABORT_EVERY 16u

static size_t begin_section(ri_buf *b, const char tag[4], uint32_t flags) {
    size_t at = b->len;
    ri_buf_put(b, tag, 4);
    ri_buf_u32(b, flags);
    ri_buf_u64(b, 0);
    return at;
}

static void end_section(ri_buf *b, size_t at) {
    if (!b->failed) ri_le_put64(b->data + at + 8, (uint64_t)(b->len - at - 16));
}

typedef struct pages_ctx {
    ri_snapstore *st;
    const ss_manifest *m;
    const ri_snapstore_image_options *o;
    ri_snapstore_cache *cache_out;
    uint8_t *page;               /* a page read from its blob */
} pages_ctx;

/* The bytes of stored page `k` (page index p) of memory i: from the cache, or read
 * into dst (which may be ctx->page or the image itself). */
static const uint8_t *page_bytes(pages_ctx *c, uint32_t i, uint32_t p, uint32_t k, uint8_t *dst,
                                 ri_snapstore_error *err) {
    const uint8_t *hash = c->m->memories[i].hashes + (size_t)k * SS_HASH;
    const uint8_t *cached = c->o->cache ? ss_cache_by_hash(c->o->cache, i, p, hash) : NULL;
    if (!cached && c->cache_out && c->cache_out != c->o->cache) cached = ss_cache_by_hash(c->cache_out, i, p, hash);
    if (cached) return cached;
    char what[RI_SNAPSTORE_NAME_MAX + 80];
    snprintf(what, sizeof what, "page %u of memory %u of snapshot '%s'", p, i, c->m->info.name);
    if (!ss_blob_read(c->st, hash, dst, SS_PAGE, what, err)) return NULL;
    return dst;
}

static bool aborted_now(pages_ctx *c, uint32_t k, ri_snapstore_error *err) {
    if (k % ABORT_EVERY != 0 || !ss_aborted(c->o->abort)) return false;
    ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted while reading snapshot '%s': nothing was produced",
            c->m->info.name);
    return true;
}

static bool remember(pages_ctx *c, uint32_t i, uint32_t p, uint32_t k, const uint8_t *bytes, ri_snapstore_error *err) {
    if (!c->cache_out) return true;
    if (!ss_cache_set(c->cache_out, i, p, bytes, c->m->memories[i].hashes + (size_t)k * SS_HASH)) return ss_nomem(err);
    return true;
}

static bool raw_payload(pages_ctx *c, ri_buf *b, uint32_t i, ri_snapstore_error *err) {
    const ss_memory *mem = &c->m->memories[i];
    if (!ri_buf_reserve(b, (size_t)mem->stored * SS_PAGE)) return ss_nomem(err);
    uint32_t k = 0;
    for (uint32_t p = 0; p < mem->pages; p++) {
        if (!(mem->bitmap[p / 8] >> (p % 8) & 1)) continue;
        if (aborted_now(c, k, err)) return false;
        uint8_t *dst = b->data + b->len;
        const uint8_t *bytes = page_bytes(c, i, p, k, dst, err);
        if (!bytes) return false;
        /* From a cache: already remembered there (or the same bytes under the same hash). */
        if (bytes != dst) memcpy(dst, bytes, SS_PAGE);
        else if (!remember(c, i, p, k, dst, err)) return false;
        b->len += SS_PAGE;
        k++;
    }
    return true;
}

/* The writer's parameters exactly (src/snapshot/pages.c): level, no checksum, content
 * size in the header, no dictionary id, the content pledged. */
static bool zstd_params(ZSTD_CCtx *cctx, uint64_t content) {
    return !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, RI_SNAP_ZSTD_LEVEL)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)) &&
           !ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, content));
}

static bool feed(ZSTD_CCtx *cctx, ri_buf *b, const uint8_t *data, size_t len, bool last) {
    ZSTD_inBuffer in = {data, len, 0};
    size_t chunk = ZSTD_CStreamOutSize();
    for (;;) {
        if (!ri_buf_reserve(b, chunk)) return false;
        ZSTD_outBuffer out = {b->data + b->len, b->cap - b->len, 0};
        size_t left = ZSTD_compressStream2(cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
        b->len += out.pos;
        if (ZSTD_isError(left)) return false;
        if (last ? left == 0 : in.pos == in.size) return true;
    }
}

/* Returns the payload's encoding; 0xFF on failure. */
static unsigned zstd_payload(pages_ctx *c, ri_buf *b, uint32_t i, ri_snapstore_error *err) {
    const ss_memory *mem = &c->m->memories[i];
    uint64_t content = (uint64_t)mem->stored * SS_PAGE;
    size_t start = b->len;
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    bool ok = cctx && zstd_params(cctx, content);
    if (!ok) {
        ZSTD_freeCCtx(cctx);
        ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "Out of memory creating a zstd context");
        return 0xFF;
    }
    uint32_t k = 0;
    for (uint32_t p = 0; ok && p < mem->pages; p++) {
        if (!(mem->bitmap[p / 8] >> (p % 8) & 1)) continue;
        if (aborted_now(c, k, err)) ok = false;
        const uint8_t *bytes = ok ? page_bytes(c, i, p, k, c->page, err) : NULL;
        ok = bytes && (bytes != c->page || remember(c, i, p, k, bytes, err));
        if (ok && !feed(cctx, b, bytes, SS_PAGE, false)) ok = ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "zstd failed");
        k++;
    }
    if (ok && !feed(cctx, b, NULL, 0, true)) ok = ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "zstd failed");
    ZSTD_freeCCtx(cctx);
    if (!ok) return 0xFF;
    if (b->len - start < content) return ENC_ZSTD;
    /* Not smaller: the writer stores the pages as they are. They are all in the cache
     * now when there is one; else read again. */
    b->len = start;
    return raw_payload(c, b, i, err) ? ENC_RAW : 0xFF;
}

static bool write_memories(pages_ctx *c, ri_buf *b, uint32_t flags, ri_snapstore_error *err) {
    size_t at = begin_section(b, "MEMS", flags);
    ri_buf_u32(b, c->m->nmemories);
    for (uint32_t i = 0; i < c->m->nmemories; i++) {
        const ss_memory *mem = &c->m->memories[i];
        size_t header = b->len;
        ri_buf_u32(b, mem->pages);
        ri_buf_u32(b, mem->max_pages);
        ri_buf_u8(b, mem->has_max ? 1 : 0);
        ri_buf_u8(b, ENC_RAW);
        ri_buf_zeros(b, 2);
        ri_buf_u32(b, mem->stored);
        ri_buf_u64(b, 0);
        ri_buf_put(b, mem->bitmap, ((size_t)mem->pages + 7) / 8);
        if (b->failed) return ss_nomem(err);
        size_t payload = b->len;
        unsigned enc = ENC_RAW;
        if (mem->stored && c->o->compress) enc = zstd_payload(c, b, i, err);
        else if (!raw_payload(c, b, i, err)) enc = 0xFF;
        if (enc == 0xFF) return false;
        if (b->failed) return ss_nomem(err);
        b->data[header + 9] = (uint8_t)enc;
        ri_le_put64(b->data + header + 16, (uint64_t)(b->len - payload));
    }
    end_section(b, at);
    return true;
}

static void write_section(ri_buf *b, const char tag[4], uint32_t flags, const void *content, uint64_t len) {
    size_t at = begin_section(b, tag, flags);
    ri_buf_put(b, content, (size_t)len);
    end_section(b, at);
}

/* WSFS from the workspace record: the canonical bytes rebuilt from the file chunks, then
 * as the writer encodes them (src/snapshot/wasi.c): one zstd frame made in one call with
 * the pages' parameters when compressing and zstd makes it smaller, else raw. */
static bool write_workspace(pages_ctx *c, ri_buf *b, uint32_t flags, ri_snapstore_error *err) {
    uint8_t *ws;
    size_t len;
    if (!ss_workspace_rebuild(c->st, c->m, &ws, &len, err)) return false;
    uint8_t *frame = NULL;
    size_t frame_len = 0;
    if (c->o->compress && len) {
        size_t bound = ZSTD_compressBound(len);
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        frame = cctx ? malloc(bound) : NULL;
        size_t n = frame && zstd_params(cctx, len) ? ZSTD_compress2(cctx, frame, bound, ws, len) : 0;
        ZSTD_freeCCtx(cctx);
        if (!frame) {
            free(ws);
            return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "Out of memory compressing a workspace");
        }
        if (ZSTD_isError(n) || n == 0 || n >= len) {
            free(frame);
            frame = NULL;
        } else {
            frame_len = n;
        }
    }
    size_t at = begin_section(b, "WSFS", flags);
    ri_buf_u8(b, frame ? ENC_ZSTD : ENC_RAW);
    ri_buf_zeros(b, 7);
    ri_buf_u64(b, len);
    if (frame) ri_buf_put(b, frame, frame_len);
    else ri_buf_put(b, ws, len);
    end_section(b, at);
    free(frame);
    free(ws);
    return b->failed ? ss_nomem(err) : true;
}

/* What a manifest of version 1 stands for: the writer's sections and flags. */
static const ss_section writers_layout[] = {
    {{'M', 'E', 'T', 'A'}, FLAG_REQUIRED, NULL, 0}, {{'M', 'E', 'M', 'S'}, FLAG_REQUIRED, NULL, 0},
    {{'T', 'B', 'L', 'S'}, FLAG_REQUIRED, NULL, 0}, {{'G', 'L', 'B', 'S'}, FLAG_REQUIRED, NULL, 0},
    {{'S', 'E', 'G', 'S'}, FLAG_REQUIRED, NULL, 0},
};

/* The sections after the header, in the layout's order. */
static bool write_sections(pages_ctx *c, ri_buf *b, const char *rimd, const uint8_t *module,
                           ri_snapstore_error *err) {
    const ss_manifest *m = c->m;
    const ss_section *layout = m->nsections ? m->sections : writers_layout;
    uint32_t n = m->nsections ? m->nsections : (uint32_t)(sizeof writers_layout / sizeof writers_layout[0]);
    bool has_modl = false;
    for (uint32_t i = 0; i < n; i++) has_modl |= memcmp(layout[i].tag, "MODL", 4) == 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_section *s = &layout[i];
        if (memcmp(s->tag, "META", 4) == 0) {
            write_section(b, "META", s->flags, m->meta, SS_META_BYTES);
            if (rimd) write_section(b, "RIMD", 0, rimd, strlen(rimd)); /* optional: readers skip it */
        } else if (memcmp(s->tag, "MODL", 4) == 0) {
            if (module) write_section(b, "MODL", s->flags, module, m->info.module_size);
        } else if (memcmp(s->tag, "MEMS", 4) == 0) {
            if (module && !has_modl) write_section(b, "MODL", 0, module, m->info.module_size);
            if (!write_memories(c, b, s->flags, err)) return false;
        } else if (memcmp(s->tag, "TBLS", 4) == 0) {
            write_section(b, "TBLS", s->flags, m->tbls, m->tbls_len);
        } else if (memcmp(s->tag, "GLBS", 4) == 0) {
            write_section(b, "GLBS", s->flags, m->glbs, m->glbs_len);
        } else if (memcmp(s->tag, "SEGS", 4) == 0) {
            write_section(b, "SEGS", s->flags, m->segs, m->segs_len);
        } else if (memcmp(s->tag, "WSFS", 4) == 0 && m->ws.present) {
            if (!write_workspace(c, b, s->flags, err)) return false;
        } else {
            write_section(b, s->tag, s->flags, s->content, s->len);
        }
    }
    return b->failed ? ss_nomem(err) : true;
}

bool ss_assemble(ri_snapstore *st, const ss_manifest *m, const ri_snapstore_image_options *o, const char *rimd,
                 ri_snapstore_cache *cache_out, ri_buf *out, ri_snapstore_error *err) {
    memset(out, 0, sizeof *out);
    if (o->include_module && !m->info.module_stored) {
        char hex[SS_HEX + 1];
        ri_hex_encode(m->info.module_sha256, SS_HASH, hex);
        return ss_fail(err, RI_SNAPSTORE_ERR_INPUT,
                       "Snapshot '%s' cannot carry its module: the store does not hold module sha256:%s (it was saved "
                       "from an image without it)",
                       m->info.name, hex);
    }
    ri_buf b = {NULL, 0, 0, false};
    uint8_t *module = NULL;
    pages_ctx c = {st, m, o, cache_out, malloc(SS_PAGE)};
    bool ok = c.page != NULL || ss_nomem(err);
    if (ok && !ri_buf_reserve(&b, m->info.image_bytes < SIZE_MAX / 2 ? (size_t)m->info.image_bytes : 0))
        ok = ss_nomem(err);
    if (ok && o->include_module) {
        char what[RI_SNAPSTORE_NAME_MAX + 40];
        snprintf(what, sizeof what, "the module of snapshot '%s'", m->info.name);
        ok = ss_blob_read_alloc(st, m->info.module_sha256, (size_t)m->info.module_size, &module, what, err);
    }
    if (ok) {
        ri_buf_put(&b, "WSNP", 4);
        ri_buf_u8(&b, RI_SNAP_VERSION);
        ri_buf_zeros(&b, 3);
        ok = write_sections(&c, &b, rimd, module, err);
    }
    if (ok) {
        uint32_t crc = ri_snap_crc32c(b.data, b.len);
        size_t at = begin_section(&b, "CSUM", FLAG_REQUIRED);
        ri_buf_u32(&b, crc);
        end_section(&b, at);
        if (b.failed) ok = ss_nomem(err);
    }
    if (ok && cache_out) {
        uint32_t *pages = calloc(m->nmemories ? m->nmemories : 1, sizeof *pages);
        const uint8_t **bitmaps = calloc(m->nmemories ? m->nmemories : 1, sizeof *bitmaps);
        if (pages && bitmaps) {
            for (uint32_t i = 0; i < m->nmemories; i++) {
                pages[i] = m->memories[i].pages;
                bitmaps[i] = m->memories[i].bitmap;
            }
            ss_cache_trim(cache_out, m->nmemories, pages, bitmaps);
        }
        free(pages);
        free(bitmaps);
    }
    free(module);
    free(c.page);
    if (!ok) {
        ri_buf_free(&b);
        return false;
    }
    *out = b;
    return true;
}
