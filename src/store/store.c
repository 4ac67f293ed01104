/*
 * The store's directory and its operations on snapshots: open (and create), put (the
 * commit protocol), get, list, delete, rename. docs/STORE.md states the protocol and
 * the invariants it keeps; the numbers in the comments (I1...) are theirs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "store_internal.h"

/* ---- open and create ------------------------------------------------------------------------ */

const char *ri_snapstore_dir(const ri_snapstore *st) { return st ? st->dir : ""; }

void ri_snapstore_close(ri_snapstore *st) {
    if (!st) return;
    if (st->dirfd >= 0) close(st->dirfd);
    if (st->blobs_fd >= 0) close(st->blobs_fd);
    if (st->snaps_fd >= 0) close(st->snaps_fd);
    ZSTD_freeCCtx(st->cctx);
    ZSTD_freeDCtx(st->dctx);
    ri_buf_free(&st->scratch);
    free(st->dir);
    free(st);
}

/* What an empty store may hold: a crashed creation leaves some of these. */
static bool creation_leftover(const char *name) {
    return strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "lock") == 0 ||
           strcmp(name, "blobs.lock") == 0 ||
           strcmp(name, "blobs") == 0 || strcmp(name, "snapshots") == 0 || ss_is_temp(name);
}

static bool is_empty_for_store(int dirfd, bool *empty, ri_snapstore_error *err) {
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return ss_fail_errno(err, errno, "Cannot list the store directory");
    }
    *empty = true;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (!creation_leftover(e->d_name)) *empty = false;
    closedir(d);
    return true;
}

static bool make_dir(int dirfd, const char *path, ri_snapstore_error *err) {
    if (mkdirat(dirfd, path, 0755) != 0 && errno != EEXIST)
        return ss_fail_errno(err, errno, "Cannot create the store directory %s", path);
    return true;
}

/* Directories first (each made durable in its parent), store.json last: a directory is
 * a store exactly when store.json exists, and then everything it needs exists too. */
static bool initialise(ri_snapstore *st, ri_snapstore_error *err) {
    if (!make_dir(st->dirfd, "blobs", err) || !make_dir(st->dirfd, "snapshots", err)) return false;
    int blobs = ss_open_dir(st->dirfd, "blobs");
    if (blobs < 0) return ss_fail_errno(err, errno, "Cannot open %s/blobs", st->dir);
    bool ok = true;
    for (unsigned i = 0; ok && i < 256; i++) {
        char fanout[3];
        snprintf(fanout, sizeof fanout, "%02x", i);
        ok = make_dir(blobs, fanout, err);
    }
    if (ok) ok = ss_fsync_dir(blobs, "blobs", err);
    close(blobs);
    if (ok) ok = ss_fsync_dir(st->dirfd, "of the store", err);
    ss_config cfg = {0};
    if (ok) ok = ss_config_write(st->dirfd, &cfg, err);
    return ok;
}

static bool create_store(ri_snapstore *st, ri_snapstore_error *err) {
    /* Checked before the lock too: the lock file must not be left in a directory that
     * will not become a store. */
    bool empty;
    if (!is_empty_for_store(st->dirfd, &empty, err)) return false;
    if (!empty)
        return ss_fail(err, RI_SNAPSTORE_ERR_NOT_STORE,
                       "%s is not a snapshot store (no store.json) and is not empty: refusing to make it one", st->dir);
    int lock = ss_lock(st, SS_LOCK_EXCLUSIVE, NULL, err);
    if (lock < 0) return false;
    struct stat sb;
    bool ok = true;
    if (fstatat(st->dirfd, "store.json", &sb, 0) != 0) { /* another process may have just made it */
        ok = is_empty_for_store(st->dirfd, &empty, err);
        if (ok && !empty)
            ok = ss_fail(err, RI_SNAPSTORE_ERR_NOT_STORE,
                         "%s is not a snapshot store (no store.json) and is not empty: refusing to make it one",
                         st->dir);
        if (ok) ok = initialise(st, err);
    }
    ss_unlock(lock);
    return ok;
}

