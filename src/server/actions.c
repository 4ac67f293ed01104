/* Our actions on an attached sandbox (docs/SERVER.md): load, execute, status, and the
 * snapshot operations of snapshots.c. Each runs as a job on a worker and is answered by
 * one result event with the request's request_id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

/* snapshots.c */
char *srv_snapshot_action(srv_job *job, const char *action);
bool srv_snapshot_action_known(const char *action);
void srv_snapshot_action_prepare(srv_job *job, const char *action);
void srv_snapshot_action_done(srv_job *job);

static const char *const own_actions[] = {"load", "execute", "status"};

bool srv_action_known(const char *action) {
    for (size_t i = 0; i < sizeof own_actions / sizeof own_actions[0]; i++)
        if (strcmp(action, own_actions[i]) == 0) return true;
    return srv_snapshot_action_known(action);
}

static json_t *rid(srv_job *job) { return json_object_get(job->msg, "request_id"); }

static char *sandbox_error(srv_job *job, const char *action, const ri_sandbox_error *e) {
    json_t *extra = NULL;
    if (e->trap_kind[0]) extra = json_pack("{s:s}", "trap_kind", e->trap_kind);
    return srv_ev_result_err(action, rid(job), ri_sandbox_errcode_name(e->code), e->message, extra);
}

static char *do_load(srv_job *job) {
    const char *m = json_string_value(json_object_get(job->msg, "module"));
    uint8_t *wasm;
    size_t n;
    if (!m || !ri_base64_decode_lenient(m, strlen(m), &wasm, &n))
        return srv_ev_result_err("load", rid(job), "BAD_REQUEST", "\"module\" must be a base64 string.", NULL);
    ri_sandbox_error err;
    bool ok = ri_sandbox_load(job->sb->sb, wasm, n, &err);
    free(wasm);
    if (!ok) return sandbox_error(job, "load", &err);
    uint8_t sha[RI_SNAP_SHA256_BYTES];
    size_t len = 0;
    ri_sandbox_module(job->sb->sb, &len, sha);
    char *hex = ri_hex_dup(sha, sizeof sha);
    char *ev = srv_ev_result_ok("load", rid(job), json_pack("{s:s, s:I}", "module_sha256", hex ? hex : "",
                                                            "module_bytes", (json_int_t)len));
    free(hex);
    return ev;
}

static json_t *typed_value(const ri_val *v) {
    switch (v->type) {
    case RI_I32: return json_integer(v->of.i32);
    case RI_I64: return json_integer(v->of.i64);
    case RI_F32: {
        float f;
        memcpy(&f, &v->of.f32_bits, 4);
        return f == f ? json_real(f) : json_null();
    }
    case RI_F64: {
        double d;
        memcpy(&d, &v->of.f64_bits, 8);
        return d == d ? json_real(d) : json_null();
    }
    default: return json_null();
    }
}

/* A number, or a string that is a whole decimal integer (for i64 beyond 2^53) or a decimal
 * float; anything else is refused rather than read as 0. */
static bool parse_arg(json_t *a, ri_val *out, char *why, size_t cap) {
    if (!json_is_object(a)) return snprintf(why, cap, "each arg must be {\"type\":T,\"value\":V}"), false;
    const char *t = json_string_value(json_object_get(a, "type"));
    json_t *v = json_object_get(a, "value");
    if (!t || !v) return snprintf(why, cap, "each arg needs \"type\" and \"value\""), false;
    bool is_int = t[0] == 'i';
    double d = 0;
    int64_t i = 0;
    if (json_is_integer(v)) {
        i = json_integer_value(v);
        d = (double)i;
    } else if (json_is_real(v)) {
        d = json_real_value(v);
        if (is_int && (d != d || d >= 9223372036854775808.0 || d < -9223372036854775808.0))
            return snprintf(why, cap, "\"value\" is out of range"), false;
        i = is_int ? (int64_t)d : 0;
    } else if (json_is_string(v) && json_string_value(v)[0]) {
        const char *sv = json_string_value(v);
        char *end;
        errno = 0;
        if (is_int) {
            i = strtoll(sv, &end, 10);
            d = (double)i;
        } else {
            d = strtod(sv, &end);
        }
        if (*end || errno == ERANGE)
            return snprintf(why, cap, "\"value\" \"%.40s\" is not a decimal number", sv), false;
    } else {
        return snprintf(why, cap, "\"value\" must be a number or a decimal string"), false;
    }
    memset(out, 0, sizeof *out);
    if (strcmp(t, "i32") == 0) {
        out->type = RI_I32;
        out->of.i32 = (int32_t)(uint32_t)(uint64_t)i;
    } else if (strcmp(t, "i64") == 0) {
        out->type = RI_I64;
        out->of.i64 = i;
    } else if (strcmp(t, "f32") == 0) {
        float f = (float)d;
        out->type = RI_F32;
        memcpy(&out->of.f32_bits, &f, 4);
    } else if (strcmp(t, "f64") == 0) {
        out->type = RI_F64;
        memcpy(&out->of.f64_bits, &d, 8);
    } else {
        return snprintf(why, cap, "unknown type \"%.20s\" (i32, i64, f32, f64)", t), false;
    }
    return true;
}

