/*
 * Suspended calls (ri/engine.h "suspension"; docs/ARCHITECTURE.md "Suspension"):
 * the mode, host yields, resume, and the description of a suspended call in
 * WebAssembly terms and its rebuilding in another store.
 *
 * The interpreter stops only at stop points (code.h), and there every operand-stack
 * entry is in its own slot: a frame is (function, stop point, locals, the operand
 * stack's first `height` slots). The stop point is named by its WebAssembly byte
 * offset and its kind; the value types of the operands come from the validator run up
 * to that offset (ri_validate_stack_at), the locals' from the module. Nothing of the
 * internal code (positions, slots, pointers) is in a description, so it is as
 * portable as the module.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_info.h"
#include "exec.h"
#include "exn.h"

_Static_assert(RI_SUSP_VIA_INVOKE == RI_FRAME_VIA_INVOKE && RI_SUSP_VIA_SETTHREW == RI_FRAME_VIA_SETTHREW,
               "a description's via is the frame's tag");
#include "runtime.h"
#include "simd.h"

/* ---- mode, reasons, yields ---------------------------------------------------------- */

const char *ri_suspend_reason_name(ri_suspend_reason reason) {
    switch (reason) {
    case RI_SUSPENDED_GAS: return "gas";
    case RI_SUSPENDED_INTERRUPT: return "interrupt";
    case RI_SUSPENDED_YIELD: return "yield";
    case RI_SUSPENDED_NONE: break;
    }
    return "none";
}

bool ri_exec_suspend_wanted(ri_exec *exec, ri_trap trap) {
    uint32_t want = trap == RI_TRAP_OUT_OF_GAS ? RI_SUSPEND_ON_GAS : trap == RI_TRAP_INTERRUPTED ? RI_SUSPEND_ON_INTERRUPT : 0;
    /* (Only called for the outermost run: a nested one has C frames, the host function's,
     * below it.) */
    if (!(exec->suspend_mask & want)) return false;
    exec->susp.reason = trap == RI_TRAP_OUT_OF_GAS ? RI_SUSPENDED_GAS : RI_SUSPENDED_INTERRUPT;
    exec->trap_has_location = false;
    return true;
}

void ri_store_set_suspend_mode(ri_store *store, uint32_t mask) {
    if (!store) return;
    ri_exec *exec = ri_exec_get(store);
    if (exec) exec->suspend_mask = mask & RI_SUSPEND_ALL;
}

uint32_t ri_store_suspend_mode(const ri_store *store) { return store && store->exec ? store->exec->suspend_mask : 0; }

int ri_host_yield(ri_host_call *call) {
    if (call) call->yielded = true;
    return RI_HOST_YIELD;
}

bool ri_host_call_yielded(const ri_host_call *call) { return call && call->yielded; }

int ri_host_pause_before(ri_host_call *call) {
    if (call) call->pause_before = true;
    return RI_HOST_PAUSE_BEFORE;
}

bool ri_store_suspended(const ri_store *store) { return store && store->exec && store->exec->susp.active; }

ri_suspend_reason ri_store_suspend_reason(const ri_store *store) {
    return ri_store_suspended(store) ? store->exec->susp.reason : RI_SUSPENDED_NONE;
}

ri_func *ri_store_suspended_func(const ri_store *store) {
    return ri_store_suspended(store) ? store->exec->susp.func : NULL;
}

void ri_store_abandon(ri_store *store) {
    if (store) ri_exec_abandon(store->exec);
}

/* ---- resume ----------------------------------------------------------------------------- */

static uint32_t slots_of(uint8_t t) { return t == RI_V128 ? 2u : 1u; }

static void slots_to_val(uint8_t type, const ri_slot *s, ri_val *v) {
    memset(v, 0, sizeof *v);
    v->type = (ri_valtype)type;
    switch (type) {
    case RI_I32: v->of.i32 = (int32_t)(uint32_t)s->i64; break;
    case RI_I64: v->of.i64 = (int64_t)s->i64; break;
    case RI_F32: v->of.f32_bits = (uint32_t)s->i64; break;
    case RI_F64: v->of.f64_bits = s->i64; break;
    case RI_V128: ri_v128_from_u64s(v->of.v128, s[0].i64, s[1].i64); break; /* (simd.h) */
    default: v->of.ref = s->ref; break;
    }
}

ri_errcode ri_store_resume(ri_store *store, uint64_t gas, ri_val *results, uint32_t nresults, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!ri_store_suspended(store)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_store_resume: no suspended call");
        return RI_ERR_ARGUMENT;
    }
    const ri_type *t = &store->exec->susp.func->type;
    if (nresults != t->nresults || (nresults && !results)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_store_resume: room for %u result(s), the function returns %u", nresults,
                     t->nresults);
        return RI_ERR_ARGUMENT;
    }
    uint64_t nslots = 1;
    for (uint32_t i = 0; i < nresults; i++) nslots += slots_of(t->results[i]);
    ri_slot local[16];
    ri_slot *slots = nslots <= 16 ? local : calloc((size_t)nslots, sizeof *slots);
    if (!slots) {
        ri_error_set(err, RI_ERR_NOMEM, "ri_store_resume: out of memory for the results");
        return RI_ERR_NOMEM;
    }
    store->gas = store->gas > UINT64_MAX - gas ? UINT64_MAX : store->gas + gas; /* the unspent rest carries over */
    ri_errcode rc = ri_exec_resume(store, slots, err);
    if (rc == RI_OK) {
        uint64_t at = 0;
        for (uint32_t i = 0; i < nresults; i++) {
            slots_to_val(t->results[i], &slots[at], &results[i]);
            at += slots_of(t->results[i]);
        }
        err->code = RI_OK;
        err->trap = RI_TRAP_NONE;
        err->message[0] = '\0';
    }
    if (slots != local) free(slots);
    return rc;
}

