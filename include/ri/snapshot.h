/*
 * ri snapshot: WSNP version 2, the complete snapshot format of an engine instance
 * (docs/SNAPSHOT_FORMAT.md has the byte layout).
 *
 * This layer sits between the engine (ri/engine.h, the only header it uses) and the
 * sandbox library. It knows instances, not sandboxes: what a sandbox adds (status,
 * PRNG state, gas, event timestamp) travels as the fields of ri_snap_meta.
 *
 *   ri_snap_write     instance + meta -> WSNP v2 bytes (canonical: the same state and
 *                     options give the same bytes)
 *   ri_snap_read      WSNP v2 bytes -> ri_snap_image, a checked view into the bytes
 *                     (header, checksum, sections, every length) without decompressing
 *   ri_snap_check     an image against an instance: would it restore? (no change)
 *   ri_snap_restore   an image into an instance, atomically
 *   ri_snap_pages_*   the stored pages of a memory, one at a time (streaming zstd)
 *   ri_snap_diff_images, ri_snap_diff_json   what differs between two images
 *   ri_snap_crc32c, ri_snap_sha256           the image checksum, the module identity
 *
 * Errors are values: every fallible call fills an ri_snap_error (a code and a complete
 * message). Nothing here is process-wide mutable state.
 */
#ifndef RI_SNAPSHOT_H
#define RI_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"

#include "ri/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RI_SNAP_VERSION 2u
#define RI_SNAP_PAGE_BYTES 65536u
#define RI_SNAP_MAX_PAGES 65536u       /* WebAssembly 2.0: 4 GiB */
#define RI_SNAP_SHA256_BYTES 32u
#define RI_SNAP_HEADER_BYTES 8u        /* "WSNP", version, 3 reserved zero bytes */
#define RI_SNAP_SECTION_HEADER_BYTES 16u
#define RI_SNAP_CHECKSUM_BYTES 4u      /* CSUM: CRC-32C */
/* The final section: header and CRC-32C, the last 20 bytes of every image. */
#define RI_SNAP_TRAILER_BYTES (RI_SNAP_SECTION_HEADER_BYTES + RI_SNAP_CHECKSUM_BYTES)
/* The zstd level every writer uses: fixed, so that equal states give equal bytes. */
#define RI_SNAP_ZSTD_LEVEL 3

/* A reference stored in a table entry or a global: a function index, or these. */
#define RI_SNAP_NULL_REF UINT32_MAX       /* ref.null */
#define RI_SNAP_NO_ENTRY (UINT32_MAX - 1) /* diff: the entry is beyond that table's size */

/* ---- errors ---------------------------------------------------------------- */

typedef enum ri_snap_errcode {
    RI_SNAP_OK = 0,
    RI_SNAP_ERR_CORRUPT,      /* not a well-formed WSNP v2 image (truncated, checksum, bounds) */
    RI_SNAP_ERR_UNSUPPORTED,  /* well-formed, but holds what this reader cannot restore */
    RI_SNAP_ERR_MISMATCH,     /* the image does not fit the instance (module, counts, types, sizes) */
    RI_SNAP_ERR_STATE,        /* the instance holds state no image can express (a non-null externref) */
    RI_SNAP_ERR_NOMEM,
    RI_SNAP_ERR_ARGUMENT,     /* API misuse */
    RI_SNAP_ERR_TOO_SMALL,    /* the caller's buffer cannot hold the image (ri_snap_write_into) */
} ri_snap_errcode;

typedef struct ri_snap_error {
    ri_snap_errcode code;
    char message[320];
} ri_snap_error;

/* ---- what travels besides the instance --------------------------------------------- */

/* The sandbox status a snapshot was taken in (the wire values). */
typedef enum ri_snap_status {
    RI_SNAP_STATUS_LOADED = 0,
    RI_SNAP_STATUS_SUSPENDED = 1,
} ri_snap_status;

typedef struct ri_snap_meta {
    uint8_t module_sha256[RI_SNAP_SHA256_BYTES];
    uint64_t module_size;            /* bytes of the module binary, at most INT64_MAX */
    ri_snap_status status;
    uint32_t prng_state;
    uint64_t gas_used;               /* at most INT64_MAX */
    int64_t event_timestamp;
} ri_snap_meta;

