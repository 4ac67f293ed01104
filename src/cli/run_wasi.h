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
} ri_wasi_command;

/* Whether the module is a WASI command; false for bytes that do not load. */
bool ri_is_wasi_command(const uint8_t *wasm, size_t len);

/* A program's stdio as ri's own (ri_wasi_config callbacks): writes go through at once,
 * reads take what ri's stdin has, waiting as the program would. */
bool ri_wasi_stdio_write(void *user, ri_wasi_stream stream, const uint8_t *data, size_t len);
int64_t ri_wasi_stdio_read(void *user, uint8_t *buf, size_t cap);
/* Which of ri's own standard streams are terminals (RI_WASI_TERMINAL_* bits). */
uint32_t ri_wasi_stdio_terminals(void);

/* Runs it; returns ri's exit status (the program's exit code when it exited). */
int ri_run_wasi_command(const char *cmd, const ri_wasi_command *c);

#endif