/* ---- shared by describe and rebuild ------------------------------------------------------- */

/* The operand types at a stop point, computed once per (function, offset). */
typedef struct probe {
    uint32_t func_index, offset, n;
    uint8_t *types;
} probe;

typedef struct probes {
    probe *items;
    uint32_t count, cap;
} probes;

static void probes_free(probes *p) {
    for (uint32_t i = 0; i < p->count; i++) free(p->items[i].types);
    free(p->items);
}

static const probe *probe_at(probes *p, const ri_module *m, uint32_t func_index, uint32_t offset, ri_error *err) {
    for (uint32_t i = 0; i < p->count; i++)
        if (p->items[i].func_index == func_index && p->items[i].offset == offset) return &p->items[i];
    if (p->count == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 8;
        probe *items = realloc(p->items, (size_t)cap * sizeof *items);
        if (!items) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory");
            return NULL;
        }
        p->items = items;
        p->cap = cap;
    }
    probe *pr = &p->items[p->count];
    pr->func_index = func_index;
    pr->offset = offset;
    if (ri_validate_stack_at(m, func_index - m->nfunc_imports, offset, &pr->types, &pr->n, err) != RI_OK) return NULL;
    p->count++;
    /* per slot, as the frames hold them: a v128 is two entries (its low, then its high half) */
    uint32_t wide = 0;
    for (uint32_t i = 0; i < pr->n; i++) wide += pr->types[i] == RI_V128;
    if (wide) {
        uint8_t *slots = malloc((size_t)pr->n + wide);
        if (!slots) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory");
            return NULL;
        }
        uint32_t k = 0;
        for (uint32_t i = 0; i < pr->n; i++) {
            slots[k++] = pr->types[i];
            if (pr->types[i] == RI_V128) slots[k++] = RI_V128;
        }
        free(pr->types);
        pr->types = slots;
        pr->n = k;
    }
    return pr;
}

/* The type of local slot k of function `code` (parameters first; a v128 local has two
 * slots, both of type v128). */
static uint8_t local_type(const ri_module *m, const ri_code *code, uint32_t k) {
    const ri_type *t = &m->types[m->func_types[code->func_index]];
    const ri_body *b = &m->bodies[code->func_index - m->nfunc_imports];
    if ((uint64_t)t->nparams + b->nlocals == code->nlocals) { /* no v128 local: one slot each */
        if (k < t->nparams) return t->params[k];
        return b->local_types[k - t->nparams];
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < t->nparams + b->nlocals; i++) {
        uint8_t ty = i < t->nparams ? t->params[i] : b->local_types[i - t->nparams];
        at += ty == RI_V128 ? 2u : 1u;
        if (k < at) return ty;
    }
    return 0;
}

/* The first point of `code` with this offset and kind, or NULL. */
static const ri_code_point *find_point(const ri_code *code, uint32_t offset, uint32_t kind) {
    for (uint32_t i = 0; i < code->npoints; i++)
        if (code->points[i].wasm_offset == offset && code->points[i].kind == kind) return &code->points[i];
    return NULL;
}

/* A call instruction at a CALL point, decoded. */
typedef struct call_site {
    uint32_t size;      /* words: the return position is pos + size */
    uint32_t base;      /* the callee's frame, as a slot of the caller's frame */
    int kind;           /* 0: a function of this module, 1: an import, 2: indirect */
    uint32_t target;    /* kind 0: body index; 1: function index; 2: type index */
} call_site;

static bool call_at(const ri_code *code, uint32_t pos, call_site *cs) {
    const int32_t *d = ri_interp_dispatch_table();
    if (pos >= code->nwords) return false;
    int32_t word = (int32_t)code->words[pos];
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) { /* a slow path: only describing a suspension */
        uint32_t kind = ri_code_call_kind(op);
        /* (a tail call never has a caller waiting in it: its callee took its frame) */
        if (kind == RI_CALLK_NONE || kind == RI_CALLK_TAIL || d[op] != word) continue;
        uint32_t size = ri_code_words(op);
        if ((uint64_t)pos + size > code->nwords) return false;
        cs->size = size;
        cs->kind = kind == RI_CALLK_IMPORT ? 1 : kind == RI_CALLK_INDIRECT ? 2 : 0;
        cs->target = code->words[pos + 1];
        cs->base = code->words[pos + (cs->kind == 2 ? 4 : 2)];
        return true;
    }
    return false;
}

static const char *point_name(uint32_t kind) {
    switch (kind) {
    case RI_POINT_ENTRY: return "entry";
    case RI_POINT_GAS: return "gas";
    case RI_POINT_LOOP: return "loop";
    case RI_POINT_CALL: return "call";
    case RI_POINT_BULK: return "bulk";
    default: return "unknown";
    }
}

/* ---- describe ------------------------------------------------------------------------------ */

void ri_suspension_free(ri_suspension *s) {
    if (!s) return;
    for (uint32_t i = 0; s->frames && i < s->nframes; i++) {
        free(s->frames[i].locals);
        free(s->frames[i].stack);
        for (uint32_t k = 0; s->frames[i].exns && k < s->frames[i].nexns; k++) free(s->frames[i].exns[k].vals);
        free(s->frames[i].exns);
    }
    free(s->frames);
    for (uint32_t k = 0; s->exnrefs && k < s->nexnrefs; k++) free(s->exnrefs[k].vals);
    free(s->exnrefs);
    memset(s, 0, sizeof *s);
}

