/*
 * Memory pressure and advice (seed 001 §8): pure functions of the sandboxes' live
 * memory use, with the original's thresholds, message and candidate lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

const char *ri_pressure_level_name(ri_pressure_level level) {
    switch (level) {
    case RI_PRESSURE_NORMAL: return "NORMAL";
    case RI_PRESSURE_WARNING: return "WARNING";
    case RI_PRESSURE_PRESSURE: return "PRESSURE";
    case RI_PRESSURE_CRITICAL: return "CRITICAL";
    case RI_PRESSURE_OOM: return "OOM";
    }
    return "UNKNOWN";
}

const char *ri_pressure_action_name(ri_pressure_action action) {
    switch (action) {
    case RI_ADVICE_NONE: return "none";
    case RI_ADVICE_LOG: return "log";
    case RI_ADVICE_SUSPEND: return "suspend";
    case RI_ADVICE_EMERGENCY_SAVE: return "emergency_save";
    }
    return "unknown";
}

ri_pressure_level ri_memory_pressure(ri_sandbox *const *sandboxes, size_t n, int64_t available_bytes) {
    if (available_bytes <= 0) return RI_PRESSURE_OOM;
    /* As the original computes it, in doubles: (used / available) * 100. */
    double used = 0;
    for (size_t i = 0; sandboxes && i < n; i++)
        if (sandboxes[i]) used += (double)ri_sandbox_get_metrics(sandboxes[i]).memory_used_bytes;
    double percent = used / (double)available_bytes * 100;
    if (percent >= 100) return RI_PRESSURE_OOM;
    if (percent >= 95) return RI_PRESSURE_CRITICAL;
    if (percent >= 85) return RI_PRESSURE_PRESSURE;
    if (percent >= 70) return RI_PRESSURE_WARNING;
    return RI_PRESSURE_NORMAL;
}

/* The candidates: input order, without the foreground sandbox and destroyed ones. */
static bool candidates(ri_pressure_advice *advice, ri_sandbox *const *sandboxes, size_t n, const char *foreground_id) {
    advice->instance_ids = calloc(n ? n : 1, sizeof *advice->instance_ids);
    if (!advice->instance_ids) return false;
    for (size_t i = 0; sandboxes && i < n; i++) {
        const ri_sandbox *sb = sandboxes[i];
        if (!sb || ri_sandbox_status_of(sb) == RI_SANDBOX_DESTROYED) continue;
        if (foreground_id && strcmp(ri_sandbox_id(sb), foreground_id) == 0) continue;
        char *id = strdup(ri_sandbox_id(sb));
        if (!id) return false;
        advice->instance_ids[advice->ninstance_ids++] = id;
    }
    return true;
}

ri_pressure_advice ri_advise(ri_pressure_level level, ri_sandbox *const *sandboxes, size_t n,
                             const char *foreground_id) {
    ri_pressure_advice advice;
    memset(&advice, 0, sizeof advice);
    switch (level) {
    case RI_PRESSURE_NORMAL:
        advice.action = RI_ADVICE_NONE;
        return advice;
    case RI_PRESSURE_WARNING:
        /* The original counts every sandbox given, destroyed ones included. */
        advice.action = RI_ADVICE_LOG;
        snprintf(advice.message, sizeof advice.message, "Memory usage is above 70%%. %zu active instance(s).", n);
        return advice;
    case RI_PRESSURE_PRESSURE:
        advice.action = RI_ADVICE_SUSPEND;
        break;
    case RI_PRESSURE_CRITICAL:
    case RI_PRESSURE_OOM:
        advice.action = RI_ADVICE_EMERGENCY_SAVE;
        break;
    default:
        return advice; /* not a level: no action */
    }
    if (!candidates(&advice, sandboxes, n, foreground_id)) {
        /* Out of memory: the ids found so far stay (a shorter list, never a crash). */
        if (!advice.instance_ids) advice.ninstance_ids = 0;
    }
    return advice;
}

void ri_pressure_advice_free(ri_pressure_advice *advice) {
    if (!advice) return;
    for (size_t i = 0; advice->instance_ids && i < advice->ninstance_ids; i++) free(advice->instance_ids[i]);
    free(advice->instance_ids);
    advice->instance_ids = NULL;
    advice->ninstance_ids = 0;
}
