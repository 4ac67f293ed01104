/* `ri run --lang LANGUAGE (-c CODE | FILE)`: code as text through an interpreter built to
 * WebAssembly (docs/LANGUAGES.md), with the program's stdio as ri's and its exit code as
 * ri's exit status, as `ruby -e CODE` or `ruby FILE` would do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ri/lang.h"
#include "ri/wasi.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/progress.h"
#include "cli/run_lang.h"
#include "cli/run_wasi.h"
#include "cli/run_report.h"
#include "cli/wasi_dirs.h"

#define CMD "ri run"
#define CODE_MAX ((size_t)64 << 20)

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri run --lang LANGUAGE [OPTIONS] (-c CODE | FILE)\n"
            "\n"
            "Runs code as text with a real interpreter built to WebAssembly, in a sandbox:\n"
            "stdout and stderr are ri's, stdin is read as the program asks, and ri's exit\n"
            "status is the program's exit code (1 after an uncaught error). Languages: %s.\n"
            "The program sees a workspace of its own (at /), deterministic time and random\n"
            "numbers, and the sandbox's limits.\n"
            "\n"
            "  --lang LANGUAGE       the language of the code (%s)\n"
            "  -c CODE               the code itself (else FILE holds it)\n"
            "  --interpreter PATH    the interpreter's .wasm (default: $RI_INTERPRETERS_DIR/LANGUAGE.wasm,\n"
            "                        else ~/.cache/ri/interpreters/LANGUAGE.wasm, as\n"
            "                        scripts/fetch-interpreters.sh installs them)\n"
            "  --dir HOST[::GUEST]   copy a host directory into the workspace first (repeatable)\n"
            "  --dir-writeback       copy the --dir directories back when the program ends\n"
            "  --max-gas N           instructions the program may run (default 1000000000000)\n"
            "  --max-memory BYTES    memory limit (default 1GiB)\n"
            "  --timeout MS|none     wall-clock limit (default none)\n"
            "  --seed N              the seed of the program's random numbers (default 0)\n"
            "  --timestamp MS        the event time the program's clock starts from (default 0)\n"
            "\n"
            "exit status: the program's exit code; 2 usage, 3 input (no interpreter, unreadable\n"
            "file), 4 internal, 1 when a limit stopped the program.\n",
            ri_language_names(), ri_language_names());
}

typedef struct lang_options {
    ri_language lang;
    const char *code;          /* -c */
    const char *file;          /* FILE */
    const char *interpreter;   /* --interpreter */
    ri_wasi_dir dirs[64];
    uint32_t ndirs;
    bool write_back;
    ri_sandbox_config config;
} lang_options;

static int parse(int argc, char **argv, lang_options *o, bool *help) {
    memset(o, 0, sizeof *o);
    *help = false;
    o->config = ri_cli_config();
    o->config.has_event_timestamp = true;
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        const char *why = NULL, *v;
        uint64_t n;
        if (a.kind == RI_ARG_POSITIONAL) {
            if (o->file || o->code) return ri_usage(CMD, "unexpected argument '%s' (the code is -c CODE or one FILE)", a.text);
            o->file = a.text;
        } else if (ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h")) {
            *help = true;
            return RI_EXIT_OK;
        } else if (ri_arg_is(&a, "--dir-writeback")) {
            o->write_back = true;
        } else if (ri_arg_is(&a, "--timeout")) {
            int rc = ri_arg_timeout(CMD, &args, &a, &o->config.max_execution_ms);
            if (rc != RI_EXIT_OK) return rc;
        } else if (!(v = ri_args_value(&args, &a))) {
            return ri_usage(CMD, "%s needs a value", a.text);
        } else if (ri_arg_is(&a, "--lang")) {
            o->lang = ri_language_from_name(v);
            if (o->lang == RI_LANG_NONE) return ri_usage(CMD, "unknown language '%s' (known: %s)", v, ri_language_names());
        } else if (ri_arg_is(&a, "-c")) {
            o->code = v;
        } else if (ri_arg_is(&a, "--interpreter")) {
            o->interpreter = v;
        } else if (ri_arg_is(&a, "--dir")) {
            if (o->ndirs == sizeof o->dirs / sizeof o->dirs[0]) return ri_usage(CMD, "too many --dir options");
            int rc = ri_wasi_dir_parse(CMD, v, &o->dirs[o->ndirs]);
            if (rc != RI_EXIT_OK) return rc;
            o->ndirs++;
        } else if (ri_arg_is(&a, "--max-gas")) {
            if (!ri_parse_u64(v, UINT64_MAX, &o->config.max_gas, &why)) return ri_usage(CMD, "--max-gas %s: %s", v, why);
        } else if (ri_arg_is(&a, "--max-memory")) {
            if (!ri_parse_bytes(v, &o->config.max_memory_bytes, &why)) return ri_usage(CMD, "--max-memory %s: %s", v, why);
        } else if (ri_arg_is(&a, "--seed")) {
            if (!ri_parse_u64(v, UINT32_MAX, &n, &why)) return ri_usage(CMD, "--seed %s: %s", v, why);
            o->config.deterministic_seed = (uint32_t)n;
        } else if (ri_arg_is(&a, "--timestamp")) {
            if (!ri_parse_i64(v, &o->config.event_timestamp, &why)) return ri_usage(CMD, "--timestamp %s: %s", v, why);
        } else {
            return ri_usage(CMD, "unknown option '%s' with --lang", a.text);
        }
    }
    if (o->lang == RI_LANG_NONE) return ri_usage(CMD, "--lang LANGUAGE is required (known: %s)", ri_language_names());
    if (!o->code && !o->file) return ri_usage(CMD, "no code: give -c CODE or a FILE");
    if (o->code && o->file) return ri_usage(CMD, "give -c CODE or a FILE, not both");
    if (o->write_back && o->ndirs == 0) return ri_usage(CMD, "--dir-writeback needs a --dir");
    return RI_EXIT_OK;
}

