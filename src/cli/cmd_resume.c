/* `ri resume IMAGE [--gas N] [--snapshot OUT]`: continues the paused call an image holds
 * (`ri run --pause-on ... --snapshot IMAGE` wrote it) in a fresh sandbox, in this
 * process: restore -> resume -> report -> snapshot. docs/CLI.md has the details. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/host_builtins.h"
#include "cli/jsonw.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include "cli/run_report.h"
#include "cli/progress.h"
#include "cli/run_wasi.h"
#include "cli/wasi_args.h"

#define CMD "ri resume"
#define MAX_HOSTS 16

bool ri_parse_pause_on(const char *list, uint32_t *out) {
    uint32_t mask = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 3 && strncmp(p, "gas", 3) == 0) mask |= RI_SUSPEND_ON_GAS;
        else if (n == 9 && strncmp(p, "interrupt", 9) == 0) mask |= RI_SUSPEND_ON_INTERRUPT;
        else if (n == 5 && strncmp(p, "yield", 5) == 0) mask |= RI_SUSPEND_ON_YIELD;
        else return false;
        if (!comma) break;
        p = comma + 1;
    }
    *out = mask;
    return true;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri resume [OPTIONS] IMAGE\n"
            "\n"
            "Continues the paused call a WSNP v2 image holds (written by `ri run --pause-on\n"
            "... --snapshot IMAGE`, or by a previous `ri resume --snapshot`) in a fresh\n"
            "sandbox: the image embeds its module, the memories, globals, tables, PRNG and\n"
            "the call's frames. The call runs until it finishes, or pauses again (its\n"
            "pause-on mask is the image's). The result is the one the uninterrupted run\n"
            "would have given; gasUsed is the total of every slice.\n"
            "\n"
            "options:\n"
            "  --gas N               gas added for this slice (instructions schedule; default\n"
            "                        --max-gas, 1000000000000); unspent gas carries over\n"
            "  --snapshot OUT        afterwards, write a WSNP v2 image to OUT (atomically): the\n"
            "                        call again if it paused (module embedded), else the final\n"
            "                        state\n"
            "  --embed-module        the final image embeds the module too\n"
            "  --uncompressed        store memory pages without zstd\n"
            "  --max-memory BYTES    the sandbox's memory limit (default 1GiB)\n"
            "  --max-gas N           the config's max_gas (the default --gas)\n"
            "  --timeout MS|none     wall-clock limit of this slice (default none)\n"
            "  --max-call-depth N    as for ri run\n"
            "  --host NAME[,NAME..]  built-in host functions the module imports (as for ri run)\n"
            "  --json | --text       output (JSON when stdout is not a terminal)\n"
            "  -h, --help            show this help\n"
            "\n"
            "The gas schedule and the event timestamp are the image's. Exit status 0 when\n"
            "the call finished or paused again (status \"suspended\"), 1 when it failed.\n"
            "\n"
            "A paused WASI process (`ri run --snapshot OUT COMMAND.wasm ARGS`, paused by its\n"
            "gas or time) continues as in ri run: its arguments and environment are the\n"
            "image's, stdin, stdout and stderr are ri's, the exit status is its exit code,\n"
            "--json/--text print ri's summary on stderr, and with --snapshot OUT a further\n"
            "pause (or the end) is written to OUT with the workspace.\n"
            "\n%s",
            ri_exit_codes_help);
}

typedef struct resume_options {
    const char *image_path;
    bool wasi;                      /* the image holds a WASI process */
    ri_wasi_args args;              /* its arguments and environment (section RARG) */
    const char *snapshot_path;
    ri_snapshot_options snap;
    uint64_t gas;
    ri_sandbox_config config;
    const ri_host_function *hosts[MAX_HOSTS];
    uint32_t nhosts;
    ri_output_mode mode;
} resume_options;

static int number(ri_args *args, const ri_arg *a, uint64_t max, uint64_t *out) {
    const char *v = ri_args_value(args, a);
    if (!v) return ri_usage(CMD, "option %s needs a value", a->name);
    const char *why;
    if (!ri_parse_u64(v, max, out, &why))
        return ri_usage(CMD, "%s: '%s' is %s (expected an integer from 0 to %" PRIu64 ")", a->name, v, why, max);
    return RI_EXIT_OK;
}

