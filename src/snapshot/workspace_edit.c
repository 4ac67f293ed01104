/*
 * Editing an image without a sandbox: ri_snap_replace_workspace (`ri file add` and `ri file
 * rm` change a snapshot's files without needing its module) and ri_snap_set_section (the
 * CLI records a WASI command's arguments beside its process). Every other section is
 * copied byte for byte and in its place; the checksum is recomputed.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

typedef struct edit {
    const ri_snap_write_options *wasi; /* the new WSFS (and the image's WASI), or NULL */
    const uint8_t *tag;                /* an optional section to set, or NULL */
    const uint8_t *content;
    size_t content_len;
} edit;

static bool rebuild(const uint8_t *image, const ri_snap_image *img, const edit *ed, uint8_t **out, size_t *out_len,
                    ri_snap_error *err) {
    snap_buf b;
    memset(&b, 0, sizeof b);
    snap_buf_put(&b, image, RI_SNAP_HEADER_BYTES);
    bool ok = true, set = false;
    for (uint32_t i = 0; ok && i < img->nsections; i++) {
        const ri_snap_section *s = &img->sections[i];
        snap_tag_id id = snap_tag_lookup((const uint8_t *)s->tag);
        if (id == SNAP_TAG_CSUM) continue; /* recomputed */
        if (ed->wasi && id == SNAP_TAG_WASI) continue; /* written with WSFS */
        if (ed->wasi && id == SNAP_TAG_WSFS) {
            ok = snap_write_wasi(&b, ed->wasi, NULL, 0, err);
        } else if (ed->tag && memcmp(s->tag, ed->tag, 4) == 0) {
            if (set) continue; /* (a second one of that tag goes) */
            snap_buf_put(&b, ed->tag, 4);
            snap_buf_u32(&b, 0);
            snap_buf_u64(&b, ed->content_len);
            snap_buf_put(&b, ed->content, ed->content_len);
            set = true;
        } else {
            snap_buf_put(&b, image + s->offset, (size_t)(RI_SNAP_SECTION_HEADER_BYTES + s->length));
        }
    }
    if (ok && ed->tag && !set) {
        snap_buf_put(&b, ed->tag, 4);
        snap_buf_u32(&b, 0);
        snap_buf_u64(&b, ed->content_len);
        snap_buf_put(&b, ed->content, ed->content_len);
    }
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
    edit ed = {&w, NULL, NULL, 0};
    bool ok = rebuild(image, &img, &ed, out, out_len, err);
    ri_snap_image_free(&img);
    return ok;
}

bool ri_snap_set_section(const uint8_t *image, size_t len, const char tag[4], const uint8_t *content,
                         size_t content_len, uint8_t **out, size_t *out_len, ri_snap_error *err) {
    snap_ok(err);
    if (!out || !out_len || !tag || (content_len && !content))
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_set_section: a NULL argument");
    *out = NULL;
    *out_len = 0;
    if (snap_tag_lookup((const uint8_t *)tag) != SNAP_TAG_UNKNOWN || memcmp(tag, "PRNT", 4) == 0)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_set_section: '%.4s' is a section of the format", tag);
    ri_snap_image img;
    if (!ri_snap_read(image, len, &img, err)) return false;
    edit ed = {NULL, (const uint8_t *)tag, content, content_len};
    bool ok = rebuild(image, &img, &ed, out, out_len, err);
    ri_snap_image_free(&img);
    return ok;
}
