/* Writes seed inputs for the harnesses that take state made by the library: snapshots of
 * every kind for fuzz_restore (v1; v2 raw, zstd, with the module; a paused call's image;
 * deltas on the known parent and with the parent in the input), and for fuzz_store the
 * files a store writes (exports, manifest, metadata JSON, a ref, store.json).
 * Usage: fuzz_seeds OUTDIR (writes OUTDIR/fuzz_restore/ and OUTDIR/fuzz_store/). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_state.h"
#include "ri/store.h"
#include "store/store_internal.h"

static const char *outdir;
static ri_sandboxes *seed_factory;

static void put(const char *harness, const char *name, uint8_t head, const uint8_t *a, size_t alen,
                const uint8_t *b, size_t blen, bool with_len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, harness);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", outdir, harness, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fputc(head, f);
    if (with_len)
        for (int i = 0; i < 4; i++) fputc((int)((alen >> (8 * i)) & 0xff), f);
    fwrite(a, 1, alen, f);
    if (b) fwrite(b, 1, blen, f);
    fclose(f);
}

static uint8_t *snap(ri_sandbox *sb, ri_snapshot_format fmt, bool module, bool raw, size_t *len) {
    ri_snapshot_options o = {.format = fmt, .include_module = module, .uncompressed = raw};
    uint8_t *out = NULL;
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &o, &out, len, &err)) fs_die("snapshot", &err);
    return out;
}

static void restore_seeds(ri_sandbox *sb[2]) {
    static const char *tn[2] = {"loaded", "paused"};
    for (int t = 0; t < 2; t++) {
        char name[64];
        size_t len;
        uint8_t *img;
        if (t == 0) {
            ri_sandbox *fresh = fs_make_loaded(seed_factory);
            fs_exec(fresh, "grow", NULL, false);
            img = snap(fresh, RI_SNAPSHOT_V1, false, false, &len);
            put("fuzz_restore", "v1-loaded", (uint8_t)t, img, len, NULL, 0, false);
            free(img);
            ri_sandbox_free(fresh);
        }
        for (int v = 0; v < 3; v++) {
            img = snap(sb[t], RI_SNAPSHOT_V2, v == 2, v != 1, &len);
            snprintf(name, sizeof name, "v2-%s-%s", v == 0 ? "raw" : v == 1 ? "zstd" : "module", tn[t]);
            put("fuzz_restore", name, (uint8_t)(t | 8), img, len, NULL, 0, false);
            free(img);
        }
        /* deltas: the parent is the known image; the state moves on a little */
        size_t plen;
        uint8_t *parent = fs_image(sb[t], &plen);
        if (t == 0) fs_exec(sb[t], "bump", "[2]", false);
        else {
            ri_sandbox_result r = ri_sandbox_resume(sb[t], FS_GAS / 2);
            ri_sandbox_result_free(&r);
        }
        ri_snapshot_options o = {.format = RI_SNAPSHOT_V2};
        uint8_t *delta;
        size_t dlen;
        ri_sandbox_error err;
        if (!ri_sandbox_snapshot_delta(sb[t], parent, plen, &o, &delta, &dlen, &err)) fs_die("delta", &err);
        snprintf(name, sizeof name, "delta-%s", tn[t]);
        put("fuzz_restore", name, (uint8_t)(t | 2 | 8), delta, dlen, NULL, 0, false);
        snprintf(name, sizeof name, "delta-with-parent-%s", tn[t]);
        put("fuzz_restore", name, (uint8_t)(t | 4 | 8), parent, plen, delta, dlen, true);
        snprintf(name, sizeof name, "parse-%s", tn[t]);
        put("fuzz_restore", name, (uint8_t)(t | 6 | 8), delta, dlen, NULL, 0, false);
        free(parent);
        free(delta);
    }
}

static void store_seeds(ri_sandbox *sb) {
    char dir[] = "/tmp/ri-fuzz-seeds-XXXXXX";
    if (!mkdtemp(dir)) exit(1);
    char sdir[128];
    snprintf(sdir, sizeof sdir, "%s/s", dir);
    ri_snapstore_options so = {.create = true};
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(sdir, &so, &err);
    if (!st) exit(1);
    size_t len;
    uint8_t *img = snap(sb, RI_SNAPSHOT_V2, true, false, &len);
    static const char *tags[] = {"seed"};
    ri_snapstore_put_options po = {.description = "a seed", .tags = tags, .ntags = 1, .origin_sandbox = "sb-1"};
    ri_snapstore_info info;
    if (!ri_snapstore_put(st, "seed", img, len, &po, &info, NULL, &err)) {
        fprintf(stderr, "put: %s\n", err.message);
        exit(1);
    }
    put("fuzz_store", "import-wsnp", 0, img, len, NULL, 0, false);
    free(img);
    for (int f = 0; f < 2; f++) {
        uint8_t *out;
        size_t olen;
        if (!ri_snapstore_export(st, "seed", f ? RI_SNAPSTORE_EXPORT_JSON : RI_SNAPSTORE_EXPORT_BINARY, &out, &olen,
                                 &err))
            exit(1);
        put("fuzz_store", f ? "import-json" : "import-binary", 132 /* 0 mod 6, unnamed */, out, olen, NULL, 0, false);
        free(out);
    }
    char path[256];
    snprintf(path, sizeof path, "%s/snapshots/seed.snap", sdir);
    size_t mlen;
    uint8_t *man = fs_read_file(path, &mlen);
    if (!man) exit(1);
    put("fuzz_store", "manifest", 1, man, mlen, NULL, 0, false);
    put("fuzz_store", "manifest-file", 2, man, mlen, NULL, 0, false);
    free(man);
    char *meta = ss_meta_json(&info, false);
    put("fuzz_store", "meta", 129 /* 3 mod 6, without the name */, (const uint8_t *)meta, strlen(meta), NULL, 0, false);
    free(meta);
    meta = ss_meta_json(&info, true);
    put("fuzz_store", "meta-named", 3, (const uint8_t *)meta, strlen(meta), NULL, 0, false);
    free(meta);
    ri_snapstore_info_free(&info);
    ri_snapshot_ref ref = {.provider_id = "ri-snapstore", .snapshot = "seed", .origin_sandbox_id = "sb-1"};
    char *rj = ri_snapshot_ref_json(&ref);
    put("fuzz_store", "ref", 4, (const uint8_t *)rj, strlen(rj), NULL, 0, false);
    free(rj);
    snprintf(path, sizeof path, "%s/store.json", sdir);
    uint8_t *conf = fs_read_file(path, &mlen);
    put("fuzz_store", "config", 5, conf, mlen, NULL, 0, false);
    free(conf);
    ri_snapstore_close(st);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) exit(1);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds OUTDIR\n");
        return 2;
    }
    outdir = argv[1];
    mkdir(outdir, 0755);
    ri_sandboxes *f = ri_sandboxes_new();
    seed_factory = f;
    ri_sandbox *sb[2] = {fs_make(f, false), fs_make(f, true)};
    store_seeds(sb[0]);
    restore_seeds(sb);
    ri_sandbox_free(sb[0]);
    ri_sandbox_free(sb[1]);
    ri_sandboxes_free(f);
    return 0;
}
