/*
 * Suspended calls in the engine (ri/engine.h "suspension"): a run cut into slices at
 * every possible gas value ends with the same result, the same memory and globals and
 * the same total gas as the uninterrupted run; every slice is also described in
 * WebAssembly terms and rebuilt in a fresh store before it goes on; deep recursion,
 * interrupts from another thread, host yields (metered and unmetered code), nested
 * host -> WebAssembly runs (refused), hostile descriptions (refused, store unchanged).
 * Fixture: tests/wat/suspend.wat.
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

#include "ri/engine.h"
#include "engine_slicing.h"
#include "sandbox_test_util.h" /* read_fixture */

/* ---- fixture ------------------------------------------------------------------------------ */

typedef struct host_ctx {
    int yield_every;        /* env.yield yields on calls i % yield_every == 0 (0: never) */
    ri_func *spin;          /* env.reenter calls this export of the store (nested run) */
    uint64_t nested_gas;    /* gas for the nested run */
    int yield_in_nested;
    bool pause_first;       /* env.yield pauses before each call once (ri_host_pause_before) */
    bool paused;            /* ... and this call has paused already */
    char nested_message[RI_ERROR_MESSAGE_MAX];
} host_ctx;

typedef struct fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
    host_ctx ctx;
} fixture;

static uint8_t *module_bytes;
static size_t module_len;

static int host_yield_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    host_ctx *ctx = user;
    if (ctx->pause_first && !ctx->paused) {
        ctx->paused = true;
        return ri_host_pause_before(call); /* nothing done: the call is made again */
    }
    ctx->paused = false;
    results[0] = ri_val_i32(args[0].of.i32 * 2 + 1);
    if (ctx->yield_every && args[0].of.i32 % ctx->yield_every == 0) return ri_host_yield(call);
    return 0;
}

static int host_reenter_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    host_ctx *ctx = user;
    ri_store *store = ri_host_call_store(call);
    ri_error err;
    uint64_t saved = ri_store_gas(store);
    ri_store_set_gas(store, ctx->nested_gas);
    ri_errcode rc = ri_func_call(store, ctx->spin, args, 1, results, 1, &err);
    ri_store_set_gas(store, saved);
    if (rc != RI_OK) {
        snprintf(ctx->nested_message, sizeof ctx->nested_message, "%s", err.message);
        return ri_host_fail(call, "nested: %s", err.message);
    }
    return 0;
}

static void load_bytes(void) {
    if (!module_bytes) module_bytes = read_fixture("suspend", &module_len);
}

static void fx_open(fixture *fx, bool unmetered) {
    load_bytes();
    memset(fx, 0, sizeof *fx);
    ri_module_config mc;
    memset(&mc, 0, sizeof mc);
    mc.unmetered = unmetered;
    ri_error err;
    fx->module = ri_module_load(module_bytes, module_len, &mc, &err);
    assert_non_null(fx->module);
    fx->store = ri_store_new(NULL);
    assert_non_null(fx->store);
    static const ri_valtype i32[1] = {RI_I32};
    ri_functype t = {1, 1, i32, i32};
    ri_extern imports[2];
    imports[0].kind = RI_EXTERN_FUNC;
    imports[0].of.func = ri_func_new_host(fx->store, &t, host_yield_fn, &fx->ctx);
    imports[1].kind = RI_EXTERN_FUNC;
    imports[1].of.func = ri_func_new_host(fx->store, &t, host_reenter_fn, &fx->ctx);
    fx->instance = ri_instantiate(fx->store, fx->module, imports, 2, &err);
    assert_non_null(fx->instance);
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, "spin", &ext));
    fx->ctx.spin = ext.of.func;
}

static void fx_close(fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

static ri_func *export_func(fixture *fx, const char *name) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, name, &ext));
    assert_int_equal(ext.kind, RI_EXTERN_FUNC);
    return ext.of.func;
}

/* Memory 0 and the global, to compare final states. */
static uint64_t state_hash(fixture *fx) {
    ri_val g = ri_global_get(ri_instance_global(fx->instance, 0));
    return slicing_memory_hash(fx->instance) ^ (uint64_t)g.of.i64;
}