/* What a description is being made of and into (exnref values add to out->exnrefs). */
typedef struct describer {
    const ri_instance *inst;
    ri_suspension *out;
    ri_error *err;
    const ri_exn **seen;     /* out->exnrefs[i] describes seen[i] */
    const ri_exn **work;     /* scratch of describe_exnref */
    uint32_t *work_at;
    uint32_t cap;            /* of seen, work, work_at */
} describer;

static bool describe_value(describer *d, uint8_t type, ri_slot slot, ri_susp_value *out);

static bool describe_nomem(describer *d) {
    ri_error_set(d->err, RI_ERR_NOMEM, "out of memory describing the suspended call");
    return false;
}

/* The tag index of an exception's tag in the instance, or ntags. */
static uint32_t tag_index_of(const ri_instance *inst, const ri_exn *e) {
    uint32_t tag = 0;
    while (tag < inst->module->ntags && inst->tags[tag] != e->tag) tag++;
    return tag;
}

/* Describes an exception object's tag and values into x (its exnref values being described
 * already). */
static bool describe_exn_object(describer *d, const ri_exn *e, ri_susp_exn *x) {
    const ri_module *m = d->inst->module;
    uint32_t tag = tag_index_of(d->inst, e);
    if (tag == m->ntags) {
        ri_error_set(d->err, RI_ERR_ARGUMENT, "a caught exception of a tag the instance does not know cannot be described");
        return false;
    }
    x->tag_index = tag;
    x->nvals = e->n;
    x->vals = calloc(e->n ? e->n : 1, sizeof *x->vals);
    if (!x->vals) return describe_nomem(d);
    const ri_type *t = &m->types[m->tag_types[tag]];
    for (uint32_t v = 0; v < e->n; v++)
        if (!describe_value(d, t->params[v], e->vals[v], &x->vals[v])) return false;
    return true;
}

static int64_t seen_index(const describer *d, const ri_exn *e) {
    for (uint32_t i = 0; i < d->out->nexnrefs; i++)
        if (d->seen[i] == e) return i;
    return -1;
}

/* The index in out->exnrefs of exception e, described there (after the exceptions its values
 * refer to, depth first without recursion: chains of exceptions may be long). */
static bool describe_exnref(describer *d, const ri_exn *e, uint64_t *index) {
    int64_t at = seen_index(d, e);
    if (at >= 0) {
        *index = (uint64_t)at;
        return true;
    }
    uint32_t top = 0;
    /* every object on the work stack is a distinct listed one, not yet seen: the list's
     * length bounds it (and the table) */
    const ri_exec *exec = d->inst->store->exec;
    uint32_t bound = exec ? exec->nexns : 0;
    if (d->cap < bound) {
        const ri_exn **seen = realloc(d->seen, (size_t)bound * sizeof *seen);
        if (seen) d->seen = seen;
        const ri_exn **work = realloc(d->work, (size_t)bound * sizeof *work);
        if (work) d->work = work;
        uint32_t *work_at = realloc(d->work_at, (size_t)bound * sizeof *work_at);
        if (work_at) d->work_at = work_at;
        ri_susp_exn *x = realloc(d->out->exnrefs, (size_t)bound * sizeof *x);
        if (x) d->out->exnrefs = x;
        if (!seen || !work || !work_at || !x) return describe_nomem(d);
        d->cap = bound;
    }
    if (!ri_exn_listed(exec, e) || d->out->nexnrefs >= d->cap) {
        ri_error_set(d->err, RI_ERR_ARGUMENT, "internal error: an exnref that is no exception of the call");
        return false;
    }
    d->work[top] = e;
    d->work_at[top++] = 0;
    while (top) {
        const ri_exn *w = d->work[top - 1];
        uint32_t tag = tag_index_of(d->inst, w);
        if (tag == d->inst->module->ntags) {
            ri_error_set(d->err, RI_ERR_ARGUMENT, "an exnref to an exception of a tag the instance does not know cannot be described");
            return false;
        }
        const ri_type *t = &d->inst->module->types[d->inst->module->tag_types[tag]];
        const ri_exn *child = NULL;
        while (d->work_at[top - 1] < w->n && !child) {
            uint32_t v = d->work_at[top - 1]++;
            const ri_exn *c = w->vals[v].ref;
            if (t->params[v] == RI_EXNREF && c && seen_index(d, c) < 0) {
                bool on_stack = false; /* (impossible: an object's values are older than it) */
                for (uint32_t k = 0; k < top; k++) on_stack |= d->work[k] == c;
                if (on_stack || !ri_exn_listed(exec, c) || top >= d->cap) {
                    ri_error_set(d->err, RI_ERR_ARGUMENT, "internal error: exceptions that hold each other");
                    return false;
                }
                child = c;
            }
        }
        if (child) {
            d->work[top] = child;
            d->work_at[top++] = 0;
            continue;
        }
        top--;
        uint32_t i = d->out->nexnrefs;
        ri_susp_exn *x = &d->out->exnrefs[i];
        memset(x, 0, sizeof *x);
        d->out->nexnrefs++;
        d->seen[i] = w;
        if (!describe_exn_object(d, w, x)) return false;
    }
    *index = (uint64_t)seen_index(d, e);
    return true;
}

