/*
 * ri-bench-sandbox: times the sandbox library's operations (issue 4's benchmark), to compare
 * with the same operations on Node's WebAssembly (sandbox_ops.mjs, a small re-implementation
 * of the original). Not a test: it asserts correctness (results, gas, snapshot bytes), never
 * time.
 *
 *   ri-bench-sandbox [--scale F] [--ops LIST] [MODULE.wasm]
 *
 * MODULE is bench/sandbox/sandbox_ops.wat compiled (default: the path the build put it at).
 * Each operation runs warm-up iterations (a tenth of its count, at least 1), then its count of
 * iterations, each timed alone with clock_gettime(CLOCK_MONOTONIC). Counts are the table
 * below times --scale (at least 1); sandbox_ops.mjs has the same table.
 *
 * Output (stdout), one line each, machine-readable (key=value, times in microseconds):
 *   sandbox-bench runtime=ri module=PATH scale=F timer_overhead_us=X
 *   sandbox-check add=42 fib20=6765 fib20_gas=21 snapshot_1p_bytes=.. snapshot_1p_fnv=..
 *                 snapshot_256p_bytes=.. snapshot_256p_fnv=.. restore_roundtrip=ok
 *   sandbox-op op=NAME runs=N warmup=W median_us=.. p99_us=.. min_us=.. mean_us=..
 * Exit status: 0, 1 when an operation fails or gives a wrong result (message on stderr),
 * 2 on bad usage.
 *
 * What each operation is (the original's counterpart in sandbox_ops.mjs):
 *   create          ri_sandbox_create + ri_sandbox_free          (new Memory + PRNG; destroy)
 *   load            ri_sandbox_load into a fresh created sandbox (compile + instantiate);
 *                   creating and freeing that sandbox are not timed
 *   execute_add     ri_sandbox_execute "add" "[17,25]" + ri_sandbox_result_free
 *   execute_fib20   ri_sandbox_execute "fib" "[20]": 21 calls of the host function env.tick
 *   call_add        ri_sandbox_call with typed arguments (no JSON payload), ri only
 *   call_fib20      the same for fib(20), ri only
 *   snapshot_1p     ri_sandbox_snapshot of a 1-page memory (freeing the buffer is not timed)
 *   restore_1p      ri_sandbox_restore of that snapshot into the same sandbox
 *   snapshot_256p   the same with 256 pages (16 MiB, the default memory limit)
 *   restore_256p
 */
/* clock_gettime is POSIX, not C11; the build defines _GNU_SOURCE, a standalone build may not. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ri/sandbox.h"

#ifndef RI_BENCH_SANDBOX_WASM
#define RI_BENCH_SANDBOX_WASM "sandbox_ops.wasm"
#endif

/* The fixed inputs, the same in sandbox_ops.mjs. */
#define EVENT_TIMESTAMP INT64_C(1700000000000)
#define FILL_PAGES_256 256u

typedef struct op_spec {
    const char *name;
    unsigned count; /* iterations at --scale 1 */
} op_spec;

/* Iteration counts: enough for stable medians and a meaningful p99 (at least 100 samples
 * beyond it), each operation taking well under two seconds on either runtime. */
static const op_spec OPS[] = {
    {"create", 20000},        {"load", 2000},         {"execute_add", 50000},
    {"execute_fib20", 20000}, {"call_add", 50000},    {"call_fib20", 20000},
    {"snapshot_1p", 10000},   {"restore_1p", 10000},  {"snapshot_256p", 200},
    {"restore_256p", 200},
};
#define NOPS (sizeof OPS / sizeof OPS[0])

