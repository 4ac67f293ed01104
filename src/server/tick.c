/* The service thread's periodic work (every SRV_TICK_MS): lease renewal, handoff
 * requests, idle timeouts, the memory budget, re-interrupting killed executions, and
 * connections waiting for another server's lease. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static void idle_expired(srv_sandbox *sb) {
    srv *s = sb->s;
    srv_conn *c = sb->conn;
    if (sb->cfg.auto_checkpoint && sb->cfg.enable_checkpoint && s->checkpoint_path) {
        srv_log(s, "info", "idle timeout: checkpointing", "{s:s}", "sandbox_id", sb->id);
        if (c) srv_conn_send_status(c, "SANDBOX_CHECKPOINTING");
        srv_start_checkpoint(sb, SRV_CKPT_IDLE);
        return;
    }
    srv_log(s, "info", "idle timeout: deleting", "{s:s}", "sandbox_id", sb->id);
    if (c) srv_conn_send_status(c, "SANDBOX_DELETING");
    if (s->checkpoint_path && sb->cfg.enable_checkpoint) {
        srv_release_lease_announced(sb, true); /* the original's lock statuses (handoff) */
        srv_volume_remove(s->checkpoint_path, sb->id);
    }
    if (c) {
        srv_conn_send_status(c, "SANDBOX_DELETED");
        srv_conn_close(c, 1000);
    }
    srv_sandbox_remove(sb);
}

static void memory_budget(srv *s, int64_t now) {
    if (!s->cfg.memory_budget || !s->hibernate_dir || now - s->last_pressure < 500) return;
    s->last_pressure = now;
    /* Only sandboxes without a job are handed to the library: a sandbox is used by one
     * thread at a time, and a running one belongs to its worker. Busy ones count with the
     * memory they had when their last job ended. */
    size_t n = 0;
    uint64_t busy = 0;
    for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) {
        if (srv_hibernatable(sb)) n++;
        else if (sb->sb && sb->job && sb->job->kind != SRV_JOB_HIBERNATE) busy += sb->mem_bytes;
    }
    if (n == 0) return;
    ri_sandbox **arr = malloc(n * sizeof *arr);
    srv_sandbox **owners = malloc(n * sizeof *owners);
    if (!arr || !owners) {
        free(arr);
        free(owners);
        return;
    }
    size_t k = 0;
    for (srv_sandbox *sb = s->sandboxes; sb && k < n; sb = sb->next)
        if (srv_hibernatable(sb)) {
            owners[k] = sb;
            arr[k++] = sb->sb;
        }
    int64_t budget = s->cfg.memory_budget > INT64_MAX ? INT64_MAX : (int64_t)s->cfg.memory_budget;
    int64_t available = (uint64_t)budget > busy ? budget - (int64_t)busy : 0;
    ri_pressure_level level = ri_memory_pressure(arr, k, available);
    if (level >= RI_PRESSURE_PRESSURE) {
        ri_pressure_advice adv = ri_advise(level, arr, k, NULL);
        uint64_t used = busy;
        for (size_t j = 0; j < k; j++) used += ri_sandbox_get_metrics(arr[j]).memory_used_bytes;
        /* candidates: the advised sandboxes that are idle (nothing running or waiting, quiet
         * for a moment), least recently active first; only as many as bring the use below
         * the WARNING threshold (70 %) */
        srv_sandbox **cand = calloc(k, sizeof *cand);
        size_t nc = 0;
        for (size_t i = 0; cand && i < adv.ninstance_ids; i++)
            for (size_t j = 0; j < k; j++) {
                srv_sandbox *sb = owners[j];
                if (strcmp(ri_sandbox_id(sb->sb), adv.instance_ids[i]) == 0 && !sb->pend_head &&
                    now - sb->last_activity >= 300)
                    cand[nc++] = sb;
            }
        for (size_t i = 1; i < nc; i++)
            for (size_t j = i; j > 0 && cand[j - 1]->last_activity > cand[j]->last_activity; j--) {
                srv_sandbox *t = cand[j - 1];
                cand[j - 1] = cand[j];
                cand[j] = t;
            }
        for (size_t i = 0; i < nc && used * 100 >= (uint64_t)budget * 70; i++) {
            uint64_t bytes = ri_sandbox_get_metrics(cand[i]->sb).memory_used_bytes;
            srv_log(s, "info", "memory pressure: hibernating", "{s:s, s:s}", "sandbox_id", cand[i]->id, "level",
                    ri_pressure_level_name(level));
            srv_start_hibernate(cand[i]);
            used = used > bytes ? used - bytes : 0;
        }
        free(cand);
        ri_pressure_advice_free(&adv);
    } else if (level == RI_PRESSURE_WARNING) {
        srv_log(s, "warning", "memory above 70% of the budget", "{s:I}", "sandboxes", (json_int_t)k);
    }
    free(arr);
    free(owners);
}

