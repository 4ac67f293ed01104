/* `ri snap restore | list | show | diff | export`: the subcommands that read the store.
 * Every page they hand out was verified against its hash on the way. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_snap.h"
#include "cli/files.h"
#include "cli/suggest.h"
#include "cli/progress.h"

/* Parses NAME... positionals (up to max) and the common options; extra handles the
 * subcommand's own options (returns 1 when it took one, 0 unknown, -1 with *rc). */
typedef int (*extra_fn)(void *user, ri_args *args, const ri_arg *a, int *rc);

static int parse(snapcli_ctx *c, int argc, char **argv, const char **pos, int max, int *npos, extra_fn extra, void *user,
                 int *rc) {
    ri_args args;
    ri_args_init(&args, argc, argv);
    /* Every slot is defined even past *npos: callers read pos[0] after checking *npos, a link
     * gcc -O3 cannot follow through the loop (a false maybe-uninitialized otherwise). */
    for (int i = 0; i < max; i++) pos[i] = NULL;
    *npos = 0;
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (*npos == max) return *rc = ri_usage(c->cmd, "unexpected argument '%s'", a.text), -1;
            pos[(*npos)++] = a.text;
            continue;
        }
        int k = snapcli_common(c, &args, &a, rc);
        if (k < 0) return -1;
        if (k) continue;
        k = extra ? extra(user, &args, &a, rc) : 0;
        if (k < 0) return -1;
        if (!k) return *rc = ri_unknown_option(c->cmd, a.text, c->usage), -1;
    }
    return 0;
}

static int check_name(const snapcli_ctx *c, const char *name) {
    ri_snapstore_error err;
    return ri_snapstore_name_valid(name, &err) ? RI_EXIT_OK : snapcli_fail(c, &err);
}

/* ---- restore and export ---------------------------------------------------------------------------------- */

typedef struct out_opts {
    const char *cmd;
    const char *output;
    int module;                  /* -1: when stored; 0: no; 1: yes */
    bool uncompressed;
    ri_snapstore_export_format format;
} out_opts;

static int out_option(void *user, ri_args *args, const ri_arg *a, int *rc) {
    out_opts *o = user;
    if (ri_arg_is(a, "-o") || ri_arg_is(a, "--output")) {
        if (!(o->output = ri_args_value(args, a))) return *rc = ri_usage(o->cmd, "option -o needs a file"), -1;
        return 1;
    }
    if (ri_arg_is(a, "--no-module")) return o->module = 0, 1;
    if (ri_arg_is(a, "--module")) return o->module = 1, 1;
    if (ri_arg_is(a, "--uncompressed")) return o->uncompressed = true, 1;
    if (ri_arg_is(a, "--format")) {
        const char *v = ri_args_value(args, a);
        if (v && strcmp(v, "binary") == 0) o->format = RI_SNAPSTORE_EXPORT_BINARY;
        else if (v && strcmp(v, "json") == 0) o->format = RI_SNAPSTORE_EXPORT_JSON;
        else return *rc = ri_usage(o->cmd, "--format: expected binary or json"), -1;
        return 1;
    }
    return 0;
}

static int report_written(const snapcli_ctx *c, const char *name, const char *output, size_t len, const char *what) {
    if (ri_output_is_json(c->mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c->store);
        ri_jsonw_key(&w, "snapshot");
        ri_jsonw_str(&w, name);
        ri_jsonw_key(&w, "output");
        ri_jsonw_str(&w, output);
        ri_jsonw_key(&w, "format");
        ri_jsonw_str(&w, what);
        ri_jsonw_key(&w, "bytes");
        ri_jsonw_u64(&w, len);
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        char size[32];
        snapcli_bytes_text(len, size, sizeof size);
        ri_printf_safe(stdout, "wrote %s to %s (%s, %s)\n", name, output, what, size);
    }
    return ri_finish_output(c->cmd, RI_EXIT_OK);
}

static int write_out(const snapcli_ctx *c, const char *output, const uint8_t *data, size_t len) {
    char why[256];
    int rc = ri_write_file_atomic(output, data, len, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, c->cmd, "cannot write '%s': %s", output, why);
    return RI_EXIT_OK;
}

static void restore_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap restore --store DIR NAME -o FILE.wsnp [--no-module | --module]\n"
            "                       [--uncompressed]\n"
            "\n"
            "Writes snapshot NAME out as a WSNP v2 file (atomically), every page verified\n"
            "against its hash: `ri run --restore FILE.wsnp MODULE.wasm ...` continues from it.\n"
            "The bytes are exactly what the sandbox would write for that state.\n"
            "\n"
            "options:\n"
            "  --store DIR        the store's directory (required)\n"
            "  -o, --output FILE  where to write (required)\n"
            "  --module           embed the module (exit 3 if the store lacks it)\n"
            "  --no-module        do not embed it (default: embed it when the store has it)\n"
            "  --uncompressed     raw pages instead of zstd\n"
            "  --json | --text    output format\n"
            "  -h, --help         show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

