/*
 * ri engine: the embedder API of ri-sandbox's WebAssembly 2.0 engine.
 *
 * Objects:
 *   ri_module    decoded, validated and compiled module; immutable, may be shared
 *                by any number of stores and threads.
 *   ri_store     owns every runtime object (instances, functions, memories, tables,
 *                globals) and the execution state (heap value stack and call frames).
 *                A store is used by one thread at a time; separate stores are
 *                independent. ri_store_interrupt() is the only call that may come
 *                from another thread.
 *   ri_instance, ri_func, ri_memory, ri_table, ri_global
 *                owned by their store, freed with it.
 *
 * Errors are values: every fallible call fills an ri_error (code + message).
 */
#ifndef RI_ENGINE_H
#define RI_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values ---------------------------------------------------------------- */

typedef enum ri_valtype {
    RI_I32 = 0x7F,
    RI_I64 = 0x7E,
    RI_F32 = 0x7D,
    RI_F64 = 0x7C,
    RI_V128 = 0x7B,
    RI_FUNCREF = 0x70,
    RI_EXTERNREF = 0x6F,
    RI_EXNREF = 0x69,   /* exception handling: a caught exception (see ri_func_call for how long it lives);
                         * host functions cannot take or return one */
} ri_valtype;

/* A reference is an opaque pointer; NULL is the null reference.
 * funcref values point at an ri_func; externref values are the embedder's. */
typedef struct ri_val {
    ri_valtype type;
    union {
        int32_t i32;
        int64_t i64;
        uint32_t f32_bits; /* floats travel as bits so NaN payloads survive */
        uint64_t f64_bits;
        uint8_t v128[16];
        void *ref;
    } of;
} ri_val;

static inline ri_val ri_val_i32(int32_t v) { ri_val r; r.type = RI_I32; r.of.i64 = 0; r.of.i32 = v; return r; }
static inline ri_val ri_val_i64(int64_t v) { ri_val r; r.type = RI_I64; r.of.i64 = v; return r; }

/* ---- errors ---------------------------------------------------------------- */

typedef enum ri_errcode {
    RI_OK = 0,
    RI_ERR_MALFORMED,   /* the binary does not decode */
    RI_ERR_INVALID,     /* decodes but fails validation */
    RI_ERR_LIMIT,       /* exceeds an implementation or embedder limit at load time */
    RI_ERR_UNLINKABLE,  /* imports missing or of the wrong type */
    RI_ERR_TRAP,        /* execution trapped; see ri_error.trap */
    RI_ERR_NOMEM,       /* the host allocator failed */
    RI_ERR_ARGUMENT,    /* API misuse: wrong argument count or type, NULL, ... */
    RI_ERR_NOT_FOUND,   /* no such export */
    RI_ERR_SUSPENDED = 9, /* the call is suspended, not failed (ri_store_suspended; "suspension" below) */
    RI_ERR_UNSUPPORTED = 10, /* the module uses a WebAssembly feature the engine does not implement
                              * (SIMD, threads, tail calls, exception handling, ...); the message names it */
} ri_errcode;

/* Trap kinds. Messages are the spec testsuite's texts (see ri_trap_message). */
typedef enum ri_trap {
    RI_TRAP_NONE = 0,
    RI_TRAP_UNREACHABLE,          /* "unreachable" */
    RI_TRAP_INT_DIV_ZERO,         /* "integer divide by zero" */
    RI_TRAP_INT_OVERFLOW,         /* "integer overflow" */
    RI_TRAP_INVALID_CONVERSION,   /* "invalid conversion to integer" */
    RI_TRAP_MEMORY_OOB,           /* "out of bounds memory access" */
    RI_TRAP_TABLE_OOB,            /* "out of bounds table access" */
    RI_TRAP_UNDEFINED_ELEMENT,    /* "undefined element" (call_indirect index >= table size) */
    RI_TRAP_UNINITIALIZED_ELEMENT,/* "uninitialized element" (call_indirect of null) */
    RI_TRAP_INDIRECT_MISMATCH,    /* "indirect call type mismatch" */
    RI_TRAP_STACK_EXHAUSTED,      /* "call stack exhausted" */
    RI_TRAP_OUT_OF_GAS,           /* "out of gas" */
    RI_TRAP_INTERRUPTED,          /* "interrupted" */
    RI_TRAP_HOST,                 /* a host function failed; message is the host's */
    RI_TRAP_EXCEPTION,            /* "uncaught exception": a throw no handler of the run caught */
    RI_TRAP_NULL_EXNREF,          /* "null exception reference": throw_ref of a null exnref */
    RI_TRAP_COUNT
} ri_trap;

#define RI_ERROR_MESSAGE_MAX 256

