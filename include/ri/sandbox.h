/*
 * ri sandbox: deterministic, metered WebAssembly sandboxes.
 *
 * A sandbox is one WebAssembly instance with resource limits (memory, gas, wall-clock
 * time), deterministic time and randomness, import isolation, and snapshots.
 *
 *   ri_sandboxes  the factory (the original's createWasmSandbox()): hands out ids
 *                 "sandbox-0", "sandbox-1", ... Thread-safe.
 *   ri_sandbox    one sandbox. Used by one thread at a time; separate sandboxes are
 *                 independent and may run on separate threads at the same time.
 *                 ri_sandbox_interrupt is the only call allowed from another thread.
 *
 * Lifecycle: created --load--> loaded --execute--> running --> loaded;
 * loaded --suspend--> suspended --restore--> loaded; any --destroy--> destroyed.
 * destroy is idempotent; the handle stays valid (status "destroyed") until
 * ri_sandbox_free.
 *
 * Errors are values: ri_sandbox_error carries the seed's error code, its fields, and
 * the original's message texts.
 */
#ifndef RI_SANDBOX_H
#define RI_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"

#include "ri/engine.h"
#include "ri/snapshot.h"
#include "ri/wasi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration --------------------------------------------------------- */

#define RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES 16777216u /* 16 MiB */
#define RI_SANDBOX_DEFAULT_MAX_GAS 1000000u
#define RI_SANDBOX_DEFAULT_MAX_EXECUTION_MS 50u
/* max_execution_ms: no wall-clock limit at all, so no watchdog thread (any other value is one) */
#define RI_SANDBOX_NO_TIME_LIMIT UINT32_MAX
#define RI_SANDBOX_DEFAULT_SEED 0u

/* How gas is counted. */
typedef enum ri_gas_schedule {
    /* Seed-compatible: each import call (host functions, __get_time, __get_random)
     * costs 1, checked before the call; instructions cost nothing; exactly max_gas
     * calls succeed. */
    RI_GAS_HOST_CALLS = 0,
    /* The engine's instruction metering: every instruction costs 1 (bulk operations
     * 1 + their length), every import call 1 more; a loop without host calls is
     * stopped deterministically too. */
    RI_GAS_INSTRUCTIONS = 1,
} ri_gas_schedule;

/* A host function the module may import as env.<name>. The callback is the engine's
 * ri_host_fn: it reads args, writes results, and fails with ri_host_fail(call, ...),
 * which ends the execution as HOST_FUNCTION_ERROR {function name, message}. The
 * caller's memory is ri_host_call_memory(call). */
typedef struct ri_host_function {
    const char *name;
    uint32_t nparams;
    const ri_valtype *params;   /* i32, i64, f32 or f64 */
    uint32_t nresults;
    const ri_valtype *results;
    ri_host_fn fn;
    void *user;
} ri_host_function;

typedef struct ri_sandbox_config {
    uint64_t max_memory_bytes;      /* imported and module-defined memory alike */
    uint64_t max_gas;               /* per execution; 0 is a valid budget */
    uint32_t max_execution_ms;      /* wall clock, enforced inside loops too; or RI_SANDBOX_NO_TIME_LIMIT */
    uint32_t deterministic_seed;    /* Mulberry32 seed */
    bool has_event_timestamp;       /* required: create fails without it */
    int64_t event_timestamp;        /* ms since epoch, what __get_time returns (truncated to i32) */
    const ri_host_function *host_functions; /* copied at create */
    uint32_t nhost_functions;
    ri_gas_schedule gas_schedule;
    uint32_t max_call_depth;        /* 0: the engine's default */
    /* NULL, or one entry per host function: the import module it is declared in (NULL
     * entry: "env"); another module than env (not a WASI one) is then admitted for those
     * names only, e.g. the server's ri.write and ri.read. Copied at create. */
    const char *const *host_modules;
    /* WASI preview1 (docs/WASI.md): false (the default) refuses every wasi_snapshot_preview1
     * import, as before; true admits them and serves them deterministically. wasi: NULL
     * (no arguments, no environment, buffered stdio) or the WASI configuration, copied at
     * create. */
    bool enable_wasi;
    const ri_wasi_config *wasi;
    /* The Emscripten profile (docs/LANGUAGES.md), with enable_wasi: false (the default)
     * refuses Emscripten's env imports, as before; true serves them (invoke_* and
     * _emscripten_throw_longjmp as engine operations, the file syscalls over the
     * workspace, time from the virtual clock), so interpreters built with Emscripten run. */
    bool enable_emscripten;
    /* Fusion families (ri_fusion, ri/engine.h) the engine's compiler leaves out of this
     * sandbox's module; default 0 (all on). Changes speed only: results, gas, pauses and
     * snapshots are the same. For measuring what each family gives on a workload (an
     * interpreter's, say) and for telling a suspected compiler fault from a program's. */
    uint32_t fusions_off;
    uint32_t reserved32;            /* keep it zero */
    /* Room for fields of later versions, so the struct's size never changes within a major
     * version (see RI_API in ri/api.h): keep it zero (ri_sandbox_config_default does). */
    uint64_t reserved[6];
} ri_sandbox_config;

