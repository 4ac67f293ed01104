/*
 * `ri snapshot` and `ri restore`: the snapshot round trip under its own names. Both are
 * `ri run` with the snapshot options filled in, so every run option keeps one meaning:
 *
 *   ri snapshot MODULE.wasm FUNCTION [PAYLOAD] -o FILE [run options]
 *       = ri run MODULE.wasm FUNCTION [PAYLOAD] --snapshot FILE [run options]
 *   ri restore IMAGE FUNCTION [PAYLOAD] [--module MODULE.wasm] [-o FILE] [run options]
 *       = ri run --restore IMAGE (MODULE.wasm | --image-module) FUNCTION [PAYLOAD]
 *                [--snapshot FILE] [run options]
 *
 * Forking has no command: a fork is an in-memory copy-on-write sandbox that lives as long
 * as the process that made it (ri_sandbox_fork); between processes, the snapshot file
 * already is the fork (restore it as often as wanted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/output.h"

static void snapshot_usage(FILE *f) {
    fprintf(f,
            "usage: ri snapshot MODULE.wasm FUNCTION [PAYLOAD] -o FILE [ri run options]\n"
            "\n"
            "Runs FUNCTION in a new sandbox (as `ri run`) and writes the sandbox's state\n"
            "afterwards to FILE, atomically: WSNP v2 by default (everything, zstd, the module\n"
            "embedded, so `ri restore FILE ...` needs nothing else), v1 with --format v1.\n"
            "With --pause-on, a paused call is part of the image and `ri resume FILE`\n"
            "continues it.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE   where to write the snapshot (required)\n"
            "  every option of `ri run` (--timestamp, --seed, --format, --embed-module, ...):\n"
            "  see `ri run --help`\n"
            "\n%s",
            ri_exit_codes_help);
}

static void restore_usage(FILE *f) {
    fprintf(f,
            "usage: ri restore IMAGE FUNCTION [PAYLOAD] [--module MODULE.wasm] [-o FILE]\n"
            "                  [ri run options]\n"
            "\n"
            "Restores the snapshot IMAGE (WSNP v1 or v2) into a new sandbox and runs\n"
            "FUNCTION there. The module is the one IMAGE embeds, or MODULE.wasm (which a v1\n"
            "image always needs). With -o, the state afterwards is written to FILE (v2: with\n"
            "the module embedded). The\n"
            "event timestamp is the image's unless --timestamp is given.\n"
            "\n"
            "options:\n"
            "  --module FILE       the module, when IMAGE does not embed it\n"
            "  -o, --output FILE   write the state after the run (a snapshot) to FILE\n"
            "  every option of `ri run`: see `ri run --help`\n"
            "\n%s",
            ri_exit_codes_help);
}

/* `ri run` arguments being built: head (options and positionals before any "--"), then
 * the options the caller adds, then "--" and tail (the positionals after it), so that
 * what followed "--" stays positional. */
typedef struct run_args {
    char **head, **tail;
    int nhead, ntail;
} run_args;

static void run_args_free(run_args *r) {
    free(r->head);
    free(r->tail);
}

/* argv[1..] without -o/--output (returned in *output) and, when module is not NULL,
 * without --module (returned in *module); head[0] is "run". */
static bool rewrite(int argc, char **argv, const char **output, const char **module, run_args *r, int *rc,
                    const char *cmd) {
    r->head = calloc((size_t)argc + 8, sizeof *r->head);
    r->tail = calloc((size_t)argc + 1, sizeof *r->tail);
    r->nhead = r->ntail = 0;
    if (!r->head || !r->tail) {
        run_args_free(r);
        *rc = ri_fail(RI_EXIT_INTERNAL, cmd, "out of memory");
        return false;
    }
    r->head[r->nhead++] = (char *)"run";
    ri_args args;
    ri_args_init(&args, argc, argv);
    for (ri_arg a = ri_args_next(&args); a.kind != RI_ARG_END; a = ri_args_next(&args)) {
        bool is_output = ri_arg_is(&a, "-o") || ri_arg_is(&a, "--output");
        if (a.kind == RI_ARG_OPTION && (is_output || (module && ri_arg_is(&a, "--module")))) {
            const char *value = ri_args_value(&args, &a);
            if (!value || !*value) {
                run_args_free(r);
                *rc = ri_usage(cmd, "option %s needs a FILE", a.name);
                return false;
            }
            *(is_output ? output : module) = value;
            continue;
        }
        /* Everything else passes through as written and in order (an option's separate
         * value comes back as a positional right after it, so it stays in place). */
        if (args.options_ended) r->tail[r->ntail++] = (char *)a.text;
        else r->head[r->nhead++] = (char *)a.text;
    }
    return true;
}

