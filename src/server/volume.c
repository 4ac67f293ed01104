/* The checkpoint volume in seed 002's layout:
 *   ROOT/{id}/checkpoints/checkpoint_{ms}.img, ROOT/{id}/checkpoints/latest, ROOT/{id}/metadata.json
 * Every write is atomic (temporary file, fsync, rename, fsync of the directory), the image
 * is renamed before `latest` names it, and old images go only after that. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server_internal.h"

#define MAX_IMAGE_BYTES ((size_t)8 << 30)

static bool fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = fsync(fd) == 0;
    close(fd);
    return ok;
}

bool srv_mkdirs(const char *path, char *why, size_t cap) {
    char buf[1024];
    if (strlen(path) >= sizeof buf) return snprintf(why, cap, "path too long: %s", path), false;
    strcpy(buf, path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return snprintf(why, cap, "cannot create %s: %s", buf, strerror(errno)), false;
            if (c == 0) break;
            *p = c;
        }
    }
    return true;
}

bool srv_write_atomic(const char *dir, const char *name, const void *data, size_t len, char *why, size_t cap) {
    return srv_replace_file(dir, name, data, len, true, why, cap);
}


/* A file written under a temporary name in its directory, waiting to be renamed into
 * place (commit_file) or dropped (unlink(tmp)). */
typedef struct staged {
    char tmp[1024], final[1024];
} staged;

/* Writes data to a new temporary file next to dir/name. fd_out NULL: closes it, after an
 * fsync if sync_file; else the file is left open and unsynced for the caller (sync_file
 * must be false: the caller syncs). */
static bool stage_file(const char *dir, const char *name, const void *data, size_t len, bool sync_file, int *fd_out,
                       staged *st, char *why, size_t cap) {
    if ((size_t)snprintf(st->tmp, sizeof st->tmp, "%s/.tmp-%s-XXXXXX", dir, name) >= sizeof st->tmp ||
        (size_t)snprintf(st->final, sizeof st->final, "%s/%s", dir, name) >= sizeof st->final)
        return snprintf(why, cap, "path too long"), false;
    int fd = mkostemp(st->tmp, O_CLOEXEC);
    if (fd < 0) return snprintf(why, cap, "cannot create a file in %s: %s", dir, strerror(errno)), false;
    const uint8_t *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(why, cap, "cannot write %s: %s", st->final, w < 0 ? strerror(errno) : "short write");
            close(fd);
            unlink(st->tmp);
            return false;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fd_out) {
        *fd_out = fd;
        return true;
    }
    if (sync_file && fsync(fd) != 0) {
        snprintf(why, cap, "cannot fsync %s: %s", st->final, strerror(errno));
        close(fd);
        unlink(st->tmp);
        return false;
    }
    close(fd);
    return true;
}

/* Renames a staged file into place; sync_dir: fsync the directory after. */
static bool commit_file(const char *dir, staged *st, bool sync_dir, char *why, size_t cap) {
    if (rename(st->tmp, st->final) != 0) {
        snprintf(why, cap, "cannot rename into %s: %s", st->final, strerror(errno));
        unlink(st->tmp);
        return false;
    }
    if (sync_dir && !fsync_dir(dir)) return snprintf(why, cap, "cannot fsync %s: %s", dir, strerror(errno)), false;
    return true;
}

bool srv_replace_file(const char *dir, const char *name, const void *data, size_t len, bool durable, char *why,
                      size_t cap) {
    staged st;
    return stage_file(dir, name, data, len, durable, NULL, &st, why, cap) && commit_file(dir, &st, durable, why, cap);
}

bool srv_read_file(const char *path, size_t max, uint8_t **out, size_t *out_len, int *err_no) {
    *err_no = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return *err_no = errno, false;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        *err_no = EFBIG;
        close(fd);
        return false;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return *err_no = ENOMEM, false;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(buf);
        return *err_no = EIO, false;
    }
    buf[n] = 0;
    *out = buf;
    *out_len = n;
    return true;
}

/* checkpoint_{ms}.img (volume leases) or checkpoint_{fence}_{ms}.img (etcd: the owner's
 * fencing token, so that a server that lost the sandbox never writes over a name the new
 * owner uses); both numbers of at most 19 digits. */