int snapcli_restore(int argc, char **argv) {
    snapcli_ctx c = {"ri snap restore", NULL, RI_OUTPUT_AUTO, restore_usage};
    out_opts o = {c.cmd, NULL, -1, false, RI_SNAPSTORE_EXPORT_BINARY};
    const char *pos[1];
    int n, rc = RI_EXIT_OK;
    if (parse(&c, argc, argv, pos, 1, &n, out_option, &o, &rc) < 0) return rc;
    if (!n) return ri_usage(c.cmd, "missing NAME");
    if (!o.output) return ri_usage(c.cmd, "-o FILE is required (where to write the snapshot)");
    if ((rc = check_name(&c, pos[0])) != RI_EXIT_OK) return rc;
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    ri_snapstore_error err;
    ri_snapstore_info info;
    bool ok = ri_snapstore_get_info(st, pos[0], &info, &err);
    uint8_t *image = NULL;
    size_t len = 0;
    if (ok) {
        ri_snapstore_image_options io;
        memset(&io, 0, sizeof io);
        io.include_module = o.module == 1 || (o.module == -1 && info.module_stored);
        io.compress = !o.uncompressed;
        ok = ri_snapstore_get_image(st, pos[0], &io, &image, &len, NULL, &err);
        ri_snapstore_info_free(&info);
    }
    ri_snapstore_close(st);
    if (!ok) return snapcli_fail(&c, &err);
    rc = write_out(&c, o.output, image, len);
    free(image);
    return rc != RI_EXIT_OK ? rc : report_written(&c, pos[0], o.output, len, "wsnp-v2");
}

static void export_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap export --store DIR NAME -o FILE [--format binary|json]\n"
            "\n"
            "Writes snapshot NAME as a portable file: binary (default) is a WSNP v2 image with\n"
            "the module embedded and the metadata in the optional section RIMD (any sandbox\n"
            "restores it alone; `ri snap import` reads the metadata back); json is the\n"
            "metadata and that image in base64 (docs/STORE.md).\n"
            "\n"
            "options: --store DIR (required), -o FILE (required), --format binary|json,\n"
            "         --json | --text, -h | --help\n"
            "\n%s",
            ri_exit_codes_help);
}

int snapcli_export(int argc, char **argv) {
    snapcli_ctx c = {"ri snap export", NULL, RI_OUTPUT_AUTO, export_usage};
    out_opts o = {c.cmd, NULL, -1, false, RI_SNAPSTORE_EXPORT_BINARY};
    const char *pos[1];
    int n, rc = RI_EXIT_OK;
    if (parse(&c, argc, argv, pos, 1, &n, out_option, &o, &rc) < 0) return rc;
    if (!n) return ri_usage(c.cmd, "missing NAME");
    if (!o.output) return ri_usage(c.cmd, "-o FILE is required");
    if ((rc = check_name(&c, pos[0])) != RI_EXIT_OK) return rc;
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    ri_snapstore_error err;
    uint8_t *data;
    size_t len;
    ri_progress *exporting = ri_progress_start("assembling the snapshot", 0);
    bool ok = ri_snapstore_export(st, pos[0], o.format, &data, &len, &err);
    ri_progress_finish(exporting);
    ri_snapstore_close(st);
    if (!ok) return snapcli_fail(&c, &err);
    rc = write_out(&c, o.output, data, len);
    free(data);
    return rc != RI_EXIT_OK ? rc
                            : report_written(&c, pos[0], o.output, len,
                                             o.format == RI_SNAPSTORE_EXPORT_JSON ? "json" : "binary");
}

/* ---- show and list ---------------------------------------------------------------------------------------- */

static void show_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap show --store DIR NAME\n"
            "\n"
            "One snapshot's metadata (the manifest is read and verified whole; no page is\n"
            "read): time, description, tags, origin, module, state, sizes.\n"
            "\n"
            "options: --store DIR (required), --json | --text, -h | --help\n"
            "\n%s",
            ri_exit_codes_help);
}

