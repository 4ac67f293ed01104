/*
 * Pausable executions (ri/sandbox.h "pausable executions"): the paused call a sandbox
 * keeps, resuming it slice by slice, and carrying it through a v2 snapshot (section
 * FRMS) into another sandbox.
 *
 * Gas: with the instructions schedule each slice gets a budget on top of what the last
 * slice left unspent, and uses what it charged; the charge a slice stopped at is paid
 * by the next one, so the slices' uses add up to the uninterrupted execution's gas (the
 * engine's rule, ri/engine.h).
 * With the host-calls schedule the count of import calls simply goes on. The pending
 * call keeps the total so far; the final result reports the total.
 * The engine keeps the frames (in the image's store); this file keeps what the sandbox
 * needs to finish the execution as execute would have: the export's name (for the
 * result and messages), the pause-on mask and the gas so far.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

void sb_pending_free(sb_pending *p) {
    if (!p) return;
    free(p->action);
    free(p);
}

void sb_pending_drop(ri_sandbox *sb) {
    if (!sb->pending) return;
    if (sb->image && sb->image->store) ri_store_abandon(sb->image->store);
    sb_pending_free(sb->pending);
    sb->pending = NULL;
}

static void paused_result(ri_sandbox *sb, ri_sandbox_result *r) {
    r->ok = false;
    ri_suspend_reason why = ri_store_suspend_reason(sb->image->store);
    sb_error_set(&r->error, RI_SANDBOX_SUSPENDED_CALL,
                 "Execution of '%s' paused (%s) after %llu gas in all: resume it to continue", sb->pending->action,
                 ri_suspend_reason_name(why), (unsigned long long)sb->pending->gas_used);
    snprintf(r->error.trap_kind, sizeof r->error.trap_kind, "suspended");
}

void sb_pending_start(ri_sandbox *sb, const char *action, uint64_t gas_used, ri_sandbox_result *r) {
    sb_pending *p = calloc(1, sizeof *p);
    char *name = p ? strdup(action) : NULL;
    if (!name) {
        free(p);
        ri_store_abandon(sb->image->store);
        r->ok = false;
        sb_error_trap(&r->error, "runtime_error", "Out of memory keeping the paused call of '%s'", action);
        return;
    }
    p->action = name;
    p->pause_on = sb->pause_on;
    p->gas_used = gas_used;
    p->gas_left = ri_store_gas(sb->image->store);
    sb_pending_free(sb->pending);
    sb->pending = p;
    sb->metrics.gas_used = gas_used;
    sb_set_status(sb, RI_SANDBOX_SUSPENDED);
    paused_result(sb, r);
    r->metrics = ri_sandbox_get_metrics(sb);
}

/* ---- the API -------------------------------------------------------------------------------- */

bool ri_sandbox_set_pause_on(ri_sandbox *sb, uint32_t pause_on, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) {
        sb_error_trap(err, "invalid_state", "ri_sandbox_set_pause_on: sandbox is NULL");
        return false;
    }
    if (pause_on & ~(uint32_t)RI_SUSPEND_ALL) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Unknown pause-on bits 0x%x", pause_on);
        return false;
    }
    if ((pause_on & RI_SUSPEND_ON_GAS) && sb->config.gas_schedule != RI_GAS_INSTRUCTIONS) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                     "Pausing on gas needs the instructions gas schedule (host-call gas is charged before the call, "
                     "where no pause is possible)");
        return false;
    }
    sb->pause_on = pause_on;
    return true;
}

uint32_t ri_sandbox_pause_on(const ri_sandbox *sb) { return sb ? sb->pause_on : 0; }

bool ri_sandbox_has_pending_call(const ri_sandbox *sb) { return sb && sb->pending; }

const char *ri_sandbox_pending_action(const ri_sandbox *sb) { return sb && sb->pending ? sb->pending->action : NULL; }

bool ri_sandbox_abandon(ri_sandbox *sb, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb || !sb->pending || sb->run) {
        sb_error_trap(err, "invalid_state", "Cannot abandon: %s", !sb ? "sandbox is NULL"
                                                               : sb->run ? "the sandbox is running"
                                                                         : "no paused call");
        return false;
    }
    sb_pending_drop(sb);
    sb_set_status(sb, RI_SANDBOX_LOADED);
    return true;
}

/* carry: the slice gets only what the last one left (a scheduler's slices: the call's
 * budget is not extended); else gas (0: max_gas) on top of it. */