/* The seed's defaults; has_event_timestamp is false (the caller must set it). */
RI_API ri_sandbox_config ri_sandbox_config_default(void);

/* ---- errors ---------------------------------------------------------------- */

typedef enum ri_sandbox_errcode {
    RI_SANDBOX_OK = 0,
    RI_SANDBOX_GAS_EXHAUSTED,        /* gas_used, gas_limit */
    RI_SANDBOX_MEMORY_EXCEEDED,      /* memory_used, memory_limit */
    RI_SANDBOX_TIMEOUT,              /* elapsed_ms, limit_ms */
    RI_SANDBOX_WASM_TRAP,            /* trap_kind, message */
    RI_SANDBOX_INVALID_MODULE,       /* message (the reason) */
    RI_SANDBOX_HOST_FUNCTION_ERROR,  /* function_name, message */
    RI_SANDBOX_INSTANCE_DESTROYED,   /* instance_id */
    RI_SANDBOX_SNAPSHOT_ERROR,       /* message (the reason) */
    RI_SANDBOX_INVALID_CONFIG,       /* message: a config the sandbox cannot honour */
    RI_SANDBOX_SUSPENDED_CALL = 10,  /* "SUSPENDED": the execution paused (ri_sandbox_resume) */
    RI_SANDBOX_EXIT = 11,            /* "EXIT": a WASI process ended with a non-zero exit code
                                        (result.exit_code); exit code 0 is success (ok) */
    RI_SANDBOX_FILE_ERROR = 12,      /* "FILE_ERROR": the host's file API (ri/files.h): trap_kind
                                        names the kind ("not_found", ...), message the path */
    RI_SANDBOX_OUT_OF_BOUNDS = 13,   /* "OUT_OF_BOUNDS": the host's read or write of a sandbox's
                                        memory (ri_sandbox_memory_read/write) falls outside it */
} ri_sandbox_errcode;

/* "GAS_EXHAUSTED", "MEMORY_EXCEEDED", ... */
RI_API const char *ri_sandbox_errcode_name(ri_sandbox_errcode code);

typedef struct ri_sandbox_error {
    ri_sandbox_errcode code;
    uint64_t gas_used, gas_limit;
    uint64_t memory_used, memory_limit;
    uint64_t elapsed_ms, limit_ms;
    /* WASM_TRAP kinds: the seed's "invalid_state", "no_instance", "missing_export",
     * "runtime_error", and the engine's precise ones: "unreachable",
     * "integer_divide_by_zero", "integer_overflow", "invalid_conversion",
     * "out_of_bounds_memory", "out_of_bounds_table", "undefined_element",
     * "uninitialized_element", "indirect_call_type_mismatch", "call_stack_exhausted",
     * "uncaught_exception", "null_exception_reference". */
    char trap_kind[40];
    char function_name[128];
    char instance_id[64];
    char message[512];
    uint64_t reserved[4];           /* room for later fields (the library writes them zero) */
} ri_sandbox_error;

/* ---- metrics and results ----------------------------------------------------- */

typedef struct ri_sandbox_metrics {
    uint64_t memory_used_bytes;     /* all the module's memories together */
    uint64_t memory_limit_bytes;
    uint64_t gas_used;              /* of the last (or current) execution */
    uint64_t gas_limit;
    double execution_ms;            /* of the last (or current) execution */
    uint64_t execution_limit_ms;
    uint64_t reserved[4];           /* room for later fields (the library writes them zero) */
} ri_sandbox_metrics;

typedef struct ri_sandbox_result {
    bool ok;
    /* The function's result as JSON text (a number for the direct convention, an array
     * of numbers for several results, the parsed JSON document for the JSON
     * convention), or NULL when there is no value. Owned: ri_sandbox_result_free. */
    char *value_json;
    /* The direct convention's typed results (i64 exact), nresults of them. */
    uint32_t nresults;
    ri_val results[4];
    ri_sandbox_metrics metrics;
    uint64_t gas_used;
    double duration_ms;
    ri_sandbox_error error;         /* when !ok */
    /* A WASI process ended (proc_exit, or _start returned: exit code 0). */
    bool exited;
    uint32_t exit_code;
    uint64_t reserved[8];           /* room for later fields (the library writes them zero) */
} ri_sandbox_result;

RI_API void ri_sandbox_result_free(ri_sandbox_result *result);

/* Frees a buffer the library allocated and handed to the caller (a snapshot's *out, a diff's
 * JSON text, ...) with the library's own allocator: what a caller that is not linked to the
 * same C runtime (a foreign-function binding, another language) must use instead of free().
 * NULL is a no-op. */
RI_API void ri_free(void *p);

/* ---- the factory and the sandbox ------------------------------------------------- */

typedef struct ri_sandboxes ri_sandboxes;
typedef struct ri_sandbox ri_sandbox;

