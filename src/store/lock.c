/*
 * The store's lock: flock(2) on DIR/lock, taken per operation on a descriptor of its
 * own. flock locks belong to the open file description, so two handles in one process
 * exclude each other as two processes do (fcntl locks would not), and the kernel drops
 * the lock when a holder dies, even by SIGKILL: a crashed writer never blocks the store.
 *
 * DIR/lock. Shared: saves, reads, renames (each of their changes is one atomic rename
 * or unlink). Exclusive: collection and eviction, the only operations that remove
 * blobs; holding it means no save is between writing its blobs and committing the
 * manifest that refers to them.
 *
 * DIR/blobs.lock orders blob publication between concurrent saves: a save renames its
 * new blobs into place and fsyncs their directories holding it exclusively, and looks
 * for existing blobs holding it shared. So a blob a save finds is durable, never one
 * another save has renamed but not yet made durable (I2).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"

static int lock_file(ri_snapstore *st, const char *file, ss_lock_mode mode, const ri_snapstore_abort *abort,
                     ri_snapstore_error *err) {
    int fd = openat(st->dirfd, file, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        ss_fail_errno(err, errno, "Cannot open the store's lock file %s/%s", st->dir, file);
        return -1;
    }
    int op = mode == SS_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH;
    if (!abort) {
        while (flock(fd, op) != 0) {
            if (errno == EINTR) continue;
            ss_fail_errno(err, errno, "Cannot lock the store %s", st->dir);
            close(fd);
            return -1;
        }
        return fd;
    }
    /* With an abort signal: poll, so that a wait for another process can be cancelled. */
    long wait_us = 100;
    for (;;) {
        if (flock(fd, op | LOCK_NB) == 0) return fd;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            ss_fail_errno(err, errno, "Cannot lock the store %s", st->dir);
            close(fd);
            return -1;
        }
        if (ss_aborted(abort)) {
            ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted while waiting for the store's lock: nothing was done");
            close(fd);
            return -1;
        }
        struct timespec ts = {0, wait_us * 1000};
        nanosleep(&ts, NULL);
        if (wait_us < 10000) wait_us *= 2;
    }
}

int ss_lock(ri_snapstore *st, ss_lock_mode mode, const ri_snapstore_abort *abort, ri_snapstore_error *err) {
    return lock_file(st, "lock", mode, abort, err);
}

int ss_lock_blobs(ri_snapstore *st, ss_lock_mode mode, ri_snapstore_error *err) {
    return lock_file(st, "blobs.lock", mode, NULL, err);
}

void ss_unlock(int fd) {
    if (fd >= 0) close(fd); /* closing the last descriptor releases the flock */
}
