/*
 * Execution behaviour the spec testsuite does not pin down: metering (exact gas and
 * the trap point), the call-depth limit, interruption from another thread, NaN
 * canonicalisation, and re-entrant host calls. Fixture: tests/wat/exec.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_fixture.h" /* read_fixture, interrupt_later */

typedef struct fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
} fixture;

static void fixture_open_with(fixture *fx, const ri_store_config *cfg, const ri_module_config *mcfg) {
    size_t len = 0;
    uint8_t *bytes = read_fixture("exec", &len);
    ri_error err;
    fx->module = ri_module_load(bytes, len, mcfg, &err);
    free(bytes);
    assert_non_null(fx->module);
    fx->store = ri_store_new(cfg);
    assert_non_null(fx->store);
    fx->instance = ri_instantiate(fx->store, fx->module, NULL, 0, &err);
    assert_non_null(fx->instance);
}

static void fixture_open(fixture *fx, const ri_store_config *cfg) { fixture_open_with(fx, cfg, NULL); }

/* The fixture module loaded without metering (ri_module_config.unmetered). */
static void fixture_open_unmetered(fixture *fx) {
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg);
    mcfg.unmetered = true;
    fixture_open_with(fx, NULL, &mcfg);
}

static void fixture_close(fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

static ri_func *export_func(fixture *fx, const char *name) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, name, &ext));
    assert_int_equal(ext.kind, RI_EXTERN_FUNC);
    return ext.of.func;
}

/* Calls an export taking and returning i32s. */
static ri_errcode call_i32(fixture *fx, const char *name, const int32_t *args, uint32_t nargs,
                           int32_t *result, ri_error *err) {
    ri_func *f = export_func(fx, name);
    ri_val in[4];
    for (uint32_t i = 0; i < nargs; i++) in[i] = ri_val_i32(args[i]);
    ri_val out[1];
    ri_functype t = ri_func_type(f);
    ri_errcode rc = ri_func_call(fx->store, f, in, nargs, out, t.nresults, err);
    if (rc == RI_OK && t.nresults == 1 && result) *result = out[0].of.i32;
    return rc;
}

/* ---- metering ---------------------------------------------------------------- */

/* Gas used by one call of `name` with a generous budget. */
static uint64_t gas_of(fixture *fx, const char *name, const int32_t *args, uint32_t nargs) {
    const uint64_t budget = 1000000000;
    ri_store_set_gas(fx->store, budget);
    ri_error err;
    int32_t r;
    assert_int_equal(call_i32(fx, name, args, nargs, &r, &err), RI_OK);
    return budget - ri_store_gas(fx->store);
}

static void test_gas_straight_line(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, NULL);
    int32_t args[3] = {1, 2, 3};
    /* local.get, local.get, i32.add, local.get, i32.add, end */
    assert_int_equal(gas_of(&fx, "add3", args, 3), 6);
    fixture_close(&fx);
}

static void test_gas_is_linear_in_iterations(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, NULL);
    int32_t n0 = 0, n1 = 1, n100 = 100;
    uint64_t g0 = gas_of(&fx, "countdown", &n0, 1);
    uint64_t g1 = gas_of(&fx, "countdown", &n1, 1);
    uint64_t g100 = gas_of(&fx, "countdown", &n100, 1);
    uint64_t per_iteration = g1 - g0;
    /* loop body: local.get, i32.eqz, br_if, local.get, i32.const, i32.sub, local.set,
     * local.get, i32.const, i32.add, local.set, br */
    assert_int_equal(per_iteration, 12);
    /* n = 0: block, loop, local.get, i32.eqz, br_if, then local.get, end */
    assert_int_equal(g0, 7);
    assert_int_equal(g100, g0 + 100 * per_iteration);
    fixture_close(&fx);
}

