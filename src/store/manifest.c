/*
 * The manifest: one file per snapshot, snapshots/<name>.snap, small whatever the
 * sandbox's size: the page hashes of each memory plus the small state (WSNP v2's META,
 * TBLS, GLBS and SEGS contents, verbatim) and the metadata as JSON.
 *
 *   0    4  "RISM"
 *   4    2  u16 format version: 1; 2 when the layout follows the body; 3 when a
 *           workspace record follows the layout (below)
 *   6    2  zero
 *   8    4  u32 M: metadata JSON bytes (at most 64 KiB)
 *   12   4  zero
 *   16   8  u64 B: body bytes
 *   24  32  SHA-256 of bytes [0, 24) and the metadata: the head's own digest, so list
 *           can trust the head without reading the body
 *   56   M  metadata JSON (metadata.c)
 *   56+M B  body: META (88 bytes); u32 memories; per memory u32 pages, u32 maximum,
 *           u8 flags (bit 0: has a maximum), 3 zero bytes, u32 S stored pages, the
 *           bitmap (ceil(pages / 8) bytes, as WSNP v2's), S SHA-256 page hashes in page
 *           order; then u64 length + content of TBLS, of GLBS, of SEGS; version 2
 *           only: the layout, u32 K sections, each tag (4), u32 flags, u64 length and
 *           that many bytes of content (0 for the sections the store rebuilds);
 *           version 3 only: the workspace record (workspace.c), u64 R, u64 S, the
 *           S-byte skeleton, u64 H, H chunk hashes
 *   end 32  SHA-256 of every byte before it
 *
 * Version 1 implies the writer's layout (META, [MODL], MEMS, TBLS, GLBS, SEGS): such
 * snapshots stay readable by builds that know only version 1.
 *
 * Decoding checks the whole-file digest first, then every length against the bytes
 * left, then that the metadata agrees with the body.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

#define MAGIC "RISM"
#define VERSION_PLAIN 1   /* the writer's layout */
#define VERSION_LAYOUT 2  /* the layout recorded: FRMS, unknown sections, other flags */
#define VERSION_WORKSPACE 3 /* the layout and a workspace record: WSFS's files by content */
#define HEADER 24u
#define HEAD (HEADER + SS_HASH)
#define MIN_FILE (HEAD + SS_HASH)

void ss_manifest_free(ss_manifest *m) {
    if (!m) return;
    ri_snapstore_info_free(&m->info);
    for (uint32_t i = 0; m->memories && i < m->nmemories; i++) {
        free(m->memories[i].bitmap);
        free(m->memories[i].hashes);
    }
    free(m->memories);
    free(m->tbls);
    free(m->glbs);
    free(m->segs);
    for (uint32_t i = 0; m->sections && i < m->nsections; i++) free(m->sections[i].content);
    free(m->sections);
    ss_workspace_free(&m->ws);
    memset(m, 0, sizeof *m);
}

/* ---- the layout ------------------------------------------------------------------------------- */

/* The known sections in the order WSNP v2 requires; -1: not a known one. */
static int known_order(const char tag[4]) {
    static const char order[][4] = {{'M', 'E', 'T', 'A'}, {'M', 'O', 'D', 'L'}, {'M', 'E', 'M', 'S'},
                                    {'T', 'B', 'L', 'S'}, {'G', 'L', 'B', 'S'}, {'S', 'E', 'G', 'S'},
                                    {'F', 'R', 'M', 'S'}, {'W', 'S', 'F', 'S'}, {'W', 'A', 'S', 'I'}};
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++)
        if (memcmp(tag, order[i], 4) == 0) return i;
    return -1;
}

#define ORDER_MODL 1
#define ORDER_MEMS 2
#define ORDER_FRMS 6
#define ORDER_WSFS 7
#define ORDER_WASI 8

/* FRMS and WASI are kept verbatim; WSFS is rebuilt from the workspace record. */
bool ss_section_rebuilt(const char tag[4]) {
    int k = known_order(tag);
    return k >= 0 && k != ORDER_FRMS && k != ORDER_WASI;
}

