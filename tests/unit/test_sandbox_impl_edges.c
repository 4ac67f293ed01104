/*
 * Implementation details of the sandbox library the behaviour tests do not reach:
 * JavaScript's number and key formatting in the JSON convention, i64-packed results
 * beyond 64 KiB, the kind/signature/memory-limit load errors and their texts, the
 * env.memory sized to the import, segment state WSNP v1 cannot hold, the strict
 * state JSON, config validation, and the instruction gas schedule's reports.
 * Fixtures: tests/wat/sb_impl_*.wat.
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
#include "sandbox/sandbox_internal.h" /* white box: sb_js_number */

/* ---- helpers ------------------------------------------------------------------------------- */

static ri_sandbox_config base_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000;
    c.max_execution_ms = 2000;
    return c;
}

typedef struct fixture {
    ri_sandboxes *factory;
    ri_sandbox *sb;
    bool loaded;
    ri_sandbox_error err; /* of the load */
} fixture;

static fixture open_fixture(const ri_sandbox_config *c, const char *name) {
    fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.factory = ri_sandboxes_new();
    assert_non_null(fx.factory);
    fx.sb = ri_sandbox_create(fx.factory, c, &fx.err);
    assert_non_null(fx.sb);
    size_t len = 0;
    uint8_t *wasm = read_fixture(name, &len);
    assert_non_null(wasm);
    fx.loaded = ri_sandbox_load(fx.sb, wasm, len, &fx.err);
    free(wasm);
    return fx;
}

static void close_fixture(fixture *fx) {
    ri_sandbox_free(fx->sb);
    ri_sandboxes_free(fx->factory);
}

static void expect_json(ri_sandbox *sb, const char *action, const char *payload, const char *value) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s: %s\n", action, r.error.message);
    assert_true(r.ok);
    if (value) assert_string_equal(r.value_json, value);
    else assert_null(r.value_json);
    ri_sandbox_result_free(&r);
}

static void expect_load_error(const char *fixture_name, ri_sandbox_errcode code, const char *message) {
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, fixture_name);
    assert_false(fx.loaded);
    assert_int_equal(fx.err.code, code);
    assert_string_equal(fx.err.message, message);
    assert_int_equal(ri_sandbox_status_of(fx.sb), RI_SANDBOX_CREATED);
    close_fixture(&fx);
}

/* ---- JavaScript number formatting ------------------------------------------------------------ */

