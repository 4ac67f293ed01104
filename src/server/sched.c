/* Sharing the workers among executions (docs/SERVER.md, "Scheduling"): an execution runs in
 * time slices. It pauses (the engine stops at a stop point, ri_sandbox_set_pause_on) when
 * others wait for a worker and its slice is over, or when its client does not read its
 * output (the sandbox's unsent output, or all clients' together, above a bound); a paused
 * execution goes to the back of the queue, or is parked until its client has read enough.
 * An execution nobody is attached to is ended after a grace period. */
#include <stdlib.h>

#include "server_internal.h"

/* Output waits for the client: above the sandbox's low mark or 3/4 of the budget. With no
 * client attached it waits too, for a reconnect (or the end of the grace period). */
static bool output_blocked(srv_sandbox *sb) {
    srv *s = sb->s;
    if (sb->removed || atomic_load(&sb->killed)) return false;
    if (atomic_load(&sb->out_bytes) > SRV_SB_OUT_LOW) return true;
    return s->cfg.output_budget && atomic_load(&s->out_bytes) > s->cfg.output_budget / 4 * 3;
}

bool srv_sched_should_yield(srv_sandbox *sb) {
    if (!atomic_load(&sb->pausable)) return false;
    srv *s = sb->s;
    if (atomic_load(&sb->out_bytes) > SRV_SB_OUT_HIGH ||
        (s->cfg.output_budget && atomic_load(&s->out_bytes) > s->cfg.output_budget)) {
        atomic_store(&sb->out_blocked, true);
        return true;
    }
    srv_job *job = sb->job; /* set before the job was queued; stays while it runs */
    return job && atomic_load(&job->preempt);
}

/* A WASI process waiting for stdin goes on once there is input (or its end), a kill, or its
 * time is up (waiting counts, as in ri.read): waited is its time so far. */
static bool stdin_ready(srv_sandbox *sb, int64_t waited) {
    if (atomic_load(&sb->killed) || sb->removed || waited >= (int64_t)sb->cfg.max_execution_ms) return true;
    pthread_mutex_lock(&sb->io_lock);
    bool ready = sb->stdin_len > 0 || sb->stdin_closed;
    pthread_mutex_unlock(&sb->io_lock);
    return ready;
}

void srv_sched_paused(srv_sandbox *sb, srv_job *job) {
    job->paused = false;
    if (job->wasi && atomic_load(&sb->live_ckpt)) {
        srv_live_checkpoint_start(sb, job);
        return;
    }
    if (job->pause_why == SRV_PAUSE_OUTPUT && output_blocked(sb)) {
        sb->parked = job;
        return;
    }
    if (job->pause_why == SRV_PAUSE_STDIN && !stdin_ready(sb, job->run_ms)) {
        job->parked_at = ri_clock_mono_ms();
        sb->parked = job;
        return;
    }
    atomic_store(&sb->out_blocked, false);
    srv_resubmit(sb->s, job);
}

void srv_sched_unpark(srv_sandbox *sb) {
    if (!sb->parked && sb->hib_proc && sb->hibernated && !sb->job) {
        /* hibernated with its process: what it waits for wakes the sandbox (wake_done
         * parks it again and unparks it) */
        srv_job *job = sb->hib_proc;
        bool ready = job->pause_why == SRV_PAUSE_STDIN
                         ? stdin_ready(sb, job->run_ms + (ri_clock_mono_ms() - job->parked_at))
                         : !output_blocked(sb);
        if (ready) srv_start_wake(sb);
        return;
    }
    if (!sb->parked) return;
    srv_job *job = sb->parked;
    if (job->pause_why == SRV_PAUSE_STDIN) {
        int64_t now = ri_clock_mono_ms();
        if (!stdin_ready(sb, job->run_ms + (now - job->parked_at))) return;
        job->run_ms += now - job->parked_at;
    } else if (output_blocked(sb)) {
        return;
    }
    sb->parked = NULL;
    atomic_store(&sb->out_blocked, false);
    srv_resubmit(sb->s, job);
}

void srv_sched_tick(srv *s, int64_t now) {
    pthread_mutex_lock(&s->q_lock);
    bool others_wait = s->exec_waiting > 0;
    pthread_mutex_unlock(&s->q_lock);
    for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) {
        if (sb->parked || sb->hib_proc) srv_sched_unpark(sb);
        srv_job *job = sb->job;
        if (!job || job->kind != SRV_JOB_EXECUTION) continue;
        int64_t started = atomic_load(&job->slice_started);
        bool slice_over = others_wait && now - started >= (int64_t)s->cfg.slice_ms;
        bool time_up = now > atomic_load(&job->slice_deadline); /* its slices' time in all */
        if (started && atomic_load(&sb->live_ckpt) && sb->sb) ri_sandbox_interrupt(sb->sb); /* until it pauses */
        if (started && (slice_over || time_up) && !atomic_load(&job->preempt)) {
            atomic_store(&job->preempt, true);
            if (sb->sb) ri_sandbox_interrupt(sb->sb);
        }
        if (sb->conn) continue;
        if (!sb->detached_since) sb->detached_since = now;
        else if (now - sb->detached_since >= (int64_t)s->cfg.detached_grace_ms && !atomic_load(&sb->killed) &&
                 job->wasi && s->checkpoint_path && sb->cfg.enable_checkpoint && !s->stopping) {
            if (!atomic_load(&sb->live_ckpt)) { /* a process is saved as it is, not ended */
                srv_log(s, "info", "detached process checkpointed", "{s:s}", "sandbox_id", sb->id);
                srv_live_checkpoint_request(sb, SRV_CKPT_IDLE);
            }
        } else if (now - sb->detached_since >= (int64_t)s->cfg.detached_grace_ms && !atomic_load(&sb->killed)) {
            srv_log(s, "info", "detached execution ended", "{s:s, s:I}", "sandbox_id", sb->id, "grace_ms",
                    (json_int_t)s->cfg.detached_grace_ms);
            sb->detached_ended = true;
            srv_kill_process(sb);
        }
    }
}
