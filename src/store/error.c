/*
 * Error values (a code and a complete message, never a crash) and the abort signal
 * every operation consults.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

const char *ri_snapstore_errcode_name(ri_snapstore_errcode code) {
    switch (code) {
    case RI_SNAPSTORE_OK: return "OK";
    case RI_SNAPSTORE_ERR_NOT_FOUND: return "NOT_FOUND";
    case RI_SNAPSTORE_ERR_EXISTS: return "EXISTS";
    case RI_SNAPSTORE_ERR_INVALID_NAME: return "INVALID_NAME";
    case RI_SNAPSTORE_ERR_CORRUPT: return "CORRUPT";
    case RI_SNAPSTORE_ERR_INPUT: return "INPUT";
    case RI_SNAPSTORE_ERR_IO: return "IO";
    case RI_SNAPSTORE_ERR_CONFLICT: return "CONFLICT";
    case RI_SNAPSTORE_ERR_SANDBOX: return "SANDBOX";
    case RI_SNAPSTORE_ERR_FORBIDDEN: return "FORBIDDEN";
    case RI_SNAPSTORE_ERR_INVALID_REF: return "INVALID_REF";
    case RI_SNAPSTORE_ERR_ABORTED: return "ABORTED";
    case RI_SNAPSTORE_ERR_NOT_STORE: return "NOT_STORE";
    case RI_SNAPSTORE_ERR_NOMEM: return "NOMEM";
    case RI_SNAPSTORE_ERR_ARGUMENT: return "ARGUMENT";
    }
    return "UNKNOWN";
}

void ss_ok(ri_snapstore_error *err) {
    if (!err) return;
    err->code = RI_SNAPSTORE_OK;
    err->sys_errno = 0;
    err->sandbox_code = RI_SANDBOX_OK;
    err->message[0] = '\0';
}

static void set(ri_snapstore_error *err, ri_snapstore_errcode code, const char *fmt, va_list ap) {
    ss_ok(err);
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

bool ss_fail(ri_snapstore_error *err, ri_snapstore_errcode code, const char *fmt, ...) {
    if (!err) return false;
    va_list ap;
    va_start(ap, fmt);
    set(err, code, fmt, ap);
    va_end(ap);
    return false;
}

bool ss_fail_errno(ri_snapstore_error *err, int e, const char *fmt, ...) {
    if (!err) return false;
    va_list ap;
    va_start(ap, fmt);
    set(err, RI_SNAPSTORE_ERR_IO, fmt, ap);
    va_end(ap);
    err->sys_errno = e;
    size_t n = strlen(err->message);
    snprintf(err->message + n, sizeof err->message - n, ": %s", strerror(e));
    return false;
}

bool ss_not_found(ri_snapstore_error *err, const char *name) {
    /* Seed 003's exact text. */
    return ss_fail(err, RI_SNAPSTORE_ERR_NOT_FOUND, "Snapshot not found: %s", name);
}

bool ss_nomem(ri_snapstore_error *err) { return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "Out of memory"); }

void ss_error_prefix(ri_snapstore_error *err, const char *prefix) {
    if (!err) return;
    char old[sizeof err->message];
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%s%s", prefix, old);
}

bool ss_aborted(const ri_snapstore_abort *abort) {
    if (!abort) return false;
    if (abort->flag && atomic_load(abort->flag)) return true;
    return abort->check && abort->check(abort->user);
}

bool ss_abort_at_start(const ri_snapstore_abort *abort, ri_snapstore_error *err) {
    if (!ss_aborted(abort)) return true;
    return ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted before it started: nothing was done");
}
