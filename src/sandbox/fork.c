/*
 * ri_sandbox_fork: a new sandbox (own id, the original's config) in the state of a
 * checkpoint, or of the original as it is now (through a checkpoint taken for the
 * occasion). The module is shared, not recompiled; the new instance is built as a
 * load builds one but without the start function (its effects are in the state the
 * checkpoint brings), then the checkpoint is applied: memory maps copy-on-write, so
 * the cost does not grow with the memory's size. A checkpoint's paused call is
 * rebuilt in the new store: the fork is then a second paused sandbox.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"

static ri_sandbox *fork_fail(ri_sandbox_error *err, const char *fmt, const char *detail) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, fmt, detail);
    return NULL;
}

ri_sandbox *ri_sandbox_fork(ri_sandboxes *factory, ri_sandbox *sb, const ri_checkpoint *cp, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!factory || !sb) return fork_fail(err, "%s", "ri_sandbox_fork: a NULL argument");
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) return fork_fail(err, "%s", "Cannot fork a destroyed instance");
    ri_checkpoint *own = NULL;
    if (!cp) {
        own = ri_sandbox_checkpoint(sb, NULL, err);
        if (!own) return NULL;
        cp = own;
    }
    ri_sandbox *child = ri_sandbox_create(factory, &sb->config, err);
    if (!child) {
        ri_checkpoint_free(own);
        return NULL;
    }
    sb_image *img = NULL;
    sb_pending *pending = NULL;
    /* The child's config is the original's, so the module's imports pass isolation. */
    if (!sb_build_image_from(child, ri_module_retain(cp->module), false, &img, err) ||
        !sb_checkpoint_apply(img, cp, err) ||
        (cp->has_call && !(pending = sb_pending_rebuild(child, img, &cp->call, err)))) {
        ri_sandbox_error cause = *err;
        sb_image_free(img);
        ri_sandbox_free(child);
        ri_checkpoint_free(own);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot fork: %s", cause.message);
        return NULL;
    }
    ri_wasi *wasi = NULL;
    if (child->wasi && cp->wasi && !(wasi = ri_wasi_copy(cp->wasi, NULL))) {
        sb_image_free(img);
        ri_sandbox_free(child);
        ri_checkpoint_free(own);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot fork: out of memory for the WASI state");
        return NULL;
    }
    if (wasi) sb_wasi_install(child, wasi);
    sb_image_free(child->image); /* the created sandbox's empty image */
    child->image = img;
    child->pending = pending;
    child->pause_on = sb->pause_on; /* later executions pause as the original's do */
    child->prng_state = cp->prng_state;
    child->metrics.gas_used = cp->gas_used;
    child->metrics.execution_ms = cp->execution_ms;
    sb_set_status(child, cp->status);
    ri_checkpoint_free(own);
    return child;
}
