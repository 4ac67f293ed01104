/* The server's message handling without sockets: the input is a conversation on one
 * /create connection, one message per line: the init message, then client messages
 * (executions, stdin, kill, reconnect, checkpoint, our actions). Each goes through
 * srv_conn_message as the lws callback hands it over; the jobs it starts run on this
 * thread (srv_run_queued_job) and their results come back through srv_drain, as the
 * service thread does it. The connection has no socket, so what would be sent is built
 * and dropped. The server has a checkpoint volume in a temporary directory. Executions
 * are kept short: the sandbox's gas and time limits are capped before its jobs run, and
 * stdin is closed (what a client's stdin_close does) so a read never waits. At the end
 * the sandbox is killed, so every input starts from an empty server. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_internal.h"

#define CAP_GAS 200000u
#define CAP_MS 200u

static char volume[64];
static srv *the_server;
static FILE *devnull;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void cleanup(void) {
    if (the_server) ri_server_free(the_server);
    the_server = NULL;
    if (volume[0]) nftw(volume, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (devnull) fclose(devnull);
}

static srv *server(void) {
    if (the_server) return the_server;
    snprintf(volume, sizeof volume, "/tmp/ri-fuzz-server-XXXXXX");
    if (!mkdtemp(volume)) abort();
    devnull = fopen("/dev/null", "w");
    ri_server_config cfg = ri_server_config_default();
    cfg.checkpoint_path = volume;
    cfg.server_id = "fuzz";
    cfg.log = devnull;
    cfg.max_sandboxes = 4;
    cfg.max_sandbox_memory = 16u << 20;
    cfg.snapshot_rate = 1000000;
    char err[256];
    the_server = srv_new_core(&cfg, err, sizeof err);
    if (!the_server) {
        fprintf(stderr, "server: %s\n", err);
        abort();
    }
    atexit(cleanup);
    return the_server;
}

/* Caps every sandbox's limits, closes stdin of running executions, runs the queued
 * jobs and delivers their results, until nothing is left to do. */
static void settle(srv *s) {
    for (;;) {
        for (srv_sandbox *sb = s->sandboxes; sb; sb = sb->next) {
            if (sb->cfg.max_gas > CAP_GAS) sb->cfg.max_gas = CAP_GAS;
            if (sb->cfg.max_execution_ms > CAP_MS) sb->cfg.max_execution_ms = CAP_MS;
            if (sb->cfg.max_memory_bytes > (16u << 20)) sb->cfg.max_memory_bytes = 16u << 20;
            pthread_mutex_lock(&sb->io_lock);
            sb->stdin_closed = true;
            pthread_mutex_unlock(&sb->io_lock);
        }
        bool ran = srv_run_queued_job(s);
        srv_drain(s);
        if (!ran) return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    srv *s = server();
    srv_conn *c = calloc(1, sizeof *c);
    if (!c) return 0;
    c->s = s;
    c->kind = SRV_CONN_CREATE;
    const char *text = (const char *)data;
    size_t at = 0;
    while (at <= size) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - text) : size;
        char *msg = malloc(end - at + 1); /* srv_conn_message takes a message of its own */
        if (msg) {
            memcpy(msg, text + at, end - at);
            msg[end - at] = '\0';
            srv_conn_message(c, msg, end - at);
        }
        settle(s);
        at = end + 1;
        if (!nl) break;
    }
    /* kill what the conversation made (a sandbox detached from its client stays) */
    while (s->sandboxes) {
        srv_sandbox *sb = s->sandboxes;
        srv_sandbox_ref(sb);
        if (sb->job) {
            sb->kill_pending = true;
            srv_kill_process(sb);
            settle(s);
        } else {
            srv_finish_kill(sb);
        }
        srv_sandbox_unref(sb);
        settle(s);
    }
    srv_conn_forget_parse(c);
    srv_conn_detach(c);
    free(c);
    return 0;
}
