/*
 * Checkpoints, rollback and fork of a sandbox with a paused call (docs/SANDBOX.md
 * "Checkpoints of a paused call"): a fork of a paused sandbox is a second paused
 * sandbox, and each one, resumed in its own slices, ends with the uninterrupted run's
 * result, gas and final WSNP v2 bytes; a rollback brings a checkpoint's paused call
 * back (after it ran to the end, or was abandoned) and drops the sandbox's own one when
 * the checkpoint holds none; a transactional execution that pauses is not rolled back.
 * Fixture: tests/wat/suspend.wat.
 */
#include "fork_util.h" /* sandbox_test_util.h, blob, snap (uncompressed v2), assert_same_blob */
#include "suspend_sandbox_util.h" /* suspend_config, yield_every */

static env open_paused_env(uint64_t max_gas, uint32_t pause_on) {
    ri_sandbox_config c = suspend_config(RI_GAS_INSTRUCTIONS, max_gas);
    env e = open_env_cfg("suspend", &c);
    ri_sandbox_error err;
    if (!ri_sandbox_set_pause_on(e.sb, pause_on, &err)) {
        print_error("pause_on: %s\n", err.message);
        fail();
    }
    return e;
}

/* The uninterrupted run of action(args): its result and final snapshot. */
typedef struct expected {
    ri_sandbox_result r;
    blob snap;
} expected;

static expected run_whole(const char *action, const char *args) {
    env a = open_paused_env(100000000, 0);
    expected x;
    x.r = ri_sandbox_execute(a.sb, action, args);
    if (!x.r.ok) print_error("%s: %s\n", action, x.r.error.message);
    assert_true(x.r.ok);
    x.snap = snap(a.sb);
    close_env(&a);
    return x;
}

static void expected_free(expected *x) {
    ri_sandbox_result_free(&x->r);
    free(x->snap.data);
}

static bool paused(const ri_sandbox_result *r) { return !r->ok && r->error.code == RI_SANDBOX_SUSPENDED_CALL; }

static void assert_paused(ri_sandbox *sb, const char *action) {
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_SUSPENDED);
    assert_true(ri_sandbox_has_pending_call(sb));
    assert_string_equal(ri_sandbox_pending_action(sb), action);
}

/* Resumes sb in slices of `slice` gas from r (its last result) to the end, and checks
 * the end against the uninterrupted run. */
static void finish_like(ri_sandbox *sb, ri_sandbox_result r, uint64_t slice, const expected *want) {
    int slices = 0;
    while (paused(&r)) {
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(sb, slice);
        assert_true(++slices < 1000000);
    }
    if (!r.ok) print_error("resumed: %s\n", r.error.message);
    assert_true(r.ok);
    assert_string_equal(r.value_json, want->r.value_json);
    assert_int_equal(r.gas_used, want->r.gas_used);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_false(ri_sandbox_has_pending_call(sb));
    blob got = snap(sb);
    assert_same_blob(got, want->snap);
    free(got.data);
    ri_sandbox_result_free(&r);
}

static ri_sandbox *fork_of(env *e, const ri_checkpoint *cp) {
    ri_sandbox_error err;
    ri_sandbox *child = ri_sandbox_fork(e->factory, e->sb, cp, &err);
    if (!child) print_error("fork: %s\n", err.message);
    assert_non_null(child);
    return child;
}

static ri_checkpoint *checkpoint_of(ri_sandbox *sb) {
    ri_sandbox_error err;
    ri_checkpoint *cp = ri_sandbox_checkpoint(sb, NULL, &err);
    if (!cp) print_error("checkpoint: %s\n", err.message);
    assert_non_null(cp);
    return cp;
}

static void rollback_ok(ri_sandbox *sb, const ri_checkpoint *cp) {
    ri_sandbox_error err;
    bool ok = ri_sandbox_rollback(sb, cp, &err);
    if (!ok) print_error("rollback: %s\n", err.message);
    assert_true(ok);
}

/* ---- fork a paused computation ---------------------------------------------------------------- */

/* Pauses mix(12) after `first` gas, forks, then resumes the two alternately with their
 * own slice sizes: each ends as the uninterrupted run, whatever the other did. */
