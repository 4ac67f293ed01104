/* A running WASI process in a checkpoint (docs/SERVER.md, "Live checkpoints"):
 * {"action":"checkpoint","live":true} pauses the execution at its next stop point (or takes
 * it where it waits for stdin or for its client to read), and the checkpoint writes the
 * image (workspace, process state and the paused call) and {id}/process.json beside it:
 * the output no client got yet, the stdin not yet given to the process, the time it used.
 * process.json names its image, so one left by an older checkpoint is never applied. A
 * restore of an image with a paused call runs it on as an execution whose saved output
 * waits for the client's reconnect. */
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define PROC_FILE "process.json"
#define PROC_MAX_BYTES ((size_t)64 << 20)

void srv_live_checkpoint_request(srv_sandbox *sb, srv_ckpt_reason reason) {
    srv_job *job = sb->job;
    if (atomic_exchange(&sb->live_ckpt, true)) return; /* asked already */
    sb->live_reason = reason;
    if (sb->parked == job) { /* waiting for stdin or for its client: it is paused now */
        sb->parked = NULL;
        if (job->pause_why == SRV_PAUSE_STDIN) job->run_ms += ri_clock_mono_ms() - job->parked_at;
        srv_live_checkpoint_start(sb, job);
        return;
    }
    /* on a worker (or queued for one): it pauses at its next stop point (sched.c repeats
     * the interrupt every tick until it does) */
    if (sb->sb) ri_sandbox_interrupt(sb->sb);
}

static char *hex_of(const uint8_t *p, size_t n) { return n ? ri_hex_dup(p, n) : strdup(""); }

static bool unhex(const char *h, uint8_t *out, size_t cap, size_t *n) {
    size_t len = h ? strlen(h) : 0;
    if (len % 2 || len / 2 > cap) return false;
    for (size_t i = 0; i < len / 2; i++) {
        unsigned v;
        if (sscanf(h + 2 * i, "%2x", &v) != 1) return false;
        out[i] = (uint8_t)v;
    }
    *n = len / 2;
    return true;
}

/* The process's state beside the image (service thread; the execution is off its worker). */
static json_t *capture(srv_sandbox *sb, srv_job *job) {
    json_t *out = json_array();
    for (srv_outchunk *k = sb->out_head; out && k; k = k->next) {
        if (k->len <= k->pos) continue;
        json_t *data = json_stringn(k->data + k->pos, k->len - k->pos);
        if (data) json_array_append_new(out, json_pack("{s:i, s:o}", "fd", k->fd, "data", data));
    }
    pthread_mutex_lock(&sb->io_lock);
    char *in = sb->stdin_len ? ri_hex_dup(sb->stdin_buf, sb->stdin_len) : strdup("");
    bool closed = sb->stdin_closed;
    pthread_mutex_unlock(&sb->io_lock);
    char *t1 = hex_of(sb->out_utf8[0].tail, sb->out_utf8[0].ntail);
    char *t2 = hex_of(sb->out_utf8[1].tail, sb->out_utf8[1].ntail);
    json_t *st = NULL;
    if (out && in && t1 && t2)
        st = json_pack("{s:i, s:I, s:s, s:b, s:[s,s], s:O, s:s?}", "version", 1, "run_ms", (json_int_t)job->run_ms,
                       "stdin", in, "stdin_closed", closed, "utf8", t1, t2, "output", out, "language",
                       sb->run_lang != RI_LANG_NONE ? ri_language_name(sb->run_lang) : NULL);
    json_decref(out);
    free(in);
    free(t1);
    free(t2);
    return st;
}

void srv_live_checkpoint_start(srv_sandbox *sb, srv_job *job) {
    atomic_store(&sb->live_ckpt, false);
    sb->proc = job;
    if (sb->job == job) sb->job = NULL;
    json_t *state = capture(sb, job);
    /* what was captured goes with the image: held back here, so that no client gets it
     * twice (here, then after the restore) */
    if (sb->conn) sb->conn->out_held = true;
    if (!state || !srv_start_checkpoint_with(sb, sb->live_reason, state)) {
        if (sb->conn) srv_conn_send_error(sb->conn, "SANDBOX_CHECKPOINT_ERROR", "Out of memory.");
        srv_live_checkpoint_end(sb, false);
    }
}

void srv_live_checkpoint_end(srv_sandbox *sb, bool committed) {
    srv_job *job = sb->proc;
    if (!job) return;
    sb->proc = NULL;
    if (committed) { /* it goes on wherever the sandbox is restored: no DONE here */
        srv_outlog_clear(sb); /* saved with it */
        sb->s->jobs_out--;
        srv_job_free(job);
        srv_sandbox_unref(sb); /* the execution's reference (the caller holds another) */
        return;
    }
    sb->job = job;
    if (sb->conn) srv_output_release(sb->conn, true);
    srv_resubmit(sb->s, job);
}

