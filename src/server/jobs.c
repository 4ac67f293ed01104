/* The jobs that move a sandbox between memory and the volume: create, checkpoint, restore
 * (attach of a sandbox not live here), hibernate and wake (memory budget), kill. The
 * heavy part (load, snapshot, fsync, read) runs on a worker; the statuses and the
 * registry change on the service thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"

/* An empty module: a sandbox created without one still snapshots (its page, PRNG...). */
static const uint8_t empty_module[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};

static void fmt_sandbox_error(const ri_sandbox_error *e, char *out, size_t cap) {
    snprintf(out, cap, "%s", e->message[0] ? e->message : ri_sandbox_errcode_name(e->code));
}

/* ---- create ----------------------------------------------------------------------------- */

static void create_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    srv *s = sb->s;
    ri_sandbox_error err;
    ri_sandbox *rsb = srv_sandbox_make(sb, &err);
    if (!rsb) {
        fmt_sandbox_error(&err, job->message, sizeof job->message);
        return;
    }
    const char *mod = json_string_value(json_object_get(json_object_get(job->msg, "sandbox"), "module"));
    if (mod) {
        uint8_t *wasm;
        size_t n;
        if (!ri_base64_decode_lenient(mod, strlen(mod), &wasm, &n)) {
            snprintf(job->message, sizeof job->message, "Invalid init message: \"sandbox.module\" is not base64.");
            ri_sandbox_free(rsb);
            return;
        }
        bool ok = ri_sandbox_load(rsb, wasm, n, &err);
        free(wasm);
        if (!ok) {
            fmt_sandbox_error(&err, job->message, sizeof job->message);
            ri_sandbox_free(rsb);
            return;
        }
    } else if (!ri_sandbox_load(rsb, empty_module, sizeof empty_module, &err)) {
        fmt_sandbox_error(&err, job->message, sizeof job->message);
        ri_sandbox_free(rsb);
        return;
    }
    if (sb->cfg.fs_snapshot_name) {
        ri_snapstore_error serr;
        if (!s->store_dir) {
            snprintf(job->message, sizeof job->message, "Filesystem snapshot is not enabled on the server.");
            ri_sandbox_free(rsb);
            return;
        }
        ri_snapstore_options so = {.create = true};
        ri_snapstore *st = ri_snapstore_open(s->store_dir, &so, &serr);
        uint8_t *img = NULL;
        size_t n = 0;
        ri_snapstore_image_options io = {.include_module = true, .compress = true};
        bool ok = st && ri_snapstore_get_image(st, sb->cfg.fs_snapshot_name, &io, &img, &n, NULL, &serr);
        if (st) ri_snapstore_close(st);
        if (!ok) {
            /* the original's words for an unknown name */
            if (serr.code == RI_SNAPSTORE_ERR_NOT_FOUND)
                snprintf(job->message, sizeof job->message, "Filesystem snapshot not found: %s",
                         sb->cfg.fs_snapshot_name);
            else
                snprintf(job->message, sizeof job->message, "%s", serr.message);
            ri_sandbox_free(rsb);
            return;
        }
        ok = ri_sandbox_restore(rsb, img, n, &err);
        free(img);
        if (!ok) {
            fmt_sandbox_error(&err, job->message, sizeof job->message);
            ri_sandbox_free(rsb);
            return;
        }
    }
    if (sb->cfg.enable_checkpoint) {
        char holder[640] = "", why[640] = "";
        int64_t fence = 0;
        srv_own own = srv_coord_acquire(s, sb->id, &fence, holder, sizeof holder, why, sizeof why);
        if (own != SRV_OWN_ACQUIRED) {
            snprintf(job->message, sizeof job->message, "%s: %s",
                     own == SRV_OWN_UNAVAILABLE ? SRV_COORD_UNAVAILABLE : "Cannot take the sandbox's lease",
                     own == SRV_OWN_TAKEN ? holder : why);
            ri_sandbox_free(rsb);
            return;
        }
        json_t *meta = srv_sandbox_metadata(sb);
        srv_fence_result fr = meta ? srv_coord_write_meta(s, sb->id, fence, meta, why, sizeof why) : SRV_FENCE_ERROR;
        json_decref(meta);
        if (fr != SRV_FENCE_OK) {
            snprintf(job->message, sizeof job->message, "%s: %s",
                     fr == SRV_FENCE_UNAVAILABLE ? SRV_COORD_UNAVAILABLE : "Cannot write the sandbox's metadata",
                     meta ? why : "out of memory");
            srv_volume_remove(s->checkpoint_path, sb->id);
            job->fence = fence; /* released by create_done */
            ri_sandbox_free(rsb);
            return;
        }
        job->lease_taken = true;
        job->fence = fence;
    }
    job->new_sb = rsb;
    job->ok = true;
}