bool ss_layout_is_writers(const ss_section *layout, uint32_t n) {
    static const char writers[][4] = {{'M', 'E', 'T', 'A'}, {'M', 'E', 'M', 'S'}, {'T', 'B', 'L', 'S'},
                                      {'G', 'L', 'B', 'S'}, {'S', 'E', 'G', 'S'}};
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const ss_section *s = &layout[i];
        bool modl = known_order(s->tag) == ORDER_MODL;
        if (modl && s->flags == 0 && i + 1 < n && known_order(layout[i + 1].tag) == ORDER_MEMS) continue;
        if (k == sizeof writers / sizeof writers[0] || memcmp(s->tag, writers[k], 4) != 0 || s->flags != 1)
            return false;
        k++;
    }
    return k == sizeof writers / sizeof writers[0];
}

void ss_manifest_file(const char *name, char *out, size_t cap) { snprintf(out, cap, "%s%s", name, SS_MANIFEST_EXT); }

void ss_manifest_derive(ss_manifest *m) {
    ri_snapstore_info *in = &m->info;
    memcpy(in->module_sha256, m->meta, SS_HASH);
    in->module_size = ri_le_get64(m->meta + 32);
    in->status = (ri_snap_status)ri_le_get32(m->meta + 40);
    in->prng_state = ri_le_get32(m->meta + 44);
    in->gas_used = ri_le_get64(m->meta + 48);
    in->event_timestamp = (int64_t)ri_le_get64(m->meta + 56);
    in->nmemories = m->nmemories;
    in->memory_bytes = 0;
    in->stored_pages = 0;
    /* The raw image without MODL: header, META, MEMS, TBLS, GLBS, SEGS, CSUM. */
    uint64_t image = 8 + 16 + SS_META_BYTES + 16 + 4;
    for (uint32_t i = 0; i < m->nmemories; i++) {
        const ss_memory *mem = &m->memories[i];
        in->memory_bytes += (uint64_t)mem->pages * SS_PAGE;
        in->stored_pages += mem->stored;
        image += 24 + ((uint64_t)mem->pages + 7) / 8 + (uint64_t)mem->stored * SS_PAGE;
    }
    image += 3 * 16 + m->tbls_len + m->glbs_len + m->segs_len + 20;
    for (uint32_t i = 0; i < m->nsections; i++)
        if (m->sections[i].content) image += 16 + m->sections[i].len;
    if (m->ws.present) image += 16 + 16 + m->ws.raw_len; /* WSFS, raw */
    in->image_bytes = image;
}

static bool sha(const uint8_t *data, size_t len, uint8_t out[SS_HASH], ri_snapstore_error *err) {
    if (!ri_snap_sha256(data, len, out)) return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "libcrypto failed to compute a SHA-256");
    return true;
}

