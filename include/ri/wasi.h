/*
 * ri WASI: the wasi_snapshot_preview1 interface of a sandbox (docs/WASI.md).
 *
 * A sandbox whose configuration sets enable_wasi admits imports from
 * wasi_snapshot_preview1 and serves them deterministically: arguments and environment
 * from this configuration, clocks from the sandbox's event time and a virtual clock,
 * random bytes from the sandbox's seeded PRNG, stdio to the embedder's callbacks (or to
 * buffers), no host file system, no sockets.
 */
#ifndef RI_WASI_H
#define RI_WASI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The three standard streams (their descriptors). */
typedef enum ri_wasi_stream {
    RI_WASI_STDIN = 0,
    RI_WASI_STDOUT = 1,
    RI_WASI_STDERR = 2,
} ri_wasi_stream;

/* The program wrote len bytes to stream (stdout or stderr). Return false to make the
 * write fail with EIO. */
typedef bool (*ri_wasi_write_fn)(void *user, ri_wasi_stream stream, const uint8_t *data, size_t len);

/* What ri_wasi_read_fn returns besides a byte count (> 0) or 0 (end of input). */
#define RI_WASI_READ_AGAIN (-1)  /* no input yet: the process pauses until resumed */
#define RI_WASI_READ_ERROR (-2)  /* the read fails with EIO */
/* The program wants up to cap bytes of stdin: copy them into buf and return their count. */
typedef int64_t (*ri_wasi_read_fn)(void *user, uint8_t *buf, size_t cap);

#define RI_WASI_DEFAULT_CLOCK_STEP_NS 1000u          /* per clock_time_get call */
#define RI_WASI_DEFAULT_MAX_OUTPUT_BYTES (16u << 20) /* per buffered stream */

typedef struct ri_wasi_config {
    /* argv[0] is the program's name; NULL with argc 0: no arguments at all. */
    const char *const *argv;
    uint32_t argc;
    /* "KEY=VALUE" strings, in the order the program sees them. */
    const char *const *env;
    uint32_t nenv;
    /* stdout and stderr: NULL collects them in buffers (ri_sandbox_wasi_output). */
    ri_wasi_write_fn write;
    void *write_user;
    /* stdin: NULL reads what ri_sandbox_wasi_stdin_push gave (no input yet until
     * ri_sandbox_wasi_stdin_close, then end of input). */
    ri_wasi_read_fn read;
    void *read_user;
    /* How far each clock_time_get call advances the virtual clock (0: the default). */
    uint64_t clock_step_ns;
    /* The buffers' cap per stream (0: the default); a write beyond it fails with ENOSPC. */
    uint64_t max_output_bytes;
    /* true: no preopened directory (descriptor 3 is not open; the workspace still exists
     * for the embedder). false (the default): the workspace is preopened as "/" at 3. */
    bool no_preopen;
    /* Which standard streams the program sees as a terminal (RI_WASI_TERMINAL_* bits; 0, the
     * default: none, as for pipes, so that output sent to buffers or a client carries no
     * colour codes). A command-line embedder sets the bits of its own streams that are. */
    uint32_t terminals;
} ri_wasi_config;

#define RI_WASI_TERMINAL_STDIN 1u
#define RI_WASI_TERMINAL_STDOUT 2u
#define RI_WASI_TERMINAL_STDERR 4u

/* WASI errno values the embedder may meet in messages and tests (typenames.witx). */
#define RI_WASI_ESUCCESS 0
#define RI_WASI_EAGAIN 6
#define RI_WASI_EBADF 8
#define RI_WASI_EFAULT 21
#define RI_WASI_EINVAL 28
#define RI_WASI_EMFILE 33
#define RI_WASI_EIO 29
#define RI_WASI_ENOSPC 51
#define RI_WASI_ENOSYS 52
#define RI_WASI_ENOTCAPABLE 76

#ifdef __cplusplus
}
#endif
#endif
