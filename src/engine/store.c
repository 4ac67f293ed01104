/*
 * The store: configuration, the list of owned objects, the function-type registry,
 * gas and interruption, host functions and the embedder's entry point ri_func_call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exn.h"
#include "runtime.h"
#include "simd.h"

/* ---- configuration and lifetime ----------------------------------------------- */

ri_store_config ri_store_config_default(void) {
    ri_store_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_call_depth = 10000;
    cfg.max_stack_slots = 1048576;
    cfg.max_memory_pages = 65536;
    cfg.max_table_elems = 10000000;
    cfg.canonicalize_nans = true;
    return cfg;
}

ri_store *ri_store_new(const ri_store_config *cfg) {
    ri_store *store = calloc(1, sizeof *store);
    if (!store) return NULL;
    ri_store_config defaults = ri_store_config_default();
    store->config = defaults;
    if (cfg) {
        /* Zero numeric fields mean "default"; the bool is taken as given, since
         * false is a meaningful choice there. */
        store->config = *cfg;
        if (!cfg->max_call_depth) store->config.max_call_depth = defaults.max_call_depth;
        if (!cfg->max_stack_slots) store->config.max_stack_slots = defaults.max_stack_slots;
        if (!cfg->max_memory_pages) store->config.max_memory_pages = defaults.max_memory_pages;
        if (!cfg->max_table_elems) store->config.max_table_elems = defaults.max_table_elems;
    }
    /* A memory can never exceed 4 GiB in WebAssembly 2.0, whatever the embedder asks. */
    if (store->config.max_memory_pages > 65536) store->config.max_memory_pages = 65536;
    store->gas = UINT64_MAX;
    atomic_init(&store->interrupt, 0u);
    return store;
}

static void free_object(ri_object *obj) {
    switch (obj->kind) {
    case RI_OBJ_INSTANCE: {
        ri_instance *inst = (ri_instance *)obj;
        free(inst->funcs);
        free(inst->tables);
        free(inst->memories);
        free(inst->globals);
        free(inst->tags);
        free(inst->type_ids);
        free(inst->elem_dropped);
        free(inst->data_dropped);
        if (inst->module) ri_module_free(inst->module);
        break;
    }
    case RI_OBJ_FUNC:
        free(((ri_func *)obj)->owned_types);
        break;
    case RI_OBJ_MEMORY:
        ri_memory_release_storage((ri_memory *)obj);
        break;
    case RI_OBJ_TABLE:
        free(((ri_table *)obj)->elems);
        break;
    case RI_OBJ_GLOBAL:
    case RI_OBJ_TAG:
        break;
    }
    free(obj);
}

void ri_store_free(ri_store *store) {
    if (!store) return;
    ri_object *obj = store->objects;
    while (obj) {
        ri_object *next = obj->next;
        free_object(obj);
        obj = next;
    }
    ri_type_registry *reg = &store->types;
    for (uint32_t i = 0; i < reg->count; i++) {
        free((void *)reg->types[i].params); /* params heads the one owned buffer */
        free(reg->valtypes[i]);
    }
    free(reg->types);
    free(reg->valtypes);
    free(reg->buckets);
    if (store->exec) ri_exec_free(store->exec);
    free(store);
}

void ri_store_link(ri_store *store, ri_object *obj, ri_object_kind kind) {
    obj->kind = kind;
    obj->next = store->objects;
    store->objects = obj;
}

/* ---- the type registry ----------------------------------------------------------- */

static uint32_t type_hash(const ri_type *t) {
    /* FNV-1a over the shape and the valtype bytes */
    uint32_t h = 2166136261u;
    h = (h ^ t->nparams) * 16777619u;
    h = (h ^ t->nresults) * 16777619u;
    for (uint32_t i = 0; i < t->nparams; i++) h = (h ^ t->params[i]) * 16777619u;
    h = (h ^ 0xFFu) * 16777619u;
    for (uint32_t i = 0; i < t->nresults; i++) h = (h ^ t->results[i]) * 16777619u;
    return h;
}

static bool type_equal(const ri_type *a, const ri_type *b) {
    return a->nparams == b->nparams && a->nresults == b->nresults &&
           (a->nparams == 0 || memcmp(a->params, b->params, a->nparams) == 0) &&
           (a->nresults == 0 || memcmp(a->results, b->results, a->nresults) == 0);
}

