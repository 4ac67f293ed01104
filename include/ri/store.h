/*
 * ri snapshot store: named snapshots, snapshot refs and a durable, content-addressed
 * store of sandbox states in a directory (docs/STORE.md has
 * the on-disk layout, the commit protocol and its invariants).
 *
 * Three faces of one store:
 *
 *   ri_snapstore     the directory: content-addressed blobs (SHA-256 of the content,
 *                    zstd-compressed, verified on every read) and one manifest per
 *                    snapshot (memory page hashes plus the small state), so a page is
 *                    stored once across all snapshots; crash-safe commits, garbage
 *                    collection, size accounting, a size cap, locking across processes.
 *   ri_snapshots     the snapshot manager of one sandbox: save, restore, has,
 *                    get, list, delete, rename, diff, diff against the live state,
 *                    export, import, total size, maximum size.
 *   ri_snapshotter   a session's snapshot refs: snapshot() returns a ref;
 *                    restore and branch create a NEW sandbox; list and delete; every
 *                    operation on another session's snapshot needs an explicit opt-in,
 *                    which is audited; every operation takes an abort signal.
 *
 * The store's names are ri_snapstore_* because ri_store is the engine's store
 * (ri/engine.h). Errors are values (ri_snapstore_error: a code and a complete message).
 * Nothing here is process-wide mutable state. A handle (store, manager, snapshotter) is
 * used by one thread at a time; open one per thread, or per process: the locks are
 * taken per operation on the directory, so any number of handles in any number of
 * processes may share it.
 */
#ifndef RI_STORE_H
#define RI_STORE_H

#ifndef __cplusplus
#include <stdatomic.h>
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"

#include "ri/sandbox.h"
#include "ri/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Snapshot names: 1 to 128 characters from A-Z a-z 0-9 . _ -, not starting with '.' or
 * '-' (a name is a file name in the store, and an option-like or hidden one is refused). */
#define RI_SNAPSTORE_NAME_MAX 128
/* Session ids and origin sandbox ids: 1 to 63 characters from A-Z a-z 0-9 . _ -,
 * starting with a letter or a digit (RI_SANDBOX_ID_MAX). */
#define RI_SNAPSTORE_ORIGIN_MAX RI_SANDBOX_ID_MAX
#define RI_SNAPSTORE_DESCRIPTION_MAX 4096 /* bytes of UTF-8 */
#define RI_SNAPSTORE_TAGS_MAX 32
#define RI_SNAPSTORE_TAG_MAX 64           /* bytes of UTF-8, no control characters */
#define RI_SNAPSTORE_ID_HEX 32            /* a snapshot's unique id: 128 random bits in hex */

/* ---- errors --------------------------------------------------------------------------- */

typedef enum ri_snapstore_errcode {
    RI_SNAPSTORE_OK = 0,
    RI_SNAPSTORE_ERR_NOT_FOUND,      /* "Snapshot not found: <name>" */
    RI_SNAPSTORE_ERR_EXISTS,         /* "Snapshot already exists: <name>" */
    RI_SNAPSTORE_ERR_INVALID_NAME,   /* a name, tag, description, session or sandbox id refused */
    RI_SNAPSTORE_ERR_CORRUPT,        /* a file in the store is damaged: truncated, hash mismatch, malformed */
    RI_SNAPSTORE_ERR_INPUT,          /* an image or an export handed to the store is invalid */
    RI_SNAPSTORE_ERR_IO,             /* the file system refused (sys_errno says why) */
    RI_SNAPSTORE_ERR_CONFLICT,       /* restore or save while an execution runs */
    RI_SNAPSTORE_ERR_SANDBOX,        /* the sandbox refused (its message; sandbox_code) */
    RI_SNAPSTORE_ERR_FORBIDDEN,      /* another session's snapshot, without allow_cross_session */
    RI_SNAPSTORE_ERR_INVALID_REF,    /* a snapshot ref that is malformed or does not match its snapshot */
    RI_SNAPSTORE_ERR_ABORTED,        /* the abort signal was set */
    RI_SNAPSTORE_ERR_NOT_STORE,      /* the directory is not a snapshot store (or a newer format) */
    RI_SNAPSTORE_ERR_NOMEM,
    RI_SNAPSTORE_ERR_ARGUMENT,       /* API misuse */
} ri_snapstore_errcode;

