/* The server's internals (docs/SERVER.md). Threads: everything here belongs to the lws
 * service thread unless marked "worker" (touched by the worker running the sandbox's job)
 * or "locked" (io_lock). */
#ifndef RI_SERVER_INTERNAL_H
#define RI_SERVER_INTERNAL_H

#include <jansson.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ri/sandbox.h"
#include "ri/lang.h"
#include "ri/server.h"
#include "ri/store.h"
#include "util/base64.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/random.h"

#define SRV_ID_HEX 24                   /* 96 random bits */
#define SRV_ID_PREFIX "sandbox-"
#define SRV_ID_LEN (8 + SRV_ID_HEX)
#define SRV_TOKEN_HEX 32                /* 128 random bits */
#define SRV_STDIN_MAX (1u << 20)
#define SRV_OUT_EVENT_MAX 1024u         /* bytes of data per stdout/stderr event (the original's) */
#define SRV_OUT_KEEP_MAX (4u << 20)     /* undelivered output kept while no client reads it */
#define SRV_CONN_QUEUE_MAX (64u << 20)
#define SRV_PENDING_MAX 256
#define SRV_TICK_MS 100
#define SRV_INIT_TIMEOUT_MS 30000
#define SRV_SB_OUT_HIGH (1u << 20)      /* a sandbox's unsent output that pauses its execution */
#define SRV_SB_OUT_LOW (256u << 10)     /* ... and resumes it once below this */
#define SRV_PARSE_OFF_THREAD (256u << 10) /* messages at least this large are parsed on a worker */

typedef struct ri_server srv;
typedef struct srv_sandbox srv_sandbox;
typedef struct srv_conn srv_conn;
typedef struct srv_job srv_job;
typedef struct srv_pending srv_pending;

/* What a checkpoint wrote, and what it took (jobs.c). */
typedef struct srv_ckpt_info {
    char file[64];     /* checkpoint_{ms}.img, or checkpoint_{fence}_{ms}.img */
    bool fenced;       /* refused: this server no longer owns the sandbox */
    bool delta;        /* a delta on the last full image, else a full image */
    size_t bytes;
    int64_t snapshot_us, write_us;
} srv_ckpt_info;

/* ---- logging (log.c) ---------------------------------------------------------------- */
/* One JSON object per line: ts, level, msg, and the fields of fmt (json_pack format, may be NULL). */
void srv_log(srv *s, const char *level, const char *msg, const char *fmt, ...);

/* ---- ids, tokens (ids.c) -------------------------------------------------------------- */
/* Whether host:port can be listened on (tried and closed at once); else why, from errno
 * or the resolver (listen_probe.c). */
bool srv_probe_listen(const char *host, int port, char *why, size_t cap);
bool srv_new_sandbox_id(char out[SRV_ID_LEN + 1]);
bool srv_id_valid(const char *id);                      /* ^sandbox-[0-9a-f]{24}$ */
bool srv_token_equal(const char *known, const char *given); /* constant time in the token length */
void srv_token_hash_hex(const char *token, char out[65]);
bool srv_hex_equal_ct(const char *a, const char *b, size_t n);

/* ---- UTF-8 output (codec.c) ------------------------------------------------------------- */

typedef struct srv_utf8 {
    uint8_t tail[4];
    uint8_t ntail;
} srv_utf8;
/* Valid UTF-8 of what is complete so far (invalid bytes: U+FFFD); an incomplete
 * character at the end is kept for the next call. flush: emit the tail as U+FFFD. malloc'd. */
char *srv_utf8_feed(srv_utf8 *st, const uint8_t *data, size_t len, bool flush, size_t *out_len);

/* ---- protocol (protocol.c) -------------------------------------------------------------- */
/* Parses a client message: size and nesting limits, must be an object. NULL with why set. */
json_t *srv_parse_message(const char *text, size_t len, size_t max_bytes, uint32_t max_depth, char *why,
                          size_t whycap);
char *srv_ev_status(const char *status);
char *srv_ev_error(const char *message);
char *srv_ev_output(const char *stream, const char *text, size_t len);
/* SANDBOX_EXECUTION_DONE of an execution that ran, with our fields (the original's clients
 * ignore them): "exit_code" 0 or 1, and on failure "error":{"code","message"[,"trap_kind"]}. */
char *srv_ev_done(bool ok, const char *code, const char *message, const char *trap_kind);
/* The same with the exit code of a WASI process (non-zero: error EXIT). */
char *srv_ev_done_code(int exit_code, const char *code, const char *message, const char *trap_kind);
char *srv_ev_sandbox_id(const char *id, const char *token);
/* {"event":"result","action":A,"request_id":R,"ok":true, ...fields} (fields stolen). */
char *srv_ev_result_ok(const char *action, json_t *request_id, json_t *fields);
char *srv_ev_result_err(const char *action, json_t *request_id, const char *code, const char *message,
                        json_t *extra);

/* ---- sandbox config (config.c) ------------------------------------------------------------ */
typedef struct srv_sandbox_cfg {
    int64_t idle_timeout_s;             /* 0: never */
    bool enable_checkpoint;
    bool auto_checkpoint;
    bool handoff;
    char *fs_snapshot_name;             /* NULL: none */
    uint64_t max_memory_bytes, max_gas;
    uint32_t max_execution_ms;
    uint32_t seed;
    int64_t event_timestamp;
    ri_gas_schedule gas_schedule;
} srv_sandbox_cfg;

