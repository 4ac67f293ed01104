/*
 * Determinism (seed 001 §6 auto-injected functions, §11; reference "Determinism"):
 * __get_time returns the event timestamp truncated to i32, __get_random the Mulberry32
 * sequence bit for bit (the reference vectors), the PRNG continues across executions,
 * and the determinism validator runs an action twice from the same full state, compares,
 * and leaves the sandbox as it was.
 * Fixtures: tests/wat/sb_random.wat, sb_time.wat, sb_add.wat, sb_memcounter.wat,
 * sb_counter.wat, sb_entropy.wat.
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

static ri_sandbox_config seeded_config(uint32_t seed, int64_t timestamp) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = timestamp;
    c.deterministic_seed = seed;
    c.max_execution_ms = 10000;
    return c;
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

/* The bits of a u32 as an i32, without implementation-defined conversion. */
static int32_t as_i32(uint32_t u) {
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* ---- Mulberry32 ------------------------------------------------------------------------ */

static void mulberry32_seed0_vectors_and_states(void **state) {
    (void)state;
    uint32_t s = 0;
    assert_int_equal(ri_mulberry32_next(&s), 1144304738u);
    assert_int_equal(as_i32(s), 1831565813);
    assert_int_equal(ri_mulberry32_next(&s), 1416247u);
    assert_int_equal(as_i32(s), -631835670);
    assert_int_equal(ri_mulberry32_next(&s), 958946056u);
}

static void mulberry32_seed42_vectors(void **state) {
    (void)state;
    uint32_t s = 42;
    assert_int_equal(ri_mulberry32_next(&s), 2581720956u);
    assert_int_equal(ri_mulberry32_next(&s), 1925393290u);
    assert_int_equal(ri_mulberry32_next(&s), 3661312704u);
}

static void mulberry32_seed1_and_12345_vectors(void **state) {
    (void)state;
    uint32_t s = 1;
    assert_int_equal(ri_mulberry32_next(&s), 2693262067u);
    s = 12345;
    assert_int_equal(ri_mulberry32_next(&s), 4207900869u);
}

static void mulberry32_state_steps_by_golden_constant(void **state) {
    (void)state;
    uint32_t s = 0xFFFFFFFFu;
    ri_mulberry32_next(&s);
    /* 0xFFFFFFFF + 0x6D2B79F5 wraps modulo 2^32. */
    assert_int_equal(s, 0x6D2B79F4u);
}

/* ---- __get_random ------------------------------------------------------------------------ */

static void get_random_seed0_sequence(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_random", &c);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 1144304738);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 1416247);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 958946056);
    close_env(&e);
}

static void get_random_seed42_is_signed_i32(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(42, TS);
    env e = open_env_cfg("sb_random", &c);
    ri_sandbox_result r = ri_sandbox_execute(e.sb, "getRandom", NULL);
    assert_true(r.ok);
    /* 2581720956 arrives as an i32. */
    assert_int_equal(r.results[0].of.i32, -1713246340);
    assert_string_equal(r.value_json, "-1713246340");
    ri_sandbox_result_free(&r);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), 1925393290);
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), -633654592);
    close_env(&e);
}

static void five_seeds_give_five_values(void **state) {
    (void)state;
    static const uint32_t seeds[5] = {0, 1, 42, 12345, 999999};
    static const int32_t want[5] = {1144304738, -1601705229, -1713246340, -87066427, 157392695};
    int32_t got[5];
    for (int i = 0; i < 5; i++) {
        ri_sandbox_config c = seeded_config(seeds[i], TS);
        env e = open_env_cfg("sb_random", &c);
        got[i] = exec_i32(e.sb, "getRandom", NULL);
        close_env(&e);
        assert_int_equal(got[i], want[i]);
    }
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++) assert_int_not_equal(got[i], got[j]);
}

static void same_seed_same_first_value_ten_times(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(42, TS);
    for (int i = 0; i < 10; i++) {
        env e = open_env_cfg("sb_random", &c);
        assert_int_equal(exec_i32(e.sb, "getRandom", NULL), -1713246340);
        close_env(&e);
    }
}

static void same_seed_same_sequence_in_two_instances(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(12345, TS);
    env a = open_env_cfg("sb_random", &c);
    env b = open_env_cfg("sb_random", &c);
    for (int i = 0; i < 10; i++) assert_int_equal(exec_i32(a.sb, "getRandom", NULL), exec_i32(b.sb, "getRandom", NULL));
    close_env(&a);
    close_env(&b);
}