/* "NOT_FOUND", "EXISTS", ... */
RI_API const char *ri_snapstore_errcode_name(ri_snapstore_errcode code);

typedef struct ri_snapstore_error {
    ri_snapstore_errcode code;
    int sys_errno;                   /* RI_SNAPSTORE_ERR_IO: the errno; else 0 */
    ri_sandbox_errcode sandbox_code; /* RI_SNAPSTORE_ERR_SANDBOX: the sandbox's code */
    char message[768];
} ri_snapstore_error;

/* ---- cancellation ------------------------------------------------------------------------ */

/* An abort signal (like JavaScript's AbortSignal): either or both may be set. An operation whose
 * signal is already set does nothing and fails with RI_SNAPSTORE_ERR_ABORTED ("Aborted
 * before it started: nothing was done"); long operations check it between chunks (pages,
 * blobs, lock waits) and, when it is set, undo what they started: no partial snapshot
 * is ever visible. */
typedef struct ri_snapstore_abort {
#ifdef __cplusplus
    const void *flag;                /* C++: points to a C11 atomic_bool (std::atomic<bool> has its layout on gcc and clang) */
#else
    const atomic_bool *flag;         /* may be set from any thread */
#endif
    bool (*check)(void *user);       /* true: abort */
    void *user;
} ri_snapstore_abort;

/* ---- the store ------------------------------------------------------------------------------ */

typedef struct ri_snapstore ri_snapstore;

typedef struct ri_snapstore_options {
    bool create;                     /* make the directory a store if it is missing or empty */
} ri_snapstore_options;

/* Opens (or with create, creates) the store in dir. An existing directory must be a
 * store (DIR/store.json) of a format this build reads. opts may be NULL. */
RI_API ri_snapstore *ri_snapstore_open(const char *dir, const ri_snapstore_options *opts, ri_snapstore_error *err);
RI_API void ri_snapstore_close(ri_snapstore *st);
RI_API const char *ri_snapstore_dir(const ri_snapstore *st);

/* What a snapshot is, without its pages: the manifest's metadata. */
typedef struct ri_snapstore_info {
    char name[RI_SNAPSTORE_NAME_MAX + 1];
    char id[RI_SNAPSTORE_ID_HEX + 1];       /* unique per save and import */
    int64_t created_ns;                     /* wall clock of the save, ns since the epoch */
    char *description;                      /* owned, never NULL ("" when none) */
    char **tags;                            /* owned */
    uint32_t ntags;
    char origin_sandbox[RI_SNAPSTORE_ORIGIN_MAX + 1]; /* "" when not recorded */
    char origin_session[RI_SNAPSTORE_ORIGIN_MAX + 1]; /* "" when none: owned by no session */
    uint8_t module_sha256[RI_SNAP_SHA256_BYTES];
    uint64_t module_size;
    bool module_stored;                     /* the store holds the module: restores anywhere */
    ri_snap_status status;
    uint32_t prng_state;
    uint64_t gas_used;
    int64_t event_timestamp;
    uint32_t nmemories;
    uint64_t memory_bytes;                  /* the memories' sizes together (pages * 64 KiB) */
    uint64_t stored_pages;                  /* non-zero pages (each a blob, shared when equal) */
    uint64_t image_bytes;                   /* the uncompressed WSNP v2 image it stands for */
    uint64_t manifest_bytes;                /* its manifest file */
} ri_snapstore_info;

RI_API void ri_snapstore_info_free(ri_snapstore_info *info);   /* frees description and tags; idempotent */
RI_API void ri_snapstore_list_free(ri_snapstore_info *list, size_t n);

/* The last saved pages of one sandbox: a save compares each page with it and hashes only
 * the pages that changed; a restore takes pages whose hash it knows from it instead of
 * reading their blobs. It holds a copy of the saved non-zero pages (memory for speed);
 * it is always safe (a page's hash is reused only when its bytes are equal). */
typedef struct ri_snapstore_cache ri_snapstore_cache;
RI_API ri_snapstore_cache *ri_snapstore_cache_new(void);
RI_API void ri_snapstore_cache_free(ri_snapstore_cache *cache);