/* CRC-32C of data (the image checksum, section CSUM); 0 for NULL. */
RI_API uint32_t ri_snap_crc32c(const uint8_t *data, size_t len);
/* SHA-256 (libcrypto): the module identity. false only if libcrypto fails. */
RI_API bool ri_snap_sha256(const uint8_t *data, size_t len, uint8_t out[RI_SNAP_SHA256_BYTES]);
/* 64 lowercase hex digits and a NUL. */
RI_API void ri_snap_hex(const uint8_t digest[RI_SNAP_SHA256_BYTES], char out[2 * RI_SNAP_SHA256_BYTES + 1]);

/* ---- writing ------------------------------------------------------------------------ */

typedef enum ri_snap_compression {
    RI_SNAP_COMPRESS_ZSTD = 0,       /* default: zstd at RI_SNAP_ZSTD_LEVEL (raw when not smaller) */
    RI_SNAP_COMPRESS_NONE = 1,       /* stored pages as they are (canonical across zstd versions) */
} ri_snap_compression;

typedef struct ri_snap_write_options {
    ri_snap_compression compression;
    /* The module binary to embed as section MODL (its SHA-256 and size must be the
     * meta's), so that the file alone can be restored anywhere; NULL: not embedded. */
    const uint8_t *module;
    size_t module_len;
    /* A WASI process (sections WSFS and WASI, both required): the workspace's canonical
     * serialization (compressed as `compression` says) and the process state, both as
     * the sandbox gives them; has_wasi false: neither section. */
    bool has_wasi;
    const uint8_t *workspace;
    size_t workspace_len;
    const uint8_t *wasi_state;
    size_t wasi_state_len;
} ri_snap_write_options;

/* The instance's memories, tables, globals and segment flags plus meta, as WSNP v2.
 * opts may be NULL (zstd, no module). *out is malloc'd. Refuses (RI_SNAP_ERR_STATE) a
 * non-null externref (it points at the embedder's data, which no file can hold) and a
 * funcref of a function outside the instance's function index space. */
RI_API bool ri_snap_write(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                   uint8_t **out, size_t *out_len, ri_snap_error *err);

/* ---- reading ------------------------------------------------------------------------ */

/* How one memory's stored pages are encoded. */
typedef enum ri_snap_encoding {
    RI_SNAP_ENC_RAW = 0,             /* the present pages, in page order, as they are */
    RI_SNAP_ENC_ZSTD = 1,            /* one zstd frame whose content is those bytes */
    RI_SNAP_ENC_FLAT = 255,          /* not on the wire: a WSNP v1 memory, every page stored */
} ri_snap_encoding;

typedef struct ri_snap_section {
    char tag[4];                     /* as written; not NUL-terminated */
    uint32_t flags;                  /* bit 0: required */
    uint64_t offset;                 /* of the section header in the image */
    uint64_t length;                 /* of the content */
    bool known;                      /* a section this reader understands */
} ri_snap_section;

typedef struct ri_snap_memory {
    uint32_t pages;                  /* the size when the snapshot was taken */
    uint32_t max_pages;              /* the memory type's maximum, if has_max */
    bool has_max;
    bool is64;                       /* a 64-bit memory (memory64); false in older images */
    ri_snap_encoding encoding;
    uint32_t present_pages;          /* pages stored: those with a non-zero byte */
    const uint8_t *bitmap;           /* ceil(pages / 8) bytes: bit (i % 8) of byte i / 8 = page i stored */
    const uint8_t *payload;          /* the stored bytes (zstd frame, raw pages, or v1 memory) */
    uint64_t payload_len;
    uint64_t raw_len;                /* present_pages * 64 KiB: the payload's content */
    /* For ri_snap_restore only, never read or written: pages this image does not store
     * read as this memory's (a delta's parent), where it has them; NULL: as zero. */
    const struct ri_snap_memory *under;
} ri_snap_memory;

typedef struct ri_snap_global {
    ri_valtype type;
    bool mutable_;
    /* i32, f32: the 32 bits zero-extended; i64, f64: the 64 bits; funcref: the
     * function index, or RI_SNAP_NULL_REF; externref: RI_SNAP_NULL_REF (only null);
     * v128: its bytes 0..7 as a little-endian uint64 (bytes 8..15 in bits_high). */
    uint64_t bits;
    uint64_t bits_high;  /* v128 only (0 for every other type) */
} ri_snap_global;

