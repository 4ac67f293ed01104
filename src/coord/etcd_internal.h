/*
 * Private to the etcd client (src/coord/etcd*.c); one concern per file:
 *
 *   etcd.c        the client: endpoints, TLS, auth, the curl handle pool, one call with failover
 *   etcd_json.c   JSON of the gateway: int64 fields (strings), base64 keys and values, kvs
 *   etcd_kv.c     get, put, delete, txn
 *   etcd_lease.c  lease grant, keepalive, revoke
 *   etcd_watch.c  a watch stream on a thread, re-created from the last revision seen
 */
#ifndef RI_COORD_ETCD_INTERNAL_H
#define RI_COORD_ETCD_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>

#include "coord/etcd.h"

#if defined(__GNUC__)
#define ETCD_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ETCD_PRINTF(a, b)
#endif

struct ri_etcd {
    char **urls;                /* "http://host:port" or "https://host:port", no trailing slash */
    size_t n_urls;
    char *ca_file, *cert_file, *key_file, *user, *password;
    int64_t connect_timeout_ms, request_timeout_ms, watch_refresh_ms;
    pthread_mutex_t mu;         /* guards what follows */
    size_t current;             /* the member that answered last */
    char *token;                /* auth token, NULL before the first authentication */
    CURL **idle;                /* curl handles kept for reuse (their connections stay open) */
    size_t n_idle, cap_idle;
};

/* gRPC status codes etcd answers with (google.golang.org/grpc/codes). */
enum { ETCD_GRPC_NOT_FOUND = 5, ETCD_GRPC_DEADLINE = 4, ETCD_GRPC_UNAVAILABLE = 14, ETCD_GRPC_UNAUTHENTICATED = 16 };

void etcd_ok(ri_etcd_error *err);
void etcd_fail(ri_etcd_error *err, ri_etcd_code code, const char *fmt, ...) ETCD_PRINTF(3, 4);
int64_t etcd_mono_ms(void);

/* POST body to path (e.g. "/v3/kv/range") with failover; *reply: the first JSON value of the
 * answer (a stream's first message). timeout_ms > 0 bounds the whole call. */
bool etcd_call(ri_etcd *etcd, const char *path, json_t *body, int64_t timeout_ms, json_t **reply,
               ri_etcd_error *err);
/* The options every request shares (TLS, timeouts, no signals) on a reset handle. */
void etcd_curl_common(ri_etcd *etcd, CURL *h, int64_t timeout_ms);
/* A copy of the current token (NULL: none), for a request's Authorization header. */
struct curl_slist *etcd_headers(ri_etcd *etcd, bool *nomem);
/* With auth configured: a token (a new one if renew) from the member at url. */
bool etcd_ensure_token(ri_etcd *etcd, const char *url, bool renew, int64_t timeout_ms, ri_etcd_error *err);
/* The "error" object a gateway sends in place of an answer -> err; false if reply has none. */
bool etcd_reply_error(json_t *reply, const char *url, ri_etcd_error *err);

/* ---- JSON (etcd_json.c) ------------------------------------------------------------------- */
/* A base64 JSON string of bytes (NULL on no memory). */
json_t *etcd_json_b64(const void *data, size_t len);
/* An int64 field: the gateway writes them as strings, omits zeros. */
bool etcd_json_i64(json_t *obj, const char *name, int64_t *out);
/* Key + every key after it that has key as a prefix: range_end of a prefix (NULL on no memory). */
json_t *etcd_json_range_end(const char *key);
bool etcd_parse_kv(json_t *obj, ri_etcd_kv *kv, ri_etcd_error *err);
void etcd_kv_free(ri_etcd_kv *kv);
/* A RangeResponse (or a txn's response_range) -> out. */
bool etcd_parse_range(json_t *obj, ri_etcd_range *out, ri_etcd_error *err);
/* The header's revision of a response. */
bool etcd_header_revision(json_t *obj, int64_t *out, ri_etcd_error *err);

#endif
