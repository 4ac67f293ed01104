/* The ownership module's life: open and close, the state machine (ACTIVE <-> UNCONFIRMED ->
 * LOST -> ACTIVE under a new lease; CLOSED), the keepalive thread that decides when ownership
 * is unconfirmed or lost, and the table of the sandboxes held. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord/owner_internal.h"

/* A keepalive every third of the TTL; ownership is given up a sixth of the TTL before etcd
 * could expire the lease (the lease runs from when etcd's leader received the last renewal,
 * which is after we sent it). */
#define KEEPALIVE_DIVISOR 3
#define MARGIN_DIVISOR 6
#define RETRY_MS 200 /* after a failed keepalive or grant */
/* Unconfirmed for a whole TTL more: ownership is given up even though etcd never said so (a
 * lease nobody renewed for that long has expired unless etcd itself has been without a leader
 * all that time), so that the server's clients are not held forever. */
#define GIVE_UP_TTLS 1

const char *ri_owner_code_name(ri_owner_code code) {
    switch (code) {
    case RI_OWNER_OK: return "ok";
    case RI_OWNER_E_INVALID: return "invalid";
    case RI_OWNER_E_NOMEM: return "out of memory";
    case RI_OWNER_E_TAKEN: return "owned by another server";
    case RI_OWNER_E_FENCED: return "fenced";
    case RI_OWNER_E_LOST: return "ownership lost";
    case RI_OWNER_E_ETCD: return "etcd failed";
    }
    return "unknown";
}

void owner_ok(ri_owner_error *err) {
    if (!err) return;
    err->code = RI_OWNER_OK;
    err->etcd_code = RI_ETCD_OK;
    err->message[0] = '\0';
}

void owner_fail(ri_owner_error *err, ri_owner_code code, const char *fmt, ...) {
    if (!err) return;
    err->code = code;
    err->etcd_code = RI_ETCD_OK;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
}

void owner_etcd_fail(ri_owner_error *err, const ri_etcd_error *e, const char *what, const char *id) {
    if (!err) return;
    ri_owner_code code = e->code == RI_ETCD_E_NOMEM ? RI_OWNER_E_NOMEM : RI_OWNER_E_ETCD;
    owner_fail(err, code, "%s %s: %s", what, id ? id : "", e->message);
    err->etcd_code = e->code;
}

bool owner_id_valid(const char *id) {
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 128) return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == ':' || c == '-';
        if (!ok) return false;
    }
    return true;
}

char *owner_key(const ri_owner *o, const char *section, const char *id, const char *leaf) {
    char *k = NULL;
    int n = leaf ? asprintf(&k, "%s/%s/%s/%s", o->prefix, section, id, leaf)
                 : asprintf(&k, "%s/%s/%s", o->prefix, section, id);
    return n < 0 ? NULL : k;
}

int64_t owner_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the held table (mu held) ------------------------------------------------------------- */

owner_held *owner_find(ri_owner *o, const char *id) {
    for (size_t i = 0; i < o->n_held; i++)
        if (strcmp(o->held[i].id, id) == 0) return &o->held[i];
    return NULL;
}

bool owner_hold(ri_owner *o, const char *id, int64_t token, int64_t lease) {
    owner_held *h = owner_find(o, id);
    if (h) {
        h->token = token;
        h->lease = lease;
        owner_check(o);
        return true;
    }
    if (o->n_held == o->cap_held) {
        size_t cap = o->cap_held ? o->cap_held * 2 : 16;
        owner_held *p = realloc(o->held, cap * sizeof *p);
        if (!p) return false;
        o->held = p;
        o->cap_held = cap;
    }
    char *copy = strdup(id);
    if (!copy) return false;
    o->held[o->n_held++] = (owner_held){copy, token, lease};
    owner_check(o);
    return true;
}

void owner_drop(ri_owner *o, const char *id) {
    owner_held *h = owner_find(o, id);
    if (!h) return;
    free(h->id);
    *h = o->held[--o->n_held];
    owner_check(o);
}

void owner_check(const ri_owner *o) {
#if RI_ASSERTS_ON
    RI_ASSERT(owner_leased(o->state) == (o->lease != 0), "C6");
    RI_ASSERT(owner_leased(o->state) || o->n_held == 0, "C4");
    for (size_t i = 0; i < o->n_held; i++) {
        RI_ASSERT(o->held[i].lease == o->lease, "C1");
        RI_ASSERT(o->held[i].token > 0, "C2");
    }
#else
    (void)o;
#endif
}

/* ---- the state machine -------------------------------------------------------------------- */

