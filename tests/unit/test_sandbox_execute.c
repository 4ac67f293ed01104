/*
 * Execution and its calling conventions (seed 001 §2 execute, reference "execute"):
 * the guards in order, the direct convention (numbers typed per the export's signature:
 * missing arguments 0, extra ignored, i32 truncated to 32 bits, i64 exact, f32/f64),
 * the JSON convention (__alloc, UTF-8 payload in memory, the 16+16 packed i32 result and
 * our 32+32 packed i64 result, bounds-checked), and precisely typed traps.
 * Fixtures: tests/wat/sb_add.wat, sb_types.wat, sb_json.wat, sb_traps.wat.
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

static env open_env(const char *fixture) {
    ri_sandbox_config c = test_config();
    return open_env_cfg(fixture, &c);
}

/* Drops whitespace outside strings, so "[1, 2]" and "[1,2]" compare equal. */
static void squash_json(const char *in, char *out, size_t cap) {
    size_t o = 0;
    bool in_string = false, escaped = false;
    for (const char *p = in; *p && o + 1 < cap; p++) {
        char ch = *p;
        if (in_string) {
            if (escaped) escaped = false;
            else if (ch == '\\') escaped = true;
            else if (ch == '"') in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
            continue;
        }
        out[o++] = ch;
    }
    out[o] = '\0';
}

static void assert_json(const char *got, const char *want) {
    if (!got) {
        print_error("value_json is NULL, expected %s\n", want);
        fail();
    }
    char a[1024], b[1024];
    squash_json(got, a, sizeof a);
    squash_json(want, b, sizeof b);
    assert_string_equal(a, b);
}

/* Executes, expects success and the given value (compared as JSON text). */
static ri_sandbox_result exec_value(ri_sandbox *sb, const char *action, const char *payload,
                                      const char *want) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    assert_json(r.value_json, want);
    return r;
}

static void check_value(ri_sandbox *sb, const char *action, const char *payload, const char *want) {
    ri_sandbox_result r = exec_value(sb, action, payload, want);
    ri_sandbox_result_free(&r);
}

static int32_t exec_i32(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.nresults, 1);
    assert_int_equal(r.results[0].type, RI_I32);
    int32_t v = r.results[0].of.i32;
    ri_sandbox_result_free(&r);
    return v;
}

static uint64_t f64_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static ri_val val_f64(double d) {
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = RI_F64;
    v.of.f64_bits = f64_bits(d);
    return v;
}

static ri_val val_f32(float f) {
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = RI_F32;
    v.of.f32_bits = f32_bits(f);
    return v;
}

/* Expects a WASM_TRAP of this kind (message checked when given, else non-empty); the
 * sandbox is `loaded` again afterwards. */
static void expect_trap(ri_sandbox *sb, const char *action, const char *payload, const char *kind,
                        const char *message) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(r.error.trap_kind, kind);
    if (message) assert_string_equal(r.error.message, message);
    else assert_true(strlen(r.error.message) > 0);
    assert_null(r.value_json);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
}

/* ---- guards ---------------------------------------------------------------------------- */

static void missing_export_is_trap_with_name(void **state) {
    (void)state;
    env e = open_env("sb_add");
    expect_trap(e.sb, "nonExistentFunction", "[1,2]", "missing_export",
                "WASM module does not export a function named 'nonExistentFunction'");
    close_env(&e);
}

static void memory_export_is_not_a_function(void **state) {
    (void)state;
    env e = open_env("sb_types");
    expect_trap(e.sb, "mem", NULL, "missing_export",
                "WASM module does not export a function named 'mem'");
    close_env(&e);
}

static void global_export_is_not_a_function(void **state) {
    (void)state;
    env e = open_env("sb_types");
    expect_trap(e.sb, "g", NULL, "missing_export", "WASM module does not export a function named 'g'");
    close_env(&e);
}

