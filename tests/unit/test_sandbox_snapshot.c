/*
 * WSNP v1 snapshots (seed 000): the byte layout and the exact state JSON, the status
 * rules, every restore validation in the seed's order with the original's messages,
 * the round-trip guarantee, forks, and what we do better: restore is atomic (a bad
 * snapshot changes nothing), and a snapshot refuses state v1 cannot hold (a mutable
 * global or a table that differs from its value at instantiation) instead of losing it.
 * Fixtures: tests/wat/sb_memcounter.wat, sb_random.wat, sb_fib.wat, sb_add.wat,
 * sb_memimport.wat, sb_ownmem.wat, sb_globals.wat, sb_probe.wat.
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

#define PAGE 65536u

static ri_sandbox_config seeded_config(uint32_t seed) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.deterministic_seed = seed;
    c.max_execution_ms = 10000;
    return c;
}

static ri_sandbox *load_into(ri_sandboxes *f, const ri_sandbox_config *cfg, const char *fixture) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    ri_sandbox *sb = ri_sandbox_create(f, cfg, &err);
    if (!sb) print_error("create: %s\n", err.message);
    assert_non_null(sb);
    size_t len = 0;
    uint8_t *wasm = read_fixture(fixture, &len);
    bool ok = ri_sandbox_load(sb, wasm, len, &err);
    free(wasm);
    if (!ok) print_error("load %s: %s\n", fixture, err.message);
    assert_true(ok);
    return sb;
}

static env open_env(const char *fixture) {
    ri_sandbox_config c = seeded_config(0);
    return open_env_cfg(fixture, &c);
}

static int32_t exec_i32_gas(ri_sandbox *sb, const char *action, const char *payload, uint64_t *gas) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.nresults, 1);
    int32_t v = r.results[0].of.i32;
    if (gas) *gas = r.gas_used;
    ri_sandbox_result_free(&r);
    return v;
}

static int32_t exec_i32(ri_sandbox *sb, const char *action, const char *payload) {
    return exec_i32_gas(sb, action, payload, NULL);
}

static void exec_void(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "NULL", r.error.message);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
}

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

static blob snap(ri_sandbox *sb) {
    blob b = {NULL, 0};
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    if (!ri_sandbox_snapshot(sb, &b.data, &b.len, &err)) {
        print_error("snapshot: %s\n", err.message);
        fail();
    }
    assert_non_null(b.data);
    return b;
}

static void restore_ok(ri_sandbox *sb, blob b) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    if (!ri_sandbox_restore(sb, b.data, b.len, &err)) {
        print_error("restore: %s\n", err.message);
        fail();
    }
}

static void expect_restore_error(ri_sandbox *sb, const uint8_t *data, size_t len, const char *message) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_restore(sb, data, len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_string_equal(err.message, message);
}

static void expect_snapshot_error(ri_sandbox *sb, const char *message) {
    uint8_t *out = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_snapshot(sb, &out, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    if (message) assert_string_equal(err.message, message);
    free(out);
}

static bool blobs_equal(blob a, blob b) {
    return a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
}

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* The state JSON of a snapshot, as a NUL-terminated copy. */
static char *state_json(blob b) {
    assert_true(b.len >= 13);
    uint32_t n = rd32(b.data + 5);
    assert_true(b.len >= 13 + (size_t)n);
    uint32_t m = rd32(b.data + 9 + n);
    assert_int_equal(b.len, 13 + (size_t)n + m);
    char *s = malloc((size_t)m + 1);
    assert_non_null(s);
    memcpy(s, b.data + 13 + n, m);
    s[m] = '\0';
    return s;
}

static void assert_state_json(blob b, const char *want) {
    char *s = state_json(b);
    assert_string_equal(s, want);
    free(s);
}

/* A WSNP v1 image from a memory section and a state text. */
static blob make_snapshot(const uint8_t *mem, uint32_t memlen, const char *json) {
    size_t m = strlen(json);
    blob b;
    b.len = 13 + (size_t)memlen + m;
    b.data = malloc(b.len);
    assert_non_null(b.data);
    memcpy(b.data, "WSNP", 4);
    b.data[4] = 1;
    wr32(b.data + 5, memlen);
    if (memlen) memcpy(b.data + 9, mem, memlen);
    wr32(b.data + 9 + memlen, (uint32_t)m);
    memcpy(b.data + 13 + memlen, json, m);
    return b;
}

/* ---- layout ------------------------------------------------------------------------------- */

static void header_is_magic_and_version(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    assert_memory_equal(b.data, "WSNP", 4);
    assert_int_equal(b.data[0], 0x57);
    assert_int_equal(b.data[1], 0x53);
    assert_int_equal(b.data[2], 0x4E);
    assert_int_equal(b.data[3], 0x50);
    assert_int_equal(b.data[4], 0x01);
    free(b.data);
    close_env(&e);
}

static void memory_length_is_one_page_little_endian(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    assert_int_equal(b.data[5], 0x00);
    assert_int_equal(b.data[6], 0x00);
    assert_int_equal(b.data[7], 0x01);
    assert_int_equal(b.data[8], 0x00);
    assert_int_equal(rd32(b.data + 5), PAGE);
    free(b.data);
    close_env(&e);
}

