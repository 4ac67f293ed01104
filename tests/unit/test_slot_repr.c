/*
 * The value-slot representation rule (docs/ARCHITECTURE.md, invariant 10): an i32 or f32
 * in a 64-bit slot is its bits zero-extended, and every reader takes (uint32_t)slot.i64.
 * Each test writes a 32-bit value one way (the embedder API, WebAssembly code, a constant
 * expression) and reads it another, and checks the slot's 64 bits too. On a little-endian
 * machine a reader of a 32-bit union member would pass these by luck; on a big-endian one
 * (s390x, run by scripts/check-cross.sh) it read the upper half, 0. The compiler enforces
 * the rule on every machine: ri_slot has no 32-bit member (the compile test
 * unit/slot_has_no_32bit_member).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/runtime.h"
#include "engine_fixture.h"

#define OFF 0x1234u           /* the imported global $off: a data segment's offset */
#define F_BITS 0x80800001u    /* the initial value of global $f: -0x1.000002p-126 */

typedef struct fx {
    ri_module *module;
    ri_store *store;
    ri_instance *inst;
    ri_global *mg;
    uint32_t host_a, host_b; /* what the host function was given */
} fx;

static int host(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    fx *f = user;
    f->host_a = (uint32_t)args[0].of.i32;
    f->host_b = args[1].of.f32_bits;
    results[0] = ri_val_i32((int32_t)(f->host_a ^ 0xFFFF0000u));
    return 0;
}

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->module = engine_fixture_module("slot_repr", false);
    ri_error err;
    ri_store_config cfg = ri_store_config_default();
    f->store = ri_store_new(&cfg);
    assert_non_null(f->store);
    ri_global *off = ri_global_new(f->store, (ri_globaltype){RI_I32, false}, ri_val_i32((int32_t)OFF), &err);
    f->mg = ri_global_new(f->store, (ri_globaltype){RI_I32, true}, ri_val_i32(-7), &err);
    assert_non_null(off);
    assert_non_null(f->mg);
    static const ri_valtype params[] = {RI_I32, RI_F32}, results[] = {RI_I32};
    ri_functype ft = {2, 1, params, results};
    ri_func *h = ri_func_new_host(f->store, &ft, host, f);
    assert_non_null(h);
    ri_extern imports[3];
    imports[0].kind = RI_EXTERN_GLOBAL;
    imports[0].of.global = off;
    imports[1].kind = RI_EXTERN_GLOBAL;
    imports[1].of.global = f->mg;
    imports[2].kind = RI_EXTERN_FUNC;
    imports[2].of.func = h;
    f->inst = ri_instantiate(f->store, f->module, imports, 3, &err);
    if (!f->inst) print_error("instantiate: %s\n", err.message);
    assert_non_null(f->inst);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    ri_store_free(f->store);
    ri_module_free(f->module);
    free(f);
    return 0;
}

static ri_global *global(fx *f, const char *name) {
    ri_extern e;
    assert_true(ri_instance_export(f->inst, name, &e));
    assert_int_equal(e.kind, RI_EXTERN_GLOBAL);
    return e.of.global;
}

static uint32_t call_i32(fx *f, const char *name, const ri_val *args, uint32_t nargs) {
    ri_extern e;
    assert_true(ri_instance_export(f->inst, name, &e));
    ri_val r;
    ri_error err;
    ri_errcode rc = ri_func_call(f->store, e.of.func, args, nargs, &r, 1, &err);
    if (rc != RI_OK) print_error("%s: %s\n", name, err.message);
    assert_int_equal(rc, RI_OK);
    assert_int_equal(r.type, RI_I32);
    return (uint32_t)r.of.i32;
}

static void call_void(fx *f, const char *name, ri_val arg) {
    ri_extern e;
    assert_true(ri_instance_export(f->inst, name, &e));
    ri_error err;
    assert_int_equal(ri_func_call(f->store, e.of.func, &arg, 1, NULL, 0, &err), RI_OK);
}