/* Reads the init message (and metadata's "sandbox" object); why on error. */
bool srv_cfg_from_init(srv_sandbox_cfg *cfg, json_t *init, char *why, size_t whycap);
json_t *srv_cfg_to_json(const srv_sandbox_cfg *cfg);
bool srv_cfg_from_json(srv_sandbox_cfg *cfg, json_t *j);
void srv_cfg_free(srv_sandbox_cfg *cfg);

/* ---- the checkpoint volume (volume.c) -------------------------------------------------- */
bool srv_write_atomic(const char *dir, const char *name, const void *data, size_t len, char *why, size_t whycap);
/* The same rename-into-place; durable false skips the fsyncs (a lease: it only matters
 * while its owner lives, and other processes see the rename at once). */
bool srv_replace_file(const char *dir, const char *name, const void *data, size_t len, bool durable, char *why,
                      size_t whycap);
bool srv_mkdirs(const char *path, char *why, size_t whycap);
bool srv_read_file(const char *path, size_t max, uint8_t **out, size_t *out_len, int *err_no);
/* Writes checkpoints/checkpoint_{ms}.img, then latest (srv_volume_prune removes old ones).
 * fence > 0 (etcd): checkpoints/checkpoint_{fence}_{ms}.img only; etcd's latest moves to it
 * when the caller commits it (coord.c). */
bool srv_volume_write_checkpoint(const char *root, const char *id, int64_t fence, const uint8_t *img, size_t len,
                                 char *file_out, size_t file_cap, char *why, size_t whycap);
/* Removes images beyond `keep` (oldest first), never `newest` nor a full image that a
 * kept delta is built on. */
void srv_volume_prune(const char *root, const char *id, const char *newest, uint32_t keep);
/* 0 ok, 1 not found, 2 error (why); name_out (may be NULL) gets the image's file name. */
int srv_volume_map_latest(const char *root, const char *id, const uint8_t **img, size_t *len, char *name_out,
                          size_t name_cap, char *why, size_t whycap);
/* checkpoints/name mapped read-only: 0 ok, 2 error (why). */
int srv_volume_map_image(const char *root, const char *id, const char *name, const uint8_t **img, size_t *len,
                         char *why, size_t whycap);
/* The full images older than delta_name whose size is parent_len, newest first (where a
 * delta's parent is looked for); malloc'd names, free each and the array. */
char **srv_volume_parent_candidates(const char *root, const char *id, const char *delta_name, uint64_t parent_len,
                                    size_t *count);
/* Removes images newer than the one latest names: left by a checkpoint that died before
 * it renamed latest, never committed (a later delta's parent must be the newest full). */
void srv_volume_drop_newer(const char *root, const char *id, const char *latest_name);
void srv_unmap(const uint8_t *img, size_t len);
bool srv_volume_write_metadata(const char *root, const char *id, json_t *meta, char *why, size_t whycap);
/* 0 ok, 1 not found, 2 corrupt (why). */
int srv_volume_read_metadata(const char *root, const char *id, json_t **meta, char *why, size_t whycap);
bool srv_volume_remove(const char *root, const char *id);
bool srv_remove_tree(const char *path);

/* ---- leases (lease.c) ------------------------------------------------------------------- */
typedef enum srv_lease_state { SRV_LEASE_ACQUIRED, SRV_LEASE_HELD_BY_OTHER, SRV_LEASE_ERROR } srv_lease_state;
srv_lease_state srv_lease_acquire(const char *root, const char *id, const char *owner, uint32_t lease_ms,
                                  char *holder, size_t holder_cap, char *why, size_t whycap);
/* true: still ours and renewed. */
bool srv_lease_renew(const char *root, const char *id, const char *owner, uint32_t lease_ms);
void srv_lease_release(const char *root, const char *id, const char *owner);
/* The lease lock (flock of lease.lock; -1 on error): no lease changes hands while held. */
int srv_lease_lock(const char *root, const char *id);
void srv_lease_unlock(int fd);
/* Whether another server holds an unexpired lease (call under srv_lease_lock). */
bool srv_lease_held_by_other(const char *root, const char *id, const char *owner);
bool srv_handoff_request(const char *root, const char *id, const char *requester);
bool srv_handoff_requested(const char *root, const char *id);
void srv_handoff_clear(const char *root, const char *id);

/* ---- coordination: who owns a sandbox (coord.c) ---------------------------------------------
 * One interface over two backends: the volume's lease files (lease.c, the default) and etcd
 * (coord_etcd.c, --coordinator), so that attach, create, checkpoint and restore are one code.
 * Calls marked "worker" may block (etcd: a round trip, a member failover); the others are
 * for the service thread and never wait. A sandbox's fence is its ownership's fencing token
 * (etcd: the owner key's create revision; volume leases: 0). */
typedef enum srv_own { SRV_OWN_ACQUIRED, SRV_OWN_TAKEN, SRV_OWN_UNAVAILABLE, SRV_OWN_ERROR } srv_own;
typedef enum srv_fence_result {
    SRV_FENCE_OK,
    SRV_FENCE_REFUSED,      /* the fence is no longer the owner's: this server lost the sandbox */
    SRV_FENCE_UNAVAILABLE,  /* etcd did not answer (the outcome may be unknown) */
    SRV_FENCE_ERROR,        /* the volume failed */
} srv_fence_result;
enum { SRV_READ_OK = 0, SRV_READ_NOT_FOUND = 1, SRV_READ_CORRUPT = 2, SRV_READ_UNAVAILABLE = 3 };
#define SRV_COORD_UNAVAILABLE "Coordinator unavailable"   /* how such messages begin */
typedef struct srv_etcd srv_etcd;