static void test_gas_exhaustion_is_deterministic(void **state) {
    (void)state;
    /* The same budget stops the same loop at the same point, with the same gas left. */
    uint64_t left[3];
    for (int run = 0; run < 3; run++) {
        fixture fx;
        fixture_open(&fx, NULL);
        ri_store_set_gas(fx.store, 12345);
        ri_error err;
        assert_int_equal(call_i32(&fx, "spin", NULL, 0, NULL, &err), RI_ERR_TRAP);
        assert_int_equal(err.trap, RI_TRAP_OUT_OF_GAS);
        assert_string_equal(err.message, "out of gas");
        left[run] = ri_store_gas(fx.store);
        fixture_close(&fx);
    }
    assert_int_equal(left[0], left[1]);
    assert_int_equal(left[1], left[2]);
    /* gas is charged per block before it runs: what is left cannot pay for a block */
    assert_true(left[0] < 12345);
}

static void test_gas_budget_exact_boundary(void **state) {
    (void)state;
    /* With exactly the gas a call needs it succeeds; with one less it traps. */
    fixture fx;
    fixture_open(&fx, NULL);
    int32_t n = 10;
    uint64_t need = gas_of(&fx, "countdown", &n, 1);
    ri_error err;
    int32_t r = 0;
    ri_store_set_gas(fx.store, need);
    assert_int_equal(call_i32(&fx, "countdown", &n, 1, &r, &err), RI_OK);
    assert_int_equal(r, 10);
    assert_int_equal(ri_store_gas(fx.store), 0);
    ri_store_set_gas(fx.store, need - 1);
    assert_int_equal(call_i32(&fx, "countdown", &n, 1, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_OUT_OF_GAS);
    fixture_close(&fx);
}

static void test_gas_bulk_memory_costs_length(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, NULL);
    int32_t small[3] = {0, 7, 10};
    int32_t large[3] = {0, 7, 10010};
    uint64_t gs = gas_of(&fx, "fill", small, 3);
    uint64_t gl = gas_of(&fx, "fill", large, 3);
    assert_int_equal(gl - gs, 10000);
    fixture_close(&fx);
}