static void usage(FILE *out) {
    fprintf(out,
            "usage: ri-bench-sandbox [--scale F] [--ops LIST] [MODULE.wasm]\n"
            "Times the sandbox operations (create, load, execute add and fib(20), snapshot and\n"
            "restore of 1 and 256 pages) and prints one line per operation with the median and\n"
            "p99 in microseconds. --scale multiplies every iteration count (default 1);\n"
            "--ops runs a comma-separated subset of:");
    for (size_t i = 0; i < NOPS; i++) fprintf(out, "%s%s", i ? "," : " ", OPS[i].name);
    fprintf(out, "\nMODULE defaults to %s\n", RI_BENCH_SANDBOX_WASM);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail on Linux; a zero reading would only spoil a timing. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static _Noreturn void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ri-bench-sandbox: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static _Noreturn void die_err(const char *what, const ri_sandbox_error *err) {
    fprintf(stderr, "ri-bench-sandbox: %s: %s: %s\n", what, ri_sandbox_errcode_name(err->code), err->message);
    exit(1);
}

static uint8_t *read_file(const char *path, size_t *len_out) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) die("out of memory reading %s", path);
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) free(buf);
            buf = bigger;
            cap *= 2;
            continue;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) die("cannot read %s", path);
    *len_out = len;
    return buf;
}

/* FNV-1a, 32 bits: a fingerprint of the snapshot bytes, so the harness can check that the
 * Node re-implementation writes the very same bytes. */
static uint32_t fnv1a(const uint8_t *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

/* ---- the sandboxes -------------------------------------------------------------------- */

/* env.tick(i32): the host function fib calls once per loop step. Counts its calls. */
static int tick(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    ++*(uint64_t *)user;
    return 0;
}

static uint64_t g_ticks;
static const ri_valtype TICK_PARAMS[] = {RI_I32};

static ri_sandbox_config bench_config(void) {
    static ri_host_function host[1];
    host[0] = (ri_host_function){
        .name = "tick", .nparams = 1, .params = TICK_PARAMS, .nresults = 0, .results = NULL,
        .fn = tick, .user = &g_ticks,
    };
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = EVENT_TIMESTAMP;
    c.host_functions = host;
    c.nhost_functions = 1;
    return c;
}

typedef struct bench_ctx {
    ri_sandboxes *factory;
    ri_sandbox_config config;
    const uint8_t *wasm;
    size_t wasm_len;
} bench_ctx;

static ri_sandbox *new_sandbox(bench_ctx *cx) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(cx->factory, &cx->config, &err);
    if (!sb) die_err("create", &err);
    return sb;
}

static ri_sandbox *loaded_sandbox(bench_ctx *cx) {
    ri_sandbox *sb = new_sandbox(cx);
    ri_sandbox_error err;
    if (!ri_sandbox_load(sb, cx->wasm, cx->wasm_len, &err)) die_err("load", &err);
    return sb;
}

/* Executes action(payload) untimed and returns its i32 result. */
static int32_t run_i32(ri_sandbox *sb, const char *action, const char *payload, uint64_t *gas) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) die_err(action, &r.error);
    if (r.nresults != 1) die("%s returned no i32", action);
    int32_t v = r.results[0].of.i32;
    if (gas) *gas = r.gas_used;
    ri_sandbox_result_free(&r);
    return v;
}

/* A sandbox whose memory has `pages` pages, all filled by fill() (one __get_random call). */
static ri_sandbox *filled_sandbox(bench_ctx *cx, uint32_t pages) {
    ri_sandbox *sb = loaded_sandbox(cx);
    if (pages > 1) {
        char arg[32];
        snprintf(arg, sizeof arg, "[%" PRIu32 "]", pages - 1);
        if (run_i32(sb, "grow", arg, NULL) != 1) die("memory.grow by %s pages failed", arg);
    }
    run_i32(sb, "fill", NULL, NULL);
    ri_sandbox_metrics m = ri_sandbox_get_metrics(sb);
    if (m.memory_used_bytes != (uint64_t)pages * RI_WSNP_PAGE_BYTES) die("memory is not the expected size");
    return sb;
}

/* ---- timing ------------------------------------------------------------------------------ */

typedef struct samples {
    uint64_t *ns;
    unsigned n, cap;
} samples;

