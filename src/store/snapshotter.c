/*
 * The snapshotter (seed 004): a session's snapshot refs on the store.
 *
 * Snapshots are forks, not mutations: restore and branch create a NEW sandbox from the
 * snapshot and never touch an existing one; the caller switches to the new one (the C
 * counterpart of the seed's registry.swapRef is simply using the returned sandbox).
 *
 * Ownership is recorded in the store (the manifest's origin session), not in process
 * memory, so it survives a restart: the original's in-memory set lost it, and after a
 * restart could not tell its own snapshots from another session's. Every operation
 * acts only on this session's snapshots unless the call sets allow_cross_session, and
 * every such opt-in is audited before anything happens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

#define SHORT_HEX 8

struct ri_snapshotter {
    ri_snapstore *st;
    char session[RI_SNAPSTORE_ORIGIN_MAX + 1];
    char provider[RI_SNAPSHOT_PROVIDER_MAX + 1];
    uint32_t max_list;
    ri_sandboxes *factory;
    ri_snapstore_audit_fn audit;
    void *audit_user;
    ri_snapstore_cache *cache;
};

ri_snapshotter *ri_snapshotter_new(ri_snapstore *st, const ri_snapshotter_config *cfg, ri_snapstore_error *err) {
    ss_ok(err);
    if (!st || !cfg) {
        ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshotter_new: %s is NULL", st ? "config" : "store");
        return NULL;
    }
    if (!cfg->factory) {
        ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshotter_new: a factory is required (restore and branch create "
                "sandboxes)");
        return NULL;
    }
    if (!ri_snapstore_origin_valid(cfg->session_id, err)) {
        ss_error_prefix(err, "Invalid session: ");
        return NULL;
    }
    const char *provider = cfg->provider_id ? cfg->provider_id : RI_SNAPSHOTTER_DEFAULT_PROVIDER;
    if (strlen(provider) > RI_SNAPSHOT_PROVIDER_MAX || !ri_snapstore_origin_valid(provider, err)) {
        ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid provider id '%.80s'", provider);
        return NULL;
    }
    ri_snapshotter *s = calloc(1, sizeof *s);
    if (!s || !(s->cache = ri_snapstore_cache_new())) {
        free(s);
        ss_nomem(err);
        return NULL;
    }
    s->st = st;
    snprintf(s->session, sizeof s->session, "%s", cfg->session_id);
    snprintf(s->provider, sizeof s->provider, "%s", provider);
    s->max_list = cfg->max_list_results ? cfg->max_list_results : RI_SNAPSHOTTER_DEFAULT_MAX_LIST;
    s->factory = cfg->factory;
    s->audit = cfg->audit;
    s->audit_user = cfg->audit_user;
    return s;
}

void ri_snapshotter_free(ri_snapshotter *s) {
    if (!s) return;
    ri_snapstore_cache_free(s->cache);
    free(s);
}

static const ri_snapstore_abort *abort_of(const ri_snapshot_call *call) { return call ? call->abort : NULL; }

/* ---- snapshot ----------------------------------------------------------------------------------- */