static ri_sandbox_result resume_call(ri_sandbox *sb, uint64_t gas, bool carry) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    if (!sb) {
        sb_error_trap(&r.error, "invalid_state", "ri_sandbox_resume: sandbox is NULL");
        return r;
    }
    r.metrics = ri_sandbox_get_metrics(sb);
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) {
        sb_error_destroyed(&r.error, sb->id);
        return r;
    }
    if (sb->run) {
        sb_error_trap(&r.error, "invalid_state", "Cannot resume: instance status is 'running'");
        return r;
    }
    if (!sb->pending || !ri_store_suspended(sb->image->store)) {
        sb_error_trap(&r.error, "invalid_state", "Cannot resume: no paused call (instance status is '%s')",
                      ri_sandbox_status_name(sb_status(sb)));
        return r;
    }
    if (!sb_wasi_ready_to_resume(sb)) { /* still no input for the read it waits in */
        paused_result(sb, &r);
        return r;
    }
    ri_store *store = sb->image->store;
    ri_functype type = ri_func_type(ri_store_suspended_func(store));
    ri_val inline_results[4];
    ri_val *results = type.nresults > 4 ? calloc(type.nresults, sizeof *results) : inline_results;
    if (!results) {
        sb_error_trap(&r.error, "runtime_error", "Out of memory for the results of '%s'", sb->pending->action);
        return r;
    }
    sb_run run;
    if (!sb_run_begin(sb, &run, store, &r.error)) {
        if (results != inline_results) free(results);
        return r;
    }
    sb_set_status(sb, RI_SANDBOX_RUNNING);
    bool instructions = sb->config.gas_schedule == RI_GAS_INSTRUCTIONS;
    if (!instructions) run.host_gas_used = sb->pending->gas_used; /* the count goes on */
    /* This slice has what the last one left plus its own budget (ri_store_resume adds). */
    uint64_t more = instructions && !carry ? (gas ? gas : sb->config.max_gas) : 0;
    ri_store_set_gas(store, instructions ? sb->pending->gas_left : UINT64_MAX);
    uint64_t budget = ri_store_gas(store) > UINT64_MAX - more ? UINT64_MAX : ri_store_gas(store) + more;
    ri_store_set_suspend_mode(store, sb->pending->pause_on);
    ri_error e;
    ri_errcode rc = ri_store_resume(store, more, results, type.nresults, &e);
    uint64_t left = ri_store_gas(store);
    sb_run_end(sb, &run);
    uint64_t total = instructions ? sb->pending->gas_used + (budget >= left ? budget - left : 0) : run.host_gas_used;
    double duration = (double)((uint64_t)ri_clock_mono_ns() - run.start_ns) / 1e6;
    if (sb->destroy_requested) {
        sb_release_image(sb);
        sb_error_destroyed(&r.error, sb->id);
    } else if (rc == RI_ERR_SUSPENDED) {
        sb->pending->gas_used = total;
        sb->pending->gas_left = left;
        sb_set_status(sb, RI_SANDBOX_SUSPENDED);
        paused_result(sb, &r);
    } else {
        sb_pending *p = sb->pending; /* the engine has dropped the frames */
        sb->pending = NULL;
        sb_set_status(sb, RI_SANDBOX_LOADED);
        if (rc != RI_OK) {
            sb_map_run_error(sb, &run, rc, &e, &r.error);
            if (r.error.code == RI_SANDBOX_GAS_EXHAUSTED) r.error.gas_used = total;
        } else {
            sb_direct_result(sb, p->action, results, type.nresults, &r);
        }
        sb_wasi_finish_result(sb, p->action, &r);
        sb_pending_free(p);
    }
    sb->metrics.gas_used = total;
    sb->metrics.execution_ms = duration;
    r.metrics = ri_sandbox_get_metrics(sb);
    r.gas_used = total;
    r.duration_ms = duration;
    if (results != inline_results) free(results);
    return r;
}

ri_sandbox_result ri_sandbox_resume(ri_sandbox *sb, uint64_t gas) { return resume_call(sb, gas, false); }

ri_sandbox_result ri_sandbox_resume_carry(ri_sandbox *sb) { return resume_call(sb, 0, true); }

/* ---- snapshots ------------------------------------------------------------------------------ */

bool sb_snapshot_call(ri_sandbox *sb, ri_snap_call *call, ri_sandbox_error *err) {
    memset(call, 0, sizeof *call);
    ri_error e;
    if (!ri_store_describe_suspended(sb->image->store, sb->image->instance, &call->suspension, &e)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot the paused call: %s", e.message);
        return false;
    }
    ri_functype type = ri_func_type(ri_store_suspended_func(sb->image->store));
    size_t name_len = strlen(sb->pending->action);
    call->export_name = malloc(name_len ? name_len : 1);
    call->result_types = calloc(type.nresults ? type.nresults : 1, sizeof *call->result_types);
    if (!call->export_name || !call->result_types) {
        ri_snap_call_free(call);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: out of memory");
        return false;
    }
    memcpy(call->export_name, sb->pending->action, name_len);
    call->export_name_len = (uint32_t)name_len;
    call->nresults = type.nresults;
    if (type.nresults) memcpy(call->result_types, type.results, type.nresults * sizeof *type.results);
    call->pause_on = sb->pending->pause_on;
    call->gas_schedule = (uint32_t)sb->config.gas_schedule;
    call->gas_used = sb->pending->gas_used;
    call->gas_left = sb->pending->gas_left;
    return true;
}

