/* GET /metrics (Prometheus text exposition, histograms included) and GET /status. Every
 * measurement lives in the server instance (srv_metrics); histograms are atomic counts,
 * so a worker or the service thread may observe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/version.h"
#include "server_internal.h"

/* Bucket bounds: microseconds (shown in seconds) and bytes. */
static const uint64_t time_bounds[] = {100,     250,     500,     1000,     2500,     5000,     10000,
                                       25000,   50000,   100000,  250000,   500000,   1000000,  2500000,
                                       5000000, 10000000, 30000000, 60000000, 300000000};
static const uint64_t byte_bounds[] = {4096, 16384, 65536, 262144, 1u << 20, 4u << 20, 16u << 20, 64u << 20,
                                       256u << 20, 1ull << 30, 4ull << 30};
#define NTIME (sizeof time_bounds / sizeof time_bounds[0])
#define NBYTE (sizeof byte_bounds / sizeof byte_bounds[0])
_Static_assert(NTIME <= SRV_HIST_BUCKETS && NBYTE <= SRV_HIST_BUCKETS, "SRV_HIST_BUCKETS too small");

static bool hist_is_time(srv_hist_id h) {
    return h == SRV_HIST_EXEC_RUN || h == SRV_HIST_EXEC_ACTION || h == SRV_HIST_CKPT_TIME || h == SRV_HIST_RESTORE_TIME;
}

void srv_metrics_observe(srv *s, srv_hist_id h, uint64_t value) {
    const uint64_t *b = hist_is_time(h) ? time_bounds : byte_bounds;
    size_t nb = hist_is_time(h) ? NTIME : NBYTE, i = 0;
    while (i < nb && value > b[i]) i++;
    atomic_fetch_add(&s->m.hist[h].n[i], 1);
    atomic_fetch_add(&s->m.hist[h].sum, value);
}

static uint64_t span_us(int64_t from, int64_t to) { return to > from ? (uint64_t)(to - from) : 0; }

static bool is_execute_action(const srv_job *job) {
    const char *a = json_string_value(json_object_get(job->msg, "action"));
    return job->kind == SRV_JOB_ACTION && a && strcmp(a, "execute") == 0;
}

void srv_metrics_job_done(srv *s, const srv_job *job) {
    switch (job->kind) {
    case SRV_JOB_EXECUTION: /* every one that was started, whatever its end */
        srv_metrics_observe(s, SRV_HIST_EXEC_RUN, span_us(job->submitted_us, job->ended_us));
        break;
    case SRV_JOB_ACTION:
        if (is_execute_action(job))
            srv_metrics_observe(s, SRV_HIST_EXEC_ACTION, span_us(job->submitted_us, job->ended_us));
        break;
    case SRV_JOB_CHECKPOINT:
        if (!job->ok) break;
        srv_metrics_observe(s, SRV_HIST_CKPT_TIME, span_us(job->started_us, job->ended_us));
        srv_metrics_observe(s, SRV_HIST_CKPT_BYTES, job->ckpt.bytes);
        break;
    case SRV_JOB_RESTORE:
        if (!job->ok) break;
        srv_metrics_observe(s, SRV_HIST_RESTORE_TIME, span_us(job->started_us, job->ended_us));
        srv_metrics_observe(s, SRV_HIST_RESTORE_BYTES, job->restore_bytes);
        break;
    default:
        break;
    }
}

void srv_count_sandboxes(srv *s, srv_counts *out) {
    memset(out, 0, sizeof *out);
    for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) {
        out->total++;
        if (sb->hibernated) out->hibernated++;
        else if (sb->sb) {
            out->live++;
            /* a sandbox with a job belongs to its worker: its last known size */
            out->memory_bytes += sb->job ? sb->mem_bytes : ri_sandbox_get_metrics(sb->sb).memory_used_bytes;
        }
        if (sb->conn) out->attached++;
        if (sb->job && (sb->job->kind == SRV_JOB_EXECUTION || is_execute_action(sb->job))) out->executing++;
        if (sb->parked) out->paused_for_output++;
    }
}

static double uptime_s(srv *s) { return (double)span_us(s->m.started_us, ri_clock_mono_us()) / 1e6; }

/* A label value with \, " and newlines escaped (the exposition format's rule). */
static void label_value(FILE *f, const char *v) {
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"') fprintf(f, "\\%c", *v);
        else if (*v == '\n') fputs("\\n", f);
        else fputc(*v, f);
    }
}

static void hist_head(FILE *f, const char *name, const char *help) {
    fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
}

/* One histogram series; label: `kind="run",` or "". Cumulative buckets, then _sum, _count
 * (the count is the +Inf bucket as read here, so the two always agree). */
static void hist_series(FILE *f, srv *s, const char *name, const char *label, srv_hist_id h) {
    bool t = hist_is_time(h);
    const uint64_t *b = t ? time_bounds : byte_bounds;
    size_t nb = t ? NTIME : NBYTE;
    uint64_t cum = 0;
    for (size_t i = 0; i <= nb; i++) {
        cum += atomic_load(&s->m.hist[h].n[i]);
        if (i == nb) fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, label, (unsigned long long)cum);
        else if (t) fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, label, (double)b[i] / 1e6, (unsigned long long)cum);
        else fprintf(f, "%s_bucket{%sle=\"%llu\"} %llu\n", name, label, (unsigned long long)b[i], (unsigned long long)cum);
    }
    uint64_t sum = atomic_load(&s->m.hist[h].sum);
    char lb[64] = "";
    if (label[0]) snprintf(lb, sizeof lb, "{%.*s}", (int)strlen(label) - 1, label); /* without its comma */
    if (t) fprintf(f, "%s_sum%s %.6f\n", name, lb, (double)sum / 1e6);
    else fprintf(f, "%s_sum%s %llu\n", name, lb, (unsigned long long)sum);
    fprintf(f, "%s_count%s %llu\n", name, lb, (unsigned long long)cum);
}

