/*
 * Memories, tables, globals and instantiation (the spec's "Modules" chapter of the
 * execution semantics): import matching, allocation, constant expressions, element
 * and data segments, the start function, and export lookup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instr.h"
#include "runtime.h"
#include "simd.h"

/* WebAssembly 2.0 memories are at most 2^16 pages (4 GiB). */
#define RI_MAX_PAGES 65536u

static bool limits_ok(ri_limits l) { return !l.has_max || l.min <= l.max; }

/* Memories are in memory.c. */

/* ---- tables ---------------------------------------------------------------------- */

ri_table *ri_table_new(ri_store *store, ri_tabletype type, void *init, ri_error *err) {
    if (!store) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_table_new: store is NULL");
        return NULL;
    }
    if (type.elem != RI_FUNCREF && type.elem != RI_EXTERNREF) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_table_new: element type must be funcref or externref");
        return NULL;
    }
    if (!limits_ok(type.limits)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_table_new: invalid limits (min %u > max %u)",
                     type.limits.min, type.limits.max);
        return NULL;
    }
    uint32_t max_size = store->config.max_table_elems;
    if (type.limits.has_max && type.limits.max < max_size) max_size = type.limits.max;
    if (type.limits.min > max_size) {
        ri_error_set(err, RI_ERR_LIMIT, "table of %u elements exceeds the store's limit of %u elements",
                     type.limits.min, max_size);
        return NULL;
    }
    uint64_t n = type.limits.min ? type.limits.min : 1; /* never a NULL elems pointer */
    if (n > SIZE_MAX / sizeof(void *)) {
        ri_error_set(err, RI_ERR_NOMEM, "table of %u elements does not fit the address space", type.limits.min);
        return NULL;
    }
    ri_table *table = calloc(1, sizeof *table);
    void **elems = calloc((size_t)n, sizeof *elems);
    if (!table || !elems) {
        free(table);
        free(elems);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating a table of %u elements", type.limits.min);
        return NULL;
    }
    for (uint32_t i = 0; i < type.limits.min; i++) elems[i] = init;
    table->type = type;
    table->elems = elems;
    table->size = type.limits.min;
    table->max_size = max_size;
    ri_store_link(store, &table->hdr, RI_OBJ_TABLE);
    return table;
}

ri_tabletype ri_table_type(const ri_table *table) {
    ri_tabletype t;
    memset(&t, 0, sizeof t);
    if (table) t = table->type; /* min follows the current size (grow updates it) */
    return t;
}

uint32_t ri_table_size(const ri_table *table) { return table ? table->size : 0; }

uint32_t ri_table_max_size(const ri_table *table) { return table ? table->max_size : 0; }

bool ri_table_get(const ri_table *table, uint32_t index, void **out) {
    if (!table || !out || index >= table->size) return false;
    *out = table->elems[index];
    return true;
}

bool ri_table_set(ri_table *table, uint32_t index, void *ref) {
    if (!table || index >= table->size) return false;
    table->elems[index] = ref;
    return true;
}

int64_t ri_table_grow_internal(ri_table *table, uint32_t delta, void *init) {
    uint32_t old = table->size;
    if (delta == 0) return old;
    uint64_t size = (uint64_t)old + delta;
    if (size > table->max_size) return -1;
    if (size > SIZE_MAX / sizeof(void *)) return -1;
    void **elems = realloc(table->elems, (size_t)size * sizeof *elems);
    if (!elems) return -1;
    for (uint64_t i = old; i < size; i++) elems[i] = init;
    table->elems = elems;
    table->size = (uint32_t)size;
    table->type.limits.min = (uint32_t)size;
    return old;
}

int64_t ri_table_grow(ri_table *table, uint32_t delta, void *init) {
    if (!table) return -1;
    return ri_table_grow_internal(table, delta, init);
}

bool ri_table_resize(ri_table *table, uint32_t size, void *init) {
    if (!table || size > table->max_size) return false;
    if (size >= table->size) return ri_table_grow_internal(table, size - table->size, init) >= 0;
    void **elems = realloc(table->elems, (size ? (size_t)size : 1) * sizeof *elems);
    if (elems) table->elems = elems;
    table->size = size;
    table->type.limits.min = size;
    return true;
}

/* ---- globals ------------------------------------------------------------------- */

static bool global_valtype_supported(ri_valtype t) {
    return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64 || t == RI_V128 || t == RI_FUNCREF ||
           t == RI_EXTERNREF || t == RI_EXNREF;
}

