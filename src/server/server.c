/* The lws service loop: HTTP (/status, /metrics), the WebSocket endpoints (/create,
 * /attach/{id}), frame assembly and sending, the tick timer, startup and shutdown. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"

typedef struct srv_pss {
    srv_conn *c;
    char *body;
    size_t body_len;
} srv_pss;

ri_server_config ri_server_config_default(void) {
    ri_server_config c;
    memset(&c, 0, sizeof c);
    c.host = "127.0.0.1";
    c.port = 8080;
    c.workers = 4;
    c.max_sandboxes = 1024;
    c.keep_checkpoints = 3;
    c.lease_ms = 60000;
    c.log_level = RI_SERVER_LOG_INFO;
    c.max_message_bytes = 16u << 20;
    c.max_json_depth = 32;
    c.snapshot_rate = 10;
    c.max_sandbox_memory = 256u << 20;
    c.max_execution_ms = 300000;
    c.max_gas = 100000000000ull;
    c.slice_ms = 100;
    c.detached_grace_ms = 60000;
    c.output_budget = 64u << 20;
    return c;
}

static srv *srv_of(struct lws *wsi) { return lws_context_user(lws_get_context(wsi)); }

void srv_url_token(struct lws *wsi, char *out, size_t cap) {
    char buf[256];
    out[0] = 0;
    const char *v = lws_get_urlarg_by_name(wsi, "sandbox_token=", buf, (int)sizeof buf);
    if (!v) v = lws_get_urlarg_by_name(wsi, "sandbox_token", buf, (int)sizeof buf);
    if (v) snprintf(out, cap, "%s", v);
}

static bool uri_of(struct lws *wsi, char *out, size_t cap) {
    int n = lws_hdr_copy(wsi, out, (int)cap, WSI_TOKEN_GET_URI);
    return n > 0;
}

static int http_reply(struct lws *wsi, srv_pss *pss, unsigned status, const char *ctype, char *body) {
    unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
    size_t len = body ? strlen(body) : 0;
    if (lws_add_http_common_headers(wsi, status, ctype, (lws_filepos_t)len, &p, end) ||
        lws_finalize_write_http_header(wsi, start, &p, end)) {
        free(body);
        return 1;
    }
    pss->body = body;
    pss->body_len = len;
    lws_callback_on_writable(wsi);
    return 0;
}

static void conn_free(srv *s, srv_conn *c) {
    srv_conn_detach(c);
    if (c->prev) c->prev->next = c->next;
    else if (s->conns == c) s->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    s->nconns--;
    srv_conn_forget_parse(c);
    srv_conn_forget_attach(c);
    while (c->head) {
        srv_frame *f = c->head;
        c->head = f->next;
        srv_frame_free(s, f);
    }
    free(c->rx);
    free(c);
}

static void on_established(struct lws *wsi, srv_pss *pss) {
    srv *s = srv_of(wsi);
    srv_conn *c = calloc(1, sizeof *c);
    if (!c) return;
    c->s = s;
    c->wsi = wsi;
    c->opened = ri_clock_mono_ms();
    pss->c = c;
    c->next = s->conns;
    if (s->conns) s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    atomic_fetch_add(&s->m.connections_total, 1);
    char uri[512] = "";
    uri_of(wsi, uri, sizeof uri);
    if (strcmp(uri, "/create") == 0) {
        c->kind = SRV_CONN_CREATE;
        if (s->stopping) {
            srv_conn_send_status(c, "SANDBOX_CREATING");
            srv_conn_send_error(c, "SANDBOX_CREATION_ERROR", "The server is shutting down.");
            srv_conn_close(c, 4000);
        }
        return;
    }
    c->kind = SRV_CONN_ATTACH;
    const char *id = uri + strlen("/attach/");
    char token[256];
    srv_url_token(wsi, token, sizeof token);
    srv_log(s, "info", "attach", "{s:s}", "sandbox_id", srv_id_valid(id) ? id : "(invalid)");
    srv_handle_attach(c, id, token[0] ? token : NULL);
}

static void on_receive(struct lws *wsi, srv_pss *pss, const void *in, size_t len) {
    srv_conn *c = pss->c;
    if (!c) return;
    srv *s = c->s;
    if (c->closing) return;
    if (!c->rx_overflow) {
        /* refused at the first fragment that shows the message will not fit, not after
         * reading it all */
        if (c->rx_len + len + lws_remaining_packet_payload(wsi) > s->cfg.max_message_bytes) {
            c->rx_overflow = true;
            free(c->rx);
            c->rx = NULL;
            c->rx_len = c->rx_cap = 0;
        } else {
            if (c->rx_len + len + 1 > c->rx_cap) {
                /* the frame's announced length at once: a large message is not copied
                 * again and again as its buffer doubles */
                size_t cap = c->rx_len + len + lws_remaining_packet_payload(wsi) + 1;
                if (cap < 4096) cap = 4096;
                if (cap < c->rx_cap * 2 && c->rx_cap * 2 <= s->cfg.max_message_bytes + 1) cap = c->rx_cap * 2;
                char *nb = realloc(c->rx, cap);
                if (!nb) {
                    c->rx_overflow = true;
                    return;
                }
                c->rx = nb;
                c->rx_cap = cap;
            }
            if (len) memcpy(c->rx + c->rx_len, in, len);
            c->rx_len += len;
        }
    }
    if (c->rx_overflow) {
        atomic_fetch_add(&s->m.bad_messages, 1);
        char why[128];
        snprintf(why, sizeof why, "Message too large (limit %zu bytes).", s->cfg.max_message_bytes);
        srv_conn_send(c, srv_ev_error(why));
        srv_conn_close(c, 1009);
        c->rx_overflow = false;
        return;
    }
    if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi) != 0) return;
    size_t n = c->rx_len;
    char *text = c->rx ? c->rx : strdup("");
    if (!text) return;
    text[n] = 0;
    c->rx = NULL; /* the message's text goes with it (a large one to a worker) */
    c->rx_len = c->rx_cap = 0;
    srv_conn_message(c, text, n);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    srv_pss *pss = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        char uri[512] = "";
        if (!uri_of(wsi, uri, sizeof uri)) return 1;
        if (strcmp(uri, "/create") == 0 || strncmp(uri, "/attach/", 8) == 0) return 0;
        return 1;
    }
    case LWS_CALLBACK_ESTABLISHED:
        memset(pss, 0, sizeof *pss);
        on_established(wsi, pss);
        return 0;
    case LWS_CALLBACK_RECEIVE:
        on_receive(wsi, pss, in, len);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return pss->c ? srv_conn_writeable(pss->c) : 0;
    case LWS_CALLBACK_CLOSED:
        if (pss && pss->c) {
            srv *s = srv_of(wsi);
            srv_conn *c = pss->c;
            pss->c = NULL;
            c->wsi = NULL;
            conn_free(s, c);
        }
        return 0;
    case LWS_CALLBACK_HTTP: {
        srv *s = srv_of(wsi);
        memset(pss, 0, sizeof *pss);
        const char *uri = in ? (const char *)in : "";
        if (strcmp(uri, "/status") == 0)
            return http_reply(wsi, pss, HTTP_STATUS_OK, "application/json", srv_status_text(s));
        if (strcmp(uri, "/metrics") == 0)
            return http_reply(wsi, pss, HTTP_STATUS_OK, "text/plain; version=0.0.4", srv_metrics_text(s));
        return http_reply(wsi, pss, HTTP_STATUS_NOT_FOUND, "application/json",
                          strdup("{\"error\":\"not found\"}"));
    }
    case LWS_CALLBACK_HTTP_WRITEABLE: {
        if (!pss || !pss->body) return -1;
        unsigned char *buf = malloc(LWS_PRE + pss->body_len + 1);
        if (!buf) return -1;
        memcpy(buf + LWS_PRE, pss->body, pss->body_len);
        int w = lws_write(wsi, buf + LWS_PRE, pss->body_len, LWS_WRITE_HTTP_FINAL);
        free(buf);
        free(pss->body);
        pss->body = NULL;
        if (w < 0) return -1;
        if (lws_http_transaction_completed(wsi)) return -1;
        return 0;
    }
    case LWS_CALLBACK_CLOSED_HTTP:
        if (pss && pss->body) {
            free(pss->body);
            pss->body = NULL;
        }
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED: {
        srv *s = srv_of(wsi);
        if (s) srv_drain(s);
        if (s && !s->stopping) srv_coord_events(s);
        return 0;
    }
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {"ri-sandbox", callback, sizeof(srv_pss), 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void tick_cb(lws_sorted_usec_list_t *sul) {
    srv *s = lws_container_of(sul, srv, tick);
    srv_drain(s);
    if (!s->stopping) srv_tick(s);
    else
        for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next)
            if (sb->job && (atomic_load(&sb->killed) || atomic_load(&sb->live_ckpt)) && sb->sb)
                ri_sandbox_interrupt(sb->sb);
    lws_sul_schedule(s->ctx, 0, &s->tick, tick_cb, SRV_TICK_MS * LWS_US_PER_MS);
}

