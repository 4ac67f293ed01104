/*
 * Ownership of sandboxes on etcd, with fencing (docs/COORDINATION.md has the keys, the state
 * machine and the invariants C1-C6).
 *
 * One ri_owner per server: it holds one etcd lease, renewed by a keepalive thread. A sandbox
 * is owned through the key PREFIX/sandboxes/<id>/owner, bound to that lease: it disappears
 * when the lease expires (as etcd measures it, not by comparing clocks). The fencing token of
 * an ownership is the owner key's create_revision: a later owner always has a larger one, and
 * every write for the sandbox (checkpoint confirmation, metadata) is a txn that holds only
 * while the owner key still has that create_revision.
 *
 * When no keepalive has answered for the lease's TTL (less a margin), the lease may have
 * expired: the module is UNCONFIRMED, and the server must start nothing new for its sandboxes
 * (ri_owner_confirmed is false) while it keeps renewing the same lease. etcd renews only a lease
 * that has not expired, and an owner key lives exactly as long as its lease: a renewal answered
 * proves that no other server could take a sandbox meanwhile, so the module is ACTIVE again with
 * everything it held (an etcd leader failover longer than the keepalive's window costs a pause,
 * not the sandboxes). When etcd says the lease is gone, or nothing is answered for another TTL,
 * the module reports ownership lost for every sandbox it held (on_lost, once per lease); the
 * server must stop serving them. It then grants itself a new lease as soon as etcd answers
 * again, with no sandbox owned.
 */
#ifndef RI_COORD_OWNER_H
#define RI_COORD_OWNER_H

#include "coord/etcd.h"

typedef enum ri_owner_code {
    RI_OWNER_OK = 0,
    RI_OWNER_E_INVALID,  /* a bad argument: an id with '/' or control characters, a token <= 0 */
    RI_OWNER_E_NOMEM,
    RI_OWNER_E_TAKEN,    /* another server owns the sandbox (the message names it) */
    RI_OWNER_E_FENCED,   /* the token is no longer the owner's: this server lost the sandbox */
    RI_OWNER_E_LOST,     /* this server's lease is lost (or the module is closed): nothing is owned */
    RI_OWNER_E_ETCD,     /* etcd failed (etcd_code and the message say how) */
} ri_owner_code;

typedef struct ri_owner_error {
    ri_owner_code code;
    ri_etcd_code etcd_code;  /* RI_OWNER_E_ETCD */
    char message[640];
} ri_owner_error;

const char *ri_owner_code_name(ri_owner_code code);

typedef enum ri_owner_state {
    RI_OWNER_ACTIVE,      /* the lease is alive: before its deadline, etcd cannot have expired it */
    RI_OWNER_UNCONFIRMED, /* past that deadline with no answer: held, but nothing new may start */
    RI_OWNER_LOST,        /* nothing held; a new lease is granted once etcd answers */
    RI_OWNER_CLOSED,
} ri_owner_state;

/* The sandboxes this server no longer owns (all it held under the lost lease), on the keepalive
 * thread, with no lock of the module held. */
typedef void (*ri_owner_lost_fn)(void *user, const char *const *sandbox_ids, size_t n, const char *reason);
/* The lease became unconfirmed (confirmed false: nothing new may start) or was renewed again
 * after being unconfirmed for unconfirmed_ms (confirmed true), on the keepalive thread. */
typedef void (*ri_owner_confirm_fn)(void *user, bool confirmed, int64_t unconfirmed_ms);
/* Another server asks for a sandbox this one owns (on the watch thread). */
typedef void (*ri_owner_handoff_fn)(void *user, const char *sandbox_id, const char *requester);
/* A sandbox's owner key went away (released, forgotten, or its server's lease expired): a
 * server waiting to take it can try now. sandbox_id NULL: any may have been (the watch's
 * history was compacted, or its stream was re-created). On the release watch's thread. */
typedef void (*ri_owner_released_fn)(void *user, const char *sandbox_id);

typedef struct ri_owner_config {
    ri_etcd *etcd;               /* used, not owned; outlives the ri_owner */
    const char *server_id;       /* this server's name: [A-Za-z0-9._:-], 1-128 characters */
    const char *address;         /* where clients reach it (routing), optional */
    int64_t ttl_seconds;         /* the lease's TTL; 0: 10 */
    const char *prefix;          /* the keys' root; NULL: "/ri" */
    ri_owner_lost_fn on_lost;    /* optional */
    ri_owner_handoff_fn on_handoff; /* optional */
    ri_owner_released_fn on_released; /* optional: then the owner keys' deletions are watched */
    ri_owner_confirm_fn on_confirm; /* optional */
    bool start_unavailable;      /* etcd not answering at open is no error: the module starts
                                    LOST (nothing can be owned) and takes a lease once it answers */
    void *user;
} ri_owner_config;

