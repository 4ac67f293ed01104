/*
 * The determinism validator: capture the full state (memory, globals, tables,
 * segment flags, PRNG, metrics), run the action, capture again; put the first state
 * back, run again, capture again; put the first state back for good. The action is
 * deterministic when both runs give the same result (value, typed results, gas,
 * error) and leave the same state. Host functions run twice: their side effects too.
 */
#include <string.h>

#include "sandbox_internal.h"

typedef struct full_state {
    sb_state instance;
    uint32_t prng;
    ri_sandbox_metrics metrics;
} full_state;

static bool capture(ri_sandbox *sb, full_state *out) {
    out->prng = sb->prng_state;
    out->metrics = sb->metrics;
    return sb_state_capture(sb->image->instance, sb->image->memory, &out->instance);
}

static bool put_back(ri_sandbox *sb, const full_state *s) {
    if (!sb_state_apply(sb->image->instance, sb->image->memory, &s->instance)) return false;
    sb->prng_state = s->prng;
    sb->metrics = s->metrics;
    return true;
}

static bool same_string(const char *a, const char *b) {
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static bool same_val(const ri_val *a, const ri_val *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case RI_I32: return a->of.i32 == b->of.i32;
    case RI_I64: return a->of.i64 == b->of.i64;
    case RI_F32: return a->of.f32_bits == b->of.f32_bits;
    case RI_F64: return a->of.f64_bits == b->of.f64_bits;
    case RI_V128: return memcmp(a->of.v128, b->of.v128, 16) == 0;
    default: return a->of.ref == b->of.ref;
    }
}

/* Everything but wall-clock time must agree. */
static bool same_result(const ri_sandbox_result *a, const ri_sandbox_result *b) {
    if (a->ok != b->ok || a->gas_used != b->gas_used) return false;
    if (a->ok) {
        if (!same_string(a->value_json, b->value_json) || a->nresults != b->nresults) return false;
        for (uint32_t i = 0; i < a->nresults; i++)
            if (!same_val(&a->results[i], &b->results[i])) return false;
        return true;
    }
    const ri_sandbox_error *x = &a->error, *y = &b->error;
    if (x->code != y->code || strcmp(x->trap_kind, y->trap_kind) != 0 ||
        strcmp(x->function_name, y->function_name) != 0)
        return false;
    if (x->code == RI_SANDBOX_TIMEOUT) return true; /* elapsed times differ by nature */
    return x->gas_used == y->gas_used && x->memory_used == y->memory_used && strcmp(x->message, y->message) == 0;
}

bool ri_sandbox_check_determinism(ri_sandbox *sb, const char *action, const char *payload_json,
                                  bool *deterministic, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (deterministic) *deterministic = false;
    if (!sb || !deterministic) {
        sb_error_trap(err, "invalid_state", "ri_sandbox_check_determinism: a NULL argument");
        return false;
    }
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) {
        sb_error_destroyed(err, sb->id);
        return false;
    }
    if (status != RI_SANDBOX_LOADED || sb->run || !sb->image || !sb->image->instance) {
        sb_error_trap(err, "invalid_state", "Cannot check determinism: instance status is '%s'",
                      ri_sandbox_status_name(sb->run ? RI_SANDBOX_RUNNING : status));
        return false;
    }

    full_state before, after_first, after_second;
    memset(&after_first, 0, sizeof after_first);
    memset(&after_second, 0, sizeof after_second);
    if (!capture(sb, &before)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Out of memory capturing the instance state");
        return false;
    }
    uint32_t pause_on = sb->pause_on; /* the two runs run to the end: a pause is not a result */
    sb->pause_on = 0;
    ri_sandbox_result first = ri_sandbox_execute(sb, action, payload_json);
    ri_sandbox_result second;
    memset(&second, 0, sizeof second);
    bool ok = false;
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) { /* destroy() from a host function */
        sb_error_destroyed(err, sb->id);
        goto done;
    }
    if (!capture(sb, &after_first) || !put_back(sb, &before)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Out of memory capturing the instance state");
        goto done;
    }
    second = ri_sandbox_execute(sb, action, payload_json);
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) {
        sb_error_destroyed(err, sb->id);
        goto done;
    }
    if (!capture(sb, &after_second) || !put_back(sb, &before)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Out of memory capturing the instance state");
        goto done;
    }
    *deterministic = same_result(&first, &second) && after_first.prng == after_second.prng &&
                     after_first.metrics.gas_used == after_second.metrics.gas_used &&
                     sb_state_equal(&after_first.instance, &after_second.instance, NULL, 0);
    ok = true;
done:
    sb->pause_on = pause_on;
    ri_sandbox_result_free(&first);
    ri_sandbox_result_free(&second);
    sb_state_free(&before.instance);
    sb_state_free(&after_first.instance);
    sb_state_free(&after_second.instance);
    return ok;
}
