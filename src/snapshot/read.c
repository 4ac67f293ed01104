/*
 * ri_snap_read: a WSNP v2 image, untrusted, into a checked view. The order matters:
 * the header; then the checksum (CRC-32C) over everything before the final CSUM
 * section, so that a flipped or missing byte anywhere is reported as corruption before
 * any length inside is believed; then the sections (bounds, order, unknown ones); then
 * each section's content. Every count is checked against the bytes that must back it
 * before anything is allocated for it, so a small image never makes a large
 * allocation. Memory payloads are checked for their length here and decompressed
 * later (restore, the page reader), which check their content.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

#define CORRUPT(...) snap_fail(err, RI_SNAP_ERR_CORRUPT, __VA_ARGS__)

/* A bounded cursor over one section's content. */
typedef struct cursor {
    const uint8_t *p;
    uint64_t left;
} cursor;

static bool take(cursor *c, uint64_t n, const uint8_t **at) {
    if (n > c->left) return false;
    *at = c->p;
    c->p += n;
    c->left -= n;
    return true;
}

static const ri_snap_section *find(const ri_snap_image *img, snap_tag_id id) {
    for (uint32_t i = 0; i < img->nsections; i++)
        if (memcmp(img->sections[i].tag, snap_tags[id], 4) == 0) return &img->sections[i];
    return NULL;
}

static cursor content_of(const uint8_t *data, const ri_snap_section *s) {
    cursor c = {data + s->offset + RI_SNAP_SECTION_HEADER_BYTES, s->length};
    return c;
}

/* ---- header, checksum, sections --------------------------------------------------------------- */

static bool check_header_and_checksum(const uint8_t *data, size_t len, ri_snap_image *img, ri_snap_error *err) {
    if (len < RI_SNAP_HEADER_BYTES) return CORRUPT("Snapshot too small — missing header");
    if (memcmp(data, "WSNP", 4) != 0) return CORRUPT("Invalid snapshot — bad magic bytes");
    if (data[4] != RI_SNAP_VERSION)
        return snap_fail(err, RI_SNAP_ERR_UNSUPPORTED, "Unsupported snapshot version: %u (expected 2)", data[4]);
    if (data[5] || data[6] || data[7]) return CORRUPT("Invalid snapshot — reserved header bytes are not zero");
    /* The trailer is looked at only once the length says it is there. */
    const uint8_t *trailer = len >= RI_SNAP_HEADER_BYTES + RI_SNAP_TRAILER_BYTES ? data + len - RI_SNAP_TRAILER_BYTES
                                                                                 : NULL;
    if (!trailer || memcmp(trailer, snap_tags[SNAP_TAG_CSUM], 4) != 0 ||
        ri_le_get32(trailer + 4) != SNAP_FLAG_REQUIRED || ri_le_get64(trailer + 8) != RI_SNAP_CHECKSUM_BYTES)
        return CORRUPT("Snapshot truncated — the checksum section is missing at the end (the image is cut short, or "
                       "has bytes after it)");
    uint32_t crc = ri_snap_crc32c(data, len - RI_SNAP_TRAILER_BYTES);
    if (crc != ri_le_get32(trailer + RI_SNAP_SECTION_HEADER_BYTES))
        return CORRUPT("Invalid snapshot — checksum mismatch: the image is corrupted");
    img->checksum = crc;
    return true;
}

/* Walks the section headers between the header and the checksum section: first to
 * count them (each takes at least 16 bytes), then to record them. */