/* Rebuilds the hash index with nbuckets buckets (a power of two > count). */
static bool rehash(ri_type_registry *reg, uint32_t nbuckets) {
    uint32_t *buckets = calloc(nbuckets, sizeof *buckets);
    if (!buckets) return false;
    uint32_t mask = nbuckets - 1;
    for (uint32_t id = 0; id < reg->count; id++) {
        uint32_t b = type_hash(&reg->types[id]) & mask;
        while (buckets[b]) b = (b + 1) & mask;
        buckets[b] = id + 1;
    }
    free(reg->buckets);
    reg->buckets = buckets;
    reg->nbuckets = nbuckets;
    return true;
}

uint32_t ri_store_intern_type(ri_store *store, const ri_type *type) {
    ri_type_registry *reg = &store->types;
    uint32_t hash = type_hash(type);
    if (reg->nbuckets) {
        uint32_t mask = reg->nbuckets - 1;
        for (uint32_t b = hash & mask; reg->buckets[b]; b = (b + 1) & mask) {
            uint32_t id = reg->buckets[b] - 1;
            if (type_equal(&reg->types[id], type)) return id;
        }
    }

    /* New type. Keep the index at most half full; ids stay below UINT32_MAX - 1 so
     * that UINT32_MAX (failure) and id + 1 (bucket) never wrap. */
    if (reg->count >= (UINT32_MAX >> 2)) return UINT32_MAX;
    if ((uint64_t)(reg->count + 1) * 2 > reg->nbuckets) {
        uint32_t n = reg->nbuckets ? reg->nbuckets * 2 : 64;
        if (!rehash(reg, n)) return UINT32_MAX;
    }
    if (reg->count == reg->cap) {
        uint32_t cap = reg->cap ? reg->cap * 2 : 16;
        ri_type *types = realloc(reg->types, (size_t)cap * sizeof *types);
        if (!types) return UINT32_MAX;
        reg->types = types;
        ri_valtype **wide = realloc(reg->valtypes, (size_t)cap * sizeof *wide);
        if (!wide) return UINT32_MAX;
        reg->valtypes = wide;
        reg->cap = cap;
    }

    uint64_t n = (uint64_t)type->nparams + type->nresults;
    if (n > SIZE_MAX / sizeof(ri_valtype) - 1) return UINT32_MAX;
    uint8_t *bytes = malloc((size_t)n + 1); /* +1: never a zero-size allocation */
    ri_valtype *wide = malloc(((size_t)n + 1) * sizeof *wide);
    if (!bytes || !wide) {
        free(bytes);
        free(wide);
        return UINT32_MAX;
    }
    if (type->nparams) memcpy(bytes, type->params, type->nparams);
    if (type->nresults) memcpy(bytes + type->nparams, type->results, type->nresults);
    for (uint64_t i = 0; i < n; i++) wide[i] = (ri_valtype)bytes[i];

    uint32_t id = reg->count++;
    reg->types[id] = (ri_type){
        .nparams = type->nparams,
        .nresults = type->nresults,
        .params = bytes,
        .results = bytes + type->nparams,
    };
    reg->valtypes[id] = wide;
    uint32_t mask = reg->nbuckets - 1;
    uint32_t b = hash & mask;
    while (reg->buckets[b]) b = (b + 1) & mask;
    reg->buckets[b] = id + 1;
    return id;
}

/* ---- gas and interruption ------------------------------------------------------- */

void ri_store_set_gas(ri_store *store, uint64_t gas) {
    if (store) store->gas = gas;
}

uint64_t ri_store_gas(const ri_store *store) { return store ? store->gas : 0; }

void ri_store_interrupt(ri_store *store) {
    if (store) atomic_store_explicit(&store->interrupt, 1u, memory_order_relaxed);
}

void ri_store_clear_interrupt(ri_store *store) {
    if (store) atomic_store_explicit(&store->interrupt, 0u, memory_order_relaxed);
}

/* ---- host functions --------------------------------------------------------------- */

static bool valid_valtype(ri_valtype t) {
    return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64 || t == RI_V128 ||
           t == RI_FUNCREF || t == RI_EXTERNREF;
}