char *srv_metrics_text(srv *s) {
    srv_counts n;
    srv_count_sandboxes(s, &n);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
#define G(name, help, v) fprintf(f, "# HELP " name " " help "\n# TYPE " name " gauge\n" name " %llu\n", (unsigned long long)(v))
#define C(name, help, v) fprintf(f, "# HELP " name " " help "\n# TYPE " name " counter\n" name " %llu\n", (unsigned long long)(v))
    fputs("# HELP ri_build_info The server's build: version, libwebsockets, OpenSSL.\n# TYPE ri_build_info gauge\n"
          "ri_build_info{version=\"", f);
    label_value(f, ri_version());
    fputs("\",libwebsockets=\"", f);
    const char *lv = lws_get_library_version(); /* "4.1.6-" when built without a git hash */
    fprintf(f, "%.*s", (int)(strlen(lv) - (strlen(lv) && lv[strlen(lv) - 1] == '-')), lv);
    fputs("\",openssl=\"", f);
    label_value(f, srv_tls_library_version());
    fputs("\"} 1\n", f);
    fprintf(f, "# HELP ri_server_uptime_seconds Time since the server started (monotonic clock).\n"
               "# TYPE ri_server_uptime_seconds gauge\nri_server_uptime_seconds %.3f\n", uptime_s(s));
    G("ri_server_sandboxes_live", "Sandboxes in memory.", n.live);
    G("ri_server_sandboxes_hibernated", "Sandboxes hibernated to disk.", n.hibernated);
    G("ri_server_sandboxes_attached", "Sandboxes with a client attached.", n.attached);
    G("ri_server_connections", "Open WebSocket connections.", s->nconns);
    G("ri_server_executions_running", "Executions running now.", n.executing);
    G("ri_server_sandbox_memory_bytes", "Memory of the live sandboxes.", n.memory_bytes);
    G("ri_server_output_queued_bytes", "Output of executions not yet sent to its client.", atomic_load(&s->out_bytes));
    G("ri_server_executions_paused_for_output", "Executions waiting for their client to read.", n.paused_for_output);
    C("ri_server_executions_total", "Executions started (language/code and execute actions).",
      atomic_load(&s->m.executions));
    C("ri_server_executions_refused_total",
      "Execution requests answered without running (unsupported language, no code, one already running).",
      atomic_load(&s->m.executions_refused));
    C("ri_server_checkpoints_total", "Checkpoints written.", atomic_load(&s->m.checkpoints));
    C("ri_server_checkpoint_failures_total", "Checkpoints that failed.", atomic_load(&s->m.checkpoint_failures));
    C("ri_server_restores_total", "Sandboxes restored from the volume.", atomic_load(&s->m.restores));
    C("ri_server_restore_failures_total", "Restores that failed.", atomic_load(&s->m.restore_failures));
    C("ri_server_hibernations_total", "Sandboxes hibernated under memory pressure.", atomic_load(&s->m.hibernations));
    C("ri_server_messages_total", "Client messages received.", atomic_load(&s->m.messages));
    C("ri_server_bad_messages_total", "Client messages refused.", atomic_load(&s->m.bad_messages));
#undef G
#undef C
    hist_head(f, "ri_server_execution_duration_seconds",
              "Executions from request to end, queue wait included (kind: run = language/code, execute = action).");
    hist_series(f, s, "ri_server_execution_duration_seconds", "kind=\"run\",", SRV_HIST_EXEC_RUN);
    hist_series(f, s, "ri_server_execution_duration_seconds", "kind=\"execute\",", SRV_HIST_EXEC_ACTION);
    hist_head(f, "ri_server_checkpoint_duration_seconds", "Checkpoints written, from snapshot to committed image.");
    hist_series(f, s, "ri_server_checkpoint_duration_seconds", "", SRV_HIST_CKPT_TIME);
    hist_head(f, "ri_server_checkpoint_bytes", "Size of the checkpoint images written (full or delta).");
    hist_series(f, s, "ri_server_checkpoint_bytes", "", SRV_HIST_CKPT_BYTES);
    hist_head(f, "ri_server_restore_duration_seconds", "Restores from the volume, from reading to a live sandbox.");
    hist_series(f, s, "ri_server_restore_duration_seconds", "", SRV_HIST_RESTORE_TIME);
    hist_head(f, "ri_server_restore_bytes", "Bytes of the images a restore read (a delta and its full parent).");
    hist_series(f, s, "ri_server_restore_bytes", "", SRV_HIST_RESTORE_BYTES);
    fclose(f);
    return buf;
}

char *srv_status_text(srv *s) {
    srv_counts n;
    srv_count_sandboxes(s, &n);
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:b, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:I}", "status", "ok",
                          "version", ri_version(), "server_id", s->server_id, "uptime_seconds",
                          (json_int_t)(span_us(s->m.started_us, ri_clock_mono_us()) / 1000000), "tls",
                          s->cfg.tls_cert != NULL, "checkpointing", s->checkpoint_path != NULL, "sandboxes", "total",
                          (json_int_t)n.total, "live", (json_int_t)n.live, "attached", (json_int_t)n.attached,
                          "hibernated", (json_int_t)n.hibernated, "executing", (json_int_t)n.executing, "max",
                          (json_int_t)s->cfg.max_sandboxes, "connections", (json_int_t)s->nconns);
    if (!o) return NULL;
    json_t *coord = srv_coord_status(s);
    if (coord) json_object_set_new(o, "coordinator", coord);
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}