bool ss_manifest_encode(const ss_manifest *m, ri_buf *out, ri_snapstore_error *err) {
    char *meta = ss_meta_json(&m->info, false);
    if (!meta) return ss_nomem(err);
    size_t mlen = strlen(meta);
    if (mlen > SS_MAX_META_JSON) {
        free(meta);
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "The snapshot's metadata is too large (%zu bytes of JSON)",
                       mlen);
    }
    ri_buf b = {NULL, 0, 0, false};
    ri_buf_put(&b, MAGIC, 4);
    ri_buf_u16(&b, m->ws.present ? VERSION_WORKSPACE : m->nsections ? VERSION_LAYOUT : VERSION_PLAIN);
    ri_buf_u16(&b, 0);
    ri_buf_u32(&b, (uint32_t)mlen);
    ri_buf_u32(&b, 0);
    ri_buf_u64(&b, 0); /* B, patched below */
    ri_buf_zeros(&b, SS_HASH);
    ri_buf_put(&b, meta, mlen);
    free(meta);
    size_t body = b.len;
    ri_buf_put(&b, m->meta, SS_META_BYTES);
    ri_buf_u32(&b, m->nmemories);
    for (uint32_t i = 0; i < m->nmemories; i++) {
        const ss_memory *mem = &m->memories[i];
        ri_buf_u32(&b, mem->pages);
        ri_buf_u32(&b, mem->max_pages);
        ri_buf_u8(&b, mem->has_max ? 1 : 0);
        ri_buf_zeros(&b, 3);
        ri_buf_u32(&b, mem->stored);
        ri_buf_put(&b, mem->bitmap, ((size_t)mem->pages + 7) / 8);
        ri_buf_put(&b, mem->hashes, (size_t)mem->stored * SS_HASH);
    }
    ri_buf_u64(&b, m->tbls_len);
    ri_buf_put(&b, m->tbls, (size_t)m->tbls_len);
    ri_buf_u64(&b, m->glbs_len);
    ri_buf_put(&b, m->glbs, (size_t)m->glbs_len);
    ri_buf_u64(&b, m->segs_len);
    ri_buf_put(&b, m->segs, (size_t)m->segs_len);
    if (m->nsections) ri_buf_u32(&b, m->nsections);
    for (uint32_t i = 0; i < m->nsections; i++) {
        const ss_section *sec = &m->sections[i];
        ri_buf_put(&b, sec->tag, 4);
        ri_buf_u32(&b, sec->flags);
        ri_buf_u64(&b, sec->content ? sec->len : 0);
        if (sec->content) ri_buf_put(&b, sec->content, (size_t)sec->len);
    }
    if (m->ws.present) {
        ri_buf_u64(&b, m->ws.raw_len);
        ri_buf_u64(&b, m->ws.skeleton_len);
        ri_buf_put(&b, m->ws.skeleton, (size_t)m->ws.skeleton_len);
        ri_buf_u64(&b, m->ws.nchunks);
        ri_buf_put(&b, m->ws.hashes, (size_t)m->ws.nchunks * SS_HASH);
    }
    if (b.failed) {
        ri_buf_free(&b);
        return ss_nomem(err);
    }
    /* A manifest no reader would accept must not be committed. */
    if ((uint64_t)b.len + SS_HASH > SS_MAX_MANIFEST) {
        size_t n = b.len;
        ri_buf_free(&b);
        return ss_fail(err, RI_SNAPSTORE_ERR_INPUT,
                       "The image's state outside its memory pages (tables, globals, segments and other sections) "
                       "needs a manifest of %zu bytes; the store's limit is %llu",
                       n + SS_HASH, (unsigned long long)SS_MAX_MANIFEST);
    }
    ri_le_put64(b.data + 16, (uint64_t)(b.len - body));
    /* The head digest covers the header and the metadata, skipping its own place. */
    ri_buf head = {NULL, 0, 0, false};
    ri_buf_put(&head, b.data, HEADER);
    ri_buf_put(&head, b.data + HEAD, mlen);
    uint8_t digest[SS_HASH];
    bool ok = !head.failed && sha(head.data, head.len, digest, err);
    ri_buf_free(&head);
    if (ok) {
        memcpy(b.data + HEADER, digest, SS_HASH);
        ok = sha(b.data, b.len, digest, err);
    }
    if (ok) ri_buf_put(&b, digest, SS_HASH);
    if (ok && b.failed) ok = ss_nomem(err);
    if (!ok) {
        ri_buf_free(&b);
        return false;
    }
    *out = b;
    return true;
}

/* ---- decoding ------------------------------------------------------------------------------------ */

typedef struct cursor {
    const uint8_t *p;
    size_t left;
} cursor;

static bool take(cursor *c, size_t n, const uint8_t **out) {
    if (n > c->left) return false;
    *out = c->p;
    c->p += n;
    c->left -= n;
    return true;
}

static bool corrupt(ri_snapstore_error *err, const char *name, const char *what) {
    return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: the manifest of snapshot '%s' %s", name, what);
}

/* Checks the header; *meta_len, *body_len. */
static bool check_header(const uint8_t *d, uint64_t file_len, const char *name, uint32_t *meta_len,
                         uint64_t *body_len, ri_snapstore_error *err) {
    if (memcmp(d, MAGIC, 4) != 0) return corrupt(err, name, "does not start with RISM (not a manifest)");
    uint16_t version = ri_le_get16(d + 4);
    if (version < VERSION_PLAIN || version > VERSION_WORKSPACE) {
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT,
                       "The manifest of snapshot '%s' has format version %u; this build reads versions %d to %d", name,
                       version, VERSION_PLAIN, VERSION_WORKSPACE);
    }
    if (ri_le_get16(d + 6) != 0 || ri_le_get32(d + 12) != 0) return corrupt(err, name, "has non-zero reserved bytes");
    *meta_len = ri_le_get32(d + 8);
    *body_len = ri_le_get64(d + 16);
    if (*meta_len > SS_MAX_META_JSON) return corrupt(err, name, "declares more metadata than a manifest may hold");
    if (*body_len > file_len || file_len - *body_len != (uint64_t)MIN_FILE + *meta_len) {
        char what[160];
        snprintf(what, sizeof what, "is %llu bytes, but its header describes %llu (truncated or damaged)",
                 (unsigned long long)file_len,
                 (unsigned long long)MIN_FILE + *meta_len + (*body_len > SS_MAX_MANIFEST ? 0 : *body_len));
        return corrupt(err, name, what);
    }
    return true;
}

