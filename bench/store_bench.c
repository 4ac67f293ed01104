/*
 * ri-bench-store (issue 6): the snapshot store's costs, for bench.py's store section.
 *
 *   save and restore latency of a 16 MiB sandbox (256 pages of random bytes, the worst
 *   case for compression): a first save into an empty store, then saves with 1% of the
 *   pages (3 of 256) changed; restores with the manager's page cache warm (1% of the
 *   pages differ from the sandbox) and cold (a new manager: every page read from its
 *   blob and verified);
 *   store size for 100 snapshots of a slowly changing sandbox (1% of the pages change
 *   between snapshots) against 100 plain WSNP v1 files (their exact sizes; the files are
 *   not written) and 100 WSNP v2 files;
 *   list with 10,000 snapshots (the store's list of all of them, and the snapshotter's
 *   list of the newest 100 of its session).
 *
 * Prints one line per result:
 *   store-op op=NAME runs=N median_ms=.. min_ms=.. max_ms=..
 *   store-size snapshots=N store_bytes=.. store_disk_bytes=.. v1_bytes=.. v2_bytes=.. blobs=..
 *   store-check roundtrip=ok
 *
 * usage: ri-bench-store [--dir DIR] [--reps N] [--list-count N] [--dedup-count N] [MODULE]
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ri/store.h"

#define PAGES 256
#define CHANGED 3 /* 1% of 256 pages, rounded up */

typedef struct ctx {
    const char *module_path;
    char dir[4096];
    int reps;
    int list_count;
    int dedup_count;
    uint8_t *module;
    size_t module_len;
    ri_sandboxes *factory;
    int32_t seed;
} ctx;