static bool read_sections(const uint8_t *data, size_t len, ri_snap_image *img, ri_snap_error *err) {
    size_t end = len - RI_SNAP_TRAILER_BYTES, pos = RI_SNAP_HEADER_BYTES;
    uint32_t n = 0;
    while (pos < end) {
        char tag[20];
        if (end - pos < RI_SNAP_SECTION_HEADER_BYTES)
            return CORRUPT("Invalid snapshot — the section header at offset %zu is incomplete", pos);
        uint64_t length = ri_le_get64(data + pos + 8);
        if (length > end - pos - RI_SNAP_SECTION_HEADER_BYTES) {
            snap_tag_text(data + pos, tag);
            return CORRUPT("Invalid snapshot — section '%s' at offset %zu declares %llu bytes, more than the %zu left "
                           "before the checksum",
                           tag, pos, (unsigned long long)length, end - pos - RI_SNAP_SECTION_HEADER_BYTES);
        }
        pos += RI_SNAP_SECTION_HEADER_BYTES + (size_t)length;
        n++;
    }
    img->sections = calloc((size_t)n + 1, sizeof *img->sections);
    if (!img->sections) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading %u sections", n + 1);

    int last_known = -1;
    pos = RI_SNAP_HEADER_BYTES;
    for (uint32_t i = 0; i < n; i++) {
        ri_snap_section *s = &img->sections[i];
        const uint8_t *h = data + pos;
        char tag[20];
        snap_tag_text(h, tag);
        memcpy(s->tag, h, 4);
        s->flags = ri_le_get32(h + 4);
        s->offset = pos;
        s->length = ri_le_get64(h + 8);
        pos += RI_SNAP_SECTION_HEADER_BYTES + (size_t)s->length;
        img->nsections = i + 1;
        snap_tag_id id = snap_tag_lookup(h);
        if (i == 0 && id != SNAP_TAG_META)
            return CORRUPT("Invalid snapshot — the first section is '%s', not 'META'", tag);
        if (id == SNAP_TAG_CSUM)
            return CORRUPT("Invalid snapshot — a checksum section at offset %llu, before the end",
                           (unsigned long long)s->offset);
        if (id == SNAP_TAG_UNKNOWN) {
            if (s->flags & SNAP_FLAG_REQUIRED)
                return snap_fail(err, RI_SNAP_ERR_UNSUPPORTED,
                                 "Unsupported snapshot — unknown required section '%s' at offset %llu (written by a "
                                 "newer version?)",
                                 tag, (unsigned long long)s->offset);
            continue; /* optional: skipped */
        }
        if ((int)id <= last_known)
            return CORRUPT("Invalid snapshot — section '%s' at offset %llu is repeated or out of order (the order is "
                           "META, MODL, MEMS, TBLS, GLBS, SEGS, FRMS, WSFS, WASI, CSUM)",
                           tag, (unsigned long long)s->offset);
        last_known = (int)id;
        s->known = true;
    }
    static const snap_tag_id required[] = {SNAP_TAG_META, SNAP_TAG_MEMS, SNAP_TAG_TBLS, SNAP_TAG_GLBS, SNAP_TAG_SEGS};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (find(img, required[i])) continue;
        char tag[20];
        snap_tag_text((const uint8_t *)snap_tags[required[i]], tag);
        return CORRUPT("Invalid snapshot — the required section '%s' is missing", tag);
    }
    ri_snap_section *csum = &img->sections[n];
    memcpy(csum->tag, snap_tags[SNAP_TAG_CSUM], 4);
    csum->flags = SNAP_FLAG_REQUIRED;
    csum->offset = end;
    csum->length = RI_SNAP_CHECKSUM_BYTES;
    csum->known = true;
    img->nsections = n + 1;
    return true;
}

/* ---- section contents ------------------------------------------------------------------------ */

typedef struct counts {
    uint32_t memories, tables, globals, elems, datas;
} counts;

static bool read_meta(const uint8_t *data, ri_snap_image *img, counts *k, ri_snap_error *err) {
    const ri_snap_section *s = find(img, SNAP_TAG_META);
    if (s->length != SNAP_META_BYTES)
        return CORRUPT("Invalid snapshot — META is %llu bytes (expected %u)", (unsigned long long)s->length,
                       SNAP_META_BYTES);
    const uint8_t *p = content_of(data, s).p;
    ri_snap_meta *m = &img->meta;
    memcpy(m->module_sha256, p, RI_SNAP_SHA256_BYTES);
    m->module_size = ri_le_get64(p + 32);
    if (m->module_size > (uint64_t)INT64_MAX) /* as gas below: every layer may hold it signed */
        return CORRUPT("Invalid snapshot — META: module size %llu is above 2^63 - 1",
                       (unsigned long long)m->module_size);
    uint32_t status = ri_le_get32(p + 40);
    if (status != RI_SNAP_STATUS_LOADED && status != RI_SNAP_STATUS_SUSPENDED)
        return CORRUPT("Invalid snapshot — META: unknown sandbox status %u", status);
    m->status = (ri_snap_status)status;
    m->prng_state = ri_le_get32(p + 44);
    m->gas_used = ri_le_get64(p + 48);
    if (m->gas_used > (uint64_t)INT64_MAX)
        return CORRUPT("Invalid snapshot — META: gas used %llu is above 2^63 - 1", (unsigned long long)m->gas_used);
    m->event_timestamp = snap_i64_from_bits(ri_le_get64(p + 56));
    img->func_count = ri_le_get32(p + 64);
    k->memories = ri_le_get32(p + 68);
    k->tables = ri_le_get32(p + 72);
    k->globals = ri_le_get32(p + 76);
    k->elems = ri_le_get32(p + 80);
    k->datas = ri_le_get32(p + 84);
    img->has_module_hash = true;
    img->has_instance_state = true;
    return true;
}

