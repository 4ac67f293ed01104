/*
 * Gas and timeout (seed 001 §6, reference "Gas and timeout"): seed-compatible gas (each
 * import call costs 1, charged and checked before the call, exactly max_gas calls
 * succeed, a fresh meter per execution, the PRNG untouched by a refused call), the
 * instruction schedule (a loop without host calls stopped deterministically), and
 * the wall-clock timeout that also stops loops without host calls.
 * No assertion here depends on how fast the machine is: timeouts are only checked to
 * have happened and to report elapsed >= limit.
 * Fixtures: tests/wat/sb_fib.wat, sb_loop.wat, sb_random.wat, sb_time.wat, sb_add.wat.
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
#include "sandbox_test_util.h"

static ri_sandbox_config test_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    return c;
}

/* Executes and expects success with one i32; *gas gets the execution's gas. */
static int32_t exec_i32_gas(ri_sandbox *sb, const char *action, const char *payload, uint64_t *gas) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.nresults, 1);
    int32_t v = r.results[0].of.i32;
    if (gas) *gas = r.gas_used;
    ri_sandbox_result_free(&r);
    return v;
}

/* Executes and expects GAS_EXHAUSTED; returns the error. */
static ri_sandbox_error exec_gas_exhausted(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (r.ok || r.error.code != RI_SANDBOX_GAS_EXHAUSTED)
        print_error("%s: ok=%d code=%s %s\n", action, r.ok, ri_sandbox_errcode_name(r.error.code),
                    r.error.message);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    assert_null(r.value_json);
    ri_sandbox_error err = r.error;
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    return err;
}

static ri_sandbox_error exec_timeout(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (r.ok || r.error.code != RI_SANDBOX_TIMEOUT)
        print_error("%s: ok=%d code=%s %s\n", action, r.ok, ri_sandbox_errcode_name(r.error.code),
                    r.error.message);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_TIMEOUT);
    ri_sandbox_error err = r.error;
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    return err;
}

/* ---- seed-compatible gas ------------------------------------------------------------ */

static void fib20_is_6765_for_21_gas(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    env e = open_env_cfg("sb_fib", &c);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "fib", "20", &gas), 6765);
    assert_int_equal(gas, 21);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 21);
    close_env(&e);
}

static void fib10_is_55_with_a_host_call_per_step(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    env e = open_env_cfg("sb_fib", &c);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "fib", "10", &gas), 55);
    assert_int_equal(gas, 11);
    close_env(&e);
}

static void fib20_same_in_ten_instances(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    for (int i = 0; i < 10; i++) {
        env e = open_env_cfg("sb_fib", &c);
        uint64_t gas = 0;
        assert_int_equal(exec_i32_gas(e.sb, "fib", "20", &gas), 6765);
        assert_int_equal(gas, 21);
        close_env(&e);
    }
}

static void pure_code_costs_no_gas(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    env e = open_env_cfg("sb_add", &c);
    uint64_t gas = 99;
    assert_int_equal(exec_i32_gas(e.sb, "add", "[3,7]", &gas), 10);
    assert_int_equal(gas, 0);
    close_env(&e);
}

static void pure_loop_costs_no_gas(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 0;
    env e = open_env_cfg("sb_loop", &c);
    uint64_t gas = 99;
    assert_int_equal(exec_i32_gas(e.sb, "countdown", "1000", &gas), 1000);
    assert_int_equal(gas, 0);
    close_env(&e);
}

static void zero_gas_fails_on_first_host_call(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 0;
    env e = open_env_cfg("sb_fib", &c);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "fib", "1");
    assert_int_equal(err.gas_used, 1);
    assert_int_equal(err.gas_limit, 0);
    close_env(&e);
}

static void zero_gas_allows_pure_code(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 0;
    env e = open_env_cfg("sb_add", &c);
    assert_int_equal(exec_i32_gas(e.sb, "add", "[40,2]", NULL), 42);
    close_env(&e);
}

static void fib100_with_50_gas_is_exhausted_at_51(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 50;
    env e = open_env_cfg("sb_fib", &c);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "fib", "100");
    assert_int_equal(err.gas_used, 51);
    assert_int_equal(err.gas_limit, 50);
    close_env(&e);
}

static void exactly_max_gas_calls_succeed(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 21;
    env e = open_env_cfg("sb_fib", &c);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "fib", "20", &gas), 6765);
    assert_int_equal(gas, 21);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "fib", "21");
    assert_int_equal(err.gas_used, 22);
    assert_int_equal(err.gas_limit, 21);
    close_env(&e);
}

static void one_call_over_budget_fails(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 20;
    env e = open_env_cfg("sb_fib", &c);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "fib", "20");
    assert_int_equal(err.gas_used, 21);
    assert_int_equal(err.gas_limit, 20);
    close_env(&e);
}