static slicing_world world_of(const fixture *fx) { return (slicing_world){fx->store, fx->instance}; }

/* Moves memory 0 and the global of `from` into `to` (what a snapshot restore does). */
static void copy_state(fixture *from, fixture *to) {
    slicing_world a = world_of(from), b = world_of(to);
    slicing_copy_state(&a, &b);
}

/* ---- slicing at every gas value ---------------------------------------------------------- */

typedef struct seen {
    int top[6];             /* running-frame point kinds seen */
    uint32_t max_frames;
    int indirect_caller;    /* a caller frame waiting in call_indirect (mix calling through the table) */
} seen;

/* Runs export(arg) uninterrupted: result bits, gas used, final state. */
static void reference_run(bool unmetered, const char *name, int32_t arg, uint64_t *result, uint64_t *gas,
                          uint64_t *hash) {
    fixture fx;
    fx_open(&fx, unmetered);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_val a = ri_val_i32(arg), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, name), &a, 1, &r, 1, &err), RI_OK);
    *result = r.type == RI_I64 ? (uint64_t)r.of.i64 : (uint32_t)r.of.i32;
    *gas = UINT64_MAX / 2 - ri_store_gas(fx.store);
    *hash = state_hash(&fx);
    fx_close(&fx);
}

/* A sliced run's fixtures: the one it runs in, and the fresh one a move opens (the host
 * functions keep pointing at their fixture's ctx, so fixtures stay where they are). */
typedef struct sliced {
    fixture fx[2];
    int at;
    seen *s;
} sliced;

static void note_pause(void *user, const slicing_world *w, const ri_suspension *d) {
    seen *s = ((sliced *)user)->s;
    assert_true(ri_store_suspended(w->store));
    assert_int_equal(ri_store_suspend_reason(w->store), RI_SUSPENDED_GAS);
    const ri_susp_frame *top = &d->frames[d->nframes - 1];
    s->top[top->point]++;
    if (d->nframes > s->max_frames) s->max_frames = d->nframes;
    if (d->nframes > 1 && d->frames[0].point == RI_SUSP_CALL && d->frames[1].func_index != d->frames[0].func_index)
        s->indirect_caller++;
}

/* The suspended call rebuilt in a fresh store (state copied), where it describes as the
 * original. */
static slicing_world move_to_fresh(void *user, const slicing_world *from, const ri_suspension *d) {
    sliced *run = user;
    fixture *to = &run->fx[!run->at];
    fx_open(to, false);
    slicing_world w = world_of(to);
    slicing_copy_state(from, &w);
    slicing_rebuild(&w, d);
    slicing_expect_described_as(&w, d, SLICING_SAME_VALUES);
    fx_close(&run->fx[run->at]);
    run->at = !run->at;
    return w;
}

/* Runs export(arg) in slices of `slice` gas. With `move`, each suspended call is
 * described, rebuilt in a fresh store (state copied) and continued there. */
static void sliced_run(const char *name, int32_t arg, uint64_t slice, bool move, uint64_t *result, uint64_t *gas,
                       uint64_t *hash, seen *s, uint32_t *nslices) {
    sliced run = {.at = 0, .s = s};
    fixture *fx = &run.fx[0];
    fx_open(fx, false);
    slicing sl = {.slice = slice, .max_slices = 1000000, .user = &run, .paused = note_pause,
                  .move = move ? move_to_fresh : NULL};
    slicing_world w = world_of(fx);
    ri_val a = ri_val_i32(arg), r;
    slicing_outcome o = slicing_run(&sl, &w, export_func(fx, name), &a, 1, &r, 1);
    fx = &run.fx[run.at];
    assert_false(ri_store_suspended(fx->store));
    *nslices = o.slices;
    *result = r.type == RI_I64 ? (uint64_t)r.of.i64 : (uint32_t)r.of.i32;
    *gas = o.gas;
    *hash = state_hash(fx);
    fx_close(fx);
}