static bool read_module(const uint8_t *data, ri_snap_image *img, ri_snap_error *err) {
    const ri_snap_section *s = find(img, SNAP_TAG_MODL);
    if (!s) return true;
    if (s->length != img->meta.module_size)
        return CORRUPT("Invalid snapshot — MODL holds %llu bytes, but META names a module of %llu bytes",
                       (unsigned long long)s->length, (unsigned long long)img->meta.module_size);
    const uint8_t *p = content_of(data, s).p;
    uint8_t digest[RI_SNAP_SHA256_BYTES];
    if (!ri_snap_sha256(p, (size_t)s->length, digest))
        return snap_fail(err, RI_SNAP_ERR_NOMEM, "libcrypto failed to compute SHA-256");
    if (memcmp(digest, img->meta.module_sha256, RI_SNAP_SHA256_BYTES) != 0)
        return CORRUPT("Invalid snapshot — MODL: the embedded module's SHA-256 is not the module hash in META");
    img->module = p;
    img->module_len = (size_t)s->length;
    return true;
}

/* A section's count must match META's, and each entry needs at least `min_bytes`. */
static bool check_count(const char *tag, uint32_t count, uint32_t meta_count, uint64_t left, uint64_t min_bytes,
                        const char *what, ri_snap_error *err) {
    if (count != meta_count)
        return CORRUPT("Invalid snapshot — %s holds %u %s, but META counts %u", tag, count, what, meta_count);
    if (min_bytes && count > left / min_bytes)
        return CORRUPT("Invalid snapshot — %s declares %u %s in %llu bytes", tag, count, what, (unsigned long long)left);
    return true;
}

static unsigned popcount8(uint8_t v) {
    unsigned n = 0;
    for (; v; v &= (uint8_t)(v - 1)) n++;
    return n;
}

