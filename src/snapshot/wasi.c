/*
 * Sections WSFS and WASI (docs/SNAPSHOT_FORMAT.md): a WASI process's workspace file
 * system and its process state, after FRMS. Both are required (a reader that does not
 * know them refuses the image rather than drop the process's files) and come together.
 *
 *   WSFS: u8 encoding (0 raw, 1 zstd), u8 kind (0 the whole workspace; 1, only in a delta
 *         image, a workspace delta against the parent's), 6 zero bytes, u64 R (the length
 *         of the workspace's canonical serialization, or of the delta), then the
 *         payload: R raw bytes, or one
 *         zstd frame declaring R (written when it is smaller; the writer's parameters
 *         are the memory pages', so equal workspaces give equal bytes).
 *   WASI: the process state as the sandbox writes it (opaque here).
 */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "snapshot_internal.h"

#define CORRUPT(...) snap_fail(err, RI_SNAP_ERR_CORRUPT, __VA_ARGS__)

/* The frame into *out (malloc'd), or false when zstd fails or does not make it smaller. */
static bool compress(const uint8_t *src, size_t len, uint8_t **out, size_t *out_len) {
    *out = NULL;
    size_t bound = ZSTD_compressBound(len);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    uint8_t *buf = cctx ? malloc(bound ? bound : 1) : NULL;
    bool ok = buf && snap_zstd_params(cctx, len);
    size_t n = ok ? ZSTD_compress2(cctx, buf, bound, src, len) : 0;
    ZSTD_freeCCtx(cctx);
    if (!ok || ZSTD_isError(n) || n >= len) {
        free(buf);
        return false;
    }
    *out = buf;
    *out_len = n;
    return true;
}

bool snap_write_wsfs(snap_buf *b, const uint8_t *ws, size_t len, bool zstd, uint8_t kind) {
    uint8_t *frame = NULL;
    size_t frame_len = 0;
    zstd = zstd && len && compress(ws, len, &frame, &frame_len);
    size_t at = snap_buf_begin_section(b, SNAP_TAG_WSFS, SNAP_FLAG_REQUIRED);
    snap_buf_u8(b, zstd ? RI_SNAP_ENC_ZSTD : RI_SNAP_ENC_RAW);
    snap_buf_u8(b, kind);
    snap_buf_zeros(b, 6);
    snap_buf_u64(b, len);
    if (zstd) snap_buf_put(b, frame, frame_len);
    else snap_buf_put(b, ws, len);
    snap_buf_end_section(b, at);
    free(frame);
    return !b->failed;
}

bool snap_write_wasi(snap_buf *b, const ri_snap_write_options *opts, const uint8_t *ws_delta, size_t ws_delta_len,
                     ri_snap_error *err) {
    if (!opts || !opts->has_wasi) return true;
    if ((!ws_delta && opts->workspace_len && !opts->workspace) || (opts->wasi_state_len && !opts->wasi_state))
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write: WASI sections without their bytes");
    bool zstd = opts->compression == RI_SNAP_COMPRESS_ZSTD;
    if (ws_delta) snap_write_wsfs(b, ws_delta, ws_delta_len, zstd, SNAP_WSFS_DELTA);
    else snap_write_wsfs(b, opts->workspace, opts->workspace_len, zstd, SNAP_WSFS_WHOLE);
    size_t at = snap_buf_begin_section(b, SNAP_TAG_WASI, SNAP_FLAG_REQUIRED);
    snap_buf_put(b, opts->wasi_state, opts->wasi_state_len);
    snap_buf_end_section(b, at);
    return true;
}

static const ri_snap_section *find(const ri_snap_image *img, snap_tag_id id) {
    for (uint32_t i = 0; i < img->nsections; i++)
        if (img->sections[i].known && memcmp(img->sections[i].tag, snap_tags[id], 4) == 0) return &img->sections[i];
    return NULL;
}

