/* The etcd backend of the server's coordination (coord.c is the interface; docs/SERVER.md,
 * "Several machines: etcd"). Ownership, fencing and handoff requests are src/coord's
 * ri_owner; what this file adds is the server's side of it:
 *
 * - blocking calls (acquire, checkpoint confirmation, metadata, routing reads, handoff
 *   requests) are made by workers, never by the service thread;
 * - what the service thread must do without waiting (release a sandbox, forget a killed one)
 *   goes to the coordination thread's queue; an acquire on a worker first finishes a queued
 *   or running release of the same sandbox, so a release never deletes a newer ownership;
 * - the service thread asks only local questions: does this server still hold the sandbox
 *   (ri_owner's table, emptied when the lease is lost or a write was fenced), did another
 *   server ask for it (a set filled by the handoff watch). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_internal.h"

#ifdef RI_HAVE_COORD
#include "coord/owner.h"

typedef struct coord_item {
    struct coord_item *next;
    char id[SRV_ID_LEN + 1];
    int64_t fence;
    bool forget; /* a killed sandbox: its keys go too, not only the ownership */
} coord_item;

struct srv_etcd {
    ri_etcd *etcd;
    ri_owner *owner;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t mu;    /* guards what follows */
    pthread_cond_t cond;
    coord_item *head, *tail;
    coord_item *running;   /* the item the thread works on (not in the list) */
    bool quit;
    bool gave_up;          /* closing, and a release was not answered: the rest are dropped */
    char **asked;          /* sandboxes another server asked for (handoff watch) */
    size_t n_asked, cap_asked;
    char last_error[700];  /* the last etcd failure of a worker's call (/status) */
    int64_t last_error_ms; /* monotonic; 0: none */
    char **endpoints;      /* as parsed from --coordinator (/status) */
    size_t n_endpoints;
    atomic_uint kick;      /* SRV_KICK_*: what the watches saw since srv_coord_events looked */
    bool can_wake;         /* mu: the lws context lives (false from srv_etcd_stop_waking) */
};

/* A watch thread: the service thread looks at what it saw now, not at its next tick. */
static void kick(srv *s, unsigned what) {
    srv_etcd *e = s->etcd;
    atomic_fetch_or(&e->kick, what);
    pthread_mutex_lock(&e->mu); /* the context is not destroyed meanwhile */
    if (e->can_wake) lws_cancel_service(s->ctx);
    pthread_mutex_unlock(&e->mu);
}

unsigned srv_etcd_take_kick(srv *s) { return atomic_exchange(&s->etcd->kick, 0u); }

void srv_etcd_stop_waking(srv *s) {
    srv_etcd *e = s->etcd;
    if (!e) return;
    pthread_mutex_lock(&e->mu);
    e->can_wake = false;
    pthread_mutex_unlock(&e->mu);
}

/* etcd's own failures are kept for /status. */
static void note_error(srv *s, const ri_owner_error *e) {
    if (e->code != RI_OWNER_E_ETCD) return;
    srv_etcd *x = s->etcd;
    pthread_mutex_lock(&x->mu);
    snprintf(x->last_error, sizeof x->last_error, "%s", e->message);
    x->last_error_ms = ri_clock_mono_ms();
    pthread_mutex_unlock(&x->mu);
}

/* The message of a failed call. */
static void owner_why(srv *s, const ri_owner_error *e, char *why, size_t cap) {
    snprintf(why, cap, "%s", e->message);
    note_error(s, e);
}

#define RELEASE_RETRY_MS 200

/* A release or a forget, on the calling thread (the coordination thread or a worker); false:
 * etcd did not answer, to be tried again. FENCED (another owner now) and LOST (our lease is
 * gone, and every key bound to it) leave nothing of ours to give up. */
