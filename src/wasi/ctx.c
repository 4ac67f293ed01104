/*
 * The WASI context of a sandbox: its own copies of the configuration (arguments,
 * environment, callbacks, clock step, output cap), the process state, and copies of the
 * whole (forks and checkpoints continue independently).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasi_internal.h"

static void free_strings(char **v, uint32_t n) {
    for (uint32_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

/* NULL on OOM; a NULL entry is refused by the caller first. */
static char **copy_strings(const char *const *v, uint32_t n) {
    char **out = calloc(n ? n : 1, sizeof *out);
    if (!out) return NULL;
    for (uint32_t i = 0; i < n; i++) {
        out[i] = strdup(v[i]);
        if (!out[i]) {
            free_strings(out, i);
            return NULL;
        }
    }
    return out;
}

static bool strings_ok(const char *const *v, uint32_t n, const char *what, char *why, size_t cap) {
    if (n && !v) {
        snprintf(why, cap, "WASI configuration: %u %s but the array is NULL", n, what);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!v[i]) {
            snprintf(why, cap, "WASI configuration: %s entry %u is NULL", what, i);
            return false;
        }
    }
    return true;
}

/* The three standard streams, rights as a character device's. */
static bool init_fds(ri_wasi *w) {
    free(w->fds);
    w->nfds = 3;
    w->fds = calloc(w->nfds, sizeof *w->fds);
    if (!w->fds) return false;
    const uint64_t in_rights = WASI_RIGHT(R_FD_READ) | WASI_RIGHT(R_POLL_FD_READWRITE) |
                               WASI_RIGHT(R_FD_FDSTAT_SET_FLAGS) | WASI_RIGHT(R_FD_FILESTAT_GET);
    const uint64_t out_rights = WASI_RIGHT(R_FD_WRITE) | WASI_RIGHT(R_POLL_FD_READWRITE) |
                                WASI_RIGHT(R_FD_FDSTAT_SET_FLAGS) | WASI_RIGHT(R_FD_FILESTAT_GET) |
                                WASI_RIGHT(R_FD_DATASYNC) | WASI_RIGHT(R_FD_SYNC);
    w->fds[0] = (wasi_fd){.kind = WASI_FD_STDIN, .rights_base = in_rights};
    w->fds[1] = (wasi_fd){.kind = WASI_FD_STDOUT, .rights_base = out_rights};
    w->fds[2] = (wasi_fd){.kind = WASI_FD_STDERR, .rights_base = out_rights};
    return w->fs && !w->no_preopen ? wasi_fd_preopen_root(w) : true;
}

ri_wasi *ri_wasi_new(const ri_wasi_config *cfg, int64_t event_timestamp_ms, const ri_wasi_services *svc, char *why,
                     size_t cap) {
    ri_wasi_config none;
    memset(&none, 0, sizeof none);
    if (!cfg) cfg = &none;
    if (!strings_ok(cfg->argv, cfg->argc, "arguments", why, cap) ||
        !strings_ok(cfg->env, cfg->nenv, "environment variables", why, cap))
        return NULL;
    for (uint32_t i = 0; i < cfg->nenv; i++) {
        if (!strchr(cfg->env[i], '=')) {
            snprintf(why, cap, "WASI configuration: environment entry %u has no '=' (KEY=VALUE)", i);
            return NULL;
        }
    }
    ri_wasi *w = calloc(1, sizeof *w);
    if (w) {
        w->argc = cfg->argc;
        w->no_preopen = cfg->no_preopen;
        w->terminals = cfg->terminals;
        w->nenv = cfg->nenv;
        w->argv = copy_strings(cfg->argv, cfg->argc);
        w->env = copy_strings(cfg->env, cfg->nenv);
    }
    if (!w || !w->argv || !w->env || !wasi_fs_create(w) || !init_fds(w)) {
        ri_wasi_free(w);
        snprintf(why, cap, "out of memory for the WASI context");
        return NULL;
    }
    w->write = cfg->write;
    w->write_user = cfg->write_user;
    w->read = cfg->read;
    w->read_user = cfg->read_user;
    w->clock_step_ns = cfg->clock_step_ns ? cfg->clock_step_ns : RI_WASI_DEFAULT_CLOCK_STEP_NS;
    w->max_output = cfg->max_output_bytes ? cfg->max_output_bytes : RI_WASI_DEFAULT_MAX_OUTPUT_BYTES;
    w->realtime_base_ns = event_timestamp_ms;
    if (svc) w->services = *svc;
    return w;
}

void ri_wasi_free(ri_wasi *w) {
    if (!w) return;
    free_strings(w->argv, w->argc);
    free_strings(w->env, w->nenv);
    free(w->in);
    free(w->out[0].data);
    free(w->out[1].data);
    for (uint32_t i = 0; w->fds && i < w->nfds; i++) free(w->fds[i].name);
    free(w->fds);
    wasi_fs_free(w);
    free(w);
}

static bool copy_bytes(uint8_t **dst, const uint8_t *src, size_t len) {
    *dst = NULL;
    if (!len) return true;
    *dst = malloc(len);
    if (!*dst) return false;
    memcpy(*dst, src, len);
    return true;
}

ri_wasi *ri_wasi_copy(const ri_wasi *w, const ri_wasi_services *svc) {
    ri_wasi *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *w;
    c->argv = copy_strings((const char *const *)w->argv, w->argc);
    c->env = copy_strings((const char *const *)w->env, w->nenv);
    bool ok = c->argv && c->env;
    ok = copy_bytes(&c->in, w->in, w->in_len) && ok;
    c->in_cap = w->in_len;
    for (int s = 0; s < 2; s++) {
        ok = copy_bytes(&c->out[s].data, w->out[s].data, w->out[s].len) && ok;
        c->out[s].cap = w->out[s].len;
    }
    c->fs = NULL;
    void *fs = wasi_fs_fork(w);
    if (fs) wasi_fs_attach(c, fs);
    else ok = ok && !w->fs;
    c->fds = calloc(w->nfds ? w->nfds : 1, sizeof *c->fds);
    ok = ok && c->fds;
    for (uint32_t i = 0; ok && i < w->nfds; i++) {
        c->fds[i] = w->fds[i];
        c->fds[i].name = NULL;
        if (w->fds[i].name && !(c->fds[i].name = strdup(w->fds[i].name))) ok = false;
    }
    if (!c->fds) c->nfds = 0;
    if (!ok) {
        if (!c->argv) c->argc = 0;
        if (!c->env) c->nenv = 0;
        ri_wasi_free(c);
        return NULL;
    }
    if (svc) c->services = *svc;
    return c;
}

void ri_wasi_reset_process(ri_wasi *w) {
    for (uint32_t i = 0; i < w->nfds; i++) wasi_fd_release(w, &w->fds[i]);
    if (!init_fds(w)) w->nfds = 0; /* (OOM: every descriptor is then EBADF) */
    w->monotonic_ns = 0;
    w->exited = false;
    w->exit_code = 0;
    memset(&w->wait, 0, sizeof w->wait);
}

bool ri_wasi_exited(const ri_wasi *w, uint32_t *code) {
    if (code) *code = w && w->exited ? w->exit_code : 0;
    return w && w->exited;
}
