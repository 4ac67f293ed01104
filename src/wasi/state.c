/*
 * The WASI state a snapshot holds (docs/SNAPSHOT_FORMAT.md "WASI"), little-endian:
 *   u32 version (1) | u64 virtual clock ns | u8 exited | u32 exit code
 *   | u8 wait kind | u32 wait a, b, c, d | u8 stdin closed | u64 n | n stdin bytes not yet read
 *   | u32 descriptors | each: u8 kind, u16 fdflags, u64 rights base, u64 rights inheriting,
 *     u64 inode, u64 offset, u32 n, n bytes of preopen name
 * The workspace travels beside it (its canonical serialization, section WSFS).
 * Arguments, environment and callbacks are configuration, not state. Reading checks every
 * length and value, the workspace and the descriptors' inodes in it before anything of
 * the context changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasi_internal.h"
#include "workspace/wsfs.h"

bool ri_wasi_state_write(const ri_wasi *w, uint8_t **out, size_t *len) {
    ri_buf b = {0};
    ri_buf_u32(&b, 1);
    ri_buf_u64(&b, w->monotonic_ns);
    ri_buf_u8(&b, w->exited);
    ri_buf_u32(&b, w->exit_code);
    ri_buf_u8(&b, (uint8_t)w->wait.kind);
    ri_buf_u32(&b, w->wait.a);
    ri_buf_u32(&b, w->wait.b);
    ri_buf_u32(&b, w->wait.c);
    ri_buf_u32(&b, w->wait.d);
    ri_buf_u8(&b, w->in_closed);
    ri_buf_u64(&b, w->in_len);
    ri_buf_put(&b, w->in, w->in_len);
    ri_buf_u32(&b, w->nfds);
    for (uint32_t i = 0; i < w->nfds; i++) {
        const wasi_fd *f = &w->fds[i];
        ri_buf_u8(&b, (uint8_t)f->kind);
        ri_buf_u16(&b, f->fdflags);
        ri_buf_u64(&b, f->rights_base);
        ri_buf_u64(&b, f->rights_inheriting);
        ri_buf_u64(&b, f->ino);
        ri_buf_u64(&b, f->offset);
        size_t n = f->name ? strlen(f->name) : 0;
        ri_buf_u32(&b, (uint32_t)n);
        ri_buf_put(&b, f->name, n);
    }
    if (b.failed) {
        ri_buf_free(&b);
        return false;
    }
    *out = b.data;
    *len = b.len;
    return true;
}

typedef struct rbuf {
    const uint8_t *p;
    size_t len, at;
    bool bad;
} rbuf;

static const uint8_t *take(rbuf *r, uint64_t n) {
    if (r->bad || n > r->len - r->at) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p + r->at;
    r->at += (size_t)n;
    return p;
}
static uint8_t get8(rbuf *r) {
    const uint8_t *p = take(r, 1);
    return p ? p[0] : 0;
}
static uint16_t get16(rbuf *r) {
    const uint8_t *p = take(r, 2);
    return p ? ri_le_get16(p) : 0;
}
static uint32_t get32(rbuf *r) {
    const uint8_t *p = take(r, 4);
    return p ? ri_le_get32(p) : 0;
}
static uint64_t get64(rbuf *r) {
    const uint8_t *p = take(r, 8);
    return p ? ri_le_get64(p) : 0;
}

static bool fail(char *why, size_t cap, const char *what) {
    snprintf(why, cap, "Invalid WASI state: %s", what);
    return false;
}

bool ri_wasi_workspace_write(const ri_wasi *w, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    wsfs_error e;
    return !w->fs || wsfs_serialize(w->fs, out, len, &e) == WSFS_OK;
}

/* Every descriptor of the workspace names an inode of the right kind in fs. */
static bool fds_in(const wasi_fd *fds, uint32_t nfds, const wsfs *fs) {
    for (uint32_t i = 0; i < nfds; i++) {
        const wasi_fd *f = &fds[i];
        if (f->kind != WASI_FD_PREOPEN && f->kind != WASI_FD_DIR && f->kind != WASI_FD_FILE) continue;
        wsfs_filestat st;
        if (!fs || wsfs_stat(fs, f->ino, &st)) return false;
        if ((f->kind != WASI_FD_FILE) != (st.filetype == WSFS_FILETYPE_DIRECTORY)) return false;
    }
    return true;
}

