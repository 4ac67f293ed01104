/*
 * Private to src/snapshot/: the wire constants of WSNP v2 and the contracts between
 * the files (one concern each):
 *
 *   error.c      error values and the names of statuses and value types
 *   digest.c     SHA-256 (libcrypto) and its hex form: the module identity
 *   crc32c.c     CRC-32C: the image checksum
 *   buf.c        the growable output buffer and little-endian encoding
 *   pages.c      memory pages: zero-page test, the stored-page payload (zstd or raw),
 *                decompression for restore, the streaming page reader
 *   write.c      ri_snap_write: instance -> canonical image
 *   read.c       ri_snap_read: image -> checked view; v1 contents as an image
 *   restore.c    ri_snap_check, ri_snap_restore
 *   diff.c       ri_snap_diff_images
 *   diff_json.c  ri_snap_diff_json
 *   frames.c     section FRMS: a suspended call (write, read)
 *   wasi.c       sections WSFS and WASI: a WASI process's workspace and state (write, read)
 */
#ifndef RI_SNAPSHOT_INTERNAL_H
#define RI_SNAPSHOT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/snapshot.h"
#include "util/le.h"

/* ---- the wire format (docs/SNAPSHOT_FORMAT.md) --------------------------------------- */

#define SNAP_FLAG_REQUIRED 1u
#define SNAP_META_BYTES 88u
#define SNAP_MEMORY_HEADER_BYTES 24u
#define SNAP_TABLE_HEADER_BYTES 12u
#define SNAP_GLOBAL_BYTES 16u
#define SNAP_V128_HIGH_BYTES 8u /* after a v128 global's record: its bytes 8..15 */
#define SNAP_SEGS_HEADER_BYTES 8u
#define SNAP_MEMORY_HAS_MAX 1u
#define SNAP_MEMORY_IS64 2u    /* a 64-bit memory (memory64); its maximum may exceed 65,536 pages */
#define SNAP_TABLE_HAS_MAX 1u
/* Streaming decompression refuses frames that need a larger window: our writer's
 * frames need at most 2 MiB (zstd level 3), and a hostile frame must not make a
 * reader allocate gigabytes. */
#define SNAP_ZSTD_WINDOW_LOG_MAX 24

/* The sections this version knows, in the order a writer puts them. */
typedef enum snap_tag_id {
    SNAP_TAG_META,
    SNAP_TAG_MODL,
    SNAP_TAG_MEMS,
    SNAP_TAG_TBLS,
    SNAP_TAG_GLBS,
    SNAP_TAG_SEGS,
    SNAP_TAG_FRMS,
    SNAP_TAG_WSFS,
    SNAP_TAG_WASI,
    SNAP_TAG_CSUM,
    SNAP_TAG_COUNT,
    SNAP_TAG_UNKNOWN = SNAP_TAG_COUNT,
} snap_tag_id;

extern const char snap_tags[SNAP_TAG_COUNT][4];
snap_tag_id snap_tag_lookup(const uint8_t tag[4]);

/* ---- errors (error.c) ------------------------------------------------------------------ */

/* Sets err (if not NULL) and returns false, so a failed step reads as one line. */
bool snap_fail(ri_snap_error *err, ri_snap_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void snap_ok(ri_snap_error *err);
/* A section tag made printable for a message: 'MEMS', or \xNN for other bytes. */
void snap_tag_text(const uint8_t tag[4], char out[20]);

/* Two's complement without implementation-defined conversions. */
static inline int64_t snap_i64_from_bits(uint64_t bits) {
    return bits <= (uint64_t)INT64_MAX ? (int64_t)bits : -(int64_t)(~bits) - 1;
}

/* ---- the output buffer (buf.c) --------------------------------------------------------------- */

/* A stretch of the buffer whose CRC-32C register (started from 0) was computed while it
 * was written (the raw pages, in the copy pass): the checksum then skips over it by
 * linearity instead of reading it again. Its bytes must not change afterwards. */
#define SNAP_CRC_SPANS 8
typedef struct snap_crc_span {
    size_t at, len;
    uint32_t reg;
} snap_crc_span;

typedef struct snap_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed;                /* an allocation failed: every later write is a no-op */
    bool fixed;                 /* the caller's buffer: never reallocated, cap is the limit */
    bool too_small;             /* fixed, and a write did not fit (failed is set too) */
    unsigned nspans;
    snap_crc_span spans[SNAP_CRC_SPANS];
} snap_buf;