typedef struct ri_snapstore_put_options {
    const char *description;                /* NULL: none */
    const char *const *tags;                /* ntags strings; duplicates refused */
    uint32_t ntags;
    const char *origin_sandbox;             /* NULL: none */
    const char *origin_session;             /* NULL: none (owned by no session) */
    bool replace;                           /* replace a snapshot of that name; else ERR_EXISTS */
    /* The module, when the image does not embed it (its size and SHA-256 must be the
     * image's); without either, the manifest names the module but the store lacks it. */
    const uint8_t *module;
    size_t module_len;
    int64_t created_ns;                     /* 0: now */
    ri_snapstore_cache *cache;              /* NULL: hash every page */
    const ri_snapstore_abort *abort;
} ri_snapstore_put_options;

typedef struct ri_snapstore_put_stats {
    uint64_t pages;                         /* non-zero pages in the image */
    uint64_t pages_hashed;                  /* SHA-256 computed (the others matched the cache) */
    uint64_t blobs_written;                 /* new blobs (pages and module) */
    uint64_t bytes_written;                 /* their compressed bytes, plus the manifest */
    uint64_t evicted;                       /* snapshots the size cap removed afterwards */
    char warning[256];                      /* set when the snapshot was saved but eviction failed */
} ri_snapstore_put_stats;

/* Stores a WSNP v2 image (ri_sandbox_snapshot_with; raw or zstd, with or without MODL, a
 * paused call and unknown optional sections kept verbatim, in their places) as snapshot
 * `name`. Header fields are checked against what the store holds: an image naming a
 * module the store holds with another size is ERR_INPUT, and nothing is stored. Commit order: blobs (fsync'd),
 * then the manifest (temporary file, fsync, rename: the commit point, fsync of the
 * directory); then, with a size cap, eviction of the oldest other snapshots. info and
 * stats may be NULL. WSNP v1 is refused (it lacks the state a store restores). */
RI_API bool ri_snapstore_put(ri_snapstore *st, const char *name, const uint8_t *image, size_t len,
                      const ri_snapstore_put_options *opts, ri_snapstore_info *info, ri_snapstore_put_stats *stats,
                      ri_snapstore_error *err);

typedef struct ri_snapstore_image_options {
    bool include_module;                    /* embed MODL (the store must hold the module) */
    bool compress;                          /* zstd payloads as the sandbox writes them; else raw */
    bool include_metadata;                  /* the optional section RIMD: the metadata as JSON */
    ri_snapstore_cache *cache;              /* pages known by hash are taken from it */
    const ri_snapstore_abort *abort;
} ri_snapstore_image_options;

/* Snapshot `name` as a WSNP v2 image (malloc'd), every blob verified against its hash.
 * Without RIMD the bytes are exactly the image put (and what ri_sandbox_snapshot_with
 * writes for that state) with the same options (include_module, compressed or not),
 * every section included (a paused call, unknown ones). opts and info may be NULL. */
RI_API bool ri_snapstore_get_image(ri_snapstore *st, const char *name, const ri_snapstore_image_options *opts,
                            uint8_t **out, size_t *out_len, ri_snapstore_info *info, ri_snapstore_error *err);

/* The metadata of `name` (the manifest is read and verified whole). */
RI_API bool ri_snapstore_get_info(ri_snapstore *st, const char *name, ri_snapstore_info *info, ri_snapstore_error *err);
RI_API bool ri_snapstore_exists(ri_snapstore *st, const char *name, bool *exists, ri_snapstore_error *err);

typedef struct ri_snapstore_list_options {
    const char *origin_session;             /* only this session's; NULL: all */
    bool oldest_first;                      /* default: newest first */
    size_t limit;                           /* 0: all */
} ri_snapstore_list_options;

/* The snapshots, newest first (ties by name). Reads the head of each manifest only (its
 * metadata, verified by its own hash). Temporary files are never listed. *out is
 * malloc'd (ri_snapstore_list_free). opts may be NULL. */
RI_API bool ri_snapstore_list(ri_snapstore *st, const ri_snapstore_list_options *opts, ri_snapstore_info **out,
                       size_t *n, ri_snapstore_error *err);