static bool check_head_digest(const uint8_t *d, uint32_t meta_len, const char *name, ri_snapstore_error *err) {
    uint8_t *head = malloc(HEADER + meta_len);
    if (!head) return ss_nomem(err);
    memcpy(head, d, HEADER);
    memcpy(head + HEADER, d + HEAD, meta_len);
    uint8_t digest[SS_HASH];
    bool ok = sha(head, HEADER + meta_len, digest, err);
    free(head);
    if (ok && memcmp(digest, d + HEADER, SS_HASH) != 0)
        ok = corrupt(err, name, "has a head that does not match its digest: the file is damaged");
    return ok;
}

static bool parse_meta(const uint8_t *d, uint32_t meta_len, const char *name, ri_snapstore_info *out,
                       ri_snapstore_error *err) {
    char where[RI_SNAPSTORE_NAME_MAX + 64];
    snprintf(where, sizeof where, "Corrupt store: the manifest of snapshot '%s'", name);
    snprintf(out->name, sizeof out->name, "%s", name);
    return ss_meta_parse((const char *)d + HEAD, meta_len, false, where, out, RI_SNAPSTORE_ERR_CORRUPT, err);
}

static uint32_t popcount8(uint8_t v) {
    uint32_t n = 0;
    for (; v; v &= (uint8_t)(v - 1)) n++;
    return n;
}

static bool parse_memory(cursor *c, const char *name, uint32_t index, ss_memory *mem, ri_snapstore_error *err) {
    const uint8_t *h;
    char what[128];
    if (!take(c, 16, &h)) return corrupt(err, name, "ends inside a memory's header");
    mem->pages = ri_le_get32(h);
    mem->max_pages = ri_le_get32(h + 4);
    mem->has_max = h[8] & 1;
    mem->stored = ri_le_get32(h + 12);
    if (h[8] > 1 || h[9] || h[10] || h[11]) {
        snprintf(what, sizeof what, "has bad flags for memory %u", index);
        return corrupt(err, name, what);
    }
    if (mem->pages > RI_SNAP_MAX_PAGES || mem->stored > mem->pages) {
        snprintf(what, sizeof what, "gives memory %u %u pages of which %u stored", index, mem->pages, mem->stored);
        return corrupt(err, name, what);
    }
    size_t bitmap_len = ((size_t)mem->pages + 7) / 8;
    const uint8_t *bitmap, *hashes;
    if (!take(c, bitmap_len, &bitmap) || !take(c, (size_t)mem->stored * SS_HASH, &hashes)) {
        snprintf(what, sizeof what, "ends inside memory %u's page table", index);
        return corrupt(err, name, what);
    }
    uint32_t set = 0;
    for (size_t i = 0; i < bitmap_len; i++) set += popcount8(bitmap[i]);
    bool tail_clear = mem->pages % 8 == 0 || (bitmap[bitmap_len - 1] >> (mem->pages % 8)) == 0;
    if (set != mem->stored || !tail_clear) {
        snprintf(what, sizeof what, "has a page bitmap for memory %u that disagrees with its %u stored pages", index,
                 mem->stored);
        return corrupt(err, name, what);
    }
    mem->bitmap = malloc(bitmap_len ? bitmap_len : 1);
    mem->hashes = malloc(mem->stored ? (size_t)mem->stored * SS_HASH : 1);
    if (!mem->bitmap || !mem->hashes) return ss_nomem(err);
    if (bitmap_len) memcpy(mem->bitmap, bitmap, bitmap_len);
    if (mem->stored) memcpy(mem->hashes, hashes, (size_t)mem->stored * SS_HASH);
    return true;
}

