/*
 * A WASI process in snapshot files (sections WSFS and WASI, docs/SNAPSHOT_FORMAT.md): the
 * writer's options carry the workspace's canonical bytes and the process state; a restore
 * builds the process an image describes beside the sandbox's (everything parsed and
 * checked) and swaps it in only once the instance's restore succeeded, so a refused image
 * changes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"

static bool wasi_options(ri_sandbox *sb, ri_snap_write_options *w, sb_wasi_bytes *owned, bool workspace,
                         ri_sandbox_error *err) {
    memset(owned, 0, sizeof *owned);
    if (!sb->wasi) return true;
    size_t state_len = 0, ws_len = 0;
    if (!ri_wasi_state_write(sb->wasi, &owned->state, &state_len) ||
        (workspace && !ri_wasi_workspace_write(sb->wasi, &owned->workspace, &ws_len))) {
        sb_wasi_bytes_free(owned);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: out of memory serializing the WASI process");
        return false;
    }
    w->has_wasi = true;
    w->wasi_state = owned->state;
    w->wasi_state_len = state_len;
    w->workspace = owned->workspace;
    w->workspace_len = ws_len;
    return true;
}

bool sb_wasi_snapshot_options(ri_sandbox *sb, ri_snap_write_options *w, sb_wasi_bytes *owned,
                              ri_sandbox_error *err) {
    return wasi_options(sb, w, owned, true, err);
}

bool sb_wasi_state_options(ri_sandbox *sb, ri_snap_write_options *w, sb_wasi_bytes *owned, ri_sandbox_error *err) {
    return wasi_options(sb, w, owned, false, err);
}

void sb_wasi_bytes_free(sb_wasi_bytes *b) {
    free(b->state);
    free(b->workspace);
    memset(b, 0, sizeof *b);
}

bool sb_wasi_from_image(ri_sandbox *sb, const ri_snap_image *img, struct ri_wasi **out, ri_sandbox_error *err) {
    *out = NULL;
    if (!img->has_wasi) return true;
    if (!sb->wasi) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore: the image holds a WASI process (sections WSFS and WASI), but this sandbox does "
                     "not enable WASI (enable_wasi)");
        return false;
    }
    uint8_t *ws = NULL;
    size_t ws_len = 0;
    ri_snap_error e;
    if (!ri_snap_workspace(img, &ws, &ws_len, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    ri_wasi *w = ri_wasi_copy(sb->wasi, NULL); /* this sandbox's configuration and services */
    char why[200] = "";
    bool ok = w && ri_wasi_state_read(w, img->wasi_state, (size_t)img->wasi_state_len, ws, ws_len, why, sizeof why);
    free(ws);
    if (!ok) {
        if (w) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Invalid snapshot — WASI: %s", why);
        else sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore: out of memory for the WASI process");
        ri_wasi_free(w);
        return false;
    }
    *out = w;
    return true;
}

void sb_wasi_commit(ri_sandbox *sb, struct ri_wasi *w) {
    if (!w) return;
    ri_wasi_free(sb->wasi);
    sb->wasi = w;
}
