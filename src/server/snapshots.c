/* Snapshot operations over the socket: the snapshotter of seed 004 (snapshot, restore and
 * branch into a NEW sandbox, list with a clamped limit, idempotent delete, cross-session
 * opt-in, audited) and the named snapshots of seed 003 (save, restore, list, delete,
 * diff), on the store of src/store. The session is the sandbox id. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static const char *const snap_actions[] = {"snapshot",   "snapshot_restore", "snapshot_branch", "snapshot_list",
                                           "snapshot_delete", "named_save", "named_restore", "named_list",
                                           "named_delete", "named_diff"};

bool srv_snapshot_action_known(const char *action) {
    for (size_t i = 0; i < sizeof snap_actions / sizeof snap_actions[0]; i++)
        if (strcmp(action, snap_actions[i]) == 0) return true;
    return false;
}

static json_t *rid(srv_job *job) { return json_object_get(job->msg, "request_id"); }

static void audit(void *user, const char *level, const char *message) {
    srv_sandbox *sb = user;
    srv_log(sb->s, level, "cross-session snapshot access", "{s:s, s:s}", "sandbox_id", sb->id, "detail", message);
}

bool srv_store_open(srv_sandbox *sb, ri_snapstore_error *err) {
    if (sb->store) return true;
    ri_snapstore_options o = {.create = true};
    sb->store = ri_snapstore_open(sb->s->store_dir, &o, err);
    if (!sb->store) return false;
    ri_snapshotter_config c = {.session_id = sb->id, .factory = sb->s->factory, .audit = audit, .audit_user = sb};
    sb->snapper = ri_snapshotter_new(sb->store, &c, err);
    if (!sb->snapper) {
        ri_snapstore_close(sb->store);
        sb->store = NULL;
        return false;
    }
    return true;
}

static bool is_rate_limited(const char *action) {
    return strcmp(action, "snapshot") == 0 || strcmp(action, "named_save") == 0;
}

void srv_snapshot_action_prepare(srv_job *job, const char *action) {
    srv_sandbox *sb = job->sb;
    srv *s = sb->s;
    if (!srv_snapshot_action_known(action)) return;
    if (!s->store_dir) {
        job->event = srv_ev_result_err(action, rid(job), "NO_STORE",
                                       "Snapshots are not enabled on the server (no --store or checkpoint path).", NULL);
        return;
    }
    if (is_rate_limited(action) && !srv_rate_ok(sb)) {
        job->event = srv_ev_result_err(action, rid(job), "RATE_LIMITED", "Too many snapshots: try again later.", NULL);
        return;
    }
    if (strcmp(action, "snapshot_restore") == 0 || strcmp(action, "snapshot_branch") == 0) {
        if (s->nsandboxes >= s->cfg.max_sandboxes) {
            job->event = srv_ev_result_err(action, rid(job), "LIMIT", "Too many sandboxes on this server.", NULL);
            return;
        }
        char id[SRV_ID_LEN + 1], token[SRV_TOKEN_HEX + 1];
        srv_sandbox_cfg cfg = sb->cfg;
        cfg.fs_snapshot_name = NULL;
        if (!srv_new_sandbox_id(id) || !ri_random_hex(token, SRV_TOKEN_HEX) ||
            !(job->created = srv_sandbox_new(s, id, token, &cfg))) {
            job->event = srv_ev_result_err(action, rid(job), "INTERNAL", "Cannot create a sandbox.", NULL);
            return;
        }
        srv_sandbox_ref(job->created); /* the job's */
    }
}

static char *store_error(srv_job *job, const char *action, const ri_snapstore_error *e) {
    return srv_ev_result_err(action, rid(job), ri_snapstore_errcode_name(e->code), e->message, NULL);
}