static void empty_module_has_no_exports(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    static const uint8_t minimal[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
    assert_true(ri_sandbox_load(sb, minimal, sizeof minimal, &err));
    expect_trap(sb, "anything", "[]", "missing_export",
                "WASM module does not export a function named 'anything'");
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void suspended_is_checked_before_export(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(e.sb, &err));
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "noSuchExport", NULL);
    assert_false(r.ok);
    assert_string_equal(r.error.trap_kind, "invalid_state");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

/* ---- direct convention --------------------------------------------------------------------- */

static void add_3_7_is_10(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_sandbox_result r = exec_value(e.sb, "add", "[3,7]", "10");
    assert_int_equal(r.nresults, 1);
    assert_int_equal(r.results[0].type, RI_I32);
    assert_int_equal(r.results[0].of.i32, 10);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void add_zero_and_negative(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", "[0,0]", "0");
    check_value(e.sb, "add", "[-5,3]", "-2");
    close_env(&e);
}

static void null_payload_means_no_arguments(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", NULL, "0");
    check_value(e.sb, "add", "null", "0");
    close_env(&e);
}

static void empty_array_means_no_arguments(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", "[]", "0");
    close_env(&e);
}

static void single_number_is_first_argument(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", "5", "5");
    close_env(&e);
}

static void missing_arguments_are_zero(void **state) {
    (void)state;
    env e = open_env("sb_types");
    check_value(e.sb, "add3", "[1,2]", "3");
    check_value(e.sb, "add3", "[7]", "7");
    close_env(&e);
}

static void extra_arguments_are_ignored(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", "[1,2,3]", "3");
    check_value(e.sb, "add", "[1,2,100,200,300]", "3");
    close_env(&e);
}

static void i32_arguments_wrap_to_32_bits(void **state) {
    (void)state;
    env e = open_env("sb_add");
    /* 2^32 + 1 -> 1 */
    check_value(e.sb, "add", "[4294967297,1]", "2");
    /* 2^32 - 1 -> -1 */
    check_value(e.sb, "add", "[4294967295,1]", "0");
    /* 2^31 -> -2^31 */
    check_value(e.sb, "add", "[2147483648,0]", "-2147483648");
    close_env(&e);
}

static void fractional_i32_argument_truncates(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", "[2.9,0]", "2");
    check_value(e.sb, "add", "[-2.9,0]", "-2");
    close_env(&e);
}

static void i32_sum_wraps(void **state) {
    (void)state;
    env e = open_env("sb_add");
    check_value(e.sb, "add", "[2147483647,1]", "-2147483648");
    close_env(&e);
}

static void negative_i32_result(void **state) {
    (void)state;
    env e = open_env("sb_types");
    check_value(e.sb, "negI32", NULL, "-7");
    close_env(&e);
}

static void i64_result_is_exact_beyond_2_pow_53(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "pow53plus1", NULL, "9007199254740993");
    assert_int_equal(r.nresults, 1);
    assert_int_equal(r.results[0].type, RI_I64);
    assert_true(r.results[0].of.i64 == INT64_C(9007199254740993));
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void i64_minimum_is_exact(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "minI64", NULL, "-9223372036854775808");
    assert_true(r.results[0].of.i64 == INT64_MIN);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void i64_argument_is_exact(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "id64", "[9007199254740993]", "9007199254740993");
    assert_true(r.results[0].of.i64 == INT64_C(9007199254740993));
    ri_sandbox_result_free(&r);
    check_value(e.sb, "id64", "[-9223372036854775807]", "-9223372036854775807");
    check_value(e.sb, "id64", "[9223372036854775807]", "9223372036854775807");
    check_value(e.sb, "add64", "[4294967296,4294967296]", "8589934592");
    close_env(&e);
}

static void typed_call_with_i64(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_val args[2] = {ri_val_i64(INT64_C(1) << 62), ri_val_i64(1)};
    ri_sandbox_result r = ri_sandbox_call(e.sb, "add64", args, 2);
    assert_true(r.ok);
    assert_int_equal(r.nresults, 1);
    assert_int_equal(r.results[0].type, RI_I64);
    assert_true(r.results[0].of.i64 == (INT64_C(1) << 62) + 1);
    assert_json(r.value_json, "4611686018427387905");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void typed_call_with_i32(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_val args[2] = {ri_val_i32(17), ri_val_i32(25)};
    ri_sandbox_result r = ri_sandbox_call(e.sb, "add", args, 2);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 42);
    assert_json(r.value_json, "42");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void typed_call_missing_arguments_are_zero(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_val args[1] = {ri_val_i32(17)};
    ri_sandbox_result r = ri_sandbox_call(e.sb, "add", args, 1);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 17);
    ri_sandbox_result_free(&r);
    r = ri_sandbox_call(e.sb, "add", NULL, 0);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 0);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void typed_call_with_wrong_type_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_val args[2] = {val_f64(1.0), ri_val_i32(2)};
    ri_sandbox_result r = ri_sandbox_call(e.sb, "add", args, 2);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_true(strlen(r.error.message) > 0);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void typed_call_missing_export(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_sandbox_result r = ri_sandbox_call(e.sb, "sub", NULL, 0);
    assert_false(r.ok);
    assert_string_equal(r.error.trap_kind, "missing_export");
    assert_string_equal(r.error.message, "WASM module does not export a function named 'sub'");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void f32_arguments(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "addF32", "[0.5,0.25]", "0.75");
    assert_int_equal(r.results[0].type, RI_F32);
    assert_int_equal(r.results[0].of.f32_bits, f32_bits(0.75f));
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void f64_arguments(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "mulF64", "[1.5,2.5]", "3.75");
    assert_int_equal(r.results[0].type, RI_F64);
    assert_true(r.results[0].of.f64_bits == f64_bits(3.75));
    ri_sandbox_result_free(&r);
    check_value(e.sb, "mulF64", "[-2,8]", "-16");
    close_env(&e);
}

static void mixed_parameter_types(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "mixed", "[1,2,3.5,4.25]", "10.75");
    assert_true(r.results[0].of.f64_bits == f64_bits(10.75));
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void typed_call_with_floats(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_val args[2] = {val_f64(1.5), val_f64(-4.0)};
    ri_sandbox_result r = ri_sandbox_call(e.sb, "mulF64", args, 2);
    assert_true(r.ok);
    assert_true(r.results[0].of.f64_bits == f64_bits(-6.0));
    ri_sandbox_result_free(&r);
    ri_val fargs[2] = {val_f32(1.25f), val_f32(2.0f)};
    r = ri_sandbox_call(e.sb, "addF32", fargs, 2);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.f32_bits, f32_bits(3.25f));
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void typed_call_with_every_type(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_val args[4] = {ri_val_i32(-1), ri_val_i64(INT64_C(1) << 40), val_f32(0.5f), val_f64(0.25)};
    ri_sandbox_result r = ri_sandbox_call(e.sb, "mixed", args, 4);
    assert_true(r.ok);
    assert_true(r.results[0].of.f64_bits == f64_bits(-1.0 + 1099511627776.0 + 0.5 + 0.25));
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void several_results_are_an_array(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = exec_value(e.sb, "pair", NULL, "[1,2]");
    assert_int_equal(r.nresults, 2);
    assert_int_equal(r.results[0].of.i32, 1);
    assert_int_equal(r.results[1].of.i32, 2);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void void_function_has_no_value(void **state) {
    (void)state;
    env e = open_env("sb_types");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "nothing", NULL);
    assert_true(r.ok);
    assert_null(r.value_json);
    assert_int_equal(r.nresults, 0);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void ten_executions_in_a_row(void **state) {
    (void)state;
    env e = open_env("sb_add");
    for (int i = 0; i < 10; i++) {
        char payload[32];
        snprintf(payload, sizeof payload, "[%d,%d]", i, i * 2);
        assert_int_equal(exec_i32(e.sb, "add", payload), 3 * i);
    }
    close_env(&e);
}

/* ---- JSON convention ---------------------------------------------------------------------------- */

static void json_object_round_trips(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":2}");
    close_env(&e);
}

static void json_alloc_gets_payload_length(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":2}");
    assert_int_equal(exec_i32(e.sb, "lastAllocLen", NULL), 13);
    close_env(&e);
}

static void json_payload_is_utf8_bytes(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "\"h\xc3\xa9llo\"", "\"h\xc3\xa9llo\"");
    /* Two quotes, h, two bytes for é, llo: 8 bytes, not 7 characters. */
    assert_int_equal(exec_i32(e.sb, "lastAllocLen", NULL), 8);
    close_env(&e);
}

