/* The transactions of ownership: acquire (create the owner key bound to the lease if absent),
 * and the fenced writes (checkpoint confirmation, metadata, release) that hold only while the
 * owner key still has the token's create_revision; handoff requests. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coord/owner_internal.h"

static bool check_id(const char *id, ri_owner_error *err) {
    if (owner_id_valid(id)) return true;
    owner_fail(err, RI_OWNER_E_INVALID, "a sandbox id is 1-128 characters from [A-Za-z0-9._:-]");
    return false;
}

static bool nomem(ri_owner_error *err, const char *id) {
    owner_fail(err, RI_OWNER_E_NOMEM, "out of memory for sandbox %s", id);
    return false;
}

/* The current lease, or RI_OWNER_E_LOST. A write fenced by its token may go out while the
 * lease is unconfirmed (etcd decides); taking a sandbox needs a confirmed lease, or
 * RI_OWNER_E_ETCD (unavailable). */
static bool active_lease(ri_owner *o, const char *id, bool confirmed, int64_t *lease, ri_owner_error *err) {
    pthread_mutex_lock(&o->mu);
    *lease = o->lease;
    ri_owner_state s = o->state;
    int64_t now = owner_mono_ms(), since = now - o->lost_at_ms;
    bool past = s == RI_OWNER_UNCONFIRMED || (s == RI_OWNER_ACTIVE && since >= 0);
    pthread_mutex_unlock(&o->mu);
    if (past && confirmed) {
        owner_fail(err, RI_OWNER_E_ETCD,
                   "sandbox %s: the etcd lease of server %s is unconfirmed (no keepalive answered for %lld ms "
                   "past its deadline)",
                   id, o->server_id, (long long)(since > 0 ? since : 0));
        err->etcd_code = RI_ETCD_E_UNAVAILABLE;
        return false;
    }
    if (owner_leased(s)) return true;
    owner_fail(err, RI_OWNER_E_LOST, "sandbox %s: server %s has %s its etcd lease", id, o->server_id,
               s == RI_OWNER_CLOSED ? "closed" : "lost");
    return false;
}

/* "server S (token T)" of an owner key read in a failed txn, for messages. */
static void describe_owner(const ri_etcd_txn_result *r, char *buf, size_t cap) {
    if (r->n == 0 || r->ranges[0].n == 0) {
        snprintf(buf, cap, "no owner");
        return;
    }
    const ri_etcd_kv *kv = &r->ranges[0].kvs[0];
    snprintf(buf, cap, "server %s (token %" PRId64 ")", (const char *)kv->value, kv->create_revision);
}

bool ri_owner_acquire(ri_owner *o, const char *id, int64_t *token, ri_owner_error *err) {
    *token = 0;
    int64_t lease;
    if (!check_id(id, err)) return false;
    int64_t held;
    if (ri_owner_holds(o, id, &held)) { /* held: under the current lease, confirmed or not (C1) */
        *token = held;
        owner_ok(err);
        return true;
    }
    if (!active_lease(o, id, true, &lease, err)) return false;
    char *owner_k = owner_key(o, "sandboxes", id, "owner"), *handoff_k = owner_key(o, "handoff", id, NULL);
    if (!owner_k || !handoff_k) {
        free(owner_k), free(handoff_k);
        return nomem(err, id);
    }
    /* Absent (never owned, released, or its owner's lease expired): create it under our lease,
     * and drop a handoff request addressed to the previous owner. */
    ri_etcd_compare absent = {.key = owner_k, .target = RI_ETCD_CREATE, .result = RI_ETCD_EQUAL, .number = 0};
    ri_etcd_op take[2] = {
        {.kind = RI_ETCD_OP_PUT, .key = owner_k, .value = o->server_id, .value_len = strlen(o->server_id),
         .lease = lease},
        {.kind = RI_ETCD_OP_DELETE, .key = handoff_k},
    };
    ri_etcd_op read = {.kind = RI_ETCD_OP_GET, .key = owner_k};
    ri_etcd_txn_result r;
    ri_etcd_error e;
    bool ok = ri_etcd_txn(o->etcd, &absent, 1, take, 2, &read, 1, &r, &e);
    free(owner_k), free(handoff_k);
    if (!ok) {
        owner_etcd_fail(err, &e, "acquiring sandbox", id);
        return false;
    }
    int64_t t = 0;
    if (r.succeeded) {
        t = r.revision; /* the txn's revision is the new key's create_revision */
    } else if (r.n == 1 && r.ranges[0].n == 1 && r.ranges[0].kvs[0].lease == lease) {
        t = r.ranges[0].kvs[0].create_revision; /* ours already: a write retried on another member */
    } else {
        char who[300];
        describe_owner(&r, who, sizeof who);
        owner_fail(err, RI_OWNER_E_TAKEN, "sandbox %s is owned by %s", id, who);
        ri_etcd_txn_result_free(&r);
        return false;
    }
    RI_ASSERT(t > 0 && t <= r.revision, "C2");
    ri_etcd_txn_result_free(&r);
    pthread_mutex_lock(&o->mu);
    /* the key was put under this lease: it lives as long as the lease, confirmed or not */
    bool still = owner_leased(o->state) && o->lease == lease;
    bool kept = still && owner_hold(o, id, t, lease);
    pthread_mutex_unlock(&o->mu);
    if (!still) {
        owner_fail(err, RI_OWNER_E_LOST, "sandbox %s: server %s lost its etcd lease while acquiring it", id,
                   o->server_id);
        return false;
    }
    if (!kept) return nomem(err, id);
    *token = t;
    owner_ok(err);
    return true;
}

