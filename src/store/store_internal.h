/*
 * Private to src/store/: the structures and the contracts between the files (one
 * concern each; docs/STORE.md has the layout and the commit protocol):
 *
 *   error.c        error values, codes' names, the abort signal
 *   text.c         hex, UTF-8 checks, names and ids, random ids, the wall clock
 *   fsio.c         whole-file reads, temporary files, fsync, rename: the atomic write
 *   lock.c         the store's flock locks (shared, exclusive), abortable waits
 *   config.c       store.json: the format marker and the size cap
 *   blob.c         content-addressed blobs: zstd, SHA-256, verification
 *   cache.c        the last saved pages of a sandbox (ri_snapstore_cache)
 *   metadata.c     a snapshot's metadata as JSON (manifest head, RIMD, JSON export)
 *   manifest.c     the manifest file: encode, decode (whole, or the head only)
 *   ingest.c       a WSNP v2 image -> blobs + a manifest
 *   assemble.c     a manifest + blobs -> a WSNP v2 image
 *   workspace.c    a workspace (WSFS) as file chunks by content and a skeleton, and back
 *   store.c        open, put (the commit), get, list, delete, rename
 *   gc.c           mark and sweep, usage, the cap and eviction, verify
 *   export.c       export and import
 *   manager.c      ri_snapshots (seed 003)
 *   ref.c          snapshot refs as JSON, strictly parsed
 *   audit.c        the audit log of cross-session opt-ins
 *   snapshotter.c  ri_snapshotter (seed 004)
 */
#ifndef RI_STORE_INTERNAL_H
#define RI_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/store.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/le.h"
#include "util/random.h"
#include "util/utf8.h"

#define SS_PAGE RI_SNAP_PAGE_BYTES
#define SS_HASH RI_SNAP_SHA256_BYTES
#define SS_HEX (2 * SS_HASH)
#define SS_META_BYTES 88u                  /* WSNP v2 META content */
#define SS_MAX_MODULE (256u << 20)         /* the engine's module size limit */
#define SS_MAX_META_JSON 65536u            /* a manifest's metadata */
#define SS_MAX_MANIFEST ((uint64_t)64 << 20)
#define SS_TEMP_PREFIX ".tmp-"
#define SS_MANIFEST_EXT ".snap"
#define SS_STORE_FORMAT "ri-snapshot-store"
#define SS_STORE_VERSION 1

/* ---- errors and the abort signal (error.c) ---------------------------------------------- */

#if defined(__GNUC__)
#define SS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SS_PRINTF(a, b)
#endif

/* Public entry points that look at an error's code give a NULL err a scratch one. */
#define SS_ERR_SCRATCH(err)                                                                                 \
    ri_snapstore_error err##_scratch;                                                                       \
    if (!(err)) (err) = &err##_scratch

void ss_ok(ri_snapstore_error *err);
/* Sets err (if not NULL) and returns false. */
bool ss_fail(ri_snapstore_error *err, ri_snapstore_errcode code, const char *fmt, ...) SS_PRINTF(3, 4);
/* RI_SNAPSTORE_ERR_IO with ": <strerror(e)>" after the message. */
bool ss_fail_errno(ri_snapstore_error *err, int e, const char *fmt, ...) SS_PRINTF(3, 4);
bool ss_not_found(ri_snapstore_error *err, const char *name);
bool ss_nomem(ri_snapstore_error *err);
/* Puts prefix before err's message. */
void ss_error_prefix(ri_snapstore_error *err, const char *prefix);

bool ss_aborted(const ri_snapstore_abort *abort);
/* The check every operation starts with. */
bool ss_abort_at_start(const ri_snapstore_abort *abort, ri_snapstore_error *err);

/* ---- text, ids, time (text.c) ---------------------------------------------------------------- */

bool ss_utf8_valid(const char *s, size_t n);
/* Description: at most RI_SNAPSTORE_DESCRIPTION_MAX bytes of UTF-8, no control characters
 * but newline and tab. Tag: 1 to RI_SNAPSTORE_TAG_MAX bytes of UTF-8, no control characters. */