typedef struct ri_snap_table {
    ri_valtype elem;                 /* RI_FUNCREF or RI_EXTERNREF */
    uint32_t size;
    uint32_t max;
    bool has_max;
    const uint8_t *entries;          /* size u32 little-endian: function index or RI_SNAP_NULL_REF */
} ri_snap_table;

/* A read image. Pointers point into the caller's buffer, which must outlive it;
 * the arrays are owned (ri_snap_image_free). */
typedef struct ri_snap_image {
    uint8_t version;                 /* 2; 1 for a v1 image (ri_snap_image_from_v1) */
    size_t total_len;
    ri_snap_meta meta;
    bool has_module_hash;            /* false for v1 images */
    bool has_instance_state;         /* tables, globals, segments: false for v1 images */
    uint32_t func_count;             /* the module's function index space */
    const uint8_t *module;           /* MODL: the embedded module, or NULL */
    size_t module_len;
    uint32_t nmemories;
    ri_snap_memory *memories;
    uint32_t ntables;
    ri_snap_table *tables;
    uint32_t nglobals;
    ri_snap_global *globals;
    uint32_t nelems, ndatas;
    const uint8_t *elem_dropped;     /* nelems bytes, 0 or 1 */
    const uint8_t *data_dropped;     /* ndatas bytes, 0 or 1 */
    bool has_frames;                 /* FRMS: a suspended call (ri_snap_read_call reads it) */
    uint32_t nsections;
    ri_snap_section *sections;       /* in file order, the checksum section included */
    uint32_t checksum;               /* CRC-32C of every byte before the CSUM section */
    const uint8_t *frames;           /* FRMS content (checked by ri_snap_read), or NULL */
    uint64_t frames_len;
    /* WSFS and WASI: a WASI process (ri_snap_workspace gives the workspace's bytes). */
    bool has_wasi;
    ri_snap_encoding workspace_encoding;
    uint64_t workspace_len;          /* of the canonical serialization */
    const uint8_t *workspace_payload; /* raw bytes or one zstd frame */
    uint64_t workspace_payload_len;
    const uint8_t *wasi_state;       /* WASI content, the sandbox's to parse */
    uint64_t wasi_state_len;
    /* WSFS holds a workspace delta against a parent's workspace (only a delta image read
     * alone: ri_snap_delta_read); ri_snap_workspace refuses it. */
    bool workspace_delta;
} ri_snap_image;

/* Reads a WSNP v2 image: header, the checksum (before anything else is believed), the
 * sections (bounds, order, unknown optional ones skipped, unknown required ones
 * refused) and every section's content (lengths, counts, values). A suspended call
 * (FRMS) is RI_SNAP_ERR_UNSUPPORTED "suspended calls are not supported yet". Memory
 * pages are not decompressed here: restore and ri_snap_pages_* do that, and check
 * that the payload holds exactly the stored pages. On failure *out is zeroed. */
RI_API bool ri_snap_read(const uint8_t *data, size_t len, ri_snap_image *out, ri_snap_error *err);

/* Describes a WSNP v1 image's contents (parsed by the sandbox library) as an image of
 * version 1: one memory stored flat, no module hash and no instance state. memory_len
 * must be a whole number of pages. The memory stays the caller's. */
RI_API bool ri_snap_image_from_v1(const uint8_t *memory, uint64_t memory_len, uint32_t prng_state, uint64_t gas_used,
                           int64_t event_timestamp, ri_snap_image *out, ri_snap_error *err);

RI_API void ri_snap_image_free(ri_snap_image *img);

/* The workspace's canonical bytes of an image with has_wasi (decompressed and checked:
 * one zstd frame of exactly the declared length): *out malloc'd (NULL when empty). */
RI_API bool ri_snap_workspace(const ri_snap_image *img, uint8_t **out, size_t *len, ri_snap_error *err);
/* The workspace delta of a delta image read alone (img->workspace_delta: WSFS of kind 1),
 * decompressed and checked as ri_snap_workspace checks a workspace; the caller applies it
 * to the parent's workspace. Any other image: RI_SNAP_ERR_ARGUMENT. *out malloc'd. */