typedef enum ri_sandbox_status {
    RI_SANDBOX_CREATED,
    RI_SANDBOX_LOADED,
    RI_SANDBOX_RUNNING,
    RI_SANDBOX_SUSPENDED,
    RI_SANDBOX_DESTROYED,
} ri_sandbox_status;

RI_API const char *ri_sandbox_status_name(ri_sandbox_status status); /* "created", ... */

RI_API ri_sandboxes *ri_sandboxes_new(void);
RI_API void ri_sandboxes_free(ri_sandboxes *factory); /* sandboxes stay valid; free them yourself */

/* NULL on error (missing event timestamp, bad config, OOM), with err filled. */
RI_API ri_sandbox *ri_sandbox_create(ri_sandboxes *factory, const ri_sandbox_config *config,
                              ri_sandbox_error *err);
/* The longest sandbox id ri_sandbox_create_with_id accepts. */
#define RI_SANDBOX_ID_MAX 63
/* ri_sandbox_create with an id chosen by the caller instead of the factory's next
 * "sandbox-N" (the snapshot store names the sandboxes it restores into
 * "<origin>-restored-<short>"). id: 1 to RI_SANDBOX_ID_MAX characters from A-Z a-z 0-9
 * . _ - (INVALID_CONFIG otherwise). Uniqueness is the caller's to ensure. */
RI_API ri_sandbox *ri_sandbox_create_with_id(ri_sandboxes *factory, const ri_sandbox_config *config, const char *id,
                                      ri_sandbox_error *err);
RI_API void ri_sandbox_free(ri_sandbox *sb);

RI_API const char *ri_sandbox_id(const ri_sandbox *sb);
RI_API ri_sandbox_status ri_sandbox_status_of(const ri_sandbox *sb);   /* live */
RI_API ri_sandbox_metrics ri_sandbox_get_metrics(const ri_sandbox *sb); /* live */
RI_API const ri_sandbox_config *ri_sandbox_get_config(const ri_sandbox *sb);

/* Load (or re-load) a module: magic check, decode/validate/compile, import isolation,
 * instantiation. On failure the sandbox keeps its previous state. Error texts as in
 * the original ("Failed to load WASM module: ...", "Import validation failed: ...",
 * "Failed to instantiate WASM module: ...", "Cannot load module into destroyed
 * instance: <id>"). */
RI_API bool ri_sandbox_load(ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err);
/* ri_sandbox_load of a module the caller loaded already (ri_module_load with the default
 * config): the sandbox retains it, nothing is decoded or compiled again (a large module, an
 * interpreter, is compiled once for the embedder's own look at it and the sandbox). */
RI_API bool ri_sandbox_load_module(ri_sandbox *sb, ri_module *module, ri_sandbox_error *err);
/* The bytes checks of ri_sandbox_load alone (header, decode, validation), with the same
 * INVALID_MODULE texts, and no sandbox: one wording for a bad module wherever a module is
 * read (the command line's validate, run and store commands say what a load would). */
RI_API bool ri_module_check(const uint8_t *wasm, size_t len, ri_sandbox_error *err);

/* Execute an export. payload_json NULL or "null", a number, or an array of numbers:
 * the direct convention (missing arguments 0, extra ignored, typed per the export's
 * signature); any other JSON: the JSON convention (__alloc, payload in memory, result
 * packed as (len << 16 | ptr) in an i32, or as (len << 32 | ptr) in an i64).
 * Never fails to return a result; see result->ok. */
RI_API ri_sandbox_result ri_sandbox_execute(ri_sandbox *sb, const char *action, const char *payload_json);

/* Direct call with typed arguments (the direct convention without JSON). */
RI_API ri_sandbox_result ri_sandbox_call(ri_sandbox *sb, const char *action, const ri_val *args, uint32_t nargs);

/* Thread-safe: stop a running execution (it ends as TIMEOUT if its time is up, else
 * as WASM_TRAP "interrupted"). */
RI_API void ri_sandbox_interrupt(ri_sandbox *sb);

/* The loaded module's binary (valid until the next load, restore or destroy), its length
 * and its SHA-256 (computed once per load); NULL when no module is loaded. len and
 * sha256 may be NULL. */
RI_API const uint8_t *ri_sandbox_module(ri_sandbox *sb, size_t *len, uint8_t sha256[RI_SNAP_SHA256_BYTES]);

/* loaded -> suspended. */
RI_API bool ri_sandbox_suspend(ri_sandbox *sb, ri_sandbox_error *err);
/* Idempotent. */
RI_API void ri_sandbox_destroy(ri_sandbox *sb);

/* ---- snapshots (WSNP v1 and v2) --------------------------------- */

/* Byte-exact WSNP v1 of memory 0, the PRNG state, the timestamp and the gas used.
 * *out is malloc'd. v1 holds no globals and no tables, so a v1 snapshot stands for
 * "globals and tables as at instantiation": snapshot refuses (SNAPSHOT_ERROR, saying
 * what v1 cannot hold) when a mutable global or a table differs from its value at
 * instantiation, and restore puts them back to those values. */
