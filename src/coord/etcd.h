/*
 * A small etcd v3 client over etcd's JSON gateway (HTTP POST /v3/..., base64 keys and values),
 * with libcurl and jansson. docs/COORDINATION.md describes how the server uses it.
 *
 * - Endpoints: a list of members ("host:port", "http://host:port" or "https://host:port").
 *   A request goes to the member that answered last; on a connection error, a timeout or an
 *   "unavailable" answer it is sent to the next member, each member at most once per call.
 *   A write retried this way may be applied twice (the first member may have applied it
 *   before failing to answer): make writes idempotent with txn compares (owner.c does).
 * - TLS: ca_file (the CA that signed the members' certificates), cert_file and key_file (a
 *   client certificate); https endpoints. Auth: user and password -> /v3/auth/authenticate,
 *   whose token goes in the Authorization header; a rejected token is renewed once per call.
 * - Every request has a timeout (connect_timeout_ms, request_timeout_ms).
 * - Errors are values: a code and a message naming the endpoint and etcd's own error text.
 * - Thread safety: one ri_etcd may be used from several threads at once (a pool of curl
 *   handles and the token are behind the client's own mutex). No process-wide state, except
 *   libcurl's: call ri_etcd_global_init once in main, before any thread starts.
 */
#ifndef RI_COORD_ETCD_H
#define RI_COORD_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ri_etcd_code {
    RI_ETCD_OK = 0,
    RI_ETCD_E_INVALID,     /* a bad argument (the message says which) */
    RI_ETCD_E_NOMEM,
    RI_ETCD_E_UNAVAILABLE, /* no member answered (connection refused, reset, timed out) */
    RI_ETCD_E_SERVER,      /* etcd answered with an error: grpc_code and etcd's message */
    RI_ETCD_E_AUTH,        /* authentication failed */
    RI_ETCD_E_PROTOCOL,    /* an answer that is not what the v3 gateway sends */
    RI_ETCD_E_LEASE_NOT_FOUND, /* the lease expired or was revoked */
    RI_ETCD_E_INTERNAL,    /* libcurl or thread setup failed */
} ri_etcd_code;

typedef struct ri_etcd_error {
    ri_etcd_code code;
    int grpc_code;         /* RI_ETCD_E_SERVER: the gRPC status code etcd gave (5 not found, 14 unavailable...) */
    char message[512];
} ri_etcd_error;

const char *ri_etcd_code_name(ri_etcd_code code);

/* libcurl's global setup; once per process, in main, before any thread (not thread-safe).
 * ri_etcd_global_cleanup undoes it, after every client is closed. */
bool ri_etcd_global_init(ri_etcd_error *err);
void ri_etcd_global_cleanup(void);

typedef struct ri_etcd_config {
    const char *const *endpoints; /* n_endpoints of them, copied */
    size_t n_endpoints;
    const char *ca_file, *cert_file, *key_file; /* TLS, all optional */
    const char *user, *password;                /* auth, optional (both or neither) */
    int64_t connect_timeout_ms;                 /* 0: 1000 */
    int64_t request_timeout_ms;                 /* 0: 5000, per member tried */
    int64_t watch_refresh_ms;                   /* 0: 10000: a watch stream is re-created this often */
} ri_etcd_config;

typedef struct ri_etcd ri_etcd;

ri_etcd *ri_etcd_open(const ri_etcd_config *config, ri_etcd_error *err);
void ri_etcd_close(ri_etcd *etcd);

/* "h1:p1,h2:p2" or "etcd://h1:p1,h2:p2" (etcds:// for https) -> a malloc'd array of
 * malloc'd endpoint strings; free with ri_etcd_endpoints_free. */
bool ri_etcd_parse_endpoints(const char *text, char ***out, size_t *n, ri_etcd_error *err);
void ri_etcd_endpoints_free(char **endpoints, size_t n);

/* The member that answers now (for logs and tests): an index into the endpoints. */
size_t ri_etcd_current_endpoint(ri_etcd *etcd);

/* ---- keys and values -------------------------------------------------------------------- */

typedef struct ri_etcd_kv {
    char *key;                  /* NUL-terminated (keys here are text) */
    uint8_t *value;             /* value_len bytes, plus a NUL so text values read as strings */
    size_t value_len;
    int64_t create_revision, mod_revision, version, lease;
} ri_etcd_kv;

typedef struct ri_etcd_range {
    int64_t revision;           /* the store's revision when read */
    ri_etcd_kv *kvs;
    size_t n;
} ri_etcd_range;

void ri_etcd_range_free(ri_etcd_range *range);

/* prefix: every key that starts with key. */
bool ri_etcd_get(ri_etcd *etcd, const char *key, bool prefix, ri_etcd_range *out, ri_etcd_error *err);
/* lease 0: none. *revision (optional): the revision of the write. */
bool ri_etcd_put(ri_etcd *etcd, const char *key, const void *value, size_t value_len, int64_t lease,
                 int64_t *revision, ri_etcd_error *err);
bool ri_etcd_delete(ri_etcd *etcd, const char *key, bool prefix, int64_t *deleted, int64_t *revision,
                    ri_etcd_error *err);

