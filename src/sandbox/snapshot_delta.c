/*
 * WSNP v2 delta images through the sandbox: a snapshot stored as the pages that differ
 * from a parent image, and its restore on top of that parent (src/snapshot/delta.c has
 * the format). Both go through a full image in memory: a delta costs what a full
 * snapshot costs to compute, and saves space on disk.
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

bool ri_sandbox_restore_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                              size_t delta_len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_restore_delta: sandbox is NULL");
        return false;
    }
    uint8_t *full = NULL;
    size_t full_len = 0;
    ri_snap_error e;
    if (!ri_snap_delta_apply(parent, parent_len, delta, delta_len, &full, &full_len, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    bool ok = ri_sandbox_restore(sb, full, full_len, err);
    free(full);
    return ok;
}
