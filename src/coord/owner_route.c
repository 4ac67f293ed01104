/* What routing an attach needs (owner, its address, the latest checkpoint, the metadata, a
 * pending handoff), and the watch that tells the owner about handoff requests. */
#include <stdlib.h>
#include <string.h>

#include "coord/owner_internal.h"

void ri_owner_route_free(ri_owner_route *r) {
    if (!r) return;
    free(r->owner);
    free(r->owner_address);
    free(r->latest);
    free(r->meta);
    free(r->handoff_requester);
    memset(r, 0, sizeof *r);
}

static char *text_of(const ri_etcd_kv *kv) { return strndup((const char *)kv->value, kv->value_len); }

/* latest = {"checkpoint":NAME,"token":N,"server":ID} */
static bool parse_latest(ri_owner_route *r, const ri_etcd_kv *kv) {
    json_error_t jerr;
    json_t *j = json_loadb((const char *)kv->value, kv->value_len, 0, &jerr);
    json_t *name = json_object_get(j, "checkpoint"), *token = json_object_get(j, "token");
    bool ok = json_is_string(name) && json_is_integer(token);
    if (ok) {
        r->latest = strdup(json_string_value(name));
        r->latest_token = (int64_t)json_integer_value(token);
    }
    json_decref(j);
    return ok;
}

bool ri_owner_route_get(ri_owner *o, const char *id, ri_owner_route *out, ri_owner_error *err) {
    memset(out, 0, sizeof *out);
    if (!owner_id_valid(id)) {
        owner_fail(err, RI_OWNER_E_INVALID, "a sandbox id is 1-128 characters from [A-Za-z0-9._:-]");
        return false;
    }
    char *dir = owner_key(o, "sandboxes", id, ""), *handoff_k = owner_key(o, "handoff", id, NULL);
    if (!dir || !handoff_k) {
        free(dir), free(handoff_k);
        owner_fail(err, RI_OWNER_E_NOMEM, "out of memory for sandbox %s", id);
        return false;
    }
    /* One txn without compares: both reads at one revision. */
    ri_etcd_op reads[2] = {{.kind = RI_ETCD_OP_GET, .key = dir, .prefix = true},
                           {.kind = RI_ETCD_OP_GET, .key = handoff_k}};
    ri_etcd_txn_result r;
    ri_etcd_error e;
    bool ok = ri_etcd_txn(o->etcd, NULL, 0, reads, 2, NULL, 0, &r, &e);
    size_t dir_len = strlen(dir);
    free(handoff_k);
    if (!ok) {
        free(dir);
        owner_etcd_fail(err, &e, "reading the routing of sandbox", id);
        return false;
    }
    out->revision = r.revision;
    bool bad = false, nomem = false;
    for (size_t i = 0; r.n == 2 && i < r.ranges[0].n; i++) {
        const ri_etcd_kv *kv = &r.ranges[0].kvs[i];
        const char *leaf = kv->key + dir_len;
        if (strcmp(leaf, "owner") == 0) {
            out->owner = text_of(kv);
            out->token = kv->create_revision;
            nomem |= !out->owner;
        } else if (strcmp(leaf, "latest") == 0) {
            bad |= !parse_latest(out, kv);
        } else if (strcmp(leaf, "meta") == 0) {
            out->meta = malloc(kv->value_len ? kv->value_len : 1);
            if (out->meta) memcpy(out->meta, kv->value, kv->value_len);
            out->meta_len = kv->value_len;
            nomem |= !out->meta;
        }
    }
    if (r.n == 2 && r.ranges[1].n == 1) {
        out->handoff_requester = text_of(&r.ranges[1].kvs[0]);
        nomem |= !out->handoff_requester;
    }
    free(dir);
    ri_etcd_txn_result_free(&r);
    if (bad || nomem) {
        ri_owner_route_free(out);
        owner_fail(err, nomem ? RI_OWNER_E_NOMEM : RI_OWNER_E_ETCD, "sandbox %s: %s", id,
                   nomem ? "out of memory reading its routing" : "its latest checkpoint record does not parse");
        return false;
    }
    if (out->owner) {
        char *server_k = owner_key(o, "servers", out->owner, NULL);
        ri_etcd_range sr;
        if (server_k && owner_id_valid(out->owner) && ri_etcd_get(o->etcd, server_k, false, &sr, &e)) {
            if (sr.n == 1 && sr.kvs[0].value_len) out->owner_address = text_of(&sr.kvs[0]);
            ri_etcd_range_free(&sr);
        }
        free(server_k); /* no address is not an error: the owner may have none registered */
    }
    owner_ok(err);
    return true;
}

