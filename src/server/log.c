/* Structured logs on the configured stream (stderr): one JSON object per line, or one
 * readable line (time, level, message, then key=value pairs), filtered by level. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_internal.h"

static ri_server_log_level level_of(const char *level) {
    if (strcmp(level, "error") == 0) return RI_SERVER_LOG_ERROR;
    if (strcmp(level, "warning") == 0) return RI_SERVER_LOG_WARNING;
    if (strcmp(level, "debug") == 0) return RI_SERVER_LOG_DEBUG;
    return RI_SERVER_LOG_INFO;
}

/* A string value as is when it is one plain word, else quoted as JSON does. */
static void put_text_value(FILE *f, json_t *v) {
    const char *str = json_is_string(v) ? json_string_value(v) : NULL;
    if (str && *str && !strpbrk(str, " \t\n\"=\\")) {
        fputs(str, f);
        return;
    }
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (t) fputs(t, f);
    free(t);
}

static void put_text(FILE *f, json_t *o, const char *when, const char *level, const char *msg) {
    fprintf(f, "%s %-7s %s", when, level, msg);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (strcmp(key, "ts") == 0 || strcmp(key, "level") == 0 || strcmp(key, "msg") == 0) continue;
        fprintf(f, " %s=", key);
        put_text_value(f, v);
    }
    fputc('\n', f);
}

void srv_log(srv *s, const char *level, const char *msg, const char *fmt, ...) {
    if (level_of(level) > s->cfg.log_level) return;
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
    FILE *f = s->cfg.log ? s->cfg.log : stderr;
    if (s->cfg.log_text) {
        pthread_mutex_lock(&s->log_lock);
        put_text(f, o, when, level, msg);
        fflush(f);
        pthread_mutex_unlock(&s->log_lock);
        json_decref(o);
        return;
    }
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!line) return;
    pthread_mutex_lock(&s->log_lock);
    fprintf(f, "%s\n", line);
    fflush(f);
    pthread_mutex_unlock(&s->log_lock);
    free(line);
}