RI_API bool ri_snap_workspace_delta(const ri_snap_image *img, uint8_t **out, size_t *len, ri_snap_error *err);

/* A copy of a full WSNP v2 image that holds a WASI process, with `workspace` (a
 * workspace's canonical serialization, as ri_snap_workspace gives it) in place of its own:
 * every other section byte for byte and in its place, the checksum recomputed. compression:
 * the new WSFS payload's. The workspace bytes are not parsed here (the sandbox checks them
 * on restore). An image without a workspace: RI_SNAP_ERR_ARGUMENT. *out malloc'd. */
RI_API bool ri_snap_replace_workspace(const uint8_t *image, size_t len, const uint8_t *workspace, size_t workspace_len,
                                      ri_snap_compression compression, uint8_t **out, size_t *out_len,
                                      ri_snap_error *err);
/* A copy of a full WSNP v2 image with an optional section of a tag the format does not
 * define (readers skip it; the store keeps it) set to content: the image's section of that
 * tag replaced in its place, or a new one added last before the checksum. The CLI records
 * a WASI command's arguments this way (section RARG, docs/SNAPSHOT_FORMAT.md). A tag of
 * the format: RI_SNAP_ERR_ARGUMENT. *out malloc'd. */
RI_API bool ri_snap_set_section(const uint8_t *image, size_t len, const char tag[4], const uint8_t *content,
                                size_t content_len, uint8_t **out, size_t *out_len, ri_snap_error *err);
/* The stored pages of memory `index`, in page order, one at a time: 1 with *page and
 * *data (64 KiB, valid until the next call), 0 at the end (after checking that the
 * payload held exactly the stored pages), -1 on error. Memory use is constant. */
typedef struct ri_snap_pages ri_snap_pages;
RI_API ri_snap_pages *ri_snap_pages_open(const ri_snap_image *img, uint32_t index, ri_snap_error *err);
RI_API int ri_snap_pages_next(ri_snap_pages *pages, uint32_t *page, const uint8_t **data, ri_snap_error *err);
RI_API void ri_snap_pages_close(ri_snap_pages *pages);

/* ---- restoring ---------------------------------------------------------------------- */

/* Whether img fits inst: the same function count, memories, tables, globals (types,
 * mutability; immutable ones equal), segments, sizes within the effective maxima,
 * function indices in range. The module identity is the caller's to check (it knows
 * which module the instance runs). Changes nothing. */
RI_API bool ri_snap_check(const ri_instance *inst, const ri_snap_image *img, ri_snap_error *err);

/* ri_snap_check, then decompresses every memory (checking each payload) and builds its
 * memory image (ri_memimage_build), then grows what must grow; only then changes the
 * instance: memories and tables get the image's sizes and contents (a memory loads its
 * image: no page is copied into it), mutable globals its values, segments its dropped
 * flags. On failure nothing has changed, with one exception: should the system refuse
 * both the image's mapping and fresh pages at the commit, that memory is left empty and
 * the error (RI_SNAP_ERR_NOMEM, "Restore incomplete ...") says so. */
RI_API bool ri_snap_restore(ri_instance *inst, const ri_snap_image *img, ri_snap_error *err);
/* ri_snap_restore of a delta image read alone (ri_snap_delta_read) onto an instance whose
 * memories already hold the parent's contents (a rollback to a checkpoint of the parent's
 * state): each memory takes the image's size and the pages the image stores are written
 * over it, the rest as ri_snap_restore. The cost follows the stored pages. Fallible steps
 * (decompression, growing) come first: false leaves the instance unchanged. */
RI_API bool ri_snap_restore_onto(ri_instance *inst, const ri_snap_image *img, ri_snap_error *err);

/* ---- diff ------------------------------------------------------------------------- */

typedef struct ri_snap_diff_options {
    size_t max_ranges;               /* memory ranges listed; 0: 10,000 (counts stay exact) */
    size_t max_entries;              /* table entries listed; 0: 10,000 */
} ri_snap_diff_options;

typedef struct ri_snap_range {
    uint32_t memory;
    uint64_t offset;
    uint64_t length;
} ri_snap_range;

