/*
 * One metered run (an execute, or the start function during a load): the gas budget
 * of the configured schedule, the wall-clock limit (checked at every import call, as
 * the original does, and enforced by the watchdog inside loops without calls; with
 * pause-on-interrupt it ends a time slice instead), and
 * the hook that lets ri_sandbox_interrupt reach the running store.
 */
#include <time.h>

#include "sandbox_internal.h"

bool sb_run_begin(ri_sandbox *sb, sb_run *run, ri_store *store, ri_sandbox_error *err) {
    run->store = store;
    run->host_gas_used = 0;
    run->watch_fired = false;
    run->failed = false;
    sb_error_clear(&run->failure);
    /* Host-call gas is counted here; the engine's meter runs only for instructions. */
    ri_store_set_gas(store, sb->config.gas_schedule == RI_GAS_INSTRUCTIONS ? sb->config.max_gas : UINT64_MAX);
    ri_store_clear_interrupt(store);
    run->start_ns = (uint64_t)ri_clock_mono_ns();
    /* elapsed_ms > limit, in whole milliseconds as the original measures, first holds
     * (limit + 1) ms after the start. Without a limit there is nothing to watch, and no
     * thread to start (which would cost a short-lived process like `ri run` about a fifth
     * of a millisecond). */
    run->watch_armed = sb_time_limited(sb);
    uint64_t deadline = run->start_ns + ((uint64_t)sb->config.max_execution_ms + 1u) * 1000000u;
    if (run->watch_armed && !sb_watchdog_arm(sb->watchdog, &run->watch, store, deadline)) {
        sb_error_trap(err, "runtime_error", "Cannot start the timeout watchdog thread");
        return false;
    }
    pthread_mutex_lock(&sb->interrupt_lock);
    sb->interruptible = store;
    pthread_mutex_unlock(&sb->interrupt_lock);
    sb->run = run;
    return true;
}

void sb_run_end(ri_sandbox *sb, sb_run *run) {
    pthread_mutex_lock(&sb->interrupt_lock);
    sb->interruptible = NULL;
    pthread_mutex_unlock(&sb->interrupt_lock);
    run->watch_fired = run->watch_armed && sb_watchdog_disarm(sb->watchdog, &run->watch);
    run->watch_armed = false;
    /* Nobody can set it any more: clear what a late interrupt left behind. */
    ri_store_clear_interrupt(run->store);
    sb->run = NULL;
}

uint64_t sb_run_gas_used(const ri_sandbox *sb, const sb_run *run) {
    if (sb->config.gas_schedule == RI_GAS_INSTRUCTIONS) {
        uint64_t left = ri_store_gas(run->store);
        return left <= sb->config.max_gas ? sb->config.max_gas - left : 0;
    }
    return run->host_gas_used;
}

bool sb_time_limited(const ri_sandbox *sb) { return sb->config.max_execution_ms != RI_SANDBOX_NO_TIME_LIMIT; }

double sb_run_elapsed_ms(const sb_run *run) { return (double)((uint64_t)ri_clock_mono_ns() - run->start_ns) / 1e6; }

static uint64_t elapsed_whole_ms(const sb_run *run) { return ((uint64_t)ri_clock_mono_ns() - run->start_ns) / 1000000u; }

sb_import_verdict sb_run_charge_import(ri_sandbox *sb, sb_run *run) {
    /* A limit once hit stays hit, even if a host function swallowed the failure. */
    if (run->failed && (run->failure.code == RI_SANDBOX_GAS_EXHAUSTED || run->failure.code == RI_SANDBOX_TIMEOUT))
        return SB_IMPORT_REFUSED;
    uint64_t left = ri_store_gas(run->store);
    if (sb->config.gas_schedule == RI_GAS_INSTRUCTIONS) {
        /* One budget: the call costs 1 more than its instructions. */
        if (left == 0) {
            run->failed = true;
            sb_error_gas(&run->failure, sb->config.max_gas, sb->config.max_gas);
            return SB_IMPORT_REFUSED;
        }
        ri_store_set_gas(run->store, left - 1);
    } else {
        /* The original: count first, then compare, so exactly max_gas calls succeed
         * and the failing one reports max_gas + 1. */
        run->host_gas_used++;
        if (run->host_gas_used > sb->config.max_gas) {
            run->failed = true;
            sb_error_gas(&run->failure, run->host_gas_used, sb->config.max_gas);
            return SB_IMPORT_REFUSED;
        }
    }
    uint64_t elapsed = sb_time_limited(sb) ? elapsed_whole_ms(run) : 0;
    if (elapsed > sb->config.max_execution_ms) {
        if (ri_store_suspend_mode(run->store) & RI_SUSPEND_ON_INTERRUPT) {
            /* A time slice, not a limit: the run pauses before this call, as the watchdog's
             * interrupt would have stopped it, and the next slice makes and pays for it. */
            if (sb->config.gas_schedule == RI_GAS_INSTRUCTIONS) ri_store_set_gas(run->store, left);
            else run->host_gas_used--;
            ri_store_interrupt(run->store);
            return SB_IMPORT_PAUSE;
        }
        run->failed = true;
        sb_error_timeout(&run->failure, elapsed, sb->config.max_execution_ms);
        return SB_IMPORT_REFUSED;
    }
    return SB_IMPORT_GO;
}
