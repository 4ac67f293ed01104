/*
 * A workspace (section WSFS) kept by content (docs/STORE.md "Workspaces"): every regular
 * file's bytes cut into chunks of SS_CHUNK bytes (the workspace's own block size, so a
 * write that changes one block of a file adds one blob), one blob per distinct chunk, and
 * the skeleton (the canonical image with the file contents cut out: inodes, directories,
 * symlinks, sizes) in the manifest. Identical files across snapshots and sandboxes are
 * stored once; the canonical image comes back byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"
#include "workspace/wsfs.h"

void ss_workspace_free(ss_workspace *w) {
    free(w->skeleton);
    free(w->hashes);
    free(w->chunk_len);
    memset(w, 0, sizeof *w);
}

static uint64_t chunks_of(uint64_t size) { return size / SS_CHUNK + (size % SS_CHUNK != 0); }

/* ---- splitting (ingest) ------------------------------------------------------------------ */

typedef struct range {
    size_t at;
    uint64_t size;
} range;

typedef struct ranges {
    range *items;
    size_t n, cap;
    uint64_t chunks, content;
    bool nomem;
} ranges;

static bool add_range(void *ctx, uint64_t ino, size_t at, uint64_t size) {
    (void)ino;
    ranges *r = ctx;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        range *items = realloc(r->items, cap * sizeof *items);
        if (!items) return !(r->nomem = true);
        r->items = items;
        r->cap = cap;
    }
    r->items[r->n++] = (range){at, size};
    r->chunks += chunks_of(size);
    r->content += size;
    return true;
}

bool ss_workspace_split(const uint8_t *ws, size_t len, ss_workspace *w, const uint8_t ***chunks,
                        ri_snapstore_error *err) {
    memset(w, 0, sizeof *w);
    *chunks = NULL;
    ranges r = {NULL, 0, 0, 0, 0, false};
    wsfs_error we;
    if (wsfs_walk_files(ws, len, false, add_range, &r, &we) != WSFS_OK) {
        free(r.items);
        if (r.nomem) return ss_nomem(err);
        return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid snapshot — WSFS: %s", we.message);
    }
    w->present = true;
    w->raw_len = len;
    w->skeleton_len = len - r.content;
    w->nchunks = r.chunks;
    w->skeleton = malloc(w->skeleton_len ? (size_t)w->skeleton_len : 1);
    w->hashes = malloc(r.chunks ? (size_t)r.chunks * SS_HASH : 1);
    w->chunk_len = malloc(r.chunks ? (size_t)r.chunks * sizeof *w->chunk_len : 1);
    *chunks = malloc(r.chunks ? (size_t)r.chunks * sizeof **chunks : 1);
    bool ok = w->skeleton && w->hashes && w->chunk_len && *chunks;
    size_t from = 0, to = 0, k = 0;
    for (size_t i = 0; ok && i < r.n; i++) {
        memcpy(w->skeleton + to, ws + from, r.items[i].at - from);
        to += r.items[i].at - from;
        for (uint64_t off = 0; ok && off < r.items[i].size; off += SS_CHUNK, k++) {
            uint64_t n = r.items[i].size - off < SS_CHUNK ? r.items[i].size - off : SS_CHUNK;
            const uint8_t *bytes = ws + r.items[i].at + off;
            (*chunks)[k] = bytes;
            w->chunk_len[k] = (uint32_t)n;
            if (!ri_snap_sha256(bytes, (size_t)n, w->hashes + k * SS_HASH))
                ok = ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "libcrypto failed to compute a SHA-256");
        }
        from = r.items[i].at + (size_t)r.items[i].size;
    }
    if (ok) memcpy(w->skeleton + to, ws + from, len - from);
    else if (!w->skeleton || !w->hashes || !w->chunk_len || !*chunks) ss_nomem(err);
    free(r.items);
    if (!ok) {
        ss_workspace_free(w);
        free(*chunks);
        *chunks = NULL;
    }
    return ok;
}

