/*
 * Tail calls (return_call, return_call_indirect): a loop of ten million tail calls runs
 * in one frame (the same recursion as plain calls exhausts the call stack); a run of
 * chains of tail calls, with callers waiting in calls while the chain replaces their
 * callee, cut by gas at every point, each stop described and rebuilt in a fresh store,
 * ends with the uninterrupted run's result, memory, global and gas. Fixture:
 * tests/wat/tail_call.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "engine_slicing.h"
#include "sandbox_test_util.h" /* read_fixture */

typedef struct fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
} fixture;

static uint8_t *module_bytes;
static size_t module_len;

static int host_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = ri_val_i32(args[0].of.i32 * 5 + 2);
    return 0;
}

static void fx_open(fixture *fx, const ri_store_config *cfg) {
    if (!module_bytes) module_bytes = read_fixture("tail_call", &module_len);
    memset(fx, 0, sizeof *fx);
    ri_error err;
    fx->module = ri_module_load(module_bytes, module_len, NULL, &err);
    if (!fx->module) print_error("load: %s\n", err.message);
    assert_non_null(fx->module);
    fx->store = ri_store_new(cfg);
    assert_non_null(fx->store);
    static const ri_valtype i32[1] = {RI_I32};
    ri_functype t = {1, 1, i32, i32};
    ri_extern imp;
    imp.kind = RI_EXTERN_FUNC;
    imp.of.func = ri_func_new_host(fx->store, &t, host_fn, NULL);
    fx->instance = ri_instantiate(fx->store, fx->module, &imp, 1, &err);
    assert_non_null(fx->instance);
}

static void fx_close(fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

static ri_func *export_func(fixture *fx, const char *name) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, name, &ext));
    return ext.of.func;
}

static uint32_t count_ref(uint32_t n) {
    uint32_t acc = 7;
    for (uint32_t k = n; k > 0; k--) acc = acc * 31u + k;
    return acc;
}

static void ten_million_tail_calls_in_one_frame(void **state) {
    (void)state;
    /* A small stack: 64 frames, 4,096 slots. */
    ri_store_config cfg = ri_store_config_default();
    cfg.max_call_depth = 64;
    cfg.max_stack_slots = 4096;
    fixture fx;
    fx_open(&fx, &cfg);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_val a = ri_val_i32(10 * 1000 * 1000), r;
    ri_error err;
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "count"), &a, 1, &r, 1, &err);
    if (rc != RI_OK) print_error("count: %s\n", err.message);
    assert_int_equal(rc, RI_OK);
    assert_int_equal((uint32_t)r.of.i32, count_ref(10 * 1000 * 1000));
    /* The same recursion by plain calls needs a frame per step. */
    a = ri_val_i32(1000);
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "count_call"), &a, 1, &r, 1, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_STACK_EXHAUSTED);
    a = ri_val_i32(20);
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "count_call"), &a, 1, &r, 1, &err), RI_OK);
    assert_int_equal((uint32_t)r.of.i32, count_ref(20));
    fx_close(&fx);
}

static uint64_t state_hash(fixture *fx) {
    ri_val g = ri_global_get(ri_instance_global(fx->instance, 0));
    return slicing_memory_hash(fx->instance) ^ (uint32_t)g.of.i32;
}

/* A sliced run's fixtures: the one it runs in and the fresh one a move opens. */
typedef struct sliced {
    fixture fx[2];
    int at;
    uint32_t *chain_waits;
} sliced;

static void note_pause(void *user, const slicing_world *w, const ri_suspension *d) {
    (void)w;
    /* mix (8) waits in its call of even (5) while odd (6), reached by a tail call, runs */
    if (d->nframes == 2 && d->frames[1].func_index == 6) (*((sliced *)user)->chain_waits)++;
    assert_true(d->nframes <= 2);
}

static slicing_world move_to_fresh(void *user, const slicing_world *from, const ri_suspension *d) {
    sliced *run = user;
    fixture *to = &run->fx[!run->at];
    fx_open(to, NULL);
    slicing_world w = {to->store, to->instance};
    slicing_copy_state(from, &w);
    slicing_rebuild(&w, d);
    fx_close(&run->fx[run->at]);
    run->at = !run->at;
    return w;
}

/* export(n) in slices of `slice` gas, each stop moved to a fresh store. */
static void sliced_run(const char *name, int32_t n, uint64_t slice, uint32_t *result, uint64_t *gas, uint64_t *hash,
                       uint32_t *chain_waits) {
    sliced run = {.at = 0, .chain_waits = chain_waits};
    fx_open(&run.fx[0], NULL);
    slicing sl = {.slice = slice, .max_slices = 100000, .user = &run, .paused = note_pause, .move = move_to_fresh};
    slicing_world w = {run.fx[0].store, run.fx[0].instance};
    ri_val a = ri_val_i32(n), r;
    slicing_outcome o = slicing_run(&sl, &w, export_func(&run.fx[0], name), &a, 1, &r, 1);
    fixture *fx = &run.fx[run.at];
    *result = (uint32_t)r.of.i32;
    *gas = o.gas;
    *hash = state_hash(fx);
    fx_close(fx);
}

/* The arguments of a tail call are counted in slots: a v128 takes two. */
static void tail_call_with_a_v128_argument(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, NULL);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_val a = ri_val_i32(5), r;
    ri_error err;
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "vtail"), &a, 1, &r, 1, &err);
    if (rc != RI_OK) print_error("vtail: %s\n", err.message);
    assert_int_equal(rc, RI_OK);
    assert_int_equal(r.of.i32, 105);
    fx_close(&fx);
}

static void paused_mid_chain_resumes_in_a_fresh_store(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, NULL);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_val a = ri_val_i32(9), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "mix"), &a, 1, &r, 1, &err), RI_OK);
    uint32_t want = (uint32_t)r.of.i32;
    uint64_t want_gas = UINT64_MAX / 2 - ri_store_gas(fx.store), want_hash = state_hash(&fx);
    fx_close(&fx);
    assert_true(want_gas > 50 && want_gas < 2000);
    uint32_t chain_waits = 0;
    for (uint64_t slice = 1; slice <= want_gas + 1; slice++) {
        uint32_t got;
        uint64_t gas, hash;
        sliced_run("mix", 9, slice, &got, &gas, &hash, &chain_waits);
        assert_int_equal(got, want);
        assert_int_equal(gas, want_gas); /* the slices' gas adds up exactly */
        assert_int_equal(hash, want_hash);
    }
    assert_true(chain_waits > 0);
}

/* The export itself tail-calls: the outermost frame is another function than the one the
 * embedder called, and a description says both. */
static void paused_after_the_export_tail_called(void **state) {
    (void)state;
    uint32_t waits = 0;
    for (uint64_t slice = 1; slice < 60; slice++) {
        uint32_t got;
        uint64_t gas, hash;
        sliced_run("count", 6, slice, &got, &gas, &hash, &waits);
        assert_int_equal(got, count_ref(6));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ten_million_tail_calls_in_one_frame),
        cmocka_unit_test(tail_call_with_a_v128_argument),
        cmocka_unit_test(paused_mid_chain_resumes_in_a_fresh_store),
        cmocka_unit_test(paused_after_the_export_tail_called),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
