/* Client messages on an attached socket: the original's protocol (executions, stdin,
 * kill_process, kill_sandbox, reconnect, checkpoint, snapshot_filesystem) and our actions.
 * Messages that need the sandbox while a short job runs wait in order; those that must
 * answer at once (kill, stdin, reconnect, conflicts with a running execution) do. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static bool exec_running(srv_sandbox *sb) {
    /* (or held aside while its sandbox is hibernated) */
    return (sb->job && sb->job->kind == SRV_JOB_EXECUTION) || sb->hib_proc;
}

static const char *str(json_t *msg, const char *k) { return json_string_value(json_object_get(msg, k)); }

static void bad_request(srv_sandbox *sb, const char *why) {
    atomic_fetch_add(&sb->s->m.bad_messages, 1);
    if (!sb->conn) return;
    srv_conn_send_error(sb->conn, "SANDBOX_EXECUTION_ERROR", why);
    if (!exec_running(sb)) srv_conn_send_status(sb->conn, "SANDBOX_EXECUTION_DONE");
}

bool srv_rate_ok(srv_sandbox *sb) {
    int64_t now = ri_clock_mono_ms();
    if (now - sb->rate_window >= 1000) {
        sb->rate_window = now;
        sb->rate_count = 0;
    }
    return ++sb->rate_count <= sb->s->cfg.snapshot_rate;
}

/* Runs a message now (nothing runs on the sandbox). */
static void run_message(srv_sandbox *sb, json_t *msg) {
    srv_conn *c = sb->conn;
    const char *action = str(msg, "action");
    if (action && strcmp(action, "checkpoint") == 0) {
        if (c) srv_conn_send_status(c, "SANDBOX_CHECKPOINTING");
        if (!sb->s->checkpoint_path || !sb->cfg.enable_checkpoint) {
            atomic_fetch_add(&sb->s->m.checkpoint_failures, 1);
            if (c) {
                srv_conn_send_error(c, "SANDBOX_CHECKPOINT_ERROR",
                                    sb->s->checkpoint_path ? "Checkpointing is not enabled for this sandbox."
                                                           : "Checkpointing is not enabled on the server.");
                srv_conn_close(c, 4000);
            }
            return;
        }
        srv_start_checkpoint(sb, SRV_CKPT_CLIENT);
        return;
    }
    if (action && strcmp(action, "snapshot_filesystem") == 0) {
        srv_start_fs_snapshot(sb, msg);
        return;
    }
    if (action && srv_action_known(action)) {
        srv_start_action(sb, msg);
        return;
    }
    if (action) { /* answered like our actions, so a client matching request_ids hears of it */
        char why[200];
        snprintf(why, sizeof why, "Unknown action: %.100s", action);
        atomic_fetch_add(&sb->s->m.bad_messages, 1);
        if (c) srv_conn_send(c, srv_ev_result_err(action, json_object_get(msg, "request_id"), "BAD_REQUEST", why, NULL));
        return;
    }
    json_t *lang = json_object_get(msg, "language"), *code = json_object_get(msg, "code");
    if (!lang || !code) {
        bad_request(sb, "Invalid message: an execution needs \"language\" and \"code\".");
        return;
    }
    if (!json_is_string(lang) ||
        (strcmp(json_string_value(lang), "wasm") != 0 && srv_language_of(json_string_value(lang)) == RI_LANG_NONE)) {
        char why[300];
        snprintf(why, sizeof why, "Unsupported language: %.100s (this server runs %s)",
                 json_is_string(lang) ? json_string_value(lang) : "?", srv_language_names());
        atomic_fetch_add(&sb->s->m.executions_refused, 1);
        if (c) {
            srv_conn_send_error(c, "SANDBOX_EXECUTION_UNSUPPORTED_LANGUAGE_ERROR", why);
            srv_conn_send_status(c, "SANDBOX_EXECUTION_DONE");
        }
        return;
    }
    if (!json_is_string(code)) {
        atomic_fetch_add(&sb->s->m.executions_refused, 1);
        bad_request(sb, "Invalid code: a base64-encoded WebAssembly module was expected.");
        return;
    }
    srv_start_execution(sb, msg);
}

