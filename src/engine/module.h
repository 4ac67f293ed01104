/*
 * The decoded module: what decode.c produces from the binary format, what
 * validate.c checks, what compile.c translates and what instance.c instantiates.
 *
 * Index spaces (functions, tables, memories, globals) hold the imports first, then
 * the module's own definitions, exactly as in the spec. Byte ranges (names, data
 * segment contents, function bodies, constant expressions) point into `bytes`, the
 * module's own copy of the binary, which lives as long as the module.
 */
#ifndef RI_ENGINE_MODULE_H
#define RI_ENGINE_MODULE_H

#include <stdatomic.h>

#include "ri/engine.h"

struct ri_code; /* compiled function, defined by compile.h */

/* A function type. params and results point into the module's valtype pool. */
typedef struct ri_type {
    uint32_t nparams, nresults;
    const uint8_t *params;  /* ri_valtype bytes */
    const uint8_t *results;
} ri_type;

/* A byte range inside module->bytes. */
typedef struct ri_span {
    uint32_t offset; /* from the start of the module binary */
    uint32_t len;
} ri_span;

/* A constant expression as it stands in the binary, from its first instruction up to
 * and including its `end` (0x0B). The decoder only finds its extent (it decodes the
 * instructions, so malformed ones are reported); validate.c checks that it is constant
 * and of the right type; instance.c evaluates it (constants, ref.null/ref.func,
 * global.get, and i32/i64 add/sub/mul of extended constant expressions). */
typedef ri_span ri_expr;
/* The deepest operand stack a constant expression may build (an implementation limit:
 * a module beyond it is refused with RI_ERR_LIMIT; evaluation uses a fixed array). */
#define RI_CONST_EXPR_MAX_DEPTH 64u

typedef struct ri_import {
    ri_span module_name; /* UTF-8, validated by the decoder */
    ri_span field_name;
    ri_externkind kind;
    uint32_t type_index;   /* RI_EXTERN_FUNC, RI_EXTERN_TAG: index into types */
    ri_tabletype table;    /* RI_EXTERN_TABLE */
    ri_memtype memory;     /* RI_EXTERN_MEMORY */
    ri_globaltype global;  /* RI_EXTERN_GLOBAL */
} ri_import;

typedef struct ri_export {
    ri_span name;
    ri_externkind kind;
    uint32_t index; /* into the index space of its kind */
} ri_export;

typedef struct ri_global_def {
    ri_globaltype type;
    ri_expr init;
} ri_global_def;

typedef enum ri_segment_mode {
    RI_SEGMENT_ACTIVE = 0,
    RI_SEGMENT_PASSIVE = 1,
    RI_SEGMENT_DECLARATIVE = 2, /* element segments only */
} ri_segment_mode;

typedef struct ri_elem_segment {
    ri_segment_mode mode;
    ri_valtype type;          /* RI_FUNCREF or RI_EXTERNREF */
    uint32_t table_index;     /* active only */
    ri_expr offset;           /* active only */
    uint32_t count;
    /* Exactly one of the two is used: element kinds 0-3 list function indices,
     * kinds 4-7 list constant expressions. */
    uint32_t *func_indices;   /* count entries, or NULL */
    ri_expr *exprs;           /* count entries, or NULL */
} ri_elem_segment;

typedef struct ri_data_segment {
    ri_segment_mode mode;
    uint32_t memory_index;    /* active only */
    ri_expr offset;           /* active only */
    ri_span init;             /* the bytes */
} ri_data_segment;

/* A function body: its declared locals (params excluded) and its code. */
typedef struct ri_body {
    uint32_t nlocals;         /* declared locals only, expanded */
    uint8_t *local_types;     /* nlocals ri_valtype bytes */
    ri_span code;             /* the instructions after the locals, final `end` included */
} ri_body;

struct ri_module {
    atomic_uint refs;         /* ri_module_load gives 1; each instance holds one */
    uint8_t *bytes;           /* owned copy of the binary */
    size_t size;
    ri_module_config config;  /* the limits it was loaded with, defaults filled in */

    uint32_t ntypes;
    ri_type *types;

    uint32_t nimports;
    ri_import *imports;

    /* Counts of imports by kind: the first entries of each index space. */
    uint32_t nfunc_imports, ntable_imports, nmemory_imports, nglobal_imports;

    uint32_t nfuncs;          /* imports included */
    uint32_t *func_types;     /* nfuncs type indices */

    uint32_t ntables;         /* imports included */
    ri_tabletype *tables;

    uint32_t nmemories;       /* imports included */
    ri_memtype *memories;

    uint32_t ntags;           /* exception tags, imports included */
    uint32_t ntag_imports;
    uint32_t *tag_types;      /* ntags type indices (the tag's parameters; no results) */

    uint32_t nglobals;        /* imports included */
    ri_globaltype *global_types; /* nglobals */
    ri_global_def *globals;   /* nglobals - nglobal_imports definitions */

    uint32_t nexports;
    ri_export *exports;

    bool has_start;
    uint32_t start;

    uint32_t nelems;
    ri_elem_segment *elems;

    bool has_data_count;
    uint32_t data_count;

    uint32_t ndatas;
    ri_data_segment *datas;

    uint32_t nbodies;         /* == nfuncs - nfunc_imports */
    ri_body *bodies;

    /* Functions referenced by ref.func outside function bodies (in globals, exports
     * and element segments); the only ones a body's ref.func may name. nfuncs flags. */
    bool *func_declared;

    /* Filled by compile.c: one per body. */
    struct ri_code **codes;

    /* Owned allocations the decoder made (type valtype pool, ...). */
    uint8_t *valtype_pool;
};

/* Zero fields of c take the documented defaults. */
void ri_module_config_fill_defaults(ri_module_config *c);

/* Pass 1: decode. Fills *m (which the caller zeroed) from bytes. On failure returns
 * RI_ERR_MALFORMED or RI_ERR_LIMIT with a message naming the section and offset;
 * whatever was allocated is released by ri_module_release. */
ri_errcode ri_decode_module(ri_module *m, const uint8_t *bytes, size_t len, ri_error *err);

/* Pass 2: validate everything: types of every function body (full spec algorithm),
 * constant expressions, segments, exports (unique names), start function, limits.
 * Errors name the function index and the instruction's byte offset in the module. */
ri_errcode ri_validate_module(const ri_module *m, ri_error *err);

/* Frees everything a module owns, including compiled code (not m itself). */
void ri_module_release(ri_module *m);

/* ri_span helpers */
static inline const uint8_t *ri_span_ptr(const ri_module *m, ri_span s) { return m->bytes + s.offset; }

#endif
