/* Full and delta checkpoints (docs/SERVER.md "Full and delta checkpoints"). A sandbox
 * restored from the volume knows the full image below its state (the parent): the image
 * itself, or the parent of the delta it came from, with its SHA-256 (from metadata.json
 * or the delta's PRNT: never recomputed at restore). Right after the restore an in-memory
 * checkpoint makes the memory copy-on-write, so that at the next checkpoint the pages
 * written since are known from page tracking; with the pages the restored delta held,
 * they are every page that can differ from the parent. The checkpoint then writes a
 * delta of those pages on the parent, unless they are more than a quarter of the memory
 * (a full image is then cheaper to restore and resets the chain). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define MAX_BITMAP_BYTES (65536u / 8) /* a memory's largest size, 65536 pages */

void srv_delta_clear(srv_delta_state *d) {
    free(d->dirty);
    ri_checkpoint_free(d->base);
    memset(d, 0, sizeof *d);
}

/* The tail of a delta: PRNT right before the checksum trailer (src/snapshot/delta.c). */
static bool tail_says_delta(const uint8_t *img, size_t n) {
    const size_t tail = RI_SNAP_SECTION_HEADER_BYTES + RI_SNAP_PARENT_BYTES + RI_SNAP_TRAILER_BYTES;
    return n > tail && memcmp(img + n - tail, "PRNT", 4) == 0;
}

/* The pages a restored delta holds: those that differ from its parent. */
static void remember_delta_pages(srv_delta_state *d, const uint8_t *img, size_t n) {
    ri_snap_delta_info info;
    ri_snap_image image;
    uint8_t *backing = NULL;
    ri_snap_error e;
    if (!ri_snap_delta_read(img, n, &info, &image, &backing, &e)) return;
    if (image.nmemories == 1) {
        size_t bytes = ((size_t)image.memories[0].pages + 7) / 8;
        d->dirty = calloc(bytes ? bytes : 1, 1);
        if (d->dirty) {
            memcpy(d->dirty, image.memories[0].bitmap, bytes);
            d->dirty_pages = image.memories[0].pages;
        }
    }
    ri_snap_image_free(&image);
    free(backing);
}

static bool hex_to_bytes(const char *hex, uint8_t *out, size_t n) {
    if (!hex || strlen(hex) != 2 * n) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return false;
        out[i] = (uint8_t)v;
    }
    return true;
}

/* The delta img restored on its parent p (the image bytes) through the parent's state in
 * memory: p restored into rsb and checkpointed (d->base), then the delta applied on that
 * checkpoint (ri_sandbox_restore_delta_on). false (d->base NULL, rsb perhaps holding the
 * parent's state) when the parent is not the delta's or the delta needs the bytes (a
 * paused call): the caller restores the delta from the bytes then. */
static bool restore_on_parent(srv_delta_state *d, ri_sandbox *rsb, const uint8_t *p, size_t plen, bool known,
                              const uint8_t *img, size_t n) {
    ri_snap_delta_info info;
    uint8_t sha[32];
    ri_sandbox_error err;
    if (!ri_snap_is_delta(img, n, &info) || info.parent_len != plen) return false;
    if (known) memcpy(sha, info.parent_sha256, 32); /* metadata.json named it with this hash */
    else if (!ri_snap_sha256(p, plen, sha) || memcmp(sha, info.parent_sha256, 32) != 0) return false;
    if (!ri_sandbox_restore(rsb, p, plen, &err)) return false;
    ri_checkpoint *cp = ri_sandbox_checkpoint(rsb, NULL, &err);
    if (!cp) return false;
    if (!ri_sandbox_restore_delta_on(rsb, cp, sha, plen, img, n, &err)) {
        ri_checkpoint_free(cp);
        return false;
    }
    d->base = cp;
    d->base_is_parent = true;
    return true;
}

