/* The sandboxes of this server, by id. A sandbox is referenced by the registry, by its
 * attached connection and by its running job; it is freed with its last reference. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_internal.h"

srv_sandbox *srv_sandbox_new(srv *s, const char *id, const char *token, srv_sandbox_cfg *cfg) {
    srv_sandbox *sb = calloc(1, sizeof *sb);
    if (!sb) return NULL;
    if (pthread_mutex_init(&sb->io_lock, NULL) != 0) {
        free(sb);
        return NULL;
    }
    /* read() waits against a monotonic deadline */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&sb->io_cond, &ca);
    pthread_condattr_destroy(&ca);
    sb->s = s;
    snprintf(sb->id, sizeof sb->id, "%s", id);
    snprintf(sb->token, sizeof sb->token, "%s", token);
    sb->cfg = *cfg; /* takes over the strings */
    memset(cfg, 0, sizeof *cfg);
    sb->refs = 1;
    sb->in_registry = true;
    atomic_init(&sb->killed, false);
    sb->next = s->sandboxes;
    if (s->sandboxes) s->sandboxes->prev = sb;
    s->sandboxes = sb;
    s->nsandboxes++;
    srv_sandbox_touch(sb);
    return sb;
}

srv_sandbox *srv_sandbox_find(srv *s, const char *id) {
    for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next)
        if (strcmp(sb->id, id) == 0) return sb;
    return NULL;
}

void srv_sandbox_ref(srv_sandbox *sb) { sb->refs++; }

static void free_sandbox(srv_sandbox *sb) {
    if (sb->snapper) ri_snapshotter_free(sb->snapper);
    if (sb->named) ri_snapshots_free(sb->named);
    if (sb->store) ri_snapstore_close(sb->store);
    if (sb->sb) ri_sandbox_free(sb->sb);
    while (sb->pend_head) {
        srv_pending *p = sb->pend_head;
        sb->pend_head = p->next;
        json_decref(p->msg);
        free(p);
    }
    srv_outlog_clear(sb);
    srv_delta_clear(&sb->delta);
    free(sb->stdin_buf);
    srv_cfg_free(&sb->cfg);
    pthread_mutex_destroy(&sb->io_lock);
    pthread_cond_destroy(&sb->io_cond);
    free(sb);
}

void srv_sandbox_unref(srv_sandbox *sb) {
    if (--sb->refs == 0) free_sandbox(sb);
}

void srv_sandbox_remove(srv_sandbox *sb) {
    if (!sb->in_registry) return;
    srv *s = sb->s;
    sb->in_registry = false;
    sb->removed = true;
    if (sb->prev) sb->prev->next = sb->next;
    else s->sandboxes = sb->next;
    if (sb->next) sb->next->prev = sb->prev;
    sb->prev = sb->next = NULL;
    s->nsandboxes--;
    if (sb->lease_held && s->checkpoint_path) srv_coord_release(s, sb->id, sb->fence, false);
    sb->lease_held = false;
    if (sb->hibernated && sb->hibernate_file[0]) remove(sb->hibernate_file);
    if (sb->conn) srv_conn_detach(sb->conn);
    if (sb->hib_proc) { /* a process held while hibernated ends with its sandbox */
        srv_job *proc = sb->hib_proc;
        sb->hib_proc = NULL;
        s->jobs_out--;
        srv_job_free(proc);
        srv_sandbox_unref(sb); /* its reference */
    }
    srv_sandbox_unref(sb);
}

void srv_sandbox_touch(srv_sandbox *sb) { sb->last_activity = ri_clock_mono_ms(); }

json_t *srv_sandbox_metadata(srv_sandbox *sb) {
    char hash[65];
    srv_token_hash_hex(sb->token, hash);
    json_t *m = json_pack("{s:i, s:s, s:s, s:I}", "version", 1, "sandbox_id", sb->id, "token_sha256", hash,
                          "updated_ms", (json_int_t)ri_clock_wall_ms());
    json_t *c = srv_cfg_to_json(&sb->cfg);
    if (m && c) json_object_update(m, c);
    json_decref(c);
    json_t *full = srv_delta_metadata(sb); /* the full image deltas build on (delta.c) */
    if (m && full) json_object_set(m, "full_image", full);
    json_decref(full);
    return m;
}
