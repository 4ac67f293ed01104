/*
 * Threads (sandbox.h: separate sandboxes are independent and may run on separate
 * threads at the same time; the factory is thread-safe; ri_sandbox_interrupt is the one
 * call allowed from another thread). Worker threads only record what they see; all
 * assertions run on the main thread, since cmocka's are not thread-safe.
 * Fixtures: tests/wat/sb_memcounter.wat, sb_add.wat, sb_fib.wat, sb_loop.wat,
 * sb_interrupt.wat, sb_interrupt_calls.wat.
 */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* pthreads and nanosleep under -std=c11 */
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

static ri_sandbox_config seeded_config(uint32_t seed) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.deterministic_seed = seed;
    c.max_execution_ms = 30000;
    return c;
}

/* Fixture bytes, read once per test on the main thread. */
typedef struct wasm_bytes {
    uint8_t *data;
    size_t len;
} wasm_bytes;

static wasm_bytes fixture(const char *name) {
    wasm_bytes w;
    w.data = read_fixture(name, &w.len);
    return w;
}

/* sb_interrupt_calls.wasm, for the tests that use it. */
static wasm_bytes fixture_calls;

static ri_sandbox *load_into(ri_sandboxes *f, const ri_sandbox_config *cfg, wasm_bytes w) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    ri_sandbox *sb = ri_sandbox_create(f, cfg, &err);
    if (!sb) print_error("create: %s\n", err.message);
    assert_non_null(sb);
    if (!ri_sandbox_load(sb, w.data, w.len, &err)) {
        print_error("load: %s\n", err.message);
        fail();
    }
    return sb;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits until *flag >= want, for at most about timeout_ms. */
static bool wait_for(atomic_int *flag, int want, long timeout_ms) {
    for (long waited = 0; waited < timeout_ms; waited++) {
        if (atomic_load(flag) >= want) return true;
        sleep_ms(1);
    }
    return atomic_load(flag) >= want;
}

/* ---- sandboxes on separate threads ---------------------------------------------------------- */

typedef struct counter_worker {
    ri_sandbox *sb;
    uint32_t seed;
    int rounds;
    atomic_int *go;
    int wrong_random, wrong_count, failures;
    uint8_t *snapshot;
    size_t snapshot_len;
} counter_worker;

static bool run_i32(ri_sandbox *sb, const char *action, int32_t *out) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, NULL);
    bool ok = r.ok && r.nresults == 1;
    if (ok) *out = r.results[0].of.i32;
    ri_sandbox_result_free(&r);
    return ok;
}

/* The bits of a u32 as an i32, without implementation-defined conversion. */
static int32_t as_i32(uint32_t u) {
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void *counter_thread(void *arg) {
    counter_worker *w = arg;
    /* Start together, so the executions really overlap. */
    while (!atomic_load(w->go)) sleep_ms(0);
    uint32_t s = w->seed;
    for (int i = 0; i < w->rounds; i++) {
        int32_t v = 0;
        if (!run_i32(w->sb, "drawAndStore", &v)) w->failures++;
        else if (v != as_i32(ri_mulberry32_next(&s))) w->wrong_random++;
        if (!run_i32(w->sb, "increment", &v)) w->failures++;
        else if (v != i + 1) w->wrong_count++;
    }
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot(w->sb, &w->snapshot, &w->snapshot_len, &err)) w->failures++;
    return NULL;
}

static void two_sandboxes_run_on_two_threads_at_once(void **state) {
    (void)state;
    wasm_bytes w = fixture("sb_memcounter");
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c1 = seeded_config(42), c2 = seeded_config(12345);
    atomic_int go = 0;
    counter_worker a = {load_into(f, &c1, w), 42, 300, &go, 0, 0, 0, NULL, 0};
    counter_worker b = {load_into(f, &c2, w), 12345, 300, &go, 0, 0, 0, NULL, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, counter_thread, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, counter_thread, &b), 0);
    atomic_store(&go, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.failures, 0);
    assert_int_equal(b.failures, 0);
    assert_int_equal(a.wrong_random, 0);
    assert_int_equal(b.wrong_random, 0);
    assert_int_equal(a.wrong_count, 0);
    assert_int_equal(b.wrong_count, 0);
    /* Different seeds, different states. */
    assert_int_equal(a.snapshot_len, b.snapshot_len);
    assert_true(memcmp(a.snapshot, b.snapshot, a.snapshot_len) != 0);
    free(a.snapshot);
    free(b.snapshot);
    ri_sandbox_free(a.sb);
    ri_sandbox_free(b.sb);
    ri_sandboxes_free(f);
    free(w.data);
}