static const char bad_server_id[] = "invalid server id (1-63 of A-Z a-z 0-9 . _ -)";

static bool server_id_valid(const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n > 63) return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return false;
    }
    return true;
}

static void lws_log_sink(int level, const char *line) {
    (void)level;
    (void)line; /* lws's own logs are dropped: ours are structured */
}

srv *srv_new_core(const ri_server_config *cfg, char *err, size_t errcap) {
    srv *s = calloc(1, sizeof *s);
    if (!s) return snprintf(err, errcap, "out of memory"), NULL;
    s->cfg = cfg ? *cfg : ri_server_config_default();
    if (!s->cfg.workers) s->cfg.workers = 4;
    if (s->cfg.workers > 64) s->cfg.workers = 64;
    if (!s->cfg.max_sandboxes) s->cfg.max_sandboxes = 1024;
    if (!s->cfg.lease_ms) s->cfg.lease_ms = 60000;
    if (!s->cfg.max_message_bytes) s->cfg.max_message_bytes = 16u << 20;
    if (!s->cfg.max_json_depth) s->cfg.max_json_depth = 32;
    if (!s->cfg.snapshot_rate) s->cfg.snapshot_rate = 10;
    if (!s->cfg.max_sandbox_memory) s->cfg.max_sandbox_memory = 256u << 20;
    if (!s->cfg.host) s->cfg.host = "127.0.0.1";
    if (!s->cfg.max_execution_ms) s->cfg.max_execution_ms = 300000;
    if (!s->cfg.max_gas) s->cfg.max_gas = 100000000000ull;
    if (!s->cfg.slice_ms) s->cfg.slice_ms = 100;
    if (!s->cfg.detached_grace_ms) s->cfg.detached_grace_ms = 60000;
    if (!s->cfg.output_budget) s->cfg.output_budget = 64u << 20;
    pthread_mutex_init(&s->q_lock, NULL);
    pthread_cond_init(&s->q_cond, NULL);
    pthread_mutex_init(&s->log_lock, NULL);
    pthread_mutex_init(&s->lang_lock, NULL);
    pthread_cond_init(&s->lang_cond, NULL);
    atomic_init(&s->stop, false);
    s->m.started_us = ri_clock_mono_us();
    if (s->cfg.server_id) {
        if (!server_id_valid(s->cfg.server_id)) {
            snprintf(err, errcap, "%s", bad_server_id);
            ri_server_free(s);
            return NULL;
        }
        snprintf(s->server_id, sizeof s->server_id, "%s", s->cfg.server_id);
    } else {
        memcpy(s->server_id, "srv-", 4);
        if (!ri_random_hex(s->server_id + 4, 16)) {
            snprintf(err, errcap, "getrandom failed");
            ri_server_free(s);
            return NULL;
        }
    }
    char why[512];
    if (s->cfg.checkpoint_path && s->cfg.checkpoint_path[0]) {
        if (!srv_mkdirs(s->cfg.checkpoint_path, why, sizeof why)) {
            snprintf(err, errcap, "checkpoint path: %s", why);
            ri_server_free(s);
            return NULL;
        }
        s->checkpoint_path = realpath(s->cfg.checkpoint_path, NULL);
        if (!s->checkpoint_path) {
            snprintf(err, errcap, "checkpoint path: %s", strerror(errno));
            ri_server_free(s);
            return NULL;
        }
        srv_clean_temps(s, NULL); /* what a killed server left half-written */
        size_t n = strlen(s->checkpoint_path) + 128;
        s->hibernate_dir = malloc(n);
        if (s->hibernate_dir) snprintf(s->hibernate_dir, n, "%s/_hibernate/%s", s->checkpoint_path, s->server_id);
    } else {
        char tmpl[] = "/tmp/ri-serve-XXXXXX";
        char *d = mkdtemp(tmpl);
        if (d) {
            s->hibernate_dir = strdup(d);
            s->hibernate_dir_temp = true;
        }
    }
    if (s->hibernate_dir && !srv_mkdirs(s->hibernate_dir, why, sizeof why)) {
        free(s->hibernate_dir);
        s->hibernate_dir = NULL;
    }
    if (s->cfg.store_dir) s->store_dir = strdup(s->cfg.store_dir);
    else if (s->checkpoint_path) {
        size_t n = strlen(s->checkpoint_path) + 16;
        s->store_dir = malloc(n);
        if (s->store_dir) snprintf(s->store_dir, n, "%s/_store", s->checkpoint_path);
    }
    s->factory = ri_sandboxes_new();
    s->lang_factory = ri_sandboxes_new();
    if (!s->factory || !s->lang_factory) {
        snprintf(err, errcap, "out of memory");
        ri_server_free(s);
        return NULL;
    }
    srv_lang_imports_read(s);
    if (0) {
    }
    return s;
}

