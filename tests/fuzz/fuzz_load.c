/* Module load (decode, validation, compilation, import isolation, instantiation with its
 * start function) and execution of each exported function under a small gas budget and
 * memory limit, through the sandbox API. The input is a module binary (seeds: the spec
 * suite's modules). Beyond "no crash, leak or UB", one property: the first exported
 * function, run again in a fresh sandbox paused by gas every few hundred instructions,
 * each pause snapshotted and restored into another fresh sandbox before it resumes,
 * ends exactly as its uninterrupted run did (result, error, gas used, final state). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "ri/sandbox.h"

#define GAS 20000u
#define SLICE 700u
#define MAX_EXPORTS 16

static ri_sandbox_config config(uint64_t gas) {
    ri_sandbox_config cfg = ri_sandbox_config_default();
    cfg.has_event_timestamp = true;
    cfg.event_timestamp = 1700000000000LL;
    cfg.max_memory_bytes = 2u << 20;
    cfg.max_gas = gas;
    cfg.gas_schedule = RI_GAS_INSTRUCTIONS;
    cfg.max_execution_ms = 5000;
    cfg.max_call_depth = 300;
    return cfg;
}

static ri_sandbox *fresh(ri_sandboxes *f, const uint8_t *data, size_t size, uint64_t gas) {
    ri_sandbox_config cfg = config(gas);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &cfg, &err);
    if (!sb) return NULL;
    if (!ri_sandbox_load(sb, data, size, &err)) {
        ri_sandbox_free(sb);
        return NULL;
    }
    return sb;
}

static uint8_t *image(ri_sandbox *sb, size_t *len) {
    ri_snapshot_options o = {.format = RI_SNAPSHOT_V2, .uncompressed = true};
    uint8_t *out = NULL;
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &o, &out, len, &err)) {
        fprintf(stderr, "snapshot failed: %s\n", err.message);
        abort();
    }
    return out;
}

static bool same_end(const ri_sandbox_result *a, const ri_sandbox_result *b) {
    if (a->ok != b->ok || a->gas_used != b->gas_used) return false;
    if (a->ok)
        return (a->value_json == NULL) == (b->value_json == NULL) &&
               (!a->value_json || strcmp(a->value_json, b->value_json) == 0);
    return a->error.code == b->error.code && strcmp(a->error.trap_kind, b->error.trap_kind) == 0;
}

/* The export run uninterrupted, then in slices across snapshots and fresh sandboxes. */
static void check_paused(ri_sandboxes *f, const uint8_t *data, size_t size, const char *name) {
    ri_sandbox *a = fresh(f, data, size, GAS);
    if (!a) return;
    ri_sandbox_result whole = ri_sandbox_execute(a, name, NULL);
    /* out of time, or out of gas, or recursion the slices would reach differently: skip */
    if (!whole.ok && (whole.error.code == RI_SANDBOX_TIMEOUT || whole.error.code == RI_SANDBOX_GAS_EXHAUSTED ||
                      whole.error.code == RI_SANDBOX_MEMORY_EXCEEDED)) {
        ri_sandbox_result_free(&whole);
        ri_sandbox_free(a);
        return;
    }
    ri_sandbox *b = fresh(f, data, size, SLICE);
    ri_sandbox_error err;
    if (!b) { /* its start function needs more than a slice */
        ri_sandbox_result_free(&whole);
        ri_sandbox_free(a);
        return;
    }
    if (!ri_sandbox_set_pause_on(b, RI_SUSPEND_ON_GAS, &err)) abort();
    ri_sandbox_result part = ri_sandbox_execute(b, name, NULL);
    for (int slices = 0; !part.ok && part.error.code == RI_SANDBOX_SUSPENDED_CALL; slices++) {
        if (slices > (int)(GAS / SLICE) + 4) {
            fprintf(stderr, "%s: still paused after %d slices\n", name, slices);
            abort();
        }
        size_t len;
        uint8_t *img = image(b, &len);
        ri_sandbox_free(b);
        b = fresh(f, data, size, SLICE);
        if (!b || !ri_sandbox_set_pause_on(b, RI_SUSPEND_ON_GAS, &err)) abort();
        if (!ri_sandbox_restore(b, img, len, &err)) {
            fprintf(stderr, "%s: a paused call's image does not restore: %s\n", name, err.message);
            abort();
        }
        free(img);
        ri_sandbox_result_free(&part);
        part = ri_sandbox_resume(b, SLICE);
    }
    if (!same_end(&whole, &part)) {
        fprintf(stderr, "%s: uninterrupted: ok %d value %s error %s/%s gas %llu; in slices: ok %d value %s error %s/%s gas %llu\n",
                name, whole.ok, whole.value_json ? whole.value_json : "-", ri_sandbox_errcode_name(whole.error.code),
                whole.error.trap_kind, (unsigned long long)whole.gas_used, part.ok,
                part.value_json ? part.value_json : "-", ri_sandbox_errcode_name(part.error.code),
                part.error.trap_kind, (unsigned long long)part.gas_used);
        abort();
    }
    size_t la, lb;
    uint8_t *ia = image(a, &la), *ib = image(b, &lb);
    if (la != lb || memcmp(ia, ib, la) != 0) {
        fprintf(stderr, "%s: the state after the run in slices differs from the uninterrupted run's\n", name);
        abort();
    }
    free(ia);
    free(ib);
    ri_sandbox_result_free(&whole);
    ri_sandbox_result_free(&part);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static ri_sandboxes *factory; /* the harness's own, made once per process */
    if (!factory) factory = ri_sandboxes_new();
    ri_sandbox *sb = fresh(factory, data, size, GAS);
    if (!sb) return 0;
    /* the export names, from the engine's view of the same module */
    ri_error e;
    ri_module *m = ri_module_load(data, size, NULL, &e);
    if (!m) {
        fprintf(stderr, "the sandbox loaded a module the engine refuses: %s\n", e.message);
        abort();
    }
    char *names[MAX_EXPORTS];
    int nnames = 0;
    for (uint32_t i = 0; i < ri_module_export_count(m) && nnames < MAX_EXPORTS; i++) {
        ri_export_info x = ri_module_export(m, i);
        if (x.type.kind != RI_EXTERN_FUNC || strlen(x.name) != x.name_len) continue;
        names[nnames++] = strdup(x.name);
    }
    ri_module_free(m);
    for (int i = 0; i < nnames; i++) {
        ri_sandbox_result r = ri_sandbox_execute(sb, names[i], NULL);
        ri_sandbox_result_free(&r);
    }
    size_t len;
    free(image(sb, &len));
    ri_sandbox_free(sb);
    if (nnames > 0) check_paused(factory, data, size, names[0]);
    for (int i = 0; i < nnames; i++) free(names[i]);
    return 0;
}
