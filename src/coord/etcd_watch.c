/* A watch: one /v3/watch stream at a time on a thread of its own, read line by line (the
 * gateway writes one JSON message per line). A stream lives at most watch_refresh_ms, so that
 * a member that froze or lost the cluster is noticed; it is re-created (on the next member
 * after an error) from the revision after the last event delivered. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "coord/etcd_internal.h"

#define WATCH_MAX_LINE ((size_t)64 << 20)
#define WATCH_BACKOFF_MIN_MS 100
#define WATCH_BACKOFF_MAX_MS 2000

struct ri_etcd_watch {
    ri_etcd *etcd;
    char *key;
    bool prefix;
    unsigned filters;           /* RI_ETCD_WATCH_NO_PUT, RI_ETCD_WATCH_NO_DELETE */
    int64_t next_rev;           /* the first revision not yet delivered (0: from now) */
    ri_etcd_watch_fn fn;
    void *user;
    pthread_t thread;
    CURLM *multi;
    atomic_bool stop;
    /* the stream being read */
    char *line;
    size_t n, cap;
    bool created;               /* etcd confirmed the stream */
    bool again;                 /* re-create the stream without an error (compaction) */
    ri_etcd_error failure;      /* RI_ETCD_OK unless the stream broke for a reason of its own */
};

static void emit(ri_etcd_watch *w, ri_etcd_event_kind kind, const ri_etcd_kv *kv, int64_t rev,
                 const ri_etcd_error *error) {
    if (atomic_load(&w->stop)) return;
    ri_etcd_event ev = {.kind = kind, .kv = kv, .revision = rev, .error = error};
    w->fn(w->user, &ev);
}

/* One message of the stream; false stops the stream (w->failure or w->again says why). */
static bool on_message(ri_etcd_watch *w, json_t *msg, const char *url) {
    if (etcd_reply_error(msg, url, &w->failure)) return false;
    json_t *result = json_object_get(msg, "result");
    if (!json_is_object(result)) {
        etcd_fail(&w->failure, RI_ETCD_E_PROTOCOL, "etcd %s: a watch message without a result", url);
        return false;
    }
    if (json_is_true(json_object_get(result, "created"))) {
        w->created = true;
        int64_t rev = 0;
        /* "From now" becomes a revision, so that a re-created stream misses nothing. */
        if (w->next_rev == 0 && etcd_json_i64(json_object_get(result, "header"), "revision", &rev) && rev > 0)
            w->next_rev = rev + 1;
        emit(w, RI_ETCD_EV_CONNECTED, NULL, 0, NULL);
    }
    if (json_is_true(json_object_get(result, "canceled"))) {
        int64_t compact = 0;
        if (etcd_json_i64(result, "compact_revision", &compact) && compact > 0) {
            emit(w, RI_ETCD_EV_COMPACTED, NULL, compact, NULL);
            w->next_rev = compact;
            w->again = true;
            return false;
        }
        json_t *why = json_object_get(result, "cancel_reason");
        etcd_fail(&w->failure, RI_ETCD_E_SERVER, "etcd %s: watch canceled: %s", url,
                  json_is_string(why) ? json_string_value(why) : "no reason given");
        return false;
    }
    json_t *events = json_object_get(result, "events");
    for (size_t i = 0; i < json_array_size(events); i++) {
        json_t *ev = json_array_get(events, i);
        ri_etcd_kv kv;
        if (!etcd_parse_kv(json_object_get(ev, "kv"), &kv, &w->failure)) return false;
        json_t *type = json_object_get(ev, "type");
        bool del = json_is_string(type) && strcmp(json_string_value(type), "DELETE") == 0;
        emit(w, del ? RI_ETCD_EV_DELETE : RI_ETCD_EV_PUT, &kv, kv.mod_revision, NULL);
        if (kv.mod_revision >= w->next_rev) w->next_rev = kv.mod_revision + 1;
        etcd_kv_free(&kv);
    }
    return true;
}

typedef struct stream_ctx {
    ri_etcd_watch *w;
    const char *url;
} stream_ctx;

