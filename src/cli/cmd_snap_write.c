/* `ri snap save | import | delete | rename | gc`: the subcommands that change the
 * store. Each change is the library's (atomic: a crash leaves the old state or the new
 * one, never a part); this file parses options and reports. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_snap.h"
#include "cli/files.h"
#include "cli/suggest.h"
#include "cli/progress.h"

#define FILE_MAX ((size_t)1 << 34) /* a 4 GiB memory as a raw image, with room */

/* ---- save and import ------------------------------------------------------------------------------ */

static void save_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap save --store DIR [OPTIONS] NAME FILE.wsnp\n"
            "\n"
            "Stores the WSNP v2 snapshot FILE.wsnp (ri run --snapshot FILE --format v2, raw or\n"
            "zstd, with or without the module) as snapshot NAME. Pages already in the store are\n"
            "not stored again. The store is created if DIR does not exist.\n"
            "\n"
            "options:\n"
            "  --store DIR            the store's directory (required)\n"
            "  --module M.wasm        the module, when FILE does not embed it (checked against\n"
            "                         the SHA-256 FILE names); without it the snapshot restores\n"
            "                         only into a sandbox that runs that module\n"
            "  --description TEXT     free text (UTF-8, at most 4096 bytes)\n"
            "  --tag TAG              a tag (repeatable, at most 32)\n"
            "  --origin-sandbox ID    the sandbox the state came from\n"
            "  --session ID           the session that owns it (only that session may restore it)\n"
            "  --force                replace a snapshot of that name (else exit 3)\n"
            "  --json | --text        output format (JSON when stdout is not a terminal)\n"
            "  -h, --help             show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

static void import_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap import --store DIR [--name NAME] [--force] FILE\n"
            "\n"
            "Stores an exported snapshot (ri snap export: binary or JSON, told apart by the\n"
            "content) or any WSNP v2 file. Name, description, tags, time and origin come\n"
            "from the export; --name gives another name (required for a plain WSNP file).\n"
            "The metadata is checked against the image: an edited export is refused.\n"
            "\n"
            "options:\n"
            "  --store DIR      the store's directory (required; created if missing)\n"
            "  --name NAME      store it under this name\n"
            "  --force          replace a snapshot of that name (else exit 3)\n"
            "  --json | --text  output format\n"
            "  -h, --help       show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

static int report_saved(const snapcli_ctx *c, const ri_snapstore_info *info, const ri_snapstore_put_stats *s) {
    if (ri_output_is_json(c->mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c->store);
        ri_jsonw_key(&w, "snapshot");
        snapcli_json_info(&w, info);
        ri_jsonw_key(&w, "stats");
        if (s) {
            ri_jsonw_object(&w);
            ri_jsonw_key(&w, "pages");
            ri_jsonw_u64(&w, s->pages);
            ri_jsonw_key(&w, "pagesHashed");
            ri_jsonw_u64(&w, s->pages_hashed);
            ri_jsonw_key(&w, "blobsWritten");
            ri_jsonw_u64(&w, s->blobs_written);
            ri_jsonw_key(&w, "bytesWritten");
            ri_jsonw_u64(&w, s->bytes_written);
            ri_jsonw_key(&w, "evicted");
            ri_jsonw_u64(&w, s->evicted);
            ri_jsonw_key(&w, "warning");
            ri_jsonw_str(&w, s->warning[0] ? s->warning : NULL);
            ri_jsonw_end(&w);
        } else {
            ri_jsonw_null(&w);
        }
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        ri_printf_safe(stdout, "saved %s\n", info->name);
        snapcli_print_info(info);
        if (s) {
            char written[32];
            snapcli_bytes_text(s->bytes_written, written, sizeof written);
            printf("  stored       %" PRIu64 " new blob%s, %s written (the other pages were in the store)\n",
                   s->blobs_written, s->blobs_written == 1 ? "" : "s", written);
            if (s->evicted) printf("  evicted      %" PRIu64 " older snapshot%s (size cap)\n", s->evicted, s->evicted == 1 ? "" : "s");
        }
    }
    if (s && s->warning[0]) ri_fail(RI_EXIT_OK, c->cmd, "warning: %s", s->warning);
    return ri_finish_output(c->cmd, RI_EXIT_OK);
}