static void one_page_snapshot_is_65623_bytes(void **state) {
    (void)state;
    env e = open_env("sb_random");
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 1144304738);
    blob b = snap(e.sb);
    assert_int_equal(b.len, 65623);
    /* 13 + 65536 + 74 */
    assert_int_equal(rd32(b.data + 9 + PAGE), 74);
    assert_state_json(b, "{\"prngState\":{\"current\":1831565813},\"timestamp\":1700000000000,\"gasUsed\":1}");
    free(b.data);
    close_env(&e);
}

static void state_json_of_fresh_sandbox(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    assert_state_json(b, "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0}");
    free(b.data);
    close_env(&e);
    ri_sandbox_config c = seeded_config(42);
    e = open_env_cfg("sb_memcounter", &c);
    b = snap(e.sb);
    assert_state_json(b, "{\"prngState\":{\"current\":42},\"timestamp\":1700000000000,\"gasUsed\":0}");
    free(b.data);
    close_env(&e);
}

static void state_json_prng_state_is_signed(void **state) {
    (void)state;
    env e = open_env("sb_random");
    exec_i32(e.sb, "randN", "2");
    blob b = snap(e.sb);
    /* After two steps from seed 0 the state is 3663131626, written as an i32. */
    assert_state_json(b, "{\"prngState\":{\"current\":-631835670},\"timestamp\":1700000000000,\"gasUsed\":2}");
    assert_int_equal(b.len, 13 + PAGE + 74);
    free(b.data);
    close_env(&e);
}

static void state_json_holds_gas_of_last_execution(void **state) {
    (void)state;
    env e = open_env("sb_fib");
    assert_int_equal(exec_i32(e.sb, "fib", "20"), 6765);
    blob b = snap(e.sb);
    assert_state_json(b, "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":21}");
    free(b.data);
    close_env(&e);
}

static void state_json_holds_full_timestamp(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(7);
    c.event_timestamp = 42;
    env e = open_env_cfg("sb_memcounter", &c);
    blob b = snap(e.sb);
    assert_state_json(b, "{\"prngState\":{\"current\":7},\"timestamp\":42,\"gasUsed\":0}");
    free(b.data);
    close_env(&e);
}

static void snapshot_captures_memory_bytes(void **state) {
    (void)state;
    env e = open_env("sb_memimport");
    exec_void(e.sb, "store8", "[0,222]");
    exec_void(e.sb, "store8", "[1,173]");
    exec_void(e.sb, "store8", "[2,190]");
    exec_void(e.sb, "store8", "[3,239]");
    exec_void(e.sb, "store8", "[65535,1]");
    blob b = snap(e.sb);
    static const uint8_t want[4] = {0xde, 0xad, 0xbe, 0xef};
    assert_memory_equal(b.data + 9, want, 4);
    assert_int_equal(b.data[9 + 4], 0);
    assert_int_equal(b.data[9 + 65535], 1);
    free(b.data);
    close_env(&e);
}

static void module_without_memory_snapshots_one_page(void **state) {
    (void)state;
    /* The sandbox's memory exists whether or not the module imports it. */
    env e = open_env("sb_add");
    blob b = snap(e.sb);
    assert_int_equal(rd32(b.data + 5), PAGE);
    assert_int_equal(b.len, 13 + PAGE + 65);
    free(b.data);
    close_env(&e);
}

static void own_memory_is_what_gets_captured(void **state) {
    (void)state;
    env e = open_env("sb_ownmem");
    exec_void(e.sb, "store8", "[123,171]");
    blob b = snap(e.sb);
    assert_int_equal(rd32(b.data + 5), PAGE);
    assert_int_equal(b.data[9 + 123], 171);
    free(b.data);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), 1);
    b = snap(e.sb);
    assert_int_equal(rd32(b.data + 5), 2 * PAGE);
    assert_int_equal(b.data[9 + 123], 171);
    free(b.data);
    close_env(&e);
}

static void grown_memory_snapshot_holds_all_pages(void **state) {
    (void)state;
    env e = open_env("sb_memimport");
    assert_int_equal(exec_i32(e.sb, "allocate", "2"), 1);
    exec_void(e.sb, "store8", "[196607,99]");
    blob b = snap(e.sb);
    assert_int_equal(rd32(b.data + 5), 3 * PAGE);
    assert_int_equal(b.data[9 + 196607], 99);
    free(b.data);
    close_env(&e);
}

static void snapshot_changes_nothing(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    exec_i32(e.sb, "drawAndStore", NULL);
    blob a = snap(e.sb);
    blob b = snap(e.sb);
    assert_true(blobs_equal(a, b));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 1);
    /* The PRNG was not touched: next is seed 0's second value. */
    assert_int_equal(exec_i32(e.sb, "drawAndStore", NULL), 1416247);
    free(a.data);
    free(b.data);
    close_env(&e);
}