/* process.json, or process_{token}.json beside an image named with a fencing token (etcd,
 * checkpoint_{token}_{ms}.img): a server that lost the sandbox never writes over the file of
 * the owner after it. */
static void proc_file_of(const char *image, char *out, size_t cap) {
    const char *p = strncmp(image, "checkpoint_", 11) == 0 ? image + 11 : "";
    size_t digits = strspn(p, "0123456789");
    if (digits > 0 && digits <= 19 && p[digits] == '_') snprintf(out, cap, "process_%.*s.json", (int)digits, p);
    else snprintf(out, cap, "%s", PROC_FILE);
}

bool srv_proc_write(const char *root, const char *id, json_t *state, const char *file, char *why, size_t whycap) {
    json_object_set_new(state, "checkpoint", json_string(file));
    char *text = json_dumps(state, JSON_COMPACT);
    if (!text) return snprintf(why, whycap, "Out of memory."), false;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", root, id);
    char name[64];
    proc_file_of(file, name, sizeof name);
    bool ok = srv_write_atomic(dir, name, text, strlen(text), why, whycap);
    free(text);
    return ok;
}

json_t *srv_proc_read(const char *root, const char *id, const char *latest) {
    char path[1200], name[64];
    proc_file_of(latest, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s/%s", root, id, name);
    uint8_t *text;
    size_t n;
    int e;
    if (!srv_read_file(path, PROC_MAX_BYTES, &text, &n, &e)) return NULL;
    json_t *st = json_loadb((const char *)text, n, 0, NULL);
    free(text);
    const char *file = json_string_value(json_object_get(st, "checkpoint"));
    if (!file || strcmp(file, latest) != 0) { /* an older checkpoint's */
        json_decref(st);
        return NULL;
    }
    return st;
}

static void restore_utf8(srv_utf8 *u, json_t *hex) {
    size_t n = 0;
    memset(u, 0, sizeof *u);
    if (unhex(json_string_value(hex), u->tail, 3, &n)) u->ntail = (uint8_t)n;
}

void srv_proc_restored(srv_sandbox *sb, json_t *state) {
    if (!sb->sb || sb->removed || !ri_sandbox_has_pending_call(sb->sb)) return;
    srv *s = sb->s;
    /* code as text: its interpreter ends the run (before the job is made) */
    sb->run_lang = state ? srv_language_of(json_string_value(json_object_get(state, "language"))) : RI_LANG_NONE;
    srv_job *job = srv_execution_job_resumed(sb);
    if (!job) {
        ri_sandbox_abandon(sb->sb, NULL);
        return;
    }
    srv_output_new_execution(sb);
    memset(sb->out_utf8, 0, sizeof sb->out_utf8);
    /* no process.json (a crash between the image and it): the process goes on, the output
     * that was undelivered then is lost */
    if (state) {
        job->run_ms = json_integer_value(json_object_get(state, "run_ms"));
        json_t *utf8 = json_object_get(state, "utf8");
        restore_utf8(&sb->out_utf8[0], json_array_get(utf8, 0));
        restore_utf8(&sb->out_utf8[1], json_array_get(utf8, 1));
        const char *in = json_string_value(json_object_get(state, "stdin"));
        size_t len = in ? strlen(in) / 2 : 0;
        uint8_t *buf = len ? malloc(len) : NULL;
        pthread_mutex_lock(&sb->io_lock);
        if (buf && unhex(in, buf, len, &len)) {
            free(sb->stdin_buf);
            sb->stdin_buf = buf;
            sb->stdin_len = len;
            buf = NULL;
        }
        sb->stdin_closed = json_is_true(json_object_get(state, "stdin_closed"));
        pthread_mutex_unlock(&sb->io_lock);
        free(buf);
    }
    srv_submit(s, job); /* before the output: it counts as a running execution's */
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(state, "output"), i, o) {
        json_t *d = json_object_get(o, "data");
        size_t len = json_string_length(d);
        char *text = len ? malloc(len) : NULL;
        if (!text) continue;
        memcpy(text, json_string_value(d), len);
        atomic_fetch_add(&sb->out_bytes, len); /* as srv_post_output counts it */
        atomic_fetch_add(&s->out_bytes, len);
        srv_outlog_append(sb, json_integer_value(json_object_get(o, "fd")) == 2 ? 2 : 1, text, len);
    }
    /* the client says where it is (reconnect) before the output flows */
    if (sb->conn) srv_output_attach(sb->conn, true);
    srv_log(s, "info", "process restored", "{s:s, s:I}", "sandbox_id", sb->id, "run_ms", (json_int_t)job->run_ms);
}