bool ss_description_valid(const char *s, ri_snapstore_error *err);
bool ss_tag_valid(const char *s, ri_snapstore_error *err);
bool ss_tags_valid(const char *const *tags, uint32_t ntags, ri_snapstore_error *err);
/* n random bytes from the kernel as 2n hex digits. */
bool ss_random_hex(char *out, size_t n_bytes, ri_snapstore_error *err);

/* ---- files (fsio.c) ---------------------------------------------------------------------------- */

/* Reads dirfd/name whole, refusing files over max bytes. A missing file sets *missing
 * (if missing is not NULL) and returns false without an error code of its own (ERR_IO
 * with ENOENT). *data is malloc'd (never NULL on success). */
bool ss_read_file(int dirfd, const char *name, uint64_t max, uint8_t **data, size_t *len, bool *missing,
                  ri_snapstore_error *err);
/* Creates a temporary file in dirfd (O_EXCL, SS_TEMP_PREFIX + random), writes the
 * data in chunks of 1 MiB (checking abort between them), fsyncs it. tmp receives its
 * name. On failure (an abort too) the file is gone. */
bool ss_write_temp(int dirfd, const uint8_t *data, size_t len, const ri_snapstore_abort *abort, char tmp[64],
                   ri_snapstore_error *err);
bool ss_fsync_dir(int dirfd, const char *what, ri_snapstore_error *err);
/* rename within dirfd; with noreplace, an existing target fails with EEXIST (renameat2,
 * or link + unlink where the file system lacks it). Returns the errno (0: done). */
int ss_rename(int dirfd, const char *from, const char *to, bool noreplace);
bool ss_is_temp(const char *name);
/* Opens a directory (O_DIRECTORY) relative to dirfd; -1 with errno. */
int ss_open_dir(int dirfd, const char *path);

/* ---- the store handle ------------------------------------------------------------------------- */

struct ri_snapstore {
    char *dir;                   /* as given to open */
    int dirfd;                   /* DIR */
    int blobs_fd;                /* DIR/blobs (fan-out directories 00..ff below) */
    int snaps_fd;                /* DIR/snapshots */
    /* Reused across calls (a handle is used by one thread at a time): zstd contexts are
     * costly to create per page. Made on first use. */
    void *cctx, *dctx;           /* ZSTD_CCtx, ZSTD_DCtx */
    ri_buf scratch;              /* a compressed blob on its way out or in */
};

/* ---- locks (lock.c) ------------------------------------------------------------------------------- */

typedef enum ss_lock_mode { SS_LOCK_SHARED, SS_LOCK_EXCLUSIVE } ss_lock_mode;

/* Locks DIR/lock (flock on a descriptor of its own, so handles in one process exclude
 * each other too). With an abort signal the wait polls it. Returns the descriptor, -1
 * with err set. */
int ss_lock(ri_snapstore *st, ss_lock_mode mode, const ri_snapstore_abort *abort, ri_snapstore_error *err);
/* DIR/blobs.lock (blocking): shared to look for blobs, exclusive to publish them. */
int ss_lock_blobs(ri_snapstore *st, ss_lock_mode mode, ri_snapstore_error *err);
void ss_unlock(int fd);

/* ---- store.json (config.c) --------------------------------------------------------------------------- */

typedef struct ss_config {
    uint64_t max_bytes;          /* 0: no cap */
} ss_config;

bool ss_config_read(ri_snapstore *st, ss_config *out, ri_snapstore_error *err);
/* Atomic (temporary file, rename); the caller holds the exclusive lock. */
bool ss_config_write(int dirfd, const ss_config *cfg, ri_snapstore_error *err);

/* ---- blobs (blob.c) ---------------------------------------------------------------------------------- */

/* "ab/ab12...": relative to blobs_fd. */
#define SS_BLOB_PATH (3 + SS_HEX + 1)
void ss_blob_path(const uint8_t hash[SS_HASH], char out[SS_BLOB_PATH]);

/* Fan-out directories written to since the last ss_blob_sync. */
typedef struct ss_dirty {
    uint8_t bits[32];
} ss_dirty;

bool ss_blob_exists(ri_snapstore *st, const uint8_t hash[SS_HASH], bool *exists, ri_snapstore_error *err);
/* Compresses data and writes it to a temporary file in blob `hash`'s directory (the
 * caller vouches hash = SHA-256(data)), fsync'd; tmp receives its name, *written its
 * bytes. Not visible until ss_blob_publish. */
