/* The etcd client: endpoints, TLS, auth, the pool of curl handles, and one call with failover
 * across the members (etcd.h has the contract). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord/etcd_internal.h"

#define ETCD_MAX_REPLY ((size_t)64 << 20) /* a range of many keys; more is not a sane answer */
#define ETCD_MAX_IDLE 8

const char *ri_etcd_code_name(ri_etcd_code code) {
    switch (code) {
    case RI_ETCD_OK: return "ok";
    case RI_ETCD_E_INVALID: return "invalid";
    case RI_ETCD_E_NOMEM: return "out of memory";
    case RI_ETCD_E_UNAVAILABLE: return "unavailable";
    case RI_ETCD_E_SERVER: return "etcd error";
    case RI_ETCD_E_AUTH: return "authentication failed";
    case RI_ETCD_E_PROTOCOL: return "protocol error";
    case RI_ETCD_E_LEASE_NOT_FOUND: return "lease not found";
    case RI_ETCD_E_INTERNAL: return "internal error";
    }
    return "unknown";
}

void etcd_ok(ri_etcd_error *err) {
    if (!err) return;
    err->code = RI_ETCD_OK;
    err->grpc_code = 0;
    err->message[0] = '\0';
}

void etcd_fail(ri_etcd_error *err, ri_etcd_code code, const char *fmt, ...) {
    if (!err) return;
    err->code = code;
    err->grpc_code = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

int64_t etcd_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool ri_etcd_global_init(ri_etcd_error *err) {
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        etcd_fail(err, RI_ETCD_E_INTERNAL, "curl_global_init: %s", curl_easy_strerror(rc));
        return false;
    }
    etcd_ok(err);
    return true;
}

void ri_etcd_global_cleanup(void) { curl_global_cleanup(); }

/* ---- endpoints --------------------------------------------------------------------------- */

void ri_etcd_endpoints_free(char **endpoints, size_t n) {
    if (!endpoints) return;
    for (size_t i = 0; i < n; i++) free(endpoints[i]);
    free(endpoints);
}

bool ri_etcd_parse_endpoints(const char *text, char ***out, size_t *n, ri_etcd_error *err) {
    *out = NULL;
    *n = 0;
    const char *scheme = "";
    if (strncmp(text, "etcd://", 7) == 0) {
        text += 7;
    } else if (strncmp(text, "etcds://", 8) == 0) {
        text += 8;
        scheme = "https://";
    }
    size_t cap = 1;
    for (const char *p = text; *p; p++) cap += *p == ',';
    char **list = calloc(cap, sizeof *list);
    if (!list) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory parsing endpoints");
        return false;
    }
    size_t count = 0;
    for (const char *p = text;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || (memchr(p, '/', len) && strncmp(p, "http", 4) != 0)) {
            ri_etcd_endpoints_free(list, count);
            etcd_fail(err, RI_ETCD_E_INVALID, "endpoint %zu of \"%s\" is not host:port", count + 1, text);
            return false;
        }
        size_t slen = strlen(scheme);
        list[count] = malloc(slen + len + 1);
        if (!list[count]) {
            ri_etcd_endpoints_free(list, count);
            etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory parsing endpoints");
            return false;
        }
        memcpy(list[count], scheme, slen);
        memcpy(list[count] + slen, p, len);
        list[count][slen + len] = '\0';
        count++;
        if (!end) break;
        p = end + 1;
    }
    *out = list;
    *n = count;
    etcd_ok(err);
    return true;
}

static char *dup_or_null(const char *s, bool *nomem) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *nomem = true;
    return d;
}

/* "host:port" -> "http://host:port" (https when TLS files are given); a URL is kept. */
static char *endpoint_url(const char *ep, bool tls) {
    size_t len = strlen(ep);
    while (len && ep[len - 1] == '/') len--;
    bool has_scheme = strncmp(ep, "http://", 7) == 0 || strncmp(ep, "https://", 8) == 0;
    const char *scheme = has_scheme ? "" : tls ? "https://" : "http://";
    size_t slen = strlen(scheme);
    char *url = malloc(slen + len + 1);
    if (!url) return NULL;
    memcpy(url, scheme, slen);
    memcpy(url + slen, ep, len);
    url[slen + len] = '\0';
    return url;
}

