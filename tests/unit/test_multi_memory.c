/*
 * Multiple memories and 64-bit memories in the sandbox: a run over two memories, paused
 * in slices, each slice snapshotted into a fresh sandbox, ends with the uninterrupted
 * run's result, gas and final snapshot bytes; a diff and a delta of a change to memory 1
 * name memory 1 and restore it; the memory limit covers both memories together (grow,
 * load, restore); a 64-bit memory's bounds are exact (no wraparound past 2^32 or 2^64)
 * and a bulk length near 2^63 traps at once. Fixtures: tests/wat/multimem.wat, mem64.wat.
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
#include "suspend_sandbox_util.h" /* read_fixture, snapshot_v2, env, suspend_config */

#define PAGE 65536u

static env open_multimem(uint64_t max_gas, uint32_t pause_on, uint64_t max_memory_bytes, bool load) {
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, max_gas);
    if (max_memory_bytes) c.max_memory_bytes = max_memory_bytes;
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(e.sb);
    if (load) {
        size_t len;
        uint8_t *wasm = read_fixture("multimem", &len);
        bool ok = ri_sandbox_load(e.sb, wasm, len, &err);
        free(wasm);
        if (!ok) print_error("load: %s\n", err.message);
        assert_true(ok);
    }
    if (pause_on && !ri_sandbox_set_pause_on(e.sb, pause_on, &err)) {
        print_error("pause_on: %s\n", err.message);
        fail();
    }
    return e;
}

/* The call's JSON result (the test fails if the call fails). */
static void expect(ri_sandbox *sb, const char *action, const char *args, const char *want) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, args);
    if (!r.ok) print_error("%s %s: %s\n", action, args, r.error.message);
    assert_true(r.ok);
    if (want) assert_string_equal(r.value_json, want);
    ri_sandbox_result_free(&r);
}

static void expect_trap(ri_sandbox *sb, const char *action, const char *args, const char *message_has) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, args);
    assert_false(r.ok);
    if (!strstr(r.error.message, message_has)) print_error("%s %s: %s\n", action, args, r.error.message);
    assert_non_null(strstr(r.error.message, message_has));
    ri_sandbox_result_free(&r);
}

/* ---- a paused run over two memories, through snapshots ------------------------------------ */

static void sliced(uint64_t slice) {
    env a = open_multimem(1000000, 0, 0, true);
    ri_sandbox_result want = ri_sandbox_execute(a.sb, "mix", "[40]");
    assert_true(want.ok);
    test_blob want_snap = snapshot_v2(a.sb, false, true);

    env b = open_multimem(slice, RI_SUSPEND_ON_GAS, 0, true);
    ri_sandbox_result r = ri_sandbox_execute(b.sb, "mix", "[40]");
    int slices = 1;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        test_blob s = snapshot_v2(b.sb, true, slices % 2 == 0);
        env c = open_multimem(slice, 0, 0, false); /* the image carries the module */
        ri_sandbox_error err;
        if (!ri_sandbox_restore(c.sb, s.data, s.len, &err)) {
            print_error("restore: %s\n", err.message);
            fail();
        }
        assert_int_equal(ri_sandbox_status_of(c.sb), RI_SANDBOX_SUSPENDED);
        free(s.data);
        close_env(&b);
        b = c;
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(b.sb, slice);
        slices++;
        assert_true(slices < 100000);
    }
    if (!r.ok) print_error("sliced: %s\n", r.error.message);
    assert_true(r.ok);
    assert_string_equal(r.value_json, want.value_json);
    assert_int_equal(r.gas_used, want.gas_used);
    if (slice < want.gas_used) assert_true(slices > 1);
    test_blob got_snap = snapshot_v2(b.sb, false, true);
    assert_true(same_blob(got_snap, want_snap)); /* both memories, byte for byte */
    free(got_snap.data);
    free(want_snap.data);
    ri_sandbox_result_free(&r);
    ri_sandbox_result_free(&want);
    close_env(&b);
    close_env(&a);
}

static void two_memories_paused_and_restored_give_the_same_run(void **state) {
    (void)state;
    static const uint64_t slices[] = {3, 17, 100, 1000000};
    for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) sliced(slices[i]);
}

/* ---- diffs and deltas of memory 1 ------------------------------------------------------------ */