/* A v128 value's high slot (the low one: val_to_slot). */
static ri_slot val_to_slot_hi(ri_val v) {
    ri_slot s;
    s.i64 = v.type == RI_V128 ? ri_v128_u64(v.of.v128 + 8) : 0;
    return s;
}

static ri_slot val_to_slot(ri_val v) {
    ri_slot s;
    s.i64 = 0;
    switch (v.type) {
    case RI_I32: s.i64 = (uint32_t)v.of.i32; break;
    case RI_I64: s.i64 = (uint64_t)v.of.i64; break;
    case RI_F32: s.i64 = v.of.f32_bits; break;
    case RI_F64: s.i64 = v.of.f64_bits; break;
    case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF: s.ref = v.of.ref; break;
    case RI_V128: s.i64 = ri_v128_u64(v.of.v128); break;
    }
    return s;
}

ri_global *ri_global_new(ri_store *store, ri_globaltype type, ri_val init, ri_error *err) {
    if (!store) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_global_new: store is NULL");
        return NULL;
    }
    if (!global_valtype_supported(type.type)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_global_new: unsupported value type 0x%02X", (unsigned)type.type);
        return NULL;
    }
    if (init.type != type.type) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_global_new: initial value of type 0x%02X for a global of type 0x%02X",
                     (unsigned)init.type, (unsigned)type.type);
        return NULL;
    }
    /* an exception reference does not outlive its call (exn.h): only the constant null */
    if (type.type == RI_EXNREF && (type.mutable_ || init.of.ref)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_global_new: an exnref global must be immutable and null");
        return NULL;
    }
    ri_global *g = calloc(1, sizeof *g);
    if (!g) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating a global");
        return NULL;
    }
    g->type = type;
    g->value = val_to_slot(init);
    g->value_hi = val_to_slot_hi(init);
    ri_store_link(store, &g->hdr, RI_OBJ_GLOBAL);
    return g;
}

ri_globaltype ri_global_type(const ri_global *global) {
    ri_globaltype t;
    memset(&t, 0, sizeof t);
    if (global) t = global->type;
    return t;
}

ri_val ri_global_get(const ri_global *global) {
    ri_val v;
    memset(&v, 0, sizeof v);
    if (!global) return v;
    v.type = global->type.type;
    switch (v.type) {
    case RI_I32: v.of.i32 = (int32_t)ri_slot_u32(global->value); break;
    case RI_I64: v.of.i64 = (int64_t)global->value.i64; break;
    case RI_F32: v.of.f32_bits = (uint32_t)global->value.i64; break;
    case RI_F64: v.of.f64_bits = global->value.i64; break;
    case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF: v.of.ref = global->value.ref; break;
    case RI_V128: ri_v128_from_u64s(v.of.v128, global->value.i64, global->value_hi.i64); break;
    }
    return v;
}

bool ri_global_set(ri_global *global, ri_val value) {
    if (!global || !global->type.mutable_ || value.type != global->type.type) return false;
    global->value = val_to_slot(value);
    global->value_hi = val_to_slot_hi(value);
    return true;
}

/* ---- constant expressions ------------------------------------------------------- */

void *ri_elem_item(const ri_instance *inst, const ri_elem_segment *seg, uint32_t i) {
    if (i >= seg->count) return NULL;
    if (seg->func_indices) {
        uint32_t x = seg->func_indices[i];
        return x < inst->module->nfuncs ? inst->funcs[x] : NULL;
    }
    return seg->exprs ? ri_eval_const(inst, seg->exprs[i]).ref : NULL;
}