bool ri_snapshotter_snapshot(ri_snapshotter *s, ri_sandbox *sb, const ri_snapshot_call *call, ri_snapshot_ref *out,
                             ri_snapstore_error *err) {
    ss_ok(err);
    if (out) memset(out, 0, sizeof *out);
    if (!s || !sb || !out) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshotter_snapshot: a NULL argument");
    if (!ss_abort_at_start(abort_of(call), err)) return false;
    if (ri_sandbox_status_of(sb) == RI_SANDBOX_RUNNING)
        return ss_fail(err, RI_SNAPSTORE_ERR_CONFLICT, "Cannot snapshot %s: an execution is running in it",
                       ri_sandbox_id(sb));
    const char *origin = ri_sandbox_id(sb);
    if (!ri_snapstore_origin_valid(origin, err)) {
        ss_error_prefix(err, "Cannot snapshot: the sandbox's id is not usable as an origin: ");
        return false;
    }
    char hex[RI_SNAPSTORE_ID_HEX + 1];
    if (!ss_random_hex(hex, RI_SNAPSTORE_ID_HEX / 2, err)) return false;
    char name[RI_SNAPSTORE_NAME_MAX + 1];
    snprintf(name, sizeof name, "snap-%s", hex);
    ri_snapshot_options so = {RI_SNAPSHOT_V2, false, true};
    uint8_t *image;
    size_t len;
    ri_sandbox_error se;
    if (!ri_sandbox_snapshot_with(sb, &so, &image, &len, &se)) {
        ss_fail(err, RI_SNAPSTORE_ERR_SANDBOX, "Cannot snapshot %s: %s", origin, se.message);
        if (err) err->sandbox_code = se.code;
        return false;
    }
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    o.origin_sandbox = origin;
    o.origin_session = s->session;
    o.module = ri_sandbox_module(sb, &o.module_len, NULL);
    o.cache = s->cache;
    o.abort = abort_of(call);
    bool ok = ss_put(s->st, name, image, len, &o, NULL, NULL, NULL, err);
    free(image);
    if (!ok) return false;
    snprintf(out->provider_id, sizeof out->provider_id, "%s", s->provider);
    snprintf(out->snapshot, sizeof out->snapshot, "%s", name);
    snprintf(out->origin_sandbox_id, sizeof out->origin_sandbox_id, "%s", origin);
    return true;
}

/* ---- refs and ownership --------------------------------------------------------------------------- */

/* A ref handed in as a struct gets the checks a parsed one got. */
static bool ref_valid(const ri_snapshotter *s, const ri_snapshot_ref *ref, ri_snapstore_error *err) {
    if (!ref) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "The snapshot ref is NULL");
    if (memchr(ref->provider_id, '\0', sizeof ref->provider_id) == NULL ||
        memchr(ref->snapshot, '\0', sizeof ref->snapshot) == NULL ||
        memchr(ref->origin_sandbox_id, '\0', sizeof ref->origin_sandbox_id) == NULL)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF, "Invalid snapshot ref: a field is not terminated");
    if (strcmp(ref->provider_id, s->provider) != 0)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF,
                       "Invalid snapshot ref: it is for provider '%s', this snapshotter is '%s'", ref->provider_id,
                       s->provider);
    ri_snapstore_error why;
    if (!ri_snapstore_name_valid(ref->snapshot, &why))
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF, "Invalid snapshot ref: \"ref.snapshot\" is malformed (%.200s)",
                       why.message);
    if (!ri_snapstore_origin_valid(ref->origin_sandbox_id, &why))
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF,
                       "Invalid snapshot ref: \"ref.originSandboxId\" is malformed (%.200s)", why.message);
    return true;
}

/* The ref must describe its snapshot, and the snapshot must be this session's, or the
 * call must opt in (audited first). */
static bool owned(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapstore_info *info,
                  const ri_snapshot_call *call, const char *operation, ri_snapstore_error *err) {
    if (strcmp(ref->origin_sandbox_id, info->origin_sandbox) != 0)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_REF,
                       "Invalid snapshot ref: it names origin sandbox '%s', but snapshot '%s' was taken from '%s'",
                       ref->origin_sandbox_id, ref->snapshot, info->origin_sandbox[0] ? info->origin_sandbox : "none");
    if (strcmp(info->origin_session, s->session) == 0) return true;
    if (!(call && call->allow_cross_session))
        return ss_fail(err, RI_SNAPSTORE_ERR_FORBIDDEN,
                       "Cannot %s snapshot '%s': it belongs to %s%s, not to this session (%s); set allow-cross-session "
                       "to act on it (the opt-in is audited)",
                       operation, ref->snapshot, info->origin_session[0] ? "session " : "no session",
                       info->origin_session, s->session);
    return ss_audit(s->st, s->audit, s->audit_user, operation, s->session, ref->snapshot, info, err);
}

