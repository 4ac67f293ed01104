/*
 * Diffs at the sandbox's level: two images of either version, or an image and the
 * live sandbox. The live side is written as an uncompressed v2 image in memory (no
 * module) and read back, so one comparison (ri_snap_diff_images) serves every case.
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

static bool diff_failed(ri_sandbox_error *err, const ri_snap_error *e) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e->message);
    return false;
}

bool ri_snapshot_diff(const uint8_t *old_snap, size_t old_len, const uint8_t *new_snap, size_t new_len,
                      const ri_snap_diff_options *opts, ri_snap_diff *out, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out) memset(out, 0, sizeof *out);
    if (!out) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_snapshot_diff: out is NULL");
        return false;
    }
    ri_snap_image a, b;
    if (!ri_snapshot_open(old_snap, old_len, &a, err)) return false;
    if (!ri_snapshot_open(new_snap, new_len, &b, err)) {
        ri_snap_image_free(&a);
        return false;
    }
    ri_snap_error e;
    bool ok = ri_snap_diff_images(&a, &b, opts, out, &e) || diff_failed(err, &e);
    ri_snap_image_free(&a);
    ri_snap_image_free(&b);
    return ok;
}

bool ri_sandbox_diff(ri_sandbox *sb, const uint8_t *snapshot, size_t len, const ri_snap_diff_options *opts,
                     ri_snap_diff *out, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out) memset(out, 0, sizeof *out);
    if (!sb || !out) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_diff: a NULL argument");
        return false;
    }
    if (!sb_snapshot_allowed(sb, err)) return false;
    ri_snap_image old_img, live_img;
    if (!ri_snapshot_open(snapshot, len, &old_img, err)) return false;
    ri_snapshot_options live_opts = {RI_SNAPSHOT_V2, false, true};
    uint8_t *live = NULL;
    size_t live_len = 0;
    ri_snap_error e;
    bool ok = sb_snapshot_v2(sb, &live_opts, &live, &live_len, err);
    if (ok) ok = ri_snap_read(live, live_len, &live_img, &e) || diff_failed(err, &e);
    if (ok) {
        ok = ri_snap_diff_images(&old_img, &live_img, opts, out, &e) || diff_failed(err, &e);
        ri_snap_image_free(&live_img);
    }
    free(live);
    ri_snap_image_free(&old_img);
    return ok;
}