typedef struct ri_error {
    ri_errcode code;
    ri_trap trap; /* RI_TRAP_NONE unless code == RI_ERR_TRAP */
    char message[RI_ERROR_MESSAGE_MAX];
} ri_error;

RI_API const char *ri_trap_message(ri_trap trap);
RI_API const char *ri_errcode_name(ri_errcode code);
/* "i32", "i64", "f32", "f64", "v128", "funcref", "externref" ("unknown" for anything else). */
RI_API const char *ri_valtype_name(ri_valtype type);

/* ---- types ----------------------------------------------------------------- */

typedef struct ri_functype {
    uint32_t nparams, nresults;
    const ri_valtype *params;
    const ri_valtype *results;
} ri_functype;

typedef struct ri_limits {
    uint32_t min;
    uint32_t max;
    bool has_max;
} ri_limits;

typedef struct ri_tabletype { ri_valtype elem; ri_limits limits; } ri_tabletype;
/* In 64 KiB pages. is64: a 64-bit memory (memory64: i64 addresses, sizes and deltas);
 * its declared limits may exceed 2^32 pages, and are then held as UINT32_MAX (more than
 * any store allows, see ri_store_config.max_memory_pages). */
typedef struct ri_memtype { ri_limits limits; bool is64; } ri_memtype;
typedef struct ri_globaltype { ri_valtype type; bool mutable_; } ri_globaltype;

typedef enum ri_externkind {
    RI_EXTERN_FUNC = 0,
    RI_EXTERN_TABLE = 1,
    RI_EXTERN_MEMORY = 2,
    RI_EXTERN_GLOBAL = 3,
    RI_EXTERN_TAG = 4,     /* an exception tag (exception handling) */
} ri_externkind;

typedef struct ri_externtype {
    ri_externkind kind;
    union {
        ri_functype func;
        ri_tabletype table;
        ri_memtype memory;
        ri_globaltype global;
        ri_functype tag;   /* the tag's parameters (no results) */
    } of;
} ri_externtype;

/* Names are NUL-terminated for convenience; a WebAssembly name may itself contain
 * U+0000, so the lengths are the authority. */
typedef struct ri_import_info {
    const char *module;
    const char *name;
    ri_externtype type;
    size_t module_len, name_len;
} ri_import_info;

typedef struct ri_export_info {
    const char *name;
    ri_externtype type;
    size_t name_len;
} ri_export_info;

/* ---- modules --------------------------------------------------------------- */

typedef struct ri_module ri_module;

/* Implementation limits, checked at load time (exceeding one is RI_ERR_LIMIT).
 * Zero fields take the defaults documented in docs/ARCHITECTURE.md. */
typedef struct ri_module_config {
    size_t max_module_bytes;      /* default 256 MiB */
    uint32_t max_functions;       /* default 1,000,000 */
    uint32_t max_locals;          /* per function, params included; default 50,000 */
    uint32_t max_block_depth;     /* default 65,536 */
    uint32_t max_table_size;      /* elements; default 10,000,000 */
    uint32_t max_memory_pages;    /* declared minimum; default 65,536 (4 GiB) */
    uint32_t max_total_locals;    /* declared locals of all functions together; default
                                     16,777,216 (a few bytes of binary can declare many) */
    bool unmetered;               /* compile without gas metering: the module's code never
                                     charges gas (ri_store_gas stays unchanged by it, and it
                                     cannot run out of gas); interruption still works. For
                                     trusted code and for measuring what metering costs.
                                     Default (false): metered, see ri_store_set_gas. */
    bool single_memory;           /* WebAssembly 2.0's rule: at most one memory, and the
                                     memory instructions' memory index bytes must be single
                                     zero bytes (what 2.0's spec suite expects). Default
                                     (false): multiple memories (3.0). */
    uint32_t fusions_off;         /* fusion families (ri_fusion) the compiler leaves out;
                                     default 0 (all on). Changes speed only: results, traps,
                                     gas, stop points and snapshots are the same. For tests
                                     that compare fused with unfused code, and for measuring
                                     what each family gives. */
} ri_module_config;

/* The compiler's fusion families: each joins WebAssembly instructions into fewer internal
 * operations (docs/ARCHITECTURE.md, "Superinstructions"). */