static void create_done(srv_job *job) {
    srv_sandbox *sb = job->sb;
    srv_conn *c = sb->conn;
    if (!job->ok) {
        if (job->fence) srv_coord_release(sb->s, sb->id, job->fence, true);
        srv_log(sb->s, "warning", "create failed", "{s:s, s:s}", "sandbox_id", sb->id, "error", job->message);
        if (c) {
            srv_conn_send_error(c, "SANDBOX_CREATION_ERROR", job->message);
            srv_conn_close(c, 4000);
        }
        srv_sandbox_remove(sb);
        return;
    }
    sb->sb = job->new_sb;
    job->new_sb = NULL;
    if (job->lease_taken) {
        sb->lease_held = true;
        sb->fence = job->fence;
        sb->lease_renewed = ri_clock_mono_ms();
    }
    if (sb->removed) return; /* killed meanwhile */
    srv_log(sb->s, "info", "sandbox created", "{s:s, s:b}", "sandbox_id", sb->id, "checkpoint",
            sb->cfg.enable_checkpoint);
    if (c) {
        /* the lease is the original's lock: taken before the id is told */
        if (job->lease_taken && sb->cfg.handoff) srv_conn_send_status(c, "SANDBOX_LOCK_ACQUIRED");
        srv_conn_send(c, srv_ev_sandbox_id(sb->id, sb->token));
        srv_conn_send_status(c, "SANDBOX_RUNNING");
    }
}

void srv_start_create(srv_sandbox *sb, json_t *init) {
    srv_job *job = srv_job_new(SRV_JOB_CREATE, sb, init, create_work, create_done);
    if (!job) {
        if (sb->conn) {
            srv_conn_send_error(sb->conn, "SANDBOX_CREATION_ERROR", "Out of memory.");
            srv_conn_close(sb->conn, 4000);
        }
        srv_sandbox_remove(sb);
        return;
    }
    /* a sandbox that may be handed over holds the original's lock (our lease) */
    if (sb->cfg.handoff && sb->cfg.enable_checkpoint && sb->conn)
        srv_conn_send_status(sb->conn, "SANDBOX_LOCK_ACQUIRING");
    srv_submit(sb->s, job);
}

/* ---- checkpoint ------------------------------------------------------------------------ */

