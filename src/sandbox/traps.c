/*
 * How a run's engine error is reported: the engine's trap kinds one to one as
 * WASM_TRAP kinds (with the engine's stable messages), running out of gas as
 * GAS_EXHAUSTED, an interrupt as TIMEOUT (time up), INSTANCE_DESTROYED (destroy
 * during the run) or WASM_TRAP "interrupted" (ri_sandbox_interrupt), and a failed
 * import call as what the host bridge recorded.
 */
#include "sandbox_internal.h"

const char *sb_trap_kind(ri_trap trap) {
    switch (trap) {
    case RI_TRAP_NONE: return "runtime_error";
    case RI_TRAP_UNREACHABLE: return "unreachable";
    case RI_TRAP_INT_DIV_ZERO: return "integer_divide_by_zero";
    case RI_TRAP_INT_OVERFLOW: return "integer_overflow";
    case RI_TRAP_INVALID_CONVERSION: return "invalid_conversion";
    case RI_TRAP_MEMORY_OOB: return "out_of_bounds_memory";
    case RI_TRAP_TABLE_OOB: return "out_of_bounds_table";
    case RI_TRAP_UNDEFINED_ELEMENT: return "undefined_element";
    case RI_TRAP_UNINITIALIZED_ELEMENT: return "uninitialized_element";
    case RI_TRAP_INDIRECT_MISMATCH: return "indirect_call_type_mismatch";
    case RI_TRAP_STACK_EXHAUSTED: return "call_stack_exhausted";
    case RI_TRAP_OUT_OF_GAS: return "out_of_gas";
    case RI_TRAP_INTERRUPTED: return "interrupted";
    case RI_TRAP_HOST: return "runtime_error";
    case RI_TRAP_EXCEPTION: return "uncaught_exception";
    case RI_TRAP_NULL_EXNREF: return "null_exception_reference";
    case RI_TRAP_COUNT: break;
    }
    return "runtime_error";
}

void sb_map_run_error(ri_sandbox *sb, sb_run *run, ri_errcode rc, const ri_error *e, ri_sandbox_error *out) {
    if (sb->destroy_requested) {
        sb_error_destroyed(out, sb->id);
        return;
    }
    if (rc != RI_ERR_TRAP) {
        /* Argument errors and allocation failures of the engine. */
        sb_error_trap(out, "runtime_error", "%s", e->message);
        return;
    }
    switch (e->trap) {
    case RI_TRAP_HOST:
        if (!run->failed) {
            sb_error_trap(out, "runtime_error", "%s", e->message);
        } else if (run->failure.code == RI_SANDBOX_HOST_FUNCTION_ERROR) {
            /* The message that reached the top is the failing host function's own. */
            sb_error_host(out, run->failure.function_name, e->message);
        } else {
            *out = run->failure;
        }
        return;
    case RI_TRAP_OUT_OF_GAS: {
        uint64_t used = sb_run_gas_used(sb, run);
        sb_error_gas(out, used, sb->config.max_gas);
        return;
    }
    case RI_TRAP_INTERRUPTED: {
        uint64_t elapsed = ((uint64_t)ri_clock_mono_ns() - run->start_ns) / 1000000u;
        if (run->watch_fired || (sb_time_limited(sb) && elapsed > sb->config.max_execution_ms))
            sb_error_timeout(out, elapsed, sb->config.max_execution_ms);
        else
            sb_error_trap(out, "interrupted", "%s", ri_trap_message(RI_TRAP_INTERRUPTED));
        return;
    }
    default:
        sb_error_trap(out, sb_trap_kind(e->trap), "%s", e->message); /* the engine's text, detail included */
        return;
    }
}
