/*
 * `ri run MODULE.wasm [ARGS...]` for a WASI command (a module that imports
 * wasi_snapshot_preview1 and exports _start): the program's stdio is ri's, its exit code
 * is ri's exit status, --dir copies host directories into its workspace.
 */
#ifndef RI_CLI_RUN_WASI_H
#define RI_CLI_RUN_WASI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/sandbox.h"
#include "cli/output.h"
#include "cli/wasi_dirs.h"

#define RI_WASI_MAX_ENV 1024u
#define RI_WASI_MAX_DIRS 64u

typedef struct ri_wasi_command {
    const char *module_path;
    const uint8_t *wasm;
    size_t wasm_len;
    ri_sandbox_config config;      /* limits, seed, timestamp (enable_wasi is set here) */
    ri_output_mode mode;           /* only an explicit --json/--text prints a summary (stderr) */
    char **args;                   /* the program's argv[1..] */
    int nargs;
    const char *env[RI_WASI_MAX_ENV];
    uint32_t nenv;
    ri_wasi_dir dirs[RI_WASI_MAX_DIRS];
    uint32_t ndirs;
    bool write_back;
    const char *snapshot_path;     /* --snapshot: the final state, or the paused process */
    bool uncompressed;
    uint32_t pause_on;             /* with snapshot_path: when the process pauses */
} ri_wasi_command;

/* Whether the module is a WASI command; false for bytes that do not load. */
bool ri_is_wasi_command(const uint8_t *wasm, size_t len);

/* Runs it; returns ri's exit status (the program's exit code when it exited). */
int ri_run_wasi_command(const char *cmd, const ri_wasi_command *c);

/* stdout, stderr and stdin of a WASI program run by the CLI: ri's own, unbuffered, and
 * terminals to the program where ri's own streams are. */
void ri_wasi_cli_stdio(ri_wasi_config *wasi);

/* After a run or a resume of a WASI process: ri's exit status from the result (the exit
 * code, RI_EXIT_OK when paused, RI_EXIT_EXEC on failure, with the message), the snapshot
 * (with the module, and argv/env in section RARG) when snapshot_path is set, and a note on
 * stderr when the process paused. json: the --json summary's fields go to stderr. */
typedef struct ri_wasi_outcome {
    const char *cmd;
    const char *source;            /* the module's path, or the image resumed */
    const char *snapshot_path;
    bool uncompressed;
    const char *const *argv;
    uint32_t argc;
    const char *const *env;
    uint32_t nenv;
    ri_output_mode mode;
} ri_wasi_outcome;
int ri_wasi_finish(const ri_wasi_outcome *o, ri_sandbox *sb, const ri_sandbox_result *res);

#endif
