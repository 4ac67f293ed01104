/*
 * Garbage collection, size accounting, the size cap and verification.
 *
 * Collection is mark and sweep under the exclusive lock (I5): no save can then be
 * between writing its blobs and committing its manifest, so a blob no manifest names
 * is garbage. Mark reads every manifest whole (a damaged one stops the collection: its
 * blobs cannot be told from garbage); eviction removes the oldest snapshots, counting
 * exactly which blobs each removal frees, until the store fits its cap; the sweep
 * removes manifests first, then blobs (I1: no manifest ever names a missing blob).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"

/* ---- a set of blob hashes with reference counts and sizes ------------------------------------------- */

typedef struct slot {
    uint8_t hash[SS_HASH];
    bool used;
    bool on_disk;
    uint64_t refs;
    uint64_t size;
} slot;

typedef struct hset {
    slot *slots;
    size_t cap, count;           /* cap: a power of two, at most half full */
} hset;

static size_t slot_index(const hset *h, const uint8_t hash[SS_HASH]) {
    uint64_t k;
    memcpy(&k, hash, sizeof k); /* SHA-256 bytes are uniform already */
    size_t i = (size_t)k & (h->cap - 1);
    while (h->slots[i].used && memcmp(h->slots[i].hash, hash, SS_HASH) != 0) i = (i + 1) & (h->cap - 1);
    return i;
}

static slot *hset_get(hset *h, const uint8_t hash[SS_HASH], bool insert) {
    if (insert && (h->count + 1) * 2 > h->cap) {
        size_t ncap = h->cap ? h->cap * 2 : 1024;
        slot *old = h->slots;
        size_t ocap = h->cap;
        h->slots = calloc(ncap, sizeof *h->slots);
        if (!h->slots) {
            h->slots = old;
            return NULL;
        }
        h->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].used) h->slots[slot_index(h, old[i].hash)] = old[i];
        free(old);
    }
    if (!h->cap) return NULL;
    slot *s = &h->slots[slot_index(h, hash)];
    if (s->used) return s;
    if (!insert) return NULL;
    memset(s, 0, sizeof *s);
    memcpy(s->hash, hash, SS_HASH);
    s->used = true;
    h->count++;
    return s;
}

/* ---- walking the store ------------------------------------------------------------------------------ */

/* Calls fn for each entry of blobs/xx (every fan-out directory). */
typedef bool (*blob_fn)(void *user, int dirfd, const char *name, const struct stat *sb, ri_snapstore_error *err);

static bool walk_dir(int dirfd, const char *what, blob_fn fn, void *user, ri_snapstore_error *err) {
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return ss_fail_errno(err, errno, "Cannot list %s", what);
    }
    bool ok = true;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat sb;
        if (fstatat(dirfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue; /* removed meanwhile */
            ok = ss_fail_errno(err, errno, "Cannot stat %s/%s", what, e->d_name);
            break;
        }
        if (!S_ISREG(sb.st_mode)) continue;
        ok = fn(user, dirfd, e->d_name, &sb, err);
    }
    closedir(d);
    return ok;
}

static bool walk_blobs(ri_snapstore *st, blob_fn fn, void *user, ri_snapstore_error *err) {
    for (unsigned i = 0; i < 256; i++) {
        char fanout[3];
        snprintf(fanout, sizeof fanout, "%02x", i);
        int dfd = ss_open_dir(st->blobs_fd, fanout);
        if (dfd < 0) {
            if (errno == ENOENT) continue;
            return ss_fail_errno(err, errno, "Cannot open blobs/%s", fanout);
        }
        char what[16];
        snprintf(what, sizeof what, "blobs/%s", fanout);
        bool ok = walk_dir(dfd, what, fn, user, err);
        close(dfd);
        if (!ok) return false;
    }
    return true;
}

/* A blob's file name: 64 lowercase hex digits. */
static bool blob_name(const char *name, uint8_t hash[SS_HASH]) {
    return strlen(name) == SS_HEX && ri_hex_decode(name, SS_HASH, hash);
}