static void same_work_on_two_threads_gives_same_bytes(void **state) {
    (void)state;
    wasm_bytes w = fixture("sb_memcounter");
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = seeded_config(7);
    atomic_int go = 0;
    counter_worker a = {load_into(f, &c, w), 7, 200, &go, 0, 0, 0, NULL, 0};
    counter_worker b = {load_into(f, &c, w), 7, 200, &go, 0, 0, 0, NULL, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, counter_thread, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, counter_thread, &b), 0);
    atomic_store(&go, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.failures + b.failures + a.wrong_random + b.wrong_random, 0);
    assert_non_null(a.snapshot);
    assert_non_null(b.snapshot);
    assert_int_equal(a.snapshot_len, b.snapshot_len);
    assert_memory_equal(a.snapshot, b.snapshot, a.snapshot_len);
    free(a.snapshot);
    free(b.snapshot);
    ri_sandbox_free(a.sb);
    ri_sandbox_free(b.sb);
    ri_sandboxes_free(f);
    free(w.data);
}

/* Each thread creates its own sandboxes from one shared factory. */
enum { FACTORY_THREADS = 8, PER_THREAD = 16 };

typedef struct factory_worker {
    ri_sandboxes *factory;
    wasm_bytes wasm;
    atomic_int *go;
    int failures;
    char ids[PER_THREAD][64];
} factory_worker;

static void *factory_thread(void *arg) {
    factory_worker *w = arg;
    while (!atomic_load(w->go)) sleep_ms(0);
    ri_sandbox_config c = seeded_config(0);
    for (int i = 0; i < PER_THREAD; i++) {
        ri_sandbox_error err;
        ri_sandbox *sb = ri_sandbox_create(w->factory, &c, &err);
        if (!sb) {
            w->failures++;
            continue;
        }
        snprintf(w->ids[i], sizeof w->ids[i], "%s", ri_sandbox_id(sb));
        if (!ri_sandbox_load(sb, w->wasm.data, w->wasm.len, &err)) w->failures++;
        ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[20,22]");
        if (!r.ok || r.results[0].of.i32 != 42) w->failures++;
        ri_sandbox_result_free(&r);
        ri_sandbox_free(sb);
    }
    return NULL;
}

static void shared_factory_hands_out_unique_ids_across_threads(void **state) {
    (void)state;
    wasm_bytes w = fixture("sb_add");
    ri_sandboxes *f = ri_sandboxes_new();
    atomic_int go = 0;
    factory_worker *workers = calloc(FACTORY_THREADS, sizeof *workers);
    assert_non_null(workers);
    pthread_t threads[FACTORY_THREADS];
    for (int t = 0; t < FACTORY_THREADS; t++) {
        workers[t].factory = f;
        workers[t].wasm = w;
        workers[t].go = &go;
        assert_int_equal(pthread_create(&threads[t], NULL, factory_thread, &workers[t]), 0);
    }
    atomic_store(&go, 1);
    for (int t = 0; t < FACTORY_THREADS; t++) pthread_join(threads[t], NULL);
    for (int t = 0; t < FACTORY_THREADS; t++) assert_int_equal(workers[t].failures, 0);
    /* All ids distinct. */
    enum { N = FACTORY_THREADS * PER_THREAD };
    const char **all = calloc(N, sizeof *all);
    assert_non_null(all);
    for (int t = 0; t < FACTORY_THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++) all[t * PER_THREAD + i] = workers[t].ids[i];
    for (int i = 0; i < N; i++) {
        assert_memory_equal(all[i], "sandbox-", 8);
        for (int j = i + 1; j < N; j++) assert_string_not_equal(all[i], all[j]);
    }
    free(all);
    free(workers);
    ri_sandboxes_free(f);
    free(w.data);
}

/* ---- interrupt ----------------------------------------------------------------------------------- */