static json_t *info_json(const ri_snapstore_info *i) {
    json_t *tags = json_array();
    for (uint32_t k = 0; k < i->ntags; k++) json_array_append_new(tags, json_string(i->tags[k]));
    char *sha = ri_hex_dup(i->module_sha256, sizeof i->module_sha256);
    json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:o, s:s, s:s, s:s, s:I, s:I}", "name", i->name, "id", i->id,
                          "created_ns", (json_int_t)i->created_ns, "description", i->description ? i->description : "",
                          "tags", tags, "origin_sandbox", i->origin_sandbox, "origin_session", i->origin_session,
                          "module_sha256", sha ? sha : "", "memory_bytes", (json_int_t)i->memory_bytes, "image_bytes",
                          (json_int_t)i->image_bytes);
    free(sha);
    return o;
}

static bool parse_ref(srv_job *job, ri_snapshot_ref *ref, ri_snapstore_error *err) {
    json_t *r = json_object_get(job->msg, "ref");
    char *text = r ? json_dumps(r, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (!text) {
        memset(err, 0, sizeof *err);
        err->code = RI_SNAPSTORE_ERR_INVALID_REF;
        snprintf(err->message, sizeof err->message, "\"ref\" is missing");
        return false;
    }
    bool ok = ri_snapshot_ref_parse(text, strlen(text), ref, err);
    free(text);
    return ok;
}

static ri_snapshots *named_manager(srv_sandbox *sb, ri_snapstore_error *err) {
    ri_snapshots_options o = {.session = sb->id, .no_cache = true};
    return ri_snapshots_new(sb->store, sb->sb, &o, err);
}

static char *named_op(srv_job *job, const char *action) {
    srv_sandbox *sb = job->sb;
    ri_snapstore_error err;
    ri_snapshots *m = named_manager(sb, &err);
    if (!m) return store_error(job, action, &err);
    const char *name = json_string_value(json_object_get(job->msg, "name"));
    char *ev = NULL;
    ri_snapstore_info info;
    memset(&info, 0, sizeof info);
    if (strcmp(action, "named_save") == 0 || strcmp(action, "named_restore") == 0) {
        bool ok;
        if (!name) {
            ev = srv_ev_result_err(action, rid(job), "BAD_REQUEST", "\"name\" must be a string.", NULL);
            goto out;
        }
        if (strcmp(action, "named_save") == 0) {
            const char *desc = json_string_value(json_object_get(job->msg, "description"));
            json_t *tags = json_object_get(job->msg, "tags");
            const char *tv[RI_SNAPSTORE_TAGS_MAX];
            uint32_t nt = 0;
            if (json_is_array(tags)) {
                size_t k;
                json_t *t;
                json_array_foreach(tags, k, t) {
                    if (!json_is_string(t) || nt >= RI_SNAPSTORE_TAGS_MAX) {
                        ev = srv_ev_result_err(action, rid(job), "BAD_REQUEST", "\"tags\": at most 32 strings.", NULL);
                        goto out;
                    }
                    tv[nt++] = json_string_value(t);
                }
            }
            ok = ri_snapshots_save(m, name, desc, tv, nt, &info, &err);
        } else {
            ok = ri_snapshots_restore(m, name, &info, &err);
        }
        ev = ok ? srv_ev_result_ok(action, rid(job), json_pack("{s:o}", "snapshot", info_json(&info)))
                : store_error(job, action, &err);
    } else if (strcmp(action, "named_list") == 0) {
        ri_snapstore_info *list = NULL;
        size_t n = 0;
        if (!ri_snapshots_list(m, &list, &n, &err)) {
            ev = store_error(job, action, &err);
            goto out;
        }
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(arr, info_json(&list[i]));
        ri_snapstore_list_free(list, n);
        ev = srv_ev_result_ok(action, rid(job), json_pack("{s:o}", "snapshots", arr));
    } else if (strcmp(action, "named_delete") == 0) {
        bool deleted = false;
        if (!name) {
            ev = srv_ev_result_err(action, rid(job), "BAD_REQUEST", "\"name\" must be a string.", NULL);
            goto out;
        }
        ev = ri_snapshots_delete(m, name, &deleted, &err)
                 ? srv_ev_result_ok(action, rid(job), json_pack("{s:b}", "deleted", deleted))
                 : store_error(job, action, &err);
    } else { /* named_diff */
        const char *from = json_string_value(json_object_get(job->msg, "from"));
        const char *to = json_string_value(json_object_get(job->msg, "to"));
        if (!from) {
            ev = srv_ev_result_err(action, rid(job), "BAD_REQUEST", "\"from\" must be a string.", NULL);
            goto out;
        }
        ri_snap_diff d;
        memset(&d, 0, sizeof d);
        bool ok = to ? ri_snapshots_diff(m, from, to, NULL, &d, &err)
                     : ri_snapshots_diff_current(m, from, NULL, &d, &err);
        if (!ok) {
            ev = store_error(job, action, &err);
            goto out;
        }
        char *text = ri_snap_diff_json(&d);
        ri_snap_diff_free(&d);
        json_t *dj = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
        free(text);
        ev = srv_ev_result_ok(action, rid(job), json_pack("{s:o}", "diff", dj ? dj : json_null()));
    }
out:
    ri_snapstore_info_free(&info);
    ri_snapshots_free(m);
    return ev;
}

char *srv_snapshot_action(srv_job *job, const char *action) {
    srv_sandbox *sb = job->sb;
    ri_snapstore_error err;
    if (!srv_store_open(sb, &err)) return store_error(job, action, &err);
    if (strncmp(action, "named_", 6) == 0) return named_op(job, action);
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.allow_cross_session = json_is_true(json_object_get(job->msg, "allow_cross_session"));
    if (strcmp(action, "snapshot") == 0) {
        ri_snapshot_ref ref;
        if (!ri_snapshotter_snapshot(sb->snapper, sb->sb, &call, &ref, &err)) return store_error(job, action, &err);
        char *t = ri_snapshot_ref_json(&ref);
        json_t *rj = t ? json_loads(t, 0, NULL) : NULL;
        free(t);
        return srv_ev_result_ok(action, rid(job), json_pack("{s:o}", "ref", rj ? rj : json_null()));
    }
    if (strcmp(action, "snapshot_list") == 0) {
        json_t *lim = json_object_get(job->msg, "limit");
        if (json_is_integer(lim) && json_integer_value(lim) > 0)
            call.limit = json_integer_value(lim) > UINT32_MAX ? UINT32_MAX : (uint32_t)json_integer_value(lim);
        ri_snapshot_ref *refs = NULL;
        size_t n = 0;
        if (!ri_snapshotter_list(sb->snapper, &call, &refs, &n, &err)) return store_error(job, action, &err);
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) {
            char *t = ri_snapshot_ref_json(&refs[i]);
            json_t *rj = t ? json_loads(t, 0, NULL) : NULL;
            free(t);
            if (rj) json_array_append_new(arr, rj);
        }
        free(refs);
        return srv_ev_result_ok(action, rid(job), json_pack("{s:o}", "snapshots", arr));
    }
    ri_snapshot_ref ref;
    if (!parse_ref(job, &ref, &err)) return store_error(job, action, &err);
    if (strcmp(action, "snapshot_delete") == 0) {
        if (!ri_snapshotter_delete(sb->snapper, &ref, &call, &err)) return store_error(job, action, &err);
        return srv_ev_result_ok(action, rid(job), json_pack("{s:b}", "deleted", 1));
    }
    /* restore / branch: a NEW sandbox, with the origin's limits and the I/O functions */
    srv_sandbox *nsb = job->created;
    srv_host_fns *fns = malloc(sizeof *fns);
    if (!fns) return srv_ev_result_err(action, rid(job), "IO", "out of memory", NULL);
    ri_wasi_config wasi;
    ri_sandbox_config cfg = srv_sandbox_full_config(nsb, fns, &wasi);
    call.config = &cfg;
    ri_sandbox *created = strcmp(action, "snapshot_restore") == 0 ? ri_snapshotter_restore(sb->snapper, &ref, &call, &err)
                                                                 : ri_snapshotter_branch(sb->snapper, &ref, &call, &err);
    free(fns);
    if (!created) return store_error(job, action, &err);
    if (nsb->cfg.enable_checkpoint && sb->s->checkpoint_path) {
        char holder[640], why[640] = "out of memory";
        json_t *meta = srv_sandbox_metadata(nsb);
        srv_own own = srv_coord_acquire(sb->s, nsb->id, &job->fence, holder, sizeof holder, why, sizeof why);
        bool ok = own == SRV_OWN_ACQUIRED && meta &&
                  srv_coord_write_meta(sb->s, nsb->id, job->fence, meta, why, sizeof why) == SRV_FENCE_OK;
        json_decref(meta);
        if (!ok) {
            ri_sandbox_free(created);
            return srv_ev_result_err(action, rid(job), "IO", why, NULL);
        }
        job->lease_taken = true;
    }
    job->new_sb = created;
    job->ok = true;
    return srv_ev_result_ok(action, rid(job),
                            json_pack("{s:s, s:s}", "sandbox_id", nsb->id, "sandbox_token", nsb->token));
}