static void same_history_same_bytes_across_sandboxes(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(99);
    env x = open_env_cfg("sb_memcounter", &c);
    env y = open_env_cfg("sb_memcounter", &c);
    for (int i = 0; i < 3; i++) {
        exec_i32(x.sb, "increment", NULL);
        exec_i32(y.sb, "increment", NULL);
    }
    exec_i32(x.sb, "drawAndStore", NULL);
    exec_i32(y.sb, "drawAndStore", NULL);
    blob a = snap(x.sb), b = snap(y.sb);
    assert_true(blobs_equal(a, b));
    free(a.data);
    free(b.data);
    close_env(&x);
    close_env(&y);
}

/* ---- status rules for snapshot ------------------------------------------------------------- */

static void snapshot_of_created_is_refused(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = seeded_config(0);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    expect_snapshot_error(sb, "Cannot snapshot an instance that has not been loaded");
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void snapshot_of_destroyed_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    ri_sandbox_destroy(e.sb);
    expect_snapshot_error(e.sb, "Cannot snapshot a destroyed instance");
    close_env(&e);
}

static void snapshot_of_suspended_is_allowed(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    exec_i32(e.sb, "increment", NULL);
    blob a = snap(e.sb);
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(e.sb, &err));
    blob b = snap(e.sb);
    assert_true(blobs_equal(a, b));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_SUSPENDED);
    free(a.data);
    free(b.data);
    close_env(&e);
}

/* A host function that tries snapshot and restore on its own, running, sandbox. */
typedef struct inside {
    ri_sandbox *sb;
    blob valid;
    bool snapshot_ok, restore_ok;
    ri_sandbox_error snapshot_err, restore_err;
} inside;

static int inside_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    inside *in = user;
    uint8_t *out = NULL;
    size_t len = 0;
    in->snapshot_ok = ri_sandbox_snapshot(in->sb, &out, &len, &in->snapshot_err);
    free(out);
    in->restore_ok = ri_sandbox_restore(in->sb, in->valid.data, in->valid.len, &in->restore_err);
    return 0;
}

static void snapshot_and_restore_of_running_are_refused(void **state) {
    (void)state;
    inside in;
    memset(&in, 0, sizeof in);
    ri_host_function fns[1] = {{"probe", 0, NULL, 0, NULL, inside_fn, &in}};
    ri_sandbox_config c = seeded_config(0);
    c.host_functions = fns;
    c.nhost_functions = 1;
    env e = open_env_cfg("sb_probe", &c);
    in.sb = e.sb;
    in.valid = snap(e.sb);
    assert_int_equal(exec_i32(e.sb, "probe1", NULL), 7);
    assert_false(in.snapshot_ok);
    assert_int_equal(in.snapshot_err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_string_equal(in.snapshot_err.message, "Cannot snapshot a running instance — suspend first");
    assert_false(in.restore_ok);
    assert_int_equal(in.restore_err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_string_equal(in.restore_err.message, "Cannot restore into a running instance — suspend first");
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    free(in.valid.data);
    close_env(&e);
}

/* ---- restore: round trips -------------------------------------------------------------------- */

static void restore_brings_memory_back(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    exec_i32(e.sb, "increment", NULL);
    exec_i32(e.sb, "increment", NULL);
    blob b = snap(e.sb);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 3);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 4);
    restore_ok(e.sb, b);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 2);
    free(b.data);
    close_env(&e);
}

static void restore_sets_gas_used_from_snapshot(void **state) {
    (void)state;
    env e = open_env("sb_fib");
    uint64_t gas = 0;
    exec_i32_gas(e.sb, "fib", "20", &gas);
    assert_int_equal(gas, 21);
    blob b = snap(e.sb);
    exec_i32(e.sb, "fib", "3");
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 4);
    restore_ok(e.sb, b);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 21);
    free(b.data);
    close_env(&e);
}

static void restore_gas_matches_pure_execution(void **state) {
    (void)state;
    env e = open_env("sb_add");
    uint64_t g1 = 99;
    exec_i32_gas(e.sb, "add", "[10,20]", &g1);
    blob b = snap(e.sb);
    exec_i32(e.sb, "add", "[1,2]");
    exec_i32(e.sb, "add", "[3,4]");
    restore_ok(e.sb, b);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, g1);
    assert_int_equal(exec_i32(e.sb, "add", "[10,20]"), 30);
    free(b.data);
    close_env(&e);
}

static void prng_continues_after_restore(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(12345);
    env e = open_env_cfg("sb_random", &c);
    exec_i32(e.sb, "getRandom", NULL);
    blob b = snap(e.sb);
    int32_t r2 = exec_i32(e.sb, "getRandom", NULL);
    exec_i32(e.sb, "getRandom", NULL);
    exec_i32(e.sb, "getRandom", NULL);
    restore_ok(e.sb, b);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), r2);
    assert_int_equal(r2, 1317490944);
    free(b.data);
    close_env(&e);
}

static void prng_continuation_seed42(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(42);
    env e = open_env_cfg("sb_random", &c);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), -1713246340);
    blob b = snap(e.sb);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 1925393290);
    restore_ok(e.sb, b);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 1925393290);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), -633654592);
    free(b.data);
    close_env(&e);
}