bool srv_delta_restore(srv_sandbox *sb, ri_sandbox *rsb, const char *latest, const uint8_t *img, size_t n, char *why,
                       size_t cap) {
    srv *s = sb->s;
    srv_delta_state *d = &sb->delta;
    srv_delta_clear(d);
    ri_sandbox_error err;
    ri_snap_delta_info info;
    if (!tail_says_delta(img, n) || !ri_snap_is_delta(img, n, &info)) {
        if (!ri_sandbox_restore(rsb, img, n, &err))
            return snprintf(why, cap, "Corrupted checkpoint: %s", err.message), false;
        /* a full image: its hash is in metadata.json when this server line wrote it */
        json_t *meta = NULL;
        char mwhy[256];
        if (srv_volume_read_metadata(s->checkpoint_path, sb->id, &meta, mwhy, sizeof mwhy) == 0) {
            json_t *full = json_object_get(meta, "full_image");
            const char *file = json_string_value(json_object_get(full, "file"));
            json_int_t bytes = json_integer_value(json_object_get(full, "bytes"));
            if (file && strcmp(file, latest) == 0 && bytes > 0 && (uint64_t)bytes == n &&
                hex_to_bytes(json_string_value(json_object_get(full, "sha256")), d->parent_sha256, 32)) {
                d->parent_known = true;
                snprintf(d->parent_file, sizeof d->parent_file, "%s", latest);
                d->parent_len = n;
            }
            json_decref(meta);
        }
    } else {
        /* a delta: its parent is the newest full image older than it of the length PRNT
         * names; ri_sandbox_restore_delta checks the SHA-256, so a damaged parent reads
         * as a mismatch and the next candidate is tried */
        size_t nc = 0;
        char **cands = srv_volume_parent_candidates(s->checkpoint_path, sb->id, latest, info.parent_len, &nc);
        /* the full image metadata.json names, with the hash it recorded when writing it:
         * that one needs no hashing again (its checksum is still checked) */
        char named[64] = "";
        uint8_t named_sha[32];
        json_t *meta = NULL;
        char mwhy[256];
        if (srv_volume_read_metadata(s->checkpoint_path, sb->id, &meta, mwhy, sizeof mwhy) == 0) {
            json_t *full = json_object_get(meta, "full_image");
            const char *file = json_string_value(json_object_get(full, "file"));
            if (file && strlen(file) < sizeof named &&
                hex_to_bytes(json_string_value(json_object_get(full, "sha256")), named_sha, 32) &&
                memcmp(named_sha, info.parent_sha256, 32) == 0)
                snprintf(named, sizeof named, "%s", file);
            json_decref(meta);
        }
        bool done = false, failed = false, warm = false;
        for (size_t i = 0; i < nc && !done && !failed; i++) {
            const uint8_t *p = NULL;
            size_t plen = 0;
            if (srv_volume_map_image(s->checkpoint_path, sb->id, cands[i], &p, &plen, mwhy, sizeof mwhy) != 0)
                continue;
            bool known = named[0] && strcmp(named, cands[i]) == 0;
            /* the parent's state first, kept in memory (the base of later deltas, whose
             * workspace is then its changes from the parent's), and the delta on it */
            warm = restore_on_parent(d, rsb, p, plen, known, img, n);
            if (warm || (known ? ri_sandbox_restore_delta_known(rsb, p, plen, named_sha, img, n, &err)
                               : ri_sandbox_restore_delta(rsb, p, plen, img, n, &err))) {
                done = true;
                d->parent_known = true;
                snprintf(d->parent_file, sizeof d->parent_file, "%s", cands[i]);
                memcpy(d->parent_sha256, info.parent_sha256, 32);
                d->parent_len = plen;
            } else if (!strstr(err.message, "parent mismatch")) {
                snprintf(why, cap, "Corrupted checkpoint: the delta checkpoint %s on the full image %s: %s", latest,
                         cands[i], err.message);
                failed = true;
            }
            srv_unmap(p, plen);
        }
        for (size_t i = 0; i < nc; i++) free(cands[i]);
        free(cands);
        if (failed) return false;
        if (!done) {
            char *hex = ri_hex_dup(info.parent_sha256, 32);
            snprintf(why, cap,
                     "Corrupted checkpoint: the full image that the delta checkpoint %s is built on (sha256:%s, %llu "
                     "bytes) is missing or damaged.",
                     latest, hex ? hex : "?", (unsigned long long)info.parent_len);
            free(hex);
            return false;
        }
        if (!warm) {
            remember_delta_pages(d, img, n);
            if (!d->dirty) d->parent_known = false; /* cannot tell which pages differ: next one full */
        }
    }
    if (d->parent_known && d->base) {
        /* the parent's state: the memory is backed by it, and what the delta wrote over
         * it counts as written since */
        size_t mlen = 0;
        d->tracking = ri_sandbox_module(rsb, &mlen, d->module_sha256) != NULL;
    } else if (d->parent_known) {
        /* the baseline of page tracking; without it the next checkpoint is a full one */
        d->base = ri_sandbox_checkpoint(rsb, NULL, &err);
        size_t mlen = 0;
        d->tracking = d->base != NULL && ri_sandbox_module(rsb, &mlen, d->module_sha256) != NULL;
        /* a full image restored: this state is its parent's */
        d->base_is_parent = d->base != NULL && strcmp(d->parent_file, latest) == 0;
    }
    /* images newer than latest were never committed (a checkpoint died before renaming
     * latest): a later delta's parent must be the newest full image */
    srv_volume_drop_newer(s->checkpoint_path, sb->id, latest);
    return true;
}