int snapcli_save(int argc, char **argv) {
    snapcli_ctx c = {"ri snap save", NULL, RI_OUTPUT_AUTO, save_usage};
    const char *pos[2] = {NULL, NULL}, *module_path = NULL;
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    const char *tags[RI_SNAPSTORE_TAGS_MAX];
    ri_args args;
    ri_args_init(&args, argc, argv);
    int rc;
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (pos[1]) return ri_usage(c.cmd, "unexpected argument '%s' (NAME FILE.wsnp)", a.text);
            pos[pos[0] ? 1 : 0] = a.text;
            continue;
        }
        int k = snapcli_common(&c, &args, &a, &rc);
        if (k < 0) return rc;
        if (k) continue;
        if (ri_arg_is(&a, "--force")) {
            o.replace = true;
            continue;
        }
        const char *v = ri_args_value(&args, &a);
        if (!v) return ri_unknown_option(c.cmd, a.text, c.usage);
        if (ri_arg_is(&a, "--module")) module_path = v;
        else if (ri_arg_is(&a, "--description")) o.description = v;
        else if (ri_arg_is(&a, "--origin-sandbox")) o.origin_sandbox = v;
        else if (ri_arg_is(&a, "--session")) o.origin_session = v;
        else if (ri_arg_is(&a, "--tag")) {
            if (o.ntags == RI_SNAPSTORE_TAGS_MAX) return ri_usage(c.cmd, "at most %d tags", RI_SNAPSTORE_TAGS_MAX);
            tags[o.ntags++] = v;
        } else return ri_unknown_option(c.cmd, a.text, c.usage);
    }
    if (!pos[1]) return ri_usage(c.cmd, pos[0] ? "missing FILE.wsnp" : "missing NAME and FILE.wsnp");
    o.tags = tags;
    ri_snapstore_error err;
    if (!ri_snapstore_name_valid(pos[0], &err)) return snapcli_fail(&c, &err);
    uint8_t *image = NULL, *module = NULL;
    size_t len = 0;
    char why[256];
    rc = ri_read_file(pos[1], FILE_MAX, &image, &len, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, c.cmd, "cannot read snapshot '%s': %s", pos[1], why);
    if (module_path) {
        rc = ri_read_module(module_path, &module, &o.module_len, why, sizeof why);
        if (rc != RI_EXIT_OK) {
            free(image);
            return ri_fail(rc, c.cmd, "cannot read module '%s': %s", module_path, why);
        }
        o.module = module;
    }
    ri_snapstore *st = snapcli_open(&c, true, &rc);
    if (!st) {
        free(image);
        free(module);
        return rc;
    }
    ri_snapstore_info info;
    ri_snapstore_put_stats stats;
    ri_progress *storing = ri_progress_start("storing the snapshot", 0);
    bool ok = ri_snapstore_put(st, pos[0], image, len, &o, &info, &stats, &err);
    ri_progress_finish(storing);
    free(image);
    free(module);
    ri_snapstore_close(st);
    if (!ok && err.code == RI_SNAPSTORE_ERR_EXISTS)
        return ri_fail(RI_EXIT_INPUT, c.cmd, "%s (--force replaces it)", err.message);
    if (!ok) return snapcli_fail(&c, &err);
    rc = report_saved(&c, &info, &stats);
    ri_snapstore_info_free(&info);
    return rc;
}