RI_API bool ri_sandbox_snapshot(ri_sandbox *sb, uint8_t **out, size_t *out_len, ri_sandbox_error *err);
/* Restores a WSNP v1 or v2 image (dispatched on the version byte; other versions:
 * "Unsupported snapshot version: N (expected 1 or 2)"). Atomic: validates everything
 * before changing anything; status becomes loaded.
 * v2 (docs/SNAPSHOT_FORMAT.md) holds everything: memories with their sizes (grown or
 * not), every global, every table, the dropped segments, PRNG and gas; restore puts
 * them all back, resizing memories and tables to the image's sizes. The image names
 * its module by SHA-256: it must be the loaded module, or else the image must embed
 * its module (include_module), which is then loaded in place of the current one (a
 * created sandbox too: such an image alone restores anywhere). The event timestamp
 * is the config's and stays (as for v1). */
RI_API bool ri_sandbox_restore(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_sandbox_error *err);

typedef enum ri_snapshot_format {
    RI_SNAPSHOT_DEFAULT = 0,    /* WSNP v2 */
    RI_SNAPSHOT_V1 = 1,         /* the original sandbox library's format, byte-exact (what ri_sandbox_snapshot writes) */
    RI_SNAPSHOT_V2 = 2,
} ri_snapshot_format;

/* All zero is the default: v2, zstd, module not embedded. */
typedef struct ri_snapshot_options {
    ri_snapshot_format format;
    bool include_module;        /* v2: embed the module binary (section MODL) */
    bool uncompressed;          /* v2: store pages without zstd (bytes canonical across zstd versions) */
} ri_snapshot_options;

/* A snapshot in the format the options ask (opts NULL: the default, v2). The status
 * rules and texts are v1's; v2 refuses only what no file can hold (a non-null
 * externref). *out is malloc'd. */
RI_API bool ri_sandbox_snapshot_with(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t **out, size_t *out_len,
                              ri_sandbox_error *err);
/* The same image, byte for byte, written into the caller's buffer buf of cap bytes,
 * which a long-lived caller (a server checkpointing repeatedly) reuses: v2 then costs
 * no allocation and no page faults per snapshot. *out_len: the image's length. Too
 * small: false, SNAPSHOT_ERROR "... the image needs N bytes, the buffer holds M",
 * *out_len = N (> cap, the exact length), nothing written at or beyond buf + cap (buf's
 * first cap bytes unspecified). cap 0 and buf NULL ask the length. Other failures:
 * *out_len 0. */
RI_API bool ri_sandbox_snapshot_into(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t *buf, size_t cap,
                              size_t *out_len, ri_sandbox_error *err);

/* The version of an image from its header: 1 or 2, or 0 with err set ("Snapshot too
 * small — missing header", "Invalid snapshot — bad magic bytes", "Unsupported snapshot
 * version: N (expected 1 or 2)"). */
RI_API int ri_snapshot_version(const uint8_t *data, size_t len, ri_sandbox_error *err);

/* Reads an image of either version into an ri_snap_image (ri/snapshot.h) for tools:
 * v2 with ri_snap_read, v1 with ri_wsnp_parse (its memory must be whole pages). The
 * image points into data. Free with ri_snap_image_free. */
RI_API bool ri_snapshot_open(const uint8_t *data, size_t len, ri_snap_image *out, ri_sandbox_error *err);

/* What differs from snapshot old_snap to snapshot new_snap (either version; a v1 image
 * has no tables, globals or segments to compare). opts may be NULL. Free the result
 * with ri_snap_diff_free; ri_snap_diff_json gives it as JSON text. */
RI_API bool ri_snapshot_diff(const uint8_t *old_snap, size_t old_len, const uint8_t *new_snap, size_t new_len,
                      const ri_snap_diff_options *opts, ri_snap_diff *out, ri_sandbox_error *err);
/* What differs from a snapshot (old) to the live sandbox (new), which must be loaded
 * or suspended. Changes nothing. */
RI_API bool ri_sandbox_diff(ri_sandbox *sb, const uint8_t *snapshot, size_t len, const ri_snap_diff_options *opts,
                     ri_snap_diff *out, ri_sandbox_error *err);

/* Reading a WSNP v1 image without a sandbox (tools such as `ri inspect` describe
 * snapshot files with it; ri_sandbox_restore parses with it too, so both accept the
 * same images). */

#define RI_WSNP_VERSION 1u
#define RI_WSNP_PAGE_BYTES 65536u