/* ---- the handoff watch ------------------------------------------------------------------- */

static void dispatch_handoff(ri_owner *o, const ri_etcd_kv *kv) {
    size_t plen = strlen(o->prefix) + strlen("/handoff/");
    if (strlen(kv->key) <= plen) return;
    const char *id = kv->key + plen;
    const char *requester = (const char *)kv->value;
    if (strcmp(requester, o->server_id) == 0 || !ri_owner_holds(o, id, NULL)) return;
    o->on_handoff(o->user, id, requester);
}

static void on_handoff_event(void *user, const ri_etcd_event *ev) {
    ri_owner *o = user;
    if (!o->on_handoff) return;
    if (ev->kind == RI_ETCD_EV_PUT) {
        dispatch_handoff(o, ev->kv);
    } else if (ev->kind == RI_ETCD_EV_COMPACTED || ev->kind == RI_ETCD_EV_CONNECTED) {
        /* Requests made in the compacted history, or before a watch that started without a
         * revision connected, are read again; so is every request at each (re)connection,
         * the slow fallback should an event be missed (a request seen twice is harmless: the
         * owner releases once). */
        char *key;
        ri_etcd_range r;
        ri_etcd_error e;
        if (asprintf(&key, "%s/handoff/", o->prefix) < 0) return;
        if (ri_etcd_get(o->etcd, key, true, &r, &e)) {
            for (size_t i = 0; i < r.n; i++) dispatch_handoff(o, &r.kvs[i]);
            ri_etcd_range_free(&r);
        }
        free(key);
    }
}

bool owner_watch_handoffs(ri_owner *o, int64_t start, ri_owner_error *err) {
    char *key = NULL;
    if (asprintf(&key, "%s/handoff/", o->prefix) < 0) {
        owner_fail(err, RI_OWNER_E_NOMEM, "out of memory watching handoff requests");
        return false;
    }
    ri_etcd_error e;
    o->watch = ri_etcd_watch_start(o->etcd, key, true, start, on_handoff_event, o, &e);
    free(key);
    if (!o->watch) {
        owner_etcd_fail(err, &e, "watching the handoff requests of server", o->server_id);
        return false;
    }
    return true;
}

/* ---- the release watch: owner keys deleted -------------------------------------------------- */

static void on_release_event(void *user, const ri_etcd_event *ev) {
    ri_owner *o = user;
    if (ev->kind == RI_ETCD_EV_DELETE) {
        size_t plen = strlen(o->prefix) + strlen("/sandboxes/");
        const char *id = ev->kv->key + plen, *slash = strlen(ev->kv->key) > plen ? strchr(id, '/') : NULL;
        if (!slash || strcmp(slash, "/owner") != 0) return; /* latest and meta go with a forget */
        char *copy = strndup(id, (size_t)(slash - id));
        if (copy) o->on_released(o->user, copy);
        free(copy);
    } else if (ev->kind == RI_ETCD_EV_COMPACTED || ev->kind == RI_ETCD_EV_CONNECTED) {
        o->on_released(o->user, NULL); /* a deletion may have gone by unseen: everyone may retry */
    }
}

bool owner_watch_releases(ri_owner *o, int64_t start, ri_owner_error *err) {
    char *key = NULL;
    if (asprintf(&key, "%s/sandboxes/", o->prefix) < 0) {
        owner_fail(err, RI_OWNER_E_NOMEM, "out of memory watching releases");
        return false;
    }
    ri_etcd_error e;
    /* deletions only: checkpoints and metadata (puts under the same prefix) stay in etcd */
    o->release_watch = ri_etcd_watch_start_filtered(o->etcd, key, true, start, RI_ETCD_WATCH_NO_PUT,
                                                    on_release_event, o, &e);
    free(key);
    if (!o->release_watch) {
        owner_etcd_fail(err, &e, "watching the releases seen by server", o->server_id);
        return false;
    }
    return true;
}