int snapcli_import(int argc, char **argv) {
    snapcli_ctx c = {"ri snap import", NULL, RI_OUTPUT_AUTO, import_usage};
    const char *file = NULL, *name = NULL;
    ri_snapstore_put_options o;
    memset(&o, 0, sizeof o);
    ri_args args;
    ri_args_init(&args, argc, argv);
    int rc;
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (file) return ri_usage(c.cmd, "unexpected argument '%s' (one FILE)", a.text);
            file = a.text;
            continue;
        }
        int k = snapcli_common(&c, &args, &a, &rc);
        if (k < 0) return rc;
        if (k) continue;
        if (ri_arg_is(&a, "--force")) o.replace = true;
        else if (ri_arg_is(&a, "--name")) {
            if (!(name = ri_args_value(&args, &a))) return ri_usage(c.cmd, "option --name needs a value");
        } else return ri_unknown_option(c.cmd, a.text, c.usage);
    }
    if (!file) return ri_usage(c.cmd, "missing FILE");
    ri_snapstore_error err;
    if (name && !ri_snapstore_name_valid(name, &err)) return snapcli_fail(&c, &err);
    uint8_t *data;
    size_t len;
    char why[256];
    rc = ri_read_file(file, FILE_MAX, &data, &len, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, c.cmd, "cannot read '%s': %s", file, why);
    ri_snapstore *st = snapcli_open(&c, true, &rc);
    if (!st) {
        free(data);
        return rc;
    }
    ri_snapstore_info info;
    ri_progress *storing = ri_progress_start("importing into the store", 0);
    bool ok = ri_snapstore_import(st, data, len, name, &o, &info, &err);
    ri_progress_finish(storing);
    free(data);
    ri_snapstore_close(st);
    if (!ok) return ri_fail(err.code == RI_SNAPSTORE_ERR_ARGUMENT ? RI_EXIT_USAGE : RI_EXIT_INPUT, c.cmd, "%s: %s%s",
                            file, err.message, err.code == RI_SNAPSTORE_ERR_EXISTS ? " (--force replaces it)" : "");
    rc = report_saved(&c, &info, NULL);
    ri_snapstore_info_free(&info);
    return rc;
}

/* ---- delete and rename ------------------------------------------------------------------------------- */

static void delete_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap delete --store DIR [--missing-ok] NAME...\n"
            "\n"
            "Removes snapshots (each one atomically: its manifest goes in one step). Their\n"
            "pages stay until `ri snap gc` (other snapshots may share them). A name that is\n"
            "not there is an error (exit 3) unless --missing-ok; the others are still deleted.\n"
            "\n"
            "options: --store DIR (required), --missing-ok, --json | --text, -h | --help\n"
            "\n%s",
            ri_exit_codes_help);
}

int snapcli_delete(int argc, char **argv) {
    snapcli_ctx c = {"ri snap delete", NULL, RI_OUTPUT_AUTO, delete_usage};
    bool missing_ok = false;
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    bool *gone = calloc((size_t)argc + 1, sizeof *gone);
    if (!names || !gone) {
        free(names);
        free(gone);
        return ri_fail(RI_EXIT_INTERNAL, c.cmd, "out of memory");
    }
    size_t n = 0;
    ri_args args;
    ri_args_init(&args, argc, argv);
    int rc = RI_EXIT_OK;
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            names[n++] = a.text;
            continue;
        }
        int k = snapcli_common(&c, &args, &a, &rc);
        if (k < 0) goto out;
        if (k) continue;
        if (ri_arg_is(&a, "--missing-ok")) missing_ok = true;
        else {
            rc = ri_unknown_option(c.cmd, a.text, c.usage);
            goto out;
        }
    }
    if (!n) {
        rc = ri_usage(c.cmd, "missing NAME");
        goto out;
    }
    ri_snapstore_error err;
    for (size_t i = 0; i < n; i++)
        if (!ri_snapstore_name_valid(names[i], &err)) {
            rc = snapcli_fail(&c, &err);
            goto out;
        }
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) goto out;
    for (size_t i = 0; i < n; i++) {
        if (!ri_snapstore_delete(st, names[i], &gone[i], &err)) {
            rc = snapcli_fail(&c, &err);
            break;
        }
        if (!gone[i] && !missing_ok) {
            ri_fail(RI_EXIT_INPUT, c.cmd, "Snapshot not found: %s", names[i]);
            rc = RI_EXIT_INPUT;
        }
    }
    ri_snapstore_close(st);
    if (ri_output_is_json(c.mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c.store);
        for (int pass = 0; pass < 2; pass++) {
            ri_jsonw_key(&w, pass ? "missing" : "deleted");
            ri_jsonw_array_flat(&w);
            for (size_t i = 0; i < n; i++)
                if (gone[i] == !pass) ri_jsonw_str(&w, names[i]);
            ri_jsonw_end(&w);
        }
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        for (size_t i = 0; i < n; i++)
            if (gone[i]) ri_printf_safe(stdout, "deleted %s\n", names[i]);
    }
    rc = ri_finish_output(c.cmd, rc);
