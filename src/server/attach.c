/* /attach/{id}?sandbox_token=T. A sandbox live here is answered at once. Otherwise a worker
 * reads its metadata (coord.c: metadata.json, or etcd), checks the token against the SHA-256
 * in it before anything is restored, and takes the sandbox's ownership (a lease file, or the
 * etcd owner key): the service thread never waits for the volume's lock or for etcd. A
 * sandbox another server holds is handed over when it enabled handoff (the original's order:
 * RESTORING, then LOCK_ACQUIRING and LOCK_ACQUIRED around the wait for the owner, then
 * RUNNING); the wait retries from the tick. */
#include <stdio.h>
#include <string.h>

#include "server_internal.h"

typedef enum attach_outcome {
    ATTACH_ACQUIRED,
    ATTACH_TAKEN,        /* another server owns it (handoff asked for when it allows one) */
    ATTACH_NOT_FOUND,
    ATTACH_DENIED,
    ATTACH_FAILED,       /* job->message says why (corrupt metadata, etcd unavailable, ...) */
} attach_outcome;

static void deny(srv_conn *c) {
    srv_conn_send_error(c, "SANDBOX_PERMISSION_DENIAL_ERROR", "Invalid sandbox token.");
    srv_conn_close(c, 4000);
}

static void not_found(srv_conn *c, bool restoring) {
    if (restoring) srv_conn_send_status(c, "SANDBOX_RESTORING");
    srv_conn_send_status(c, "SANDBOX_NOT_FOUND");
    srv_conn_close(c, 1011);
}

/* A restore that ends before its job: RESTORE_ERROR, close 4000 (RESTORING first, once). */
static void restore_error(srv_conn *c, bool announced, const char *why) {
    if (!announced) srv_conn_send_status(c, "SANDBOX_RESTORING");
    srv_conn_send_error(c, "SANDBOX_RESTORE_ERROR", why);
    srv_conn_close(c, 4000);
}

/* Worker: metadata, token, ownership (and a handoff request on the first try). */
static void attach_work(srv_job *job) {
    srv *s = job->server;
    const char *id = job->attach_id;
    json_t *meta = NULL;
    int r = srv_coord_read_meta(s, id, &meta, job->message, sizeof job->message);
    if (r != SRV_READ_OK) {
        job->attach = r == SRV_READ_NOT_FOUND ? ATTACH_NOT_FOUND : ATTACH_FAILED;
        return;
    }
    const char *want = json_string_value(json_object_get(meta, "token_sha256"));
    if (!job->token_given || !want || strlen(want) != 64 || !srv_hex_equal_ct(want, job->token_hash, 64)) {
        json_decref(meta);
        job->attach = ATTACH_DENIED;
        return;
    }
    job->msg = meta;
    job->handoff = json_is_true(json_object_get(meta, "enable_sandbox_handoff"));
    char holder[640] = "";
    switch (srv_coord_acquire(s, id, &job->fence, holder, sizeof holder, job->message, sizeof job->message)) {
    case SRV_OWN_ACQUIRED: job->attach = ATTACH_ACQUIRED; return;
    case SRV_OWN_TAKEN:
        job->attach = ATTACH_TAKEN;
        /* the owner's client hears SANDBOX_LOCK_RELEASE_REQUESTED (tick.c) */
        if (job->handoff && !job->retry &&
            !srv_coord_request_handoff(s, id, job->message, sizeof job->message))
            job->attach = ATTACH_FAILED;
        return;
    case SRV_OWN_UNAVAILABLE: {
        char detail[sizeof job->message];
        snprintf(detail, sizeof detail, "%s", job->message);
        snprintf(job->message, sizeof job->message, "%s: cannot take sandbox %s: %.900s", SRV_COORD_UNAVAILABLE, id,
                 detail);
        job->attach = ATTACH_FAILED;
        return;
    }
    case SRV_OWN_ERROR: job->attach = ATTACH_FAILED; return;
    }
}

/* The sandbox is ours: made from its metadata, restored on a worker. announced: RESTORING
 * and LOCK_ACQUIRING were sent. */
static void start_restore(srv_conn *c, json_t *meta, int64_t fence, bool handoff, bool announced) {
    srv *s = c->s;
    if (handoff && !announced) {
        srv_conn_send_status(c, "SANDBOX_RESTORING");
        srv_conn_send_status(c, "SANDBOX_LOCK_ACQUIRING");
        announced = true;
    }
    if (handoff) srv_conn_send_status(c, "SANDBOX_LOCK_ACQUIRED");
    srv_sandbox_cfg cfg;
    if (!srv_cfg_from_json(&cfg, meta)) {
        srv_coord_release(s, c->attach_id, fence, false);
        restore_error(c, announced, "Corrupted metadata.json.");
        return;
    }
    cfg.enable_checkpoint = true;
    /* made under other limits (another server, or this one before a restart): this
     * server's caps hold */
    if (cfg.max_execution_ms > s->cfg.max_execution_ms) cfg.max_execution_ms = s->cfg.max_execution_ms;
    if (cfg.max_gas > s->cfg.max_gas) cfg.max_gas = s->cfg.max_gas;
    srv_sandbox *sb = srv_sandbox_new(s, c->attach_id, c->attach_token, &cfg);
    if (!sb) {
        srv_coord_release(s, c->attach_id, fence, false);
        restore_error(c, announced, "Out of memory.");
        return;
    }
    sb->lease_held = true;
    sb->fence = fence;
    sb->lease_renewed = ri_clock_mono_ms();
    srv_conn_attach(c, sb);
    if (!announced) srv_conn_send_status(c, "SANDBOX_RESTORING");
    srv_start_restore(sb);
}