void srv_pump(srv_sandbox *sb) {
    while (!sb->job && sb->pend_head && !sb->kill_pending) {
        if (sb->removed) {
            while (sb->pend_head) {
                srv_pending *p = sb->pend_head;
                sb->pend_head = p->next;
                json_decref(p->msg);
                free(p);
            }
            sb->pend_tail = NULL;
            sb->npending = 0;
            return;
        }
        if (srv_coord_paused(sb->s, sb)) return; /* the tick or etcd's answer pumps again */
        if (sb->hibernated) {
            srv_start_wake(sb);
            return;
        }
        srv_pending *p = sb->pend_head;
        sb->pend_head = p->next;
        if (!sb->pend_head) sb->pend_tail = NULL;
        sb->npending--;
        run_message(sb, p->msg);
        json_decref(p->msg);
        free(p);
    }
}

static void enqueue(srv_sandbox *sb, json_t *msg) {
    if (sb->npending >= SRV_PENDING_MAX) {
        const char *action = str(msg, "action");
        atomic_fetch_add(&sb->s->m.bad_messages, 1);
        if (action && srv_action_known(action)) {
            if (sb->conn)
                srv_conn_send(sb->conn, srv_ev_result_err(action, json_object_get(msg, "request_id"), "BUSY",
                                                          "Too many queued requests.", NULL));
        } else {
            bad_request(sb, "Too many queued requests.");
        }
        return;
    }
    srv_pending *p = calloc(1, sizeof *p);
    if (!p) return;
    p->msg = json_incref(msg);
    if (sb->pend_tail) sb->pend_tail->next = p;
    else sb->pend_head = p;
    sb->pend_tail = p;
    sb->npending++;
}

static void stdin_message(srv_sandbox *sb, json_t *msg, bool close) {
    srv_conn *c = sb->conn;
    json_t *data = json_object_get(msg, "data");
    if (!close && !json_is_string(data)) {
        if (c) srv_conn_send_error(c, "SANDBOX_STDIN_ERROR", "Invalid stdin message: \"data\" must be a string.");
        return;
    }
    if (!exec_running(sb)) {
        if (c) srv_conn_send_error(c, "SANDBOX_EXECUTION_ERROR", "No process is running in the sandbox.");
        return;
    }
    pthread_mutex_lock(&sb->io_lock);
    if (close) {
        sb->stdin_closed = true;
    } else {
        size_t n = json_string_length(data);
        if (sb->stdin_len + n > SRV_STDIN_MAX) {
            pthread_mutex_unlock(&sb->io_lock);
            if (c) srv_conn_send_error(c, "SANDBOX_STDIN_ERROR", "stdin buffer full: the process is not reading.");
            return;
        }
        uint8_t *nb = realloc(sb->stdin_buf, sb->stdin_len + n + 1);
        if (nb) {
            memcpy(nb + sb->stdin_len, json_string_value(data), n);
            sb->stdin_buf = nb;
            sb->stdin_len += n;
        }
    }
    pthread_cond_broadcast(&sb->io_cond);
    pthread_mutex_unlock(&sb->io_lock);
    if (sb->parked || sb->hib_proc) srv_sched_unpark(sb); /* a WASI process waiting for this input */
}

