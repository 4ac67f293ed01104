/*
 * A WSNP v2 image into the store: its pages become blobs (each distinct page once; a
 * page already in the store is not written again) and its small state is copied
 * verbatim into a manifest, with every section the store does not rebuild (a paused
 * call, sections of a newer writer) and the order and flags of all of them, so the image
 * comes back byte for byte. The image is read with ri_snap_read first, so nothing the
 * store keeps was not checked by the snapshot layer's reader; and no header field the
 * store can check against what it holds (the module's size) is believed.
 *
 * In phases, so that concurrent saves never rely on each other's unfinished work:
 *   1. hash every stored page (a page equal to the cache's page at the same index takes
 *      the cached hash: hashing is the cost of a save, and a save with 1% of pages
 *      changed hashes 1% of them);
 *   2. under blobs.lock shared, look for each distinct blob: one found is durable (I2);
 *   3. compress and write the missing ones to temporary files, fsync'd (abortable);
 *   4. under blobs.lock exclusive, rename them into place and fsync their directories.
 * The caller then commits the manifest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "store_internal.h"

#define ABORT_EVERY 16u

/* One blob the manifest will name. */
typedef struct need {
    const uint8_t *hash;
    const uint8_t *bytes;
    size_t len;
    bool write;                  /* missing, and the first of its hash */
    bool prepared;
    char tmp[64];
} need;

typedef struct needs {
    need *items;
    size_t n, cap;
} needs;

static bool add_need(needs *ns, const uint8_t *hash, const uint8_t *bytes, size_t len) {
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 256;
        need *items = realloc(ns->items, cap * sizeof *items);
        if (!items) return false;
        ns->items = items;
        ns->cap = cap;
    }
    need *x = &ns->items[ns->n++];
    memset(x, 0, sizeof *x);
    x->hash = hash;
    x->bytes = bytes;
    x->len = len;
    return true;
}

static const ri_snap_section *find_section(const ri_snap_image *img, const char tag[4]) {
    for (uint32_t i = 0; i < img->nsections; i++)
        if (img->sections[i].known && memcmp(img->sections[i].tag, tag, 4) == 0) return &img->sections[i];
    return NULL;
}

static bool copy_section(const ri_snap_image *img, const uint8_t *image, const char tag[4], uint8_t **out,
                         uint64_t *len, ri_snapstore_error *err) {
    const ri_snap_section *s = find_section(img, tag);
    if (!s) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "The image has no %.4s section", tag);
    *out = malloc(s->length ? (size_t)s->length : 1);
    if (!*out) return ss_nomem(err);
    if (s->length) memcpy(*out, image + s->offset + RI_SNAP_SECTION_HEADER_BYTES, (size_t)s->length);
    *len = s->length;
    return true;
}

/* The stored pages of memory i, contiguous: the raw payload itself, or the zstd frame
 * decompressed into *owned (exactly one frame of exactly the stored pages). */
static const uint8_t *page_bytes_of(const ri_snap_memory *src, uint32_t i, uint8_t **owned, ri_snapstore_error *err) {
    *owned = NULL;
    if (src->encoding == RI_SNAP_ENC_RAW) return src->payload;
    size_t frame = ZSTD_findFrameCompressedSize(src->payload, (size_t)src->payload_len);
    unsigned long long declared = ZSTD_getFrameContentSize(src->payload, (size_t)src->payload_len);
    if (ZSTD_isError(frame) || frame != src->payload_len || declared != src->raw_len || src->raw_len > SIZE_MAX) {
        ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid snapshot — memory %u: the payload is not one zstd frame of its "
                "stored pages", i);
        return NULL;
    }
    uint8_t *buf = malloc(src->raw_len ? (size_t)src->raw_len : 1);
    if (!buf) {
        ss_nomem(err);
        return NULL;
    }
    size_t got = ZSTD_decompress(buf, (size_t)src->raw_len, src->payload, (size_t)src->payload_len);
    if (ZSTD_isError(got) || got != src->raw_len) {
        free(buf);
        ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid snapshot — memory %u: the zstd frame does not decompress", i);
        return NULL;
    }
    *owned = buf;
    return buf;
}