static void test_gas_exhaustion_past_many_chunks(void **state) {
    (void)state;
    /* The interpreter draws gas in chunks of 65,536: budgets that take several chunks
     * stop at the same point as any other, with the exact gas left. */
    int32_t n = 20000; /* 12 gas per iteration: 240,007 in all */
    fixture fx;
    fixture_open(&fx, NULL);
    uint64_t need = gas_of(&fx, "countdown", &n, 1);
    assert_int_equal(need, 7 + 12 * (uint64_t)n);
    ri_error err;
    int32_t r = 0;
    ri_store_set_gas(fx.store, need);
    assert_int_equal(call_i32(&fx, "countdown", &n, 1, &r, &err), RI_OK);
    assert_int_equal(r, n);
    assert_int_equal(ri_store_gas(fx.store), 0);
    ri_store_set_gas(fx.store, need - 1);
    assert_int_equal(call_i32(&fx, "countdown", &n, 1, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_OUT_OF_GAS);
    /* the block after the loop (local.get, end: 2) could not be paid: 1 is left, as
     * the base engine (one charge per block, no chunks) leaves it */
    assert_int_equal(ri_store_gas(fx.store), 1);
    fixture_close(&fx);
}

/* ---- unmetered modules --------------------------------------------------------- */

static void test_unmetered_charges_nothing(void **state) {
    (void)state;
    fixture fx;
    fixture_open_unmetered(&fx);
    ri_store_set_gas(fx.store, 10);
    ri_error err;
    int32_t r = 0, n = 1000;
    assert_int_equal(call_i32(&fx, "countdown", &n, 1, &r, &err), RI_OK);
    assert_int_equal(r, 1000);
    int32_t args[3] = {0, 7, 10010};
    assert_int_equal(call_i32(&fx, "fill", args, 3, NULL, &err), RI_OK);
    int32_t d = 50;
    assert_int_equal(call_i32(&fx, "depth", &d, 1, &r, &err), RI_OK);
    assert_int_equal(r, 50);
    assert_int_equal(ri_store_gas(fx.store), 10); /* untouched */
    fixture_close(&fx);
}

static void test_unmetered_code_is_not_larger(void **state) {
    (void)state;
    fixture metered, unmetered;
    fixture_open(&metered, NULL);
    fixture_open_unmetered(&unmetered);
    size_t m = ri_module_code_bytes(metered.module), u = ri_module_code_bytes(unmetered.module);
    assert_true(m > 0);
    assert_true(u > 0);
    assert_true(u <= m);
    fixture_close(&metered);
    fixture_close(&unmetered);
}

/* ---- call depth ---------------------------------------------------------------- */

static void test_call_depth_limit(void **state) {
    (void)state;
    ri_store_config cfg = ri_store_config_default();
    cfg.max_call_depth = 100;
    fixture fx;
    fixture_open(&fx, &cfg);
    ri_error err;
    int32_t r = 0;
    int32_t ok = 90, deep = 100;
    assert_int_equal(call_i32(&fx, "depth", &ok, 1, &r, &err), RI_OK);
    assert_int_equal(r, 90);
    assert_int_equal(call_i32(&fx, "depth", &deep, 1, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_STACK_EXHAUSTED);
    assert_string_equal(err.message, "call stack exhausted");
    /* the store is usable again after the trap */
    assert_int_equal(call_i32(&fx, "depth", &ok, 1, &r, &err), RI_OK);
    assert_int_equal(r, 90);
    fixture_close(&fx);
}

static void test_deep_recursion_does_not_use_the_c_stack(void **state) {
    (void)state;
    /* 200,000 nested WebAssembly calls: would overflow an 8 MiB C stack if each used
     * a C frame; heap frames make it a matter of configuration. */
    ri_store_config cfg = ri_store_config_default();
    cfg.max_call_depth = 300000;
    cfg.max_stack_slots = 16u << 20;
    fixture fx;
    fixture_open(&fx, &cfg);
    ri_error err;
    int32_t r = 0, n = 200000;
    assert_int_equal(call_i32(&fx, "depth", &n, 1, &r, &err), RI_OK);
    assert_int_equal(r, 200000);
    fixture_close(&fx);
}

static void test_value_stack_limit(void **state) {
    (void)state;
    ri_store_config cfg = ri_store_config_default();
    cfg.max_call_depth = 1000000;
    cfg.max_stack_slots = 4096;
    fixture fx;
    fixture_open(&fx, &cfg);
    ri_error err;
    int32_t r = 0, n = 100000;
    assert_int_equal(call_i32(&fx, "depth", &n, 1, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_STACK_EXHAUSTED);
    fixture_close(&fx);
}

/* ---- interruption ---------------------------------------------------------------- */

static void check_interrupt(const char *export_name, bool unmetered) {
    fixture fx;
    if (unmetered) fixture_open_unmetered(&fx);
    else fixture_open(&fx, NULL);
    interrupter it = {fx.store, 50};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, interrupt_later, &it), 0);
    ri_error err;
    assert_int_equal(call_i32(&fx, export_name, NULL, 0, NULL, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_INTERRUPTED);
    assert_string_equal(err.message, "interrupted");
    pthread_join(th, NULL);
    /* the request stays until cleared; then the store runs again */
    ri_store_clear_interrupt(fx.store);
    int32_t r = 0, n = 5;
    assert_int_equal(call_i32(&fx, "countdown", &n, 1, &r, &err), RI_OK);
    assert_int_equal(r, 5);
    fixture_close(&fx);
}

static void test_interrupt_stops_a_loop_without_calls(void **state) {
    (void)state;
    check_interrupt("spin", false);
}

static void test_interrupt_stops_a_loop_with_calls(void **state) {
    (void)state;
    check_interrupt("spin_calls", false);
}

static void test_interrupt_stops_unmetered_loops(void **state) {
    (void)state;
    check_interrupt("spin", true);
    check_interrupt("spin_calls", true);
}

/* ---- NaN canonicalisation ---------------------------------------------------------- */

static uint32_t f32_call_bits(fixture *fx, const char *name, const uint32_t *bits, uint32_t n) {
    ri_func *f = export_func(fx, name);
    ri_val in[2], out[1];
    for (uint32_t i = 0; i < n; i++) { in[i].type = RI_F32; in[i].of.i64 = 0; in[i].of.f32_bits = bits[i]; }
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, f, in, n, out, 1, &err), RI_OK);
    return out[0].of.f32_bits;
}