static int open_or_make_dir(const char *dir, bool create, ri_snapstore_error *err) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT || !create) {
        if (fd < 0) {
            if (errno == ENOENT)
                ss_fail(err, RI_SNAPSTORE_ERR_NOT_STORE, "%s does not exist (pass create to make a store there)",
                        dir);
            else ss_fail_errno(err, errno, "Cannot open the store directory %s", dir);
        }
        return fd;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        ss_fail_errno(err, errno, "Cannot create the store directory %s", dir);
        return -1;
    }
    /* The new directory's entry must be durable in its parent. */
    char *copy = strdup(dir);
    if (!copy) {
        ss_nomem(err);
        return -1;
    }
    int parent = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (parent >= 0) {
        fsync(parent);
        close(parent);
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) ss_fail_errno(err, errno, "Cannot open the store directory %s", dir);
    return fd;
}

ri_snapstore *ri_snapstore_open(const char *dir, const ri_snapstore_options *opts, ri_snapstore_error *err) {
    ss_ok(err);
    if (!dir || !dir[0]) {
        ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_open: no directory given");
        return NULL;
    }
    bool create = opts && opts->create;
    ri_snapstore *st = calloc(1, sizeof *st);
    if (!st || !(st->dir = strdup(dir))) {
        free(st);
        ss_nomem(err);
        return NULL;
    }
    st->blobs_fd = st->snaps_fd = -1;
    st->dirfd = open_or_make_dir(dir, create, err);
    bool ok = st->dirfd >= 0;
    struct stat sb;
    if (ok && create && fstatat(st->dirfd, "store.json", &sb, 0) != 0) ok = create_store(st, err);
    ss_config cfg;
    if (ok) ok = ss_config_read(st, &cfg, err);
    if (ok) {
        st->blobs_fd = ss_open_dir(st->dirfd, "blobs");
        st->snaps_fd = ss_open_dir(st->dirfd, "snapshots");
        if (st->blobs_fd < 0 || st->snaps_fd < 0)
            ok = ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: %s lacks its blobs or snapshots directory",
                         dir);
    }
    if (!ok) {
        ri_snapstore_close(st);
        return NULL;
    }
    return st;
}

/* ---- put: the commit ---------------------------------------------------------------------------- */

static bool check_put_args(const char *name, const ri_snapstore_put_options *o, ri_snapstore_error *err) {
    if (!ri_snapstore_name_valid(name, err)) return false;
    if (o->description && !ss_description_valid(o->description, err)) return false;
    if (!ss_tags_valid(o->tags, o->ntags, err)) return false;
    if (o->origin_sandbox && !ri_snapstore_origin_valid(o->origin_sandbox, err)) {
        ss_error_prefix(err, "Invalid origin sandbox: ");
        return false;
    }
    if (o->origin_session && !ri_snapstore_origin_valid(o->origin_session, err)) {
        ss_error_prefix(err, "Invalid session: ");
        return false;
    }
    return true;
}

/* The metadata a put records: the options first, then what an import brought. */
static bool fill_info(ri_snapstore_info *info, const char *name, const ri_snapstore_put_options *o,
                      const ri_snapstore_info *from, ri_snapstore_error *err) {
    snprintf(info->name, sizeof info->name, "%s", name);
    if (!ss_random_hex(info->id, RI_SNAPSTORE_ID_HEX / 2, err)) return false;
    info->created_ns = o->created_ns ? o->created_ns : from ? from->created_ns : ri_clock_wall_ns();
    const char *description = o->description ? o->description : from ? from->description : NULL;
    bool own_tags = o->ntags || !from;
    if (!ss_info_set_text(info, description, own_tags ? o->tags : (const char *const *)from->tags,
                          own_tags ? o->ntags : from->ntags, err))
        return false;
    const char *sandbox = o->origin_sandbox ? o->origin_sandbox : from ? from->origin_sandbox : "";
    const char *session = o->origin_session ? o->origin_session : from ? from->origin_session : "";
    snprintf(info->origin_sandbox, sizeof info->origin_sandbox, "%s", sandbox);
    snprintf(info->origin_session, sizeof info->origin_session, "%s", session);
    return true;
}

