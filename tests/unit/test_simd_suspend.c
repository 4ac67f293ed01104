/*
 * A paused SIMD program resumes elsewhere with identical results: a loop over v128 locals,
 * parameters, results and operands (tests/wat/simd_suspend.wat) is cut into slices by
 * gas; each slice is snapshotted (WSNP v2 with FRMS, where a v128 is two typed values) and
 * restored into a fresh sandbox of another factory. Every slicing ends with the result,
 * the gas and the final snapshot bytes of the uninterrupted run.
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
#include "suspend_sandbox_util.h" /* read_fixture, snapshot_v2, env, close_env, suspend_config */

static uint8_t *wasm;
static size_t wasm_len;

static env open_env(uint64_t max_gas, uint32_t pause_on, bool load) {
    if (!wasm) wasm = read_fixture("simd_suspend", &wasm_len);
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, max_gas);
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(e.sb);
    if (load && !ri_sandbox_load(e.sb, wasm, wasm_len, &err)) {
        print_error("load: %s\n", err.message);
        fail();
    }
    if (!ri_sandbox_set_pause_on(e.sb, pause_on, &err)) {
        print_error("pause_on: %s\n", err.message);
        fail();
    }
    return e;
}

static void sliced(uint64_t slice) {
    env a = open_env(10000000, 0, true);
    ri_sandbox_result want = ri_sandbox_execute(a.sb, "simd", "[40]");
    if (!want.ok) print_error("uninterrupted: %s\n", want.error.message);
    assert_true(want.ok);
    test_blob want_snap = snapshot_v2(a.sb, false, true);

    env b = open_env(slice, RI_SUSPEND_ON_GAS, true);
    ri_sandbox_result r = ri_sandbox_execute(b.sb, "simd", "[40]");
    int slices = 1;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        test_blob s = snapshot_v2(b.sb, true, true);
        env c = open_env(slice, 0, false);
        ri_sandbox_error err;
        if (!ri_sandbox_restore(c.sb, s.data, s.len, &err)) {
            print_error("restore: %s\n", err.message);
            fail();
        }
        test_blob s2 = snapshot_v2(c.sb, true, true);
        assert_true(same_blob(s, s2)); /* the restored frames describe themselves the same */
        free(s.data);
        free(s2.data);
        close_env(&b);
        b = c;
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(b.sb, slice);
        slices++;
        assert_true(slices < 100000);
    }
    if (!r.ok) print_error("sliced by %llu: %s\n", (unsigned long long)slice, r.error.message);
    assert_true(r.ok);
    assert_string_equal(r.value_json, want.value_json);
    assert_int_equal(r.gas_used, want.gas_used);
    test_blob got_snap = snapshot_v2(b.sb, false, true);
    assert_true(same_blob(got_snap, want_snap));
    if (slice < want.gas_used) assert_true(slices > 1);
    free(got_snap.data);
    free(want_snap.data);
    ri_sandbox_result_free(&r);
    ri_sandbox_result_free(&want);
    close_env(&b);
    close_env(&a);
}

static void simd_slices_through_snapshots_give_the_same_run(void **state) {
    (void)state;
    static const uint64_t slices[] = {1, 3, 7, 19, 64, 333, 10000000};
    for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) sliced(slices[i]);
}

/* select on v128, untyped and typed: 100 * 11 + 44 when the condition holds, 100 * 33 + 22 when not. */
static void v128_select_picks_both_halves(void **state) {
    (void)state;
    env e = open_env(1000000, 0, true);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "sel", "[1]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "1144");
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(e.sb, "sel", "[0]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "3322");
    ri_sandbox_result_free(&r);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simd_slices_through_snapshots_give_the_same_run),
        cmocka_unit_test(v128_select_picks_both_halves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