static uint64_t f64_call_bits(fixture *fx, const char *name, const uint64_t *bits, uint32_t n) {
    ri_func *f = export_func(fx, name);
    ri_val in[2], out[1];
    for (uint32_t i = 0; i < n; i++) { in[i].type = RI_F64; in[i].of.f64_bits = bits[i]; }
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, f, in, n, out, 1, &err), RI_OK);
    return out[0].of.f64_bits;
}

static void test_nan_canonicalisation_on(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, NULL); /* default: canonicalise */
    uint32_t add_args[2] = {0xFFA00001u, 0x3F800000u}; /* negative NaN with payload + 1.0 */
    assert_int_equal(f32_call_bits(&fx, "f32_add", add_args, 2), 0x7FC00000u);
    uint64_t mul_args[2] = {0x7FF0000000000001ull, 0x4000000000000000ull};
    assert_int_equal(f64_call_bits(&fx, "f64_mul", mul_args, 2), 0x7FF8000000000000ull);
    uint64_t sqrt_arg = 0xBFF0000000000000ull; /* sqrt(-1) */
    assert_int_equal(f64_call_bits(&fx, "f64_sqrt", &sqrt_arg, 1), 0x7FF8000000000000ull);
    /* bit operations and memory keep every bit */
    uint32_t nan_bits = 0x7FA00001u;
    assert_int_equal(f32_call_bits(&fx, "f32_neg", &nan_bits, 1), 0xFFA00001u);
    assert_int_equal(f32_call_bits(&fx, "f32_store_load", &nan_bits, 1), 0x7FA00001u);
    fixture_close(&fx);
}

static void test_nan_canonicalisation_off(void **state) {
    (void)state;
    ri_store_config cfg = ri_store_config_default();
    cfg.canonicalize_nans = false;
    fixture fx;
    fixture_open(&fx, &cfg);
    uint32_t add_args[2] = {0xFFA00001u, 0x3F800000u};
    uint32_t r = f32_call_bits(&fx, "f32_add", add_args, 2);
    /* an arithmetic NaN: quiet bit set (which payload is the hardware's choice) */
    assert_int_equal(r & 0x7FC00000u, 0x7FC00000u);
    uint32_t nan_bits = 0x7FA00001u;
    assert_int_equal(f32_call_bits(&fx, "f32_neg", &nan_bits, 1), 0xFFA00001u);
    fixture_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gas_straight_line),
        cmocka_unit_test(test_gas_is_linear_in_iterations),
        cmocka_unit_test(test_gas_exhaustion_is_deterministic),
        cmocka_unit_test(test_gas_budget_exact_boundary),
        cmocka_unit_test(test_gas_bulk_memory_costs_length),
        cmocka_unit_test(test_gas_exhaustion_past_many_chunks),
        cmocka_unit_test(test_unmetered_charges_nothing),
        cmocka_unit_test(test_unmetered_code_is_not_larger),
        cmocka_unit_test(test_call_depth_limit),
        cmocka_unit_test(test_deep_recursion_does_not_use_the_c_stack),
        cmocka_unit_test(test_value_stack_limit),
        cmocka_unit_test(test_interrupt_stops_a_loop_without_calls),
        cmocka_unit_test(test_interrupt_stops_a_loop_with_calls),
        cmocka_unit_test(test_interrupt_stops_unmetered_loops),
        cmocka_unit_test(test_nan_canonicalisation_on),
        cmocka_unit_test(test_nan_canonicalisation_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