ri_owner_state ri_owner_get_state(ri_owner *o) {
    pthread_mutex_lock(&o->mu);
    ri_owner_state s = o->state;
    pthread_mutex_unlock(&o->mu);
    return s;
}

bool ri_owner_confirmed(ri_owner *o) {
    pthread_mutex_lock(&o->mu);
    bool ok = o->state == RI_OWNER_ACTIVE && owner_mono_ms() < o->lost_at_ms;
    pthread_mutex_unlock(&o->mu);
    return ok;
}

int64_t ri_owner_lease_id(ri_owner *o) {
    pthread_mutex_lock(&o->mu);
    int64_t l = o->lease;
    pthread_mutex_unlock(&o->mu);
    return l;
}

bool ri_owner_holds(ri_owner *o, const char *id, int64_t *token) {
    pthread_mutex_lock(&o->mu);
    owner_held *h = id ? owner_find(o, id) : NULL;
    if (h && token) *token = h->token;
    pthread_mutex_unlock(&o->mu);
    return h != NULL;
}

/* mu held. */
static void note_error(ri_owner *o, const char *what, const char *message) {
    snprintf(o->last_error, sizeof o->last_error, "%s: %s", what, message);
    o->last_error_ms = owner_mono_ms();
}

void ri_owner_get_status(ri_owner *o, ri_owner_status *out) {
    pthread_mutex_lock(&o->mu);
    out->state = o->state;
    out->lease_id = o->lease;
    out->ttl_seconds = o->ttl_ms / 1000;
    out->n_held = o->n_held;
    snprintf(out->last_error, sizeof out->last_error, "%s", o->last_error);
    out->last_error_age_ms = o->last_error_ms ? owner_mono_ms() - o->last_error_ms : -1;
    pthread_mutex_unlock(&o->mu);
}

/* ACTIVE or UNCONFIRMED -> LOST: empties the table and reports what it held, once per lease
 * (C5). Called with mu held; releases it around the callback. */
static void declare_lost(ri_owner *o, const char *reason) {
    RI_ASSERT(owner_leased(o->state) && o->last_reported != o->lease, "C5");
    note_error(o, "ownership lost", reason);
    size_t n = o->n_held;
    char **ids = malloc((n ? n : 1) * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        if (ids) ids[i] = o->held[i].id;
        else free(o->held[i].id);
    }
    o->n_held = 0;
    o->last_reported = o->lease;
    o->lease = 0;
    o->state = RI_OWNER_LOST;
    owner_check(o);
    pthread_mutex_unlock(&o->mu);
    if (o->on_lost) o->on_lost(o->user, ids ? (const char *const *)ids : NULL, ids ? n : 0, reason);
    for (size_t i = 0; ids && i < n; i++) free(ids[i]);
    free(ids);
    pthread_mutex_lock(&o->mu);
}

/* A lease, and this server's routing key bound to it. */
static bool grant(ri_owner *o, ri_etcd_lease *lease, ri_owner_error *err) {
    ri_etcd_error e;
    if (!ri_etcd_lease_grant(o->etcd, o->ttl_ms / 1000, lease, &e)) {
        owner_etcd_fail(err, &e, "granting the lease of server", o->server_id);
        return false;
    }
    char *key = owner_key(o, "servers", o->server_id, NULL);
    const char *addr = o->address ? o->address : "";
    bool ok = key && ri_etcd_put(o->etcd, key, addr, strlen(addr), lease->id, NULL, &e);
    free(key);
    if (!ok) {
        if (key) owner_etcd_fail(err, &e, "registering server", o->server_id);
        else owner_fail(err, RI_OWNER_E_NOMEM, "out of memory registering server %s", o->server_id);
        ri_etcd_lease_revoke(o->etcd, lease->id, &e);
        return false;
    }
    return true;
}

static void wait_ms(ri_owner *o, int64_t ms) {
    if (ms <= 0) return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&o->wake, &o->mu, &ts);
}

/* Tells the server about a change of confirmation; mu held, released around the callback. */
static void report_confirmation(ri_owner *o, bool confirmed, int64_t unconfirmed_ms) {
    if (!o->on_confirm) return;
    pthread_mutex_unlock(&o->mu);
    o->on_confirm(o->user, confirmed, unconfirmed_ms);
    pthread_mutex_lock(&o->mu);
}