/* worker: takes the sandbox (holder: who has it, on TAKEN). */
srv_own srv_coord_acquire(srv *s, const char *id, int64_t *fence, char *holder, size_t holder_cap, char *why,
                          size_t cap);
/* worker: the sandbox's metadata (SRV_READ_*). */
int srv_coord_read_meta(srv *s, const char *id, json_t **meta, char *why, size_t cap);
/* worker: metadata written under the fence (etcd first, then metadata.json). */
srv_fence_result srv_coord_write_meta(srv *s, const char *id, int64_t fence, json_t *meta, char *why, size_t cap);
/* worker: the image written and committed as the latest checkpoint (volume: the latest file;
 * etcd: an image named with the fence, then latest moved by the owner's fenced txn; a refused
 * image is removed). */
srv_fence_result srv_coord_write_checkpoint(srv *s, const char *id, int64_t fence, const uint8_t *img, size_t n,
                                            char *file, size_t file_cap, char *why, size_t cap);
/* worker: the image latest names, mapped (srv_volume_map_latest's codes; 3: etcd unavailable). */
int srv_coord_map_latest(srv *s, const char *id, const uint8_t **img, size_t *len, char *name, size_t name_cap,
                         char *why, size_t cap);
/* worker: asks the owner to let go. */
bool srv_coord_request_handoff(srv *s, const char *id, char *why, size_t cap);
/* service thread: whether the sandbox is still ours (volume: its lease renewed when due). */
bool srv_coord_renew(srv *s, srv_sandbox *sb, int64_t now);
/* Whether the sandbox's queued requests must wait: its ownership is unconfirmed (etcd has not
 * answered the lease's keepalive past its deadline; it may have expired). */
bool srv_coord_paused(srv *s, const srv_sandbox *sb);
bool srv_coord_handoff_requested(srv *s, const char *id);
void srv_coord_handoff_clear(srv *s, const char *id);
/* service thread: gives the sandbox up (forget: it was deleted; etcd: its keys go too). */
void srv_coord_release(srv *s, const char *id, int64_t fence, bool forget);
/* Whether temporary files of id may be another live server's (startup cleaning). */
bool srv_coord_maybe_elsewhere(srv *s, const char *id);
/* service thread, when woken: the etcd watches saw a handoff request or a release, so the
 * handoff checks and waiting attaches run now instead of at the next tick. */
void srv_coord_events(srv *s);
/* /status's "coordinator" object (a new reference). */
json_t *srv_coord_status(srv *s);
/* How often a waiting attach asks etcd again when no release was seen (the watch wakes it). */
#define SRV_ETCD_RETRY_MS 1000

/* coord_etcd.c (see coord.c for what each does) */
bool srv_etcd_open(srv *s, char *err, size_t cap);
void srv_etcd_close(srv *s);
srv_own srv_etcd_acquire(srv *s, const char *id, int64_t *fence, char *holder, size_t holder_cap, char *why,
                         size_t cap);
bool srv_etcd_holds(srv *s, const char *id, int64_t fence);
bool srv_etcd_owned_here(srv *s, const char *id);   /* under any fence */
bool srv_etcd_confirmed(srv *s);                     /* ri_owner_confirmed */
srv_fence_result srv_etcd_commit(srv *s, const char *id, int64_t fence, const char *file, char *why, size_t cap);
srv_fence_result srv_etcd_put_meta(srv *s, const char *id, int64_t fence, const char *text, char *why, size_t cap);
/* meta and/or latest ("" when none) at one revision: SRV_READ_* */
int srv_etcd_read(srv *s, const char *id, json_t **meta, char *latest, size_t latest_cap, char *why, size_t cap);
bool srv_etcd_request_handoff(srv *s, const char *id, char *why, size_t cap);
bool srv_etcd_handoff_asked(srv *s, const char *id);
void srv_etcd_handoff_clear(srv *s, const char *id);
void srv_etcd_release(srv *s, const char *id, int64_t fence, bool forget);
enum { SRV_KICK_HANDOFF = 1u, SRV_KICK_RELEASE = 2u, SRV_KICK_CONFIRMED = 4u };
unsigned srv_etcd_take_kick(srv *s); /* SRV_KICK_*: what the watches saw since the last call */
void srv_etcd_stop_waking(srv *s);   /* before the lws context goes: the watches no longer wake it */
json_t *srv_etcd_status(srv *s);

/* ---- metrics (metrics.c) ---------------------------------------------------------------- */
/* Histograms: counts per bucket (not cumulative; the last one is above every bound) and the
 * sum, in microseconds or bytes; atomic, so any thread may observe. */
#define SRV_HIST_BUCKETS 19
typedef enum srv_hist_id {
    SRV_HIST_EXEC_RUN,                  /* a language/code execution: request to end */
    SRV_HIST_EXEC_ACTION,               /* an execute action: request to result */
    SRV_HIST_CKPT_TIME,                 /* a checkpoint on its worker (queue wait apart) */
    SRV_HIST_CKPT_BYTES,                /* the image written (full or delta) */
    SRV_HIST_RESTORE_TIME,              /* a restore on its worker */
    SRV_HIST_RESTORE_BYTES,             /* the images read (a delta and its parent) */
    SRV_HIST_COUNT
} srv_hist_id;
typedef struct srv_hist {
    atomic_uint_fast64_t n[SRV_HIST_BUCKETS + 1];
    atomic_uint_fast64_t sum;
} srv_hist;
typedef struct srv_metrics {
    atomic_uint_fast64_t executions, checkpoints, checkpoint_failures, restores, restore_failures, hibernations,
        messages, bad_messages, connections_total;
    atomic_uint_fast64_t executions_refused; /* execution requests answered without running */
    int64_t started_us;                 /* monotonic: the server's uptime */
    srv_hist hist[SRV_HIST_COUNT];
} srv_metrics;
/* The sandboxes of this server by state (service thread). */
typedef struct srv_counts {
    uint64_t total, live, attached, hibernated, executing, memory_bytes, paused_for_output;
} srv_counts;
void srv_count_sandboxes(srv *s, srv_counts *out);
void srv_metrics_observe(srv *s, srv_hist_id h, uint64_t value);
/* A finished job (service thread, before its done callback): its durations and bytes. */
void srv_metrics_job_done(srv *s, const srv_job *job);
char *srv_metrics_text(srv *s);
/* GET /status: {"status":"ok", version, server id, uptime, sandbox counts, ...} (malloc'd). */
char *srv_status_text(srv *s);

