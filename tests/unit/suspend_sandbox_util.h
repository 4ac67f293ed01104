/* Shared by test_suspend_sandbox.c and test_fork_paused.c: the host functions that
 * tests/wat/suspend.wat imports and a sandbox config that provides them. */
#ifndef RI_TEST_SUSPEND_SANDBOX_UTIL_H
#define RI_TEST_SUSPEND_SANDBOX_UTIL_H

#include "sandbox_test_util.h"

/* env.yield yields on calls with i % yield_every == 0 (0: never). */
static int yield_every;

/* env.yield: 2i + 1, yielding when asked (user points at an int: yield every n-th, 0 never) */
static inline int host_yield(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    const int *every = user;
    results[0] = ri_val_i32(args[0].of.i32 * 2 + 1);
    if (*every && args[0].of.i32 % *every == 0) return ri_host_yield(call);
    return 0;
}

/* env.reenter: its argument back. */
static inline int host_reenter(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = args[0];
    return 0;
}

/* The tests' config: fixed timestamp and seed, the schedule and gas given, both imports. */
static inline ri_sandbox_config suspend_config(ri_gas_schedule schedule, uint64_t max_gas) {
    static const ri_valtype i32[1] = {RI_I32};
    static ri_host_function hosts[2];
    hosts[0] = (ri_host_function){"yield", 1, i32, 1, i32, host_yield, &yield_every};
    hosts[1] = (ri_host_function){"reenter", 1, i32, 1, i32, host_reenter, NULL};
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.deterministic_seed = 7;
    c.max_execution_ms = 60000;
    c.max_gas = max_gas;
    c.gas_schedule = schedule;
    c.host_functions = hosts;
    c.nhost_functions = 2;
    return c;
}

/* The paused call an image holds (ri_snap_call_free it); fails the test if none. */
static inline ri_snap_call paused_call_in(test_blob image) {
    ri_snap_image img;
    ri_sandbox_error err;
    assert_true(ri_snapshot_open(image.data, image.len, &img, &err));
    ri_snap_call call;
    ri_snap_error se;
    assert_true(ri_snap_read_call(&img, &call, &se));
    ri_snap_image_free(&img);
    return call;
}

#endif
