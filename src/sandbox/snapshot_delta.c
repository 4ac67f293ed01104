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

/* Parent + delta by building the full image (any compression). */
static bool restore_via_full(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                             size_t delta_len, ri_sandbox_error *err) {
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

/* The delta's own image (its state, its stored pages, zeros elsewhere) is restored, then
 * the pages it does not store are copied from the parent's raw payload: no full image is
 * built (a third of the passes over the memory). Everything that can fail is checked
 * before the restore, which is atomic; the copies after it cannot fail. Parents with a
 * zstd memory go through the full image (*fallback). known_sha256: the parent's SHA-256
 * as the caller knows it, or NULL to compute it. */
static bool restore_in_place(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                             size_t delta_len, const uint8_t *known_sha256, bool *fallback, ri_sandbox_error *err) {
    *fallback = false;
    ri_snap_delta_info info;
    ri_snap_image d, p;
    uint8_t *plain = NULL;
    ri_snap_error e;
    if (!ri_snap_delta_read(delta, delta_len, &info, &d, &plain, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        return false;
    }
    uint8_t digest[RI_SNAP_SHA256_BYTES];
    bool ok = true;
    if (known_sha256)
        memcpy(digest, known_sha256, RI_SNAP_SHA256_BYTES);
    else if (!ri_snap_sha256(parent, parent_len, digest)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "cannot hash the parent image");
        ok = false;
    }
    if (ok && (memcmp(digest, info.parent_sha256, RI_SNAP_SHA256_BYTES) != 0 || info.parent_len != parent_len))
        ok = parent_mismatch(err, info.parent_sha256, digest);
    if (ok && !ri_snap_read(parent, parent_len, &p, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", e.message);
        ok = false;
    }
    if (!ok) {
        ri_snap_image_free(&d);
        free(plain);
        return false;
    }
    if (memcmp(p.meta.module_sha256, d.meta.module_sha256, RI_SNAP_SHA256_BYTES) != 0) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Snapshot parent mismatch \u2014 the parent image was taken with another module");
        ok = false;
    } else if (p.nmemories != d.nmemories) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Snapshot parent mismatch \u2014 the parent image has %u memories, the image %u",
                     p.nmemories, d.nmemories);
        ok = false;
    }
    for (uint32_t i = 0; ok && i < p.nmemories; i++)
        if (p.memories[i].encoding != RI_SNAP_ENC_RAW && p.memories[i].present_pages > 0) *fallback = true;
    if (ok && !*fallback) ok = ri_sandbox_restore(sb, plain, d.total_len, err);
    if (ok && !*fallback) {
        ri_instance *inst = sb->image->instance;
        for (uint32_t i = 0; i < p.nmemories && i < ri_instance_memory_count(inst); i++) {
            ri_memory *mem = ri_instance_memory(inst, i);
            uint8_t *dst = ri_memory_data(mem);
            uint32_t limit = ri_memory_pages(mem);
            if (d.memories[i].pages < limit) limit = d.memories[i].pages;
            const ri_snap_memory *pm = &p.memories[i], *dm = &d.memories[i];
            size_t k = 0; /* index of the parent's next stored page in its payload */
            for (uint32_t pg = 0; pg < pm->pages; pg++) {
                if (!((pm->bitmap[pg / 8] >> (pg % 8)) & 1u)) continue;
                if (pg < limit && !((dm->bitmap[pg / 8] >> (pg % 8)) & 1u))
                    memcpy(dst + (size_t)pg * RI_SNAP_PAGE_BYTES, pm->payload + k * RI_SNAP_PAGE_BYTES,
                           RI_SNAP_PAGE_BYTES);
                k++;
            }
        }
    }
    ri_snap_image_free(&p);
    ri_snap_image_free(&d);
    free(plain);
    return ok && !*fallback;
}

static bool restore_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                          size_t delta_len, const uint8_t *known_sha256, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb || !parent || !delta) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_restore_delta: a NULL argument");
        return false;
    }
    bool fallback;
    if (restore_in_place(sb, parent, parent_len, delta, delta_len, known_sha256, &fallback, err)) return true;
    if (!fallback) return false;
    sb_error_clear(err);
    return restore_via_full(sb, parent, parent_len, delta, delta_len, err);
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
