/*
 * Memory limits (seed 001 §3 maxMemoryBytes, §9 MEMORY_EXCEEDED; reference "Memory"):
 * the sandbox's memory starts at one page with a maximum of ceil(limit / 64 KiB) pages,
 * memory.grow past that returns -1, and memory above the limit after an execution is
 * MEMORY_EXCEEDED. Beyond the original, the limit also binds memory the module defines
 * itself: declaring more fails to load, growing is limited.
 * Fixtures: tests/wat/sb_memimport.wat, sb_ownmem*.wat.
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
#include "sandbox_test_util.h"

#define PAGE 65536

static ri_sandbox_config limit_config(uint64_t max_memory_bytes) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    c.max_memory_bytes = max_memory_bytes;
    return c;
}

/* Creates a sandbox and loads the fixture; *ok and *err tell how loading went. */
static env try_env(const char *fixture, uint64_t limit, bool *ok, ri_sandbox_error *err) {
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_config c = limit_config(limit);
    memset(err, 0, sizeof *err);
    e.sb = ri_sandbox_create(e.factory, &c, err);
    assert_non_null(e.sb);
    size_t len = 0;
    uint8_t *wasm = read_fixture(fixture, &len);
    *ok = ri_sandbox_load(e.sb, wasm, len, err);
    free(wasm);
    return e;
}

static env open_env(const char *fixture, uint64_t limit) {
    bool ok = false;
    ri_sandbox_error err;
    env e = try_env(fixture, limit, &ok, &err);
    if (!ok) print_error("load %s: %s\n", fixture, err.message);
    assert_true(ok);
    return e;
}

static int32_t exec_i32(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.nresults, 1);
    int32_t v = r.results[0].of.i32;
    ri_sandbox_result_free(&r);
    return v;
}

static void exec_void(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
}

static void expect_memory_exceeded(ri_sandbox *sb, const char *action, const char *payload,
                                   uint64_t used, uint64_t limit) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (r.ok || r.error.code != RI_SANDBOX_MEMORY_EXCEEDED)
        print_error("%s: ok=%d code=%s %s\n", action, r.ok, ri_sandbox_errcode_name(r.error.code),
                    r.error.message);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_MEMORY_EXCEEDED);
    assert_int_equal(r.error.memory_used, used);
    assert_int_equal(r.error.memory_limit, limit);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
}

/* ---- the sandbox's memory (env.memory) ------------------------------------------------ */

static void imported_memory_starts_at_one_page(void **state) {
    (void)state;
    env e = open_env("sb_memimport", RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 1);
    ri_sandbox_metrics m = ri_sandbox_get_metrics(e.sb);
    assert_int_equal(m.memory_used_bytes, PAGE);
    assert_int_equal(m.memory_limit_bytes, RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    close_env(&e);
}

static void growth_past_100000_bytes_is_memory_exceeded(void **state) {
    (void)state;
    /* Maximum ceil(100000 / 65536) = 2 pages: growing to 2 works, 131072 > 100000. */
    env e = open_env("sb_memimport", 100000);
    expect_memory_exceeded(e.sb, "allocate", "1", 131072, 100000);
    close_env(&e);
}

static void limit_of_three_pages_allows_growth_to_three(void **state) {
    (void)state;
    env e = open_env("sb_memimport", 196608);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), 1);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 2);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), 2);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 3);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).memory_used_bytes, 196608);
    close_env(&e);
}

static void growth_beyond_maximum_returns_minus_one(void **state) {
    (void)state;
    env e = open_env("sb_memimport", 196608);
    assert_int_equal(exec_i32(e.sb, "allocate", "2"), 1);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), -1);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 3);
    close_env(&e);
}

static void one_page_limit_refuses_any_growth(void **state) {
    (void)state;
    env e = open_env("sb_memimport", PAGE);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), -1);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 1);
    close_env(&e);
}

static void large_single_grow_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_memimport", 4 * PAGE);
    assert_int_equal(exec_i32(e.sb, "allocate", "1000"), -1);
    assert_int_equal(exec_i32(e.sb, "allocate", "3"), 1);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 4);
    close_env(&e);
}

static void memory_exceeded_is_checked_after_every_execution(void **state) {
    (void)state;
    /* The seed's check is "memory bytes > limit after an execute": it stays true. */
    env e = open_env("sb_memimport", 100000);
    expect_memory_exceeded(e.sb, "allocate", "1", 131072, 100000);
    expect_memory_exceeded(e.sb, "getMemSize", NULL, 131072, 100000);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).memory_used_bytes, 131072);
    close_env(&e);
}