void srv_ownership_lost(srv_sandbox *sb, const char *why) {
    srv *s = sb->s;
    srv_log(s, "error", "lease lost", "{s:s, s:s}", "sandbox_id", sb->id, "error", why);
    sb->lease_held = false; /* nothing to release: it is another server's now, or no one's */
    if (sb->conn) {
        srv_conn_send_error(sb->conn, "SANDBOX_LOCK_RENEWAL_ERROR", why);
        srv_conn_close(sb->conn, 4000);
    }
    srv_kill_process(sb);
    srv_sandbox_remove(sb);
}

/* Another server asked for the sandbox: the checkpoint that hands it over is started. */
static void handoff_check(srv *s, srv_sandbox *sb, int64_t now) {
    if (sb->lease_held && sb->cfg.handoff && !sb->handoff_pending &&
        now - sb->handoff_checked >= (s->etcd ? 0 : 200)) { /* etcd: a local flag the watch sets */
        sb->handoff_checked = now;
        if (srv_coord_handoff_requested(s, sb->id)) {
            srv_log(s, "info", "handoff: releasing", "{s:s}", "sandbox_id", sb->id);
            sb->handoff_pending = true;
            /* the original's order: the request, the checkpoint, a running execution
             * stopped (its DONE follows); the deletion and the lock's release come
             * with the checkpoint's end (jobs.c) */
            if (sb->conn) {
                srv_conn_send_status(sb->conn, "SANDBOX_LOCK_RELEASE_REQUESTED");
                srv_conn_send_status(sb->conn, "SANDBOX_CHECKPOINTING");
            }
            if (sb->job && sb->job->kind == SRV_JOB_EXECUTION && sb->job->wasi) {
                srv_live_checkpoint_request(sb, SRV_CKPT_HANDOFF); /* the process moves too */
            } else if (sb->job && sb->job->kind == SRV_JOB_EXECUTION) {
                if (sb->conn) srv_conn_send_status(sb->conn, "SANDBOX_EXECUTION_FORCE_KILLED");
                srv_kill_process(sb);
            }
        }
    }
    /* a process held hibernated comes back first (then it is saved as a parked one is) */
    if (sb->hib_proc && sb->hibernated && !sb->job && !sb->removed && sb->handoff_pending) srv_start_wake(sb);
    if (sb->handoff_pending && !sb->job && !sb->hib_proc && !sb->removed && (sb->sb || sb->hibernated))
        srv_start_checkpoint(sb, SRV_CKPT_HANDOFF);
}