static void round_trip_guarantee(void **state) {
    (void)state;
    /* Seed 000: result1 == result2 and bytes2 == bytes3. */
    env e = open_env("sb_memcounter");
    exec_i32(e.sb, "increment", NULL);
    blob b1 = snap(e.sb);
    int32_t r1 = exec_i32(e.sb, "drawAndStore", NULL);
    blob b2 = snap(e.sb);
    exec_i32(e.sb, "increment", NULL);
    exec_i32(e.sb, "drawAndStore", NULL);
    restore_ok(e.sb, b1);
    int32_t r2 = exec_i32(e.sb, "drawAndStore", NULL);
    blob b3 = snap(e.sb);
    assert_int_equal(r1, r2);
    assert_true(blobs_equal(b2, b3));
    free(b1.data);
    free(b2.data);
    free(b3.data);
    close_env(&e);
}

static void restore_into_another_sandbox_forks(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(5);
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *a = load_into(f, &c, "sb_memcounter");
    ri_sandbox *b = load_into(f, &c, "sb_memcounter");
    exec_i32(a, "increment", NULL);
    exec_i32(a, "drawAndStore", NULL);
    blob s = snap(a);
    restore_ok(b, s);
    assert_int_equal(exec_i32(b, "get", NULL), 1);
    assert_int_equal(exec_i32(a, "drawAndStore", NULL), exec_i32(b, "drawAndStore", NULL));
    blob sa = snap(a), sb2 = snap(b);
    assert_true(blobs_equal(sa, sb2));
    free(s.data);
    free(sa.data);
    free(sb2.data);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
    ri_sandboxes_free(f);
}

static void multiple_cycles_stay_consistent(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    exec_i32(e.sb, "increment", NULL);
    blob s1 = snap(e.sb);
    exec_i32(e.sb, "increment", NULL);
    blob s2 = snap(e.sb);
    exec_i32(e.sb, "increment", NULL);
    restore_ok(e.sb, s1);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 1);
    restore_ok(e.sb, s2);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 2);
    restore_ok(e.sb, s1);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 2);
    free(s1.data);
    free(s2.data);
    close_env(&e);
}

static void same_size_sandboxes_accept_each_others_snapshots(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config ca = seeded_config(0);
    ca.max_memory_bytes = PAGE;
    ri_sandbox_config cb = seeded_config(0);
    cb.max_memory_bytes = 2 * PAGE;
    ri_sandbox *a = load_into(f, &ca, "sb_add");
    ri_sandbox *b = load_into(f, &cb, "sb_add");
    blob s = snap(a);
    /* Both memories are one page now, whatever their limits. */
    restore_ok(b, s);
    free(s.data);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
    ri_sandboxes_free(f);
}

static void restore_accepts_hand_written_state(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob cur = snap(e.sb);
    /* Other key order and whitespace: still the seed's state JSON. */
    blob b = make_snapshot(cur.data + 9, PAGE,
                           "{ \"gasUsed\": 5, \"timestamp\": 1700000000000, \"prngState\": { \"current\": -631835670 } }");
    restore_ok(e.sb, b);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 5);
    /* Seed 0 after two steps: the third output comes next. */
    assert_int_equal(exec_i32(e.sb, "drawAndStore", NULL), 958946056);
    free(b.data);
    free(cur.data);
    close_env(&e);
}

static void restore_accepts_unsigned_prng_state(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob cur = snap(e.sb);
    /* 3663131626 is -631835670 as an i32: the same state. */
    blob b = make_snapshot(cur.data + 9, PAGE,
                           "{\"prngState\":{\"current\":3663131626},\"timestamp\":1700000000000,\"gasUsed\":0}");
    restore_ok(e.sb, b);
    assert_int_equal(exec_i32(e.sb, "drawAndStore", NULL), 958946056);
    free(b.data);
    free(cur.data);
    close_env(&e);
}

static void restore_ignores_extra_state_keys(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob cur = snap(e.sb);
    /* Seed 000 check 6 is "JSON.parse succeeds": a state with the three fields plus
     * others is not corrupted, and the original restores it. */
    blob b = make_snapshot(cur.data + 9, PAGE,
                           "{\"prngState\":{\"current\":1831565813,\"note\":1},\"timestamp\":1700000000000,"
                           "\"gasUsed\":3,\"writer\":\"other\"}");
    restore_ok(e.sb, b);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 3);
    assert_int_equal(exec_i32(e.sb, "drawAndStore", NULL), 1416247);
    free(b.data);
    free(cur.data);
    close_env(&e);
}

static void restore_accepts_integral_numbers_in_any_notation(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob cur = snap(e.sb);
    /* JSON.parse reads 3.0 and 1.7e12 as the integers 3 and 1700000000000. */
    blob b = make_snapshot(cur.data + 9, PAGE,
                           "{\"prngState\":{\"current\":1831565813.0},\"timestamp\":1.7e12,\"gasUsed\":3.0}");
    restore_ok(e.sb, b);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 3);
    assert_int_equal(exec_i32(e.sb, "drawAndStore", NULL), 1416247);
    free(b.data);
    free(cur.data);
    close_env(&e);
}

static void restore_writes_memory_from_snapshot(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    uint8_t *mem = calloc(PAGE, 1);
    assert_non_null(mem);
    wr32(mem, 41);
    blob b = make_snapshot(mem, PAGE, "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0}");
    restore_ok(e.sb, b);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 42);
    free(mem);
    free(b.data);
    close_env(&e);
}