/* I3: the manifest is written whole to a temporary file and fsync'd; the rename is the
 * commit point; the directory fsync makes it durable. */
static bool commit_manifest(ri_snapstore *st, const ss_manifest *m, bool replace, const ri_snapstore_abort *abort,
                            uint64_t *bytes, ri_snapstore_error *err) {
    ri_buf file;
    if (!ss_manifest_encode(m, &file, err)) return false;
    char tmp[64];
    bool ok = ss_write_temp(st->snaps_fd, file.data, file.len, abort, tmp, err);
    *bytes = file.len;
    ri_buf_free(&file);
    if (!ok) return false;
    if (ss_aborted(abort)) {
        unlinkat(st->snaps_fd, tmp, 0);
        return ss_fail(err, RI_SNAPSTORE_ERR_ABORTED,
                       "Aborted while saving '%s': no snapshot was written (its blobs are collected by gc)",
                       m->info.name);
    }
    char final[RI_SNAPSTORE_NAME_MAX + 8];
    ss_manifest_file(m->info.name, final, sizeof final);
    int e = ss_rename(st->snaps_fd, tmp, final, !replace);
    if (e) {
        unlinkat(st->snaps_fd, tmp, 0);
        if (e == EEXIST)
            return ss_fail(err, RI_SNAPSTORE_ERR_EXISTS, "Snapshot already exists: %s", m->info.name);
        return ss_fail_errno(err, e, "Cannot commit snapshot '%s'", m->info.name);
    }
    return ss_fsync_dir(st->snaps_fd, "snapshots", err);
}

/* After a save, with a cap: the cheap usage walk first; the collection (which reads
 * every manifest) only when the store is over the cap. */
static void enforce_cap(ri_snapstore *st, const char *name, ri_snapstore_put_stats *stats) {
    ri_snapstore_error e;
    ss_config cfg;
    if (!ss_config_read(st, &cfg, &e) || !cfg.max_bytes) return;
    ri_snapstore_usage u;
    if (ri_snapstore_usage_of(st, &u, &e) && u.total_bytes <= cfg.max_bytes) return;
    int lock = ss_lock(st, SS_LOCK_EXCLUSIVE, NULL, &e);
    ri_snapstore_gc_stats gc;
    memset(&gc, 0, sizeof gc);
    bool ok = lock >= 0 && ss_collect(st, cfg.max_bytes, name, &gc, &e);
    ss_unlock(lock);
    stats->evicted = gc.evicted;
    if (!ok) snprintf(stats->warning, sizeof stats->warning, "saved, but the size cap was not enforced: %.200s", e.message);
}

bool ss_put(ri_snapstore *st, const char *name, const uint8_t *image, size_t len, const ri_snapstore_put_options *o,
            const ri_snapstore_info *meta_from, ri_snapstore_info *info, ri_snapstore_put_stats *stats,
            ri_snapstore_error *err) {
    ri_snapstore_put_stats scratch;
    if (!stats) stats = &scratch;
    memset(stats, 0, sizeof *stats);
    if (!check_put_args(name, o, err)) return false;
    if (!image) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_put: image is NULL");
    if (!ss_abort_at_start(o->abort, err)) return false;
    int lock = ss_lock(st, SS_LOCK_SHARED, o->abort, err);
    if (lock < 0) return false;
    ss_manifest m;
    ss_ingest in = {o->module, o->module_len, o->cache, o->abort, meta_from};
    /* I2: every blob the manifest names is durable before the manifest is written. */
    bool ok = ss_ingest_image(st, image, len, &in, &m, stats, err);
    if (ok) {
        ok = fill_info(&m.info, name, o, meta_from, err);
        ss_manifest_derive(&m);
    }
    uint64_t manifest_bytes = 0;
    if (ok) ok = commit_manifest(st, &m, o->replace, o->abort, &manifest_bytes, err);
    ss_unlock(lock);
    if (ok) {
        stats->bytes_written += manifest_bytes;
        m.info.manifest_bytes = manifest_bytes;
        if (info && !ss_info_copy(info, &m.info)) memset(info, 0, sizeof *info);
    }
    ss_manifest_free(&m);
    if (ok) enforce_cap(st, name, stats);
    return ok;
}

