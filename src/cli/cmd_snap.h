/*
 * `ri snap`: the snapshot store from the shell (docs/CLI.md). Shared between the
 * subcommand files: the common options, opening the store, error mapping, and the
 * snapshot's metadata as JSON and as text.
 *
 *   cmd_snap.c        dispatch, common options, output of metadata and usage
 *   cmd_snap_write.c  save, import, delete, rename, gc
 *   cmd_snap_read.c   restore, list, show, diff, export
 */
#ifndef RI_CLI_CMD_SNAP_H
#define RI_CLI_CMD_SNAP_H

#include <stdbool.h>

#include "cli/args.h"
#include "cli/jsonw.h"
#include "cli/output.h"
#include "ri/store.h"

/* What every subcommand takes: --store DIR, --json / --text, --help. */
typedef struct snapcli_ctx {
    const char *cmd;             /* "ri snap save" */
    const char *store;
    ri_output_mode mode;
    void (*usage)(FILE *f);
} snapcli_ctx;

/* Handles a common option: 1 handled, 0 not common, or a finished exit code (>= 2, or
 * RI_EXIT_OK for --help) in *rc with -1. */
int snapcli_common(snapcli_ctx *c, ri_args *args, const ri_arg *a, int *rc);
/* Opens the store (--store required); NULL with the message printed and *rc set. */
ri_snapstore *snapcli_open(const snapcli_ctx *c, bool create, int *rc);
/* An error from the store as the exit code docs/CLI.md gives, with the message. */
int snapcli_fail(const snapcli_ctx *c, const ri_snapstore_error *err);

void snapcli_json_info(ri_jsonw *w, const ri_snapstore_info *info);
void snapcli_json_usage(ri_jsonw *w, const ri_snapstore_usage *u);
/* "2026-01-29 12:00:01" (UTC) from ns since the epoch. */
void snapcli_time_text(int64_t ns, char *out, size_t cap);
/* "16.0 MiB" */
void snapcli_bytes_text(uint64_t bytes, char *out, size_t cap);
void snapcli_print_info(const ri_snapstore_info *info);

int snapcli_save(int argc, char **argv);
int snapcli_import(int argc, char **argv);
int snapcli_delete(int argc, char **argv);
int snapcli_rename(int argc, char **argv);
int snapcli_gc(int argc, char **argv);
int snapcli_restore(int argc, char **argv);
int snapcli_list(int argc, char **argv);
int snapcli_show(int argc, char **argv);
int snapcli_diff(int argc, char **argv);
int snapcli_export(int argc, char **argv);

#endif
