/* `ri run MODULE.wasm FUNCTION [PAYLOAD]`: one sandbox, from options to exit status.
 * Steps: options -> (snapshot file) -> module file -> create -> load -> restore ->
 * determinism check -> executions -> snapshot -> report. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ri/sandbox.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/host_builtins.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include "cli/run_report.h"
#include "cli/run_wasi.h"
#include "cli/progress.h"
#include "cli/run_lang.h"

#define CMD "ri run"
/* The largest WSNP v1 file (13 bytes and two 4 GiB sections); a v2 file of a 4 GiB
 * memory stored raw is about as large. */
#define REPEAT_MAX 100000u
#define MAX_HOSTS 16

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri run [OPTIONS] MODULE.wasm FUNCTION [PAYLOAD]\n"
            "       ri run [OPTIONS] COMMAND.wasm [ARGS...]      (a WASI command)\n"
            "\n"
            "Creates a sandbox, loads MODULE.wasm, and executes its exported FUNCTION; prints\n"
            "the result and the metrics. PAYLOAD is JSON text: null, a number or an array of\n"
            "numbers are the arguments (the direct convention; missing ones are 0); any other\n"
            "JSON (an object, a string, ...) is written into the module's memory through its\n"
            "__alloc export and FUNCTION(ptr, len) returns a packed pointer and length to a\n"
            "JSON result (the JSON convention). A negative number may be given as is: `-5`.\n"
            "The module may import only env.memory, env.__get_time, env.__get_random and the\n"
            "host functions given with --host.\n"
            "\n"
            "A WASI command (a module that imports wasi_snapshot_preview1 and exports _start)\n"
            "runs as a program: ARGS are its argv[1..] (argv[0] is the module's file name), so\n"
            "ri's OPTIONS must come BEFORE the module; its stdin, stdout and stderr are ri's;\n"
            "ri's exit status is its exit code (0 when _start returns, 255 for a code above\n"
            "255), or 1 when it trapped or hit a limit (the message on stderr). Nothing else\n"
            "is printed, unless --json or --text is given: then ri's summary goes to stderr.\n"
            "Its files live in a workspace in memory, which starts empty and is dropped after\n"
            "the run; the program never touches host files.\n"
            "  --env KEY=VALUE       an environment variable for it (repeatable; none by default)\n"
            "  --dir HOST[::GUEST]   copy the host directory HOST into the workspace at GUEST\n"
            "                        before the run (default: HOST under /, `--dir data` is\n"
            "                        /data; `--dir .::/` copies the current directory to the\n"
            "                        root). Regular files, directories and symlinks (as\n"
            "                        symlinks); a device, FIFO or socket is refused. Repeatable\n"
            "  --dir-writeback       after the run (whatever its outcome), make each HOST what\n"
            "                        the workspace holds at GUEST: new and changed files are\n"
            "                        written atomically (temporary file, fsync, rename), and\n"
            "                        files and directories the program removed are removed from\n"
            "                        HOST. Without it HOST is never written. Also --write-back\n"
            "  --timestamp, --seed, --max-memory, --max-gas, --timeout, --gas-schedule and\n"
            "  --max-call-depth apply as below (the time is the WASI realtime clock's base).\n"
            "\n"
            "sandbox configuration:\n"
            "  --timestamp MS|now    the event time __get_time returns, in ms since the epoch\n"
            "                        (default 0, or the --restore snapshot's: the sandbox\n"
            "                        never reads the clock). `now` reads the clock and is\n"
            "                        therefore NOT deterministic; the value used is printed,\n"
            "                        so a run can be replayed.\n"
            "  --seed N              PRNG seed for __get_random, 0..4294967295 (default 0)\n"
            "  --max-memory BYTES    memory limit; digits, optionally KiB, MiB or GiB\n"
            "                        (default 1GiB)\n"
            "  --max-gas N           gas per execution (default 1000000000000)\n"
            "  --timeout MS|none     wall-clock limit per execution in ms (default none)\n"
            "  --gas-schedule S      instructions: every instruction costs 1 and every import\n"
            "                        call 1 more (the default); host-calls: only import calls\n"
            "                        cost 1, as in the original sandbox library\n"
            "  --max-call-depth N    call frames before `call stack exhausted` (default: the\n"
            "                        engine's, 10000)\n"
            "  --host NAME[,NAME..]  give the module these built-in host functions, as\n"
            "                        env.NAME (repeatable)\n"
            "\n"
            "built-in host functions (they write to stderr only):\n"
            "%s"
            "\n"
            "what to do:\n"
            "  --restore FILE        restore a WSNP snapshot (v1 or v2) into the sandbox before\n"
            "                        executing; a v2 image that embeds its module replaces\n"
            "                        MODULE.wasm's if they differ\n"
            "  --image-module        with --restore: run the module the image embeds; then\n"
            "                        MODULE.wasm is not given (FUNCTION [PAYLOAD] only)\n"
            "  --repeat N            execute N times in the same sandbox (default 1, at most\n"
            "                        %u); stops at the first failure\n"
            "  --check-determinism   before executing, run FUNCTION twice from the same state\n"
            "                        and compare result, gas and snapshot; the sandbox is left\n"
            "                        as it was\n"
            "  --snapshot FILE       after the executions, write a WSNP snapshot to FILE\n"
            "                        (atomically; not written when an execution failed)\n"
            "  --format v1|v2        the snapshot's format (default v2: everything, zstd;\n"
            "                        v1: the original's, memory only, byte-exact)\n"
            "  --embed-module        v2: put MODULE.wasm into the snapshot, so that the file\n"
            "                        alone can be restored anywhere\n"
            "  --uncompressed        v2: store memory pages without zstd\n"
            "  --pause-on LIST       gas, interrupt, yield (comma-separated): the execution\n"
            "                        pauses instead of failing when its gas runs out\n"
            "                        (--gas-schedule instructions), its time is up\n"
            "                        (--timeout) or a host function yields; with\n"
            "                        --snapshot the image holds the paused call (its module\n"
            "                        embedded) and `ri resume IMAGE` continues it. A paused\n"
            "                        execution exits 0 with status \"suspended\"\n"
            "  --gas N               the same as --max-gas (a paused run's first slice)\n"
            "\n"
            "output:\n"
            "  --json                a JSON document (the default when stdout is not a\n"
            "                        terminal); keys in a fixed order: ok, sandbox, module,\n"
            "                        function, payload, config, restoredFrom, determinism,\n"
            "                        executions, value, error, metrics, status, snapshot\n"
            "  --text                a readable summary (the default on a terminal)\n"
            "  -h, --help            show this help\n"
            "\n"
            "The document is printed when the sandbox ran (exit status 0 or 1); for a usage,\n"
            "input or internal error (2, 3, 4) only a message on stderr is.\n"
            "\n%s",
            ri_host_builtins_help, REPEAT_MAX, ri_exit_codes_help);
}

