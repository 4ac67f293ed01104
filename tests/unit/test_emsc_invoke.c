/*
 * Emscripten's invoke and throw as engine operations (ri_func_new_emscripten): results
 * as Emscripten's JavaScript glue gives them (the expected values below are what Node
 * computes on the same module with the glue's invoke: stackSave, try, catch: stackRestore,
 * setThrew(1, 0)), nested invokes, throws through several frames, a throw with no catch
 * point, bad table elements; and every gas slice of a program that throws and catches,
 * paused inside invokes and inside setThrew, written as a snapshot (FRMS layout 2), read,
 * restored in a fresh store and resumed: the same results, state and total gas.
 * Fixture: tests/wat/emsc_invoke.wat.
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
#include "ri/snapshot.h"
#include "engine_slicing.h"
#include "sandbox_test_util.h" /* read_fixture */

typedef struct fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
} fixture;

static uint8_t *module_bytes;
static size_t module_len;

static void fx_open(fixture *fx) {
    if (!module_bytes) module_bytes = read_fixture("emsc_invoke", &module_len);
    memset(fx, 0, sizeof *fx);
    ri_error err;
    fx->module = ri_module_load(module_bytes, module_len, NULL, &err);
    assert_non_null(fx->module);
    fx->store = ri_store_new(NULL);
    assert_non_null(fx->store);
    static const ri_valtype ii[2] = {RI_I32, RI_I32};
    ri_functype invoke_ii = {2, 1, ii, ii}, invoke_vi = {2, 0, ii, NULL}, none = {0, 0, NULL, NULL};
    ri_extern imports[3];
    for (int i = 0; i < 3; i++) imports[i].kind = RI_EXTERN_FUNC;
    imports[0].of.func = ri_func_new_emscripten(fx->store, RI_EMSCRIPTEN_INVOKE, &invoke_ii);
    imports[1].of.func = ri_func_new_emscripten(fx->store, RI_EMSCRIPTEN_INVOKE, &invoke_vi);
    imports[2].of.func = ri_func_new_emscripten(fx->store, RI_EMSCRIPTEN_THROW, &none);
    for (int i = 0; i < 3; i++) assert_non_null(imports[i].of.func);
    fx->instance = ri_instantiate(fx->store, fx->module, imports, 3, &err);
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

static int32_t global_i32(fixture *fx, uint32_t i) { return ri_global_get(ri_instance_global(fx->instance, i)).of.i32; }

/* export(arg) (nargs 0 or 1) to completion: its result; the error code in *rc. */
static int32_t call(fixture *fx, const char *name, int nargs, int32_t arg, ri_errcode *rc, ri_error *err) {
    ri_store_set_gas(fx->store, UINT64_MAX / 2);
    ri_val a = ri_val_i32(arg), r;
    memset(&r, 0, sizeof r);
    *rc = ri_func_call(fx->store, export_func(fx, name), &a, (uint32_t)nargs, &r, 1, err);
    return r.of.i32;
}

static void results_are_the_glue_s(void **state) {
    (void)state;
    static const struct { const char *name; int32_t arg, want, log; } cases[] = {
        {"sum", 100, 5050, 0},                          /* an invoke that returns */
        {"deep", 5, 1000000, 259900094},                /* a throw six frames down, caught */
        {"nested", 3, 314, 3},                          /* an invoke inside an invoke */
        {"mix", 4, 2027723906, 2019125282},
        {"mix", 7, 446550275, 437791271},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture fx;
        fx_open(&fx);
        ri_errcode rc;
        ri_error err;
        int32_t got = call(&fx, cases[i].name, 1, cases[i].arg, &rc, &err);
        if (rc != RI_OK) print_error("%s: %s\n", cases[i].name, err.message);
        assert_int_equal(rc, RI_OK);
        assert_int_equal(got, cases[i].want);
        assert_int_equal(call(&fx, "log", 0, 0, &rc, &err), cases[i].log);
        if (strcmp(cases[i].name, "mix") != 0) assert_int_equal(global_i32(&fx, 0), 4096); /* restored */
        fx_close(&fx);
    }
}

static void a_throw_with_no_catch_point_traps(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx);
    ri_errcode rc;
    ri_error err;
    call(&fx, "uncaught", 0, 0, &rc, &err);
    assert_int_equal(rc, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_HOST);
    assert_non_null(strstr(err.message, "uncaught longjmp"));
    /* The store is usable afterwards, and its next invoke catches as usual. */
    assert_int_equal(call(&fx, "deep", 1, 2, &rc, &err), 1000000);
    assert_int_equal(rc, RI_OK);
    fx_close(&fx);
}

static void bad_elements_trap_as_call_indirect(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx);
    ri_errcode rc;
    ri_error err;
    call(&fx, "bad_index", 0, 0, &rc, &err);
    assert_int_equal(rc, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_UNDEFINED_ELEMENT);
    call(&fx, "bad_type", 0, 0, &rc, &err);
    assert_int_equal(rc, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_INDIRECT_MISMATCH);
    fx_close(&fx);
}