static int add_hosts(resume_options *o, const char *list) {
    char name[32];
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0 || n >= sizeof name) return ri_usage(CMD, "--host: '%.*s' is not a built-in", (int)n, p);
        memcpy(name, p, n);
        name[n] = '\0';
        const ri_host_function *h = ri_host_builtin(name);
        if (!h) return ri_usage(CMD, "--host: '%s' is not a built-in host function", name);
        bool dup = false;
        for (uint32_t i = 0; i < o->nhosts; i++) dup = dup || o->hosts[i] == h;
        if (!dup) {
            if (o->nhosts == MAX_HOSTS) return ri_usage(CMD, "--host: too many host functions");
            o->hosts[o->nhosts++] = h;
        }
        if (!comma) return RI_EXIT_OK;
        p = comma + 1;
    }
}

static int parse(int argc, char **argv, resume_options *o, bool *help) {
    memset(o, 0, sizeof *o);
    o->config = ri_sandbox_config_default();
    o->config.max_execution_ms = RI_CLI_NO_TIMEOUT;
    o->config.max_memory_bytes = RI_CLI_DEFAULT_MAX_MEMORY;
    o->config.max_gas = RI_CLI_DEFAULT_MAX_GAS;
    o->snap.format = RI_SNAPSHOT_V2;
    o->mode = RI_OUTPUT_AUTO;
    *help = false;
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        int rc = RI_EXIT_OK;
        uint64_t n;
        if (a.kind == RI_ARG_POSITIONAL) {
            if (o->image_path) return ri_usage(CMD, "unexpected argument '%s'", a.text);
            o->image_path = a.text;
            continue;
        }
        int mode = ri_arg_output_mode(CMD, &a, &o->mode, &rc);
        if (mode < 0) return rc;
        if (mode > 0) continue;
        bool flag = ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h") || ri_arg_is(&a, "--embed-module") ||
                    ri_arg_is(&a, "--uncompressed");
        if (flag && a.value) return ri_usage(CMD, "option %s takes no value", a.name);
        if (ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h")) {
            *help = true;
            return RI_EXIT_OK;
        } else if (ri_arg_is(&a, "--embed-module")) {
            o->snap.include_module = true;
        } else if (ri_arg_is(&a, "--uncompressed")) {
            o->snap.uncompressed = true;
        } else if (ri_arg_is(&a, "--gas")) {
            rc = number(&args, &a, UINT64_MAX, &o->gas);
        } else if (ri_arg_is(&a, "--max-gas")) {
            rc = number(&args, &a, UINT64_MAX, &o->config.max_gas);
        } else if (ri_arg_is(&a, "--timeout")) {
            rc = ri_arg_timeout(CMD, &args, &a, &o->config.max_execution_ms);
        } else if (ri_arg_is(&a, "--max-call-depth")) {
            if ((rc = number(&args, &a, UINT32_MAX, &n)) == RI_EXIT_OK) o->config.max_call_depth = (uint32_t)n;
        } else if (ri_arg_is(&a, "--max-memory")) {
            const char *v = ri_args_value(&args, &a);
            const char *why;
            if (!v) return ri_usage(CMD, "option --max-memory needs a value");
            if (!ri_parse_bytes(v, &o->config.max_memory_bytes, &why))
                return ri_usage(CMD, "--max-memory: '%s' is %s (e.g. 16777216 or 16MiB)", v, why);
        } else if (ri_arg_is(&a, "--host")) {
            const char *v = ri_args_value(&args, &a);
            if (!v) return ri_usage(CMD, "option --host needs a value");
            rc = add_hosts(o, v);
        } else if (ri_arg_is(&a, "--snapshot")) {
            const char *v = ri_args_value(&args, &a);
            if (!v || !*v) return ri_usage(CMD, "option --snapshot needs a FILE");
            o->snapshot_path = v;
        } else {
            return ri_unknown_option(CMD, a.text, usage);
        }
        if (rc != RI_EXIT_OK) return rc;
    }
    if (!o->image_path) return ri_usage(CMD, "missing IMAGE (a WSNP v2 image holding a paused call)");
    return RI_EXIT_OK;
}