bool srv_checkpoint_now(srv_sandbox *sb, srv_ckpt_info *info, char *why, size_t cap) {
    srv *s = sb->s;
    memset(info, 0, sizeof *info);
    if (!s->checkpoint_path) return snprintf(why, cap, "Checkpointing is not enabled on the server."), false;
    int64_t t0 = ri_clock_mono_us();
    uint8_t *img = NULL;
    size_t n = 0;
    bool full = true;
    if (sb->sb) {
        /* raw pages by default: zstd costs more time than the disk saves (zero pages are
         * left out either way) */
        ri_snapshot_options o = {.format = RI_SNAPSHOT_V2, .include_module = true,
                                 .uncompressed = !s->cfg.compress_checkpoints};
        ri_sandbox_error err;
        size_t sel_len = 0;
        uint8_t *select = srv_delta_pages(sb, &sel_len);
        /* a delta of the pages changed since the parent and of the workspace's changes
         * since the parent's (delta.c); if it cannot be written, a full image does the job */
        if (select && ri_sandbox_snapshot_pages_on(sb->sb, &o, select, sel_len, sb->delta.parent_sha256,
                                                   sb->delta.parent_len,
                                                   sb->delta.base_is_parent ? sb->delta.base : NULL, &img, &n, &err))
            full = false;
        free(select);
        if (!full && n > sb->delta.parent_len / 2) { /* the changes add up to much of the state */
            free(img);
            img = NULL;
            full = true;
        }
        if (full && !ri_sandbox_snapshot_with(sb->sb, &o, &img, &n, &err))
            return snprintf(why, cap, "Snapshot failed: %s", err.message), false;
    } else if (sb->hibernated) {
        /* the hibernation image is the state: no need to wake the sandbox first */
        int e;
        if (!srv_read_file(sb->hibernate_file, (size_t)8 << 30, &img, &n, &e))
            return snprintf(why, cap, "Cannot read the hibernated sandbox: %s", strerror(e)), false;
    } else {
        return snprintf(why, cap, "The sandbox is not in memory."), false;
    }
    info->delta = !full;
    info->bytes = n;
    int64_t t1 = ri_clock_mono_us();
    info->snapshot_us = t1 - t0;
    /* metadata.json is written when the sandbox is made and, after a full image, to name
     * it; write it again here only if it went missing */
    char mpath[1200];
    struct stat st;
    snprintf(mpath, sizeof mpath, "%s/%s/metadata.json", s->checkpoint_path, sb->id);
    bool ok = true;
    srv_fence_result fr = SRV_FENCE_OK;
    if (stat(mpath, &st) != 0) {
        json_t *meta = srv_sandbox_metadata(sb);
        fr = meta ? srv_coord_write_meta(s, sb->id, sb->fence, meta, why, cap) : SRV_FENCE_ERROR;
        json_decref(meta);
    }
    char *file = info->file;
    if (fr == SRV_FENCE_OK)
        fr = srv_coord_write_checkpoint(s, sb->id, sb->fence, img, n, file, sizeof info->file, why, cap);
    info->fenced = fr == SRV_FENCE_REFUSED;
    if (fr == SRV_FENCE_UNAVAILABLE) {
        char detail[512];
        snprintf(detail, sizeof detail, "%s", why);
        snprintf(why, cap, "%s: the checkpoint was not confirmed: %.400s", SRV_COORD_UNAVAILABLE, detail);
    }
    ok = fr == SRV_FENCE_OK;
    if (ok && full) {
        /* the new parent of later deltas, by its SHA-256: metadata.json names it (after
         * `latest`: a restore trusts the hash only when the names agree) */
        srv_delta_wrote_full(sb, file, img, n);
        json_t *meta = srv_sandbox_metadata(sb);
        char mwhy[640];
        if (!meta || srv_coord_write_meta(s, sb->id, sb->fence, meta, mwhy, sizeof mwhy) != SRV_FENCE_OK)
            srv_log(s, "warning", "cannot name the full image in metadata.json (the next checkpoint is full)",
                    "{s:s}", "sandbox_id", sb->id);
        json_decref(meta);
    }
    free(img);
    info->write_us = ri_clock_mono_us() - t1;
    return ok;
}

/* Pruning after a checkpoint, run by the worker once the reply is on its way. */
typedef struct prune_ctx {
    const char *root; /* the server's, which outlives its workers */
    char id[SRV_ID_LEN + 1];
    char newest[64];
    uint32_t keep;
} prune_ctx;

static void prune_after(void *ctx) {
    prune_ctx *p = ctx;
    srv_volume_prune(p->root, p->id, p->newest, p->keep);
    free(p);
}