/* The state from data, the workspace parsed from ws or given ready (given: owned only on
 * success). */
static bool state_read(ri_wasi *w, const uint8_t *data, size_t len, const uint8_t *ws, size_t ws_len, void *given,
                       char *why, size_t cap) {
    rbuf r = {data, len, 0, false};
    if (get32(&r) != 1) return fail(why, cap, "unknown version");
    uint64_t clock = get64(&r);
    uint8_t exited = get8(&r);
    uint32_t code = get32(&r);
    wasi_wait wait;
    wait.kind = (wasi_wait_kind)get8(&r);
    wait.a = get32(&r);
    wait.b = get32(&r);
    wait.c = get32(&r);
    wait.d = get32(&r);
    uint8_t closed = get8(&r);
    uint64_t in_len = get64(&r);
    const uint8_t *in = take(&r, in_len);
    uint32_t nfds = get32(&r);
    if (r.bad) return fail(why, cap, "truncated");
    if (exited > 1 || closed > 1 || wait.kind > WASI_WAIT_INPUT) return fail(why, cap, "a flag out of range");
    if (nfds > WASI_MAX_FDS) return fail(why, cap, "too many descriptors");
    wasi_fd *fds = calloc(nfds ? nfds : 1, sizeof *fds);
    uint8_t *inbuf = in_len ? malloc((size_t)in_len) : NULL;
    bool ok = fds && (!in_len || inbuf);
    for (uint32_t i = 0; ok && i < nfds; i++) {
        wasi_fd *f = &fds[i];
        uint8_t kind = get8(&r);
        f->fdflags = get16(&r);
        f->rights_base = get64(&r);
        f->rights_inheriting = get64(&r);
        f->ino = get64(&r);
        f->offset = get64(&r);
        uint32_t n = get32(&r);
        const uint8_t *name = take(&r, n);
        if (r.bad || kind > WASI_FD_DIR || (kind == WASI_FD_PREOPEN) != (n > 0) || (n && memchr(name, 0, n)) ||
            (f->fdflags & ~31u)) {
            ok = false;
            break;
        }
        f->kind = (wasi_fd_kind)kind;
        if (n && !(f->name = strndup((const char *)name, n))) ok = false;
    }
    wsfs *fs = given;
    if (ok && (r.bad || r.at != len)) ok = false;
    if (ok && !given && ws_len) {
        wsfs_config cfg;
        memset(&cfg, 0, sizeof cfg);
        wsfs_error e;
        if (wsfs_parse(ws, ws_len, &cfg, &fs, &e) != WSFS_OK) ok = false;
    }
    if (ok && !fds_in(fds, nfds, fs)) {
        ok = false;
        if (fs && !given) wsfs_free(fs);
        fs = NULL;
    }
    if (!ok) {
        for (uint32_t i = 0; fds && i < nfds; i++) free(fds[i].name);
        free(fds);
        free(inbuf);
        return fail(why, cap, "malformed descriptors, workspace or trailing bytes");
    }
    /* Commit: nothing below fails. */
    for (uint32_t i = 0; i < w->nfds; i++) free(w->fds[i].name);
    free(w->fds);
    w->fds = fds;
    w->nfds = nfds;
    wasi_fs_free(w);
    if (fs) wasi_fs_attach(w, fs);
    free(w->in);
    w->in = inbuf;
    if (in_len) memcpy(inbuf, in, (size_t)in_len);
    w->in_len = w->in_cap = (size_t)in_len;
    w->in_closed = closed;
    w->monotonic_ns = clock;
    w->exited = exited;
    w->exit_code = code;
    w->wait = wait;
    return true;
}

bool ri_wasi_state_read(ri_wasi *w, const uint8_t *data, size_t len, const uint8_t *ws, size_t ws_len, char *why,
                        size_t cap) {
    return state_read(w, data, len, ws, ws_len, NULL, why, cap);
}

bool ri_wasi_state_read_fs(ri_wasi *w, const uint8_t *data, size_t len, void *fs, char *why, size_t cap) {
    if (!fs) return fail(why, cap, "no workspace");
    return state_read(w, data, len, NULL, 0, fs, why, cap);
}