bool snap_read_wasi(const uint8_t *data, ri_snap_image *img, ri_snap_error *err) {
    const ri_snap_section *fs = find(img, SNAP_TAG_WSFS), *st = find(img, SNAP_TAG_WASI);
    if (!fs && !st) return true;
    if (!fs || !st) return CORRUPT("Invalid snapshot — section '%s' without '%s' (a WASI process needs both)",
                                   fs ? "WSFS" : "WASI", fs ? "WASI" : "WSFS");
    if (fs->length < SNAP_WSFS_HEADER_BYTES)
        return CORRUPT("Invalid snapshot — WSFS is %llu bytes, shorter than its %u-byte header",
                       (unsigned long long)fs->length, SNAP_WSFS_HEADER_BYTES);
    const uint8_t *p = data + fs->offset + RI_SNAP_SECTION_HEADER_BYTES;
    if (p[0] != RI_SNAP_ENC_RAW && p[0] != RI_SNAP_ENC_ZSTD)
        return CORRUPT("Invalid snapshot — WSFS: unknown encoding %u", p[0]);
    if (p[1] > SNAP_WSFS_DELTA) return CORRUPT("Invalid snapshot — WSFS: unknown kind %u", p[1]);
    for (int i = 2; i < 8; i++)
        if (p[i]) return CORRUPT("Invalid snapshot — WSFS: reserved bytes are not zero");
    uint64_t raw = ri_le_get64(p + 8), payload = fs->length - SNAP_WSFS_HEADER_BYTES;
    if (p[0] == RI_SNAP_ENC_RAW && payload != raw)
        return CORRUPT("Invalid snapshot — WSFS holds %llu raw bytes, but declares %llu", (unsigned long long)payload,
                       (unsigned long long)raw);
    /* zstd cannot expand a byte into more than a block's worth (RLE blocks: 3 + 1 bytes for
     * 128 KiB), so a larger declared length is a lie that would make the reader allocate. */
    if (p[0] == RI_SNAP_ENC_ZSTD && raw / 32768u > payload)
        return CORRUPT("Invalid snapshot — WSFS declares %llu bytes in a zstd frame of %llu", (unsigned long long)raw,
                       (unsigned long long)payload);
    img->has_wasi = true;
    img->workspace_delta = p[1] == SNAP_WSFS_DELTA;
    img->workspace_encoding = (ri_snap_encoding)p[0];
    img->workspace_len = raw;
    img->workspace_payload = p + SNAP_WSFS_HEADER_BYTES;
    img->workspace_payload_len = payload;
    img->wasi_state = data + st->offset + RI_SNAP_SECTION_HEADER_BYTES;
    img->wasi_state_len = st->length;
    return true;
}

bool ri_snap_workspace(const ri_snap_image *img, uint8_t **out, size_t *len, ri_snap_error *err) {
    snap_ok(err);
    if (!img || !out || !len) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_workspace: a NULL argument");
    *out = NULL;
    *len = 0;
    if (img->has_wasi && img->workspace_delta)
        return CORRUPT("Invalid snapshot — WSFS holds a workspace delta against a parent's workspace, which only a "
                       "delta image may hold (apply the delta to its parent)");
    return snap_wsfs_bytes(img, out, len, err);
}

bool ri_snap_workspace_delta(const ri_snap_image *img, uint8_t **out, size_t *len, ri_snap_error *err) {
    snap_ok(err);
    if (!img || !out || !len) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_workspace_delta: a NULL argument");
    *out = NULL;
    *len = 0;
    if (!img->has_wasi || !img->workspace_delta)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "the image holds no workspace delta (WSFS of kind 1)");
    return snap_wsfs_bytes(img, out, len, err);
}

bool snap_wsfs_bytes(const ri_snap_image *img, uint8_t **out, size_t *len, ri_snap_error *err) {
    *out = NULL;
    *len = 0;
    if (!img->has_wasi) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "the image holds no WASI process");
    if (img->workspace_len > SIZE_MAX)
        return snap_fail(err, RI_SNAP_ERR_NOMEM, "the workspace does not fit the address space");
    size_t n = (size_t)img->workspace_len;
    if (img->workspace_encoding == RI_SNAP_ENC_ZSTD) {
        size_t frame = ZSTD_findFrameCompressedSize(img->workspace_payload, (size_t)img->workspace_payload_len);
        if (ZSTD_isError(frame) || frame != img->workspace_payload_len)
            return CORRUPT("Invalid snapshot — WSFS: the payload is not one complete zstd frame");
        if (ZSTD_getFrameContentSize(img->workspace_payload, frame) != img->workspace_len)
            return CORRUPT("Invalid snapshot — WSFS: the zstd frame does not declare the %llu bytes of the workspace",
                           (unsigned long long)img->workspace_len);
    }
    if (n == 0) return true;
    uint8_t *buf = malloc(n);
    if (!buf) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory for the workspace (%zu bytes)", n);
    if (img->workspace_encoding == RI_SNAP_ENC_RAW) {
        memcpy(buf, img->workspace_payload, n);
    } else {
        size_t got = ZSTD_decompress(buf, n, img->workspace_payload, (size_t)img->workspace_payload_len);
        if (ZSTD_isError(got) || got != n) {
            free(buf);
            return CORRUPT("Invalid snapshot — WSFS: the zstd frame does not decompress (%s)",
                           ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong length");
        }
    }
    *out = buf;
    *len = n;
    return true;
}