int snapcli_show(int argc, char **argv) {
    snapcli_ctx c = {"ri snap show", NULL, RI_OUTPUT_AUTO, show_usage};
    const char *pos[1];
    int n, rc = RI_EXIT_OK;
    if (parse(&c, argc, argv, pos, 1, &n, NULL, NULL, &rc) < 0) return rc;
    if (!n) return ri_usage(c.cmd, "missing NAME");
    if ((rc = check_name(&c, pos[0])) != RI_EXIT_OK) return rc;
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    ri_snapstore_error err;
    ri_snapstore_info info;
    bool ok = ri_snapstore_get_info(st, pos[0], &info, &err);
    ri_snapstore_close(st);
    if (!ok) return snapcli_fail(&c, &err);
    if (ri_output_is_json(c.mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c.store);
        ri_jsonw_key(&w, "snapshot");
        snapcli_json_info(&w, &info);
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        snapcli_print_info(&info);
    }
    ri_snapstore_info_free(&info);
    return ri_finish_output(c.cmd, RI_EXIT_OK);
}

static void list_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap list --store DIR [--session ID] [--limit N] [--oldest-first]\n"
            "\n"
            "The snapshots, newest first, and the store's size (reads only the head of each\n"
            "manifest; temporary files of interrupted writers are never listed).\n"
            "\n"
            "options:\n"
            "  --store DIR      the store's directory (required)\n"
            "  --session ID     only the snapshots this session owns\n"
            "  --limit N        at most N\n"
            "  --oldest-first   oldest first\n"
            "  --json | --text  output format\n"
            "  -h, --help       show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

typedef struct list_opts {
    const char *cmd;
    ri_snapstore_list_options o;
} list_opts;

static int list_option(void *user, ri_args *args, const ri_arg *a, int *rc) {
    list_opts *l = user;
    if (ri_arg_is(a, "--oldest-first")) return l->o.oldest_first = true, 1;
    if (ri_arg_is(a, "--session")) {
        if (!(l->o.origin_session = ri_args_value(args, a))) return *rc = ri_usage(l->cmd, "--session needs an id"), -1;
        return 1;
    }
    if (ri_arg_is(a, "--limit")) {
        const char *v = ri_args_value(args, a), *why;
        uint64_t n;
        if (!v || !ri_parse_u64(v, 100000000u, &n, &why) || n == 0)
            return *rc = ri_usage(l->cmd, "--limit: expected an integer from 1 to 100000000"), -1;
        l->o.limit = (size_t)n;
        return 1;
    }
    return 0;
}

int snapcli_list(int argc, char **argv) {
    snapcli_ctx c = {"ri snap list", NULL, RI_OUTPUT_AUTO, list_usage};
    list_opts l;
    memset(&l, 0, sizeof l);
    l.cmd = c.cmd;
    const char *pos[1];
    int n, rc = RI_EXIT_OK;
    if (parse(&c, argc, argv, pos, 0, &n, list_option, &l, &rc) < 0) return rc;
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    ri_snapstore_error err;
    ri_snapstore_info *list = NULL;
    size_t count = 0;
    ri_snapstore_usage u;
    bool ok = ri_snapstore_list(st, &l.o, &list, &count, &err) && ri_snapstore_usage_of(st, &u, &err);
    ri_snapstore_close(st);
    if (!ok) {
        ri_snapstore_list_free(list, count);
        return snapcli_fail(&c, &err);
    }
    if (ri_output_is_json(c.mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c.store);
        ri_jsonw_key(&w, "snapshots");
        ri_jsonw_array(&w);
        for (size_t i = 0; i < count; i++) snapcli_json_info(&w, &list[i]);
        ri_jsonw_end(&w);
        ri_jsonw_key(&w, "usage");
        snapcli_json_usage(&w, &u);
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        if (count) printf("%-28s %-19s %10s %6s  %-24s %s\n", "NAME", "CREATED (UTC)", "MEMORY", "PAGES", "ORIGIN",
                          "DESCRIPTION");
        for (size_t i = 0; i < count; i++) {
            const ri_snapstore_info *s = &list[i];
            char when[32], mem[32], origin[140];
            snapcli_time_text(s->created_ns, when, sizeof when);
            snapcli_bytes_text(s->memory_bytes, mem, sizeof mem);
            snprintf(origin, sizeof origin, "%s%s%s", s->origin_sandbox[0] ? s->origin_sandbox : "-",
                     s->origin_session[0] ? "/" : "", s->origin_session);
            ri_printf_safe(stdout, "%-28s %-19s %10s %6" PRIu64 "  %-24s ", s->name, when, mem, s->stored_pages, origin);
            const char *d = s->description ? s->description : "";
            size_t line = strcspn(d, "\n");
            ri_put_safe(stdout, d, line > 60 ? 60 : line);
            printf("%s\n", line > 60 || d[line] ? " ..." : "");
        }
        char total[32];
        snapcli_bytes_text(u.total_bytes, total, sizeof total);
        printf("%zu snapshot%s listed; the store holds %" PRIu64 ", %s in %" PRIu64 " blob%s", count,
               count == 1 ? "" : "s", u.snapshots, total, u.blobs, u.blobs == 1 ? "" : "s");
        if (u.max_bytes) {
            char cap[32];
            snapcli_bytes_text(u.max_bytes, cap, sizeof cap);
            printf(" (cap %s)", cap);
        }
        printf("\n");
    }
    ri_snapstore_list_free(list, count);
    return ri_finish_output(c.cmd, RI_EXIT_OK);
}