ri_slot ri_eval_const(const ri_instance *inst, ri_expr e) {
    /* Validation guarantees constant instructions, well typed, at most
     * RI_CONST_EXPR_MAX_DEPTH values deep, one value left at `end`; anything else (which
     * cannot happen for a validated module) yields zero rather than UB. Integer
     * arithmetic wraps (unsigned), as the instructions do. */
    ri_slot stack[RI_CONST_EXPR_MAX_DEPTH];
    uint32_t n = 0;
    ri_slot zero;
    zero.i64 = 0;
    const ri_module *m = inst->module;
    if ((uint64_t)e.offset + e.len > m->size) return zero;
    ri_reader r;
    const uint8_t *start = ri_span_ptr(m, e);
    ri_reader_init(&r, m->bytes, start, start + e.len);
    ri_instr in;
    while (!ri_reader_eof(&r) && ri_read_instr(&r, &in)) {
        ri_slot v;
        v.i64 = 0;
        switch (in.op) {
        case RI_OP_I32_CONST: v.i64 = (uint32_t)in.imm.i32; break;
        case RI_OP_I64_CONST: v.i64 = (uint64_t)in.imm.i64; break;
        case RI_OP_F32_CONST: v.i64 = in.imm.f32_bits; break;
        case RI_OP_F64_CONST: v.i64 = in.imm.f64_bits; break;
        case RI_OP_REF_NULL: v.ref = NULL; break;
        case RI_OP_REF_FUNC: v.ref = in.imm.index < m->nfuncs ? inst->funcs[in.imm.index] : NULL; break;
        case RI_OP_GLOBAL_GET:
            if (in.imm.index < m->nglobals && inst->globals[in.imm.index]) v = inst->globals[in.imm.index]->value;
            break;
        case RI_OP_I32_ADD: case RI_OP_I32_SUB: case RI_OP_I32_MUL:
        case RI_OP_I64_ADD: case RI_OP_I64_SUB: case RI_OP_I64_MUL: {
            if (n < 2) return zero;
            uint64_t a = stack[n - 2].i64, b = stack[n - 1].i64, x;
            n -= 2;
            if (in.op == RI_OP_I32_ADD || in.op == RI_OP_I64_ADD) x = a + b;
            else if (in.op == RI_OP_I32_SUB || in.op == RI_OP_I64_SUB) x = a - b;
            else x = a * b;
            /* i32 results live zero-extended in the slot */
            v.i64 = in.op == RI_OP_I32_ADD || in.op == RI_OP_I32_SUB || in.op == RI_OP_I32_MUL ? (uint32_t)x : x;
            break;
        }
        case RI_OP_END: return n == 1 ? stack[0] : zero;
        default: return zero;
        }
        if (n == RI_CONST_EXPR_MAX_DEPTH) return zero;
        stack[n++] = v;
    }
    return zero;
}

void ri_eval_const_v128(const ri_instance *inst, ri_expr e, ri_slot *lo, ri_slot *hi) {
    lo->i64 = 0;
    hi->i64 = 0;
    const ri_module *m = inst->module;
    if ((uint64_t)e.offset + e.len > m->size) return;
    ri_reader r;
    const uint8_t *start = ri_span_ptr(m, e);
    ri_reader_init(&r, m->bytes, start, start + e.len);
    ri_instr in;
    if (!ri_read_instr(&r, &in)) return;
    if (in.op == RI_FD(0x0C)) {
        lo->i64 = ri_v128_u64(in.imm.simd.bytes);
        hi->i64 = ri_v128_u64(in.imm.simd.bytes + 8);
    } else if (in.op == RI_OP_GLOBAL_GET && in.imm.index < m->nglobals && inst->globals[in.imm.index]) {
        *lo = inst->globals[in.imm.index]->value;
        *hi = inst->globals[in.imm.index]->value_hi;
    }
}

/* ---- instantiation --------------------------------------------------------------- */

static const char *kind_name(ri_externkind k) {
    switch (k) {
    case RI_EXTERN_FUNC: return "function";
    case RI_EXTERN_TABLE: return "table";
    case RI_EXTERN_MEMORY: return "memory";
    case RI_EXTERN_GLOBAL: return "global";
    case RI_EXTERN_TAG: return "tag";
    }
    return "unknown";
}

/* The spec's limits subtyping: actual (current size, declared max) within expected. */
static bool limits_match(uint32_t actual_min, bool actual_has_max, uint32_t actual_max, ri_limits expected) {
    if (actual_min < expected.min) return false;
    if (expected.has_max && (!actual_has_max || actual_max > expected.max)) return false;
    return true;
}

static void import_mismatch(ri_error *err, const ri_module *m, uint32_t i, const char *why) {
    const ri_import *imp = &m->imports[i];
    ri_error_set(err, RI_ERR_UNLINKABLE, "incompatible import type: import %u \"%.*s\" \"%.*s\" (%s): %s", i,
                 (int)imp->module_name.len, (const char *)ri_span_ptr(m, imp->module_name),
                 (int)imp->field_name.len, (const char *)ri_span_ptr(m, imp->field_name),
                 kind_name(imp->kind), why);
}