typedef struct run_options {
    const char *module_path;
    const char *function;
    const char *payload;
    ri_sandbox_config config;
    const char *timestamp_arg;        /* NULL if not given */
    const char *restore_path;
    const char *snapshot_path;
    ri_snapshot_options snapshot_options;
    bool format_given;
    uint64_t repeat;
    bool check_determinism;
    ri_output_mode mode;
    const ri_host_function *hosts[MAX_HOSTS];
    const char *host_names[MAX_HOSTS];
    uint32_t nhosts;
    uint32_t pause_on;                /* RI_SUSPEND_ON_* (--pause-on) */
    bool image_module;                /* --image-module: the --restore image's module, no MODULE.wasm */
    bool repeat_given;
    /* A WASI command (MODULE imports wasi_snapshot_preview1 and exports _start). */
    bool is_wasi;
    uint8_t *wasi_wasm;               /* its bytes, read when the module was met */
    /* The first positional's bytes when it is not a WASI command: MODULE.wasm, read once. */
    uint8_t *first_wasm;
    size_t first_wasm_len;
    ri_wasi_command wasi;             /* --env, --dir, --dir-writeback and the program's args */
} run_options;

static void free_options(run_options *o) {
    free(o->wasi_wasm);
    free(o->first_wasm);
    for (uint32_t i = 0; i < o->wasi.ndirs; i++) {
        free((char *)o->wasi.dirs[i].host);
        free(o->wasi.dirs[i].guest);
    }
}

/* The first positional is MODULE.wasm: a WASI command takes everything after it as its
 * arguments. A module that cannot be read is not one (the usual path reports it). */
static bool wasi_module(run_options *o, const char *path) {
    uint8_t *wasm = NULL;
    size_t len = 0;
    char why[256];
    if (ri_read_module(path, &wasm, &len, why, sizeof why) != RI_EXIT_OK) return false;
    if (!ri_is_wasi_command(wasm, len)) {
        o->first_wasm = wasm; /* MODULE.wasm: kept, not read again */
        o->first_wasm_len = len;
        return false;
    }
    o->is_wasi = true;
    o->wasi_wasm = wasm;
    o->wasi.module_path = path;
    o->wasi.wasm = wasm;
    o->wasi.wasm_len = len;
    return true;
}