static void checkpoint_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    job->ok = srv_checkpoint_now(sb, &job->ckpt, job->message, sizeof job->message);
    /* a live checkpoint: the paused process's output and input beside its image */
    if (job->ok && job->proc_state)
        job->ok = srv_proc_write(sb->s->checkpoint_path, sb->id, job->proc_state, job->ckpt.file, job->message,
                                 sizeof job->message);
    prune_ctx *p = job->ok ? calloc(1, sizeof *p) : NULL;
    if (!p) return; /* no pruning this time: the next checkpoint prunes */
    p->root = sb->s->checkpoint_path;
    snprintf(p->id, sizeof p->id, "%s", sb->id);
    snprintf(p->newest, sizeof p->newest, "%s", job->ckpt.file);
    p->keep = sb->s->cfg.keep_checkpoints;
    job->after = prune_after;
    job->after_ctx = p;
}

static void checkpoint_done(srv_job *job) {
    srv_sandbox *sb = job->sb;
    srv *s = sb->s;
    srv_conn *c = sb->conn;
    if (!job->ok) {
        atomic_fetch_add(&s->m.checkpoint_failures, 1);
        srv_log(s, "error", "checkpoint failed", "{s:s, s:s}", "sandbox_id", sb->id, "error", job->message);
        if (job->ckpt.fenced) { /* another server owns it now: this one stops serving it */
            if (job->reason == SRV_CKPT_HANDOFF) srv_coord_handoff_clear(s, sb->id);
            srv_live_checkpoint_end(sb, false);
            srv_ownership_lost(sb, job->message);
            return;
        }
        /* the sandbox stays live and the last good image stays; a live checkpoint's
         * process runs on, its client stays */
        if (c && job->proc_state) srv_conn_send_error(c, "SANDBOX_CHECKPOINT_ERROR", job->message);
        srv_live_checkpoint_end(sb, false);
        if (s->stopping) srv_kill_process(sb); /* not saved with its process: ended, as others */
        if (c && job->reason == SRV_CKPT_CLIENT && !job->proc_state) {
            srv_conn_send_error(c, "SANDBOX_CHECKPOINT_ERROR", job->message);
            srv_conn_close(c, 4000);
        }
        if (job->reason == SRV_CKPT_HANDOFF) {
            /* the asker times out (SANDBOX_RESTORE_ERROR); the owner's client, told
             * CHECKPOINTING, hears why, and keeps its sandbox here */
            if (c) srv_conn_send_error(c, "SANDBOX_CHECKPOINT_ERROR", job->message);
            srv_coord_handoff_clear(s, sb->id);
        }
        sb->handoff_pending = false;
        return;
    }
    atomic_fetch_add(&s->m.checkpoints, 1);
    srv_log(s, "info", "checkpointed", "{s:s, s:i, s:s, s:s, s:I, s:I, s:I, s:I}", "sandbox_id", sb->id, "reason",
            (int)job->reason, "file", job->ckpt.file, "kind", job->ckpt.delta ? "delta" : "full", "bytes",
            (json_int_t)job->ckpt.bytes, "queued_us", (json_int_t)(job->started_us - job->submitted_us),
            "snapshot_us", (json_int_t)job->ckpt.snapshot_us, "write_us", (json_int_t)job->ckpt.write_us);
    if (job->reason == SRV_CKPT_HANDOFF) srv_coord_handoff_clear(s, sb->id);
    srv_live_checkpoint_end(sb, true); /* its process left with the image */
    if (job->reason == SRV_CKPT_SHUTDOWN) { /* what the shutdown says of every saved sandbox */
        srv_release_lease_announced(sb, false);
        if (c) {
            srv_conn_send_status(c, "SANDBOX_CHECKPOINTED");
            srv_conn_close(c, 1001);
        }
        srv_sandbox_remove(sb);
        return;
    }
    /* A checkpoint ends the sandbox's life here; attach restores it (here or elsewhere).
     * The original's order: the live copy is deleted (its lock released on the way),
     * then CHECKPOINTED. */
    if (c) srv_conn_send_status(c, "SANDBOX_DELETING");
    srv_release_lease_announced(sb, false);
    if (c) {
        srv_conn_send_status(c, "SANDBOX_DELETED");
        srv_conn_send_status(c, "SANDBOX_CHECKPOINTED");
        srv_conn_close(c, 1000);
    }
    srv_sandbox_remove(sb);
}

