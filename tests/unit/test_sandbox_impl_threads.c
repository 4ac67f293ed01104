/*
 * The sandbox across threads and time: separate sandboxes running at once on separate
 * threads (one factory, one watchdog), wall-clock timeouts inside loops without host
 * calls, ri_sandbox_interrupt from another thread, a start function that never ends,
 * sandboxes that outlive their factory, and destroy() called from a host function.
 * Fixture: tests/wat/sb_impl_main.wat (and sb_impl_start_spin.wat).
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

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static ri_sandbox_config config_ms(uint32_t max_execution_ms) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000;
    c.max_execution_ms = max_execution_ms;
    return c;
}

/* A loaded sandbox of the given fixture; NULL (with a printed reason) on failure. */
static ri_sandbox *loaded(ri_sandboxes *f, const ri_sandbox_config *c, const char *fixture) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, c, &err);
    if (!sb) {
        print_error("create: %s\n", err.message);
        return NULL;
    }
    size_t len;
    uint8_t *wasm = read_fixture(fixture, &len);
    bool ok = wasm && ri_sandbox_load(sb, wasm, len, &err);
    free(wasm);
    if (!ok) {
        print_error("load: %s\n", err.message);
        ri_sandbox_free(sb);
        return NULL;
    }
    return sb;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- timeouts ------------------------------------------------------------------------------ */

static void loop_without_calls_times_out(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(30);
    ri_sandbox *sb = loaded(f, &c, "sb_impl_main");
    assert_non_null(sb);
    double start = now_ms();
    ri_sandbox_result r = ri_sandbox_execute(sb, "spin", NULL);
    double took = now_ms() - start;
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_TIMEOUT);
    assert_int_equal(r.error.limit_ms, 30);
    assert_true(r.error.elapsed_ms > 30);
    assert_true(took < 2000); /* stopped by the watchdog, not by chance */
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_result_free(&r);
    /* The sandbox works afterwards, and the interrupt does not linger. */
    r = ri_sandbox_execute(sb, "add", "[2,3]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "5");
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void loop_with_calls_times_out_at_a_call(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(20);
    c.max_gas = UINT64_MAX;
    ri_sandbox *sb = loaded(f, &c, "sb_impl_main");
    assert_non_null(sb);
    ri_sandbox_result r = ri_sandbox_execute(sb, "spin_host", NULL);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_TIMEOUT);
    assert_true(r.error.elapsed_ms > 20);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void start_function_that_never_ends_times_out_at_load(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(25);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    size_t len;
    uint8_t *wasm = read_fixture("sb_impl_start_spin", &len);
    assert_non_null(wasm);
    assert_false(ri_sandbox_load(sb, wasm, len, &err));
    free(wasm);
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    assert_non_null(strstr(err.message, "Failed to instantiate WASM module: Execution timed out"));
    assert_true(err.elapsed_ms > 25);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_CREATED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* Timeouts of several sandboxes with different limits, all at once. */
typedef struct timed_run {
    ri_sandboxes *factory;
    uint32_t limit_ms;
    bool timed_out;
    uint64_t elapsed_ms;
} timed_run;

static void *run_spin(void *arg) {
    timed_run *t = arg;
    ri_sandbox_config c = config_ms(t->limit_ms);
    ri_sandbox *sb = loaded(t->factory, &c, "sb_impl_main");
    if (!sb) return NULL;
    ri_sandbox_result r = ri_sandbox_execute(sb, "spin", NULL);
    t->timed_out = !r.ok && r.error.code == RI_SANDBOX_TIMEOUT;
    t->elapsed_ms = r.error.elapsed_ms;
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    return NULL;
}

static void concurrent_timeouts_each_meet_their_limit(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    timed_run runs[4] = {{f, 40, false, 0}, {f, 10, false, 0}, {f, 70, false, 0}, {f, 25, false, 0}};
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&threads[i], NULL, run_spin, &runs[i]), 0);
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; i++) {
        assert_true(runs[i].timed_out);
        assert_true(runs[i].elapsed_ms > runs[i].limit_ms);
        assert_true(runs[i].elapsed_ms < runs[i].limit_ms + 2000);
    }
    ri_sandboxes_free(f);
}

/* ---- interrupt ---------------------------------------------------------------------------- */

typedef struct spinner {
    ri_sandbox *sb;
    ri_sandbox_result result;
} spinner;

