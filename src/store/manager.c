/*
 * The snapshot manager of one sandbox (seed 003) on the store: named snapshots of the
 * sandbox's full state, saved and restored through WSNP v2 (the sandbox's own writer and
 * reader), with the page cache that makes a save of a slightly changed sandbox cheap and
 * a restore of a recent snapshot skip its blobs.
 *
 * Seed 003's StateConflictError is our ERR_CONFLICT: the state that must not be
 * replaced under a caller is an execution in progress (a host function calling restore
 * on its own sandbox).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

struct ri_snapshots {
    ri_snapstore *st;
    ri_sandbox *sb;
    char session[RI_SNAPSTORE_ORIGIN_MAX + 1];
    ri_snapshots_restored_fn on_restored;
    void *user;
    ri_snapstore_cache *cache; /* NULL with no_cache */
};

ri_snapshots *ri_snapshots_new(ri_snapstore *st, ri_sandbox *sb, const ri_snapshots_options *opts,
                               ri_snapstore_error *err) {
    ss_ok(err);
    if (!st || !sb) {
        ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_new: %s is NULL", st ? "sandbox" : "store");
        return NULL;
    }
    if (opts && opts->session && !ri_snapstore_origin_valid(opts->session, err)) {
        ss_error_prefix(err, "Invalid session: ");
        return NULL;
    }
    ri_snapshots *m = calloc(1, sizeof *m);
    if (!m) {
        ss_nomem(err);
        return NULL;
    }
    m->st = st;
    m->sb = sb;
    if (opts) {
        if (opts->session) snprintf(m->session, sizeof m->session, "%s", opts->session);
        m->on_restored = opts->on_restored;
        m->user = opts->user;
    }
    if (!(opts && opts->no_cache) && !(m->cache = ri_snapstore_cache_new())) {
        free(m);
        ss_nomem(err);
        return NULL;
    }
    return m;
}

void ri_snapshots_free(ri_snapshots *m) {
    if (!m) return;
    ri_snapstore_cache_free(m->cache);
    free(m);
}

static bool sandbox_error(ri_snapstore_error *err, const ri_sandbox_error *se, const char *what, const char *name) {
    ss_fail(err, RI_SNAPSTORE_ERR_SANDBOX, "Cannot %s snapshot '%s': %s", what, name, se->message);
    if (err) err->sandbox_code = se->code;
    return false;
}

static bool running(ri_snapshots *m, const char *what, const char *name, ri_snapstore_error *err) {
    if (ri_sandbox_status_of(m->sb) != RI_SANDBOX_RUNNING) return false;
    ss_fail(err, RI_SNAPSTORE_ERR_CONFLICT,
            "Cannot %s snapshot '%s': an execution is running in %s (wait until it returns; a sandbox is saved and "
            "restored only when loaded or suspended)",
            what, name, ri_sandbox_id(m->sb));
    return true;
}

bool ri_snapshots_save(ri_snapshots *m, const char *name, const char *description, const char *const *tags,
                       uint32_t ntags, ri_snapstore_info *info, ri_snapstore_error *err) {
    ss_ok(err);
    if (info) memset(info, 0, sizeof *info);
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_save: manager is NULL");
    if (!ri_snapstore_name_valid(name, err)) return false;
    if (running(m, "save", name, err)) return false;
    /* Uncompressed: the store compresses per page, and reads pages straight from it. */
    ri_snapshot_options so = {RI_SNAPSHOT_V2, false, true};
    uint8_t *image;
    size_t len;
    ri_sandbox_error se;
    if (!ri_sandbox_snapshot_with(m->sb, &so, &image, &len, &se)) return sandbox_error(err, &se, "save", name);
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.description = description;
    o.tags = tags;
    o.ntags = ntags;
    const char *id = ri_sandbox_id(m->sb);
    o.origin_sandbox = ri_snapstore_origin_valid(id, NULL) ? id : NULL;
    o.origin_session = m->session[0] ? m->session : NULL;
    o.replace = true; /* seed 003: save under a name replaces what it named */
    o.module = ri_sandbox_module(m->sb, &o.module_len, NULL);
    o.cache = m->cache;
    bool ok = ss_put(m->st, name, image, len, &o, NULL, info, NULL, err);
    free(image);
    return ok;
}

/* The image of `name` for this sandbox: with the module embedded only when the sandbox
 * runs another one (the restore then loads it). */
static bool image_for_sandbox(ri_snapshots *m, const char *name, uint8_t **out, size_t *len, ri_snapstore_info *info,
                              ri_snapstore_error *err) {
    int lock = ss_lock(m->st, SS_LOCK_SHARED, NULL, err);
    if (lock < 0) return false;
    ss_manifest man;
    bool ok = ss_manifest_load(m->st, name, &man, err);
    if (ok) {
        uint8_t running_sha[SS_HASH];
        bool same = ri_sandbox_module(m->sb, NULL, running_sha) && memcmp(running_sha, man.info.module_sha256, SS_HASH) == 0;
        ri_snapstore_image_options o;
        memset(&o, 0, sizeof o);
        o.include_module = !same && man.info.module_stored;
        o.cache = m->cache;
        ri_buf image;
        ok = ss_assemble(m->st, &man, &o, NULL, m->cache, &image, err);
        if (ok) {
            *out = image.data;
            *len = image.len;
            if (info && !ss_info_copy(info, &man.info)) ok = ss_nomem(err), free(image.data);
        }
        ss_manifest_free(&man);
    }
    ss_unlock(lock);
    return ok;
}