static void fork_at(const char *action, const char *args, const expected *want, uint64_t first, uint64_t slice_a,
                    uint64_t slice_b) {
    env e = open_paused_env(first, RI_SUSPEND_ON_GAS);
    ri_sandbox_result ra = ri_sandbox_execute(e.sb, action, args);
    assert_true(paused(&ra));
    assert_paused(e.sb, action);
    ri_sandbox *child = fork_of(&e, NULL);
    assert_paused(child, action);
    assert_paused(e.sb, action); /* the original keeps its call */
    assert_int_equal(ri_sandbox_pause_on(child), RI_SUSPEND_ON_GAS);

    /* Interleaved: the child's slices run between the original's. */
    ri_sandbox_result rb = ri_sandbox_resume(child, slice_b);
    for (int i = 0; i < 3 && paused(&ra); i++) {
        ri_sandbox_result_free(&ra);
        ra = ri_sandbox_resume(e.sb, slice_a);
    }
    finish_like(child, rb, slice_b, want);
    finish_like(e.sb, ra, slice_a, want);
    ri_sandbox_free(child);
    close_env(&e);
}

static void fork_of_a_paused_sandbox_at_several_points(void **state) {
    (void)state;
    expected want = run_whole("mix", "[12]");
    assert_true(want.r.gas_used > 40);
    const uint64_t firsts[] = {1, 2, 3, 7, 19, want.r.gas_used / 3, want.r.gas_used / 2, want.r.gas_used - 1};
    for (size_t i = 0; i < sizeof firsts / sizeof firsts[0]; i++) {
        fork_at("mix", "[12]", &want, firsts[i], 5, 13);
        fork_at("mix", "[12]", &want, firsts[i], 1000000, 1);
    }
    expected_free(&want);
}

/* Every pause point of a program that calls imports: some pauses are before an import
 * call (the running frame at a CALL point, the call made by the next slice). */
static void fork_at_every_pause_point_around_import_calls(void **state) {
    (void)state;
    yield_every = 0;
    expected want = run_whole("yields", "[4]");
    for (uint64_t first = 1; first < want.r.gas_used; first++) fork_at("yields", "[4]", &want, first, 3, 1);
    expected_free(&want);
}

/* A fork of a checkpoint taken at a pause, made after the original ran on to the end. */
static void fork_of_a_paused_checkpoint_after_the_original_finished(void **state) {
    (void)state;
    expected want = run_whole("mix", "[12]");
    env e = open_paused_env(want.r.gas_used / 2, RI_SUSPEND_ON_GAS);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "mix", "[12]");
    assert_true(paused(&r));
    ri_checkpoint *cp = checkpoint_of(e.sb);
    finish_like(e.sb, r, 3, &want);
    for (int k = 0; k < 2; k++) { /* one checkpoint, two forks */
        ri_sandbox *child = fork_of(&e, cp);
        assert_paused(child, "mix");
        ri_sandbox_result rc = ri_sandbox_resume(child, k ? 1 : 11);
        finish_like(child, rc, k ? 1 : 11, &want);
        ri_sandbox_free(child);
    }
    ri_checkpoint_free(cp);
    close_env(&e);
    expected_free(&want);
}

/* Paused by the host (yield) rather than by gas: the fork carries the yielded call. */
static void fork_of_a_call_paused_by_a_host_yield(void **state) {
    (void)state;
    yield_every = 0;
    expected want = run_whole("yields", "[9]");
    yield_every = 4;
    env e = open_paused_env(100000000, RI_SUSPEND_ON_YIELD);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "yields", "[9]");
    assert_true(paused(&r));
    ri_sandbox *child = fork_of(&e, NULL);
    assert_paused(child, "yields");
    ri_sandbox_result rc = ri_sandbox_resume(child, 0);
    finish_like(child, rc, 0, &want);
    finish_like(e.sb, r, 0, &want);
    ri_sandbox_free(child);
    close_env(&e);
    expected_free(&want);
    yield_every = 0;
}

/* ---- rollback ------------------------------------------------------------------------------------ */

static void rollback_to_a_paused_checkpoint_after_the_call_finished(void **state) {
    (void)state;
    expected want = run_whole("mix", "[12]");
    env e = open_paused_env(want.r.gas_used / 3, RI_SUSPEND_ON_GAS);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "mix", "[12]");
    assert_true(paused(&r));
    ri_checkpoint *cp = checkpoint_of(e.sb);
    blob at_pause = snap(e.sb);
    finish_like(e.sb, r, 7, &want);
    for (int k = 0; k < 2; k++) { /* the checkpoint serves again */
        rollback_ok(e.sb, cp);
        rollback_ok(e.sb, cp); /* twice in a row: the same state */
        assert_paused(e.sb, "mix");
        blob back = snap(e.sb); /* the frames (FRMS) and everything else as at the pause */
        assert_same_blob(back, at_pause);
        free(back.data);
        r = ri_sandbox_resume(e.sb, k ? 2 : 1000000);
        finish_like(e.sb, r, k ? 2 : 1000000, &want);
    }
    free(at_pause.data);
    ri_checkpoint_free(cp);
    close_env(&e);
    expected_free(&want);
}