bool ri_snapstore_put(ri_snapstore *st, const char *name, const uint8_t *image, size_t len,
                      const ri_snapstore_put_options *opts, ri_snapstore_info *info, ri_snapstore_put_stats *stats,
                      ri_snapstore_error *err) {
    ss_ok(err);
    if (info) memset(info, 0, sizeof *info);
    if (!st) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_put: store is NULL");
    ri_snapstore_put_options defaults;
    memset(&defaults, 0, sizeof defaults);
    return ss_put(st, name, image, len, opts ? opts : &defaults, NULL, info, stats, err);
}

/* ---- reading --------------------------------------------------------------------------------------- */

bool ss_get_image_locked(ri_snapstore *st, const char *name, const ri_snapstore_image_options *o, bool cache_update,
                         uint8_t **out, size_t *out_len, ri_snapstore_info *info, ri_snapstore_error *err) {
    ss_manifest m;
    if (!ss_manifest_load(st, name, &m, err)) return false;
    char *rimd = NULL;
    bool ok = true;
    if (o->include_metadata) {
        rimd = ss_meta_json(&m.info, true);
        if (!rimd) ok = ss_nomem(err);
    }
    ri_buf image;
    if (ok) ok = ss_assemble(st, &m, o, rimd, cache_update ? o->cache : NULL, &image, err);
    free(rimd);
    if (ok) {
        *out = image.data;
        *out_len = image.len;
        if (info && !ss_info_copy(info, &m.info)) memset(info, 0, sizeof *info);
    }
    ss_manifest_free(&m);
    return ok;
}

bool ri_snapstore_get_image(ri_snapstore *st, const char *name, const ri_snapstore_image_options *opts,
                            uint8_t **out, size_t *out_len, ri_snapstore_info *info, ri_snapstore_error *err) {
    ss_ok(err);
    if (info) memset(info, 0, sizeof *info);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!st || !out || !out_len) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_get_image: a NULL argument");
    if (!ri_snapstore_name_valid(name, err)) return false;
    ri_snapstore_image_options defaults;
    memset(&defaults, 0, sizeof defaults);
    if (!opts) opts = &defaults;
    if (!ss_abort_at_start(opts->abort, err)) return false;
    /* Shared: no collection may remove a blob while it is read (I5). */
    int lock = ss_lock(st, SS_LOCK_SHARED, opts->abort, err);
    if (lock < 0) return false;
    bool ok = ss_get_image_locked(st, name, opts, false, out, out_len, info, err);
    ss_unlock(lock);
    if (!ok) return false;
    /* Checked as any reader would before handing it out: a manifest whose digest holds
     * but whose state was forged is refused here, not by whoever receives the bytes. */
    ri_snap_image img;
    ri_snap_error e;
    if (!ri_snap_read(*out, *out_len, &img, &e)) {
        free(*out);
        *out = NULL;
        *out_len = 0;
        if (info) ri_snapstore_info_free(info);
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: snapshot '%s' does not make a valid image: %s",
                       name, e.message);
    }
    ri_snap_image_free(&img);
    return true;
}