/* ---- restore and branch -------------------------------------------------------------------------------- */

/* "<base>-<kind>-<8 hex>", where base is the origin without earlier such suffixes (a
 * restore of a restore is "<origin>-restored-<new>", not ever longer), cut to fit. */
static bool new_sandbox_id(const char *origin, const char *kind, char *out, size_t cap, ri_snapstore_error *err) {
    char base[RI_SNAPSTORE_ORIGIN_MAX + 1];
    snprintf(base, sizeof base, "%s", origin);
    for (;;) {
        size_t n = strlen(base);
        const char *kinds[] = {"-restored-", "-branch-"};
        bool stripped = false;
        for (size_t k = 0; k < 2 && !stripped; k++) {
            size_t kl = strlen(kinds[k]);
            if (n < kl + SHORT_HEX + 1) continue;
            const char *tail = base + n - SHORT_HEX;
            bool hex = strspn(tail, "0123456789abcdef") == SHORT_HEX;
            if (hex && memcmp(base + n - SHORT_HEX - kl, kinds[k], kl) == 0) {
                base[n - SHORT_HEX - kl] = '\0';
                stripped = true;
            }
        }
        if (!stripped) break;
    }
    char shorthex[SHORT_HEX + 1];
    if (!ss_random_hex(shorthex, SHORT_HEX / 2, err)) return false;
    size_t suffix = 1 + strlen(kind) + 1 + SHORT_HEX;
    size_t keep = strlen(base);
    if (keep + suffix > RI_SANDBOX_ID_MAX) keep = RI_SANDBOX_ID_MAX - suffix;
    snprintf(out, cap, "%.*s-%s-%s", (int)keep, base, kind, shorthex);
    return true;
}

static ri_sandbox *fork_sandbox(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                                const char *kind, const char *operation, ri_snapstore_error *err) {
    ss_ok(err);
    if (!s) {
        ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshotter_%s: snapshotter is NULL", operation);
        return NULL;
    }
    const ri_snapstore_abort *abort = abort_of(call);
    if (!ss_abort_at_start(abort, err) || !ref_valid(s, ref, err)) return NULL;
    ri_snapstore_info info;
    if (!ri_snapstore_get_info(s->st, ref->snapshot, &info, err)) return NULL;
    bool ok = owned(s, ref, &info, call, operation, err);
    if (ok && !info.module_stored)
        ok = ss_fail(err, RI_SNAPSTORE_ERR_INPUT,
                     "Cannot %s snapshot '%s' into a new sandbox: the store does not hold its module", operation,
                     ref->snapshot);
    char id[RI_SANDBOX_ID_MAX + 1];
    if (ok) ok = new_sandbox_id(info.origin_sandbox, kind, id, sizeof id, err);
    uint8_t *image = NULL;
    size_t len = 0;
    if (ok) {
        ri_snapstore_image_options o;
        memset(&o, 0, sizeof o);
        o.include_module = true;
        o.cache = s->cache; /* known pages are not read again */
        o.abort = abort;
        int lock = ss_lock(s->st, SS_LOCK_SHARED, abort, err);
        ok = lock >= 0 && ss_get_image_locked(s->st, ref->snapshot, &o, false, &image, &len, NULL, err);
        ss_unlock(lock);
    }
    ri_sandbox *sb = NULL;
    if (ok) {
        ri_sandbox_config c = ri_sandbox_config_default();
        c.has_event_timestamp = true;
        c.event_timestamp = info.event_timestamp;
        ri_sandbox_error se;
        sb = ri_sandbox_create_with_id(s->factory, call && call->config ? call->config : &c, id, &se);
        if (!sb) {
            ok = ss_fail(err, RI_SNAPSTORE_ERR_SANDBOX, "Cannot create the new sandbox %s: %s", id, se.message);
            if (err) err->sandbox_code = se.code;
        } else if (ss_aborted(abort)) {
            ok = ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted before the new sandbox was made: nothing was done");
        } else if (!ri_sandbox_restore(sb, image, len, &se)) {
            ok = ss_fail(err, RI_SNAPSTORE_ERR_SANDBOX, "Cannot %s snapshot '%s' into %s: %s", operation,
                         ref->snapshot, id, se.message);
            if (err) err->sandbox_code = se.code;
        }
    }
    free(image);
    ri_snapstore_info_free(&info);
    if (!ok) {
        ri_sandbox_free(sb);
        return NULL;
    }
    return sb;
}