static void thousand_draws_match_reference(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(999999, TS);
    env e = open_env_cfg("sb_random", &c);
    uint32_t s = 999999, want = 0;
    for (int i = 0; i < 1000; i++) want = ri_mulberry32_next(&s);
    uint64_t gas = 0;
    assert_int_equal(exec_i32_gas(e.sb, "randN", "1000", &gas), as_i32(want));
    assert_int_equal(gas, 1000);
    /* And it continues from there. */
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), as_i32(ri_mulberry32_next(&s)));
    close_env(&e);
}

static void sandboxes_with_same_seed_have_separate_prngs(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env a = open_env_cfg("sb_random", &c);
    env b = open_env_cfg("sb_random", &c);
    exec_i32(a.sb, "getRandom", NULL);
    exec_i32(a.sb, "getRandom", NULL);
    assert_int_equal(exec_i32(b.sb, "getRandom", NULL), 1144304738);
    close_env(&a);
    close_env(&b);
}

/* ---- __get_time ---------------------------------------------------------------------------- */

static void get_time_truncates_timestamp_to_i32(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, 1700000000000LL);
    env e = open_env_cfg("sb_time", &c);
    assert_int_equal(exec_i32(e.sb, "getTime", NULL), -807049216);
    close_env(&e);
}

static void different_timestamps_give_different_times(void **state) {
    (void)state;
    static const int64_t ts[3] = {1000000000000LL, 1500000000000LL, 1700000000000LL};
    static const int32_t want[3] = {-727379968, 1056413696, -807049216};
    for (int i = 0; i < 3; i++) {
        ri_sandbox_config c = seeded_config(0, ts[i]);
        env e = open_env_cfg("sb_time", &c);
        assert_int_equal(exec_i32(e.sb, "getTime", NULL), want[i]);
        close_env(&e);
    }
}

static void same_timestamp_same_time_every_call(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    for (int i = 0; i < 10; i++) {
        env e = open_env_cfg("sb_time", &c);
        assert_int_equal(exec_i32(e.sb, "getTime", NULL), -807049216);
        assert_int_equal(exec_i32(e.sb, "getTime", NULL), -807049216);
        assert_int_equal(exec_i32(e.sb, "timeTwiceEqual", NULL), 1);
        close_env(&e);
    }
}

static void small_zero_and_negative_timestamps(void **state) {
    (void)state;
    static const int64_t ts[3] = {42, 0, -1};
    static const int32_t want[3] = {42, 0, -1};
    for (int i = 0; i < 3; i++) {
        ri_sandbox_config c = seeded_config(0, ts[i]);
        env e = open_env_cfg("sb_time", &c);
        assert_int_equal(exec_i32(e.sb, "getTime", NULL), want[i]);
        close_env(&e);
    }
}

static void get_time_costs_one_gas(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_time", &c);
    uint64_t gas = 0;
    exec_i32_gas(e.sb, "getTime", NULL, &gas);
    assert_int_equal(gas, 1);
    close_env(&e);
}

/* ---- the determinism validator ---------------------------------------------------------------- */

static bool check(ri_sandbox *sb, const char *action, const char *payload, bool *deterministic) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    *deterministic = false;
    bool ran = ri_sandbox_check_determinism(sb, action, payload, deterministic, &err);
    if (!ran) print_error("check_determinism(%s): %s\n", action, err.message);
    return ran;
}

static void validator_pure_function_is_deterministic(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_add", &c);
    bool det = false;
    assert_true(check(e.sb, "add", "[3,4]", &det));
    assert_true(det);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void validator_time_function_is_deterministic(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, 42);
    env e = open_env_cfg("sb_time", &c);
    bool det = false;
    assert_true(check(e.sb, "getTime", NULL, &det));
    assert_true(det);
    close_env(&e);
}

static void validator_random_function_is_deterministic(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(12345, TS);
    env e = open_env_cfg("sb_random", &c);
    bool det = false;
    assert_true(check(e.sb, "getRandom", NULL, &det));
    assert_true(det);
    close_env(&e);
}

static void validator_leaves_prng_where_it_was(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(12345, TS);
    env e = open_env_cfg("sb_random", &c);
    bool det = false;
    assert_true(check(e.sb, "randN", "5", &det));
    assert_true(det);
    /* Still the seed's first value. */
    assert_int_equal(exec_i32(e.sb, "getRandom", NULL), -87066427);
    close_env(&e);
}