static bool run_item(srv *s, const coord_item *it) {
    srv_etcd *e = s->etcd;
    ri_owner_error err;
    bool ok = it->forget ? ri_owner_forget(e->owner, it->id, it->fence, &err)
                         : ri_owner_release(e->owner, it->id, it->fence, &err);
    if (ok || err.code == RI_OWNER_E_FENCED || err.code == RI_OWNER_E_LOST || err.code == RI_OWNER_E_INVALID)
        return true;
    note_error(s, &err);
    /* A sandbox checkpointed here but still owned in etcd would be IN_USE for every other
     * server as long as this one lives: the release is retried until etcd answers. */
    srv_log(s, "warning", it->forget ? "etcd: cannot delete a killed sandbox's keys (retrying)"
                                     : "etcd: release failed (retrying)",
            "{s:s, s:s}", "sandbox_id", it->id, "error", err.message);
    return false;
}

static void push_item(srv_etcd *e, coord_item *it) {
    it->next = NULL;
    if (e->tail) e->tail->next = it;
    else e->head = it;
    e->tail = it;
}

static void *coord_main(void *arg) {
    srv *s = arg;
    srv_etcd *e = s->etcd;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (!e->head && !e->quit) pthread_cond_wait(&e->cond, &e->mu);
        coord_item *it = e->head;
        if (!it) break; /* quit, and the queue is empty */
        e->head = it->next;
        if (!e->head) e->tail = NULL;
        if (e->quit && e->gave_up) { /* closing with etcd away: the lease's revocation (or expiry) frees them */
            free(it);
            continue;
        }
        e->running = it;
        pthread_mutex_unlock(&e->mu);
        bool done = run_item(s, it);
        pthread_mutex_lock(&e->mu);
        e->running = NULL;
        pthread_cond_broadcast(&e->cond);
        if (done || e->quit) {
            e->gave_up |= !done;
            free(it);
            continue;
        }
        push_item(e, it);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += RELEASE_RETRY_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (!e->quit) pthread_cond_timedwait(&e->cond, &e->mu, &ts);
    }
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

/* Service thread: a release (or a forget) to be done by the coordination thread. */
void srv_etcd_release(srv *s, const char *id, int64_t fence, bool forget) {
    srv_etcd *e = s->etcd;
    if (fence <= 0) return;
    coord_item *it = calloc(1, sizeof *it);
    if (!it) return; /* the key stays bound to our lease: it goes with it */
    snprintf(it->id, sizeof it->id, "%s", id);
    it->fence = fence;
    it->forget = forget;
    pthread_mutex_lock(&e->mu);
    push_item(e, it);
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->mu);
}

/* Worker: the releases of id still queued run here, and one running finishes, before an
 * acquire (else it could delete the ownership acquired after it). */
static void settle_releases(srv *s, const char *id) {
    srv_etcd *e = s->etcd;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (e->running && strcmp(e->running->id, id) == 0) pthread_cond_wait(&e->cond, &e->mu);
        coord_item **pp = &e->head, *it = NULL, *prev = NULL;
        for (; *pp; prev = *pp, pp = &(*pp)->next)
            if (strcmp((*pp)->id, id) == 0) {
                it = *pp;
                *pp = it->next;
                if (e->tail == it) e->tail = prev;
                break;
            }
        if (!it) break;
        pthread_mutex_unlock(&e->mu);
        /* not answered: the acquire that follows finds the sandbox still held here (the
         * same token), which is as consistent as the release */
        run_item(s, it);
        free(it);
        pthread_mutex_lock(&e->mu);
    }
    pthread_mutex_unlock(&e->mu);
}

/* ---- callbacks from ri_owner's threads ----------------------------------------------------- */

static void on_lost(void *user, const char *const *ids, size_t n, const char *reason) {
    srv *s = user;
    /* the service thread notices each sandbox in its tick (ri_owner_holds is false now) */
    srv_log(s, "error", "etcd: ownership lost", "{s:i, s:s}", "sandboxes", (int)n, "reason", reason);
    (void)ids;
}

