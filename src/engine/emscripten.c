/*
 * Emscripten's JavaScript-side setjmp/longjmp as engine operations (ri/engine.h,
 * ri_func_new_emscripten). The interpreter runs them (interp.c, "Emscripten invoke and
 * throw"); this file makes the functions and finds what they need in an instance.
 */
#include <string.h>

#include "exec.h"
#include "runtime.h"

_Static_assert(_Alignof(ri_instance) > RI_FRAME_VIA_MASK, "frames keep their tag in an instance pointer's low bits");

ri_func *ri_func_new_emscripten(ri_store *store, ri_emscripten_op op, const ri_functype *type) {
    if (!store || !type) return NULL;
    if (op == RI_EMSCRIPTEN_THROW) {
        if (type->nparams || type->nresults) return NULL;
    } else if (op == RI_EMSCRIPTEN_INVOKE) {
        if (type->nparams < 1 || !type->params || type->params[0] != RI_I32 || type->nresults > 1) return NULL;
    } else {
        return NULL;
    }
    ri_func *func = ri_func_new_typed(store, type);
    if (!func) return NULL;
    func->emsc_op = (uint8_t)op;
    if (op == RI_EMSCRIPTEN_INVOKE) { /* the called type: the same without the index */
        ri_type target = func->type;
        target.nparams--;
        target.params++;
        func->emsc_target_type = ri_store_intern_type(store, &target);
        if (func->emsc_target_type == UINT32_MAX) return NULL; /* (the store frees func) */
    }
    return func;
}

/* The function exported as `name`, or NULL. */
static ri_func *export_func(const ri_instance *inst, const char *name) {
    const ri_module *m = inst->module;
    size_t n = strlen(name);
    for (uint32_t i = 0; i < m->nexports; i++) {
        const ri_export *e = &m->exports[i];
        if (e->kind == RI_EXTERN_FUNC && e->name.len == n && memcmp(m->bytes + e->name.offset, name, n) == 0)
            return inst->funcs[e->index];
    }
    return NULL;
}

/* The global a `() -> i32` function of inst reads with its whole body, `global.get G`
 * (how Emscripten's stackSave reads the stack pointer), or UINT32_MAX. */
static uint32_t getter_global(const ri_instance *inst, const ri_func *f) {
    const ri_module *m = inst->module;
    if (!f || f->instance != inst || f->func_index < m->nfunc_imports) return UINT32_MAX;
    if (f->type.nparams != 0 || f->type.nresults != 1 || f->type.results[0] != RI_I32) return UINT32_MAX;
    const ri_body *b = &m->bodies[f->func_index - m->nfunc_imports];
    const uint8_t *p = m->bytes + b->code.offset;
    uint32_t len = b->code.len, g = 0, shift = 0, k = 1;
    if (b->nlocals != 0 || len < 3 || p[0] != 0x23) return UINT32_MAX;
    for (; k < len && k <= 5; k++) { /* the index, unsigned LEB128 */
        g |= (uint32_t)(p[k] & 0x7f) << shift;
        shift += 7;
        if (!(p[k] & 0x80)) break;
    }
    if (k + 2 != len || p[k + 1] != 0x0b || g >= m->nglobals) return UINT32_MAX;
    const ri_global *gl = inst->globals[g];
    if (gl->type.type != RI_I32 || !gl->type.mutable_) return UINT32_MAX;
    return g;
}

const char *ri_emsc_resolve(ri_instance *inst) {
    if (inst->emsc.resolved) return NULL;
    ri_func *save = export_func(inst, "stackSave");
    if (!save) save = export_func(inst, "emscripten_stack_get_current");
    uint32_t g = getter_global(inst, save);
    if (g == UINT32_MAX)
        return "the module exports no stackSave (or emscripten_stack_get_current) that reads a mutable i32 global";
    ri_func *st = export_func(inst, "setThrew");
    if (!st || st->instance != inst || !st->code || st->type.nparams != 2 || st->type.nresults != 0 ||
        st->type.params[0] != RI_I32 || st->type.params[1] != RI_I32)
        return "the module exports no setThrew of type (i32, i32) -> ()";
    inst->emsc.sp_global = g;
    inst->emsc.set_threw = st;
    inst->emsc.resolved = true;
    return NULL;
}