/* ---- TLS (tls.c) ------------------------------------------------------------------------- */
/* Whether cert and key are a readable PEM certificate (chain) and its unencrypted private
 * key; why names the file and the reason. */
bool srv_tls_check(const char *cert, const char *key, char *why, size_t whycap);
const char *srv_tls_library_version(void);
/* 127.0.0.0/8, ::1, ::ffff:127.x, localhost. */
bool srv_host_is_loopback(const char *host);

/* ---- connections ------------------------------------------------------------------------ */
typedef struct srv_frame {
    struct srv_frame *next;
    uint64_t out_mark;                  /* written once the sandbox's output up to here was */
    uint64_t done_of;                   /* the DONE of the sandbox's execution number done_of, or 0 */
    size_t len;
    unsigned char buf[]; /* LWS_PRE + len */
} srv_frame;

typedef enum srv_conn_kind { SRV_CONN_CREATE, SRV_CONN_ATTACH } srv_conn_kind;

struct srv_conn {
    srv *s;
    struct lws *wsi;
    srv_conn_kind kind;
    srv_sandbox *sb;                    /* attached sandbox (a reference), or NULL */
    srv_frame *head, *tail;
    size_t queued;
    bool out_held;                      /* attached during (or after) an execution: its output
                                         * waits for reconnect (or another message) */
    bool closing;                       /* close once the queue is sent */
    int close_code;
    bool init_done;
    int64_t opened;                     /* mono ms: a /create socket must send its init soon */
    char *rx;
    size_t rx_len, rx_cap;
    bool rx_overflow;
    /* attach waiting for another server to release its lease */
    bool waiting_lease;
    int64_t wait_deadline;
    int64_t wait_last_try;              /* mono ms of the last lookup (etcd: a slow fallback poll) */
    bool wait_kicked;                   /* a release was seen while a lookup was under way */
    char attach_id[SRV_ID_LEN + 1];
    char attach_token[SRV_TOKEN_HEX + 1]; /* kept: lws frees the URL after the handshake */
    /* a large message is parsed on a worker; the socket is not read meanwhile, and what
     * lws had already read waits here, in order */
    srv_job *parse_job;
    srv_pending *raw_head, *raw_tail;
    srv_job *attach_job;                /* the attach lookup on a worker (attach.c) */
    srv_conn *prev, *next;
};

/* Queue a frame (text taken over, freed); false if the connection is closing. It goes
 * out after the output its sandbox had posted by now (outlog.c). */
bool srv_conn_send(srv_conn *c, char *text);
/* The same, to go out once the sandbox's output up to offset mark was delivered; done_of:
 * the frame is that execution's SANDBOX_EXECUTION_DONE (written: the sandbox forgets it). */
bool srv_conn_send_at(srv_conn *c, char *text, uint64_t mark, uint64_t done_of);
void srv_frame_free(srv *s, srv_frame *f);
/* LWS_CALLBACK_SERVER_WRITEABLE: writes the next frame or output event (server.c). */
int srv_conn_writeable(srv_conn *c);
void srv_conn_send_status(srv_conn *c, const char *status);
void srv_conn_send_error(srv_conn *c, const char *status, const char *message);
void srv_conn_close(srv_conn *c, int code);
void srv_conn_attach(srv_conn *c, srv_sandbox *sb);
void srv_conn_detach(srv_conn *c);

/* ---- sandboxes ------------------------------------------------------------------------- */
typedef enum srv_job_kind {
    SRV_JOB_CREATE,
    SRV_JOB_EXECUTION,                  /* language/code: stdin, kill, replay */
    SRV_JOB_ACTION,                     /* our actions */
    SRV_JOB_CHECKPOINT,
    SRV_JOB_RESTORE,
    SRV_JOB_HIBERNATE,
    SRV_JOB_WAKE,
    SRV_JOB_PARSE,                      /* a large client message, parsed off the service thread */
    SRV_JOB_ATTACH,                     /* attach of a sandbox not live here: metadata, token, ownership */
} srv_job_kind;

/* Why a sliced execution came back from its worker unfinished (sched.c). */
/* STDIN: a WASI process read stdin with no input; it waits off its worker for a stdin event. */
typedef enum srv_pause_why { SRV_PAUSE_SLICE, SRV_PAUSE_OUTPUT, SRV_PAUSE_STDIN } srv_pause_why;

typedef enum srv_ckpt_reason { SRV_CKPT_CLIENT, SRV_CKPT_IDLE, SRV_CKPT_HANDOFF, SRV_CKPT_SHUTDOWN } srv_ckpt_reason;

