/* `ri run` for WASI commands (see run_wasi.h): stdio straight through, the exit code
 * passed on, --dir trees copied in before the run and (--dir-writeback) back after it. */
#include "cli/run_wasi.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/files.h"
#include "cli/run_report.h"
#include "cli/wasi_args.h"
#include "workspace/wsfs.h"

#define READ_MAX ((size_t)1 << 20) /* per stdin read: read(2) takes what is there anyway */

bool ri_is_wasi_command(const uint8_t *wasm, size_t len) {
    ri_error err;
    ri_module *m = ri_module_load(wasm, len, NULL, &err);
    if (!m) return false;
    bool wasi = false, start = false;
    for (uint32_t i = 0; i < ri_module_import_count(m); i++)
        wasi = wasi || strcmp(ri_module_import(m, i).module, "wasi_snapshot_preview1") == 0;
    for (uint32_t i = 0; i < ri_module_export_count(m); i++) {
        ri_export_info ex = ri_module_export(m, i);
        start = start || (ex.type.kind == RI_EXTERN_FUNC && ex.name_len == 6 && memcmp(ex.name, "_start", 6) == 0);
    }
    ri_module_free(m);
    return wasi && start;
}

/* The program's stdout and stderr: written through at once, nothing buffered in ri. */
static bool write_stream(void *user, ri_wasi_stream stream, const uint8_t *data, size_t len) {
    (void)user;
    int fd = stream == RI_WASI_STDERR ? STDERR_FILENO : STDOUT_FILENO;
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false; /* the program sees EIO */
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* The program's stdin: ri's, read as it comes (a blocking read on a terminal or a pipe
 * waits for input, as the program itself would). */
static uint32_t terminals(void) {
    return (isatty(STDIN_FILENO) ? RI_WASI_TERMINAL_STDIN : 0u) | (isatty(STDOUT_FILENO) ? RI_WASI_TERMINAL_STDOUT : 0u) |
           (isatty(STDERR_FILENO) ? RI_WASI_TERMINAL_STDERR : 0u);
}

static int64_t read_stdin(void *user, uint8_t *buf, size_t cap) {
    (void)user;
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, cap < READ_MAX ? cap : READ_MAX);
        if (n >= 0) return (int64_t)n;
        if (errno != EINTR) return errno == EBADF ? 0 : RI_WASI_READ_ERROR; /* closed stdin: end of input */
    }
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* --json / --text: ri's own summary, on stderr (stdout is the program's). */
static void summary(const ri_wasi_outcome *o, const ri_sandbox_result *res, bool paused, const char *error,
                    const char *snapshot, int status) {
    if (o->mode == RI_OUTPUT_JSON) {
        json_t *args = json_array();
        for (uint32_t i = 1; i < o->argc; i++) json_array_append_new(args, json_string(o->argv[i]));
        json_t *doc = json_pack("{s:b, s:s, s:o, s:o, s:b, s:o, s:I, s:f, s:o, s:i}", "ok", status == 0, "module",
                                o->source, "args", args ? args : json_null(),
                                "exitCode", res->exited ? json_integer(res->exit_code) : json_null(), "paused", paused,
                                "error", error ? json_string(error) : json_null(), "gasUsed", (json_int_t)res->gas_used,
                                "durationMs", res->duration_ms, "snapshot",
                                snapshot ? json_string(snapshot) : json_null(), "status", status);
        if (doc) {
            json_dumpf(doc, stderr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            fputc('\n', stderr);
        }
        json_decref(doc);
    } else if (o->mode == RI_OUTPUT_TEXT) {
        if (res->exited) fprintf(stderr, "exit code: %" PRIu32 "\n", res->exit_code);
        else if (paused) fprintf(stderr, "paused\n");
        else if (error) ri_printf_safe(stderr, "failed: %s\n", error);
        fprintf(stderr, "gas used:  %" PRIu64 "\nduration:  %.3f ms\n", res->gas_used, res->duration_ms);
    }
}

/* The sandbox's state with the module and RARG, written atomically. */
static int write_snapshot(const ri_wasi_outcome *o, ri_sandbox *sb) {
    ri_snapshot_options so = {RI_SNAPSHOT_V2, true, o->uncompressed};
    uint8_t *image = NULL, *full = NULL;
    size_t len = 0, full_len = 0;
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &so, &image, &len, &err))
        return ri_fail(RI_EXIT_EXEC, o->cmd, "--snapshot %s: %s", o->snapshot_path, err.message);
    char why[320];
    bool ok = ri_wasi_args_attach(image, len, o->argv, o->argc, o->env, o->nenv, &full, &full_len, why, sizeof why);
    free(image);
    if (!ok) return ri_fail(RI_EXIT_INTERNAL, o->cmd, "--snapshot %s: %s", o->snapshot_path, why);
    int rc = ri_write_file_atomic(o->snapshot_path, full, full_len, why, sizeof why);
    free(full);
    return rc == RI_EXIT_OK ? rc : ri_fail(rc, o->cmd, "--snapshot: cannot write '%s': %s", o->snapshot_path, why);
}