static void js_numbers_as_number_to_string(void **state) {
    (void)state;
    static const struct {
        double value;
        const char *text;
    } cases[] = {
        {0.1, "0.1"},
        {0.1 + 0.2, "0.30000000000000004"},
        {100, "100"},
        {-1.5, "-1.5"},
        {-0.0, "0"},
        {1e20, "100000000000000000000"},
        {1e21, "1e+21"},
        {123456789e13, "1.23456789e+21"},
        {0.000001, "0.000001"},
        {1e-7, "1e-7"},
        {1.5e-7, "1.5e-7"},
        {1234.5678, "1234.5678"},
        {9007199254740992.0, "9007199254740992"},
        {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {3.0000001192092896, "3.0000001192092896"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_js_number(buf, sizeof buf, cases[i].value);
        assert_string_equal(buf, cases[i].text);
    }
    sb_js_number(buf, sizeof buf, 0.0 / 0.0);
    assert_string_equal(buf, "NaN");
}

/* ---- the JSON convention ------------------------------------------------------------------------ */

static void json_payload_is_written_as_javascript_writes_it(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    /* echo returns the payload bytes as the module received them. Array-index keys
     * come first in ascending order, as in a JavaScript object; numbers are
     * JavaScript's; integers beyond 64 bits are doubles. */
    expect_json(fx.sb, "echo",
                 "{ \"b\" : 1, \"a\": [0.1, 1e21, 1e-7, -0, 1.0, 2.50, \"x\\u0001\\u00e9/\"], \"10\": null, \"2\": true }",
                 "{\"2\":true,\"10\":null,\"b\":1,\"a\":[0.1,1e+21,1e-7,0,1,2.5,\"x\\u0001\xc3\xa9/\"]}");
    expect_json(fx.sb, "echo", "{\"n\":[123456789012345678901234567890, 1]}", "{\"n\":[1.2345678901234568e+29,1]}");
    expect_json(fx.sb, "echo", "\"text\"", "\"text\"");
    expect_json(fx.sb, "echo", "false", "false");
    close_fixture(&fx);
}

static void json_i64_result_beyond_64k(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    /* echo_high grows the memory and returns the payload at 70000, packed 32+32. */
    expect_json(fx.sb, "echo_high", "{\"k\":[1,2,3]}", "{\"k\":[1,2,3]}");
    expect_json(fx.sb, "echo64", "{\"k\":\"v\"}", "{\"k\":\"v\"}");
    expect_json(fx.sb, "no_value", "{}", NULL);
    close_fixture(&fx);
}

static void json_errors_are_clear(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    ri_sandbox_result r = ri_sandbox_execute(fx.sb, "echo", "{not json");
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(r.error.trap_kind, "runtime_error");
    assert_non_null(strstr(r.error.message, "Invalid JSON payload: "));
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(fx.sb, "wrong_shape", "{}");
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(r.error.message,
                        "JSON payload requires 'wrong_shape' to have type (i32, i32) -> i32 or (i32, i32) -> i64, "
                        "but it has type (i32) -> i32");
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(fx.sb, "bad_result", "{}");
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_non_null(strstr(r.error.message, "lies outside the WASM memory"));
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(fx.sb, "not_json", "{}");
    assert_non_null(strstr(r.error.message, "is not valid JSON"));
    ri_sandbox_result_free(&r);
    close_fixture(&fx);
}

/* ---- direct convention details --------------------------------------------------------------------- */

static void direct_values_as_javascript_numbers(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    expect_json(fx.sb, "mulf32", "[0.1, 1]", "0.10000000149011612");
    expect_json(fx.sb, "divf64", "[1, 3]", "0.3333333333333333");
    expect_json(fx.sb, "divf64", "[1, 0]", "null"); /* Infinity is not JSON */
    expect_json(fx.sb, "add64", "[9007199254740993, 0]", "9007199254740993");
    expect_json(fx.sb, "add", "[4294967297, -1.9]", "0"); /* ToInt32: 1 + (-1) */
    expect_json(fx.sb, "pair", NULL, "[7,-8]");
    expect_json(fx.sb, "nothing", "[]", NULL);
    ri_sandbox_result r = ri_sandbox_execute(fx.sb, "pair", NULL);
    assert_int_equal(r.nresults, 2);
    assert_int_equal(r.results[1].type, RI_I64);
    assert_int_equal(r.results[1].of.i64, -8);
    ri_sandbox_result_free(&r);
    close_fixture(&fx);
}

static void traps_map_precisely(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    c.max_call_depth = 200;
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    static const struct {
        const char *action, *payload, *kind, *message;
    } cases[] = {
        {"div", "[1, 0]", "integer_divide_by_zero", "integer divide by zero"},
        {"div", "[-2147483648, -1]", "integer_overflow", "integer overflow"},
        {"boom", NULL, "unreachable", "unreachable"},
        {"oob", NULL, "out_of_bounds_memory", "out of bounds memory access"},
        {"deep", "0", "call_stack_exhausted", "call stack exhausted"},
        {"trunc", "1e300", "integer_overflow", "integer overflow"},
        {"trunc_nan", NULL, "invalid_conversion", "invalid conversion to integer"},
        {"call_null", NULL, "uninitialized_element", "uninitialized element 1"},
        {"call_oob", NULL, "undefined_element", "undefined element 9"},
        {"call_mismatch", NULL, "indirect_call_type_mismatch", "indirect call type mismatch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ri_sandbox_result r = ri_sandbox_execute(fx.sb, cases[i].action, cases[i].payload);
        assert_false(r.ok);
        assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
        assert_string_equal(r.error.trap_kind, cases[i].kind);
        assert_string_equal(r.error.message, cases[i].message);
        assert_int_equal(ri_sandbox_status_of(fx.sb), RI_SANDBOX_LOADED);
        ri_sandbox_result_free(&r);
    }
    close_fixture(&fx);
}

/* ---- load errors ------------------------------------------------------------------------------------ */

static void kind_and_signature_mismatches_are_load_errors(void **state) {
    (void)state;
    expect_load_error("sb_impl_bad_kinds", RI_SANDBOX_INVALID_MODULE,
                      "Import validation failed: WASM module imports 'env.__get_time' with type () -> i64, "
                      "but the system import env.__get_time has type () -> i32.");
    expect_load_error("sb_impl_memory_as_func", RI_SANDBOX_INVALID_MODULE,
                      "Import validation failed: WASM module imports 'env.memory' as a function, "
                      "but the system import env.memory is a memory.");
    expect_load_error("sb_impl_wasi", RI_SANDBOX_INVALID_MODULE,
                      "Import validation failed: WASM module imports from blocked namespace 'wasi_snapshot_preview1' "
                      "(import: 'fd_write'). WASI and system interfaces are not allowed in deterministic sandboxes.");
    expect_load_error("sb_impl_foreign", RI_SANDBOX_INVALID_MODULE,
                      "Import validation failed: WASM module imports from undeclared namespace 'js' (import: 'log'). "
                      "Only the 'env' namespace is supported.");
    expect_load_error("sb_impl_undeclared", RI_SANDBOX_INVALID_MODULE,
                      "Import validation failed: WASM module imports undeclared function 'env.mystery'. Only declared "
                      "host functions and system imports (memory, __get_time, __get_random) are allowed.");
    expect_load_error("sb_impl_big_memory", RI_SANDBOX_INVALID_MODULE,
                      "Failed to load WASM module: the module defines a memory of at least 300 pages (19660800 bytes), "
                      "above the memory limit of 16777216 bytes");
    expect_load_error("sb_impl_start_trap", RI_SANDBOX_INVALID_MODULE,
                      "Failed to instantiate WASM module: unreachable");
}

static int host_noop(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    (void)args;
    (void)results;
    return 0;
}

static void host_signature_mismatch_names_both_types(void **state) {
    (void)state;
    static const ri_valtype i32x2[] = {RI_I32, RI_I32};
    static const ri_valtype i32[] = {RI_I32};
    static const ri_valtype i64_f64[] = {RI_I64, RI_F64};
    static const ri_valtype f64[] = {RI_F64};
    ri_host_function hosts[3] = {
        {"add3", 2, i32x2, 1, i32, host_noop, NULL}, /* the module imports (i32, i32, i32) -> i32 */
        {"fail", 0, NULL, 0, NULL, host_noop, NULL},
        {"scale", 2, i64_f64, 1, f64, host_noop, NULL},
    };
    ri_sandbox_config c = base_config();
    c.host_functions = hosts;
    c.nhost_functions = 3;
    fixture fx = open_fixture(&c, "sb_impl_host");
    assert_false(fx.loaded);
    assert_string_equal(fx.err.message,
                        "Import validation failed: WASM module imports 'env.add3' with type (i32, i32, i32) -> i32, "
                        "but the declared host function 'add3' has type (i32, i32) -> i32.");
    close_fixture(&fx);
}

static void memory_import_above_the_limit_is_refused(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    c.max_memory_bytes = 65536; /* the import asks for 2 pages */
    fixture fx = open_fixture(&c, "sb_impl_import_min2");
    assert_false(fx.loaded);
    assert_string_equal(fx.err.message,
                        "Import validation failed: WASM module imports 'env.memory' with a minimum of 2 pages "
                        "(131072 bytes), above the memory limit of 65536 bytes.");
    close_fixture(&fx);
}

static void env_memory_is_sized_to_the_import(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_import_min2"); /* (memory 2 3) */
    assert_true(fx.loaded);
    assert_int_equal(ri_sandbox_get_metrics(fx.sb).memory_used_bytes, 2 * 65536);
    expect_json(fx.sb, "grow", "1", "2");
    expect_json(fx.sb, "grow", "1", "-1"); /* its own maximum, 3 pages */
    expect_json(fx.sb, "pages", NULL, "3");
    close_fixture(&fx);
}

static void invalid_configs_are_refused(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_sandbox_config c = base_config();
    c.max_memory_bytes = 0;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    c = base_config();
    c.gas_schedule = (ri_gas_schedule)7;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    ri_host_function reserved = {"__get_random", 0, NULL, 0, NULL, host_noop, NULL};
    c = base_config();
    c.host_functions = &reserved;
    c.nhost_functions = 1;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_non_null(strstr(err.message, "reserved"));
    ri_host_function twice[2] = {{"h", 0, NULL, 0, NULL, host_noop, NULL}, {"h", 0, NULL, 0, NULL, host_noop, NULL}};
    c.host_functions = twice;
    c.nhost_functions = 2;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_non_null(strstr(err.message, "declared twice"));
    static const ri_valtype v128[] = {RI_V128};
    ri_host_function vector = {"v", 1, v128, 0, NULL, host_noop, NULL};
    c.host_functions = &vector;
    c.nhost_functions = 1;
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    assert_null(ri_sandbox_create(NULL, &c, &err));
    assert_null(ri_sandbox_create(f, NULL, &err));
    ri_sandboxes_free(f);
}

/* ---- WSNP v1 and what it cannot hold ------------------------------------------------------------------ */

static void dropped_data_segment_is_refused_then_restored(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_own_memory");
    assert_true(fx.loaded);
    uint8_t *before = NULL;
    size_t before_len = 0;
    ri_sandbox_error err;
    expect_json(fx.sb, "poke", "[100, 77]", NULL);
    assert_true(ri_sandbox_snapshot(fx.sb, &before, &before_len, &err));
    assert_int_equal(before_len, 13 + 2 * 65536 + strlen("{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0}"));
    expect_json(fx.sb, "drop_data", NULL, NULL);
    uint8_t *after = NULL;
    size_t after_len = 0;
    assert_false(ri_sandbox_snapshot(fx.sb, &after, &after_len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_non_null(strstr(err.message, "data segment 0 has changed since the module was loaded"));
    assert_null(after);
    /* Restore puts the segment back (and the memory): snapshots work again. */
    expect_json(fx.sb, "poke", "[100, 5]", NULL);
    assert_true(ri_sandbox_restore(fx.sb, before, before_len, &err));
    expect_json(fx.sb, "peek", "100", "77");
    assert_true(ri_sandbox_snapshot(fx.sb, &after, &after_len, &err));
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    free(before);
    free(after);
    close_fixture(&fx);
}

static void own_memory_is_clamped_by_the_limit(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    c.max_memory_bytes = 3 * 65536; /* the module declares (memory 2 10) */
    fixture fx = open_fixture(&c, "sb_impl_own_memory");
    assert_true(fx.loaded);
    expect_json(fx.sb, "grow", "1", "2");
    expect_json(fx.sb, "grow", "1", "-1");
    assert_int_equal(ri_sandbox_get_metrics(fx.sb).memory_used_bytes, 3 * 65536);
    close_fixture(&fx);
}

static void state_json_fields_are_checked(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_no_memory");
    assert_true(fx.loaded);
    uint8_t *snap = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    assert_true(ri_sandbox_snapshot(fx.sb, &snap, &len, &err));
    static const char fresh[] = "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0}";
    assert_int_equal(len, 13 + 65536 + strlen(fresh));
    assert_memory_equal(snap + 13 + 65536, fresh, strlen(fresh));
    static const char *const refused[] = {
        "{\"prngState\":{\"current\":4294967296},\"timestamp\":1,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":-2147483649},\"timestamp\":1,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1e19,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":9223372036854775808}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1}",
        "{\"prngState\":{\"current\":1.5},\"timestamp\":1,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":-1}",
        "{\"prngState\":{\"current\":0},\"timestamp\":\"1\",\"gasUsed\":0}",
        "{\"prngState\":null,\"timestamp\":1,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":0}",
        "[]",
        "0",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        size_t m = strlen(refused[i]);
        uint8_t *bad = malloc(13 + 65536 + m);
        assert_non_null(bad);
        memcpy(bad, snap, 13 + 65536);
        bad[9 + 65536] = (uint8_t)m;
        bad[10 + 65536] = (uint8_t)(m >> 8);
        bad[11 + 65536] = 0;
        bad[12 + 65536] = 0;
        memcpy(bad + 13 + 65536, refused[i], m);
        assert_false(ri_sandbox_restore(fx.sb, bad, 13 + 65536 + m, &err));
        assert_string_equal(err.message, "Invalid snapshot \xe2\x80\x94 corrupted state JSON");
        free(bad);
    }
    /* Integral values in any notation are integers: 3.0, 1.7e12; extra keys are accepted
     * (forward compatibility), in the state and in prngState. */
    static const char accepted[] =
        "{\"prngState\":{\"current\":1.0,\"x\":1},\"timestamp\":1.7e12,\"gasUsed\":3.0,\"extra\":1}";
    size_t m = strlen(accepted);
    uint8_t *good = malloc(13 + 65536 + m);
    assert_non_null(good);
    memcpy(good, snap, 13 + 65536);
    good[9 + 65536] = (uint8_t)m;
    good[10 + 65536] = good[11 + 65536] = good[12 + 65536] = 0;
    memcpy(good + 13 + 65536, accepted, m);
    assert_true(ri_sandbox_restore(fx.sb, good, 13 + 65536 + m, &err));
    assert_int_equal(ri_sandbox_get_metrics(fx.sb).gas_used, 3);
    free(good);
    free(snap);
    close_fixture(&fx);
}