/* ---- usage -------------------------------------------------------------------------------------------- */

static bool count_blob(void *user, int dirfd, const char *name, const struct stat *sb, ri_snapstore_error *err) {
    (void)dirfd;
    (void)err;
    ri_snapstore_usage *u = user;
    if (ss_is_temp(name)) {
        u->temp_files++;
        return true;
    }
    uint8_t hash[SS_HASH];
    if (!blob_name(name, hash)) return true;
    u->blobs++;
    u->blob_bytes += (uint64_t)sb->st_size;
    u->disk_bytes += (uint64_t)sb->st_blocks * 512;
    return true;
}

static bool count_manifest(void *user, int dirfd, const char *name, const struct stat *sb, ri_snapstore_error *err) {
    (void)dirfd;
    (void)err;
    ri_snapstore_usage *u = user;
    size_t len = strlen(name), ext = strlen(SS_MANIFEST_EXT);
    if (ss_is_temp(name)) {
        u->temp_files++;
        return true;
    }
    if (len <= ext || strcmp(name + len - ext, SS_MANIFEST_EXT) != 0) return true;
    u->snapshots++;
    u->manifest_bytes += (uint64_t)sb->st_size;
    u->disk_bytes += (uint64_t)sb->st_blocks * 512;
    return true;
}

bool ri_snapstore_usage_of(ri_snapstore *st, ri_snapstore_usage *out, ri_snapstore_error *err) {
    ss_ok(err);
    if (!st || !out) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_usage_of: a NULL argument");
    memset(out, 0, sizeof *out);
    ss_config cfg;
    if (!ss_config_read(st, &cfg, err)) return false;
    out->max_bytes = cfg.max_bytes;
    if (!walk_blobs(st, count_blob, out, err) || !walk_dir(st->snaps_fd, "snapshots", count_manifest, out, err))
        return false;
    out->total_bytes = out->blob_bytes + out->manifest_bytes;
    return true;
}

/* ---- collection ------------------------------------------------------------------------------------------ */

typedef struct marked {
    ri_snapstore_info info;      /* name, time, manifest size */
    uint8_t *hashes;             /* every reference, in order */
    size_t nhashes;
    bool evict;
} marked;

typedef struct collector {
    ri_snapstore *st;
    hset set;
    marked *snaps;
    size_t nsnaps;
    uint64_t total;              /* bytes of blobs and manifests that stay */
    ri_snapstore_gc_stats *stats;
} collector;

typedef struct hash_list {
    ri_buf buf;
} hash_list;

static bool add_hash(void *user, const uint8_t hash[SS_HASH], uint64_t size) {
    (void)size;
    ri_buf_put(&((hash_list *)user)->buf, hash, SS_HASH);
    return !((hash_list *)user)->buf.failed;
}

static bool mark(collector *c, ri_snapstore_error *err) {
    char **names;
    size_t n;
    if (!ss_list_names(c->st, &names, &n, err)) return false;
    c->snaps = calloc(n ? n : 1, sizeof *c->snaps);
    bool ok = c->snaps != NULL || ss_nomem(err);
    for (size_t i = 0; ok && i < n; i++) {
        ss_manifest m;
        if (!ss_manifest_load(c->st, names[i], &m, err)) {
            if (err && err->code == RI_SNAPSTORE_ERR_NOT_FOUND) continue; /* deleted meanwhile */
            char why[sizeof err->message];
            snprintf(why, sizeof why, "%s", err ? err->message : "");
            ok = ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT,
                         "Cannot collect garbage: snapshot '%s' cannot be read, so its blobs cannot be told from "
                         "garbage; delete it first (%s)",
                         names[i], why);
            break;
        }
        hash_list list = {{NULL, 0, 0, false}};
        if (!ss_manifest_visit(&m, add_hash, &list)) ok = ss_nomem(err);
        marked *s = &c->snaps[c->nsnaps];
        s->info = m.info;
        memset(&m.info, 0, sizeof m.info);
        ss_manifest_free(&m);
        s->hashes = list.buf.data;
        s->nhashes = list.buf.len / SS_HASH;
        c->nsnaps++;
        for (size_t k = 0; ok && k < s->nhashes; k++) {
            slot *sl = hset_get(&c->set, s->hashes + k * SS_HASH, true);
            if (!sl) ok = ss_nomem(err);
            else sl->refs++;
        }
        c->total += s->info.manifest_bytes;
    }
    ss_free_names(names, n);
    return ok;
}

