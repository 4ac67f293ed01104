/* Structured logs: one JSON object per line on the configured stream (stderr). */
#include <stdarg.h>
#include <time.h>

#include "server_internal.h"

void srv_log(srv *s, const char *level, const char *msg, const char *fmt, ...) {
    json_t *o = NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        json_error_t jerr;
        o = json_vpack_ex(&jerr, 0, fmt, ap);
        va_end(ap);
    }
    if (!o) o = json_object();
    if (!o) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[96];
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    json_object_set_new(o, "ts", json_string(when));
    json_object_set_new(o, "level", json_string(level));
    json_object_set_new(o, "msg", json_string(msg));
    json_object_set_new(o, "server", json_string(s->server_id));
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!line) return;
    FILE *f = s->cfg.log ? s->cfg.log : stderr;
    pthread_mutex_lock(&s->log_lock);
    fprintf(f, "%s\n", line);
    fflush(f);
    pthread_mutex_unlock(&s->log_lock);
    free(line);
}