/* ---- restore: every error, in the seed's order ------------------------------------------------ */

static void restore_into_destroyed_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    ri_sandbox_destroy(e.sb);
    expect_restore_error(e.sb, b.data, b.len, "Cannot restore into a destroyed instance");
    /* The status check comes before any look at the bytes. */
    static const uint8_t junk[2] = {1, 2};
    expect_restore_error(e.sb, junk, sizeof junk, "Cannot restore into a destroyed instance");
    free(b.data);
    close_env(&e);
}

static void restore_into_created_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    ri_sandbox_config c = seeded_config(0);
    ri_sandbox_error err;
    ri_sandbox *fresh = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(fresh);
    expect_restore_error(fresh, b.data, b.len, "Cannot restore into an instance that has not been loaded");
    static const uint8_t junk[2] = {1, 2};
    expect_restore_error(fresh, junk, sizeof junk, "Cannot restore into an instance that has not been loaded");
    assert_int_equal(ri_sandbox_status_of(fresh), RI_SANDBOX_CREATED);
    ri_sandbox_free(fresh);
    free(b.data);
    close_env(&e);
}

static void restore_too_small(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    static const uint8_t four[4] = {'W', 'S', 'N', 'P'};
    expect_restore_error(e.sb, four, 0, "Snapshot too small — missing header");
    expect_restore_error(e.sb, four, 1, "Snapshot too small — missing header");
    expect_restore_error(e.sb, four, 4, "Snapshot too small — missing header");
    close_env(&e);
}

static void restore_bad_magic(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    static const uint8_t garbage[5] = {0x00, 0x00, 0x00, 0x00, 0x01};
    expect_restore_error(e.sb, garbage, sizeof garbage, "Invalid snapshot — bad magic bytes");
    static const uint8_t almost[5] = {'W', 'S', 'N', 'Q', 0x01};
    expect_restore_error(e.sb, almost, sizeof almost, "Invalid snapshot — bad magic bytes");
    /* Magic before version: both wrong, magic reported. */
    static const uint8_t both[5] = {'X', 'S', 'N', 'P', 0x09};
    expect_restore_error(e.sb, both, sizeof both, "Invalid snapshot — bad magic bytes");
    close_env(&e);
}

static void restore_unsupported_version(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    /* Restore reads v1 and v2 (issue 5); a 5-byte v2 header is cut short. */
    uint8_t v[5] = {'W', 'S', 'N', 'P', 2};
    expect_restore_error(e.sb, v, sizeof v, "Snapshot too small — missing header");
    v[4] = 0;
    expect_restore_error(e.sb, v, sizeof v, "Unsupported snapshot version: 0 (expected 1 or 2)");
    v[4] = 255;
    expect_restore_error(e.sb, v, sizeof v, "Unsupported snapshot version: 255 (expected 1 or 2)");
    close_env(&e);
}

static void restore_version_checked_before_truncation(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    b.data[4] = 3;
    expect_restore_error(e.sb, b.data, 20, "Unsupported snapshot version: 3 (expected 1 or 2)");
    free(b.data);
    close_env(&e);
}

static void restore_missing_memory_length(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    static const uint8_t hdr[8] = {'W', 'S', 'N', 'P', 1, 0, 0, 1};
    expect_restore_error(e.sb, hdr, 5, "Snapshot truncated — missing memory length");
    expect_restore_error(e.sb, hdr, 8, "Snapshot truncated — missing memory length");
    close_env(&e);
}

static void restore_memory_section_incomplete(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    expect_restore_error(e.sb, b.data, 9, "Snapshot truncated — memory section incomplete");
    expect_restore_error(e.sb, b.data, 9 + PAGE - 1, "Snapshot truncated — memory section incomplete");
    /* A length near 2^32 must not wrap around. */
    wr32(b.data + 5, 0xFFFFFFFFu);
    expect_restore_error(e.sb, b.data, b.len, "Snapshot truncated — memory section incomplete");
    free(b.data);
    close_env(&e);
}

static void restore_missing_state_length(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    expect_restore_error(e.sb, b.data, 9 + PAGE, "Snapshot truncated — missing state length");
    expect_restore_error(e.sb, b.data, 9 + PAGE + 3, "Snapshot truncated — missing state length");
    free(b.data);
    close_env(&e);
}

static void restore_state_section_incomplete(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob b = snap(e.sb);
    expect_restore_error(e.sb, b.data, 13 + PAGE, "Snapshot truncated — state section incomplete");
    expect_restore_error(e.sb, b.data, b.len - 1, "Snapshot truncated — state section incomplete");
    wr32(b.data + 9 + PAGE, 0xFFFFFFFFu);
    expect_restore_error(e.sb, b.data, b.len, "Snapshot truncated — state section incomplete");
    free(b.data);
    close_env(&e);
}

static void restore_corrupted_state_json(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    blob cur = snap(e.sb);
    static const char *bad[] = {"{bad", "", "{\"prngState\":", "not json", "{\"a\":1}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        blob b = make_snapshot(cur.data + 9, PAGE, bad[i]);
        expect_restore_error(e.sb, b.data, b.len, "Invalid snapshot — corrupted state JSON");
        free(b.data);
    }
    free(cur.data);
    close_env(&e);
}