typedef enum ri_fusion {
    RI_FUSE_IMMEDIATE = 1u << 0,      /* a constant operand as an immediate word; x + 0 as x */
    RI_FUSE_COMPARE_BRANCH = 1u << 1, /* a compare and the br_if / if testing it */
    RI_FUSE_COUNTER_BRANCH = 1u << 2, /* an i32.add and the branch testing it (loop counters) */
    RI_FUSE_LOAD_BRANCH = 1u << 3,    /* an i32 load and the branch testing it */
    RI_FUSE_ADDRESS = 1u << 4,        /* the address's i32.add (or add and shift) in the load or store */
    RI_FUSE_MEMORY_PAIR = 1u << 5,    /* two i32 loads, or two stores of a kind, in a row */
    RI_FUSE_INT_PAIR = 1u << 6,       /* i32 arithmetic on the result just before, or on a load */
    RI_FUSE_INT_IMM_PAIR = 1u << 7,   /* two i32 operations with immediates in a row */
    RI_FUSE_FLOAT_PAIR = 1u << 8,     /* f64 arithmetic on the f64 arithmetic just before */
    RI_FUSE_FLOAT_MEMORY = 1u << 9,   /* f64 arithmetic with its load or store (and a += x * y) */
    RI_FUSE_SHA2 = 1u << 10,          /* no longer does anything: its SHA-2-shaped chains were removed (they gained
                                         nothing on code they were not shaped after); kept so that lists naming
                                         "sha2" stay valid */
    RI_FUSE_ACCUMULATOR = 1u << 11,   /* read an operand the instruction before just wrote from a register */
    RI_FUSE_ALL = (1u << 12) - 1
} ri_fusion;
/* "immediate", "compare-branch", ... (NULL for anything but one family); ri_fusion_parse reads a
 * comma-separated list of these names, or "all", into *mask (false on an unknown name). */
RI_API const char *ri_fusion_name(uint32_t family);
RI_API bool ri_fusion_parse(const char *list, uint32_t *mask);

/* Decode, validate and compile. cfg may be NULL. Returns NULL and fills err on failure. */
RI_API ri_module *ri_module_load(const uint8_t *bytes, size_t len, const ri_module_config *cfg, ri_error *err);
RI_API void ri_module_free(ri_module *module);

RI_API uint32_t ri_module_import_count(const ri_module *module);
RI_API ri_import_info ri_module_import(const ri_module *module, uint32_t index);
RI_API uint32_t ri_module_export_count(const ri_module *module);
RI_API ri_export_info ri_module_export(const ri_module *module, uint32_t index);
/* The module's binary as loaded (the module's own copy, valid as long as the module):
 * what a snapshot hashes to name the module, or embeds. */
RI_API const uint8_t *ri_module_bytes(const ri_module *module, size_t *len);
/* Bytes of internal code the engine compiled the module's function bodies into (the
 * instruction streams, without the stop-point tables), to compare with the size of the
 * code section. */
RI_API size_t ri_module_code_bytes(const ri_module *module);

/* ---- stores ---------------------------------------------------------------- */

typedef struct ri_store ri_store;
typedef struct ri_instance ri_instance;
typedef struct ri_func ri_func;
typedef struct ri_memory ri_memory;
typedef struct ri_table ri_table;
typedef struct ri_global ri_global;
typedef struct ri_tag ri_tag;       /* an exception tag: exceptions of one tag carry its parameters */

typedef struct ri_store_config {
    uint32_t max_call_depth;      /* frames; default 10,000; exceeding traps "call stack exhausted" */
    uint32_t max_stack_slots;     /* 8-byte value-stack slots; default 1,048,576 (8 MiB) */
    uint32_t max_memory_pages;    /* memory.grow never grows past this; default 65,536 */
    uint32_t max_table_elems;     /* table.grow never grows past this; default 10,000,000 */
    bool canonicalize_nans;       /* every NaN an arithmetic instruction produces is canonical */
    uint32_t max_total_memory_pages; /* all the store's memories together (multiple memories):
                                     creating or growing one past it fails like a memory's
                                     own maximum; 0 (default): no limit beyond each one's */
} ri_store_config;

RI_API ri_store_config ri_store_config_default(void);
RI_API ri_store *ri_store_new(const ri_store_config *cfg); /* cfg NULL = defaults; NULL on OOM */
RI_API void ri_store_free(ri_store *store);

/* Gas: every instruction costs 1 (bulk operations cost 1 + their length in bytes or
 * elements); charged per basic block. When the remaining gas cannot pay for the next
 * block, execution traps RI_TRAP_OUT_OF_GAS before any of that block runs.
 * The default is UINT64_MAX (effectively unmetered). Code of a module loaded with
 * ri_module_config.unmetered charges nothing. */
RI_API void ri_store_set_gas(ri_store *store, uint64_t gas);
RI_API uint64_t ri_store_gas(const ri_store *store);

/* Thread-safe: ask the running call to stop; it traps RI_TRAP_INTERRUPTED at a stop
 * point soon after: metered code within 65,536 more instructions (it polls whenever
 * it draws a new chunk of gas) or at its next call of a host function, whichever comes
 * first; unmetered code at the next loop back-edge or call. A loop is stopped either
 * way, with or without calls. The request stays set until ri_store_clear_interrupt. */
RI_API void ri_store_interrupt(ri_store *store);
RI_API void ri_store_clear_interrupt(ri_store *store);

