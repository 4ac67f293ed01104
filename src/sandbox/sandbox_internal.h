/*
 * Private to src/sandbox/: the sandbox and factory structures and the contracts
 * between the files (one concern each):
 *
 *   sandbox.c         factory, create/free, statuses, metrics, suspend, destroy
 *   errors.c          error values, names, message helpers
 *   load.c            ri_sandbox_load: the original's checks and texts, in order
 *   isolation.c       import validation (namespaces, names, kinds, signatures)
 *   host_bridge.c     __get_time, __get_random and the user's host functions as
 *                     engine host functions, metered
 *   limits.c          one metered run: gas, wall clock, watchdog registration
 *   traps.c           engine errors -> the sandbox's error values
 *   execute.c         ri_sandbox_execute / ri_sandbox_call: both conventions
 *   js_json.c         JSON text as JavaScript's JSON.stringify writes it
 *   watchdog.c        the factory's timeout thread
 *   prng.c            Mulberry32
 *   instance_state.c  globals, tables, segments and memory: capture, compare, apply
 *   wsnp.c            WSNP v1 snapshot, parse and restore
 *   wsnp2.c           WSNP v2 snapshot and restore (through src/snapshot/), module identity
 *   snapshot_api.c    snapshot with options, restore of either version, opening an image
 *   snapshot_diff.c   diffs of two images, or of an image and the live sandbox
 *   determinism.c     ri_sandbox_check_determinism
 *   pressure.c        ri_memory_pressure, ri_advise
 *   checkpoint.c      in-memory checkpoints (copy-on-write memory images), rollback,
 *                     transactional execution
 *   fork.c            ri_sandbox_fork: a new sandbox from a checkpoint
 *   delta.c           WSNP v2 delta images (only the pages that differ from a parent)
 *   resume.c          pausable executions: pending call, resume, its snapshot and restore
 */
#ifndef RI_SANDBOX_INTERNAL_H
#define RI_SANDBOX_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ri/sandbox.h"
#include "util/clock.h"

#define SB_PAGE_SIZE 65536u
#define SB_MAX_PAGES 65536u /* WebAssembly 2.0: at most 4 GiB */

/* ---- clock (limits.c) ---------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds: durations and the watchdog's deadlines. */

/* ---- errors (errors.c) --------------------------------------------------------- */