/* Output of the sandbox's executions not yet written to a socket (outlog.c). */
typedef struct srv_outchunk {
    struct srv_outchunk *next;
    char *data;                         /* valid UTF-8 */
    size_t len, pos;                    /* pos: bytes delivered (or dropped) */
    uint8_t fd;                         /* 1 stdout, 2 stderr */
    bool notice;                        /* ours: output was dropped here (not counted) */
    bool in_budget;                     /* counted in the server's output budget */
} srv_outchunk;

struct srv_pending {
    struct srv_pending *next;
    json_t *msg;
    char *raw;                          /* a connection's message not yet parsed (raw_head) */
    size_t raw_len;
};

/* Delta checkpoints (delta.c): the full image below the sandbox's state. */
typedef struct srv_delta_state {
    bool parent_known;                  /* parent_* name the full image the state is built on */
    char parent_file[64];
    uint8_t parent_sha256[32];
    uint64_t parent_len;
    uint8_t module_sha256[32];          /* the module at restore (another one: a full image) */
    uint8_t *dirty;                     /* pages the restored delta held, or NULL */
    uint32_t dirty_pages;               /* pages dirty covers */
    bool tracking;                      /* memory backed by the capture made at restore */
    ri_checkpoint *base;                /* that capture: still the memory's backing? */
    bool base_is_parent;                /* base holds the parent image's state: deltas store the
                                           workspace as its changes from base's */
} srv_delta_state;

struct srv_sandbox {
    srv *s;
    char id[SRV_ID_LEN + 1];
    char token[SRV_TOKEN_HEX + 1];
    int refs;
    bool in_registry;
    bool removed;                       /* deleted, checkpointed away or failed */
    srv_sandbox_cfg cfg;
    ri_sandbox *sb;                     /* NULL while hibernated or not yet made */
    srv_delta_state delta;              /* worker-owned: restore and checkpoint jobs */
    uint64_t mem_bytes;                 /* its memory when its last job ended (for busy ones) */
    bool hibernated;
    char hibernate_file[512];
    srv_job *hib_proc;                  /* a parked WASI execution whose sandbox is hibernated (or
                                           being hibernated): it goes on after the wake */
    srv_conn *conn;
    int64_t last_activity;              /* mono ms */
    srv_job *job;                       /* the job on a worker, or NULL */
    srv_pending *pend_head, *pend_tail;
    size_t npending;
    /* output not yet written to a socket, in order; offsets count its bytes since the
     * sandbox was made: posted (appended) and delivered (written, or dropped) */
    srv_outchunk *out_head, *out_tail;
    size_t out_kept;                    /* the program's bytes in out_head..out_tail */
    uint64_t out_posted, out_delivered, out_dropped;
    uint64_t exec_seq;                  /* executions started (numbers them) */
    char *done_event;                   /* the DONE of execution done_seq, not yet written */
    uint64_t done_seq;
    bool kill_pending;                  /* kill_sandbox waits for the job */
    bool handoff_pending;               /* another server asked for it */
    bool lease_held;
    int64_t fence;                      /* the ownership's fencing token (coord.c) */
    int64_t lease_renewed;
    int64_t handoff_checked;
    int64_t rate_window;
    uint32_t rate_count;
    /* io with the execution (locked) */
    pthread_mutex_t io_lock;
    pthread_cond_t io_cond;
    uint8_t *stdin_buf;
    size_t stdin_len;
    bool stdin_closed;
    atomic_bool killed;
    /* worker */
    srv_utf8 out_utf8[2];
    int64_t exec_deadline;              /* mono ms */
    ri_snapshotter *snapper;
    ri_snapshots *named;
    ri_snapstore *store;
    /* scheduling (sched.c) */
    atomic_size_t out_bytes;            /* output posted, not yet sent or dropped */
    atomic_bool out_blocked;            /* its execution paused for output (worker sets) */
    atomic_bool pausable;               /* the running call can pause (worker sets) */
    srv_job *parked;                    /* its paused execution, waiting for the client to read
                                         * (or, a WASI process, for stdin) */
    /* live checkpoint of a running process (proc.c) */
    atomic_bool live_ckpt;              /* asked: the execution pauses and is checkpointed */
    srv_job *proc;                      /* the paused execution while its checkpoint runs */
    srv_ckpt_reason live_reason;
    ri_language run_lang;               /* the language of the execution running, else RI_LANG_NONE */
    int64_t detached_since;             /* mono ms: an execution runs and no client is attached */
    bool detached_ended;                /* the grace period ended its execution */
    srv_sandbox *prev, *next;
};

/* The queue back to the service thread: posted events and finished jobs, in order. */
typedef struct srv_item {
    struct srv_item *next;
    srv_sandbox *sb;                    /* events: the sandbox they belong to */
    char *text;                         /* an event or output, or NULL for a job */
    uint8_t fd;                         /* output: 1 stdout, 2 stderr (text: len bytes of UTF-8) */
    size_t len;
    srv_job *job;
} srv_item;

