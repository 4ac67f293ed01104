/*
 * The `ri` command: shared definitions of the subcommands.
 *
 * Exit codes are part of the command's interface (docs/CLI.md), so they live here, once.
 */
#ifndef RI_CLI_H
#define RI_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* The command line's defaults, meant for a person at a terminal running real programs (the
 * library keeps its own, stricter ones): every instruction metered, a gas budget of a
 * trillion instructions (minutes of work), 1 GiB of memory, and no time limit (Ctrl-C
 * stops a run). */
#define RI_CLI_DEFAULT_MAX_GAS 1000000000000ull
#define RI_CLI_DEFAULT_MAX_MEMORY ((uint64_t)1 << 30)
#define RI_CLI_NO_TIMEOUT RI_SANDBOX_NO_TIME_LIMIT /* max_execution_ms meaning "none" */

#include "ri/sandbox.h"
/* The library's default config with the command line's defaults above (instructions
 * schedule, gas, memory, no timeout). */
ri_sandbox_config ri_cli_config(void);

enum ri_exit {
    RI_EXIT_OK = 0,        /* success */
    RI_EXIT_EXEC = 1,      /* the execution failed: trap, gas, timeout, memory, host function,
                              a snapshot the sandbox refused, a determinism check that failed */
    RI_EXIT_USAGE = 2,     /* bad options or arguments, a PAYLOAD that is not JSON, a config the
                              sandbox cannot honour */
    RI_EXIT_INPUT = 3,     /* a module or snapshot that cannot be read or is invalid, an output
                              file that cannot be written */
    RI_EXIT_INTERNAL = 4,  /* out of memory, or a library error that should not happen */
};

/* Each subcommand gets argv with argv[0] being the subcommand's name. */
int ri_cmd_run(int argc, char **argv);
int ri_cmd_inspect(int argc, char **argv);
int ri_cmd_validate(int argc, char **argv);
int ri_cmd_diff(int argc, char **argv);
int ri_cmd_snap(int argc, char **argv);
int ri_cmd_delta(int argc, char **argv);
/* cmd_snapshot.c: `ri snapshot` and `ri restore`, ri run with the snapshot options set. */
int ri_cmd_snapshot(int argc, char **argv);
int ri_cmd_restore(int argc, char **argv);
/* cmd_resume.c: `ri resume`, and the --pause-on list "gas,interrupt,yield" as a mask. */
int ri_cmd_resume(int argc, char **argv);
int ri_cmd_file(int argc, char **argv);
bool ri_parse_pause_on(const char *list, uint32_t *out);
int ri_cmd_serve(int argc, char **argv); /* only with the server (RI_HAVE_SERVER): loads ri-serve.so */
int ri_serve_main(int argc, char **argv); /* `ri serve` itself, in ri-serve.so (cmd_serve.c) */

/* The exit-code table, printed by every --help. */
extern const char ri_exit_codes_help[];

#endif