typedef struct ri_wsnp_view {
    uint8_t version;
    uint32_t memory_len;
    const uint8_t *memory;      /* points into the caller's buffer */
    uint32_t state_len;
    const char *state;          /* the state JSON, state_len bytes, not NUL-terminated */
    size_t trailing;            /* bytes after the state section, which v1 ignores */
    int64_t prng_current;       /* prngState.current as written (the original writes it signed) */
    uint32_t prng_state;        /* the same as the PRNG's unsigned 32-bit state */
    int64_t timestamp;
    uint64_t gas_used;
    /* For "Invalid snapshot — corrupted state JSON": what is wrong with the state JSON
     * (the JSON parser's message, or the field that is missing or mistyped); else "".
     * Kept apart so that err->message stays the original format's text. */
    char detail[160];
} ri_wsnp_view;

/* The v1 format's checks 1 to 6, in the original's order, with its messages (SNAPSHOT_ERROR):
 * "Snapshot too small — missing header", "Invalid snapshot — bad magic bytes",
 * "Unsupported snapshot version: <v> (expected 1)", "Snapshot truncated — missing memory
 * length", "... memory section incomplete", "... missing state length", "... state
 * section incomplete", "Invalid snapshot — corrupted state JSON". The state JSON must be
 * an object, no key twice, with prngState {current} (an integer in [-2^31, 2^32)),
 * timestamp (an integer in int64) and gasUsed (an integer in [0, 2^63)); integers may be
 * written as 3.0 or 1.7e12; other keys are accepted (forward compatibility). Check 7
 * (the memory size against an instance) is restore's. On failure *out is zeroed except
 * out->detail. data may be NULL when len is 0; err may be NULL. */
RI_API bool ri_wsnp_parse(const uint8_t *data, size_t len, ri_wsnp_view *out, ri_sandbox_error *err);

/* Pages of the memory section with at least one non-zero byte (a partial last page
 * counts as a page). */
RI_API uint64_t ri_wsnp_nonzero_pages(const ri_wsnp_view *view);

/* Mulberry32 (the original's PRNG): out = next(&state). Exposed for tests and tools. */
RI_API uint32_t ri_mulberry32_next(uint32_t *state);

/* ---- determinism ---------------------------------------------------------------- */

/* Runs action(payload) twice from the same full state and compares result, gas and
 * snapshot bytes; leaves the sandbox as it was before. *deterministic tells. */
RI_API bool ri_sandbox_check_determinism(ri_sandbox *sb, const char *action, const char *payload_json,
                                  bool *deterministic, ri_sandbox_error *err);

/* ---- memory pressure (pure functions) ----------------------------------- */

typedef enum ri_pressure_level {
    RI_PRESSURE_NORMAL,
    RI_PRESSURE_WARNING,
    RI_PRESSURE_PRESSURE,
    RI_PRESSURE_CRITICAL,
    RI_PRESSURE_OOM,
} ri_pressure_level;

RI_API const char *ri_pressure_level_name(ri_pressure_level level); /* "NORMAL", ... */

RI_API ri_pressure_level ri_memory_pressure(ri_sandbox *const *sandboxes, size_t n, int64_t available_bytes);

typedef enum ri_pressure_action {
    RI_ADVICE_NONE,
    RI_ADVICE_LOG,
    RI_ADVICE_SUSPEND,
    RI_ADVICE_EMERGENCY_SAVE,
} ri_pressure_action;

typedef struct ri_pressure_advice {
    ri_pressure_action action;
    char message[256];          /* RI_ADVICE_LOG */
    size_t ninstance_ids;       /* SUSPEND, EMERGENCY_SAVE */
    char **instance_ids;        /* owned: ri_pressure_advice_free */
} ri_pressure_advice;

RI_API const char *ri_pressure_action_name(ri_pressure_action action); /* "none", "log", ... */

/* foreground_id may be NULL. */
RI_API ri_pressure_advice ri_advise(ri_pressure_level level, ri_sandbox *const *sandboxes, size_t n,
                             const char *foreground_id);
RI_API void ri_pressure_advice_free(ri_pressure_advice *advice);

/* ---- checkpoints, rollback, fork, transactional execution ------------------
 * A checkpoint is an in-memory snapshot of a sandbox's complete state: memory (an
 * engine ri_memimage: copy-on-write, see ri/engine.h), globals, tables, dropped
 * segments, PRNG, gas and status, with a reference to its module. The first
 * checkpoint of a memory copies its written pages; each later one stores only the
 * pages written since the previous one (a delta on it). Rollback and fork map the
 * checkpoint's memory copy-on-write: their cost does not grow with the memory's size.
 * Checkpoints are independent of the sandbox they came from (free them in any order). */

typedef struct ri_checkpoint ri_checkpoint;

typedef struct ri_checkpoint_options {
    bool full;          /* copy every written page, not only those written since the last checkpoint */
    bool no_pagemap;    /* do not read /proc/self/pagemap: every page counts as written (tests) */
    bool no_memfd;      /* heap copies instead of memfd images: every checkpoint, rollback and fork
                           copies the whole memory (what happens anyway without memfd) */
} ri_checkpoint_options;

/* The sandbox's state (loaded or suspended) as a checkpoint; opts may be NULL. NULL on
 * error (SNAPSHOT_ERROR with the seed's status texts, or the reason). */