static void json_string_payload(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "\"hello\"", "\"hello\"");
    close_env(&e);
}

static void json_boolean_payload(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "true", "true");
    close_env(&e);
}

static void json_nested_array_payload(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "[[1,2],3]", "[[1,2],3]");
    close_env(&e);
}

static void json_array_with_string_payload(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo", "[1,\"x\"]", "[1,\"x\"]");
    close_env(&e);
}

static void json_result_from_module_memory(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "constant", "{}", "{\"ok\":true,\"n\":42}");
    close_env(&e);
}

static void json_zero_length_result_is_no_value(void **state) {
    (void)state;
    env e = open_env("sb_json");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "nothing", "{\"x\":1}");
    assert_true(r.ok);
    assert_null(r.value_json);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void json_without_alloc_is_runtime_error(void **state) {
    (void)state;
    env e = open_env("sb_add");
    expect_trap(e.sb, "add", "{\"a\":1,\"b\":2}", "runtime_error",
                "JSON payload requires WASM module to export '__alloc', but 'add' was called "
                "with a non-numeric payload");
    close_env(&e);
}

static void json_string_without_alloc_is_runtime_error(void **state) {
    (void)state;
    env e = open_env("sb_add");
    expect_trap(e.sb, "add", "\"text\"", "runtime_error",
                "JSON payload requires WASM module to export '__alloc', but 'add' was called "
                "with a non-numeric payload");
    close_env(&e);
}

