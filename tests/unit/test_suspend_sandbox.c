/*
 * Pausable executions in the sandbox (ri/sandbox.h "pausable executions"): a run cut
 * into slices, each slice snapshotted (WSNP v2, section FRMS) and restored into a fresh
 * sandbox of another factory, ends with the same result, the same gas and the same
 * final snapshot bytes as the uninterrupted run; time slices (interrupts) and host
 * yields; the rules (v1 refused, execute refused while a call is pending, abandon);
 * damaged FRMS sections (every byte flip, every truncation) refused with the target
 * unchanged. Fixture: tests/wat/suspend.wat.
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
#include "suspend_sandbox_util.h" /* read_fixture, snapshot_v2, env, close_env, suspend_config, yield_every */

static uint8_t *wasm;
static size_t wasm_len;

static void load_fixture(void) {
    if (!wasm) wasm = read_fixture("suspend", &wasm_len);
}

static env open_env(ri_gas_schedule schedule, uint64_t max_gas, uint32_t pause_on, bool load) {
    load_fixture();
    env e;
    e.factory = ri_sandboxes_new();
    assert_non_null(e.factory);
    ri_sandbox_config c = suspend_config(schedule, max_gas);
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(e.sb);
    if (load) assert_true(ri_sandbox_load(e.sb, wasm, wasm_len, &err));
    if (!ri_sandbox_set_pause_on(e.sb, pause_on, &err)) {
        print_error("pause_on: %s\n", err.message);
        fail();
    }
    return e;
}

/* ---- slices, each through a snapshot into a fresh sandbox -------------------------------------- */

static void sliced_through_snapshots(uint64_t slice, bool uncompressed) {
    /* The uninterrupted run and its final snapshot. */
    env a = open_env(RI_GAS_INSTRUCTIONS, 1000000, 0, true);
    ri_sandbox_result want = ri_sandbox_execute(a.sb, "mix", "[12]");
    assert_true(want.ok);
    test_blob want_snap = snapshot_v2(a.sb, false, uncompressed);

    env b = open_env(RI_GAS_INSTRUCTIONS, slice, RI_SUSPEND_ON_GAS, true);
    ri_sandbox_result r = ri_sandbox_execute(b.sb, "mix", "[12]");
    int slices = 1;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        assert_int_equal(ri_sandbox_status_of(b.sb), RI_SANDBOX_SUSPENDED);
        assert_true(ri_sandbox_has_pending_call(b.sb));
        assert_string_equal(ri_sandbox_pending_action(b.sb), "mix");
        /* Into a fresh sandbox of another factory, created but not loaded: the image
         * carries its module. */
        test_blob s = snapshot_v2(b.sb, true, uncompressed);
        env c = open_env(RI_GAS_INSTRUCTIONS, slice, 0, false);
        ri_sandbox_error err;
        if (!ri_sandbox_restore(c.sb, s.data, s.len, &err)) {
            print_error("restore: %s\n", err.message);
            fail();
        }
        assert_int_equal(ri_sandbox_status_of(c.sb), RI_SANDBOX_SUSPENDED);
        /* The restored sandbox snapshots to the same bytes. */
        test_blob s2 = snapshot_v2(c.sb, true, uncompressed);
        assert_true(same_blob(s, s2));
        free(s.data);
        free(s2.data);
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
    assert_int_equal(ri_sandbox_status_of(b.sb), RI_SANDBOX_LOADED);
    test_blob got_snap = snapshot_v2(b.sb, false, uncompressed);
    assert_true(same_blob(got_snap, want_snap)); /* byte for byte */
    if (slice < want.gas_used) assert_true(slices > 1);
    free(got_snap.data);
    free(want_snap.data);
    ri_sandbox_result_free(&r);
    ri_sandbox_result_free(&want);
    close_env(&b);
    close_env(&a);
}

static void slices_through_snapshots_give_the_same_run(void **state) {
    (void)state;
    static const uint64_t slices[] = {1, 2, 5, 17, 64, 250, 1000000};
    for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) sliced_through_snapshots(slices[i], true);
    sliced_through_snapshots(23, false); /* zstd pages too */
}