/* The call's export names its called function, and the results are that function's. */
static bool call_fits(const ri_instance *inst, const ri_snap_call *call, char **action, ri_sandbox_error *err) {
    *action = NULL;
    if (!call->export_name_len || memchr(call->export_name, 0, call->export_name_len)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore the paused call: it names no usable export");
        return false;
    }
    ri_extern ext;
    ri_func *f = ri_instance_func(inst, call->suspension.func_index);
    if (!ri_instance_export_n(inst, call->export_name, call->export_name_len, &ext) || ext.kind != RI_EXTERN_FUNC ||
        ext.of.func != f || !f) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore the paused call: its export is not function %u of the module",
                     call->suspension.func_index);
        return false;
    }
    ri_functype t = ri_func_type(f);
    bool same = t.nresults == call->nresults;
    for (uint32_t i = 0; same && i < t.nresults; i++) same = t.results[i] == call->result_types[i];
    if (!same) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore the paused call: it expects other results than "
                                                     "its function returns");
        return false;
    }
    *action = malloc((size_t)call->export_name_len + 1);
    if (!*action) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore: out of memory");
        return false;
    }
    memcpy(*action, call->export_name, call->export_name_len);
    (*action)[call->export_name_len] = '\0';
    return true;
}

sb_pending *sb_pending_rebuild(const ri_sandbox *sb, sb_image *img, const ri_snap_call *call, ri_sandbox_error *err) {
    if (call->gas_schedule != (uint32_t)sb->config.gas_schedule ||
        ((call->pause_on & RI_SUSPEND_ON_GAS) && sb->config.gas_schedule != RI_GAS_INSTRUCTIONS)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot restore the paused call: it was metered with the %s gas schedule, this sandbox uses %s",
                     call->gas_schedule ? "instructions" : "host-calls",
                     sb->config.gas_schedule == RI_GAS_INSTRUCTIONS ? "instructions" : "host-calls");
        return NULL;
    }
    char *action = NULL;
    if (!call_fits(img->instance, call, &action, err)) return NULL;
    sb_pending *p = calloc(1, sizeof *p);
    if (!p) {
        free(action);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore the paused call: out of memory");
        return NULL;
    }
    ri_error e;
    if (!ri_store_rebuild_suspended(img->store, img->instance, &call->suspension, &e)) {
        free(action);
        free(p);
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot restore the paused call: %s", e.message);
        return NULL;
    }
    p->action = action;
    p->pause_on = call->pause_on;
    p->gas_used = call->gas_used;
    p->gas_left = call->gas_left;
    ri_store_set_suspend_mode(img->store, call->pause_on);
    return p;
}

bool sb_restore_call(ri_sandbox *sb, const ri_snap_image *img, ri_module *loaded, const uint8_t *module,
                     size_t module_len, ri_sandbox_error *err) {
    ri_snap_call call;
    ri_snap_error se;
    if (!ri_snap_read_call(img, &call, &se)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", se.message);
        return false;
    }
    /* Everything goes into a fresh image; the sandbox changes only once all of it worked. */
    uint32_t prng_before = sb->prng_state;
    sb_image *fresh = NULL;
    /* The module the sandbox runs already is shared, not compiled again, and its start
     * function need not run: the image's state replaces whatever it would make. */
    bool built = loaded ? sb_build_image_from(sb, ri_module_retain(loaded), false, &fresh, err)
                        : sb_build_image(sb, module, module_len, &fresh, err);
    if (!built) {
        sb->prng_state = prng_before;
        if (err->code != RI_SANDBOX_INSTANCE_DESTROYED) {
            err->code = RI_SANDBOX_SNAPSHOT_ERROR;
            sb_error_prefix(err, "Cannot restore: the module does not load: ");
        }
        ri_snap_call_free(&call);
        return false;
    }
    sb->prng_state = prng_before;
    memcpy(fresh->module_sha256, img->meta.module_sha256, RI_SNAP_SHA256_BYTES);
    fresh->has_module_sha256 = true;
    ri_snap_image state = *img;
    state.has_frames = false; /* the frames are ours to restore */
    sb_pending *p = NULL;
    if (!ri_snap_restore(fresh->instance, &state, &se))
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", se.message);
    else
        p = sb_pending_rebuild(sb, fresh, &call, err);
    ri_snap_call_free(&call);
    if (!p) {
        sb_image_free(fresh);
        return false;
    }
    sb_pending_free(sb->pending);
    sb_image_free(sb->image);
    sb->image = fresh;
    sb->pending = p;
    sb->prng_state = img->meta.prng_state;
    sb->metrics.gas_used = img->meta.gas_used;
    sb_set_status(sb, RI_SANDBOX_SUSPENDED);
    return true;
}