/* Phase 1 for memory i: the page table and every page's hash. */
static bool hash_memory(const ri_snap_image *img, uint32_t i, const uint8_t *pages, const ss_ingest *in,
                        ss_memory *mem, needs *ns, ri_snapstore_put_stats *stats, ri_snapstore_error *err) {
    const ri_snap_memory *src = &img->memories[i];
    mem->pages = src->pages;
    mem->max_pages = src->max_pages;
    mem->has_max = src->has_max;
    mem->stored = src->present_pages;
    size_t bitmap_len = ((size_t)src->pages + 7) / 8;
    mem->bitmap = calloc(bitmap_len ? bitmap_len : 1, 1);
    mem->hashes = malloc(mem->stored ? (size_t)mem->stored * SS_HASH : 1);
    if (!mem->bitmap || !mem->hashes) return ss_nomem(err);
    if (bitmap_len) memcpy(mem->bitmap, src->bitmap, bitmap_len);
    uint32_t k = 0;
    for (uint32_t p = 0; p < src->pages; p++) {
        if (!(src->bitmap[p / 8] >> (p % 8) & 1)) continue;
        if (k % ABORT_EVERY == 0 && ss_aborted(in->abort))
            return ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted while saving: nothing was written");
        const uint8_t *bytes = pages + (size_t)k * SS_PAGE;
        uint8_t *hash = mem->hashes + (size_t)k * SS_HASH;
        if (!ss_cache_match(in->cache, i, p, bytes, hash)) {
            if (!ri_snap_sha256(bytes, SS_PAGE, hash))
                return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "libcrypto failed to compute a SHA-256");
            stats->pages_hashed++;
            if (!ss_cache_set(in->cache, i, p, bytes, hash)) return ss_nomem(err);
        }
        if (!add_need(ns, hash, bytes, SS_PAGE)) return ss_nomem(err);
        k++;
    }
    stats->pages += k;
    return true;
}

static int by_hash(const void *a, const void *b) {
    return memcmp(((const need *)a)->hash, ((const need *)b)->hash, SS_HASH);
}

static void discard_prepared(ri_snapstore *st, needs *ns) {
    for (size_t i = 0; i < ns->n; i++)
        if (ns->items[i].prepared) ss_blob_discard(st, ns->items[i].hash, ns->items[i].tmp), ns->items[i].prepared = false;
}

/* Phases 2 to 4. */
static bool store_blobs(ri_snapstore *st, needs *ns, const ss_ingest *in, ri_snapstore_put_stats *stats,
                        ri_snapstore_error *err) {
    if (ns->n) qsort(ns->items, ns->n, sizeof *ns->items, by_hash);
    int lock = ss_lock_blobs(st, SS_LOCK_SHARED, err);
    if (lock < 0) return false;
    bool ok = true;
    for (size_t i = 0; ok && i < ns->n; i++) {
        need *x = &ns->items[i];
        if (i && memcmp(ns->items[i - 1].hash, x->hash, SS_HASH) == 0) continue; /* written once */
        bool exists;
        ok = ss_blob_exists(st, x->hash, &exists, err);
        x->write = ok && !exists;
    }
    ss_unlock(lock);
    for (size_t i = 0, k = 0; ok && i < ns->n; i++) {
        need *x = &ns->items[i];
        if (!x->write) continue;
        if (k++ % ABORT_EVERY == 0 && ss_aborted(in->abort)) {
            ok = ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted while saving: nothing was written");
            break;
        }
        uint64_t written = 0;
        ok = ss_blob_prepare(st, x->hash, x->bytes, x->len, x->tmp, &written, err);
        x->prepared = ok;
        if (ok) stats->bytes_written += written;
    }
    if (ok && ss_aborted(in->abort)) ok = ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted while saving: nothing was written");
    if (!ok) {
        discard_prepared(st, ns);
        return false;
    }
    lock = ss_lock_blobs(st, SS_LOCK_EXCLUSIVE, err);
    if (lock < 0) {
        discard_prepared(st, ns);
        return false;
    }
    ss_dirty dirty;
    memset(&dirty, 0, sizeof dirty);
    for (size_t i = 0; ok && i < ns->n; i++) {
        need *x = &ns->items[i];
        if (!x->prepared) continue;
        ok = ss_blob_publish(st, x->hash, x->tmp, &dirty, err);
        x->prepared = false;
        if (ok) stats->blobs_written++;
    }
    /* Durable before the lock goes: whoever finds these blobs next may rely on them. */
    if (ok) ok = ss_blob_sync(st, &dirty, err);
    ss_unlock(lock);
    if (!ok) discard_prepared(st, ns);
    return ok;
}