static bool describe_value(describer *d, uint8_t type, ri_slot slot, ri_susp_value *out) {
    out->type = (ri_valtype)type;
    switch (type) {
    case RI_I32: case RI_F32: out->bits = (uint32_t)slot.i64; return true;
    case RI_I64: case RI_F64: out->bits = slot.i64; return true;
    case RI_V128: out->bits = slot.i64; return true; /* one half (simd.h) */
    case RI_FUNCREF: {
        if (!slot.ref) {
            out->bits = RI_SUSP_NULL_REF;
            return true;
        }
        uint32_t index;
        if (!ri_instance_func_index(d->inst, slot.ref, &index)) {
            ri_error_set(d->err, RI_ERR_ARGUMENT, "a funcref on the stack is not in the instance's function space");
            return false;
        }
        out->bits = index;
        return true;
    }
    case RI_EXTERNREF:
        if (!slot.ref) {
            out->bits = RI_SUSP_NULL_REF;
            return true;
        }
        ri_error_set(d->err, RI_ERR_ARGUMENT, "a non-null externref on the stack cannot be described");
        return false;
    case RI_EXNREF:
        if (!slot.ref) {
            out->bits = RI_SUSP_NULL_REF;
            return true;
        }
        return describe_exnref(d, slot.ref, &out->bits);
    default:
        ri_error_set(d->err, RI_ERR_ARGUMENT, "a value of type 0x%02x on the stack cannot be described", type);
        return false;
    }
}

/* The exceptions kept by the catch clauses that code position pos of a frame lies in. */
static bool describe_exns(describer *d, const ri_code *code, const ri_slot *fp, uint32_t pos, ri_susp_frame *sf) {
    for (uint32_t c = 0; c < code->ncatches; c++) {
        const ri_code_catch *k = &code->catches[c];
        if (k->table || k->exn_slot == RI_NO_SLOT || pos < k->target || pos >= k->end) continue;
        const ri_exn *e = fp[k->exn_slot].ref;
        if (!e) continue;
        ri_susp_exn *grown = realloc(sf->exns, (size_t)(sf->nexns + 1) * sizeof *grown);
        if (!grown) return describe_nomem(d);
        sf->exns = grown;
        ri_susp_exn *x = &sf->exns[sf->nexns++];
        memset(x, 0, sizeof *x);
        x->slot = k->exn_slot - code->exn_base;
        if (!describe_exn_object(d, e, x)) return false;
    }
    return true;
}

bool ri_store_describe_suspended(ri_store *store, const ri_instance *inst, ri_suspension *out, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (out) memset(out, 0, sizeof *out);
    if (!store || !inst || !out) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_store_describe_suspended: NULL argument");
        return false;
    }
    if (!ri_store_suspended(store)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "no suspended call to describe");
        return false;
    }
    const ri_exec *exec = store->exec;
    const ri_module *m = inst->module;
    size_t n = (size_t)(exec->frame_top - exec->frames) - exec->susp.marker;
    if (n == 0 || n > UINT32_MAX) {
        ri_error_set(err, RI_ERR_ARGUMENT, "internal error: the suspended call has no frames");
        return false;
    }
    out->frames = calloc(n, sizeof *out->frames);
    if (!out->frames) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory describing the suspended call");
        return false;
    }
    out->nframes = (uint32_t)n;
    out->reason = exec->susp.reason;
    probes pr = {0};
    describer dc = {inst, out, err, NULL, NULL, NULL, 0};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const ri_code *code;
        const ri_instance *fi;
        const ri_slot *fp;
        const ri_code_point *pt;
        uint32_t nstack;
        bool top = i + 1 == n;
        if (!top) {
            const ri_frame *f = &exec->frames[exec->susp.marker + 1 + i];
            code = f->code;
            fi = ri_frame_instance(f);
            fp = f->fp.ptr;
            const ri_slot *next = i + 2 == n ? exec->stack + exec->susp.fp : exec->frames[exec->susp.marker + 2 + i].fp.ptr;
            /* How it entered its callee (exec.h); setThrew's frame is above the invoke's results. */
            uint32_t via = ri_frame_via(f);
            out->frames[i + 1].via = via;
            if (via == RI_FRAME_VIA_INVOKE) out->frames[i + 1].via_value = (uint32_t)f->aux;
            if (via == RI_FRAME_VIA_SETTHREW) next -= f->aux >> 32;
            pt = f->ret_pc && f->ret_pc > code->words ? ri_code_find_point(code, (uint32_t)(f->ret_pc - code->words - 1)) : NULL;
            if (!pt || pt->kind != RI_POINT_CALL || next < fp + code->stack_base ||
                (size_t)(next - fp) - code->stack_base > pt->height) {
                ri_error_set(err, RI_ERR_ARGUMENT, "internal error: frame %zu is not waiting at a call", i);
                ok = false;
                break;
            }
            nstack = (uint32_t)((size_t)(next - fp) - code->stack_base);
        } else {
            code = exec->susp.code;
            fi = exec->susp.instance;
            fp = exec->stack + exec->susp.fp;
            uint32_t pos = (uint32_t)(exec->susp.pc - code->words);
            pt = ri_code_find_point(code, pos);
            if (!pt || pt->pos != pos || pt->kind == RI_POINT_TRAP) {
                ri_error_set(err, RI_ERR_ARGUMENT, "internal error: the running frame is not at a stop point");
                ok = false;
                break;
            }
            nstack = pt->height;
        }
        if (fi != inst) {
            ri_error_set(err, RI_ERR_ARGUMENT, "frame %zu runs a function of another instance: it cannot be described", i);
            ok = false;
            break;
        }

        if (find_point(code, pt->wasm_offset, pt->kind) != pt) {
            ri_error_set(err, RI_ERR_ARGUMENT, "frame %zu: the %s point at offset 0x%x is ambiguous", i,
                         point_name(pt->kind), pt->wasm_offset);
            ok = false;
            break;
        }
        ri_susp_frame *sf = &out->frames[i];
        if (code->nexn &&
            !describe_exns(&dc, code, fp, top ? pt->pos : (uint32_t)(exec->frames[exec->susp.marker + 1 + i].ret_pc -
                                                                     code->words - 1), sf)) {
            ok = false;
            break;
        }
        sf->func_index = code->func_index;
        sf->wasm_offset = pt->wasm_offset;
        sf->point = (ri_susp_point)pt->kind;
        sf->nlocals = code->nlocals;
        sf->nstack = nstack;
        sf->locals = calloc(code->nlocals ? code->nlocals : 1, sizeof *sf->locals);
        sf->stack = calloc(nstack ? nstack : 1, sizeof *sf->stack);
        if (!sf->locals || !sf->stack) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory describing the suspended call");
            ok = false;
            break;
        }
        for (uint32_t k = 0; k < code->nlocals && ok; k++) {
            uint8_t t = local_type(m, code, k);
            /* At entry the declared locals are not set yet: ENTRY zeroes them. */
            ri_slot v = fp[k];
            if (pt->kind == RI_POINT_ENTRY && k >= code->nparams) v.i64 = 0, v.ref = NULL;
            ok = describe_value(&dc, t, v, &sf->locals[k]);
        }
        if (ok && nstack) {
            const probe *p = probe_at(&pr, m, code->func_index, pt->wasm_offset, err);
            if (!p) {
                ok = false;
            } else if (p->n != pt->height) {
                ri_error_set(err, RI_ERR_ARGUMENT,
                             "internal error: function %u at offset 0x%x: stack height %u, the validator's %u",
                             code->func_index, pt->wasm_offset, pt->height, p->n);
                ok = false;
            }
            for (uint32_t k = 0; ok && k < nstack; k++)
                ok = describe_value(&dc, p->types[k], fp[code->stack_base + k], &sf->stack[k]);
        }
    }
    probes_free(&pr);
    free(dc.seen);
    free(dc.work);
    free(dc.work_at);
    if (!ok) {
        ri_suspension_free(out);
        return false;
    }
    /* The function the embedder called; the outermost frame may be another, which it
     * reached by tail calls. */
    uint32_t called;
    out->func_index = ri_instance_func_index(inst, exec->susp.func, &called) ? called : out->frames[0].func_index;
    return true;
}

