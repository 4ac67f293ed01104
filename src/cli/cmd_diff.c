/* `ri diff OLD NEW`: what differs between two snapshot files (v1 or v2), with the
 * library's diff (ri_snapshot_diff): changed memory ranges, globals, table entries,
 * segments, PRNG state and gas. JSON is the library's document; the text is for a
 * person. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include <jansson.h>

#include "ri/files.h"
#include "ri/sandbox.h"

#define CMD "ri diff"
#define SHOWN_RANGES 20
#define SHOWN_ENTRIES 20

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri diff [--json | --text] [--exit-code] [--max-ranges N] OLD NEW\n"
            "\n"
            "Compares two WSNP snapshot files (version 1 or 2, in any mix) and says what\n"
            "changed from OLD to NEW: the module (by SHA-256), status, PRNG state, gas and\n"
            "timestamp; per memory the size in pages and the bytes that differ, as merged\n"
            "ranges (a page an image does not store reads as zeros); globals with their old\n"
            "and new values; table sizes and entries; dropped data and element segments;\n"
            "the workspace's files of a WASI snapshot: added, removed, changed (the bytes\n"
            "that differ) and moved.\n"
            "A v1 image holds no tables, globals or segments: those are then not compared.\n"
            "A delta image (`ri delta`) is refused: apply it to its parent first.\n"
            "\n"
            "options:\n"
            "  --json          print the diff as JSON (the default when stdout is not a\n"
            "                  terminal); see docs/SNAPSHOT_FORMAT.md for its keys\n"
            "  --text          print a readable summary (the default on a terminal)\n"
            "  --exit-code     exit with status 1 when the snapshots differ (as diff(1))\n"
            "  --max-ranges N  list at most N memory ranges and N table entries (default\n"
            "                  10000; the counts are always exact)\n"
            "  -h, --help      show this help\n"
            "\n"
            "Without --exit-code the status is 0 whether or not they differ; an unreadable\n"
            "or invalid file is 3, with the reason on stderr.\n"
            "\n%s",
            ri_exit_codes_help);
}

static void ref_text(uint32_t ref, char *buf, size_t cap) {
    if (ref == RI_SNAP_NULL_REF) snprintf(buf, cap, "null");
    else if (ref == RI_SNAP_NO_ENTRY) snprintf(buf, cap, "absent");
    else snprintf(buf, cap, "func %" PRIu32, ref);
}

static void global_text(const ri_snap_global *g, bool present, char *buf, size_t cap) {
    if (present) ri_snap_global_text(g, RI_SNAP_TEXT_TYPED, buf, cap);
    else snprintf(buf, cap, "absent");
}

#define SHOWN_FILES 200

/* The workspace's files: what was added, removed, changed (bytes) and moved. */
static void print_files(const ri_file_diff *f) {
    if (!f->old_has_workspace && !f->new_has_workspace) return;
    printf("  files      %" PRIu64 " added, %" PRIu64 " removed, %" PRIu64 " changed, %" PRIu64 " moved%s\n", f->added,
           f->removed, f->changed, f->moved,
           f->old_has_workspace != f->new_has_workspace
               ? (f->old_has_workspace ? " (the new image has no workspace)" : " (the old image has no workspace)")
               : "");
    for (size_t i = 0; i < f->nchanges && i < SHOWN_FILES; i++) {
        const ri_file_change *c = &f->changes[i];
        const char *dir = c->type == RI_FILE_TYPE_DIRECTORY ? "/" : "";
        switch (c->kind) {
        case RI_FILE_ADDED:
        case RI_FILE_REMOVED:
            if (c->type == RI_FILE_TYPE_DIRECTORY)
                ri_printf_safe(stdout, "             %c %s/\n", c->kind == RI_FILE_ADDED ? '+' : '-', c->path);
            else
                ri_printf_safe(stdout, "             %c %s (%" PRIu64 " bytes)\n", c->kind == RI_FILE_ADDED ? '+' : '-',
                               c->path, c->changed_bytes);
            break;
        case RI_FILE_CHANGED:
            ri_printf_safe(stdout, "             ~ %s: %" PRIu64 " byte%s differ%s (%" PRIu64 " -> %" PRIu64 " bytes)\n",
                           c->path, c->changed_bytes, c->changed_bytes == 1 ? "" : "s",
                           c->changed_bytes == 1 ? "s" : "", c->old_size, c->new_size);
            break;
        case RI_FILE_MOVED: ri_printf_safe(stdout, "             > %s%s -> %s%s\n", c->old_path ? c->old_path : "?", dir, c->path, dir); break;
        }
    }
    if (f->nchanges > SHOWN_FILES)
        printf("             ... %zu more (--json lists them)\n", f->nchanges - SHOWN_FILES);
}