static bool remove_temp(int dirfd, const char *name, const struct stat *sb, collector *c, ri_snapstore_error *err) {
    /* Under the exclusive lock no writer is at work: every temporary file is left over. */
    if (unlinkat(dirfd, name, 0) != 0 && errno != ENOENT) return ss_fail_errno(err, errno, "Cannot remove %s", name);
    c->stats->temp_removed++;
    c->stats->bytes_removed += (uint64_t)sb->st_size;
    return true;
}

static bool size_blob(void *user, int dirfd, const char *name, const struct stat *sb, ri_snapstore_error *err) {
    collector *c = user;
    if (ss_is_temp(name)) return remove_temp(dirfd, name, sb, c, err);
    uint8_t hash[SS_HASH];
    if (!blob_name(name, hash)) return true; /* not ours: left alone */
    slot *s = hset_get(&c->set, hash, true);
    if (!s) return ss_nomem(err);
    s->on_disk = true;
    s->size = (uint64_t)sb->st_size;
    c->total += s->size;
    return true;
}

static bool temp_only(void *user, int dirfd, const char *name, const struct stat *sb, ri_snapstore_error *err) {
    return ss_is_temp(name) ? remove_temp(dirfd, name, sb, user, err) : true;
}

static int by_age(const void *a, const void *b) {
    const marked *x = a, *y = b;
    if (x->info.created_ns != y->info.created_ns) return x->info.created_ns < y->info.created_ns ? -1 : 1;
    return strcmp(x->info.name, y->info.name);
}

/* Oldest first until the rest fits; a blob is freed when its last reference goes. */
static void choose_evictions(collector *c, uint64_t max_bytes, const char *protect) {
    qsort(c->snaps, c->nsnaps, sizeof *c->snaps, by_age);
    for (size_t i = 0; i < c->nsnaps && c->total > max_bytes; i++) {
        marked *s = &c->snaps[i];
        if (protect && strcmp(s->info.name, protect) == 0) continue;
        s->evict = true;
        c->total -= s->info.manifest_bytes;
        for (size_t k = 0; k < s->nhashes; k++) {
            slot *sl = hset_get(&c->set, s->hashes + k * SS_HASH, false);
            if (sl && sl->refs && --sl->refs == 0 && sl->on_disk) c->total -= sl->size;
        }
    }
}

static bool sweep(collector *c, ri_snapstore_error *err) {
    bool any = false;
    for (size_t i = 0; i < c->nsnaps; i++) {
        marked *s = &c->snaps[i];
        if (!s->evict) continue;
        char file[RI_SNAPSTORE_NAME_MAX + 8];
        ss_manifest_file(s->info.name, file, sizeof file);
        if (unlinkat(c->st->snaps_fd, file, 0) != 0 && errno != ENOENT)
            return ss_fail_errno(err, errno, "Cannot evict snapshot '%s'", s->info.name);
        c->stats->evicted++;
        c->stats->bytes_removed += s->info.manifest_bytes;
        any = true;
    }
    /* Manifests gone for good before any blob they named goes (I1). */
    if (any && !ss_fsync_dir(c->st->snaps_fd, "snapshots", err)) return false;
    ss_dirty dirty;
    memset(&dirty, 0, sizeof dirty);
    for (size_t i = 0; i < c->set.cap; i++) {
        slot *s = &c->set.slots[i];
        if (!s->used || !s->on_disk) continue;
        if (s->refs) {
            c->stats->blobs_kept++;
            continue;
        }
        char path[SS_BLOB_PATH];
        ss_blob_path(s->hash, path);
        if (unlinkat(c->st->blobs_fd, path, 0) != 0 && errno != ENOENT)
            return ss_fail_errno(err, errno, "Cannot remove blob %s", path);
        c->stats->blobs_removed++;
        c->stats->bytes_removed += s->size;
        dirty.bits[s->hash[0] / 8] |= (uint8_t)(1u << (s->hash[0] % 8));
    }
    return ss_blob_sync(c->st, &dirty, err);
}