/* The image's event timestamp and the paused call's gas schedule: the sandbox's config. */
static int config_from_image(resume_options *o, const uint8_t *data, size_t len) {
    ri_snap_image img;
    ri_snap_error e;
    if (!ri_snap_read(data, len, &img, &e)) return ri_fail(RI_EXIT_INPUT, CMD, "%s: %s", o->image_path, e.message);
    int rc = RI_EXIT_OK;
    ri_snap_call call;
    if (!img.has_frames) {
        rc = ri_fail(RI_EXIT_INPUT, CMD, "%s: the image holds no paused call (nothing to resume)", o->image_path);
    } else if (!img.module) {
        rc = ri_fail(RI_EXIT_INPUT, CMD, "%s: the image does not embed its module", o->image_path);
    } else if (!ri_snap_read_call(&img, &call, &e)) {
        rc = ri_fail(RI_EXIT_INPUT, CMD, "%s: %s", o->image_path, e.message);
    } else {
        o->config.gas_schedule = (ri_gas_schedule)call.gas_schedule;
        o->wasi = img.has_wasi;
        char why[200];
        if (o->wasi && !ri_wasi_args_read(&img, data, &o->args, why, sizeof why))
            rc = ri_fail(RI_EXIT_INPUT, CMD, "%s: %s", o->image_path, why);
        o->config.event_timestamp = img.meta.event_timestamp;
        o->config.has_event_timestamp = true;
        ri_snap_call_free(&call);
    }
    ri_snap_image_free(&img);
    return rc;
}

static void print_result(const resume_options *o, const ri_sandbox_result *r, ri_sandbox *sb, bool json,
                         const char *snapshot_note, size_t snapshot_bytes) {
    bool paused = !r->ok && r->error.code == RI_SANDBOX_SUSPENDED_CALL;
    if (json) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "ok");
        ri_jsonw_bool(&w, r->ok || paused);
        ri_jsonw_key(&w, "image");
        ri_jsonw_str(&w, o->image_path);
        ri_jsonw_key(&w, "status");
        ri_jsonw_str(&w, ri_sandbox_status_name(ri_sandbox_status_of(sb)));
        ri_jsonw_key(&w, "value");
        if (r->ok && r->value_json) ri_jsonw_raw(&w, r->value_json);
        else ri_jsonw_null(&w);
        ri_jsonw_key(&w, "error");
        if (r->ok) {
            ri_jsonw_null(&w);
        } else {
            ri_jsonw_object(&w);
            ri_jsonw_key(&w, "code");
            ri_jsonw_str(&w, ri_sandbox_errcode_name(r->error.code));
            ri_jsonw_key(&w, "message");
            ri_jsonw_str(&w, r->error.message);
            ri_jsonw_end(&w);
        }
        ri_jsonw_key(&w, "gasUsed");
        ri_jsonw_u64(&w, r->gas_used);
        ri_jsonw_key(&w, "durationMs");
        ri_jsonw_ms(&w, r->duration_ms);
        ri_jsonw_key(&w, "snapshot");
        if (snapshot_note) {
            ri_jsonw_object(&w);
            ri_jsonw_key(&w, "path");
            ri_jsonw_str(&w, o->snapshot_path);
            ri_jsonw_key(&w, "outcome");
            ri_jsonw_str(&w, snapshot_note);
            ri_jsonw_key(&w, "bytes");
            ri_jsonw_u64(&w, snapshot_bytes);
            ri_jsonw_end(&w);
        } else {
            ri_jsonw_null(&w);
        }
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
        return;
    }
    char buf[1024];
    ri_printf_safe(stdout, "ri resume %s\n", o->image_path);
    if (r->ok) {
        ri_printf_safe(stdout, "  result     %s\n", r->value_json ? r->value_json : "(no value)");
    } else {
        ri_describe_error(&r->error, buf, sizeof buf);
        ri_printf_safe(stdout, "  %-10s %s\n", paused ? "PAUSED" : "FAILED", buf);
    }
    printf("  gas        %" PRIu64 " in all, status %s\n", r->gas_used,
           ri_sandbox_status_name(ri_sandbox_status_of(sb)));
    if (snapshot_note) ri_printf_safe(stdout, "  snapshot   %s: %s (%zu bytes)\n", o->snapshot_path, snapshot_note, snapshot_bytes);
}