/* Checks every import against the module's declaration; type_ids are the store ids
 * of the module's types. */
static bool check_imports(ri_store *store, const ri_module *m, const uint32_t *type_ids,
                          const ri_extern *imports, ri_error *err) {
    for (uint32_t i = 0; i < m->nimports; i++) {
        const ri_import *imp = &m->imports[i];
        const ri_extern *ext = &imports[i];
        if (ext->kind != imp->kind) {
            import_mismatch(err, m, i, "got another kind of extern");
            return false;
        }
        switch (imp->kind) {
        case RI_EXTERN_FUNC: {
            const ri_func *f = ext->of.func;
            if (!f) { import_mismatch(err, m, i, "function is NULL"); return false; }
            if (f->instance && f->instance->store != store) {
                import_mismatch(err, m, i, "function of another store");
                return false;
            }
            if (imp->type_index >= m->ntypes || f->type_id != type_ids[imp->type_index]) {
                import_mismatch(err, m, i, "function type differs");
                return false;
            }
            break;
        }
        case RI_EXTERN_TABLE: {
            const ri_table *t = ext->of.table;
            if (!t) { import_mismatch(err, m, i, "table is NULL"); return false; }
            if (t->type.elem != imp->table.elem) {
                import_mismatch(err, m, i, "element type differs");
                return false;
            }
            if (!limits_match(t->size, t->type.limits.has_max, t->type.limits.max, imp->table.limits)) {
                import_mismatch(err, m, i, "table limits do not match");
                return false;
            }
            break;
        }
        case RI_EXTERN_MEMORY: {
            const ri_memory *mem = ext->of.memory;
            if (!mem) { import_mismatch(err, m, i, "memory is NULL"); return false; }
            if (mem->type.is64 != imp->memory.is64) {
                import_mismatch(err, m, i, mem->type.is64 ? "a 64-bit memory where a 32-bit one is expected"
                                                           : "a 32-bit memory where a 64-bit one is expected");
                return false;
            }
            if (!limits_match(mem->pages, mem->type.limits.has_max, mem->type.limits.max, imp->memory.limits)) {
                import_mismatch(err, m, i, "memory limits do not match");
                return false;
            }
            break;
        }
        case RI_EXTERN_GLOBAL: {
            const ri_global *g = ext->of.global;
            if (!g) { import_mismatch(err, m, i, "global is NULL"); return false; }
            if (g->type.type != imp->global.type || g->type.mutable_ != imp->global.mutable_) {
                import_mismatch(err, m, i, "global type differs");
                return false;
            }
            break;
        }
        case RI_EXTERN_TAG: {
            const ri_tag *t = ext->of.tag;
            if (!t) { import_mismatch(err, m, i, "tag is NULL"); return false; }
            if (imp->type_index >= m->ntypes || t->type_id != type_ids[imp->type_index]) {
                import_mismatch(err, m, i, "tag type differs");
                return false;
            }
            break;
        }
        default:
            import_mismatch(err, m, i, "unknown extern kind");
            return false;
        }
    }
    return true;
}

/* Allocates an instance and its index-space arrays; not yet linked to the store. */
static ri_instance *alloc_instance(const ri_module *m) {
    ri_instance *inst = calloc(1, sizeof *inst);
    if (!inst) return NULL;
    /* +1: never a zero-size allocation, so NULL always means failure */
    inst->funcs = calloc((size_t)m->nfuncs + 1, sizeof *inst->funcs);
    inst->tables = calloc((size_t)m->ntables + 1, sizeof *inst->tables);
    inst->memories = calloc((size_t)m->nmemories + 1, sizeof *inst->memories);
    inst->globals = calloc((size_t)m->nglobals + 1, sizeof *inst->globals);
    inst->tags = calloc((size_t)m->ntags + 1, sizeof *inst->tags);
    inst->type_ids = calloc((size_t)m->ntypes + 1, sizeof *inst->type_ids);
    inst->elem_dropped = calloc((size_t)m->nelems + 1, sizeof *inst->elem_dropped);
    inst->data_dropped = calloc((size_t)m->ndatas + 1, sizeof *inst->data_dropped);
    if (!inst->funcs || !inst->tables || !inst->memories || !inst->globals || !inst->type_ids ||
        !inst->elem_dropped || !inst->data_dropped || !inst->tags) {
        free(inst->tags);
        free(inst->funcs);
        free(inst->tables);
        free(inst->memories);
        free(inst->globals);
        free(inst->type_ids);
        free(inst->elem_dropped);
        free(inst->data_dropped);
        free(inst);
        return NULL;
    }
    return inst;
}