static void json_packed_length_is_unsigned(void **state) {
    (void)state;
    env e = open_env("sb_json");
    /* (40000 << 16 | 100) is negative as an i32; the length is still 40000. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "big32", "{}");
    if (!r.ok) print_error("big32: %s\n", r.error.message);
    assert_true(r.ok);
    assert_non_null(r.value_json);
    assert_int_equal(strlen(r.value_json), 40000);
    assert_int_equal(r.value_json[0], '"');
    assert_int_equal(r.value_json[1], 'b');
    assert_int_equal(r.value_json[39999], '"');
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void json_i64_result_beyond_64k(void **state) {
    (void)state;
    env e = open_env("sb_json");
    /* 100000 bytes at 70000: neither fits the 16+16 convention. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "big64", "{}");
    if (!r.ok) print_error("big64: %s\n", r.error.message);
    assert_true(r.ok);
    assert_non_null(r.value_json);
    assert_int_equal(strlen(r.value_json), 100000);
    assert_int_equal(r.value_json[0], '"');
    for (size_t i = 1; i < 99999; i++) {
        if (r.value_json[i] != 'a') {
            print_error("byte %zu is %d\n", i, r.value_json[i]);
            fail();
        }
    }
    assert_int_equal(r.value_json[99999], '"');
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void json_i64_echo(void **state) {
    (void)state;
    env e = open_env("sb_json");
    check_value(e.sb, "echo64", "{\"k\":[1,2,3]}", "{\"k\":[1,2,3]}");
    close_env(&e);
}

static void json_i32_result_out_of_bounds_is_error(void **state) {
    (void)state;
    env e = open_env("sb_json");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "oob", "{}");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_true(strlen(r.error.message) > 0);
    assert_null(r.value_json);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void json_i64_result_out_of_bounds_is_error(void **state) {
    (void)state;
    env e = open_env("sb_json");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "oob64", "{}");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_true(strlen(r.error.message) > 0);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void json_result_that_is_not_json_is_error(void **state) {
    (void)state;
    env e = open_env("sb_json");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "badJson", "{}");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_true(strlen(r.error.message) > 0);
    ri_sandbox_result_free(&r);
    /* The sandbox is still usable. */
    check_value(e.sb, "echo", "[\"ok\"]", "[\"ok\"]");
    close_env(&e);
}

