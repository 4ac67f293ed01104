/*
 * Real C programs paused and resumed: the programs of tests/c, built by clang-19 against wasi-libc
 * (qsort, bsearch and malloc of the libc: comparators and operators called through
 * call_indirect from several call sites, recursion), run by gas slices of many sizes.
 * Every Nth pause goes through a v2 snapshot into a fresh sandbox of another factory
 * (the engine rebuilds the call stack there: ri_store_rebuild_suspended), the others
 * resume in place. Each sliced run must end with the value, the gas and the final
 * snapshot bytes of the uninterrupted run. Without clang-19 and wasi-libc at build time
 * (RI_C_WASM_DIR empty) the tests skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "suspend_sandbox_util.h" /* read_wasm_in, snapshot_v2, env, close_env, suspend_config */

/* $RI_C_WASM_DIR/<name>.wasm, or NULL when the build made no C programs. */
static uint8_t *read_program(const char *name, size_t *len) {
    const char *dir = getenv("RI_C_WASM_DIR");
    if (!dir || !dir[0]) return NULL;
    return read_wasm_in(dir, name, "RI_C_WASM_DIR", len);
}

typedef struct program {
    const char *name; /* tests/c/<name>.c */
    const char *args; /* of its export "run", as JSON */
    uint8_t *wasm;
    size_t len;
} program;

static env open_program(const program *p, uint64_t max_gas, uint32_t pause_on, bool load) {
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, max_gas); /* (its imports unused) */
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    if (!e.sb) print_error("create: %s\n", err.message);
    assert_non_null(e.sb);
    if (load && !ri_sandbox_load(e.sb, p->wasm, p->len, &err)) {
        print_error("load %s: %s\n", p->name, err.message);
        fail();
    }
    if (!ri_sandbox_set_pause_on(e.sb, pause_on, &err)) {
        print_error("pause_on: %s\n", err.message);
        fail();
    }
    return e;
}

typedef struct reference {
    ri_sandbox_result result;
    test_blob final_image;
} reference;

static reference run_whole(const program *p) {
    env a = open_program(p, UINT64_C(1) << 40, 0, true);
    reference ref;
    ref.result = ri_sandbox_execute(a.sb, "run", p->args);
    if (!ref.result.ok) print_error("%s: %s\n", p->name, ref.result.error.message);
    assert_true(ref.result.ok);
    ref.final_image = snapshot_v2(a.sb, false, true);
    close_env(&a);
    return ref;
}

/* Runs p by slices of `slice` gas; pause k (1, 2, ...) moves into a fresh sandbox when
 * k % hop_every == 0. Returns the number of moves; *deepest: the most frames a moved
 * call had. */
static uint32_t run_sliced(const program *p, const reference *ref, uint64_t slice, uint64_t hop_every,
                           uint32_t *deepest) {
    env b = open_program(p, slice, RI_SUSPEND_ON_GAS, true);
    ri_sandbox_result r = ri_sandbox_execute(b.sb, "run", p->args);
    uint64_t pauses = 0;
    uint32_t hops = 0;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        pauses++;
        if (pauses % hop_every == 0) {
            test_blob s = snapshot_v2(b.sb, true, true);
            ri_snap_call call = paused_call_in(s);
            if (call.suspension.nframes > *deepest) *deepest = call.suspension.nframes;
            ri_snap_call_free(&call);
            env c = open_program(p, slice, 0, false);
            ri_sandbox_error err;
            if (!ri_sandbox_restore(c.sb, s.data, s.len, &err)) {
                print_error("%s, slice %llu, pause %llu: restore: %s\n", p->name, (unsigned long long)slice,
                            (unsigned long long)pauses, err.message);
                fail();
            }
            free(s.data);
            close_env(&b);
            b = c;
            hops++;
        }
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(b.sb, slice);
        assert_true(pauses <= ref->result.gas_used + 1); /* every slice makes progress */
    }
    if (!r.ok)
        print_error("%s, slice %llu, after %llu pauses: %s\n", p->name, (unsigned long long)slice,
                    (unsigned long long)pauses, r.error.message);
    assert_true(r.ok);
    assert_string_equal(r.value_json, ref->result.value_json);
    assert_int_equal(r.gas_used, ref->result.gas_used);
    test_blob got = snapshot_v2(b.sb, false, true);
    assert_true(same_blob(got, ref->final_image)); /* byte for byte */
    free(got.data);
    ri_sandbox_result_free(&r);
    close_env(&b);
    return hops;
}

/* Slices from 1 gas up; about `moves` of each run's pauses go through a fresh sandbox,
 * spread over the whole run (hop_every prime to most slice sizes, so the moves land on
 * other stop points for each size). */
static void pause_everywhere(const char *name, const char *args, uint32_t moves) {
    program p = {name, args, NULL, 0};
    p.wasm = read_program(name, &p.len);
    if (!p.wasm) {
        print_message("no C programs were built (clang-19 and wasi-libc missing): skipped\n");
        skip();
    }
    reference ref = run_whole(&p);
    uint64_t gas = ref.result.gas_used;
    assert_true(gas > 10000);
    static const uint64_t slices[] = {1, 2, 3, 7, 13, 61, 257, 1021, 4099};
    uint32_t deepest = 0, hops = 0;
    for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) {
        uint64_t npauses = gas / slices[i];
        uint64_t hop_every = npauses / moves + 1 + 2 * i; /* odd offsets: other phases */
        hops += run_sliced(&p, &ref, slices[i], hop_every, &deepest);
    }
    print_message("%s: %llu gas; %u moves into fresh sandboxes, calls up to %u frames deep\n", name,
                  (unsigned long long)gas, hops, deepest);
    assert_true(hops >= moves);
    assert_true(deepest >= 3); /* paused inside a callee of a callee (a comparator in qsort) */
    free(ref.final_image.data);
    ri_sandbox_result_free(&ref.result);
    free(p.wasm);
}

static void qsort_paused_everywhere(void **state) {
    (void)state;
    pause_everywhere("libc_qsort", "[120]", 60);
}

static void interpreter_paused_everywhere(void **state) {
    (void)state;
    pause_everywhere("libc_interp", "[24, 6]", 60);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qsort_paused_everywhere),
        cmocka_unit_test(interpreter_paused_everywhere),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