/* Removes the manifest (its blobs go at the next gc). *existed (may be NULL) tells
 * whether there was one; a missing name is not an error here. */
RI_API bool ri_snapstore_delete(ri_snapstore *st, const char *name, bool *existed, ri_snapstore_error *err);
/* Atomic (one rename): "Snapshot not found: <from>", "Snapshot already exists: <to>". */
RI_API bool ri_snapstore_rename(ri_snapstore *st, const char *from, const char *to, ri_snapstore_error *err);

typedef struct ri_snapstore_usage {
    uint64_t snapshots, manifest_bytes;
    uint64_t blobs, blob_bytes;             /* every blob file, referenced or not */
    uint64_t total_bytes;                   /* manifest_bytes + blob_bytes: what the cap limits */
    uint64_t disk_bytes;                    /* allocated blocks of those files */
    uint64_t temp_files;                    /* left by interrupted writers; gc removes them */
    uint64_t max_bytes;                     /* the cap; 0: none */
} ri_snapstore_usage;

/* Sizes by walking the store (a shared lock; O(files)). */
RI_API bool ri_snapstore_usage_of(ri_snapstore *st, ri_snapstore_usage *out, ri_snapstore_error *err);

typedef struct ri_snapstore_gc_stats {
    uint64_t snapshots;                     /* manifests kept */
    uint64_t blobs_kept, blobs_removed;
    uint64_t bytes_removed;                 /* blobs, manifests of evicted snapshots, temp files */
    uint64_t temp_removed;
    uint64_t evicted;                       /* snapshots removed by the cap */
    uint64_t total_bytes;                   /* afterwards */
} ri_snapstore_gc_stats;

/* Under the exclusive lock: reads every manifest (a damaged one stops the collection:
 * its blobs cannot be told apart), removes temporary files, evicts the oldest snapshots
 * while the store is over its cap, then removes every blob no manifest refers to.
 * stats may be NULL. */
RI_API bool ri_snapstore_gc(ri_snapstore *st, ri_snapstore_gc_stats *stats, ri_snapstore_error *err);

/* Sets the store's cap (persisted in store.json; 0: none) and collects at once. */
RI_API bool ri_snapstore_set_max_bytes(ri_snapstore *st, uint64_t max_bytes, ri_snapstore_gc_stats *stats,
                                ri_snapstore_error *err);

/* Reads every manifest and every blob and checks each against its hash, and every
 * reference of a manifest against its blob (it exists and holds the size the manifest
 * implies); *bad counts the problems found, the first one is in first_bad (the call
 * still returns true). */
RI_API bool ri_snapstore_verify(ri_snapstore *st, uint64_t *checked, uint64_t *bad, ri_snapstore_error *first_bad,
                         ri_snapstore_error *err);

/* ---- export and import ------------------------------------------------------------------------- */

typedef enum ri_snapstore_export_format {
    /* A WSNP v2 image with the module embedded, zstd pages, and the metadata (name,
     * description, tags, time, origin) as the optional section RIMD: restorable by any
     * sandbox, importable by any store. */
    RI_SNAPSTORE_EXPORT_BINARY = 0,
    /* JSON: the metadata, a summary of the state, and the binary image (without RIMD)
     * in base64 ("wsnp"). docs/STORE.md has the keys. */
    RI_SNAPSTORE_EXPORT_JSON = 1,
} ri_snapstore_export_format;

RI_API bool ri_snapstore_export(ri_snapstore *st, const char *name, ri_snapstore_export_format format, uint8_t **out,
                         size_t *out_len, ri_snapstore_error *err);

/* Imports either export format (told by its first byte), or any WSNP v2 image. name NULL:
 * the export's own name (an image without RIMD then needs one). The description, tags,
 * time and origin come from the export unless opts sets them; a new id is given. opts
 * may be NULL (replace false). */
RI_API bool ri_snapstore_import(ri_snapstore *st, const uint8_t *data, size_t len, const char *name,
                         const ri_snapstore_put_options *opts, ri_snapstore_info *info, ri_snapstore_error *err);

/* ---- validation ------------------------------------------------------------------------------- */

/* Whether s is a valid snapshot name; the reason otherwise (err may be NULL). */
RI_API bool ri_snapstore_name_valid(const char *s, ri_snapstore_error *err);
/* Whether s is a valid session or sandbox id. */
RI_API bool ri_snapstore_origin_valid(const char *s, ri_snapstore_error *err);

