/* Keys and values: get, put, delete and txn (etcd's KV service through the gateway). */
#include <stdlib.h>
#include <string.h>

#include "coord/etcd_internal.h"

static bool check_key(const char *key, ri_etcd_error *err) {
    if (!key || !key[0]) {
        etcd_fail(err, RI_ETCD_E_INVALID, "an etcd key must not be empty");
        return false;
    }
    return true;
}

/* Adds key (and range_end for a prefix) to a request object; false on no memory. */
static bool add_key(json_t *obj, const char *key, bool prefix) {
    if (json_object_set_new(obj, "key", etcd_json_b64(key, strlen(key))) != 0) return false;
    return !prefix || json_object_set_new(obj, "range_end", etcd_json_range_end(key)) == 0;
}

static json_t *range_request(const char *key, bool prefix) {
    json_t *req = json_object();
    if (req && !add_key(req, key, prefix)) {
        json_decref(req);
        return NULL;
    }
    return req;
}

static json_t *put_request(const char *key, const void *value, size_t value_len, int64_t lease) {
    json_t *req = range_request(key, false);
    if (!req) return NULL;
    if (json_object_set_new(req, "value", etcd_json_b64(value, value_len)) != 0 ||
        (lease && json_object_set_new(req, "lease", json_integer(lease)) != 0)) {
        json_decref(req);
        return NULL;
    }
    return req;
}

static bool nomem(ri_etcd_error *err) {
    etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory building an etcd request");
    return false;
}

/* Calls path with req (consumed). */
static bool call(ri_etcd *e, const char *path, json_t *req, json_t **reply, ri_etcd_error *err) {
    if (!req) return nomem(err);
    bool ok = etcd_call(e, path, req, 0, reply, err);
    json_decref(req);
    return ok;
}

bool ri_etcd_get(ri_etcd *e, const char *key, bool prefix, ri_etcd_range *out, ri_etcd_error *err) {
    memset(out, 0, sizeof *out);
    if (!check_key(key, err)) return false;
    json_t *reply;
    if (!call(e, "/v3/kv/range", range_request(key, prefix), &reply, err)) return false;
    bool ok = etcd_parse_range(reply, out, err);
    json_decref(reply);
    return ok;
}

bool ri_etcd_put(ri_etcd *e, const char *key, const void *value, size_t value_len, int64_t lease, int64_t *revision,
                 ri_etcd_error *err) {
    if (!check_key(key, err)) return false;
    json_t *reply;
    if (!call(e, "/v3/kv/put", put_request(key, value, value_len, lease), &reply, err)) return false;
    int64_t rev;
    bool ok = etcd_header_revision(reply, &rev, err);
    if (ok && revision) *revision = rev;
    json_decref(reply);
    return ok;
}

bool ri_etcd_delete(ri_etcd *e, const char *key, bool prefix, int64_t *deleted, int64_t *revision,
                    ri_etcd_error *err) {
    if (!check_key(key, err)) return false;
    json_t *reply;
    if (!call(e, "/v3/kv/deleterange", range_request(key, prefix), &reply, err)) return false;
    int64_t rev, n;
    bool ok = etcd_header_revision(reply, &rev, err);
    if (ok && !etcd_json_i64(reply, "deleted", &n)) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd sent a delete answer whose count does not parse");
        ok = false;
    }
    if (ok && revision) *revision = rev;
    if (ok && deleted) *deleted = n;
    json_decref(reply);
    return ok;
}

/* ---- txn ------------------------------------------------------------------------------------ */

static const char *const TARGETS[] = {"VERSION", "CREATE", "MOD", "VALUE", "LEASE"};
static const char *const RESULTS[] = {"EQUAL", "NOT_EQUAL", "LESS", "GREATER"};
static const char *const TARGET_FIELDS[] = {"version", "create_revision", "mod_revision", "value", "lease"};