/* --env K=V, --dir HOST[::GUEST], --dir-writeback: the WASI command's options. */
static int wasi_option(run_options *o, ri_args *args, const ri_arg *a) {
    ri_wasi_command *w = &o->wasi;
    if (ri_arg_is(a, "--dir-writeback") || ri_arg_is(a, "--write-back")) {
        if (a->value) return ri_usage(CMD, "option %s takes no value", a->name);
        w->write_back = true;
        return RI_EXIT_OK;
    }
    const char *v = ri_args_value(args, a);
    if (!v) return ri_usage(CMD, "option %s needs a value", a->name);
    if (ri_arg_is(a, "--env")) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v) return ri_usage(CMD, "--env: '%s' is not KEY=VALUE", v);
        if (w->nenv == RI_WASI_MAX_ENV) return ri_usage(CMD, "--env: more than %u variables", RI_WASI_MAX_ENV);
        w->env[w->nenv++] = v;
        return RI_EXIT_OK;
    }
    if (w->ndirs == RI_WASI_MAX_DIRS) return ri_usage(CMD, "--dir: more than %u directories", RI_WASI_MAX_DIRS);
    int rc = ri_wasi_dir_parse(CMD, v, &w->dirs[w->ndirs]);
    if (rc == RI_EXIT_OK) w->ndirs++;
    return rc;
}

/* The options that have no meaning for a WASI command are refused, not ignored. */
static int check_wasi_options(run_options *o) {
    const char *bad = o->restore_path ? "--restore"
                      : o->image_module ? "--image-module"
                      : o->repeat_given ? "--repeat"
                      : o->check_determinism ? "--check-determinism"
                      : o->nhosts ? "--host"
                      : o->snapshot_options.format == RI_SNAPSHOT_V1 ? "--format v1"
                          : NULL;
    if (bad)
        return ri_usage(CMD, "%s does not apply to a WASI command (%s imports wasi_snapshot_preview1 and exports _start)",
                        bad, o->wasi.module_path);
    if (o->wasi.write_back && o->wasi.ndirs == 0) return ri_usage(CMD, "--dir-writeback needs --dir HOST[::GUEST]");
    if ((o->pause_on || o->snapshot_options.uncompressed || o->snapshot_options.include_module) && !o->snapshot_path)
        return ri_usage(CMD, "--pause-on, --uncompressed and --embed-module need --snapshot FILE for a WASI command "
                        "(the paused process goes there, for ri resume)");
    o->wasi.snapshot_path = o->snapshot_path;
    o->wasi.uncompressed = o->snapshot_options.uncompressed;
    /* A WASI run with --snapshot pauses where it would fail for gas or time, so that
     * `ri resume` can continue it. */
    o->wasi.pause_on = o->pause_on ? o->pause_on : RI_SUSPEND_ON_GAS | RI_SUSPEND_ON_INTERRUPT;
    return RI_EXIT_OK;
}

/* --host a,b,c: each name once, each a built-in. */
static int add_hosts(run_options *o, const char *list) {
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char name[32];
        if (n == 0 || n >= sizeof name)
            return ri_usage(CMD, "--host: '%.*s' is not a built-in host function (see --help)", (int)n, p);
        memcpy(name, p, n);
        name[n] = '\0';
        const ri_host_function *h = ri_host_builtin(name);
        if (!h) return ri_usage(CMD, "--host: '%s' is not a built-in host function (see --help)", name);
        bool dup = false;
        for (uint32_t i = 0; i < o->nhosts; i++) dup = dup || o->hosts[i] == h;
        if (!dup) {
            if (o->nhosts == MAX_HOSTS) return ri_usage(CMD, "--host: too many host functions");
            o->hosts[o->nhosts] = h;
            o->host_names[o->nhosts++] = h->name;
        }
        if (!comma) return RI_EXIT_OK;
        p = comma + 1;
    }
}

/* A numeric option's value; a usage error names the option and the expected form. */
static int number_option(ri_args *args, const ri_arg *a, uint64_t max, uint64_t *out) {
    const char *v = ri_args_value(args, a);
    if (!v) return ri_usage(CMD, "option %s needs a value", a->name);
    const char *why;
    if (!ri_parse_u64(v, max, out, &why))
        return ri_usage(CMD, "%s: '%s' is %s (expected an integer from 0 to %" PRIu64 ")", a->name, v, why, max);
    return RI_EXIT_OK;
}

/* --timestamp MS or now. `now` is read here, once, so every execution sees the same. */
static int timestamp_option(run_options *o) {
    if (strcmp(o->timestamp_arg, "now") == 0) {
        struct timespec ts;
        if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return ri_fail(RI_EXIT_INTERNAL, CMD, "cannot read the clock");
        o->config.event_timestamp = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    } else {
        const char *why;
        if (!ri_parse_i64(o->timestamp_arg, &o->config.event_timestamp, &why))
            return ri_usage(CMD, "--timestamp: '%s' is %s (expected milliseconds since the epoch, or now)",
                            o->timestamp_arg, why);
    }
    o->config.has_event_timestamp = true;
    return RI_EXIT_OK;
}

