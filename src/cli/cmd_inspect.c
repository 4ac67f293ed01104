/* `ri inspect FILE`: describes a WSNP snapshot file without a sandbox, read with the
 * library's parsers, so it accepts what restore accepts: v1 (seed 000, ri_wsnp_parse)
 * here, v2 (issue 5, ri_snap_read) in inspect_v2.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/inspect_v2.h"
#include "cli/jsonw.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include "ri/sandbox.h"

#define CMD "ri inspect"
/* The largest a WSNP v1 file can be (header, two length fields, two 4 GiB sections);
 * a v2 file of a 4 GiB memory stored raw is about as large. */
#define MAX_WARNINGS 8

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri inspect [--json | --text] FILE\n"
            "\n"
            "Describes a WSNP snapshot file, version 1 or 2.\n"
            "\n"
            "v2: the module's SHA-256 and size and whether the module is embedded, the state\n"
            "(status, PRNG state, gas, timestamp), the instance's counts, the sections and\n"
            "their sizes, each memory's pages, stored (non-zero) pages, encoding and\n"
            "compression ratio, tables, globals, dropped segments and the checksum. The\n"
            "checksum, every section and every memory payload are checked as restore checks\n"
            "them.\n"
            "\n"
            "v2 delta (section PRNT, `ri delta`): the parent it needs (SHA-256, size),\n"
            "the compression of the image it rebuilds and, per memory, the pages it stores\n"
            "(those that differ from the parent); `ri delta apply` gives the full image.\n"
            "\n"
            "v1: memory size in bytes and 64 KiB pages, how many pages hold a non-zero byte,\n"
            "the state JSON and its fields (prngState.current, timestamp, gasUsed), and the\n"
            "total size. A corrupt or truncated v1 file gets the v1 format's validation message,\n"
            "the checks in the original's order: \"Snapshot too small — missing header\",\n"
            "\"Invalid snapshot — bad magic bytes\", \"Snapshot truncated — ...\", \"Invalid\n"
            "snapshot — corrupted state JSON\" (the state JSON needs prngState.current,\n"
            "timestamp and gasUsed as integers; other keys are accepted, a key given twice\n"
            "is not). Other versions: \"Unsupported snapshot version: N (expected 1 or 2)\".\n"
            "\n"
            "The checks are the library's own, which restore runs too, so inspect accepts\n"
            "what `ri run --restore` accepts; only whether the image fits a module (memory\n"
            "size, module hash, counts) is left to restore, which has one.\n"
            "\n"
            "options:\n"
            "  --json        print a JSON document (the default when stdout is not a terminal);\n"
            "                it is printed for an invalid file too, with \"valid\": false\n"
            "  --text        print a readable summary (the default on a terminal)\n"
            "  -h, --help    show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

typedef struct warnings {
    int n;
    char text[MAX_WARNINGS][160];
} warnings;

static void warn(warnings *w, const char *fmt, ...) RI_PRINTF(2, 3);
static void warn(warnings *w, const char *fmt, ...) {
    if (w->n >= MAX_WARNINGS) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->text[w->n++], sizeof w->text[0], fmt, ap);
    va_end(ap);
}

/* What a file restore accepts can still have that deserves a word. */
static void collect_warnings(const ri_wsnp_view *v, warnings *w) {
    if (v->memory_len % RI_WSNP_PAGE_BYTES != 0)
        warn(w, "the memory section (%" PRIu32 " bytes) is not a whole number of 64 KiB pages: "
                "no instance can take it", v->memory_len);
    if (v->trailing > 0) warn(w, "%zu bytes after the state section (a v1 reader ignores them)", v->trailing);
}

static void print_json(const char *path, size_t size, const ri_wsnp_view *v, const warnings *w) {
    ri_jsonw jw;
    ri_jsonw_init(&jw, stdout);
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "file");
    ri_jsonw_str(&jw, path);
    ri_jsonw_key(&jw, "valid");
    ri_jsonw_bool(&jw, true);
    ri_jsonw_key(&jw, "format");
    ri_jsonw_str(&jw, "WSNP");
    ri_jsonw_key(&jw, "version");
    ri_jsonw_u64(&jw, v->version);
    ri_jsonw_key(&jw, "totalBytes");
    ri_jsonw_u64(&jw, size);
    ri_jsonw_key(&jw, "memory");
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "bytes");
    ri_jsonw_u64(&jw, v->memory_len);
    ri_jsonw_key(&jw, "pages");
    ri_jsonw_u64(&jw, v->memory_len / RI_WSNP_PAGE_BYTES);
    ri_jsonw_key(&jw, "nonZeroPages");
    ri_jsonw_u64(&jw, ri_wsnp_nonzero_pages(v));
    ri_jsonw_end(&jw);
    ri_jsonw_key(&jw, "state");
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "bytes");
    ri_jsonw_u64(&jw, v->state_len);
    /* The text passed json_loadb (no NUL bytes, valid UTF-8), so it goes in as it is. */
    ri_jsonw_key(&jw, "json");
    char *text = strndup(v->state, v->state_len);
    if (text)
        ri_jsonw_raw(&jw, text);
    else
        ri_jsonw_strn(&jw, v->state, v->state_len);
    free(text);
    ri_jsonw_key(&jw, "prngStateCurrent");
    ri_jsonw_i64(&jw, v->prng_current);
    ri_jsonw_key(&jw, "timestamp");
    ri_jsonw_i64(&jw, v->timestamp);
    ri_jsonw_key(&jw, "gasUsed");
    ri_jsonw_u64(&jw, v->gas_used);
    ri_jsonw_end(&jw);
    ri_jsonw_key(&jw, "trailingBytes");
    ri_jsonw_u64(&jw, v->trailing);
    ri_jsonw_key(&jw, "warnings");
    ri_jsonw_array(&jw);
    for (int i = 0; i < w->n; i++) ri_jsonw_str(&jw, w->text[i]);
    ri_jsonw_end(&jw);
    ri_jsonw_end(&jw);
    ri_jsonw_finish(&jw);
}