void srv_snapshot_action_done(srv_job *job) {
    srv_sandbox *nsb = job->created;
    if (!nsb) return;
    job->created = NULL;
    if (job->ok && job->new_sb) {
        nsb->sb = job->new_sb;
        job->new_sb = NULL;
        if (job->lease_taken) {
            nsb->lease_held = true;
            nsb->fence = job->fence;
            nsb->lease_renewed = ri_clock_mono_ms();
        }
        srv_log(nsb->s, "info", "sandbox created from a snapshot", "{s:s, s:s}", "sandbox_id", nsb->id, "origin",
                job->sb->id);
    } else {
        if (job->fence) srv_coord_release(nsb->s, nsb->id, job->fence, true); /* taken, then failed */
        srv_sandbox_remove(nsb);
    }
    srv_sandbox_unref(nsb);
}

/* ---- the original's named snapshot: snapshot_filesystem -------------------------------------- */

static void fs_work(srv_job *job) {
    srv_sandbox *sb = job->sb;
    ri_snapstore_error err;
    const char *name = json_string_value(json_object_get(job->msg, "name"));
    if (!name) {
        snprintf(job->message, sizeof job->message, "Invalid snapshot_filesystem message: \"name\" must be a string.");
        return;
    }
    if (!sb->sb) {
        snprintf(job->message, sizeof job->message, "The sandbox is not in memory.");
        return;
    }
    if (!srv_store_open(sb, &err)) {
        snprintf(job->message, sizeof job->message, "%s", err.message);
        return;
    }
    ri_snapshots *m = named_manager(sb, &err);
    if (!m || !ri_snapshots_save(m, name, NULL, NULL, 0, NULL, &err)) {
        snprintf(job->message, sizeof job->message, "%s", err.message);
        if (m) ri_snapshots_free(m);
        return;
    }
    ri_snapshots_free(m);
    job->ok = true;
}

static void fs_done(srv_job *job) {
    srv_conn *c = job->sb->conn;
    if (!c) return;
    if (job->ok) srv_conn_send_status(c, "SANDBOX_FILESYSTEM_SNAPSHOT_CREATED");
    else srv_conn_send_error(c, "SANDBOX_FILESYSTEM_SNAPSHOT_ERROR", job->message);
}

void srv_start_fs_snapshot(srv_sandbox *sb, json_t *msg) {
    srv_conn *c = sb->conn;
    if (c) srv_conn_send_status(c, "SANDBOX_FILESYSTEM_SNAPSHOT_CREATING");
    if (!sb->s->store_dir || !srv_rate_ok(sb)) {
        if (c)
            srv_conn_send_error(c, "SANDBOX_FILESYSTEM_SNAPSHOT_ERROR",
                                sb->s->store_dir ? "Too many snapshots: try again later."
                                                 : "Snapshots are not enabled on the server.");
        return;
    }
    srv_job *job = srv_job_new(SRV_JOB_ACTION, sb, msg, fs_work, fs_done);
    if (job) srv_submit(sb->s, job);
}
