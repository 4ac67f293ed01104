/* A WebSocket connection: its frames wait in a queue until lws says it is writable; a
 * close is sent once everything before it went out. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

/* An execution's output leaves the budget it was counted in when posted (sched.c). */
static void uncount_output(srv *s, srv_sandbox *sb, size_t n) {
    atomic_fetch_sub(&sb->out_bytes, n);
    atomic_fetch_sub(&s->out_bytes, n);
}

void srv_frame_free(srv *s, srv_frame *f) {
    if (f->out_sb) {
        uncount_output(s, f->out_sb, f->len);
        srv_sandbox_unref(f->out_sb);
    }
    free(f);
}

static bool queue_frame(srv_conn *c, char *text, srv_sandbox *out_sb) {
    size_t n = strlen(text);
    if (c->closing || !c->wsi) {
        if (out_sb) uncount_output(c->s, out_sb, n);
        free(text);
        return false;
    }
    if (c->queued + n > SRV_CONN_QUEUE_MAX) { /* a client that never reads */
        if (out_sb) uncount_output(c->s, out_sb, n);
        free(text);
        srv_log(c->s, "warning", "connection queue full; closing", NULL);
        srv_conn_close(c, 1008);
        return false;
    }
    srv_frame *f = malloc(sizeof *f + LWS_PRE + n);
    if (!f) {
        if (out_sb) uncount_output(c->s, out_sb, n);
        free(text);
        return false;
    }
    f->next = NULL;
    f->out_sb = out_sb;
    if (out_sb) srv_sandbox_ref(out_sb);
    f->len = n;
    memcpy(f->buf + LWS_PRE, text, n);
    free(text);
    if (c->tail) c->tail->next = f;
    else c->head = f;
    c->tail = f;
    c->queued += n;
    lws_callback_on_writable(c->wsi);
    return true;
}

bool srv_conn_send(srv_conn *c, char *text) { return text ? queue_frame(c, text, NULL) : false; }

bool srv_conn_send_output(srv_conn *c, char *text, srv_sandbox *sb) { return text ? queue_frame(c, text, sb) : false; }

void srv_conn_send_status(srv_conn *c, const char *status) { srv_conn_send(c, srv_ev_status(status)); }

void srv_conn_send_error(srv_conn *c, const char *status, const char *message) {
    srv_conn_send(c, srv_ev_status(status));
    srv_conn_send(c, srv_ev_error(message));
}

void srv_conn_close(srv_conn *c, int code) {
    if (c->closing) return;
    c->closing = true;
    c->close_code = code;
    c->waiting_lease = false;
    srv_conn_detach(c);
    if (c->wsi) lws_callback_on_writable(c->wsi);
}

void srv_conn_attach(srv_conn *c, srv_sandbox *sb) {
    srv_conn_detach(c);
    srv_sandbox_ref(sb);
    c->sb = sb;
    sb->conn = c;
    sb->detached_since = 0;
}

void srv_conn_detach(srv_conn *c) {
    srv_sandbox *sb = c->sb;
    if (!sb) return;
    c->sb = NULL;
    if (sb->conn == c) sb->conn = NULL;
    if (sb->parked) srv_sched_unpark(sb); /* its output now goes nowhere: nothing to wait for */
    srv_sandbox_unref(sb);
}
