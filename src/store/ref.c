/*
 * Snapshot refs as JSON: {"providerId": "...", "ref": {"snapshot": "...",
 * "originSandboxId": "..."}}. Parsing is strict (seed 004: the outer wrapper and our
 * payload are .strict(): an unknown field means a bug or a migration and fails
 * loudly); ids must match the same rules as when they were made, so a tampered ref
 * never reaches the file system.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "store_internal.h"

static bool invalid(ri_snapstore_error *err, const char *what) {
    return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF, "Invalid snapshot ref: %s", what);
}

/* Exactly these keys, no others. */
static bool only_keys(json_t *o, const char *a, const char *b, const char *where, ri_snapstore_error *err) {
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (strcmp(key, a) != 0 && strcmp(key, b) != 0) {
            char what[160];
            snprintf(what, sizeof what, "unknown field \"%.64s\"%s", key, where);
            return invalid(err, what);
        }
    }
    if (!json_object_get(o, a) || !json_object_get(o, b)) {
        char what[160];
        snprintf(what, sizeof what, "\"%s\" and \"%s\" are required%s", a, b, where);
        return invalid(err, what);
    }
    return true;
}

static bool string_field(json_t *o, const char *key, const char *path, char *out, size_t cap,
                         bool (*valid)(const char *, ri_snapstore_error *), ri_snapstore_error *err) {
    json_t *v = json_object_get(o, key);
    char what[200];
    if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
        snprintf(what, sizeof what, "\"%s\" is not a string", path);
        return invalid(err, what);
    }
    const char *s = json_string_value(v);
    ri_snapstore_error why;
    if (!valid(s, &why) || strlen(s) >= cap) {
        snprintf(what, sizeof what, "\"%s\" is malformed (%.120s)", path, why.message);
        return invalid(err, what);
    }
    snprintf(out, cap, "%s", s);
    return true;
}

static bool provider_valid(const char *s, ri_snapstore_error *err) {
    if (strlen(s) > RI_SNAPSHOT_PROVIDER_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF, "provider ids are at most %d characters", RI_SNAPSHOT_PROVIDER_MAX);
    return ri_snapstore_origin_valid(s, err);
}

bool ri_snapshot_ref_parse(const char *json, size_t len, ri_snapshot_ref *out, ri_snapstore_error *err) {
    ss_ok(err);
    if (!out || !json) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshot_ref_parse: a NULL argument");
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        char what[240];
        snprintf(what, sizeof what, "not JSON (%s)", je.text);
        return invalid(err, what);
    }
    bool ok = json_is_object(root) || invalid(err, "not a JSON object");
    if (ok) ok = only_keys(root, "providerId", "ref", "", err);
    if (ok) ok = string_field(root, "providerId", "providerId", out->provider_id, sizeof out->provider_id,
                              provider_valid, err);
    json_t *ref = ok ? json_object_get(root, "ref") : NULL;
    if (ok && !json_is_object(ref)) ok = invalid(err, "\"ref\" is not an object");
    if (ok) ok = only_keys(ref, "snapshot", "originSandboxId", " in \"ref\"", err);
    if (ok) ok = string_field(ref, "snapshot", "ref.snapshot", out->snapshot, sizeof out->snapshot,
                              ri_snapstore_name_valid, err);
    if (ok) ok = string_field(ref, "originSandboxId", "ref.originSandboxId", out->origin_sandbox_id,
                              sizeof out->origin_sandbox_id, ri_snapstore_origin_valid, err);
    json_decref(root);
    if (!ok) memset(out, 0, sizeof *out);
    return ok;
}

char *ri_snapshot_ref_json(const ri_snapshot_ref *ref) {
    if (!ref) return NULL;
    json_t *inner = json_object(), *outer = json_object();
    char *text = NULL;
    if (inner && outer) {
        json_object_set_new(inner, "snapshot", json_string(ref->snapshot));
        json_object_set_new(inner, "originSandboxId", json_string(ref->origin_sandbox_id));
        json_object_set_new(outer, "providerId", json_string(ref->provider_id));
        json_object_set_new(outer, "ref", inner);
        inner = NULL;
        text = json_dumps(outer, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(inner);
    json_decref(outer);
    return text;
}
