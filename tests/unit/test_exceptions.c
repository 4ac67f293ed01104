/*
 * Exception handling: throws unwind the heap frames to their catch (with a delegate and a
 * frame in between); a run cut by gas at every point, each stop inside tries and catch
 * clauses described and rebuilt in a fresh store, ends as the uninterrupted run; rethrow of
 * kept exceptions (many, so that the store's list is collected); a stop inside a clause that
 * keeps its exception describes it and rethrows it after a rebuild elsewhere; an
 * uncaught exception is a trap at the embedder, and one in a run nested under a host
 * function fails that host call. Fixture: tests/wat/exceptions.wat.
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
    ri_func *uncaught;
    ri_func *many;
} fixture;

static uint8_t *module_bytes;
static size_t module_len;

static int reenter_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    fixture *fx = user;
    ri_error err;
    if (ri_func_call(ri_host_call_store(call), fx->uncaught, args, 1, results, 1, &err) != RI_OK)
        return ri_host_fail(call, "nested: %s", err.message);
    return 0;
}

static int churn_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    fixture *fx = user;
    ri_error err;
    if (ri_func_call(ri_host_call_store(call), fx->many, args, 1, results, 1, &err) != RI_OK)
        return ri_host_fail(call, "nested: %s", err.message);
    return 0;
}

static ri_func *export_func(fixture *fx, const char *name) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, name, &ext));
    return ext.of.func;
}

static void fx_open(fixture *fx) {
    if (!module_bytes) module_bytes = read_fixture("exceptions", &module_len);
    memset(fx, 0, sizeof *fx);
    ri_error err;
    fx->module = ri_module_load(module_bytes, module_len, NULL, &err);
    if (!fx->module) print_error("load: %s\n", err.message);
    assert_non_null(fx->module);
    fx->store = ri_store_new(NULL);
    assert_non_null(fx->store);
    static const ri_valtype i32[1] = {RI_I32};
    ri_functype t = {1, 1, i32, i32};
    ri_extern imp[2];
    imp[0].kind = RI_EXTERN_FUNC;
    imp[0].of.func = ri_func_new_host(fx->store, &t, reenter_fn, fx);
    imp[1].kind = RI_EXTERN_FUNC;
    imp[1].of.func = ri_func_new_host(fx->store, &t, churn_fn, fx);
    fx->instance = ri_instantiate(fx->store, fx->module, imp, 2, &err);
    assert_non_null(fx->instance);
    fx->uncaught = export_func(fx, "throw_uncaught");
    fx->many = export_func(fx, "throw_many");
}

static void fx_close(fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

/* What run(n) computes, in C. */
static uint64_t run_ref(uint32_t n) {
    uint64_t acc = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r;
        switch (i & 3) {
        case 0: r = i + 100; break;
        case 1: r = i + (uint32_t)((uint64_t)i * 3) + 200; break;
        case 2: r = 300; break;
        default: r = i * 2 + 1; break;
        }
        acc = acc * 31 + r;
    }
    return acc;
}

static uint64_t state_hash(fixture *fx) {
    return slicing_memory_hash(fx->instance) ^ (uint64_t)ri_global_get(ri_instance_global(fx->instance, 0)).of.i64;
}

static void throws_unwind_to_their_catch(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx);
    ri_val a = ri_val_i32(1000), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "run"), &a, 1, &r, 1, &err), RI_OK);
    assert_int_equal((uint64_t)r.of.i64, run_ref(1000));
    /* 100,000 caught, kept, rethrown and caught again (the list is collected as it goes) */
    a = ri_val_i32(100000);
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "rethrow_loop"), &a, 1, &r, 1, &err), RI_OK);
    uint32_t want = 0;
    for (uint32_t i = 0; i < 100000; i++) want += i * 4;
    assert_int_equal((uint32_t)r.of.i32, want);
    fx_close(&fx);
}

static void uncaught_is_a_trap_at_the_embedder(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx);
    ri_val a = ri_val_i32(5), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, fx.uncaught, &a, 1, &r, 1, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_EXCEPTION);
    assert_string_equal(err.message, "uncaught exception");
    /* Nested under a host function: that host call fails (a trap, which no catch takes). */
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "via_host"), &a, 1, &r, 1, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_HOST);
    assert_non_null(strstr(err.message, "uncaught exception"));
    /* The store goes on. */
    a = ri_val_i32(8);
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "run"), &a, 1, &r, 1, &err), RI_OK);
    assert_int_equal((uint64_t)r.of.i64, run_ref(8));
    fx_close(&fx);
}

/* A run nested under a host function collects no exception objects: the frame that called
 * the host function keeps one that no frame record shows (it was freed under it). */