bool ss_collect(ri_snapstore *st, uint64_t max_bytes, const char *protect, ri_snapstore_gc_stats *stats,
                ri_snapstore_error *err) {
    memset(stats, 0, sizeof *stats);
    collector c;
    memset(&c, 0, sizeof c);
    c.st = st;
    c.stats = stats;
    bool ok = mark(&c, err) && walk_blobs(st, size_blob, &c, err) &&
              walk_dir(st->snaps_fd, "snapshots", temp_only, &c, err) && walk_dir(st->dirfd, "the store", temp_only, &c, err);
    if (ok) {
        /* Garbage does not count against the cap: it goes anyway. */
        for (size_t i = 0; i < c.set.cap; i++) {
            slot *s = &c.set.slots[i];
            if (s->used && s->on_disk && !s->refs) c.total -= s->size;
        }
        if (max_bytes) choose_evictions(&c, max_bytes, protect);
        ok = sweep(&c, err);
    }
    if (ok) {
        stats->snapshots = c.nsnaps - stats->evicted;
        stats->total_bytes = c.total;
    }
    for (size_t i = 0; i < c.nsnaps; i++) {
        ri_snapstore_info_free(&c.snaps[i].info);
        free(c.snaps[i].hashes);
    }
    free(c.snaps);
    free(c.set.slots);
    return ok;
}

bool ri_snapstore_gc(ri_snapstore *st, ri_snapstore_gc_stats *stats, ri_snapstore_error *err) {
    SS_ERR_SCRATCH(err);
    ss_ok(err);
    ri_snapstore_gc_stats scratch;
    if (!stats) stats = &scratch;
    memset(stats, 0, sizeof *stats);
    if (!st) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_gc: store is NULL");
    int lock = ss_lock(st, SS_LOCK_EXCLUSIVE, NULL, err);
    if (lock < 0) return false;
    ss_config cfg;
    bool ok = ss_config_read(st, &cfg, err) && ss_collect(st, cfg.max_bytes, NULL, stats, err);
    ss_unlock(lock);
    return ok;
}

bool ri_snapstore_set_max_bytes(ri_snapstore *st, uint64_t max_bytes, ri_snapstore_gc_stats *stats,
                                ri_snapstore_error *err) {
    SS_ERR_SCRATCH(err);
    ss_ok(err);
    ri_snapstore_gc_stats scratch;
    if (!stats) stats = &scratch;
    memset(stats, 0, sizeof *stats);
    if (!st) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_set_max_bytes: store is NULL");
    int lock = ss_lock(st, SS_LOCK_EXCLUSIVE, NULL, err);
    if (lock < 0) return false;
    ss_config cfg = {max_bytes};
    bool ok = ss_config_write(st->dirfd, &cfg, err) && ss_collect(st, max_bytes, NULL, stats, err);
    ss_unlock(lock);
    return ok;
}

/* ---- verification ----------------------------------------------------------------------------------------- */

typedef struct verifier {
    ri_snapstore *st;
    uint64_t checked, bad;
    ri_snapstore_error *first_bad;
    const ss_manifest *manifest; /* the one whose references are checked */
} verifier;

static void note_bad(verifier *v, const ri_snapstore_error *e) {
    if (v->bad++ == 0 && v->first_bad) *v->first_bad = *e;
}