static bool ckpt_name_parse(const char *s, size_t n, uint64_t *fence, uint64_t *ms) {
    if (n < 16 || n > 54 || memcmp(s, "checkpoint_", 11) != 0 || memcmp(s + n - 4, ".img", 4) != 0) return false;
    uint64_t num[2] = {0, 0};
    size_t k = 0, digits = 0;
    for (size_t i = 11; i < n - 4; i++) {
        if (s[i] == '_' && k == 0 && digits > 0) {
            k = 1;
            digits = 0;
        } else if (s[i] >= '0' && s[i] <= '9' && digits < 19) {
            num[k] = num[k] * 10 + (uint64_t)(s[i] - '0');
            digits++;
        } else {
            return false;
        }
    }
    if (digits == 0) return false;
    *fence = k ? num[0] : 0;
    *ms = k ? num[1] : num[0];
    return true;
}

static bool ckpt_name_valid(const char *s, size_t n) {
    uint64_t f, m;
    return ckpt_name_parse(s, n, &f, &m);
}

/* Name order: -1, 0, 1 as a is older than, the same as, newer than b: by fencing token (a
 * later owner's images are newer whatever the machines' clocks say), then by time. */
static int name_cmp(const char *a, const char *b) {
    uint64_t fa = 0, ma = 0, fb = 0, mb = 0;
    ckpt_name_parse(a, strlen(a), &fa, &ma);
    ckpt_name_parse(b, strlen(b), &fb, &mb);
    if (fa != fb) return fa < fb ? -1 : 1;
    if (ma != mb) return ma < mb ? -1 : 1;
    int c = strcmp(a, b);
    return c < 0 ? -1 : c > 0;
}

/* The images in dir, oldest first (name_cmp). */
static char **list_images(const char *dir, size_t *count) {
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (!ckpt_name_valid(e->d_name, l)) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        char *copy = strdup(e->d_name);
        if (copy) names[n++] = copy;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            if (name_cmp(names[j - 1], names[j]) > 0) {
                char *t = names[j - 1];
                names[j - 1] = names[j];
                names[j] = t;
            } else
                break;
        }
    *count = n;
    return names;
}

static void free_names(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}


/* Whether dir/name is a delta image (section PRNT). PRNT sits just before the checksum
 * trailer, so the tail tells; a full image whose tail happens to read "PRNT" is told
 * apart by reading it whole (ri_snap_is_delta checks the sections and the checksum). */
static bool image_is_delta(const char *dir, const char *name, uint64_t *size) {
    char path[2100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    const size_t tail = RI_SNAP_SECTION_HEADER_BYTES + RI_SNAP_PARENT_BYTES + RI_SNAP_TRAILER_BYTES;
    uint8_t tag[4];
    bool delta = false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size > tail &&
        (uint64_t)st.st_size <= MAX_IMAGE_BYTES && pread(fd, tag, 4, st.st_size - (off_t)tail) == 4 &&
        memcmp(tag, "PRNT", 4) == 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            delta = ri_snap_is_delta(m, (size_t)st.st_size, NULL);
            munmap(m, (size_t)st.st_size);
        }
    }
    if (size) *size = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    close(fd);
    return delta;
}

/* Old images beyond `keep`, oldest first, except the full image each kept delta is built
 * on: the newest full image older than it (a delta's parent is always the full image
 * that was the newest when the delta was written: docs/SERVER.md). */
void srv_volume_prune(const char *root, const char *id, const char *newest, uint32_t keep) {
    if (!srv_id_valid(id)) return;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s/checkpoints", root, id);
    size_t n;
    char **names = list_images(dir, &n);
    if (!names) return;
    if (keep == 0) keep = 1;
    size_t drop = n > keep ? n - keep : 0;
    bool *protect = calloc(n ? n : 1, sizeof *protect);
    if (!protect) {
        free_names(names, n);
        return;
    }
    /* walk from the newest: a kept delta makes the next full image below it needed */
    bool need_full = false;
    for (size_t k = n; k-- > 0;) {
        if (k >= drop) protect[k] = true;
        if (image_is_delta(dir, names[k], NULL)) {
            if (k >= drop) need_full = true;
        } else {
            if (need_full) protect[k] = true;
            need_full = false;
        }
    }
    for (size_t i = 0; i < drop; i++) {
        if (protect[i] || strcmp(names[i], newest) == 0) continue;
        char p[2100];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    free(protect);
    free_names(names, n);
    /* no fsync of the directory: an old image that comes back after a crash is harmless
     * (the next checkpoint prunes it), and a checkpoint is one sync cheaper */
}

char **srv_volume_parent_candidates(const char *root, const char *id, const char *delta_name, uint64_t parent_len,
                                    size_t *count) {
    *count = 0;
    if (!srv_id_valid(id)) return NULL;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s/checkpoints", root, id);
    size_t n;
    char **names = list_images(dir, &n);
    if (!names) return NULL;
    char **out = calloc(n ? n : 1, sizeof *out);
    size_t m = 0;
    for (size_t k = n; out && k-- > 0;) { /* newest first */
        uint64_t size = 0;
        if (name_cmp(names[k], delta_name) < 0 && !image_is_delta(dir, names[k], &size) && size == parent_len) {
            out[m++] = names[k];
            names[k] = NULL;
        }
    }
    free_names(names, n);
    *count = m;
    return out;
}

void srv_volume_drop_newer(const char *root, const char *id, const char *latest_name) {
    if (!srv_id_valid(id)) return;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s/checkpoints", root, id);
    size_t n;
    char **names = list_images(dir, &n);
    bool dropped = false;
    for (size_t i = 0; i < n; i++)
        if (name_cmp(names[i], latest_name) > 0) {
            char p[2100];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]);
            dropped = unlink(p) == 0 || dropped;
        }
    free_names(names, n);
    if (dropped) fsync_dir(dir);
}