/* ---- externs and instantiation -------------------------------------------- */

typedef struct ri_extern {
    ri_externkind kind;
    union {
        ri_func *func;
        ri_table *table;
        ri_memory *memory;
        ri_global *global;
        ri_tag *tag;
    } of;
} ri_extern;

/* imports[i] satisfies ri_module_import(module, i). Runs the start function.
 * Errors: RI_ERR_UNLINKABLE ("incompatible import type", wrong count),
 * RI_ERR_TRAP (segment out of bounds, start trapped), RI_ERR_NOMEM. */
RI_API ri_instance *ri_instantiate(ri_store *store, const ri_module *module,
                            const ri_extern *imports, uint32_t nimports, ri_error *err);

RI_API const ri_module *ri_instance_module(const ri_instance *inst);
/* false if no export of that name */
RI_API bool ri_instance_export(const ri_instance *inst, const char *name, ri_extern *out);
/* The same for a name of len bytes, which may contain NUL bytes. */
RI_API bool ri_instance_export_n(const ri_instance *inst, const char *name, size_t len, ri_extern *out);

/* ---- instance state ----------------------------------------------------------
 * Every memory, table, global and segment of an instance by index (imports first,
 * as in the module's index spaces), exported or not: what snapshots, limits and
 * restores need to see. Out-of-range indices give NULL / false. */

RI_API uint32_t ri_instance_memory_count(const ri_instance *inst);
RI_API ri_memory *ri_instance_memory(const ri_instance *inst, uint32_t index);
RI_API uint32_t ri_instance_table_count(const ri_instance *inst);
RI_API ri_table *ri_instance_table(const ri_instance *inst, uint32_t index);
RI_API uint32_t ri_instance_global_count(const ri_instance *inst);
RI_API ri_global *ri_instance_global(const ri_instance *inst, uint32_t index);
/* Element and data segments: whether each has been dropped (by elem.drop/data.drop,
 * or because it was active or declarative and instantiation applied it). */
RI_API uint32_t ri_instance_elem_count(const ri_instance *inst);
RI_API uint32_t ri_instance_data_count(const ri_instance *inst);
RI_API bool ri_instance_elem_dropped(const ri_instance *inst, uint32_t index);
RI_API bool ri_instance_data_dropped(const ri_instance *inst, uint32_t index);
RI_API bool ri_instance_set_elem_dropped(ri_instance *inst, uint32_t index, bool dropped);
RI_API bool ri_instance_set_data_dropped(ri_instance *inst, uint32_t index, bool dropped);

/* The function index space (imports first). ri_instance_func_index maps a function
 * (a funcref value, an ri_func*) back to its index in this instance's space; false if
 * the function is not in it (a function of another instance that was not imported).
 * Snapshots store funcrefs as these indices, not as pointers. */
RI_API uint32_t ri_instance_func_count(const ri_instance *inst);
RI_API ri_func *ri_instance_func(const ri_instance *inst, uint32_t index);
RI_API bool ri_instance_func_index(const ri_instance *inst, const ri_func *func, uint32_t *index);

/* The module's memories (imports first); *imported tells which came from an import. */
RI_API uint32_t ri_module_memory_count(const ri_module *module);
RI_API bool ri_module_memory(const ri_module *module, uint32_t index, ri_memtype *type, bool *imported);

/* ---- functions ------------------------------------------------------------- */

typedef struct ri_host_call ri_host_call;

/* A host function. args has type->nparams values, results room for type->nresults
 * (already typed). Return 0 on success; on failure call ri_host_fail and return it. */
typedef int (*ri_host_fn)(ri_host_call *call, void *user, const ri_val *args, ri_val *results);