bool ss_blob_prepare(ri_snapstore *st, const uint8_t hash[SS_HASH], const uint8_t *data, size_t len, char tmp[64],
                     uint64_t *written, ri_snapstore_error *err);
/* Renames a prepared blob into place (replacing an equal one is harmless). */
bool ss_blob_publish(ri_snapstore *st, const uint8_t hash[SS_HASH], const char *tmp, ss_dirty *dirty,
                     ri_snapstore_error *err);
void ss_blob_discard(ri_snapstore *st, const uint8_t hash[SS_HASH], const char *tmp);
/* fsyncs every dirty fan-out directory: the blobs' renames are durable after it. */
bool ss_blob_sync(ri_snapstore *st, ss_dirty *dirty, ri_snapstore_error *err);
/* Reads blob `hash`, which must decompress to exactly expected bytes whose SHA-256 is
 * hash, into dst (expected bytes). what names it in messages ("page 3 of memory 0"). */
bool ss_blob_read(ri_snapstore *st, const uint8_t hash[SS_HASH], uint8_t *dst, size_t expected, const char *what,
                  ri_snapstore_error *err);
/* Whether blob `hash` exists and, if so, the content size its frame header declares
 * (a header that is not a zstd frame's, or declares no size, is ERR_CORRUPT). Cheap: one
 * small read; the content itself is checked by the reads. */
bool ss_blob_content_size(ri_snapstore *st, const uint8_t hash[SS_HASH], bool *exists, uint64_t *size,
                          ri_snapstore_error *err);
/* The same for a blob of unknown size up to max (modules): *out is malloc'd. */
bool ss_blob_read_alloc(ri_snapstore *st, const uint8_t hash[SS_HASH], size_t expected, uint8_t **out,
                        const char *what, ri_snapstore_error *err);

/* ---- the page cache (cache.c) ---------------------------------------------------------------------------- */

/* The hash of page `page` of memory `mem` if the cache holds that page with exactly
 * these bytes. */
bool ss_cache_match(const ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t *bytes,
                    uint8_t hash[SS_HASH]);
/* The cached bytes of that page if their hash is `hash`, else NULL. */
const uint8_t *ss_cache_by_hash(const ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t hash[SS_HASH]);
/* Records page bytes and hash (copied). false on OOM (the cache is then still valid). */
bool ss_cache_set(ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t *bytes, const uint8_t hash[SS_HASH]);
/* Keeps memories < nmem, pages < pages[i] whose bit is set in bitmaps[i]; drops the rest. */
void ss_cache_trim(ri_snapstore_cache *c, uint32_t nmem, const uint32_t *pages, const uint8_t *const *bitmaps);

/* ---- manifests (metadata.c, manifest.c) ------------------------------------------------------------------ */

typedef struct ss_memory {
    uint32_t pages, max_pages;
    bool has_max;
    uint32_t stored;
    uint8_t *bitmap;             /* ceil(pages / 8) bytes */
    uint8_t *hashes;             /* stored * 32 bytes, in page order */
} ss_memory;

/* One section of the image a manifest stands for, in the image's order (CSUM and RIMD,
 * the store's own metadata, left out). The store rebuilds META, MODL, MEMS, TBLS, GLBS
 * and SEGS from the manifest and its blobs; every other section (FRMS, a paused call;
 * optional sections this build does not know) is kept verbatim, with its flags and its
 * place, so that the image comes back byte for byte. */
typedef struct ss_section {
    char tag[4];
    uint32_t flags;
    uint8_t *content;            /* a verbatim section's bytes; NULL for a rebuilt one */
    uint64_t len;
} ss_section;

/* A workspace (section WSFS, manifest version 3) kept by content: every regular file's
 * bytes in chunks of SS_CHUNK (the workspace's block size; a file's last chunk may be
 * shorter), one blob each, and the rest of its canonical image (the skeleton: the image
 * with every file's content cut out) in the manifest. */