static void rollback_brings_an_abandoned_call_back(void **state) {
    (void)state;
    expected want = run_whole("mix", "[12]");
    env e = open_paused_env(want.r.gas_used / 2, RI_SUSPEND_ON_GAS);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "mix", "[12]");
    assert_true(paused(&r));
    ri_sandbox_result_free(&r);
    ri_checkpoint *cp = checkpoint_of(e.sb);
    ri_sandbox_error err;
    assert_true(ri_sandbox_abandon(e.sb, &err));
    assert_false(ri_sandbox_has_pending_call(e.sb));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    r = ri_sandbox_resume(e.sb, 10); /* nothing to resume now */
    assert_false(r.ok);
    ri_sandbox_result_free(&r);
    rollback_ok(e.sb, cp);
    assert_paused(e.sb, "mix");
    r = ri_sandbox_resume(e.sb, 4);
    finish_like(e.sb, r, 4, &want);
    ri_checkpoint_free(cp);
    close_env(&e);
    expected_free(&want);
}

/* A checkpoint without a call, rolled back onto a paused sandbox: the call is dropped (as
 * abandon drops it) and the state is the checkpoint's, byte for byte. */
static void rollback_without_a_call_drops_the_paused_one(void **state) {
    (void)state;
    expected want = run_whole("mix", "[12]");
    env e = open_paused_env(want.r.gas_used / 2, RI_SUSPEND_ON_GAS);
    ri_checkpoint *before = checkpoint_of(e.sb);
    blob loaded = snap(e.sb);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "mix", "[12]");
    assert_true(paused(&r));
    ri_sandbox_result_free(&r);
    ri_sandbox_error err;
    assert_true(ri_sandbox_rollback(e.sb, before, &err));
    assert_false(ri_sandbox_has_pending_call(e.sb));
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    blob back = snap(e.sb);
    assert_same_blob(back, loaded);
    free(back.data);
    free(loaded.data);
    /* The sandbox runs afresh (and pauses again, as it is set to). */
    r = ri_sandbox_execute(e.sb, "mix", "[12]");
    assert_true(paused(&r));
    finish_like(e.sb, r, 9, &want);
    /* A fork of that checkpoint has no call either. */
    ri_sandbox *child = fork_of(&e, before);
    assert_false(ri_sandbox_has_pending_call(child));
    assert_int_equal(ri_sandbox_status_of(child), RI_SANDBOX_LOADED);
    ri_sandbox_free(child);
    ri_checkpoint_free(before);
    close_env(&e);
    expected_free(&want);
}

/* ---- transactional execution --------------------------------------------------------------------- */

static void transactional_execution_that_pauses_is_not_rolled_back(void **state) {
    (void)state;
    expected want = run_whole("mix", "[12]");
    env e = open_paused_env(want.r.gas_used / 2, RI_SUSPEND_ON_GAS);
    blob loaded = snap(e.sb);
    ri_execute_options o = {true};
    ri_sandbox_result r = ri_sandbox_execute_with(e.sb, "mix", "[12]", &o);
    assert_true(paused(&r));
    assert_paused(e.sb, "mix");
    blob now = snap(e.sb); /* the pause's state, not the state before the call */
    assert_true(now.len != loaded.len || memcmp(now.data, loaded.data, now.len) != 0);
    free(now.data);
    free(loaded.data);
    finish_like(e.sb, r, 6, &want);
    close_env(&e);
    expected_free(&want);
}

/* The pause codes are enum members with the values they had as macros (ABI), named. */
static void pause_codes_are_named_enum_members(void **state) {
    (void)state;
    ri_errcode engine = RI_ERR_SUSPENDED;
    ri_sandbox_errcode sandbox = RI_SANDBOX_SUSPENDED_CALL;
    assert_int_equal(engine, 9);
    assert_int_equal(sandbox, 10);
    assert_string_equal(ri_errcode_name(engine), "suspended");
    assert_string_equal(ri_sandbox_errcode_name(sandbox), "SUSPENDED");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pause_codes_are_named_enum_members),
        cmocka_unit_test(fork_of_a_paused_sandbox_at_several_points),
        cmocka_unit_test(fork_at_every_pause_point_around_import_calls),
        cmocka_unit_test(fork_of_a_paused_checkpoint_after_the_original_finished),
        cmocka_unit_test(fork_of_a_call_paused_by_a_host_yield),
        cmocka_unit_test(rollback_to_a_paused_checkpoint_after_the_call_finished),
        cmocka_unit_test(rollback_brings_an_abandoned_call_back),
        cmocka_unit_test(rollback_without_a_call_drops_the_paused_one),
        cmocka_unit_test(transactional_execution_that_pauses_is_not_rolled_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
