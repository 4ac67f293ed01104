/*
 * A snapshot's metadata as JSON: the head of every manifest (what list reads), the
 * optional RIMD section of a binary export, and the JSON export. Written with the keys
 * in one fixed order; read strictly (exactly those keys, each typed and in range), since
 * every file the store reads may be damaged or forged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "store_internal.h"

void ri_snapstore_info_free(ri_snapstore_info *info) {
    if (!info) return;
    free(info->description);
    info->description = NULL;
    for (uint32_t i = 0; i < info->ntags; i++) free(info->tags[i]);
    free(info->tags);
    info->tags = NULL;
    info->ntags = 0;
}

void ri_snapstore_list_free(ri_snapstore_info *list, size_t n) {
    if (!list) return;
    for (size_t i = 0; i < n; i++) ri_snapstore_info_free(&list[i]);
    free(list);
}

static bool set_text(ri_snapstore_info *info, const char *description, const char *const *tags, uint32_t ntags) {
    char *d = strdup(description ? description : "");
    char **t = calloc(ntags ? ntags : 1, sizeof *t);
    bool ok = d && t;
    for (uint32_t i = 0; ok && i < ntags; i++) ok = (t[i] = strdup(tags[i])) != NULL;
    if (!ok) {
        free(d);
        for (uint32_t i = 0; t && i < ntags; i++) free(t[i]);
        free(t);
        return false;
    }
    ri_snapstore_info_free(info);
    info->description = d;
    info->tags = t;
    info->ntags = ntags;
    return true;
}

bool ss_info_set_text(ri_snapstore_info *info, const char *description, const char *const *tags, uint32_t ntags,
                      ri_snapstore_error *err) {
    if (description && !ss_description_valid(description, err)) return false;
    if (!ss_tags_valid(tags, ntags, err)) return false;
    return set_text(info, description, tags, ntags) || ss_nomem(err);
}

bool ss_info_copy(ri_snapstore_info *dst, const ri_snapstore_info *src) {
    ri_snapstore_info copy = *src;
    copy.description = NULL;
    copy.tags = NULL;
    copy.ntags = 0;
    if (!set_text(&copy, src->description, (const char *const *)src->tags, src->ntags)) return false;
    *dst = copy;
    return true;
}

static json_t *origin_value(const char *s) { return s[0] ? json_string(s) : json_null(); }

char *ss_meta_json(const ri_snapstore_info *info, bool with_name) {
    char module[SS_HEX + 1];
    ri_hex_encode(info->module_sha256, SS_HASH, module);
    json_t *o = json_object();
    json_t *tags = json_array();
    bool ok = o && tags;
    for (uint32_t i = 0; ok && i < info->ntags; i++) ok = json_array_append_new(tags, json_string(info->tags[i])) == 0;
    if (!ok) {
        json_decref(o);
        json_decref(tags);
        return NULL;
    }
    /* Insertion order is the output order. */
    if (with_name) json_object_set_new(o, "name", json_string(info->name));
    json_object_set_new(o, "id", json_string(info->id));
    json_object_set_new(o, "createdNs", json_integer(info->created_ns));
    json_object_set_new(o, "description", json_string(info->description ? info->description : ""));
    json_object_set_new(o, "tags", tags);
    json_object_set_new(o, "originSandbox", origin_value(info->origin_sandbox));
    json_object_set_new(o, "originSession", origin_value(info->origin_session));
    json_object_set_new(o, "module", json_string(module));
    json_object_set_new(o, "moduleSize", json_integer((json_int_t)info->module_size));
    json_object_set_new(o, "moduleStored", json_boolean(info->module_stored));
    json_object_set_new(o, "status", json_string(ri_snap_status_name(info->status)));
    json_object_set_new(o, "prngState", json_integer(info->prng_state));
    json_object_set_new(o, "gasUsed", json_integer((json_int_t)info->gas_used));
    json_object_set_new(o, "eventTimestamp", json_integer(info->event_timestamp));
    json_object_set_new(o, "memories", json_integer(info->nmemories));
    json_object_set_new(o, "memoryBytes", json_integer((json_int_t)info->memory_bytes));
    json_object_set_new(o, "storedPages", json_integer((json_int_t)info->stored_pages));
    json_object_set_new(o, "imageBytes", json_integer((json_int_t)info->image_bytes));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return text;
}

