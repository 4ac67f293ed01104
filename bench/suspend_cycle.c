/*
 * ri-bench-suspend (issue 5): what one pause costs. Runs MODULE's export FUNC(ARG) -> i64
 * cut into slices of SLICE gas, and at every pause
 *   engine:  describes the suspended call, rebuilds it in a fresh store (memory 0 and
 *            global 0 copied over), resumes;
 *   sandbox: snapshots (WSNP v2, module embedded; zstd or --uncompressed), restores
 *            into a fresh sandbox, resumes.
 * Prints the mean time of each step. Timing only here, never in tests.
 *
 *   ri-bench-suspend [--uncompressed] MODULE.wasm FUNC ARG SLICE
 *   ri-bench-suspend build/wat/suspend_cli.wasm mix 150 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ri/sandbox.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int engine_cycles(const uint8_t *wasm, size_t len, const char *func, int32_t arg, uint64_t slice) {
    ri_error e;
    ri_module *m = ri_module_load(wasm, len, NULL, &e);
    if (!m) return fprintf(stderr, "load: %s\n", e.message), 1;
    ri_store *s = ri_store_new(NULL);
    ri_instance *in = s ? ri_instantiate(s, m, NULL, 0, &e) : NULL;
    ri_extern x;
    if (!in || !ri_instance_export(in, func, &x) || x.kind != RI_EXTERN_FUNC)
        return fprintf(stderr, "instantiate or export: %s\n", in ? func : e.message), 1;
    ri_store_set_suspend_mode(s, RI_SUSPEND_ON_GAS);
    ri_store_set_gas(s, slice);
    ri_val a = ri_val_i32(arg), r;
    ri_errcode rc = ri_func_call(s, x.of.func, &a, 1, &r, 1, &e);
    double t_describe = 0, t_fresh = 0, t_rebuild = 0, t_resume = 0;
    long cycles = 0;
    while (rc == RI_ERR_SUSPENDED) {
        double t0 = now();
        ri_suspension d;
        if (!ri_store_describe_suspended(s, in, &d, &e)) return fprintf(stderr, "describe: %s\n", e.message), 1;
        double t1 = now();
        ri_store *s2 = ri_store_new(NULL);
        ri_instance *in2 = s2 ? ri_instantiate(s2, m, NULL, 0, &e) : NULL;
        if (!in2) return fprintf(stderr, "instantiate: %s\n", e.message), 1;
        if (ri_instance_memory_count(in) > 0) {
            ri_memory *ma = ri_instance_memory(in, 0), *mb = ri_instance_memory(in2, 0);
            if (!ri_memory_resize(mb, ri_memory_pages(ma))) return fprintf(stderr, "resize\n"), 1;
            memcpy(ri_memory_data(mb), ri_memory_data(ma), ri_memory_size(ma));
        }
        for (uint32_t g = 0; g < ri_instance_global_count(in); g++)
            ri_global_set(ri_instance_global(in2, g), ri_global_get(ri_instance_global(in, g)));
        double t2 = now();
        if (!ri_store_rebuild_suspended(s2, in2, &d, &e)) return fprintf(stderr, "rebuild: %s\n", e.message), 1;
        double t3 = now();
        ri_store_set_gas(s2, ri_store_gas(s));
        ri_store_set_suspend_mode(s2, RI_SUSPEND_ON_GAS);
        ri_suspension_free(&d);
        ri_store_free(s);
        s = s2;
        in = in2;
        double t4 = now();
        rc = ri_store_resume(s, slice, &r, 1, &e);
        double t5 = now();
        t_describe += t1 - t0;
        t_fresh += t2 - t1;
        t_rebuild += t3 - t2;
        t_resume += t5 - t4;
        cycles++;
    }
    if (rc != RI_OK) return fprintf(stderr, "run: %s\n", e.message), 1;
    if (cycles == 0) cycles = 1;
    printf("engine:  result %lld, %ld pauses; per pause: describe %.2f us, rebuild %.2f us, resume %.2f us "
           "(new store + instantiate + copy state %.2f us)\n",
           (long long)r.of.i64, cycles, t_describe / cycles * 1e6, t_rebuild / cycles * 1e6, t_resume / cycles * 1e6,
           t_fresh / cycles * 1e6);
    ri_store_free(s);
    ri_module_free(m);
    return 0;
}

static int sandbox_cycles(const uint8_t *wasm, size_t len, const char *func, int32_t arg, uint64_t slice,
                          bool uncompressed) {
    ri_sandboxes *fac = ri_sandboxes_new();
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = slice;
    c.max_execution_ms = 100000;
    ri_sandbox_error e;
    ri_sandbox *sb = fac ? ri_sandbox_create(fac, &c, &e) : NULL;
    if (!sb || !ri_sandbox_load(sb, wasm, len, &e) || !ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &e))
        return fprintf(stderr, "sandbox: %s\n", sb ? e.message : "cannot create"), 1;
    char payload[32];
    snprintf(payload, sizeof payload, "[%d]", (int)arg);
    ri_sandbox_result r = ri_sandbox_execute(sb, func, payload);
    double t_snap = 0, t_restore = 0, t_resume = 0;
    long cycles = 0;
    size_t bytes = 0;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        ri_sandbox_result_free(&r);
        ri_snapshot_options o = {RI_SNAPSHOT_V2, true, uncompressed};
        uint8_t *img;
        double t0 = now();
        if (!ri_sandbox_snapshot_with(sb, &o, &img, &bytes, &e)) return fprintf(stderr, "snapshot: %s\n", e.message), 1;
        double t1 = now();
        ri_sandbox *sb2 = ri_sandbox_create(fac, &c, &e);
        if (!sb2 || !ri_sandbox_restore(sb2, img, bytes, &e)) return fprintf(stderr, "restore: %s\n", e.message), 1;
        double t2 = now();
        ri_sandbox_free(sb);
        free(img);
        sb = sb2;
        r = ri_sandbox_resume(sb, slice);
        double t3 = now();
        t_snap += t1 - t0;
        t_restore += t2 - t1;
        t_resume += t3 - t2;
        cycles++;
    }
    if (!r.ok) return fprintf(stderr, "run: %s\n", r.error.message), 1;
    if (cycles == 0) cycles = 1;
    printf("sandbox: result %s, %ld pauses, image %zu bytes (%s); per pause: snapshot %.1f us, restore into a fresh "
           "sandbox %.1f us, resume %.1f us\n",
           r.value_json, cycles, bytes, uncompressed ? "uncompressed" : "zstd", t_snap / cycles * 1e6,
           t_restore / cycles * 1e6, t_resume / cycles * 1e6);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(fac);
    return 0;
}

int main(int argc, char **argv) {
    bool uncompressed = argc > 1 && strcmp(argv[1], "--uncompressed") == 0;
    if (uncompressed) {
        argc--;
        argv++;
    }
    if (argc != 5) {
        fprintf(stderr, "usage: ri-bench-suspend [--uncompressed] MODULE.wasm FUNC ARG SLICE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return fprintf(stderr, "cannot open %s\n", argv[1]), 1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *wasm = n > 0 ? malloc((size_t)n) : NULL;
    if (!wasm || fread(wasm, 1, (size_t)n, f) != (size_t)n) return fprintf(stderr, "cannot read %s\n", argv[1]), 1;
    fclose(f);
    int32_t arg = (int32_t)strtol(argv[3], NULL, 10);
    uint64_t slice = strtoull(argv[4], NULL, 10);
    int rc = engine_cycles(wasm, (size_t)n, argv[2], arg, slice);
    if (!rc) rc = sandbox_cycles(wasm, (size_t)n, argv[2], arg, slice, uncompressed);
    free(wasm);
    return rc;
}