ri_func *ri_func_new_host(ri_store *store, const ri_functype *type, ri_host_fn fn, void *user) {
    if (!fn) return NULL;
    ri_func *func = ri_func_new_typed(store, type);
    if (!func) return NULL;
    func->host = fn;
    func->host_user = user;
    return func;
}

ri_func *ri_func_new_typed(ri_store *store, const ri_functype *type) {
    if (!store || !type) return NULL;
    if ((type->nparams && !type->params) || (type->nresults && !type->results)) return NULL;
    for (uint32_t i = 0; i < type->nparams; i++)
        if (!valid_valtype(type->params[i])) return NULL;
    for (uint32_t i = 0; i < type->nresults; i++)
        if (!valid_valtype(type->results[i])) return NULL;

    /* One buffer: the public-enum copy first (for ri_func_type; malloc aligns it),
     * then the valtype bytes that func->type points at. */
    uint64_t n = (uint64_t)type->nparams + type->nresults;
    if (n >= SIZE_MAX / (sizeof(ri_valtype) + 1)) return NULL;
    ri_func *func = calloc(1, sizeof *func);
    uint8_t *buffer = malloc((size_t)n * (sizeof(ri_valtype) + 1) + 1);
    if (!func || !buffer) {
        free(func);
        free(buffer);
        return NULL;
    }
    ri_valtype *wide = (ri_valtype *)(void *)buffer;
    uint8_t *bytes = buffer + (size_t)n * sizeof(ri_valtype);
    for (uint32_t i = 0; i < type->nparams; i++) wide[i] = type->params[i];
    for (uint32_t i = 0; i < type->nresults; i++) wide[type->nparams + i] = type->results[i];
    for (uint64_t i = 0; i < n; i++) bytes[i] = (uint8_t)wide[i];
    func->owned_types = buffer;
    func->type = (ri_type){
        .nparams = type->nparams,
        .nresults = type->nresults,
        .params = bytes,
        .results = bytes + type->nparams,
    };
    func->type_id = ri_store_intern_type(store, &func->type);
    if (func->type_id == UINT32_MAX) {
        free(buffer);
        free(func);
        return NULL;
    }
    ri_store_link(store, &func->hdr, RI_OBJ_FUNC);
    return func;
}

ri_functype ri_func_type(const ri_func *func) {
    ri_functype t;
    memset(&t, 0, sizeof t);
    if (!func) return t;
    t.nparams = func->type.nparams;
    t.nresults = func->type.nresults;
    const ri_valtype *wide = NULL;
    if (func->owned_types) {
        wide = (const ri_valtype *)(const void *)func->owned_types; /* host: see ri_func_new_host */
    } else if (func->instance && func->type_id < func->instance->store->types.count) {
        wide = func->instance->store->types.valtypes[func->type_id]; /* lives as long as the func */
    }
    if (wide) {
        t.params = wide;
        t.results = wide + t.nparams;
    }
    return t;
}

int ri_host_fail(ri_host_call *call, const char *fmt, ...) {
    if (!call) return 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call->message, sizeof call->message, fmt, ap);
    va_end(ap);
    call->failed = true;
    return 1;
}

ri_store *ri_host_call_store(ri_host_call *call) { return call ? call->store : NULL; }

ri_instance *ri_host_call_instance(ri_host_call *call) { return call ? call->instance : NULL; }

ri_memory *ri_host_call_memory(ri_host_call *call) {
    if (!call || !call->instance) return NULL;
    const ri_instance *inst = call->instance;
    if (!inst->module || inst->module->nmemories == 0) return NULL;
    return inst->memories[0];
}

/* ---- calling from the embedder -------------------------------------------------- */

static uint32_t slots_of(ri_valtype t) { return t == RI_V128 ? 2u : 1u; }

/* Writes v into one slot (two for v128); i32/f32 zero-extended (see ri_slot). */
static uint32_t val_to_slots(const ri_val *v, ri_slot *s) {
    switch (v->type) {
    case RI_I32: s->i64 = (uint32_t)v->of.i32; return 1;
    case RI_I64: s->i64 = (uint64_t)v->of.i64; return 1;
    case RI_F32: s->i64 = v->of.f32_bits; return 1;
    case RI_F64: s->i64 = v->of.f64_bits; return 1;
    case RI_V128: /* the slots hold little-endian values (simd.h), on any host */
        s[0].i64 = ri_v128_u64(v->of.v128);
        s[1].i64 = ri_v128_u64(v->of.v128 + 8);
        return 2;
    case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF: s->i64 = 0; s->ref = v->of.ref; return 1;
    }
    s->i64 = 0;
    return 1;
}