/* fsync on another thread (srv_volume_write_checkpoint). */
typedef struct sync_job {
    pthread_t thread;
    int fd, err;
} sync_job;

static void *sync_main(void *arg) {
    sync_job *j = arg;
    j->err = fsync(j->fd) == 0 ? 0 : errno;
    return NULL;
}

bool srv_volume_write_checkpoint(const char *root, const char *id, int64_t fence, const uint8_t *img, size_t len,
                                 char *file_out, size_t file_cap, char *why, size_t cap) {
    if (!srv_id_valid(id)) return snprintf(why, cap, "invalid sandbox id"), false;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s/checkpoints", root, id);
    if (!srv_mkdirs(dir, why, cap)) return false;
    int64_t ms = ri_clock_wall_ms();
    char name[64], path[1200];
    struct stat st;
    for (;; ms++) { /* never overwrite an image: two checkpoints in one ms get ms+1 */
        if (fence > 0) snprintf(name, sizeof name, "checkpoint_%lld_%lld.img", (long long)fence, (long long)ms);
        else snprintf(name, sizeof name, "checkpoint_%lld.img", (long long)ms);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (stat(path, &st) != 0) break;
    }
    /* Durability in POSIX terms: each file is fsynced before its rename, and the directory
     * after the image's rename and again after latest's (POSIX does not order two renames'
     * durability: without the first, a crash could leave latest naming an image whose
     * rename was lost). latest's own fsync runs on a second thread while the image is
     * synced and renamed: the journal commits overlap, and a checkpoint waits for three
     * syncs in a row, not four. */
    staged latest, image;
    if (fence > 0) {
        /* etcd's latest names it once the owner's fenced txn holds (the caller's commit): no
         * latest file here, which a server that lost the sandbox could move */
        bool ok = stage_file(dir, name, img, len, true, NULL, &image, why, cap) && commit_file(dir, &image, true, why, cap);
        if (ok && file_out) snprintf(file_out, file_cap, "%s", name);
        return ok;
    }
    int latest_fd = -1;
    if (!stage_file(dir, "latest", name, strlen(name), false, &latest_fd, &latest, why, cap)) return false;
    sync_job sj = {.fd = latest_fd};
    bool threaded = pthread_create(&sj.thread, NULL, sync_main, &sj) == 0;
    bool ok = stage_file(dir, name, img, len, true, NULL, &image, why, cap) && commit_file(dir, &image, true, why, cap);
    if (threaded) pthread_join(sj.thread, NULL);
    else sync_main(&sj);
    close(latest_fd);
    if (ok && sj.err) {
        snprintf(why, cap, "cannot fsync %s: %s", latest.final, strerror(sj.err));
        ok = false;
    }
    if (!ok) {
        unlink(latest.tmp);
        unlink(path); /* if it got there; latest still names the previous good image */
        return false;
    }
    if (rename(latest.tmp, latest.final) != 0) {
        snprintf(why, cap, "cannot rename into %s: %s", latest.final, strerror(errno));
        unlink(latest.tmp);
        unlink(path);
        return false;
    }
    /* latest names the new image from here on: a failure keeps both */
    if (!fsync_dir(dir)) return snprintf(why, cap, "cannot fsync %s: %s", dir, strerror(errno)), false;
    if (file_out) snprintf(file_out, file_cap, "%s", name);
    return true;
}