static int parse_options(int argc, char **argv, run_options *o, bool *help) {
    memset(o, 0, sizeof *o);
    o->config = ri_cli_config();
    o->repeat = 1;
    o->mode = RI_OUTPUT_AUTO;
    *help = false;
    const char *positional[3] = {NULL, NULL, NULL};
    int npositional = 0;
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        int rc = RI_EXIT_OK;
        uint64_t n;
        if (a.kind == RI_ARG_POSITIONAL) {
            if (npositional == 0 && !o->image_module && wasi_module(o, a.text)) {
                o->wasi.args = argv + args.next;
                o->wasi.nargs = argc - args.next;
                break;
            }
            if (npositional == 3) return ri_usage(CMD, "unexpected argument '%s' (PAYLOAD is one JSON text: quote it)", a.text);
            positional[npositional++] = a.text;
            continue;
        }
        bool is_flag = ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h") || ri_arg_is(&a, "--json") ||
                       ri_arg_is(&a, "--text") || ri_arg_is(&a, "--check-determinism") ||
                       ri_arg_is(&a, "--embed-module") || ri_arg_is(&a, "--uncompressed") ||
                       ri_arg_is(&a, "--image-module");
        if (is_flag && a.value) return ri_usage(CMD, "option %s takes no value", a.name);
        if (ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h")) {
            *help = true;
            return RI_EXIT_OK;
        } else if (ri_arg_output_mode(CMD, &a, &o->mode, &rc) != 0) {
            if (rc != RI_EXIT_OK) return rc;
        } else if (ri_arg_is(&a, "--check-determinism")) {
            o->check_determinism = true;
        } else if (ri_arg_is(&a, "--embed-module")) {
            o->snapshot_options.include_module = true;
        } else if (ri_arg_is(&a, "--uncompressed")) {
            o->snapshot_options.uncompressed = true;
        } else if (ri_arg_is(&a, "--format")) {
            const char *v = ri_args_value(&args, &a);
            if (!v) return ri_usage(CMD, "option --format needs a value");
            if (strcmp(v, "v1") == 0 || strcmp(v, "1") == 0)
                o->snapshot_options.format = RI_SNAPSHOT_V1;
            else if (strcmp(v, "v2") == 0 || strcmp(v, "2") == 0)
                o->snapshot_options.format = RI_SNAPSHOT_V2;
            else
                return ri_usage(CMD, "--format: '%s' is not v1 or v2", v);
            o->format_given = true;
        } else if (ri_arg_is(&a, "--max-memory")) {
            const char *v = ri_args_value(&args, &a);
            const char *why;
            if (!v) return ri_usage(CMD, "option --max-memory needs a value");
            if (!ri_parse_bytes(v, &o->config.max_memory_bytes, &why))
                return ri_usage(CMD, "--max-memory: '%s' is %s (e.g. 16777216 or 16MiB)", v, why);
        } else if (ri_arg_is(&a, "--pause-on")) {
            const char *v = ri_args_value(&args, &a);
            if (!v) return ri_usage(CMD, "option --pause-on needs a value");
            if (!ri_parse_pause_on(v, &o->pause_on)) return ri_usage(CMD, "--pause-on: '%s' is not a list of gas, interrupt, yield", v);
        } else if (ri_arg_is(&a, "--max-gas") || ri_arg_is(&a, "--gas")) {
            rc = number_option(&args, &a, UINT64_MAX, &o->config.max_gas);
        } else if (ri_arg_is(&a, "--timeout")) {
            rc = ri_arg_timeout(CMD, &args, &a, &o->config.max_execution_ms);
        } else if (ri_arg_is(&a, "--seed")) {
            if ((rc = number_option(&args, &a, UINT32_MAX, &n)) == RI_EXIT_OK) o->config.deterministic_seed = (uint32_t)n;
        } else if (ri_arg_is(&a, "--max-call-depth")) {
            if ((rc = number_option(&args, &a, UINT32_MAX, &n)) == RI_EXIT_OK) o->config.max_call_depth = (uint32_t)n;
        } else if (ri_arg_is(&a, "--repeat")) {
            o->repeat_given = true;
            if ((rc = number_option(&args, &a, REPEAT_MAX, &o->repeat)) == RI_EXIT_OK && o->repeat == 0)
                return ri_usage(CMD, "--repeat: must be at least 1");
        } else if (ri_arg_is(&a, "--timestamp")) {
            if (!(o->timestamp_arg = ri_args_value(&args, &a))) return ri_usage(CMD, "option --timestamp needs a value");
            rc = timestamp_option(o);
        } else if (ri_arg_is(&a, "--gas-schedule")) {
            const char *v = ri_args_value(&args, &a);
            if (!v) return ri_usage(CMD, "option --gas-schedule needs a value");
            if (strcmp(v, "host-calls") == 0)
                o->config.gas_schedule = RI_GAS_HOST_CALLS;
            else if (strcmp(v, "instructions") == 0)
                o->config.gas_schedule = RI_GAS_INSTRUCTIONS;
            else
                return ri_usage(CMD, "--gas-schedule: '%s' is not host-calls or instructions", v);
        } else if (ri_arg_is(&a, "--host")) {
            const char *v = ri_args_value(&args, &a);
            if (!v) return ri_usage(CMD, "option --host needs a value");
            rc = add_hosts(o, v);
        } else if (ri_arg_is(&a, "--restore") || ri_arg_is(&a, "--snapshot")) {
            const char *v = ri_args_value(&args, &a);
            if (!v || !*v) return ri_usage(CMD, "option %s needs a FILE", a.name);
            *(ri_arg_is(&a, "--restore") ? &o->restore_path : &o->snapshot_path) = v;
        } else if (ri_arg_is(&a, "--image-module")) {
            o->image_module = true;
        } else if (ri_arg_is(&a, "--env") || ri_arg_is(&a, "--dir") || ri_arg_is(&a, "--dir-writeback") ||
                   ri_arg_is(&a, "--write-back")) {
            rc = wasi_option(o, &args, &a);
        } else {
            return ri_unknown_option(CMD, a.text, usage);
        }
        if (rc != RI_EXIT_OK) return rc;
    }
    if (o->is_wasi) return check_wasi_options(o);
    if (o->wasi.nenv || o->wasi.ndirs || o->wasi.write_back)
        return ri_usage(CMD, "--env, --dir and --dir-writeback are for WASI commands (a module that imports "
                        "wasi_snapshot_preview1 and exports _start), given before MODULE.wasm");
    ri_snapshot_options *so = &o->snapshot_options;
    if (so->format == RI_SNAPSHOT_DEFAULT) so->format = RI_SNAPSHOT_V2; /* issue 5: v2 by default */
    if ((o->format_given || so->include_module || so->uncompressed) && !o->snapshot_path)
        return ri_usage(CMD, "--format, --embed-module and --uncompressed describe the --snapshot FILE: give one");
    if (so->format == RI_SNAPSHOT_V1 && (so->include_module || so->uncompressed))
        return ri_usage(CMD, "--embed-module and --uncompressed need --format v2 (WSNP v1 holds memory only)");
    if (o->image_module) {
        /* The module is the one the --restore image embeds: FUNCTION [PAYLOAD] only. */
        if (!o->restore_path) return ri_usage(CMD, "--image-module needs --restore FILE (the image holding the module)");
        if (npositional < 1) return ri_usage(CMD, "missing FUNCTION (the exported function to execute)");
        if (npositional > 2)
            return ri_usage(CMD, "unexpected argument '%s' (with --image-module: FUNCTION [PAYLOAD])", positional[2]);
        o->module_path = o->restore_path;
        o->function = positional[0];
        o->payload = npositional == 2 ? positional[1] : NULL;
    } else {
        if (npositional < 1) return ri_usage(CMD, "missing MODULE.wasm and FUNCTION");
        if (npositional < 2) return ri_usage(CMD, "missing FUNCTION (the exported function to execute)");
        o->module_path = positional[0];
        o->function = positional[1];
        o->payload = npositional == 3 ? positional[2] : NULL;
    }
    if (o->payload) {
        json_error_t jerr;
        json_t *v = json_loads(o->payload, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        if (!v)
            return ri_usage(CMD, "PAYLOAD cannot be parsed as JSON: %s (line %d, column %d); a string needs quotes: '\"text\"'",
                            jerr.text, jerr.line, jerr.column);
        json_decref(v);
    }
    return RI_EXIT_OK;
}

