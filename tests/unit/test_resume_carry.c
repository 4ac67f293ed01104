/*
 * ri_sandbox_resume_carry: a call paused again and again (host yields, as the server's time
 * slices pause it) and resumed with only the gas it had left runs out of gas exactly where
 * the uninterrupted execution does, and otherwise ends with the same value and gas; plain
 * resume, by contrast, gives each slice a new budget. Fixture: tests/wat/suspend.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "suspend_sandbox_util.h" /* read_fixture, TS, env, close_env, suspend_config, yield_every */

static uint8_t *wasm;
static size_t wasm_len;

static env open_env(uint64_t max_gas, uint32_t pause_on) {
    if (!wasm) wasm = read_fixture("suspend", &wasm_len);
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, max_gas);
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(e.sb);
    assert_true(ri_sandbox_load(e.sb, wasm, wasm_len, &err));
    assert_true(ri_sandbox_set_pause_on(e.sb, pause_on, &err));
    return e;
}

/* The run of yields(n) under max_gas, uninterrupted, and sliced at every 3rd host call
 * (carry: resumed with ri_sandbox_resume_carry, else ri_sandbox_resume(sb, 0)). */
static ri_sandbox_result run(uint64_t max_gas, int32_t n, bool sliced, bool carry, int *slices) {
    env e = open_env(max_gas, sliced ? RI_SUSPEND_ON_YIELD : 0);
    yield_every = sliced ? 3 : 0;
    ri_val arg = ri_val_i32(n);
    ri_sandbox_result r = ri_sandbox_call(e.sb, "yields", &arg, 1);
    *slices = 1;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        ri_sandbox_result_free(&r);
        r = carry ? ri_sandbox_resume_carry(e.sb) : ri_sandbox_resume(e.sb, 0);
        (*slices)++;
    }
    yield_every = 0;
    close_env(&e);
    return r;
}

static void carry_runs_out_where_the_uninterrupted_run_does(void **state) {
    (void)state;
    int slices;
    ri_sandbox_result want = run(5000, 1000000, false, false, &slices);
    assert_false(want.ok);
    assert_int_equal(want.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    ri_sandbox_result got = run(5000, 1000000, true, true, &slices);
    assert_true(slices > 10);
    assert_false(got.ok);
    assert_int_equal(got.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    assert_int_equal(got.error.gas_used, want.error.gas_used);
    assert_int_equal(got.gas_used, want.gas_used);
    /* plain resume adds a budget per slice: the run goes much further */
    ri_sandbox_result more = run(5000, 1000000, true, false, &slices);
    assert_true(more.gas_used > want.gas_used * 2);
    ri_sandbox_result_free(&want);
    ri_sandbox_result_free(&got);
    ri_sandbox_result_free(&more);
}

static void carry_completes_with_the_same_value_and_gas(void **state) {
    (void)state;
    int slices;
    ri_sandbox_result want = run(1000000, 60, false, false, &slices);
    assert_true(want.ok);
    ri_sandbox_result got = run(1000000, 60, true, true, &slices);
    assert_int_equal(slices, 21);
    assert_true(got.ok);
    assert_int_equal(got.nresults, 1);
    assert_int_equal(got.results[0].of.i32, want.results[0].of.i32);
    assert_int_equal(got.gas_used, want.gas_used);
    ri_sandbox_result_free(&want);
    ri_sandbox_result_free(&got);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(carry_runs_out_where_the_uninterrupted_run_does),
        cmocka_unit_test(carry_completes_with_the_same_value_and_gas),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(wasm);
    return rc;
}
