/* Client messages are parsed under limits (protocol.c); a large one (a base64 module of
 * up to --max-message-bytes) takes the JSON parser long enough to hold up every other
 * client, so it is parsed on a worker (the control queue: never behind executions).
 * Meanwhile the connection is not read (lws rx flow control), and a message lws had
 * already read waits for it, so a connection's messages keep their order. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static void parse_work(srv_job *job) {
    char why[512] = "";
    json_t *msg = srv_parse_message((const char *)job->data, job->data_len, job->max_bytes, job->max_depth, why,
                                    sizeof why);
    free(job->data);
    job->data = NULL;
    job->msg = msg;
    if (!msg) snprintf(job->message, sizeof job->message, "%s", why);
}

static void run_raw(srv_conn *c);

/* Service thread: the parse is done; the message is handled as if parsed here. */
void srv_parse_done(srv_job *job) {
    srv_conn *c = job->conn;
    if (!c) return; /* the connection closed meanwhile */
    c->parse_job = NULL;
    json_t *msg = job->msg;
    job->msg = NULL;
    srv_handle_parsed(c, msg, msg ? NULL : job->message);
    if (c->wsi && !c->parse_job) lws_rx_flow_control(c->wsi, 1);
    run_raw(c);
}

static void handle_now(srv_conn *c, char *text, size_t len) {
    srv *s = c->s;
    if (len >= SRV_PARSE_OFF_THREAD && srv_conn_wants_message(c)) {
        srv_job *job = srv_job_new(SRV_JOB_PARSE, NULL, NULL, parse_work, srv_parse_done);
        if (job) {
            job->data = (uint8_t *)text;
            job->data_len = len;
            job->max_bytes = s->cfg.max_message_bytes;
            job->max_depth = s->cfg.max_json_depth;
            job->conn = c;
            c->parse_job = job;
            if (c->wsi) lws_rx_flow_control(c->wsi, 0);
            srv_submit(s, job);
            return;
        }
    }
    char why[512] = "";
    json_t *msg = srv_parse_message(text, len, s->cfg.max_message_bytes, s->cfg.max_json_depth, why, sizeof why);
    free(text);
    srv_handle_parsed(c, msg, msg ? NULL : why);
}

/* Messages that arrived while a parse was out, in order, until the next large one. */
static void run_raw(srv_conn *c) {
    while (c->raw_head && !c->parse_job) {
        srv_pending *p = c->raw_head;
        c->raw_head = p->next;
        if (!c->raw_head) c->raw_tail = NULL;
        char *text = p->raw;
        size_t len = p->raw_len;
        free(p);
        handle_now(c, text, len);
    }
}

void srv_conn_message(srv_conn *c, char *text, size_t len) {
    if (!c->parse_job && !c->raw_head) {
        handle_now(c, text, len);
        return;
    }
    srv_pending *p = calloc(1, sizeof *p);
    if (!p) {
        free(text);
        return;
    }
    p->raw = text;
    p->raw_len = len;
    if (c->raw_tail) c->raw_tail->next = p;
    else c->raw_head = p;
    c->raw_tail = p;
}

void srv_conn_forget_parse(srv_conn *c) {
    if (c->parse_job) c->parse_job->conn = NULL;
    c->parse_job = NULL;
    while (c->raw_head) {
        srv_pending *p = c->raw_head;
        c->raw_head = p->next;
        free(p->raw);
        free(p);
    }
    c->raw_tail = NULL;
}