static void put(samples *s, uint64_t t0, uint64_t t1) {
    if (s->n < s->cap) s->ns[s->n++] = t1 - t0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void report(const char *op, samples *s, unsigned warmup) {
    qsort(s->ns, s->n, sizeof *s->ns, cmp_u64);
    unsigned n = s->n;
    double median = n % 2 ? (double)s->ns[n / 2] : ((double)s->ns[n / 2 - 1] + (double)s->ns[n / 2]) / 2.0;
    /* p99 by nearest rank: the smallest sample with at least 99% of samples at or below it. */
    unsigned rank = (unsigned)((99.0 * n + 99.0) / 100.0);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    double sum = 0;
    for (unsigned i = 0; i < n; i++) sum += (double)s->ns[i];
    printf("sandbox-op op=%s runs=%u warmup=%u median_us=%.3f p99_us=%.3f min_us=%.3f mean_us=%.3f\n", op, n,
           warmup, median / 1e3, (double)s->ns[rank - 1] / 1e3, (double)s->ns[0] / 1e3, sum / n / 1e3);
    fflush(stdout);
}

/* One operation: `total` iterations, the first `warmup` not recorded. */
typedef void (*op_fn)(bench_ctx *cx, void *state, samples *s);

static void op_create(bench_ctx *cx, void *state, samples *s) {
    (void)state;
    ri_sandbox_error err;
    uint64_t t0 = now_ns();
    ri_sandbox *sb = ri_sandbox_create(cx->factory, &cx->config, &err);
    ri_sandbox_free(sb);
    uint64_t t1 = now_ns();
    if (!sb) die_err("create", &err);
    put(s, t0, t1);
}

static void op_load(bench_ctx *cx, void *state, samples *s) {
    (void)state;
    ri_sandbox *sb = new_sandbox(cx);
    ri_sandbox_error err;
    uint64_t t0 = now_ns();
    bool ok = ri_sandbox_load(sb, cx->wasm, cx->wasm_len, &err);
    uint64_t t1 = now_ns();
    if (!ok) die_err("load", &err);
    ri_sandbox_free(sb);
    put(s, t0, t1);
}

static void check_exec(const char *what, bool ok, const ri_sandbox_error *err, int32_t got, int32_t want,
                       uint64_t gas, uint64_t want_gas) {
    if (!ok) die_err(what, err);
    if (got != want || gas != want_gas) {
        fprintf(stderr, "ri-bench-sandbox: %s: got %" PRId32 " for %" PRIu64 " gas, expected %" PRId32
                " for %" PRIu64 "\n", what, got, gas, want, want_gas);
        exit(1);
    }
}

static void op_execute_add(bench_ctx *cx, void *state, samples *s) {
    (void)cx;
    uint64_t t0 = now_ns();
    ri_sandbox_result r = ri_sandbox_execute(state, "add", "[17,25]");
    bool ok = r.ok && r.nresults == 1;
    int32_t v = r.results[0].of.i32;
    uint64_t gas = r.gas_used;
    ri_sandbox_result_free(&r);
    uint64_t t1 = now_ns();
    check_exec("execute add", ok, &r.error, v, 42, gas, 0);
    put(s, t0, t1);
}

static void op_execute_fib20(bench_ctx *cx, void *state, samples *s) {
    (void)cx;
    uint64_t t0 = now_ns();
    ri_sandbox_result r = ri_sandbox_execute(state, "fib", "[20]");
    bool ok = r.ok && r.nresults == 1;
    int32_t v = r.results[0].of.i32;
    uint64_t gas = r.gas_used;
    ri_sandbox_result_free(&r);
    uint64_t t1 = now_ns();
    check_exec("execute fib", ok, &r.error, v, 6765, gas, 21);
    put(s, t0, t1);
}

static void op_call_add(bench_ctx *cx, void *state, samples *s) {
    (void)cx;
    ri_val args[2] = {ri_val_i32(17), ri_val_i32(25)};
    uint64_t t0 = now_ns();
    ri_sandbox_result r = ri_sandbox_call(state, "add", args, 2);
    bool ok = r.ok && r.nresults == 1;
    int32_t v = r.results[0].of.i32;
    uint64_t gas = r.gas_used;
    ri_sandbox_result_free(&r);
    uint64_t t1 = now_ns();
    check_exec("call add", ok, &r.error, v, 42, gas, 0);
    put(s, t0, t1);
}

static void op_call_fib20(bench_ctx *cx, void *state, samples *s) {
    (void)cx;
    ri_val args[1] = {ri_val_i32(20)};
    uint64_t t0 = now_ns();
    ri_sandbox_result r = ri_sandbox_call(state, "fib", args, 1);
    bool ok = r.ok && r.nresults == 1;
    int32_t v = r.results[0].of.i32;
    uint64_t gas = r.gas_used;
    ri_sandbox_result_free(&r);
    uint64_t t1 = now_ns();
    check_exec("call fib", ok, &r.error, v, 6765, gas, 21);
    put(s, t0, t1);
}

typedef struct snap_state {
    ri_sandbox *sb;
    uint8_t *snap; /* the reference snapshot, restored by the restore operations */
    size_t len;
} snap_state;

static void op_snapshot(bench_ctx *cx, void *state, samples *s) {
    (void)cx;
    snap_state *st = state;
    uint8_t *buf;
    size_t len;
    ri_sandbox_error err;
    uint64_t t0 = now_ns();
    bool ok = ri_sandbox_snapshot(st->sb, &buf, &len, &err);
    uint64_t t1 = now_ns();
    if (!ok) die_err("snapshot", &err);
    if (len != st->len) die("snapshot changed size");
    free(buf);
    put(s, t0, t1);
}

static void op_restore(bench_ctx *cx, void *state, samples *s) {
    (void)cx;
    snap_state *st = state;
    ri_sandbox_error err;
    uint64_t t0 = now_ns();
    bool ok = ri_sandbox_restore(st->sb, st->snap, st->len, &err);
    uint64_t t1 = now_ns();
    if (!ok) die_err("restore", &err);
    put(s, t0, t1);
}

static void run_op(bench_ctx *cx, const char *name, unsigned count, op_fn fn, void *state) {
    unsigned warmup = count / 10 ? count / 10 : 1;
    samples s = {malloc(sizeof(uint64_t) * count), 0, count};
    if (!s.ns) die("out of memory for %s", name);
    samples none = {NULL, 0, 0};
    for (unsigned i = 0; i < warmup; i++) fn(cx, state, &none);
    for (unsigned i = 0; i < count; i++) fn(cx, state, &s);
    report(name, &s, warmup);
    free(s.ns);
}

/* ---- checks and setup ---------------------------------------------------------------------- */

/* Takes the reference snapshot of a sandbox and checks restore end to end: change the
 * memory and the PRNG (fill again), restore, and the next snapshot must be the same bytes. */
static void prepare_snapshot(snap_state *st, const char *what) {
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot(st->sb, &st->snap, &st->len, &err)) die_err(what, &err);
    run_i32(st->sb, "fill", NULL, NULL);
    uint8_t *again;
    size_t len;
    if (!ri_sandbox_snapshot(st->sb, &again, &len, &err)) die_err(what, &err);
    bool changed = len != st->len || memcmp(again, st->snap, len) != 0;
    free(again);
    if (!changed) die("%s: fill() did not change the state", what);
    if (!ri_sandbox_restore(st->sb, st->snap, st->len, &err)) die_err(what, &err);
    if (!ri_sandbox_snapshot(st->sb, &again, &len, &err)) die_err(what, &err);
    bool same = len == st->len && memcmp(again, st->snap, len) == 0;
    free(again);
    if (!same) die("%s: the snapshot after restore differs from the one restored", what);
}

