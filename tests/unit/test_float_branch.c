/*
 * Float compare-and-branch (code.h, RI_CODE_FCMP_BRANCHES): f32/f64 lt, le, gt, ge fused
 * into br_if and if, directly and through the compare's i32.eqz, give what the compare
 * and the branch gave: for every pair of a set of values with NaNs, zeros of both signs,
 * infinities and equal values, metered and unmetered. A compare whose result is also
 * kept in a local is not fused away; a float-driven loop charges the unfused gas.
 * Fixture: tests/wat/float_branch.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"

typedef engine_fixture fixture;

static void fixture_open(fixture *fx, bool unmetered) {
    engine_fixture_open(fx, "float_branch", unmetered);
}

static void fixture_close(fixture *fx) { engine_fixture_close(fx); }

static int32_t call_f(fixture *fx, const char *name, bool f64, double a, double b) {
    ri_extern ext;
    if (!ri_instance_export(fx->instance, name, &ext)) fail_msg("no export %s", name);
    ri_val in[2], out[1];
    for (int i = 0; i < 2; i++) {
        double x = i == 0 ? a : b;
        memset(&in[i], 0, sizeof in[i]);
        if (f64) {
            in[i].type = RI_F64;
            memcpy(&in[i].of.f64_bits, &x, 8);
        } else {
            float y = (float)x;
            in[i].type = RI_F32;
            memcpy(&in[i].of.f32_bits, &y, 4);
        }
    }
    ri_error err;
    if (ri_func_call(fx->store, ext.of.func, in, 2, out, 1, &err) != RI_OK) fail_msg("%s: %s", name, err.message);
    return out[0].of.i32;
}

static int holds(int cmp, double a, double b) {
    switch (cmp) {
    case 0: return a < b;
    case 1: return a <= b;
    case 2: return a > b;
    default: return a >= b;
    }
}

static void test_float_branches_match_the_compares(void **state) {
    (void)state;
    const double values[] = {NAN, -NAN, 0.0, -0.0, 1.0, -1.0, 1.5, INFINITY, -INFINITY, 1e-40, 3.4e38};
    const size_t n = sizeof values / sizeof values[0];
    static const char *const types[2] = {"f32", "f64"};
    static const char *const cmps[4] = {"lt", "le", "gt", "ge"};
    static const char *const forms[4] = {"br", "if", "nbr", "nif"};
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fixture_open(&fx, unmetered != 0);
        for (int t = 0; t < 2; t++)
            for (int c = 0; c < 4; c++)
                for (int f = 0; f < 4; f++) {
                    char name[32];
                    snprintf(name, sizeof name, "%s_%s_%s", types[t], cmps[c], forms[f]);
                    for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < n; j++) {
                            double a = values[i], b = values[j];
                            if (t == 0) { a = (float)a; b = (float)b; } /* compare what f32 holds */
                            int want = holds(c, a, b);
                            if (f >= 2) want = !want;
                            int32_t got = call_f(&fx, name, t == 1, a, b);
                            if (got != want) fail_msg("%s(%g, %g) = %d, want %d", name, a, b, got, want);
                        }
                }
        fixture_close(&fx);
    }
}

static void test_compare_kept_in_a_local(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    assert_int_equal(call_f(&fx, "f64_lt_tee", true, 1.0, 2.0), 11);
    assert_int_equal(call_f(&fx, "f64_lt_tee", true, 2.0, 1.0), 20);
    assert_int_equal(call_f(&fx, "f64_lt_tee", true, NAN, 1.0), 20);
    fixture_close(&fx);
}

/* halvings(x, limit): gas 2 + 13 per halving + 4 + 2 (see the fixture). */
static void test_float_loop_gas(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    static const double xs[] = {0.5, 1.0, 8.0, 1000.0};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        int32_t k = 0;
        for (double x = xs[i]; !(x < 1.0); x *= 0.5) k++;
        uint64_t total = 2 + 13 * (uint64_t)k + 4 + 2;
        ri_store_set_gas(fx.store, total);
        assert_int_equal(call_f(&fx, "halvings", true, xs[i], 1.0), k);
        assert_int_equal(ri_store_gas(fx.store), 0);
        ri_store_set_gas(fx.store, total - 1); /* the last region (2) cannot be paid: 1 left */
        ri_extern ext;
        assert_true(ri_instance_export(fx.instance, "halvings", &ext));
        ri_val in[2], out[1];
        for (int j = 0; j < 2; j++) {
            double x = j == 0 ? xs[i] : 1.0;
            memset(&in[j], 0, sizeof in[j]);
            in[j].type = RI_F64;
            memcpy(&in[j].of.f64_bits, &x, 8);
        }
        ri_error err;
        assert_int_equal(ri_func_call(fx.store, ext.of.func, in, 2, out, 1, &err), RI_ERR_TRAP);
        assert_int_equal(err.trap, RI_TRAP_OUT_OF_GAS);
        assert_int_equal(ri_store_gas(fx.store), 1);
    }
    fixture_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_branches_match_the_compares),
        cmocka_unit_test(test_compare_kept_in_a_local),
        cmocka_unit_test(test_float_loop_gas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