typedef struct ri_snap_memory_diff {
    uint32_t index;
    bool in_old, in_new;             /* whether each image has this memory */
    uint32_t old_pages, new_pages;
    uint64_t changed_bytes;          /* bytes that differ (a missing page reads as zeros) */
    uint64_t changed_pages;          /* pages with at least one differing byte */
    uint64_t range_count;            /* maximal runs of differing bytes */
} ri_snap_memory_diff;

typedef struct ri_snap_global_diff {
    uint32_t index;
    ri_snap_global old_value, new_value;  /* all zero on a side without this global */
    bool in_old, in_new;                  /* whether each image has this global */
} ri_snap_global_diff;

typedef struct ri_snap_table_diff {
    uint32_t index;
    bool in_old, in_new;
    ri_valtype old_elem, new_elem;
    uint32_t old_size, new_size;
    uint64_t changed_entries;
} ri_snap_table_diff;

typedef struct ri_snap_entry_diff {
    uint32_t table, index;
    uint32_t old_ref, new_ref;       /* function index, RI_SNAP_NULL_REF or RI_SNAP_NO_ENTRY */
} ri_snap_entry_diff;

typedef struct ri_snap_segment_diff {
    bool data;                       /* data segment; else element segment */
    uint32_t index;
    bool old_dropped, new_dropped;
} ri_snap_segment_diff;

typedef struct ri_snap_diff {
    bool identical;                  /* nothing differs in what both images hold */
    uint8_t old_version, new_version;
    ri_snap_meta old_meta, new_meta;
    bool old_has_module_hash, new_has_module_hash;
    bool module_changed;             /* both have a hash and they differ */
    bool instance_state_compared;    /* false when an image is v1 (no tables, globals, segments) */
    uint32_t nmemories;              /* memories that differ (size, contents, presence) */
    ri_snap_memory_diff *memories;
    size_t nranges;
    ri_snap_range *ranges;           /* in memory, then offset order */
    bool ranges_truncated;
    size_t nglobals;                 /* changed globals only */
    ri_snap_global_diff *globals;
    uint32_t old_nglobals, new_nglobals;
    uint32_t ntables;                /* tables that differ */
    ri_snap_table_diff *tables;
    size_t nentries;
    ri_snap_entry_diff *entries;     /* in table, then index order */
    bool entries_truncated;
    size_t nsegments;                /* changed segments only */
    ri_snap_segment_diff *segments;
} ri_snap_diff;

/* What differs from old to new. Both images must be readable to the end (their pages
 * are streamed; a payload that does not decompress is an error). opts may be NULL. */
RI_API bool ri_snap_diff_images(const ri_snap_image *old_img, const ri_snap_image *new_img,
                         const ri_snap_diff_options *opts, ri_snap_diff *out, ri_snap_error *err);
RI_API void ri_snap_diff_free(ri_snap_diff *diff);

/* The diff as JSON text (indented, keys in a fixed order; docs/SNAPSHOT_FORMAT.md),
 * malloc'd (free()); NULL on OOM. */
RI_API char *ri_snap_diff_json(const ri_snap_diff *diff);

/* "loaded", "suspended". */
RI_API const char *ri_snap_status_name(ri_snap_status status);
/* "i32", "funcref", ... */
RI_API const char *ri_snap_valtype_name(ri_valtype type);
/* A v128 global's value as WebAssembly text, "i32x4 0x03020100 0x07060504 0x0b0a0908
 * 0x0f0e0d0c" (its bytes 0..15 as four little-endian lanes, lane 0 first), into buf of
 * cap bytes (RI_SNAP_V128_TEXT holds it all). */
#define RI_SNAP_V128_TEXT 50
RI_API void ri_snap_v128_text(const ri_snap_global *g, char *buf, size_t cap);

