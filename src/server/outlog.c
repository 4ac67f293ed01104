/* The output of a sandbox's executions on its way to the client (docs/SERVER.md,
 * "Executions" and "reconnect"). Output is kept on the sandbox, in order, until it is
 * written to a socket: the attached connection takes it from here, at most
 * SRV_OUT_EVENT_MAX bytes per event, when lws says it is writable, so what was written is
 * known exactly; a socket that drops loses only what it had been given, and the next
 * connection's reconnect goes on from there. Offsets count the bytes since the sandbox was
 * made; a frame other than output carries the offset it must wait for (server_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static void push_chunk(srv_sandbox *sb, srv_outchunk *k) {
    if (sb->out_tail) sb->out_tail->next = k;
    else sb->out_head = k;
    sb->out_tail = k;
}

/* The head chunk leaves (all of it delivered or dropped). */
static void pop_chunk(srv_sandbox *sb) {
    srv_outchunk *k = sb->out_head;
    sb->out_head = k->next;
    if (!sb->out_head) sb->out_tail = NULL;
    free(k->data);
    free(k);
}

/* n bytes of the program's output leave: delivered, dropped or given up. */
static void uncount(srv_sandbox *sb, const srv_outchunk *k, size_t n) {
    if (k->notice) return;
    atomic_fetch_sub(&sb->out_bytes, n);
    if (k->in_budget) atomic_fetch_sub(&sb->s->out_bytes, n);
    sb->out_kept -= n;
    sb->out_delivered += n;
}

bool srv_output_pending(srv_conn *c) { return c->sb && !c->out_held && c->sb->out_head; }

static bool exec_running(const srv_sandbox *sb) {
    /* (or held aside while its sandbox is hibernated) */
    return (sb->job && sb->job->kind == SRV_JOB_EXECUTION) || sb->hib_proc;
}

static bool read_now(const srv_sandbox *sb) { return sb->conn && !sb->conn->out_held; }

static void wake(srv_sandbox *sb) {
    srv_conn *c = sb->conn;
    if (c && c->wsi && srv_output_pending(c)) lws_callback_on_writable(c->wsi);
}

void srv_outlog_append(srv_sandbox *sb, int fd, char *text, size_t len) {
    srv_outchunk *k = calloc(1, sizeof *k);
    if (!k) { /* lost: it leaves the budget as if delivered */
        srv_outchunk tmp = {.len = len, .in_budget = true};
        sb->out_kept += len;
        uncount(sb, &tmp, len);
        sb->out_posted += len;
        free(text);
        return;
    }
    k->data = text;
    k->len = len;
    k->fd = (uint8_t)fd;
    /* the budget is for output that holds up executions: not what waits for a reconnect */
    k->in_budget = read_now(sb) || exec_running(sb);
    if (!k->in_budget) atomic_fetch_sub(&sb->s->out_bytes, len);
    push_chunk(sb, k);
    sb->out_kept += len;
    sb->out_posted += len;
    if (!read_now(sb)) srv_outlog_bound(sb);
    wake(sb);
}

char *srv_outlog_event(srv_sandbox *sb, size_t *n) {
    srv_outchunk *k = sb->out_head;
    *n = 0;
    if (!k) return NULL;
    size_t left = k->len - k->pos, take = left < SRV_OUT_EVENT_MAX ? left : SRV_OUT_EVENT_MAX;
    const unsigned char *p = (const unsigned char *)k->data + k->pos;
    /* end on a character boundary: back off while the next byte continues a character */
    size_t cut = take;
    while (cut < left && cut > 0 && (p[cut] & 0xC0) == 0x80) cut--;
    if (cut > 0) take = cut;
    *n = take;
    return srv_ev_output(k->fd == 2 ? "stderr" : "stdout", (const char *)p, take);
}

void srv_outlog_delivered(srv_sandbox *sb, size_t n) {
    srv_outchunk *k = sb->out_head;
    if (!k) return;
    if (n > k->len - k->pos) n = k->len - k->pos;
    k->pos += n;
    uncount(sb, k, n);
    if (k->pos == k->len) pop_chunk(sb);
    if (sb->parked || sb->hib_proc) srv_sched_unpark(sb); /* its execution may wait for this client to read */
}

void srv_outlog_clear(srv_sandbox *sb) {
    while (sb->out_head) {
        srv_outchunk *k = sb->out_head;
        uncount(sb, k, k->len - k->pos);
        pop_chunk(sb);
    }
    free(sb->done_event);
    sb->done_event = NULL;
}