/* head, then "--" and tail: the finished argument vector for ri_cmd_run. */
static int run_with(run_args *r) {
    if (r->ntail) {
        r->head[r->nhead++] = (char *)"--";
        for (int i = 0; i < r->ntail; i++) r->head[r->nhead++] = r->tail[i];
    }
    int rc = ri_cmd_run(r->nhead, r->head);
    run_args_free(r);
    return rc;
}

/* The index of the first argument that is exactly name, before any "--"; -1 if none. */
static int arg_at(int argc, char **argv, const char *name) {
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], name) == 0) return i;
    return -1;
}

static bool wants_help(int argc, char **argv) { return arg_at(argc, argv, "-h") > 0 || arg_at(argc, argv, "--help") > 0; }

/* Whether ri run must be told --embed-module: not already asked, and not --format v1
 * (which cannot embed the module). */
static bool needs_embed_flag(int argc, char **argv) {
    int format = arg_at(argc, argv, "--format");
    bool v1 = arg_at(argc, argv, "--format=v1") > 0 || (format > 0 && format + 1 < argc && strcmp(argv[format + 1], "v1") == 0);
    return !v1 && arg_at(argc, argv, "--embed-module") < 0;
}

int ri_cmd_snapshot(int argc, char **argv) {
    const char *cmd = "ri snapshot";
    if (wants_help(argc, argv)) {
        snapshot_usage(stdout);
        return ri_finish_output(cmd, RI_EXIT_OK);
    }
    const char *output = NULL;
    int rc = RI_EXIT_OK;
    run_args r;
    if (!rewrite(argc, argv, &output, NULL, &r, &rc, cmd)) return rc;
    if (!output) {
        run_args_free(&r);
        return ri_usage(cmd, "-o FILE is required (where to write the snapshot)");
    }
    r.head[r.nhead++] = (char *)"--snapshot";
    r.head[r.nhead++] = (char *)output;
    /* The image embeds its module (v2), so that `ri restore FILE` needs nothing else. */
    if (needs_embed_flag(argc, argv)) r.head[r.nhead++] = (char *)"--embed-module";
    return run_with(&r);
}

int ri_cmd_restore(int argc, char **argv) {
    const char *cmd = "ri restore";
    if (wants_help(argc, argv)) {
        restore_usage(stdout);
        return ri_finish_output(cmd, RI_EXIT_OK);
    }
    /* IMAGE comes first, so that it cannot be mistaken for an option's value. */
    if (argc < 2 || argv[1][0] == '-')
        return ri_usage(cmd, "missing IMAGE: the snapshot file to restore comes first (ri restore IMAGE FUNCTION ...)");
    const char *image = argv[1];
    const char *output = NULL, *module = NULL;
    int rc = RI_EXIT_OK;
    run_args r;
    if (!rewrite(argc - 1, argv + 1, &output, &module, &r, &rc, cmd)) return rc;
    /* run --restore IMAGE (--image-module | MODULE) then the rest: head has room (argc + 8) */
    memmove(r.head + 4, r.head + 1, (size_t)(r.nhead - 1) * sizeof *r.head);
    r.head[1] = (char *)"--restore";
    r.head[2] = (char *)image;
    r.head[3] = module ? (char *)module : (char *)"--image-module";
    r.nhead += 3;
    if (output) {
        r.head[r.nhead++] = (char *)"--snapshot";
        r.head[r.nhead++] = (char *)output;
        if (needs_embed_flag(argc, argv)) r.head[r.nhead++] = (char *)"--embed-module";
    }
    return run_with(&r);
}