uint8_t *srv_delta_pages(srv_sandbox *sb, size_t *len) {
    srv_delta_state *d = &sb->delta;
    *len = 0;
    if (!sb->sb || !d->parent_known || !d->tracking || !d->base) return NULL;
    uint8_t sha[32];
    size_t mlen = 0;
    if (!ri_sandbox_module(sb->sb, &mlen, sha) || memcmp(sha, d->module_sha256, 32) != 0) return NULL;
    uint8_t *bits = calloc(MAX_BITMAP_BYTES, 1);
    if (!bits) return NULL;
    uint32_t pages = 0;
    if (ri_sandbox_backed_by(sb->sb, d->base)) {
        /* the pages written since the baseline, and those the restored delta held */
        if (ri_sandbox_written_pages(sb->sb, bits, MAX_BITMAP_BYTES, &pages, NULL) < 0 || d->dirty_pages > pages) {
            free(bits);
            return NULL;
        }
        for (size_t i = 0; i < ((size_t)d->dirty_pages + 7) / 8; i++) bits[i] |= d->dirty[i];
    } else {
        /* the memory moved to another image since (a new instance of the same module:
         * a WASI command runs in one each execution; a rollback): every page may differ */
        if (ri_sandbox_written_pages(sb->sb, NULL, 0, &pages, NULL) < 0) {
            free(bits);
            return NULL;
        }
        memset(bits, 0xff, ((size_t)pages + 7) / 8);
        if (pages % 8) bits[pages / 8] = (uint8_t)((1u << (pages % 8)) - 1);
    }
    size_t bytes = ((size_t)pages + 7) / 8, count = 0;
    for (size_t i = 0; i < bytes; i++) count += (size_t)__builtin_popcount(bits[i]);
    /* pages worth more than a quarter of the full image: a full image (cheaper to restore,
     * and it resets the chain) */
    if ((uint64_t)count * 65536 * 4 > d->parent_len) {
        free(bits);
        return NULL;
    }
    *len = MAX_BITMAP_BYTES;
    return bits;
}

void srv_delta_wrote_full(srv_sandbox *sb, const char *file, const uint8_t *img, size_t n) {
    srv_delta_state *d = &sb->delta;
    srv_delta_clear(d);
    if (!ri_snap_sha256(img, n, d->parent_sha256)) return;
    snprintf(d->parent_file, sizeof d->parent_file, "%s", file);
    d->parent_len = n;
    /* tracking stays off: this state's memory has no baseline (a checkpoint ends the
     * sandbox's life here anyway: the next state is a restore's) */
    d->parent_known = true;
}

json_t *srv_delta_metadata(const srv_sandbox *sb) {
    const srv_delta_state *d = &sb->delta;
    if (!d->parent_known) return NULL;
    char *hex = ri_hex_dup(d->parent_sha256, 32);
    json_t *j = hex ? json_pack("{s:s, s:s, s:I}", "file", d->parent_file, "sha256", hex, "bytes",
                                (json_int_t)d->parent_len)
                    : NULL;
    free(hex);
    return j;
}