int ri_cmd_resume(int argc, char **argv) {
    resume_options o;
    bool help;
    int rc = parse(argc, argv, &o, &help);
    if (rc != RI_EXIT_OK) return rc;
    if (help) {
        usage(stdout);
        return ri_finish_output(CMD, RI_EXIT_OK);
    }
    char why[256];
    uint8_t *data = NULL;
    size_t len = 0;
    rc = ri_read_file(o.image_path, RI_SNAPSHOT_FILE_MAX, &data, &len, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_finish_output(CMD, ri_fail(rc, CMD, "cannot read '%s': %s", o.image_path, why));
    if ((rc = config_from_image(&o, data, len)) != RI_EXIT_OK) {
        free(data);
        return ri_finish_output(CMD, rc);
    }
    ri_host_function hosts[MAX_HOSTS];
    for (uint32_t i = 0; i < o.nhosts; i++) hosts[i] = *o.hosts[i];
    o.config.host_functions = o.nhosts ? hosts : NULL;
    o.config.nhost_functions = o.nhosts;
    ri_wasi_config wasi;
    memset(&wasi, 0, sizeof wasi);
    if (o.wasi) { /* the process's arguments again, and ri's stdio as in ri run */
        wasi.argv = (const char *const *)o.args.argv;
        wasi.argc = o.args.argc;
        wasi.env = (const char *const *)o.args.env;
        wasi.nenv = o.args.nenv;
        ri_wasi_cli_stdio(&wasi);
        o.config.enable_wasi = true;
        o.config.wasi = &wasi;
    }
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_sandbox *sb = factory ? ri_sandbox_create(factory, &o.config, &err) : NULL;
    if (!sb) {
        free(data);
        ri_wasi_args_free(&o.args);
        ri_sandboxes_free(factory);
        return ri_finish_output(CMD, ri_fail(factory && err.code == RI_SANDBOX_INVALID_CONFIG ? RI_EXIT_USAGE
                                                                                              : RI_EXIT_INTERNAL,
                                             CMD, "cannot create the sandbox: %s", factory ? err.message : "out of memory"));
    }
    ri_progress *restoring = ri_progress_start("restoring the snapshot", 0);
    bool restored = ri_sandbox_restore(sb, data, len, &err);
    ri_progress_finish(restoring);
    if (o.wasi && restored) {
        ri_sandbox_result r = ri_sandbox_resume(sb, o.gas);
        ri_wasi_outcome wo = {CMD, o.image_path, o.snapshot_path, o.snap.uncompressed, wasi.argv, wasi.argc, wasi.env,
                              wasi.nenv, o.mode};
        rc = ri_wasi_finish(&wo, sb, &r);
        ri_sandbox_result_free(&r);
    } else if (!restored) {
        rc = ri_fail(RI_EXIT_INPUT, CMD, "%s: %s", o.image_path, err.message);
    } else {
        ri_sandbox_result r = ri_sandbox_resume(sb, o.gas);
        bool paused = !r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL;
        rc = r.ok || paused ? RI_EXIT_OK : RI_EXIT_EXEC;
        const char *note = NULL;
        size_t bytes = 0;
        if (o.snapshot_path && rc == RI_EXIT_OK) {
            ri_snapshot_options so = o.snap;
            if (paused) so.include_module = true; /* the next `ri resume` needs nothing else */
            uint8_t *out = NULL;
            ri_progress *taking = ri_progress_start("taking the snapshot", 0);
            bool taken = ri_sandbox_snapshot_with(sb, &so, &out, &bytes, &err);
            ri_progress_finish(taking);
            if (!taken) {
                rc = ri_fail(RI_EXIT_EXEC, CMD, "--snapshot %s: %s", o.snapshot_path, err.message);
                note = "refused";
            } else {
                int wrc = ri_write_file_atomic(o.snapshot_path, out, bytes, why, sizeof why);
                free(out);
                if (wrc != RI_EXIT_OK) {
                    rc = ri_fail(wrc, CMD, "--snapshot: cannot write '%s': %s", o.snapshot_path, why);
                    note = "write failed";
                } else {
                    note = "written";
                }
            }
        }
        print_result(&o, &r, sb, ri_output_is_json(o.mode), note, bytes);
        if (rc == RI_EXIT_EXEC && !note) {
            char buf[1024];
            ri_describe_error(&r.error, buf, sizeof buf);
            ri_fail(rc, CMD, "the call failed: %s", buf);
        }
        ri_sandbox_result_free(&r);
    }
    free(data);
    ri_wasi_args_free(&o.args);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    return ri_finish_output(CMD, rc);
}