ri_etcd *ri_etcd_open(const ri_etcd_config *config, ri_etcd_error *err) {
    if (!config || config->n_endpoints == 0 || !config->endpoints) {
        etcd_fail(err, RI_ETCD_E_INVALID, "no etcd endpoint given");
        return NULL;
    }
    if (!config->user != !config->password) {
        etcd_fail(err, RI_ETCD_E_INVALID, "etcd auth needs both a user and a password");
        return NULL;
    }
    if (!config->cert_file != !config->key_file) {
        etcd_fail(err, RI_ETCD_E_INVALID, "an etcd client certificate needs both cert_file and key_file");
        return NULL;
    }
    ri_etcd *e = calloc(1, sizeof *e);
    if (!e) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory opening the etcd client");
        return NULL;
    }
    bool nomem = false;
    bool tls = config->ca_file || config->cert_file;
    e->urls = calloc(config->n_endpoints, sizeof *e->urls);
    nomem |= !e->urls;
    for (size_t i = 0; e->urls && i < config->n_endpoints; i++) {
        if (!config->endpoints[i] || !config->endpoints[i][0]) {
            ri_etcd_close(e);
            etcd_fail(err, RI_ETCD_E_INVALID, "etcd endpoint %zu is empty", i + 1);
            return NULL;
        }
        e->urls[i] = endpoint_url(config->endpoints[i], tls);
        nomem |= !e->urls[i];
        e->n_urls = i + 1;
    }
    e->ca_file = dup_or_null(config->ca_file, &nomem);
    e->cert_file = dup_or_null(config->cert_file, &nomem);
    e->key_file = dup_or_null(config->key_file, &nomem);
    e->user = dup_or_null(config->user, &nomem);
    e->password = dup_or_null(config->password, &nomem);
    e->connect_timeout_ms = config->connect_timeout_ms > 0 ? config->connect_timeout_ms : 1000;
    e->request_timeout_ms = config->request_timeout_ms > 0 ? config->request_timeout_ms : 5000;
    e->watch_refresh_ms = config->watch_refresh_ms > 0 ? config->watch_refresh_ms : 10000;
    if (nomem || pthread_mutex_init(&e->mu, NULL) != 0) {
        /* The mutex is initialised last: close destroys it only when n_urls says it exists. */
        for (size_t i = 0; i < e->n_urls; i++) free(e->urls[i]);
        free(e->urls);
        free(e->ca_file), free(e->cert_file), free(e->key_file), free(e->user), free(e->password);
        free(e);
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory opening the etcd client");
        return NULL;
    }
    etcd_ok(err);
    return e;
}