static void every_gas_value_gives_the_same_run(void **state) {
    (void)state;
    uint64_t want, want_gas, want_hash;
    reference_run(false, "mix", 12, &want, &want_gas, &want_hash);
    assert_true(want_gas > 100 && want_gas < 5000);
    seen s;
    memset(&s, 0, sizeof s);
    for (uint64_t slice = 1; slice <= want_gas + 1; slice++) {
        uint64_t got, gas, hash;
        uint32_t n;
        sliced_run("mix", 12, slice, false, &got, &gas, &hash, &s, &n);
        assert_int_equal(got, want);
        assert_int_equal(gas, want_gas); /* the slices' gas adds up exactly */
        assert_int_equal(hash, want_hash);
        if (slice > want_gas) assert_int_equal(n, 1);
    }
    /* Every kind of stop point was a place to stop at. */
    assert_true(s.top[RI_SUSP_ENTRY] > 0);
    assert_true(s.top[RI_SUSP_GAS] > 0);
    assert_true(s.top[RI_SUSP_LOOP] > 0);
    assert_true(s.top[RI_SUSP_BULK] > 0);
    assert_true(s.max_frames >= 4); /* mix -> tri -> tri -> tri */
    assert_true(s.indirect_caller > 0);
}

static void every_slice_moved_to_a_fresh_store(void **state) {
    (void)state;
    uint64_t want, want_gas, want_hash;
    reference_run(false, "mix", 12, &want, &want_gas, &want_hash);
    seen s;
    memset(&s, 0, sizeof s);
    /* Small slices: hundreds of moves, through every point kind. */
    static const uint64_t slices[] = {1, 2, 3, 5, 7, 13, 29, 64};
    for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) {
        uint64_t got, gas, hash;
        uint32_t n;
        sliced_run("mix", 12, slices[i], true, &got, &gas, &hash, &s, &n);
        assert_int_equal(got, want);
        assert_int_equal(gas, want_gas);
        assert_int_equal(hash, want_hash);
    }
    assert_true(s.top[RI_SUSP_BULK] > 0 && s.top[RI_SUSP_ENTRY] > 0 && s.top[RI_SUSP_LOOP] > 0);
}

static void deep_recursion_suspends_midway(void **state) {
    (void)state;
    uint64_t want, want_gas, want_hash;
    reference_run(false, "deep", 3000, &want, &want_gas, &want_hash);
    assert_int_equal(want, 9001);
    /* Cut in the middle of the descent and of the return, moved each time. */
    seen s;
    memset(&s, 0, sizeof s);
    uint64_t got, gas, hash;
    uint32_t n;
    sliced_run("deep", 3000, want_gas / 3 + 1, true, &got, &gas, &hash, &s, &n);
    assert_int_equal(got, want);
    assert_int_equal(gas, want_gas);
    assert_true(s.max_frames > 1000);
    assert_true(n >= 3);
}

/* ---- interrupts --------------------------------------------------------------------------- */

typedef struct interrupter {
    ri_store *store;
} interrupter;

static void *interrupt_soon(void *arg) {
    interrupter *it = arg;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ri_store_interrupt(it->store);
    return NULL;
}

static void interrupt_then_resume(bool unmetered) {
    const int32_t rounds = 20000000; /* hundreds of ms uninterrupted: the interrupt comes first */
    fixture fx;
    fx_open(&fx, unmetered);
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_INTERRUPT);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    interrupter it = {fx.store};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, interrupt_soon, &it), 0);
    ri_val a = ri_val_i32(rounds), r;
    ri_error err;
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "spin"), &a, 1, &r, 1, &err);
    pthread_join(th, NULL);
    assert_int_equal(rc, RI_ERR_SUSPENDED);
    assert_int_equal(ri_store_suspend_reason(fx.store), RI_SUSPENDED_INTERRUPT);
    uint64_t used = UINT64_MAX / 2 - ri_store_gas(fx.store);
    ri_store_clear_interrupt(fx.store);
    /* A normal call is refused while the call is suspended. */
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "spin"), &a, 1, &r, 1, &err), RI_ERR_ARGUMENT);
    uint64_t left = ri_store_gas(fx.store);
    rc = ri_store_resume(fx.store, 0, &r, 1, &err); /* what was left is plenty */
    assert_int_equal(rc, RI_OK);
    used += left - ri_store_gas(fx.store);
    /* The value computed directly, and the gas of the uninterrupted run: gas(n) is
     * linear in n, so two short runs give it. */
    uint32_t x = 1;
    for (int32_t i = 0; i < rounds; i++) x = x * 1103515245u + 12345u;
    assert_int_equal((uint32_t)r.of.i32, x);
    if (unmetered) { /* stopped at a loop header (LOOP_U); no gas is charged */
        assert_int_equal(used, 0);
        fx_close(&fx);
        return;
    }
    uint64_t v, g1, g2, h;
    reference_run(false, "spin", 1000, &v, &g1, &h);
    reference_run(false, "spin", 2000, &v, &g2, &h);
    uint64_t per_round = (g2 - g1) / 1000, base = g1 - per_round * 1000;
    assert_int_equal(used, per_round * (uint64_t)rounds + base);
    fx_close(&fx);
}