static void gas_meter_is_fresh_per_execution(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 21;
    env e = open_env_cfg("sb_fib", &c);
    for (int i = 0; i < 5; i++) {
        uint64_t gas = 0;
        assert_int_equal(exec_i32_gas(e.sb, "fib", "20", &gas), 6765);
        assert_int_equal(gas, 21);
    }
    close_env(&e);
}

static void sandbox_works_after_gas_exhaustion(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 5;
    env e = open_env_cfg("sb_fib", &c);
    exec_gas_exhausted(e.sb, "fib", "100");
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "fib", "4", &gas), 3);
    assert_int_equal(gas, 5);
    close_env(&e);
}

static void each_system_import_call_costs_one(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    env e = open_env_cfg("sb_time", &c);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "timeTwiceEqual", NULL, &gas), 1);
    assert_int_equal(gas, 2);
    exec_i32_gas(e.sb, "getTime", NULL, &gas);
    assert_int_equal(gas, 1);
    close_env(&e);
}

static void refused_call_does_not_advance_prng(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 2;
    env e = open_env_cfg("sb_random", &c);
    /* Two draws succeed, the third is refused before it runs. */
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "randN", "3");
    assert_int_equal(err.gas_used, 3);
    assert_int_equal(err.gas_limit, 2);
    /* Seed 0's third output: the PRNG moved exactly twice. */
    assert_int_equal(exec_i32_gas(e.sb, "getRandom", NULL, NULL), 958946056);
    close_env(&e);
}

static void result_gas_matches_metrics(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    env e = open_env_cfg("sb_random", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "randN", "7");
    assert_true(r.ok);
    assert_int_equal(r.gas_used, 7);
    assert_int_equal(r.metrics.gas_used, 7);
    assert_int_equal(r.metrics.gas_limit, RI_SANDBOX_DEFAULT_MAX_GAS);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void gas_limit_hit_before_timeout(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 10;
    c.max_execution_ms = 5000;
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "loop", NULL);
    assert_int_equal(err.gas_used, 11);
    assert_int_equal(err.gas_limit, 10);
    close_env(&e);
}

/* ---- instruction schedule ---------------------------------------------------------------- */

static ri_sandbox_config instruction_config(uint64_t max_gas) {
    ri_sandbox_config c = test_config();
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = max_gas;
    /* Gas, not time, must stop these loops; the timeout is only a safety net. */
    c.max_execution_ms = 60000;
    return c;
}

static void instruction_gas_stops_loop_without_host_calls(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(100000);
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "spin", NULL);
    assert_int_equal(err.gas_limit, 100000);
    assert_true(err.gas_used > 0);
    close_env(&e);
}

static void instruction_gas_exhaustion_is_deterministic(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(54321);
    env a = open_env_cfg("sb_loop", &c);
    env b = open_env_cfg("sb_loop", &c);
    ri_sandbox_error e1 = exec_gas_exhausted(a.sb, "spin", NULL);
    ri_sandbox_error e2 = exec_gas_exhausted(a.sb, "spin", NULL);
    ri_sandbox_error e3 = exec_gas_exhausted(b.sb, "spin", NULL);
    assert_int_equal(e1.gas_used, e2.gas_used);
    assert_int_equal(e1.gas_used, e3.gas_used);
    close_env(&a);
    close_env(&b);
}

static void instruction_gas_stops_long_finite_loop(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(1000);
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_gas_exhausted(e.sb, "countdown", "1000000");
    assert_int_equal(err.gas_limit, 1000);
    close_env(&e);
}

static void instruction_gas_same_work_same_cost(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(10000000);
    env e = open_env_cfg("sb_loop", &c);
    uint64_t g1 = 0, g2 = 0;
    assert_int_equal(exec_i32_gas(e.sb, "countdown", "1000", &g1), 1000);
    assert_int_equal(exec_i32_gas(e.sb, "countdown", "1000", &g2), 1000);
    assert_true(g1 > 0);
    assert_int_equal(g1, g2);
    close_env(&e);
}

static void instruction_gas_grows_with_work(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(10000000);
    env e = open_env_cfg("sb_loop", &c);
    uint64_t small = 0, big = 0;
    exec_i32_gas(e.sb, "countdown", "10", &small);
    exec_i32_gas(e.sb, "countdown", "1000", &big);
    assert_true(big > small);
    close_env(&e);
}

static void instruction_gas_charges_pure_code(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(1000);
    env e = open_env_cfg("sb_add", &c);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "add", "[3,7]", &gas), 10);
    assert_true(gas > 0);
    close_env(&e);
}

static void instruction_gas_also_charges_host_calls(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(10000000);
    env e = open_env_cfg("sb_fib", &c);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "fib", "20", &gas), 6765);
    /* More than the 21 host calls alone. */
    assert_true(gas > 21);
    close_env(&e);
}

static void instruction_gas_sandbox_usable_after_exhaustion(void **state) {
    (void)state;
    ri_sandbox_config c = instruction_config(5000);
    env e = open_env_cfg("sb_loop", &c);
    exec_gas_exhausted(e.sb, "spin", NULL);
    assert_int_equal(exec_i32_gas(e.sb, "countdown", "3", NULL), 3);
    close_env(&e);
}