static bool verify_blob(void *user, int dirfd, const char *name, const struct stat *sb, ri_snapstore_error *err) {
    (void)dirfd;
    (void)sb;
    verifier *v = user;
    uint8_t hash[SS_HASH];
    if (ss_is_temp(name) || !blob_name(name, hash)) return true;
    bool exists;
    uint64_t size;
    ri_snapstore_error e;
    if (!ss_blob_content_size(v->st, hash, &exists, &size, &e)) {
        v->checked++;
        if (e.code != RI_SNAPSTORE_ERR_CORRUPT) return (*err = e), false;
        note_bad(v, &e);
        return true;
    }
    if (!exists) return true; /* removed meanwhile: not a blob any more */
    v->checked++;
    if (size > SS_MAX_MODULE) {
        ss_fail(&e, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s declares %llu bytes, more than any blob holds",
                name, (unsigned long long)size);
        note_bad(v, &e);
        return true;
    }
    uint8_t *data;
    if (ss_blob_read_alloc(v->st, hash, (size_t)size, &data, "a blob", &e)) free(data);
    else if (e.code == RI_SNAPSTORE_ERR_CORRUPT) note_bad(v, &e);
    else return (*err = e), false;
    return true;
}

/* A reference of a manifest: the blob exists and holds the size the manifest implies (a
 * store written before sizes were checked may hold a snapshot naming its module with a
 * size the module does not have: it could never be given back with its module). A blob
 * whose own header is damaged is reported once, by the walk over the blobs. */
static bool reference_sound(void *user, const uint8_t hash[SS_HASH], uint64_t size) {
    verifier *v = user;
    bool exists = false;
    uint64_t held = 0;
    ri_snapstore_error e;
    char path[SS_BLOB_PATH];
    ss_blob_path(hash, path);
    const char *name = v->manifest->info.name;
    bool module = v->manifest->info.module_stored && memcmp(hash, v->manifest->info.module_sha256, SS_HASH) == 0 &&
                  size == v->manifest->info.module_size;
    if (!ss_blob_content_size(v->st, hash, &exists, &held, &e)) {
        if (e.code != RI_SNAPSTORE_ERR_CORRUPT) note_bad(v, &e);
        return true;
    }
    if (!exists)
        ss_fail(&e, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s (%s of snapshot '%s') is missing", path + 3,
                module ? "the module" : "a page", name);
    else if (held != size)
        ss_fail(&e, RI_SNAPSTORE_ERR_CORRUPT,
                "Corrupt store: snapshot '%s' names %s sha256:%s as %llu bytes, but its blob holds %llu (the "
                "snapshot's header is wrong; delete the snapshot)",
                name, module ? "the module" : "a page", path + 3, (unsigned long long)size, (unsigned long long)held);
    else return true;
    note_bad(v, &e);
    return true;
}

bool ri_snapstore_verify(ri_snapstore *st, uint64_t *checked, uint64_t *bad, ri_snapstore_error *first_bad,
                         ri_snapstore_error *err) {
    ss_ok(err);
    if (first_bad) ss_ok(first_bad);
    if (!st) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_verify: store is NULL");
    verifier v = {st, 0, 0, first_bad, NULL};
    int lock = ss_lock(st, SS_LOCK_SHARED, NULL, err);
    if (lock < 0) return false;
    char **names;
    size_t n;
    bool ok = ss_list_names(st, &names, &n, err);
    for (size_t i = 0; ok && i < n; i++) {
        ss_manifest m;
        ri_snapstore_error e;
        v.checked++;
        if (ss_manifest_load(st, names[i], &m, &e)) {
            v.manifest = &m;
            ss_manifest_visit(&m, reference_sound, &v);
            ss_manifest_free(&m);
        } else if (e.code != RI_SNAPSTORE_ERR_NOT_FOUND) {
            note_bad(&v, &e);
        }
    }
    if (ok) ss_free_names(names, n);
    if (ok) ok = walk_blobs(st, verify_blob, &v, err);
    ss_unlock(lock);
    if (checked) *checked = v.checked;
    if (bad) *bad = v.bad;
    return ok;
}
