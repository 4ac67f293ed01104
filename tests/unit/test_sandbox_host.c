/*
 * Host functions (seed 001 §6): declared with name, parameter and result types, a C
 * callback and a user pointer; called with the right arguments; each call costs 1 gas,
 * charged before the callback runs; a failing callback ends the execution as
 * HOST_FUNCTION_ERROR {function name, message} (the original never produced it).
 * Fixtures: tests/wat/sb_hostcall.wat, sb_multihost.wat, sb_host64.wat, sb_hostmem.wat.
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

static ri_sandbox_config host_config(const ri_host_function *fns, uint32_t n) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    c.host_functions = fns;
    c.nhost_functions = n;
    return c;
}

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

static const ri_valtype I32[] = {RI_I32};
static const ri_valtype I64_I64[] = {RI_I64, RI_I64};
static const ri_valtype I64[] = {RI_I64};
static const ri_valtype F64_F32[] = {RI_F64, RI_F32};
static const ri_valtype F64[] = {RI_F64};

/* What the callbacks saw. */
typedef struct recorder {
    int calls;
    int32_t args[16];
    int fail_on; /* fail when the argument equals this; -1: never */
    char text[64];
} recorder;

static int double_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    recorder *rec = user;
    if (rec) {
        if (rec->calls < 16) rec->args[rec->calls] = args[0].of.i32;
        rec->calls++;
        if (rec->fail_on >= 0 && args[0].of.i32 == rec->fail_on)
            return ri_host_fail(call, "bad value %d", args[0].of.i32);
    }
    results[0] = ri_val_i32(args[0].of.i32 * 2);
    return 0;
}

static int triple_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = ri_val_i32(args[0].of.i32 * 3);
    return 0;
}

static int failing_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)user;
    (void)args;
    (void)results;
    return ri_host_fail(call, "intentional host error");
}

static ri_host_function double_decl(void *user) {
    ri_host_function h = {"double", 1, I32, 1, I32, double_fn, user};
    return h;
}

static ri_host_function triple_decl(void) {
    ri_host_function h = {"triple", 1, I32, 1, I32, triple_fn, NULL};
    return h;
}

/* ---- calls ------------------------------------------------------------------------------ */

static void double_7_is_14(void **state) {
    (void)state;
    ri_host_function fns[1] = {double_decl(NULL)};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostcall", &c);
    assert_int_equal(exec_i32_gas(e.sb, "callDouble", "7", NULL), 14);
    close_env(&e);
}

static void host_receives_arguments(void **state) {
    (void)state;
    recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.fail_on = -1;
    ri_host_function fns[1] = {double_decl(&rec)};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostcall", &c);
    exec_i32_gas(e.sb, "callDouble", "42", NULL);
    assert_int_equal(rec.calls, 1);
    assert_int_equal(rec.args[0], 42);
    exec_i32_gas(e.sb, "callDouble", "0", NULL);
    assert_int_equal(rec.calls, 2);
    assert_int_equal(rec.args[1], 0);
    exec_i32_gas(e.sb, "callDouble", "[-9]", NULL);
    assert_int_equal(rec.args[2], -9);
    close_env(&e);
}

static void user_pointer_reaches_callback(void **state) {
    (void)state;
    recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.fail_on = -1;
    ri_host_function fns[1] = {double_decl(&rec)};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostcall", &c);
    for (int i = 0; i < 5; i++) exec_i32_gas(e.sb, "callDouble", "1", NULL);
    assert_int_equal(rec.calls, 5);
    close_env(&e);
}

static void two_host_functions_both_callable(void **state) {
    (void)state;
    ri_host_function fns[2] = {double_decl(NULL), triple_decl()};
    ri_sandbox_config c = host_config(fns, 2);
    env e = open_env_cfg("sb_multihost", &c);
    assert_int_equal(exec_i32_gas(e.sb, "callBoth", "5", NULL), 25);
    assert_int_equal(exec_i32_gas(e.sb, "callBoth", "10", NULL), 50);
    assert_int_equal(exec_i32_gas(e.sb, "callBoth", "0", NULL), 0);
    close_env(&e);
}

static void declaration_order_does_not_matter(void **state) {
    (void)state;
    ri_host_function fns[2] = {triple_decl(), double_decl(NULL)};
    ri_sandbox_config c = host_config(fns, 2);
    env e = open_env_cfg("sb_multihost", &c);
    assert_int_equal(exec_i32_gas(e.sb, "callBoth", "2", NULL), 10);
    close_env(&e);
}