static void interrupt_from_another_thread_then_resume(void **state) {
    (void)state;
    interrupt_then_resume(false);
}

static void interrupt_unmetered_code_then_resume(void **state) {
    (void)state;
    interrupt_then_resume(true);
}

/* ---- host yields ------------------------------------------------------------------------------ */

static void host_yield_pauses_after_the_call(bool unmetered) {
    uint64_t want, want_gas, want_hash;
    reference_run(unmetered, "yields", 10, &want, &want_gas, &want_hash);
    fixture fx;
    fx_open(&fx, unmetered);
    fx.ctx.yield_every = 3; /* calls 0, 3, 6, 9 yield */
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_YIELD);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_val a = ri_val_i32(10), r;
    ri_error err;
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "yields"), &a, 1, &r, 1, &err);
    uint64_t used = UINT64_MAX / 2 - ri_store_gas(fx.store);
    int pauses = 0;
    while (rc == RI_ERR_SUSPENDED) {
        pauses++;
        assert_int_equal(ri_store_suspend_reason(fx.store), RI_SUSPENDED_YIELD);
        /* Paused right after the call: a GAS point, the call's result on the stack. */
        ri_suspension d;
        assert_true(ri_store_describe_suspended(fx.store, fx.instance, &d, &err));
        assert_int_equal(d.nframes, 1);
        assert_int_equal(d.frames[0].point, RI_SUSP_GAS);
        assert_true(d.frames[0].nstack >= 1);
        assert_int_equal(d.frames[0].stack[d.frames[0].nstack - 1].type, RI_I32);
        fixture to;
        fx_open(&to, unmetered);
        to.ctx.yield_every = 3;
        copy_state(&fx, &to);
        assert_true(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
        ri_suspension_free(&d);
        ri_store_set_suspend_mode(to.store, RI_SUSPEND_ON_YIELD);
        fx_close(&fx);
        fx = to;
        ri_store_set_gas(fx.store, UINT64_MAX / 2);
        rc = ri_store_resume(fx.store, 0, &r, 1, &err);
        used += UINT64_MAX / 2 - ri_store_gas(fx.store);
    }
    assert_int_equal(rc, RI_OK);
    assert_int_equal(pauses, 4);
    assert_int_equal((uint32_t)r.of.i32, want);
    assert_int_equal(used, want_gas);
    fx_close(&fx);
}

static void host_yield_metered(void **state) {
    (void)state;
    host_yield_pauses_after_the_call(false);
}

static void host_yield_unmetered(void **state) {
    (void)state;
    host_yield_pauses_after_the_call(true);
}

static void yield_without_the_mode_fails_the_call(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    fx.ctx.yield_every = 1;
    ri_val a = ri_val_i32(2), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "yields"), &a, 1, &r, 1, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_HOST);
    assert_non_null(strstr(err.message, "cannot be suspended"));
    assert_false(ri_store_suspended(fx.store));
    fx_close(&fx);
}

