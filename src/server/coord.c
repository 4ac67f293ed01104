/* Who owns a sandbox, behind one interface (server_internal.h, "coordination"): the lease
 * files of the checkpoint volume (lease.c; one machine, the default) or etcd (coord_etcd.c;
 * several machines, --coordinator). Attach, create, checkpoint and restore call these and
 * do not know which backend answers. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "server_internal.h"

srv_own srv_coord_acquire(srv *s, const char *id, int64_t *fence, char *holder, size_t holder_cap, char *why,
                          size_t cap) {
    *fence = 0;
    if (s->etcd) return srv_etcd_acquire(s, id, fence, holder, holder_cap, why, cap);
    switch (srv_lease_acquire(s->checkpoint_path, id, s->server_id, s->cfg.lease_ms, holder, holder_cap, why, cap)) {
    case SRV_LEASE_ACQUIRED:
        srv_handoff_clear(s->checkpoint_path, id); /* a request left for the previous owner is answered */
        return SRV_OWN_ACQUIRED;
    case SRV_LEASE_HELD_BY_OTHER: return SRV_OWN_TAKEN;
    case SRV_LEASE_ERROR: break;
    }
    return SRV_OWN_ERROR;
}

int srv_coord_read_meta(srv *s, const char *id, json_t **meta, char *why, size_t cap) {
    if (s->etcd) return srv_etcd_read(s, id, meta, NULL, 0, why, cap);
    return srv_volume_read_metadata(s->checkpoint_path, id, meta, why, cap);
}

srv_fence_result srv_coord_write_meta(srv *s, const char *id, int64_t fence, json_t *meta, char *why, size_t cap) {
    if (s->etcd) {
        char *text = json_dumps(meta, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!text) return snprintf(why, cap, "out of memory"), SRV_FENCE_ERROR;
        srv_fence_result r = srv_etcd_put_meta(s, id, fence, text, why, cap);
        free(text);
        if (r != SRV_FENCE_OK) return r;
    }
    /* the volume's copy: what delta restores read beside the images */
    return srv_volume_write_metadata(s->checkpoint_path, id, meta, why, cap) ? SRV_FENCE_OK : SRV_FENCE_ERROR;
}

srv_fence_result srv_coord_write_checkpoint(srv *s, const char *id, int64_t fence, const uint8_t *img, size_t n,
                                            char *file, size_t file_cap, char *why, size_t cap) {
    if (!srv_volume_write_checkpoint(s->checkpoint_path, id, s->etcd ? fence : 0, img, n, file, file_cap, why, cap))
        return SRV_FENCE_ERROR;
    if (!s->etcd) return SRV_FENCE_OK; /* latest was renamed into place */
    srv_fence_result r = srv_etcd_commit(s, id, fence, file, why, cap);
    if (r == SRV_FENCE_REFUSED) {
        /* never committed, and named with our fence: no one else reads or builds on it */
        char path[1400];
        snprintf(path, sizeof path, "%s/%s/checkpoints/%s", s->checkpoint_path, id, file);
        unlink(path);
    }
    /* UNAVAILABLE: the txn may have been applied; the image stays (latest may name it) */
    return r;
}

int srv_coord_map_latest(srv *s, const char *id, const uint8_t **img, size_t *len, char *name, size_t name_cap,
                         char *why, size_t cap) {
    if (!s->etcd) return srv_volume_map_latest(s->checkpoint_path, id, img, len, name, name_cap, why, cap);
    int r = srv_etcd_read(s, id, NULL, name, name_cap, why, cap);
    if (r != SRV_READ_OK) return r;
    return srv_volume_map_image(s->checkpoint_path, id, name, img, len, why, cap);
}

bool srv_coord_request_handoff(srv *s, const char *id, char *why, size_t cap) {
    if (s->etcd) return srv_etcd_request_handoff(s, id, why, cap);
    if (srv_handoff_request(s->checkpoint_path, id, s->server_id)) return true;
    return snprintf(why, cap, "Cannot ask the owning server to release the sandbox."), false;
}

bool srv_coord_renew(srv *s, srv_sandbox *sb, int64_t now) {
    /* etcd: the module's own table, emptied when the lease is lost or a write was fenced */
    if (s->etcd) return srv_etcd_holds(s, sb->id, sb->fence);
    if (now - sb->lease_renewed < (int64_t)s->cfg.lease_ms / 3) return true;
    if (!srv_lease_renew(s->checkpoint_path, sb->id, s->server_id, s->cfg.lease_ms)) return false;
    sb->lease_renewed = now;
    return true;
}

bool srv_coord_paused(srv *s, const srv_sandbox *sb) {
    return s->etcd && sb->lease_held && !srv_etcd_confirmed(s);
}

bool srv_coord_handoff_requested(srv *s, const char *id) {
    return s->etcd ? srv_etcd_handoff_asked(s, id) : srv_handoff_requested(s->checkpoint_path, id);
}

void srv_coord_handoff_clear(srv *s, const char *id) {
    if (s->etcd) srv_etcd_handoff_clear(s, id);
    else srv_handoff_clear(s->checkpoint_path, id);
}

void srv_coord_release(srv *s, const char *id, int64_t fence, bool forget) {
    if (s->etcd) srv_etcd_release(s, id, fence, forget);
    else srv_lease_release(s->checkpoint_path, id, s->server_id);
}

bool srv_coord_maybe_elsewhere(srv *s, const char *id) {
    /* etcd: a sandbox not acquired here may be another server's, whose writes are in flight */
    if (s->cfg.coordinator) return !s->etcd || !srv_etcd_owned_here(s, id);
    return srv_lease_held_by_other(s->checkpoint_path, id, s->server_id);
}

void srv_coord_events(srv *s) {
    unsigned what = s->etcd ? srv_etcd_take_kick(s) : 0u;
    if (what) srv_tick_coord(s, what & SRV_KICK_HANDOFF, what & SRV_KICK_RELEASE, what & SRV_KICK_CONFIRMED);
}

json_t *srv_coord_status(srv *s) {
    if (s->cfg.coordinator)
        return s->etcd ? srv_etcd_status(s) : json_pack("{s:s, s:s}", "backend", "etcd", "state", "closed");
    if (!s->checkpoint_path) return json_pack("{s:s}", "backend", "none");
    return json_pack("{s:s, s:s}", "backend", "volume leases", "path", s->checkpoint_path);
}
