/* `ri serve`: the sandbox server (docs/SERVER.md). Built when the server library is (RI_HAVE_SERVER). */
#ifdef RI_HAVE_SERVER
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include "ri/server.h"
#ifdef RI_HAVE_COORD
#include "coord/etcd.h"
#endif

static ri_server *volatile running_server;

static void on_signal(int sig) {
    (void)sig;
    if (running_server) ri_server_stop(running_server);
}

static void serve_usage(FILE *f) {
    fprintf(f,
            "usage: ri serve [OPTIONS]\n"
            "\n"
            "Serve sandboxes over WebSocket (/create, /attach/{id}), GET /status and /metrics;\n"
            "with --tls-cert and --tls-key the same port serves wss:// and https:// only.\n"
            "The first stdout line is `listening on HOST:PORT`. Logs: JSON lines on stderr.\n"
            "\n"
            "options:\n"
            "  --host ADDR             address to listen on (127.0.0.1)\n"
            "  --port N                port (8080); 0 picks a free one\n"
            "  --checkpoint-path DIR   the checkpoint volume (default: env CHECKPOINT_AND_RESTORE_PATH)\n"
            "  --workers N             worker threads (4)\n"
            "  --interpreters DIR      python.wasm and lua.wasm for code as text (default:\n"
            "                          $RI_INTERPRETERS_DIR, else ~/.cache/ri/interpreters)\n"
            "  --max-sandboxes N       sandboxes per server (1024)\n"
            "  --keep-checkpoints N    checkpoint images kept per sandbox (3)\n"
            "  --memory-budget BYTES   hibernate idle sandboxes under pressure (none)\n"
            "  --server-id ID          this server's name in lease files (random)\n"
            "  --lease-seconds N       lease duration on a shared volume, or of the etcd lease (60)\n"
            "  --coordinator URL       ownership on etcd: etcd://host:port[,host:port...] (etcds:// for TLS);\n"
            "                          default: lease files on the checkpoint volume (one machine)\n"
            "  --coordinator-ca FILE   CA of the etcd members' certificates\n"
            "  --coordinator-cert FILE client certificate for etcd (with --coordinator-key)\n"
            "  --coordinator-key FILE  its private key\n"
            "  --coordinator-user USER etcd user; the password is read from $RI_COORDINATOR_PASSWORD\n"
            "  --coordinator-prefix P  the root of this cluster's etcd keys (/ri)\n"
            "  --store DIR             snapshot store (default: CHECKPOINT_PATH/_store)\n"
            "  --max-message-bytes N   largest client message (16 MiB)\n"
            "  --compress-checkpoints  zstd pages in checkpoint images (default raw: faster)\n"
            "  --max-sandbox-memory BYTES  the most memory a client may give a sandbox (256 MiB)\n"
            "  --max-execution-ms N    the longest max_execution_ms a client may ask (300000)\n"
            "  --max-gas N             the most max_gas a client may ask (100000000000)\n"
            "  --slice-ms N            an execution's time slice while others wait for a worker (100)\n"
            "  --detached-grace-seconds N  end an execution whose client left after N s (60)\n"
            "  --output-budget BYTES   output waiting for all clients together (64 MiB)\n"
            "  --tls-cert FILE         PEM certificate (chain): serve TLS (needs --tls-key)\n"
            "  --tls-key FILE          PEM private key of --tls-cert (unencrypted)\n"
            "  --log-level L           error, warning, info or debug: the least severe logged (info)\n"
            "  --log-format F          json (one object per line, the default) or text\n"
            "  -h, --help              show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

/* The entry point ri-serve.so exports (serve_loader.c finds it with dlsym). */
__attribute__((visibility("default"))) int ri_serve_main(int argc, char **argv) {
    ri_server_config cfg = ri_server_config_default();
    const char *env = getenv("CHECKPOINT_AND_RESTORE_PATH");
    if (env && env[0]) cfg.checkpoint_path = env;
    ri_args a;
    ri_args_init(&a, argc, argv);
    for (;;) {
        ri_arg arg = ri_args_next(&a);
        if (arg.kind == RI_ARG_END) break;
        if (arg.kind == RI_ARG_POSITIONAL) return ri_usage("ri serve", "unexpected argument '%s'", arg.text);
        if (ri_arg_is(&arg, "--help") || ri_arg_is(&arg, "-h")) {
            serve_usage(stdout);
            return RI_EXIT_OK;
        }
        if (ri_arg_is(&arg, "--compress-checkpoints")) {
            cfg.compress_checkpoints = true;
            continue;
        }
        static const char *const with_value[] = {"--host", "--port", "--checkpoint-path", "--workers",
                                                 "--max-sandboxes", "--keep-checkpoints", "--memory-budget",
                                                 "--server-id", "--lease-seconds", "--store", "--max-message-bytes",
                                                 "--max-sandbox-memory", "--max-execution-ms", "--max-gas",
                                                 "--slice-ms", "--detached-grace-seconds", "--output-budget",
                                                 "--tls-cert", "--tls-key", "--log-level", "--log-format",
                                                 "--interpreters", "--coordinator", "--coordinator-ca",
                                                 "--coordinator-cert", "--coordinator-key", "--coordinator-user",
                                                 "--coordinator-prefix"};
        bool known = false;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++)
            if (ri_arg_is(&arg, with_value[k])) known = true;
        if (!known) return ri_unknown_option("ri serve", arg.text, serve_usage);
        const char *v = ri_args_value(&a, &arg);
        if (!v) return ri_usage("ri serve", "option %s needs a value", arg.text);
        const char *why = NULL;
        uint64_t n = 0;
        if (ri_arg_is(&arg, "--host")) cfg.host = v;
        else if (ri_arg_is(&arg, "--checkpoint-path")) cfg.checkpoint_path = v[0] ? v : NULL;
        else if (ri_arg_is(&arg, "--server-id")) cfg.server_id = v;
        else if (ri_arg_is(&arg, "--store")) cfg.store_dir = v;
        else if (ri_arg_is(&arg, "--tls-cert")) cfg.tls_cert = v;
        else if (ri_arg_is(&arg, "--tls-key")) cfg.tls_key = v;
        else if (ri_arg_is(&arg, "--interpreters")) cfg.interpreters_dir = v;
        else if (ri_arg_is(&arg, "--coordinator")) cfg.coordinator = v;
        else if (ri_arg_is(&arg, "--coordinator-ca")) cfg.coordinator_ca = v;
        else if (ri_arg_is(&arg, "--coordinator-cert")) cfg.coordinator_cert = v;
        else if (ri_arg_is(&arg, "--coordinator-key")) cfg.coordinator_key = v;
        else if (ri_arg_is(&arg, "--coordinator-user")) cfg.coordinator_user = v;
        else if (ri_arg_is(&arg, "--coordinator-prefix")) cfg.coordinator_prefix = v;
        else if (ri_arg_is(&arg, "--log-level")) {
            static const char *const levels[] = {"error", "warning", "info", "debug"};
            size_t k = 0;
            while (k < 4 && strcmp(v, levels[k]) != 0) k++;
            if (k == 4) return ri_usage("ri serve", "--log-level: '%s' is not error, warning, info or debug", v);
            cfg.log_level = (ri_server_log_level)k;
        } else if (ri_arg_is(&arg, "--log-format")) {
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0)
                return ri_usage("ri serve", "--log-format: '%s' is not json or text", v);
            cfg.log_text = strcmp(v, "text") == 0;
        }
        else if (ri_arg_is(&arg, "--memory-budget")) {
            if (!ri_parse_bytes(v, &cfg.memory_budget, &why))
                return ri_usage("ri serve", "--memory-budget: %s", why);
        } else if (ri_arg_is(&arg, "--max-sandbox-memory")) {
            if (!ri_parse_bytes(v, &n, &why) || n == 0)
                return ri_usage("ri serve", "--max-sandbox-memory: %s", why ? why : "at least 1");
            cfg.max_sandbox_memory = n;
        } else if (ri_arg_is(&arg, "--output-budget")) {
            if (!ri_parse_bytes(v, &n, &why) || n < (1u << 20))
                return ri_usage("ri serve", "--output-budget: %s", why ? why : "at least 1 MiB");
            cfg.output_budget = n;
        } else if (ri_arg_is(&arg, "--max-gas")) {
            if (!ri_parse_u64(v, UINT64_MAX, &n, &why) || n == 0)
                return ri_usage("ri serve", "--max-gas: %s", why ? why : "at least 1");
            cfg.max_gas = n;
        } else if (ri_arg_is(&arg, "--max-message-bytes")) {
            if (!ri_parse_bytes(v, &n, &why) || n < 1024)
                return ri_usage("ri serve", "--max-message-bytes: %s", why ? why : "at least 1024");
            cfg.max_message_bytes = (size_t)n;
        } else {
            uint64_t max = 0;
            if (ri_arg_is(&arg, "--port")) max = 65535;
            else if (ri_arg_is(&arg, "--workers")) max = 64;
            else if (ri_arg_is(&arg, "--max-sandboxes")) max = 1000000;
            else if (ri_arg_is(&arg, "--keep-checkpoints")) max = 1000;
            else if (ri_arg_is(&arg, "--lease-seconds")) max = 86400;
            else if (ri_arg_is(&arg, "--max-execution-ms")) max = 86400000;
            else if (ri_arg_is(&arg, "--slice-ms")) max = 60000;
            else if (ri_arg_is(&arg, "--detached-grace-seconds")) max = 86400;
            else return ri_unknown_option("ri serve", arg.text, serve_usage);
            if (!ri_parse_u64(v, max, &n, &why)) return ri_usage("ri serve", "%s: %s", arg.text, why);
            if (ri_arg_is(&arg, "--port")) cfg.port = (int)n;
            else if (ri_arg_is(&arg, "--workers")) cfg.workers = (uint32_t)(n ? n : 1);
            else if (ri_arg_is(&arg, "--max-sandboxes")) cfg.max_sandboxes = (uint32_t)(n ? n : 1);
            else if (ri_arg_is(&arg, "--keep-checkpoints")) cfg.keep_checkpoints = (uint32_t)(n ? n : 1);
            else if (ri_arg_is(&arg, "--max-execution-ms")) cfg.max_execution_ms = (uint32_t)(n ? n : 1);
            else if (ri_arg_is(&arg, "--slice-ms")) cfg.slice_ms = (uint32_t)(n ? n : 1);
            else if (ri_arg_is(&arg, "--detached-grace-seconds")) cfg.detached_grace_ms = (uint32_t)(n ? n : 1) * 1000u;
            else cfg.lease_ms = (uint32_t)(n ? n : 1) * 1000u;
        }
    }
    if (!cfg.tls_cert != !cfg.tls_key)
        return ri_usage("ri serve", "%s needs %s too", cfg.tls_cert ? "--tls-cert" : "--tls-key",
                        cfg.tls_cert ? "--tls-key" : "--tls-cert");
    if (cfg.coordinator_user) {
        cfg.coordinator_password = getenv("RI_COORDINATOR_PASSWORD");
        if (!cfg.coordinator_password)
            return ri_usage("ri serve", "--coordinator-user needs the password in $RI_COORDINATOR_PASSWORD");
    }
    if ((cfg.coordinator_ca || cfg.coordinator_cert || cfg.coordinator_key || cfg.coordinator_user ||
         cfg.coordinator_prefix) && !cfg.coordinator)
        return ri_usage("ri serve", "the --coordinator-* options need --coordinator");
    if (cfg.coordinator && !cfg.checkpoint_path)
        return ri_usage("ri serve", "--coordinator needs a checkpoint volume (--checkpoint-path)");
#ifdef RI_HAVE_COORD
    ri_etcd_error eerr;
    if (cfg.coordinator && !ri_etcd_global_init(&eerr)) { /* libcurl's, before any thread */
        fprintf(stderr, "ri serve: %s\n", eerr.message);
        return RI_EXIT_INTERNAL;
    }
#endif
    char err[1024];
    ri_server_errcode code;
    ri_server *s = ri_server_open(&cfg, &code, err, sizeof err);
    if (!s) {
        fprintf(stderr, "ri serve: %s\n", err);
        return code == RI_SERVER_BAD_CONFIG ? RI_EXIT_USAGE : RI_EXIT_INTERNAL;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    running_server = s;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    printf("listening on %s:%d\n", cfg.host, ri_server_port(s));
    fflush(stdout);
    bool ok = ri_server_run(s);
    if (!ok) fprintf(stderr, "ri serve: %s\n", ri_server_error(s)[0] ? ri_server_error(s) : "the server failed");
    running_server = NULL;
    ri_server_free(s);
    return ok ? RI_EXIT_OK : RI_EXIT_INTERNAL;
}
#else
typedef int ri_cmd_serve_unavailable;
#endif
