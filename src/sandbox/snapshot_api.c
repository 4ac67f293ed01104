/*
 * The snapshot entry points that serve both versions: snapshot with options (v1 or
 * v2), restore dispatched on the version byte, the version of an image, and opening
 * an image of either version for tools (ri inspect, ri diff, ri run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

static bool snapshot_error(ri_sandbox_error *err, const char *reason) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", reason);
    return false;
}

bool ri_sandbox_snapshot_with(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t **out, size_t *out_len,
                              ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!sb || !out || !out_len) return snapshot_error(err, "ri_sandbox_snapshot: a NULL argument");
    ri_snapshot_options defaults = {RI_SNAPSHOT_DEFAULT, false, false};
    if (!opts) opts = &defaults;
    if (opts->format != RI_SNAPSHOT_DEFAULT && opts->format != RI_SNAPSHOT_V1 && opts->format != RI_SNAPSHOT_V2) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: unknown format %d (expected 1 or 2)",
                     (int)opts->format);
        return false;
    }
    if (opts->format == RI_SNAPSHOT_V1 && (opts->include_module || opts->uncompressed))
        return snapshot_error(err, "Cannot snapshot: WSNP v1 can neither embed the module nor compress");
    if (!sb_snapshot_allowed(sb, err)) return false;
    if (opts->format == RI_SNAPSHOT_V1) return sb_snapshot_v1(sb, out, out_len, err);
    return sb_snapshot_v2(sb, opts, out, out_len, err);
}

bool ri_sandbox_snapshot_into(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t *buf, size_t cap,
                              size_t *out_len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out_len) *out_len = 0;
    if (!sb || !out_len || (!buf && cap)) return snapshot_error(err, "ri_sandbox_snapshot_into: a NULL argument");
    ri_snapshot_options defaults = {RI_SNAPSHOT_DEFAULT, false, false};
    if (!opts) opts = &defaults;
    if (opts->format == RI_SNAPSHOT_V2 || opts->format == RI_SNAPSHOT_DEFAULT) {
        if (!sb_snapshot_allowed(sb, err)) return false;
        return sb_snapshot_v2_into(sb, opts, buf, cap, out_len, err);
    }
    /* v1 (small, fixed layout): through a buffer of its own, then copied. */
    uint8_t *img = NULL;
    size_t len = 0;
    if (!ri_sandbox_snapshot_with(sb, opts, &img, &len, err)) return false;
    *out_len = len;
    if (len > cap) {
        free(img);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot snapshot: ri_sandbox_snapshot_into: the image needs %zu bytes, the buffer holds %zu", len,
                     cap);
        return false;
    }
    memcpy(buf, img, len);
    free(img);
    return true;
}

int ri_snapshot_version(const uint8_t *data, size_t len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!data || len < 5) return snapshot_error(err, "Snapshot too small \u2014 missing header"), 0;
    if (memcmp(data, "WSNP", 4) != 0) return snapshot_error(err, "Invalid snapshot \u2014 bad magic bytes"), 0;
    if (data[4] != 1 && data[4] != 2) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Unsupported snapshot version: %u (expected 1 or 2)", data[4]);
        return 0;
    }
    return data[4];
}

bool ri_sandbox_restore(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_sandbox_error *err) {
    return sb_restore_checked(sb, snapshot, len, NULL, err);
}

bool sb_restore_checked(ri_sandbox *sb, const uint8_t *snapshot, size_t len, const ri_snap_image *under,
                        ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) return snapshot_error(err, "ri_sandbox_restore: sandbox is NULL");
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) return snapshot_error(err, "Cannot restore into a destroyed instance");
    /* A created sandbox can take only a v2 image, which may carry its module. */
    bool v2_header = snapshot && len >= 5 && memcmp(snapshot, "WSNP", 4) == 0 && snapshot[4] == 2;
    if (status == RI_SANDBOX_CREATED && !v2_header)
        return snapshot_error(err, "Cannot restore into an instance that has not been loaded");
    if (status == RI_SANDBOX_RUNNING || sb->run)
        return snapshot_error(err, "Cannot restore into a running instance \u2014 suspend first");
    int version = ri_snapshot_version(snapshot, len, err);
    if (version == 1) {
        if (!sb_restore_v1(sb, snapshot, len, err)) return false;
        sb_pending_drop(sb); /* the image holds no call: a paused one is dropped */
        return true;
    }
    if (version == 2) return sb_restore_v2(sb, snapshot, len, under, err);
    return false;
}

bool ri_snapshot_open(const uint8_t *data, size_t len, ri_snap_image *out, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    if (out) memset(out, 0, sizeof *out);
    if (!out) return snapshot_error(err, "ri_snapshot_open: out is NULL");
    int version = ri_snapshot_version(data, len, err);
    if (!version) return false;
    ri_snap_error e;
    if (version == 2) {
        if (ri_snap_read(data, len, out, &e)) return true;
        return snapshot_error(err, e.message);
    }
    ri_wsnp_view view;
    if (!ri_wsnp_parse(data, len, &view, err)) {
        /* Tools want the reason too: "... corrupted state JSON (gasUsed is missing)". */
        if (view.detail[0]) {
            char reason[sizeof err->message];
            memcpy(reason, err->message, sizeof reason);
            sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s (%s)", reason, view.detail);
        }
        return false;
    }
    if (ri_snap_image_from_v1(view.memory, view.memory_len, view.prng_state, view.gas_used, view.timestamp, out, &e))
        return true;
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot read this v1 snapshot: %s", e.message);
    return false;
}
