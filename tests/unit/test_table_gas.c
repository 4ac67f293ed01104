/*
 * br_table and metering: the interpreter runs the charge of a br_table's target as part
 * of the br_table (code.h, "Metering") when every target is a GAS or LOOP charge. That
 * must not be visible: each run uses exactly the gas of the unfused code (its regions'
 * costs, counted here by hand from tests/wat/table_gas.wat), and a budget that cannot
 * pay a target's charge stops there: the same gas is left as if that charge had run on
 * its own, and a run suspended there (out of gas) is at a GAS / LOOP point and goes on
 * from it to the same result and the same total. Mixed targets (one a return) too, and
 * unmetered code, whose loop driven only by a br_table must still see an interrupt.
 * The same for a loop's back-edge right after a copy (copy_loop).
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

#include "engine_fixture.h"

typedef engine_fixture fixture;

static void fixture_open(fixture *fx, bool unmetered) {
    engine_fixture_open(fx, "table_gas", unmetered);
}

static void fixture_close(fixture *fx) { engine_fixture_close(fx); }

static ri_func *export_func(fixture *fx, const char *name) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, name, &ext));
    assert_int_equal(ext.kind, RI_EXTERN_FUNC);
    return ext.of.func;
}

static ri_errcode call1(fixture *fx, const char *name, int32_t arg, int32_t *result, ri_error *err) {
    ri_func *f = export_func(fx, name);
    ri_val in[1] = {ri_val_i32(arg)}, out[1];
    ri_functype t = ri_func_type(f);
    ri_errcode rc = ri_func_call(fx->store, f, in, 1, out, t.nresults, err);
    if (rc == RI_OK && t.nresults == 1) *result = out[0].of.i32;
    return rc;
}

/* ---- the unfused semantics: a path as its regions (cost, and the point it starts at) ---- */

#define MAX_REGIONS 256
typedef struct path {
    uint32_t n;
    uint64_t cost[MAX_REGIONS];
    ri_susp_point kind[MAX_REGIONS];
} path;

static void add(path *p, ri_susp_point kind, uint64_t cost) {
    assert_true(p->n < MAX_REGIONS);
    p->kind[p->n] = kind;
    p->cost[p->n++] = cost;
}

static uint64_t path_total(const path *p) {
    uint64_t t = 0;
    for (uint32_t i = 0; i < p->n; i++) t += p->cost[i];
    return t;
}

/* With budget b < total: the region whose charge cannot be paid, and the gas left then. */
static uint32_t stop_region(const path *p, uint64_t b, uint64_t *left) {
    uint64_t paid = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        if (paid + p->cost[i] > b) {
            *left = b - paid;
            return i;
        }
        paid += p->cost[i];
    }
    fail_msg("budget %llu pays the whole path", (unsigned long long)b);
    return 0;
}

/* sw(i): entry, the case (0: 3, 1: 7, 2: 5, default: 4), the region after the switch. */
static void sw_path(int32_t i, path *p, int32_t *result) {
    static const uint64_t cost[4] = {3, 7, 5, 4};
    static const int32_t value[4] = {10, 22, 32, 99};
    uint32_t c = (uint32_t)i < 3 ? (uint32_t)i : 3;
    p->n = 0;
    add(p, RI_SUSP_ENTRY, 7);
    add(p, RI_SUSP_GAS, cost[c]);
    add(p, RI_SUSP_GAS, 2);
    *result = value[c];
}

/* machine(n): k = 1 .. n, each the LOOP region, the br_table's region and s0 or s1 (k % 3
 * = 0 or 1; 2 goes straight back to the LOOP), then k = n + 1 leaves the loop. */
static void machine_path(int32_t n, path *p, int32_t *result) {
    uint32_t acc = 0;
    p->n = 0;
    add(p, RI_SUSP_ENTRY, 2);
    for (uint32_t k = 1; k <= (uint32_t)n; k++) {
        add(p, RI_SUSP_LOOP, 9);
        add(p, RI_SUSP_GAS, 4);
        if (k % 3 == 0) { add(p, RI_SUSP_GAS, 7); acc = acc * 3 + 1; }
        else if (k % 3 == 1) { add(p, RI_SUSP_GAS, 5); acc ^= k; }
    }
    add(p, RI_SUSP_LOOP, 9);
    add(p, RI_SUSP_GAS, 2);
    *result = (int32_t)acc;
}