RI_API ri_checkpoint *ri_sandbox_checkpoint(ri_sandbox *sb, const ri_checkpoint_options *opts, ri_sandbox_error *err);
RI_API void ri_checkpoint_free(ri_checkpoint *cp);

typedef struct ri_checkpoint_info {
    uint32_t memory_pages;      /* memory 0's size (0 without a memory) */
    uint32_t stored_pages;      /* pages this checkpoint holds bytes of itself (a delta holds only
                                   the 4 KiB units written; a full image: all its pages) */
    uint32_t depth;             /* deltas down to the full image (0: a full image) */
    bool memfd;                 /* copy-on-write memfd images (else heap copies) */
} ri_checkpoint_info;
RI_API ri_checkpoint_info ri_checkpoint_get_info(const ri_checkpoint *cp);

/* Puts the sandbox back into the checkpoint's state (it must run the checkpoint's
 * module; loaded or suspended, not running). Status becomes the checkpoint's. The
 * event timestamp is the config's (as for restore). A paused call is part of the
 * state: the sandbox's own one is dropped (as ri_sandbox_abandon would) and the
 * checkpoint's, if it holds one, comes back pending (docs/SANDBOX.md "Checkpoints of a
 * paused call"). */
RI_API bool ri_sandbox_rollback(ri_sandbox *sb, const ri_checkpoint *cp, ri_sandbox_error *err);
/* ri_sandbox_rollback that keeps the sandbox's files: memory, globals, tables, PRNG and gas
 * come from the checkpoint (an interpreter's initialised image, say), while the workspace,
 * pending input and collected output stay the sandbox's own, and its WASI process starts
 * anew (descriptors back to the standard three and the preopens, the virtual clock at 0, no
 * exit status): the next program runs fresh among the files the last one left. The
 * checkpoint may be of another module than the sandbox runs (an interpreter's initialised
 * image, taken in another sandbox): the sandbox then runs that module, instantiated from
 * its compiled code (not compiled again) under this sandbox's import rules. */
RI_API bool ri_sandbox_restart(ri_sandbox *sb, const ri_checkpoint *cp, ri_sandbox_error *err);

/* A new, independent sandbox with its own id from factory and sb's config, in the
 * state of cp, or of sb as it is now when cp is NULL (sb must then be loaded or
 * suspended). Both continue separately. The module is shared (not recompiled) and the
 * start function does not run again. A paused call comes along: the fork of a paused
 * sandbox is a second paused sandbox (its own frames; pause-on mask copied). NULL on
 * error (err set). */
RI_API ri_sandbox *ri_sandbox_fork(ri_sandboxes *factory, ri_sandbox *sb, const ri_checkpoint *cp, ri_sandbox_error *err);

typedef struct ri_execute_options {
    /* A failed execution (trap, gas, time or memory limit, host error) leaves the
     * sandbox exactly as before it started (memory, globals, tables, segments, PRNG,
     * gas used): a checkpoint is taken before the call and rolled back on failure.
     * A pause (RI_SANDBOX_SUSPENDED_CALL) is not a failure: nothing is rolled back, and
     * the resumed call is not transactional (checkpoint first to keep a way back). */
    bool transactional;
} ri_execute_options;

/* ri_sandbox_execute with options (opts NULL: the same as ri_sandbox_execute). When
 * the checkpoint before a transactional call cannot be taken, the call does not run
 * (WASM_TRAP runtime_error with the reason). */
RI_API ri_sandbox_result ri_sandbox_execute_with(ri_sandbox *sb, const char *action, const char *payload_json,
                                          const ri_execute_options *opts);

/* A WSNP v2 delta: the sandbox's state as a v2 image that stores only the memory pages
 * that differ from the v2 image `parent` (which it names by the SHA-256 of its bytes,
 * section PRNT, docs/SNAPSHOT_FORMAT.md). Restoring it needs the parent:
 * ri_sandbox_restore_delta. */
RI_API bool ri_sandbox_snapshot_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len,
                               const ri_snapshot_options *opts, uint8_t **out, size_t *out_len,
                               ri_sandbox_error *err);
/* Restores a delta image on top of its parent (a full v2 image; its SHA-256 must be the
 * one the delta names, else SNAPSHOT_ERROR "parent mismatch"). Atomic, as restore. */
RI_API bool ri_sandbox_restore_delta(ri_sandbox *sb, const uint8_t *parent, size_t parent_len, const uint8_t *delta,
                              size_t delta_len, ri_sandbox_error *err);