static void print_json_invalid(const char *path, size_t size, const char *reason, const char *detail) {
    ri_jsonw jw;
    ri_jsonw_init(&jw, stdout);
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "file");
    ri_jsonw_str(&jw, path);
    ri_jsonw_key(&jw, "valid");
    ri_jsonw_bool(&jw, false);
    ri_jsonw_key(&jw, "totalBytes");
    ri_jsonw_u64(&jw, size);
    ri_jsonw_key(&jw, "error");
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "code");
    ri_jsonw_str(&jw, "SNAPSHOT_ERROR");
    ri_jsonw_key(&jw, "reason");
    ri_jsonw_str(&jw, reason);
    ri_jsonw_key(&jw, "detail");
    ri_jsonw_str(&jw, *detail ? detail : NULL);
    ri_jsonw_end(&jw);
    ri_jsonw_end(&jw);
    ri_jsonw_finish(&jw);
}

static void print_text(const char *path, size_t size, const ri_wsnp_view *v, const warnings *w) {
    uint64_t pages = v->memory_len / RI_WSNP_PAGE_BYTES;
    ri_printf_safe(stdout, "%s: WSNP snapshot, format version %u, %zu bytes\n", path, (unsigned)v->version, size);
    printf("  memory   %" PRIu32 " bytes = %" PRIu64 " page%s of 64 KiB, %" PRIu64 " non-zero\n", v->memory_len,
           pages, pages == 1 ? "" : "s", ri_wsnp_nonzero_pages(v));
    printf("  state    %" PRIu32 " bytes of JSON: ", v->state_len);
    /* Long or hostile state text is shown escaped and cut; the fields follow anyway. */
    size_t shown = v->state_len < 200 ? v->state_len : 200;
    ri_put_safe(stdout, v->state, shown);
    printf("%s\n", shown < v->state_len ? " ..." : "");
    printf("    prngState.current  %" PRId64 "\n", v->prng_current);
    printf("    timestamp          %" PRId64 "\n", v->timestamp);
    printf("    gasUsed            %" PRIu64 "\n", v->gas_used);
    for (int i = 0; i < w->n; i++) printf("  warning: %s\n", w->text[i]);
}

int ri_cmd_inspect(int argc, char **argv) {
    ri_output_mode mode = RI_OUTPUT_AUTO;
    int handled, rc = RI_EXIT_OK;
    const char *path = NULL;
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (path) return ri_usage(CMD, "unexpected argument '%s' (one FILE only)", a.text);
            path = a.text;
        } else if (ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h")) {
            usage(stdout);
            return ri_finish_output(CMD, RI_EXIT_OK);
        } else if ((handled = ri_arg_output_mode(CMD, &a, &mode, &rc)) != 0) {
            if (handled < 0) return rc;
        } else {
            return ri_unknown_option(CMD, a.text, usage);
        }
    }
    if (!path) return ri_usage(CMD, "missing FILE");

    uint8_t *data;
    size_t size;
    char why[400];
    rc = ri_read_file(path, RI_SNAPSHOT_FILE_MAX, &data, &size, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, CMD, "cannot read snapshot '%s': %s", path, why);

    bool json = ri_output_is_json(mode);
    ri_wsnp_view view;
    ri_sandbox_error err;
    int version = ri_snapshot_version(data, size, &err);
    if (version == 2) {
        rc = ri_snap_is_delta(data, size, NULL) ? ri_inspect_delta(path, data, size, json, why, sizeof why)
                                                : ri_inspect_v2(path, data, size, json, why, sizeof why);
        if (rc != RI_EXIT_OK) {
            if (json) print_json_invalid(path, size, why, "");
            ri_fail(rc, CMD, "%s: %s", path, why);
        }
        free(data);
        return ri_finish_output(CMD, rc);
    }
    if (version == 0) {
        /* a module given where an image is expected: say so, and where modules are read */
        bool module = size >= 4 && memcmp(data, "\0asm", 4) == 0;
        const char *hint = module ? "a WebAssembly module, not a snapshot image: `ri validate` describes modules" : "";
        if (json) print_json_invalid(path, size, err.message, hint);
        free(data);
        ri_fail(RI_EXIT_INPUT, CMD, module ? "%s: %s (%s)" : "%s: %s%s", path, err.message, hint);
        return ri_finish_output(CMD, RI_EXIT_INPUT);
    }
    if (!ri_wsnp_parse(data, size, &view, &err)) {
        if (json) print_json_invalid(path, size, err.message, view.detail);
        free(data);
        if (*view.detail)
            ri_fail(RI_EXIT_INPUT, CMD, "%s: %s (%s)", path, err.message, view.detail);
        else
            ri_fail(RI_EXIT_INPUT, CMD, "%s: %s", path, err.message);
        return ri_finish_output(CMD, RI_EXIT_INPUT);
    }
    warnings w = {0, {{0}}};
    collect_warnings(&view, &w);
    if (json)
        print_json(path, size, &view, &w);
    else
        print_text(path, size, &view, &w);
    free(data);
    return ri_finish_output(CMD, RI_EXIT_OK);
}