static bool read_one_memory(cursor *c, uint32_t i, ri_snap_memory *m, ri_snap_error *err) {
    const uint8_t *h;
    if (!take(c, SNAP_MEMORY_HEADER_BYTES, &h)) return CORRUPT("Invalid snapshot — MEMS: memory %u is cut short", i);
    m->pages = ri_le_get32(h);
    m->max_pages = ri_le_get32(h + 4);
    uint8_t flags = h[8], encoding = h[9];
    m->present_pages = ri_le_get32(h + 12);
    m->payload_len = ri_le_get64(h + 16);
    if (m->pages > RI_SNAP_MAX_PAGES)
        return CORRUPT("Invalid snapshot — MEMS: memory %u has %u pages (at most %u)", i, m->pages, RI_SNAP_MAX_PAGES);
    if (flags & ~(SNAP_MEMORY_HAS_MAX | SNAP_MEMORY_IS64) || h[10] || h[11])
        return CORRUPT("Invalid snapshot — MEMS: memory %u has unknown flags or reserved bytes set", i);
    m->has_max = flags & SNAP_MEMORY_HAS_MAX;
    m->is64 = flags & SNAP_MEMORY_IS64;
    if (m->has_max ? ((!m->is64 && m->max_pages > RI_SNAP_MAX_PAGES) || m->pages > m->max_pages) : m->max_pages != 0)
        return CORRUPT("Invalid snapshot — MEMS: memory %u has %u pages and a maximum of %u", i, m->pages, m->max_pages);
    if (encoding != RI_SNAP_ENC_RAW && encoding != RI_SNAP_ENC_ZSTD)
        return CORRUPT("Invalid snapshot — MEMS: memory %u has unknown encoding %u", i, encoding);
    m->encoding = (ri_snap_encoding)encoding;
    if (m->present_pages > m->pages)
        return CORRUPT("Invalid snapshot — MEMS: memory %u stores %u of its %u pages", i, m->present_pages, m->pages);
    uint64_t bitmap_len = ((uint64_t)m->pages + 7) / 8;
    if (!take(c, bitmap_len, &m->bitmap))
        return CORRUPT("Invalid snapshot — MEMS: memory %u's page bitmap is cut short", i);
    uint64_t bits = 0;
    for (uint64_t b = 0; b < bitmap_len; b++) bits += popcount8(m->bitmap[b]);
    if ((m->pages % 8) && (m->bitmap[bitmap_len - 1] >> (m->pages % 8)))
        return CORRUPT("Invalid snapshot — MEMS: memory %u's page bitmap marks pages beyond its %u pages", i, m->pages);
    if (bits != m->present_pages)
        return CORRUPT("Invalid snapshot — MEMS: memory %u's bitmap marks %llu pages, its header says %u", i,
                       (unsigned long long)bits, m->present_pages);
    m->raw_len = (uint64_t)m->present_pages * RI_SNAP_PAGE_BYTES;
    if (!take(c, m->payload_len, &m->payload))
        return CORRUPT("Invalid snapshot — MEMS: memory %u's payload of %llu bytes is cut short", i,
                       (unsigned long long)m->payload_len);
    if (m->encoding == RI_SNAP_ENC_RAW && m->payload_len != m->raw_len)
        return CORRUPT("Invalid snapshot — MEMS: memory %u stores %u pages raw in %llu bytes (expected %llu)", i,
                       m->present_pages, (unsigned long long)m->payload_len, (unsigned long long)m->raw_len);
    return true;
}

static bool read_memories(const uint8_t *data, ri_snap_image *img, const counts *k, ri_snap_error *err) {
    cursor c = content_of(data, find(img, SNAP_TAG_MEMS));
    const uint8_t *p;
    if (!take(&c, 4, &p)) return CORRUPT("Invalid snapshot — MEMS is cut short");
    uint32_t n = ri_le_get32(p);
    if (!check_count("MEMS", n, k->memories, c.left, SNAP_MEMORY_HEADER_BYTES, "memories", err)) return false;
    img->memories = calloc(n ? n : 1, sizeof *img->memories);
    if (!img->memories) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading %u memories", n);
    img->nmemories = n;
    for (uint32_t i = 0; i < n; i++)
        if (!read_one_memory(&c, i, &img->memories[i], err)) return false;
    if (c.left) return CORRUPT("Invalid snapshot — MEMS has %llu bytes after its last memory", (unsigned long long)c.left);
    return true;
}

/* A stored reference: a function index of the module, or null (externref: only null). */
static bool ref_ok(uint64_t v, ri_valtype type, uint32_t func_count) {
    if (type != RI_FUNCREF) return v == RI_SNAP_NULL_REF; /* externref, exnref */
    return v == RI_SNAP_NULL_REF || v < func_count;
}