/* Without --timestamp, the --restore snapshot's timestamp; the snapshot file is checked
 * here too, so a bad file is reported before anything runs. */
static int resolve_timestamp(run_options *o, const uint8_t *snap, size_t snap_len, const char **source) {
    if (o->timestamp_arg) {
        *source = strcmp(o->timestamp_arg, "now") == 0 ? "now" : "option";
        return RI_EXIT_OK;
    }
    if (!snap) {
        /* Deterministic by default: the epoch, said in the output ("default"). */
        o->config.event_timestamp = 0;
        o->config.has_event_timestamp = true;
        *source = "default";
        return RI_EXIT_OK;
    }
    ri_sandbox_error err;
    int version = ri_snapshot_version(snap, snap_len, &err);
    if (version == 0) return ri_fail(RI_EXIT_INPUT, CMD, "--restore %s: %s", o->restore_path, err.message);
    if (version == 2) {
        ri_snap_image image;
        ri_snap_error e;
        if (!ri_snap_read(snap, snap_len, &image, &e))
            return ri_fail(RI_EXIT_INPUT, CMD, "--restore %s: %s", o->restore_path, e.message);
        o->config.event_timestamp = image.meta.event_timestamp;
        ri_snap_image_free(&image);
    } else {
        /* v1: seed 000's checks and messages, the detail apart. */
        ri_wsnp_view view;
        if (!ri_wsnp_parse(snap, snap_len, &view, &err)) {
            if (*view.detail)
                return ri_fail(RI_EXIT_INPUT, CMD, "--restore %s: %s (%s)", o->restore_path, err.message, view.detail);
            return ri_fail(RI_EXIT_INPUT, CMD, "--restore %s: %s", o->restore_path, err.message);
        }
        o->config.event_timestamp = view.timestamp;
    }
    o->config.has_event_timestamp = true;
    *source = "snapshot";
    return RI_EXIT_OK;
}

