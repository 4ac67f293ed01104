/* Restore of any bytes into a sandbox in a known state (fuzz_state.h): WSNP v1, v2, v2
 * deltas (on the known parent or on a parent the input carries) and v2 images with a
 * paused call (FRMS). The property checked beyond "no crash, leak or UB": a restore that
 * fails changes nothing, i.e. the sandbox's state (memories, globals, tables, segments,
 * PRNG, gas, paused call: all in its v2 image) is byte-identical to before, and so are its
 * status and pending call. A restore that succeeds is then used (resumed or executed,
 * snapshotted) and the sandbox put back into the known state.
 *
 * Input: byte 0 picks the sandbox (bit 0: the one with the paused call) and the entry
 * point (bits 1-2): restore, delta on the known parent, delta on an input parent (a
 * 4-byte little-endian length then the parent, then the delta), or parse-only (open,
 * v1 view, diff against the known image); bit 3 set: a final CSUM section's CRC-32C is
 * recomputed first (so mutations reach the checks behind it); the rest is the image. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_state.h"
#include "ri/snapshot.h"

/* Patches the CRC-32C of an image that ends with a CSUM section. */
static void fix_csum(uint8_t *img, size_t n) {
    if (n < 20 || memcmp(img + n - 20, "CSUM", 4) != 0) return;
    uint32_t c = ri_snap_crc32c(img, n - 20);
    for (int i = 0; i < 4; i++) img[n - 4 + i] = (uint8_t)(c >> (8 * i));
}

typedef struct world {
    ri_sandboxes *factory;
    ri_sandbox *sb[2];
    uint8_t *known[2]; /* each one's v2 image: the parent of deltas, and the reference */
    size_t known_len[2];
} world;

static world *the_world(void) {
    static world w; /* the harness's fixture, built once per process */
    if (!w.factory) {
        w.factory = ri_sandboxes_new();
        for (int i = 0; i < 2; i++) {
            w.sb[i] = fs_make(w.factory, i == 1);
            w.known[i] = fs_image(w.sb[i], &w.known_len[i]);
        }
    }
    return &w;
}

static void check_unchanged(world *w, int t, ri_sandbox_status status, const char *how) {
    ri_sandbox *sb = w->sb[t];
    size_t len;
    uint8_t *now = fs_image(sb, &len);
    if (ri_sandbox_status_of(sb) != status || ri_sandbox_has_pending_call(sb) != (t == 1) || len != w->known_len[t] ||
        memcmp(now, w->known[t], len) != 0) {
        fprintf(stderr, "a failed %s changed the sandbox (status %s, pending %d, image %zu bytes, known %zu)\n", how,
                ri_sandbox_status_name(ri_sandbox_status_of(sb)), ri_sandbox_has_pending_call(sb), len,
                w->known_len[t]);
        abort();
    }
    free(now);
}

/* Uses a restored state a little, then puts the known state back. */
static void use_and_reset(world *w, int t) {
    ri_sandbox *sb = w->sb[t];
    ri_sandbox_error err;
    uint8_t *img = NULL;
    size_t len = 0;
    ri_snapshot_options o = {.format = RI_SNAPSHOT_V2};
    if (ri_sandbox_snapshot_with(sb, &o, &img, &len, &err)) free(img);
    img = NULL;
    if (ri_sandbox_snapshot(sb, &img, &len, &err)) free(img);
    ri_sandbox_result r;
    if (ri_sandbox_has_pending_call(sb))
        r = ri_sandbox_resume(sb, FS_GAS);
    else
        r = ri_sandbox_execute(sb, "bump", "[1]");
    ri_sandbox_result_free(&r);
    if (!ri_sandbox_restore(sb, w->known[t], w->known_len[t], &err)) {
        fprintf(stderr, "the known image no longer restores: %s\n", err.message);
        abort();
    }
    check_unchanged(w, t, t == 1 ? RI_SANDBOX_SUSPENDED : RI_SANDBOX_LOADED, "reset");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    world *w = the_world();
    int t = data[0] & 1, entry = (data[0] >> 1) & 3;
    bool fix = data[0] & 8;
    size_t n = size - 1;
    uint8_t *copy = malloc(n ? n : 1); /* an exact-size copy that fix_csum may patch */
    if (!copy) return 0;
    memcpy(copy, data + 1, n);
    const uint8_t *img = copy;
    ri_sandbox *sb = w->sb[t];
    ri_sandbox_status before = ri_sandbox_status_of(sb);
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    bool ok = false;
    const char *how = "restore";
    switch (entry) {
    case 0:
        if (fix) fix_csum(copy, n);
        ok = ri_sandbox_restore(sb, img, n, &err);
        break;
    case 1:
        how = "delta restore";
        if (fix) fix_csum(copy, n);
        ok = ri_sandbox_restore_delta(sb, w->known[t], w->known_len[t], img, n, &err);
        break;
    case 2: {
        how = "delta restore (input parent)";
        if (n < 4) break;
        size_t plen = (size_t)img[0] | (size_t)img[1] << 8 | (size_t)img[2] << 16 | (size_t)img[3] << 24;
        if (plen > n - 4) plen = n - 4;
        if (fix) {
            fix_csum(copy + 4, plen);
            fix_csum(copy + 4 + plen, n - 4 - plen);
        }
        ok = ri_sandbox_restore_delta(sb, img + 4, plen, img + 4 + plen, n - 4 - plen, &err);
        break;
    }
    default: { /* parse only: nothing may change either */
        how = "parse";
        if (fix) fix_csum(copy, n);
        ri_snap_image im;
        if (ri_snapshot_open(img, n, &im, &err)) ri_snap_image_free(&im);
        ri_wsnp_view v;
        (void)ri_wsnp_parse(img, n, &v, &err);
        (void)ri_snapshot_version(img, n, &err);
        ri_snap_diff d;
        ri_snap_diff_options dopts = {0};
        if (ri_snapshot_diff(w->known[t], w->known_len[t], img, n, &dopts, &d, &err)) {
            char *j = ri_snap_diff_json(&d);
            free(j);
            ri_snap_diff_free(&d);
        }
        break;
    }
    }
    if (ok) use_and_reset(w, t);
    else check_unchanged(w, t, before, how);
    free(copy);
    return 0;
}