/* The interpreter's bytes from --interpreter, $RI_INTERPRETERS_DIR or the default cache. */
static int read_interpreter(const lang_options *o, uint8_t **wasm, size_t *len, char *path, size_t cap) {
    const char *name = ri_language_name(o->lang);
    if (o->interpreter) snprintf(path, cap, "%s", o->interpreter);
    else if (!ri_interpreter_path(o->lang, NULL, path, cap))
        return ri_fail(RI_EXIT_INPUT, CMD, "the %s interpreter's path is too long", name);
    char why[256];
    int rc = ri_read_file(path, RI_MODULE_FILE_MAX, wasm, len, why, sizeof why);
    if (rc != RI_EXIT_OK)
        return ri_fail(rc, CMD, "cannot read the %s interpreter '%s': %s (scripts/fetch-interpreters.sh installs it, "
                                "or give --interpreter PATH)", name, path, why);
    return RI_EXIT_OK;
}

static int run_code(const lang_options *o, ri_interpreter *it, ri_sandboxes *factory, const char *code, size_t len) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_interpreter_sandbox(it, factory, &err);
    if (!sb) return ri_fail(RI_EXIT_INTERNAL, CMD, "cannot make the sandbox: %s", err.message);
    int status = RI_EXIT_OK;
    struct wsfs *fs = ri_sandbox_wasi_workspace(sb);
    for (uint32_t i = 0; i < o->ndirs && status == RI_EXIT_OK; i++) status = ri_wasi_dir_copy_in(CMD, fs, &o->dirs[i]);
    if (status == RI_EXIT_OK) {
        ri_sandbox_result res = ri_interpreter_run(it, sb, code, len);
        if (res.exited) {
            status = res.exit_code > 255 ? 255 : (int)res.exit_code;
        } else if (!res.ok) {
            char error[1024];
            ri_describe_error(&res.error, error, sizeof error);
            ri_fail(0, CMD, "%s", error);
            ri_hint_limit(CMD, &res.error);
            status = RI_EXIT_EXEC;
        }
        ri_sandbox_result_free(&res);
        for (uint32_t i = 0; o->write_back && i < o->ndirs; i++) {
            int rc = ri_wasi_dir_write_back(CMD, fs, &o->dirs[i]);
            if (rc != RI_EXIT_OK && status == RI_EXIT_OK) status = rc;
        }
    }
    ri_sandbox_free(sb);
    return status;
}

bool ri_run_wants_lang(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return false;
        if (strcmp(argv[i], "--lang") == 0 || strncmp(argv[i], "--lang=", 7) == 0) return true;
    }
    return false;
}

static int run_parsed(const lang_options *o);

static void free_options(lang_options *o) {
    for (uint32_t i = 0; i < o->ndirs; i++) {
        free((char *)o->dirs[i].host);
        free(o->dirs[i].guest);
    }
}

int ri_run_lang(int argc, char **argv) {
    lang_options o;
    bool help;
    int rc = parse(argc, argv, &o, &help);
    if (rc == RI_EXIT_OK && !help) rc = run_parsed(&o);
    else if (rc == RI_EXIT_OK) {
        usage(stdout);
        rc = ri_finish_output(CMD, RI_EXIT_OK);
    }
    free_options(&o);
    return rc;
}

static int run_parsed(const lang_options *o_) {
    const lang_options o = *o_;
    int rc;
    char path[4096], why[256];
    uint8_t *wasm = NULL, *file_code = NULL;
    size_t wasm_len = 0, file_len = 0;
    if (o.file) {
        rc = ri_read_file(o.file, CODE_MAX, &file_code, &file_len, why, sizeof why);
        if (rc != RI_EXIT_OK) return ri_fail(rc, CMD, "cannot read '%s': %s", o.file, why);
    }
    rc = read_interpreter(&o, &wasm, &wasm_len, path, sizeof path);
    if (rc != RI_EXIT_OK) {
        free(file_code);
        return rc;
    }
    ri_wasi_config wasi;
    memset(&wasi, 0, sizeof wasi);
    ri_wasi_cli_stdio(&wasi);
    ri_sandbox_config config = o.config;
    config.enable_wasi = true;
    config.wasi = &wasi;
    ri_sandbox_error err;
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_progress *starting = ri_progress_start("starting the interpreter", 0);
    /* the initialised interpreter's image is cached beside the .wasm: the next run restores it */
    char cache_dir[4096];
    snprintf(cache_dir, sizeof cache_dir, "%s", path);
    char *slash = strrchr(cache_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(cache_dir, sizeof cache_dir, ".");
    ri_interpreter *it = factory ? ri_interpreter_open_cached(factory, o.lang, wasm, wasm_len, &config, cache_dir, NULL, &err)
                                 : NULL;
    ri_progress_finish(starting);
    free(wasm);
    if (!it) {
        rc = ri_fail(!factory || err.code != RI_SANDBOX_INVALID_MODULE ? RI_EXIT_INTERNAL : RI_EXIT_INPUT, CMD,
                     "%s: %s", path, factory ? err.message : "out of memory");
    } else {
        const char *code = o.code ? o.code : (const char *)file_code;
        size_t len = o.code ? strlen(o.code) : file_len;
        rc = run_code(&o, it, factory, code, len);
    }
    ri_interpreter_free(it);
    ri_sandboxes_free(factory);
    free(file_code);
    return ri_finish_output(CMD, rc);
}