static void die(const char *what, const char *why) {
    fprintf(stderr, "ri-bench-store: %s: %s\n", what, why);
    exit(1);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *op, double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    printf("store-op op=%s runs=%d median_ms=%.3f min_ms=%.3f max_ms=%.3f\n", op, n, median, t[0], t[n - 1]);
    fflush(stdout);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void fresh_dir(const ctx *c, const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", c->dir, name);
    nftw(out, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static ri_snapstore *open_store(const char *path) {
    ri_snapstore_options o = {true};
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, &o, &err);
    if (!st) die(path, err.message);
    return st;
}

static void call(ri_sandbox *sb, const char *fn, int32_t a, int32_t b, int n) {
    ri_val args[2] = {ri_val_i32(a), ri_val_i32(b)};
    ri_sandbox_result r = ri_sandbox_call(sb, fn, args, (uint32_t)n);
    if (!r.ok) die(fn, r.error.message);
    ri_sandbox_result_free(&r);
}

static ri_sandbox *sandbox(ctx *c, int pages) {
    ri_sandbox_config cfg = ri_sandbox_config_default();
    cfg.has_event_timestamp = true;
    cfg.event_timestamp = 1700000000000LL;
    cfg.max_execution_ms = 60000;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(c->factory, &cfg, &err);
    if (!sb || !ri_sandbox_load(sb, c->module, c->module_len, &err)) die("sandbox", err.message);
    if (pages > 1) call(sb, "grow", pages - 1, 0, 1);
    for (int p = 0; p < pages; p++) call(sb, "fillPage", p, c->seed++, 2);
    return sb;
}

static void change_pages(ctx *c, ri_sandbox *sb, int n) {
    for (int i = 0; i < n; i++) {
        int32_t seed = c->seed++;
        call(sb, "fillPage", (int32_t)(((unsigned)seed * 7u) % PAGES), seed, 2);
    }
}

static void save(ri_snapshots *m, const char *name) {
    ri_snapstore_error err;
    if (!ri_snapshots_save(m, name, NULL, NULL, 0, NULL, &err)) die("save", err.message);
}

static void restore(ri_snapshots *m, const char *name) {
    ri_snapstore_error err;
    if (!ri_snapshots_restore(m, name, NULL, &err)) die("restore", err.message);
}

/* ---- latency ------------------------------------------------------------------------------------ */

static void bench_latency(ctx *c) {
    double *first = calloc((size_t)c->reps, sizeof *first), *again = calloc((size_t)c->reps, sizeof *again);
    double *warm = calloc((size_t)c->reps, sizeof *warm), *cold = calloc((size_t)c->reps, sizeof *cold);
    char path[4200];
    ri_snapstore_error err;
    for (int r = 0; r < c->reps; r++) {
        fresh_dir(c, "latency", path, sizeof path);
        ri_snapstore *st = open_store(path);
        ri_sandbox *sb = sandbox(c, PAGES);
        ri_snapshots *m = ri_snapshots_new(st, sb, NULL, &err);
        if (!m) die("manager", err.message);
        double t0 = now_ms();
        save(m, "first");
        first[r] = now_ms() - t0;
        change_pages(c, sb, CHANGED);
        t0 = now_ms();
        save(m, "second");
        again[r] = now_ms() - t0;
        /* The sandbox is at "second"; "first" differs in 1% of its pages. */
        t0 = now_ms();
        restore(m, "first");
        warm[r] = now_ms() - t0;
        ri_snapshots *fresh = ri_snapshots_new(st, sb, NULL, &err);
        t0 = now_ms();
        restore(fresh, "second");
        cold[r] = now_ms() - t0;
        /* The restored state is exactly the saved one. */
        uint8_t *a, *b;
        size_t al, bl;
        ri_snapstore_image_options io;
        memset(&io, 0, sizeof io);
        ri_snapshot_options so = {RI_SNAPSHOT_V2, false, true};
        ri_sandbox_error se;
        if (!ri_snapstore_get_image(st, "second", &io, &a, &al, NULL, &err)) die("get", err.message);
        if (!ri_sandbox_snapshot_with(sb, &so, &b, &bl, &se)) die("snapshot", se.message);
        if (al != bl || memcmp(a, b, al) != 0) die("round trip", "the restored state is not the saved one");
        free(a);
        free(b);
        ri_snapshots_free(fresh);
        ri_snapshots_free(m);
        ri_sandbox_free(sb);
        ri_snapstore_close(st);
    }
    report("first_save", first, c->reps);
    report("save_1pct", again, c->reps);
    report("restore_1pct_warm", warm, c->reps);
    report("restore_cold", cold, c->reps);
    printf("store-check roundtrip=ok\n");
    free(first), free(again), free(warm), free(cold);
}

/* ---- space ---------------------------------------------------------------------------------------- */

static void bench_dedup(ctx *c) {
    char path[4200];
    fresh_dir(c, "dedup", path, sizeof path);
    ri_snapstore *st = open_store(path);
    ri_sandbox *sb = sandbox(c, PAGES);
    ri_snapstore_error err;
    ri_snapshots *m = ri_snapshots_new(st, sb, NULL, &err);
    uint64_t v1 = 0, v2 = 0;
    for (int i = 0; i < c->dedup_count; i++) {
        if (i) change_pages(c, sb, CHANGED);
        char name[32];
        snprintf(name, sizeof name, "step-%d", i);
        save(m, name);
        uint8_t *img;
        size_t len;
        ri_sandbox_error se;
        if (!ri_sandbox_snapshot(sb, &img, &len, &se)) die("v1 snapshot", se.message);
        v1 += len;
        free(img);
        if (!ri_sandbox_snapshot_with(sb, NULL, &img, &len, &se)) die("v2 snapshot", se.message);
        v2 += len;
        free(img);
    }
    ri_snapstore_usage u;
    if (!ri_snapstore_usage_of(st, &u, &err)) die("usage", err.message);
    printf("store-size snapshots=%d store_bytes=%" PRIu64 " store_disk_bytes=%" PRIu64 " v1_bytes=%" PRIu64
           " v2_bytes=%" PRIu64 " blobs=%" PRIu64 " manifest_bytes=%" PRIu64 "\n",
           c->dedup_count, u.total_bytes, u.disk_bytes, v1, v2, u.blobs, u.manifest_bytes);
    fflush(stdout);
    ri_snapshots_free(m);
    ri_sandbox_free(sb);
    ri_snapstore_close(st);
}

/* ---- list ------------------------------------------------------------------------------------------ */

static void bench_list(ctx *c) {
    char path[4200];
    fresh_dir(c, "list", path, sizeof path);
    ri_snapstore *st = open_store(path);
    ri_sandbox *sb = sandbox(c, 1);
    ri_snapshotter_config sc;
    memset(&sc, 0, sizeof sc);
    sc.session_id = "bench";
    sc.factory = c->factory;
    ri_snapstore_error err;
    ri_snapshotter *s = ri_snapshotter_new(st, &sc, &err);
    if (!s) die("snapshotter", err.message);
    double t0 = now_ms();
    for (int i = 0; i < c->list_count; i++) {
        call(sb, "setG", i, 0, 1);
        ri_snapshot_ref ref;
        if (!ri_snapshotter_snapshot(s, sb, NULL, &ref, &err)) die("snapshot", err.message);
    }
    double fill = now_ms() - t0;
    printf("store-fill snapshots=%d total_ms=%.1f per_snapshot_ms=%.3f\n", c->list_count, fill, fill / c->list_count);
    double *all = calloc((size_t)c->reps, sizeof *all), *newest = calloc((size_t)c->reps, sizeof *newest);
    for (int r = 0; r < c->reps; r++) {
        ri_snapstore_info *list;
        size_t n;
        t0 = now_ms();
        if (!ri_snapstore_list(st, NULL, &list, &n, &err)) die("list", err.message);
        all[r] = now_ms() - t0;
        if ((int)n != c->list_count) die("list", "wrong count");
        ri_snapstore_list_free(list, n);
        ri_snapshot_ref *refs;
        t0 = now_ms();
        if (!ri_snapshotter_list(s, NULL, &refs, &n, &err)) die("snapshotter list", err.message);
        newest[r] = now_ms() - t0;
        free(refs);
    }
    char op[64];
    snprintf(op, sizeof op, "list_%d", c->list_count);
    report(op, all, c->reps);
    snprintf(op, sizeof op, "snapshotter_list_100_of_%d", c->list_count);
    report(op, newest, c->reps);
    free(all), free(newest);
    ri_snapshotter_free(s);
    ri_sandbox_free(sb);
    ri_snapstore_close(st);
}

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die(path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die(path, "cannot read");
    fclose(f);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    ctx c;
    memset(&c, 0, sizeof c);
    c.module_path = RI_BENCH_STORE_WASM;
    c.reps = 5;
    c.list_count = 10000;
    c.dedup_count = 100;
    c.seed = 1;
    const char *base = getenv("TMPDIR");
    snprintf(c.dir, sizeof c.dir, "%s/ri-bench-store", base && base[0] ? base : "/tmp");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--dir") == 0) snprintf(c.dir, sizeof c.dir, "%s", argv[++i]);
        else if (i + 1 < argc && strcmp(a, "--reps") == 0) c.reps = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(a, "--list-count") == 0) c.list_count = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(a, "--dedup-count") == 0) c.dedup_count = atoi(argv[++i]);
        else if (a[0] != '-') c.module_path = a;
        else {
            fprintf(stderr, "usage: ri-bench-store [--dir DIR] [--reps N] [--list-count N] [--dedup-count N] "
                            "[MODULE]\n");
            return 2;
        }
    }
    if (c.reps < 1 || c.list_count < 1 || c.dedup_count < 1) die("options", "counts must be at least 1");
    if (mkdir(c.dir, 0755) != 0 && errno != EEXIST) die(c.dir, strerror(errno));
    c.module = read_all(c.module_path, &c.module_len);
    c.factory = ri_sandboxes_new();
    printf("store-bench dir=%s reps=%d pages=%d changed=%d\n", c.dir, c.reps, PAGES, CHANGED);
    bench_latency(&c);
    bench_dedup(&c);
    bench_list(&c);
    ri_sandboxes_free(c.factory);
    free(c.module);
    nftw(c.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
