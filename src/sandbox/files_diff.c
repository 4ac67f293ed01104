/*
 * What changed in the workspace between two snapshots, or a snapshot and the live sandbox
 * (ri/files.h): both workspaces parsed (a missing one is an empty tree) and compared with
 * wsfs_diff, which matches inodes by number; the changes are copied out and sorted by path.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ri/files.h"
#include "sandbox_internal.h"
#include "wasi/wasi.h"
#include "workspace/wsfs.h"

const char *ri_file_change_kind_name(ri_file_change_kind kind) {
    switch (kind) {
    case RI_FILE_ADDED: return "added";
    case RI_FILE_REMOVED: return "removed";
    case RI_FILE_CHANGED: return "changed";
    case RI_FILE_MOVED: return "moved";
    }
    return "unknown";
}

void ri_file_diff_free(ri_file_diff *d) {
    if (!d) return;
    for (size_t i = 0; i < d->nchanges; i++) {
        free(d->changes[i].path);
        free(d->changes[i].old_path);
    }
    free(d->changes);
    memset(d, 0, sizeof *d);
}

static bool diff_fail(ri_sandbox_error *err, const char *fmt, const char *detail) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, fmt, detail);
    return false;
}

/* The workspace of an image (an empty one when it holds none): *fs owned by the caller. */
static bool image_workspace(const uint8_t *data, size_t len, const char *which, wsfs **fs, bool *has,
                            ri_sandbox_error *err) {
    *fs = NULL;
    *has = false;
    ri_snap_image img;
    if (!ri_snapshot_open(data, len, &img, err)) return false;
    uint8_t *ws = NULL;
    size_t ws_len = 0;
    ri_snap_error e;
    bool ok = true;
    if (img.has_wasi) {
        *has = true;
        ok = ri_snap_workspace(&img, &ws, &ws_len, &e) || diff_fail(err, "%s", e.message);
    }
    ri_snap_image_free(&img);
    if (!ok) return false;
    wsfs_config cfg;
    memset(&cfg, 0, sizeof cfg);
    wsfs_error we;
    wsfs_status st = *has ? wsfs_parse(ws, ws_len, &cfg, fs, &we) : wsfs_new(&cfg, fs, &we);
    free(ws);
    if (st != WSFS_OK) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Invalid snapshot — the %s image's workspace: %s", which, we.message);
        return false;
    }
    return true;
}

typedef struct collect {
    const wsfs *from, *to;
    ri_file_diff *d;
    size_t cap;
    bool oom;
} collect;

static uint64_t size_of(const wsfs *fs, uint64_t ino) {
    wsfs_filestat st;
    if (wsfs_stat(fs, ino, &st) != WSFS_ESUCCESS || st.filetype == WSFS_FILETYPE_DIRECTORY) return 0;
    return st.size;
}

static bool push(collect *k, ri_file_change_kind kind, uint8_t type, const char *path, const char *old_path,
                 uint64_t old_size, uint64_t new_size, uint64_t bytes) {
    if (k->d->nchanges == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 16;
        ri_file_change *g = realloc(k->d->changes, cap * sizeof *g);
        if (!g) return !(k->oom = true);
        k->d->changes = g;
        k->cap = cap;
    }
    ri_file_change *f = &k->d->changes[k->d->nchanges];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->type = (ri_file_type)type;
    f->path = strdup(path);
    f->old_path = old_path ? strdup(old_path) : NULL;
    if (!f->path || (old_path && !f->old_path)) {
        free(f->path);
        free(f->old_path);
        return !(k->oom = true);
    }
    f->old_size = old_size;
    f->new_size = new_size;
    f->changed_bytes = bytes;
    k->d->nchanges++;
    uint64_t *count[] = {&k->d->added, &k->d->removed, &k->d->changed, &k->d->moved};
    (*count[kind])++;
    return true;
}

