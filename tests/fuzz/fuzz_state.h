/* The known state the restore harness (fuzz_restore.c) and the seed generator
 * (fuzz_seeds.c) share: two sandboxes of tests/wat/fuzz_state.wat with every part of
 * their state changed since instantiation, the second one with a call paused a few
 * frames deep (section FRMS in its v2 images). Header-only: each harness is one program. */
#ifndef RI_FUZZ_STATE_H
#define RI_FUZZ_STATE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "ri/sandbox.h"

#define FS_TS 1700000000000LL
#define FS_GAS 4000u /* per slice: the sort below pauses; bump and grow fit */

static inline void fs_die(const char *what, const ri_sandbox_error *err) {
    fprintf(stderr, "fuzz state: %s: %s\n", what, err ? err->message : "");
    abort();
}

static inline uint8_t *fs_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static inline ri_sandbox_config fs_config(void) {
    ri_sandbox_config cfg = ri_sandbox_config_default();
    cfg.has_event_timestamp = true;
    cfg.event_timestamp = FS_TS;
    cfg.max_memory_bytes = 8u << 20;
    cfg.max_gas = FS_GAS;
    cfg.gas_schedule = RI_GAS_INSTRUCTIONS;
    cfg.max_execution_ms = 10000;
    return cfg;
}

static inline void fs_exec(ri_sandbox *sb, const char *action, const char *payload, bool may_pause) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok && !(may_pause && r.error.code == RI_SANDBOX_SUSPENDED_CALL)) fs_die(action, &r.error);
    ri_sandbox_result_free(&r);
}

/* The module just loaded (what WSNP v1 can hold: globals and tables as instantiated). */
static inline ri_sandbox *fs_make_loaded(ri_sandboxes *factory) {
    size_t len;
    uint8_t *wasm = fs_read_file(RI_FUZZ_WAT_DIR "/fuzz_state.wasm", &len);
    if (!wasm) fs_die("cannot read " RI_FUZZ_WAT_DIR "/fuzz_state.wasm", NULL);
    ri_sandbox_config cfg = fs_config();
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &cfg, &err);
    if (!sb) fs_die("create", &err);
    if (!ri_sandbox_load(sb, wasm, len, &err)) fs_die("load", &err);
    free(wasm);
    if (!ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &err)) fs_die("pause_on", &err);
    return sb;
}

/* paused: with the sort call pending. */
static inline ri_sandbox *fs_make(ri_sandboxes *factory, bool paused) {
    ri_sandbox *sb = fs_make_loaded(factory);
    fs_exec(sb, "bump", "[3]", false);
    fs_exec(sb, "grow", NULL, false);
    fs_exec(sb, "bump", "[5]", false);
    fs_exec(sb, "segments", NULL, false);
    if (paused) {
        fs_exec(sb, "sort", "[40]", true);
        if (!ri_sandbox_has_pending_call(sb)) fs_die("sort did not pause", NULL);
    }
    return sb;
}

/* A v2 image of everything (module embedded, pages uncompressed: comparable bytes). */
static inline uint8_t *fs_image(ri_sandbox *sb, size_t *len) {
    ri_snapshot_options o = {.format = RI_SNAPSHOT_V2, .include_module = true, .uncompressed = true};
    uint8_t *out = NULL;
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &o, &out, len, &err)) fs_die("snapshot", &err);
    return out;
}

#endif
