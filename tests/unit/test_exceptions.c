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
    ri_memory *mem = ri_instance_memory(fx->instance, 0);
    const uint8_t *p = ri_memory_data(mem);
    uint64_t h = 1469598103934665603u;
    for (uint64_t i = 0; i < ri_memory_size(mem); i++) h = (h ^ p[i]) * 1099511628211u;
    return h ^ (uint64_t)ri_global_get(ri_instance_global(fx->instance, 0)).of.i64;
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

static void copy_state(fixture *from, fixture *to) {
    ri_memory *a = ri_instance_memory(from->instance, 0), *b = ri_instance_memory(to->instance, 0);
    memcpy(ri_memory_data(b), ri_memory_data(a), ri_memory_size(a));
    assert_true(ri_global_set(ri_instance_global(to->instance, 0), ri_global_get(ri_instance_global(from->instance, 0))));
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
    uint32_t deep = 0, in_step = 0;
    for (uint64_t slice = 1; slice <= want_gas + 1; slice++) {
        fx_open(&fx);
        ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_GAS);
        ri_store_set_gas(fx.store, slice);
        ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "run"), &a, 1, &r, 1, &err);
        uint64_t given = slice;
        while (rc == RI_ERR_SUSPENDED) {
            ri_suspension d;
            if (!ri_store_describe_suspended(fx.store, fx.instance, &d, &err)) {
                print_error("describe: %s\n", err.message);
                fail();
            }
            if (d.nframes >= 4) deep++;                                   /* run > step > middle > thrower */
            if (d.nframes == 2 && d.frames[1].point == RI_SUSP_GAS) in_step++; /* e.g. a catch clause's start */
            fixture to;
            fx_open(&to);
            copy_state(&fx, &to);
            if (!ri_store_rebuild_suspended(to.store, to.instance, &d, &err)) {
                print_error("rebuild: %s\n", err.message);
                fail();
            }
            ri_suspension_free(&d);
            ri_store_set_suspend_mode(to.store, RI_SUSPEND_ON_GAS);
            ri_store_set_gas(to.store, ri_store_gas(fx.store));
            fx_close(&fx);
            fx = to;
            rc = ri_store_resume(fx.store, slice, &r, 1, &err);
            given += slice;
        }
        if (rc != RI_OK) print_error("slice %u: %s\n", (unsigned)slice, err.message);
        assert_int_equal(rc, RI_OK);
        assert_int_equal((uint64_t)r.of.i64, run_ref(n));
        assert_int_equal(given - ri_store_gas(fx.store), want_gas);
        assert_int_equal(state_hash(&fx), want_hash);
        fx_close(&fx);
    }
    assert_true(deep > 0 && in_step > 0);
}

/* A stop inside a catch clause that keeps its exception for a rethrow: the description
 * carries the exception (tag and values), and the rethrow after the rebuild throws it. */
static void paused_in_a_clause_keeping_its_exception(void **state) {
    (void)state;
    uint32_t kept = 0;
    for (uint64_t slice = 1; slice < 200; slice++) {
        fixture fx;
        fx_open(&fx);
        ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_GAS);
        ri_store_set_gas(fx.store, slice);
        ri_val a = ri_val_i32(3), r;
        ri_error err;
        ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "rethrow_loop"), &a, 1, &r, 1, &err);
        while (rc == RI_ERR_SUSPENDED) {
            ri_suspension d;
            if (!ri_store_describe_suspended(fx.store, fx.instance, &d, &err)) {
                print_error("describe: %s\n", err.message);
                fail();
            }
            for (uint32_t i = 0; i < d.nframes; i++) {
                if (!d.frames[i].nexns) continue;
                kept++;
                assert_int_equal(d.frames[i].exns[0].tag_index, 0); /* $e */
                assert_int_equal(d.frames[i].exns[0].nvals, 1);
                assert_int_equal(d.frames[i].exns[0].vals[0].bits % 4, 0);
            }
            fixture to;
            fx_open(&to);
            if (!ri_store_rebuild_suspended(to.store, to.instance, &d, &err)) {
                print_error("rebuild: %s\n", err.message);
                fail();
            }
            ri_suspension_free(&d);
            ri_store_set_suspend_mode(to.store, RI_SUSPEND_ON_GAS);
            ri_store_set_gas(to.store, ri_store_gas(fx.store));
            fx_close(&fx);
            fx = to;
            rc = ri_store_resume(fx.store, slice, &r, 1, &err);
        }
        assert_int_equal(rc, RI_OK);
        assert_int_equal(r.of.i32, 0 + 4 + 8);
        fx_close(&fx);
    }
    assert_true(kept > 0);
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