static void direct_payload_on_json_module(void **state) {
    (void)state;
    env e = open_env("sb_json");
    /* An array of numbers stays direct even when __alloc exists: echo(5, 6). */
    assert_int_equal(exec_i32(e.sb, "echo", "[5,6]"), (6 << 16) | 5);
    assert_int_equal(exec_i32(e.sb, "lastAllocLen", NULL), -1);
    close_env(&e);
}

static void large_number_wraps_like_to_int32(void **state) {
    (void)state;
    env e = open_env("sb_add");
    /* ToInt32(1e20) = 1e20 mod 2^32 = 1661992960. */
    check_value(e.sb, "add", "[1e20,0]", "1661992960");
    /* Beyond 64 bits: read as the double 12345678901234567168, then ToInt32. */
    check_value(e.sb, "add", "[12345678901234567890,0]", "-350287872");
    close_env(&e);
}

static void f32_result_reads_as_its_double(void **state) {
    (void)state;
    env e = open_env("sb_types");
    /* 0.1f + 0.2f, widened to a double and written as JavaScript writes numbers. */
    check_value(e.sb, "addF32", "[0.1,0.2]", "0.30000001192092896");
    close_env(&e);
}

static void f64_results_use_shortest_round_trip_digits(void **state) {
    (void)state;
    env e = open_env("sb_types");
    check_value(e.sb, "mulF64", "[0.1,3]", "0.30000000000000004");
    check_value(e.sb, "mulF64", "[1e21,1]", "1e+21");
    check_value(e.sb, "mulF64", "[1e20,1]", "100000000000000000000");
    check_value(e.sb, "mulF64", "[0.000001,1]", "0.000001");
    check_value(e.sb, "mulF64", "[1e-7,1]", "1e-7");
    close_env(&e);
}

static void malformed_payload_is_a_clear_error(void **state) {
    (void)state;
    env e = open_env("sb_add");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "add", "[1,");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_true(strlen(r.error.message) > 0);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void json_payload_is_written_compact(void **state) {
    (void)state;
    env e = open_env("sb_json");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "echo", "{ \"a\" : 1 ,\n \"b\" : [ 1 , 2 ] }");
    assert_true(r.ok);
    /* JSON.stringify's bytes: no whitespace at all. */
    assert_string_equal(r.value_json, "{\"a\":1,\"b\":[1,2]}");
    ri_sandbox_result_free(&r);
    assert_int_equal(exec_i32(e.sb, "lastAllocLen", NULL), 17);
    close_env(&e);
}

static void json_payload_numbers_written_as_javascript_does(void **state) {
    (void)state;
    env e = open_env("sb_json");
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "echo", "[1.50,1e3,-0.0,\"x\"]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "[1.5,1000,0,\"x\"]");
    ri_sandbox_result_free(&r);
    assert_int_equal(exec_i32(e.sb, "lastAllocLen", NULL), 16);
    close_env(&e);
}

static void json_payload_keys_in_javascript_order(void **state) {
    (void)state;
    env e = open_env("sb_json");
    /* JavaScript objects list array-index keys first, ascending, then the rest in
     * insertion order: the module sees the original's bytes. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "echo", "{\"b\":1,\"a\":2,\"10\":3,\"2\":4}");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "{\"2\":4,\"10\":3,\"b\":1,\"a\":2}");
    ri_sandbox_result_free(&r);
    /* The bytes in memory (the first allocation is at 1024) are in that order too. */
    static const char want[] = "{\"2\":4,\"10\":3,";
    for (int i = 0; want[i]; i++) {
        char payload[16];
        snprintf(payload, sizeof payload, "%d", 1024 + i);
        assert_int_equal(exec_i32(e.sb, "peek", payload), (unsigned char)want[i]);
    }
    close_env(&e);
}

