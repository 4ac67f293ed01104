/*
 * WSNP v2 in the sandbox: the sandbox's part of the state (module identity, status,
 * PRNG, gas, event timestamp) around the snapshot layer's instance state
 * (src/snapshot/, ri/snapshot.h).
 *
 * Restore finds its target first: the loaded instance when the image names the loaded
 * module (SHA-256 of its bytes), else a new image built from the module the image
 * embeds, exactly as a load builds one. The state goes into the target atomically
 * (ri_snap_restore); a new image replaces the old one only once that succeeded, so a
 * refused restore leaves the sandbox as it was.
 */
#include <stdio.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"

static bool snapshot_error(ri_sandbox_error *err, const char *reason) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", reason);
    return false;
}

bool sb_module_sha256(sb_image *img, uint8_t out[RI_SNAP_SHA256_BYTES]) {
    if (!img->has_module_sha256) {
        size_t len = 0;
        const uint8_t *bytes = ri_module_bytes(img->module, &len);
        if (!bytes || !ri_snap_sha256(bytes, len, img->module_sha256)) return false;
        img->has_module_sha256 = true;
    }
    memcpy(out, img->module_sha256, RI_SNAP_SHA256_BYTES);
    return true;
}

const uint8_t *ri_sandbox_module(ri_sandbox *sb, size_t *len, uint8_t sha256[RI_SNAP_SHA256_BYTES]) {
    if (len) *len = 0;
    if (!sb || sb_status(sb) == RI_SANDBOX_DESTROYED || !sb->image || !sb->image->module) return NULL;
    size_t n = 0;
    const uint8_t *bytes = ri_module_bytes(sb->image->module, &n);
    uint8_t digest[RI_SNAP_SHA256_BYTES];
    if (!bytes || !sb_module_sha256(sb->image, digest)) return NULL;
    if (sha256) memcpy(sha256, digest, RI_SNAP_SHA256_BYTES);
    if (len) *len = n;
    return bytes;
}

bool sb_snapshot_meta(ri_sandbox *sb, ri_snap_meta *meta, ri_sandbox_error *err) {
    memset(meta, 0, sizeof *meta);
    if (!sb_module_sha256(sb->image, meta->module_sha256))
        return snapshot_error(err, "Cannot snapshot: libcrypto failed to compute the module's SHA-256");
    size_t module_len = 0;
    ri_module_bytes(sb->image->module, &module_len);
    meta->module_size = module_len;
    meta->status = sb_status(sb) == RI_SANDBOX_SUSPENDED ? RI_SNAP_STATUS_SUSPENDED : RI_SNAP_STATUS_LOADED;
    meta->prng_state = sb->prng_state;
    meta->gas_used = sb->metrics.gas_used;
    meta->event_timestamp = sb->config.event_timestamp;
    return true;
}

/* Into *out (malloc'd) when buf is NULL and cap 0 with out set, else into the caller's
 * buf of cap bytes (ri_snap_write_into: too small leaves the needed length in *out_len). */
static bool snapshot_v2(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t **out, uint8_t *buf, size_t cap,
                        size_t *out_len, ri_sandbox_error *err) {
    ri_snap_meta meta;
    if (!sb_snapshot_meta(sb, &meta, err)) return false;
    ri_snap_write_options w;
    memset(&w, 0, sizeof w);
    w.compression = opts->uncompressed ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD;
    if (opts->include_module) w.module = ri_module_bytes(sb->image->module, &w.module_len);
    ri_snap_error e;
    sb_wasi_bytes wasi;
    if (!sb_wasi_snapshot_options(sb, &w, &wasi, err)) return false;
    ri_snap_call call;
    memset(&call, 0, sizeof call);
    if (sb->pending && !sb_snapshot_call(sb, &call, err)) {
        sb_wasi_bytes_free(&wasi);
        return false;
    }
    const ri_snap_call *c = sb->pending ? &call : NULL;
    bool written = out ? ri_snap_write_call(sb->image->instance, &meta, &w, c, out, out_len, &e)
                       : ri_snap_write_into(sb->image->instance, &meta, &w, c, buf, cap, out_len, &e);
    ri_snap_call_free(&call);
    sb_wasi_bytes_free(&wasi);
    if (!written) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: %s", e.message);
        return false;
    }
    return true;
}

bool sb_snapshot_v2(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t **out, size_t *out_len,
                    ri_sandbox_error *err) {
    return snapshot_v2(sb, opts, out, NULL, 0, out_len, err);
}

bool sb_snapshot_v2_into(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t *buf, size_t cap, size_t *out_len,
                         ri_sandbox_error *err) {
    return snapshot_v2(sb, opts, NULL, buf, cap, out_len, err);
}

/* The image's module is not the loaded one (or none is loaded) and it does not carry
 * its module: say which modules are involved. */