static void suspend_is_idempotent_and_restore_resumes(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    uint8_t *snap = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(fx.sb, &err));
    assert_true(ri_sandbox_suspend(fx.sb, &err));
    assert_int_equal(ri_sandbox_status_of(fx.sb), RI_SANDBOX_SUSPENDED);
    assert_true(ri_sandbox_snapshot(fx.sb, &snap, &len, &err));
    ri_sandbox_result r = ri_sandbox_execute(fx.sb, "add", "[1,2]");
    assert_string_equal(r.error.message, "Cannot execute: instance status is 'suspended'");
    ri_sandbox_result_free(&r);
    assert_true(ri_sandbox_restore(fx.sb, snap, len, &err));
    assert_int_equal(ri_sandbox_status_of(fx.sb), RI_SANDBOX_LOADED);
    expect_json(fx.sb, "add", "[1,2]", "3");
    free(snap);
    close_fixture(&fx);
}

/* ---- the instruction gas schedule ----------------------------------------------------------------------- */

static void instruction_gas_reports_what_was_consumed(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = 1000;
    fixture fx = open_fixture(&c, "sb_impl_main");
    assert_true(fx.loaded);
    ri_sandbox_result r = ri_sandbox_execute(fx.sb, "spin", NULL);
    assert_int_equal(r.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    assert_int_equal(r.error.gas_limit, 1000);
    assert_true(r.error.gas_used <= 1000 && r.error.gas_used > 900);
    assert_int_equal(ri_sandbox_get_metrics(fx.sb).gas_used, r.error.gas_used);
    ri_sandbox_result_free(&r);
    /* The same run, the same report. */
    r = ri_sandbox_execute(fx.sb, "spin_host", NULL);
    uint64_t first = r.error.gas_used;
    assert_int_equal(r.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(fx.sb, "spin_host", NULL);
    assert_int_equal(r.error.gas_used, first);
    ri_sandbox_result_free(&r);
    /* A small function fits and costs the same each time. */
    r = ri_sandbox_execute(fx.sb, "fib", "10");
    assert_true(r.ok);
    uint64_t cost = r.gas_used;
    assert_true(cost > 11); /* 11 host calls and the instructions */
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(fx.sb, "fib", "10");
    assert_int_equal(r.gas_used, cost);
    ri_sandbox_result_free(&r);
    close_fixture(&fx);
}

static void determinism_check_restores_everything(void **state) {
    (void)state;
    ri_sandbox_config c = base_config();
    fixture fx = open_fixture(&c, "sb_impl_own_memory");
    assert_true(fx.loaded);
    ri_sandbox_error err;
    bool deterministic = false;
    assert_true(ri_sandbox_check_determinism(fx.sb, "grow", "1", &deterministic, &err));
    assert_true(deterministic);
    expect_json(fx.sb, "pages", NULL, "2"); /* the memory is back to its size */
    assert_true(ri_sandbox_check_determinism(fx.sb, "tgrow", NULL, &deterministic, &err));
    assert_true(deterministic);
    assert_true(ri_sandbox_check_determinism(fx.sb, "gincr", NULL, &deterministic, &err));
    assert_true(deterministic);
    expect_json(fx.sb, "gincr", NULL, "1"); /* the global is back at 0 */
    close_fixture(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(js_numbers_as_number_to_string),
        cmocka_unit_test(json_payload_is_written_as_javascript_writes_it),
        cmocka_unit_test(json_i64_result_beyond_64k),
        cmocka_unit_test(json_errors_are_clear),
        cmocka_unit_test(direct_values_as_javascript_numbers),
        cmocka_unit_test(traps_map_precisely),
        cmocka_unit_test(kind_and_signature_mismatches_are_load_errors),
        cmocka_unit_test(host_signature_mismatch_names_both_types),
        cmocka_unit_test(memory_import_above_the_limit_is_refused),
        cmocka_unit_test(env_memory_is_sized_to_the_import),
        cmocka_unit_test(invalid_configs_are_refused),
        cmocka_unit_test(dropped_data_segment_is_refused_then_restored),
        cmocka_unit_test(own_memory_is_clamped_by_the_limit),
        cmocka_unit_test(state_json_fields_are_checked),
        cmocka_unit_test(suspend_is_idempotent_and_restore_resumes),
        cmocka_unit_test(instruction_gas_reports_what_was_consumed),
        cmocka_unit_test(determinism_check_restores_everything),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