static void each_host_call_costs_one_gas(void **state) {
    (void)state;
    ri_host_function fns[2] = {double_decl(NULL), triple_decl()};
    ri_sandbox_config c = host_config(fns, 2);
    env e = open_env_cfg("sb_multihost", &c);
    uint64_t gas = 0;
    exec_i32_gas(e.sb, "callBoth", "1", &gas);
    assert_int_equal(gas, 2);
    close_env(&e);
}

static void host_call_is_not_made_without_gas(void **state) {
    (void)state;
    recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.fail_on = -1;
    ri_host_function fns[1] = {double_decl(&rec)};
    ri_sandbox_config c = host_config(fns, 1);
    c.max_gas = 0;
    env e = open_env_cfg("sb_hostcall", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callDouble", "3");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    assert_int_equal(r.error.gas_used, 1);
    assert_int_equal(r.error.gas_limit, 0);
    ri_sandbox_result_free(&r);
    /* Charged before the call: the callback never ran. */
    assert_int_equal(rec.calls, 0);
    close_env(&e);
}

static void second_host_call_refused_at_budget(void **state) {
    (void)state;
    ri_host_function fns[2] = {double_decl(NULL), triple_decl()};
    ri_sandbox_config c = host_config(fns, 2);
    c.max_gas = 1;
    env e = open_env_cfg("sb_multihost", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callBoth", "1");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    assert_int_equal(r.error.gas_used, 2);
    assert_int_equal(r.error.gas_limit, 1);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static int sum64_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    /* Unsigned arithmetic: wraps like i64.add, without signed overflow. */
    results[0] = ri_val_i64((int64_t)((uint64_t)args[0].of.i64 + (uint64_t)args[1].of.i64));
    return 0;
}

static int scale_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    double d;
    float f;
    memcpy(&d, &args[0].of.f64_bits, sizeof d);
    memcpy(&f, &args[1].of.f32_bits, sizeof f);
    double out = d * (double)f;
    results[0].type = RI_F64;
    memcpy(&results[0].of.f64_bits, &out, sizeof out);
    return 0;
}

static ri_sandbox_config wide_config(ri_host_function fns[2]) {
    ri_host_function a = {"sum64", 2, I64_I64, 1, I64, sum64_fn, NULL};
    ri_host_function b = {"scale", 2, F64_F32, 1, F64, scale_fn, NULL};
    fns[0] = a;
    fns[1] = b;
    return host_config(fns, 2);
}

static void host_function_with_i64_signature(void **state) {
    (void)state;
    ri_host_function fns[2];
    ri_sandbox_config c = wide_config(fns);
    env e = open_env_cfg("sb_host64", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callSum64", "[1099511627776,1]");
    assert_true(r.ok);
    assert_int_equal(r.results[0].type, RI_I64);
    assert_true(r.results[0].of.i64 == INT64_C(1099511627777));
    ri_sandbox_result_free(&r);
    ri_val args[2] = {ri_val_i64(INT64_C(9007199254740992)), ri_val_i64(1)};
    r = ri_sandbox_call(e.sb, "callSum64", args, 2);
    assert_true(r.ok);
    assert_true(r.results[0].of.i64 == INT64_C(9007199254740993));
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void host_function_with_float_signature(void **state) {
    (void)state;
    ri_host_function fns[2];
    ri_sandbox_config c = wide_config(fns);
    env e = open_env_cfg("sb_host64", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callScale", "[2.5,2]");
    assert_true(r.ok);
    double d;
    memcpy(&d, &r.results[0].of.f64_bits, sizeof d);
    assert_true(d == 5.0);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static int log_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)results;
    recorder *rec = user;
    ri_memory *mem = ri_host_call_memory(call);
    if (!mem) return ri_host_fail(call, "no memory");
    uint32_t ptr = (uint32_t)args[0].of.i32, len = (uint32_t)args[1].of.i32;
    if (len >= sizeof rec->text) return ri_host_fail(call, "too long");
    if (!ri_memory_read(mem, ptr, rec->text, len)) return ri_host_fail(call, "out of bounds");
    rec->text[len] = '\0';
    rec->calls++;
    return 0;
}

static void host_function_reads_caller_memory(void **state) {
    (void)state;
    static const ri_valtype I32_I32[] = {RI_I32, RI_I32};
    recorder rec;
    memset(&rec, 0, sizeof rec);
    ri_host_function fns[1] = {{"log", 2, I32_I32, 0, NULL, log_fn, &rec}};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostmem", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callLog", NULL);
    if (!r.ok) print_error("callLog: %s\n", r.error.message);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    assert_int_equal(rec.calls, 1);
    assert_string_equal(rec.text, "hello from wasm");
    close_env(&e);
}

static void declarations_are_copied_at_create(void **state) {
    (void)state;
    char name[16] = "double";
    ri_valtype params[1] = {RI_I32};
    ri_valtype results[1] = {RI_I32};
    ri_host_function fns[1] = {{name, 1, params, 1, results, double_fn, NULL}};
    ri_sandbox_config c = host_config(fns, 1);
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    /* Scribble over everything the caller passed. */
    memcpy(name, "zzzzzz", 7);
    params[0] = RI_F64;
    results[0] = RI_F64;
    fns[0].fn = failing_fn;
    size_t len = 0;
    uint8_t *wasm = read_fixture("sb_hostcall", &len);
    bool ok = ri_sandbox_load(sb, wasm, len, &err);
    free(wasm);
    if (!ok) print_error("load: %s\n", err.message);
    assert_true(ok);
    assert_int_equal(exec_i32_gas(sb, "callDouble", "8", NULL), 16);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* ---- failures ------------------------------------------------------------------------------ */

static void failing_host_function_is_host_function_error(void **state) {
    (void)state;
    ri_host_function fns[1] = {{"double", 1, I32, 1, I32, failing_fn, NULL}};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostcall", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callDouble", "5");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_HOST_FUNCTION_ERROR);
    assert_string_equal(r.error.function_name, "double");
    if (!strstr(r.error.message, "intentional host error")) {
        print_error("message: %s\n", r.error.message);
        fail();
    }
    assert_null(r.value_json);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void host_failure_names_the_failing_function(void **state) {
    (void)state;
    ri_host_function fns[2] = {double_decl(NULL), {"triple", 1, I32, 1, I32, failing_fn, NULL}};
    ri_sandbox_config c = host_config(fns, 2);
    env e = open_env_cfg("sb_multihost", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callBoth", "1");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_HOST_FUNCTION_ERROR);
    assert_string_equal(r.error.function_name, "triple");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void host_failure_message_is_formatted(void **state) {
    (void)state;
    recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.fail_on = 13;
    ri_host_function fns[1] = {double_decl(&rec)};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostcall", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callDouble", "13");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_HOST_FUNCTION_ERROR);
    if (!strstr(r.error.message, "bad value 13")) {
        print_error("message: %s\n", r.error.message);
        fail();
    }
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void sandbox_works_after_host_failure(void **state) {
    (void)state;
    recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.fail_on = 13;
    ri_host_function fns[1] = {double_decl(&rec)};
    ri_sandbox_config c = host_config(fns, 1);
    env e = open_env_cfg("sb_hostcall", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callDouble", "13");
    assert_false(r.ok);
    ri_sandbox_result_free(&r);
    assert_int_equal(exec_i32_gas(e.sb, "callDouble", "12", NULL), 24);
    close_env(&e);
}

static void host_failure_within_budget_is_not_gas_exhausted(void **state) {
    (void)state;
    ri_host_function fns[1] = {{"double", 1, I32, 1, I32, failing_fn, NULL}};
    ri_sandbox_config c = host_config(fns, 1);
    c.max_gas = 1;
    env e = open_env_cfg("sb_hostcall", &c);
    /* The one call fits the budget, so the failure is the host's, not GAS_EXHAUSTED. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "callDouble", "1");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_HOST_FUNCTION_ERROR);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(double_7_is_14),
        cmocka_unit_test(host_receives_arguments),
        cmocka_unit_test(user_pointer_reaches_callback),
        cmocka_unit_test(two_host_functions_both_callable),
        cmocka_unit_test(declaration_order_does_not_matter),
        cmocka_unit_test(each_host_call_costs_one_gas),
        cmocka_unit_test(host_call_is_not_made_without_gas),
        cmocka_unit_test(second_host_call_refused_at_budget),
        cmocka_unit_test(host_function_with_i64_signature),
        cmocka_unit_test(host_function_with_float_signature),
        cmocka_unit_test(host_function_reads_caller_memory),
        cmocka_unit_test(declarations_are_copied_at_create),
        cmocka_unit_test(failing_host_function_is_host_function_error),
        cmocka_unit_test(host_failure_names_the_failing_function),
        cmocka_unit_test(host_failure_message_is_formatted),
        cmocka_unit_test(sandbox_works_after_host_failure),
        cmocka_unit_test(host_failure_within_budget_is_not_gas_exhausted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