/* ACTIVE or UNCONFIRMED: one renewal of the same lease; mu held. */
static void renew(ri_owner *o) {
    int64_t lease = o->lease, sent = owner_mono_ms();
    if (o->state == RI_OWNER_ACTIVE && sent >= o->lost_at_ms) {
        o->state = RI_OWNER_UNCONFIRMED;
        o->give_up_at_ms = o->lost_at_ms + GIVE_UP_TTLS * o->ttl_ms;
        note_error(o, "lease unconfirmed", "no keepalive of the etcd lease was answered within its TTL");
        owner_check(o);
        report_confirmation(o, false, 0);
        if (o->state != RI_OWNER_UNCONFIRMED || o->lease != lease) return;
    }
    bool unconfirmed = o->state == RI_OWNER_UNCONFIRMED;
    int64_t deadline = unconfirmed ? o->give_up_at_ms : o->lost_at_ms;
    if (sent >= deadline) {
        char why[160];
        snprintf(why, sizeof why, "no keepalive of the etcd lease was answered for %lld ms (its TTL is %lld s)",
                 (long long)(sent - o->lost_at_ms + o->ttl_ms - o->ttl_ms / MARGIN_DIVISOR),
                 (long long)(o->ttl_ms / 1000));
        declare_lost(o, why);
        return;
    }
    pthread_mutex_unlock(&o->mu);
    ri_etcd_lease answer;
    ri_etcd_error e;
    bool ok = ri_etcd_lease_keepalive(o->etcd, lease, deadline - sent, &answer, &e);
    pthread_mutex_lock(&o->mu);
    if (!owner_leased(o->state) || o->lease != lease) return;
    if (ok) {
        /* etcd renews no expired lease: this one lived all along, and every owner key with it */
        int64_t was_unconfirmed = o->state == RI_OWNER_UNCONFIRMED ? owner_mono_ms() - o->lost_at_ms : -1;
        o->lost_at_ms = sent + answer.ttl * 1000 - o->ttl_ms / MARGIN_DIVISOR;
        o->state = RI_OWNER_ACTIVE;
        owner_check(o);
        if (was_unconfirmed >= 0) report_confirmation(o, true, was_unconfirmed);
        if (o->state == RI_OWNER_ACTIVE) wait_ms(o, o->ttl_ms / KEEPALIVE_DIVISOR);
    } else if (e.code == RI_ETCD_E_LEASE_NOT_FOUND) {
        declare_lost(o, "etcd says the lease has expired");
    } else {
        note_error(o, "lease keepalive", e.message);
        wait_ms(o, RETRY_MS);
    }
}

/* LOST: the old lease is revoked (it may still live in etcd if only we lost touch), then a
 * new one is granted; mu held. */
static void recover(ri_owner *o) {
    int64_t old = o->last_reported;
    pthread_mutex_unlock(&o->mu);
    ri_etcd_error e;
    ri_etcd_lease lease;
    ri_owner_error ge;
    bool revoked = !old || ri_etcd_lease_revoke(o->etcd, old, &e) || e.code == RI_ETCD_E_LEASE_NOT_FOUND;
    bool ok = revoked && grant(o, &lease, &ge);
    pthread_mutex_lock(&o->mu);
    if (!ok) note_error(o, revoked ? "new lease" : "revoking the lost lease", revoked ? ge.message : e.message);
    if (o->state != RI_OWNER_LOST) {
        if (ok) {
            pthread_mutex_unlock(&o->mu);
            ri_etcd_lease_revoke(o->etcd, lease.id, &e);
            pthread_mutex_lock(&o->mu);
        }
        return;
    }
    if (!ok) {
        wait_ms(o, RETRY_MS);
        return;
    }
    o->last_reported = 0;
    o->lease = lease.id;
    o->lost_at_ms = owner_mono_ms() + lease.ttl * 1000 - o->ttl_ms / MARGIN_DIVISOR;
    o->state = RI_OWNER_ACTIVE;
    owner_check(o);
}