static bool read_tables(const uint8_t *data, ri_snap_image *img, const counts *k, ri_snap_error *err) {
    cursor c = content_of(data, find(img, SNAP_TAG_TBLS));
    const uint8_t *p;
    if (!take(&c, 4, &p)) return CORRUPT("Invalid snapshot — TBLS is cut short");
    uint32_t n = ri_le_get32(p);
    if (!check_count("TBLS", n, k->tables, c.left, SNAP_TABLE_HEADER_BYTES, "tables", err)) return false;
    img->tables = calloc(n ? n : 1, sizeof *img->tables);
    if (!img->tables) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading %u tables", n);
    img->ntables = n;
    for (uint32_t i = 0; i < n; i++) {
        ri_snap_table *t = &img->tables[i];
        if (!take(&c, SNAP_TABLE_HEADER_BYTES, &p)) return CORRUPT("Invalid snapshot — TBLS: table %u is cut short", i);
        if (p[0] != RI_FUNCREF && p[0] != RI_EXTERNREF)
            return CORRUPT("Invalid snapshot — TBLS: table %u has element type 0x%02X (expected funcref or externref)",
                           i, p[0]);
        if (p[1] & ~SNAP_TABLE_HAS_MAX || p[2] || p[3])
            return CORRUPT("Invalid snapshot — TBLS: table %u has unknown flags or reserved bytes set", i);
        t->elem = (ri_valtype)p[0];
        t->has_max = p[1] & SNAP_TABLE_HAS_MAX;
        t->size = ri_le_get32(p + 4);
        t->max = ri_le_get32(p + 8);
        if (t->has_max ? t->size > t->max : t->max != 0)
            return CORRUPT("Invalid snapshot — TBLS: table %u has %u entries and a maximum of %u", i, t->size, t->max);
        if (!take(&c, (uint64_t)t->size * 4, &t->entries))
            return CORRUPT("Invalid snapshot — TBLS: table %u's %u entries are cut short", i, t->size);
        for (uint32_t e = 0; e < t->size; e++) {
            uint32_t v = ri_le_get32(t->entries + (size_t)e * 4);
            if (!ref_ok(v, t->elem, img->func_count))
                return CORRUPT("Invalid snapshot — TBLS: table %u, entry %u, names function %u, but the module has %u "
                               "functions%s",
                               i, e, v, img->func_count, t->elem == RI_EXTERNREF ? " (and an externref can only be null)" : "");
        }
    }
    if (c.left) return CORRUPT("Invalid snapshot — TBLS has %llu bytes after its last table", (unsigned long long)c.left);
    return true;
}

static bool read_globals(const uint8_t *data, ri_snap_image *img, const counts *k, ri_snap_error *err) {
    cursor c = content_of(data, find(img, SNAP_TAG_GLBS));
    const uint8_t *p;
    if (!take(&c, 4, &p)) return CORRUPT("Invalid snapshot — GLBS is cut short");
    uint32_t n = ri_le_get32(p);
    if (!check_count("GLBS", n, k->globals, c.left, SNAP_GLOBAL_BYTES, "globals", err)) return false;
    img->globals = calloc(n ? n : 1, sizeof *img->globals);
    if (!img->globals) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading %u globals", n);
    img->nglobals = n;
    for (uint32_t i = 0; i < n; i++) {
        ri_snap_global *g = &img->globals[i];
        if (!take(&c, SNAP_GLOBAL_BYTES, &p))
            return CORRUPT("Invalid snapshot — GLBS is cut short at global %u of %u", i, n);
        g->type = (ri_valtype)p[0];
        g->bits = ri_le_get64(p + 8);
        if (p[0] == RI_V128) { /* its bytes 8..15 follow the record */
            const uint8_t *high;
            if (!take(&c, SNAP_V128_HIGH_BYTES, &high))
                return CORRUPT("Invalid snapshot — GLBS is cut short in global %u (v128)", i);
            g->bits_high = ri_le_get64(high);
        }
        bool reserved = p[2] || p[3] || p[4] || p[5] || p[6] || p[7];
        if (p[1] > 1 || reserved)
            return CORRUPT("Invalid snapshot — GLBS: global %u has unknown flags or reserved bytes set", i);
        g->mutable_ = p[1] == 1;
        bool ok;
        switch (p[0]) {
        case RI_I32: case RI_F32: ok = g->bits <= UINT32_MAX; break;
        case RI_I64: case RI_F64: case RI_V128: ok = true; break;
        case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF: ok = ref_ok(g->bits, g->type, img->func_count); break;
        default:
            return CORRUPT("Invalid snapshot — GLBS: global %u has unknown type 0x%02X", i, p[0]);
        }
        if (!ok)
            return CORRUPT("Invalid snapshot — GLBS: global %u of type %s holds an impossible value 0x%llx", i,
                           ri_snap_valtype_name(g->type), (unsigned long long)g->bits);
    }
    if (c.left) return CORRUPT("Invalid snapshot — GLBS has %llu bytes after its last global", (unsigned long long)c.left);
    return true;
}

