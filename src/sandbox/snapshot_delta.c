/*
 * WSNP v2 delta images through the sandbox: a snapshot stored as the pages that differ
 * from a parent image, and its restore on top of that parent (src/snapshot/delta.c has
 * the format). Writing one goes through a full image in memory: a delta costs what a
 * full snapshot costs to compute, and saves space on disk. Restoring one reads the
 * parent's pages where the delta stores none, without building the full image.
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

bool ri_sandbox_snapshot_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len,
                               const ri_snapshot_options *opts, uint8_t **out, size_t *out_len,
                               ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!sb || !parent || !out || !out_len) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_snapshot_delta: a NULL argument");
        return false;
    }
    ri_snapshot_options o = {RI_SNAPSHOT_V2, false, false};
    if (opts) o = *opts;
    if (o.format == RI_SNAPSHOT_V1) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: a delta is a WSNP v2 image, not v1");
        return false;
    }
    o.format = RI_SNAPSHOT_V2;
    uint8_t *full = NULL;
    size_t full_len = 0;
    if (!ri_sandbox_snapshot_with(sb, &o, &full, &full_len, err)) return false;
    ri_snap_error e;
    bool ok = ri_snap_delta_encode(parent, parent_len, full, full_len,
                                   o.uncompressed ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD, out, out_len, &e);
    free(full);
    if (!ok) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot write a delta: %s", e.message);
    return ok;
}

static bool parent_mismatch(ri_sandbox_error *err, const uint8_t *want, const uint8_t *have) {
    char w[2 * RI_SNAP_SHA256_BYTES + 1], h[2 * RI_SNAP_SHA256_BYTES + 1];
    ri_snap_hex(want, w);
    ri_snap_hex(have, h);
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                 "Snapshot parent mismatch \u2014 the delta was taken on parent sha256:%s, the image given is "
                 "sha256:%s",
                 w, h);
    return false;
}

/* The delta's own image (its state and its stored pages) is restored with the parent's
 * memories under it: a page the delta does not store reads as the parent's (or zero).
 * The restore builds each memory's image from both in one pass (src/snapshot/restore.c),
 * so no full image is built and the memory is not copied twice. Everything that can
 * fail is checked before the restore, which is atomic. known_sha256: the parent's
 * SHA-256 as the caller knows it, or NULL to compute it. */
static bool restore_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                          size_t delta_len, const uint8_t *known_sha256, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb || !parent || !delta) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_restore_delta: a NULL argument");
        return false;
    }
    ri_snap_delta_info info;
    ri_snap_image d, p;
    uint8_t *plain = NULL;
    ri_snap_error e;
    if (!ri_snap_delta_read(delta, delta_len, &info, &d, &plain, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    uint8_t digest[RI_SNAP_SHA256_BYTES];
    bool ok = true, parent_read = false;
    if (known_sha256)
        memcpy(digest, known_sha256, RI_SNAP_SHA256_BYTES);
    else if (!ri_snap_sha256(parent, parent_len, digest)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "cannot hash the parent image");
        ok = false;
    }
    if (ok && (memcmp(digest, info.parent_sha256, RI_SNAP_SHA256_BYTES) != 0 || info.parent_len != parent_len))
        ok = parent_mismatch(err, info.parent_sha256, digest);
    /* A workspace stored against the parent's: read the delta again with the parent, which
     * rebuilds the workspace whole (only now that the parent is known to be the right one). */
    if (ok && d.has_wasi && d.workspace_delta) {
        ri_snap_image_free(&d);
        free(plain);
        plain = NULL;
        if (!ri_snap_delta_read_with(parent, parent_len, delta, delta_len, &info, &d, &plain, &e)) {
            sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
            return false;
        }
    }
    if (ok && !(parent_read = ri_snap_read(parent, parent_len, &p, &e))) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        ok = false;
    }
    if (ok && memcmp(p.meta.module_sha256, d.meta.module_sha256, RI_SNAP_SHA256_BYTES) != 0) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Snapshot parent mismatch \u2014 the parent image was taken with another module");
        ok = false;
    } else if (ok && p.nmemories != d.nmemories) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Snapshot parent mismatch \u2014 the parent image has %u memories, the image %u",
                     p.nmemories, d.nmemories);
        ok = false;
    }
    if (ok) ok = sb_restore_checked(sb, plain, d.total_len, &p, err);
    if (parent_read) ri_snap_image_free(&p);
    ri_snap_image_free(&d);
    free(plain);
    return ok;
}

bool ri_sandbox_restore_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                              size_t delta_len, ri_sandbox_error *err) {
    return restore_delta(sb, parent, parent_len, delta, delta_len, NULL, err);
}

bool ri_sandbox_restore_delta_known(ri_sandbox *sb, const uint8_t *parent, size_t parent_len,
                                    const uint8_t parent_sha256[32], const uint8_t *delta, size_t delta_len,
                                    ri_sandbox_error *err) {
    if (!parent_sha256) {
        if (err) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_restore_delta_known: a NULL argument");
        return false;
    }
    return restore_delta(sb, parent, parent_len, delta, delta_len, parent_sha256, err);
}