/* Allocates the module's own functions, tables, memories and globals. */
static bool alloc_definitions(ri_instance *inst, ri_error *err) {
    ri_store *store = inst->store;
    const ri_module *m = inst->module;
    for (uint32_t i = m->nfunc_imports; i < m->nfuncs; i++) {
        ri_func *f = calloc(1, sizeof *f);
        if (!f) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating function %u", i);
            return false;
        }
        uint32_t type_index = m->func_types[i];
        f->type = m->types[type_index];
        f->type_id = inst->type_ids[type_index];
        f->instance = inst;
        f->func_index = i;
        f->code = m->codes ? m->codes[i - m->nfunc_imports] : NULL;
        ri_store_link(store, &f->hdr, RI_OBJ_FUNC);
        inst->funcs[i] = f;
    }
    for (uint32_t i = m->ntag_imports; i < m->ntags; i++) {
        ri_tag *t = calloc(1, sizeof *t);
        if (!t) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating tag %u", i);
            return false;
        }
        t->type_id = inst->type_ids[m->tag_types[i]];
        t->nparams = m->types[m->tag_types[i]].nparams;
        ri_store_link(store, &t->hdr, RI_OBJ_TAG);
        inst->tags[i] = t;
    }
    for (uint32_t i = m->ntable_imports; i < m->ntables; i++) {
        inst->tables[i] = ri_table_new(store, m->tables[i], NULL, err);
        if (!inst->tables[i]) return false;
    }
    for (uint32_t i = m->nmemory_imports; i < m->nmemories; i++) {
        inst->memories[i] = ri_memory_new(store, m->memories[i], err);
        if (!inst->memories[i]) return false;
    }
    /* In order: an initialiser may read an earlier (imported) global. */
    for (uint32_t i = m->nglobal_imports; i < m->nglobals; i++) {
        ri_global *g = calloc(1, sizeof *g);
        if (!g) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating global %u", i);
            return false;
        }
        const ri_global_def *def = &m->globals[i - m->nglobal_imports];
        g->type = def->type;
        if (def->type.type == RI_V128) ri_eval_const_v128(inst, def->init, &g->value, &g->value_hi);
        else g->value = ri_eval_const(inst, def->init);
        ri_store_link(store, &g->hdr, RI_OBJ_GLOBAL);
        inst->globals[i] = g;
    }
    return true;
}

/* Active element segments as table.init + elem.drop; declarative ones are dropped.
 * Stops at the first out-of-bounds segment, leaving the earlier ones applied. */
static bool init_elems(ri_instance *inst, ri_error *err) {
    const ri_module *m = inst->module;
    for (uint32_t i = 0; i < m->nelems; i++) {
        const ri_elem_segment *seg = &m->elems[i];
        if (seg->mode == RI_SEGMENT_DECLARATIVE) {
            inst->elem_dropped[i] = true;
            continue;
        }
        if (seg->mode != RI_SEGMENT_ACTIVE) continue;
        ri_table *table = seg->table_index < m->ntables ? inst->tables[seg->table_index] : NULL;
        uint32_t offset = ri_slot_u32(ri_eval_const(inst, seg->offset));
        if (!table || (uint64_t)offset + seg->count > table->size) {
            ri_error_trap(err, RI_TRAP_TABLE_OOB);
            return false;
        }
        for (uint32_t k = 0; k < seg->count; k++) table->elems[(uint64_t)offset + k] = ri_elem_item(inst, seg, k);
        inst->elem_dropped[i] = true;
    }
    return true;
}

/* Active data segments as memory.init + data.drop, with the same failure rule. */
static bool init_datas(ri_instance *inst, ri_error *err) {
    const ri_module *m = inst->module;
    for (uint32_t i = 0; i < m->ndatas; i++) {
        const ri_data_segment *seg = &m->datas[i];
        if (seg->mode != RI_SEGMENT_ACTIVE) continue;
        ri_memory *mem = seg->memory_index < m->nmemories ? inst->memories[seg->memory_index] : NULL;
        ri_slot at = ri_eval_const(inst, seg->offset); /* i64 for a 64-bit memory */
        uint64_t offset = mem && mem->type.is64 ? at.i64 : ri_slot_u32(at);
        if (!mem || offset > mem->size || seg->init.len > mem->size - offset ||
            (uint64_t)seg->init.offset + seg->init.len > m->size) {
            ri_error_trap(err, RI_TRAP_MEMORY_OOB);
            return false;
        }
        if (seg->init.len) memcpy(mem->data + offset, ri_span_ptr(m, seg->init), seg->init.len);
        inst->data_dropped[i] = true;
    }
    return true;
}