/* What the caller can fix, checked before anything is made: the server id, the TLS files. */
static bool config_valid(const ri_server_config *cfg, char *err, size_t errcap) {
    if (!cfg) return true;
    if (cfg->server_id && !server_id_valid(cfg->server_id))
        return snprintf(err, errcap, "%s", bad_server_id), false;
    if (!cfg->tls_cert && !cfg->tls_key) return true;
#ifndef LWS_WITH_TLS
    return snprintf(err, errcap, "TLS: this build's libwebsockets has no TLS support"), false;
#else
    return srv_tls_check(cfg->tls_cert, cfg->tls_key, err, errcap);
#endif
}

ri_server *ri_server_new(const ri_server_config *cfg, char *err, size_t errcap) {
    return ri_server_open(cfg, NULL, err, errcap);
}

ri_server *ri_server_open(const ri_server_config *cfg, ri_server_errcode *code, char *err, size_t errcap) {
    ri_server_errcode unused;
    if (!code) code = &unused;
    *code = RI_SERVER_BAD_CONFIG;
    if (!config_valid(cfg, err, errcap)) return NULL;
    *code = RI_SERVER_FAILED;
    srv *s = srv_new_core(cfg, err, errcap);
    if (!s) return NULL;
    bool tls = s->cfg.tls_cert != NULL;
    lws_set_log_level(LLL_ERR, lws_log_sink);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | (tls ? LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT : 0);
    info.user = s;
    info.count_threads = 1;
    info.port = CONTEXT_PORT_NO_LISTEN;
    s->ctx = lws_create_context(&info);
    if (!s->ctx) {
        snprintf(err, errcap, "cannot create the lws context");
        ri_server_free(s);
        return NULL;
    }
    char why[256];
    if (!srv_probe_listen(s->cfg.host, s->cfg.port, why, sizeof why)) {
        snprintf(err, errcap, "cannot listen on %s:%d: %s", s->cfg.host, s->cfg.port, why);
        *code = RI_SERVER_BAD_CONFIG; /* the caller picks another address or port */
        ri_server_free(s);
        return NULL;
    }
    memset(&info, 0, sizeof info);
    info.port = s->cfg.port;
    info.iface = s->cfg.host;
    info.protocols = protocols;
    info.vhost_name = "default";
    info.user = s;
    if (tls) { /* the same port serves wss:// and https://; a plain client's handshake fails */
        info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT; /* lws reads it per vhost too */
        info.ssl_cert_filepath = s->cfg.tls_cert;
        info.ssl_private_key_filepath = s->cfg.tls_key;
        info.alpn = "http/1.1"; /* no HTTP/2: WebSocket and /status as over plain ws */
    }
    s->vhost = lws_create_vhost(s->ctx, &info);
    if (!s->vhost) {
        snprintf(err, errcap, "cannot listen on %s:%d%s", s->cfg.host, s->cfg.port,
                 tls ? " (or the TLS setup with the certificate and key failed)" : "");
        ri_server_free(s);
        return NULL;
    }
    s->port = lws_get_vhost_listen_port(s->vhost);
    if (s->cfg.coordinator && !srv_etcd_open(s, err, errcap)) {
        /* a bad --coordinator, or etcd refusing us (auth, TLS): the caller can fix it (etcd
         * merely unreachable is no error: the server starts and waits for it) */
        *code = RI_SERVER_BAD_CONFIG;
        ri_server_free(s);
        return NULL;
    }
    if (!srv_workers_start(s)) {
        snprintf(err, errcap, "cannot start the worker threads");
        ri_server_free(s);
        return NULL;
    }
    return s;
}