static double timer_overhead_us(void) {
    enum { N = 100000 };
    uint64_t best = UINT64_MAX;
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = now_ns(), t1 = t0;
        for (int i = 0; i < N; i++) t1 = now_ns();
        if (t1 - t0 < best) best = t1 - t0;
    }
    return (double)best / N / 1e3;
}

int main(int argc, char **argv) {
    double scale = 1.0;
    const char *only = NULL, *path = RI_BENCH_SANDBOX_WASM;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
            char *end;
            scale = strtod(argv[++i], &end);
            if (*end || !(scale > 0) || scale > 1000) {
                fprintf(stderr, "ri-bench-sandbox: --scale wants a number in (0, 1000]\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
            only = argv[++i];
        } else if (argv[i][0] == '-') {
            usage(stderr);
            return 2;
        } else {
            path = argv[i];
        }
    }
    bool want[NOPS];
    for (size_t k = 0; k < NOPS; k++) want[k] = only == NULL;
    if (only) {
        for (const char *p = only; *p;) {
            size_t n = strcspn(p, ",");
            bool found = false;
            for (size_t k = 0; k < NOPS; k++)
                if (strlen(OPS[k].name) == n && !strncmp(OPS[k].name, p, n)) want[k] = found = true;
            if (!found && n) {
                fprintf(stderr, "ri-bench-sandbox: unknown operation '%.*s'\n", (int)n, p);
                return 2;
            }
            p += n + (p[n] == ',');
        }
    }

    bench_ctx cx = {0};
    cx.config = bench_config();
    cx.factory = ri_sandboxes_new();
    if (!cx.factory) die("out of memory");
    uint8_t *wasm = read_file(path, &cx.wasm_len);
    cx.wasm = wasm;

    printf("sandbox-bench runtime=ri module=%s scale=%g timer_overhead_us=%.3f\n", path, scale, timer_overhead_us());

    /* The state every operation starts from, checked once. */
    ri_sandbox *exec = loaded_sandbox(&cx);
    uint64_t gas = 0;
    int32_t add = run_i32(exec, "add", "[17,25]", NULL);
    g_ticks = 0;
    int32_t fib = run_i32(exec, "fib", "[20]", &gas);
    if (g_ticks != 21) die("fib(20) called env.tick a wrong number of times");
    snap_state s1 = {filled_sandbox(&cx, 1), NULL, 0};
    snap_state s256 = {filled_sandbox(&cx, FILL_PAGES_256), NULL, 0};
    prepare_snapshot(&s1, "snapshot of 1 page");
    prepare_snapshot(&s256, "snapshot of 256 pages");
    printf("sandbox-check add=%" PRId32 " fib20=%" PRId32 " fib20_gas=%" PRIu64 " snapshot_1p_bytes=%zu "
           "snapshot_1p_fnv=%08" PRIx32 " snapshot_256p_bytes=%zu snapshot_256p_fnv=%08" PRIx32
           " restore_roundtrip=ok\n",
           add, fib, gas, s1.len, fnv1a(s1.snap, s1.len), s256.len, fnv1a(s256.snap, s256.len));
    fflush(stdout);
    if (add != 42 || fib != 6765 || gas != 21) die("wrong results of add or fib(20)");

    const struct {
        op_fn fn;
        void *state;
    } impl[NOPS] = {
        {op_create, NULL},       {op_load, NULL},           {op_execute_add, exec},
        {op_execute_fib20, exec}, {op_call_add, exec},      {op_call_fib20, exec},
        {op_snapshot, &s1},       {op_restore, &s1},        {op_snapshot, &s256},
        {op_restore, &s256},
    };
    for (size_t k = 0; k < NOPS; k++) {
        if (!want[k]) continue;
        double n = OPS[k].count * scale;
        run_op(&cx, OPS[k].name, n < 1 ? 1u : (unsigned)(n + 0.5), impl[k].fn, impl[k].state);
    }

    free(s1.snap);
    free(s256.snap);
    ri_sandbox_free(s1.sb);
    ri_sandbox_free(s256.sb);
    ri_sandbox_free(exec);
    ri_sandboxes_free(cx.factory);
    free(wasm);
    return 0;
}