static char *do_execute(srv_job *job) {
    const char *fn = json_string_value(json_object_get(job->msg, "function"));
    if (!fn) return srv_ev_result_err("execute", rid(job), "BAD_REQUEST", "\"function\" must be a string.", NULL);
    json_t *args = json_object_get(job->msg, "args");
    srv_sandbox *sb = job->sb;
    sb->exec_deadline = ri_clock_mono_ms() + sb->cfg.max_execution_ms;
    memset(sb->out_utf8, 0, sizeof sb->out_utf8);
    ri_sandbox_result r;
    if (args) {
        if (!json_is_array(args) || json_array_size(args) > 64)
            return srv_ev_result_err("execute", rid(job), "BAD_REQUEST", "\"args\" must be an array (at most 64).",
                                     NULL);
        ri_val vals[64];
        size_t n = json_array_size(args);
        for (size_t i = 0; i < n; i++) {
            char why[200], msg[260];
            if (!parse_arg(json_array_get(args, i), &vals[i], why, sizeof why)) {
                snprintf(msg, sizeof msg, "args[%zu]: %s", i, why);
                return srv_ev_result_err("execute", rid(job), "BAD_REQUEST", msg, NULL);
            }
        }
        r = ri_sandbox_call(sb->sb, fn, vals, (uint32_t)n);
    } else {
        json_t *payload = json_object_get(job->msg, "payload");
        char *ptext = payload ? json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER) : NULL;
        r = ri_sandbox_execute(sb->sb, fn, ptext);
        free(ptext);
    }
    char *ev;
    if (!r.ok) {
        ev = sandbox_error(job, "execute", &r.error);
    } else {
        json_t *value = r.value_json ? json_loads(r.value_json, JSON_DECODE_ANY, NULL) : json_null();
        json_t *results = json_array();
        for (uint32_t i = 0; i < r.nresults && i < 4; i++)
            json_array_append_new(results, json_pack("{s:s, s:o}", "type", ri_valtype_name(r.results[i].type), "value",
                                                     typed_value(&r.results[i])));
        ev = srv_ev_result_ok("execute", rid(job),
                              json_pack("{s:o, s:o, s:I, s:I}", "value", value ? value : json_null(), "results",
                                        results, "gas", (json_int_t)r.gas_used, "duration_us",
                                        (json_int_t)(r.duration_ms * 1000.0)));
    }
    ri_sandbox_result_free(&r);
    return ev;
}

static char *do_status(srv_job *job) {
    srv_sandbox *sb = job->sb;
    ri_sandbox_metrics m = ri_sandbox_get_metrics(sb->sb);
    size_t len = 0;
    /* the 8-byte empty module the server loads at creation does not count */
    bool loaded = ri_sandbox_module(sb->sb, &len, NULL) != NULL && len > 8;
    return srv_ev_result_ok("status", rid(job),
                            json_pack("{s:s, s:b, s:I, s:I, s:I, s:s}", "sandbox_id", sb->id, "module_loaded", loaded,
                                      "module_bytes", (json_int_t)len, "memory_bytes",
                                      (json_int_t)m.memory_used_bytes, "gas_used", (json_int_t)m.gas_used, "status",
                                      ri_sandbox_status_name(ri_sandbox_status_of(sb->sb))));
}

static void action_work(srv_job *job) {
    const char *action = json_string_value(json_object_get(job->msg, "action"));
    if (!job->sb->sb) {
        job->event = srv_ev_result_err(action, rid(job), "SANDBOX_ERROR", "The sandbox is not in memory.", NULL);
        return;
    }
    if (strcmp(action, "load") == 0) job->event = do_load(job);
    else if (strcmp(action, "execute") == 0) job->event = do_execute(job);
    else if (strcmp(action, "status") == 0) job->event = do_status(job);
    else job->event = srv_snapshot_action(job, action);
}

static void action_done(srv_job *job) {
    srv_snapshot_action_done(job);
    srv_sandbox *sb = job->sb;
    if (sb->conn && job->event) {
        srv_conn_send(sb->conn, job->event);
        job->event = NULL;
    }
}

void srv_start_action(srv_sandbox *sb, json_t *msg) {
    const char *action = json_string_value(json_object_get(msg, "action"));
    srv_job *job = srv_job_new(SRV_JOB_ACTION, sb, msg, action_work, action_done);
    if (!job) return;
    srv_snapshot_action_prepare(job, action);
    if (job->event) { /* refused before it started (rate limit, no store, ...) */
        if (sb->conn) srv_conn_send(sb->conn, job->event);
        job->event = NULL;
        srv_job_free(job);
        return;
    }
    if (strcmp(action, "execute") == 0) atomic_fetch_add(&sb->s->m.executions, 1);
    srv_submit(sb->s, job);
}