/* ---- diff --------------------------------------------------------------------------------------------------- */

static void diff_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap diff --store DIR [--exit-code] OLD NEW\n"
            "\n"
            "What changed from snapshot OLD to snapshot NEW: the library's diff, as `ri diff`\n"
            "gives it for two files (JSON keys in docs/SNAPSHOT_FORMAT.md).\n"
            "\n"
            "options:\n"
            "  --store DIR      the store's directory (required)\n"
            "  --exit-code      exit with status 1 when they differ\n"
            "  --json | --text  output format\n"
            "  -h, --help       show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

static int diff_option(void *user, ri_args *args, const ri_arg *a, int *rc) {
    (void)args;
    (void)rc;
    if (!ri_arg_is(a, "--exit-code")) return 0;
    *(bool *)user = true;
    return 1;
}

static void print_diff_text(const char *a, const char *b, const ri_snap_diff *d) {
    ri_printf_safe(stdout, "%s -> %s: %s\n", a, b, d->identical ? "identical" : "they differ");
    if (d->module_changed) printf("  module changed\n");
    if (d->old_meta.prng_state != d->new_meta.prng_state)
        printf("  prngState  %" PRIu32 " -> %" PRIu32 "\n", d->old_meta.prng_state, d->new_meta.prng_state);
    if (d->old_meta.gas_used != d->new_meta.gas_used)
        printf("  gasUsed    %" PRIu64 " -> %" PRIu64 "\n", d->old_meta.gas_used, d->new_meta.gas_used);
    for (uint32_t i = 0; i < d->nmemories; i++) {
        const ri_snap_memory_diff *m = &d->memories[i];
        printf("  memory %" PRIu32 "   %" PRIu32 " -> %" PRIu32 " pages; %" PRIu64 " bytes differ in %" PRIu64
               " ranges on %" PRIu64 " pages\n",
               m->index, m->old_pages, m->new_pages, m->changed_bytes, m->range_count, m->changed_pages);
    }
    if (d->nglobals) printf("  %zu global%s changed\n", d->nglobals, d->nglobals == 1 ? "" : "s");
    for (uint32_t i = 0; i < d->ntables; i++)
        printf("  table %" PRIu32 "    %" PRIu64 " entries differ\n", d->tables[i].index, d->tables[i].changed_entries);
    if (d->nsegments) printf("  %zu segment%s dropped or restored\n", d->nsegments, d->nsegments == 1 ? "" : "s");
    if (!d->identical) printf("  (--json has every range, global and entry)\n");
}

int snapcli_diff(int argc, char **argv) {
    snapcli_ctx c = {"ri snap diff", NULL, RI_OUTPUT_AUTO, diff_usage};
    bool exit_code = false;
    const char *pos[2];
    int n, rc = RI_EXIT_OK;
    if (parse(&c, argc, argv, pos, 2, &n, diff_option, &exit_code, &rc) < 0) return rc;
    if (n < 2) return ri_usage(c.cmd, n ? "missing NEW" : "missing OLD and NEW");
    if ((rc = check_name(&c, pos[0])) != RI_EXIT_OK || (rc = check_name(&c, pos[1])) != RI_EXIT_OK) return rc;
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    ri_snapstore_error err;
    uint8_t *img[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    bool ok = true;
    for (int i = 0; ok && i < 2; i++) ok = ri_snapstore_get_image(st, pos[i], NULL, &img[i], &len[i], NULL, &err);
    ri_snapstore_close(st);
    if (!ok) {
        free(img[0]);
        return snapcli_fail(&c, &err);
    }
    ri_snap_diff d;
    ri_sandbox_error se;
    ok = ri_snapshot_diff(img[0], len[0], img[1], len[1], NULL, &d, &se);
    free(img[0]);
    free(img[1]);
    if (!ok) return ri_fail(RI_EXIT_INPUT, c.cmd, "%s", se.message);
    if (ri_output_is_json(c.mode)) {
        char *text = ri_snap_diff_json(&d);
        if (!text) {
            ri_snap_diff_free(&d);
            return ri_fail(RI_EXIT_INTERNAL, c.cmd, "out of memory writing the diff as JSON");
        }
        printf("%s\n", text);
        free(text);
    } else {
        print_diff_text(pos[0], pos[1], &d);
    }
    rc = exit_code && !d.identical ? RI_EXIT_EXEC : RI_EXIT_OK;
    ri_snap_diff_free(&d);
    return ri_finish_output(c.cmd, rc);
}
