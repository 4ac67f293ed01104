/*
 * A delta image restored on its parent's state held in memory (cache warm): the parent is
 * a checkpoint, not bytes. Its memory is mapped copy-on-write (a rollback of the
 * instance) and the delta's stored pages written over it; its workspace is forked and the
 * delta's workspace changes applied in place. Nothing is parsed or copied whole, so the
 * cost follows the delta. The result is the state ri_sandbox_restore_delta gives from the
 * parent's bytes (tests/unit/test_snapshot_warm.c compares the snapshots byte for byte).
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"
#include "workspace/wsfs.h"

/* The process the delta describes, built beside the sandbox's: the workspace from the
 * parent state's and the delta's changes (or whole, if the delta holds it whole). */
static bool warm_wasi(ri_sandbox *sb, const ri_checkpoint *cp, const ri_snap_image *d, ri_wasi **out,
                      ri_sandbox_error *err) {
    *out = NULL;
    if (!d->has_wasi || !d->workspace_delta) return sb_wasi_from_image(sb, d, out, err);
    wsfs *base = cp->wasi ? ri_wasi_workspace(cp->wasi) : NULL;
    if (!sb->wasi || !base) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore: the delta's workspace is stored against its parent's, but %s",
                     sb->wasi ? "the parent state holds no workspace" : "this sandbox does not enable WASI");
        return false;
    }
    uint8_t *bytes = NULL;
    size_t len = 0;
    ri_snap_error e;
    if (!ri_snap_workspace_delta(d, &bytes, &len, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    wsfs *fs = NULL;
    wsfs_error we;
    wsfs_status st = wsfs_delta_apply_fs(base, bytes, len, &fs, &we);
    free(bytes);
    if (st != WSFS_OK) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Invalid snapshot \u2014 WSFS: %s", we.message);
        return false;
    }
    ri_wasi *w = ri_wasi_copy(sb->wasi, NULL); /* this sandbox's configuration and services */
    char why[200] = "";
    if (!w || !ri_wasi_state_read_fs(w, d->wasi_state, (size_t)d->wasi_state_len, fs, why, sizeof why)) {
        if (w) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Invalid snapshot \u2014 WASI: %s", why);
        else sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore: out of memory for the WASI process");
        ri_wasi_free(w);
        wsfs_free(fs);
        return false;
    }
    *out = w;
    return true;
}

bool ri_sandbox_restore_delta_on(ri_sandbox *sb, const ri_checkpoint *cp, const uint8_t parent_sha256[32],
                                 uint64_t parent_len, const uint8_t *delta, size_t delta_len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb || !cp || !parent_sha256 || !delta) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_restore_delta_on: a NULL argument");
        return false;
    }
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED || status == RI_SANDBOX_CREATED || !sb->image || !sb->image->instance) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore on a parent state: the sandbox is not loaded");
        return false;
    }
    if (status == RI_SANDBOX_RUNNING || sb->run) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore into a running instance \u2014 suspend first");
        return false;
    }
    ri_snap_delta_info info;
    ri_snap_image d;
    uint8_t *plain = NULL;
    ri_snap_error e;
    if (!ri_snap_delta_read(delta, delta_len, &info, &d, &plain, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    bool ok = true;
    uint8_t sha[RI_SNAP_SHA256_BYTES];
    size_t mlen = 0;
    if (memcmp(info.parent_sha256, parent_sha256, RI_SNAP_SHA256_BYTES) != 0 || info.parent_len != parent_len) {
        char w[2 * RI_SNAP_SHA256_BYTES + 1], h[2 * RI_SNAP_SHA256_BYTES + 1];
        ri_snap_hex(info.parent_sha256, w);
        ri_snap_hex(parent_sha256, h);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Snapshot parent mismatch \u2014 the delta was taken on parent sha256:%s, the state given is "
                     "sha256:%s",
                     w, h);
        ok = false;
    } else if (d.has_frames) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore on a parent state: the delta holds a paused call (section FRMS); restore it with "
                     "its parent image (ri_sandbox_restore_delta)");
        ok = false;
    } else if (!ri_sandbox_module(sb, &mlen, sha) || memcmp(sha, d.meta.module_sha256, RI_SNAP_SHA256_BYTES) != 0 ||
               ri_instance_module(sb->image->instance) != cp->module) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore on a parent state: the delta, the state and the sandbox must run one module");
        ok = false;
    }
    /* Fallible and changing nothing: the image against the instance, the process. */
    ri_wasi *wasi = NULL;
    if (ok && !ri_snap_check(sb->image->instance, &d, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        ok = false;
    }
    ok = ok && warm_wasi(sb, cp, &d, &wasi, err);
    /* The parent's state (memory mapped copy-on-write), then the delta over it. A failure
     * of the second step (out of memory decompressing or growing) leaves the parent's. */
    ok = ok && sb_checkpoint_apply(sb->image, cp, err);
    if (ok && !ri_snap_restore_onto(sb->image->instance, &d, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Restore incomplete (the parent's state is in place): %s",
                     e.message);
        ok = false;
        ri_wasi *pw = cp->wasi && sb->wasi ? ri_wasi_copy(cp->wasi, NULL) : NULL;
        if (pw) sb_wasi_install(sb, pw);
        sb->prng_state = cp->prng_state;
        sb->metrics.gas_used = cp->gas_used;
        sb_pending_drop(sb);
        sb_set_status(sb, RI_SANDBOX_LOADED);
    }
    if (ok) {
        sb_wasi_commit(sb, wasi);
        wasi = NULL;
        sb->prng_state = d.meta.prng_state;
        sb->metrics.gas_used = d.meta.gas_used;
        sb_pending_drop(sb); /* the image holds no call: a paused one is dropped */
        sb_set_status(sb, RI_SANDBOX_LOADED);
    }
    ri_wasi_free(wasi);
    ri_snap_image_free(&d);
    free(plain);
    return ok;
}