typedef struct ri_owner ri_owner;

/* Grants the lease, registers PREFIX/servers/<server_id> (the address, bound to the lease) and
 * starts the keepalive and handoff-watch threads. */
ri_owner *ri_owner_open(const ri_owner_config *config, ri_owner_error *err);
/* Stops the threads and revokes the lease: every sandbox it owned is free at once. */
void ri_owner_close(ri_owner *owner);

ri_owner_state ri_owner_get_state(ri_owner *owner);
/* Whether new work may start on the sandboxes held: ACTIVE and before the lease's deadline
 * (measured now, so a keepalive thread that has not run yet changes nothing). */
bool ri_owner_confirmed(ri_owner *owner);

/* What /status shows of the module. */
typedef struct ri_owner_status {
    ri_owner_state state;
    int64_t lease_id;            /* 0 unless ACTIVE or UNCONFIRMED */
    int64_t ttl_seconds;         /* the TTL asked for */
    size_t n_held;               /* sandboxes held */
    char last_error[700];        /* the last failure of a keepalive, grant or revocation; "" if none */
    int64_t last_error_age_ms;   /* how long ago (monotonic); -1 if none */
} ri_owner_status;
void ri_owner_get_status(ri_owner *owner, ri_owner_status *out);
int64_t ri_owner_lease_id(ri_owner *owner);      /* 0 when lost or closed */
/* Whether this module holds the sandbox now (its local view), and the token. */
bool ri_owner_holds(ri_owner *owner, const char *sandbox_id, int64_t *token);

/* Takes the sandbox if no one owns it (an owner whose lease expired no longer does) and returns
 * the fencing token. Already owned by this server under its lease: the same token again.
 * Owned by another server: RI_OWNER_E_TAKEN. */
bool ri_owner_acquire(ri_owner *owner, const char *sandbox_id, int64_t *token, ri_owner_error *err);
/* Moves PREFIX/sandboxes/<id>/latest to the checkpoint, only if token is still the owner's:
 * otherwise RI_OWNER_E_FENCED, and the sandbox is dropped from what this module holds. */
bool ri_owner_confirm_checkpoint(ri_owner *owner, const char *sandbox_id, int64_t token, const char *checkpoint,
                                 ri_owner_error *err);
/* The sandbox's metadata (PREFIX/sandboxes/<id>/meta), fenced like a checkpoint. */
bool ri_owner_put_meta(ri_owner *owner, const char *sandbox_id, int64_t token, const void *meta, size_t len,
                       ri_owner_error *err);
/* Gives the sandbox up (the owner key is deleted if it still has this token). */
bool ri_owner_release(ri_owner *owner, const char *sandbox_id, int64_t token, ri_owner_error *err);
/* The sandbox is deleted: its owner key, latest and metadata go, fenced like a release. */
bool ri_owner_forget(ri_owner *owner, const char *sandbox_id, int64_t token, ri_owner_error *err);
/* Asks the owner to let go: PREFIX/handoff/<id> = this server's id, bound to this server's lease
 * (it goes away if this server dies; the next acquire of the sandbox deletes it). */
bool ri_owner_request_handoff(ri_owner *owner, const char *sandbox_id, ri_owner_error *err);

/* What a server needs to route an attach, read in one range. */
typedef struct ri_owner_route {
    char *owner;                 /* the owning server's id; NULL: no owner */
    char *owner_address;         /* its registered address; NULL if none */
    int64_t token;               /* the owner's fencing token */
    char *latest;                /* the last confirmed checkpoint; NULL: none */
    int64_t latest_token;        /* the token it was confirmed under */
    uint8_t *meta;               /* the metadata; NULL: none */
    size_t meta_len;
    char *handoff_requester;     /* a pending handoff request; NULL: none */
    int64_t revision;            /* the store's revision of this view */
} ri_owner_route;

bool ri_owner_route_get(ri_owner *owner, const char *sandbox_id, ri_owner_route *out, ri_owner_error *err);
void ri_owner_route_free(ri_owner_route *route);

#endif
