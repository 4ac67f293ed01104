/*
 * The file operations every write in the store is made of: a temporary file in the
 * target's own directory (so the rename cannot cross file systems), written whole and
 * fsync'd; a rename onto the final name (the commit: readers see the old file or the
 * new one, never a part); an fsync of the directory (the rename is durable). Reads
 * are whole-file with a size cap, and never follow a file that changes size under them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

#define CHUNK ((size_t)1 << 20)

bool ss_is_temp(const char *name) { return strncmp(name, SS_TEMP_PREFIX, strlen(SS_TEMP_PREFIX)) == 0; }

int ss_open_dir(int dirfd, const char *path) {
    return openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

bool ss_read_file(int dirfd, const char *name, uint64_t max, uint8_t **data, size_t *len, bool *missing,
                  ri_snapstore_error *err) {
    *data = NULL;
    *len = 0;
    if (missing) *missing = false;
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT && missing) *missing = true;
        return ss_fail_errno(err, e, "Cannot open %s", name);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ss_fail_errno(err, e, "Cannot stat %s", name);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "%s is not a regular file", name);
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "%s is %lld bytes, more than the %llu a file of its kind may be",
                       name, (long long)st.st_size, (unsigned long long)max);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return ss_nomem(err);
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ss_fail_errno(err, e, "Cannot read %s", name);
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        /* Files in the store never change once renamed into place: a short read means
         * something outside the store is at work. */
        free(buf);
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "%s changed size while being read", name);
    }
    *data = buf;
    *len = size;
    return true;
}

static bool write_all(int fd, const uint8_t *data, size_t len, const ri_snapstore_abort *abort,
                      ri_snapstore_error *err) {
    size_t done = 0;
    while (done < len) {
        if (done && done % CHUNK == 0 && ss_aborted(abort))
            return ss_fail(err, RI_SNAPSTORE_ERR_ABORTED, "Aborted while writing: the partial file was removed");
        size_t n = len - done;
        size_t to_boundary = CHUNK - done % CHUNK;
        if (n > to_boundary) n = to_boundary;
        ssize_t w = write(fd, data + done, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return ss_fail_errno(err, errno, "Cannot write a temporary file");
        done += (size_t)w;
    }
    return true;
}

bool ss_write_temp(int dirfd, const uint8_t *data, size_t len, const ri_snapstore_abort *abort, char tmp[64],
                   ri_snapstore_error *err) {
    char rnd[17];
    if (!ss_random_hex(rnd, 8, err)) return false;
    snprintf(tmp, 64, "%s%s", SS_TEMP_PREFIX, rnd);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return ss_fail_errno(err, errno, "Cannot create a temporary file");
    bool ok = write_all(fd, data, len, abort, err);
    if (ok && fsync(fd) != 0) ok = ss_fail_errno(err, errno, "Cannot fsync a temporary file");
    if (close(fd) != 0 && ok) ok = ss_fail_errno(err, errno, "Cannot close a temporary file");
    if (!ok) unlinkat(dirfd, tmp, 0);
    return ok;
}

bool ss_fsync_dir(int dirfd, const char *what, ri_snapstore_error *err) {
    if (fsync(dirfd) != 0) return ss_fail_errno(err, errno, "Cannot fsync the directory %s", what);
    return true;
}

int ss_rename(int dirfd, const char *from, const char *to, bool noreplace) {
    if (!noreplace) return renameat(dirfd, from, dirfd, to) == 0 ? 0 : errno;
#ifdef RENAME_NOREPLACE
    if (renameat2(dirfd, from, dirfd, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return errno;
#endif
    /* No atomic no-replace rename here: link (which refuses an existing target), then
     * unlink. A crash between them leaves both names, each a whole snapshot. */
    if (linkat(dirfd, from, dirfd, to, 0) != 0) return errno;
    unlinkat(dirfd, from, 0);
    return 0;
}
