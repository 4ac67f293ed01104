/* A WebSocket connection: its frames wait in a queue until lws says it is writable, the
 * attached sandbox's output in between (outlog.c); a close is sent once everything before
 * it went out. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

void srv_frame_free(srv *s, srv_frame *f) {
    (void)s;
    free(f);
}

bool srv_conn_send_at(srv_conn *c, char *text, uint64_t mark, uint64_t done_of) {
    if (!text) return false;
    size_t n = strlen(text);
    if (c->closing || !c->wsi) {
        free(text);
        return false;
    }
    if (c->queued + n > SRV_CONN_QUEUE_MAX) { /* a client that never reads */
        free(text);
        srv_log(c->s, "warning", "connection queue full; closing", NULL);
        srv_conn_close(c, 1008);
        return false;
    }
    srv_frame *f = malloc(sizeof *f + LWS_PRE + n);
    if (!f) {
        free(text);
        return false;
    }
    f->next = NULL;
    f->out_mark = mark;
    f->done_of = done_of;
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

/* After the output posted so far; a held connection's frames do not wait for output. */
bool srv_conn_send(srv_conn *c, char *text) {
    uint64_t mark = c->sb && !c->out_held ? c->sb->out_posted : 0;
    return srv_conn_send_at(c, text, mark, 0);
}

void srv_conn_send_status(srv_conn *c, const char *status) { srv_conn_send(c, srv_ev_status(status)); }

void srv_conn_send_error(srv_conn *c, const char *status, const char *message) {
    srv_conn_send(c, srv_ev_status(status));
    srv_conn_send(c, srv_ev_error(message));
}

/* One write per callback (lws's rule): the head frame once the output it follows is out,
 * else the next output event. Output counts as delivered when its lws_write succeeded. */
int srv_conn_writeable(srv_conn *c) {
    struct lws *wsi = c->wsi;
    srv_sandbox *sb = c->sb;
    bool output = srv_output_pending(c);
    srv_frame *f = c->head;
    if (f && (!output || f->out_mark <= sb->out_delivered)) {
        c->head = f->next;
        if (!c->head) c->tail = NULL;
        c->queued -= f->len;
        int w = lws_write(wsi, f->buf + LWS_PRE, f->len, LWS_WRITE_TEXT);
        uint64_t done_of = f->done_of;
        free(f);
        if (w < 0) return -1;
        if (done_of && sb && sb->done_event && sb->done_seq == done_of) { /* the client has its end */
            free(sb->done_event);
            sb->done_event = NULL;
        }
    } else if (output) {
        size_t n;
        char *ev = srv_outlog_event(sb, &n);
        unsigned char *buf = ev ? malloc(LWS_PRE + strlen(ev)) : NULL;
        int w = 0;
        if (buf) {
            size_t len = strlen(ev);
            memcpy(buf + LWS_PRE, ev, len);
            w = lws_write(wsi, buf + LWS_PRE, len, LWS_WRITE_TEXT);
        }
        free(buf);
        free(ev);
        if (w < 0) return -1;
        /* written; or an event that could not be built, given up rather than retried forever */
        srv_outlog_delivered(sb, n ? n : 1);
    } else if (c->closing) {
        lws_close_reason(wsi, (enum lws_close_status)c->close_code, NULL, 0);
        return -1;
    } else {
        return 0;
    }
    if (c->head || c->closing || srv_output_pending(c)) lws_callback_on_writable(wsi);
    return 0;
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
    srv_output_attach(c, (sb->job && sb->job->kind == SRV_JOB_EXECUTION) || sb->hib_proc);
}

void srv_conn_detach(srv_conn *c) {
    srv_sandbox *sb = c->sb;
    if (!sb) return;
    c->sb = NULL;
    c->out_held = false;
    if (sb->conn == c) {
        sb->conn = NULL;
        srv_output_detach(sb); /* what it did not get waits for a reconnect */
    }
    srv_sandbox_unref(sb);
}