static void on_confirm(void *user, bool confirmed, int64_t unconfirmed_ms) {
    srv *s = user;
    if (!confirmed) { /* no new work starts on them (srv_coord_paused) until etcd answers */
        ri_owner_status st;
        ri_owner_get_status(s->etcd->owner, &st);
        srv_log(s, "warning", "etcd: lease unconfirmed; the sandboxes' requests wait for etcd's answer", "{s:I}",
                "sandboxes", (json_int_t)st.n_held);
        return;
    }
    srv_log(s, "info", "etcd: lease confirmed again; the sandboxes go on", "{s:I}", "unconfirmed_ms",
            (json_int_t)unconfirmed_ms);
    kick(s, SRV_KICK_CONFIRMED);
}

static void on_handoff(void *user, const char *id, const char *requester) {
    srv *s = user;
    srv_etcd *e = s->etcd;
    pthread_mutex_lock(&e->mu);
    bool known = false;
    for (size_t i = 0; i < e->n_asked; i++) known |= strcmp(e->asked[i], id) == 0;
    if (!known && e->n_asked == e->cap_asked) {
        size_t cap = e->cap_asked ? e->cap_asked * 2 : 8;
        char **p = realloc(e->asked, cap * sizeof *p);
        if (p) {
            e->asked = p;
            e->cap_asked = cap;
        }
    }
    if (!known && e->n_asked < e->cap_asked) {
        char *copy = strdup(id);
        if (copy) e->asked[e->n_asked++] = copy;
    }
    pthread_mutex_unlock(&e->mu);
    srv_log(s, "info", "etcd: handoff requested", "{s:s, s:s}", "sandbox_id", id, "requester", requester);
    kick(s, SRV_KICK_HANDOFF);
}

static void on_released(void *user, const char *id) {
    (void)id; /* the few waiting attaches all look again: one lookup each */
    kick(user, SRV_KICK_RELEASE);
}

bool srv_etcd_handoff_asked(srv *s, const char *id) {
    srv_etcd *e = s->etcd;
    pthread_mutex_lock(&e->mu);
    bool found = false;
    for (size_t i = 0; i < e->n_asked && !found; i++) found = strcmp(e->asked[i], id) == 0;
    pthread_mutex_unlock(&e->mu);
    return found;
}

void srv_etcd_handoff_clear(srv *s, const char *id) {
    srv_etcd *e = s->etcd;
    pthread_mutex_lock(&e->mu);
    for (size_t i = 0; i < e->n_asked; i++)
        if (strcmp(e->asked[i], id) == 0) {
            free(e->asked[i]);
            e->asked[i] = e->asked[--e->n_asked];
            break;
        }
    pthread_mutex_unlock(&e->mu);
}

/* ---- open, close ----------------------------------------------------------------------------- */

static void destroy(srv_etcd *e) {
    ri_etcd_endpoints_free(e->endpoints, e->n_endpoints);
    for (size_t i = 0; i < e->n_asked; i++) free(e->asked[i]);
    free(e->asked);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cond);
    free(e);
}