static void *execute_spin(void *arg) {
    spinner *s = arg;
    s->result = ri_sandbox_execute(s->sb, "spin", NULL);
    return NULL;
}

static void interrupt_from_another_thread_stops_the_run(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(60000); /* time is not what stops it */
    spinner s = {loaded(f, &c, "sb_impl_main"), {0}};
    assert_non_null(s.sb);
    pthread_t thread;
    double start = now_ms();
    assert_int_equal(pthread_create(&thread, NULL, execute_spin, &s), 0);
    while (ri_sandbox_status_of(s.sb) != RI_SANDBOX_RUNNING) sleep_ms(1);
    sleep_ms(20);
    ri_sandbox_interrupt(s.sb);
    pthread_join(thread, NULL);
    assert_true(now_ms() - start < 5000);
    assert_false(s.result.ok);
    assert_int_equal(s.result.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(s.result.error.trap_kind, "interrupted");
    assert_int_equal(ri_sandbox_status_of(s.sb), RI_SANDBOX_LOADED);
    ri_sandbox_result_free(&s.result);
    ri_sandbox_free(s.sb);
    ri_sandboxes_free(f);
}

/* The process's thread count (/proc/self/status), or -1. */
static int thread_count(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    return n;
}

/* Without a time limit no watchdog thread starts (a short-lived process saves its cost),
 * and ri_sandbox_interrupt still stops the run. */
static void no_time_limit_starts_no_watchdog_and_interrupt_still_stops(void **state) {
    (void)state;
    int before = thread_count();
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(RI_SANDBOX_NO_TIME_LIMIT);
    spinner s = {loaded(f, &c, "sb_impl_main"), {0}};
    assert_non_null(s.sb);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, execute_spin, &s), 0);
    while (ri_sandbox_status_of(s.sb) != RI_SANDBOX_RUNNING) sleep_ms(1);
    sleep_ms(20);
    if (before > 0) assert_int_equal(thread_count(), before + 1); /* this test's spinner alone */
    ri_sandbox_interrupt(s.sb);
    pthread_join(thread, NULL);
    assert_false(s.result.ok);
    assert_int_equal(s.result.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(s.result.error.trap_kind, "interrupted");
    ri_sandbox_result_free(&s.result);
    ri_sandbox_result r = ri_sandbox_execute(s.sb, "add", "[2,3]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "5");
    assert_int_equal(r.metrics.execution_limit_ms, RI_SANDBOX_NO_TIME_LIMIT);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(s.sb);
    ri_sandboxes_free(f);
}

static void interrupt_when_idle_does_nothing(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(50);
    ri_sandbox *sb = loaded(f, &c, "sb_impl_main");
    assert_non_null(sb);
    ri_sandbox_interrupt(sb);
    ri_sandbox_result r = ri_sandbox_execute(sb, "fibr", "15");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "610");
    ri_sandbox_result_free(&r);
    ri_sandbox_interrupt(NULL);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* ---- separate sandboxes on separate threads ------------------------------------------------ */

typedef struct worker {
    ri_sandboxes *factory;
    uint32_t seed;
    int rounds;
    bool ok;
    uint32_t last_random;
    size_t snapshot_len;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    ri_sandbox_config c = config_ms(5000);
    c.deterministic_seed = w->seed;
    ri_sandbox *sb = loaded(w->factory, &c, "sb_impl_main");
    if (!sb) return NULL;
    w->ok = true;
    for (int i = 0; i < w->rounds && w->ok; i++) {
        ri_sandbox_result r = ri_sandbox_execute(sb, "fibr", "20");
        w->ok = r.ok && strcmp(r.value_json, "6765") == 0;
        ri_sandbox_result_free(&r);
        r = ri_sandbox_execute(sb, "store_random", NULL);
        w->ok = w->ok && r.ok;
        if (r.ok) w->last_random = (uint32_t)r.results[0].of.i32;
        ri_sandbox_result_free(&r);
        uint8_t *snap = NULL;
        size_t len = 0;
        ri_sandbox_error err;
        w->ok = w->ok && ri_sandbox_snapshot(sb, &snap, &len, &err) && ri_sandbox_restore(sb, snap, len, &err);
        w->snapshot_len = len;
        free(snap);
    }
    ri_sandbox_free(sb);
    return NULL;
}

static void two_sandboxes_run_on_two_threads_at_once(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    worker a = {f, 0, 40, false, 0, 0}, b = {f, 42, 40, false, 0, 0};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, work, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, work, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_true(a.ok);
    assert_true(b.ok);
    assert_true(a.snapshot_len > 65536 + 13); /* one page and the state JSON */
    /* Each PRNG advanced 40 times on its own: the 40th Mulberry32 output of its seed. */
    uint32_t sa = 0, sb42 = 42, va = 0, vb = 0;
    for (int i = 0; i < 40; i++) {
        va = ri_mulberry32_next(&sa);
        vb = ri_mulberry32_next(&sb42);
    }
    assert_int_equal(a.last_random, va);
    assert_int_equal(b.last_random, vb);
    ri_sandboxes_free(f);
}

static void one_thread_times_out_while_another_computes(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    timed_run spin = {f, 30, false, 0};
    worker w = {f, 7, 20, false, 0, 0};
    pthread_t ts, tw;
    assert_int_equal(pthread_create(&ts, NULL, run_spin, &spin), 0);
    assert_int_equal(pthread_create(&tw, NULL, work, &w), 0);
    pthread_join(ts, NULL);
    pthread_join(tw, NULL);
    assert_true(spin.timed_out);
    assert_true(w.ok);
    ri_sandboxes_free(f);
}

/* ---- lifetimes ------------------------------------------------------------------------------- */

static void sandbox_outlives_its_factory_and_still_times_out(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = config_ms(15);
    ri_sandbox *sb = loaded(f, &c, "sb_impl_main");
    assert_non_null(sb);
    ri_sandboxes_free(f); /* the watchdog lives on with the sandbox */
    ri_sandbox_result r = ri_sandbox_execute(sb, "spin", NULL);
    assert_int_equal(r.error.code, RI_SANDBOX_TIMEOUT);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb); /* the last reference: the thread is joined */
}