/* The notice at the head saying how much was dropped (one, updated). */
static void drop_notice(srv_sandbox *sb) {
    char text[160];
    int len = snprintf(text, sizeof text,
                       "[ri serve: %llu bytes of output dropped here: no client read them in time]\n",
                       (unsigned long long)sb->out_dropped);
    if (len <= 0) return;
    srv_outchunk *k = sb->out_head;
    if (!(k && k->notice && k->pos == 0)) {
        k = calloc(1, sizeof *k);
        if (!k) return;
        k->notice = true;
        k->fd = 2;
        k->next = sb->out_head;
        sb->out_head = k;
        if (!sb->out_tail) sb->out_tail = k;
    }
    char *data = strdup(text);
    if (!data) return;
    free(k->data);
    k->data = data;
    k->len = (size_t)len;
}

void srv_outlog_bound(srv_sandbox *sb) {
    if (sb->out_kept <= SRV_OUT_KEEP_MAX) return;
    while (sb->out_kept > SRV_OUT_KEEP_MAX) {
        srv_outchunk *k = sb->out_head;
        if (k && k->notice) k = k->next; /* the notice stays first */
        if (!k) break;
        size_t left = k->len - k->pos, excess = sb->out_kept - SRV_OUT_KEEP_MAX;
        size_t n = left < excess ? left : excess;
        while (n < left && ((unsigned char)k->data[k->pos + n] & 0xC0) == 0x80) n++; /* whole characters */
        k->pos += n;
        uncount(sb, k, n);
        sb->out_dropped += n;
        if (k->pos == k->len) {
            if (k == sb->out_head) {
                pop_chunk(sb);
            } else { /* behind the notice */
                sb->out_head->next = k->next;
                if (sb->out_tail == k) sb->out_tail = sb->out_head;
                free(k->data);
                free(k);
            }
        }
    }
    drop_notice(sb);
}

/* Nobody is attached at the end: what is left waits for a reconnect outside the server's
 * output budget, which is for running executions. */
static void unbudget(srv_sandbox *sb) {
    for (srv_outchunk *k = sb->out_head; k; k = k->next) {
        if (!k->in_budget) continue;
        if (!k->notice) atomic_fetch_sub(&sb->s->out_bytes, k->len - k->pos);
        k->in_budget = false;
    }
}

void srv_output_detach(srv_sandbox *sb) {
    srv_outlog_bound(sb);
    if (!exec_running(sb)) unbudget(sb);
}

void srv_output_attach(srv_conn *c, bool running) {
    srv_sandbox *sb = c->sb;
    c->out_held = sb && (running || sb->out_head || sb->done_event);
}

void srv_output_reconnect(srv_conn *c, bool running) {
    srv_sandbox *sb = c->sb;
    if (!sb) return;
    bool held = c->out_held;
    if (running) {
        /* held: ahead of the rest of the output; else in its place in the queue */
        srv_conn_send_at(c, srv_ev_status("SANDBOX_EXECUTION_RUNNING"), sb->out_delivered, 0);
    } else if (held && sb->done_event) { /* ended while this client was away */
        srv_conn_send_at(c, srv_ev_status("SANDBOX_EXECUTION_RUNNING"), sb->out_delivered, 0);
        srv_conn_send_at(c, strdup(sb->done_event), sb->out_posted, sb->done_seq);
    }
    c->out_held = false;
    wake(sb);
}

void srv_output_release(srv_conn *c, bool running) {
    srv_sandbox *sb = c->sb;
    if (!c->out_held || !sb) return;
    c->out_held = false;
    /* the rest of an ended execution goes only to a reconnect: a client that goes on with
     * something else would take its DONE for the end of what it asks next */
    if (!running && sb->done_event) srv_outlog_clear(sb);
    wake(sb);
}

void srv_output_new_execution(srv_sandbox *sb) {
    if (!sb->conn || sb->conn->out_held) srv_outlog_clear(sb);
    free(sb->done_event);
    sb->done_event = NULL;
    sb->exec_seq++;
}

void srv_output_done(srv_sandbox *sb, char *done_event) {
    free(sb->done_event);
    sb->done_event = done_event;
    sb->done_seq = sb->exec_seq;
    srv_conn *c = sb->conn;
    if (!c || !done_event) {
        unbudget(sb);
        return;
    }
    c->out_held = false; /* attached without a reconnect: it gets the end */
    srv_conn_send_at(c, strdup(done_event), sb->out_posted, sb->done_seq);
    wake(sb);
}