/* ---- the manifest's record (decode) ------------------------------------------------------ */

typedef struct indexer {
    ss_workspace *w;
    uint64_t k, content;
    bool over;
} indexer;

static bool index_file(void *ctx, uint64_t ino, size_t at, uint64_t size) {
    (void)ino;
    (void)at;
    indexer *x = ctx;
    uint64_t n = chunks_of(size);
    if (n > x->w->nchunks - x->k || size > UINT64_MAX - x->content) {
        x->over = true;
        return false;
    }
    for (uint64_t off = 0; off < size; off += SS_CHUNK)
        x->w->chunk_len[x->k++] = (uint32_t)(size - off < SS_CHUNK ? size - off : SS_CHUNK);
    x->content += size;
    return true;
}

bool ss_workspace_index(ss_workspace *w, const char *name, ri_snapstore_error *err) {
    free(w->chunk_len);
    w->chunk_len = malloc(w->nchunks ? (size_t)w->nchunks * sizeof *w->chunk_len : 1);
    if (!w->chunk_len) return ss_nomem(err);
    indexer x = {w, 0, 0, false};
    wsfs_error we;
    const char *why = NULL;
    if (wsfs_walk_files(w->skeleton, (size_t)w->skeleton_len, true, index_file, &x, &we) != WSFS_OK)
        why = x.over ? "names more file chunks than it holds" : "has a workspace skeleton that is not well formed";
    else if (x.k != w->nchunks)
        why = "holds more workspace chunks than its files need";
    else if (x.content > UINT64_MAX - w->skeleton_len || w->skeleton_len + x.content != w->raw_len)
        why = "gives a workspace length that its files do not add up to";
    if (!why) return true;
    return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: the manifest of snapshot '%s' %s", name, why);
}

/* ---- rebuilding (assemble) ---------------------------------------------------------------- */

typedef struct builder {
    ri_snapstore *st;
    const ss_manifest *m;
    uint8_t *out;
    size_t from, to;             /* skeleton bytes copied; output bytes written */
    uint64_t k;
    ri_snapstore_error *err;
    bool failed;
} builder;

static bool put_file(void *ctx, uint64_t ino, size_t at, uint64_t size) {
    builder *b = ctx;
    const ss_workspace *w = &b->m->ws;
    memcpy(b->out + b->to, w->skeleton + b->from, at - b->from);
    b->to += at - b->from;
    b->from = at;
    for (uint64_t c = 0; c < chunks_of(size); c++, b->k++) {
        char what[RI_SNAPSTORE_NAME_MAX + 96];
        snprintf(what, sizeof what, "chunk %llu of file inode %llu in the workspace of snapshot '%s'",
                 (unsigned long long)c, (unsigned long long)ino, b->m->info.name);
        if (!ss_blob_read(b->st, w->hashes + b->k * SS_HASH, b->out + b->to, w->chunk_len[b->k], what, b->err)) {
            b->failed = true;
            return false;
        }
        b->to += w->chunk_len[b->k];
    }
    return true;
}

bool ss_workspace_rebuild(ri_snapstore *st, const ss_manifest *m, uint8_t **out, size_t *len,
                          ri_snapstore_error *err) {
    const ss_workspace *w = &m->ws;
    *out = NULL;
    *len = 0;
    if (w->raw_len > SIZE_MAX) return ss_nomem(err);
    builder b = {st, m, malloc(w->raw_len ? (size_t)w->raw_len : 1), 0, 0, 0, err, false};
    if (!b.out) return ss_nomem(err);
    wsfs_error we;
    if (wsfs_walk_files(w->skeleton, (size_t)w->skeleton_len, true, put_file, &b, &we) != WSFS_OK) {
        if (!b.failed)
            ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: the workspace of snapshot '%s': %s", m->info.name,
                    we.message);
        free(b.out);
        return false;
    }
    memcpy(b.out + b.to, w->skeleton + b.from, (size_t)w->skeleton_len - b.from);
    *out = b.out;
    *len = (size_t)w->raw_len;
    return true;
}