static bool parse_section(cursor *c, const char *name, const char *tag, uint8_t **out, uint64_t *out_len,
                          ri_snapstore_error *err) {
    const uint8_t *h, *content;
    char what[96];
    snprintf(what, sizeof what, "ends inside its %s section", tag);
    if (!take(c, 8, &h)) return corrupt(err, name, what);
    uint64_t n = ri_le_get64(h);
    if (n > c->left || !take(c, (size_t)n, &content)) return corrupt(err, name, what);
    *out = malloc(n ? (size_t)n : 1);
    if (!*out) return ss_nomem(err);
    if (n) memcpy(*out, content, (size_t)n);
    *out_len = n;
    return true;
}

/* Version 2's layout: a WSNP v2 order (META first, the known sections once each and in
 * order, MEMS TBLS GLBS SEGS present), no CSUM or RIMD, no unknown required section, and
 * content only for the sections the store does not rebuild. */
static bool parse_layout(cursor *c, const char *name, ss_manifest *m, bool *has_wsfs, ri_snapstore_error *err) {
    const uint8_t *p;
    if (!take(c, 4, &p)) return corrupt(err, name, "ends before its section layout");
    uint32_t n = ri_le_get32(p);
    if (n == 0 || n > c->left / 16) return corrupt(err, name, "declares a section layout its bytes do not hold");
    m->sections = calloc(n, sizeof *m->sections);
    if (!m->sections) return ss_nomem(err);
    m->nsections = n;
    int last = -1;
    uint32_t needed = 0; /* bits of MEMS TBLS GLBS SEGS seen */
    for (uint32_t i = 0; i < n; i++) {
        ss_section *sec = &m->sections[i];
        if (!take(c, 16, &p)) return corrupt(err, name, "ends inside its section layout");
        memcpy(sec->tag, p, 4);
        sec->flags = ri_le_get32(p + 4);
        uint64_t len = ri_le_get64(p + 8);
        int k = known_order(sec->tag);
        const char *why = NULL;
        if ((i == 0) != (k == 0)) why = "where META must be first, and only there";
        else if (k >= 0 && k <= last) why = "repeated or out of order";
        else if (memcmp(sec->tag, "CSUM", 4) == 0 || memcmp(sec->tag, "RIMD", 4) == 0) why = "which the store never keeps";
        else if (k < 0 && (sec->flags & 1)) why = "unknown and required";
        else if (ss_section_rebuilt(sec->tag) && len) why = "with content although the store rebuilds it";
        if (why) {
            char what[160];
            snprintf(what, sizeof what, "has a section layout with '%.4s' (section %u) %s", sec->tag, i, why);
            return corrupt(err, name, what);
        }
        if (k >= 0) last = k;
        if (k == ORDER_WSFS) *has_wsfs = true;
        if (k >= ORDER_MEMS && k < ORDER_FRMS) needed |= 1u << (k - ORDER_MEMS);
        if (ss_section_rebuilt(sec->tag)) continue;
        const uint8_t *content;
        if (len > c->left || !take(c, (size_t)len, &content)) return corrupt(err, name, "ends inside a kept section");
        sec->content = malloc(len ? (size_t)len : 1);
        if (!sec->content) return ss_nomem(err);
        if (len) memcpy(sec->content, content, (size_t)len);
        sec->len = len;
    }
    if (needed != 15) return corrupt(err, name, "has a section layout without MEMS, TBLS, GLBS and SEGS");
    return true;
}

/* Version 3's workspace record: u64 R, u64 S and the skeleton, u64 H and the chunk hashes. */
static bool parse_workspace(cursor *c, const char *name, ss_workspace *w, ri_snapstore_error *err) {
    const uint8_t *p, *skeleton, *hashes;
    if (!take(c, 16, &p)) return corrupt(err, name, "ends inside its workspace record");
    w->raw_len = ri_le_get64(p);
    w->skeleton_len = ri_le_get64(p + 8);
    if (w->skeleton_len > c->left || !take(c, (size_t)w->skeleton_len, &skeleton) || !take(c, 8, &p))
        return corrupt(err, name, "ends inside its workspace skeleton");
    w->nchunks = ri_le_get64(p);
    if (w->nchunks > c->left / SS_HASH || !take(c, (size_t)w->nchunks * SS_HASH, &hashes))
        return corrupt(err, name, "ends inside its workspace chunk hashes");
    w->present = true;
    w->skeleton = malloc(w->skeleton_len ? (size_t)w->skeleton_len : 1);
    w->hashes = malloc(w->nchunks ? (size_t)w->nchunks * SS_HASH : 1);
    if (!w->skeleton || !w->hashes) return ss_nomem(err);
    memcpy(w->skeleton, skeleton, (size_t)w->skeleton_len);
    memcpy(w->hashes, hashes, (size_t)w->nchunks * SS_HASH);
    return ss_workspace_index(w, name, err);
}