int ri_server_port(const ri_server *s) { return s->port; }

void ri_server_stop(ri_server *s) {
    atomic_store(&s->stop, true);
    if (s->ctx) lws_cancel_service(s->ctx);
}

bool ri_server_run(ri_server *s) {
    bool tls = s->cfg.tls_cert != NULL;
    srv_log(s, "info", "listening", "{s:s, s:i, s:s, s:s?, s:i}", "host", s->cfg.host, "port", s->port, "scheme",
            tls ? "wss" : "ws", "checkpoint_path", s->checkpoint_path, "workers", (int)s->nthreads);
    if (!tls && !srv_host_is_loopback(s->cfg.host))
        srv_log(s, "warning", "listening on a non-loopback address without TLS: sandbox tokens and data cross the "
                "network in clear text (use --tls-cert and --tls-key)", "{s:s}", "host", s->cfg.host);
    lws_sul_schedule(s->ctx, 0, &s->tick, tick_cb, SRV_TICK_MS * LWS_US_PER_MS);
    while (!atomic_load(&s->stop))
        if (lws_service(s->ctx, 0) < 0) break;
    s->stopping = true;
    srv_log(s, "info", "shutting down", "{s:i}", "sandboxes", (int)s->nsandboxes);
    for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) {
        if (!sb->job || sb->job->kind != SRV_JOB_EXECUTION) continue;
        /* a WASI process of a sandbox that is saved anyway is saved with it, paused */
        if (sb->job->wasi && s->checkpoint_path && sb->cfg.enable_checkpoint && sb->lease_held)
            srv_live_checkpoint_request(sb, SRV_CKPT_SHUTDOWN);
        else
            srv_kill_process(sb);
    }
    int64_t until = ri_clock_mono_ms() + 15000;
    while (s->jobs_out > 0 && ri_clock_mono_ms() < until) {
        lws_service(s->ctx, 0);
        srv_drain(s);
    }
    srv_drain(s);
    bool saved = true;
    if (s->jobs_out == 0) {
        saved = srv_shutdown_sandboxes(s);
    } else {
        srv_log(s, "error", "shutdown: jobs still running; sandboxes not checkpointed", NULL);
        size_t n = (size_t)snprintf(s->error, sizeof s->error, "shutdown: jobs still running; not saved:");
        for (srv_sandbox *sb = s->sandboxes; sb && n < sizeof s->error; sb = sb->next)
            if (sb->cfg.enable_checkpoint && sb->lease_held)
                n += (size_t)snprintf(s->error + n, sizeof s->error - n, " %s;", sb->id);
        saved = false;
    }
    for (srv_conn *c = s->conns; c; c = c->next) srv_conn_close(c, 1001);
    until = ri_clock_mono_ms() + 2000;
    while (s->nconns > 0 && ri_clock_mono_ms() < until) lws_service(s->ctx, 0);
    srv_log(s, saved ? "info" : "error", "stopped", saved ? NULL : "{s:s}", "error", s->error);
    return saved;
}

