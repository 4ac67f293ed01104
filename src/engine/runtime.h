/*
 * Runtime objects of the engine: the store and what it owns. Shared by instance.c
 * and store.c (which create them) and interp.c (which runs code against them).
 */
#ifndef RI_ENGINE_RUNTIME_H
#define RI_ENGINE_RUNTIME_H

#include <stdatomic.h>

#include "ri/engine.h"
#include "module.h"

#define RI_PAGE_SIZE 65536u

/* One value-stack slot (also a global's value). Every value of WebAssembly 2.0 but v128
 * fits one slot; v128 (later) takes two consecutive slots.
 * The representation rule (docs/ARCHITECTURE.md, invariant 10): an i32 or f32 is held
 * as its bits zero-extended to 64 (slot.i64 = (uint32_t)bits) and read back as
 * (uint32_t)slot.i64, i64 and f64 as slot.i64 (or slot.f64), a reference as slot.ref
 * after slot.i64 = 0. There is deliberately no 32-bit member: on a big-endian machine
 * it would alias the upper half. So the bits are the same on every machine and equal
 * states have equal bytes (snapshots). */
typedef union ri_slot {
    uint64_t i64;
    double f64;
    void *ref;
} ri_slot;

static inline uint32_t ri_slot_u32(ri_slot s) { return (uint32_t)s.i64; }
static inline ri_slot ri_slot_of_u32(uint32_t v) { ri_slot s; s.i64 = v; return s; }

/* Every store-owned object starts with this header; the store frees its list. */
typedef enum ri_object_kind {
    RI_OBJ_INSTANCE,
    RI_OBJ_FUNC,
    RI_OBJ_MEMORY,
    RI_OBJ_TABLE,
    RI_OBJ_GLOBAL,
    RI_OBJ_TAG,
} ri_object_kind;

typedef struct ri_object {
    struct ri_object *next;
    ri_object_kind kind;
} ri_object;

struct ri_memory {
    ri_object hdr;
    ri_memtype type;
    struct ri_store *store; /* whose memories' total (memory_pages) counts this one */
    uint8_t *data;        /* size bytes, zero-initialised */
    uint64_t size;        /* bytes == pages * RI_PAGE_SIZE */
    uint32_t pages;
    uint32_t max_pages;   /* effective maximum: min(type max, store config max) */
    /* memory.c: data heads a reservation of `reserved` bytes (never moves on grow);
     * `backing` is the image the clean pages read as (see memory.c). */
    size_t reserved;
    struct ri_memimage *backing;
    uint32_t mapped_pages;    /* leading pages whose clean state is backing's */
    uint32_t nmaps;           /* mappings made in the reservation since the last full map */
    int pagemap_fd;           /* /proc/self/pagemap, opened on first use; -1 */
    bool no_scan_ioctl;       /* the kernel lacks PAGEMAP_SCAN: read the entries */
    int work_fd;              /* memfd the memory is a shared mapping of until its first
                                 image (which it becomes), or -1 */
};

struct ri_table {
    ri_object hdr;
    ri_tabletype type;
    void **elems;         /* size entries; ri_func* for funcref, embedder pointer for externref */
    uint32_t size;
    uint32_t max_size;    /* effective maximum: min(type max, store config max) */
};

struct ri_global {
    ri_object hdr;
    ri_globaltype type;
    ri_slot value;
    ri_slot value_hi;          /* v128: the high slot (simd.h) */
};

/* An exception tag: its identity is the object (an import is the exporter's tag). */
struct ri_tag {
    ri_object hdr;
    uint32_t type_id;          /* the store's interned id of its type (params; no results) */
    uint32_t nparams;          /* the values an exception of this tag carries */
};

struct ri_func {
    ri_object hdr;
    ri_type type;              /* params/results: into the module, or owned by the func (host) */
    uint32_t type_id;          /* the store's interned id of `type`: equal ids = equal types */
    ri_instance *instance;     /* NULL for a host function */
    uint32_t func_index;       /* index in instance->module's function space */
    const struct ri_code *code;/* compiled body (WebAssembly functions) */
    ri_host_fn host;           /* host functions */
    void *host_user;
    uint8_t *owned_types;      /* host functions: params then results */
    uint8_t emsc_op;           /* ri_emscripten_op, or 0 (emscripten.c) */
    uint32_t emsc_target_type; /* RI_EMSCRIPTEN_INVOKE: the store's id of the called type */
};

struct ri_instance {
    ri_object hdr;
    ri_store *store;
    ri_module *module;         /* holds a reference (module->refs) */
    ri_func **funcs;           /* module->nfuncs */
    ri_table **tables;         /* module->ntables */
    ri_memory **memories;      /* module->nmemories */
    ri_global **globals;       /* module->nglobals */
    ri_tag **tags;             /* module->ntags */
    uint32_t *type_ids;        /* module->ntypes: store ids of the module's types */
    bool *elem_dropped;        /* module->nelems */
    bool *data_dropped;        /* module->ndatas */
    /* Found on the first Emscripten invoke or throw (emscripten.c): the stack pointer
     * global and the setThrew export. */
    struct ri_instance_emsc {
        bool resolved;
        uint32_t sp_global;
        ri_func *set_threw;
    } emsc;
};