void ri_etcd_close(ri_etcd *e) {
    if (!e) return;
    for (size_t i = 0; i < e->n_idle; i++) curl_easy_cleanup(e->idle[i]);
    free(e->idle);
    for (size_t i = 0; i < e->n_urls; i++) free(e->urls[i]);
    free(e->urls);
    free(e->ca_file), free(e->cert_file), free(e->key_file), free(e->user), free(e->password);
    free(e->token);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

size_t ri_etcd_current_endpoint(ri_etcd *e) {
    pthread_mutex_lock(&e->mu);
    size_t c = e->current;
    pthread_mutex_unlock(&e->mu);
    return c;
}

/* ---- one HTTP exchange -------------------------------------------------------------------- */

typedef struct reply_buf {
    char *p;
    size_t n, cap;
    bool too_big;
} reply_buf;

static size_t on_body(char *data, size_t size, size_t nmemb, void *user) {
    reply_buf *b = user;
    size_t len = size * nmemb;
    if (len > ETCD_MAX_REPLY - b->n) {
        b->too_big = true;
        return 0;
    }
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return 0;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    b->p[b->n] = '\0';
    return len;
}

static CURL *take_handle(ri_etcd *e) {
    CURL *h = NULL;
    pthread_mutex_lock(&e->mu);
    if (e->n_idle) h = e->idle[--e->n_idle];
    pthread_mutex_unlock(&e->mu);
    if (h) {
        curl_easy_reset(h); /* the options go, the open connection stays */
        return h;
    }
    return curl_easy_init();
}

static void give_handle(ri_etcd *e, CURL *h) {
    pthread_mutex_lock(&e->mu);
    if (e->n_idle == e->cap_idle && e->cap_idle < ETCD_MAX_IDLE) {
        size_t cap = e->cap_idle ? e->cap_idle * 2 : 2;
        CURL **p = realloc(e->idle, cap * sizeof *p);
        if (p) {
            e->idle = p;
            e->cap_idle = cap;
        }
    }
    if (e->n_idle < e->cap_idle) {
        e->idle[e->n_idle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&e->mu);
    if (h) curl_easy_cleanup(h);
}

void etcd_curl_common(ri_etcd *e, CURL *h, int64_t timeout_ms) {
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)e->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (e->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, e->ca_file);
    if (e->cert_file) curl_easy_setopt(h, CURLOPT_SSLCERT, e->cert_file);
    if (e->key_file) curl_easy_setopt(h, CURLOPT_SSLKEY, e->key_file);
}

struct curl_slist *etcd_headers(ri_etcd *e, bool *nomem) {
    *nomem = false;
    struct curl_slist *hd = curl_slist_append(NULL, "Content-Type: application/json");
    if (!hd) {
        *nomem = true;
        return NULL;
    }
    pthread_mutex_lock(&e->mu);
    char *line = NULL;
    if (e->token && asprintf(&line, "Authorization: %s", e->token) < 0) line = NULL, *nomem = true;
    pthread_mutex_unlock(&e->mu);
    if (line) {
        struct curl_slist *more = curl_slist_append(hd, line);
        free(line);
        if (!more) *nomem = true;
        else hd = more;
    }
    return hd;
}

typedef enum exchange_result { EX_ANSWER, EX_TRANSPORT, EX_FATAL } exchange_result;

/* One POST to one member. EX_ANSWER: *http and *reply are set; EX_TRANSPORT: the member did
 * not answer (err says why); EX_FATAL: err is final. */
static exchange_result exchange(ri_etcd *e, const char *url, const char *path, const char *body, bool auth,
                                int64_t timeout_ms, long *http, json_t **reply, ri_etcd_error *err) {
    *reply = NULL;
    CURL *h = take_handle(e);
    if (!h) {
        etcd_fail(err, RI_ETCD_E_INTERNAL, "curl_easy_init failed");
        return EX_FATAL;
    }
    bool nomem = false;
    struct curl_slist *hd = auth ? etcd_headers(e, &nomem) : curl_slist_append(NULL, "Content-Type: application/json");
    char *full = NULL;
    if (nomem || !hd || asprintf(&full, "%s%s", url, path) < 0) {
        curl_slist_free_all(hd);
        give_handle(e, h);
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory building an etcd request");
        return EX_FATAL;
    }
    reply_buf b = {0};
    char errbuf[CURL_ERROR_SIZE] = "";
    etcd_curl_common(e, h, timeout_ms);
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, http);
    curl_slist_free_all(hd);
    free(full);
    exchange_result res = EX_ANSWER;
    if (b.too_big) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd %s%s: answer larger than %zu bytes", url, path, ETCD_MAX_REPLY);
        res = EX_FATAL;
    } else if (rc != CURLE_OK) {
        etcd_fail(err, RI_ETCD_E_UNAVAILABLE, "etcd %s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        res = EX_TRANSPORT;
        /* A handle whose transfer broke may hold a dead connection: do not keep it. */
        curl_easy_cleanup(h);
        h = NULL;
    } else {
        json_error_t jerr;
        *reply = b.p ? json_loadb(b.p, b.n, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
        if (!*reply || !json_is_object(*reply)) {
            json_decref(*reply);
            *reply = NULL;
            etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd %s%s: HTTP %ld with an answer that is not a JSON object", url,
                      path, *http);
            res = EX_FATAL;
        }
    }
    free(b.p);
    if (h) give_handle(e, h);
    return res;
}

bool etcd_reply_error(json_t *reply, const char *url, ri_etcd_error *err) {
    json_t *eobj = json_object_get(reply, "error");
    if (!eobj) return false;
    json_t *msg = json_object_get(reply, "message");
    json_t *code = json_object_get(reply, "code");
    if (json_is_object(eobj)) { /* a stream's error: {"error":{"grpc_code":..,"message":..}} */
        msg = json_object_get(eobj, "message");
        code = json_object_get(eobj, "grpc_code");
    } else if (!msg) {
        msg = eobj;
    }
    etcd_fail(err, RI_ETCD_E_SERVER, "etcd %s: %s", url, json_is_string(msg) ? json_string_value(msg) : "an error");
    if (err) err->grpc_code = json_is_integer(code) ? (int)json_integer_value(code) : 0;
    return true;
}

/* /v3/auth/authenticate at one member; the token becomes the client's. */
static exchange_result authenticate(ri_etcd *e, const char *url, int64_t timeout_ms, ri_etcd_error *err) {
    json_t *body = json_pack("{s:s,s:s}", "name", e->user, "password", e->password);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory building an etcd request");
        return EX_FATAL;
    }
    long http = 0;
    json_t *reply = NULL;
    exchange_result res = exchange(e, url, "/v3/auth/authenticate", text, false, timeout_ms, &http, &reply, err);
    free(text);
    if (res != EX_ANSWER) return res;
    json_t *token = json_object_get(reply, "token");
    if (etcd_reply_error(reply, url, err) || !json_is_string(token)) {
        if (err && err->code == RI_ETCD_E_SERVER && (err->grpc_code == ETCD_GRPC_UNAVAILABLE ||
                                                     err->grpc_code == ETCD_GRPC_DEADLINE)) {
            json_decref(reply);
            return EX_TRANSPORT;
        }
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err && err->code == RI_ETCD_E_SERVER ? err->message : "no token in the answer");
        etcd_fail(err, RI_ETCD_E_AUTH, "etcd authentication as \"%s\" failed: %s", e->user, why);
        json_decref(reply);
        return EX_FATAL;
    }
    char *t = strdup(json_string_value(token));
    json_decref(reply);
    if (!t) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory keeping the etcd token");
        return EX_FATAL;
    }
    pthread_mutex_lock(&e->mu);
    free(e->token);
    e->token = t;
    pthread_mutex_unlock(&e->mu);
    return EX_ANSWER;
}