static uint32_t slots_to_val(ri_valtype t, const ri_slot *s, ri_val *v) {
    memset(v, 0, sizeof *v);
    v->type = t;
    switch (t) {
    case RI_I32: v->of.i32 = (int32_t)ri_slot_u32(*s); return 1;
    case RI_I64: v->of.i64 = (int64_t)s->i64; return 1;
    case RI_F32: v->of.f32_bits = (uint32_t)s->i64; return 1;
    case RI_F64: v->of.f64_bits = s->i64; return 1;
    case RI_V128: ri_v128_from_u64s(v->of.v128, s[0].i64, s[1].i64); return 2;
    case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF: v->of.ref = s->ref; return 1;
    }
    return 1;
}

ri_errcode ri_func_call(ri_store *store, ri_func *func, const ri_val *args, uint32_t nargs,
                        ri_val *results, uint32_t nresults, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!store || !func) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: %s is NULL", store ? "func" : "store");
        return err->code;
    }
    if (func->instance && func->instance->store != store) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: the function belongs to another store");
        return err->code;
    }
    const ri_type *type = &func->type;
    if (nargs != type->nparams) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: %u argument(s) given, the function takes %u",
                     nargs, type->nparams);
        return err->code;
    }
    if (nresults != type->nresults) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: room for %u result(s), the function returns %u",
                     nresults, type->nresults);
        return err->code;
    }
    if ((nargs && !args) || (nresults && !results)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: %s is NULL", nargs && !args ? "args" : "results");
        return err->code;
    }
    uint64_t param_slots = 0, result_slots = 0;
    for (uint32_t i = 0; i < nargs; i++) {
        ri_valtype want = (ri_valtype)type->params[i];
        if (args[i].type != want) {
            ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: argument %u is %s, the function expects %s",
                         i, ri_valtype_name(args[i].type), ri_valtype_name(want));
            return err->code;
        }
        /* An exnref from the embedder must be one of the running call's exceptions (a host
         * function calling back in); a new call frees the last call's (exn.h). */
        if (want == RI_EXNREF && args[i].of.ref &&
            !(store->exec && store->exec->nesting > 0 && ri_exn_listed(store->exec, args[i].of.ref))) {
            ri_error_set(err, RI_ERR_ARGUMENT, "ri_func_call: argument %u is an exnref that is not an exception of "
                         "the call running in this store (an exnref does not outlive its call)", i);
            return err->code;
        }
        param_slots += slots_of(want);
    }
    for (uint32_t i = 0; i < nresults; i++) result_slots += slots_of((ri_valtype)type->results[i]);

    /* One array holds the arguments in and the results out. */
    uint64_t nslots = param_slots > result_slots ? param_slots : result_slots;
    if (nslots == 0) nslots = 1;
    ri_slot local[16];
    ri_slot *slots = local;
    if (nslots > sizeof local / sizeof local[0]) {
        if (nslots > SIZE_MAX / sizeof(ri_slot)) {
            ri_error_set(err, RI_ERR_NOMEM, "ri_func_call: too many values");
            return err->code;
        }
        slots = calloc((size_t)nslots, sizeof *slots);
        if (!slots) {
            ri_error_set(err, RI_ERR_NOMEM, "ri_func_call: out of memory for the arguments");
            return err->code;
        }
    } else {
        memset(local, 0, sizeof local);
    }
    uint64_t at = 0;
    for (uint32_t i = 0; i < nargs; i++) at += val_to_slots(&args[i], &slots[at]);

    ri_errcode rc = ri_exec_call(store, func, slots, err);
    if (rc == RI_OK) {
        at = 0;
        for (uint32_t i = 0; i < nresults; i++)
            at += slots_to_val((ri_valtype)type->results[i], &slots[at], &results[i]);
        err->code = RI_OK;
        err->trap = RI_TRAP_NONE;
        err->message[0] = '\0';
    }
    if (slots != local) free(slots);
    return rc;
}