out:
    free(names);
    free(gone);
    return rc;
}

static void rename_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap rename --store DIR OLD NEW\n"
            "\n"
            "Renames a snapshot in one atomic step. NEW must not exist (exit 3).\n"
            "\n"
            "options: --store DIR (required), --json | --text, -h | --help\n"
            "\n%s",
            ri_exit_codes_help);
}

int snapcli_rename(int argc, char **argv) {
    snapcli_ctx c = {"ri snap rename", NULL, RI_OUTPUT_AUTO, rename_usage};
    const char *pos[2] = {NULL, NULL};
    ri_args args;
    ri_args_init(&args, argc, argv);
    int rc;
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) {
            if (pos[1]) return ri_usage(c.cmd, "unexpected argument '%s' (OLD NEW)", a.text);
            pos[pos[0] ? 1 : 0] = a.text;
            continue;
        }
        int k = snapcli_common(&c, &args, &a, &rc);
        if (k < 0) return rc;
        if (!k) return ri_unknown_option(c.cmd, a.text, c.usage);
    }
    if (!pos[1]) return ri_usage(c.cmd, pos[0] ? "missing NEW" : "missing OLD and NEW");
    ri_snapstore_error err;
    if (!ri_snapstore_name_valid(pos[0], &err) || !ri_snapstore_name_valid(pos[1], &err)) return snapcli_fail(&c, &err);
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    bool ok = ri_snapstore_rename(st, pos[0], pos[1], &err);
    ri_snapstore_close(st);
    if (!ok) return snapcli_fail(&c, &err);
    if (ri_output_is_json(c.mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c.store);
        ri_jsonw_key(&w, "from");
        ri_jsonw_str(&w, pos[0]);
        ri_jsonw_key(&w, "to");
        ri_jsonw_str(&w, pos[1]);
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        ri_printf_safe(stdout, "renamed %s to %s\n", pos[0], pos[1]);
    }
    return ri_finish_output(c.cmd, RI_EXIT_OK);
}

/* ---- gc ------------------------------------------------------------------------------------------------ */