static size_t on_stream(char *data, size_t size, size_t nmemb, void *user) {
    stream_ctx *s = user;
    ri_etcd_watch *w = s->w;
    size_t len = size * nmemb;
    if (len > WATCH_MAX_LINE - w->n) {
        etcd_fail(&w->failure, RI_ETCD_E_PROTOCOL, "etcd %s: a watch message longer than %zu bytes", s->url,
                  WATCH_MAX_LINE);
        return 0;
    }
    if (w->n + len > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + len) cap *= 2;
        char *p = realloc(w->line, cap);
        if (!p) {
            etcd_fail(&w->failure, RI_ETCD_E_NOMEM, "out of memory reading a watch stream");
            return 0;
        }
        w->line = p;
        w->cap = cap;
    }
    memcpy(w->line + w->n, data, len);
    w->n += len;
    char *nl;
    while ((nl = memchr(w->line, '\n', w->n))) {
        size_t line_len = (size_t)(nl - w->line);
        json_error_t jerr;
        json_t *msg = line_len ? json_loadb(w->line, line_len, 0, &jerr) : NULL;
        bool go_on = true;
        if (line_len && !json_is_object(msg)) {
            etcd_fail(&w->failure, RI_ETCD_E_PROTOCOL, "etcd %s: a watch message that is not a JSON object", s->url);
            go_on = false;
        } else if (msg) {
            go_on = on_message(w, msg, s->url);
        }
        json_decref(msg);
        memmove(w->line, nl + 1, w->n - line_len - 1);
        w->n -= line_len + 1;
        if (!go_on) return 0;
    }
    return len;
}

static json_t *create_request(ri_etcd_watch *w) {
    json_t *req = json_pack("{s:o,s:b}", "key", etcd_json_b64(w->key, strlen(w->key)), "progress_notify", 1);
    if (!req) return NULL;
    if ((w->prefix && json_object_set_new(req, "range_end", etcd_json_range_end(w->key)) != 0) ||
        (w->next_rev > 0 && json_object_set_new(req, "start_revision", json_integer(w->next_rev)) != 0)) {
        json_decref(req);
        return NULL;
    }
    if (w->filters) { /* etcd drops those events at the source (the gateway takes enum names) */
        json_t *f = json_array();
        if (!f || json_object_set_new(req, "filters", f) != 0 ||
            ((w->filters & RI_ETCD_WATCH_NO_PUT) && json_array_append_new(f, json_string("NOPUT")) != 0) ||
            ((w->filters & RI_ETCD_WATCH_NO_DELETE) && json_array_append_new(f, json_string("NODELETE")) != 0)) {
            json_decref(req);
            return NULL;
        }
    }
    return json_pack("{s:o}", "create_request", req);
}

typedef enum stream_end { STREAM_REFRESH, STREAM_BROKEN, STREAM_STOPPED } stream_end;

/* One stream against url; *why: the error when it broke. */
static stream_end run_stream(ri_etcd_watch *w, const char *url, bool renew_token, ri_etcd_error *why) {
    etcd_ok(&w->failure);
    if (!etcd_ensure_token(w->etcd, url, renew_token, w->etcd->request_timeout_ms, why)) return STREAM_BROKEN;
    w->n = 0;
    w->created = w->again = false;
    json_t *req = create_request(w);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    bool nomem = false;
    struct curl_slist *hd = etcd_headers(w->etcd, &nomem);
    /* A member cut off from the leader ends the stream instead of going silent. */
    struct curl_slist *hd2 = hd ? curl_slist_append(hd, "Grpc-Metadata-hasleader: true") : NULL;
    char *full = NULL;
    CURL *h = curl_easy_init();
    if (!body || nomem || !hd2 || !h || asprintf(&full, "%s/v3/watch", url) < 0) {
        free(body);
        curl_slist_free_all(hd2 ? hd2 : hd);
        if (h) curl_easy_cleanup(h);
        etcd_fail(why, RI_ETCD_E_NOMEM, "out of memory starting a watch");
        return STREAM_BROKEN;
    }
    stream_ctx ctx = {w, url};
    char errbuf[CURL_ERROR_SIZE] = "";
    etcd_curl_common(w->etcd, h, w->etcd->watch_refresh_ms);
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd2);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ctx);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = CURLE_OK;
    if (curl_multi_add_handle(w->multi, h) != CURLM_OK) {
        rc = CURLE_FAILED_INIT;
    } else {
        int running = 1;
        while (running && !atomic_load(&w->stop)) {
            if (curl_multi_perform(w->multi, &running) != CURLM_OK) break;
            if (running) curl_multi_poll(w->multi, NULL, 0, 1000, NULL);
        }
        int left;
        CURLMsg *m;
        while ((m = curl_multi_info_read(w->multi, &left)))
            if (m->msg == CURLMSG_DONE) rc = m->data.result;
        curl_multi_remove_handle(w->multi, h);
    }
    curl_easy_cleanup(h);
    curl_slist_free_all(hd2);
    free(full);
    free(body);
    if (atomic_load(&w->stop)) return STREAM_STOPPED;
    if (w->again) return STREAM_REFRESH;
    if (w->failure.code != RI_ETCD_OK) {
        *why = w->failure;
        return STREAM_BROKEN;
    }
    if (w->created && (rc == CURLE_OK || rc == CURLE_OPERATION_TIMEDOUT)) return STREAM_REFRESH;
    etcd_fail(why, RI_ETCD_E_UNAVAILABLE, "etcd %s: watch stream: %s", url,
              rc == CURLE_OK ? "ended before etcd confirmed it" : errbuf[0] ? errbuf : curl_easy_strerror(rc));
    return STREAM_BROKEN;
}