struct ri_host_call {
    ri_store *store;
    ri_instance *instance;     /* caller's instance, or NULL */
    bool failed;
    bool yielded;              /* ri_host_yield: completed, and the caller should pause */
    bool pause_before;         /* ri_host_pause_before: not done, pause before the call */
    char message[RI_ERROR_MESSAGE_MAX];
};

/* Interned function types: id = index into the array. */
typedef struct ri_type_registry {
    uint32_t count, cap;
    ri_type *types;            /* owned copies */
    ri_valtype **valtypes;     /* per id: params then results as the public enum (ri_func_type) */
    uint32_t *buckets;         /* hash index: id + 1, 0 = empty; nbuckets is a power of two */
    uint32_t nbuckets;
} ri_type_registry;

struct ri_exec; /* interp.c: value stack and call frames */

struct ri_store {
    ri_store_config config;
    ri_object *objects;        /* every owned object, newest first */
    ri_type_registry types;
    uint64_t gas;              /* remaining */
    uint64_t memory_pages;     /* of all its memories (config.max_total_memory_pages) */
    atomic_uint interrupt;     /* non-zero: stop at the next back-edge or call */
    struct ri_exec *exec;      /* created by the interpreter on first use */
};

/* store.c */
void ri_store_link(ri_store *store, ri_object *obj, ri_object_kind kind);
/* A function of the type (copied) with no code and no callback, owned by the store:
 * ri_func_new_host and ri_func_new_emscripten fill in what it runs. NULL: a bad type, OOM. */
ri_func *ri_func_new_typed(ri_store *store, const ri_functype *type);
/* Returns the id of an equal type, adding a copy if new; UINT32_MAX on OOM. */
uint32_t ri_store_intern_type(ri_store *store, const ri_type *type);
void ri_error_set(ri_error *err, ri_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void ri_error_trap(ri_error *err, ri_trap trap);

/* interp.c: run func with its arguments in args_results[0..nparams) and leave its
 * results in args_results[0..nresults). The array has room for both.
 * Traps come back as RI_ERR_TRAP with err->trap set. Re-entrant: a host function
 * may call ri_func_call on the same store. */
ri_errcode ri_exec_call(ri_store *store, ri_func *func, ri_slot *args_results, ri_error *err);
void ri_exec_free(struct ri_exec *exec);

/* memory.c: unmaps a memory's storage and drops its backing image (store free). */
void ri_memory_release_storage(ri_memory *mem);

/* memory.c / instance.c: memory.grow / table.grow semantics, shared with the interpreter.
 * Return the old size, or -1 (nothing changed). */
int64_t ri_memory_grow_internal(ri_memory *mem, uint32_t delta_pages);
/* memory_ops.c: the general memory instructions (any memory but a 32-bit memory 0): false
 * when the access leaves the memory (exact: no address arithmetic wraps). opcode is the
 * load's or store's WebAssembly opcode; a loaded value comes as its slot bits. */
/* The effective address of an n-byte access at addr + offset, if it lies inside the memory
 * (exact in 64 bits: a sum past 2^64 is out of bounds, never wrapped). */
bool ri_memop_range(const ri_memory *mem, uint64_t addr, uint64_t offset, uint64_t n, uint64_t *ea);
bool ri_memop_load(const ri_memory *mem, uint8_t opcode, uint64_t addr, uint64_t offset, uint64_t *out);
bool ri_memop_store(ri_memory *mem, uint8_t opcode, uint64_t addr, uint64_t offset, uint64_t value);
bool ri_memop_fill(ri_memory *mem, uint64_t d, uint8_t value, uint64_t n);
bool ri_memop_copy(ri_memory *dst, uint64_t d, const ri_memory *src, uint64_t s, uint64_t n);
bool ri_memop_init(ri_memory *mem, uint64_t d, const uint8_t *bytes, uint64_t len, uint64_t s, uint64_t n);
int64_t ri_memop_grow(ri_memory *mem, uint64_t delta); /* old size in pages, or -1 */
int64_t ri_table_grow_internal(ri_table *table, uint32_t delta, void *init);
/* instance.c: the value of a (validated) constant expression in inst: offsets, global
 * initialisers and element expressions (table.init evaluates these the same way). */
ri_slot ri_eval_const(const ri_instance *inst, ri_expr e);
/* A v128 constant expression (v128.const or global.get): its two slots (simd.h). */
void ri_eval_const_v128(const ri_instance *inst, ri_expr e, ri_slot *lo, ri_slot *hi);
/* Item i of an element segment (a function index or a constant expression),
 * evaluated against the instance: instantiation and table.init share it. */
void *ri_elem_item(const ri_instance *inst, const ri_elem_segment *seg, uint32_t i);

/* emscripten.c: resolves inst->emsc; NULL, or why the instance cannot run Emscripten's
 * invoke and throw (a static message). */
const char *ri_emsc_resolve(ri_instance *inst);

/* compile.c: translate every body of a validated module into m->codes. */
ri_errcode ri_compile_module(ri_module *m, ri_error *err);
void ri_code_free(struct ri_code *code);

#endif
