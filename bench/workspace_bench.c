/*
 * ri-bench-workspace: the workspace's costs, each against a reference measured in the same
 * run (bench/README.md "Workspace"). Medians of several runs, cache warm.
 *
 *   file write/read through wsfs from the host (wsfs_pwrite / wsfs_pread), 1 MiB and 64 MiB,
 *     against memcpy of the same bytes;
 *   serialize and parse of a workspace of 1,000 files (10 MiB), against memcpy;
 *   checkpoint (ri_sandbox_snapshot_with, uncompressed) of a WASI sandbox with 16 MiB of
 *     memory and that workspace after 1% of each file changed, and fsync of the image
 *     written to a file, reported apart; restore of it; incremental checkpoints on a parent
 *     image (the workspace whole, then as its changes from the parent state's) and their
 *     restore, from the parent's bytes and on the parent state held in memory (cache warm);
 *   fork of the workspace with 10, 1,000 and 10,000 files;
 *   store size of 100 snapshots of a slowly changing workspace against 100 full images.
 * WASI call overhead (fd_write against a plain host function) is not measured here yet.
 * Usage: ri-bench-workspace MODULE.wasm [reps] (bench/workspace/ws_bench.wat)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ri/sandbox.h"
#include "ri/snapshot.h"
#include "ri/store.h"
#include "workspace/wsfs.h"

#define R WSFS_ROOT_INO
#define MiB (1u << 20)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static volatile uint8_t sink;

static void fill_files(wsfs *fs, uint32_t nfiles, size_t bytes, uint32_t seed) {
    uint8_t *buf = malloc(bytes ? bytes : 1);
    for (uint32_t i = 0; i < nfiles; i++) {
        for (size_t k = 0; k < bytes; k++) buf[k] = (uint8_t)((i * 2654435761u + k * 40503u + seed) >> 7);
        char name[32];
        snprintf(name, sizeof name, "f%05u", i);
        uint64_t ino;
        size_t n;
        if (wsfs_open(fs, R, name, strlen(name), WSFS_O_CREAT, &ino) ||
            wsfs_pwrite(fs, ino, buf, bytes, 0, &n)) {
            fprintf(stderr, "fill failed\n");
            exit(1);
        }
    }
    free(buf);
}

/* 1% of each file's bytes, in one run at a position that moves with round. */
static void touch_files(wsfs *fs, uint32_t nfiles, size_t bytes, uint32_t round) {
    uint8_t patch[256];
    size_t n = bytes / 100 ? bytes / 100 : 1;
    if (n > sizeof patch) n = sizeof patch;
    memset(patch, (int)(round + 1), sizeof patch);
    for (uint32_t i = 0; i < nfiles; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%05u", i);
        uint64_t ino;
        size_t got;
        wsfs_lookup(fs, R, name, strlen(name), true, &ino);
        wsfs_pwrite(fs, ino, patch, n, (round * 97u) % (bytes - n), &got);
    }
}

static void bench_file_io(int reps) {
    printf("\n== file write/read through wsfs from the host (wsfs_pwrite/wsfs_pread) vs memcpy ==\n");
    size_t sizes[] = {MiB, 64u * MiB};
    for (int s = 0; s < 2; s++) {
        size_t len = sizes[s];
        uint8_t *src = malloc(len), *dst = malloc(len);
        memset(src, 0x5A, len);
        memset(dst, 1, len);
        double w[16], r[16], m[16];
        for (int i = 0; i < reps; i++) {
            wsfs_config cfg = {.limits = {.max_bytes = 1ull << 30}};
            wsfs *fs;
            wsfs_new(&cfg, &fs, NULL);
            uint64_t ino;
            size_t n;
            wsfs_open(fs, R, "f", 1, WSFS_O_CREAT, &ino);
            double t0 = now_ms();
            wsfs_pwrite(fs, ino, src, len, 0, &n);
            double t1 = now_ms();
            wsfs_pread(fs, ino, dst, len, 0, &n);
            double t2 = now_ms();
            memcpy(dst, src, len);
            double t3 = now_ms();
            sink = dst[len / 2];
            w[i] = t1 - t0, r[i] = t2 - t1, m[i] = t3 - t2;
            wsfs_free(fs);
        }
        double mw = median(w, reps), mr = median(r, reps), mm = median(m, reps);
        printf("%3zu MiB: write %.3f ms (%.0f MB/s), read %.3f ms (%.0f MB/s), memcpy %.3f ms: write/memcpy %.2fx, "
               "read/memcpy %.2fx\n",
               len / MiB, mw, len / 1e3 / mw, mr, len / 1e3 / mr, mm, mw / mm, mr / mm);
        free(src);
        free(dst);
    }
}