/* op, only while the owner key has create_revision == token (C3); otherwise FENCED and the
 * sandbox is no longer held here. */
static bool fenced(ri_owner *o, const char *id, int64_t token, const ri_etcd_op *op, const char *what,
                   ri_owner_error *err) {
    int64_t lease;
    if (!active_lease(o, id, false, &lease, err)) return false;
    char *owner_k = owner_key(o, "sandboxes", id, "owner");
    if (!owner_k) return nomem(err, id);
    ri_etcd_compare still_ours = {.key = owner_k, .target = RI_ETCD_CREATE, .result = RI_ETCD_EQUAL,
                                  .number = token};
    RI_ASSERT(still_ours.number > 0 && still_ours.target == RI_ETCD_CREATE, "C3");
    ri_etcd_op read = {.kind = RI_ETCD_OP_GET, .key = owner_k};
    ri_etcd_txn_result r;
    ri_etcd_error e;
    bool ok = ri_etcd_txn(o->etcd, &still_ours, 1, op, 1, &read, 1, &r, &e);
    free(owner_k);
    if (!ok) {
        owner_etcd_fail(err, &e, what, id);
        return false;
    }
    bool succeeded = r.succeeded;
    if (!succeeded) {
        char who[300];
        describe_owner(&r, who, sizeof who);
        owner_fail(err, RI_OWNER_E_FENCED,
                   "%s %s refused: token %" PRId64 " is no longer the owner's (now: %s); server %s must stop "
                   "serving it",
                   what, id, token, who, o->server_id);
    }
    ri_etcd_txn_result_free(&r);
    if (!succeeded) {
        pthread_mutex_lock(&o->mu);
        owner_drop(o, id);
        pthread_mutex_unlock(&o->mu);
        return false;
    }
    owner_ok(err);
    return true;
}

static bool check_token(const char *id, int64_t token, ri_owner_error *err) {
    if (!check_id(id, err)) return false;
    if (token > 0) return true;
    owner_fail(err, RI_OWNER_E_INVALID, "sandbox %s: a fencing token is > 0, not %" PRId64, id, token);
    return false;
}

bool ri_owner_confirm_checkpoint(ri_owner *o, const char *id, int64_t token, const char *checkpoint,
                                 ri_owner_error *err) {
    if (!check_token(id, token, err)) return false;
    if (!checkpoint || !checkpoint[0]) {
        owner_fail(err, RI_OWNER_E_INVALID, "sandbox %s: confirming a checkpoint needs its name", id);
        return false;
    }
    char *key = owner_key(o, "sandboxes", id, "latest");
    json_t *j = json_pack("{s:s,s:I,s:s}", "checkpoint", checkpoint, "token", (json_int_t)token, "server",
                          o->server_id);
    char *value = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    bool ok = false;
    if (!key || !value) {
        nomem(err, id);
    } else {
        ri_etcd_op put = {.kind = RI_ETCD_OP_PUT, .key = key, .value = value, .value_len = strlen(value)};
        ok = fenced(o, id, token, &put, "confirming the checkpoint of sandbox", err);
    }
    free(key);
    free(value);
    return ok;
}

bool ri_owner_put_meta(ri_owner *o, const char *id, int64_t token, const void *meta, size_t len,
                       ri_owner_error *err) {
    if (!check_token(id, token, err)) return false;
    char *key = owner_key(o, "sandboxes", id, "meta");
    if (!key) return nomem(err, id);
    ri_etcd_op put = {.kind = RI_ETCD_OP_PUT, .key = key, .value = meta, .value_len = len};
    bool ok = fenced(o, id, token, &put, "writing the metadata of sandbox", err);
    free(key);
    return ok;
}

bool ri_owner_release(ri_owner *o, const char *id, int64_t token, ri_owner_error *err) {
    if (!check_token(id, token, err)) return false;
    char *key = owner_key(o, "sandboxes", id, "owner");
    if (!key) return nomem(err, id);
    ri_etcd_op del = {.kind = RI_ETCD_OP_DELETE, .key = key};
    bool ok = fenced(o, id, token, &del, "releasing sandbox", err);
    free(key);
    if (ok) {
        pthread_mutex_lock(&o->mu);
        owner_drop(o, id);
        pthread_mutex_unlock(&o->mu);
    }
    return ok;
}

bool ri_owner_forget(ri_owner *o, const char *id, int64_t token, ri_owner_error *err) {
    if (!check_token(id, token, err)) return false;
    char *dir = owner_key(o, "sandboxes", id, "");
    if (!dir) return nomem(err, id);
    /* the whole directory, owner key included, in the one fenced txn */
    ri_etcd_op del = {.kind = RI_ETCD_OP_DELETE, .key = dir, .prefix = true};
    bool ok = fenced(o, id, token, &del, "deleting the keys of sandbox", err);
    free(dir);
    if (ok) {
        pthread_mutex_lock(&o->mu);
        owner_drop(o, id);
        pthread_mutex_unlock(&o->mu);
    }
    return ok;
}

bool ri_owner_request_handoff(ri_owner *o, const char *id, ri_owner_error *err) {
    int64_t lease;
    if (!check_id(id, err) || !active_lease(o, id, false, &lease, err)) return false;
    char *key = owner_key(o, "handoff", id, NULL);
    if (!key) return nomem(err, id);
    ri_etcd_error e;
    bool ok = ri_etcd_put(o->etcd, key, o->server_id, strlen(o->server_id), lease, NULL, &e);
    free(key);
    if (!ok) {
        owner_etcd_fail(err, &e, "requesting the handoff of sandbox", id);
        return false;
    }
    owner_ok(err);
    return true;
}
