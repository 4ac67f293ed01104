/* A WebSocket connection: its frames wait in a queue until lws says it is writable; a
 * close is sent once everything before it went out. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

bool srv_conn_send(srv_conn *c, char *text) {
    if (!text) return false;
    if (c->closing || !c->wsi) {
        free(text);
        return false;
    }
    size_t n = strlen(text);
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
}

void srv_conn_detach(srv_conn *c) {
    srv_sandbox *sb = c->sb;
    if (!sb) return;
    c->sb = NULL;
    if (sb->conn == c) sb->conn = NULL;
    srv_sandbox_unref(sb);
}