static json_t *compare_json(const ri_etcd_compare *c) {
    json_t *j = range_request(c->key, false);
    if (!j) return NULL;
    json_t *operand = c->target == RI_ETCD_VALUE ? etcd_json_b64(c->value, c->value_len) : json_integer(c->number);
    if (json_object_set_new(j, "target", json_string(TARGETS[c->target])) != 0 ||
        json_object_set_new(j, "result", json_string(RESULTS[c->result])) != 0 ||
        json_object_set_new(j, TARGET_FIELDS[c->target], operand) != 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static json_t *op_json(const ri_etcd_op *op) {
    const char *name = op->kind == RI_ETCD_OP_GET   ? "request_range"
                       : op->kind == RI_ETCD_OP_PUT ? "request_put"
                                                    : "request_delete_range";
    json_t *inner = op->kind == RI_ETCD_OP_PUT ? put_request(op->key, op->value, op->value_len, op->lease)
                                               : range_request(op->key, op->prefix);
    return inner ? json_pack("{s:o}", name, inner) : NULL;
}

static bool check_txn(const ri_etcd_compare *cmp, size_t nc, const ri_etcd_op *ops, size_t no, ri_etcd_error *err) {
    for (size_t i = 0; i < nc; i++) {
        if (!check_key(cmp[i].key, err)) return false;
        if ((unsigned)cmp[i].target > RI_ETCD_LEASE || (unsigned)cmp[i].result > RI_ETCD_GREATER) {
            etcd_fail(err, RI_ETCD_E_INVALID, "txn compare %zu has an unknown target or result", i + 1);
            return false;
        }
    }
    for (size_t i = 0; i < no; i++) {
        if (!check_key(ops[i].key, err)) return false;
        if ((unsigned)ops[i].kind > RI_ETCD_OP_DELETE) {
            etcd_fail(err, RI_ETCD_E_INVALID, "txn op %zu has an unknown kind", i + 1);
            return false;
        }
    }
    return true;
}

static json_t *array_of_ops(const ri_etcd_op *ops, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, op_json(&ops[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

void ri_etcd_txn_result_free(ri_etcd_txn_result *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) ri_etcd_range_free(&r->ranges[i]);
    free(r->ranges);
    memset(r, 0, sizeof *r);
}

static bool parse_txn(json_t *reply, size_t n_ops, ri_etcd_txn_result *out, ri_etcd_error *err) {
    if (!etcd_header_revision(reply, &out->revision, err)) return false;
    out->succeeded = json_is_true(json_object_get(reply, "succeeded"));
    json_t *responses = json_object_get(reply, "responses");
    size_t n = json_array_size(responses);
    if (n != n_ops) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd answered a txn of %zu ops with %zu responses", n_ops, n);
        return false;
    }
    if (n == 0) return true;
    out->ranges = calloc(n, sizeof *out->ranges);
    if (!out->ranges) return nomem(err);
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        json_t *range = json_object_get(json_array_get(responses, i), "response_range");
        if (range && !etcd_parse_range(range, &out->ranges[i], err)) return false;
    }
    return true;
}

bool ri_etcd_txn(ri_etcd *e, const ri_etcd_compare *compares, size_t n_compares, const ri_etcd_op *success,
                 size_t n_success, const ri_etcd_op *failure, size_t n_failure, ri_etcd_txn_result *out,
                 ri_etcd_error *err) {
    memset(out, 0, sizeof *out);
    if (!check_txn(compares, n_compares, success, n_success, err) ||
        !check_txn(NULL, 0, failure, n_failure, err))
        return false;
    json_t *cmp = json_array();
    for (size_t i = 0; cmp && i < n_compares; i++) {
        if (json_array_append_new(cmp, compare_json(&compares[i])) != 0) {
            json_decref(cmp);
            cmp = NULL;
        }
    }
    json_t *ok_ops = array_of_ops(success, n_success), *fail_ops = array_of_ops(failure, n_failure);
    if (!cmp || !ok_ops || !fail_ops) {
        json_decref(cmp), json_decref(ok_ops), json_decref(fail_ops);
        return nomem(err);
    }
    /* json_pack takes the three references, also when it fails (jansson >= 2.11). */
    json_t *req = json_pack("{s:o,s:o,s:o}", "compare", cmp, "success", ok_ops, "failure", fail_ops);
    if (!req) return nomem(err);
    json_t *reply;
    if (!call(e, "/v3/kv/txn", req, &reply, err)) return false;
    bool succeeded = json_is_true(json_object_get(reply, "succeeded"));
    bool ok = parse_txn(reply, succeeded ? n_success : n_failure, out, err);
    json_decref(reply);
    if (!ok) ri_etcd_txn_result_free(out);
    return ok;
}
