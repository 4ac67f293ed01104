/* Shared by test_fork.c and test_incremental.c: fixtures, sandboxes, calls and
 * snapshots of tests/wat/fork_mem.wat. */
#ifndef RI_TEST_FORK_UTIL_H
#define RI_TEST_FORK_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h" /* read_fixture, TS */

#define PAGE 65536u

static inline ri_sandbox_config fork_config(uint64_t max_memory, ri_gas_schedule schedule, uint64_t max_gas) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.deterministic_seed = 11;
    c.max_execution_ms = 20000;
    c.max_memory_bytes = max_memory ? max_memory : 4096ull * PAGE;
    c.gas_schedule = schedule;
    c.max_gas = max_gas ? max_gas : 1000000000ull;
    return c;
}

static inline ri_sandbox *new_loaded(ri_sandboxes *f, const ri_sandbox_config *c) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, c, &err);
    assert_non_null(sb);
    size_t len;
    uint8_t *wasm = read_fixture("fork_mem", &len);
    bool ok = ri_sandbox_load(sb, wasm, len, &err);
    free(wasm);
    if (!ok) print_error("load: %s\n", err.message);
    assert_true(ok);
    return sb;
}

/* Runs action(args) and returns its i32 result (0 when it has none); fails the test
 * when the call fails. */
static inline int32_t call_ok(ri_sandbox *sb, const char *action, const char *args) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, args);
    if (!r.ok) print_error("%s(%s): %s\n", action, args ? args : "", r.error.message);
    assert_true(r.ok);
    int32_t v = r.nresults ? r.results[0].of.i32 : 0;
    ri_sandbox_result_free(&r);
    return v;
}

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

/* The canonical v2 bytes of the sandbox's whole state (uncompressed). */
static inline blob snap(ri_sandbox *sb) {
    ri_snapshot_options o = {RI_SNAPSHOT_V2, false, true};
    blob b;
    ri_sandbox_error err;
    bool ok = ri_sandbox_snapshot_with(sb, &o, &b.data, &b.len, &err);
    if (!ok) print_error("snapshot: %s\n", err.message);
    assert_true(ok);
    return b;
}

static inline void assert_same_blob(blob a, blob b) {
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
}

static inline void assert_same_state(ri_sandbox *a, ri_sandbox *b) {
    blob x = snap(a), y = snap(b);
    assert_same_blob(x, y);
    free(x.data);
    free(y.data);
}

static inline int open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

#endif