/* env.started: counts how often the module announced it is running. */
static int started_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    atomic_fetch_add((atomic_int *)user, 1);
    return 0;
}

typedef struct interrupter {
    ri_sandbox *sb;
    atomic_int *started;
    int rounds;
    int missed; /* rounds where the module never said it started */
} interrupter;

static void *interrupter_thread(void *arg) {
    interrupter *in = arg;
    for (int k = 1; k <= in->rounds; k++) {
        if (!wait_for(in->started, k, 20000)) {
            in->missed++;
            continue;
        }
        ri_sandbox_interrupt(in->sb);
    }
    return NULL;
}

static ri_sandbox *interruptible(ri_sandboxes *f, atomic_int *started, wasm_bytes w) {
    ri_host_function fns[1] = {{"started", 0, NULL, 0, NULL, started_fn, started}};
    ri_sandbox_config c = seeded_config(0);
    c.host_functions = fns;
    c.nhost_functions = 1;
    return load_into(f, &c, w);
}

static void interrupt_from_another_thread_stops_a_pure_loop(void **state) {
    (void)state;
    wasm_bytes w = fixture("sb_interrupt");
    ri_sandboxes *f = ri_sandboxes_new();
    atomic_int started = 0;
    ri_sandbox *sb = interruptible(f, &started, w);
    interrupter in = {sb, &started, 2, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, interrupter_thread, &in), 0);
    for (int k = 1; k <= 2; k++) {
        ri_sandbox_result r = ri_sandbox_execute(sb, "run", NULL);
        assert_false(r.ok);
        /* 30 s of budget are not up: an interrupt, not a timeout. */
        assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
        assert_string_equal(r.error.trap_kind, "interrupted");
        ri_sandbox_result_free(&r);
        assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
        /* The second run really ran again: the interrupt did not linger. */
        assert_int_equal(atomic_load(&started), k);
    }
    pthread_join(t, NULL);
    assert_int_equal(in.missed, 0);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    free(w.data);
}

typedef struct runner {
    ri_sandbox *sb;
    ri_sandbox_result result;
} runner;

static void *run_thread(void *arg) {
    runner *r = arg;
    r->result = ri_sandbox_execute(r->sb, "run", NULL);
    return NULL;
}

static void interrupt_stops_only_its_own_sandbox(void **state) {
    (void)state;
    wasm_bytes wi = fixture("sb_interrupt");
    wasm_bytes wf = fixture("sb_fib");
    ri_sandboxes *f = ri_sandboxes_new();
    atomic_int started = 0;
    runner spinner = {interruptible(f, &started, wi), {0}};
    ri_sandbox_config c = seeded_config(0);
    ri_sandbox *other = load_into(f, &c, wf);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_thread, &spinner), 0);
    assert_true(wait_for(&started, 1, 20000));
    /* While the other thread spins, this sandbox works normally. */
    for (int i = 0; i < 200; i++) {
        ri_sandbox_result r = ri_sandbox_execute(other, "fib", "20");
        assert_true(r.ok);
        assert_int_equal(r.results[0].of.i32, 6765);
        assert_int_equal(r.gas_used, 21);
        ri_sandbox_result_free(&r);
    }
    ri_sandbox_interrupt(spinner.sb);
    pthread_join(t, NULL);
    assert_false(spinner.result.ok);
    assert_string_equal(spinner.result.error.trap_kind, "interrupted");
    ri_sandbox_result_free(&spinner.result);
    /* Interrupting the spinner did not touch the other sandbox. */
    ri_sandbox_result r = ri_sandbox_execute(other, "fib", "10");
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 55);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(spinner.sb);
    ri_sandbox_free(other);
    ri_sandboxes_free(f);
    free(wi.data);
    free(wf.data);
}

static void interrupt_of_idle_sandbox_is_harmless(void **state) {
    (void)state;
    wasm_bytes w = fixture("sb_add");
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = seeded_config(0);
    ri_sandbox *sb = load_into(f, &c, w);
    ri_sandbox_interrupt(sb);
    ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[1,2]");
    if (!r.ok) print_error("add after idle interrupt: %s\n", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 3);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    free(w.data);
}

typedef struct spin_worker {
    ri_sandbox *sb;
    atomic_int *go;
    ri_sandbox_result result;
} spin_worker;

