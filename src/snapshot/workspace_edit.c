/*
 * ri_snap_replace_workspace: an image whose workspace (section WSFS) is another one, the
 * rest byte for byte (`ri file add` and `ri file rm` edit a snapshot's files without a
 * sandbox, so without needing the module).
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

bool ri_snap_replace_workspace(const uint8_t *image, size_t len, const uint8_t *workspace, size_t workspace_len,
                               ri_snap_compression compression, uint8_t **out, size_t *out_len, ri_snap_error *err) {
    snap_ok(err);
    if (!out || !out_len || (workspace_len && !workspace))
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_replace_workspace: a NULL argument");
    *out = NULL;
    *out_len = 0;
    ri_snap_image img;
    if (!ri_snap_read(image, len, &img, err)) return false;
    if (!img.has_wasi) {
        ri_snap_image_free(&img);
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT,
                         "the image holds no workspace (no sections WSFS and WASI: it is not of a WASI sandbox)");
    }
    ri_snap_write_options w;
    memset(&w, 0, sizeof w);
    w.compression = compression;
    w.has_wasi = true;
    w.workspace = workspace;
    w.workspace_len = workspace_len;
    w.wasi_state = img.wasi_state;
    w.wasi_state_len = (size_t)img.wasi_state_len;
    snap_buf b;
    memset(&b, 0, sizeof b);
    snap_buf_put(&b, image, RI_SNAP_HEADER_BYTES);
    bool ok = true;
    for (uint32_t i = 0; ok && i < img.nsections; i++) {
        const ri_snap_section *s = &img.sections[i];
        snap_tag_id id = snap_tag_lookup((const uint8_t *)s->tag);
        if (id == SNAP_TAG_CSUM || id == SNAP_TAG_WASI) continue; /* WASI goes with WSFS; CSUM is new */
        if (id == SNAP_TAG_WSFS) ok = snap_write_wasi(&b, &w, err);
        else snap_buf_put(&b, image + s->offset, (size_t)(RI_SNAP_SECTION_HEADER_BYTES + s->length));
    }
    ri_snap_image_free(&img);
    if (ok && !b.failed) {
        uint32_t crc = snap_buf_crc32c(&b);
        size_t at = snap_buf_begin_section(&b, SNAP_TAG_CSUM, SNAP_FLAG_REQUIRED);
        snap_buf_u32(&b, crc);
        snap_buf_end_section(&b, at);
    }
    if (ok && b.failed) ok = snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing the image");
    if (!ok) {
        snap_buf_free(&b);
        return false;
    }
    *out = b.data;
    *out_len = b.len;
    return true;
}