/* The forms of a global's value as text (ri_snap_global_text). */
typedef enum ri_snap_text_form {
    /* Readable (ri inspect): integers signed, floats as %.17g or "nan", "inf", "-inf",
     * v128 as ri_snap_v128_text, references "ref.null" or "func N". */
    RI_SNAP_TEXT_PLAIN,
    /* A JSON value: integers and finite floats as numbers, "nan", "inf", "-inf" and a
     * v128's text as strings, a null reference as null, a function as its index. */
    RI_SNAP_TEXT_JSON,
    /* The type's name, then the value (ri diff): "i32 -5", every float with its bits so
     * NaN payloads and -0 show ("f64 -0 (0x8000000000000000)"), "v128 i32x4 ...",
     * "funcref null", "funcref func 3". */
    RI_SNAP_TEXT_TYPED,
    /* The stored bits in hex: "0x" and 8 digits for i32 and f32, 32 for v128 (bytes 15..0),
     * 16 for the others. */
    RI_SNAP_TEXT_BITS,
    /* The same with at least 16 digits (i32 and f32 too). */
    RI_SNAP_TEXT_BITS64,
} ri_snap_text_form;

/* Room for every form of every value, its NUL included. */
#define RI_SNAP_GLOBAL_TEXT 64

/* g's value as text in `form`, into out of cap bytes (truncated to fit, always
 * NUL-terminated when cap > 0). A reference is RI_SNAP_NULL_REF, a function index, or
 * RI_SNAP_NO_ENTRY (in a diff: "absent", a JSON string). */
RI_API void ri_snap_global_text(const ri_snap_global *g, ri_snap_text_form form, char *out, size_t cap);

/* ---- delta images ----------------------------------------------------------
 * A delta image is a WSNP v2 image with a required section PRNT naming its parent (the
 * SHA-256 of the parent's full image bytes) whose MEMS stores only the pages that differ
 * from the parent (docs/SNAPSHOT_FORMAT.md). A reader that does not know PRNT refuses it
 * (required section), so no delta is ever restored without its parent: applying it to the
 * parent gives the full image, byte for byte what a full snapshot of the same state with
 * the same compression writes. Chains: a delta's parent is a full image, which may itself
 * be the result of applying a delta. */

#define RI_SNAP_PARENT_BYTES 48u       /* PRNT: SHA-256, parent length, compression, reserved */

typedef struct ri_snap_delta_info {
    uint8_t parent_sha256[RI_SNAP_SHA256_BYTES];
    uint64_t parent_len;
    ri_snap_compression compression; /* of the full image it rebuilds */
} ri_snap_delta_info;

/* Whether data is a well-formed delta image (checksum and sections checked, contents
 * not); info (may be NULL) gets its PRNT. */
RI_API bool ri_snap_is_delta(const uint8_t *data, size_t len, ri_snap_delta_info *info);

/* A delta's own contents (for describing it, `ri inspect`): PRNT checked (reserved
 * bytes) into info, then the rest read and checked as ri_snap_read reads a full image.
 * The memories' present_pages are the pages the delta stores (those that differ from
 * the parent; such a page may be all zero). *out points into *backing (malloc'd): free
 * it after ri_snap_image_free(out). Not a delta: RI_SNAP_ERR_ARGUMENT. */
RI_API bool ri_snap_delta_read(const uint8_t *data, size_t len, ri_snap_delta_info *info, ri_snap_image *out,
                        uint8_t **backing, ri_snap_error *err);
/* ri_snap_delta_read with its parent (the full image PRNT names; the caller has checked
 * its SHA-256): a workspace stored as a delta against the parent's is rebuilt whole (raw),
 * so that *out restores like a full image's workspace. parent NULL: ri_snap_delta_read. */
RI_API bool ri_snap_delta_read_with(const uint8_t *parent, size_t parent_len, const uint8_t *data, size_t len,
                                    ri_snap_delta_info *info, ri_snap_image *out, uint8_t **backing,
                                    ri_snap_error *err);

/* The delta from parent (a full v2 image) to image (a full v2 image of the same module
 * with the same memories, written with `compression`): every section of image but MEMS
 * as it is, MEMS with only the pages that differ from parent. *out is malloc'd. */
RI_API bool ri_snap_delta_encode(const uint8_t *parent, size_t parent_len, const uint8_t *image, size_t image_len,
                          ri_snap_compression compression, uint8_t **out, size_t *out_len, ri_snap_error *err);

/* The full image a delta stands for, given its parent: refused (RI_SNAP_ERR_MISMATCH,
 * "parent mismatch") unless SHA-256 and length of parent are the ones PRNT names.
 * *out is malloc'd. */