static void *spin_thread(void *arg) {
    spin_worker *s = arg;
    while (!atomic_load(s->go)) sleep_ms(0);
    s->result = ri_sandbox_execute(s->sb, "spin", NULL);
    return NULL;
}

static void timeouts_on_two_threads_at_once(void **state) {
    (void)state;
    wasm_bytes w = fixture("sb_loop");
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = seeded_config(0);
    c.max_execution_ms = 100;
    atomic_int go = 0;
    spin_worker a = {load_into(f, &c, w), &go, {0}};
    spin_worker b = {load_into(f, &c, w), &go, {0}};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, spin_thread, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, spin_thread, &b), 0);
    atomic_store(&go, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    spin_worker *both[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        assert_false(both[i]->result.ok);
        assert_int_equal(both[i]->result.error.code, RI_SANDBOX_TIMEOUT);
        assert_int_equal(both[i]->result.error.limit_ms, 100);
        assert_true(both[i]->result.error.elapsed_ms >= 100);
        ri_sandbox_result_free(&both[i]->result);
        assert_int_equal(ri_sandbox_status_of(both[i]->sb), RI_SANDBOX_LOADED);
        ri_sandbox_free(both[i]->sb);
    }
    ri_sandboxes_free(f);
    free(w.data);
}

/* ---- interrupts and time slices in a loop that calls an import -------------------------------- */

/* env.tick: its argument back. With a handshake, its first call says so (in_tick) and
 * waits until the other thread has interrupted the sandbox (released): the interrupt
 * is then up while the loop still has millions of rounds and host calls to go. */
typedef struct tick_ctx {
    bool handshake;
    atomic_int in_tick, released;
    int calls;
} tick_ctx;

static int tick_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    tick_ctx *t = user;
    if (t->handshake && t->calls++ == 0) {
        atomic_store(&t->in_tick, 1);
        wait_for(&t->released, 1, 20000);
    }
    results[0] = args[0];
    return 0;
}

typedef struct tick_interrupter {
    ri_sandbox *sb;
    tick_ctx *tick;
    bool missed;
} tick_interrupter;

static void *tick_interrupter_thread(void *arg) {
    tick_interrupter *in = arg;
    in->missed = !wait_for(&in->tick->in_tick, 1, 20000);
    sleep_ms(50);
    ri_sandbox_interrupt(in->sb);
    atomic_store(&in->tick->released, 1);
    return NULL;
}

static ri_sandbox *ticking(ri_sandboxes *f, tick_ctx *tick, uint32_t max_execution_ms, bool load) {
    static const ri_valtype i32[1] = {RI_I32};
    ri_host_function fns[1] = {{"tick", 1, i32, 1, i32, tick_fn, tick}};
    ri_sandbox_config c = seeded_config(0);
    c.host_functions = fns;
    c.nhost_functions = 1;
    c.max_execution_ms = max_execution_ms;
    if (load) return load_into(f, &c, fixture_calls);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    return sb;
}

/* What run(n) returns: n rounds of the LCG (tick returns its argument). */
static int32_t calls_reference(uint32_t n) {
    uint32_t x = 1;
    for (uint32_t i = 0; i < n; i++) x = x * 1103515245u + 12345u;
    return as_i32(x);
}

#define CALLS_ROUNDS "20000000" /* about a second of work: 19,532 host calls */

/* Interrupted from another thread (the handshake) while the loop runs; the engine must
 * see the flag although the host calls keep its gas chunk full. */
static ri_sandbox_result interrupted_run(ri_sandbox *sb, tick_ctx *tick) {
    tick_interrupter in = {sb, tick, false};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, tick_interrupter_thread, &in), 0);
    ri_sandbox_result r = ri_sandbox_execute(sb, "run", "[" CALLS_ROUNDS "]");
    pthread_join(t, NULL);
    assert_false(in.missed);
    return r;
}

static void interrupt_from_another_thread_stops_a_loop_calling_an_import(void **state) {
    (void)state;
    fixture_calls = fixture("sb_interrupt_calls");
    ri_sandboxes *f = ri_sandboxes_new();
    tick_ctx tick = {.handshake = true};
    ri_sandbox *sb = ticking(f, &tick, 30000, true);
    ri_sandbox_result r = interrupted_run(sb, &tick);
    if (r.ok) print_error("the loop ran to its end: the interrupt was lost\n");
    assert_false(r.ok);
    /* 30 s of budget are not up: an interrupt, not a timeout. */
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(r.error.trap_kind, "interrupted");
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    free(fixture_calls.data);
}

