/*
 * The host bridge: every function a module imports is one engine host function whose
 * user pointer is an sb_binding. Each call first pays its gas and passes the timeout
 * check (limits.c), in that order, and only then does its work, so a refused call has
 * no effect (the PRNG does not advance); the end of a time slice (pause-on-interrupt)
 * pauses before the call, which the next slice makes. A failing user function ends the run as
 * HOST_FUNCTION_ERROR {function name, message}.
 */
#include "sandbox_internal.h"
#include "emscripten/emscripten.h"
#include "wasi/wasi.h"

/* env.__get_time: the configured event timestamp, truncated to i32 as JavaScript's
 * ToInt32 does (1700000000000 arrives as -807049216). */
static int32_t event_time_i32(const ri_sandbox *sb) {
    return sb_i32_from_bits((uint32_t)(uint64_t)sb->config.event_timestamp);
}

/* A WASI function (src/wasi/): proc_exit ends the run as EXIT with its code; a stop
 * point (sched_yield, a read waiting for stdin) pauses after the call when the run can. */
static int wasi_call(ri_host_call *call, sb_binding *binding, const ri_val *args, ri_val *results) {
    ri_sandbox *sb = binding->sb;
    switch (ri_wasi_call(sb->wasi, binding->wasi_index, call, args, results)) {
    case RI_WASI_DONE: return 0;
    case RI_WASI_YIELD:
        if (ri_store_suspend_mode(ri_host_call_store(call)) & RI_SUSPEND_ON_YIELD) return ri_host_yield(call);
        return 0;
    case RI_WASI_EXIT: break;
    }
    uint32_t code = 0;
    ri_wasi_exited(sb->wasi, &code);
    sb->run->failed = true;
    sb_error_set(&sb->run->failure, RI_SANDBOX_EXIT, "The WASI process exited with code %u", code);
    return ri_host_fail(call, "proc_exit(%u)", code);
}

/* A function of the Emscripten profile: exit() ends the run as proc_exit does; a failure
 * (abort, a JavaScript-only function) as a host function error naming it. */
static int emsc_call(ri_host_call *call, sb_binding *binding, const ri_val *args, ri_val *results) {
    ri_sandbox *sb = binding->sb;
    ri_wasi_outcome outcome;
    int failed = ri_emsc_call(sb->wasi, binding->wasi_index, call, args, results, &outcome);
    if (failed == RI_HOST_YIELD || failed == RI_HOST_PAUSE_BEFORE) return failed; /* a pause, not a failure */
    if (!failed && outcome == RI_WASI_EXIT) {
        uint32_t code = 0;
        ri_wasi_exited(sb->wasi, &code);
        sb->run->failed = true;
        sb_error_set(&sb->run->failure, RI_SANDBOX_EXIT, "The WASI process exited with code %u", code);
        return ri_host_fail(call, "exit(%u)", code);
    }
    if (failed && !sb->run->failed) {
        sb->run->failed = true;
        sb_error_host(&sb->run->failure, ri_emsc_name(binding->wasi_index), "");
    }
    return failed;
}

static int bridge_call(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    sb_binding *binding = user;
    ri_sandbox *sb = binding->sb;
    sb_run *run = sb->run;
    if (!run) {
        /* Only reachable if the embedder calls an import outside execute/load. */
        return ri_host_fail(call, "import called outside an execution of sandbox %s", sb->id);
    }
    /* Pausing on gas (resume.c): an import that finds no gas left pauses before the call,
     * where an uninterrupted run with more gas would simply have paid for it. */
    if (sb->config.gas_schedule == RI_GAS_INSTRUCTIONS && ri_store_gas(run->store) == 0 && !run->failed &&
        (ri_store_suspend_mode(run->store) & RI_SUSPEND_ON_GAS))
        return ri_host_pause_before(call);
    switch (sb_run_charge_import(sb, run)) {
    case SB_IMPORT_GO: break;
    case SB_IMPORT_REFUSED: return ri_host_fail(call, "%s", run->failure.message);
    case SB_IMPORT_PAUSE: return ri_host_pause_before(call); /* the store is interrupted: the engine pauses */
    }

    switch (binding->kind) {
    case SB_IMPORT_TIME:
        results[0] = ri_val_i32(event_time_i32(sb));
        return 0;
    case SB_IMPORT_RANDOM:
        results[0] = ri_val_i32(sb_i32_from_bits(ri_mulberry32_next(&sb->prng_state)));
        return 0;
    case SB_IMPORT_HOST:
        break;
    case SB_IMPORT_WASI:
        return wasi_call(call, binding, args, results);
    case SB_IMPORT_EMSC:
        return emsc_call(call, binding, args, results);
    }
    const ri_host_function *host = binding->host;
    int failed = host->fn(call, host->user, args, results);
    if (failed == RI_HOST_YIELD && ri_host_call_yielded(call)) return failed; /* pause after it (resume.c) */
    if (failed) {
        /* Limit failures recorded by a nested import call stay what they are. */
        if (!run->failed || run->failure.code == RI_SANDBOX_HOST_FUNCTION_ERROR) {
            run->failed = true;
            sb_error_host(&run->failure, host->name, "");
        }
        return failed;
    }
    return 0;
}

ri_func *sb_bridge_make(ri_store *store, sb_binding *binding, const ri_functype *type) {
    return ri_func_new_host(store, type, bridge_call, binding);
}