/* ---- reading ------------------------------------------------------------------------------------ */

typedef struct reader {
    json_t *root;
    const char *where;
    ri_snapstore_errcode code;
    ri_snapstore_error *err;
} reader;

static bool bad(reader *r, const char *key, const char *what) {
    return ss_fail(r->err, r->code, "%s: the metadata's \"%s\" %s", r->where, key, what);
}

static bool get_string(reader *r, const char *key, bool nullable, const char **out) {
    json_t *v = json_object_get(r->root, key);
    *out = NULL;
    if (!v) return bad(r, key, "is missing");
    if (nullable && json_is_null(v)) return true;
    if (!json_is_string(v)) return bad(r, key, nullable ? "is not a string or null" : "is not a string");
    if (strlen(json_string_value(v)) != json_string_length(v)) return bad(r, key, "holds a NUL character");
    *out = json_string_value(v);
    return true;
}

static bool get_int(reader *r, const char *key, json_int_t min, json_int_t max, json_int_t *out) {
    json_t *v = json_object_get(r->root, key);
    if (!v) return bad(r, key, "is missing");
    if (!json_is_integer(v)) return bad(r, key, "is not an integer");
    *out = json_integer_value(v);
    if (*out < min || *out > max) return bad(r, key, "is out of range");
    return true;
}

static bool get_origin(reader *r, const char *key, char *out) {
    const char *s;
    if (!get_string(r, key, true, &s)) return false;
    out[0] = '\0';
    if (!s) return true;
    if (!ri_snapstore_origin_valid(s, NULL)) return bad(r, key, "is not a valid id");
    snprintf(out, RI_SNAPSTORE_ORIGIN_MAX + 1, "%s", s);
    return true;
}

static bool get_tags(reader *r, ri_snapstore_info *out, const char *description) {
    json_t *v = json_object_get(r->root, "tags");
    if (!v) return bad(r, "tags", "is missing");
    if (!json_is_array(v)) return bad(r, "tags", "is not an array");
    size_t n = json_array_size(v);
    if (n > RI_SNAPSTORE_TAGS_MAX) return bad(r, "tags", "holds too many tags");
    const char *tags[RI_SNAPSTORE_TAGS_MAX];
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_array_get(v, i);
        if (!json_is_string(t) || strlen(json_string_value(t)) != json_string_length(t))
            return bad(r, "tags", "holds something other than a string");
        tags[i] = json_string_value(t);
    }
    ri_snapstore_error e;
    if (!ss_tags_valid(tags, (uint32_t)n, &e)) return bad(r, "tags", "holds an invalid or repeated tag");
    if (!set_text(out, description, tags, (uint32_t)n)) return ss_nomem(r->err);
    return true;
}

static const char *const KEYS[] = {"id", "createdNs", "description", "tags", "originSandbox", "originSession",
                                   "module", "moduleSize", "moduleStored", "status", "prngState", "gasUsed",
                                   "eventTimestamp", "memories", "memoryBytes", "storedPages", "imageBytes"};