struct srv_job {
    srv_job *next;
    srv_job_kind kind;
    srv_sandbox *sb;
    json_t *msg;                        /* the request (owned) */
    void (*work)(srv_job *job);         /* worker */
    void (*done)(srv_job *job);         /* service thread */
    /* outcome */
    bool ok;
    char status[64];
    char message[1024];
    int close_code;
    char *event;                        /* a result event to send */
    srv_ckpt_reason reason;
    srv_sandbox *created;               /* snapshot_restore/branch: the new sandbox */
    ri_sandbox *new_sb;
    uint8_t *data;
    size_t data_len;
    bool not_found;
    bool lease_taken;                   /* the worker took the new sandbox's lease */
    int64_t fence;                      /* ... under this fencing token (coord.c) */
    int64_t submitted_us, started_us, ended_us; /* monotonic: queue and work times for the logs */
    srv_ckpt_info ckpt;                 /* a checkpoint job: what it wrote */
    uint64_t restore_bytes;             /* a restore job: the bytes of the images it read */
    /* Housekeeping the worker runs after posting the job (the job may be freed by then,
     * so it gets its own context, which it frees): a checkpoint's pruning of old images
     * is not on the client's critical path. */
    void (*after)(void *ctx);
    void *after_ctx;
    srv_item item;                      /* its entry in the done queue: posting allocates nothing */
    /* sliced executions (sched.c) */
    bool started;                       /* the call has begun (later slices resume it) */
    bool paused;                        /* came back unfinished: to be run again */
    srv_pause_why pause_why;
    int64_t run_ms;                     /* time on workers so far */
    atomic_int_fast64_t slice_started;  /* mono ms, 0 while not on a worker */
    atomic_int_fast64_t slice_deadline; /* mono ms: its time is up (all slices together) */
    atomic_bool preempt;                /* the service thread asks it to yield its worker */
    atomic_bool wasi;                   /* an execution of a WASI process (set by its first slice) */
    ri_interpreter *interp;             /* code as text: the server's interpreter (langs.c), else NULL */
    int64_t parked_at;                  /* mono ms: parked waiting for stdin since */
    json_t *proc_state;                 /* checkpoint: the paused process to save with the image;
                                         * restore: the one read back (proc.c) */
    srv_conn *conn;                     /* SRV_JOB_PARSE: the connection (NULL once it closed) */
    size_t max_bytes;                   /* SRV_JOB_PARSE: the limits */
    uint32_t max_depth;
    /* SRV_JOB_ATTACH (attach.c): conn is the asking connection (NULL once it closed) */
    srv *server;
    char attach_id[SRV_ID_LEN + 1];
    bool token_given;
    char token_hash[65];
    bool retry;                         /* a retry while waiting for a handoff */
    bool handoff;                       /* the metadata allows handoff */
    int attach;                         /* the outcome */
};

#define SRV_LANGUAGES 5 /* indexed by ri_language */
#define SRV_DEFAULT_MEMORY ((uint64_t)128 << 20) /* a sandbox's memory limit when the client names none */

struct ri_server {
    ri_server_config cfg;
    /* interpreters of code as text, opened on first use (langs.c) */
    pthread_mutex_t lang_lock;
    ri_sandboxes *lang_factory;
    ri_interpreter *interpreters[SRV_LANGUAGES];
    bool opening[SRV_LANGUAGES];        /* a worker opens it; others wait on lang_cond */
    pthread_cond_t lang_cond;
    /* the host functions the interpreters import beyond WASI and env (Ruby's JavaScript
     * host), read at start and admitted in every sandbox's config */
    ri_interpreter_imports *lang_imports[SRV_LANGUAGES];
    char server_id[80];
    char *checkpoint_path;
    char *store_dir;
    srv_etcd *etcd;                     /* --coordinator: ownership on etcd (coord_etcd.c), else NULL */
    char *hibernate_dir;
    bool hibernate_dir_temp;
    struct lws_context *ctx;
    struct lws_vhost *vhost;
    int port;
    atomic_bool stop;
    bool stopping;
    ri_sandboxes *factory;
    srv_sandbox *sandboxes;
    size_t nsandboxes;
    srv_conn *conns;
    size_t nconns;
    srv_metrics m;
    lws_sorted_usec_list_t tick;
    int64_t last_pressure;
    /* workers */
    pthread_t *threads;
    uint32_t nthreads;
    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    srv_job *jobs_head, *jobs_tail;     /* executions and actions */
    srv_job *ctl_head, *ctl_tail;       /* creates, restores, checkpoints, parses: served first */
    size_t exec_waiting;                /* jobs in jobs_head (q_lock) */
    bool workers_quit;
    srv_item *done_head, *done_tail;
    size_t jobs_out;                    /* submitted, not yet done (service thread) */
    pthread_mutex_t log_lock;
    atomic_size_t out_bytes;            /* output posted, not yet sent or dropped (all sandboxes) */
    char error[4096];                   /* why ri_server_run returned false */
};

/* ---- workers (workers.c) ----------------------------------------------------------------- */
/* The server without its lws context, listener and worker threads (server.c): what
 * ri_server_new builds first; ri_server_free frees it. */
srv *srv_new_core(const ri_server_config *cfg, char *err, size_t errcap);
bool srv_workers_start(srv *s);
void srv_workers_stop(srv *s);
/* Runs the next queued job on the calling thread (false: none queued): for a process
 * without worker threads, such as the message-handling fuzz harness. */
bool srv_run_queued_job(srv *s);
void srv_submit(srv *s, srv_job *job);  /* takes a reference on job->sb; sets sb->job */
void srv_resubmit(srv *s, srv_job *job); /* a paused execution's next slice (no new reference) */
/* From a worker: an event for the sandbox's connection (text taken over). */
void srv_post(srv *s, srv_sandbox *sb, char *text);
/* From a worker: output (len bytes of UTF-8 taken over) to fd 1 or 2; counted in the
 * output budget until delivered (sched.c). */
void srv_post_output(srv *s, srv_sandbox *sb, int fd, char *text, size_t len);
void srv_drain(srv *s);                 /* service thread: process what the workers sent */
srv_job *srv_job_new(srv_job_kind kind, srv_sandbox *sb, json_t *msg, void (*work)(srv_job *),
                     void (*done)(srv_job *));
void srv_job_free(srv_job *job);