/* ---- rebuild ------------------------------------------------------------------------------- */

/* Whether v is a value of type want; an exnref refers to one of the first nexn entries of
 * the suspension's exnrefs. */
static bool value_ok(const ri_module *m, uint8_t want, const ri_susp_value *v, uint32_t nexn) {
    if ((uint8_t)v->type != want) return false;
    switch (want) {
    case RI_I32: case RI_F32: return v->bits <= UINT32_MAX;
    case RI_I64: case RI_F64: case RI_V128: return true;
    case RI_FUNCREF: return v->bits == RI_SUSP_NULL_REF || v->bits < m->nfuncs;
    case RI_EXTERNREF: return v->bits == RI_SUSP_NULL_REF;
    case RI_EXNREF: return v->bits == RI_SUSP_NULL_REF || v->bits < nexn;
    default: return false;
    }
}

/* A checked value as a slot; objs: the exceptions made of the suspension's exnrefs. */
static ri_slot value_slot(ri_instance *inst, ri_exn *const *objs, const ri_susp_value *v) {
    ri_slot s;
    s.i64 = 0;
    if (v->type == RI_FUNCREF || v->type == RI_EXTERNREF) {
        s.ref = v->type == RI_FUNCREF && v->bits != RI_SUSP_NULL_REF ? inst->funcs[v->bits] : NULL;
    } else if (v->type == RI_EXNREF) {
        s.ref = v->bits != RI_SUSP_NULL_REF ? objs[v->bits] : NULL;
    } else {
        s.i64 = v->bits;
    }
    return s;
}

/* Checks entry i of the suspension's exnrefs. */
static bool exnref_ok(const ri_module *m, const ri_suspension *s, uint32_t i, ri_error *err);

typedef struct plan {
    const ri_code *code;
    const ri_code_point *pt;
    call_site cs;           /* callers */
    uint32_t results;       /* callers in an Emscripten invoke: its results (setThrew's frame is above them) */
    uint64_t fp;            /* slot index of the frame */
} plan;

static bool refuse(ri_error *err, const char *fmt, uint32_t a, uint32_t b) {
    char msg[200];
    snprintf(msg, sizeof msg, fmt, a, b);
    ri_error_set(err, RI_ERR_ARGUMENT, "suspended call: %s", msg);
    return false;
}

/* Whether two function types have the same results. */
static bool same_results(const ri_type *a, const ri_type *b) {
    return a->nresults == b->nresults && (a->nresults == 0 || memcmp(a->results, b->results, a->nresults) == 0);
}

/* Tail calls: a caller waits in its call for whatever function the chain of tail calls
 * its callee began has reached, which returns the callee's results. A call of function
 * `target` may then be waiting for `callee` when target's body makes tail calls and
 * the results agree. */
static bool tail_reached(const ri_instance *inst, uint32_t target, uint32_t callee) {
    const ri_module *m = inst->module;
    const ri_code *tc = inst->funcs[target]->code;
    return tc && tc->tail_calls && inst->funcs[callee]->instance == inst &&
           same_results(&m->types[m->func_types[target]], &m->types[m->func_types[callee]]);
}

/* The same for a call_indirect of type `type`: any function of the module that makes tail
 * calls may have been its callee. */
static bool tail_reached_type(const ri_instance *inst, uint32_t type, uint32_t callee) {
    const ri_module *m = inst->module;
    bool any = false;
    for (uint32_t b = 0; b < m->nbodies && !any; b++) any = m->codes[b] && m->codes[b]->tail_calls;
    return any && same_results(&m->types[type], &m->types[m->func_types[callee]]);
}