static void restore_json_checked_before_memory_size(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    uint8_t *mem = calloc(2 * PAGE, 1);
    assert_non_null(mem);
    blob b = make_snapshot(mem, 2 * PAGE, "{corrupt");
    expect_restore_error(e.sb, b.data, b.len, "Invalid snapshot — corrupted state JSON");
    free(b.data);
    free(mem);
    close_env(&e);
}

static void restore_memory_checked_before_state(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    /* Memory length 100 but only 50 bytes: the state section is never looked at. */
    uint8_t bytes[9 + 50];
    memset(bytes, 0, sizeof bytes);
    memcpy(bytes, "WSNP", 4);
    bytes[4] = 1;
    wr32(bytes + 5, 100);
    expect_restore_error(e.sb, bytes, sizeof bytes, "Snapshot truncated — memory section incomplete");
    close_env(&e);
}

static void restore_memory_size_mismatch(void **state) {
    (void)state;
    env e = open_env("sb_memcounter");
    uint8_t *mem = calloc(2 * PAGE, 1);
    assert_non_null(mem);
    blob b = make_snapshot(mem, 2 * PAGE, "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0}");
    expect_restore_error(e.sb, b.data, b.len, "Snapshot memory size (131072) does not match instance memory (65536)");
    free(b.data);
    b = make_snapshot(mem, 0, "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0}");
    expect_restore_error(e.sb, b.data, b.len, "Snapshot memory size (0) does not match instance memory (65536)");
    free(b.data);
    free(mem);
    close_env(&e);
}

static void snapshot_before_grow_cannot_restore_after(void **state) {
    (void)state;
    env e = open_env("sb_memimport");
    blob small = snap(e.sb);
    assert_int_equal(exec_i32(e.sb, "allocate", "1"), 1);
    expect_restore_error(e.sb, small.data, small.len,
                         "Snapshot memory size (65536) does not match instance memory (131072)");
    blob big = snap(e.sb);
    env fresh = open_env("sb_memimport");
    expect_restore_error(fresh.sb, big.data, big.len,
                         "Snapshot memory size (131072) does not match instance memory (65536)");
    /* The grown sandbox takes its own snapshot back. */
    restore_ok(e.sb, big);
    free(small.data);
    free(big.data);
    close_env(&fresh);
    close_env(&e);
}

/* ---- restore is atomic -------------------------------------------------------------------------- */

/* Loads sb_memcounter, builds some state (memory, PRNG, gas) and returns its snapshot. */
static blob prepared_state(env *e) {
    *e = open_env("sb_memcounter");
    exec_i32(e->sb, "increment", NULL);
    exec_i32(e->sb, "increment", NULL);
    exec_i32(e->sb, "drawAndStore", NULL);
    return snap(e->sb);
}

/* Everything observable is as in `before`. */
static void assert_unchanged(env *e, blob before, ri_sandbox_status status) {
    assert_int_equal(ri_sandbox_status_of(e->sb), status);
    assert_int_equal(ri_sandbox_get_metrics(e->sb).gas_used, 1);
    blob now = snap(e->sb);
    assert_true(blobs_equal(before, now));
    free(now.data);
    if (status == RI_SANDBOX_SUSPENDED) {
        restore_ok(e->sb, before);
    }
    assert_int_equal(exec_i32(e->sb, "get", NULL), 2);
    /* The PRNG moved once: seed 0's second output is next. */
    assert_int_equal(exec_i32(e->sb, "drawAndStore", NULL), 1416247);
}

static void corrupt_json_restore_changes_nothing(void **state) {
    (void)state;
    env e;
    blob before = prepared_state(&e);
    /* Other memory, other gas, and a broken state JSON. */
    uint8_t *mem = malloc(PAGE);
    assert_non_null(mem);
    memset(mem, 0x77, PAGE);
    blob bad = make_snapshot(mem, PAGE, "{\"prngState\":{\"current\":5},\"timestamp\":1,\"gasUsed\":9");
    expect_restore_error(e.sb, bad.data, bad.len, "Invalid snapshot — corrupted state JSON");
    assert_unchanged(&e, before, RI_SANDBOX_LOADED);
    free(mem);
    free(bad.data);
    free(before.data);
    close_env(&e);
}

static void corrupt_restore_leaves_suspended_suspended(void **state) {
    (void)state;
    env e;
    blob before = prepared_state(&e);
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(e.sb, &err));
    uint8_t *mem = calloc(PAGE, 1);
    assert_non_null(mem);
    blob bad = make_snapshot(mem, PAGE, "{oops");
    expect_restore_error(e.sb, bad.data, bad.len, "Invalid snapshot — corrupted state JSON");
    assert_unchanged(&e, before, RI_SANDBOX_SUSPENDED);
    free(mem);
    free(bad.data);
    free(before.data);
    close_env(&e);
}