/* Deltas from the live state, for a caller that tracks the pages changed since a parent
 * (the server's checkpoints; no full image is made or compared). Both need a loaded or
 * suspended sandbox with exactly one memory (else -1 / false, SNAPSHOT_ERROR).
 * ri_sandbox_written_pages: the pages of that memory written since its backing image,
 * i.e. since the sandbox's last ri_sandbox_checkpoint or rollback (every page if none, as
 * after a load; a restore's writes count), found through page tracking, not by comparing. Their
 * count, -1 on error; bitmap (may be NULL; at least ceil(pages / 8) bytes) gets bit
 * (p % 8) of byte p / 8 for page p; *memory_pages (may be NULL) the memory's size.
 * ri_sandbox_snapshot_pages: a delta image (section PRNT naming the parent by SHA-256
 * and length) whose memory stores exactly the pages set in select (select_len >=
 * ceil(pages / 8)), the rest of the state as ri_sandbox_snapshot_with writes it (opts
 * may be NULL: zstd, no module). The caller answers for select covering every page
 * that differs from the parent; ri_sandbox_restore_delta restores it. */
RI_API int64_t ri_sandbox_written_pages(ri_sandbox *sb, uint8_t *bitmap, size_t bitmap_len, uint32_t *memory_pages,
                                 ri_sandbox_error *err);
/* Whether the sandbox's memories are still backed by cp's images (cp taken from it, and no
 * capture with writes, rollback to another checkpoint or new instance since): the pages
 * ri_sandbox_written_pages reports are then those written since cp. */
RI_API bool ri_sandbox_backed_by(ri_sandbox *sb, const ri_checkpoint *cp);
/* ri_sandbox_restore_delta for a caller that already knows the parent's SHA-256 (it wrote
 * the parent and kept the hash, as the server does): parent_sha256 must be the one the
 * delta names, and is not recomputed (the parent's checksum and length still are). */
RI_API bool ri_sandbox_restore_delta_known(ri_sandbox *sb, const uint8_t *parent, size_t parent_len,
                                    const uint8_t parent_sha256[32], const uint8_t *delta, size_t delta_len,
                                    ri_sandbox_error *err);
RI_API bool ri_sandbox_snapshot_pages(ri_sandbox *sb, const ri_snapshot_options *opts, const uint8_t *select,
                               size_t select_len, const uint8_t parent_sha256[32], uint64_t parent_len, uint8_t **out,
                               size_t *out_len, ri_sandbox_error *err);
/* ri_sandbox_snapshot_pages whose workspace, too, is only the changes from the parent's:
 * parent_state is a checkpoint holding the state the parent image holds (taken when it
 * was written or restored; the caller answers for it, as for select). The workspace
 * delta is found by walking both workspaces, skipping what they share, so its cost
 * follows the files changed since. parent_state NULL, or without a WASI process: as
 * ri_sandbox_snapshot_pages (the workspace whole). */
RI_API bool ri_sandbox_snapshot_pages_on(ri_sandbox *sb, const ri_snapshot_options *opts, const uint8_t *select,
                                  size_t select_len, const uint8_t parent_sha256[32], uint64_t parent_len,
                                  const ri_checkpoint *parent_state, uint8_t **out, size_t *out_len,
                                  ri_sandbox_error *err);
/* Restores a delta image on its parent's state held in memory (cache warm): parent_state
 * is a checkpoint of the state the parent image (parent_sha256, parent_len: the delta's
 * PRNT must name them) holds, taken from a sandbox running the same module. The memory
 * becomes a copy-on-write mapping of the checkpoint's with the delta's pages written over
 * it, the workspace a fork of the checkpoint's with the delta's changes applied, so the
 * cost follows the delta, not the state. The result is the state ri_sandbox_restore_delta
 * gives (the same snapshot bytes). A delta holding a paused call (section FRMS) is
 * refused: restore it with its parent's bytes. Atomic: on failure the sandbox is
 * unchanged. */
RI_API bool ri_sandbox_restore_delta_on(ri_sandbox *sb, const ri_checkpoint *parent_state,
                                 const uint8_t parent_sha256[32], uint64_t parent_len, const uint8_t *delta,
                                 size_t delta_len, ri_sandbox_error *err);
/* ---- pausable executions --------------------------------------------------------
 * With a pause-on mask (RI_SUSPEND_ON_GAS, _INTERRUPT, _YIELD of ri/engine.h), an
 * execution of the direct convention that runs out of gas (instructions schedule), is
 * interrupted (ri_sandbox_interrupt, or its time slice ends: the timeout), or whose host
 * function returns ri_host_yield(call) does not fail: it pauses. Its result has ok false
 * and error.code RI_SANDBOX_SUSPENDED_CALL, and the sandbox's status is `suspended`
 * with the call pending. ri_sandbox_resume continues it (with a new gas budget) and
 * returns, at the end, the result the uninterrupted execution would have returned (the
 * same value; gas_used the total of all slices, equal to the uninterrupted run's).
 * A v2 snapshot of a sandbox with a pending call holds the call (section FRMS); restoring
 * it into any sandbox with the same configuration gives a sandbox whose resume continues
 * the call. v1 cannot hold a call: snapshot refuses. execute and call refuse while a call
 * is pending; restore of an image without a call, or ri_sandbox_abandon, drops it.
 * The JSON convention never pauses. Pausing on gas needs the instructions schedule; an
 * import called when no gas is left pauses before the call (ri_host_pause_before) and
 * is made, and charged, by the next slice. */

