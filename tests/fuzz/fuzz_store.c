/* The snapshot store's parsers, on a store in a temporary directory: import (binary
 * export with RIMD, JSON export, plain WSNP v2), manifests (decoded from bytes, and read
 * as a file of the store through the public API), the metadata JSON, snapshot refs and
 * store.json. Byte 0 picks the target (its value mod 6); the rest is the input. Inputs
 * that carry digests or a checksum (manifests, WSNP v2) get them recomputed, so that
 * mutations reach the checks behind them. Properties beyond "no crash, leak or UB": what
 * imports exports again and the export imports again; a decoded manifest encodes and
 * decodes again; a parsed ref prints as JSON that parses to the same ref. */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ri/snapshot.h"
#include "ri/store.h"
#include "store/store_internal.h"

enum { T_IMPORT, T_MANIFEST, T_MANIFEST_FILE, T_META, T_REF, T_CONFIG, T_COUNT };

static char store_dir[64];
static ri_snapstore *the_store;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void cleanup(void) {
    if (the_store) ri_snapstore_close(the_store);
    the_store = NULL;
    if (store_dir[0]) nftw(store_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void die(const char *what, const ri_snapstore_error *err) {
    fprintf(stderr, "%s: %s\n", what, err ? err->message : "");
    abort();
}

static ri_snapstore *store(void) {
    if (!the_store) {
        snprintf(store_dir, sizeof store_dir, "/tmp/ri-fuzz-store-XXXXXX");
        if (!mkdtemp(store_dir)) abort();
        atexit(cleanup);
        char dir[128];
        snprintf(dir, sizeof dir, "%s/s", store_dir);
        ri_snapstore_options o = {.create = true};
        ri_snapstore_error err;
        the_store = ri_snapstore_open(dir, &o, &err);
        if (!the_store) die("cannot create the store", &err);
    }
    return the_store;
}

static void fix_csum(uint8_t *img, size_t n) {
    if (n < 20 || memcmp(img + n - 20, "CSUM", 4) != 0) return;
    uint32_t c = ri_snap_crc32c(img, n - 20);
    for (int i = 0; i < 4; i++) img[n - 4 + i] = (uint8_t)(c >> (8 * i));
}

/* The manifest's two digests (manifest.c): of the head and its metadata, of the file. */
static void fix_manifest(uint8_t *d, size_t n) {
    if (n < 56 + 32 || memcmp(d, "RISM", 4) != 0) return;
    uint32_t m = (uint32_t)d[8] | (uint32_t)d[9] << 8 | (uint32_t)d[10] << 16 | (uint32_t)d[11] << 24;
    if ((uint64_t)56 + m <= n - 32) {
        uint8_t *head = malloc(24 + (size_t)m);
        if (!head) return;
        memcpy(head, d, 24);
        memcpy(head + 24, d + 56, m);
        ri_snap_sha256(head, 24 + (size_t)m, d + 24);
        free(head);
    }
    ri_snap_sha256(d, n - 32, d + n - 32);
}

/* A snapshot is read back every way, exported and imported again, deleted. strict: it
 * was imported (not planted), so each step must succeed. */
static void use_snapshot(ri_snapstore *st, const char *name, bool strict) {
    ri_snapstore_error err;
    ri_snapstore_info info;
    bool module_stored = false;
    if (ri_snapstore_get_info(st, name, &info, &err)) {
        module_stored = info.module_stored;
        ri_snapstore_info_free(&info);
    } else if (strict) {
        die("an imported snapshot has no info", &err);
    }
    uint8_t *img = NULL;
    size_t len;
    ri_snapstore_image_options io = {.include_metadata = true, .compress = true};
    if (ri_snapstore_get_image(st, name, &io, &img, &len, NULL, &err)) free(img);
    ri_snapstore_info *list = NULL;
    size_t n = 0;
    if (ri_snapstore_list(st, NULL, &list, &n, &err)) ri_snapstore_list_free(list, n);
    for (int f = 0; f < 2 && module_stored; f++) {
        uint8_t *out = NULL;
        size_t out_len = 0;
        ri_snapstore_export_format fmt = f ? RI_SNAPSTORE_EXPORT_JSON : RI_SNAPSTORE_EXPORT_BINARY;
        if (!ri_snapstore_export(st, name, fmt, &out, &out_len, &err)) {
            if (strict) die("an imported snapshot does not export", &err);
            continue;
        }
        ri_snapstore_put_options po = {.replace = true};
        if (!ri_snapstore_import(st, out, out_len, "fuzz-again", &po, NULL, &err))
            die("an export does not import", &err);
        free(out);
        bool existed;
        ri_snapstore_delete(st, "fuzz-again", &existed, &err);
    }
    bool existed;
    ri_snapstore_delete(st, name, &existed, &err);
}

static void target_import(const uint8_t *d, size_t n, bool named) {
    ri_snapstore *st = store();
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return;
    memcpy(copy, d, n);
    fix_csum(copy, n);
    ri_snapstore_put_options po = {.replace = true};
    ri_snapstore_info info;
    ri_snapstore_error err;
    if (ri_snapstore_import(st, copy, n, named ? "fuzz" : NULL, &po, &info, &err)) {
        char name[RI_SNAPSTORE_NAME_MAX + 1];
        snprintf(name, sizeof name, "%s", info.name);
        ri_snapstore_info_free(&info);
        use_snapshot(st, name, true);
    }
    free(copy);
}

static void target_manifest(const uint8_t *d, size_t n) {
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return;
    memcpy(copy, d, n);
    fix_manifest(copy, n);
    ss_manifest m;
    ri_snapstore_error err;
    if (ss_manifest_decode(copy, n, "fuzz", &m, &err)) {
        ri_buf out;
        memset(&out, 0, sizeof out);
        if (!ss_manifest_encode(&m, &out, &err)) die("a decoded manifest does not encode", &err);
        ss_manifest again;
        if (!ss_manifest_decode(out.data, out.len, "fuzz", &again, &err)) die("an encoded manifest does not decode", &err);
        ss_manifest_free(&again);
        ri_buf_free(&out);
        ss_manifest_free(&m);
    }
    free(copy);
}

/* The bytes as snapshots/fuzz-file.snap of the store, then read through the API. */
static void target_manifest_file(const uint8_t *d, size_t n) {
    ri_snapstore *st = store();
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return;
    memcpy(copy, d, n);
    fix_manifest(copy, n);
    char path[160];
    snprintf(path, sizeof path, "%s/s/snapshots/fuzz-file.snap", store_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, copy, n) != (ssize_t)n) abort();
    close(fd);
    free(copy);
    use_snapshot(st, "fuzz-file", false);
    unlink(path);
}

static void target_meta(const uint8_t *d, size_t n, bool with_name) {
    ri_snapstore_info info;
    ri_snapstore_error err;
    memset(&info, 0, sizeof info);
    if (ss_meta_parse((const char *)d, n, with_name, "fuzz", &info, RI_SNAPSTORE_ERR_INPUT, &err)) {
        char *j = ss_meta_json(&info, with_name);
        if (!j) abort();
        ri_snapstore_info again;
        memset(&again, 0, sizeof again);
        if (!ss_meta_parse(j, strlen(j), with_name, "fuzz", &again, RI_SNAPSTORE_ERR_INPUT, &err))
            die("written metadata does not parse", &err);
        ri_snapstore_info_free(&again);
        free(j);
        ri_snapstore_info_free(&info);
    }
}

static void target_ref(const uint8_t *d, size_t n) {
    ri_snapshot_ref ref, again;
    ri_snapstore_error err;
    if (!ri_snapshot_ref_parse((const char *)d, n, &ref, &err)) return;
    char *j = ri_snapshot_ref_json(&ref);
    if (!j) abort();
    if (!ri_snapshot_ref_parse(j, strlen(j), &again, &err)) die("a printed ref does not parse", &err);
    if (strcmp(ref.provider_id, again.provider_id) || strcmp(ref.snapshot, again.snapshot) ||
        strcmp(ref.origin_sandbox_id, again.origin_sandbox_id))
        die("a printed ref parses to another ref", NULL);
    free(j);
}

/* The bytes as store.json of a second store, which is then opened. */
static void target_config(const uint8_t *d, size_t n) {
    store();
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/c", store_dir);
    snprintf(path, sizeof path, "%s/store.json", dir);
    if (access(path, F_OK) != 0) {
        ri_snapstore_options o = {.create = true};
        ri_snapstore_error err;
        ri_snapstore *st = ri_snapstore_open(dir, &o, &err);
        if (!st) die("cannot create the second store", &err);
        ri_snapstore_close(st);
    }
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0 || write(fd, d, n) != (ssize_t)n) abort();
    close(fd);
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(dir, NULL, &err);
    if (st) {
        ri_snapstore_usage u;
        ri_snapstore_usage_of(st, &u, &err);
        ri_snapstore_close(st);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    switch (data[0] % T_COUNT) {
    case T_IMPORT: target_import(d, n, data[0] < 128); break;
    case T_MANIFEST: target_manifest(d, n); break;
    case T_MANIFEST_FILE: target_manifest_file(d, n); break;
    case T_META: target_meta(d, n, data[0] < 128); break;
    case T_REF: target_ref(d, n); break;
    default: target_config(d, n); break;
    }
    return 0;
}