static void json_payload_unicode_escapes_become_utf8(void **state) {
    (void)state;
    env e = open_env("sb_json");
    /* JSON.stringify writes é itself, not \u00e9: 4 bytes. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "echo", "\"\\u00e9\"");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "\"\xc3\xa9\"");
    ri_sandbox_result_free(&r);
    assert_int_equal(exec_i32(e.sb, "lastAllocLen", NULL), 4);
    close_env(&e);
}

static void json_payload_big_integers_read_as_doubles(void **state) {
    (void)state;
    env e = open_env("sb_json");
    /* JavaScript holds 12345678901234567890 as 12345678901234567168 and writes it
     * with 17 significant digits. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "echo", "[12345678901234567890,\"x\"]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "[12345678901234567000,\"x\"]");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void json_alloc_pointer_out_of_bounds_is_error(void **state) {
    (void)state;
    env e = open_env("sb_json_badalloc");
    /* 14 bytes at 65530 do not fit a 65536-byte memory. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "echo", "{\"abcdefgh\":1}");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_true(strlen(r.error.message) > 0);
    ri_sandbox_result_free(&r);
    /* A payload that fits is fine. */
    ri_sandbox_result ok = ri_sandbox_execute(e.sb, "echo", "\"a\"");
    assert_true(ok.ok);
    assert_string_equal(ok.value_json, "\"a\"");
    ri_sandbox_result_free(&ok);
    close_env(&e);
}

/* ---- traps -------------------------------------------------------------------------------------- */

static void unreachable_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "unreachable", NULL, "unreachable", NULL);
    close_env(&e);
}

static void integer_divide_by_zero_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "div0", "[1,0]", "integer_divide_by_zero", NULL);
    assert_int_equal(exec_i32(e.sb, "div0", "[7,2]"), 3);
    close_env(&e);
}

static void integer_overflow_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "overflow", NULL, "integer_overflow", NULL);
    close_env(&e);
}

static void invalid_conversion_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "badConversion", NULL, "invalid_conversion", NULL);
    close_env(&e);
}

static void out_of_bounds_memory_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "oobMemory", NULL, "out_of_bounds_memory", NULL);
    close_env(&e);
}

static void out_of_bounds_table_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "oobTable", NULL, "out_of_bounds_table", NULL);
    close_env(&e);
}

static void uninitialized_element_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    assert_int_equal(exec_i32(e.sb, "callSlot", "0"), 7);
    expect_trap(e.sb, "callSlot", "2", "uninitialized_element", NULL);
    close_env(&e);
}

static void undefined_element_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "callSlot", "5", "undefined_element", NULL);
    close_env(&e);
}

static void indirect_call_type_mismatch_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "callSlot", "1", "indirect_call_type_mismatch", NULL);
    close_env(&e);
}

static void call_stack_exhausted_trap(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    expect_trap(e.sb, "recurse", "0", "call_stack_exhausted", NULL);
    /* The sandbox recovers fully. */
    assert_int_equal(exec_i32(e.sb, "depth", "100"), 100);
    close_env(&e);
}