/* Exit status for a failed execution or sandbox operation. */
static int exit_for(ri_sandbox_errcode code) {
    switch (code) {
    case RI_SANDBOX_INVALID_MODULE: return RI_EXIT_INPUT;
    case RI_SANDBOX_INVALID_CONFIG: return RI_EXIT_USAGE;
    case RI_SANDBOX_INSTANCE_DESTROYED: return RI_EXIT_INTERNAL; /* ri never destroys early */
    default: return RI_EXIT_EXEC;
    }
}

/* After a missing_export trap: name the functions there are, which is what one wants. */
static void hint_exports(const uint8_t *wasm, size_t len) {
    ri_error err;
    ri_module *m = ri_module_load(wasm, len, NULL, &err);
    if (!m) return;
    fflush(stdout);
    fputs("ri run: exported functions:", stderr);
    int shown = 0;
    for (uint32_t i = 0; i < ri_module_export_count(m); i++) {
        ri_export_info ex = ri_module_export(m, i);
        if (ex.type.kind != RI_EXTERN_FUNC) continue;
        fputs(shown++ ? ", " : " ", stderr);
        ri_put_safe(stderr, ex.name, ex.name_len);
    }
    fputs(shown ? "\n" : " none\n", stderr);
    ri_module_free(m);
}

/* Executions, stopping at the first failure. Returns RI_EXIT_OK or RI_EXIT_INTERNAL. */
static int execute_all(ri_sandbox *sb, const run_options *o, ri_run_report *r) {
    r->records = calloc((size_t)o->repeat, sizeof *r->records);
    if (!r->records) return ri_fail(RI_EXIT_INTERNAL, CMD, "out of memory for %" PRIu64 " results", o->repeat);
    for (uint64_t i = 0; i < o->repeat; i++) {
        ri_sandbox_result res = ri_sandbox_execute(sb, o->function, o->payload);
        if (!res.ok && res.error.code == RI_SANDBOX_SUSPENDED_CALL) { /* paused: not a failure */
            r->paused = true;
            r->error = res.error;
            r->paused_gas_used = res.gas_used;
            ri_sandbox_result_free(&res);
            return RI_EXIT_OK;
        }
        if (!res.ok) {
            r->failed = true;
            r->error = res.error;
            ri_sandbox_result_free(&res);
            return RI_EXIT_OK;
        }
        ri_run_record *rec = &r->records[r->nrecords];
        /* A copy: the library's buffer is released with its result. */
        rec->value_json = res.value_json ? strdup(res.value_json) : NULL;
        bool lost = res.value_json && !rec->value_json;
        rec->gas_used = res.gas_used;
        rec->duration_ms = res.duration_ms;
        rec->metrics = res.metrics;
        ri_sandbox_result_free(&res);
        if (lost) return ri_fail(RI_EXIT_INTERNAL, CMD, "out of memory keeping a result");
        r->nrecords++;
    }
    return RI_EXIT_OK;
}

static int take_snapshot(ri_sandbox *sb, const run_options *o, ri_run_report *r) {
    r->snapshot_path = o->snapshot_path;
    r->snapshot_format = o->snapshot_options.format == RI_SNAPSHOT_V1 ? 1 : 2;
    r->snapshot_module = o->snapshot_options.include_module;
    if (r->failed || (r->determinism_checked && !r->determinism_ok)) {
        r->snapshot = RI_SNAP_SKIPPED;
        return RI_EXIT_OK;
    }
    uint8_t *bytes = NULL;
    size_t len = 0;
    ri_snapshot_options so = o->snapshot_options;
    if (r->paused) { /* `ri resume IMAGE` needs nothing else */
        so.include_module = true;
        r->snapshot_module = true;
    }
    ri_progress *taking = ri_progress_start("taking the snapshot", 0);
    bool taken = ri_sandbox_snapshot_with(sb, &so, &bytes, &len, &r->snapshot_error);
    ri_progress_finish(taking);
    if (!taken) {
        r->snapshot = RI_SNAP_REFUSED;
        return exit_for(r->snapshot_error.code);
    }
    int rc = ri_write_file_atomic(o->snapshot_path, bytes, len, r->snapshot_write_error,
                                  sizeof r->snapshot_write_error);
    free(bytes);
    if (rc != RI_EXIT_OK) {
        r->snapshot = RI_SNAP_WRITE_FAILED;
        return rc;
    }
    r->snapshot = RI_SNAP_WRITTEN;
    r->snapshot_bytes = len;
    return RI_EXIT_OK;
}