static bool parse_fields(reader *r, bool with_name, ri_snapstore_info *out) {
    size_t nkeys = sizeof KEYS / sizeof KEYS[0] + (with_name ? 1 : 0);
    const char *key;
    json_t *value;
    json_object_foreach(r->root, key, value) {
        bool known = with_name && strcmp(key, "name") == 0;
        for (size_t i = 0; !known && i < sizeof KEYS / sizeof KEYS[0]; i++) known = strcmp(key, KEYS[i]) == 0;
        if (!known) return ss_fail(r->err, r->code, "%s: the metadata has an unknown key \"%.64s\"", r->where, key);
    }
    if (json_object_size(r->root) != nkeys)
        return ss_fail(r->err, r->code, "%s: the metadata lacks some of its keys", r->where);

    const char *s;
    if (with_name) {
        if (!get_string(r, "name", false, &s)) return false;
        if (!ri_snapstore_name_valid(s, NULL)) return bad(r, "name", "is not a valid snapshot name");
        snprintf(out->name, sizeof out->name, "%s", s);
    }
    if (!get_string(r, "id", false, &s)) return false;
    uint8_t idbytes[RI_SNAPSTORE_ID_HEX / 2];
    if (strlen(s) != RI_SNAPSTORE_ID_HEX || !ri_hex_decode(s, sizeof idbytes, idbytes))
        return bad(r, "id", "is not 32 lowercase hex digits");
    memcpy(out->id, s, RI_SNAPSTORE_ID_HEX + 1);
    json_int_t v;
    if (!get_int(r, "createdNs", INT64_MIN, INT64_MAX, &v)) return false;
    out->created_ns = v;
    const char *description;
    if (!get_string(r, "description", false, &description)) return false;
    ri_snapstore_error e;
    if (!ss_description_valid(description, &e)) return bad(r, "description", "is not a valid description");
    if (!get_tags(r, out, description)) return false;
    if (!get_origin(r, "originSandbox", out->origin_sandbox) || !get_origin(r, "originSession", out->origin_session))
        return false;
    if (!get_string(r, "module", false, &s)) return false;
    if (strlen(s) != SS_HEX || !ri_hex_decode(s, SS_HASH, out->module_sha256))
        return bad(r, "module", "is not a SHA-256 in lowercase hex");
    if (!get_int(r, "moduleSize", 0, INT64_MAX, &v)) return false;
    out->module_size = (uint64_t)v;
    json_t *stored = json_object_get(r->root, "moduleStored");
    if (!json_is_boolean(stored)) return bad(r, "moduleStored", "is not a boolean");
    out->module_stored = json_is_true(stored);
    if (!get_string(r, "status", false, &s)) return false;
    if (strcmp(s, "loaded") == 0) out->status = RI_SNAP_STATUS_LOADED;
    else if (strcmp(s, "suspended") == 0) out->status = RI_SNAP_STATUS_SUSPENDED;
    else return bad(r, "status", "is neither \"loaded\" nor \"suspended\"");
    if (!get_int(r, "prngState", 0, UINT32_MAX, &v)) return false;
    out->prng_state = (uint32_t)v;
    if (!get_int(r, "gasUsed", 0, INT64_MAX, &v)) return false;
    out->gas_used = (uint64_t)v;
    if (!get_int(r, "eventTimestamp", INT64_MIN, INT64_MAX, &v)) return false;
    out->event_timestamp = v;
    if (!get_int(r, "memories", 0, UINT32_MAX, &v)) return false;
    out->nmemories = (uint32_t)v;
    if (!get_int(r, "memoryBytes", 0, INT64_MAX, &v)) return false;
    out->memory_bytes = (uint64_t)v;
    if (!get_int(r, "storedPages", 0, INT64_MAX, &v)) return false;
    out->stored_pages = (uint64_t)v;
    if (!get_int(r, "imageBytes", 0, INT64_MAX, &v)) return false;
    out->image_bytes = (uint64_t)v;
    return true;
}

bool ss_meta_parse(const char *json, size_t len, bool with_name, const char *where, ri_snapstore_info *out,
                   ri_snapstore_errcode code, ri_snapstore_error *err) {
    char name[sizeof out->name];
    memcpy(name, out->name, sizeof name); /* set by the caller when not with_name */
    memset(out, 0, sizeof *out);
    if (!with_name) memcpy(out->name, name, sizeof name);
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) return ss_fail(err, code, "%s: the metadata is not JSON (%s)", where, je.text);
    reader r = {root, where, code, err};
    bool ok = json_is_object(root) ? parse_fields(&r, with_name, out)
                                   : ss_fail(err, code, "%s: the metadata is not a JSON object", where);
    json_decref(root);
    if (!ok) ri_snapstore_info_free(out);
    return ok;
}
