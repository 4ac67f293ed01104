/* `ri snap SUBCOMMAND`: dispatch, the options every subcommand shares, error mapping,
 * and the snapshot's metadata as JSON (keys in a fixed order) and as text. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cmd_snap.h"

#define CMD "ri snap"

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri snap SUBCOMMAND --store DIR [OPTIONS] [ARGS]\n"
            "\n"
            "The snapshot store: a directory of named snapshots whose memory pages are stored\n"
            "once however many snapshots hold them (docs/STORE.md).\n"
            "\n"
            "subcommands:\n"
            "  save NAME FILE.wsnp      store a WSNP v2 snapshot file as NAME\n"
            "  restore NAME -o FILE     write snapshot NAME out as a WSNP v2 file\n"
            "  list                     the snapshots, newest first, and the store's size\n"
            "  show NAME                one snapshot's metadata\n"
            "  delete NAME...           remove snapshots (their pages go at the next gc)\n"
            "  rename OLD NEW           rename a snapshot\n"
            "  diff OLD NEW             what changed between two snapshots\n"
            "  export NAME -o FILE      a portable file: binary (WSNP v2 + module) or JSON\n"
            "  import FILE              store an exported file (or any WSNP v2 file)\n"
            "  gc                       remove unreferenced blobs; set the size cap; verify\n"
            "\n"
            "`ri snap SUBCOMMAND --help` for each. Names are 1 to 128 characters from\n"
            "A-Z a-z 0-9 . _ - and do not start with '.' or '-'.\n"
            "\n%s",
            ri_exit_codes_help);
}

int ri_cmd_snap(int argc, char **argv) {
    const char *sub = argc > 1 ? argv[1] : NULL;
    if (!sub) {
        usage(stderr);
        return RI_EXIT_USAGE;
    }
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        usage(stdout);
        return ri_finish_output(CMD, RI_EXIT_OK);
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } subs[] = {{"save", snapcli_save},     {"restore", snapcli_restore}, {"list", snapcli_list},
                {"show", snapcli_show},     {"delete", snapcli_delete},   {"rename", snapcli_rename},
                {"diff", snapcli_diff},     {"export", snapcli_export},   {"import", snapcli_import},
                {"gc", snapcli_gc}};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(sub, subs[i].name) == 0) return subs[i].fn(argc - 1, argv + 1);
    return ri_usage(CMD, "unknown subcommand '%s' (save, restore, list, show, delete, rename, diff, export, import, gc)",
                    sub);
}

int snapcli_common(snapcli_ctx *c, ri_args *args, const ri_arg *a, int *rc) {
    if (ri_arg_is(a, "--help") || ri_arg_is(a, "-h")) {
        c->usage(stdout);
        *rc = ri_finish_output(c->cmd, RI_EXIT_OK);
        return -1;
    }
    int handled = ri_arg_output_mode(c->cmd, a, &c->mode, rc);
    if (handled) return handled;
    if (ri_arg_is(a, "--store")) {
        const char *v = ri_args_value(args, a);
        if (!v || !v[0]) return *rc = ri_usage(c->cmd, "option --store needs a directory"), -1;
        c->store = v;
        return 1;
    }
    return 0;
}

ri_snapstore *snapcli_open(const snapcli_ctx *c, bool create, int *rc) {
    if (!c->store) {
        *rc = ri_usage(c->cmd, "--store DIR is required (the store's directory)");
        return NULL;
    }
    ri_snapstore_options o = {create};
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(c->store, &o, &err);
    if (!st) *rc = snapcli_fail(c, &err);
    return st;
}

int snapcli_fail(const snapcli_ctx *c, const ri_snapstore_error *err) {
    int code;
    switch (err->code) {
    case RI_SNAPSTORE_ERR_INVALID_NAME:
    case RI_SNAPSTORE_ERR_INVALID_REF: code = RI_EXIT_USAGE; break;
    case RI_SNAPSTORE_ERR_NOMEM:
    case RI_SNAPSTORE_ERR_ARGUMENT: code = RI_EXIT_INTERNAL; break;
    case RI_SNAPSTORE_ERR_SANDBOX:
    case RI_SNAPSTORE_ERR_CONFLICT: code = RI_EXIT_EXEC; break;
    default: code = RI_EXIT_INPUT; break; /* not found, exists, corrupt, input, io, not a store */
    }
    return ri_fail(code, c->cmd, "%s", err->message);
}

void snapcli_time_text(int64_t ns, char *out, size_t cap) {
    time_t secs = (time_t)(ns / 1000000000);
    struct tm tm;
    if (!gmtime_r(&secs, &tm) || strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm) == 0) snprintf(out, cap, "?");
}

void snapcli_bytes_text(uint64_t bytes, char *out, size_t cap) {
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) v /= 1024, u++;
    if (u == 0) snprintf(out, cap, "%" PRIu64 " B", bytes);
    else snprintf(out, cap, "%.1f %s", v, units[u]);
}

static void origin_json(ri_jsonw *w, const char *key, const char *value) {
    ri_jsonw_key(w, key);
    ri_jsonw_str(w, value[0] ? value : NULL);
}