bool srv_start_checkpoint_with(srv_sandbox *sb, srv_ckpt_reason reason, json_t *proc_state) {
    srv_job *job = srv_job_new(SRV_JOB_CHECKPOINT, sb, NULL, checkpoint_work, checkpoint_done);
    if (!job) {
        json_decref(proc_state);
        return false;
    }
    job->reason = reason;
    job->proc_state = proc_state;
    srv_submit(sb->s, job);
    return true;
}

void srv_start_checkpoint(srv_sandbox *sb, srv_ckpt_reason reason) { srv_start_checkpoint_with(sb, reason, NULL); }

/* ---- restore (attach of a sandbox not live here) ---------------------------------------------- */

static void restore_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    const uint8_t *img = NULL;
    size_t n = 0;
    char latest[64] = "";
    srv_clean_temps(sb->s, sb->id); /* a server killed while checkpointing it left them */
    int r = srv_coord_map_latest(sb->s, sb->id, &img, &n, latest, sizeof latest, job->message, sizeof job->message);
    if (r == 1) {
        /* The metadata was there at attach: a sandbox whose images are gone is a restore
         * error (the original's), unless it was deleted meanwhile (kill_sandbox elsewhere). */
        json_t *meta = NULL;
        char mwhy[256];
        if (srv_volume_read_metadata(sb->s->checkpoint_path, sb->id, &meta, mwhy, sizeof mwhy) == 1)
            job->not_found = true;
        else
            snprintf(job->message, sizeof job->message, "Latest checkpoint not found for sandbox %s.", sb->id);
        json_decref(meta);
        return;
    }
    if (r != 0) return;
    ri_sandbox_error err;
    ri_sandbox *rsb = srv_sandbox_make(sb, &err);
    if (!rsb) {
        fmt_sandbox_error(&err, job->message, sizeof job->message);
        srv_unmap(img, n);
        return;
    }
    /* into a fresh sandbox: a corrupt image (or a delta's missing parent) leaves nothing
     * half-restored */
    if (!srv_delta_restore(sb, rsb, latest, img, n, job->message, sizeof job->message)) {
        ri_sandbox_free(rsb);
        srv_unmap(img, n);
        return;
    }
    srv_unmap(img, n);
    /* a delta was read with its parent (a full image is its own parent) */
    bool with_parent = sb->delta.parent_known && strcmp(sb->delta.parent_file, latest) != 0;
    job->restore_bytes = n + (with_parent ? sb->delta.parent_len : 0);
    /* a process paused by a live checkpoint: its output and input (proc.c) */
    if (ri_sandbox_has_pending_call(rsb)) job->proc_state = srv_proc_read(sb->s->checkpoint_path, sb->id, latest);
    job->new_sb = rsb;
    job->ok = true;
}

static void restore_done(srv_job *job) {
    srv_sandbox *sb = job->sb;
    srv *s = sb->s;
    srv_conn *c = sb->conn;
    if (!job->ok) {
        atomic_fetch_add(&s->m.restore_failures, 1);
        srv_log(s, "warning", "restore failed", "{s:s, s:s, s:b}", "sandbox_id", sb->id, "error", job->message,
                "not_found", job->not_found);
        if (c) {
            if (job->not_found) {
                srv_conn_send_status(c, "SANDBOX_NOT_FOUND");
                srv_conn_close(c, 1011);
            } else {
                srv_conn_send_error(c, "SANDBOX_RESTORE_ERROR", job->message);
                srv_conn_close(c, 4000);
            }
        }
        srv_sandbox_remove(sb);
        return;
    }
    sb->sb = job->new_sb;
    job->new_sb = NULL;
    atomic_fetch_add(&s->m.restores, 1);
    srv_log(s, "info", "sandbox restored", "{s:s}", "sandbox_id", sb->id);
    if (c && !sb->removed) srv_conn_send_status(c, "SANDBOX_RUNNING");
    srv_proc_restored(sb, job->proc_state); /* a paused process goes on */
}