static void wrong_types_are_refused(void **state) {
    (void)state;
    ri_store *store = ri_store_new(NULL);
    static const ri_valtype i64[1] = {RI_I64}, i32[2] = {RI_I32, RI_I32};
    ri_functype no_index = {1, 0, i64, NULL}, empty = {0, 0, NULL, NULL}, two_results = {1, 2, i32, i32};
    assert_null(ri_func_new_emscripten(store, RI_EMSCRIPTEN_INVOKE, &no_index));
    assert_null(ri_func_new_emscripten(store, RI_EMSCRIPTEN_INVOKE, &empty));
    assert_null(ri_func_new_emscripten(store, RI_EMSCRIPTEN_INVOKE, &two_results));
    assert_null(ri_func_new_emscripten(store, RI_EMSCRIPTEN_THROW, &no_index));
    assert_null(ri_func_new_emscripten(store, (ri_emscripten_op)7, &empty));
    ri_store_free(store);
}

/* ---- paused inside invokes ---------------------------------------------------------------- */

/* A sliced run's fixtures (the one it runs in, the fresh one a move opens) and what its
 * pauses showed. */
typedef struct sliced {
    fixture fx[2];
    int at;
    uint32_t invoke_frames, setthrew_frames, max_frames;
} sliced;

static void note_pause(void *user, const slicing_world *w, const ri_suspension *d) {
    (void)w;
    sliced *s = user;
    if (d->nframes > s->max_frames) s->max_frames = d->nframes;
    for (uint32_t i = 0; i < d->nframes; i++) {
        s->invoke_frames += d->frames[i].via == RI_SUSP_VIA_INVOKE;
        s->setthrew_frames += d->frames[i].via == RI_SUSP_VIA_SETTHREW;
    }
}

/* The suspended call, through a WSNP v2 image, into a fresh fixture. */
static slicing_world move_through_snapshot(void *user, const slicing_world *from, const ri_suspension *d) {
    sliced *run = user;
    slicing_image x;
    slicing_image_of(from->instance, module_len, "mix", d, &x);
    fixture *to = &run->fx[!run->at];
    fx_open(to);
    x.img.has_frames = false; /* the state; the call is rebuilt below (as a sandbox restore does) */
    ri_snap_error serr;
    if (!ri_snap_restore(to->instance, &x.img, &serr)) {
        print_error("restore: %s\n", serr.message);
        fail();
    }
    slicing_world w = {to->store, to->instance};
    slicing_rebuild(&w, &x.call.suspension);
    /* The rebuilt call describes as the original, catch points included. */
    slicing_expect_described_as(&w, d, SLICING_SAME_VIA);
    slicing_image_free(&x);
    fx_close(&run->fx[run->at]);
    run->at = !run->at;
    return w;
}

static void sliced_mix(int32_t arg, uint64_t slice, int32_t *result, uint64_t *gas, int32_t *log, sliced *run) {
    run->at = 0;
    fx_open(&run->fx[0]);
    slicing sl = {.slice = slice, .user = run, .paused = note_pause, .move = move_through_snapshot};
    slicing_world w = {run->fx[0].store, run->fx[0].instance};
    ri_val a = ri_val_i32(arg), r;
    slicing_outcome o = slicing_run(&sl, &w, export_func(&run->fx[0], "mix"), &a, 1, &r, 1);
    fixture *fx = &run->fx[run->at];
    *result = r.of.i32;
    *gas = o.gas;
    *log = global_i32(fx, 3);
    fx_close(fx);
}

static void every_slice_pauses_snapshots_and_resumes_inside_invokes(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx);
    ri_errcode rc;
    ri_error err;
    int32_t want = call(&fx, "mix", 1, 4, &rc, &err);
    uint64_t want_gas = UINT64_MAX / 2 - ri_store_gas(fx.store);
    int32_t want_log = global_i32(&fx, 3);
    fx_close(&fx);
    assert_int_equal(want, 2027723906);
    assert_true(want_gas > 100 && want_gas < 20000);
    sliced s;
    memset(&s, 0, sizeof s);
    for (uint64_t slice = 1; slice <= want_gas + 1; slice += slice < 40 ? 1 : 37) {
        int32_t got, log;
        uint64_t gas;
        sliced_mix(4, slice, &got, &gas, &log, &s);
        assert_int_equal(got, want);
        assert_int_equal(gas, want_gas); /* the slices' gas adds up exactly */
        assert_int_equal(log, want_log);
    }
    assert_true(s.invoke_frames > 0);   /* paused inside invokes, nested ones too */
    assert_true(s.setthrew_frames > 0); /* and inside the setThrew of a caught throw */
    assert_true(s.max_frames >= 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(results_are_the_glue_s),
        cmocka_unit_test(a_throw_with_no_catch_point_traps),
        cmocka_unit_test(bad_elements_trap_as_call_indirect),
        cmocka_unit_test(wrong_types_are_refused),
        cmocka_unit_test(every_slice_pauses_snapshots_and_resumes_inside_invokes),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(module_bytes);
    return rc;
}