static void size_mismatch_restore_changes_nothing(void **state) {
    (void)state;
    env e;
    blob before = prepared_state(&e);
    uint8_t *mem = malloc(2 * PAGE);
    assert_non_null(mem);
    memset(mem, 0x55, 2 * PAGE);
    blob bad = make_snapshot(mem, 2 * PAGE, "{\"prngState\":{\"current\":5},\"timestamp\":1,\"gasUsed\":9}");
    expect_restore_error(e.sb, bad.data, bad.len,
                         "Snapshot memory size (131072) does not match instance memory (65536)");
    assert_unchanged(&e, before, RI_SANDBOX_LOADED);
    free(mem);
    free(bad.data);
    free(before.data);
    close_env(&e);
}

static void truncated_restore_changes_nothing(void **state) {
    (void)state;
    env e;
    blob before = prepared_state(&e);
    blob other = make_snapshot(before.data + 9, PAGE, "{\"prngState\":{\"current\":5},\"timestamp\":1,\"gasUsed\":9}");
    other.data[9] = 0x99;
    expect_restore_error(e.sb, other.data, other.len - 1, "Snapshot truncated — state section incomplete");
    assert_unchanged(&e, before, RI_SANDBOX_LOADED);
    free(other.data);
    free(before.data);
    close_env(&e);
}

static void state_json_of_wrong_shape_is_refused_atomically(void **state) {
    (void)state;
    env e;
    blob before = prepared_state(&e);
    uint8_t *mem = calloc(PAGE, 1);
    assert_non_null(mem);
    /* Valid JSON, but without the fields a restore needs (or one of them twice). */
    static const char *shapes[] = {
        "{}",
        "[1,2,3]",
        "{\"prngState\":{},\"timestamp\":1700000000000,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":\"x\"},\"timestamp\":1700000000000,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":-1}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000}",
        "{\"prngState\":{\"current\":0},\"gasUsed\":0}",
        "{\"timestamp\":1700000000000,\"gasUsed\":0}",
        "{\"prngState\":0,\"timestamp\":1700000000000,\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"timestamp\":\"now\",\"gasUsed\":0}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1700000000000,\"gasUsed\":0,\"gasUsed\":1}",
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        blob bad = make_snapshot(mem, PAGE, shapes[i]);
        ri_sandbox_error err;
        memset(&err, 0, sizeof err);
        if (ri_sandbox_restore(e.sb, bad.data, bad.len, &err)) {
            print_error("restore accepted state %s\n", shapes[i]);
            fail();
        }
        assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
        assert_string_equal(err.message, "Invalid snapshot — corrupted state JSON");
        free(bad.data);
    }
    assert_unchanged(&e, before, RI_SANDBOX_LOADED);
    free(mem);
    free(before.data);
    close_env(&e);
}

/* ---- what v1 cannot hold ------------------------------------------------------------------------- */

static bool mentions(const char *message, const char *word) {
    return strstr(message, word) != NULL;
}

static void mutable_global_at_initial_value_snapshots(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    blob b = snap(e.sb);
    assert_int_equal(rd32(b.data + 5), PAGE);
    free(b.data);
    assert_int_equal(exec_i32(e.sb, "fixed", NULL), 5);
    close_env(&e);
}

static void changed_mutable_global_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 1);
    uint8_t *out = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_snapshot(e.sb, &out, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    if (!mentions(err.message, "global")) {
        print_error("message does not say what v1 cannot hold: %s\n", err.message);
        fail();
    }
    free(out);
    /* Refusing changed nothing. */
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 1);
    close_env(&e);
}

static void global_back_at_initial_value_snapshots_again(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    exec_i32(e.sb, "increment", NULL);
    expect_snapshot_error(e.sb, NULL);
    exec_void(e.sb, "resetCount", NULL);
    blob b = snap(e.sb);
    free(b.data);
    close_env(&e);
}

static void changed_table_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    assert_int_equal(exec_i32(e.sb, "callSlot0", NULL), 1);
    exec_void(e.sb, "swap", NULL);
    assert_int_equal(exec_i32(e.sb, "callSlot0", NULL), 2);
    uint8_t *out = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_snapshot(e.sb, &out, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    if (!mentions(err.message, "table")) {
        print_error("message does not say what v1 cannot hold: %s\n", err.message);
        fail();
    }
    free(out);
    /* Back as instantiated: allowed again. */
    exec_void(e.sb, "unswap", NULL);
    blob b = snap(e.sb);
    free(b.data);
    close_env(&e);
}

static void grown_table_is_refused(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    assert_int_equal(exec_i32(e.sb, "growTable", NULL), 2);
    uint8_t *out = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_snapshot(e.sb, &out, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_true(mentions(err.message, "table"));
    free(out);
    close_env(&e);
}

static void restore_puts_globals_back_to_instantiation(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    exec_void(e.sb, "store8", "[9,33]");
    blob b = snap(e.sb);
    for (int i = 0; i < 3; i++) exec_i32(e.sb, "increment", NULL);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 3);
    exec_void(e.sb, "store8", "[9,44]");
    restore_ok(e.sb, b);
    /* v1 stands for "globals as at instantiation". */
    assert_int_equal(exec_i32(e.sb, "get", NULL), 0);
    assert_int_equal(exec_i32(e.sb, "load8", "9"), 33);
    assert_int_equal(exec_i32(e.sb, "fixed", NULL), 5);
    free(b.data);
    close_env(&e);
}