static void pause_before_a_host_call(void **state) {
    (void)state;
    uint64_t want, want_gas, want_hash;
    reference_run(false, "yields", 5, &want, &want_gas, &want_hash);
    fixture fx;
    fx_open(&fx, false);
    fx.ctx.pause_first = true;
    /* Without the gas mode the call fails as out of gas. */
    ri_val a = ri_val_i32(5), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "yields"), &a, 1, &r, 1, &err), RI_ERR_TRAP);
    assert_non_null(strstr(err.message, "out of gas"));
    fx.ctx.paused = false;
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_GAS);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "yields"), &a, 1, &r, 1, &err);
    uint64_t used = UINT64_MAX / 2 - ri_store_gas(fx.store);
    int pauses = 0;
    while (rc == RI_ERR_SUSPENDED) {
        pauses++;
        assert_int_equal(ri_store_suspend_reason(fx.store), RI_SUSPENDED_GAS);
        ri_suspension d;
        assert_true(ri_store_describe_suspended(fx.store, fx.instance, &d, &err));
        ri_susp_frame *top = &d.frames[d.nframes - 1];
        assert_int_equal(top->point, RI_SUSP_CALL); /* before the call, its argument on the stack */
        assert_true(top->nstack >= 1);
        assert_int_equal(top->stack[top->nstack - 1].type, RI_I32);
        assert_int_equal(top->stack[top->nstack - 1].bits, (uint64_t)(pauses - 1));
        fixture to;
        fx_open(&to, false);
        to.ctx.pause_first = true;
        to.ctx.paused = true; /* this call has had its pause */
        copy_state(&fx, &to);
        assert_true(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
        ri_suspension_free(&d);
        ri_store_set_suspend_mode(to.store, RI_SUSPEND_ON_GAS);
        ri_store_set_gas(to.store, ri_store_gas(fx.store));
        uint64_t left = ri_store_gas(to.store);
        fx_close(&fx);
        fx = to;
        rc = ri_store_resume(fx.store, 0, &r, 1, &err);
        used += left - ri_store_gas(fx.store);
    }
    assert_int_equal(rc, RI_OK);
    assert_int_equal(pauses, 5);
    assert_int_equal((uint32_t)r.of.i32, want);
    assert_int_equal(used, want_gas);
    fx_close(&fx);
}

/* ---- nested runs ---------------------------------------------------------------------------- */

static void nested_run_is_not_suspended(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ALL);
    ri_store_set_gas(fx.store, 1000000);
    fx.ctx.nested_gas = 50; /* the nested spin runs out */
    ri_val a = ri_val_i32(1000), r;
    ri_error err;
    ri_errcode rc = ri_func_call(fx.store, export_func(&fx, "nested"), &a, 1, &r, 1, &err);
    assert_int_equal(rc, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_HOST);
    assert_non_null(strstr(fx.ctx.nested_message, "out of gas"));
    assert_non_null(strstr(fx.ctx.nested_message, "not suspended"));
    assert_false(ri_store_suspended(fx.store));
    /* The store works as before. */
    fx.ctx.nested_gas = 1000000;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "nested"), &a, 1, &r, 1, &err), RI_OK);
    fx_close(&fx);
}

/* ---- hostile descriptions ------------------------------------------------------------------- */

static void expect_refused(const ri_suspension *d, const char *why) {
    fixture to;
    fx_open(&to, false);
    ri_error err;
    if (ri_store_rebuild_suspended(to.store, to.instance, d, &err)) {
        print_error("accepted: %s\n", why);
        fail();
    }
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    assert_false(ri_store_suspended(to.store));
    /* Unchanged: an ordinary call runs. */
    ri_val a = ri_val_i32(5), r;
    assert_int_equal(ri_func_call(to.store, export_func(&to, "deep"), &a, 1, &r, 1, &err), RI_OK);
    assert_int_equal(r.of.i32, 16);
    fx_close(&to);
}

static void hostile_descriptions_are_refused(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_GAS);
    ri_store_set_gas(fx.store, 150);
    ri_val a = ri_val_i32(12), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "mix"), &a, 1, &r, 1, &err), RI_ERR_SUSPENDED);
    ri_suspension d;
    assert_true(ri_store_describe_suspended(fx.store, fx.instance, &d, &err));
    assert_true(d.nframes >= 1);
    ri_susp_frame *f = &d.frames[d.nframes - 1];
    ri_susp_frame *f0 = &d.frames[0];
    int refused = 0;