/* The initialiser (a constant expression) as the API and as code read it. */
static void test_global_initial_values(void **state) {
    fx *f = *state;
    ri_global *g = global(f, "g");
    assert_true(g->value.i64 == 0xFFFFFFFEu);
    assert_int_equal(ri_global_get(g).of.i32, -2);
    assert_int_equal(call_i32(f, "get_g", NULL, 0), 0xFFFFFFFEu);
    ri_global *fg = global(f, "f");
    assert_true(fg->value.i64 == F_BITS);
    assert_int_equal(ri_global_get(fg).of.f32_bits, F_BITS);
    assert_int_equal(call_i32(f, "get_f_bits", NULL, 0), F_BITS);
}

/* Written by the embedder, read by the API and by code. */
static void test_global_set_through_the_api(void **state) {
    fx *f = *state;
    ri_global *g = global(f, "g");
    assert_true(ri_global_set(g, ri_val_i32(-5)));
    assert_true(g->value.i64 == 0xFFFFFFFBu);
    assert_int_equal(ri_global_get(g).of.i32, -5);
    assert_int_equal(call_i32(f, "get_g", NULL, 0), 0xFFFFFFFBu);

    ri_global *fg = global(f, "f");
    ri_val nan;
    memset(&nan, 0, sizeof nan);
    nan.type = RI_F32;
    nan.of.f32_bits = 0xFFC00001u; /* a NaN with a payload: bits travel untouched */
    assert_true(ri_global_set(fg, nan));
    assert_true(fg->value.i64 == 0xFFC00001u);
    assert_int_equal(ri_global_get(fg).of.f32_bits, 0xFFC00001u);
    assert_int_equal(call_i32(f, "get_f_bits", NULL, 0), 0xFFC00001u);

    assert_true(ri_global_set(f->mg, ri_val_i32(INT32_MIN + 1)));
    assert_int_equal(call_i32(f, "get_mg", NULL, 0), 0x80000001u);
}

/* Written by code, read by the API. */
static void test_global_set_by_code(void **state) {
    fx *f = *state;
    call_void(f, "set_g", ri_val_i32(INT32_MIN));
    ri_global *g = global(f, "g");
    assert_true(g->value.i64 == 0x80000000u);
    assert_int_equal(ri_global_get(g).of.i32, INT32_MIN);
}

/* Constant expressions: a global initialised from an imported one, a data segment at an
 * offset read from an imported global and one at an i32.const offset, an element segment. */
static void test_constant_expressions(void **state) {
    fx *f = *state;
    ri_global *c = global(f, "c");
    assert_true(c->value.i64 == OFF);
    assert_int_equal(ri_global_get(c).of.i32, (int32_t)OFF);
    ri_extern e;
    assert_true(ri_instance_export(f->inst, "memory", &e));
    const uint8_t *mem = ri_memory_data(e.of.memory);
    assert_int_equal(mem[OFF], 0x2a);
    assert_int_equal(mem[0x2345], 0x2b);
    assert_int_equal(mem[0], 0);
    ri_val arg = ri_val_i32(-9);
    assert_int_equal(call_i32(f, "call_5", &arg, 1), (uint32_t)-9);
}

/* Arguments and results across ri_func_call and host calls. */
static void test_call_values(void **state) {
    fx *f = *state;
    ri_val arg = ri_val_i32(-3);
    assert_int_equal(call_i32(f, "id", &arg, 1), 0xFFFFFFFDu);
    ri_val args[2];
    args[0] = ri_val_i32(0x12345678);
    memset(&args[1], 0, sizeof args[1]);
    args[1].type = RI_F32;
    args[1].of.f32_bits = 0xBF800000u; /* -1.0f */
    assert_int_equal(call_i32(f, "call_host", args, 2), 0x12345678u ^ 0xFFFF0000u);
    assert_int_equal(f->host_a, 0x12345678u);
    assert_int_equal(f->host_b, 0xBF800000u);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_global_initial_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_global_set_through_the_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_global_set_by_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_constant_expressions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_values, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