bool ri_snapstore_get_info(ri_snapstore *st, const char *name, ri_snapstore_info *info, ri_snapstore_error *err) {
    ss_ok(err);
    if (info) memset(info, 0, sizeof *info);
    if (!st || !info) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_get_info: a NULL argument");
    if (!ri_snapstore_name_valid(name, err)) return false;
    /* A manifest is one file replaced by rename: no lock is needed to read it whole. */
    ss_manifest m;
    if (!ss_manifest_load(st, name, &m, err)) return false;
    *info = m.info;
    memset(&m.info, 0, sizeof m.info); /* moved */
    ss_manifest_free(&m);
    return true;
}

bool ri_snapstore_exists(ri_snapstore *st, const char *name, bool *exists, ri_snapstore_error *err) {
    ss_ok(err);
    if (exists) *exists = false;
    if (!st || !exists) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_exists: a NULL argument");
    if (!ri_snapstore_name_valid(name, err)) return false;
    char file[RI_SNAPSTORE_NAME_MAX + 8];
    ss_manifest_file(name, file, sizeof file);
    struct stat sb;
    if (fstatat(st->snaps_fd, file, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        *exists = S_ISREG(sb.st_mode);
        return true;
    }
    if (errno == ENOENT) return true;
    return ss_fail_errno(err, errno, "Cannot look for snapshot '%s'", name);
}

/* ---- listing ---------------------------------------------------------------------------------------- */

void ss_free_names(char **names, size_t n) {
    for (size_t i = 0; names && i < n; i++) free(names[i]);
    free(names);
}

bool ss_list_names(ri_snapstore *st, char ***names, size_t *n, ri_snapstore_error *err) {
    *names = NULL;
    *n = 0;
    int fd = openat(st->snaps_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return ss_fail_errno(err, errno, "Cannot list %s/snapshots", st->dir);
    }
    size_t cap = 0, count = 0;
    char **list = NULL;
    bool ok = true;
    struct dirent *e;
    size_t ext = strlen(SS_MANIFEST_EXT);
    while (ok && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        /* I4: temporary files are never snapshots. */
        if (ss_is_temp(e->d_name) || len <= ext || strcmp(e->d_name + len - ext, SS_MANIFEST_EXT) != 0) continue;
        char name[RI_SNAPSTORE_NAME_MAX + 8];
        if (len - ext > RI_SNAPSTORE_NAME_MAX) continue;
        memcpy(name, e->d_name, len - ext);
        name[len - ext] = '\0';
        if (!ri_snapstore_name_valid(name, NULL)) continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **grown = realloc(list, ncap * sizeof *grown);
            if (!grown) {
                ok = ss_nomem(err);
                break;
            }
            list = grown;
            cap = ncap;
        }
        if (!(list[count] = strdup(name))) ok = ss_nomem(err);
        else count++;
    }
    closedir(d);
    if (!ok) {
        ss_free_names(list, count);
        return false;
    }
    *names = list;
    *n = count;
    return true;
}

