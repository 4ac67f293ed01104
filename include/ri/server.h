/*
 * ri server: sandboxes over WebSocket (issue 7, seed 002; docs/SERVER.md).
 *
 * One lws service thread owns every connection and the sandbox registry; executions,
 * loads, checkpoints and restores run on a small pool of worker threads, whose results
 * come back through a queue (lws_cancel_service wakes the service thread). Several
 * servers may share one checkpoint volume: a lease file per sandbox keeps it live in at
 * most one process.
 */
#ifndef RI_SERVER_H
#define RI_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How much the server logs: each level includes the more severe ones. */
typedef enum ri_server_log_level {
    RI_SERVER_LOG_ERROR = 0,
    RI_SERVER_LOG_WARNING = 1,
    RI_SERVER_LOG_INFO = 2,
    RI_SERVER_LOG_DEBUG = 3,
} ri_server_log_level;

typedef struct ri_server_config {
    const char *host;               /* "127.0.0.1" */
    int port;                       /* 0: a free port (ri_server_port tells which) */
    const char *checkpoint_path;    /* NULL: checkpointing refused */
    uint32_t workers;               /* 4 */
    uint32_t max_sandboxes;         /* 1024 */
    uint32_t keep_checkpoints;      /* 3 */
    uint64_t memory_budget;         /* bytes; 0: no budget */
    const char *server_id;          /* NULL: random "srv-<16 hex>" */
    uint32_t lease_ms;              /* 60000 */
    const char *store_dir;          /* NULL: CHECKPOINT_PATH/_store when a path is set */
    size_t max_message_bytes;       /* 16 MiB */
    uint32_t max_json_depth;        /* 32 */
    uint32_t snapshot_rate;         /* snapshot operations per second per sandbox: 10 */
    FILE *log;                      /* JSON lines; NULL: stderr */
    bool compress_checkpoints;      /* zstd pages in checkpoint images (default: raw, faster) */
    uint64_t max_sandbox_memory;    /* the largest max_memory_bytes a client may ask: 256 MiB */
    uint32_t max_execution_ms;      /* the largest sandbox.max_execution_ms a client may ask: 300000 */
    uint64_t max_gas;               /* the largest sandbox.max_gas a client may ask: 1e11 */
    uint32_t slice_ms;              /* an execution's time slice while others wait for a worker: 100 */
    uint32_t detached_grace_ms;     /* an execution without a client is ended after this: 60000 */
    uint64_t output_budget;         /* bytes of output waiting for all clients together: 64 MiB */
    const char *tls_cert;           /* PEM certificate (chain) file: serve wss:// and https:// (with tls_key) */
    const char *tls_key;            /* PEM private key file of tls_cert; NULL with tls_cert NULL: plain ws:// */
    ri_server_log_level log_level;  /* the least severe level logged: RI_SERVER_LOG_INFO */
    bool log_text;                  /* one readable line per event instead of JSON */
    const char *interpreters_dir;   /* python.wasm, lua.wasm...: NULL: $RI_INTERPRETERS_DIR, else
                                       ~/.cache/ri/interpreters (scripts/fetch-interpreters.sh) */
    /* Ownership on etcd instead of the volume's lease files (docs/SERVER.md, "Several machines"):
     * "etcd://host:port[,host:port...]" (etcds:// for TLS); NULL: lease files. */
    const char *coordinator;
    const char *coordinator_ca, *coordinator_cert, *coordinator_key; /* TLS to etcd, optional */
    const char *coordinator_user, *coordinator_password;            /* etcd auth, optional */
    const char *coordinator_prefix; /* the keys' root: "/ri" */
} ri_server_config;

RI_API ri_server_config ri_server_config_default(void);

typedef struct ri_server ri_server;

/* Why ri_server_open failed: a config its caller can fix (a TLS certificate or key that is
 * missing, unreadable, not PEM or not a pair; an invalid server id; an address that cannot
 * be listened on: in use, not this machine's, a host that does not resolve), or anything
 * else (out of memory, threads, ...). */
typedef enum ri_server_errcode { RI_SERVER_OK = 0, RI_SERVER_BAD_CONFIG, RI_SERVER_FAILED } ri_server_errcode;

/* Binds and prepares (no thread runs yet). NULL with err filled (and *code, when not NULL)
 * on failure. */
RI_API ri_server *ri_server_open(const ri_server_config *cfg, ri_server_errcode *code, char *err, size_t errcap);
/* ri_server_open without the error code. */
RI_API ri_server *ri_server_new(const ri_server_config *cfg, char *err, size_t errcap);
/* The port it listens on. */
RI_API int ri_server_port(const ri_server *s);
/* Serves on the calling thread until ri_server_stop; then checkpoints the live sandboxes
 * that enabled checkpointing, releases leases and returns true; false when a shutdown
 * checkpoint failed (ri_server_error says which sandboxes were not saved) or on an error. */
RI_API bool ri_server_run(ri_server *s);
/* Why ri_server_run returned false ("" if it did not). */
RI_API const char *ri_server_error(const ri_server *s);
/* Async-signal-safe enough for a signal handler: sets a flag and wakes the service thread. */
RI_API void ri_server_stop(ri_server *s);
RI_API void ri_server_free(ri_server *s);

#ifdef __cplusplus
}
#endif
#endif