/* mixed(i): entry, then i = 0: both regions after the blocks, 1: the second, else none. */
static void mixed_path(int32_t i, path *p, int32_t *result) {
    p->n = 0;
    add(p, RI_SUSP_ENTRY, 5);
    if (i == 0) add(p, RI_SUSP_GAS, 3);
    if (i == 0 || i == 1) add(p, RI_SUSP_GAS, 3);
    *result = i == 0 ? 202 : i == 1 ? 200 : 100;
}

/* copy_loop(n): entry, n rounds (the LOOP and the region after its br_if), the last LOOP. */
static void copy_loop_path(int32_t n, path *p, int32_t *result) {
    uint32_t acc = 0, last = 0, k = (uint32_t)n;
    p->n = 0;
    add(p, RI_SUSP_ENTRY, 2);
    while (k != 0) {
        add(p, RI_SUSP_LOOP, 3);
        add(p, RI_SUSP_GAS, 13);
        k--;
        acc = (acc * 5) ^ k;
        last = acc;
    }
    add(p, RI_SUSP_LOOP, 3);
    add(p, RI_SUSP_GAS, 6);
    *result = (int32_t)(last * 2 + acc);
}

/* Every budget from 0 to the path's total: the exact gas used when it is enough; else an
 * out-of-gas trap with the gas left that the unfused code leaves. */
static void check_budgets(fixture *fx, const char *name, int32_t arg, const path *p, int32_t want) {
    uint64_t total = path_total(p);
    for (uint64_t b = 0; b <= total + 1; b++) {
        ri_store_set_gas(fx->store, b);
        ri_error err;
        int32_t r = -1;
        ri_errcode rc = call1(fx, name, arg, &r, &err);
        if (b >= total) {
            if (rc != RI_OK) fail_msg("%s(%d) with gas %llu: %s", name, arg, (unsigned long long)b, err.message);
            assert_int_equal(r, want);
            assert_int_equal(ri_store_gas(fx->store), b - total);
            continue;
        }
        uint64_t left = 0;
        (void)stop_region(p, b, &left);
        if (rc != RI_ERR_TRAP || err.trap != RI_TRAP_OUT_OF_GAS)
            fail_msg("%s(%d) with gas %llu of %llu: not out of gas (rc %d)", name, arg, (unsigned long long)b,
                     (unsigned long long)total, (int)rc);
        if (ri_store_gas(fx->store) != left)
            fail_msg("%s(%d) with gas %llu: %llu left, want %llu", name, arg, (unsigned long long)b,
                     (unsigned long long)ri_store_gas(fx->store), (unsigned long long)left);
    }
}

/* Every budget short of the total, suspending: the run stops at the point of the region
 * that cannot pay, then goes on from there to the same result and the same total gas. */
static void check_suspended(fixture *fx, const char *name, int32_t arg, const path *p, int32_t want) {
    uint64_t total = path_total(p);
    ri_store_set_suspend_mode(fx->store, RI_SUSPEND_ON_GAS);
    for (uint64_t b = 0; b < total; b++) {
        ri_store_set_gas(fx->store, b);
        ri_error err;
        int32_t r = -1;
        assert_int_equal(call1(fx, name, arg, &r, &err), RI_ERR_SUSPENDED);
        uint64_t left = 0;
        uint32_t region = stop_region(p, b, &left);
        assert_int_equal(ri_store_gas(fx->store), left);
        ri_suspension s;
        assert_true(ri_store_describe_suspended(fx->store, fx->instance, &s, &err));
        assert_int_equal(s.nframes, 1);
        if (s.frames[0].point != p->kind[region])
            fail_msg("%s(%d) with gas %llu: stopped at a point of kind %d, want %d", name, arg, (unsigned long long)b,
                     (int)s.frames[0].point, (int)p->kind[region]);
        ri_suspension_free(&s);
        ri_val out[1];
        assert_int_equal(ri_store_resume(fx->store, total, out, 1, &err), RI_OK);
        assert_int_equal(out[0].of.i32, want);
        /* b + total given, total used */
        assert_int_equal(ri_store_gas(fx->store), b);
    }
    ri_store_set_suspend_mode(fx->store, 0);
}

static void test_switch_charges_each_case(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    static const int32_t args[] = {0, 1, 2, 3, 7, -1};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        path p;
        int32_t want;
        sw_path(args[i], &p, &want);
        check_budgets(&fx, "sw", args[i], &p, want);
        check_suspended(&fx, "sw", args[i], &p, want);
    }
    fixture_close(&fx);
}