#define SS_CHUNK 16384u
typedef struct ss_workspace {
    bool present;
    uint64_t raw_len;            /* R: the canonical image's length */
    uint8_t *skeleton;
    uint64_t skeleton_len;
    uint64_t nchunks;
    uint8_t *hashes;             /* nchunks * 32, files in image order, chunks in file order */
    uint32_t *chunk_len;         /* derived from the skeleton: each chunk's size */
} ss_workspace;

typedef struct ss_manifest {
    ri_snapstore_info info;      /* the metadata (name from the file name) */
    uint8_t meta[SS_META_BYTES]; /* WSNP v2 META, verbatim */
    uint32_t nmemories;
    ss_memory *memories;
    uint8_t *tbls, *glbs, *segs; /* the WSNP v2 sections' contents, verbatim */
    uint64_t tbls_len, glbs_len, segs_len;
    /* The image's sections in order; 0: exactly the writer's (META, [MODL], MEMS, TBLS,
     * GLBS, SEGS with the writer's flags), which manifest version 1 implies. */
    uint32_t nsections;
    ss_section *sections;
    ss_workspace ws;             /* present: the layout has WSFS (version 3) */
} ss_manifest;

/* Whether the store rebuilds section `tag` (META, MODL, MEMS, TBLS, GLBS, SEGS) rather
 * than keeping its bytes. */
bool ss_section_rebuilt(const char tag[4]);
/* Whether layout (n sections, as recorded at ingest) is the writer's own, which needs no
 * recording: the sections the store rebuilds, in order, with the writer's flags (MODL, if
 * there, optional and right before MEMS). */
bool ss_layout_is_writers(const ss_section *layout, uint32_t n);
/* The first metadata field (by its JSON key) on which said and is disagree: module,
 * moduleSize, status, prngState, gasUsed, eventTimestamp, memories, memoryBytes,
 * storedPages, imageBytes; NULL when they agree. */
const char *ss_info_disagreement(const ri_snapstore_info *said, const ri_snapstore_info *is);

void ss_manifest_free(ss_manifest *m);
/* Fills info's derived fields (memory_bytes, stored_pages, image_bytes, state from
 * META) from the body. */
void ss_manifest_derive(ss_manifest *m);
bool ss_manifest_encode(const ss_manifest *m, ri_buf *out, ri_snapstore_error *err);
/* Whole file: both digests, every length, metadata consistent with the body. */
bool ss_manifest_decode(const uint8_t *data, size_t len, const char *name, ss_manifest *out, ri_snapstore_error *err);
/* Reads and decodes snapshots/<name>.snap whole (NOT_FOUND when missing). */
bool ss_manifest_load(ri_snapstore *st, const char *name, ss_manifest *out, ri_snapstore_error *err);
/* Reads only the head of snapshots/<name>.snap (header, metadata, the head's own
 * digest): what list needs, a few hundred bytes however large the snapshot. */
bool ss_manifest_load_head(ri_snapstore *st, const char *name, ri_snapstore_info *out, ri_snapstore_error *err);
/* Every hash the manifest holds a reference to (pages, and the module when stored), with
 * the content size the reference implies (64 KiB for a page, META's for the module). */
typedef bool (*ss_hash_visitor)(void *user, const uint8_t hash[SS_HASH], uint64_t size);
bool ss_manifest_visit(const ss_manifest *m, ss_hash_visitor visit, void *user);
/* "<name>.snap" into out (RI_SNAPSTORE_NAME_MAX + 6). */
void ss_manifest_file(const char *name, char *out, size_t cap);

/* The metadata as compact JSON, keys in a fixed order; with_name adds "name" first
 * (RIMD, the JSON export). malloc'd; NULL on OOM. */
char *ss_meta_json(const ri_snapstore_info *info, bool with_name);
/* Strict: exactly the keys ss_meta_json writes (with_name: "name" too), each typed and
 * in range. Fills out (description and tags owned). where names the file in messages. */
bool ss_meta_parse(const char *json, size_t len, bool with_name, const char *where, ri_snapstore_info *out,
                   ri_snapstore_errcode code, ri_snapstore_error *err);
/* Deep copy of description and tags (for results handed out). */
bool ss_info_copy(ri_snapstore_info *dst, const ri_snapstore_info *src);
/* Sets description and tags (copies; validated). */
bool ss_info_set_text(ri_snapstore_info *info, const char *description, const char *const *tags, uint32_t ntags,
                      ri_snapstore_error *err);

