/* `ri validate MODULE.wasm`: decode, validate and compile with the engine, then list the
 * imports and exports with their types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "ri/sandbox.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/jsonw.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include "cli/wasm_types.h"

#define CMD "ri validate"
/* Far above the engine's own limit (256 MiB by default), which gives the real message;
 * this only keeps ri from reading an arbitrarily large file into memory. */

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri validate [--json | --text] MODULE.wasm\n"
            "\n"
            "Loads MODULE.wasm with ri's WebAssembly engine (decode, validate, compile) and\n"
            "lists its imports and exports with their types. An invalid module gets the\n"
            "engine's message. Whether `ri run` can satisfy the imports is not checked here:\n"
            "the sandbox's import rules apply at load (see `ri run --help`).\n"
            "\n"
            "options:\n"
            "  --json        print a JSON document (the default when stdout is not a terminal);\n"
            "                it is printed for an invalid module too, with \"valid\": false\n"
            "  --text        print a readable summary (the default on a terminal)\n"
            "  -h, --help    show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

/* Column width for names in the text listing: the longest plain name, capped. */
static int name_width(const ri_module *m) {
    size_t w = 0;
    for (uint32_t i = 0; i < ri_module_import_count(m); i++) {
        ri_import_info in = ri_module_import(m, i);
        size_t n = in.module_len + 1 + in.name_len;
        if (n > w) w = n;
    }
    for (uint32_t i = 0; i < ri_module_export_count(m); i++) {
        ri_export_info ex = ri_module_export(m, i);
        if (ex.name_len > w) w = ex.name_len;
    }
    return (int)(w > 32 ? 32 : w);
}

static void print_text(const char *path, size_t size, const ri_module *m) {
    int width = name_width(m);
    ri_printf_safe(stdout, "%s: valid WebAssembly module (%zu bytes)\n", path, size);
    uint32_t nimports = ri_module_import_count(m), nexports = ri_module_export_count(m);
    printf("imports (%u):\n", (unsigned)nimports);
    for (uint32_t i = 0; i < nimports; i++) {
        ri_import_info in = ri_module_import(m, i);
        fputs("  ", stdout);
        ri_put_safe(stdout, in.module, in.module_len);
        fputc('.', stdout);
        ri_put_safe(stdout, in.name, in.name_len);
        size_t n = in.module_len + 1 + in.name_len;
        printf("%*s  ", n < (size_t)width ? width - (int)n : 0, "");
        ri_externtype_print(stdout, &in.type);
        fputc('\n', stdout);
    }
    printf("exports (%u):\n", (unsigned)nexports);
    for (uint32_t i = 0; i < nexports; i++) {
        ri_export_info ex = ri_module_export(m, i);
        fputs("  ", stdout);
        ri_put_safe(stdout, ex.name, ex.name_len);
        printf("%*s  ", ex.name_len < (size_t)width ? width - (int)ex.name_len : 0, "");
        ri_externtype_print(stdout, &ex.type);
        fputc('\n', stdout);
    }
}

static void print_json(const char *path, size_t size, const ri_module *m, const ri_error *err, const char *message) {
    ri_jsonw w;
    ri_jsonw_init(&w, stdout);
    ri_jsonw_object(&w);
    ri_jsonw_key(&w, "file");
    ri_jsonw_str(&w, path);
    ri_jsonw_key(&w, "bytes");
    ri_jsonw_u64(&w, size);
    ri_jsonw_key(&w, "valid");
    ri_jsonw_bool(&w, m != NULL);
    if (!m) {
        ri_jsonw_key(&w, "error");
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "code");
        ri_jsonw_str(&w, ri_errcode_name(err->code));
        ri_jsonw_key(&w, "message");
        ri_jsonw_str(&w, message);
        ri_jsonw_end(&w);
    } else {
        ri_jsonw_key(&w, "imports");
        ri_jsonw_array(&w);
        for (uint32_t i = 0; i < ri_module_import_count(m); i++) {
            ri_import_info in = ri_module_import(m, i);
            ri_jsonw_object(&w);
            ri_jsonw_key(&w, "module");
            ri_jsonw_strn(&w, in.module, in.module_len);
            ri_jsonw_key(&w, "name");
            ri_jsonw_strn(&w, in.name, in.name_len);
            ri_externtype_json(&w, &in.type);
            ri_jsonw_end(&w);
        }
        ri_jsonw_end(&w);
        ri_jsonw_key(&w, "exports");
        ri_jsonw_array(&w);
        for (uint32_t i = 0; i < ri_module_export_count(m); i++) {
            ri_export_info ex = ri_module_export(m, i);
            ri_jsonw_object(&w);
            ri_jsonw_key(&w, "name");
            ri_jsonw_strn(&w, ex.name, ex.name_len);
            ri_externtype_json(&w, &ex.type);
            ri_jsonw_end(&w);
        }
        ri_jsonw_end(&w);
    }
    ri_jsonw_end(&w);
    ri_jsonw_finish(&w);
}

int ri_cmd_validate(int argc, char **argv) {
    ri_output_mode mode = RI_OUTPUT_AUTO;
    int handled, rc = RI_EXIT_OK;
    const char *path = NULL;
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (path) return ri_usage(CMD, "unexpected argument '%s' (one MODULE.wasm only)", a.text);
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
    if (!path) return ri_usage(CMD, "missing MODULE.wasm");

    uint8_t *bytes;
    size_t size;
    char why[256];
    rc = ri_read_module(path, &bytes, &size, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, CMD, "cannot read module '%s': %s", path, why);

    ri_error err;
    memset(&err, 0, sizeof err);
    ri_module *m = ri_module_load(bytes, size, NULL, &err);
    /* a bad module reads as a load of it would (ri run, the library, the server) */
    ri_sandbox_error load_err;
    memset(&load_err, 0, sizeof load_err);
    if (!m) (void)ri_module_check(bytes, size, &load_err);
    bool json = ri_output_is_json(mode);
    if (json) print_json(path, size, m, &err, load_err.message);
    if (m) {
        if (!json) print_text(path, size, m);
        rc = RI_EXIT_OK;
    } else {
        rc = err.code == RI_ERR_NOMEM ? RI_EXIT_INTERNAL : RI_EXIT_INPUT;
        ri_fail(rc, CMD, "%s: %s", path, load_err.message);
    }
    ri_module_free(m);
    free(bytes);
    return ri_finish_output(CMD, rc);
}
