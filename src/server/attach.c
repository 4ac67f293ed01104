/* /attach/{id}?sandbox_token=T. The token is checked before anything is restored: against
 * the live sandbox, or against the SHA-256 in metadata.json. A sandbox another server
 * holds is handed over when it enabled handoff (the original's order: RESTORING, then
 * LOCK_ACQUIRING and LOCK_ACQUIRED around the wait for the owner, then RUNNING). */
#include <stdio.h>
#include <string.h>

#include "server_internal.h"

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

/* Takes the lease and starts the restore; false while another server holds it.
 * announced: RESTORING and LOCK_ACQUIRING were sent (a sandbox with handoff: the
 * original's lock is taken within the restore). */
static bool try_restore(srv_conn *c, json_t *meta, const char *token, bool announced) {
    srv *s = c->s;
    char holder[128] = "", why[512] = "";
    srv_lease_state st = srv_lease_acquire(s->checkpoint_path, c->attach_id, s->server_id, s->cfg.lease_ms, holder,
                                           sizeof holder, why, sizeof why);
    if (st == SRV_LEASE_HELD_BY_OTHER) return false;
    if (st == SRV_LEASE_ERROR) {
        restore_error(c, announced, why);
        return true;
    }
    if (announced) srv_conn_send_status(c, "SANDBOX_LOCK_ACQUIRED");
    /* a request left by anyone for the previous owner is answered by now */
    srv_handoff_clear(s->checkpoint_path, c->attach_id);
    srv_sandbox_cfg cfg;
    if (!srv_cfg_from_json(&cfg, meta)) {
        srv_lease_release(s->checkpoint_path, c->attach_id, s->server_id);
        restore_error(c, announced, "Corrupted metadata.json.");
        return true;
    }
    cfg.enable_checkpoint = true;
    /* made under other limits (another server, or this one before a restart): this
     * server's caps hold */
    if (cfg.max_execution_ms > s->cfg.max_execution_ms) cfg.max_execution_ms = s->cfg.max_execution_ms;
    if (cfg.max_gas > s->cfg.max_gas) cfg.max_gas = s->cfg.max_gas;
    srv_sandbox *sb = srv_sandbox_new(s, c->attach_id, token, &cfg);
    if (!sb) {
        srv_lease_release(s->checkpoint_path, c->attach_id, s->server_id);
        restore_error(c, announced, "Out of memory.");
        return true;
    }
    sb->lease_held = true;
    sb->lease_renewed = srv_mono_ms();
    srv_conn_attach(c, sb);
    if (!announced) srv_conn_send_status(c, "SANDBOX_RESTORING");
    srv_start_restore(sb);
    return true;
}

/* Reads the metadata and checks the token: NULL when the connection was answered. */
static json_t *checked_metadata(srv_conn *c, const char *token) {
    srv *s = c->s;
    json_t *meta = NULL;
    char why[512];
    int r = srv_volume_read_metadata(s->checkpoint_path, c->attach_id, &meta, why, sizeof why);
    if (r == 1) {
        not_found(c, true);
        return NULL;
    }
    if (r == 2) {
        srv_conn_send_status(c, "SANDBOX_RESTORING");
        srv_conn_send_error(c, "SANDBOX_RESTORE_ERROR", why);
        srv_conn_close(c, 4000);
        return NULL;
    }
    char hash[65];
    srv_token_hash_hex(token ? token : "", hash);
    const char *want = json_string_value(json_object_get(meta, "token_sha256"));
    if (!token || !want || strlen(want) != 64 || !srv_hex_equal_ct(want, hash, 64)) {
        json_decref(meta);
        deny(c);
        return NULL;
    }
    return meta;
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
    snprintf(c->attach_id, sizeof c->attach_id, "%s", id);
    json_t *meta = checked_metadata(c, token);
    if (!meta) return;
    /* the original's order for a sandbox with handoff: RESTORING, then its lock */
    bool handoff = json_is_true(json_object_get(meta, "enable_sandbox_handoff"));
    if (handoff) {
        srv_conn_send_status(c, "SANDBOX_RESTORING");
        srv_conn_send_status(c, "SANDBOX_LOCK_ACQUIRING");
    }
    if (try_restore(c, meta, token, handoff)) {
        json_decref(meta);
        return;
    }
    json_decref(meta);
    /* another server holds it */
    if (!handoff) {
        srv_conn_send_status(c, "SANDBOX_IN_USE");
        srv_conn_close(c, 1011);
        return;
    }
    /* the token matched the metadata's hash (so it is SRV_TOKEN_HEX long) */
    snprintf(c->attach_token, sizeof c->attach_token, "%s", token);
    if (!srv_handoff_request(s->checkpoint_path, id, s->server_id)) {
        restore_error(c, true, "Cannot ask the owning server to release the sandbox.");
        return;
    }
    /* the owner's client hears SANDBOX_LOCK_RELEASE_REQUESTED (tick.c); this one waits */
    c->waiting_lease = true;
    c->wait_deadline = srv_mono_ms() + (int64_t)s->cfg.lease_ms + 10000;
    /* the token is kept as its check result: the retry re-reads the metadata and checks again */
    srv_log(s, "info", "handoff requested", "{s:s}", "sandbox_id", id);
}

/* Called from the tick while the connection waits for the owner to let go. */
void srv_attach_retry(srv_conn *c) {
    srv *s = c->s;
    if (srv_mono_ms() > c->wait_deadline) {
        c->waiting_lease = false;
        restore_error(c, true, "Timed out waiting for the owning server to release the sandbox.");
        return;
    }
    const char *token = c->attach_token;
    /* live here meanwhile (another client attached it on this server): answered as a
     * live sandbox (RUNNING, IN_USE) */
    if (srv_sandbox_find(s, c->attach_id)) {
        c->waiting_lease = false;
        char id[SRV_ID_LEN + 1];
        snprintf(id, sizeof id, "%s", c->attach_id);
        srv_handle_attach(c, id, token[0] ? token : NULL);
        return;
    }
    char why[512];
    json_t *meta = NULL;
    int r = srv_volume_read_metadata(s->checkpoint_path, c->attach_id, &meta, why, sizeof why);
    if (r != 0) {
        c->waiting_lease = false;
        if (r == 1) not_found(c, false); /* deleted meanwhile; RESTORING was sent */
        else restore_error(c, true, why);
        return;
    }
    if (try_restore(c, meta, token, true)) c->waiting_lease = false;
    json_decref(meta);
}