/* Import calls cost 1 (instructions schedule): a slice that ends at an import pauses before
 * the call (the running frame at a CALL point) and the next slice makes it. Every slice
 * size, every slice through a snapshot into a fresh sandbox. */
static void slices_pause_before_imports(void **state) {
    (void)state;
    yield_every = 0;
    env a = open_env(RI_GAS_INSTRUCTIONS, 1000000, 0, true);
    ri_sandbox_result want = ri_sandbox_execute(a.sb, "yields", "[6]");
    assert_true(want.ok);
    test_blob want_snap = snapshot_v2(a.sb, false, true);
    int before_call = 0;
    for (uint64_t slice = 1; slice <= want.gas_used + 1; slice++) {
        env b = open_env(RI_GAS_INSTRUCTIONS, slice, RI_SUSPEND_ON_GAS, true);
        ri_sandbox_result r = ri_sandbox_execute(b.sb, "yields", "[6]");
        while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
            test_blob s = snapshot_v2(b.sb, true, true);
            ri_snap_call call = paused_call_in(s);
            if (call.suspension.frames[call.suspension.nframes - 1].point == RI_SUSP_CALL) before_call++;
            ri_snap_call_free(&call);
            ri_sandbox_error err;
            env c = open_env(RI_GAS_INSTRUCTIONS, slice, 0, false);
            if (!ri_sandbox_restore(c.sb, s.data, s.len, &err)) {
                print_error("restore: %s\n", err.message);
                fail();
            }
            free(s.data);
            close_env(&b);
            b = c;
            ri_sandbox_result_free(&r);
            r = ri_sandbox_resume(b.sb, slice);
        }
        if (!r.ok) print_error("slice %llu: %s\n", (unsigned long long)slice, r.error.message);
        assert_true(r.ok);
        assert_string_equal(r.value_json, want.value_json);
        assert_int_equal(r.gas_used, want.gas_used);
        test_blob got = snapshot_v2(b.sb, false, true);
        assert_true(same_blob(got, want_snap));
        free(got.data);
        ri_sandbox_result_free(&r);
        close_env(&b);
    }
    assert_true(before_call > 0);
    free(want_snap.data);
    ri_sandbox_result_free(&want);
    close_env(&a);
}

/* ---- time slices and yields ---------------------------------------------------------------------- */

static void time_slices_pause_instead_of_timing_out(void **state) {
    (void)state;
    env e = open_env(RI_GAS_INSTRUCTIONS, UINT64_C(1) << 40, RI_SUSPEND_ON_INTERRUPT, true);
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, UINT64_C(1) << 40);
    c.max_execution_ms = 2;
    ri_sandbox_free(e.sb);
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(e.sb);
    assert_true(ri_sandbox_load(e.sb, wasm, wasm_len, &err));
    assert_true(ri_sandbox_set_pause_on(e.sb, RI_SUSPEND_ON_INTERRUPT, &err));
    const int32_t rounds = 20000000;
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "spin", "[20000000]");
    int pauses = 0;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        pauses++;
        assert_non_null(strstr(r.error.message, "(interrupt)"));
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(e.sb, 0);
    }
    assert_true(r.ok);
    assert_true(pauses >= 1);
    uint32_t x = 1;
    for (int32_t i = 0; i < rounds; i++) x = x * 1103515245u + 12345u;
    char want[32];
    snprintf(want, sizeof want, "%d", (int)(int32_t)x);
    assert_string_equal(r.value_json, want);
    ri_sandbox_result_free(&r);
    close_env(&e);
}