static void restore_puts_table_back_to_instantiation(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    blob b = snap(e.sb);
    exec_void(e.sb, "swap", NULL);
    assert_int_equal(exec_i32(e.sb, "growTable", NULL), 2);
    restore_ok(e.sb, b);
    assert_int_equal(exec_i32(e.sb, "callSlot0", NULL), 1);
    /* Table size back to 2 as well: the snapshot is allowed again and growTable
     * reports the old size 2. */
    blob again = snap(e.sb);
    free(again.data);
    assert_int_equal(exec_i32(e.sb, "growTable", NULL), 2);
    free(b.data);
    close_env(&e);
}

static void dropped_data_segment_is_refused_and_restored(void **state) {
    (void)state;
    env e = open_env("sb_globals");
    blob b = snap(e.sb);
    exec_void(e.sb, "dropData", NULL);
    expect_snapshot_error(e.sb, NULL);
    /* Dropped: memory.init now traps. */
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "initData", NULL);
    assert_false(r.ok);
    ri_sandbox_result_free(&r);
    restore_ok(e.sb, b);
    /* As at instantiation: the segment is back. */
    exec_void(e.sb, "initData", NULL);
    assert_int_equal(exec_i32(e.sb, "load8", "200"), 'x');
    assert_int_equal(exec_i32(e.sb, "load8", "202"), 'z');
    free(b.data);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_is_magic_and_version),
        cmocka_unit_test(memory_length_is_one_page_little_endian),
        cmocka_unit_test(one_page_snapshot_is_65623_bytes),
        cmocka_unit_test(state_json_of_fresh_sandbox),
        cmocka_unit_test(state_json_prng_state_is_signed),
        cmocka_unit_test(state_json_holds_gas_of_last_execution),
        cmocka_unit_test(state_json_holds_full_timestamp),
        cmocka_unit_test(snapshot_captures_memory_bytes),
        cmocka_unit_test(module_without_memory_snapshots_one_page),
        cmocka_unit_test(own_memory_is_what_gets_captured),
        cmocka_unit_test(grown_memory_snapshot_holds_all_pages),
        cmocka_unit_test(snapshot_changes_nothing),
        cmocka_unit_test(same_history_same_bytes_across_sandboxes),
        cmocka_unit_test(snapshot_of_created_is_refused),
        cmocka_unit_test(snapshot_of_destroyed_is_refused),
        cmocka_unit_test(snapshot_of_suspended_is_allowed),
        cmocka_unit_test(snapshot_and_restore_of_running_are_refused),
        cmocka_unit_test(restore_brings_memory_back),
        cmocka_unit_test(restore_sets_gas_used_from_snapshot),
        cmocka_unit_test(restore_gas_matches_pure_execution),
        cmocka_unit_test(prng_continues_after_restore),
        cmocka_unit_test(prng_continuation_seed42),
        cmocka_unit_test(round_trip_guarantee),
        cmocka_unit_test(restore_into_another_sandbox_forks),
        cmocka_unit_test(multiple_cycles_stay_consistent),
        cmocka_unit_test(same_size_sandboxes_accept_each_others_snapshots),
        cmocka_unit_test(restore_accepts_hand_written_state),
        cmocka_unit_test(restore_accepts_unsigned_prng_state),
        cmocka_unit_test(restore_ignores_extra_state_keys),
        cmocka_unit_test(restore_accepts_integral_numbers_in_any_notation),
        cmocka_unit_test(restore_writes_memory_from_snapshot),
        cmocka_unit_test(restore_into_destroyed_is_refused),
        cmocka_unit_test(restore_into_created_is_refused),
        cmocka_unit_test(restore_too_small),
        cmocka_unit_test(restore_bad_magic),
        cmocka_unit_test(restore_unsupported_version),
        cmocka_unit_test(restore_version_checked_before_truncation),
        cmocka_unit_test(restore_missing_memory_length),
        cmocka_unit_test(restore_memory_section_incomplete),
        cmocka_unit_test(restore_missing_state_length),
        cmocka_unit_test(restore_state_section_incomplete),
        cmocka_unit_test(restore_corrupted_state_json),
        cmocka_unit_test(restore_json_checked_before_memory_size),
        cmocka_unit_test(restore_memory_checked_before_state),
        cmocka_unit_test(restore_memory_size_mismatch),
        cmocka_unit_test(snapshot_before_grow_cannot_restore_after),
        cmocka_unit_test(corrupt_json_restore_changes_nothing),
        cmocka_unit_test(corrupt_restore_leaves_suspended_suspended),
        cmocka_unit_test(size_mismatch_restore_changes_nothing),
        cmocka_unit_test(truncated_restore_changes_nothing),
        cmocka_unit_test(state_json_of_wrong_shape_is_refused_atomically),
        cmocka_unit_test(mutable_global_at_initial_value_snapshots),
        cmocka_unit_test(changed_mutable_global_is_refused),
        cmocka_unit_test(global_back_at_initial_value_snapshots_again),
        cmocka_unit_test(changed_table_is_refused),
        cmocka_unit_test(grown_table_is_refused),
        cmocka_unit_test(restore_puts_globals_back_to_instantiation),
        cmocka_unit_test(restore_puts_table_back_to_instantiation),
        cmocka_unit_test(dropped_data_segment_is_refused_and_restored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