/* Checks frame i of s against inst; fills pl[i]. */
static bool check_frame(const ri_store *store, ri_instance *inst, const ri_suspension *s, uint32_t i, plan *pl,
                        probes *pr, ri_error *err) {
    const ri_module *m = inst->module;
    const ri_susp_frame *f = &s->frames[i];
    bool top = i + 1 == s->nframes;
    if (f->via > RI_SUSP_VIA_SETTHREW || (i == 0 && f->via != RI_SUSP_VIA_CALL) ||
        f->via_value > (f->via == RI_SUSP_VIA_INVOKE ? UINT32_MAX : 0))
        return refuse(err, "frame %u: how it was entered (%u) is not valid there", i, f->via);
    if (f->func_index >= m->nfuncs || f->func_index < m->nfunc_imports)
        return refuse(err, "frame %u: function %u is not a function defined by the module", i, f->func_index);
    const ri_func *fn = inst->funcs[f->func_index];
    const ri_code *code = fn->code;
    if (!code || fn->instance != inst) return refuse(err, "frame %u: function %u has no code", i, f->func_index);
    uint32_t kind = (uint32_t)f->point;
    bool kind_ok = top ? (kind == RI_POINT_ENTRY || kind == RI_POINT_GAS || kind == RI_POINT_LOOP ||
                          kind == RI_POINT_BULK || kind == RI_POINT_CALL)
                       : kind == RI_POINT_CALL;
    if (!kind_ok)
        return refuse(err, top ? "frame %u (the running one) cannot be at a point of kind %u"
                               : "frame %u (a caller) must be at a call, not at a point of kind %u",
                      i, kind);
    const ri_code_point *pt = find_point(code, f->wasm_offset, kind);
    if (!pt) return refuse(err, "frame %u: offset 0x%x is not a stop point of that kind in its function", i, f->wasm_offset);
    if (f->nlocals != code->nlocals)
        return refuse(err, "frame %u: %u locals, the function has a different number", i, f->nlocals);
    if (f->nlocals && !f->locals) return refuse(err, "frame %u: %u locals missing", i, f->nlocals);
    for (uint32_t k = 0; k < f->nlocals; k++) {
        if (!value_ok(m, local_type(m, code, k), &f->locals[k], s->nexnrefs))
            return refuse(err, "frame %u: local %u has the wrong type or an invalid value", i, k);
        ri_valtype lt = f->locals[k].type;
        if (kind == RI_POINT_ENTRY && k >= code->nparams &&
            f->locals[k].bits != (lt == RI_FUNCREF || lt == RI_EXTERNREF || lt == RI_EXNREF ? RI_SUSP_NULL_REF : 0))
            return refuse(err, "frame %u: declared local %u must be zero at function entry", i, k);
    }
    pl[i].code = code;
    pl[i].pt = pt;
    if (!top) {
        if (!call_at(code, pt->pos, &pl[i].cs))
            return refuse(err, "frame %u: internal error: no call instruction at offset 0x%x", i, f->wasm_offset);
        const call_site *cs = &pl[i].cs;
        if (cs->base < code->stack_base || cs->base - code->stack_base > pt->height ||
            f->nstack != cs->base - code->stack_base)
            return refuse(err, "frame %u: %u operands below the call's arguments do not match the call", i, f->nstack);
        /* The next frame must be what this call calls. */
        uint32_t callee = s->frames[i + 1].func_index;
        if (callee >= m->nfuncs) return refuse(err, "frame %u: function %u out of range", i + 1, callee);
        if (cs->kind == 0 && callee != m->nfunc_imports + cs->target &&
            !tail_reached(inst, cs->target + m->nfunc_imports, callee))
            return refuse(err, "frame %u calls another function than function %u", i, callee);
        uint32_t via = s->frames[i + 1].via;
        if (cs->kind == 1) {
            const ri_func *imp = inst->funcs[cs->target];
            if (imp->emsc_op != RI_EMSCRIPTEN_INVOKE || via == RI_SUSP_VIA_CALL)
                return refuse(err, "frame %u waits in a call to an import (function %u), not to a frame of this instance", i, cs->target);
            if (via == RI_SUSP_VIA_INVOKE && inst->funcs[callee]->type_id != imp->emsc_target_type)
                return refuse(err, "frame %u: its invoke calls another type than function %u's", i, callee);
            if (via == RI_SUSP_VIA_SETTHREW && (ri_emsc_resolve(inst) || inst->funcs[callee] != inst->emsc.set_threw))
                return refuse(err, "frame %u: function %u is not the module's setThrew", i + 1, callee);
            pl[i].results = imp->type.nresults;
        } else if (via != RI_SUSP_VIA_CALL) {
            return refuse(err, "frame %u is entered through an invoke, but its caller (frame %u) calls no invoke", i + 1, i);
        }
        if (cs->kind == 2 && (cs->target >= m->ntypes || (inst->funcs[callee]->type_id != inst->type_ids[cs->target] &&
                                                          !tail_reached_type(inst, cs->target, callee))))
            return refuse(err, "frame %u: call_indirect of another type than function %u's", i, callee);
    } else if (f->nstack != pt->height) {
        return refuse(err, "frame %u: %u operands, the stop point has another height", i, f->nstack);
    }
    if (f->nstack && !f->stack) return refuse(err, "frame %u: %u operands missing", i, f->nstack);
    if (f->nexns && !f->exns) return refuse(err, "frame %u: %u kept exceptions missing", i, f->nexns);
    for (uint32_t x = 0; x < f->nexns; x++) {
        const ri_susp_exn *e = &f->exns[x];
        uint32_t pos = top ? pt->pos : pt->pos + 1; /* (a caller: inside its call) */
        bool kept = false;
        for (uint32_t c = 0; c < code->ncatches && !kept; c++) {
            const ri_code_catch *k = &code->catches[c];
            kept = !k->table && k->exn_slot == code->exn_base + e->slot && k->target <= pos && pos < k->end &&
                   e->slot < code->nexn;
        }
        for (uint32_t y = 0; kept && y < x; y++) kept = f->exns[y].slot != e->slot;
        if (!kept) return refuse(err, "frame %u: no catch clause there keeps an exception in slot %u", i, e->slot);
        if (e->tag_index >= m->ntags) return refuse(err, "frame %u: tag %u out of range", i, e->tag_index);
        const ri_type *tt = &m->types[m->tag_types[e->tag_index]];
        if (e->nvals != tt->nparams || (e->nvals && !e->vals))
            return refuse(err, "frame %u: an exception of tag %u with the wrong number of values", i, e->tag_index);
        for (uint32_t v = 0; v < e->nvals; v++)
            if (!value_ok(m, tt->params[v], &e->vals[v], s->nexnrefs))
                return refuse(err, "frame %u: a kept exception's value %u has the wrong type or an invalid value", i, v);
    }
    if (f->nstack) {
        const probe *p = probe_at(pr, m, code->func_index, pt->wasm_offset, err);
        if (!p) return false;
        if (p->n != pt->height) return refuse(err, "frame %u: internal error: stack height %u disagrees", i, pt->height);
        for (uint32_t k = 0; k < f->nstack; k++)
            if (!value_ok(m, p->types[k], &f->stack[k], s->nexnrefs))
                return refuse(err, "frame %u: operand %u has the wrong type or an invalid value", i, k);
    }
    (void)store;
    return true;
}