void snapcli_json_info(ri_jsonw *w, const ri_snapstore_info *info) {
    char hex[2 * RI_SNAP_SHA256_BYTES + 1], when[32];
    ri_snap_hex(info->module_sha256, hex);
    snapcli_time_text(info->created_ns, when, sizeof when);
    ri_jsonw_object(w);
    ri_jsonw_key(w, "name");
    ri_jsonw_str(w, info->name);
    ri_jsonw_key(w, "id");
    ri_jsonw_str(w, info->id);
    ri_jsonw_key(w, "created");
    ri_jsonw_str(w, when);
    ri_jsonw_key(w, "createdNs");
    ri_jsonw_i64(w, info->created_ns);
    ri_jsonw_key(w, "description");
    ri_jsonw_str(w, info->description ? info->description : "");
    ri_jsonw_key(w, "tags");
    ri_jsonw_array_flat(w);
    for (uint32_t i = 0; i < info->ntags; i++) ri_jsonw_str(w, info->tags[i]);
    ri_jsonw_end(w);
    origin_json(w, "originSandbox", info->origin_sandbox);
    origin_json(w, "originSession", info->origin_session);
    ri_jsonw_key(w, "module");
    ri_jsonw_str(w, hex);
    ri_jsonw_key(w, "moduleSize");
    ri_jsonw_u64(w, info->module_size);
    ri_jsonw_key(w, "moduleStored");
    ri_jsonw_bool(w, info->module_stored);
    ri_jsonw_key(w, "status");
    ri_jsonw_str(w, ri_snap_status_name(info->status));
    ri_jsonw_key(w, "prngState");
    ri_jsonw_u64(w, info->prng_state);
    ri_jsonw_key(w, "gasUsed");
    ri_jsonw_u64(w, info->gas_used);
    ri_jsonw_key(w, "eventTimestamp");
    ri_jsonw_i64(w, info->event_timestamp);
    ri_jsonw_key(w, "memories");
    ri_jsonw_u64(w, info->nmemories);
    ri_jsonw_key(w, "memoryBytes");
    ri_jsonw_u64(w, info->memory_bytes);
    ri_jsonw_key(w, "storedPages");
    ri_jsonw_u64(w, info->stored_pages);
    ri_jsonw_key(w, "imageBytes");
    ri_jsonw_u64(w, info->image_bytes);
    ri_jsonw_key(w, "manifestBytes");
    ri_jsonw_u64(w, info->manifest_bytes);
    ri_jsonw_end(w);
}

void snapcli_json_usage(ri_jsonw *w, const ri_snapstore_usage *u) {
    ri_jsonw_object(w);
    ri_jsonw_key(w, "snapshots");
    ri_jsonw_u64(w, u->snapshots);
    ri_jsonw_key(w, "manifestBytes");
    ri_jsonw_u64(w, u->manifest_bytes);
    ri_jsonw_key(w, "blobs");
    ri_jsonw_u64(w, u->blobs);
    ri_jsonw_key(w, "blobBytes");
    ri_jsonw_u64(w, u->blob_bytes);
    ri_jsonw_key(w, "totalBytes");
    ri_jsonw_u64(w, u->total_bytes);
    ri_jsonw_key(w, "diskBytes");
    ri_jsonw_u64(w, u->disk_bytes);
    ri_jsonw_key(w, "tempFiles");
    ri_jsonw_u64(w, u->temp_files);
    ri_jsonw_key(w, "maxBytes");
    if (u->max_bytes) ri_jsonw_u64(w, u->max_bytes);
    else ri_jsonw_null(w);
    ri_jsonw_end(w);
}

void snapcli_print_info(const ri_snapstore_info *info) {
    char hex[2 * RI_SNAP_SHA256_BYTES + 1], when[32], mem[32], img[32];
    ri_snap_hex(info->module_sha256, hex);
    snapcli_time_text(info->created_ns, when, sizeof when);
    snapcli_bytes_text(info->memory_bytes, mem, sizeof mem);
    snapcli_bytes_text(info->image_bytes, img, sizeof img);
    ri_printf_safe(stdout, "snapshot %s\n", info->name);
    printf("  id           %s\n", info->id);
    printf("  created      %s UTC\n", when);
    if (info->description && info->description[0]) {
        printf("  description  ");
        ri_put_safe(stdout, info->description, strlen(info->description));
        printf("\n");
    }
    if (info->ntags) {
        printf("  tags        ");
        for (uint32_t i = 0; i < info->ntags; i++) {
            printf(" ");
            ri_put_safe(stdout, info->tags[i], strlen(info->tags[i]));
        }
        printf("\n");
    }
    printf("  origin       sandbox %s, session %s\n", info->origin_sandbox[0] ? info->origin_sandbox : "-",
           info->origin_session[0] ? info->origin_session : "-");
    printf("  module       sha256:%s, %" PRIu64 " bytes, %s\n", hex, info->module_size,
           info->module_stored ? "in the store" : "NOT in the store (restores only where it runs)");
    printf("  state        %s, PRNG %" PRIu32 ", gas used %" PRIu64 ", event timestamp %" PRId64 "\n",
           ri_snap_status_name(info->status), info->prng_state, info->gas_used, info->event_timestamp);
    printf("  memory       %" PRIu32 " memor%s, %s, %" PRIu64 " non-zero page%s\n", info->nmemories,
           info->nmemories == 1 ? "y" : "ies", mem, info->stored_pages, info->stored_pages == 1 ? "" : "s");
    printf("  image        %s as a WSNP v2 file; manifest %" PRIu64 " bytes\n", img, info->manifest_bytes);
}