ri_sandbox *ri_snapshotter_restore(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                                   ri_snapstore_error *err) {
    return fork_sandbox(s, ref, call, "restored", "restore", err);
}

ri_sandbox *ri_snapshotter_branch(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                                  ri_snapstore_error *err) {
    return fork_sandbox(s, ref, call, "branch", "branch", err);
}

/* ---- list and delete ---------------------------------------------------------------------------------------- */

bool ri_snapshotter_list(ri_snapshotter *s, const ri_snapshot_call *call, ri_snapshot_ref **out, size_t *n,
                         ri_snapstore_error *err) {
    ss_ok(err);
    if (out) *out = NULL;
    if (n) *n = 0;
    if (!s || !out || !n) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshotter_list: a NULL argument");
    if (!ss_abort_at_start(abort_of(call), err)) return false;
    bool cross = call && call->allow_cross_session;
    if (cross && !ss_audit(s->st, s->audit, s->audit_user, "list", s->session, NULL, NULL, err)) return false;
    /* The clamp (seed 004's maxListResults): a pool of thousands never comes out whole. */
    uint32_t limit = call && call->limit && call->limit < s->max_list ? call->limit : s->max_list;
    ri_snapstore_list_options lo = {cross ? NULL : s->session, false, limit};
    ri_snapstore_info *list;
    size_t count;
    if (!ri_snapstore_list(s->st, &lo, &list, &count, err)) return false;
    ri_snapshot_ref *refs = calloc(count ? count : 1, sizeof *refs);
    if (!refs) {
        ri_snapstore_list_free(list, count);
        return ss_nomem(err);
    }
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        if (!list[i].origin_sandbox[0]) continue; /* no origin: not something a ref can name */
        snprintf(refs[k].provider_id, sizeof refs[k].provider_id, "%s", s->provider);
        snprintf(refs[k].snapshot, sizeof refs[k].snapshot, "%s", list[i].name);
        snprintf(refs[k].origin_sandbox_id, sizeof refs[k].origin_sandbox_id, "%s", list[i].origin_sandbox);
        k++;
    }
    ri_snapstore_list_free(list, count);
    *out = refs;
    *n = k;
    return true;
}

bool ri_snapshotter_delete(ri_snapshotter *s, const ri_snapshot_ref *ref, const ri_snapshot_call *call,
                           ri_snapstore_error *err) {
    SS_ERR_SCRATCH(err);
    ss_ok(err);
    if (!s) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapshotter_delete: snapshotter is NULL");
    if (!ss_abort_at_start(abort_of(call), err) || !ref_valid(s, ref, err)) return false;
    ri_snapstore_info info;
    if (!ri_snapstore_get_info(s->st, ref->snapshot, &info, err)) {
        /* Idempotent, as rm -f: already gone is done. */
        if (err && err->code == RI_SNAPSTORE_ERR_NOT_FOUND) {
            ss_ok(err);
            return true;
        }
        return false;
    }
    bool ok = owned(s, ref, &info, call, "delete", err);
    ri_snapstore_info_free(&info);
    return ok && ri_snapstore_delete(s->st, ref->snapshot, NULL, err);
}
