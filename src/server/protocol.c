/* The wire: client messages are parsed under limits (size, nesting depth, an object at
 * the top); server events are built here, compact, one shape each (docs/SERVER.md). */
#include <stdio.h>
#include <string.h>

#include "server_internal.h"

/* Nesting depth of JSON text, strings skipped; jansson's own limit is far deeper. */
static uint32_t json_depth(const char *t, size_t n) {
    uint32_t depth = 0, max = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        else if (c == '{' || c == '[') {
            if (++depth > max) max = depth;
        } else if ((c == '}' || c == ']') && depth > 0)
            depth--;
    }
    return max;
}

json_t *srv_parse_message(const char *text, size_t len, size_t max_bytes, uint32_t max_depth, char *why,
                          size_t whycap) {
    if (len > max_bytes) {
        snprintf(why, whycap, "Message too large: %zu bytes (limit %zu).", len, max_bytes);
        return NULL;
    }
    if (json_depth(text, len) > max_depth) {
        snprintf(why, whycap, "Invalid message: JSON nested deeper than %u levels.", max_depth);
        return NULL;
    }
    json_error_t jerr;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!j) {
        snprintf(why, whycap, "Invalid message: not JSON (%s at line %d, column %d).", jerr.text, jerr.line,
                 jerr.column);
        return NULL;
    }
    if (!json_is_object(j)) {
        json_decref(j);
        snprintf(why, whycap, "Invalid message: a JSON object was expected.");
        return NULL;
    }
    return j;
}

static char *dump(json_t *o) {
    if (!o) return NULL;
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

char *srv_ev_status(const char *status) {
    return dump(json_pack("{s:s, s:s}", "event", "status_update", "status", status));
}

char *srv_ev_error(const char *message) {
    return dump(json_pack("{s:s, s:s}", "event", "error", "message", message));
}

char *srv_ev_output(const char *stream, const char *text, size_t len) {
    return dump(json_pack("{s:s, s:s%}", "event", stream, "data", text, len));
}

char *srv_ev_done(bool ok, const char *code, const char *message, const char *trap_kind) {
    return srv_ev_done_code(ok ? 0 : 1, code, message, trap_kind);
}

char *srv_ev_done_code(int exit_code, const char *code, const char *message, const char *trap_kind) {
    json_t *o = json_pack("{s:s, s:s, s:i}", "event", "status_update", "status", "SANDBOX_EXECUTION_DONE",
                          "exit_code", exit_code);
    if (o && code) {
        json_t *e = json_pack("{s:s, s:s}", "code", code, "message", message);
        if (e && trap_kind && trap_kind[0]) json_object_set_new(e, "trap_kind", json_string(trap_kind));
        if (e) json_object_set_new(o, "error", e);
    }
    return dump(o);
}

char *srv_ev_sandbox_id(const char *id, const char *token) {
    return dump(json_pack("{s:s, s:s, s:s}", "event", "sandbox_id", "sandbox_id", id, "sandbox_token", token));
}

static json_t *result_head(const char *action, json_t *request_id, bool ok) {
    json_t *o = json_pack("{s:s, s:s}", "event", "result", "action", action);
    if (!o) return NULL;
    if (request_id) json_object_set(o, "request_id", request_id);
    json_object_set_new(o, "ok", json_boolean(ok));
    return o;
}

char *srv_ev_result_ok(const char *action, json_t *request_id, json_t *fields) {
    json_t *o = result_head(action, request_id, true);
    if (o && fields) json_object_update(o, fields);
    json_decref(fields);
    return dump(o);
}

char *srv_ev_result_err(const char *action, json_t *request_id, const char *code, const char *message,
                        json_t *extra) {
    json_t *o = result_head(action, request_id, false);
    json_t *e = json_pack("{s:s, s:s}", "code", code, "message", message);
    if (e && extra) json_object_update(e, extra);
    json_decref(extra);
    if (o && e) json_object_set_new(o, "error", e);
    else json_decref(e);
    return dump(o);
}