static bool on_change(void *ctx, const wsfs_change *c) {
    collect *k = ctx;
    if (c->path[0] == '\0') return true; /* an unlinked file still open: no path to show */
    const char *old = c->old_path && c->old_path[0] && strcmp(c->old_path, c->path) != 0 ? c->old_path : NULL;
    uint64_t was = c->kind == WSFS_ADDED ? 0 : size_of(k->from, c->ino);
    uint64_t is = c->kind == WSFS_REMOVED ? 0 : size_of(k->to, c->ino);
    switch (c->kind) {
    case WSFS_ADDED: return push(k, RI_FILE_ADDED, c->filetype, c->path, NULL, 0, is, is);
    case WSFS_REMOVED: return push(k, RI_FILE_REMOVED, c->filetype, c->path, NULL, was, 0, was);
    case WSFS_MOVED: return push(k, RI_FILE_MOVED, c->filetype, c->path, old, was, is, 0);
    case WSFS_CHANGED:
        /* Another path and other bytes: to a reader, one file went and another came (two
         * workspaces that went separate ways reuse inode numbers for unrelated files). */
        if (old)
            return push(k, RI_FILE_REMOVED, c->filetype, old, NULL, was, 0, was) &&
                   push(k, RI_FILE_ADDED, c->filetype, c->path, NULL, 0, is, is);
        return push(k, RI_FILE_CHANGED, c->filetype, c->path, NULL, was, is, c->bytes);
    }
    return true;
}

static int by_path(const void *a, const void *b) {
    const ri_file_change *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : (int)x->kind - (int)y->kind;
}

/* Bytes that differ between the files at path in a and b (a size difference counts in full). */
static bool count_differing(const wsfs *a, const wsfs *b, const char *path, uint64_t *bytes) {
    uint64_t ia, ib;
    wsfs_filestat sa, sb;
    size_t len = strlen(path);
    if (wsfs_lookup(a, WSFS_ROOT_INO, path, len, false, &ia) || wsfs_lookup(b, WSFS_ROOT_INO, path, len, false, &ib) ||
        wsfs_stat(a, ia, &sa) || wsfs_stat(b, ib, &sb))
        return false;
    uint64_t common = sa.size < sb.size ? sa.size : sb.size, n = 0;
    if (sa.filetype == WSFS_FILETYPE_SYMBOLIC_LINK) { /* a target: compared whole */
        *bytes = sa.size > sb.size ? sa.size : sb.size;
        return true;
    }
    uint8_t x[4096], y[4096];
    for (uint64_t off = 0; off < common;) {
        size_t want = common - off < sizeof x ? (size_t)(common - off) : sizeof x, gx = 0, gy = 0;
        if (wsfs_pread(a, ia, x, want, off, &gx) || wsfs_pread(b, ib, y, want, off, &gy) || gx != want || gy != want)
            return false;
        for (size_t i = 0; i < want; i++) n += x[i] != y[i];
        off += want;
    }
    *bytes = n + (sa.size > sb.size ? sa.size - sb.size : sb.size - sa.size);
    return true;
}

/* A path removed and added with the same type (a file replaced by a new one under its name,
 * as an atomic save does) is one change of that file. The list is sorted: the pair is
 * adjacent, ADDED first. */
static void merge_replaced(const wsfs *from, const wsfs *to, ri_file_diff *d) {
    size_t w = 0;
    for (size_t i = 0; i < d->nchanges; i++) {
        ri_file_change *c = &d->changes[i], *next = i + 1 < d->nchanges ? &d->changes[i + 1] : NULL;
        uint64_t bytes = 0;
        if (next && c->kind == RI_FILE_ADDED && next->kind == RI_FILE_REMOVED && c->type == next->type &&
            c->type != RI_FILE_TYPE_DIRECTORY && strcmp(c->path, next->path) == 0 &&
            count_differing(from, to, c->path, &bytes)) {
            c->kind = RI_FILE_CHANGED;
            c->old_size = next->old_size;
            c->changed_bytes = bytes;
            free(next->path);
            free(next->old_path);
            d->added--;
            d->removed--;
            if (bytes) d->changed++;
            i++;
            if (!bytes) { /* the same bytes: no change at all */
                free(c->path);
                free(c->old_path);
                continue;
            }
        }
        d->changes[w++] = *c;
    }
    d->nchanges = w;
}