static int newest_first(const void *a, const void *b) {
    const ri_snapstore_info *x = a, *y = b;
    if (x->created_ns != y->created_ns) return x->created_ns > y->created_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int oldest_first(const void *a, const void *b) {
    const ri_snapstore_info *x = a, *y = b;
    if (x->created_ns != y->created_ns) return x->created_ns < y->created_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

bool ri_snapstore_list(ri_snapstore *st, const ri_snapstore_list_options *opts, ri_snapstore_info **out,
                       size_t *n, ri_snapstore_error *err) {
    SS_ERR_SCRATCH(err);
    ss_ok(err);
    if (out) *out = NULL;
    if (n) *n = 0;
    if (!st || !out || !n) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_list: a NULL argument");
    ri_snapstore_list_options defaults;
    memset(&defaults, 0, sizeof defaults);
    if (!opts) opts = &defaults;
    char **names;
    size_t count;
    if (!ss_list_names(st, &names, &count, err)) return false;
    ri_snapstore_info *list = calloc(count ? count : 1, sizeof *list);
    if (!list) {
        ss_free_names(names, count);
        return ss_nomem(err);
    }
    size_t kept = 0;
    bool ok = true;
    for (size_t i = 0; ok && i < count; i++) {
        ri_snapstore_info info;
        if (!ss_manifest_load_head(st, names[i], &info, err)) {
            if (err && err->code == RI_SNAPSTORE_ERR_NOT_FOUND) continue; /* deleted meanwhile */
            if (err && err->code == RI_SNAPSTORE_ERR_CORRUPT)
                ss_error_prefix(err, "Cannot list (delete the damaged snapshot to go on): ");
            ok = false;
            break;
        }
        if (opts->origin_session && strcmp(info.origin_session, opts->origin_session) != 0) {
            ri_snapstore_info_free(&info);
            continue;
        }
        list[kept++] = info;
    }
    ss_free_names(names, count);
    if (!ok) {
        ri_snapstore_list_free(list, kept);
        return false;
    }
    qsort(list, kept, sizeof *list, opts->oldest_first ? oldest_first : newest_first);
    if (opts->limit && kept > opts->limit) {
        for (size_t i = opts->limit; i < kept; i++) ri_snapstore_info_free(&list[i]);
        kept = opts->limit;
    }
    ss_ok(err);
    *out = list;
    *n = kept;
    return true;
}

/* ---- delete and rename -------------------------------------------------------------------------------- */

bool ri_snapstore_delete(ri_snapstore *st, const char *name, bool *existed, ri_snapstore_error *err) {
    ss_ok(err);
    if (existed) *existed = false;
    if (!st) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_delete: store is NULL");
    if (!ri_snapstore_name_valid(name, err)) return false;
    char file[RI_SNAPSTORE_NAME_MAX + 8];
    ss_manifest_file(name, file, sizeof file);
    /* One unlink: the snapshot is there or it is not. Its blobs stay until gc. */
    if (unlinkat(st->snaps_fd, file, 0) != 0) {
        if (errno == ENOENT) return true;
        return ss_fail_errno(err, errno, "Cannot delete snapshot '%s'", name);
    }
    if (existed) *existed = true;
    return ss_fsync_dir(st->snaps_fd, "snapshots", err);
}

bool ri_snapstore_rename(ri_snapstore *st, const char *from, const char *to, ri_snapstore_error *err) {
    ss_ok(err);
    if (!st) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_rename: store is NULL");
    if (!ri_snapstore_name_valid(from, err) || !ri_snapstore_name_valid(to, err)) return false;
    char a[RI_SNAPSTORE_NAME_MAX + 8], b[RI_SNAPSTORE_NAME_MAX + 8];
    ss_manifest_file(from, a, sizeof a);
    ss_manifest_file(to, b, sizeof b);
    if (strcmp(from, to) == 0) {
        bool exists;
        if (!ri_snapstore_exists(st, from, &exists, err)) return false;
        return exists ? true : ss_not_found(err, from);
    }
    /* The name is the file name (the manifest does not hold it): one atomic rename.
     * Under the shared lock: a collection lists the manifests once, and must not miss
     * one that moves between its directory read and its open (I5). */
    int lock = ss_lock(st, SS_LOCK_SHARED, NULL, err);
    if (lock < 0) return false;
    int e = ss_rename(st->snaps_fd, a, b, true);
    ss_unlock(lock);
    if (e == ENOENT) return ss_not_found(err, from);
    if (e == EEXIST) return ss_fail(err, RI_SNAPSTORE_ERR_EXISTS, "Snapshot already exists: %s", to);
    if (e) return ss_fail_errno(err, e, "Cannot rename snapshot '%s' to '%s'", from, to);
    return ss_fsync_dir(st->snaps_fd, "snapshots", err);
}
