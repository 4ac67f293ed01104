/*
 * The WASI layer as the sandbox uses it (src/sandbox/): a context per sandbox, the
 * function table that import validation and linking consult, the dispatcher the host
 * bridge calls, and the state a snapshot, checkpoint or fork carries. Depends on the
 * engine only; the sandbox supplies its PRNG through ri_wasi_services.
 */
#ifndef RI_WASI_LAYER_H
#define RI_WASI_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/engine.h"
#include "ri/wasi.h"

#define RI_WASI_MODULE "wasi_snapshot_preview1"

typedef struct ri_wasi ri_wasi;

typedef struct ri_wasi_services {
    uint32_t (*random32)(void *ctx); /* the next output of the sandbox's seeded PRNG */
    void *ctx;
} ri_wasi_services;

/* cfg may be NULL (no arguments, no environment, buffered stdio). event_timestamp_ms: the
 * realtime clock's origin. NULL on error (why says it: a NULL string, OOM). */
ri_wasi *ri_wasi_new(const ri_wasi_config *cfg, int64_t event_timestamp_ms, const ri_wasi_services *svc, char *why,
                     size_t cap);
void ri_wasi_free(ri_wasi *w);
/* An independent copy of the state (a fork or checkpoint); services replaced. NULL on OOM. */
ri_wasi *ri_wasi_copy(const ri_wasi *w, const ri_wasi_services *svc);
/* A new process: the virtual clock back to 0, descriptors back to the standard three and
 * the preopens, no exit status, no wait. Input not yet read and collected output stay. */
void ri_wasi_reset_process(ri_wasi *w);

/* The workspace file system (a wsfs *, src/workspace/wsfs.h) preopened as "/". */
void *ri_wasi_workspace(ri_wasi *w);

/* ---- the function table ------------------------------------------------------------------ */
uint32_t ri_wasi_function_count(void);
/* The index of wasi_snapshot_preview1.<name>; false if there is no such function. */
bool ri_wasi_lookup(const char *name, size_t len, uint32_t *index);
const char *ri_wasi_function_name(uint32_t index);
ri_functype ri_wasi_function_type(uint32_t index);

typedef enum ri_wasi_outcome {
    RI_WASI_DONE = 0,  /* results written: return to the guest */
    RI_WASI_EXIT,      /* proc_exit: end the process (ri_wasi_exit_code) */
    RI_WASI_YIELD,     /* results written: a stop point after the call (sched_yield, or waiting for stdin) */
} ri_wasi_outcome;

/* Serves one call of function `index` (its arguments typed per ri_wasi_function_type). */
ri_wasi_outcome ri_wasi_call(ri_wasi *w, uint32_t index, ri_host_call *call, const ri_val *args, ri_val *results);
/* Whether sched_yield pauses (the sandbox's pause-on mask has yield). */
void ri_wasi_set_yield_pauses(ri_wasi *w, bool pauses);

/* ---- waiting for stdin -------------------------------------------------------------------- */
/* A read or poll that found no input returned 0 and paused; its data is delivered when
 * input comes, before the guest runs again. */
bool ri_wasi_waiting(const ri_wasi *w);
/* Completes the wait if stdin has input (or its end) now: true, and the guest's memory
 * holds the result; false: still no input (pause again). */
bool ri_wasi_complete_wait(ri_wasi *w, ri_memory *memory);

/* ---- process status and streams ------------------------------------------------------------- */
bool ri_wasi_exited(const ri_wasi *w, uint32_t *code);
bool ri_wasi_stdin_push(ri_wasi *w, const uint8_t *data, size_t len);
void ri_wasi_stdin_close(ri_wasi *w);
/* Buffered output of stream (stdout or stderr); *len its length. */
const uint8_t *ri_wasi_output(const ri_wasi *w, ri_wasi_stream stream, size_t *len);
void ri_wasi_output_clear(ri_wasi *w, ri_wasi_stream stream);

/* ---- the state a snapshot holds (state.c; docs/SNAPSHOT_FORMAT.md "WASI") ------------------ */
/* The process state (section WASI) and the workspace's canonical bytes (section WSFS);
 * *out malloc'd (the workspace: NULL when w has none). false: out of memory. */
bool ri_wasi_state_write(const ri_wasi *w, uint8_t **out, size_t *len);
bool ri_wasi_workspace_write(const ri_wasi *w, uint8_t **out, size_t *len);
/* Replaces w's state and workspace by the bytes' (checked completely first, the
 * descriptors' inodes against the workspace: false with why, w unchanged). */
bool ri_wasi_state_read(ri_wasi *w, const uint8_t *data, size_t len, const uint8_t *ws, size_t ws_len, char *why,
                        size_t cap);
/* The same with the workspace given as a file system (a wsfs *, checked already), which
 * w owns on success (the caller keeps it on failure). */
bool ri_wasi_state_read_fs(ri_wasi *w, const uint8_t *data, size_t len, void *fs, char *why, size_t cap);

#endif
