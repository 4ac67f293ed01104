/* Whole-file reads and atomic writes (see files.h). */
#include "cli/files.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"

#define READ_CHUNK (1u << 16)
/* Large files are read and written in pieces of this size, so that progress can move. */
#define IO_PIECE ((size_t)8 << 20)
/* A pipe or a device has no size to check first, and /dev/zero never ends: what is read
 * from one is capped lower than a regular file's limit, so memory stays bounded. */
#define STREAM_MAX ((size_t)64 << 20)

/* "reading big.wsnp": the operation and the file's last name (a line must stay short). */
static ri_progress *progress_of(const char *verb, const char *path, size_t len) {
    if (len < RI_PROGRESS_MIN_BYTES) return NULL;
    char what[160];
    const char *slash = strrchr(path, '/');
    snprintf(what, sizeof what, "%s %s", verb, slash && slash[1] ? slash + 1 : path);
    return ri_progress_start(what, len);
}

/* Reads until EOF into a growing buffer; for pipes and other files without a size. */
static int read_stream(int fd, size_t max_len, uint8_t **data, size_t *len, char *why, size_t why_cap) {
    size_t cap = READ_CHUNK, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        snprintf(why, why_cap, "out of memory");
        return RI_EXIT_INTERNAL;
    }
    for (;;) {
        if (n == cap) {
            size_t bigger_cap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
            uint8_t *bigger = bigger_cap > cap ? realloc(buf, bigger_cap) : NULL;
            if (!bigger) {
                free(buf);
                snprintf(why, why_cap, "out of memory after %zu bytes", n);
                return RI_EXIT_INTERNAL;
            }
            buf = bigger;
            cap = bigger_cap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0) {
            if (errno == EINTR) continue;
            snprintf(why, why_cap, "%s", strerror(errno));
            free(buf);
            return RI_EXIT_INPUT;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > max_len) {
            free(buf);
            snprintf(why, why_cap, "too large for a pipe or device (more than %zu bytes; use a regular file)",
                     max_len);
            return RI_EXIT_INPUT;
        }
    }
    *data = buf;
    *len = n;
    return RI_EXIT_OK;
}

int ri_read_file(const char *path, size_t max_len, uint8_t **data, size_t *len,
                 char *why, size_t why_cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_cap, "%s", strerror(errno));
        return RI_EXIT_INPUT;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_cap, "%s", strerror(errno));
        close(fd);
        return RI_EXIT_INPUT;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, why_cap, "%s", strerror(EISDIR));
        close(fd);
        return RI_EXIT_INPUT;
    }
    if (!S_ISREG(st.st_mode)) {
        int rc = read_stream(fd, max_len < STREAM_MAX ? max_len : STREAM_MAX, data, len, why, why_cap);
        close(fd);
        return rc;
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max_len) {
        snprintf(why, why_cap, "too large (%lld bytes; at most %zu)", (long long)st.st_size, max_len);
        close(fd);
        return RI_EXIT_INPUT;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size > 0 ? size : 1);
    if (!buf) {
        snprintf(why, why_cap, "out of memory (%zu bytes)", size);
        close(fd);
        return RI_EXIT_INTERNAL;
    }
    size_t n = 0;
    ri_progress *progress = progress_of("reading", path, size);
    while (n < size) {
        ri_progress_set(progress, n);
        ssize_t got = read(fd, buf + n, size - n < IO_PIECE ? size - n : IO_PIECE);
        if (got < 0) {
            if (errno == EINTR) continue;
            snprintf(why, why_cap, "%s", strerror(errno));
            ri_progress_finish(progress);
            free(buf);
            close(fd);
            return RI_EXIT_INPUT;
        }
        if (got == 0) break; /* the file shrank while we read it: take what is there */
        n += (size_t)got;
    }
    ri_progress_finish(progress);
    close(fd);
    *data = buf;
    *len = n;
    return RI_EXIT_OK;
}

static int write_all(int fd, const uint8_t *data, size_t len, ri_progress *progress) {
    size_t total = len;
    while (len > 0) {
        ri_progress_set(progress, total - len);
        ssize_t put = write(fd, data, len < IO_PIECE ? len : IO_PIECE);
        if (put < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += put;
        len -= (size_t)put;
    }
    return 0;
}

/* The permissions a plain fopen would give: 0666 less the umask (mkstemp makes 0600). */
static mode_t default_mode(void) {
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

int ri_write_file_atomic(const char *path, const uint8_t *data, size_t len,
                         char *why, size_t why_cap) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        snprintf(why, why_cap, "not a file name");
        return RI_EXIT_INPUT;
    }
    /* The directory part, kept with its slash so "/x" gives "/". */
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    char *dir = malloc(dir_len + 2);
    char *tmp = malloc(dir_len + strlen(base) + 16);
    if (!dir || !tmp) {
        free(dir);
        free(tmp);
        snprintf(why, why_cap, "out of memory");
        return RI_EXIT_INTERNAL;
    }
    if (dir_len > 0) {
        memcpy(dir, path, dir_len);
        dir[dir_len] = '\0';
    } else {
        strcpy(dir, ".");
    }
    sprintf(tmp, "%.*s.%s.XXXXXX", (int)dir_len, path, base);

    int rc = RI_EXIT_INPUT;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_cap, "cannot create a temporary file in %s: %s", dir, strerror(errno));
        goto out;
    }
    const char *step = NULL;
    ri_progress *progress = progress_of("writing", path, len);
    if (fchmod(fd, default_mode()) != 0) step = "chmod";
    else if (write_all(fd, data, len, progress) != 0) step = "write";
    else if (fsync(fd) != 0) step = "fsync";
    int saved = errno;
    ri_progress_finish(progress);
    if (close(fd) != 0 && !step) {
        step = "close";
        saved = errno;
    }
    if (!step && rename(tmp, path) != 0) {
        step = "rename";
        saved = errno;
    }
    if (step) {
        unlink(tmp);
        snprintf(why, why_cap, "%s: %s", step, strerror(saved));
        goto out;
    }
    /* The rename is durable once the directory is on disk too. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        if (fsync(dfd) != 0 && errno != EINVAL) {
            snprintf(why, why_cap, "fsync of %s: %s", dir, strerror(errno));
            close(dfd);
            goto out;
        }
        close(dfd);
    }
    rc = RI_EXIT_OK;
out:
    free(dir);
    free(tmp);
    return rc;
}

/* WebAssembly text starts, after white space, with a comment or "(module" (or any
 * s-expression); a binary module starts with "\0asm". */
static bool looks_like_wat(const uint8_t *d, size_t n) {
    size_t i = 0;
    while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')) i++;
    if (i == n) return false;
    return d[i] == '(' || (d[i] == ';' && i + 1 < n && d[i + 1] == ';');
}

int ri_read_module(const char *path, uint8_t **data, size_t *len, char *why, size_t why_cap) {
    int rc = ri_read_file(path, RI_MODULE_FILE_MAX, data, len, why, why_cap);
    if (rc != RI_EXIT_OK) return rc;
    if (looks_like_wat(*data, *len)) {
        free(*data);
        *data = NULL;
        *len = 0;
        snprintf(why, why_cap,
                 "it is WebAssembly text, not a binary module: compile it first, e.g. `wat2wasm %s -o module.wasm` "
                 "(wat2wasm is in the wabt package)", path);
        return RI_EXIT_INPUT;
    }
    return RI_EXIT_OK;
}