/* fresh: the state is about to be replaced whole (a fork, a restore): no start function and
 * no active segments (their copies would be overwritten at once: for a large interpreter
 * they were most of a fork's time); the replacing state sets the dropped flags too. */
static ri_instance *instantiate(ri_store *store, const ri_module *module, const ri_extern *imports,
                                uint32_t nimports, bool fresh, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!store || !module) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_instantiate: %s is NULL", store ? "module" : "store");
        return NULL;
    }
    if (nimports != module->nimports) {
        ri_error_set(err, RI_ERR_UNLINKABLE, "incompatible import type: the module has %u import(s), %u given",
                     module->nimports, nimports);
        return NULL;
    }
    if (nimports && !imports) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_instantiate: imports is NULL");
        return NULL;
    }

    ri_instance *inst = alloc_instance(module);
    if (!inst) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating an instance");
        return NULL;
    }
    for (uint32_t i = 0; i < module->ntypes; i++) {
        inst->type_ids[i] = ri_store_intern_type(store, &module->types[i]);
        if (inst->type_ids[i] == UINT32_MAX) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory interning function types");
            goto fail_unlinked;
        }
    }
    if (!check_imports(store, module, inst->type_ids, imports, err)) goto fail_unlinked;

    /* From here on the store owns the instance (and what it allocates), even if a
     * later step fails: segments already applied may be visible through imports. */
    ri_module *owned = (ri_module *)module; /* only the atomic count changes */
    atomic_fetch_add_explicit(&owned->refs, 1u, memory_order_relaxed);
    inst->module = owned;
    inst->store = store;
    ri_store_link(store, &inst->hdr, RI_OBJ_INSTANCE);

    for (uint32_t i = 0, nf = 0, nt = 0, nm = 0, ng = 0, ntag = 0; i < module->nimports; i++) {
        switch (imports[i].kind) {
        case RI_EXTERN_TAG: inst->tags[ntag++] = imports[i].of.tag; break;
        case RI_EXTERN_FUNC: inst->funcs[nf++] = imports[i].of.func; break;
        case RI_EXTERN_TABLE: inst->tables[nt++] = imports[i].of.table; break;
        case RI_EXTERN_MEMORY: inst->memories[nm++] = imports[i].of.memory; break;
        case RI_EXTERN_GLOBAL: inst->globals[ng++] = imports[i].of.global; break;
        }
    }
    if (!alloc_definitions(inst, err)) return NULL;
    if (!fresh && !init_elems(inst, err)) return NULL;
    if (!fresh && !init_datas(inst, err)) return NULL;

    if (!fresh && module->has_start) {
        ri_func *start = module->start < module->nfuncs ? inst->funcs[module->start] : NULL;
        if (!start) {
            ri_error_set(err, RI_ERR_INVALID, "start function %u does not exist", module->start);
            return NULL;
        }
        /* The start function has type [] -> []; one slot is room enough. */
        ri_slot slots[1];
        slots[0].i64 = 0;
        if (ri_exec_call(store, start, slots, err) != RI_OK) return NULL;
    }
    err->code = RI_OK;
    err->trap = RI_TRAP_NONE;
    err->message[0] = '\0';
    return inst;

fail_unlinked:
    free(inst->tags);
    free(inst->funcs);
    free(inst->tables);
    free(inst->memories);
    free(inst->globals);
    free(inst->type_ids);
    free(inst->elem_dropped);
    free(inst->data_dropped);
    free(inst);
    return NULL;
}

ri_instance *ri_instantiate(ri_store *store, const ri_module *module, const ri_extern *imports,
                            uint32_t nimports, ri_error *err) {
    return instantiate(store, module, imports, nimports, false, err);
}

ri_instance *ri_instantiate_nostart(ri_store *store, const ri_module *module, const ri_extern *imports,
                                    uint32_t nimports, ri_error *err) {
    return instantiate(store, module, imports, nimports, true, err);
}

/* ---- exports --------------------------------------------------------------------- */