bool srv_etcd_open(srv *s, char *err, size_t cap) {
    const ri_server_config *c = &s->cfg;
    char **eps = NULL;
    size_t n = 0;
    ri_etcd_error ee;
    if (!ri_etcd_parse_endpoints(c->coordinator, &eps, &n, &ee))
        return snprintf(err, cap, "--coordinator: %s", ee.message), false;
    srv_etcd *e = calloc(1, sizeof *e);
    if (!e) {
        ri_etcd_endpoints_free(eps, n);
        return snprintf(err, cap, "out of memory"), false;
    }
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cond, NULL);
    atomic_init(&e->kick, 0u);
    e->can_wake = s->ctx != NULL;
    e->endpoints = eps;
    e->n_endpoints = n;
    ri_etcd_config ec = {.endpoints = (const char *const *)eps, .n_endpoints = n, .ca_file = c->coordinator_ca,
                         .cert_file = c->coordinator_cert, .key_file = c->coordinator_key,
                         .user = c->coordinator_user, .password = c->coordinator_password,
                         /* a call gives up on a member well within a lease */
                         .request_timeout_ms = c->lease_ms / 4 < 2000 ? c->lease_ms / 4 : 2000,
                         .watch_refresh_ms = c->lease_ms < 10000 ? c->lease_ms : 10000};
    e->etcd = ri_etcd_open(&ec, &ee);
    if (!e->etcd) {
        destroy(e);
        return snprintf(err, cap, "etcd: %s", ee.message), false;
    }
    s->etcd = e; /* the callbacks find it from here on */
    char address[300];
    snprintf(address, sizeof address, "%s://%s:%d", c->tls_cert ? "wss" : "ws", c->host, s->port);
    int64_t ttl = c->lease_ms / 1000;
    ri_owner_config oc = {.etcd = e->etcd, .server_id = s->server_id, .address = address,
                          .ttl_seconds = ttl < 2 ? 2 : ttl, .prefix = c->coordinator_prefix,
                          .on_lost = on_lost, .on_handoff = on_handoff, .on_released = on_released, .on_confirm = on_confirm,
                          /* etcd down at startup: served once it answers (/status says so) */
                          .start_unavailable = true, .user = s};
    ri_owner_error oe;
    e->owner = ri_owner_open(&oc, &oe);
    if (!e->owner) {
        snprintf(err, cap, "etcd: %s", oe.message);
        s->etcd = NULL;
        ri_etcd_close(e->etcd);
        destroy(e);
        return false;
    }
    if (pthread_create(&e->thread, NULL, coord_main, s) != 0) {
        snprintf(err, cap, "cannot start the coordination thread");
        srv_etcd_close(s);
        return false;
    }
    e->thread_started = true;
    if (ri_owner_get_state(e->owner) != RI_OWNER_ACTIVE) {
        ri_owner_status st;
        ri_owner_get_status(e->owner, &st);
        srv_log(s, "warning",
                "etcd: unavailable at startup; attaches, creates and checkpoints are refused until it answers", "{s:s}",
                "error", st.last_error);
    }
    return true;
}

json_t *srv_etcd_status(srv *s) {
    srv_etcd *e = s->etcd;
    ri_owner_status st;
    ri_owner_get_status(e->owner, &st);
    pthread_mutex_lock(&e->mu);
    int64_t now = ri_clock_mono_ms(), mine_age = e->last_error_ms ? now - e->last_error_ms : -1;
    /* the more recent of the keepalive's failures and the workers' */
    bool use_mine = mine_age >= 0 && (st.last_error_age_ms < 0 || mine_age < st.last_error_age_ms);
    char last[sizeof st.last_error];
    snprintf(last, sizeof last, "%s", use_mine ? e->last_error : st.last_error);
    int64_t age = use_mine ? mine_age : st.last_error_age_ms;
    size_t pending = e->n_asked;
    pthread_mutex_unlock(&e->mu);
    json_t *eps = json_array();
    for (size_t i = 0; eps && i < e->n_endpoints; i++) json_array_append_new(eps, json_string(e->endpoints[i]));
    const char *state = st.state == RI_OWNER_ACTIVE        ? "connected"
                        : st.state == RI_OWNER_UNCONFIRMED ? "unconfirmed"
                        : st.state == RI_OWNER_LOST        ? "unavailable"
                                                           : "closed";
    return json_pack("{s:s, s:o*, s:s, s:s, s:I, s:I, s:I, s:I, s:s?, s:o}", "backend", "etcd", "endpoints", eps,
                     "prefix", s->cfg.coordinator_prefix ? s->cfg.coordinator_prefix : "/ri", "state", state,
                     "lease_id", (json_int_t)st.lease_id, "lease_ttl_seconds", (json_int_t)st.ttl_seconds,
                     "sandboxes_owned", (json_int_t)st.n_held, "handoff_requests_pending", (json_int_t)pending,
                     "last_error", last[0] ? last : NULL, "last_error_seconds_ago",
                     age >= 0 ? json_real((double)(age / 100) / 10.0) : json_null());
}