/* ---- timeout ------------------------------------------------------------------------------ */

static void host_calling_infinite_loop_times_out(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_gas = 1000000000;
    c.max_execution_ms = 100;
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_timeout(e.sb, "loop", NULL);
    assert_int_equal(err.limit_ms, 100);
    assert_true(err.elapsed_ms >= 100);
    close_env(&e);
}

static void loop_without_host_calls_times_out(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_execution_ms = 100;
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_timeout(e.sb, "spin", NULL);
    assert_int_equal(err.limit_ms, 100);
    assert_true(err.elapsed_ms >= err.limit_ms);
    close_env(&e);
}

static void default_timeout_is_50ms(void **state) {
    (void)state;
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_timeout(e.sb, "spin", NULL);
    assert_int_equal(err.limit_ms, 50);
    assert_true(err.elapsed_ms >= 50);
    close_env(&e);
}

static void sandbox_works_after_timeout(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_execution_ms = 60;
    env e = open_env_cfg("sb_loop", &c);
    exec_timeout(e.sb, "spin", NULL);
    assert_int_equal(exec_i32_gas(e.sb, "countdown", "5", NULL), 5);
    exec_timeout(e.sb, "spin", NULL);
    assert_int_equal(exec_i32_gas(e.sb, "countdown", "6", NULL), 6);
    close_env(&e);
}

/* fusions_off changes speed only: every family off gives the same result and gas, and bits
 * that name no family are refused at create. */
static void fusions_off_same_result_and_gas(void **state) {
    (void)state;
    int32_t results[2];
    uint64_t gas[2];
    for (int off = 0; off < 2; off++) {
        ri_sandbox_config c = instruction_config(1000000);
        c.fusions_off = off ? RI_FUSE_ALL : 0;
        env e = open_env_cfg("sb_loop", &c);
        results[off] = exec_i32_gas(e.sb, "countdown", "1000", &gas[off]);
        close_env(&e);
    }
    assert_int_equal(results[0], 1000);
    assert_int_equal(results[1], results[0]);
    assert_true(gas[0] > 1000);
    assert_int_equal(gas[1], gas[0]);
    ri_sandbox_config c = test_config();
    c.fusions_off = 1u << 31;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_error err;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    assert_non_null(strstr(err.message, "fusions_off"));
    ri_sandboxes_free(f);
}

static void timeout_with_instruction_schedule_and_ample_gas(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = UINT64_MAX / 2;
    c.max_execution_ms = 80;
    env e = open_env_cfg("sb_loop", &c);
    ri_sandbox_error err = exec_timeout(e.sb, "spin", NULL);
    assert_int_equal(err.limit_ms, 80);
    assert_true(err.elapsed_ms >= 80);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fib20_is_6765_for_21_gas),
        cmocka_unit_test(fib10_is_55_with_a_host_call_per_step),
        cmocka_unit_test(fib20_same_in_ten_instances),
        cmocka_unit_test(pure_code_costs_no_gas),
        cmocka_unit_test(pure_loop_costs_no_gas),
        cmocka_unit_test(zero_gas_fails_on_first_host_call),
        cmocka_unit_test(zero_gas_allows_pure_code),
        cmocka_unit_test(fib100_with_50_gas_is_exhausted_at_51),
        cmocka_unit_test(exactly_max_gas_calls_succeed),
        cmocka_unit_test(one_call_over_budget_fails),
        cmocka_unit_test(gas_meter_is_fresh_per_execution),
        cmocka_unit_test(sandbox_works_after_gas_exhaustion),
        cmocka_unit_test(each_system_import_call_costs_one),
        cmocka_unit_test(refused_call_does_not_advance_prng),
        cmocka_unit_test(result_gas_matches_metrics),
        cmocka_unit_test(gas_limit_hit_before_timeout),
        cmocka_unit_test(instruction_gas_stops_loop_without_host_calls),
        cmocka_unit_test(instruction_gas_exhaustion_is_deterministic),
        cmocka_unit_test(instruction_gas_stops_long_finite_loop),
        cmocka_unit_test(instruction_gas_same_work_same_cost),
        cmocka_unit_test(instruction_gas_grows_with_work),
        cmocka_unit_test(instruction_gas_charges_pure_code),
        cmocka_unit_test(instruction_gas_also_charges_host_calls),
        cmocka_unit_test(instruction_gas_sandbox_usable_after_exhaustion),
        cmocka_unit_test(host_calling_infinite_loop_times_out),
        cmocka_unit_test(loop_without_host_calls_times_out),
        cmocka_unit_test(default_timeout_is_50ms),
        cmocka_unit_test(sandbox_works_after_timeout),
        cmocka_unit_test(timeout_with_instruction_schedule_and_ample_gas),
        cmocka_unit_test(fusions_off_same_result_and_gas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