static void bench_serialize(int reps) {
    printf("\n== serialize / parse: 1,000 files of 10 KiB (10 MiB) vs memcpy ==\n");
    wsfs_config cfg = {0};
    wsfs *fs;
    wsfs_new(&cfg, &fs, NULL);
    fill_files(fs, 1000, 10 * 1024, 1);
    double s[16], p[16], m[16];
    size_t len = 0;
    for (int i = 0; i < reps; i++) {
        uint8_t *img;
        wsfs_error err;
        double t0 = now_ms();
        wsfs_serialize(fs, &img, &len, &err);
        double t1 = now_ms();
        wsfs *back;
        if (wsfs_parse(img, len, &cfg, &back, &err) != WSFS_OK) fprintf(stderr, "parse: %s\n", err.message), exit(1);
        double t2 = now_ms();
        uint8_t *copy = malloc(len);
        double t3 = now_ms();
        memcpy(copy, img, len);
        double t4 = now_ms();
        sink = copy[len / 2];
        s[i] = t1 - t0, p[i] = t2 - t1, m[i] = t4 - t3;
        free(copy);
        free(img);
        wsfs_free(back);
    }
    double ms = median(s, reps), mp = median(p, reps), mm = median(m, reps);
    printf("image %zu bytes: serialize %.3f ms (%.0f MB/s), parse %.3f ms (%.0f MB/s), memcpy %.3f ms: "
           "serialize/memcpy %.1fx, parse/memcpy %.1fx\n",
           len, ms, len / 1e3 / ms, mp, len / 1e3 / mp, mm, ms / mm, mp / mm);
    wsfs_free(fs);
}

static void bench_fork(int reps) {
    printf("\n== fork of a workspace (O(1): independent of the number of files) ==\n");
    uint32_t counts[] = {10, 1000, 10000};
    for (int c = 0; c < 3; c++) {
        wsfs_config cfg = {0};
        wsfs *fs;
        wsfs_new(&cfg, &fs, NULL);
        fill_files(fs, counts[c], 1024, 2);
        double t[16];
        for (int i = 0; i < reps; i++) {
            double t0 = now_ms();
            for (int k = 0; k < 1000; k++) wsfs_free(wsfs_fork(fs));
            t[i] = (now_ms() - t0) / 1000.0;
        }
        printf("%5u files: fork + free %.3f us\n", counts[c], median(t, reps) * 1e3);
        wsfs_free(fs);
    }
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n);
    if (fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int host_nop(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)args;
    results[0] = ri_val_i32(0);
    return 0;
}

static const ri_valtype nop_params[] = {RI_I32, RI_I32, RI_I32, RI_I32};
static const ri_valtype nop_results[] = {RI_I32};
static const ri_host_function nop_function = {"nop", 4, nop_params, 1, nop_results, host_nop, NULL};

static ri_sandbox *wasi_sandbox(ri_sandboxes *f, const uint8_t *wasm, size_t len) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.host_functions = &nop_function;
    c.nhost_functions = 1;
    c.max_gas = 1ull << 40;
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000LL;
    c.enable_wasi = true;
    c.max_memory_bytes = 64ull << 20;
    c.max_execution_ms = 60000;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    if (!sb || !ri_sandbox_load(sb, wasm, len, &err)) fprintf(stderr, "sandbox: %s\n", err.message), exit(1);
    return sb;
}