static void kept_exception_survives_a_nested_run(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx);
    ri_val a = ri_val_i32(1234), r;
    ri_error err;
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "keep_across_host"), &a, 1, &r, 1, &err);
    if (rc != RI_OK) print_error("keep_across_host: %s\n", err.message);
    assert_int_equal(rc, RI_OK);
    assert_int_equal(r.of.i32, 1234);
    fx_close(&fx);
}

/* A sliced run's fixtures: the one it runs in and the fresh one a move opens (the host
 * functions point at their fixture, so fixtures stay where they are). */
typedef struct sliced {
    fixture fx[2];
    int at;
    bool copy_state; /* a move brings memory and the global along */
    uint32_t deep, in_step, kept;
} sliced;

static slicing_world move_to_fresh(void *user, const slicing_world *from, const ri_suspension *d) {
    sliced *run = user;
    fixture *to = &run->fx[!run->at];
    fx_open(to);
    slicing_world w = {to->store, to->instance};
    if (run->copy_state) slicing_copy_state(from, &w);
    slicing_rebuild(&w, d);
    fx_close(&run->fx[run->at]);
    run->at = !run->at;
    return w;
}

/* export(arg) in slices of `slice` gas, each stop moved to a fresh store: its result (in
 * the fixture it ended in, run->fx[run->at]). */
static slicing_outcome sliced_run(sliced *run, void (*paused)(void *, const slicing_world *, const ri_suspension *),
                                  const char *name, int32_t arg, uint64_t slice, ri_val *r) {
    run->at = 0;
    fx_open(&run->fx[0]);
    slicing sl = {.slice = slice, .user = run, .paused = paused, .move = move_to_fresh};
    slicing_world w = {run->fx[0].store, run->fx[0].instance};
    ri_val a = ri_val_i32(arg);
    return slicing_run(&sl, &w, export_func(&run->fx[0], name), &a, 1, r, 1);
}

static void note_try_pause(void *user, const slicing_world *w, const ri_suspension *d) {
    (void)w;
    sliced *run = user;
    if (d->nframes >= 4) run->deep++;                                   /* run > step > middle > thrower */
    if (d->nframes == 2 && d->frames[1].point == RI_SUSP_GAS) run->in_step++; /* e.g. a catch clause's start */
}

static void paused_inside_try_resumes_in_a_fresh_store(void **state) {
    (void)state;
    const uint32_t n = 13;
    fixture fx;
    fx_open(&fx);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_val a = ri_val_i32((int32_t)n), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "run"), &a, 1, &r, 1, &err), RI_OK);
    uint64_t want_gas = UINT64_MAX / 2 - ri_store_gas(fx.store), want_hash = state_hash(&fx);
    assert_int_equal((uint64_t)r.of.i64, run_ref(n));
    fx_close(&fx);
    sliced run = {.copy_state = true};
    for (uint64_t slice = 1; slice <= want_gas + 1; slice++) {
        slicing_outcome o = sliced_run(&run, note_try_pause, "run", (int32_t)n, slice, &r);
        assert_int_equal((uint64_t)r.of.i64, run_ref(n));
        assert_int_equal(o.gas, want_gas);
        assert_int_equal(state_hash(&run.fx[run.at]), want_hash);
        fx_close(&run.fx[run.at]);
    }
    assert_true(run.deep > 0 && run.in_step > 0);
}

static void note_kept_exception(void *user, const slicing_world *w, const ri_suspension *d) {
    (void)w;
    sliced *run = user;
    for (uint32_t i = 0; i < d->nframes; i++) {
        if (!d->frames[i].nexns) continue;
        run->kept++;
        assert_int_equal(d->frames[i].exns[0].tag_index, 0); /* $e */
        assert_int_equal(d->frames[i].exns[0].nvals, 1);
        assert_int_equal(d->frames[i].exns[0].vals[0].bits % 4, 0);
    }
}

/* A stop inside a catch clause that keeps its exception for a rethrow: the description
 * carries the exception (tag and values), and the rethrow after the rebuild throws it. */
static void paused_in_a_clause_keeping_its_exception(void **state) {
    (void)state;
    sliced run = {.copy_state = false};
    for (uint64_t slice = 1; slice < 200; slice++) {
        ri_val r;
        sliced_run(&run, note_kept_exception, "rethrow_loop", 3, slice, &r);
        assert_int_equal(r.of.i32, 0 + 4 + 8);
        fx_close(&run.fx[run.at]);
    }
    assert_true(run.kept > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(throws_unwind_to_their_catch),
        cmocka_unit_test(uncaught_is_a_trap_at_the_embedder),
        cmocka_unit_test(kept_exception_survives_a_nested_run),
        cmocka_unit_test(paused_inside_try_resumes_in_a_fresh_store),
        cmocka_unit_test(paused_in_a_clause_keeping_its_exception),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