void srv_tick(srv *s) {
    int64_t now = ri_clock_mono_ms();
    for (srv_conn *c = s->conns, *next; c; c = next) {
        next = c->next;
        if (c->waiting_lease && !c->closing && (!s->etcd || now - c->wait_last_try >= SRV_ETCD_RETRY_MS))
            srv_attach_retry(c);
        else if (c->kind == SRV_CONN_CREATE && !c->init_done && !c->closing &&
                 now - c->opened > SRV_INIT_TIMEOUT_MS) { /* a socket that never says what it wants */
            atomic_fetch_add(&s->m.bad_messages, 1);
            srv_conn_send(c, srv_ev_error("No init message within 30 s."));
            srv_conn_close(c, 1008);
        }
    }
    for (srv_sandbox *sb = s->sandboxes, *next; sb; sb = next) {
        next = sb->next;
        srv_sandbox_ref(sb);
        if (sb->job && atomic_load(&sb->killed) && sb->sb) ri_sandbox_interrupt(sb->sb);
        if (sb->lease_held && s->checkpoint_path && !srv_coord_renew(s, sb, now)) {
            srv_ownership_lost(sb, s->etcd ? "Lost the sandbox: this server's etcd lease ended (another server may "
                                             "own it now)."
                                           : "Lost the sandbox's lease to another server.");
            srv_sandbox_unref(sb);
            continue;
        }
        handoff_check(s, sb, now);
        if (sb->pend_head && !sb->job) srv_pump(sb); /* requests held while ownership was unconfirmed */
        /* a process held hibernated comes back when its sandbox loses its client (then it is
         * ended or saved as a parked one is) */
        if (sb->hib_proc && sb->hibernated && !sb->job && !sb->removed && !sb->conn) srv_start_wake(sb);
        if (!sb->removed && sb->cfg.idle_timeout_s > 0 && !sb->job && !sb->pend_head && sb->sb &&
            now - sb->last_activity > sb->cfg.idle_timeout_s * 1000)
            idle_expired(sb);
        else if (!sb->removed && sb->cfg.idle_timeout_s > 0 && !sb->job && !sb->hib_proc && sb->hibernated &&
                 now - sb->last_activity > sb->cfg.idle_timeout_s * 1000)
            idle_expired(sb);
        srv_sandbox_unref(sb);
    }
    memory_budget(s, now);
    srv_sched_tick(s, now);
}

void srv_tick_coord(srv *s, bool handoffs, bool releases, bool confirmed) {
    int64_t now = ri_clock_mono_ms();
    for (srv_conn *c = releases ? s->conns : NULL, *next; c; c = next) {
        next = c->next;
        if (c->closing) continue;
        if (c->attach_job) c->wait_kicked = true; /* it may have read the owner before the release */
        else if (c->waiting_lease) srv_attach_retry(c);
    }
    for (srv_sandbox *sb = handoffs || confirmed ? s->sandboxes : NULL, *next; sb; sb = next) {
        next = sb->next;
        srv_sandbox_ref(sb);
        if (handoffs && !sb->removed) handoff_check(s, sb, now);
        if (confirmed && sb->pend_head && !sb->job) srv_pump(sb); /* they waited while it was unconfirmed */
        srv_sandbox_unref(sb);
    }
}

/* Shutdown: every live sandbox that enabled checkpointing is checkpointed (synchronously:
 * the workers are idle by now), then leases are released. */
/* Notes a sandbox the shutdown could not save in s->error (the list ri serve prints). */
static void not_saved(srv *s, const char *id, const char *why) {
    size_t n = strlen(s->error);
    if (n == 0) n = (size_t)snprintf(s->error, sizeof s->error, "shutdown: sandboxes not saved:");
    if (n < sizeof s->error) snprintf(s->error + n, sizeof s->error - n, " %s (%s);", id, why);
}

bool srv_shutdown_sandboxes(srv *s) {
    bool all = true;
    for (srv_sandbox *sb = s->sandboxes, *next; sb; sb = next) {
        next = sb->next;
        if (s->checkpoint_path && sb->cfg.enable_checkpoint && sb->lease_held) {
            char why[512];
            srv_ckpt_info info;
            bool ok = srv_checkpoint_now(sb, &info, why, sizeof why);
            if (ok) {
                srv_volume_prune(s->checkpoint_path, sb->id, info.file, s->cfg.keep_checkpoints);
                atomic_fetch_add(&s->m.checkpoints, 1);
                srv_log(s, "info", "shutdown: checkpointed", "{s:s}", "sandbox_id", sb->id);
                if (sb->conn) srv_conn_send_status(sb->conn, "SANDBOX_CHECKPOINTED");
            } else {
                atomic_fetch_add(&s->m.checkpoint_failures, 1);
                srv_log(s, "error", "shutdown: checkpoint failed", "{s:s, s:s}", "sandbox_id", sb->id, "error", why);
                not_saved(s, sb->id, why);
                all = false;
            }
        }
        if (sb->conn) srv_conn_close(sb->conn, 1001);
        srv_sandbox_remove(sb);
    }
    return all;
}