/* The module: the image's (MODL; ri_snap_read checked its size and hash), else the
 * caller's (checked here), else whatever the store already holds under the image's module
 * hash. META's module size is never believed alone: a module the store holds has one size,
 * and an image that names it with another is refused here, before it is stored (a
 * manifest with that size could never be given back with its module). */
static bool module_need(ri_snapstore *st, const ri_snap_image *img, const ss_ingest *in, ss_manifest *m, needs *ns,
                        ri_snapstore_error *err) {
    const uint8_t *want = m->meta; /* META starts with the module's SHA-256 */
    uint64_t size = img->meta.module_size;
    const uint8_t *module = img->module;
    size_t len = img->module_len;
    static const char given_wrong[] = "The module given with the image is not the one the image names (SHA-256 and size)";
    if (!module && in->module && in->module_len != size) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, given_wrong);
    bool held;
    uint64_t held_size;
    if (!ss_blob_content_size(st, want, &held, &held_size, err)) return false;
    if (held && held_size != size) {
        char hex[SS_HEX + 1];
        ri_hex_encode(want, SS_HASH, hex);
        if (module) /* the image's own copy is checked: the store's is damaged */
            return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT,
                           "Corrupt store: blob %s (a module) declares %llu bytes, but that module has %llu (the "
                           "blob is damaged: run a verify)",
                           hex, (unsigned long long)held_size, (unsigned long long)size);
        return ss_fail(err, RI_SNAPSTORE_ERR_INPUT,
                       "The image names module sha256:%s of %llu bytes, but the store holds that module with %llu "
                       "bytes: the image's header is wrong (edited or damaged)",
                       hex, (unsigned long long)size, (unsigned long long)held_size);
    }
    if (!module && in->module) {
        /* Written only when the store lacks it: then it must be the very module named. */
        if (!held) {
            uint8_t digest[SS_HASH];
            if (!ri_snap_sha256(in->module, in->module_len, digest))
                return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "libcrypto failed to compute a SHA-256");
            if (memcmp(digest, want, SS_HASH) != 0) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, given_wrong);
        }
        module = in->module;
        len = in->module_len;
    }
    if (module) {
        m->info.module_stored = true;
        return add_need(ns, want, module, len) || ss_nomem(err);
    }
    /* Named, not given: stored if the store has it (the lock keeps it there). */
    m->info.module_stored = held;
    return true;
}

/* The image's sections in order, but CSUM and RIMD (the store's own metadata, made anew
 * on export): rebuilt ones by tag and flags, the others with their bytes. Nothing is
 * recorded when the layout is the writer's (manifest version 1). */
static bool record_layout(const ri_snap_image *img, const uint8_t *image, ss_manifest *m, ri_snapstore_error *err) {
    ss_section *layout = calloc(img->nsections ? img->nsections : 1, sizeof *layout);
    if (!layout) return ss_nomem(err);
    uint32_t n = 0;
    bool ok = true;
    for (uint32_t i = 0; ok && i + 1 < img->nsections; i++) { /* the last is CSUM */
        const ri_snap_section *s = &img->sections[i];
        if (!s->known && memcmp(s->tag, "RIMD", 4) == 0) continue;
        ss_section *sec = &layout[n++];
        memcpy(sec->tag, s->tag, 4);
        sec->flags = s->flags;
        if (ss_section_rebuilt(s->tag)) continue;
        sec->len = s->length;
        sec->content = malloc(s->length ? (size_t)s->length : 1);
        if (!sec->content) ok = ss_nomem(err);
        else if (s->length) memcpy(sec->content, image + s->offset + RI_SNAP_SECTION_HEADER_BYTES, (size_t)s->length);
    }
    if (ok && !ss_layout_is_writers(layout, n)) {
        m->sections = layout;
        m->nsections = n;
        return true;
    }
    for (uint32_t i = 0; i < n; i++) free(layout[i].content);
    free(layout);
    return ok;
}

/* An import's metadata must say what the image says (an edited export is refused). */
static bool describes(const ri_snapstore_info *said, ss_manifest *m, ri_snapstore_error *err) {
    if (!said) return true;
    ss_manifest_derive(m);
    const char *field = ss_info_disagreement(said, &m->info);
    if (!field) return true;
    return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid export: its metadata (\"%s\") does not describe its image",
                   field);
}