/* A WASI call (fd_write of 16 bytes to stdout's buffer) against a plain host call, each
 * made n times from a loop in the module. */
static void bench_wasi_call(const uint8_t *wasm, size_t wlen, int reps) {
    printf("\n== a WASI call (fd_write of 16 bytes to a buffer) vs a plain host-function call ==\n");
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = wasi_sandbox(f, wasm, wlen);
    enum { N = 200000 };
    double w[16], h[16];
    for (int i = 0; i < reps; i++) {
        ri_val n = ri_val_i32(N);
        double t0 = now_ms();
        ri_sandbox_result r = ri_sandbox_call(sb, "writes", &n, 1);
        double t1 = now_ms();
        if (!r.ok) fprintf(stderr, "writes: %s\n", r.error.message), exit(1);
        ri_sandbox_result_free(&r);
        ri_sandbox_wasi_output_clear(sb, RI_WASI_STDOUT);
        r = ri_sandbox_call(sb, "nops", &n, 1);
        double t2 = now_ms();
        if (!r.ok) fprintf(stderr, "nops: %s\n", r.error.message), exit(1);
        ri_sandbox_result_free(&r);
        w[i] = (t1 - t0) * 1e6 / N, h[i] = (t2 - t1) * 1e6 / N;
    }
    double mw = median(w, reps), mh = median(h, reps);
    printf("fd_write %.0f ns a call, host call %.0f ns: wasi/host %.2fx\n", mw, mh, mw / mh);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void bench_checkpoint(const uint8_t *wasm, size_t wlen, int reps) {
    printf("\n== checkpoint / restore: WASI sandbox, 16 MiB memory, 1,000 files (10 MiB), 1%% of each changed ==\n");
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = wasi_sandbox(f, wasm, wlen);
    /* memory: 16 MiB, every page written */
    size_t mlen = 16 * MiB;
    ri_val v = ri_val_i32(7);
    ri_sandbox_result res = ri_sandbox_call(sb, "fill", &v, 1);
    if (!res.ok) fprintf(stderr, "fill: %s\n", res.error.message), exit(1);
    ri_sandbox_result_free(&res);
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    fill_files(fs, 1000, 10 * 1024, 3);
    double cp[16], fs_ms[16], rs[16], mc[16];
    size_t ilen = 0;
    ri_sandbox *r = wasi_sandbox(f, wasm, wlen);
    for (int i = 0; i < reps; i++) {
        touch_files(fs, 1000, 10 * 1024, (uint32_t)i);
        ri_snapshot_options o = {RI_SNAPSHOT_V2, false, true};
        uint8_t *img;
        ri_sandbox_error err;
        double t0 = now_ms();
        if (!ri_sandbox_snapshot_with(sb, &o, &img, &ilen, &err)) fprintf(stderr, "%s\n", err.message), exit(1);
        double t1 = now_ms();
        char path[] = "/tmp/ri-bench-ws-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0 || write(fd, img, ilen) != (ssize_t)ilen) exit(1);
        double t2 = now_ms();
        fsync(fd);
        double t3 = now_ms();
        close(fd);
        unlink(path);
        double t4 = now_ms();
        if (!ri_sandbox_restore(r, img, ilen, &err)) fprintf(stderr, "restore: %s\n", err.message), exit(1);
        double t5 = now_ms();
        uint8_t *copy = malloc(ilen);
        double t6 = now_ms();
        memcpy(copy, img, ilen);
        double t7 = now_ms();
        sink = copy[ilen / 3];
        free(copy);
        cp[i] = t1 - t0, fs_ms[i] = t3 - t2, rs[i] = t5 - t4, mc[i] = t7 - t6;
        free(img);
    }
    /* Incremental, as the server checkpoints: a full image once (the parent), then each
     * checkpoint stores only the pages written since (page tracking, no comparison) and the
     * state; its restore applies it on the parent. */
    double icp[16], irs[16], wcp[16], wrs[16], crs[16];
    size_t dlen = 0, plen = 0, wdlen = 0;
    uint8_t *parent = NULL, psha[32], bitmap[64];
    ri_sandbox_error err;
    ri_snapshot_options po = {RI_SNAPSHOT_V2, false, true};
    if (!ri_sandbox_snapshot_with(sb, &po, &parent, &plen, &err)) fprintf(stderr, "%s\n", err.message), exit(1);
    ri_snap_sha256(parent, plen, psha);
    ri_checkpoint *base = ri_sandbox_checkpoint(sb, NULL, &err); /* page tracking starts here */
    if (!base) fprintf(stderr, "checkpoint: %s\n", err.message), exit(1);
    ri_sandbox *warm = ri_sandbox_fork(f, sb, base, &err); /* where the warm restores go */
    if (!warm) fprintf(stderr, "fork: %s\n", err.message), exit(1);
    for (int i = 0; i < reps; i++) {
        ri_val seed = ri_val_i32(100 + i);
        ri_sandbox_result tr = ri_sandbox_call(sb, "touch", &seed, 1);
        ri_sandbox_result_free(&tr);
        touch_files(fs, 1000, 10 * 1024, (uint32_t)(100 + i));
        uint8_t *delta;
        double t0 = now_ms();
        memset(bitmap, 0, sizeof bitmap);
        if (ri_sandbox_written_pages(sb, bitmap, sizeof bitmap, NULL, &err) < 0 ||
            !ri_sandbox_snapshot_pages(sb, &po, bitmap, sizeof bitmap, psha, plen, &delta, &dlen, &err))
            fprintf(stderr, "incremental: %s\n", err.message), exit(1);
        double t1 = now_ms();
        if (!ri_sandbox_restore_delta_known(r, parent, plen, psha, delta, dlen, &err))
            fprintf(stderr, "restore delta: %s\n", err.message), exit(1);
        double t2 = now_ms();
        /* the same state with the workspace as the changes from the parent state's, and
         * its restore on that state held in memory (cache warm) */
        uint8_t *wdelta;
        double t3 = now_ms();
        if (!ri_sandbox_snapshot_pages_on(sb, &po, bitmap, sizeof bitmap, psha, plen, base, &wdelta, &wdlen, &err))
            fprintf(stderr, "incremental (workspace delta): %s\n", err.message), exit(1);
        double t4 = now_ms();
        if (!ri_sandbox_restore_delta_on(warm, base, psha, plen, wdelta, wdlen, &err))
            fprintf(stderr, "warm restore: %s\n", err.message), exit(1);
        double t5 = now_ms();
        if (!ri_sandbox_restore_delta_known(r, parent, plen, psha, wdelta, wdlen, &err))
            fprintf(stderr, "restore delta (workspace delta): %s\n", err.message), exit(1);
        double t6 = now_ms();
        icp[i] = t1 - t0, irs[i] = t2 - t1, wcp[i] = t4 - t3, wrs[i] = t5 - t4, crs[i] = t6 - t5;
        free(delta);
        free(wdelta);
    }
    ri_sandbox_free(warm);
    ri_checkpoint_free(base);
    free(parent);
    double mcp = median(cp, reps), mfs = median(fs_ms, reps), mrs = median(rs, reps), mmc = median(mc, reps);
    printf("memory %zu bytes, image %zu bytes (uncompressed)\n", mlen, ilen);
    printf("checkpoint %.2f ms (target < 10 ms) + fsync %.2f ms; restore %.2f ms (target < 5 ms); memcpy of the "
           "image %.2f ms: checkpoint/memcpy %.1fx, restore/memcpy %.1fx\n",
           mcp, mfs, mrs, mmc, mcp / mmc, mrs / mmc);
    printf("incremental (the server's way: pages written since the parent, the state, the workspace): delta %zu "
           "bytes, checkpoint %.2f ms (target < 10 ms), restore on the parent %.2f ms (target < 5 ms)\n",
           dlen, median(icp, reps), median(irs, reps));
    printf("incremental, the workspace as its changes (ri_sandbox_snapshot_pages_on): delta %zu bytes, checkpoint "
           "%.2f ms; restore on the parent's bytes %.2f ms; restore on the parent state in memory (cache warm, "
           "ri_sandbox_restore_delta_on) %.2f ms (target < 5 ms)\n",
           wdlen, median(wcp, reps), median(crs, reps), median(wrs, reps));
    ri_sandbox_free(r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void bench_store(const uint8_t *wasm, size_t wlen) {
    printf("\n== store size: 100 snapshots of a slowly changing workspace (1,000 files, 10 MiB; 5 files "
           "changed a step) vs 100 full images ==\n");
    char dir[] = "/tmp/ri-bench-wsstore-XXXXXX";
    if (!mkdtemp(dir)) exit(1);
    char path[64];
    snprintf(path, sizeof path, "%s/store", dir);
    ri_snapstore_options so = {true};
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, &so, &err);
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = wasi_sandbox(f, wasm, wlen);
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    fill_files(fs, 1000, 10 * 1024, 4);
    uint64_t full = 0, full_zstd = 0;
    double t0 = now_ms();
    for (int s = 0; s < 100; s++) {
        for (int k = 0; k < 5; k++) {
            char name[32];
            snprintf(name, sizeof name, "f%05u", (unsigned)((s * 5 + k) * 37 % 1000));
            uint64_t ino;
            size_t n;
            wsfs_lookup(fs, R, name, strlen(name), true, &ino);
            wsfs_pwrite(fs, ino, &s, sizeof s, 64, &n);
        }
        ri_snapshot_options o = {RI_SNAPSHOT_V2, false, false};
        uint8_t *img;
        size_t len;
        ri_sandbox_error se;
        ri_sandbox_snapshot_with(sb, &o, &img, &len, &se);
        full_zstd += len;
        ri_snap_image view;
        if (ri_snapshot_open(img, len, &view, &se)) {
            full += view.workspace_len;
            ri_snap_image_free(&view);
        }
        char name[32];
        snprintf(name, sizeof name, "s%03d", s);
        ri_snapstore_put_options po;
        memset(&po, 0, sizeof po);
        if (!ri_snapstore_put(st, name, img, len, &po, NULL, NULL, &err)) fprintf(stderr, "put: %s\n", err.message);
        free(img);
    }
    double t1 = now_ms();
    ri_snapstore_usage u;
    ri_snapstore_usage_of(st, &u, &err);
    printf("store total %llu bytes (manifests %llu, blobs %llu), 100 saves in %.0f ms; 100 full images: %llu bytes "
           "(zstd) / %llu bytes of raw workspace: store/full-zstd %.3f\n",
           (unsigned long long)u.total_bytes, (unsigned long long)u.manifest_bytes, (unsigned long long)u.blob_bytes,
           t1 - t0, (unsigned long long)full_zstd, (unsigned long long)full, (double)u.total_bytes / (double)full_zstd);
    ri_snapstore_close(st);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: ri-bench-workspace WASI_MODULE.wasm [reps]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (reps < 1 || reps > 16) reps = 7;
    size_t wlen;
    uint8_t *wasm = read_file(argv[1], &wlen);
    if (!wasm) return 2;
    printf("ri-bench-workspace (medians of %d runs; the machine may be shared and noisy)\n", reps);
    bench_file_io(reps);
    bench_serialize(reps);
    bench_fork(reps);
    bench_wasi_call(wasm, wlen, reps);
    bench_checkpoint(wasm, wlen, reps);
    bench_store(wasm, wlen);
    free(wasm);
    return 0;
}