void srv_start_restore(srv_sandbox *sb) {
    srv_job *job = srv_job_new(SRV_JOB_RESTORE, sb, NULL, restore_work, restore_done);
    if (!job) return;
    srv_submit(sb->s, job);
}

/* ---- hibernate and wake (memory budget) ----------------------------------------------------- */

static void hibernate_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    ri_snapshot_options o = {.format = RI_SNAPSHOT_V2, .include_module = true};
    uint8_t *img = NULL;
    size_t n = 0;
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb->sb, &o, &img, &n, &err)) {
        snprintf(job->message, sizeof job->message, "%s", err.message);
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "%s.img", sb->id);
    job->ok = srv_write_atomic(sb->s->hibernate_dir, name, img, n, job->message, sizeof job->message);
    free(img);
}

/* A parked process held aside for the hibernation goes back to its sandbox: parked again,
 * and on if what it waits for came meanwhile. */
static void proc_back(srv_sandbox *sb) {
    srv_job *proc = sb->hib_proc;
    if (!proc) return;
    sb->hib_proc = NULL;
    sb->job = proc;
    sb->parked = proc;
    srv_sched_unpark(sb);
}

static void hibernate_done(srv_job *job) {
    srv_sandbox *sb = job->sb;
    if (!job->ok) {
        srv_log(sb->s, "warning", "hibernation failed", "{s:s, s:s}", "sandbox_id", sb->id, "error", job->message);
        proc_back(sb);
        return;
    }
    snprintf(sb->hibernate_file, sizeof sb->hibernate_file, "%s/%s.img", sb->s->hibernate_dir, sb->id);
    ri_sandbox_free(sb->sb);
    sb->sb = NULL;
    sb->hibernated = true;
    /* the woken memory has no baseline: the next checkpoint is full */
    sb->delta.tracking = false;
    ri_checkpoint_free(sb->delta.base);
    sb->delta.base = NULL;
    sb->delta.base_is_parent = false;
    atomic_fetch_add(&sb->s->m.hibernations, 1);
    srv_log(sb->s, "info", "sandbox hibernated", "{s:s, s:b}", "sandbox_id", sb->id, "process",
            sb->hib_proc != NULL);
}

bool srv_hibernatable(const srv_sandbox *sb) {
    if (!sb->sb || sb->hibernated) return false;
    if (!sb->job) return true;
    /* a WASI process parked (waiting for stdin, or for its client to read): off its worker,
     * its whole state in the sandbox (the paused call, the process's wait) */
    const srv_job *j = sb->job;
    return sb->parked == j && j->kind == SRV_JOB_EXECUTION && j->wasi && j->started && !sb->proc &&
           sb->conn && /* a detached one is woken at once (tick.c): its grace runs in memory */
           !atomic_load(&sb->live_ckpt) && !atomic_load(&sb->killed);
}

void srv_start_hibernate(srv_sandbox *sb) {
    if (!sb->s->hibernate_dir || !srv_hibernatable(sb)) return;
    srv_job *job = srv_job_new(SRV_JOB_HIBERNATE, sb, NULL, hibernate_work, hibernate_done);
    if (!job) return;
    if (sb->job) { /* the parked process waits aside, with the sandbox's image on disk */
        sb->hib_proc = sb->job;
        sb->parked = NULL;
        sb->job = NULL;
    }
    srv_submit(sb->s, job);
}