static void trim_cache(ri_snapstore_cache *cache, const ss_manifest *m) {
    if (!cache) return;
    uint32_t *pages = calloc(m->nmemories ? m->nmemories : 1, sizeof *pages);
    const uint8_t **bitmaps = calloc(m->nmemories ? m->nmemories : 1, sizeof *bitmaps);
    if (pages && bitmaps) {
        for (uint32_t i = 0; i < m->nmemories; i++) {
            pages[i] = m->memories[i].pages;
            bitmaps[i] = m->memories[i].bitmap;
        }
        ss_cache_trim(cache, m->nmemories, pages, bitmaps);
    }
    free(pages);
    free(bitmaps);
}

bool ss_ingest_image(ri_snapstore *st, const uint8_t *image, size_t len, const ss_ingest *in, ss_manifest *m,
                     ri_snapstore_put_stats *stats, ri_snapstore_error *err) {
    memset(m, 0, sizeof *m);
    ri_sandbox_error se;
    int version = ri_snapshot_version(image, len, &se);
    if (version == 0) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "%s", se.message);
    if (version == 1)
        return ss_fail(err, RI_SNAPSTORE_ERR_INPUT,
                       "WSNP v1 snapshots cannot be stored: they lack the tables, globals, segments and module identity "
                       "a restore needs (take a v2 snapshot: the default, or `ri run --format v2`)");
    ri_snap_image img;
    ri_snap_error e;
    if (!ri_snap_read(image, len, &img, &e)) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "%s", e.message);

    const ri_snap_section *meta = find_section(&img, "META");
    bool ok = meta && meta->length == SS_META_BYTES;
    if (!ok) ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "The image's META section is not %u bytes", SS_META_BYTES);
    if (ok) {
        memcpy(m->meta, image + meta->offset + RI_SNAP_SECTION_HEADER_BYTES, SS_META_BYTES);
        ok = copy_section(&img, image, "TBLS", &m->tbls, &m->tbls_len, err) &&
             copy_section(&img, image, "GLBS", &m->glbs, &m->glbs_len, err) &&
             copy_section(&img, image, "SEGS", &m->segs, &m->segs_len, err) &&
             record_layout(&img, image, m, err);
    }
    if (ok) {
        m->memories = calloc(img.nmemories ? img.nmemories : 1, sizeof *m->memories);
        if (!m->memories) ok = ss_nomem(err);
        else m->nmemories = img.nmemories;
    }
    needs ns = {NULL, 0, 0};
    uint8_t **owned = calloc(img.nmemories ? img.nmemories : 1, sizeof *owned);
    if (ok && !owned) ok = ss_nomem(err);
    for (uint32_t i = 0; ok && i < img.nmemories; i++) {
        const uint8_t *pages = page_bytes_of(&img.memories[i], i, &owned[i], err);
        ok = pages && hash_memory(&img, i, pages, in, &m->memories[i], &ns, stats, err);
    }
    /* The workspace's files by content: ws holds the bytes the chunk needs point into. */
    uint8_t *ws = NULL;
    const uint8_t **chunks = NULL;
    if (ok && img.has_wasi) {
        size_t ws_len;
        ri_snap_error we;
        if (!ri_snap_workspace(&img, &ws, &ws_len, &we))
            ok = ss_fail(err, we.code == RI_SNAP_ERR_NOMEM ? RI_SNAPSTORE_ERR_NOMEM : RI_SNAPSTORE_ERR_INPUT, "%s",
                         we.message);
        else ok = ss_workspace_split(ws, ws_len, &m->ws, &chunks, err);
        for (uint64_t k = 0; ok && k < m->ws.nchunks; k++)
            if (!add_need(&ns, m->ws.hashes + k * SS_HASH, chunks[k], m->ws.chunk_len[k])) ok = ss_nomem(err);
    }
    if (ok) trim_cache(in->cache, m);
    if (ok) ok = describes(in->described, m, err);
    if (ok) ok = module_need(st, &img, in, m, &ns, err);
    /* I2: the blobs are durable before the caller writes a manifest naming them. */
    if (ok) ok = store_blobs(st, &ns, in, stats, err);
    for (uint32_t i = 0; owned && i < img.nmemories; i++) free(owned[i]);
    free(owned);
    free(chunks);
    free(ws);
    free(ns.items);
    ri_snap_image_free(&img);
    if (!ok) {
        ss_manifest_free(m);
        return false;
    }
    ss_manifest_derive(m);
    return true;
}