/* Messages answered at once, whatever runs. true: handled. */
static bool immediate(srv_sandbox *sb, json_t *msg) {
    srv_conn *c = sb->conn;
    const char *action = str(msg, "action");
    const char *event = str(msg, "event");
    if (!action && event && strcmp(event, "stdin") == 0) {
        stdin_message(sb, msg, false);
        return true;
    }
    if (!action && event && strcmp(event, "stdin_close") == 0) {
        stdin_message(sb, msg, true);
        return true;
    }
    if (!action) {
        if (exec_running(sb) && json_object_get(msg, "language")) {
            atomic_fetch_add(&sb->s->m.executions_refused, 1);
            if (c) srv_conn_send_error(c, "SANDBOX_EXECUTION_ERROR", "An execution is already in progress.");
            return true;
        }
        return false;
    }
    if (strcmp(action, "kill_process") == 0) {
        if (c) srv_conn_send_status(c, "SANDBOX_EXECUTION_FORCE_KILLED");
        /* an execution, or one of our execute actions (which may block in ri.read too) */
        if (exec_running(sb) || (sb->job && sb->job->kind == SRV_JOB_ACTION)) srv_kill_process(sb);
        return true;
    }
    if (strcmp(action, "kill_sandbox") == 0) {
        if (c) srv_conn_send_status(c, "SANDBOX_KILLING");
        if (sb->job) {
            sb->kill_pending = true;
            srv_kill_process(sb);
        } else {
            srv_finish_kill(sb);
        }
        return true;
    }
    if (strcmp(action, "reconnect") == 0) { /* resumes where the last socket's writes ended */
        if (c) srv_output_reconnect(c, exec_running(sb));
        return true;
    }
    if (!exec_running(sb)) return false;
    if (strcmp(action, "checkpoint") == 0) {
        if (json_is_true(json_object_get(msg, "live")) && sb->job->wasi) {
            if (c) srv_conn_send_status(c, "SANDBOX_CHECKPOINTING");
            if (!sb->s->checkpoint_path || !sb->cfg.enable_checkpoint) {
                atomic_fetch_add(&sb->s->m.checkpoint_failures, 1);
                if (c)
                    srv_conn_send_error(c, "SANDBOX_CHECKPOINT_ERROR",
                                        sb->s->checkpoint_path ? "Checkpointing is not enabled for this sandbox."
                                                               : "Checkpointing is not enabled on the server.");
                return true;
            }
            srv_live_checkpoint_request(sb, SRV_CKPT_CLIENT);
            return true;
        }
        if (c) {
            srv_conn_send_status(c, "SANDBOX_CHECKPOINTING");
            srv_conn_send_error(c, "SANDBOX_EXECUTION_IN_PROGRESS_ERROR",
                                "Cannot checkpoint while an execution is in progress.");
        }
        return true;
    }
    if (strcmp(action, "snapshot_filesystem") == 0) {
        if (c) {
            srv_conn_send_status(c, "SANDBOX_FILESYSTEM_SNAPSHOT_CREATING");
            srv_conn_send_error(c, "SANDBOX_FILESYSTEM_SNAPSHOT_ERROR",
                                "Cannot snapshot while an execution is in progress.");
        }
        return true;
    }
    if (srv_action_known(action)) {
        if (strcmp(action, "execute") == 0) atomic_fetch_add(&sb->s->m.executions_refused, 1);
        if (c)
            srv_conn_send(c, srv_ev_result_err(action, json_object_get(msg, "request_id"), "EXECUTION_IN_PROGRESS",
                                               "An execution is already in progress.", NULL));
        return true;
    }
    return false;
}