/* ---- registry (registry.c) ------------------------------------------------------------ */
srv_sandbox *srv_sandbox_new(srv *s, const char *id, const char *token, srv_sandbox_cfg *cfg);
srv_sandbox *srv_sandbox_find(srv *s, const char *id);
void srv_sandbox_ref(srv_sandbox *sb);
void srv_sandbox_unref(srv_sandbox *sb);
void srv_sandbox_remove(srv_sandbox *sb); /* leaves the registry; freed with its last reference */
ri_sandbox_config srv_sandbox_ri_config(srv_sandbox *sb);
/* The config with the I/O host functions and WASI, stdout/stderr to the output log (fns:
 * room for 2, and wasi: must outlive the create). */
/* The host functions of a sandbox's config: the server's ri.write and ri.read, and the
 * interpreters' (langs.c), filled by srv_sandbox_full_config. */
#define SRV_HOST_FNS 160
typedef struct srv_host_fns {
    ri_host_function fns[SRV_HOST_FNS];
    const char *modules[SRV_HOST_FNS];
} srv_host_fns;
ri_sandbox_config srv_sandbox_full_config(srv_sandbox *sb, srv_host_fns *fns, ri_wasi_config *wasi);
/* Makes the ri_sandbox (worker or service thread). */
ri_sandbox *srv_sandbox_make(srv_sandbox *sb, ri_sandbox_error *err);
void srv_sandbox_touch(srv_sandbox *sb);
json_t *srv_sandbox_metadata(srv_sandbox *sb);

/* ---- languages (langs.c) ------------------------------------------------------------------ */
/* A language the server runs by name ("python"), else RI_LANG_NONE; the names for messages. */
ri_language srv_language_of(const char *name);
const char *srv_language_names(void);
/* The server's interpreter of lang, opened on first use (thread-safe); NULL with why. */
ri_interpreter *srv_interpreter(srv *s, ri_language lang, char *why, size_t cap);
void srv_interpreters_free(srv *s);
/* At start: the interpreters' host imports (lang_imports) from the files installed. */
void srv_lang_imports_read(srv *s);
/* Appends them to fns from index n (at most SRV_HOST_FNS in all); the new count. */
uint32_t srv_lang_imports_add(const srv *s, srv_host_fns *fns, uint32_t n);

/* ---- executions and jobs (exec.c, jobs.c, snapshots.c) ----------------------------------- */
void srv_start_execution(srv_sandbox *sb, json_t *msg);
/* An execution job for a process restored paused (its call pending): its next slice resumes it. */
srv_job *srv_execution_job_resumed(srv_sandbox *sb);
/* Whether a module imports wasi_snapshot_preview1: it runs as a WASI process (wasmscan.c). */
bool srv_module_imports_wasi(const uint8_t *wasm, size_t n);
void srv_kill_process(srv_sandbox *sb);
void srv_start_checkpoint(srv_sandbox *sb, srv_ckpt_reason reason);
/* Whether the memory budget may hibernate it now: no job, or a parked WASI process
 * (jobs.c). */
bool srv_hibernatable(const srv_sandbox *sb);
/* The same, with a paused process's state to save beside the image (taken over); false:
 * out of memory (nothing started, state freed). */
bool srv_start_checkpoint_with(srv_sandbox *sb, srv_ckpt_reason reason, json_t *proc_state);
void srv_start_create(srv_sandbox *sb, json_t *init);
void srv_start_restore(srv_sandbox *sb);
void srv_start_hibernate(srv_sandbox *sb);
void srv_start_wake(srv_sandbox *sb);
void srv_start_action(srv_sandbox *sb, json_t *msg);
void srv_start_fs_snapshot(srv_sandbox *sb, json_t *msg);
bool srv_action_known(const char *action);
void srv_finish_kill(srv_sandbox *sb);
/* Releases the sandbox's lease; for a sandbox with handoff (whose lease is the original's
 * lock) its socket hears SANDBOX_LOCK_RELEASING and SANDBOX_LOCK_RELEASED around it. */
void srv_release_lease_announced(srv_sandbox *sb, bool forget);
/* The sandbox is no longer this server's (lease lost, a write fenced): its client hears
 * SANDBOX_LOCK_RENEWAL_ERROR (why), its execution ends, it leaves the registry. */
void srv_ownership_lost(srv_sandbox *sb, const char *why);
/* Runs queued messages while nothing runs (service thread). */
void srv_pump(srv_sandbox *sb);
/* A parsed client message (taken over), or NULL with why (dispatch.c). */
void srv_handle_parsed(srv_conn *c, json_t *msg, const char *why);
bool srv_conn_wants_message(srv_conn *c);
bool srv_rate_ok(srv_sandbox *sb);
bool srv_store_open(srv_sandbox *sb, ri_snapstore_error *err); /* worker */
/* A checkpoint now, on the calling thread (a worker, or shutdown); no pruning. */
bool srv_checkpoint_now(srv_sandbox *sb, srv_ckpt_info *info, char *why, size_t whycap);
/* delta.c: restores img (latest's, full or delta) into rsb and sets sb->delta; false:
 * why says what is corrupt or missing. */
bool srv_delta_restore(srv_sandbox *sb, ri_sandbox *rsb, const char *latest, const uint8_t *img, size_t n, char *why,
                       size_t whycap);
/* The pages a delta checkpoint must store (a bitmap of *len bytes, malloc'd), or NULL
 * when the next checkpoint must be a full image. */
uint8_t *srv_delta_pages(srv_sandbox *sb, size_t *len);
/* A full image was committed as `file`: it is now the parent (its SHA-256 computed). */
void srv_delta_wrote_full(srv_sandbox *sb, const char *file, const uint8_t *img, size_t n);
void srv_delta_clear(srv_delta_state *d);
/* {"file", "sha256", "bytes"} of the parent for metadata.json, or NULL. */
json_t *srv_delta_metadata(const srv_sandbox *sb);

