/* Leases: grant, one keepalive, revoke (etcd's Lease service through the gateway). */
#include <string.h>

#include "coord/etcd_internal.h"

static bool lease_call(ri_etcd *e, const char *path, json_t *req, int64_t timeout_ms, json_t **reply,
                       ri_etcd_error *err) {
    if (!req) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory building an etcd request");
        return false;
    }
    bool ok = etcd_call(e, path, req, timeout_ms, reply, err);
    json_decref(req);
    if (!ok && err && err->code == RI_ETCD_E_SERVER && err->grpc_code == ETCD_GRPC_NOT_FOUND)
        err->code = RI_ETCD_E_LEASE_NOT_FOUND;
    return ok;
}

static bool parse_lease(json_t *obj, ri_etcd_lease *out, ri_etcd_error *err) {
    if (!etcd_header_revision(obj, &out->revision, err)) return false;
    if (!etcd_json_i64(obj, "ID", &out->id) || !etcd_json_i64(obj, "TTL", &out->ttl)) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd sent a lease answer whose ID or TTL does not parse");
        return false;
    }
    return true;
}

bool ri_etcd_lease_grant(ri_etcd *e, int64_t ttl_seconds, ri_etcd_lease *out, ri_etcd_error *err) {
    memset(out, 0, sizeof *out);
    if (ttl_seconds <= 0) {
        etcd_fail(err, RI_ETCD_E_INVALID, "a lease needs a positive TTL, not %lld", (long long)ttl_seconds);
        return false;
    }
    json_t *reply;
    if (!lease_call(e, "/v3/lease/grant", json_pack("{s:I}", "TTL", (json_int_t)ttl_seconds), 0, &reply, err))
        return false;
    bool ok = parse_lease(reply, out, err);
    if (ok && (out->id == 0 || out->ttl <= 0)) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd granted a lease without an ID or a TTL");
        ok = false;
    }
    json_decref(reply);
    return ok;
}

bool ri_etcd_lease_keepalive(ri_etcd *e, int64_t id, int64_t timeout_ms, ri_etcd_lease *out, ri_etcd_error *err) {
    memset(out, 0, sizeof *out);
    json_t *reply;
    /* A bidirectional stream in gRPC; over the gateway, one request gives one {"result":...}. */
    if (!lease_call(e, "/v3/lease/keepalive", json_pack("{s:I}", "ID", (json_int_t)id), timeout_ms, &reply, err))
        return false;
    json_t *result = json_object_get(reply, "result");
    bool ok = false;
    if (!json_is_object(result))
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd sent a keepalive answer without a result");
    else if (parse_lease(result, out, err))
        ok = true;
    if (ok && out->ttl <= 0) { /* a lease that is gone answers with no TTL */
        etcd_fail(err, RI_ETCD_E_LEASE_NOT_FOUND, "etcd lease %llx has expired or was revoked",
                  (unsigned long long)id);
        ok = false;
    }
    json_decref(reply);
    return ok;
}

bool ri_etcd_lease_revoke(ri_etcd *e, int64_t id, ri_etcd_error *err) {
    json_t *reply;
    if (!lease_call(e, "/v3/lease/revoke", json_pack("{s:I}", "ID", (json_int_t)id), 0, &reply, err))
        return false;
    json_decref(reply);
    return true;
}