static void memory_contents_persist_between_executions(void **state) {
    (void)state;
    env e = open_env("sb_memimport", RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    exec_void(e.sb, "store8", "[10,201]");
    exec_void(e.sb, "store8", "[65535,7]");
    assert_int_equal(exec_i32(e.sb, "load8", "10"), 201);
    assert_int_equal(exec_i32(e.sb, "load8", "65535"), 7);
    assert_int_equal(exec_i32(e.sb, "load8", "11"), 0);
    close_env(&e);
}

static void memories_of_two_sandboxes_are_separate(void **state) {
    (void)state;
    env a = open_env("sb_memimport", RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    env b = open_env("sb_memimport", RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    exec_void(a.sb, "store8", "[0,5]");
    assert_int_equal(exec_i32(b.sb, "load8", "0"), 0);
    assert_int_equal(exec_i32(a.sb, "allocate", "1"), 1);
    assert_int_equal(exec_i32(b.sb, "getMemSize", NULL), 1);
    close_env(&a);
    close_env(&b);
}

static void grown_memory_is_usable(void **state) {
    (void)state;
    env e = open_env("sb_memimport", 196608);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), 1);
    exec_void(e.sb, "fill", "[65536,9,65536]");
    assert_int_equal(exec_i32(e.sb, "load8", "131071"), 9);
    close_env(&e);
}

static void imported_memory_minimum_above_limit_fails_to_load(void **state) {
    (void)state;
    bool ok = true;
    ri_sandbox_error err;
    /* The module asks env.memory for 4 pages; the limit is 3. */
    env e = try_env("sb_memimport4", 196608, &ok, &err);
    assert_false(ok);
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    assert_true(strlen(err.message) > 0);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_CREATED);
    close_env(&e);
}

/* ---- memory the module defines itself ----------------------------------------------------- */

static void own_memory_above_limit_fails_to_load(void **state) {
    (void)state;
    bool ok = true;
    ri_sandbox_error err;
    env e = try_env("sb_ownmem4", 196608, &ok, &err);
    assert_false(ok);
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    assert_true(strlen(err.message) > 0);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_CREATED);
    close_env(&e);
}

static void own_memory_above_one_page_limit_fails_to_load(void **state) {
    (void)state;
    bool ok = true;
    ri_sandbox_error err;
    /* 4 pages against a 1-page limit. */
    env e = try_env("sb_ownmem4", PAGE, &ok, &err);
    assert_false(ok);
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    close_env(&e);
}

static void own_memory_at_limit_loads(void **state) {
    (void)state;
    env e = open_env("sb_ownmem3", 196608);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 3);
    ri_sandbox_metrics m = ri_sandbox_get_metrics(e.sb);
    assert_int_equal(m.memory_used_bytes, 196608);
    assert_int_equal(m.memory_limit_bytes, 196608);
    close_env(&e);
}

static void own_memory_counts_in_metrics(void **state) {
    (void)state;
    env e = open_env("sb_ownmem", RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).memory_used_bytes, PAGE);
    assert_int_equal(exec_i32(e.sb, "allocate", "2"), 1);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).memory_used_bytes, 3 * PAGE);
    close_env(&e);
}

static void own_memory_growth_is_limited(void **state) {
    (void)state;
    /* The module declares no maximum; the sandbox's limit (2 pages) applies. */
    env e = open_env("sb_ownmem", 2 * PAGE);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), 1);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), -1);
    assert_int_equal(exec_i32(e.sb, "allocate", "100"), -1);
    assert_int_equal(exec_i32(e.sb, "getMemSize", NULL), 2);
    close_env(&e);
}

static void own_memory_never_silently_exceeds_limit(void **state) {
    (void)state;
    /* 100000 bytes is not a page multiple: growing to 2 pages either is refused (-1) or
     * reported as MEMORY_EXCEEDED, as for the sandbox's own memory; it is never a silent
     * success above the limit. */
    env e = open_env("sb_ownmem", 100000);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "allocate", "1");
    if (r.ok) {
        assert_int_equal(r.results[0].of.i32, -1);
        assert_true(ri_sandbox_get_metrics(e.sb).memory_used_bytes <= 100000);
    } else {
        assert_int_equal(r.error.code, RI_SANDBOX_MEMORY_EXCEEDED);
        assert_int_equal(r.error.memory_used, 131072);
        assert_int_equal(r.error.memory_limit, 100000);
    }
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void own_memory_contents_persist(void **state) {
    (void)state;
    env e = open_env("sb_ownmem", RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    exec_void(e.sb, "store8", "[123,45]");
    assert_int_equal(exec_i32(e.sb, "load8", "123"), 45);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(imported_memory_starts_at_one_page),
        cmocka_unit_test(growth_past_100000_bytes_is_memory_exceeded),
        cmocka_unit_test(limit_of_three_pages_allows_growth_to_three),
        cmocka_unit_test(growth_beyond_maximum_returns_minus_one),
        cmocka_unit_test(one_page_limit_refuses_any_growth),
        cmocka_unit_test(large_single_grow_is_refused),
        cmocka_unit_test(memory_exceeded_is_checked_after_every_execution),
        cmocka_unit_test(memory_contents_persist_between_executions),
        cmocka_unit_test(memories_of_two_sandboxes_are_separate),
        cmocka_unit_test(grown_memory_is_usable),
        cmocka_unit_test(imported_memory_minimum_above_limit_fails_to_load),
        cmocka_unit_test(own_memory_above_limit_fails_to_load),
        cmocka_unit_test(own_memory_above_one_page_limit_fails_to_load),
        cmocka_unit_test(own_memory_at_limit_loads),
        cmocka_unit_test(own_memory_counts_in_metrics),
        cmocka_unit_test(own_memory_growth_is_limited),
        cmocka_unit_test(own_memory_never_silently_exceeds_limit),
        cmocka_unit_test(own_memory_contents_persist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