/* ---- the snapshot manager ------------------------------------------------------------- */

typedef struct ri_snapshots ri_snapshots;

/* Called after a restore succeeded, with the snapshot's metadata. */
typedef void (*ri_snapshots_restored_fn)(void *user, ri_sandbox *sb, const ri_snapstore_info *info);

typedef struct ri_snapshots_options {
    const char *session;                    /* recorded as the origin session of saves; NULL: none */
    ri_snapshots_restored_fn on_restored;
    void *user;
    bool no_cache;                          /* hash every page on every save (saves memory) */
} ri_snapshots_options;

/* The manager of sandbox sb's snapshots in store st (both must outlive it). Names are
 * the store's: several managers on one store share them. opts may be NULL. */
RI_API ri_snapshots *ri_snapshots_new(ri_snapstore *st, ri_sandbox *sb, const ri_snapshots_options *opts,
                               ri_snapstore_error *err);
RI_API void ri_snapshots_free(ri_snapshots *m);

/* Saves the sandbox's full state (WSNP v2 with every memory, global, table, segment,
 * PRNG, gas, and the module) as `name`, replacing a snapshot of that name. The sandbox
 * must be loaded or suspended (a running one: ERR_CONFLICT). info may be NULL. */
RI_API bool ri_snapshots_save(ri_snapshots *m, const char *name, const char *description, const char *const *tags,
                       uint32_t ntags, ri_snapstore_info *info, ri_snapstore_error *err);
/* Puts the sandbox back into snapshot `name` (atomically: on failure nothing changed),
 * then calls on_restored. While an execution runs: ERR_CONFLICT. */
RI_API bool ri_snapshots_restore(ri_snapshots *m, const char *name, ri_snapstore_info *info, ri_snapstore_error *err);
RI_API bool ri_snapshots_has(ri_snapshots *m, const char *name, bool *has, ri_snapstore_error *err);
RI_API bool ri_snapshots_get(ri_snapshots *m, const char *name, ri_snapstore_info *info, ri_snapstore_error *err);
/* Every snapshot in the store, newest first. */
RI_API bool ri_snapshots_list(ri_snapshots *m, ri_snapstore_info **out, size_t *n, ri_snapstore_error *err);
/* *deleted: whether there was one (a boolean). */
RI_API bool ri_snapshots_delete(ri_snapshots *m, const char *name, bool *deleted, ri_snapstore_error *err);
RI_API bool ri_snapshots_rename(ri_snapshots *m, const char *from, const char *to, ri_snapstore_error *err);
/* What differs from a to b (ri/snapshot.h's diff; free with ri_snap_diff_free). opts may be NULL. */
RI_API bool ri_snapshots_diff(ri_snapshots *m, const char *a, const char *b, const ri_snap_diff_options *opts,
                       ri_snap_diff *out, ri_snapstore_error *err);
/* What differs from snapshot `name` to the live sandbox. */
RI_API bool ri_snapshots_diff_current(ri_snapshots *m, const char *name, const ri_snap_diff_options *opts,
                               ri_snap_diff *out, ri_snapstore_error *err);
RI_API bool ri_snapshots_export(ri_snapshots *m, const char *name, ri_snapstore_export_format format, uint8_t **out,
                         size_t *out_len, ri_snapstore_error *err);
/* name NULL: the export's name. Replaces nothing: an existing name is ERR_EXISTS. */
RI_API bool ri_snapshots_import(ri_snapshots *m, const uint8_t *data, size_t len, const char *name,
                         ri_snapstore_info *info, ri_snapstore_error *err);
/* The store's total size in bytes (ri_snapstore_usage.total_bytes). */
RI_API bool ri_snapshots_total_size(ri_snapshots *m, uint64_t *bytes, ri_snapstore_error *err);
/* The store's cap (0: none); the oldest snapshots go at once while it is exceeded. */
RI_API bool ri_snapshots_set_max_size(ri_snapshots *m, uint64_t bytes, ri_snapstore_error *err);

/* ---- the snapshotter ----------------------------------------------------------------- */