const char *ri_server_error(const ri_server *s) { return s->error; }

void ri_server_free(ri_server *s) {
    if (!s) return;
    if (s->nthreads) {
        for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) srv_kill_process(sb);
        srv_workers_stop(s);
    }
    if (s->ctx) {
        srv_etcd_stop_waking(s); /* its watch threads run until srv_etcd_close */
        lws_sul_cancel(&s->tick);
        lws_context_destroy(s->ctx);
        s->ctx = NULL;
    }
    srv_drain(s);
    while (s->sandboxes) srv_sandbox_remove(s->sandboxes);
    srv_etcd_close(s); /* after the releases the removals queued */
    if (s->factory) ri_sandboxes_free(s->factory);
    srv_interpreters_free(s);
    if (s->lang_factory) ri_sandboxes_free(s->lang_factory);
    if (s->hibernate_dir && s->hibernate_dir_temp) srv_remove_tree(s->hibernate_dir);
    free(s->hibernate_dir);
    free(s->checkpoint_path);
    free(s->store_dir);
    pthread_mutex_destroy(&s->q_lock);
    pthread_cond_destroy(&s->q_cond);
    pthread_mutex_destroy(&s->log_lock);
    pthread_mutex_destroy(&s->lang_lock);
    pthread_cond_destroy(&s->lang_cond);
    free(s);
}