bool ri_snapshots_restore(ri_snapshots *m, const char *name, ri_snapstore_info *info, ri_snapstore_error *err) {
    ss_ok(err);
    if (info) memset(info, 0, sizeof *info);
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_restore: manager is NULL");
    if (!ri_snapstore_name_valid(name, err)) return false;
    if (running(m, "restore", name, err)) return false;
    uint8_t *image;
    size_t len;
    ri_snapstore_info got;
    if (!image_for_sandbox(m, name, &image, &len, &got, err)) return false;
    ri_sandbox_error se;
    bool ok = ri_sandbox_restore(m->sb, image, len, &se);
    free(image);
    if (!ok) {
        ri_snapstore_info_free(&got);
        return sandbox_error(err, &se, "restore", name);
    }
    if (m->on_restored) m->on_restored(m->user, m->sb, &got);
    if (info) *info = got;
    else ri_snapstore_info_free(&got);
    return true;
}

bool ri_snapshots_has(ri_snapshots *m, const char *name, bool *has, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_has: manager is NULL");
    return ri_snapstore_exists(m->st, name, has, err);
}

bool ri_snapshots_get(ri_snapshots *m, const char *name, ri_snapstore_info *info, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_get: manager is NULL");
    return ri_snapstore_get_info(m->st, name, info, err);
}

bool ri_snapshots_list(ri_snapshots *m, ri_snapstore_info **out, size_t *n, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_list: manager is NULL");
    return ri_snapstore_list(m->st, NULL, out, n, err);
}

bool ri_snapshots_delete(ri_snapshots *m, const char *name, bool *deleted, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_delete: manager is NULL");
    return ri_snapstore_delete(m->st, name, deleted, err);
}

bool ri_snapshots_rename(ri_snapshots *m, const char *from, const char *to, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_rename: manager is NULL");
    return ri_snapstore_rename(m->st, from, to, err);
}

static bool plain_image(ri_snapshots *m, const char *name, uint8_t **out, size_t *len, ri_snapstore_error *err) {
    ri_snapstore_image_options o;
    memset(&o, 0, sizeof o);
    o.cache = m->cache;
    return ri_snapstore_get_image(m->st, name, &o, out, len, NULL, err);
}

bool ri_snapshots_diff(ri_snapshots *m, const char *a, const char *b, const ri_snap_diff_options *opts,
                       ri_snap_diff *out, ri_snapstore_error *err) {
    ss_ok(err);
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_diff: a NULL argument");
    uint8_t *x = NULL, *y = NULL;
    size_t xl, yl;
    bool ok = plain_image(m, a, &x, &xl, err) && plain_image(m, b, &y, &yl, err);
    ri_sandbox_error se;
    if (ok && !ri_snapshot_diff(x, xl, y, yl, opts, out, &se))
        ok = ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Cannot diff '%s' and '%s': %s", a, b, se.message);
    free(x);
    free(y);
    return ok;
}

bool ri_snapshots_diff_current(ri_snapshots *m, const char *name, const ri_snap_diff_options *opts, ri_snap_diff *out,
                               ri_snapstore_error *err) {
    ss_ok(err);
    if (out) memset(out, 0, sizeof *out);
    if (!m || !out) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_diff_current: a NULL argument");
    if (running(m, "compare with", name, err)) return false;
    uint8_t *x;
    size_t xl;
    if (!plain_image(m, name, &x, &xl, err)) return false;
    ri_sandbox_error se;
    bool ok = ri_sandbox_diff(m->sb, x, xl, opts, out, &se);
    free(x);
    return ok || sandbox_error(err, &se, "compare with", name);
}

bool ri_snapshots_export(ri_snapshots *m, const char *name, ri_snapstore_export_format format, uint8_t **out,
                         size_t *out_len, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_export: manager is NULL");
    return ri_snapstore_export(m->st, name, format, out, out_len, err);
}

bool ri_snapshots_import(ri_snapshots *m, const uint8_t *data, size_t len, const char *name,
                         ri_snapstore_info *info, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_import: manager is NULL");
    return ri_snapstore_import(m->st, data, len, name, NULL, info, err);
}

bool ri_snapshots_total_size(ri_snapshots *m, uint64_t *bytes, ri_snapstore_error *err) {
    if (!m || !bytes) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_total_size: a NULL argument");
    ri_snapstore_usage u;
    if (!ri_snapstore_usage_of(m->st, &u, err)) return false;
    *bytes = u.total_bytes;
    return true;
}

bool ri_snapshots_set_max_size(ri_snapshots *m, uint64_t bytes, ri_snapstore_error *err) {
    if (!m) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshots_set_max_size: manager is NULL");
    return ri_snapstore_set_max_bytes(m->st, bytes, NULL, err);
}