static void test_state_machine_charges_loop_targets(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    static const int32_t args[] = {0, 1, 2, 3, 4, 10};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        path p;
        int32_t want;
        machine_path(args[i], &p, &want);
        check_budgets(&fx, "machine", args[i], &p, want);
        check_suspended(&fx, "machine", args[i], &p, want);
    }
    fixture_close(&fx);
}

static void test_mixed_targets_charge_as_unfused(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    static const int32_t args[] = {0, 1, 2, 5};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        path p;
        int32_t want;
        mixed_path(args[i], &p, &want);
        check_budgets(&fx, "mixed", args[i], &p, want);
        check_suspended(&fx, "mixed", args[i], &p, want);
    }
    fixture_close(&fx);
}

/* The br right after the loop's copies charges the LOOP as any other br does. */
static void test_back_edge_after_copies_charges_the_loop(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    for (int32_t n = 0; n < 6; n++) {
        path p;
        int32_t want;
        copy_loop_path(n, &p, &want);
        check_budgets(&fx, "copy_loop", n, &p, want);
        check_suspended(&fx, "copy_loop", n, &p, want);
    }
    fixture_close(&fx);
}

/* The loop of spin_table: 1 for the entry, then 2 per round: every budget stops at the
 * LOOP with what is left of it. */
static void test_table_loop_runs_out_at_its_header(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    for (uint64_t b = 0; b < 40; b++) {
        ri_store_set_gas(fx.store, b);
        ri_error err;
        int32_t r;
        assert_int_equal(call1(&fx, "spin_table", (int32_t)(b % 3), &r, &err), RI_ERR_TRAP);
        assert_int_equal(err.trap, RI_TRAP_OUT_OF_GAS);
        assert_int_equal(ri_store_gas(fx.store), b == 0 ? 0 : (b - 1) % 2);
    }
    /* past many chunks of gas (the interpreter draws 65,536 at a time) */
    ri_store_set_gas(fx.store, 1000001);
    ri_error err;
    int32_t r;
    assert_int_equal(call1(&fx, "spin_table", 1, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_OUT_OF_GAS);
    assert_int_equal(ri_store_gas(fx.store), 0);
    fixture_close(&fx);
}

/* Unmetered code computes the same and charges nothing. */
static void test_unmetered_results_match(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, true);
    ri_store_set_gas(fx.store, 3);
    for (int32_t i = -1; i < 12; i++) {
        path p;
        int32_t want, r = -1;
        ri_error err;
        sw_path(i, &p, &want);
        assert_int_equal(call1(&fx, "sw", i, &r, &err), RI_OK);
        assert_int_equal(r, want);
        if (i >= 0) {
            machine_path(i, &p, &want);
            assert_int_equal(call1(&fx, "machine", i, &r, &err), RI_OK);
            assert_int_equal(r, want);
        }
        mixed_path(i, &p, &want);
        assert_int_equal(call1(&fx, "mixed", i, &r, &err), RI_OK);
        assert_int_equal(r, want);
        if (i >= 0) {
            copy_loop_path(i, &p, &want);
            assert_int_equal(call1(&fx, "copy_loop", i, &r, &err), RI_OK);
            assert_int_equal(r, want);
        }
    }
    assert_int_equal(ri_store_gas(fx.store), 3);
    fixture_close(&fx);
}

/* A loop whose only back-edge is a br_table stops when interrupted (metered: at a new
 * chunk of gas; unmetered: at its header, which the br_table polls). */
static void test_table_loop_sees_interrupts(void **state) {
    (void)state;
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fixture_open(&fx, unmetered != 0);
        ri_store_set_gas(fx.store, UINT64_MAX);
        interrupter it = {fx.store, 30};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, interrupt_later, &it), 0);
        ri_error err;
        int32_t r;
        assert_int_equal(call1(&fx, "spin_table", 0, &r, &err), RI_ERR_TRAP);
        assert_int_equal(err.trap, RI_TRAP_INTERRUPTED);
        pthread_join(th, NULL);
        fixture_close(&fx);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switch_charges_each_case),
        cmocka_unit_test(test_state_machine_charges_loop_targets),
        cmocka_unit_test(test_mixed_targets_charge_as_unfused),
        cmocka_unit_test(test_back_edge_after_copies_charges_the_loop),
        cmocka_unit_test(test_table_loop_runs_out_at_its_header),
        cmocka_unit_test(test_unmetered_results_match),
        cmocka_unit_test(test_table_loop_sees_interrupts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