static bool exnref_ok(const ri_module *m, const ri_suspension *s, uint32_t i, ri_error *err) {
    const ri_susp_exn *e = &s->exnrefs[i];
    if (e->slot) return refuse(err, "exnref %u: slot %u (must be 0)", i, e->slot);
    if (e->tag_index >= m->ntags) return refuse(err, "exnref %u: tag %u out of range", i, e->tag_index);
    const ri_type *tt = &m->types[m->tag_types[e->tag_index]];
    if (e->nvals != tt->nparams || (e->nvals && !e->vals))
        return refuse(err, "exnref %u: an exception of tag %u with the wrong number of values", i, e->tag_index);
    for (uint32_t v = 0; v < e->nvals; v++)
        if (!value_ok(m, tt->params[v], &e->vals[v], i)) /* (only earlier entries: no cycles) */
            return refuse(err, "exnref %u: value %u has the wrong type or an invalid value", i, v);
    return true;
}

/* Makes the exception objects of the suspension's exnrefs, in order (fallible: before the
 * frames change). NULL with err set when out of memory. */
static ri_exn **make_exnrefs(ri_exec *exec, ri_instance *inst, const ri_suspension *s, ri_error *err) {
    ri_exn **objs = calloc(s->nexnrefs ? s->nexnrefs : 1, sizeof *objs);
    bool ok = objs != NULL;
    for (uint32_t i = 0; ok && i < s->nexnrefs; i++) {
        const ri_susp_exn *e = &s->exnrefs[i];
        ri_slot vals[16];
        ri_slot *v = e->nvals <= 16 ? vals : calloc(e->nvals, sizeof *v);
        for (uint32_t k = 0; v && k < e->nvals; k++) v[k] = value_slot(inst, objs, &e->vals[k]);
        objs[i] = v ? ri_exn_new(exec, inst->tags[e->tag_index], v, NULL, NULL) : NULL;
        if (v != vals) free(v);
        ok = objs[i] != NULL;
    }
    if (!ok) {
        free(objs);
        ri_exn_free_all(exec);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory for the exceptions of the suspended call");
        return NULL;
    }
    return objs;
}