/* Sets the trap message (printf-style) and returns non-zero, for `return ri_host_fail(...)`. */
RI_API int ri_host_fail(ri_host_call *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The store and the instance whose code made the call (NULL when the call came from
 * the embedder). Memory of the caller is its memory 0, or NULL. */
RI_API ri_store *ri_host_call_store(ri_host_call *call);
RI_API ri_instance *ri_host_call_instance(ri_host_call *call);
RI_API ri_memory *ri_host_call_memory(ri_host_call *call);

/* The type is copied. */
RI_API ri_func *ri_func_new_host(ri_store *store, const ri_functype *type, ri_host_fn fn, void *user);
RI_API ri_functype ri_func_type(const ri_func *func);

/* Emscripten's JavaScript-side setjmp/longjmp (docs/LANGUAGES.md): a module built that way
 * imports env.invoke_<sig>(index, args...) and env._emscripten_throw_longjmp(). Bound to
 * these engine operations instead of host functions they run on the heap frames, so a call
 * inside an invoke can be paused, snapshotted and resumed:
 * - RI_EMSCRIPTEN_INVOKE (type (i32, P...) -> R): calls element `index` of the caller's
 *   table 0 (type P -> R) with a catch point; the stack pointer (the global that the
 *   module's export "stackSave" reads) is saved.
 * - RI_EMSCRIPTEN_THROW (type () -> ()): unwinds to the nearest catch point of the same
 *   run, restores the stack pointer saved there, runs the module's export setThrew(1, 0)
 *   and makes that invoke return zeros, as Emscripten's glue does. With no catch point
 *   the call traps (RI_TRAP_HOST, "uncaught longjmp ..."). NULL for another type. */
typedef enum ri_emscripten_op {
    RI_EMSCRIPTEN_INVOKE = 1,
    RI_EMSCRIPTEN_THROW = 2,
} ri_emscripten_op;
RI_API ri_func *ri_func_new_emscripten(ri_store *store, ri_emscripten_op op, const ri_functype *type);

/* Invoke a function (WebAssembly or host). nargs/nresults must match its type and each
 * argument's type must match, else RI_ERR_ARGUMENT. Traps come back as RI_ERR_TRAP.
 * An exnref result (exception handling) is valid until the next call into the store from
 * the embedder; an exnref argument must be null, except in a call from a host function
 * (then one of the running call's exceptions), else RI_ERR_ARGUMENT. */
RI_API ri_errcode ri_func_call(ri_store *store, ri_func *func, const ri_val *args, uint32_t nargs,
                        ri_val *results, uint32_t nresults, ri_error *err);

/* ---- memories -------------------------------------------------------------- */

RI_API ri_memory *ri_memory_new(ri_store *store, ri_memtype type, ri_error *err);
RI_API ri_memtype ri_memory_type(const ri_memory *mem);
RI_API uint8_t *ri_memory_data(ri_memory *mem);       /* valid until the next grow */
RI_API uint64_t ri_memory_size(const ri_memory *mem); /* bytes */
RI_API uint32_t ri_memory_pages(const ri_memory *mem);
/* Returns the old size in pages, or -1 if it cannot grow (limits or allocation). */
RI_API int64_t ri_memory_grow(ri_memory *mem, uint32_t delta_pages);
/* Sets the size to exactly `pages`, smaller or larger (within the effective maximum);
 * new bytes are zero. WebAssembly only grows memory; restoring a snapshot taken
 * before a grow needs to go back. false (nothing changed) if not possible. It does not
 * apply the store's max_total_memory_pages (a restore grows one memory before it shrinks
 * another): its caller checks the total it restores (ri_memory_total_limit). */
RI_API bool ri_memory_resize(ri_memory *mem, uint32_t pages);
/* The effective maximum in pages: the type's maximum capped by the store's
 * max_memory_pages; grow and resize never go past it. */
RI_API uint32_t ri_memory_max_pages(const ri_memory *mem);
/* The store's max_total_memory_pages (all its memories together), 0 if none, and the
 * pages all the memories of mem's store hold now. */
RI_API uint32_t ri_memory_total_limit(const ri_memory *mem);
RI_API uint64_t ri_memory_total_pages(const ri_memory *mem);
/* Bounds-checked copies; false if [offset, offset+len) is outside the memory. */
RI_API bool ri_memory_read(const ri_memory *mem, uint64_t offset, void *dst, size_t len);
RI_API bool ri_memory_write(ri_memory *mem, uint64_t offset, const void *src, size_t len);

/* ---- tables ---------------------------------------------------------------- */

RI_API ri_table *ri_table_new(ri_store *store, ri_tabletype type, void *init, ri_error *err);
RI_API ri_tabletype ri_table_type(const ri_table *table);
RI_API uint32_t ri_table_size(const ri_table *table);
/* The effective maximum in elements (the type's, capped by the store's max_table_elems). */
RI_API uint32_t ri_table_max_size(const ri_table *table);
RI_API bool ri_table_get(const ri_table *table, uint32_t index, void **out);
RI_API bool ri_table_set(ri_table *table, uint32_t index, void *ref);
RI_API int64_t ri_table_grow(ri_table *table, uint32_t delta, void *init);
/* Sets the size to exactly `size` (new entries take init); see ri_memory_resize. */
RI_API bool ri_table_resize(ri_table *table, uint32_t size, void *init);

/* ---- globals --------------------------------------------------------------- */

RI_API ri_global *ri_global_new(ri_store *store, ri_globaltype type, ri_val init, ri_error *err);
RI_API ri_globaltype ri_global_type(const ri_global *global);
RI_API ri_val ri_global_get(const ri_global *global);
/* false if immutable or of another type */
RI_API bool ri_global_set(ri_global *global, ri_val value);

/* ---- memory images: copy-on-write checkpoints of a memory ----------
 * A memory's bytes live in a fixed reservation of its maximum size (data never moves
 * when it grows). An ri_memimage is an immutable, reference-counted image of a
 * memory's contents: a full image, or a delta (the pages written since its parent was
 * captured or loaded, on top of that parent). With memfd (Linux), images are memfd
 * files mapped copy-on-write into memories, so loading one into a memory (rollback,
 * fork) costs O(mappings), not O(bytes), and pages written since are found through
 * /proc/self/pagemap. Without memfd, images are heap copies and every capture and load
 * copies the whole memory; without pagemap, every page counts as written. Either way
 * the contents are the same: only the cost differs. docs/ARCHITECTURE.md. */

typedef struct ri_memimage ri_memimage;

enum {
    RI_MEMIMAGE_FULL = 1u,        /* capture a full image even when a delta would do */
    RI_MEMIMAGE_NO_PAGEMAP = 2u,  /* do not read /proc/self/pagemap: every page is "written" */
    RI_MEMIMAGE_NO_MEMFD = 4u,    /* heap copies instead of memfd files (what happens anyway
                                     where memfd_create is unavailable) */
};

/* Captures the memory's contents (flags: RI_MEMIMAGE_*). When the memory is backed by
 * an image (the last one captured from it or loaded into it) and nothing asks for a
 * full one, the result is a delta on that image holding only the pages written since;
 * if nothing was written it is that image itself (one more reference). Afterwards the
 * memory is backed by the result. The caller owns one reference. NULL on failure
 * (err set: RI_ERR_NOMEM, or the system call that failed), the memory unchanged. */
RI_API ri_memimage *ri_memory_capture(ri_memory *mem, unsigned flags, ri_error *err);
/* Makes the memory's size and contents the image's (any image, from any store; the
 * size must be within the memory's effective maximum, else RI_ERR_LIMIT). Afterwards
 * the memory is backed by img. false: the memory is unchanged, except when the kernel
 * refuses a mapping midway (its limit on mappings): the memory is then left empty (0
 * pages), never with mixed contents, and the error says so. */
RI_API bool ri_memory_load_image(ri_memory *mem, ri_memimage *img, ri_error *err);
/* Pages written since the memory's backing image (all pages when it has none, or with
 * RI_MEMIMAGE_NO_PAGEMAP): their count; if bitmap is not NULL, bit (p % 8) of byte
 * p / 8 set for each (ceil(pages / 8) bytes). -1 on failure. Pages may be reported
 * that hold the same bytes as the image (a page only read can count), never fewer. */
RI_API int64_t ri_memory_written_pages(ri_memory *mem, unsigned flags, uint8_t *bitmap);
/* The image the memory is backed by (no reference added), or NULL. */
RI_API const ri_memimage *ri_memory_backing(const ri_memory *mem);

/* A full image of `pages` pages from their contents: source(ctx, p) is called once for
 * each page p in ascending order and returns its 64 KiB (read before the next call), or
 * NULL for a zero page. Loading the result (ri_memory_load_image) restores a memory
 * without copying it into the memory's pages: they read through from the image until
 * written. With RI_MEMIMAGE_NO_MEMFD, or without memfd, a heap copy. NULL on failure
 * (err: RI_ERR_NOMEM, RI_ERR_ARGUMENT, or the write that failed). */
typedef const uint8_t *(*ri_page_source)(void *ctx, uint32_t page);
RI_API ri_memimage *ri_memimage_build(uint32_t pages, ri_page_source source, void *ctx, unsigned flags, ri_error *err);

RI_API void ri_memimage_retain(ri_memimage *img);
RI_API void ri_memimage_release(ri_memimage *img); /* NULL is fine */
RI_API uint32_t ri_memimage_pages(const ri_memimage *img);
/* A delta's parent (NULL for a full image). */
RI_API const ri_memimage *ri_memimage_parent(const ri_memimage *img);
/* Pages this image stores itself (a delta: those written since its parent; a full
 * image: all its pages, though pages never written cost nothing: they are holes). */
RI_API uint32_t ri_memimage_stored_pages(const ri_memimage *img);
/* Deltas between this image and its full ancestor (0 for a full image). */
RI_API uint32_t ri_memimage_depth(const ri_memimage *img);
RI_API bool ri_memimage_is_memfd(const ri_memimage *img);
/* Copies page `page` of the image (64 KiB) into dst; false if page >= its pages or a
 * read fails. */
RI_API bool ri_memimage_read_page(const ri_memimage *img, uint32_t page, uint8_t *dst);

/* One more reference to a module (ri_module_free drops one): a fork shares it. */
RI_API ri_module *ri_module_retain(ri_module *module);
/* ri_instantiate without running the start function and without initialising from the
 * active segments (tables and memories stay as allocated, no segment is marked dropped):
 * for an instance whose whole state is about to be replaced (a fork, a restore), where
 * the original's instantiation already did both. */
RI_API ri_instance *ri_instantiate_nostart(ri_store *store, const ri_module *module, const ri_extern *imports,
                                    uint32_t nimports, ri_error *err);
/* ---- suspension: pause anywhere, resume anywhere ---------------------
 * A call can be suspended instead of failed: when gas runs out, when the interrupt
 * flag is up, or when a host function yields. The store then keeps the suspended
 * call (value stack and frames); ri_store_resume continues it, with new gas, to the
 * result the uninterrupted call would have given. Gas rule: a slice pays exactly the
 * charges it executed; the charge it stopped at is unpaid (the next slice pays it in
 * full), and what a slice leaves unspent stays in the store (ri_store_gas) and is
 * carried over: ri_store_resume adds the new gas to it. So the gas used by all slices
 * together (all the gas given minus what is left at the end) equals the gas of the
 * unsliced call, instruction for instruction, and slices of any size, even 1, make
 * progress.
 * A suspended call is described as plain data in WebAssembly terms (function index,
 * byte offset in the module, locals, operand values with their types) and can be
 * rebuilt from that description in a fresh instance of the same module: see
 * docs/ARCHITECTURE.md "Suspension". Only the outermost run can be suspended: a run
 * started by a host function (host -> WebAssembly -> host nesting) traps as before,
 * its message saying that it could not be suspended. */

/* ri_func_call / ri_store_resume return RI_ERR_SUSPENDED (ri_errcode) when the call is
 * suspended: not an error (see ri_store_suspended). */

/* What may suspend a call (a mask for ri_store_set_suspend_mode). */
#define RI_SUSPEND_ON_GAS 1u        /* the gas budget cannot pay the next charge */
#define RI_SUSPEND_ON_INTERRUPT 2u  /* ri_store_interrupt (or a watchdog) */
#define RI_SUSPEND_ON_YIELD 4u      /* a host function returned ri_host_yield(call) */
#define RI_SUSPEND_ALL 7u

typedef enum ri_suspend_reason {
    RI_SUSPENDED_NONE = 0,
    RI_SUSPENDED_GAS = 1,
    RI_SUSPENDED_INTERRUPT = 2,
    RI_SUSPENDED_YIELD = 3,
} ri_suspend_reason;

RI_API const char *ri_suspend_reason_name(ri_suspend_reason reason); /* "gas", "interrupt", "yield" */

/* Calls started after this (ri_func_call from the embedder) suspend on what mask
 * says instead of trapping; 0 (the default) never suspends. */
RI_API void ri_store_set_suspend_mode(ri_store *store, uint32_t mask);
RI_API uint32_t ri_store_suspend_mode(const ri_store *store);

/* A host function's way to pause the call: `return ri_host_yield(call);` after writing
 * its results. The call completes with those results, then the calling WebAssembly
 * code suspends right after it (RI_SUSPENDED_YIELD). When the call cannot be
 * suspended (mode without RI_SUSPEND_ON_YIELD, or a nested run), the host call fails
 * with a message saying so. */
#define RI_HOST_YIELD 0x59494c44 /* "YILD": what ri_host_yield returns */
RI_API int ri_host_yield(ri_host_call *call);
/* Whether the host function of this call has called ri_host_yield (for bridges that
 * wrap host functions and must pass the yield on). */
RI_API bool ri_host_call_yielded(const ri_host_call *call);
/* A host function's way to say "no gas for me yet": `return ri_host_pause_before(call);`
 * having done nothing. The calling code stops before the call as out of gas, or as
 * interrupted when the store's interrupt flag is up (a host function that finds its
 * time slice over calls ri_store_interrupt first); it suspends if the mode includes
 * RI_SUSPEND_ON_GAS (resp. _INTERRUPT) and makes the call again when resumed, so a host
 * function that charges gas itself (the sandbox's import unit) pauses exactly where an
 * out-of-gas trap would have stopped it. Otherwise the run traps out of gas (resp.
 * interrupted); in a run that cannot be suspended (nested) the call fails with that
 * message. */
#define RI_HOST_PAUSE_BEFORE 0x50415553 /* "PAUS": what ri_host_pause_before returns */
RI_API int ri_host_pause_before(ri_host_call *call);

/* The suspended call, if any: its reason and the function that was called. */
RI_API bool ri_store_suspended(const ri_store *store);
RI_API ri_suspend_reason ri_store_suspend_reason(const ri_store *store);
RI_API ri_func *ri_store_suspended_func(const ri_store *store);

/* Continues the suspended call with `gas` more (added to ri_store_gas, saturating). Returns
 * RI_OK with the results (nresults must be the called function's), RI_ERR_TRAP, or
 * RI_ERR_SUSPENDED again. Nothing to resume: RI_ERR_ARGUMENT. */
RI_API ri_errcode ri_store_resume(ri_store *store, uint64_t gas, ri_val *results, uint32_t nresults, ri_error *err);
/* Drops the suspended call (its frames are discarded; memories, tables, globals keep
 * what it did so far). */
RI_API void ri_store_abandon(ri_store *store);

/* A value in a description: its type and its bits (i32, f32: zero-extended; f32/f64
 * as IEEE bits; funcref: the function index in the instance's space, or
 * RI_SUSP_NULL_REF; externref: only RI_SUSP_NULL_REF; exnref: an index in the
 * suspension's exnrefs, or RI_SUSP_NULL_REF). A v128 is two consecutive values
 * of type RI_V128: its bytes 0..7, then 8..15, each read as a little-endian uint64 (so
 * nlocals and nstack count a v128 twice). */
#define RI_SUSP_NULL_REF UINT64_C(0xFFFFFFFF)
typedef struct ri_susp_value {
    ri_valtype type;
    uint64_t bits;
} ri_susp_value;

/* Where a frame is stopped. The running (innermost) frame is at an ENTRY (function
 * entry, nothing run yet), GAS (start of a straight-line region), LOOP (loop header),
 * BULK (a memory/table bulk instruction about to charge its length) or CALL point (a
 * call about to be made again: ri_host_pause_before; its arguments on the stack); every
 * other frame is at a CALL point (waiting for the call at wasm_offset to return). */
typedef enum ri_susp_point {
    RI_SUSP_ENTRY = 0,
    RI_SUSP_GAS = 1,
    RI_SUSP_LOOP = 2,
    RI_SUSP_CALL = 3,
    RI_SUSP_BULK = 5,
} ri_susp_point;

/* An exception that a catch clause the frame stopped in keeps for a rethrow (exception
 * handling): the frame's exception slot `slot` (the nesting level of its try), its tag and
 * the tag's values. */
typedef struct ri_susp_exn {
    uint32_t slot;
    uint32_t tag_index;      /* in the instance's tag index space */
    uint32_t nvals;
    ri_susp_value *vals;
} ri_susp_exn;

typedef struct ri_susp_frame {
    uint32_t func_index;     /* in the instance's function index space */
    uint32_t wasm_offset;    /* byte offset in the module binary (see code.h for each kind) */
    ri_susp_point point;
    uint32_t nlocals;        /* parameters included */
    uint32_t nstack;         /* operand stack entries of this frame (a caller: below the arguments) */
    ri_susp_value *locals;
    ri_susp_value *stack;    /* bottom first */
    /* How its caller entered it: RI_SUSP_VIA_CALL, or through an Emscripten invoke
     * (RI_SUSP_VIA_INVOKE: a catch point; via_value is the stack pointer it saved), or as
     * the setThrew(1, 0) that a caught throw runs (RI_SUSP_VIA_SETTHREW; the invoke it
     * caught returns zeros after it). The outermost frame: RI_SUSP_VIA_CALL. */
    uint32_t via;
    uint64_t via_value;
    uint32_t nexns;          /* kept exceptions (exception handling), usually none */
    ri_susp_exn *exns;
} ri_susp_frame;
#define RI_SUSP_VIA_CALL 0u
#define RI_SUSP_VIA_INVOKE 1u
#define RI_SUSP_VIA_SETTHREW 2u

typedef struct ri_suspension {
    ri_suspend_reason reason;
    uint32_t func_index;     /* the function that was called (= frames[0].func_index) */
    uint32_t nframes;        /* at least 1 */
    ri_susp_frame *frames;   /* outermost first; frames[nframes - 1] is the running one */
    /* The exceptions that exnref values (exception handling) refer to, each once: slot 0, its
     * tag and values; a value of entry i that is an exnref refers to an entry before i. */
    uint32_t nexnrefs;
    ri_susp_exn *exnrefs;
} ri_suspension;

/* Describes the suspended call of the store, all of whose frames must be functions of
 * inst. *out is owned: ri_suspension_free. */
RI_API bool ri_store_describe_suspended(ri_store *store, const ri_instance *inst, ri_suspension *out, ri_error *err);
RI_API void ri_suspension_free(ri_suspension *s);
/* Makes `s` the store's suspended call in inst (a fresh instance of the same module,
 * typically restored from a snapshot). Checks everything first (function indices,
 * that each offset is a stop point of that kind of that function, heights, every
 * value's type and range, how the frames call each other, the store's limits): on
 * failure (RI_ERR_ARGUMENT, with the reason) the store is unchanged. The store must
 * have no suspended call and no call running. */
RI_API bool ri_store_rebuild_suspended(ri_store *store, ri_instance *inst, const ri_suspension *s, ri_error *err);

#ifdef __cplusplus
}
#endif
#endif