static void validator_leaves_memory_where_it_was(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_memcounter", &c);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 1);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 2);
    bool det = false;
    assert_true(check(e.sb, "increment", NULL, &det));
    assert_true(det);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 2);
    close_env(&e);
}

static void validator_restores_globals_too(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_counter", &c);
    assert_int_equal(exec_i32(e.sb, "increment", NULL), 1);
    bool det = false;
    /* Both runs start from counter 1 (the full state), so both return 2. */
    assert_true(check(e.sb, "increment", NULL, &det));
    assert_true(det);
    assert_int_equal(exec_i32(e.sb, "get", NULL), 1);
    close_env(&e);
}

static void validator_leaves_gas_metrics_where_they_were(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_random", &c);
    exec_i32(e.sb, "randN", "3");
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 3);
    bool det = false;
    assert_true(check(e.sb, "randN", "9", &det));
    assert_true(det);
    assert_int_equal(ri_sandbox_get_metrics(e.sb).gas_used, 3);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static int entropy_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    int32_t *counter = user;
    *counter += 1;
    results[0] = ri_val_i32(*counter);
    return 0;
}

static void validator_detects_nondeterministic_host(void **state) {
    (void)state;
    static const ri_valtype I32[] = {RI_I32};
    int32_t counter = 0;
    ri_host_function fns[1] = {{"entropy", 0, NULL, 1, I32, entropy_fn, &counter}};
    ri_sandbox_config c = seeded_config(0, TS);
    c.host_functions = fns;
    c.nhost_functions = 1;
    env e = open_env_cfg("sb_entropy", &c);
    bool det = true;
    assert_true(check(e.sb, "draw", NULL, &det));
    assert_false(det);
    assert_int_equal(ri_sandbox_status_of(e.sb), RI_SANDBOX_LOADED);
    close_env(&e);
}

static void validator_missing_export_fails_identically(void **state) {
    (void)state;
    ri_sandbox_config c = seeded_config(0, TS);
    env e = open_env_cfg("sb_add", &c);
    bool det = false;
    assert_true(check(e.sb, "nonexistent", NULL, &det));
    assert_true(det);
    close_env(&e);
}

static void validator_refuses_created_and_destroyed(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = seeded_config(0, TS);
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    bool det = true;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_check_determinism(sb, "add", NULL, &det, &err));
    assert_true(strlen(err.message) > 0);
    ri_sandbox_destroy(sb);
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_check_determinism(sb, "add", NULL, &det, &err));
    assert_true(strlen(err.message) > 0);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mulberry32_seed0_vectors_and_states),
        cmocka_unit_test(mulberry32_seed42_vectors),
        cmocka_unit_test(mulberry32_seed1_and_12345_vectors),
        cmocka_unit_test(mulberry32_state_steps_by_golden_constant),
        cmocka_unit_test(get_random_seed0_sequence),
        cmocka_unit_test(get_random_seed42_is_signed_i32),
        cmocka_unit_test(five_seeds_give_five_values),
        cmocka_unit_test(same_seed_same_first_value_ten_times),
        cmocka_unit_test(same_seed_same_sequence_in_two_instances),
        cmocka_unit_test(thousand_draws_match_reference),
        cmocka_unit_test(sandboxes_with_same_seed_have_separate_prngs),
        cmocka_unit_test(get_time_truncates_timestamp_to_i32),
        cmocka_unit_test(different_timestamps_give_different_times),
        cmocka_unit_test(same_timestamp_same_time_every_call),
        cmocka_unit_test(small_zero_and_negative_timestamps),
        cmocka_unit_test(get_time_costs_one_gas),
        cmocka_unit_test(validator_pure_function_is_deterministic),
        cmocka_unit_test(validator_time_function_is_deterministic),
        cmocka_unit_test(validator_random_function_is_deterministic),
        cmocka_unit_test(validator_leaves_prng_where_it_was),
        cmocka_unit_test(validator_leaves_memory_where_it_was),
        cmocka_unit_test(validator_restores_globals_too),
        cmocka_unit_test(validator_leaves_gas_metrics_where_they_were),
        cmocka_unit_test(validator_detects_nondeterministic_host),
        cmocka_unit_test(validator_missing_export_fails_identically),
        cmocka_unit_test(validator_refuses_created_and_destroyed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