static bool parse_body(const uint8_t *body, size_t len, uint16_t version, const char *name, ss_manifest *m,
                       ri_snapstore_error *err) {
    cursor c = {body, len};
    const uint8_t *p;
    if (!take(&c, SS_META_BYTES, &p) ) return corrupt(err, name, "ends inside its META");
    memcpy(m->meta, p, SS_META_BYTES);
    if (!take(&c, 4, &p)) return corrupt(err, name, "ends before its memory count");
    uint32_t n = ri_le_get32(p);
    if (n != ri_le_get32(m->meta + 68)) return corrupt(err, name, "counts memories other than its META does");
    if (n > c.left / 16) return corrupt(err, name, "declares more memories than its bytes hold");
    m->memories = calloc(n ? n : 1, sizeof *m->memories);
    if (!m->memories) return ss_nomem(err);
    m->nmemories = n;
    for (uint32_t i = 0; i < n; i++)
        if (!parse_memory(&c, name, i, &m->memories[i], err)) return false;
    if (!parse_section(&c, name, "TBLS", &m->tbls, &m->tbls_len, err) ||
        !parse_section(&c, name, "GLBS", &m->glbs, &m->glbs_len, err) ||
        !parse_section(&c, name, "SEGS", &m->segs, &m->segs_len, err))
        return false;
    bool has_wsfs = false;
    if (version >= VERSION_LAYOUT && !parse_layout(&c, name, m, &has_wsfs, err)) return false;
    if (has_wsfs != (version == VERSION_WORKSPACE))
        return corrupt(err, name, has_wsfs ? "has a WSFS section but no workspace record (version 3)"
                                           : "is version 3 without a WSFS section in its layout");
    if (version == VERSION_WORKSPACE && !parse_workspace(&c, name, &m->ws, err)) return false;
    if (c.left) return corrupt(err, name, "has bytes after its last section");
    uint32_t status = ri_le_get32(m->meta + 40);
    if (status > RI_SNAP_STATUS_SUSPENDED || ri_le_get64(m->meta + 48) > (uint64_t)INT64_MAX)
        return corrupt(err, name, "holds a META with an unknown status or gas above 2^63 - 1");
    return true;
}

const char *ss_info_disagreement(const ri_snapstore_info *said, const ri_snapstore_info *is) {
    const char *field = NULL;
    if (memcmp(said->module_sha256, is->module_sha256, SS_HASH) != 0) field = "module";
    else if (said->module_size != is->module_size) field = "moduleSize";
    else if (said->status != is->status) field = "status";
    else if (said->prng_state != is->prng_state) field = "prngState";
    else if (said->gas_used != is->gas_used) field = "gasUsed";
    else if (said->event_timestamp != is->event_timestamp) field = "eventTimestamp";
    else if (said->nmemories != is->nmemories) field = "memories";
    else if (said->memory_bytes != is->memory_bytes) field = "memoryBytes";
    else if (said->stored_pages != is->stored_pages) field = "storedPages";
    else if (said->image_bytes != is->image_bytes) field = "imageBytes";
    return field;
}

/* The metadata must say what the body says. */
static bool agree(const ri_snapstore_info *said, const ri_snapstore_info *is, const char *name,
                  ri_snapstore_error *err) {
    const char *field = ss_info_disagreement(said, is);
    if (!field) return true;
    char what[96];
    snprintf(what, sizeof what, "has metadata (\"%s\") that disagrees with its state", field);
    return corrupt(err, name, what);
}