static void wake_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    uint8_t *img;
    size_t n;
    int e;
    if (!srv_read_file(sb->hibernate_file, (size_t)8 << 30, &img, &n, &e)) {
        snprintf(job->message, sizeof job->message, "Cannot read the hibernated sandbox.");
        return;
    }
    ri_sandbox_error err;
    ri_sandbox *rsb = srv_sandbox_make(sb, &err);
    if (rsb && ri_sandbox_restore(rsb, img, n, &err)) {
        job->new_sb = rsb;
        job->ok = true;
    } else {
        snprintf(job->message, sizeof job->message, "Cannot wake the sandbox: %s", err.message);
        if (rsb) ri_sandbox_free(rsb);
    }
    free(img);
}

static void wake_done(srv_job *job) {
    srv_sandbox *sb = job->sb;
    if (!job->ok) { /* (a held process goes with the sandbox: srv_sandbox_remove) */
        srv_log(sb->s, "error", "wake failed", "{s:s, s:s}", "sandbox_id", sb->id, "error", job->message);
        if (sb->conn) {
            srv_conn_send_error(sb->conn, "SANDBOX_ERROR", job->message);
            srv_conn_close(sb->conn, 4000);
        }
        srv_sandbox_remove(sb);
        return;
    }
    sb->sb = job->new_sb;
    job->new_sb = NULL;
    sb->hibernated = false;
    remove(sb->hibernate_file);
    sb->hibernate_file[0] = 0;
    srv_log(sb->s, "info", "sandbox woken", "{s:s, s:b}", "sandbox_id", sb->id, "process", sb->hib_proc != NULL);
    if (sb->hib_proc) {
        /* the restored sandbox holds the paused call; it pauses as its execution did */
        ri_sandbox_set_pause_on(sb->sb, RI_SUSPEND_ON_INTERRUPT | RI_SUSPEND_ON_YIELD, NULL);
        proc_back(sb);
    }
}

void srv_start_wake(srv_sandbox *sb) {
    if (!sb->hibernated || sb->job) return;
    srv_job *job = srv_job_new(SRV_JOB_WAKE, sb, NULL, wake_work, wake_done);
    if (!job) return;
    bool killed = atomic_load(&sb->killed); /* a kill of the held process (submit clears it) */
    srv_submit(sb->s, job);
    if (killed && sb->hib_proc) atomic_store(&sb->killed, true);
}

/* ---- kill_sandbox --------------------------------------------------------------------------- */

void srv_release_lease_announced(srv_sandbox *sb, bool forget) {
    srv *s = sb->s;
    if (!sb->lease_held || !s->checkpoint_path) return;
    bool tell = sb->conn && sb->cfg.handoff;
    if (tell) srv_conn_send_status(sb->conn, "SANDBOX_LOCK_RELEASING");
    srv_coord_release(s, sb->id, sb->fence, forget);
    sb->lease_held = false;
    if (tell) srv_conn_send_status(sb->conn, "SANDBOX_LOCK_RELEASED");
}

void srv_finish_kill(srv_sandbox *sb) {
    srv *s = sb->s;
    srv_conn *c = sb->conn;
    sb->kill_pending = false;
    if (c) srv_conn_send_status(c, "SANDBOX_DELETING");
    if (s->checkpoint_path && sb->cfg.enable_checkpoint) {
        srv_release_lease_announced(sb, true);
        if (!srv_volume_remove(s->checkpoint_path, sb->id)) {
            srv_log(s, "error", "kill: cannot delete the files", "{s:s}", "sandbox_id", sb->id);
            if (c) {
                srv_conn_send_error(c, "SANDBOX_KILL_ERROR", "Cannot delete the sandbox's stored state.");
                srv_conn_close(c, 4000);
            }
            srv_sandbox_remove(sb);
            return;
        }
    }
    if (c) {
        srv_conn_send_status(c, "SANDBOX_DELETED");
        srv_conn_send_status(c, "SANDBOX_KILLED");
        srv_conn_close(c, 1000);
    }
    srv_log(s, "info", "sandbox deleted", "{s:s}", "sandbox_id", sb->id);
    srv_sandbox_remove(sb);
}