/* With pause-on-interrupt the same interrupt pauses the run (before a host call); the
 * paused call goes through a snapshot into a fresh sandbox and ends there with the
 * uninterrupted result and host-call count. */
static void interrupt_pauses_a_loop_calling_an_import(void **state) {
    (void)state;
    fixture_calls = fixture("sb_interrupt_calls");
    ri_sandboxes *f = ri_sandboxes_new();
    tick_ctx tick = {.handshake = true}, plain = {.handshake = false};
    ri_sandbox *sb = ticking(f, &tick, 30000, true);
    ri_sandbox_error err;
    assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_INTERRUPT, &err));
    ri_sandbox_result r = interrupted_run(sb, &tick);
    if (r.ok) print_error("the loop ran to its end: the interrupt was lost\n");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    assert_non_null(strstr(r.error.message, "(interrupt)"));
    ri_sandbox_result_free(&r);
    ri_snapshot_options o = {RI_SNAPSHOT_V2, true, true};
    uint8_t *image = NULL;
    size_t image_len = 0;
    assert_true(ri_sandbox_snapshot_with(sb, &o, &image, &image_len, &err));
    ri_sandboxes *f2 = ri_sandboxes_new();
    ri_sandbox *fresh = ticking(f2, &plain, 30000, false);
    if (!ri_sandbox_restore(fresh, image, image_len, &err)) print_error("restore: %s\n", err.message);
    assert_int_equal(ri_sandbox_status_of(fresh), RI_SANDBOX_SUSPENDED);
    r = ri_sandbox_resume(fresh, 0);
    if (!r.ok) print_error("resume: %s\n", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, calls_reference(20000000));
    assert_int_equal(r.gas_used, 19532); /* every host call made once */
    ri_sandbox_result_free(&r);
    free(image);
    ri_sandbox_free(fresh);
    ri_sandboxes_free(f2);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    free(fixture_calls.data);
}

/* Time slices: with pause-on-interrupt a deadline pauses the run (whether the watchdog's
 * interrupt or the check at an import call sees it first), never TIMEOUT. */
static void time_slices_pause_a_loop_calling_an_import(void **state) {
    (void)state;
    fixture_calls = fixture("sb_interrupt_calls");
    ri_sandboxes *f = ri_sandboxes_new();
    tick_ctx plain = {.handshake = false};
    ri_sandbox *sb = ticking(f, &plain, 2, true);
    ri_sandbox_error err;
    assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_INTERRUPT, &err));
    ri_sandbox_result r = ri_sandbox_execute(sb, "run", "[" CALLS_ROUNDS "]");
    /* A second of work does not fit in a 2 ms slice: the first one pauses. */
    if (r.ok || r.error.code != RI_SANDBOX_SUSPENDED_CALL) print_error("first slice: %s\n", r.error.message);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    int slices = 1;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL && slices < 1000000) {
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(sb, 0);
        slices++;
    }
    if (!r.ok) print_error("slice %d: %s\n", slices, r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, calls_reference(20000000));
    assert_int_equal(r.gas_used, 19532);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    free(fixture_calls.data);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_sandboxes_run_on_two_threads_at_once),
        cmocka_unit_test(same_work_on_two_threads_gives_same_bytes),
        cmocka_unit_test(shared_factory_hands_out_unique_ids_across_threads),
        cmocka_unit_test(interrupt_from_another_thread_stops_a_pure_loop),
        cmocka_unit_test(interrupt_stops_only_its_own_sandbox),
        cmocka_unit_test(interrupt_of_idle_sandbox_is_harmless),
        cmocka_unit_test(timeouts_on_two_threads_at_once),
        cmocka_unit_test(interrupt_from_another_thread_stops_a_loop_calling_an_import),
        cmocka_unit_test(interrupt_pauses_a_loop_calling_an_import),
        cmocka_unit_test(time_slices_pause_a_loop_calling_an_import),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