static void factory_without_sandboxes_starts_no_thread(void **state) {
    (void)state;
    for (int i = 0; i < 100; i++) ri_sandboxes_free(ri_sandboxes_new());
    ri_sandboxes_free(NULL);
}

/* destroy() from inside a host function: the run stops, the sandbox ends destroyed. */
static ri_sandbox *victim_of(void *user) { return *(ri_sandbox **)user; }

static int destroy_self(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    ri_sandbox_destroy(victim_of(user));
    return 0;
}

static void destroy_from_a_host_function(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = NULL;
    static const ri_valtype i32x3[] = {RI_I32, RI_I32, RI_I32};
    static const ri_valtype i64_f64[] = {RI_I64, RI_F64};
    static const ri_valtype i32[] = {RI_I32};
    static const ri_valtype f64[] = {RI_F64};
    ri_host_function hosts[3] = {
        {"add3", 3, i32x3, 1, i32, destroy_self, &sb},
        {"fail", 0, NULL, 0, NULL, destroy_self, &sb},
        {"scale", 2, i64_f64, 1, f64, destroy_self, &sb},
    };
    ri_sandbox_config c = config_ms(1000);
    c.host_functions = hosts;
    c.nhost_functions = 3;
    sb = loaded(f, &c, "sb_impl_host");
    assert_non_null(sb);
    ri_sandbox_result r = ri_sandbox_execute(sb, "calls", "1000");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    assert_string_equal(r.error.instance_id, ri_sandbox_id(sb));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_DESTROYED);
    assert_int_equal(ri_sandbox_get_metrics(sb).memory_used_bytes, 0);
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(sb, "calls", "1");
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_without_calls_times_out),
        cmocka_unit_test(loop_with_calls_times_out_at_a_call),
        cmocka_unit_test(start_function_that_never_ends_times_out_at_load),
        cmocka_unit_test(concurrent_timeouts_each_meet_their_limit),
        cmocka_unit_test(interrupt_from_another_thread_stops_the_run),
        cmocka_unit_test(no_time_limit_starts_no_watchdog_and_interrupt_still_stops),
        cmocka_unit_test(interrupt_when_idle_does_nothing),
        cmocka_unit_test(two_sandboxes_run_on_two_threads_at_once),
        cmocka_unit_test(one_thread_times_out_while_another_computes),
        cmocka_unit_test(sandbox_outlives_its_factory_and_still_times_out),
        cmocka_unit_test(factory_without_sandboxes_starts_no_thread),
        cmocka_unit_test(destroy_from_a_host_function),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