static bool module_refused(ri_sandbox *sb, const ri_snap_image *img, ri_sandbox_error *err) {
    char want[2 * RI_SNAP_SHA256_BYTES + 1], have[2 * RI_SNAP_SHA256_BYTES + 1];
    ri_snap_hex(img->meta.module_sha256, want);
    uint8_t loaded[RI_SNAP_SHA256_BYTES];
    if (!sb->image || !sb->image->instance) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore into an instance that has not been loaded: the image does not embed its module "
                     "(sha256:%s); load that module first, or snapshot with the module included",
                     want);
        return false;
    }
    if (!sb_module_sha256(sb->image, loaded))
        return snapshot_error(err, "Cannot restore: libcrypto failed to compute the module's SHA-256");
    ri_snap_hex(loaded, have);
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                 "Snapshot module mismatch — the image was taken with module sha256:%s, this sandbox runs "
                 "sha256:%s, and the image does not embed its module",
                 want, have);
    return false;
}

/* Whether the image names the module the sandbox runs. */
static bool runs_module_of(ri_sandbox *sb, const ri_snap_image *img, bool *same, ri_sandbox_error *err) {
    *same = false;
    if (!sb->image || !sb->image->instance) return true;
    uint8_t loaded[RI_SNAP_SHA256_BYTES];
    if (!sb_module_sha256(sb->image, loaded))
        return snapshot_error(err, "Cannot restore: libcrypto failed to compute the module's SHA-256");
    *same = memcmp(loaded, img->meta.module_sha256, RI_SNAP_SHA256_BYTES) == 0;
    return true;
}

bool sb_restore_v2(ri_sandbox *sb, const uint8_t *snapshot, size_t len, const ri_snap_image *under,
                   ri_sandbox_error *err) {
    ri_snap_image img;
    ri_snap_error e;
    if (ri_snap_is_delta(snapshot, len, NULL))
        return snapshot_error(err, "Cannot restore a delta image alone: it stores only the pages that differ from "
                                   "its parent image; restore it with its parent (ri_sandbox_restore_delta)");
    if (!ri_snap_read(snapshot, len, &img, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    for (uint32_t i = 0; under && i < img.nmemories && i < under->nmemories; i++)
        img.memories[i].under = &under->memories[i];
    bool same;
    if (!runs_module_of(sb, &img, &same, err)) {
        ri_snap_image_free(&img);
        return false;
    }
    if (!same && !img.module) {
        module_refused(sb, &img, err);
        ri_snap_image_free(&img);
        return false;
    }

    /* The WASI process (workspace and state) is parsed and checked first, installed last. */
    struct ri_wasi *wasi = NULL;
    if (!sb_wasi_from_image(sb, &img, &wasi, err)) {
        ri_snap_image_free(&img);
        return false;
    }
    if (img.has_frames) { /* a paused call: always into a fresh image (resume.c) */
        const uint8_t *module = img.module;
        size_t module_len = img.module_len;
        if (!module) module = ri_module_bytes(sb->image->module, &module_len);
        bool ok = sb_restore_call(sb, &img, same ? sb->image->module : NULL, module, module_len, err);
        if (ok) sb_wasi_commit(sb, wasi);
        else ri_wasi_free(wasi);
        ri_snap_image_free(&img);
        return ok;
    }
    uint32_t prng_before = sb->prng_state;
    sb_image *fresh = NULL;
    if (!same) {
        /* Built like a load (the start function runs); installed only on success. */
        if (!sb_build_image(sb, img.module, img.module_len, &fresh, err)) {
            sb->prng_state = prng_before;
            if (err->code != RI_SANDBOX_INSTANCE_DESTROYED) {
                err->code = RI_SANDBOX_SNAPSHOT_ERROR;
                sb_error_prefix(err, "Cannot restore: the module the image embeds does not load: ");
            }
            ri_wasi_free(wasi);
            ri_snap_image_free(&img);
            return false;
        }
        memcpy(fresh->module_sha256, img.meta.module_sha256, RI_SNAP_SHA256_BYTES);
        fresh->has_module_sha256 = true;
    }
    sb_image *target = fresh ? fresh : sb->image;
    if (!ri_snap_restore(target->instance, &img, &e)) {
        sb_image_free(fresh);
        sb->prng_state = prng_before;
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        ri_wasi_free(wasi);
        ri_snap_image_free(&img);
        return false;
    }
    sb_wasi_commit(sb, wasi);
    if (fresh) {
        sb_image_free(sb->image);
        sb->image = fresh;
    }
    sb->prng_state = img.meta.prng_state;
    sb->metrics.gas_used = img.meta.gas_used;
    sb_pending_drop(sb); /* the image holds no call: a paused one is dropped */
    sb_set_status(sb, RI_SANDBOX_LOADED);
    ri_snap_image_free(&img);
    return true;
}