const ri_module *ri_instance_module(const ri_instance *inst) { return inst ? inst->module : NULL; }

/* ---- instance state by index ------------------------------------------------------ */

uint32_t ri_instance_func_count(const ri_instance *inst) { return inst ? inst->module->nfuncs : 0; }
ri_func *ri_instance_func(const ri_instance *inst, uint32_t index) {
    return index < ri_instance_func_count(inst) ? inst->funcs[index] : NULL;
}
bool ri_instance_func_index(const ri_instance *inst, const ri_func *func, uint32_t *index) {
    if (!inst || !func) return false;
    /* The instance's own functions know their index; imports (host functions or
     * functions of other instances) are found among the first nfunc_imports. */
    if (func->instance == inst && func->func_index < inst->module->nfuncs && inst->funcs[func->func_index] == func) {
        if (index) *index = func->func_index;
        return true;
    }
    for (uint32_t i = 0; i < inst->module->nfunc_imports; i++) {
        if (inst->funcs[i] == func) {
            if (index) *index = i;
            return true;
        }
    }
    return false;
}

uint32_t ri_instance_memory_count(const ri_instance *inst) { return inst ? inst->module->nmemories : 0; }
ri_memory *ri_instance_memory(const ri_instance *inst, uint32_t index) {
    return index < ri_instance_memory_count(inst) ? inst->memories[index] : NULL;
}
uint32_t ri_instance_table_count(const ri_instance *inst) { return inst ? inst->module->ntables : 0; }
ri_table *ri_instance_table(const ri_instance *inst, uint32_t index) {
    return index < ri_instance_table_count(inst) ? inst->tables[index] : NULL;
}
uint32_t ri_instance_global_count(const ri_instance *inst) { return inst ? inst->module->nglobals : 0; }
ri_global *ri_instance_global(const ri_instance *inst, uint32_t index) {
    return index < ri_instance_global_count(inst) ? inst->globals[index] : NULL;
}
uint32_t ri_instance_elem_count(const ri_instance *inst) { return inst ? inst->module->nelems : 0; }
uint32_t ri_instance_data_count(const ri_instance *inst) { return inst ? inst->module->ndatas : 0; }
bool ri_instance_elem_dropped(const ri_instance *inst, uint32_t index) {
    return index < ri_instance_elem_count(inst) && inst->elem_dropped[index];
}
bool ri_instance_data_dropped(const ri_instance *inst, uint32_t index) {
    return index < ri_instance_data_count(inst) && inst->data_dropped[index];
}
bool ri_instance_set_elem_dropped(ri_instance *inst, uint32_t index, bool dropped) {
    if (index >= ri_instance_elem_count(inst)) return false;
    inst->elem_dropped[index] = dropped;
    return true;
}
bool ri_instance_set_data_dropped(ri_instance *inst, uint32_t index, bool dropped) {
    if (index >= ri_instance_data_count(inst)) return false;
    inst->data_dropped[index] = dropped;
    return true;
}

bool ri_instance_export(const ri_instance *inst, const char *name, ri_extern *out) {
    return name && ri_instance_export_n(inst, name, strlen(name), out);
}

bool ri_instance_export_n(const ri_instance *inst, const char *name, size_t len, ri_extern *out) {
    if (!inst || !name || !out) return false;
    const ri_module *m = inst->module;
    for (uint32_t i = 0; i < m->nexports; i++) {
        const ri_export *ex = &m->exports[i];
        if (ex->name.len != len || (len && memcmp(ri_span_ptr(m, ex->name), name, len) != 0)) continue;
        out->kind = ex->kind;
        switch (ex->kind) {
        case RI_EXTERN_FUNC:
            if (ex->index >= m->nfuncs) return false;
            out->of.func = inst->funcs[ex->index];
            return true;
        case RI_EXTERN_TABLE:
            if (ex->index >= m->ntables) return false;
            out->of.table = inst->tables[ex->index];
            return true;
        case RI_EXTERN_MEMORY:
            if (ex->index >= m->nmemories) return false;
            out->of.memory = inst->memories[ex->index];
            return true;
        case RI_EXTERN_GLOBAL:
            if (ex->index >= m->nglobals) return false;
            out->of.global = inst->globals[ex->index];
            return true;
        case RI_EXTERN_TAG:
            if (ex->index >= m->ntags) return false;
            out->of.tag = inst->tags[ex->index];
            return true;
        }
        return false;
    }
    return false;
}