static void trap_messages_are_stable(void **state) {
    (void)state;
    env e = open_env("sb_traps");
    char first[512];
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "div0", "[1,0]");
    assert_false(r.ok);
    snprintf(first, sizeof first, "%s", r.error.message);
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(e.sb, "div0", "[5,0]");
    assert_false(r.ok);
    assert_string_equal(r.error.message, first);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void max_call_depth_is_configurable(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.max_call_depth = 100;
    env e = open_env_cfg("sb_traps", &c);
    assert_int_equal(exec_i32(e.sb, "depth", "50"), 50);
    expect_trap(e.sb, "depth", "500", "call_stack_exhausted", NULL);
    assert_int_equal(exec_i32(e.sb, "depth", "10"), 10);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_export_is_trap_with_name),
        cmocka_unit_test(memory_export_is_not_a_function),
        cmocka_unit_test(global_export_is_not_a_function),
        cmocka_unit_test(empty_module_has_no_exports),
        cmocka_unit_test(suspended_is_checked_before_export),
        cmocka_unit_test(add_3_7_is_10),
        cmocka_unit_test(add_zero_and_negative),
        cmocka_unit_test(null_payload_means_no_arguments),
        cmocka_unit_test(empty_array_means_no_arguments),
        cmocka_unit_test(single_number_is_first_argument),
        cmocka_unit_test(missing_arguments_are_zero),
        cmocka_unit_test(extra_arguments_are_ignored),
        cmocka_unit_test(i32_arguments_wrap_to_32_bits),
        cmocka_unit_test(fractional_i32_argument_truncates),
        cmocka_unit_test(i32_sum_wraps),
        cmocka_unit_test(negative_i32_result),
        cmocka_unit_test(i64_result_is_exact_beyond_2_pow_53),
        cmocka_unit_test(i64_minimum_is_exact),
        cmocka_unit_test(i64_argument_is_exact),
        cmocka_unit_test(typed_call_with_i64),
        cmocka_unit_test(typed_call_with_i32),
        cmocka_unit_test(typed_call_missing_arguments_are_zero),
        cmocka_unit_test(typed_call_with_wrong_type_is_refused),
        cmocka_unit_test(typed_call_missing_export),
        cmocka_unit_test(f32_arguments),
        cmocka_unit_test(f64_arguments),
        cmocka_unit_test(mixed_parameter_types),
        cmocka_unit_test(typed_call_with_floats),
        cmocka_unit_test(typed_call_with_every_type),
        cmocka_unit_test(several_results_are_an_array),
        cmocka_unit_test(void_function_has_no_value),
        cmocka_unit_test(ten_executions_in_a_row),
        cmocka_unit_test(json_object_round_trips),
        cmocka_unit_test(json_alloc_gets_payload_length),
        cmocka_unit_test(json_payload_is_utf8_bytes),
        cmocka_unit_test(json_string_payload),
        cmocka_unit_test(json_boolean_payload),
        cmocka_unit_test(json_nested_array_payload),
        cmocka_unit_test(json_array_with_string_payload),
        cmocka_unit_test(json_result_from_module_memory),
        cmocka_unit_test(json_zero_length_result_is_no_value),
        cmocka_unit_test(json_without_alloc_is_runtime_error),
        cmocka_unit_test(json_string_without_alloc_is_runtime_error),
        cmocka_unit_test(json_packed_length_is_unsigned),
        cmocka_unit_test(json_i64_result_beyond_64k),
        cmocka_unit_test(json_i64_echo),
        cmocka_unit_test(json_i32_result_out_of_bounds_is_error),
        cmocka_unit_test(json_i64_result_out_of_bounds_is_error),
        cmocka_unit_test(json_result_that_is_not_json_is_error),
        cmocka_unit_test(direct_payload_on_json_module),
        cmocka_unit_test(large_number_wraps_like_to_int32),
        cmocka_unit_test(f32_result_reads_as_its_double),
        cmocka_unit_test(f64_results_use_shortest_round_trip_digits),
        cmocka_unit_test(malformed_payload_is_a_clear_error),
        cmocka_unit_test(json_payload_is_written_compact),
        cmocka_unit_test(json_payload_numbers_written_as_javascript_does),
        cmocka_unit_test(json_payload_keys_in_javascript_order),
        cmocka_unit_test(json_payload_unicode_escapes_become_utf8),
        cmocka_unit_test(json_payload_big_integers_read_as_doubles),
        cmocka_unit_test(json_alloc_pointer_out_of_bounds_is_error),
        cmocka_unit_test(unreachable_trap),
        cmocka_unit_test(integer_divide_by_zero_trap),
        cmocka_unit_test(integer_overflow_trap),
        cmocka_unit_test(invalid_conversion_trap),
        cmocka_unit_test(out_of_bounds_memory_trap),
        cmocka_unit_test(out_of_bounds_table_trap),
        cmocka_unit_test(uninitialized_element_trap),
        cmocka_unit_test(undefined_element_trap),
        cmocka_unit_test(indirect_call_type_mismatch_trap),
        cmocka_unit_test(call_stack_exhausted_trap),
        cmocka_unit_test(trap_messages_are_stable),
        cmocka_unit_test(max_call_depth_is_configurable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
