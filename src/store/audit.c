/*
 * The audit log of cross-session opt-ins (seed 004: "every opt-in is audit-logged at
 * warning level"). It lives in the store, DIR/audit.log, one JSON object per line,
 * appended with a single write (O_APPEND: lines from several processes never
 * interleave) and fsync'd before the operation proceeds: an opt-in that cannot be
 * recorded is refused, so the log never misses one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "store_internal.h"

static json_t *text_or_null(const char *s) { return s && s[0] ? json_string(s) : json_null(); }

bool ss_audit(ri_snapstore *st, ri_snapstore_audit_fn sink, void *user, const char *operation, const char *session,
              const char *snapshot, const ri_snapstore_info *target, ri_snapstore_error *err) {
    json_t *o = json_object();
    if (!o) return ss_nomem(err);
    json_object_set_new(o, "timeMs", json_integer(ri_clock_wall_ms()));
    json_object_set_new(o, "level", json_string("warning"));
    json_object_set_new(o, "event", json_string("cross-session"));
    json_object_set_new(o, "operation", json_string(operation));
    json_object_set_new(o, "session", json_string(session));
    json_object_set_new(o, "snapshot", text_or_null(snapshot));
    json_object_set_new(o, "originSession", text_or_null(target ? target->origin_session : NULL));
    json_object_set_new(o, "originSandbox", text_or_null(target ? target->origin_sandbox : NULL));
    json_object_set_new(o, "pid", json_integer(getpid()));
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!line) return ss_nomem(err);
    size_t n = strlen(line);
    char *with_newline = realloc(line, n + 2);
    if (!with_newline) {
        free(line);
        return ss_nomem(err);
    }
    line = with_newline;
    line[n] = '\n';
    line[n + 1] = '\0';
    int fd = openat(st->dirfd, "audit.log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    bool ok = fd >= 0 || ss_fail_errno(err, errno, "Cannot open the audit log %s/audit.log", st->dir);
    if (ok) {
        ssize_t w;
        do w = write(fd, line, n + 1);
        while (w < 0 && errno == EINTR);
        if (w != (ssize_t)(n + 1)) ok = ss_fail_errno(err, w < 0 ? errno : EIO, "Cannot write the audit log");
        else if (fsync(fd) != 0) ok = ss_fail_errno(err, errno, "Cannot fsync the audit log");
    }
    if (fd >= 0) close(fd);
    if (ok && sink) {
        char message[512];
        if (snapshot)
            snprintf(message, sizeof message,
                     "cross-session %s: session %s acted on snapshot %s (origin session %s, origin sandbox %s)",
                     operation, session, snapshot,
                     target && target->origin_session[0] ? target->origin_session : "none",
                     target && target->origin_sandbox[0] ? target->origin_sandbox : "none");
        else
            snprintf(message, sizeof message, "cross-session %s: session %s acted on the snapshots of every session",
                     operation, session);
        sink(user, "warning", message);
    }
    free(line);
    if (!ok) ss_error_prefix(err, "Refused: the cross-session opt-in could not be audited: ");
    return ok;
}