#define MUTATE(field, value, why) \
    do { __typeof__(field) saved_ = field; field = value; expect_refused(&d, why); field = saved_; refused++; } while (0)
    MUTATE(d.nframes, 0, "no frames");
    MUTATE(d.reason, (ri_suspend_reason)9, "unknown reason");
    MUTATE(d.func_index, d.func_index + 1, "called function differs");
    MUTATE(f0->func_index, 0, "an import as a frame");
    MUTATE(f0->func_index, 99999, "function out of range");
    MUTATE(f0->wasm_offset, f0->wasm_offset + 0x10000, "not a stop point");
    MUTATE(f0->wasm_offset, 0, "offset zero");
    MUTATE(f->point, (ri_susp_point)4, "trap point");
    MUTATE(f->nlocals, f->nlocals + 1, "locals count");
    MUTATE(f->nstack, f->nstack + 1, "stack height");
    if (f->nlocals) {
        MUTATE(f->locals[0].type, RI_F32, "local type");
        if (f->locals[0].type == RI_I32) MUTATE(f->locals[0].bits, UINT64_C(1) << 32, "i32 above 2^32");
    }
    if (f->nstack) MUTATE(f->stack[0].type, RI_FUNCREF, "operand type");
    if (d.nframes > 1) {
        MUTATE(f0->point, RI_SUSP_GAS, "caller not at a call");
        MUTATE(f0->nstack, f0->nstack + 1, "caller operands");
        MUTATE(d.frames[1].func_index, d.frames[1].func_index == 3 ? 4 : 3, "callee of another type or function");
    }
#undef MUTATE
    assert_true(refused >= 10);
    /* The description itself still rebuilds and finishes the run. */
    fixture to;
    fx_open(&to, false);
    copy_state(&fx, &to);
    assert_true(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
    /* A second rebuild into the same store is refused: a call is already suspended. */
    assert_false(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
    assert_int_equal(ri_store_resume(to.store, UINT64_MAX / 4, &r, 1, &err), RI_OK);
    uint64_t want, want_gas, want_hash;
    reference_run(false, "mix", 12, &want, &want_gas, &want_hash);
    assert_int_equal((uint64_t)r.of.i64, want);
    assert_int_equal(state_hash(&to), want_hash);
    ri_suspension_free(&d);
    fx_close(&to);
    fx_close(&fx);
}

static void abandon_frees_the_store(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_GAS);
    ri_store_set_gas(fx.store, 100);
    ri_val a = ri_val_i32(100), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "deep"), &a, 1, &r, 1, &err), RI_ERR_SUSPENDED);
    assert_int_equal(ri_store_resume(fx.store, 10, &r, 0, &err), RI_ERR_ARGUMENT); /* wrong result count */
    ri_store_abandon(fx.store);
    assert_false(ri_store_suspended(fx.store));
    assert_int_equal(ri_store_resume(fx.store, 10, &r, 1, &err), RI_ERR_ARGUMENT);
    ri_store_set_gas(fx.store, 1000000);
    assert_int_equal(ri_func_call(fx.store, export_func(&fx, "deep"), &a, 1, &r, 1, &err), RI_OK);
    assert_int_equal(r.of.i32, 301);
    fx_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_gas_value_gives_the_same_run),
        cmocka_unit_test(every_slice_moved_to_a_fresh_store),
        cmocka_unit_test(deep_recursion_suspends_midway),
        cmocka_unit_test(interrupt_from_another_thread_then_resume),
        cmocka_unit_test(interrupt_unmetered_code_then_resume),
        cmocka_unit_test(host_yield_metered),
        cmocka_unit_test(host_yield_unmetered),
        cmocka_unit_test(yield_without_the_mode_fails_the_call),
        cmocka_unit_test(pause_before_a_host_call),
        cmocka_unit_test(nested_run_is_not_suspended),
        cmocka_unit_test(hostile_descriptions_are_refused),
        cmocka_unit_test(abandon_frees_the_store),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(module_bytes);
    return rc;
}