static void print_text(const char *a, const char *b, const ri_snap_diff *d) {
    const ri_snap_meta *x = &d->old_meta, *y = &d->new_meta;
    ri_printf_safe(stdout, "%s -> %s: %s\n", a, b, d->identical ? "identical" : "they differ");
    if (d->old_version != d->new_version) printf("  format     v%u -> v%u\n", d->old_version, d->new_version);
    char hx[2 * RI_SNAP_SHA256_BYTES + 1], hy[2 * RI_SNAP_SHA256_BYTES + 1];
    ri_snap_hex(x->module_sha256, hx);
    ri_snap_hex(y->module_sha256, hy);
    if (d->module_changed) printf("  module     sha256:%s -> sha256:%s\n", hx, hy);
    else if (d->old_has_module_hash && d->new_has_module_hash) printf("  module     sha256:%s (same)\n", hx);
    else printf("  module     not compared (a v1 image names no module)\n");
    if (x->status != y->status)
        printf("  status     %s -> %s\n", ri_snap_status_name(x->status), ri_snap_status_name(y->status));
    if (x->prng_state != y->prng_state) printf("  prngState  %" PRIu32 " -> %" PRIu32 "\n", x->prng_state, y->prng_state);
    if (x->gas_used != y->gas_used) printf("  gasUsed    %" PRIu64 " -> %" PRIu64 "\n", x->gas_used, y->gas_used);
    if (x->event_timestamp != y->event_timestamp)
        printf("  timestamp  %" PRId64 " -> %" PRId64 "\n", x->event_timestamp, y->event_timestamp);
    size_t r = 0;
    for (uint32_t i = 0; i < d->nmemories; i++) {
        const ri_snap_memory_diff *m = &d->memories[i];
        printf("  memory %-3" PRIu32 " ", m->index);
        if (!m->in_old || !m->in_new) printf("only in the %s image, ", m->in_old ? "old" : "new");
        if (m->old_pages != m->new_pages) printf("%" PRIu32 " -> %" PRIu32 " pages; ", m->old_pages, m->new_pages);
        else printf("%" PRIu32 " page%s; ", m->new_pages, m->new_pages == 1 ? "" : "s");
        printf("%" PRIu64 " byte%s differ%s in %" PRIu64 " range%s on %" PRIu64 " page%s\n", m->changed_bytes,
               m->changed_bytes == 1 ? "" : "s", m->changed_bytes == 1 ? "s" : "", m->range_count,
               m->range_count == 1 ? "" : "s", m->changed_pages, m->changed_pages == 1 ? "" : "s");
        while (r < d->nranges && d->ranges[r].memory < m->index) r++;
        size_t shown = 0;
        for (; r < d->nranges && d->ranges[r].memory == m->index; r++) {
            if (shown++ < SHOWN_RANGES)
                printf("               0x%08" PRIx64 "  %" PRIu64 " byte%s\n", d->ranges[r].offset, d->ranges[r].length,
                       d->ranges[r].length == 1 ? "" : "s");
        }
        if (m->range_count > SHOWN_RANGES)
            printf("               ... %" PRIu64 " more ranges (--json lists them)\n", m->range_count - SHOWN_RANGES);
    }
    if (!d->instance_state_compared) {
        if (!d->identical || d->old_version != d->new_version)
            printf("  (tables, globals and segments not compared: a v1 image holds none)\n");
        return;
    }
    for (size_t i = 0; i < d->nglobals; i++) {
        char o[96], n[96];
        global_text(&d->globals[i].old_value, d->globals[i].in_old, o, sizeof o);
        global_text(&d->globals[i].new_value, d->globals[i].in_new, n, sizeof n);
        printf("  global %-3" PRIu32 " %s -> %s\n", d->globals[i].index, o, n);
    }
    size_t e = 0;
    for (uint32_t i = 0; i < d->ntables; i++) {
        const ri_snap_table_diff *t = &d->tables[i];
        printf("  table %-4" PRIu32 " ", t->index);
        if (t->old_size != t->new_size) printf("size %" PRIu32 " -> %" PRIu32 "; ", t->old_size, t->new_size);
        printf("%" PRIu64 " entr%s differ%s\n", t->changed_entries, t->changed_entries == 1 ? "y" : "ies",
               t->changed_entries == 1 ? "s" : "");
        while (e < d->nentries && d->entries[e].table < t->index) e++;
        size_t shown = 0;
        for (; e < d->nentries && d->entries[e].table == t->index; e++) {
            if (shown++ >= SHOWN_ENTRIES) continue;
            char o[32], n[32];
            ref_text(d->entries[e].old_ref, o, sizeof o);
            ref_text(d->entries[e].new_ref, n, sizeof n);
            printf("               [%" PRIu32 "] %s -> %s\n", d->entries[e].index, o, n);
        }
        if (t->changed_entries > SHOWN_ENTRIES)
            printf("               ... %" PRIu64 " more entries (--json lists them)\n",
                   t->changed_entries - SHOWN_ENTRIES);
    }
    for (size_t i = 0; i < d->nsegments; i++) {
        const ri_snap_segment_diff *s = &d->segments[i];
        printf("  %s segment %" PRIu32 "  %s -> %s\n", s->data ? "data" : "element", s->index,
               s->old_dropped ? "dropped" : "live", s->new_dropped ? "dropped" : "live");
    }
}