bool ri_store_rebuild_suspended(ri_store *store, ri_instance *inst, const ri_suspension *s, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!store || !inst || !s) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_store_rebuild_suspended: NULL argument");
        return false;
    }
    if (inst->store != store) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_store_rebuild_suspended: the instance belongs to another store");
        return false;
    }
    ri_exec *exec = ri_exec_get(store);
    if (!exec) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory for the execution stack");
        return false;
    }
    if (exec->susp.active || exec->nesting || (exec->frames && exec->frame_top != exec->frames)) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_store_rebuild_suspended: the store has a call suspended or running");
        return false;
    }
    if (s->nframes == 0 || !s->frames) return refuse(err, "no frames (%u of %u)", 0, 0);
    if (s->reason < RI_SUSPENDED_GAS || s->reason > RI_SUSPENDED_YIELD)
        return refuse(err, "unknown reason %u (of %u)", (uint32_t)s->reason, RI_SUSPENDED_YIELD);
    if (s->nframes > store->config.max_call_depth)
        return refuse(err, "%u frames, more than the store's call depth %u", s->nframes, store->config.max_call_depth);
    if (s->func_index != s->frames[0].func_index &&
        (s->func_index >= inst->module->nfuncs || s->frames[0].func_index >= inst->module->nfuncs ||
         !tail_reached(inst, s->func_index, s->frames[0].func_index)))
        return refuse(err, "the called function %u is not the outermost frame's %u", s->func_index, s->frames[0].func_index);
    plan *pl = calloc(s->nframes, sizeof *pl);
    if (!pl) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory");
        return false;
    }
    probes pr = {0};
    bool ok = true;
    if (s->nexnrefs && !s->exnrefs) ok = refuse(err, "%u exnrefs missing (of %u)", s->nexnrefs, s->nexnrefs);
    for (uint32_t i = 0; ok && i < s->nexnrefs; i++) ok = exnref_ok(inst->module, s, i, err);
    uint64_t base = exec->stack_top, fp = base;
    for (uint32_t i = 0; i < s->nframes && ok; i++) {
        ok = check_frame(store, inst, s, i, pl, &pr, err);
        if (!ok) break;
        pl[i].fp = fp;
        if (i + 1 < s->nframes)
            fp += pl[i].cs.base + (s->frames[i + 1].via == RI_SUSP_VIA_SETTHREW ? pl[i].results : 0);
        if (fp > store->config.max_stack_slots) /* (also keeps fp far from overflowing) */
            ok = refuse(err, "the frames need more value stack than the store's limit (%u slots, %u frames)",
                        store->config.max_stack_slots, s->nframes);
    }
    probes_free(&pr);
    /* Every frame gets the room a call gives it (fp + frame_slots, what ENTER_LOCAL and
     * call_wasm check), not only the running one: a caller's frame may reach past its
     * callee's, and once the callee returns the caller writes there (its operands, the
     * arguments of its next call) without growing the stack. */
    uint64_t need = 0;
    for (uint32_t i = 0; ok && i < s->nframes; i++)
        if (pl[i].fp + pl[i].code->frame_slots > need) need = pl[i].fp + pl[i].code->frame_slots;
    if (ok && need > store->config.max_stack_slots) {
        ok = refuse(err, "the frames need more value stack than the store's limit (%u slots, %u frames)",
                    store->config.max_stack_slots, s->nframes);
    }
    /* Room (nothing is in use: no pointer into the stack to move). */
    if (ok && need > exec->stack_cap) {
        ri_slot *stack = realloc(exec->stack, (size_t)need * sizeof *stack);
        if (!stack) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory for the value stack");
            ok = false;
        } else {
            exec->stack = stack;
            exec->stack_cap = (uint32_t)need;
            exec->stack_end = stack + need;
        }
    }
    if (ok && s->nframes > exec->frames_cap) {
        ri_frame *frames = realloc(exec->frames, (size_t)s->nframes * sizeof *frames);
        if (!frames) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory for the call frames");
            ok = false;
        } else {
            exec->frames = frames;
            exec->frames_cap = s->nframes;
            exec->frames_end = frames + s->nframes;
            exec->frame_top = frames;
        }
    }
    /* A new call in the store: the last one's exceptions go (exn.h), then those it holds. */
    ri_exn **objs = NULL;
    if (ok) {
        ri_exn_free_all(exec);
        objs = make_exnrefs(exec, inst, s, err);
        ok = objs != NULL;
    }
    if (!ok) {
        free(pl);
        return false;
    }
    /* Everything checked: build the frames. */
    memset(exec->stack + base, 0, (size_t)(need - base) * sizeof *exec->stack);
    ri_frame *marker = exec->frames;
    marker->ret_pc = ri_interp_exit_code();
    marker->code = NULL;
    marker->inst_bits = (uintptr_t)inst;
    marker->fp.ptr = exec->stack + base;
    for (uint32_t i = 0; i < s->nframes; i++) {
        const ri_susp_frame *f = &s->frames[i];
        const ri_code *code = pl[i].code;
        ri_slot *slots = exec->stack + pl[i].fp;
        for (uint32_t k = 0; k < f->nlocals; k++) slots[k] = value_slot(inst, objs, &f->locals[k]);
        /* The constant pool, as ENTRY loads it (its words 5 .. 5 + 2 * nconsts). */
        for (uint32_t k = 0; k < code->nconsts; k++)
            slots[code->nlocals + k].i64 = code->words[5 + 2 * k] | (uint64_t)code->words[6 + 2 * k] << 32;
        for (uint32_t k = 0; k < f->nstack; k++) slots[code->stack_base + k] = value_slot(inst, objs, &f->stack[k]);
        for (uint32_t x = 0; x < f->nexns; x++) { /* the exceptions its catch clauses keep */
            const ri_susp_exn *e = &f->exns[x];
            ri_slot vals[16];
            ri_slot *v = e->nvals <= 16 ? vals : calloc(e->nvals, sizeof *v);
            for (uint32_t k = 0; v && k < e->nvals; k++) v[k] = value_slot(inst, objs, &e->vals[k]);
            ri_exn *obj = v ? ri_exn_new(exec, inst->tags[e->tag_index], v, NULL, NULL) : NULL;
            if (v != vals) free(v);
            slots[code->exn_base + e->slot].i64 = 0;
            slots[code->exn_base + e->slot].ref = obj; /* (out of memory: none, and a rethrow traps) */
        }
        if (i + 1 < s->nframes) {
            ri_frame *fr = &exec->frames[1 + i];
            fr->ret_pc = code->words + pl[i].pt->pos + pl[i].cs.size;
            fr->code = code;
            fr->inst_bits = (uintptr_t)inst | s->frames[i + 1].via; /* (RI_SUSP_VIA_* = RI_FRAME_VIA_*) */
            fr->aux = s->frames[i + 1].via_value | (uint64_t)pl[i].results << 32;
            fr->fp.ptr = slots;
        }
    }
    exec->frame_top = exec->frames + s->nframes;
    const plan *top = &pl[s->nframes - 1];
    exec->susp.active = true;
    exec->susp.reason = s->reason;
    exec->susp.func = inst->funcs[s->func_index];
    exec->susp.base = (uint32_t)base;
    exec->susp.marker = 0;
    exec->susp.pc = top->code->words + top->pt->pos;
    exec->susp.code = top->code;
    exec->susp.instance = inst;
    exec->susp.fp = (size_t)top->fp;
    free(pl);
    free(objs);
    return true;
}