RI_API bool ri_snap_delta_apply(const uint8_t *parent, size_t parent_len, const uint8_t *delta, size_t delta_len,
                         uint8_t **out, size_t *out_len, ri_snap_error *err);
/* ---- a suspended call: section FRMS -----------------------------------------
 * A snapshot of a sandbox whose call is suspended carries the call: the pending call's
 * metadata and its frames in WebAssembly terms (ri_suspension, ri/engine.h). Layout:
 * docs/SNAPSHOT_FORMAT.md "FRMS". ri_snap_read checks the section's form (lengths,
 * counts, kinds, value types and ranges, function indices against META's count);
 * whether the frames fit the module's code is the engine's check when it rebuilds them
 * (ri_store_rebuild_suspended). ri_snap_check and ri_snap_restore refuse an image with
 * frames: a caller that restores the call itself (the sandbox) passes a copy of the
 * image with has_frames cleared. */

typedef struct ri_snap_call {
    uint32_t pause_on;               /* RI_SUSPEND_ON_* the call runs with */
    uint32_t gas_schedule;           /* the sandbox's ri_gas_schedule (0 host calls, 1 instructions) */
    uint64_t gas_used;               /* by the call so far, every slice (at most 2^63 - 1) */
    uint64_t gas_left;               /* unspent gas the next slice starts with (carried over) */
    char *export_name;               /* the export that was called (UTF-8, not NUL-terminated; */
    uint32_t export_name_len;        /*   length 0: called by function index) */
    uint32_t nresults;               /* the results the caller expects */
    ri_valtype *result_types;
    ri_suspension suspension;        /* reason, called function, frames */
} ri_snap_call;

RI_API void ri_snap_call_free(ri_snap_call *call);

/* ri_snap_write with section FRMS holding `call` (meta->status must be suspended). */
RI_API bool ri_snap_write_call(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                        const ri_snap_call *call, uint8_t **out, size_t *out_len, ri_snap_error *err);
/* The suspended call of an image read by ri_snap_read (img->has_frames). *out is owned:
 * ri_snap_call_free. */
RI_API bool ri_snap_read_call(const ri_snap_image *img, ri_snap_call *out, ri_snap_error *err);

/* ri_snap_write_call (call NULL: ri_snap_write) into the caller's buffer buf of cap
 * bytes, which it may reuse from one image to the next: a long-lived writer then pays
 * no allocation and no page faults per image. The bytes are exactly those ri_snap_write
 * writes. *out_len: the image's length. If the image does not fit: RI_SNAP_ERR_TOO_SMALL,
 * *out_len the exact length it needs (more than cap), nothing written at or beyond
 * buf + cap, and buf's first cap bytes unspecified; cap 0 (buf may be NULL) asks the
 * length. Other failures: *out_len 0. */
RI_API bool ri_snap_write_into(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                        const ri_snap_call *call, uint8_t *buf, size_t cap, size_t *out_len, ri_snap_error *err);
/* ---- a delta written from the live instance (server checkpoints) ------------------------
 * ri_snap_delta_encode needs a full image first; this writes the delta directly: the
 * sections ri_snap_write_call writes, with memory i storing exactly the pages whose bit is
 * set in select[i] (ceil(pages / 8) bytes for its current size), plus PRNT naming the parent. The caller answers
 * for select covering every page that differs from the parent (a page left out reads as
 * the parent's); a selected page equal to the parent's is stored needlessly, never wrongly. */
typedef struct ri_snap_delta_target {
    uint8_t parent_sha256[RI_SNAP_SHA256_BYTES];
    uint64_t parent_len;
    const uint8_t *const *select; /* one bitmap per memory */
    uint32_t nselect;             /* must be the instance's memory count */
    /* The workspace as a workspace delta against the parent's (docs/SNAPSHOT_FORMAT.md
     * "WSFS in a delta"; WSFS kind 1), which the caller answers for; NULL: opts->workspace
     * whole (kind 0). Only with opts->has_wasi. */
    const uint8_t *workspace_delta;
    size_t workspace_delta_len;
} ri_snap_delta_target;
RI_API bool ri_snap_write_delta(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                         const ri_snap_call *call, const ri_snap_delta_target *target, uint8_t **out,
                         size_t *out_len, ri_snap_error *err);

#ifdef __cplusplus
}
#endif
#endif