/* CRC-32C of the whole buffer (the image checksum), reading only what the spans do not cover. */
uint32_t snap_buf_crc32c(const snap_buf *b);
/* The CRC-32C register after len more bytes, and after n zero bytes (crc32c.c). */
uint32_t snap_crc32c_update(uint32_t reg, const uint8_t *data, size_t len);
uint32_t snap_crc32c_shift(uint32_t reg, uint64_t n);
/* Copies one page from src to dst; when it holds a non-zero byte, advances *reg over it
 * and returns true, else leaves *reg and returns false (copy_crc.c). */
bool snap_copy_page_crc(uint8_t *dst, const uint8_t *src, uint32_t *reg);
/* Whether the CPU has SSE4.2's crc32 instruction (x86-64 only; crc32c.c). */
bool snap_cpu_has_sse42(void);

/* Room for n more bytes; false (and failed set) on OOM or size_t overflow. */
bool snap_buf_reserve(snap_buf *b, size_t n);
void snap_buf_put(snap_buf *b, const void *src, size_t n);
void snap_buf_u8(snap_buf *b, uint8_t v);
void snap_buf_u32(snap_buf *b, uint32_t v);
void snap_buf_u64(snap_buf *b, uint64_t v);
void snap_buf_zeros(snap_buf *b, size_t n);
/* Writes a section header with length 0 and returns where it starts; snap_buf_end_section
 * patches the length once the content is written. */
size_t snap_buf_begin_section(snap_buf *b, snap_tag_id tag, uint32_t flags);
void snap_buf_end_section(snap_buf *b, size_t at);
void snap_buf_free(snap_buf *b);

/* ---- pages (pages.c) ------------------------------------------------------------------------- */

bool snap_page_is_zero(const uint8_t *page);
static inline bool snap_bit(const uint8_t *bitmap, uint32_t i) { return (bitmap[i >> 3] >> (i & 7)) & 1u; }

/* Appends memory `index` (pages of `data`) to the MEMS section being written: its
 * header, the bitmap of non-zero pages and the payload (zstd unless that is not
 * smaller, or raw as asked). */
bool snap_write_memory(snap_buf *b, const uint8_t *data, uint32_t pages, ri_memtype type,
                       ri_snap_compression compression, uint32_t index, ri_snap_error *err);

/* The same storing exactly the pages whose bit is set in select (a delta image: the
 * pages that differ from its parent, zero or not); select NULL: the non-zero pages. */
bool snap_write_memory_pages(snap_buf *b, const uint8_t *data, uint32_t pages, ri_memtype type,
                             ri_snap_compression compression, uint32_t index, const uint8_t *select,
                             ri_snap_error *err);

/* The payload's content (present_pages * 64 KiB): for raw payloads a pointer into the
 * image (*owned NULL); for zstd a malloc'd buffer (*owned = it), checked to be exactly
 * one frame of exactly that content. */
bool snap_inflate(const ri_snap_memory *m, uint32_t index, const uint8_t **content, uint8_t **owned,
                  ri_snap_error *err);

/* ---- frames (frames.c) ---------------------------------------------------------------------- */

/* Appends section FRMS for `call` (func_count: the instance's function space). */
bool snap_write_frames(snap_buf *b, const ri_snap_call *call, uint32_t func_count, ri_snap_error *err);

/* ---- the WASI process (wasi.c) --------------------------------------------------------------- */

#define SNAP_WSFS_HEADER_BYTES 16u /* u8 encoding, 7 zero bytes, u64 content length */
/* Appends sections WSFS and WASI from opts (nothing without opts->has_wasi); WSFS holds
 * ws_delta (a workspace delta against the parent's, kind 1) when it is not NULL. */
bool snap_write_wasi(snap_buf *b, const ri_snap_write_options *opts, const uint8_t *ws_delta, size_t ws_delta_len,
                     ri_snap_error *err);
/* Appends section WSFS holding ws (kind 0: a whole canonical serialization; 1: a workspace
 * delta against the parent's), zstd when zstd is true and it makes the bytes smaller. */
bool snap_write_wsfs(snap_buf *b, const uint8_t *ws, size_t len, bool zstd, uint8_t kind);
#define SNAP_WSFS_WHOLE 0u
#define SNAP_WSFS_DELTA 1u
/* WSFS's payload decoded (whole or delta, as img says), *out malloc'd (NULL when empty). */
bool snap_wsfs_bytes(const ri_snap_image *img, uint8_t **out, size_t *len, ri_snap_error *err);
/* Reads them into img (both or neither, their headers checked). */
bool snap_read_wasi(const uint8_t *data, ri_snap_image *img, ri_snap_error *err);
/* The zstd frame parameters every writer sets (pages.c); cctx is a ZSTD_CCtx *. */
bool snap_zstd_params(void *cctx, uint64_t content);

#endif
