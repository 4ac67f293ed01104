/*
 * store.json: what makes a directory a snapshot store (its format and version, so a
 * newer layout is refused rather than misread) and the store's size cap, which every
 * process sharing the directory must see: it lives in the store, not in a handle.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "store_internal.h"

bool ss_config_read(ri_snapstore *st, ss_config *out, ri_snapstore_error *err) {
    memset(out, 0, sizeof *out);
    uint8_t *data;
    size_t len;
    bool missing;
    if (!ss_read_file(st->dirfd, "store.json", 65536, &data, &len, &missing, err)) {
        if (missing)
            return ss_fail(err, RI_SNAPSTORE_ERR_NOT_STORE, "%s is not a snapshot store (it has no store.json)",
                           st->dir);
        ss_error_prefix(err, "Cannot read the store's store.json: ");
        return false;
    }
    json_error_t je;
    json_t *root = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je);
    free(data);
    const char *why = NULL;
    if (!root) why = je.text;
    else if (!json_is_object(root)) why = "not a JSON object";
    json_t *format = root ? json_object_get(root, "format") : NULL;
    json_t *version = root ? json_object_get(root, "version") : NULL;
    json_t *max = root ? json_object_get(root, "maxBytes") : NULL;
    if (!why && (!json_is_string(format) || strcmp(json_string_value(format), SS_STORE_FORMAT) != 0))
        why = "\"format\" is not \"" SS_STORE_FORMAT "\"";
    if (!why && !json_is_integer(version)) why = "\"version\" is not an integer";
    if (!why && json_integer_value(version) != SS_STORE_VERSION) {
        json_int_t v = json_integer_value(version);
        json_decref(root);
        return ss_fail(err, RI_SNAPSTORE_ERR_NOT_STORE,
                       "%s is a snapshot store of version %lld; this build reads version %d", st->dir, (long long)v,
                       SS_STORE_VERSION);
    }
    if (!why && (!json_is_integer(max) || json_integer_value(max) < 0)) why = "\"maxBytes\" is not an integer >= 0";
    if (!why && json_object_size(root) != 3) why = "it has keys other than format, version and maxBytes";
    if (why) {
        ri_snapstore_errcode code = RI_SNAPSTORE_ERR_CORRUPT;
        char reason[200];
        snprintf(reason, sizeof reason, "%s", why);
        json_decref(root);
        return ss_fail(err, code, "The store's store.json is damaged: %s", reason);
    }
    out->max_bytes = (uint64_t)json_integer_value(max);
    json_decref(root);
    return true;
}

bool ss_config_write(int dirfd, const ss_config *cfg, ri_snapstore_error *err) {
    char text[160];
    int n = snprintf(text, sizeof text, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"maxBytes\": %llu\n}\n",
                     SS_STORE_FORMAT, SS_STORE_VERSION, (unsigned long long)cfg->max_bytes);
    if (cfg->max_bytes > (uint64_t)INT64_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "The size cap must be below 2^63 bytes");
    char tmp[64];
    if (!ss_write_temp(dirfd, (const uint8_t *)text, (size_t)n, NULL, tmp, err)) return false;
    int e = ss_rename(dirfd, tmp, "store.json", false);
    if (e) {
        unlinkat(dirfd, tmp, 0);
        return ss_fail_errno(err, e, "Cannot write store.json");
    }
    return ss_fsync_dir(dirfd, "of the store", err);
}
