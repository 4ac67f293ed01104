/*
 * What the language tests share (test_lang_lua.c, test_lang_python.c): the interpreter
 * opened once through ri_interpreter (ri/lang.h) from $RI_INTERPRETERS_DIR, runs in its
 * sandboxes with stdout and stderr collected, and a run paused by gas moved to a new sandbox
 * through a snapshot at every pause. Header-only, like sandbox_test_util.h.
 */
#ifndef LANG_TEST_UTIL_H
#define LANG_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interpreter_file.h"
#include "ri/lang.h"
#include "ri/sandbox.h"

static ri_sandboxes *factory;
static ri_interpreter *interp;
static uint8_t *interp_wasm; /* its bytes */
static size_t interp_wasm_len;
static ri_language interp_lang;

static inline ri_sandbox_config config(uint64_t max_gas) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = max_gas;
    c.max_memory_bytes = 256u << 20;
    c.max_execution_ms = 600000; /* the tests meter by gas; the wall clock only guards */
    return c;
}

#define NEED_INTERPRETER(lang)                                                                              \
    do {                                                                                                    \
        if (!interp) {                                                                                      \
            print_message("skipped: no %s.wasm (run scripts/fetch-interpreters.sh)\n", ri_language_name(lang)); \
            skip();                                                                                         \
        }                                                                                                   \
    } while (0)

/* A new sandbox of the interpreter with this max_gas and pause-on mask: a fork of it, or, with
 * image, that snapshot restored in it. */
static inline ri_sandbox *sandbox_of(const uint8_t *image, size_t len, uint32_t pause_on) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_interpreter_sandbox(interp, factory, &err);
    assert_non_null(sb);
    if (image && !ri_sandbox_restore(sb, image, len, &err)) {
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

/* Opens lang's interpreter with a slice of max_gas (none installed: interp stays NULL and
 * the tests skip). */
static inline int lang_setup(ri_language lang, uint64_t max_gas) {
    interp_lang = lang;
    interp_wasm = read_interpreter(lang, &interp_wasm_len);
    if (!interp_wasm) return 0;
    factory = ri_sandboxes_new();
    ri_sandbox_config c = config(max_gas);
    ri_sandbox_error err;
    interp = ri_interpreter_open(factory, lang, interp_wasm, interp_wasm_len, &c, &err);
    if (!interp) fprintf(stderr, "%s: open: %s\n", ri_language_name(lang), err.message);
    return interp ? 0 : -1;
}

static inline void lang_teardown(void) {
    ri_interpreter_free(interp);
    free(interp_wasm);
    if (factory) ri_sandboxes_free(factory);
}

/* Runs code in a new sandbox (pause-on mask 0) to its end; the exit code in o->status. */
static inline void run(const char *code, outcome *o) {
    memset(o, 0, sizeof *o);
    ri_sandbox *sb = sandbox_of(NULL, 0, 0);
    double t0 = now_ms();
    ri_sandbox_result r = ri_interpreter_run(interp, sb, code, strlen(code));
    o->ms = now_ms() - t0;
    if (!r.exited) print_error("run: %s\n", r.error.message);
    assert_true(r.exited);
    o->gas = r.gas_used;
    o->status = (int)r.exit_code;
    ri_sandbox_result_free(&r);
    collect(sb, o);
    ri_sandbox_free(sb);
}

/* Takes a started run r to its end: at each pause collects the output into got, writes a
 * snapshot, restores it in a new sandbox of the interpreter (*sb; the old one freed) and
 * resumes it with `slice` of gas. The final result; *pauses counted. */
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
        *sb = sandbox_of(img, len, RI_SUSPEND_ON_GAS);
        free(img);
        ri_sandbox_result_free(&r);
        r = ri_interpreter_resume(interp, *sb, slice);
    }
    if (!r.exited) print_error("sliced: %s\n", r.error.message);
    assert_true(r.exited);
    return r;
}

/* code run once uninterrupted (want), then (got) by an interpreter opened with a slice of a
 * ninth of its gas, pausing on gas, moved through a snapshot at every pause: the same output
 * and gas. */
static inline void run_sliced(const char *code, outcome *want, outcome *got, int *pauses) {
    run(code, want);
    assert_int_equal(want->status, 0);
    uint64_t slice = want->gas / 9 + 1;
    memset(got, 0, sizeof *got);
    ri_interpreter *whole = interp;
    ri_sandbox_config c = config(slice);
    ri_sandbox_error err;
    interp = ri_interpreter_open(factory, interp_lang, interp_wasm, interp_wasm_len, &c, &err);
    assert_non_null(interp);
    ri_sandbox *sb = sandbox_of(NULL, 0, RI_SUSPEND_ON_GAS);
    ri_sandbox_result r = lang_resume_through_snapshots(&sb, ri_interpreter_run(interp, sb, code, strlen(code)),
                                                        slice, got, pauses);
    got->status = (int)r.exit_code;
    got->gas = r.gas_used;
    ri_sandbox_result_free(&r);
    collect(sb, got);
    ri_sandbox_free(sb);
    ri_interpreter_free(interp);
    interp = whole;
    assert_true(*pauses >= 8);
    assert_int_equal(got->gas, want->gas);
    assert_int_equal(got->status, 0);
    assert_int_equal(got->out_len, want->out_len);
    assert_memory_equal(got->out, want->out, want->out_len);
    assert_string_equal(got->err, want->err);
}

#endif
