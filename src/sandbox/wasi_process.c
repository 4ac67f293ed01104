/*
 * WASI processes in a sandbox (docs/WASI.md): the sandbox's WASI context (its random
 * source is the sandbox's seeded PRNG, so random_get draws are in every snapshot), running
 * a command's _start or a reactor's _initialize, the exit status in results, stdin
 * waits across resumes, and the embedder's access to stdio buffers and the workspace.
 */
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"

static uint32_t sandbox_random(void *ctx) { return ri_mulberry32_next(&((ri_sandbox *)ctx)->prng_state); }

bool sb_wasi_create(ri_sandbox *sb, ri_sandbox_error *err) {
    ri_wasi_services svc = {sandbox_random, sb};
    char why[200] = "";
    sb->wasi = ri_wasi_new(sb->config.wasi, sb->config.event_timestamp, &svc, why, sizeof why);
    if (!sb->wasi) sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "%s", why);
    return sb->wasi != NULL;
}

void sb_wasi_install(ri_sandbox *sb, struct ri_wasi *w) {
    ri_wasi_services svc = {sandbox_random, sb};
    ri_wasi *fresh = ri_wasi_copy(w, &svc); /* (the copy's services are the only change) */
    if (fresh) {
        ri_wasi_free(w);
        w = fresh;
    }
    ri_wasi_free(sb->wasi);
    sb->wasi = w;
}

void sb_wasi_finish_result(ri_sandbox *sb, const char *action, ri_sandbox_result *r) {
    if (!sb->wasi) return;
    uint32_t code = 0;
    if (!r->ok && r->error.code == RI_SANDBOX_EXIT && ri_wasi_exited(sb->wasi, &code)) {
        r->exited = true;
        r->exit_code = code;
        if (code == 0) { /* success: not an error */
            r->ok = true;
            memset(&r->error, 0, sizeof r->error);
        }
    } else if (r->ok && action && strcmp(action, "_start") == 0) {
        r->exited = true; /* _start returned: exit code 0 */
        r->exit_code = 0;
    }
}

bool sb_wasi_ready_to_resume(ri_sandbox *sb) {
    if (!sb->wasi || !ri_wasi_waiting(sb->wasi)) return true;
    return ri_wasi_complete_wait(sb->wasi, sb->image ? sb->image->memory : NULL);
}

static bool wasi_guard(ri_sandbox *sb, ri_sandbox_result *r) {
    memset(r, 0, sizeof *r);
    if (!sb) {
        sb_error_trap(&r->error, "invalid_state", "ri_sandbox_wasi_run: sandbox is NULL");
        return false;
    }
    r->metrics = ri_sandbox_get_metrics(sb);
    if (!sb->wasi) {
        sb_error_trap(&r->error, "invalid_state",
                      "WASI is not enabled in this sandbox's configuration (enable_wasi)");
        return false;
    }
    return true;
}

/* One call of a WASI entry point: stdin waits may pause it whatever the pause-on mask;
 * sched_yield only when the mask has yield. */
static ri_sandbox_result run_entry(ri_sandbox *sb, const char *entry, const ri_val *args, uint32_t nargs) {
    uint32_t pause_on = sb->pause_on;
    ri_wasi_set_yield_pauses(sb->wasi, (pause_on & RI_SUSPEND_ON_YIELD) != 0);
    sb->pause_on = pause_on | RI_SUSPEND_ON_YIELD;
    ri_sandbox_result r = ri_sandbox_call(sb, entry, args, nargs);
    sb->pause_on = pause_on;
    return r;
}

ri_sandbox_result ri_sandbox_wasi_call(ri_sandbox *sb, const char *action, const ri_val *args, uint32_t nargs) {
    ri_sandbox_result r;
    if (!wasi_guard(sb, &r)) return r;
    return run_entry(sb, action, args, nargs);
}

ri_sandbox_result ri_sandbox_wasi_run(ri_sandbox *sb) {
    ri_sandbox_result r;
    if (!wasi_guard(sb, &r)) return r;
    if (sb->pending || sb->run || sb_status(sb) != RI_SANDBOX_LOADED) return ri_sandbox_call(sb, "_start", NULL, 0);
    ri_wasi_reset_process(sb->wasi);
    return run_entry(sb, "_start", NULL, 0);
}

ri_sandbox_result ri_sandbox_wasi_initialize(ri_sandbox *sb) {
    ri_sandbox_result r;
    if (!wasi_guard(sb, &r)) return r;
    ri_extern ext;
    if (sb_status(sb) == RI_SANDBOX_LOADED && !sb->pending && sb->image && sb->image->instance &&
        !ri_instance_export(sb->image->instance, "_initialize", &ext)) {
        r.ok = true; /* nothing to initialize */
        return r;
    }
    return run_entry(sb, "_initialize", NULL, 0);
}

bool ri_sandbox_wasi_stdin_push(ri_sandbox *sb, const uint8_t *data, size_t len) {
    return sb && sb->wasi && ri_wasi_stdin_push(sb->wasi, data, len);
}

void ri_sandbox_wasi_stdin_close(ri_sandbox *sb) {
    if (sb && sb->wasi) ri_wasi_stdin_close(sb->wasi);
}

bool ri_sandbox_wasi_waiting(const ri_sandbox *sb) { return sb && sb->wasi && ri_wasi_waiting(sb->wasi); }

const uint8_t *ri_sandbox_wasi_output(const ri_sandbox *sb, ri_wasi_stream stream, size_t *len) {
    if (len) *len = 0;
    if (!sb || !sb->wasi) return NULL;
    return ri_wasi_output(sb->wasi, stream, len);
}

void ri_sandbox_wasi_output_clear(ri_sandbox *sb, ri_wasi_stream stream) {
    if (sb && sb->wasi) ri_wasi_output_clear(sb->wasi, stream);
}

void *ri_sandbox_wasi_workspace(ri_sandbox *sb) { return sb && sb->wasi ? ri_wasi_workspace(sb->wasi) : NULL; }