static void host_yield_pauses_the_execution(void **state) {
    (void)state;
    for (int schedule = 0; schedule < 2; schedule++) {
        yield_every = 0;
        env a = open_env((ri_gas_schedule)schedule, 1000000, 0, true);
        ri_sandbox_result want = ri_sandbox_execute(a.sb, "yields", "[10]");
        assert_true(want.ok);
        yield_every = 4; /* calls 0, 4, 8 */
        env b = open_env((ri_gas_schedule)schedule, 1000000, RI_SUSPEND_ON_YIELD, true);
        ri_sandbox_result r = ri_sandbox_execute(b.sb, "yields", "[10]");
        int pauses = 0;
        while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
            pauses++;
            assert_non_null(strstr(r.error.message, "(yield)"));
            test_blob s = snapshot_v2(b.sb, false, true);
            env c = open_env((ri_gas_schedule)schedule, 1000000, 0, true);
            ri_sandbox_error err;
            assert_true(ri_sandbox_restore(c.sb, s.data, s.len, &err));
            free(s.data);
            close_env(&b);
            b = c;
            ri_sandbox_result_free(&r);
            r = ri_sandbox_resume(b.sb, 0);
        }
        assert_true(r.ok);
        assert_int_equal(pauses, 3);
        assert_string_equal(r.value_json, want.value_json);
        assert_int_equal(r.gas_used, want.gas_used);
        ri_sandbox_result_free(&r);
        ri_sandbox_result_free(&want);
        close_env(&b);
        close_env(&a);
    }
    yield_every = 0;
}

/* ---- rules ------------------------------------------------------------------------------------------ */

static ri_sandbox_result pause_mix(env *e) {
    ri_sandbox_result r = ri_sandbox_execute(e->sb, "mix", "[12]");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    assert_string_equal(ri_sandbox_errcode_name(r.error.code), "SUSPENDED");
    return r;
}

