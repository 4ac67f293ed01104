/*
 * Private to the ownership module (src/coord/owner*.c); one concern per file:
 *
 *   owner.c        open and close, the state machine, the keepalive thread, the held table
 *   owner_ops.c    acquire, confirm a checkpoint, metadata, release, handoff (the txns)
 *   owner_route.c  the routing view of a sandbox; the handoff watch
 *
 * The invariants C1-C6 are those of docs/COORDINATION.md, asserted with RI_ASSERT.
 */
#ifndef RI_COORD_OWNER_INTERNAL_H
#define RI_COORD_OWNER_INTERNAL_H

#include <jansson.h>
#include <pthread.h>

#include "common/ri_assert.h"
#include "coord/owner.h"

#if defined(__GNUC__)
#define OWNER_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OWNER_PRINTF(a, b)
#endif

typedef struct owner_held {
    char *id;
    int64_t token;
    int64_t lease;              /* the lease it was acquired under (C1: the module's current one) */
} owner_held;

struct ri_owner {
    ri_etcd *etcd;
    char *server_id, *address, *prefix;
    int64_t ttl_ms;
    ri_owner_lost_fn on_lost;
    ri_owner_handoff_fn on_handoff;
    ri_owner_released_fn on_released;
    ri_owner_confirm_fn on_confirm;
    void *user;
    pthread_mutex_t mu;         /* guards what follows */
    pthread_cond_t wake;        /* close wakes the keepalive thread (CLOCK_MONOTONIC) */
    ri_owner_state state;
    int64_t lease;              /* 0 unless ACTIVE or UNCONFIRMED (C6) */
    int64_t lost_at_ms;         /* monotonic: before this, etcd cannot have expired the lease */
    int64_t give_up_at_ms;      /* UNCONFIRMED: when it ends in LOST without an answer */
    int64_t last_reported;      /* the last lease reported lost (C5) */
    owner_held *held;
    size_t n_held, cap_held;
    char last_error[700];       /* the keepalive thread's last failure (ri_owner_get_status) */
    int64_t last_error_ms;      /* monotonic; 0: none */
    pthread_t keepalive;
    ri_etcd_watch *watch;
    ri_etcd_watch *release_watch; /* owner keys' deletions (on_released); NULL without it */
};

void owner_ok(ri_owner_error *err);
void owner_fail(ri_owner_error *err, ri_owner_code code, const char *fmt, ...) OWNER_PRINTF(3, 4);
/* An etcd failure while doing `what` for a sandbox. */
void owner_etcd_fail(ri_owner_error *err, const ri_etcd_error *e, const char *what, const char *id);
/* Server and sandbox ids: [A-Za-z0-9._:-], 1-128 characters (no '/', so keys cannot collide). */
bool owner_id_valid(const char *id);
/* PREFIX/<section>/<id>[/<leaf>], malloc'd. */
char *owner_key(const ri_owner *o, const char *section, const char *id, const char *leaf);
int64_t owner_mono_ms(void);

/* The held table; mu held. */
owner_held *owner_find(ri_owner *o, const char *id);
bool owner_hold(ri_owner *o, const char *id, int64_t token, int64_t lease);
void owner_drop(ri_owner *o, const char *id);
void owner_check(const ri_owner *o);   /* C1, C4, C6 */
/* The states that hold a lease (C6): ACTIVE, and UNCONFIRMED past its deadline. */
static inline bool owner_leased(ri_owner_state s) { return s == RI_OWNER_ACTIVE || s == RI_OWNER_UNCONFIRMED; }

/* owner_route.c: the watch of PREFIX/handoff/ from revision start (0: from now). */
bool owner_watch_handoffs(ri_owner *o, int64_t start, ri_owner_error *err);
/* owner_route.c: the watch of the owner keys' deletions (on_released), from revision start. */
bool owner_watch_releases(ri_owner *o, int64_t start, ri_owner_error *err);

#endif