/* Runs the sandbox part: everything after the files are read. */
static int run_sandbox(const run_options *o, const uint8_t *wasm, size_t wasm_len, const uint8_t *snap,
                       size_t snap_len, const char *ts_source) {
    ri_host_function hosts[MAX_HOSTS];
    for (uint32_t i = 0; i < o->nhosts; i++) hosts[i] = *o->hosts[i];
    ri_sandbox_config config = o->config;
    config.host_functions = o->nhosts ? hosts : NULL;
    config.nhost_functions = o->nhosts;

    ri_sandboxes *factory = ri_sandboxes_new();
    if (!factory) return ri_fail(RI_EXIT_INTERNAL, CMD, "out of memory creating the sandbox factory");
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    ri_sandbox *sb = ri_sandbox_create(factory, &config, &err);
    if (!sb) {
        int rc = err.code == RI_SANDBOX_INVALID_CONFIG ? RI_EXIT_USAGE : RI_EXIT_INTERNAL;
        ri_fail(rc, CMD, "cannot create the sandbox: %s", err.message);
        ri_sandboxes_free(factory);
        return rc;
    }

    int rc = RI_EXIT_OK;
    ri_run_report r;
    memset(&r, 0, sizeof r);
    if (o->pause_on && !ri_sandbox_set_pause_on(sb, o->pause_on, &err)) {
        rc = RI_EXIT_USAGE;
        ri_fail(rc, CMD, "--pause-on: %s", err.message);
        goto done;
    }
    /* With --image-module there is nothing to load: restoring the image (which must embed
     * its module) into the created sandbox loads it. */
    if (wasm && !ri_sandbox_load(sb, wasm, wasm_len, &err)) {
        rc = err.code == RI_SANDBOX_INVALID_CONFIG ? RI_EXIT_USAGE
             : err.code == RI_SANDBOX_INSTANCE_DESTROYED ? RI_EXIT_INTERNAL
                                                         : RI_EXIT_INPUT;
        ri_fail(rc, CMD, "%s: %s", o->module_path, err.message);
        if (strstr(err.message, "above the memory limit")) ri_fail(0, CMD, "--max-memory BYTES raises the memory limit");
        goto done;
    }
    ri_progress *restoring = snap ? ri_progress_start("restoring the snapshot", 0) : NULL;
    bool restored = !snap || ri_sandbox_restore(sb, snap, snap_len, &err);
    ri_progress_finish(restoring);
    if (!restored) {
        rc = err.code == RI_SANDBOX_SNAPSHOT_ERROR ? RI_EXIT_INPUT : exit_for(err.code);
        ri_fail(rc, CMD, "--restore %s: %s", o->restore_path, err.message);
        goto done;
    }

    r.module_path = o->module_path;
    r.function = o->function;
    r.payload = o->payload;
    r.sandbox_id = ri_sandbox_id(sb);
    r.config = ri_sandbox_get_config(sb);
    r.timestamp_source = ts_source;
    r.host_names = o->host_names;
    r.nhosts = o->nhosts;
    r.restored_from = snap ? o->restore_path : NULL;
    r.repeat = o->repeat;

    int exec_rc = RI_EXIT_OK;
    if (o->check_determinism) {
        r.determinism_checked = true;
        r.determinism_ok = ri_sandbox_check_determinism(sb, o->function, o->payload, &r.deterministic,
                                                        &r.determinism_error);
        if (!r.determinism_ok) exec_rc = exit_for(r.determinism_error.code);
        else if (!r.deterministic) exec_rc = RI_EXIT_EXEC;
    }
    /* A check that could not run leaves the sandbox in an unknown state: stop there. */
    if (!o->check_determinism || r.determinism_ok) {
        rc = execute_all(sb, o, &r);
        if (rc != RI_EXIT_OK) goto done;
        if (r.failed && exec_rc == RI_EXIT_OK) exec_rc = exit_for(r.error.code);
    }
    if (o->snapshot_path) {
        int snap_rc = take_snapshot(sb, o, &r);
        if (snap_rc != RI_EXIT_OK && exec_rc == RI_EXIT_OK) exec_rc = snap_rc;
    }
    r.metrics = ri_sandbox_get_metrics(sb);
    r.status = ri_sandbox_status_of(sb);
    r.ok = exec_rc == RI_EXIT_OK;
    bool json = ri_output_is_json(o->mode);
    ri_run_report_print(&r, json);

    /* In JSON the failure is in the document; a line on stderr serves whoever watches. */
    char buf[1024];
    if (r.failed) {
        ri_describe_error(&r.error, buf, sizeof buf);
        if (json) ri_fail(exec_rc, CMD, "execution %zu failed: %s", r.nrecords + 1, buf);
        if (r.error.code == RI_SANDBOX_WASM_TRAP && strcmp(r.error.trap_kind, "missing_export") == 0)
            hint_exports(wasm, wasm_len);
        ri_hint_limit(CMD, &r.error);
    }
    if (r.determinism_checked && json) {
        if (!r.determinism_ok) {
            ri_describe_error(&r.determinism_error, buf, sizeof buf);
            ri_fail(exec_rc, CMD, "determinism check could not run: %s", buf);
        } else if (!r.deterministic) {
            ri_fail(exec_rc, CMD, "not deterministic: two runs from the same state differed");
        }
    }
    if (r.snapshot == RI_SNAP_REFUSED) {
        ri_describe_error(&r.snapshot_error, buf, sizeof buf);
        ri_fail(exec_rc, CMD, "--snapshot %s: %s", o->snapshot_path, buf);
    } else if (r.snapshot == RI_SNAP_WRITE_FAILED) {
        ri_fail(exec_rc, CMD, "--snapshot: cannot write '%s': %s", o->snapshot_path, r.snapshot_write_error);
    }
    rc = exec_rc;
done:
    for (size_t i = 0; i < r.nrecords; i++) free(r.records[i].value_json);
    free(r.records);
    ri_sandbox_destroy(sb);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    return rc;
}