static void gc_usage(FILE *f) {
    fprintf(f,
            "usage: ri snap gc --store DIR [--max-size BYTES | --max-size none] [--verify]\n"
            "\n"
            "Collects garbage: removes the blobs no snapshot refers to and the temporary\n"
            "files interrupted writers left, and, over the size cap, the oldest snapshots\n"
            "until the store fits. Safe while other processes use the store (it waits for\n"
            "their saves to commit).\n"
            "\n"
            "options:\n"
            "  --store DIR             the store's directory (required)\n"
            "  --max-size BYTES|none   set the store's size cap first (kept in the store;\n"
            "                          KiB, MiB, GiB suffixes; none removes it)\n"
            "  --verify                then read every manifest and blob and check each\n"
            "                          against its hash (exit 3 if anything is damaged)\n"
            "  --json | --text         output format\n"
            "  -h, --help              show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

int snapcli_gc(int argc, char **argv) {
    snapcli_ctx c = {"ri snap gc", NULL, RI_OUTPUT_AUTO, gc_usage};
    bool verify = false, set_max = false;
    uint64_t max = 0;
    ri_args args;
    ri_args_init(&args, argc, argv);
    int rc;
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        if (a.kind == RI_ARG_POSITIONAL) return ri_usage(c.cmd, "unexpected argument '%s'", a.text);
        int k = snapcli_common(&c, &args, &a, &rc);
        if (k < 0) return rc;
        if (k) continue;
        if (ri_arg_is(&a, "--verify")) verify = true;
        else if (ri_arg_is(&a, "--max-size")) {
            const char *v = ri_args_value(&args, &a), *why;
            if (!v) return ri_usage(c.cmd, "option --max-size needs a value");
            set_max = true;
            if (strcmp(v, "none") == 0) max = 0;
            else if (!ri_parse_bytes(v, &max, &why) || max == 0 || max > (uint64_t)INT64_MAX)
                return ri_usage(c.cmd, "--max-size: '%s' is not a size in bytes above 0 (or none)", v);
        } else return ri_unknown_option(c.cmd, a.text, c.usage);
    }
    ri_snapstore *st = snapcli_open(&c, false, &rc);
    if (!st) return rc;
    ri_snapstore_error err, first;
    ri_snapstore_gc_stats gs;
    ri_snapstore_usage u;
    uint64_t checked = 0, bad = 0;
    ri_progress *collecting = ri_progress_start("removing unreferenced blobs", 0);
    bool ok = set_max ? ri_snapstore_set_max_bytes(st, max, &gs, &err) : ri_snapstore_gc(st, &gs, &err);
    if (ok) ok = ri_snapstore_usage_of(st, &u, &err);
    ri_progress_finish(collecting);
    ri_progress *verifying = ok && verify ? ri_progress_start("verifying every blob", 0) : NULL;
    if (ok && verify) ok = ri_snapstore_verify(st, &checked, &bad, &first, &err);
    ri_progress_finish(verifying);
    ri_snapstore_close(st);
    if (!ok) return snapcli_fail(&c, &err);
    if (ri_output_is_json(c.mode)) {
        ri_jsonw w;
        ri_jsonw_init(&w, stdout);
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "store");
        ri_jsonw_str(&w, c.store);
        ri_jsonw_key(&w, "gc");
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "blobsKept");
        ri_jsonw_u64(&w, gs.blobs_kept);
        ri_jsonw_key(&w, "blobsRemoved");
        ri_jsonw_u64(&w, gs.blobs_removed);
        ri_jsonw_key(&w, "tempRemoved");
        ri_jsonw_u64(&w, gs.temp_removed);
        ri_jsonw_key(&w, "evicted");
        ri_jsonw_u64(&w, gs.evicted);
        ri_jsonw_key(&w, "bytesRemoved");
        ri_jsonw_u64(&w, gs.bytes_removed);
        ri_jsonw_end(&w);
        ri_jsonw_key(&w, "usage");
        snapcli_json_usage(&w, &u);
        ri_jsonw_key(&w, "verify");
        if (verify) {
            ri_jsonw_object(&w);
            ri_jsonw_key(&w, "checked");
            ri_jsonw_u64(&w, checked);
            ri_jsonw_key(&w, "damaged");
            ri_jsonw_u64(&w, bad);
            ri_jsonw_key(&w, "firstDamage");
            ri_jsonw_str(&w, bad ? first.message : NULL);
            ri_jsonw_end(&w);
        } else {
            ri_jsonw_null(&w);
        }
        ri_jsonw_end(&w);
        ri_jsonw_finish(&w);
    } else {
        char freed[32], total[32], cap[32];
        snapcli_bytes_text(gs.bytes_removed, freed, sizeof freed);
        snapcli_bytes_text(u.total_bytes, total, sizeof total);
        snapcli_bytes_text(u.max_bytes, cap, sizeof cap);
        printf("removed %" PRIu64 " unreferenced blob%s, %" PRIu64 " temporary file%s and %" PRIu64
               " evicted snapshot%s: %s freed\n",
               gs.blobs_removed, gs.blobs_removed == 1 ? "" : "s", gs.temp_removed, gs.temp_removed == 1 ? "" : "s",
               gs.evicted, gs.evicted == 1 ? "" : "s", freed);
        printf("store: %" PRIu64 " snapshot%s, %" PRIu64 " blob%s, %s%s%s\n", u.snapshots, u.snapshots == 1 ? "" : "s",
               u.blobs, u.blobs == 1 ? "" : "s", total, u.max_bytes ? " of a cap of " : "", u.max_bytes ? cap : "");
        if (verify) {
            printf("verify: %" PRIu64 " file%s checked, %" PRIu64 " damaged\n", checked, checked == 1 ? "" : "s", bad);
            if (bad) ri_printf_safe(stdout, "  first: %s\n", first.message);
        }
    }
    return ri_finish_output(c.cmd, verify && bad ? RI_EXIT_INPUT : RI_EXIT_OK);
}