static void rules_while_a_call_is_pending(void **state) {
    (void)state;
    ri_sandbox_error err;
    /* Pausing on gas needs the instructions schedule. */
    env h = open_env(RI_GAS_HOST_CALLS, 100, 0, true);
    assert_false(ri_sandbox_set_pause_on(h.sb, RI_SUSPEND_ON_GAS, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    close_env(&h);

    env e = open_env(RI_GAS_INSTRUCTIONS, 200, RI_SUSPEND_ON_GAS, true);
    ri_sandbox_result r = pause_mix(&e);
    ri_sandbox_result_free(&r);
    /* execute is refused, clearly */
    r = ri_sandbox_execute(e.sb, "deep", "[3]");
    assert_false(r.ok);
    assert_non_null(strstr(r.error.message, "a paused call to 'mix' is pending"));
    ri_sandbox_result_free(&r);
    /* v1 cannot hold the call */
    uint8_t *out = NULL;
    size_t len = 0;
    assert_false(ri_sandbox_snapshot(e.sb, &out, &len, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_non_null(strstr(err.message, "WSNP v1"));
    assert_null(out);
    /* ri_sandbox_suspend of a suspended sandbox stays true; abandon drops the call */
    assert_true(ri_sandbox_suspend(e.sb, &err));
    assert_true(ri_sandbox_abandon(e.sb, &err));
    assert_false(ri_sandbox_has_pending_call(e.sb));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    r = ri_sandbox_resume(e.sb, 100);
    assert_false(r.ok);
    assert_non_null(strstr(r.error.message, "no paused call"));
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(e.sb, "deep", "[3]");
    assert_true(r.ok);
    assert_string_equal(r.value_json, "10");
    ri_sandbox_result_free(&r);
    /* The idle suspend -> restore of seed 001 still works. */
    test_blob s = snapshot_v2(e.sb, false, true);
    assert_true(ri_sandbox_suspend(e.sb, &err));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_SUSPENDED);
    assert_false(ri_sandbox_has_pending_call(e.sb));
    assert_true(ri_sandbox_restore(e.sb, s.data, s.len, &err));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    free(s.data);
    /* A restore of an image without a call drops a pending one. */
    r = pause_mix(&e);
    ri_sandbox_result_free(&r);
    test_blob loaded = {NULL, 0};
    {
        env o = open_env(RI_GAS_INSTRUCTIONS, 200, 0, true);
        loaded = snapshot_v2(o.sb, false, true);
        close_env(&o);
    }
    assert_true(ri_sandbox_restore(e.sb, loaded.data, loaded.len, &err));
    assert_false(ri_sandbox_has_pending_call(e.sb));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    free(loaded.data);
    /* The JSON convention does not pause: a non-numeric payload goes the JSON way. */
    close_env(&e);
}

/* ---- damaged FRMS ------------------------------------------------------------------------------------ */

static uint32_t get_u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The content of section FRMS: [*start, *start + *len). */
static void find_frms(test_blob b, size_t *start, size_t *len) {
    size_t at = 8;
    while (at + 16 <= b.len) {
        uint64_t n = get_u32(b.data + at + 8) | (uint64_t)get_u32(b.data + at + 12) << 32;
        if (memcmp(b.data + at, "FRMS", 4) == 0) {
            *start = at + 16;
            *len = (size_t)n;
            return;
        }
        at += 16 + (size_t)n;
    }
    fail();
}

static void fix_crc(test_blob b) {
    uint32_t crc = ri_snap_crc32c(b.data, b.len - 20);
    uint8_t *p = b.data + b.len - 4;
    p[0] = (uint8_t)crc;
    p[1] = (uint8_t)(crc >> 8);
    p[2] = (uint8_t)(crc >> 16);
    p[3] = (uint8_t)(crc >> 24);
}

static void damaged_frames_are_refused(void **state) {
    (void)state;
    env e = open_env(RI_GAS_INSTRUCTIONS, 300, RI_SUSPEND_ON_GAS, true);
    ri_sandbox_result r = pause_mix(&e);
    ri_sandbox_result_free(&r);
    test_blob good = snapshot_v2(e.sb, true, false);
    size_t start = 0, len = 0;
    find_frms(good, &start, &len);
    assert_true(len > 40);

    /* The target: a loaded sandbox that ran something; it must stay as it is. */
    env t = open_env(RI_GAS_INSTRUCTIONS, 1000000, 0, true);
    r = ri_sandbox_execute(t.sb, "mix", "[5]");
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    test_blob before = snapshot_v2(t.sb, false, true);
    ri_sandbox_error err;
    test_blob x = {malloc(good.len), good.len};
    assert_non_null(x.data);

    /* Every truncation. */
    for (size_t n = 0; n < good.len; n++) {
        assert_false(ri_sandbox_restore(t.sb, good.data, n, &err));
    }
    /* Every byte of FRMS flipped: the checksum refuses. */
    for (size_t i = start; i < start + len; i++) {
        memcpy(x.data, good.data, good.len);
        x.data[i] ^= 0xFF;
        assert_false(ri_sandbox_restore(t.sb, x.data, x.len, &err));
    }
    /* The same with the checksum made right again: the reader and the engine's rebuild
     * see every damaged field; a flip inside a value's bits may still be a valid call
     * (another value), which must then restore and run without harm. */
    size_t refused = 0, accepted = 0;
    for (size_t i = start; i < start + len; i++) {
        memcpy(x.data, good.data, good.len);
        x.data[i] ^= 0x5A;
        fix_crc(x);
        env c = open_env(RI_GAS_INSTRUCTIONS, 1000000, 0, true);
        r = ri_sandbox_execute(c.sb, "mix", "[5]");
        ri_sandbox_result_free(&r);
        if (ri_sandbox_restore(c.sb, x.data, x.len, &err)) {
            accepted++;
            r = ri_sandbox_resume(c.sb, 1000000);
            ri_sandbox_result_free(&r);
        } else {
            refused++;
            assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
            test_blob after = snapshot_v2(c.sb, false, true);
            assert_true(same_blob(after, before)); /* unchanged */
            free(after.data);
        }
        close_env(&c);
    }
    print_message("FRMS of %zu bytes: %zu damaged images refused, %zu accepted (a value's bits changed)\n", len,
                  refused, accepted);
    assert_true(refused > len / 2);
    /* The target is unchanged by all of it. */
    test_blob after = snapshot_v2(t.sb, false, true);
    assert_true(same_blob(after, before));
    assert_int_equal(ri_sandbox_status_of(t.sb), RI_SANDBOX_LOADED);
    /* And the good image still restores. */
    assert_true(ri_sandbox_restore(t.sb, good.data, good.len, &err));
    r = ri_sandbox_resume(t.sb, 1000000);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    free(after.data);
    free(before.data);
    free(x.data);
    free(good.data);
    close_env(&t);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slices_through_snapshots_give_the_same_run),
        cmocka_unit_test(slices_pause_before_imports),
        cmocka_unit_test(time_slices_pause_instead_of_timing_out),
        cmocka_unit_test(host_yield_pauses_the_execution),
        cmocka_unit_test(rules_while_a_call_is_pending),
        cmocka_unit_test(damaged_frames_are_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(wasm);
    return rc;
}
