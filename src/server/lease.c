/* Leases on a shared volume: ROOT/{id}/lease holds {"owner":ID,"expires_ms":N}; every
 * update happens under flock(ROOT/{id}/lease.lock) and is an atomic replace, so two
 * servers never both think they own a sandbox (while their clocks roughly agree). A
 * server that wants a sandbox another one holds writes ROOT/{id}/handoff; the owner's
 * tick notices it, checkpoints and releases. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"

static int lock_open(const char *root, const char *id) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", root, id);
    char why[256];
    if (!srv_mkdirs(p, why, sizeof why)) return -1;
    snprintf(p, sizeof p, "%s/%s/lease.lock", root, id);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    return fd;
}

static void lock_close(int fd) {
    flock(fd, LOCK_UN);
    close(fd);
}

/* The current lease: 1 found, 0 none or unreadable (treated as free). */
static int read_lease(const char *root, const char *id, char *owner, size_t cap, int64_t *expires) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/lease", root, id);
    uint8_t *d;
    size_t n;
    int e;
    if (!srv_read_file(p, 4096, &d, &n, &e)) return 0;
    json_t *j = json_loadb((const char *)d, n, 0, NULL);
    free(d);
    if (!j) return 0;
    json_t *o = json_object_get(j, "owner"), *x = json_object_get(j, "expires_ms");
    int r = 0;
    if (json_is_string(o) && json_is_integer(x)) {
        snprintf(owner, cap, "%s", json_string_value(o));
        *expires = json_integer_value(x);
        r = 1;
    }
    json_decref(j);
    return r;
}

static bool write_lease(const char *root, const char *id, const char *owner, uint32_t lease_ms) {
    char dir[1200], why[256];
    snprintf(dir, sizeof dir, "%s/%s", root, id);
    json_t *j = json_pack("{s:s, s:I, s:i}", "owner", owner, "expires_ms", (json_int_t)(ri_clock_wall_ms() + lease_ms), "pid",
                          (int)getpid());
    char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!t) return false;
    bool ok = srv_replace_file(dir, "lease", t, strlen(t), false, why, sizeof why);
    free(t);
    return ok;
}

srv_lease_state srv_lease_acquire(const char *root, const char *id, const char *owner, uint32_t lease_ms,
                                  char *holder, size_t holder_cap, char *why, size_t cap) {
    if (!srv_id_valid(id)) return snprintf(why, cap, "invalid sandbox id"), SRV_LEASE_ERROR;
    int fd = lock_open(root, id);
    if (fd < 0) return snprintf(why, cap, "cannot lock the lease: %s", strerror(errno)), SRV_LEASE_ERROR;
    char cur[128] = "";
    int64_t exp = 0;
    srv_lease_state st;
    if (read_lease(root, id, cur, sizeof cur, &exp) && strcmp(cur, owner) != 0 && exp > ri_clock_wall_ms()) {
        snprintf(holder, holder_cap, "%s", cur);
        st = SRV_LEASE_HELD_BY_OTHER;
    } else if (write_lease(root, id, owner, lease_ms)) {
        st = SRV_LEASE_ACQUIRED;
    } else {
        snprintf(why, cap, "cannot write the lease");
        st = SRV_LEASE_ERROR;
    }
    lock_close(fd);
    return st;
}

bool srv_lease_renew(const char *root, const char *id, const char *owner, uint32_t lease_ms) {
    int fd = lock_open(root, id);
    if (fd < 0) return false;
    char cur[128] = "";
    int64_t exp = 0;
    bool ok = false;
    /* ours, or expired and not taken by anyone since */
    int found = read_lease(root, id, cur, sizeof cur, &exp);
    if (found && strcmp(cur, owner) == 0) ok = write_lease(root, id, owner, lease_ms);
    lock_close(fd);
    return ok;
}

void srv_lease_release(const char *root, const char *id, const char *owner) {
    if (!srv_id_valid(id)) return;
    int fd = lock_open(root, id);
    if (fd < 0) return;
    char cur[128] = "";
    int64_t exp = 0;
    if (read_lease(root, id, cur, sizeof cur, &exp) && strcmp(cur, owner) == 0) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s/lease", root, id);
        unlink(p);
    }
    lock_close(fd);
}

bool srv_handoff_request(const char *root, const char *id, const char *requester) {
    char dir[1200], why[256];
    snprintf(dir, sizeof dir, "%s/%s", root, id);
    return srv_write_atomic(dir, "handoff", requester, strlen(requester), why, sizeof why);
}

bool srv_handoff_requested(const char *root, const char *id) {
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s/handoff", root, id);
    return stat(p, &st) == 0;
}

void srv_handoff_clear(const char *root, const char *id) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/handoff", root, id);
    unlink(p);
}

int srv_lease_lock(const char *root, const char *id) { return srv_id_valid(id) ? lock_open(root, id) : -1; }

void srv_lease_unlock(int fd) { lock_close(fd); }

bool srv_lease_held_by_other(const char *root, const char *id, const char *owner) {
    char cur[128] = "";
    int64_t exp = 0;
    return read_lease(root, id, cur, sizeof cur, &exp) && strcmp(cur, owner) != 0 && exp > ri_clock_wall_ms();
}