/* Service thread: what the worker found. */
static void attach_done(srv_job *job) {
    srv_conn *c = job->conn;
    srv *s = job->server;
    bool acquired = job->attach == ATTACH_ACQUIRED;
    /* Live here meanwhile (another client restored it on this server): it holds the same
     * ownership, which stays; the client is answered as for a live sandbox. */
    bool live = srv_sandbox_find(s, job->attach_id) != NULL;
    if (c) c->attach_job = NULL;
    if (!c || c->closing) {
        if (acquired && !live) srv_coord_release(s, job->attach_id, job->fence, false);
        return;
    }
    bool announced = job->retry;
    if (live && job->attach != ATTACH_NOT_FOUND && job->attach != ATTACH_DENIED) {
        c->waiting_lease = false;
        srv_handle_attach(c, c->attach_id, c->attach_token[0] ? c->attach_token : NULL);
        return;
    }
    switch ((attach_outcome)job->attach) {
    case ATTACH_NOT_FOUND:
        c->waiting_lease = false;
        not_found(c, !announced); /* deleted meanwhile, when retrying: RESTORING was sent */
        return;
    case ATTACH_DENIED: deny(c); return;
    case ATTACH_FAILED:
        c->waiting_lease = false;
        restore_error(c, announced, job->message);
        return;
    case ATTACH_ACQUIRED:
        c->waiting_lease = false;
        start_restore(c, job->msg, job->fence, job->handoff, announced);
        return;
    case ATTACH_TAKEN: break;
    }
    if (!job->handoff) {
        srv_conn_send_status(c, "SANDBOX_IN_USE");
        srv_conn_close(c, 1011);
        return;
    }
    if (!announced) {
        srv_conn_send_status(c, "SANDBOX_RESTORING");
        srv_conn_send_status(c, "SANDBOX_LOCK_ACQUIRING");
        c->waiting_lease = true;
        c->wait_deadline = ri_clock_mono_ms() + (int64_t)s->cfg.lease_ms + 10000;
        srv_log(s, "info", "handoff requested", "{s:s}", "sandbox_id", c->attach_id);
    }
    if (c->wait_kicked) srv_attach_retry(c); /* released while this lookup ran: at once */
}

/* Hands the lookup to a worker. */
static void submit_attach(srv_conn *c, bool retry) {
    srv_job *job = srv_job_new(SRV_JOB_ATTACH, NULL, NULL, attach_work, attach_done);
    if (!job) {
        c->waiting_lease = false;
        restore_error(c, retry, "Out of memory.");
        return;
    }
    job->server = c->s;
    job->conn = c;
    job->retry = retry;
    c->wait_last_try = ri_clock_mono_ms();
    c->wait_kicked = false; /* this lookup reads the owner as it is now */
    snprintf(job->attach_id, sizeof job->attach_id, "%s", c->attach_id);
    job->token_given = c->attach_token[0] != 0;
    srv_token_hash_hex(c->attach_token, job->token_hash);
    c->attach_job = job;
    srv_submit(c->s, job);
}

void srv_handle_attach(srv_conn *c, const char *id, const char *token) {
    srv *s = c->s;
    srv_sandbox *sb = srv_id_valid(id) ? srv_sandbox_find(s, id) : NULL;
    if (sb) {
        if (!token || !srv_token_equal(sb->token, token)) {
            deny(c);
            return;
        }
        if (sb->conn) {
            srv_conn_send_status(c, "SANDBOX_IN_USE");
            srv_conn_close(c, 1011);
            return;
        }
        srv_conn_attach(c, sb);
        srv_sandbox_touch(sb);
        if (sb->hibernated) srv_start_wake(sb); /* transparent: RUNNING at once, messages wait */
        srv_conn_send_status(c, "SANDBOX_RUNNING");
        return;
    }
    if (!s->checkpoint_path || s->stopping) {
        srv_conn_send_status(c, "SANDBOX_NOT_FOUND");
        srv_conn_close(c, 1011);
        return;
    }
    if (!srv_id_valid(id)) { /* never touches a path */
        not_found(c, true);
        return;
    }
    if (c->attach_job) return; /* already looking (a retry that found it live meanwhile) */
    if (id != c->attach_id) snprintf(c->attach_id, sizeof c->attach_id, "%s", id);
    /* A token of another length can never match (the metadata's hash is of SRV_TOKEN_HEX
     * characters): kept empty, so that it is denied once the sandbox is found. */
    if (token != c->attach_token) {
        bool fits = token && strlen(token) == SRV_TOKEN_HEX;
        snprintf(c->attach_token, sizeof c->attach_token, "%s", fits ? token : "");
    }
    submit_attach(c, false);
}

/* Called from the tick while the connection waits for the owner to let go. */
void srv_attach_retry(srv_conn *c) {
    srv *s = c->s;
    if (ri_clock_mono_ms() > c->wait_deadline) {
        c->waiting_lease = false;
        restore_error(c, true, "Timed out waiting for the owning server to release the sandbox.");
        return;
    }
    if (c->attach_job) return; /* one lookup at a time */
    /* live here meanwhile (another client attached it on this server): answered as a
     * live sandbox (RUNNING, IN_USE) */
    if (srv_sandbox_find(s, c->attach_id)) {
        c->waiting_lease = false;
        srv_handle_attach(c, c->attach_id, c->attach_token[0] ? c->attach_token : NULL);
        return;
    }
    submit_attach(c, true);
}

void srv_conn_forget_attach(srv_conn *c) {
    if (c->attach_job) c->attach_job->conn = NULL;
    c->attach_job = NULL;
}