void srv_etcd_close(srv *s) {
    srv_etcd *e = s->etcd;
    if (!e) return;
    if (e->thread_started) { /* the queued releases first */
        pthread_mutex_lock(&e->mu);
        e->quit = true;
        pthread_cond_broadcast(&e->cond);
        pthread_mutex_unlock(&e->mu);
        pthread_join(e->thread, NULL);
    }
    for (coord_item *it = e->head, *next; it; it = next) {
        next = it->next;
        free(it);
    }
    ri_owner_close(e->owner); /* revokes the lease: whatever is still owned is free at once */
    ri_etcd_close(e->etcd);
    s->etcd = NULL;
    destroy(e);
}

/* ---- the calls workers make ------------------------------------------------------------------- */

srv_own srv_etcd_acquire(srv *s, const char *id, int64_t *fence, char *holder, size_t holder_cap, char *why,
                         size_t cap) {
    settle_releases(s, id);
    ri_owner_error err;
    if (ri_owner_acquire(s->etcd->owner, id, fence, &err)) {
        srv_etcd_handoff_clear(s, id); /* a request for a previous ownership of ours is answered */
        return SRV_OWN_ACQUIRED;
    }
    owner_why(s, &err, why, cap);
    if (err.code == RI_OWNER_E_TAKEN) {
        snprintf(holder, holder_cap, "%s", err.message);
        return SRV_OWN_TAKEN;
    }
    return err.code == RI_OWNER_E_ETCD || err.code == RI_OWNER_E_LOST ? SRV_OWN_UNAVAILABLE : SRV_OWN_ERROR;
}

bool srv_etcd_holds(srv *s, const char *id, int64_t fence) {
    int64_t t = 0;
    return ri_owner_holds(s->etcd->owner, id, &t) && t == fence;
}

bool srv_etcd_owned_here(srv *s, const char *id) { return ri_owner_holds(s->etcd->owner, id, NULL); }

bool srv_etcd_confirmed(srv *s) { return ri_owner_confirmed(s->etcd->owner); }

/* LOST counts as refused: the module's lease is gone (it held nothing since), so the write
 * was not sent and the sandbox is no longer ours, as with a txn etcd refused. */
static srv_fence_result fence_result(const ri_owner_error *err) {
    return err->code == RI_OWNER_E_FENCED || err->code == RI_OWNER_E_LOST ? SRV_FENCE_REFUSED
           : err->code == RI_OWNER_E_ETCD                                 ? SRV_FENCE_UNAVAILABLE
                                                                          : SRV_FENCE_ERROR;
}

srv_fence_result srv_etcd_commit(srv *s, const char *id, int64_t fence, const char *file, char *why, size_t cap) {
    ri_owner_error err;
    if (ri_owner_confirm_checkpoint(s->etcd->owner, id, fence, file, &err)) return SRV_FENCE_OK;
    owner_why(s, &err, why, cap);
    return fence_result(&err);
}

srv_fence_result srv_etcd_put_meta(srv *s, const char *id, int64_t fence, const char *text, char *why,
                                   size_t cap) {
    ri_owner_error err;
    if (ri_owner_put_meta(s->etcd->owner, id, fence, text, strlen(text), &err)) return SRV_FENCE_OK;
    owner_why(s, &err, why, cap);
    return fence_result(&err);
}

