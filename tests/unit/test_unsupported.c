/*
 * Features of later WebAssembly versions that the engine does not implement are refused
 * at load with RI_ERR_UNSUPPORTED and a message naming the feature, never taken for
 * malformed input: relaxed SIMD (0xfd sub-opcodes from 0x100), threads (0xfe, shared
 * memories), typed function references, tables and mutable globals of exnref (exception
 * handling: an exception reference does not outlive its call), tags with v128 values,
 * 64-bit tables. What
 * WebAssembly 2.0's own spec tests call malformed stays malformed (a limits flag of 2), with
 * the feature named where there is one. (SIMD, tail calls, exception handling in both forms,
 * multiple and 64-bit memories are implemented: test_simd_suspend.c, test_tail_call.c,
 * test_exceptions.c, test_try_table.c, test_multi_memory.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ri/engine.h"

typedef struct {
    const char *what;
    const uint8_t *bytes;
    size_t len;
    ri_errcode code;
    const char *message_has;
} load_case;

#define HDR 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00
/* type 0: [] -> [] */
#define TYPE_VOID 0x01, 0x04, 0x01, 0x60, 0x00, 0x00
#define FUNC_0 0x03, 0x02, 0x01, 0x00

/* (func (param v128 v128) (result v128) local.get 1) */
static const uint8_t v128_params[] = {HDR, 0x01, 0x07, 0x01, 0x60, 0x02, 0x7b, 0x7b, 0x01, 0x7b, FUNC_0,
                                      0x0a, 0x06, 0x01, 0x04, 0x00, 0x20, 0x01, 0x0b};
/* (func (local v128)) */
static const uint8_t v128_local[] = {HDR, TYPE_VOID, FUNC_0, 0x0a, 0x06, 0x01, 0x04, 0x01, 0x01, 0x7b, 0x0b};
/* (func unreachable (select (result v128)) drop) */
static const uint8_t v128_select[] = {HDR, TYPE_VOID, FUNC_0, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x00, 0x1c, 0x01, 0x7b, 0x1a, 0x0b};
/* (func v128.const 0 ... drop) */
static const uint8_t simd_op[] = {HDR, TYPE_VOID, FUNC_0, 0x0a, 0x17, 0x01, 0x15, 0x00, 0xfd, 0x0c,
                                  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a, 0x0b};
/* (func unreachable i32x4.relaxed_trunc_f32x4_s drop): 0xfd 0x101 */
static const uint8_t relaxed_simd_op[] = {HDR, TYPE_VOID, FUNC_0, 0x0a, 0x08, 0x01, 0x06, 0x00, 0x00, 0xfd, 0x81, 0x02, 0x0b};
/* (memory 1 1 shared) */
static const uint8_t shared_memory[] = {HDR, 0x05, 0x04, 0x01, 0x03, 0x01, 0x01};
/* (table i64 1 funcref): 64-bit memories are implemented, 64-bit tables not */
static const uint8_t table64[] = {HDR, 0x04, 0x04, 0x01, 0x70, 0x04, 0x01};
/* limits flag 2: 2.0's spec tests say "integer too large" (malformed) */
static const uint8_t flag2[] = {HDR, 0x05, 0x03, 0x01, 0x02, 0x01};
/* (func i32.const 0 i32.atomic.load drop) with a memory */
static const uint8_t atomic_op[] = {HDR, TYPE_VOID, FUNC_0, 0x05, 0x03, 0x01, 0x00, 0x01,
                                    0x0a, 0x0b, 0x01, 0x09, 0x00, 0x41, 0x00, 0xfe, 0x10, 0x02, 0x00, 0x1a, 0x0b};
/* (table 1 exnref), (global (mut exnref) (ref.null exn)) */
static const uint8_t exnref_table[] = {HDR, 0x04, 0x04, 0x01, 0x69, 0x00, 0x01};
static const uint8_t exnref_global[] = {HDR, 0x06, 0x06, 0x01, 0x69, 0x01, 0xd0, 0x69, 0x0b};
/* (tag (param v128)): an exception's values are one slot each */
static const uint8_t v128_tag[] = {HDR, 0x01, 0x05, 0x01, 0x60, 0x01, 0x7b, 0x00, 0x0d, 0x03, 0x01, 0x00, 0x00};
/* (func ref.null func call_ref 0) */
static const uint8_t call_ref[] = {HDR, TYPE_VOID, FUNC_0, 0x0a, 0x08, 0x01, 0x06, 0x00, 0xd0, 0x70, 0x14, 0x00, 0x0b};
/* 0xf3 stays an illegal opcode */
static const uint8_t illegal[] = {HDR, TYPE_VOID, FUNC_0, 0x0a, 0x04, 0x01, 0x02, 0x00, 0xf3};

#define CASE(what, arr, code, has) {what, arr, sizeof arr, code, has}
static const load_case cases[] = {
    CASE("relaxed SIMD instruction", relaxed_simd_op, RI_ERR_UNSUPPORTED, "relaxed SIMD"),
    CASE("shared memory", shared_memory, RI_ERR_UNSUPPORTED, "threads"),
    CASE("64-bit table", table64, RI_ERR_UNSUPPORTED, "memory64"),
    CASE("limits flag 2", flag2, RI_ERR_MALFORMED, "integer too large"),
    CASE("atomic instruction", atomic_op, RI_ERR_UNSUPPORTED, "threads"),
    CASE("exnref table", exnref_table, RI_ERR_UNSUPPORTED, "exception handling: a table of exnref"),
    CASE("mutable exnref global", exnref_global, RI_ERR_UNSUPPORTED, "exception handling: a mutable exnref global"),
    CASE("tag with a v128", v128_tag, RI_ERR_UNSUPPORTED, "exception handling: a tag with a v128 value"),
    CASE("call_ref", call_ref, RI_ERR_UNSUPPORTED, "typed function references"),
    CASE("illegal opcode", illegal, RI_ERR_MALFORMED, "illegal opcode"),
};

static void test_features_named(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ri_error err;
        memset(&err, 0, sizeof err);
        ri_module *m = ri_module_load(cases[i].bytes, cases[i].len, NULL, &err);
        if (m) {
            ri_module_free(m);
            fail_msg("%s: loaded", cases[i].what);
        }
        if (err.code != cases[i].code || !strstr(err.message, cases[i].message_has))
            fail_msg("%s: got %s \"%s\", want %s with \"%s\"", cases[i].what, ri_errcode_name(err.code),
                     err.message, ri_errcode_name(cases[i].code), cases[i].message_has);
    }
}

/* Fixed-width SIMD loads: v128 parameters, locals, select types, v128.const. */
static void test_simd_loads(void **state) {
    (void)state;
    static const struct { const char *what; const uint8_t *bytes; size_t len; } ok[] = {
        {"v128 parameters", v128_params, sizeof v128_params}, {"v128 local", v128_local, sizeof v128_local},
        {"v128 select type", v128_select, sizeof v128_select},
        {"v128.const", simd_op, sizeof simd_op},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ri_error err;
        memset(&err, 0, sizeof err);
        ri_module *m = ri_module_load(ok[i].bytes, ok[i].len, NULL, &err);
        if (!m) fail_msg("%s: %s", ok[i].what, err.message);
        ri_module_free(m);
    }
}

/* The new code has a name of its own (ri validate and the other tools print it). */
static void test_errcode_has_a_name(void **state) {
    (void)state;
    assert_string_equal(ri_errcode_name(RI_ERR_UNSUPPORTED), "unsupported");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_features_named),
        cmocka_unit_test(test_simd_loads),
        cmocka_unit_test(test_errcode_has_a_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