bool ss_manifest_decode(const uint8_t *data, size_t len, const char *name, ss_manifest *out, ri_snapstore_error *err) {
    memset(out, 0, sizeof *out);
    if (len < MIN_FILE) {
        char what[96];
        snprintf(what, sizeof what, "is %zu bytes, too short for a manifest (truncated)", len);
        return corrupt(err, name, what);
    }
    uint32_t meta_len;
    uint64_t body_len;
    if (!check_header(data, len, name, &meta_len, &body_len, err)) return false;
    uint8_t digest[SS_HASH];
    if (!sha(data, len - SS_HASH, digest, err)) return false;
    if (memcmp(digest, data + len - SS_HASH, SS_HASH) != 0)
        return corrupt(err, name, "does not match its digest: the file is damaged");
    if (!check_head_digest(data, meta_len, name, err)) return false;
    if (!parse_meta(data, meta_len, name, &out->info, err)) return false;
    ri_snapstore_info said = out->info;
    if (!parse_body(data + HEAD + meta_len, (size_t)body_len, ri_le_get16(data + 4), name, out, err)) {
        ss_manifest_free(out);
        return false;
    }
    ss_manifest_derive(out);
    out->info.manifest_bytes = len;
    if (!agree(&said, &out->info, name, err)) {
        ss_manifest_free(out);
        return false;
    }
    return true;
}

bool ss_manifest_load(ri_snapstore *st, const char *name, ss_manifest *out, ri_snapstore_error *err) {
    memset(out, 0, sizeof *out);
    char file[RI_SNAPSTORE_NAME_MAX + 8];
    ss_manifest_file(name, file, sizeof file);
    uint8_t *data;
    size_t len;
    bool missing;
    if (!ss_read_file(st->snaps_fd, file, SS_MAX_MANIFEST, &data, &len, &missing, err)) {
        if (missing) return ss_not_found(err, name);
        ss_error_prefix(err, "Cannot read a manifest: ");
        return false;
    }
    bool ok = ss_manifest_decode(data, len, name, out, err);
    free(data);
    return ok;
}

static bool pread_all(int fd, uint8_t *buf, size_t n, off_t at) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

bool ss_manifest_load_head(ri_snapstore *st, const char *name, ri_snapstore_info *out, ri_snapstore_error *err) {
    memset(out, 0, sizeof *out);
    char file[RI_SNAPSTORE_NAME_MAX + 8];
    ss_manifest_file(name, file, sizeof file);
    int fd = openat(st->snaps_fd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) return ss_not_found(err, name);
        return ss_fail_errno(err, errno, "Cannot open the manifest of snapshot '%s'", name);
    }
    struct stat sb;
    uint8_t small[4096];
    uint8_t *buf = small;
    bool ok = fstat(fd, &sb) == 0 || ss_fail_errno(err, errno, "Cannot stat the manifest of snapshot '%s'", name);
    uint64_t file_len = ok ? (uint64_t)sb.st_size : 0;
    if (ok && (!S_ISREG(sb.st_mode) || file_len < MIN_FILE))
        ok = corrupt(err, name, "is too short for a manifest (truncated) or not a file");
    uint32_t meta_len = 0;
    uint64_t body_len;
    if (ok) ok = pread_all(fd, buf, HEAD, 0) || corrupt(err, name, "cannot be read");
    if (ok) ok = check_header(buf, file_len, name, &meta_len, &body_len, err);
    if (ok && HEAD + meta_len > sizeof small) {
        buf = malloc(HEAD + meta_len);
        if (buf) memcpy(buf, small, HEAD);
        else ok = ss_nomem(err);
    }
    if (ok) ok = pread_all(fd, buf + HEAD, meta_len, HEAD) || corrupt(err, name, "cannot be read");
    close(fd);
    if (ok) ok = check_head_digest(buf, meta_len, name, err);
    if (ok) ok = parse_meta(buf, meta_len, name, out, err);
    if (ok) out->manifest_bytes = file_len;
    if (buf != small) free(buf);
    return ok;
}

bool ss_manifest_visit(const ss_manifest *m, ss_hash_visitor visit, void *user) {
    for (uint32_t i = 0; i < m->nmemories; i++)
        for (uint32_t k = 0; k < m->memories[i].stored; k++)
            if (!visit(user, m->memories[i].hashes + (size_t)k * SS_HASH, SS_PAGE)) return false;
    if (m->info.module_stored && !visit(user, m->info.module_sha256, m->info.module_size)) return false;
    for (uint64_t k = 0; m->ws.present && k < m->ws.nchunks; k++)
        if (!visit(user, m->ws.hashes + k * SS_HASH, m->ws.chunk_len[k])) return false;
    return true;
}