#define RI_SNAPSHOT_PROVIDER_MAX 63
#define RI_SNAPSHOTTER_DEFAULT_PROVIDER "ri-snapstore"
#define RI_SNAPSHOTTER_DEFAULT_MAX_LIST 100

/* A snapshot ref, {providerId, ref: {snapshot, originSandboxId}} as JSON. */
typedef struct ri_snapshot_ref {
    char provider_id[RI_SNAPSHOT_PROVIDER_MAX + 1];
    char snapshot[RI_SNAPSTORE_NAME_MAX + 1];             /* the snapshot's name in the store */
    char origin_sandbox_id[RI_SNAPSTORE_ORIGIN_MAX + 1];  /* the sandbox it was taken from */
} ri_snapshot_ref;

/* Strict: a JSON object with exactly "providerId" (a string) and "ref" (an object with
 * exactly "snapshot" and "originSandboxId", valid name and id). Unknown fields, missing
 * ones, other types and malformed ids are ERR_INVALID_REF naming the field. */
RI_API bool ri_snapshot_ref_parse(const char *json, size_t len, ri_snapshot_ref *out, ri_snapstore_error *err);
/* The ref as compact JSON (malloc'd; NULL on OOM). */
RI_API char *ri_snapshot_ref_json(const ri_snapshot_ref *ref);

/* The audit sink: level is "warning" for every cross-session opt-in. */
typedef void (*ri_snapstore_audit_fn)(void *user, const char *level, const char *message);

typedef struct ri_snapshotter_config {
    const char *session_id;                 /* required: whose snapshots this snapshotter owns */
    const char *provider_id;                /* NULL: RI_SNAPSHOTTER_DEFAULT_PROVIDER */
    uint32_t max_list_results;              /* 0: RI_SNAPSHOTTER_DEFAULT_MAX_LIST */
    ri_sandboxes *factory;                  /* restore and branch create their sandboxes here */
    /* Every cross-session opt-in is appended to DIR/audit.log (a JSON line, fsync'd;
     * an opt-in whose audit cannot be written is refused) and also given to this. */
    ri_snapstore_audit_fn audit;
    void *audit_user;
} ri_snapshotter_config;

typedef struct ri_snapshot_call {
    const ri_snapstore_abort *abort;
    bool allow_cross_session;               /* act on another session's snapshot (audited) */
    uint32_t limit;                         /* list: 0 or above the maximum: the maximum */
    /* restore, branch: the new sandbox's configuration; NULL: the defaults with the
     * snapshot's event timestamp (no host functions). */
    const ri_sandbox_config *config;
} ri_snapshot_call;

typedef struct ri_snapshotter ri_snapshotter;

RI_API ri_snapshotter *ri_snapshotter_new(ri_snapstore *st, const ri_snapshotter_config *cfg, ri_snapstore_error *err);
RI_API void ri_snapshotter_free(ri_snapshotter *s);

/* Saves sandbox sb (this session's current sandbox) under a new name "snap-<32 hex>",
 * owned by this session; *out is its ref. call may be NULL. */
RI_API bool ri_snapshotter_snapshot(ri_snapshotter *s, ri_sandbox *sb, const ri_snapshot_call *call, ri_snapshot_ref *out,
                             ri_snapstore_error *err);
/* A NEW sandbox (id "<origin>-restored-<8 hex>"), loaded with the snapshot's module and
 * state; no existing sandbox is touched. NULL on failure. The caller frees it. */
RI_API ri_sandbox *ri_snapshotter_restore(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                                   ri_snapstore_error *err);
/* The same, id "<origin>-branch-<8 hex>". */
RI_API ri_sandbox *ri_snapshotter_branch(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                                  ri_snapstore_error *err);
/* This session's snapshots (all sessions' with allow_cross_session), newest first, at
 * most min(limit, max_list_results). *out is malloc'd (free()). */
RI_API bool ri_snapshotter_list(ri_snapshotter *s, const ri_snapshot_call *call, ri_snapshot_ref **out, size_t *n,
                         ri_snapstore_error *err);
/* Idempotent: a ref whose snapshot is gone succeeds. */
RI_API bool ri_snapshotter_delete(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                           ri_snapstore_error *err);

#ifdef __cplusplus
}
#endif
#endif