static bool has_token(ri_etcd *e) {
    pthread_mutex_lock(&e->mu);
    bool has = e->token != NULL;
    pthread_mutex_unlock(&e->mu);
    return has;
}

static void drop_token(ri_etcd *e) {
    pthread_mutex_lock(&e->mu);
    free(e->token);
    e->token = NULL;
    pthread_mutex_unlock(&e->mu);
}

bool etcd_ensure_token(ri_etcd *e, const char *url, bool renew, int64_t timeout_ms, ri_etcd_error *err) {
    if (!e->user) return true;
    if (renew) drop_token(e);
    return has_token(e) || authenticate(e, url, timeout_ms, err) == EX_ANSWER;
}

/* A member that did not answer is not where the next call starts (a frozen member would
 * otherwise cost every call, a lease's keepalive included, its whole timeout first). */
static void move_past(ri_etcd *e, size_t idx) {
    pthread_mutex_lock(&e->mu);
    if (e->current == idx) e->current = (idx + 1) % e->n_urls;
    pthread_mutex_unlock(&e->mu);
}

bool etcd_call(ri_etcd *e, const char *path, json_t *body, int64_t timeout_ms, json_t **reply, ri_etcd_error *err) {
    *reply = NULL;
    char *text = json_dumps(body, JSON_COMPACT);
    if (!text) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory building an etcd request");
        return false;
    }
    int64_t deadline = timeout_ms > 0 ? etcd_mono_ms() + timeout_ms : 0;
    size_t start = ri_etcd_current_endpoint(e);
    ri_etcd_error last;
    etcd_fail(&last, RI_ETCD_E_UNAVAILABLE, "no time left to try a member");
    bool reauthed = false;
    for (size_t attempt = 0; attempt < e->n_urls; attempt++) {
        const char *url = e->urls[(start + attempt) % e->n_urls];
        int64_t per = e->request_timeout_ms;
        if (deadline) {
            int64_t left = deadline - etcd_mono_ms();
            if (left <= 0) break;
            if (left < per) per = left;
        }
        exchange_result res = EX_ANSWER;
        if (e->user && !has_token(e)) res = authenticate(e, url, per, &last);
        long http = 0;
        json_t *r = NULL;
        if (res == EX_ANSWER) res = exchange(e, url, path, text, true, per, &http, &r, &last);
        if (res == EX_FATAL) {
            free(text);
            if (err) *err = last;
            return false;
        }
        if (res == EX_TRANSPORT) {
            move_past(e, (start + attempt) % e->n_urls);
            continue;
        }
        if (http == 200 && !json_object_get(r, "error")) {
            pthread_mutex_lock(&e->mu);
            e->current = (start + attempt) % e->n_urls;
            pthread_mutex_unlock(&e->mu);
            free(text);
            *reply = r;
            etcd_ok(err);
            return true;
        }
        if (!etcd_reply_error(r, url, &last)) etcd_fail(&last, RI_ETCD_E_PROTOCOL, "etcd %s%s: HTTP %ld", url, path, http);
        json_decref(r);
        if (last.code == RI_ETCD_E_SERVER && last.grpc_code == ETCD_GRPC_UNAUTHENTICATED && e->user && !reauthed) {
            /* An expired or foreign token: a new one, then the same member again. */
            reauthed = true;
            drop_token(e);
            attempt--;
            continue;
        }
        if (last.code == RI_ETCD_E_SERVER &&
            (last.grpc_code == ETCD_GRPC_UNAVAILABLE || last.grpc_code == ETCD_GRPC_DEADLINE)) {
            move_past(e, (start + attempt) % e->n_urls);
            continue; /* no leader there, or it timed out: the next member may do better */
        }
        free(text);
        if (err) *err = last;
        return false;
    }
    free(text);
    etcd_fail(err, RI_ETCD_E_UNAVAILABLE, "no etcd member answered (%zu tried); last: %s", e->n_urls, last.message);
    return false;
}