static void diff_and_delta_of_memory_1(void **state) {
    (void)state;
    env e = open_multimem(1000000, 0, 0, true);
    test_blob parent = snapshot_v2(e.sb, true, false);
    expect(e.sb, "poke1", "[100, 16909060]", NULL); /* 0x01020304 at byte 100 of memory 1 */
    test_blob child = snapshot_v2(e.sb, true, false);

    ri_snap_diff d;
    ri_sandbox_error err;
    assert_true(ri_snapshot_diff(parent.data, parent.len, child.data, child.len, NULL, &d, &err));
    assert_false(d.identical);
    assert_int_equal(d.nmemories, 1);
    assert_int_equal(d.memories[0].index, 1);
    assert_int_equal(d.memories[0].changed_bytes, 4);
    assert_int_equal(d.nranges, 1);
    assert_int_equal(d.ranges[0].memory, 1);
    assert_int_equal(d.ranges[0].offset, 100);
    assert_int_equal(d.ranges[0].length, 4);
    ri_snap_diff_free(&d);

    /* memory.fill and memory.init of memory 1, memory 0 untouched */
    expect(e.sb, "fill1", "[200, 255, 2]", NULL);
    expect(e.sb, "peek1", "[199]", "16776960"); /* 0x00ffff00 */
    expect(e.sb, "init1", "[300, 1, 4]", NULL);
    expect(e.sb, "peek1", "[300]", "1769173857"); /* "assi" */
    expect_trap(e.sb, "init1", "[65534, 0, 4]", "out of bounds");
    expect_trap(e.sb, "fill1", "[65535, 0, 2]", "out of bounds");
    free(child.data);
    child = snapshot_v2(e.sb, true, false);

    /* A delta on the parent holds memory 1's page; restored on the parent elsewhere, it
     * gives the child's state, and snapshots to the child's bytes. */
    uint8_t *delta;
    size_t delta_len;
    assert_true(ri_sandbox_snapshot_delta(e.sb, parent.data, parent.len, NULL, &delta, &delta_len, &err));
    assert_true(delta_len < child.len);
    env f = open_multimem(1000000, 0, 0, true);
    if (!ri_sandbox_restore_delta(f.sb, parent.data, parent.len, delta, delta_len, &err)) {
        print_error("restore_delta: %s\n", err.message);
        fail();
    }
    expect(f.sb, "peek1", "[100]", "16909060");
    expect(f.sb, "peek1", "[300]", "1769173857");
    expect(f.sb, "peek1", "[16]", "1869440365"); /* "memo" of the data segment, untouched */
    test_blob again = snapshot_v2(f.sb, true, false);
    assert_true(ri_snapshot_diff(child.data, child.len, again.data, again.len, NULL, &d, &err));
    /* the same memories, globals, tables and segments (the last call's gas differs) */
    assert_int_equal(d.nmemories, 0);
    assert_int_equal(d.nglobals, 0);
    assert_int_equal(d.ntables, 0);
    assert_int_equal(d.nsegments, 0);
    ri_snap_diff_free(&d);
    free(again.data);
    free(delta);
    free(parent.data);
    free(child.data);
    close_env(&f);
    close_env(&e);
}

/* WSNP v1 holds one memory: a sandbox of two is refused, not snapshotted without memory 1. */
static void v1_refuses_two_memories(void **state) {
    (void)state;
    env e = open_multimem(1000000, 0, 0, true);
    uint8_t *out = NULL;
    size_t len = 0;
    ri_sandbox_error err;
    assert_false(ri_sandbox_snapshot(e.sb, &out, &len, &err));
    assert_null(out);
    assert_non_null(strstr(err.message, "use v2"));
    close_env(&e);
}

/* The determinism check runs an action twice from one state and puts that state back:
 * memory 1's too (it put back memory 0 only: the second run saw the first one's memory 1). */
static void determinism_check_puts_memory_1_back(void **state) {
    (void)state;
    env e = open_multimem(1000000, 0, 0, true);
    bool deterministic = false;
    ri_sandbox_error err;
    if (!ri_sandbox_check_determinism(e.sb, "bump1", "[]", &deterministic, &err))
        print_error("check: %s\n", err.message);
    assert_true(deterministic);
    expect(e.sb, "peek1", "[0]", "0");
    expect(e.sb, "size1", "[]", "1");
    close_env(&e);
}

/* ---- the memory limit covers both memories --------------------------------------------------- */