static bool diff_workspaces(const wsfs *from, const wsfs *to, ri_file_diff *out, ri_sandbox_error *err) {
    collect k = {from, to, out, 0, false};
    wsfs_errno e = wsfs_diff(from, to, on_change, &k);
    if (k.oom || e != WSFS_ESUCCESS) {
        bool had = out->old_has_workspace, has = out->new_has_workspace;
        ri_file_diff_free(out);
        out->old_has_workspace = had;
        out->new_has_workspace = has;
        return diff_fail(err, "Cannot compare the workspaces: %s", k.oom ? "out of memory" : wsfs_errno_name(e));
    }
    if (out->nchanges > 1) qsort(out->changes, out->nchanges, sizeof *out->changes, by_path);
    merge_replaced(from, to, out);
    return true;
}

bool ri_snapshot_diff_files(const uint8_t *old_snap, size_t old_len, const uint8_t *new_snap, size_t new_len,
                            ri_file_diff *out, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!out) return diff_fail(err, "%s", "ri_snapshot_diff_files: out is NULL");
    memset(out, 0, sizeof *out);
    wsfs *a = NULL, *b = NULL;
    bool ok = image_workspace(old_snap, old_len, "old", &a, &out->old_has_workspace, err) &&
              image_workspace(new_snap, new_len, "new", &b, &out->new_has_workspace, err) &&
              diff_workspaces(a, b, out, err);
    wsfs_free(a);
    wsfs_free(b);
    return ok;
}

bool ri_sandbox_diff_files(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_file_diff *out,
                           ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb || !out) return diff_fail(err, "%s", "ri_sandbox_diff_files: a NULL argument");
    memset(out, 0, sizeof *out);
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) {
        sb_error_set(err, RI_SANDBOX_INSTANCE_DESTROYED, "Cannot diff destroyed instance: %s", sb->id);
        return false;
    }
    wsfs *a = NULL, *empty = NULL;
    if (!image_workspace(snapshot, len, "old", &a, &out->old_has_workspace, err)) return false;
    const wsfs *live = sb->wasi ? ri_wasi_workspace(sb->wasi) : NULL;
    out->new_has_workspace = live != NULL;
    wsfs_config cfg;
    memset(&cfg, 0, sizeof cfg);
    wsfs_error we;
    bool ok = true;
    if (!live) {
        ok = wsfs_new(&cfg, &empty, &we) == WSFS_OK || diff_fail(err, "%s", "out of memory");
        live = empty;
    }
    if (ok) ok = diff_workspaces(a, live, out, err);
    wsfs_free(a);
    wsfs_free(empty);
    return ok;
}

char *ri_file_diff_json(const ri_file_diff *d) {
    if (!d) return NULL;
    json_t *root = json_object(), *list = json_array();
    bool ok = root && list;
    for (size_t i = 0; ok && i < d->nchanges; i++) {
        const ri_file_change *c = &d->changes[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:I}", "kind", ri_file_change_kind_name(c->kind), "type",
                              ri_file_type_name(c->type), "path", c->path, "oldPath",
                              c->old_path ? json_string(c->old_path) : json_null(), "oldSize", (json_int_t)c->old_size,
                              "newSize", (json_int_t)c->new_size, "changedBytes", (json_int_t)c->changed_bytes);
        ok = o && json_array_append_new(list, o) == 0;
    }
    if (ok)
        ok = json_object_set_new(root, "oldHasWorkspace", json_boolean(d->old_has_workspace)) == 0 &&
             json_object_set_new(root, "newHasWorkspace", json_boolean(d->new_has_workspace)) == 0 &&
             json_object_set_new(root, "added", json_integer((json_int_t)d->added)) == 0 &&
             json_object_set_new(root, "removed", json_integer((json_int_t)d->removed)) == 0 &&
             json_object_set_new(root, "changed", json_integer((json_int_t)d->changed)) == 0 &&
             json_object_set_new(root, "moved", json_integer((json_int_t)d->moved)) == 0 &&
             json_object_set_new(root, "changes", list) == 0;
    else
        json_decref(list);
    char *text = ok ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return text;
}