/* ---- transactions ------------------------------------------------------------------------ */

typedef enum ri_etcd_target {
    RI_ETCD_VERSION, RI_ETCD_CREATE, RI_ETCD_MOD, RI_ETCD_VALUE, RI_ETCD_LEASE
} ri_etcd_target;
typedef enum ri_etcd_result { RI_ETCD_EQUAL, RI_ETCD_NOT_EQUAL, RI_ETCD_LESS, RI_ETCD_GREATER } ri_etcd_result;

typedef struct ri_etcd_compare {
    const char *key;
    ri_etcd_target target;
    ri_etcd_result result;
    int64_t number;             /* VERSION, CREATE, MOD, LEASE (a key that does not exist has 0) */
    const void *value;          /* VALUE */
    size_t value_len;
} ri_etcd_compare;

typedef enum ri_etcd_op_kind { RI_ETCD_OP_GET, RI_ETCD_OP_PUT, RI_ETCD_OP_DELETE } ri_etcd_op_kind;

typedef struct ri_etcd_op {
    ri_etcd_op_kind kind;
    const char *key;
    bool prefix;                /* GET, DELETE */
    const void *value;          /* PUT */
    size_t value_len;
    int64_t lease;              /* PUT */
} ri_etcd_op;

typedef struct ri_etcd_txn_result {
    bool succeeded;             /* every compare held: the success ops ran, else the failure ops */
    int64_t revision;           /* the store's revision after the txn */
    ri_etcd_range *ranges;      /* one per op that ran, in order (empty for PUT and DELETE) */
    size_t n;
} ri_etcd_txn_result;

void ri_etcd_txn_result_free(ri_etcd_txn_result *result);

bool ri_etcd_txn(ri_etcd *etcd, const ri_etcd_compare *compares, size_t n_compares, const ri_etcd_op *success,
                 size_t n_success, const ri_etcd_op *failure, size_t n_failure, ri_etcd_txn_result *out,
                 ri_etcd_error *err);

/* ---- leases ------------------------------------------------------------------------------- */

typedef struct ri_etcd_lease {
    int64_t id;
    int64_t ttl;                /* seconds granted (grant) or left (keepalive) */
    int64_t revision;           /* the store's revision in the answer's header */
} ri_etcd_lease;

bool ri_etcd_lease_grant(ri_etcd *etcd, int64_t ttl_seconds, ri_etcd_lease *out, ri_etcd_error *err);
/* One renewal. A lease that is gone: RI_ETCD_E_LEASE_NOT_FOUND. timeout_ms bounds the whole
 * call, failover included (0: the client's request timeout per member). */
bool ri_etcd_lease_keepalive(ri_etcd *etcd, int64_t id, int64_t timeout_ms, ri_etcd_lease *out,
                             ri_etcd_error *err);
bool ri_etcd_lease_revoke(ri_etcd *etcd, int64_t id, ri_etcd_error *err);

/* ---- watches ------------------------------------------------------------------------------ */

typedef enum ri_etcd_event_kind {
    RI_ETCD_EV_PUT,
    RI_ETCD_EV_DELETE,
    RI_ETCD_EV_COMPACTED,       /* events before `revision` are gone: re-read the state */
    RI_ETCD_EV_DISCONNECTED,    /* the stream broke (message in `error`); it is re-created */
    RI_ETCD_EV_CONNECTED,       /* a stream is (again) established */
} ri_etcd_event_kind;

typedef struct ri_etcd_event {
    ri_etcd_event_kind kind;
    const ri_etcd_kv *kv;       /* PUT, DELETE (a DELETE's kv has the key and mod_revision) */
    int64_t revision;           /* PUT, DELETE: the event's revision; COMPACTED: the first one left */
    const ri_etcd_error *error; /* DISCONNECTED */
} ri_etcd_event;

/* Called on the watch's own thread, one event at a time, in revision order. */
typedef void (*ri_etcd_watch_fn)(void *user, const ri_etcd_event *event);

typedef struct ri_etcd_watch ri_etcd_watch;

/* Watches key (or every key under it, prefix) from start_revision (0: from now) on a thread of
 * its own; a broken stream is re-created on the next member from the revision after the last
 * event delivered, so no event is lost or repeated. */
ri_etcd_watch *ri_etcd_watch_start(ri_etcd *etcd, const char *key, bool prefix, int64_t start_revision,
                                   ri_etcd_watch_fn fn, void *user, ri_etcd_error *err);
/* The same, without the events filters names (etcd leaves them out of the stream). */
enum { RI_ETCD_WATCH_NO_PUT = 1u, RI_ETCD_WATCH_NO_DELETE = 2u };
ri_etcd_watch *ri_etcd_watch_start_filtered(ri_etcd *etcd, const char *key, bool prefix, int64_t start_revision,
                                            unsigned filters, ri_etcd_watch_fn fn, void *user, ri_etcd_error *err);
/* Stops and joins the thread: no callback runs after it returns. NULL is allowed. */
void ri_etcd_watch_stop(ri_etcd_watch *watch);

#endif