static bool read_segments(const uint8_t *data, ri_snap_image *img, const counts *k, ri_snap_error *err) {
    cursor c = content_of(data, find(img, SNAP_TAG_SEGS));
    const uint8_t *p;
    if (!take(&c, SNAP_SEGS_HEADER_BYTES, &p)) return CORRUPT("Invalid snapshot — SEGS is cut short");
    uint32_t ne = ri_le_get32(p), nd = ri_le_get32(p + 4);
    if (!check_count("SEGS", ne, k->elems, 0, 0, "element segments", err) ||
        !check_count("SEGS", nd, k->datas, 0, 0, "data segments", err))
        return false;
    if (c.left != (uint64_t)ne + nd)
        return CORRUPT("Invalid snapshot — SEGS holds %llu bytes for %u + %u segments", (unsigned long long)c.left, ne, nd);
    img->nelems = ne;
    img->ndatas = nd;
    img->elem_dropped = c.p;
    img->data_dropped = c.p + ne;
    for (uint64_t i = 0; i < c.left; i++)
        if (c.p[i] > 1)
            return CORRUPT("Invalid snapshot — SEGS: %s segment %llu has dropped flag %u (expected 0 or 1)",
                           i < ne ? "element" : "data", (unsigned long long)(i < ne ? i : i - ne), c.p[i]);
    return true;
}

bool ri_snap_read(const uint8_t *data, size_t len, ri_snap_image *out, ri_snap_error *err) {
    snap_ok(err);
    if (!out) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!data) len = 0;
    counts k = {0, 0, 0, 0, 0};
    bool ok = check_header_and_checksum(data, len, out, err) && read_sections(data, len, out, err) &&
              read_meta(data, out, &k, err) && read_module(data, out, err) && read_memories(data, out, &k, err) &&
              read_tables(data, out, &k, err) && read_globals(data, out, &k, err) && read_segments(data, out, &k, err) &&
              snap_read_wasi(data, out, err);
    const ri_snap_section *frms = ok ? find(out, SNAP_TAG_FRMS) : NULL;
    if (frms) { /* a suspended call: its form is checked here, before anyone believes it */
        out->has_frames = true;
        out->frames = data + frms->offset + RI_SNAP_SECTION_HEADER_BYTES;
        out->frames_len = frms->length;
        ri_snap_call call;
        ok = out->meta.status == RI_SNAP_STATUS_SUSPENDED
                 ? ri_snap_read_call(out, &call, err)
                 : snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot — FRMS: a suspended call in an image whose "
                                                       "status is not suspended");
        if (ok) ri_snap_call_free(&call);
    }
    if (!ok) {
        ri_snap_image_free(out);
        return false;
    }
    out->version = RI_SNAP_VERSION;
    out->total_len = len;
    return true;
}

bool ri_snap_image_from_v1(const uint8_t *memory, uint64_t memory_len, uint32_t prng_state, uint64_t gas_used,
                           int64_t event_timestamp, ri_snap_image *out, ri_snap_error *err) {
    snap_ok(err);
    if (!out) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_image_from_v1: out is NULL");
    memset(out, 0, sizeof *out);
    if (memory_len % RI_SNAP_PAGE_BYTES || memory_len / RI_SNAP_PAGE_BYTES > RI_SNAP_MAX_PAGES || (memory_len && !memory))
        return snap_fail(err, RI_SNAP_ERR_UNSUPPORTED,
                         "the v1 image's memory of %llu bytes is not a whole number of 64 KiB pages",
                         (unsigned long long)memory_len);
    out->memories = calloc(1, sizeof *out->memories);
    if (!out->memories) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory describing a v1 image");
    out->version = 1;
    out->nmemories = 1;
    ri_snap_memory *m = &out->memories[0];
    m->pages = (uint32_t)(memory_len / RI_SNAP_PAGE_BYTES);
    m->encoding = RI_SNAP_ENC_FLAT;
    m->payload = memory;
    m->payload_len = memory_len;
    for (uint32_t i = 0; i < m->pages; i++)
        if (!snap_page_is_zero(memory + (size_t)i * RI_SNAP_PAGE_BYTES)) m->present_pages++;
    m->raw_len = memory_len;
    out->meta.status = RI_SNAP_STATUS_LOADED;
    out->meta.prng_state = prng_state;
    out->meta.gas_used = gas_used;
    out->meta.event_timestamp = event_timestamp;
    return true;
}

void ri_snap_image_free(ri_snap_image *img) {
    if (!img) return;
    free(img->memories);
    free(img->tables);
    free(img->globals);
    free(img->sections);
    memset(img, 0, sizeof *img);
}