/* The library's diff document with "files" (ri_file_diff_json; null when neither image
 * has a workspace) after its other keys. */
static char *json_text(const ri_snap_diff *d, const ri_file_diff *f) {
    char *base = ri_snap_diff_json(d), *files = ri_file_diff_json(f), *text = NULL;
    json_t *root = base ? json_loads(base, 0, NULL) : NULL;
    json_t *fj = !(f->old_has_workspace || f->new_has_workspace) ? json_null() : files ? json_loads(files, 0, NULL) : NULL;
    if (root && fj && json_object_set_new(root, "files", fj) == 0) {
        fj = NULL;
        text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    }
    json_decref(fj);
    json_decref(root);
    free(base);
    ri_free(files);
    return text;
}

int ri_cmd_diff(int argc, char **argv) {
    ri_output_mode mode = RI_OUTPUT_AUTO;
    int handled, rc = RI_EXIT_OK;
    const char *paths[2] = {NULL, NULL};
    bool exit_code = false;
    ri_snap_diff_options opts = {0, 0};
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (paths[1]) return ri_usage(CMD, "unexpected argument '%s' (two files: OLD NEW)", a.text);
            paths[paths[0] ? 1 : 0] = a.text;
        } else if (ri_arg_is(&a, "--help") || ri_arg_is(&a, "-h")) {
            usage(stdout);
            return ri_finish_output(CMD, RI_EXIT_OK);
        } else if ((handled = ri_arg_output_mode(CMD, &a, &mode, &rc)) != 0) {
            if (handled < 0) return rc;
        } else if (ri_arg_is(&a, "--exit-code")) {
            if (a.value) return ri_usage(CMD, "option %s takes no value", a.name);
            exit_code = true;
        } else if (ri_arg_is(&a, "--max-ranges")) {
            const char *v = ri_args_value(&args, &a), *why;
            uint64_t n;
            if (!v) return ri_usage(CMD, "option --max-ranges needs a value");
            if (!ri_parse_u64(v, 100000000u, &n, &why) || n == 0)
                return ri_usage(CMD, "--max-ranges: '%s' is %s (expected an integer from 1 to 100000000)", v,
                                n == 0 ? "zero" : why);
            opts.max_ranges = opts.max_entries = (size_t)n;
        } else {
            return ri_unknown_option(CMD, a.text, usage);
        }
    }
    if (!paths[1]) return ri_usage(CMD, paths[0] ? "missing NEW (two files: OLD NEW)" : "missing OLD and NEW");

    uint8_t *data[2] = {NULL, NULL};
    size_t len[2] = {0, 0};
    char why[256];
    for (int i = 0; i < 2; i++) {
        int read_rc = ri_read_file(paths[i], RI_SNAPSHOT_FILE_MAX, &data[i], &len[i], why, sizeof why);
        if (read_rc != RI_EXIT_OK) {
            free(data[0]);
            return ri_fail(read_rc, CMD, "cannot read snapshot '%s': %s", paths[i], why);
        }
    }
    /* Each file alone first, so that the message names the file at fault. */
    ri_sandbox_error err;
    for (int i = 0; i < 2; i++) {
        ri_snap_delta_info di;
        if (ri_snap_is_delta(data[i], len[i], &di)) {
            /* Its pages are only those that differ from its parent: compared as they are,
             * every other page would read as zeros. */
            char hex[2 * RI_SNAP_SHA256_BYTES + 1];
            ri_snap_hex(di.parent_sha256, hex);
            free(data[0]);
            free(data[1]);
            return ri_fail(RI_EXIT_INPUT, CMD,
                           "%s: a WSNP v2 delta image (parent sha256:%s): apply it to its parent first "
                           "(ri delta apply -o FULL.wsnp PARENT.wsnp %s), then diff the full image",
                           paths[i], hex, paths[i]);
        }
        ri_snap_image img;
        if (!ri_snapshot_open(data[i], len[i], &img, &err)) {
            free(data[0]);
            free(data[1]);
            return ri_fail(RI_EXIT_INPUT, CMD, "%s: %s", paths[i], err.message);
        }
        ri_snap_image_free(&img);
    }
    ri_snap_diff d;
    ri_file_diff f;
    memset(&f, 0, sizeof f);
    bool ok = ri_snapshot_diff(data[0], len[0], data[1], len[1], &opts, &d, &err);
    if (ok && !ri_snapshot_diff_files(data[0], len[0], data[1], len[1], &f, &err)) {
        ri_snap_diff_free(&d);
        ok = false;
    }
    free(data[0]);
    free(data[1]);
    if (!ok) return ri_fail(RI_EXIT_INPUT, CMD, "%s", err.message);
    /* The files are part of what an image holds. */
    d.identical = d.identical && f.nchanges == 0 && f.old_has_workspace == f.new_has_workspace;
    rc = exit_code && !d.identical ? RI_EXIT_EXEC : RI_EXIT_OK;
    if (ri_output_is_json(mode)) {
        char *text = json_text(&d, &f);
        if (!text) {
            ri_snap_diff_free(&d);
            ri_file_diff_free(&f);
            return ri_fail(RI_EXIT_INTERNAL, CMD, "out of memory writing the diff as JSON");
        }
        printf("%s\n", text);
        free(text);
    } else {
        print_text(paths[0], paths[1], &d);
        print_files(&f);
    }
    ri_snap_diff_free(&d);
    ri_file_diff_free(&f);
    return ri_finish_output(CMD, rc);
}