int ri_cmd_run(int argc, char **argv) {
    if (ri_run_wants_lang(argc, argv)) return ri_run_lang(argc, argv);
    run_options o;
    bool help;
    int rc = parse_options(argc, argv, &o, &help);
    if (rc != RI_EXIT_OK || help) {
        free_options(&o);
        if (rc != RI_EXIT_OK) return rc;
        usage(stdout);
        return ri_finish_output(CMD, RI_EXIT_OK);
    }
    if (o.is_wasi) {
        const char *ts_source;
        rc = resolve_timestamp(&o, NULL, 0, &ts_source);
        o.wasi.config = o.config;
        o.wasi.mode = o.mode;
        if (rc == RI_EXIT_OK) rc = ri_run_wasi_command(CMD, &o.wasi);
        free_options(&o);
        return ri_finish_output(CMD, rc);
    }

    char why[256];
    uint8_t *snap = NULL, *wasm = NULL;
    size_t snap_len = 0, wasm_len = 0;
    const char *ts_source = NULL;
    if (o.restore_path) {
        rc = ri_read_file(o.restore_path, RI_SNAPSHOT_FILE_MAX, &snap, &snap_len, why, sizeof why);
        if (rc != RI_EXIT_OK) {
            free_options(&o); /* MODULE.wasm's bytes may be read already */
            return ri_fail(rc, CMD, "cannot read snapshot '%s': %s", o.restore_path, why);
        }
    }
    rc = resolve_timestamp(&o, snap, snap_len, &ts_source);
    if (rc == RI_EXIT_OK && o.image_module && ri_snapshot_version(snap, snap_len, NULL) == 1) {
        rc = ri_usage(CMD, "%s is a WSNP v1 image, which holds memory only: give its module (MODULE.wasm, or "
                      "`ri restore --module MODULE.wasm`)", o.restore_path);
    } else if (rc == RI_EXIT_OK && o.image_module) {
        rc = run_sandbox(&o, NULL, 0, snap, snap_len, ts_source);
    } else if (rc == RI_EXIT_OK) {
        if (o.first_wasm) { /* read while the options were parsed */
            wasm = o.first_wasm;
            wasm_len = o.first_wasm_len;
            o.first_wasm = NULL;
        } else {
            rc = ri_read_module(o.module_path, &wasm, &wasm_len, why, sizeof why);
        }
        if (rc != RI_EXIT_OK)
            ri_fail(rc, CMD, "cannot read module '%s': %s", o.module_path, why);
        else
            rc = run_sandbox(&o, wasm, wasm_len, snap, snap_len, ts_source);
    }
    free(wasm);
    free(snap);
    free_options(&o);
    return ri_finish_output(CMD, rc);
}