/* An image of the sandbox, mapped read-only (no copy of a large image): 0 ok, 2 error (why). */
int srv_volume_map_image(const char *root, const char *id, const char *name, const uint8_t **img, size_t *len,
                         char *why, size_t cap) {
    char path[1200];
    if (!srv_id_valid(id) || !ckpt_name_valid(name, strlen(name)))
        return snprintf(why, cap, "Not a checkpoint image name: %s", name), 2;
    snprintf(path, sizeof path, "%s/%s/checkpoints/%s", root, id, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > MAX_IMAGE_BYTES) {
        snprintf(why, cap, "Cannot read the checkpoint image %s: %s", path,
                 fd < 0 ? strerror(errno) : "empty, too large or not a file");
        if (fd >= 0) close(fd);
        return 2;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(why, cap, "Cannot map the checkpoint image %s: %s", path, strerror(errno));
        return 2;
    }
    *img = m;
    *len = (size_t)st.st_size;
    return 0;
}

/* The file `latest` names (its name into name_out), mapped read-only: 0 ok, 1 not found,
 * 2 damaged or unreadable (why). */
int srv_volume_map_latest(const char *root, const char *id, const uint8_t **img, size_t *len, char *name_out,
                          size_t name_cap, char *why, size_t cap) {
    if (!srv_id_valid(id)) return 1;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/checkpoints/latest", root, id);
    uint8_t *latest;
    size_t n;
    int e;
    if (!srv_read_file(path, 256, &latest, &n, &e)) {
        if (e == ENOENT) return 1;
        snprintf(why, cap, "Cannot read %s: %s", path, strerror(e));
        return 2;
    }
    while (n > 0 && (latest[n - 1] == '\n' || latest[n - 1] == '\r' || latest[n - 1] == ' ')) n--;
    latest[n] = 0;
    if (!ckpt_name_valid((const char *)latest, n)) {
        snprintf(why, cap, "Corrupted checkpoint: the latest file does not name a checkpoint image.");
        free(latest);
        return 2;
    }
    if (name_out) snprintf(name_out, name_cap, "%s", (const char *)latest);
    int r = srv_volume_map_image(root, id, (const char *)latest, img, len, why, cap);
    free(latest);
    return r;
}

void srv_unmap(const uint8_t *img, size_t len) {
    if (img) munmap((void *)img, len);
}

bool srv_volume_write_metadata(const char *root, const char *id, json_t *meta, char *why, size_t cap) {
    if (!srv_id_valid(id)) return snprintf(why, cap, "invalid sandbox id"), false;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", root, id);
    if (!srv_mkdirs(dir, why, cap)) return false;
    char *text = json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text) return snprintf(why, cap, "out of memory"), false;
    bool ok = srv_write_atomic(dir, "metadata.json", text, strlen(text), why, cap);
    free(text);
    return ok;
}

int srv_volume_read_metadata(const char *root, const char *id, json_t **meta, char *why, size_t cap) {
    if (!srv_id_valid(id)) return 1;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/metadata.json", root, id);
    uint8_t *data;
    size_t n;
    int e;
    if (!srv_read_file(path, 1 << 20, &data, &n, &e)) {
        if (e == ENOENT) return 1;
        snprintf(why, cap, "Cannot read the metadata: %s", strerror(e));
        return 2;
    }
    json_error_t jerr;
    json_t *j = json_loadb((const char *)data, n, JSON_REJECT_DUPLICATES, &jerr);
    free(data);
    if (!j || !json_is_object(j) || !json_is_string(json_object_get(j, "token_sha256"))) {
        json_decref(j);
        snprintf(why, cap, "Corrupted metadata.json.");
        return 2;
    }
    *meta = j;
    return 0;
}

bool srv_remove_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT;
    if (!S_ISDIR(st.st_mode)) return unlink(path) == 0;
    DIR *d = opendir(path);
    if (!d) return false;
    struct dirent *e;
    bool ok = true;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        ok = srv_remove_tree(p) && ok;
    }
    closedir(d);
    return rmdir(path) == 0 && ok;
}

bool srv_volume_remove(const char *root, const char *id) {
    if (!srv_id_valid(id)) return false;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", root, id);
    bool ok = srv_remove_tree(dir);
    fsync_dir(root);
    return ok;
}
