/* The worker pool: jobs run on a few threads; what they produce (events, finished jobs)
 * goes back through one ordered queue, and lws_cancel_service wakes the service thread
 * to send it. The service thread never waits for a worker. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

/* Appends an item to the done queue and wakes the service thread to send it. */
static void post_item(srv *s, srv_item *it) {
    pthread_mutex_lock(&s->q_lock);
    if (s->done_tail) s->done_tail->next = it;
    else s->done_head = it;
    s->done_tail = it;
    pthread_mutex_unlock(&s->q_lock);
    if (s->ctx) lws_cancel_service(s->ctx);
}

/* Control jobs (creates, restores, checkpoints, hibernation, large parses) are short and
 * someone waits for each: every worker takes them first, and one worker takes nothing
 * else, so executions never hold them up. */
static bool is_control(const srv_job *job) { return job->kind != SRV_JOB_EXECUTION && job->kind != SRV_JOB_ACTION; }

static srv_job *take(srv_job **head, srv_job **tail) {
    srv_job *job = *head;
    *head = job->next;
    if (!*head) *tail = NULL;
    return job;
}

typedef struct worker_arg {
    srv *s;
    bool control_only;
} worker_arg;


/* Runs a job taken off the queue, then hands it to the service thread. */
static void run_job(srv *s, srv_job *job) {
    job->next = NULL;
    job->started_us = ri_clock_mono_us();
    if (job->work) job->work(job);
    job->ended_us = ri_clock_mono_us();
    void (*after)(void *) = job->after;
    void *after_ctx = job->after_ctx;
    srv_item *it = &job->item;
    memset(it, 0, sizeof *it);
    it->job = job;
    it->sb = job->sb;
    post_item(s, it); /* from here the service thread owns the job */
    if (after) after(after_ctx);
}

static void *worker_main(void *arg) {
    srv *s = ((worker_arg *)arg)->s;
    bool control_only = ((worker_arg *)arg)->control_only;
    free(arg);
    for (;;) {
        pthread_mutex_lock(&s->q_lock);
        while (!s->ctl_head && (control_only || !s->jobs_head) && !s->workers_quit)
            pthread_cond_wait(&s->q_cond, &s->q_lock);
        srv_job *job = NULL;
        if (s->ctl_head) job = take(&s->ctl_head, &s->ctl_tail);
        else if (!control_only && s->jobs_head) {
            job = take(&s->jobs_head, &s->jobs_tail);
            s->exec_waiting--;
        }
        pthread_mutex_unlock(&s->q_lock);
        if (!job) return NULL;
        run_job(s, job);
    }
}

/* Takes the next job as a worker would (a control job first) and runs it on this thread
 * (the fuzz harness's seam: no worker threads). */
bool srv_run_queued_job(srv *s) {
    pthread_mutex_lock(&s->q_lock);
    srv_job *job = NULL;
    if (s->ctl_head) job = take(&s->ctl_head, &s->ctl_tail);
    else if (s->jobs_head) {
        job = take(&s->jobs_head, &s->jobs_tail);
        s->exec_waiting--;
    }
    pthread_mutex_unlock(&s->q_lock);
    if (job) run_job(s, job);
    return job != NULL;
}

/* cfg.workers general workers and one for control jobs only. */
bool srv_workers_start(srv *s) {
    s->threads = calloc(s->cfg.workers + 1, sizeof *s->threads);
    if (!s->threads) return false;
    for (uint32_t i = 0; i <= s->cfg.workers; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (!a) break;
        a->s = s;
        a->control_only = i == s->cfg.workers;
        if (pthread_create(&s->threads[i], NULL, worker_main, a) != 0) {
            free(a);
            break;
        }
        s->nthreads++;
    }
    return s->nthreads == s->cfg.workers + 1;
}

void srv_workers_stop(srv *s) {
    pthread_mutex_lock(&s->q_lock);
    s->workers_quit = true;
    pthread_cond_broadcast(&s->q_cond);
    pthread_mutex_unlock(&s->q_lock);
    for (uint32_t i = 0; i < s->nthreads; i++) pthread_join(s->threads[i], NULL);
    free(s->threads);
    s->threads = NULL;
    s->nthreads = 0;
}