/* init: the parsed message (taken over), or NULL with parse_why saying why. */
static void handle_init(srv_conn *c, json_t *init, const char *parse_why) {
    srv *s = c->s;
    srv_conn_send_status(c, "SANDBOX_CREATING");
    char why[512];
    snprintf(why, sizeof why, "%s", parse_why ? parse_why : "");
    srv_sandbox_cfg cfg;
    const char *fail = NULL;
    char failbuf[600];
    if (!init) {
        snprintf(failbuf, sizeof failbuf, "Invalid init message: %s", why);
        fail = failbuf;
    } else if (!srv_cfg_from_init(&cfg, init, why, sizeof why)) {
        snprintf(failbuf, sizeof failbuf, "%s", why);
        fail = failbuf;
    } else if (cfg.max_memory_bytes > s->cfg.max_sandbox_memory) {
        snprintf(failbuf, sizeof failbuf, "max_memory_bytes %llu is above this server's limit of %llu bytes.",
                 (unsigned long long)cfg.max_memory_bytes, (unsigned long long)s->cfg.max_sandbox_memory);
        fail = failbuf;
        srv_cfg_free(&cfg);
    } else if (cfg.max_execution_ms > s->cfg.max_execution_ms) {
        snprintf(failbuf, sizeof failbuf, "max_execution_ms %u is above this server's limit of %u ms.",
                 cfg.max_execution_ms, s->cfg.max_execution_ms);
        fail = failbuf;
        srv_cfg_free(&cfg);
    } else if (cfg.max_gas > s->cfg.max_gas) {
        snprintf(failbuf, sizeof failbuf, "max_gas %llu is above this server's limit of %llu.",
                 (unsigned long long)cfg.max_gas, (unsigned long long)s->cfg.max_gas);
        fail = failbuf;
        srv_cfg_free(&cfg);
    } else if (cfg.enable_checkpoint && !s->checkpoint_path) {
        fail = "Checkpointing is not enabled on the server.";
        srv_cfg_free(&cfg);
    } else if (cfg.handoff && !cfg.enable_checkpoint) {
        fail = "Sandbox handoff requires checkpointing to be enabled.";
        srv_cfg_free(&cfg);
    } else if (cfg.auto_checkpoint && !cfg.enable_checkpoint) {
        fail = "enable_idle_timeout_auto_checkpoint requires enable_checkpoint.";
        srv_cfg_free(&cfg);
    } else if (s->nsandboxes >= s->cfg.max_sandboxes) {
        fail = "Too many sandboxes on this server.";
        srv_cfg_free(&cfg);
    } else if (s->stopping) {
        fail = "The server is shutting down.";
        srv_cfg_free(&cfg);
    }
    char id[SRV_ID_LEN + 1], token[SRV_TOKEN_HEX + 1];
    if (!fail && (!srv_new_sandbox_id(id) || !ri_random_hex(token, SRV_TOKEN_HEX))) {
        fail = "Cannot draw random bits for the sandbox id.";
        srv_cfg_free(&cfg);
    }
    srv_sandbox *sb = NULL;
    if (!fail && !(sb = srv_sandbox_new(s, id, token, &cfg))) {
        fail = "Out of memory.";
        srv_cfg_free(&cfg);
    }
    if (fail) {
        atomic_fetch_add(&s->m.bad_messages, 1);
        srv_log(s, "warning", "create refused", "{s:s}", "error", fail);
        srv_conn_send_error(c, "SANDBOX_CREATION_ERROR", fail);
        srv_conn_close(c, 4000);
        json_decref(init);
        return;
    }
    srv_conn_attach(c, sb);
    srv_start_create(sb, init);
    json_decref(init);
}

bool srv_conn_wants_message(srv_conn *c) {
    if (c->closing) return false;
    if (c->kind == SRV_CONN_CREATE && !c->init_done) return true;
    return c->sb != NULL; /* waiting for a lease: nothing to act on yet */
}

void srv_handle_parsed(srv_conn *c, json_t *msg, const char *why) {
    atomic_fetch_add(&c->s->m.messages, 1);
    if (!srv_conn_wants_message(c)) {
        json_decref(msg);
        return;
    }
    if (c->kind == SRV_CONN_CREATE && !c->init_done) {
        c->init_done = true;
        handle_init(c, msg, why);
        return;
    }
    srv_sandbox *sb = c->sb;
    srv_sandbox_touch(sb);
    const char *action = msg ? str(msg, "action") : NULL;
    if (c->out_held && !(action && strcmp(action, "reconnect") == 0)) srv_output_release(c, exec_running(sb));
    if (!msg) {
        bad_request(sb, why);
        return;
    }
    srv_sandbox_ref(sb);
    if (!immediate(sb, msg)) {
        if (sb->job || sb->pend_head || sb->hibernated || srv_coord_paused(sb->s, sb)) {
            enqueue(sb, msg);
            srv_pump(sb);
        } else {
            run_message(sb, msg);
        }
    }
    json_decref(msg);
    srv_sandbox_unref(sb);
}
