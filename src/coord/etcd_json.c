/* The JSON of etcd's gateway: int64 fields written as strings (zeros omitted), keys and
 * values in base64 (the store's codec: src/store/base64.c), key-values and ranges. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coord/etcd_internal.h"
#include "util/base64.h"

json_t *etcd_json_b64(const void *data, size_t len) {
    char *text = ri_base64_encode(len ? data : (const uint8_t *)"", len);
    if (!text) return NULL;
    json_t *s = json_string(text);
    free(text);
    return s;
}

bool etcd_json_i64(json_t *obj, const char *name, int64_t *out) {
    json_t *v = json_object_get(obj, name);
    *out = 0;
    if (!v) return true; /* proto3 JSON leaves zeros out */
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (!json_is_string(v)) return false;
    const char *s = json_string_value(v);
    char *end;
    errno = 0;
    long long n = strtoll(s, &end, 10);
    if (errno || end == s || *end) return false;
    *out = (int64_t)n;
    return true;
}

json_t *etcd_json_range_end(const char *key) {
    /* The first key after every key with this prefix: the last byte below 0xff, plus one. */
    size_t len = strlen(key);
    uint8_t *end = malloc(len ? len : 1);
    if (!end) return NULL;
    memcpy(end, key, len);
    while (len && end[len - 1] == 0xff) len--;
    json_t *j;
    if (len == 0) {
        j = etcd_json_b64("", 1); /* "\0": every key */
    } else {
        end[len - 1]++;
        j = etcd_json_b64(end, len);
    }
    free(end);
    return j;
}

static bool b64_field(json_t *obj, const char *name, uint8_t **out, size_t *len) {
    json_t *v = json_object_get(obj, name);
    *out = NULL;
    *len = 0;
    const char *s = v ? json_string_value(v) : "";
    if (!s) return false;
    uint8_t *raw;
    size_t n;
    if (!ri_base64_decode(s, strlen(s), &raw, &n)) return false;
    uint8_t *z = realloc(raw, n + 1); /* room for the NUL that lets text values read as strings */
    if (!z) {
        free(raw);
        return false;
    }
    z[n] = 0;
    *out = z;
    *len = n;
    return true;
}

void etcd_kv_free(ri_etcd_kv *kv) {
    free(kv->key);
    free(kv->value);
    memset(kv, 0, sizeof *kv);
}

bool etcd_parse_kv(json_t *obj, ri_etcd_kv *kv, ri_etcd_error *err) {
    memset(kv, 0, sizeof *kv);
    size_t klen;
    bool ok = json_is_object(obj) && b64_field(obj, "key", (uint8_t **)&kv->key, &klen) &&
              b64_field(obj, "value", &kv->value, &kv->value_len) &&
              etcd_json_i64(obj, "create_revision", &kv->create_revision) &&
              etcd_json_i64(obj, "mod_revision", &kv->mod_revision) && etcd_json_i64(obj, "version", &kv->version) &&
              etcd_json_i64(obj, "lease", &kv->lease);
    if (ok && strlen(kv->key) != klen) ok = false; /* keys are text here: a NUL inside is not ours */
    if (!ok) {
        etcd_kv_free(kv);
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd sent a key-value that does not parse");
    }
    return ok;
}

bool etcd_header_revision(json_t *obj, int64_t *out, ri_etcd_error *err) {
    if (!etcd_json_i64(json_object_get(obj, "header"), "revision", out) || *out <= 0) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd sent an answer without a header revision");
        return false;
    }
    return true;
}

void ri_etcd_range_free(ri_etcd_range *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) etcd_kv_free(&r->kvs[i]);
    free(r->kvs);
    memset(r, 0, sizeof *r);
}

bool etcd_parse_range(json_t *obj, ri_etcd_range *out, ri_etcd_error *err) {
    memset(out, 0, sizeof *out);
    if (!etcd_header_revision(obj, &out->revision, err)) return false;
    json_t *kvs = json_object_get(obj, "kvs");
    if (kvs && !json_is_array(kvs)) {
        etcd_fail(err, RI_ETCD_E_PROTOCOL, "etcd sent a range whose kvs is not an array");
        return false;
    }
    size_t n = json_array_size(kvs);
    if (n == 0) return true;
    out->kvs = calloc(n, sizeof *out->kvs);
    if (!out->kvs) {
        etcd_fail(err, RI_ETCD_E_NOMEM, "out of memory reading a range of %zu keys", n);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!etcd_parse_kv(json_array_get(kvs, i), &out->kvs[i], err)) {
            ri_etcd_range_free(out);
            return false;
        }
        out->n = i + 1;
    }
    return true;
}