srv_job *srv_job_new(srv_job_kind kind, srv_sandbox *sb, json_t *msg, void (*work)(srv_job *),
                     void (*done)(srv_job *)) {
    srv_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->kind = kind;
    j->sb = sb;
    j->msg = msg ? json_incref(msg) : NULL;
    j->work = work;
    j->done = done;
    return j;
}

void srv_job_free(srv_job *job) {
    if (!job) return;
    json_decref(job->msg);
    json_decref(job->proc_state);
    free(job->event);
    free(job->data);
    if (job->new_sb) ri_sandbox_free(job->new_sb);
    free(job);
}

static void enqueue_job(srv *s, srv_job *job) {
    job->next = NULL;
    pthread_mutex_lock(&s->q_lock);
    srv_job **head = is_control(job) ? &s->ctl_head : &s->jobs_head;
    srv_job **tail = is_control(job) ? &s->ctl_tail : &s->jobs_tail;
    if (*tail) (*tail)->next = job;
    else *head = job;
    *tail = job;
    if (!is_control(job)) s->exec_waiting++;
    /* broadcast: the control-only worker may be the one woken for an execution */
    pthread_cond_broadcast(&s->q_cond);
    pthread_mutex_unlock(&s->q_lock);
}

void srv_submit(srv *s, srv_job *job) {
    job->submitted_us = ri_clock_mono_us();
    if (job->sb) { /* a parse job belongs to a connection, not a sandbox */
        srv_sandbox_ref(job->sb);
        job->sb->job = job;
        atomic_store(&job->sb->killed, false);
    }
    s->jobs_out++;
    enqueue_job(s, job);
}

void srv_resubmit(srv *s, srv_job *job) { enqueue_job(s, job); }

void srv_post(srv *s, srv_sandbox *sb, char *text) {
    if (!text) return;
    srv_item *it = calloc(1, sizeof *it);
    if (!it) {
        free(text);
        return;
    }
    it->sb = sb;
    it->text = text;
    post_item(s, it);
}

void srv_post_output(srv *s, srv_sandbox *sb, int fd, char *text, size_t len) {
    srv_item *it = text ? calloc(1, sizeof *it) : NULL;
    if (!it) {
        free(text);
        return;
    }
    it->sb = sb;
    it->text = text;
    it->fd = (uint8_t)fd;
    it->len = len;
    /* counted until delivered or dropped: the output budget (sched.c) */
    atomic_fetch_add(&sb->out_bytes, len);
    atomic_fetch_add(&s->out_bytes, len);
    post_item(s, it);
}

void srv_drain(srv *s) {
    for (;;) {
        pthread_mutex_lock(&s->q_lock);
        srv_item *it = s->done_head;
        if (it) {
            s->done_head = it->next;
            if (!s->done_head) s->done_tail = NULL;
        }
        pthread_mutex_unlock(&s->q_lock);
        if (!it) return;
        srv_sandbox *sb = it->sb;
        if (it->job && !sb) { /* a parse job */
            s->jobs_out--;
            if (it->job->done) it->job->done(it->job);
            srv_job_free(it->job);
            continue;
        }
        if (it->job && it->job->paused) { /* a sliced execution: not done yet */
            srv_sched_paused(sb, it->job);
            continue;
        }
        if (it->job) {
            srv_job *job = it->job;
            s->jobs_out--;
            if (sb->job == job) sb->job = NULL;
            srv_sandbox_touch(sb);
            srv_metrics_job_done(s, job); /* before done: a client told of the end sees it counted */
            if (job->done) job->done(job);
            srv_job_free(job);
            if (sb->sb && !sb->job) sb->mem_bytes = ri_sandbox_get_metrics(sb->sb).memory_used_bytes;
            if (sb->kill_pending && !sb->job) srv_finish_kill(sb);
            else srv_pump(sb);
            srv_sandbox_unref(sb);
            continue; /* the item was the job's own */
        } else {
            srv_sandbox_touch(sb);
            if (it->fd) { /* kept on the sandbox until written to a socket (outlog.c) */
                srv_outlog_append(sb, it->fd, it->text, it->len);
            } else if (sb->conn) {
                srv_conn_send(sb->conn, it->text);
            } else {
                free(it->text);
            }
        }
        free(it);
    }
}