/* The pause-on mask of later executions (0, the default: never pause). */
RI_API bool ri_sandbox_set_pause_on(ri_sandbox *sb, uint32_t pause_on, ri_sandbox_error *err);
RI_API uint32_t ri_sandbox_pause_on(const ri_sandbox *sb);
/* Whether a paused call is pending, and its export name (NULL if none). */
RI_API bool ri_sandbox_has_pending_call(const ri_sandbox *sb);
RI_API const char *ri_sandbox_pending_action(const ri_sandbox *sb);
/* Continues the pending call. gas: added to what the last slice left unspent, under the
 * instructions schedule (0: the config's max_gas); the host-calls schedule counts import
 * calls across slices against max_gas. The result is the execution's (or
 * RI_SANDBOX_SUSPENDED_CALL again). */
RI_API ri_sandbox_result ri_sandbox_resume(ri_sandbox *sb, uint64_t gas);
/* Continues the pending call with only the gas the last slice left unspent (nothing is
 * added): a call paused by an interrupt and resumed this way, any number of times, runs
 * out of gas exactly where the uninterrupted execution would (a scheduler's time slices). */
RI_API ri_sandbox_result ri_sandbox_resume_carry(ri_sandbox *sb);
/* Drops the pending call: status loaded, memory and globals as the call left them. */
RI_API bool ri_sandbox_abandon(ri_sandbox *sb, ri_sandbox_error *err);

/* ---- the host's access to a sandbox's memory -------------------------------------------------
 * Bounds-checked copies from and into memory 0 (the module's own or the imported env.memory),
 * for embedders that pass data to exports by address (a string an export reads, a result it
 * left in memory). Refused while a call runs (a paused call is not running: its memory may be
 * read and written); OUT_OF_BOUNDS when [offset, offset + len) is not inside the memory. */
RI_API bool ri_sandbox_memory_read(ri_sandbox *sb, uint64_t offset, void *dst, size_t len, ri_sandbox_error *err);
RI_API bool ri_sandbox_memory_write(ri_sandbox *sb, uint64_t offset, const void *src, size_t len,
                                    ri_sandbox_error *err);
/* Memory 0's size in bytes (0 before a load). */
RI_API uint64_t ri_sandbox_memory_size(ri_sandbox *sb);

/* ---- WASI processes (docs/WASI.md) ---------------------------------------------------------
 * A sandbox created with enable_wasi runs one WASI program at a time. Load the module with
 * ri_sandbox_load, then ri_sandbox_wasi_run calls its _start (a command) with a fresh
 * process state (virtual clock 0, descriptors 0-3); the result has exited and exit_code
 * (proc_exit(n), or 0 when _start returns) and ok when the code is 0, else error EXIT.
 * A read of stdin with no input yet pauses the process (RI_SANDBOX_SUSPENDED_CALL, reason
 * yield) whatever the pause-on mask: push input (or close stdin) and ri_sandbox_resume.
 * Gas, interrupts and sched_yield pause it as the pause-on mask says. */
RI_API ri_sandbox_result ri_sandbox_wasi_run(ri_sandbox *sb);
/* A reactor: calls _initialize (if exported) once; its exports are then called with
 * ri_sandbox_call / ri_sandbox_execute. */
RI_API ri_sandbox_result ri_sandbox_wasi_initialize(ri_sandbox *sb);
/* A call of a reactor's export as a step of its process: like ri_sandbox_call, but a read of
 * stdin with no input yet pauses it (as in ri_sandbox_wasi_run) whatever the pause-on mask. */
RI_API ri_sandbox_result ri_sandbox_wasi_call(ri_sandbox *sb, const char *action, const ri_val *args, uint32_t nargs);
/* stdin without a read callback: bytes for the program (false after close or on OOM), and
 * its end. */
RI_API bool ri_sandbox_wasi_stdin_push(ri_sandbox *sb, const uint8_t *data, size_t len);
RI_API void ri_sandbox_wasi_stdin_close(ri_sandbox *sb);
/* Whether the process is paused in a read of stdin that had no input (what a paused call's
 * embedder waits for before it resumes: input or the end of stdin), not by an interrupt,
 * gas or sched_yield. false without WASI or without a paused read. */
RI_API bool ri_sandbox_wasi_waiting(const ri_sandbox *sb);
/* stdout/stderr without a write callback: what the program wrote so far (valid until the
 * next call into the sandbox), and clearing it. NULL with *len 0 when empty or no WASI. */
RI_API const uint8_t *ri_sandbox_wasi_output(const ri_sandbox *sb, ri_wasi_stream stream, size_t *len);
RI_API void ri_sandbox_wasi_output_clear(ri_sandbox *sb, ri_wasi_stream stream);
/* The workspace file system preopened as "/" (a struct wsfs *, src/workspace/wsfs.h), for
 * embedders that fill or read it; NULL without WASI. */
RI_API void *ri_sandbox_wasi_workspace(ri_sandbox *sb);

#ifdef __cplusplus
}
#endif
#endif