int srv_etcd_read(srv *s, const char *id, json_t **meta, char *latest, size_t latest_cap, char *why, size_t cap) {
    ri_owner_route r;
    ri_owner_error err;
    if (meta) *meta = NULL;
    if (latest && latest_cap) latest[0] = 0;
    if (!ri_owner_route_get(s->etcd->owner, id, &r, &err)) {
        note_error(s, &err);
        snprintf(why, cap, "Coordinator unavailable: %s", err.message);
        return SRV_READ_UNAVAILABLE;
    }
    int rc = SRV_READ_OK;
    if (meta) {
        if (!r.meta) {
            rc = SRV_READ_NOT_FOUND;
        } else {
            json_error_t je;
            *meta = json_loadb((const char *)r.meta, r.meta_len, JSON_REJECT_DUPLICATES, &je);
            if (!*meta || !json_is_object(*meta) || !json_is_string(json_object_get(*meta, "token_sha256"))) {
                json_decref(*meta);
                *meta = NULL;
                snprintf(why, cap, "Corrupted metadata of sandbox %s in etcd.", id);
                rc = SRV_READ_CORRUPT;
            }
        }
    }
    if (rc == SRV_READ_OK && latest) {
        if (r.latest) snprintf(latest, latest_cap, "%s", r.latest);
        else if (!meta) rc = SRV_READ_NOT_FOUND;
    }
    ri_owner_route_free(&r);
    return rc;
}

bool srv_etcd_request_handoff(srv *s, const char *id, char *why, size_t cap) {
    ri_owner_error err;
    if (ri_owner_request_handoff(s->etcd->owner, id, &err)) return true;
    note_error(s, &err);
    snprintf(why, cap, "Coordinator unavailable: %s", err.message);
    return false;
}

#else /* built without the etcd client (libcurl missing) */

bool srv_etcd_open(srv *s, char *err, size_t cap) {
    (void)s;
    return snprintf(err, cap, "--coordinator: this build has no etcd client (libcurl was not found)"), false;
}
void srv_etcd_close(srv *s) { (void)s; }
void srv_etcd_release(srv *s, const char *id, int64_t fence, bool forget) { (void)s, (void)id, (void)fence, (void)forget; }
bool srv_etcd_handoff_asked(srv *s, const char *id) { return (void)s, (void)id, false; }
void srv_etcd_handoff_clear(srv *s, const char *id) { (void)s, (void)id; }
srv_own srv_etcd_acquire(srv *s, const char *id, int64_t *fence, char *holder, size_t holder_cap, char *why,
                         size_t cap) {
    (void)s, (void)id, (void)fence, (void)holder, (void)holder_cap;
    return snprintf(why, cap, "no etcd client"), SRV_OWN_ERROR;
}
bool srv_etcd_holds(srv *s, const char *id, int64_t fence) { return (void)s, (void)id, (void)fence, false; }
bool srv_etcd_owned_here(srv *s, const char *id) { return (void)s, (void)id, false; }
bool srv_etcd_confirmed(srv *s) { return (void)s, false; }
srv_fence_result srv_etcd_commit(srv *s, const char *id, int64_t fence, const char *file, char *why, size_t cap) {
    (void)s, (void)id, (void)fence, (void)file;
    return snprintf(why, cap, "no etcd client"), SRV_FENCE_ERROR;
}
srv_fence_result srv_etcd_put_meta(srv *s, const char *id, int64_t fence, const char *text, char *why,
                                   size_t cap) {
    (void)s, (void)id, (void)fence, (void)text;
    return snprintf(why, cap, "no etcd client"), SRV_FENCE_ERROR;
}
int srv_etcd_read(srv *s, const char *id, json_t **meta, char *latest, size_t latest_cap, char *why, size_t cap) {
    (void)s, (void)id, (void)meta, (void)latest, (void)latest_cap;
    return snprintf(why, cap, "no etcd client"), SRV_READ_UNAVAILABLE;
}
bool srv_etcd_request_handoff(srv *s, const char *id, char *why, size_t cap) {
    (void)s, (void)id;
    return snprintf(why, cap, "no etcd client"), false;
}
unsigned srv_etcd_take_kick(srv *s) { return (void)s, 0u; }
void srv_etcd_stop_waking(srv *s) { (void)s; }
json_t *srv_etcd_status(srv *s) { return (void)s, NULL; }
#endif