static void *keepalive_thread(void *arg) {
    ri_owner *o = arg;
    pthread_mutex_lock(&o->mu);
    if (o->state == RI_OWNER_ACTIVE) wait_ms(o, o->ttl_ms / KEEPALIVE_DIVISOR); /* the lease was just granted */
    while (o->state != RI_OWNER_CLOSED) {
        if (o->state == RI_OWNER_LOST) recover(o);
        else renew(o);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

/* ---- open, close ---------------------------------------------------------------------------- */

static void destroy(ri_owner *o) {
    for (size_t i = 0; i < o->n_held; i++) free(o->held[i].id);
    free(o->held);
    free(o->server_id);
    free(o->address);
    free(o->prefix);
    free(o);
}

ri_owner *ri_owner_open(const ri_owner_config *c, ri_owner_error *err) {
    if (!c || !c->etcd || !owner_id_valid(c->server_id) || c->ttl_seconds < 0) {
        owner_fail(err, RI_OWNER_E_INVALID,
                   "ownership needs an etcd client, a server id of 1-128 characters from [A-Za-z0-9._:-] "
                   "and a TTL >= 0");
        return NULL;
    }
    const char *prefix = c->prefix ? c->prefix : "/ri";
    if (!prefix[0] || prefix[strlen(prefix) - 1] == '/') {
        owner_fail(err, RI_OWNER_E_INVALID, "the key prefix \"%s\" must be non-empty, without a trailing '/'",
                   prefix);
        return NULL;
    }
    ri_owner *o = calloc(1, sizeof *o);
    if (!o) {
        owner_fail(err, RI_OWNER_E_NOMEM, "out of memory opening the ownership module");
        return NULL;
    }
    o->etcd = c->etcd;
    o->server_id = strdup(c->server_id);
    o->address = c->address ? strdup(c->address) : NULL;
    o->prefix = strdup(prefix);
    o->ttl_ms = (c->ttl_seconds ? c->ttl_seconds : 10) * 1000;
    o->on_lost = c->on_lost;
    o->on_handoff = c->on_handoff;
    o->on_released = c->on_released;
    o->on_confirm = c->on_confirm;
    o->user = c->user;
    if (!o->server_id || !o->prefix || (c->address && !o->address)) {
        destroy(o);
        owner_fail(err, RI_OWNER_E_NOMEM, "out of memory opening the ownership module");
        return NULL;
    }
    ri_etcd_lease lease = {0};
    ri_owner_error ge;
    bool granted = grant(o, &lease, &ge);
    bool offline = ge.code == RI_OWNER_E_ETCD && ge.etcd_code == RI_ETCD_E_UNAVAILABLE;
    if (!granted && !(c->start_unavailable && offline)) {
        if (err) *err = ge;
        destroy(o);
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    bool sync_ok = pthread_mutex_init(&o->mu, NULL) == 0;
    bool cond_ok = sync_ok && pthread_cond_init(&o->wake, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (granted) {
        o->state = RI_OWNER_ACTIVE;
        o->lease = lease.id;
        o->lost_at_ms = owner_mono_ms() + lease.ttl * 1000 - o->ttl_ms / MARGIN_DIVISOR;
    } else { /* nothing owned, nothing to revoke: the keepalive thread grants one when etcd answers */
        o->state = RI_OWNER_LOST;
        note_error(o, "new lease", ge.message);
    }
    /* without a lease's revision the watches start from whenever they connect: nothing can be
     * owned before that, and a handoff request is read again on every (re)connection */
    int64_t from = granted ? lease.revision + 1 : 0;
    ri_etcd_error e;
    if (!cond_ok || !owner_watch_handoffs(o, from, err) || (o->on_released && !owner_watch_releases(o, from, err)) ||
        pthread_create(&o->keepalive, NULL, keepalive_thread, o) != 0) {
        if (!cond_ok) owner_fail(err, RI_OWNER_E_NOMEM, "cannot create the ownership module's lock");
        else if (o->watch && (o->release_watch || !o->on_released))
            owner_fail(err, RI_OWNER_E_NOMEM, "cannot start the keepalive thread");
        ri_etcd_watch_stop(o->watch);
        ri_etcd_watch_stop(o->release_watch);
        if (granted) ri_etcd_lease_revoke(o->etcd, lease.id, &e);
        if (cond_ok) pthread_cond_destroy(&o->wake);
        if (sync_ok) pthread_mutex_destroy(&o->mu);
        destroy(o);
        return NULL;
    }
    owner_ok(err);
    return o;
}

void ri_owner_close(ri_owner *o) {
    if (!o) return;
    pthread_mutex_lock(&o->mu);
    int64_t lease = o->lease;
    for (size_t i = 0; i < o->n_held; i++) free(o->held[i].id);
    o->n_held = 0;
    o->lease = 0;
    o->state = RI_OWNER_CLOSED;
    pthread_cond_broadcast(&o->wake);
    pthread_mutex_unlock(&o->mu);
    pthread_join(o->keepalive, NULL);
    ri_etcd_watch_stop(o->watch);
    ri_etcd_watch_stop(o->release_watch);
    ri_etcd_error e;
    if (lease) ri_etcd_lease_revoke(o->etcd, lease, &e); /* best effort: otherwise it expires */
    pthread_cond_destroy(&o->wake);
    pthread_mutex_destroy(&o->mu);
    destroy(o);
}