static void *watch_thread(void *arg) {
    ri_etcd_watch *w = arg;
    size_t idx = ri_etcd_current_endpoint(w->etcd);
    int64_t backoff = 0;
    bool renew_token = false;
    while (!atomic_load(&w->stop)) {
        ri_etcd_error why;
        stream_end end = run_stream(w, w->etcd->urls[idx], renew_token, &why);
        /* a rejected token (expired, or another member's): a new one for the next stream */
        renew_token = end == STREAM_BROKEN && why.code == RI_ETCD_E_SERVER && why.grpc_code == ETCD_GRPC_UNAUTHENTICATED;
        if (end == STREAM_STOPPED) break;
        if (end == STREAM_REFRESH) {
            backoff = 0;
            continue;
        }
        emit(w, RI_ETCD_EV_DISCONNECTED, NULL, 0, &why);
        idx = (idx + 1) % w->etcd->n_urls;
        backoff = backoff ? backoff * 2 : WATCH_BACKOFF_MIN_MS;
        if (backoff > WATCH_BACKOFF_MAX_MS) backoff = WATCH_BACKOFF_MAX_MS;
        /* A wait that ri_etcd_watch_stop can end early (curl_multi_wakeup). */
        int64_t until = etcd_mono_ms() + backoff;
        for (int64_t now; !atomic_load(&w->stop) && (now = etcd_mono_ms()) < until;)
            curl_multi_poll(w->multi, NULL, 0, (int)(until - now), NULL);
    }
    return NULL;
}

ri_etcd_watch *ri_etcd_watch_start(ri_etcd *e, const char *key, bool prefix, int64_t start_revision,
                                   ri_etcd_watch_fn fn, void *user, ri_etcd_error *err) {
    return ri_etcd_watch_start_filtered(e, key, prefix, start_revision, 0, fn, user, err);
}

ri_etcd_watch *ri_etcd_watch_start_filtered(ri_etcd *e, const char *key, bool prefix, int64_t start_revision,
                                            unsigned filters, ri_etcd_watch_fn fn, void *user, ri_etcd_error *err) {
    if (!key || !key[0] || !fn || start_revision < 0) {
        etcd_fail(err, RI_ETCD_E_INVALID, "a watch needs a key, a callback and a revision >= 0");
        return NULL;
    }
    ri_etcd_watch *w = calloc(1, sizeof *w);
    if (!w || !(w->key = strdup(key))) {
        free(w);
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory starting a watch");
        return NULL;
    }
    w->etcd = e;
    w->prefix = prefix;
    w->filters = filters;
    w->next_rev = start_revision;
    w->fn = fn;
    w->user = user;
    atomic_init(&w->stop, false);
    w->multi = curl_multi_init();
    if (!w->multi || pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
        if (w->multi) curl_multi_cleanup(w->multi);
        free(w->key);
        free(w);
        etcd_fail(err, RI_ETCD_E_INTERNAL, "cannot start the watch thread");
        return NULL;
    }
    etcd_ok(err);
    return w;
}

void ri_etcd_watch_stop(ri_etcd_watch *w) {
    if (!w) return;
    atomic_store(&w->stop, true);
    curl_multi_wakeup(w->multi);
    pthread_join(w->thread, NULL);
    curl_multi_cleanup(w->multi);
    free(w->line);
    free(w->key);
    free(w);
}