/* ---- the service loop (server.c, attach.c, tick.c) ---------------------------------------- */
void srv_handle_attach(srv_conn *c, const char *id, const char *token);
/* The sandbox_token query argument ("" when absent). */
void srv_url_token(struct lws *wsi, char *out, size_t cap);
void srv_attach_retry(srv_conn *c);
/* The connection goes away: its attach lookup forgets it (an ownership taken is released). */
void srv_conn_forget_attach(srv_conn *c);
void srv_tick(srv *s);
/* the handoff checks (handoffs) and the waiting attaches (releases) only */
void srv_tick_coord(srv *s, bool handoffs, bool releases, bool confirmed);
/* Checkpoints what must be saved; false (s->error says which) when some were not. */
bool srv_shutdown_sandboxes(srv *s);

/* ---- scheduling (sched.c) ------------------------------------------------------------------ */
/* Worker: whether the running execution should pause now (its client does not read, or
 * the output budget is spent, or others wait for its worker); sets sb->out_blocked. */
bool srv_sched_should_yield(srv_sandbox *sb);
/* Service thread: a sliced execution came back paused: run it again or park it. */
void srv_sched_paused(srv_sandbox *sb, srv_job *job);
/* Service thread, every tick and after sends: preempts long slices, resumes parked
 * executions whose output drained, ends executions detached beyond the grace period. */
void srv_sched_tick(srv *s, int64_t now);
void srv_sched_unpark(srv_sandbox *sb);

/* ---- processes in checkpoints (proc.c) ---------------------------------------------------------- */
/* {"action":"checkpoint","live":true} during a WASI execution (or a handoff, or the end of
 * the detached grace period): pause it and checkpoint it, with that reason. */
void srv_live_checkpoint_request(srv_sandbox *sb, srv_ckpt_reason reason);
/* Service thread: the execution paused for a live checkpoint; takes it off (sb->proc) and
 * starts the checkpoint with the process state (undelivered output, stdin, time used). */
void srv_live_checkpoint_start(srv_sandbox *sb, srv_job *job);
/* The live checkpoint ended: committed (the process leaves with the sandbox) or not (it
 * runs on here). */
void srv_live_checkpoint_end(srv_sandbox *sb, bool committed);
/* Worker: {id}/process.json naming the image `file` (atomic). */
bool srv_proc_write(const char *root, const char *id, json_t *state, const char *file, char *why, size_t whycap);
/* Worker: the process state saved with image `latest`, or NULL. */
json_t *srv_proc_read(const char *root, const char *id, const char *latest);
/* Service thread, after a restore: a paused call goes on as an execution, its saved output
 * waiting for the client's reconnect. */
void srv_proc_restored(srv_sandbox *sb, json_t *state);

/* ---- stale temporary files (tmpclean.c) ------------------------------------------------------ */
/* Removes temporary files a dead writer left in ROOT/{id} (every id when id is NULL). */
void srv_clean_temps(srv *s, const char *id);

/* ---- output on its way to the client (outlog.c) ------------------------------------------------ */
/* Appends output (text taken over) and wakes the connection that reads it. */
void srv_outlog_append(srv_sandbox *sb, int fd, char *text, size_t len);
/* The next stdout/stderr event (at most SRV_OUT_EVENT_MAX bytes of data, whole characters),
 * malloc'd, or NULL (nothing, or out of memory); *n: the bytes it carries. */
char *srv_outlog_event(srv_sandbox *sb, size_t *n);
/* n bytes of the head were written to a socket (or are given up). */
void srv_outlog_delivered(srv_sandbox *sb, size_t n);
/* Drops all of it (the sandbox goes, or no reconnect will ask for it). */
void srv_outlog_clear(srv_sandbox *sb);
/* A new execution starts: the rest of the last one still goes to a client reading it; for
 * a reconnect only the new one counts. */
void srv_output_new_execution(srv_sandbox *sb);
/* Nobody reads it now: keep at most SRV_OUT_KEEP_MAX (the oldest dropped, one notice). */
void srv_outlog_bound(srv_sandbox *sb);
/* Whether output waits for c: its sandbox's, not held back. */
bool srv_output_pending(srv_conn *c);
/* Its client went: what is left waits for a reconnect, bounded. */
void srv_output_detach(srv_sandbox *sb);
/* Attach: a sandbox with an execution running or undelivered output holds its output
 * back until the client says where it is (reconnect) or sends anything else. */
void srv_output_attach(srv_conn *c, bool running);
/* {"action":"reconnect"}: SANDBOX_EXECUTION_RUNNING, then what no socket got yet (and the
 * DONE of an execution that ended meanwhile). */
void srv_output_reconnect(srv_conn *c, bool running);
/* Another message on a held connection: output flows (an ended execution's rest is dropped). */
void srv_output_release(srv_conn *c, bool running);
/* An execution that ran has ended: its DONE (event taken over) after the rest of its output,
 * kept for a reconnect until written. */
void srv_output_done(srv_sandbox *sb, char *done_event);

/* ---- large messages (parse.c) -------------------------------------------------------------------- */
/* Handles a complete client message (text taken over, malloc'd), parsing large ones on a worker. */
void srv_conn_message(srv_conn *c, char *text, size_t len);
/* The connection goes away: its waiting messages are dropped, its parse job forgets it. */
void srv_conn_forget_parse(srv_conn *c);

#endif