/* ---- image <-> store (ingest.c, assemble.c) ------------------------------------------------------------------ */

typedef struct ss_ingest {
    const uint8_t *module;       /* the module (MODL or the caller's), or NULL */
    size_t module_len;
    ri_snapstore_cache *cache;
    const ri_snapstore_abort *abort;
    /* An import's metadata: it must describe the image (ss_info_disagreement), checked
     * before any blob is written; NULL: nothing to check. */
    const ri_snapstore_info *described;
} ss_ingest;

/* Under the shared lock: reads the image, writes the blobs it needs (each page once,
 * unchanged pages not rehashed when the cache knows them), syncs their directories, and
 * fills m (metadata fields other than the name's and the text's are set). */
bool ss_ingest_image(ri_snapstore *st, const uint8_t *image, size_t len, const ss_ingest *in, ss_manifest *m,
                     ri_snapstore_put_stats *stats, ri_snapstore_error *err);

/* The WSNP v2 image of manifest m: sections in the writer's order, payloads raw or zstd
 * exactly as the writer makes them, every blob verified. rimd: the RIMD section's JSON,
 * or NULL. When cache_out is set, it is updated with the pages (a restore's new state). */
bool ss_assemble(ri_snapstore *st, const ss_manifest *m, const ri_snapstore_image_options *o, const char *rimd,
                 ri_snapstore_cache *cache_out, ri_buf *out, ri_snapstore_error *err);

/* ---- workspaces (workspace.c) ---------------------------------------------------------------------------------- */

void ss_workspace_free(ss_workspace *w);
/* Splits canonical workspace bytes into w (skeleton, chunk hashes, sizes); *chunks gets
 * each chunk's bytes (pointers into ws, malloc'd array). INPUT when ws is not structured as
 * a canonical image. */
bool ss_workspace_split(const uint8_t *ws, size_t len, ss_workspace *w, const uint8_t ***chunks,
                        ri_snapstore_error *err);
/* Derives chunk_len from the skeleton and checks it against nchunks and raw_len (a
 * manifest being read): CORRUPT naming the snapshot otherwise. */
bool ss_workspace_index(ss_workspace *w, const char *name, ri_snapstore_error *err);
/* The canonical bytes again, every chunk read from its blob and verified (*out malloc'd). */
bool ss_workspace_rebuild(ri_snapstore *st, const ss_manifest *m, uint8_t **out, size_t *len,
                          ri_snapstore_error *err);

/* ---- the store's operations (store.c, gc.c) -------------------------------------------------------------------- */

/* ri_snapstore_put with the eviction optional (import uses the same path). */
bool ss_put(ri_snapstore *st, const char *name, const uint8_t *image, size_t len, const ri_snapstore_put_options *o,
            const ri_snapstore_info *meta_from, ri_snapstore_info *info, ri_snapstore_put_stats *stats,
            ri_snapstore_error *err);
/* ri_snapstore_get_image without taking the lock (the caller holds it). */
bool ss_get_image_locked(ri_snapstore *st, const char *name, const ri_snapstore_image_options *o, bool cache_update,
                         uint8_t **out, size_t *out_len, ri_snapstore_info *info, ri_snapstore_error *err);
/* Eviction and collection under the exclusive lock the caller holds; protect (may be
 * NULL) is never evicted. */
bool ss_collect(ri_snapstore *st, uint64_t max_bytes, const char *protect, ri_snapstore_gc_stats *stats,
                ri_snapstore_error *err);
/* The manifest names in snapshots/ (no temporary files), malloc'd. */
bool ss_list_names(ri_snapstore *st, char ***names, size_t *n, ri_snapstore_error *err);
void ss_free_names(char **names, size_t n);


/* ---- audit (audit.c) ---------------------------------------------------------------------------------------------- */

/* Appends one JSON line (level "warning") to DIR/audit.log and fsyncs it, then calls
 * the sink. false (err set) when the log cannot be written. */
bool ss_audit(ri_snapstore *st, ri_snapstore_audit_fn sink, void *user, const char *operation, const char *session,
              const char *snapshot, const ri_snapstore_info *target, ri_snapstore_error *err);

#endif