static void memory_limit_covers_both_memories(void **state) {
    (void)state;
    /* 3 pages for both: memory 0 grows to 2, then memory 1 (1 page, its own maximum 8)
     * cannot grow, since together they would hold 4. */
    env e = open_multimem(1000000, 0, 3 * PAGE, true);
    expect(e.sb, "grow0", "[1]", "1");
    expect(e.sb, "grow1", "[1]", "-1");
    expect(e.sb, "size1", "[]", "1");
    assert_int_equal(ri_sandbox_get_metrics(e.sb).memory_used_bytes, 3 * PAGE);
    close_env(&e);

    /* 1 page: each memory's minimum fits, both together do not. */
    env small = open_multimem(1000000, 0, PAGE, false);
    size_t len;
    uint8_t *wasm = read_fixture("multimem", &len);
    ri_sandbox_error err;
    assert_false(ri_sandbox_load(small.sb, wasm, len, &err));
    assert_non_null(strstr(err.message, "for all memories"));
    free(wasm);
    close_env(&small);

    /* A snapshot of 1 + 3 pages does not restore under a 3-page limit (each memory alone
     * would fit). */
    env big = open_multimem(1000000, 0, 8 * PAGE, true);
    expect(big.sb, "grow1", "[2]", "1");
    test_blob s = snapshot_v2(big.sb, true, false);
    env tight = open_multimem(1000000, 0, 3 * PAGE, true);
    assert_false(ri_sandbox_restore(tight.sb, s.data, s.len, &err));
    assert_non_null(strstr(err.message, "for all memories"));
    expect(tight.sb, "size1", "[]", "1"); /* unchanged */
    free(s.data);
    close_env(&tight);
    close_env(&big);
}

/* ---- a 64-bit memory ------------------------------------------------------------------------------ */

static void memory64_bounds_are_exact(void **state) {
    (void)state;
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_memory_bytes = 4 * PAGE;
    env e = open_env_cfg("mem64", &c);
    expect(e.sb, "store", "[65535, 7]", NULL);
    expect(e.sb, "load", "[65535]", "7");
    expect_trap(e.sb, "load", "[65536]", "out of bounds");
    expect_trap(e.sb, "load", "[-1]", "out of bounds");
    /* 1 + 0xffffffff is 2^32: out of bounds, not address 0 */
    expect_trap(e.sb, "load_far", "[1]", "out of bounds");
    /* an address plus an offset past 2^64 does not wrap to 0xfffffffe */
    expect_trap(e.sb, "load_far", "[-1]", "out of bounds");
    /* a length of 2^63 (charged as 2^32 at most) traps at once */
    expect_trap(e.sb, "fill", "[0, 1, -9223372036854775808]", "out of bounds");
    /* v128 loads and stores on a 64-bit memory (the general SIMD operations) */
    expect(e.sb, "v128_copy", "[65520, 0]", NULL);
    expect(e.sb, "load", "[15]", "7");
    expect_trap(e.sb, "v128_copy", "[65521, 0]", "out of bounds");
    expect_trap(e.sb, "v128_copy", "[0, 65521]", "out of bounds");
    expect_trap(e.sb, "v128_load_far", "[1]", "out of bounds");
    expect_trap(e.sb, "v128_load_far", "[-1]", "out of bounds");
    expect_trap(e.sb, "v128_load_far", "[-4294967295]", "out of bounds"); /* 2^64: not address 0 */
    expect(e.sb, "v128_store_lane", "[65535, 9]", NULL);
    expect(e.sb, "load", "[65535]", "9");
    expect_trap(e.sb, "v128_store_lane", "[65536, 9]", "out of bounds");
    expect(e.sb, "store", "[65535, 7]", NULL);
    expect(e.sb, "size", "[]", "1");
    expect(e.sb, "grow", "[4294967296]", "-1");
    expect(e.sb, "grow", "[3]", "1");
    expect(e.sb, "grow", "[1]", "-1"); /* the sandbox's limit: 4 pages */
    expect(e.sb, "size", "[]", "4");
    /* through a snapshot (MEMS marks the memory 64-bit) into a fresh sandbox */
    test_blob s = snapshot_v2(e.sb, true, false);
    ri_snap_image img;
    ri_sandbox_error err;
    assert_true(ri_snapshot_open(s.data, s.len, &img, &err));
    assert_int_equal(img.nmemories, 1);
    assert_true(img.memories[0].is64);
    assert_int_equal(img.memories[0].pages, 4);
    ri_snap_image_free(&img);
    env f;
    f.factory = ri_sandboxes_new();
    f.sb = ri_sandbox_create(f.factory, &c, &err);
    assert_non_null(f.sb);
    assert_true(ri_sandbox_restore(f.sb, s.data, s.len, &err));
    expect(f.sb, "load", "[65535]", "7");
    expect(f.sb, "size", "[]", "4");
    free(s.data);
    close_env(&f);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_memories_paused_and_restored_give_the_same_run),
        cmocka_unit_test(diff_and_delta_of_memory_1),
        cmocka_unit_test(v1_refuses_two_memories),
        cmocka_unit_test(determinism_check_puts_memory_1_back),
        cmocka_unit_test(memory_limit_covers_both_memories),
        cmocka_unit_test(memory64_bounds_are_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
