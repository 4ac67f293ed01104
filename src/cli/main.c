/* `ri`: the command-line front end of ri-sandbox. Dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "ri/sandbox.h"
#include "ri/version.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/suggest.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri COMMAND [OPTIONS] [ARGS]\n"
            "\n"
            "ri-sandbox's command: deterministic, metered WebAssembly sandboxes.\n"
            "\n"
            "commands:\n"
            "  run MODULE.wasm FUNCTION [PAYLOAD]\n"
            "                   execute an exported function in a fresh sandbox; print the\n"
            "                   result and the metrics; snapshot and restore options\n"
            "  inspect FILE     describe a WSNP snapshot file (v1 or v2)\n"
            "  diff OLD NEW     what changed between two snapshot files\n"
            "  validate MODULE.wasm\n"
            "                   load a module with the engine; list its imports and exports\n"
            "  snap SUBCOMMAND --store DIR ...\n"
            "                   the snapshot store: save, restore, list, show, delete,\n"
            "                   rename, diff, export, import, gc\n"
            "  delta create|apply|info ...\n"
            "                   WSNP v2 delta images: the pages that differ from a parent\n"
            "  snapshot MODULE.wasm FUNCTION [PAYLOAD] -o FILE\n"
            "                   run, then write the sandbox's state to FILE (ri run --snapshot)\n"
            "  restore IMAGE FUNCTION [PAYLOAD] [--module M.wasm] [-o FILE]\n"
            "                   restore a snapshot into a new sandbox and run FUNCTION there\n"
            "  resume IMAGE     continue the paused call a snapshot holds (ri run --pause-on),\n"
            "                   or a paused WASI process (ri run --snapshot)\n"
            "  file ls|cat|add|rm|extract IMAGE ...\n"
            "                   the files of a WASI snapshot's workspace\n"
            "  serve [OPTIONS]  the sandbox server over WebSocket (docs/SERVER.md)\n"
            "\n"
            "options:\n"
            "  -h, --help       show this help (`ri COMMAND --help` for a command's)\n"
            "  --version        show the version\n"
            "\n%s"
            "\nSee docs/CLI.md for the details and examples.\n",
            ri_exit_codes_help);
}

int main(int argc, char **argv) {
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd) {
        usage(stderr);
        return RI_EXIT_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return ri_finish_output("ri", RI_EXIT_OK);
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("ri %s (ri-sandbox; snapshots: WSNP v1, v2)\n", ri_version());
        return ri_finish_output("ri", RI_EXIT_OK);
    }
    /* The subcommand sees itself as argv[0]. */
    if (strcmp(cmd, "run") == 0) return ri_cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "inspect") == 0) return ri_cmd_inspect(argc - 1, argv + 1);
    if (strcmp(cmd, "validate") == 0) return ri_cmd_validate(argc - 1, argv + 1);
    if (strcmp(cmd, "diff") == 0) return ri_cmd_diff(argc - 1, argv + 1);
    if (strcmp(cmd, "snap") == 0) return ri_cmd_snap(argc - 1, argv + 1);
    if (strcmp(cmd, "delta") == 0) return ri_cmd_delta(argc - 1, argv + 1);
    if (strcmp(cmd, "resume") == 0) return ri_cmd_resume(argc - 1, argv + 1);
    if (strcmp(cmd, "file") == 0) return ri_cmd_file(argc - 1, argv + 1);
    if (strcmp(cmd, "snapshot") == 0) return ri_cmd_snapshot(argc - 1, argv + 1);
    if (strcmp(cmd, "restore") == 0) return ri_cmd_restore(argc - 1, argv + 1);
#ifdef RI_HAVE_SERVER
    if (strcmp(cmd, "serve") == 0) return ri_cmd_serve(argc - 1, argv + 1);
#endif
    if (cmd[0] == '-') return ri_unknown_option("ri", cmd, usage);
    static const char *const commands[] = {"run", "snapshot", "restore", "resume", "inspect", "diff",
                                           "validate", "snap", "delta", "serve", "file"};
    const char *near = ri_suggest_word(cmd, commands, sizeof commands / sizeof commands[0]);
    if (near) return ri_usage("ri", "unknown command '%s' (did you mean %s?)", cmd, near);
    return ri_usage("ri", "unknown command '%s' (commands: run, snapshot, restore, resume, inspect, diff, validate, snap, delta, file, serve)", cmd);
}
