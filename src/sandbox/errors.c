/* Error values: codes and their names, the messages of the seed's error kinds, and
 * helpers that make names and signatures printable in messages. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sandbox_internal.h"

const char *ri_sandbox_errcode_name(ri_sandbox_errcode code) {
    switch (code) {
    case RI_SANDBOX_OK: return "OK";
    case RI_SANDBOX_GAS_EXHAUSTED: return "GAS_EXHAUSTED";
    case RI_SANDBOX_MEMORY_EXCEEDED: return "MEMORY_EXCEEDED";
    case RI_SANDBOX_TIMEOUT: return "TIMEOUT";
    case RI_SANDBOX_WASM_TRAP: return "WASM_TRAP";
    case RI_SANDBOX_INVALID_MODULE: return "INVALID_MODULE";
    case RI_SANDBOX_HOST_FUNCTION_ERROR: return "HOST_FUNCTION_ERROR";
    case RI_SANDBOX_INSTANCE_DESTROYED: return "INSTANCE_DESTROYED";
    case RI_SANDBOX_SNAPSHOT_ERROR: return "SNAPSHOT_ERROR";
    case RI_SANDBOX_INVALID_CONFIG: return "INVALID_CONFIG";
    case RI_SANDBOX_SUSPENDED_CALL: return "SUSPENDED";
    case RI_SANDBOX_EXIT: return "EXIT";
    case RI_SANDBOX_FILE_ERROR: return "FILE_ERROR";
    case RI_SANDBOX_OUT_OF_BOUNDS: return "OUT_OF_BOUNDS";
    }
    return "UNKNOWN";
}

void sb_error_clear(ri_sandbox_error *err) {
    if (err) memset(err, 0, sizeof *err);
}

static void set_message(ri_sandbox_error *err, const char *fmt, va_list ap) {
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

void sb_error_set(ri_sandbox_error *err, ri_sandbox_errcode code, const char *fmt, ...) {
    if (!err) return;
    sb_error_clear(err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    set_message(err, fmt, ap);
    va_end(ap);
}

void sb_error_trap(ri_sandbox_error *err, const char *kind, const char *fmt, ...) {
    if (!err) return;
    sb_error_clear(err);
    err->code = RI_SANDBOX_WASM_TRAP;
    snprintf(err->trap_kind, sizeof err->trap_kind, "%s", kind);
    va_list ap;
    va_start(ap, fmt);
    set_message(err, fmt, ap);
    va_end(ap);
}

void sb_error_destroyed(ri_sandbox_error *err, const char *instance_id) {
    if (!err) return;
    sb_error_set(err, RI_SANDBOX_INSTANCE_DESTROYED, "Instance %s has been destroyed", instance_id);
    snprintf(err->instance_id, sizeof err->instance_id, "%s", instance_id);
}

void sb_error_gas(ri_sandbox_error *err, uint64_t used, uint64_t limit) {
    if (!err) return;
    sb_error_set(err, RI_SANDBOX_GAS_EXHAUSTED, "Gas exhausted: %llu used, limit %llu",
                 (unsigned long long)used, (unsigned long long)limit);
    err->gas_used = used;
    err->gas_limit = limit;
}

void sb_error_timeout(ri_sandbox_error *err, uint64_t elapsed_ms, uint64_t limit_ms) {
    if (!err) return;
    sb_error_set(err, RI_SANDBOX_TIMEOUT, "Execution timed out after %llu ms (limit %llu ms)",
                 (unsigned long long)elapsed_ms, (unsigned long long)limit_ms);
    err->elapsed_ms = elapsed_ms;
    err->limit_ms = limit_ms;
}

void sb_error_memory(ri_sandbox_error *err, uint64_t used, uint64_t limit) {
    if (!err) return;
    sb_error_set(err, RI_SANDBOX_MEMORY_EXCEEDED, "Memory limit exceeded: %llu bytes used, limit %llu bytes",
                 (unsigned long long)used, (unsigned long long)limit);
    err->memory_used = used;
    err->memory_limit = limit;
}

void sb_error_host(ri_sandbox_error *err, const char *function_name, const char *message) {
    if (!err) return;
    sb_error_set(err, RI_SANDBOX_HOST_FUNCTION_ERROR, "%s", message);
    snprintf(err->function_name, sizeof err->function_name, "%s", function_name);
}

void sb_error_prefix(ri_sandbox_error *err, const char *prefix) {
    if (!err || !prefix) return;
    size_t cap = sizeof err->message, p = strlen(prefix), m = strlen(err->message);
    if (p >= cap) p = cap - 1;
    if (p + m >= cap) m = cap - 1 - p; /* the tail of the message gives way */
    memmove(err->message + p, err->message, m);
    memcpy(err->message, prefix, p);
    err->message[p + m] = '\0';
}

void sb_printable_name(char *buf, size_t cap, const char *name, size_t len) {
    if (!buf || cap == 0) return;
    size_t at = 0;
    for (size_t i = 0; i < len && name; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7F) {
            if (at + 4 >= cap) break;
            snprintf(buf + at, cap - at, "\\x%02X", c);
            at += 4;
        } else {
            if (at + 1 >= cap) break;
            buf[at++] = (char)c;
        }
    }
    buf[at] = '\0';
}

/* Appends to buf at *at, never past cap - 1. */
static void append(char *buf, size_t cap, size_t *at, const char *text) {
    size_t n = strlen(text);
    if (*at >= cap) return;
    size_t room = cap - 1 - *at;
    if (n > room) n = room;
    memcpy(buf + *at, text, n);
    *at += n;
    buf[*at] = '\0';
}

static void append_types(char *buf, size_t cap, size_t *at, uint32_t n, const ri_valtype *types, bool parens) {
    if (parens) append(buf, cap, at, "(");
    for (uint32_t i = 0; i < n; i++) {
        if (i) append(buf, cap, at, ", ");
        append(buf, cap, at, ri_valtype_name(types[i]));
    }
    if (parens) append(buf, cap, at, ")");
}

void sb_format_signature(char *buf, size_t cap, uint32_t nparams, const ri_valtype *params,
                         uint32_t nresults, const ri_valtype *results) {
    if (!buf || cap == 0) return;
    size_t at = 0;
    buf[0] = '\0';
    append_types(buf, cap, &at, nparams, params, true);
    append(buf, cap, &at, " -> ");
    append_types(buf, cap, &at, nresults, results, nresults != 1);
}
