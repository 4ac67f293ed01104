/*
 * What the language tests share (test_lang_lua.c, test_lang_python.c): the sandbox
 * configuration, the interpreter's file from $RI_INTERPRETERS_DIR, sandboxes restored from
 * an image, stdout and stderr collected. Header-only, like sandbox_test_util.h.
 */
#ifndef LANG_TEST_UTIL_H
#define LANG_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interpreter_file.h"
#include "lang/emsc_drivers.h"
#include "ri/sandbox.h"

static ri_sandboxes *factory;

static inline ri_sandbox_config config(uint64_t max_gas) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = max_gas;
    c.max_memory_bytes = 256u << 20;
    c.max_execution_ms = 600000; /* the tests meter by gas; the wall clock only guards */
    c.enable_wasi = true;
    c.enable_emscripten = true;
    return c;
}


#define NEED_INTERPRETER(bytes, rel)                                                                       \
    do {                                                                                                    \
        if (!(bytes)) {                                                                                     \
            print_message("skipped: no %s in RI_INTERPRETERS_DIR (run scripts/fetch-interpreters.sh)\n", rel); \
            skip();                                                                                         \
        }                                                                                                   \
    } while (0)

/* A sandbox in `image`'s state with this max_gas (and pause-on mask). */
static inline ri_sandbox *sandbox_from(const uint8_t *image, size_t len, uint64_t max_gas, uint32_t pause_on) {
    ri_sandbox_config c = config(max_gas);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &c, &err);
    assert_non_null(sb);
    if (!ri_sandbox_restore(sb, image, len, &err)) {
        print_error("restore: %s\n", err.message);
        fail();
    }
    assert_true(ri_sandbox_set_pause_on(sb, pause_on, &err));
    return sb;
}

typedef struct outcome {
    int status;
    char out[4096], err[4096];
    size_t out_len, err_len;
    uint64_t gas;
    double ms;
} outcome;

/* Appends the sandbox's stdout and stderr to o and clears them. */
static inline void collect(ri_sandbox *sb, outcome *o) {
    size_t n;
    const uint8_t *p = ri_sandbox_wasi_output(sb, RI_WASI_STDOUT, &n);
    assert_true(o->out_len + n < sizeof o->out);
    if (n) memcpy(o->out + o->out_len, p, n);
    o->out_len += n;
    p = ri_sandbox_wasi_output(sb, RI_WASI_STDERR, &n);
    assert_true(o->err_len + n < sizeof o->err);
    if (n) memcpy(o->err + o->err_len, p, n);
    o->err_len += n;
    ri_sandbox_wasi_output_clear(sb, RI_WASI_STDOUT);
    ri_sandbox_wasi_output_clear(sb, RI_WASI_STDERR);
}

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The interpreter's file in *wasm (NULL: absent, the tests skip), set up by `open` in a
 * sandbox whose v2 image (module included) goes to *ready: every test starts from it. */
typedef bool (*lang_open_fn)(void *driver, ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err);
static inline int lang_setup(const char *rel, lang_open_fn open, void *driver, uint8_t **wasm, size_t *wasm_len,
                             uint8_t **ready, size_t *ready_len) {
    *wasm = read_interpreter(rel, wasm_len);
    if (!*wasm) return 0;
    factory = ri_sandboxes_new();
    ri_sandbox_config c = config(UINT64_C(1) << 40);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &c, &err);
    if (!sb || !open(driver, sb, *wasm, *wasm_len, &err)) {
        fprintf(stderr, "%s: setup: %s\n", rel, err.message);
        return -1;
    }
    ri_snapshot_options o = {.format = RI_SNAPSHOT_V2, .include_module = true};
    bool ok = ri_sandbox_snapshot_with(sb, &o, ready, ready_len, &err);
    ri_sandbox_free(sb);
    return ok ? 0 : -1;
}

static inline void lang_teardown(uint8_t *wasm, uint8_t *ready) {
    free(wasm);
    free(ready);
    if (factory) ri_sandboxes_free(factory);
}

/* Takes a started run r to its end: at each pause collects the output into got, writes a
 * snapshot, restores it in a new sandbox (*sb; the old one freed) and resumes with `slice`.
 * The final result; *pauses counted. */
static inline ri_sandbox_result lang_resume_through_snapshots(ri_sandbox **sb, ri_sandbox_result r, uint64_t slice,
                                                              outcome *got, int *pauses) {
    *pauses = 0;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        (*pauses)++;
        collect(*sb, got);
        uint8_t *img = NULL;
        size_t len = 0;
        ri_sandbox_error err;
        ri_snapshot_options o = {.format = RI_SNAPSHOT_V2, .include_module = true};
        if (!ri_sandbox_snapshot_with(*sb, &o, &img, &len, &err)) {
            print_error("snapshot: %s\n", err.message);
            fail();
        }
        ri_sandbox_free(*sb);
        *sb = sandbox_from(img, len, slice, RI_SUSPEND_ON_GAS);
        free(img);
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(*sb, slice);
    }
    if (!r.ok) print_error("sliced: %s\n", r.error.message);
    assert_true(r.ok);
    return r;
}

#endif