void sb_error_clear(ri_sandbox_error *err);
void sb_error_set(ri_sandbox_error *err, ri_sandbox_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* WASM_TRAP with the given kind. */
void sb_error_trap(ri_sandbox_error *err, const char *kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Puts prefix before the message ("Failed to instantiate WASM module: " + cause). */
void sb_error_prefix(ri_sandbox_error *err, const char *prefix);
void sb_error_destroyed(ri_sandbox_error *err, const char *instance_id);
void sb_error_gas(ri_sandbox_error *err, uint64_t used, uint64_t limit);
void sb_error_timeout(ri_sandbox_error *err, uint64_t elapsed_ms, uint64_t limit_ms);
void sb_error_memory(ri_sandbox_error *err, uint64_t used, uint64_t limit);
void sb_error_host(ri_sandbox_error *err, const char *function_name, const char *message);

/* A WebAssembly name (len bytes, may hold NUL or control bytes) made printable for
 * a message: control bytes as \xNN. Always NUL-terminates buf (cap > 0). */
void sb_printable_name(char *buf, size_t cap, const char *name, size_t len);
/* "(i32, i32) -> i32", "() -> ()", "(f64) -> (i32, i64)". */
void sb_format_signature(char *buf, size_t cap, uint32_t nparams, const ri_valtype *params,
                         uint32_t nresults, const ri_valtype *results);

/* ---- the watchdog (watchdog.c) ----------------------------------------------------- */

typedef struct sb_watchdog sb_watchdog;

/* One armed deadline; lives in its run (no allocation). Fields are the watchdog's
 * while armed. */
typedef struct sb_watch {
    struct sb_watch *prev, *next;
    ri_store *store;
    uint64_t deadline_ns;
    bool fired;
} sb_watch;

sb_watchdog *sb_watchdog_new(void);
void sb_watchdog_retain(sb_watchdog *wd);
/* The last release stops and joins the thread. */
void sb_watchdog_release(sb_watchdog *wd);
/* Starts the thread on first use; false if it cannot be started. */
bool sb_watchdog_arm(sb_watchdog *wd, sb_watch *watch, ri_store *store, uint64_t deadline_ns);
/* Returns whether the deadline fired (the store was interrupted). */
bool sb_watchdog_disarm(sb_watchdog *wd, sb_watch *watch);

/* ---- instance state (instance_state.c) ---------------------------------------------- */

typedef struct sb_table_state {
    uint32_t size;
    void **elems;
} sb_table_state;

/* A copy of one memory's contents (sb_state: the instance's memories after memory 0). */
typedef struct sb_memory_copy {
    uint32_t index;
    uint32_t pages;
    uint8_t *bytes;
} sb_memory_copy;

/* What an instance holds besides its code: globals, tables, segment flags and
 * (optionally) memory 0 and the instance's other memories (multiple memories). */
typedef struct sb_state {
    uint32_t nglobals;
    ri_val *globals;
    uint32_t ntables;
    sb_table_state *tables;
    uint32_t nelems, ndatas;
    bool *elem_dropped, *data_dropped;
    bool has_memory;
    uint32_t memory_pages;
    uint8_t *memory;
    uint32_t nmore;          /* with has_memory: memories 1.. (each one not `memory` itself) */
    sb_memory_copy *more;
} sb_state;

/* false on OOM (out is then empty). memory may be NULL (not captured). */
bool sb_state_capture(ri_instance *inst, ri_memory *memory, sb_state *out);
/* Writes the first difference into why (if not NULL) and returns false. Memory is
 * compared only when both hold it. */
bool sb_state_equal(const sb_state *a, const sb_state *b, char *why, size_t cap);
/* Puts the instance (and memory, when s holds it) into state s. The only failable
 * step (growing) runs first, so false means nothing changed. */
bool sb_state_apply(ri_instance *inst, ri_memory *memory, const sb_state *s);
void sb_state_free(sb_state *s);

/* ---- the loaded image ---------------------------------------------------------------- */

typedef enum sb_import_kind {
    SB_IMPORT_TIME,
    SB_IMPORT_RANDOM,
    SB_IMPORT_HOST,
    SB_IMPORT_WASI,
    SB_IMPORT_EMSC,     /* the Emscripten profile (src/emscripten), with enable_emscripten */
} sb_import_kind;

/* The user pointer of one imported host function. */
typedef struct sb_binding {
    ri_sandbox *sb;
    sb_import_kind kind;
    const ri_host_function *host; /* SB_IMPORT_HOST: the sandbox's copy */
    uint32_t wasi_index;          /* SB_IMPORT_WASI: the function (src/wasi/table.c); SB_IMPORT_EMSC: the profile's */
} sb_binding;

/* Everything one load builds; swapped in whole on success, so a failed load leaves
 * the previous image untouched. */
typedef struct sb_image {
    ri_store *store;
    ri_module *module;       /* NULL before the first load */
    ri_instance *instance;   /* NULL before the first load */
    ri_memory *memory;       /* memory 0 of the instance, else the sandbox's env.memory */
    sb_binding *bindings;    /* one per function import */
    sb_state baseline;       /* globals, tables, segments after instantiation (WSNP v1) */
    bool has_module_sha256;  /* computed on first use (snapshot, restore) */
    uint8_t module_sha256[RI_SNAP_SHA256_BYTES];
} sb_image;

/* A store and an env.memory of initial_pages, maximum max_pages. The memory limit covers
 * all the store's memories together; env_used false: the module does not import env.memory,
 * whose pages then do not count. */
sb_image *sb_image_new(const ri_sandbox *sb, uint32_t initial_pages, uint32_t max_pages, bool env_used,
                       ri_sandbox_error *err);
void sb_image_free(sb_image *img);
/* Bytes of all the image's memories (each counted once: one may be imported twice). */
uint64_t sb_image_memory_bytes(const sb_image *img);

/* load.c: everything a load does but installing the image (see ri_sandbox_load). */
bool sb_build_image(ri_sandbox *sb, const uint8_t *wasm, size_t len, sb_image **out, ri_sandbox_error *err);
/* The same from a loaded module whose imports passed isolation (the image takes over
 * the caller's reference; freed on failure); run_start false: a fork's instance. */
bool sb_build_image_from(ri_sandbox *sb, ri_module *module, bool run_start, sb_image **out, ri_sandbox_error *err);

/* ---- snapshots (wsnp.c, wsnp2.c) ------------------------------------------------------------ */

/* The checks every snapshot runs first (destroyed, not loaded, running), with the
 * seed's texts. */
bool sb_snapshot_allowed(ri_sandbox *sb, ri_sandbox_error *err);
bool sb_snapshot_v1(ri_sandbox *sb, uint8_t **out, size_t *out_len, ri_sandbox_error *err);
bool sb_snapshot_v2(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t **out, size_t *out_len,
                    ri_sandbox_error *err);
/* The same into the caller's buffer (ri_snap_write_into's rules). */
bool sb_snapshot_v2_into(ri_sandbox *sb, const ri_snapshot_options *opts, uint8_t *buf, size_t cap, size_t *out_len,
                         ri_sandbox_error *err);
/* After the status checks and the version dispatch of ri_sandbox_restore. */
bool sb_restore_v1(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_sandbox_error *err);
/* under: NULL, or an image whose memories show through where this one stores no page
 * (a delta's parent: snapshot_delta.c). sb_restore_checked: ri_sandbox_restore with it. */
bool sb_restore_v2(ri_sandbox *sb, const uint8_t *snapshot, size_t len, const ri_snap_image *under,
                   ri_sandbox_error *err);
bool sb_restore_checked(ri_sandbox *sb, const uint8_t *snapshot, size_t len, const ri_snap_image *under,
                        ri_sandbox_error *err);
/* SHA-256 of the image's module (computed once); false if libcrypto fails. */
bool sb_module_sha256(sb_image *img, uint8_t out[RI_SNAP_SHA256_BYTES]);
/* The live state as a WSNP v2 meta (module identity, status, PRNG, gas, timestamp). */
bool sb_snapshot_meta(ri_sandbox *sb, ri_snap_meta *meta, ri_sandbox_error *err);

/* ---- checkpoints (checkpoint.c) ------------------------------------------------------------ */

/* A table's entries as function indices (RI_SNAP_NULL_REF for null): valid in any
 * instance of the same module, so a fork can apply them to its own functions. */
typedef struct sb_cp_table {
    uint32_t size;
    uint32_t *entries;
} sb_cp_table;

struct ri_checkpoint {
    ri_module *module;               /* one reference */
    uint32_t nmemories;
    ri_memimage **memories;          /* one reference each */
    uint32_t nglobals;
    ri_val *globals;                 /* funcref values: of.i64 = function index or RI_SNAP_NULL_REF */
    uint32_t ntables;
    sb_cp_table *tables;
    uint32_t nelems, ndatas;
    bool *elem_dropped, *data_dropped;
    uint32_t prng_state;
    uint64_t gas_used;
    double execution_ms;
    ri_sandbox_status status;        /* loaded or suspended */
    struct ri_wasi *wasi;            /* a copy of the WASI state, or NULL */
    bool has_call;                   /* the sandbox had a paused call: call describes it */
    ri_snap_call call;
};

/* Puts img's instance into cp's state (img runs cp's module). Table growth and the
 * memory, the failable steps, come first: false means nothing changed (but see
 * ri_memory_load_image for a failed mapping). */
bool sb_checkpoint_apply(sb_image *img, const ri_checkpoint *cp, ri_sandbox_error *err);

/* ---- one metered run (limits.c) --------------------------------------------------------- */

typedef struct sb_run {
    ri_store *store;
    uint64_t start_ns;
    uint64_t host_gas_used;  /* RI_GAS_HOST_CALLS: import calls so far */
    sb_watch watch;
    bool watch_armed;        /* false without a time limit: no deadline, no watchdog thread */
    bool watch_fired;
    /* Set by the host bridge when it makes a call fail; the engine then traps
     * RI_TRAP_HOST and traps.c reports this instead. GAS_EXHAUSTED and TIMEOUT stick. */
    bool failed;
    ri_sandbox_error failure;
} sb_run;

/* Arms gas and the watchdog (when there is a time limit) for a run on store; false (err
 * set) if the watchdog thread cannot start. */
bool sb_run_begin(ri_sandbox *sb, sb_run *run, ri_store *store, ri_sandbox_error *err);
void sb_run_end(ri_sandbox *sb, sb_run *run);
uint64_t sb_run_gas_used(const ri_sandbox *sb, const sb_run *run);
double sb_run_elapsed_ms(const sb_run *run);
/* Whether the sandbox has a wall-clock limit (max_execution_ms is not RI_SANDBOX_NO_TIME_LIMIT). */
bool sb_time_limited(const ri_sandbox *sb);
/* Before every import call: gas +1, the gas check, the timeout check. */
typedef enum sb_import_verdict {
    SB_IMPORT_GO,       /* charged: make the call */
    SB_IMPORT_REFUSED,  /* the call must fail (run->failure says why) */
    SB_IMPORT_PAUSE,    /* the time slice is over and the run pauses on interrupts: nothing
                           was charged, the store is interrupted; pause before the call */
} sb_import_verdict;
sb_import_verdict sb_run_charge_import(ri_sandbox *sb, sb_run *run);

/* traps.c: an engine error from a run, as the sandbox reports it. */
void sb_map_run_error(ri_sandbox *sb, sb_run *run, ri_errcode rc, const ri_error *e, ri_sandbox_error *out);
const char *sb_trap_kind(ri_trap trap);

/* ---- host bridge (host_bridge.c) ------------------------------------------------------ */

/* The engine host function of type `type` that serves one function import (already
 * validated by isolation.c) through `binding`. */
ri_func *sb_bridge_make(ri_store *store, sb_binding *binding, const ri_functype *type);

/* ---- isolation (isolation.c) ----------------------------------------------------------- */

/* Walks the module's imports in order; on the first refusal writes the reason
 * (without the "Import validation failed: " prefix) and returns false. */
bool sb_validate_imports(const ri_sandbox *sb, const ri_module *module, char *reason, size_t cap);
/* The host function a validated import name refers to, or NULL. */
/* The declared host function module.name (module NULL: "env"). */
const ri_host_function *sb_find_host_function(const ri_sandbox *sb, const char *module, size_t module_len,
                                              const char *name, size_t len);

/* ---- JSON (js_json.c) -------------------------------------------------------------------- */

/* Number::toString as JavaScript writes it ("0.1", "1e+21", "NaN"). */
void sb_js_number(char *buf, size_t cap, double value);
/* JSON.parse: any JSON text (scalars too); integers exact when they fit 64 bits,
 * else (only then) every number a double, as in JavaScript. NULL with error set. */
json_t *sb_js_parse(const char *text, size_t len, json_error_t *error);
/* JSON.stringify(value) of the parsed document: compact, JavaScript's key order,
 * escapes and numbers. malloc'd; NULL on OOM. */
char *sb_js_stringify(const json_t *value);

/* ---- the sandbox ----------------------------------------------------------------------- */

struct ri_sandboxes {
    pthread_mutex_t lock; /* guards next_id */
    uint64_t next_id;
    sb_watchdog *watchdog;
};

struct ri_sandbox {
    char id[RI_SANDBOX_ID_MAX + 1];
    ri_sandbox_config config;        /* host_functions points at host_functions below */
    ri_host_function *host_functions;/* owned copies (names and types too) */
    uint32_t memory_limit_pages;     /* ceil(max_memory_bytes / 64 KiB), at most 65,536 */
    sb_watchdog *watchdog;           /* shared with the factory, reference counted */

    atomic_int status;               /* ri_sandbox_status */
    sb_image *image;
    uint32_t prng_state;
    ri_sandbox_metrics metrics;      /* of the last execution; live fields computed on read */

    sb_run *run;                     /* the run in progress (execute, or a load's start) */
    bool destroy_requested;          /* destroy() came during a run: finish it afterwards */

    /* ri_sandbox_interrupt may come from another thread: it reads this under the lock. */
    pthread_mutex_t interrupt_lock;
    ri_store *interruptible;

    /* Pausable executions (resume.c). */
    uint32_t pause_on;               /* RI_SUSPEND_ON_* of later executions */
    struct sb_pending *pending;      /* the paused call, or NULL */

    struct ri_wasi *wasi;            /* enable_wasi: the WASI context (src/wasi/), else NULL */
};

/* ---- WASI (wasi_process.c) ------------------------------------------------------------------ */

/* The sandbox's WASI context with its PRNG as the random source; NULL (and true) without
 * WASI. false on error (err set). */
bool sb_wasi_create(ri_sandbox *sb, ri_sandbox_error *err);
/* A finished run's result: an EXIT failure becomes exited + exit_code (ok when 0); a
 * returned _start is exit code 0. */
void sb_wasi_finish_result(ri_sandbox *sb, const char *action, ri_sandbox_result *r);
/* Replaces the sandbox's WASI context by w (a copy from a checkpoint), its random source
 * the sandbox's PRNG. */
void sb_wasi_install(ri_sandbox *sb, struct ri_wasi *w);
/* Before resuming: a read waiting for stdin is completed, if input came. false: none yet. */
bool sb_wasi_ready_to_resume(ri_sandbox *sb);

/* ---- WASI in snapshot files (wasi_snapshot.c) ------------------------------------------------ */
typedef struct sb_wasi_bytes {
    uint8_t *state, *workspace;
} sb_wasi_bytes;
/* Sets w's WASI sections from the sandbox's process (nothing without WASI); owned holds
 * the bytes until the image is written (sb_wasi_bytes_free). */
bool sb_wasi_snapshot_options(ri_sandbox *sb, ri_snap_write_options *w, sb_wasi_bytes *owned,
                              ri_sandbox_error *err);
/* The same without the workspace (w->workspace NULL): for a delta that carries it as the
 * changes from the parent's. */
bool sb_wasi_state_options(ri_sandbox *sb, ri_snap_write_options *w, sb_wasi_bytes *owned, ri_sandbox_error *err);
void sb_wasi_bytes_free(sb_wasi_bytes *b);
/* The process img's sections describe, built and checked beside the sandbox's (*out NULL
 * when the image holds none); sb_wasi_commit installs it (NULL: nothing changes). */
bool sb_wasi_from_image(ri_sandbox *sb, const ri_snap_image *img, struct ri_wasi **out, ri_sandbox_error *err);
void sb_wasi_commit(ri_sandbox *sb, struct ri_wasi *w);

/* ---- paused calls (resume.c) ------------------------------------------------------------- */

typedef struct sb_pending {
    char *action;                    /* the export (NUL-terminated) */
    uint32_t pause_on;
    uint64_t gas_used;               /* by every slice so far */
    uint64_t gas_left;               /* unspent engine gas, carried over to the next slice */
} sb_pending;

void sb_pending_free(sb_pending *p);
/* Drops the pending call, if any (engine frames included). */
void sb_pending_drop(ri_sandbox *sb);
/* After a run that ended RI_ERR_SUSPENDED: records the pending call (gas_used: the
 * slice's; the store's gas left carries over), sets status suspended and fills r. */
void sb_pending_start(ri_sandbox *sb, const char *action, uint64_t gas_used, ri_sandbox_result *r);
/* Snapshot v2 of a sandbox with a pending call (wsnp2.c calls it). */
bool sb_snapshot_call(ri_sandbox *sb, ri_snap_call *call, ri_sandbox_error *err);
/* Restore v2 of an image with a call into a fresh image (wsnp2.c calls it): of `loaded`
 * (the module the sandbox runs, when the image names it), else built from the bytes. */
bool sb_restore_call(ri_sandbox *sb, const ri_snap_image *img, ri_module *loaded, const uint8_t *module,
                     size_t module_len, ri_sandbox_error *err);
/* The pending call of `call` rebuilt in img (its store has no suspended call; img runs
 * the call's module and, for sb's config, its gas schedule): NULL (err set) with the
 * store unchanged, else the new pending call (the store's suspend mode set). Used by
 * restore, rollback and fork. */
sb_pending *sb_pending_rebuild(const ri_sandbox *sb, sb_image *img, const ri_snap_call *call, ri_sandbox_error *err);
/* execute.c: the direct convention's result from typed results (value JSON, results). */
void sb_direct_result(ri_sandbox *sb, const char *action, const ri_val *results, uint32_t nresults,
                      ri_sandbox_result *r);

ri_sandbox_status sb_status(const ri_sandbox *sb);
void sb_set_status(ri_sandbox *sb, ri_sandbox_status status);
/* Releases the image after a destroy (also a deferred one). */
void sb_release_image(ri_sandbox *sb);

/* ToInt32 of 32 bits: the two's-complement reading without implementation-defined casts. */
static inline int32_t sb_i32_from_bits(uint32_t bits) {
    return bits <= (uint32_t)INT32_MAX ? (int32_t)bits : -(int32_t)(~bits) - 1;
}
static inline int64_t sb_i64_from_bits(uint64_t bits) {
    return bits <= (uint64_t)INT64_MAX ? (int64_t)bits : -(int64_t)(~bits) - 1;
}

#endif