int ri_wasi_finish(const ri_wasi_outcome *o, ri_sandbox *sb, const ri_sandbox_result *res) {
    bool paused = !res->ok && res->error.code == RI_SANDBOX_SUSPENDED_CALL;
    char error[1024] = "";
    int status;
    if (res->exited) {
        /* A code above 255 does not fit an exit status: 255, as exit(-1) gives natively. */
        status = res->exit_code > 255 ? 255 : (int)res->exit_code;
    } else if (!res->ok && !paused) {
        ri_describe_error(&res->error, error, sizeof error);
        status = RI_EXIT_EXEC;
    } else {
        status = RI_EXIT_OK;
    }
    const char *snapshot = NULL;
    if (o->snapshot_path && !error[0]) {
        int rc = write_snapshot(o, sb);
        if (rc == RI_EXIT_OK) snapshot = o->snapshot_path;
        else if (status == RI_EXIT_OK) status = rc;
    }
    summary(o, res, paused, error[0] ? error : NULL, snapshot, status);
    if (error[0]) {
        ri_fail(0, o->cmd, "%s: %s", o->source, error);
        ri_hint_limit(o->cmd, &res->error);
    } else if (paused && snapshot) {
        ri_describe_error(&res->error, error, sizeof error);
        ri_fail(0, o->cmd, "%s: the process paused (%s); %s holds it: `ri resume %s` continues it", o->source, error,
                snapshot, snapshot);
    } else if (paused) {
        ri_describe_error(&res->error, error, sizeof error);
        ri_fail(0, o->cmd, "%s: the process paused (%s) and no --snapshot keeps it", o->source, error);
        status = RI_EXIT_EXEC;
    }
    return status;
}

static int run_loaded(const char *cmd, const ri_wasi_command *c, ri_sandbox *sb, const char *const *argv,
                      uint32_t argc) {
    wsfs *fs = ri_sandbox_wasi_workspace(sb);
    if (!fs) return ri_fail(RI_EXIT_INTERNAL, cmd, "the sandbox has no workspace");
    for (uint32_t i = 0; i < c->ndirs; i++) {
        int rc = ri_wasi_dir_copy_in(cmd, fs, &c->dirs[i]);
        if (rc != RI_EXIT_OK) return rc;
    }
    ri_sandbox_error err;
    if (c->snapshot_path && !ri_sandbox_set_pause_on(sb, c->pause_on, &err))
        return ri_fail(RI_EXIT_USAGE, cmd, "--pause-on: %s", err.message);
    ri_sandbox_result res = ri_sandbox_wasi_run(sb);
    ri_wasi_outcome o = {cmd, c->module_path, c->snapshot_path, c->uncompressed, argv, argc, c->env, c->nenv, c->mode};
    int status = ri_wasi_finish(&o, sb, &res);
    ri_sandbox_result_free(&res);
    /* Whatever the outcome: the files are what the program left, as on a real disk. */
    for (uint32_t i = 0; c->write_back && i < c->ndirs; i++) {
        int rc = ri_wasi_dir_write_back(cmd, fs, &c->dirs[i]);
        if (rc != RI_EXIT_OK && status == RI_EXIT_OK) status = rc;
    }
    return status;
}

void ri_wasi_cli_stdio(ri_wasi_config *wasi) {
    wasi->write = write_stream;
    wasi->read = read_stdin;
    wasi->terminals = terminals();
}

int ri_run_wasi_command(const char *cmd, const ri_wasi_command *c) {
    size_t argc = (size_t)c->nargs + 1;
    const char **argv = malloc(argc * sizeof *argv);
    if (!argv) return ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
    argv[0] = base_name(c->module_path);
    for (int i = 0; i < c->nargs; i++) argv[i + 1] = c->args[i];
    ri_wasi_config wasi;
    memset(&wasi, 0, sizeof wasi);
    wasi.argv = argv;
    wasi.argc = (uint32_t)argc;
    wasi.env = c->env;
    wasi.nenv = c->nenv;
    ri_wasi_cli_stdio(&wasi);
    ri_sandbox_config config = c->config;
    config.enable_wasi = true;
    config.wasi = &wasi;

    int rc = RI_EXIT_OK;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = factory ? ri_sandbox_create(factory, &config, &err) : NULL;
    if (!factory) {
        rc = ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory creating the sandbox factory");
    } else if (!sb) {
        rc = ri_fail(err.code == RI_SANDBOX_INVALID_CONFIG ? RI_EXIT_USAGE : RI_EXIT_INTERNAL, cmd,
                     "cannot create the sandbox: %s", err.message);
    } else if (!ri_sandbox_load(sb, c->wasm, c->wasm_len, &err)) {
        rc = ri_fail(err.code == RI_SANDBOX_INVALID_CONFIG ? RI_EXIT_USAGE
                     : err.code == RI_SANDBOX_INSTANCE_DESTROYED ? RI_EXIT_INTERNAL
                                                                 : RI_EXIT_INPUT,
                     cmd, "%s: %s", c->module_path, err.message);
        if (strstr(err.message, "above the memory limit")) ri_fail(0, cmd, "--max-memory BYTES raises the memory limit");
    } else {
        rc = run_loaded(cmd, c, sb, argv, (uint32_t)argc);
    }
    if (sb) {
        ri_sandbox_destroy(sb);
        ri_sandbox_free(sb);
    }
    ri_sandboxes_free(factory);
    free(argv);
    return rc;
}
