/*
 * The translation of exception handling: try, catch, catch_all, delegate, throw, rethrow
 * (the legacy proposal) and try_table, throw_ref. It fills the code's try and catch tables
 * (code.h, "Exception handling") and counts the slots that keep exceptions for a rethrow.
 * Part of the translation pass (compile.c).
 */
#include <string.h>

#include "compile_internal.h"

/* The function's label as a try_table clause's target: a return of the values the clause
 * put in the label's slots (from height 0), after the body. */
void emit_catch_return(compiler *c) {
    forget_emitted(c);
    uint32_t pos = c->len;
    if (c->rslots == 0) emit_op(c, RI_CODE_RETURN0, 1);
    else emit2(c, RI_CODE_RETURN_N, own_slot(c, 0), c->rslots);
    bind_catch_targets(c, 0, pos);
}

/* The try whose body holds what is compiled now (the innermost CTRL_TRY or CTRL_TRY_TABLE
 * below `from`). */
static uint32_t enclosing_try(const compiler *c, uint32_t from) {
    for (uint32_t i = from; i-- > 0;)
        if (c->ctrls[i].kind == CTRL_TRY || c->ctrls[i].kind == CTRL_TRY_TABLE) return c->ctrls[i].try_index;
    return RI_TRY_NONE;
}

/* The try_table clauses waiting for the branch target of the label at control index
 * `label` (their `end` holds it until then) get `target`. */
void bind_catch_targets(compiler *c, uint32_t label, uint32_t target) {
    for (uint32_t k = 0; k < c->ncatches; k++) {
        ri_code_catch *cc = &c->catches[k];
        if (cc->table && cc->target == NO_POS && cc->end == label) {
            cc->target = target;
            cc->end = target;
        }
    }
}

/* try_table bt clause*: a try whose clauses are branches. A clause's values (and its
 * exnref) go to its label's slots and it continues at the label's branch target, as a
 * br with them would (that target is where a run stopped after the catch describes it). */
void compile_try_table(compiler *c, const ri_instr *in) {
    uint32_t np, nr;
    if (!block_arity(c, &in->imm.block, &np, &nr)) return;
    flush_all(c);
    forget_emitted(c); /* (as compile_try: nothing fused into the body's range) */
    uint32_t n = in->catches.count;
    if (!grow_array(c, (void **)&c->tries, &c->tries_cap, (uint64_t)c->ntries + 1, sizeof *c->tries)) return;
    if (!grow_array(c, (void **)&c->catches, &c->catches_cap, (uint64_t)c->ncatches + n, sizeof *c->catches)) return;
    uint32_t t = c->ntries;
    for (uint32_t i = 0; i < n; i++) {
        ri_catch_clause cl = ri_try_table_clause(in, i);
        /* labels are counted from the block around the try_table */
        ctrl *l = label_at(c, cl.label);
        if (!l) return;
        bool all = cl.kind == RI_CATCH_ALL_PLAIN || cl.kind == RI_CATCH_ALL_REF;
        bool ref = cl.kind == RI_CATCH_TAG_REF || cl.kind == RI_CATCH_ALL_REF;
        if (!all && cl.tag >= c->m->ntags) { fail(c, RI_ERR_INVALID, "unknown tag"); return; }
        uint32_t nvals = all ? 0 : c->m->types[c->m->tag_types[cl.tag]].nparams; /* (no v128 in a tag) */
        if (label_arity(l) != nvals + ref) { fail(c, RI_ERR_INVALID, "try_table clause arity"); return; }
        if (l->height + label_arity(l) > c->max_h) c->max_h = l->height + label_arity(l);
        ri_code_catch *k = &c->catches[c->ncatches++];
        k->try_index = t;
        k->tag = all ? RI_CATCH_ALL : cl.tag;
        k->base = own_slot(c, l->height);
        k->exn_slot = ref ? k->base + nvals : RI_NO_SLOT;
        k->table = 1;
        if (l->kind == CTRL_LOOP) {
            k->target = k->end = l->loop_pos;
        } else {
            k->target = NO_POS;
            k->end = c->nctrl - 1 - cl.label;
            l->catch_targets++;
        }
    }
    ctrl *l = push_ctrl(c, CTRL_TRY_TABLE, np, nr);
    if (!l) return;
    set_block_types(c, &in->imm.block);
    l->try_index = t;
    ri_code_try *tr = &c->tries[c->ntries++];
    tr->start = c->len;
    tr->end = c->len;
    tr->parent = enclosing_try(c, c->nctrl - 1);
    tr->delegate = RI_TRY_CATCHES;
    tr->ncatches = n;
}

/* throw_ref: throws the exception the exnref on top refers to. */
void compile_throw_ref(compiler *c) {
    if (c->h < 1) { fail(c, RI_ERR_INVALID, "throw_ref operand missing"); return; }
    materialise_top(c, 1);
    uint32_t p = emit1(c, RI_CODE_THROW_REF, own_slot(c, c->h - 1));
    add_point(c, p, RI_POINT_TRAP, c->h);
    c->ctrls[c->nctrl - 1].unreachable = true;
}

void compile_try(compiler *c, const ri_blocktype *bt) {
    uint32_t np, nr;
    if (!block_arity(c, bt, &np, &nr)) return;
    flush_all(c);
    /* a peephole must not fuse what comes before the body into it: the fused
     * instruction would start outside the body's range */
    forget_emitted(c);
    if (!grow_array(c, (void **)&c->tries, &c->tries_cap, (uint64_t)c->ntries + 1, sizeof *c->tries)) return;
    ctrl *l = push_ctrl(c, CTRL_TRY, np, nr);
    if (!l) return;
    set_block_types(c, bt);
    if (c->exn_depth >= c->nexn) { fail(c, RI_ERR_INVALID, "internal error: exception slots miscounted"); return; }
    l->try_index = c->ntries;
    l->exn_slot = c->exn_base + c->exn_depth++;
    ri_code_try *t = &c->tries[c->ntries++];
    t->start = c->len;
    t->end = c->len;
    t->parent = enclosing_try(c, c->nctrl - 1);
    t->delegate = RI_TRY_CATCHES;
    t->ncatches = 0;
}

/* The body or the clause of l ends here. */
static void close_clause(compiler *c, const ctrl *l) {
    if (l->kind == CTRL_TRY) c->tries[l->try_index].end = c->len;
    else c->catches[l->catch_index].end = c->len;
}

/* The end (or the delegate) of a try or of its last clause. */
void end_try(compiler *c, const ctrl *l) {
    close_clause(c, l);
    c->exn_depth--;
}

/* catch x, catch_all: the body (or the clause before) ends with a branch to the end; the
 * clause starts a region (a GAS even in unmetered code: a stop point where its values,
 * the exception's, are on the stack). */
void compile_catch(compiler *c, const ri_instr *in) {
    ctrl *l = &c->ctrls[c->nctrl - 1];
    if (l->kind != CTRL_TRY && l->kind != CTRL_CATCH) { fail(c, RI_ERR_INVALID, "catch without try"); return; }
    bool all = in->op == RI_OP_CATCH_ALL;
    if (!all && in->imm.index >= c->m->ntags) { fail(c, RI_ERR_INVALID, "unknown tag"); return; }
    const ri_type *tt = all ? NULL : &c->m->types[c->m->tag_types[in->imm.index]];
    uint32_t n = tt ? tt->nparams : 0; /* (no v128 in a tag: validate.c) */
    close_clause(c, l);
    if (!l->unreachable) {
        materialise_top(c, l->nresults);
        uint32_t p = emit1(c, RI_CODE_BR, 0);
        if (p != NO_POS) branch_to(c, l, p + 1);
    }
    if (!grow_array(c, (void **)&c->catches, &c->catches_cap, (uint64_t)c->ncatches + 1, sizeof *c->catches)) return;
    l = &c->ctrls[c->nctrl - 1];
    reset_stack(c, l->height, tt ? tt->params : NULL, n);
    uint32_t pos;
    if (c->metered) {
        pos = start_region(c, RI_CODE_GAS, RI_POINT_GAS);
    } else {
        pos = emit1(c, RI_CODE_GAS, 0);
        uint32_t at = c->wasm_offset;
        c->wasm_offset = c->next_offset;
        add_point(c, pos, RI_POINT_GAS, c->h);
        c->wasm_offset = at;
        start_region(c, RI_CODE_GAS, RI_POINT_GAS);
    }
    if (c->failed) return;
    l->catch_index = c->ncatches;
    ri_code_catch *k = &c->catches[c->ncatches++];
    k->try_index = l->try_index;
    k->tag = all ? RI_CATCH_ALL : in->imm.index;
    k->target = pos;
    k->end = c->len;
    k->base = own_slot(c, l->height);
    k->exn_slot = RI_NO_SLOT;
    k->table = 0;
    c->tries[l->try_index].ncatches++;
    l->kind = CTRL_CATCH;
    l->unreachable = false;
}

/* delegate l: the try's exceptions go to the try that label l (counted from the block
 * around the try) is or is inside of, or to the caller. Then it ends as a block. */
void compile_delegate(compiler *c, uint32_t depth) {
    ctrl *l = &c->ctrls[c->nctrl - 1];
    if (l->kind != CTRL_TRY || depth + 1 >= c->nctrl) { fail(c, RI_ERR_INVALID, "bad delegate"); return; }
    c->tries[l->try_index].delegate = enclosing_try(c, c->nctrl - 1 - depth);
    l->kind = CTRL_TRY; /* (compile_end closes its body) */
    compile_end(c);
}

void compile_throw(compiler *c, uint32_t tag) {
    if (tag >= c->m->ntags) { fail(c, RI_ERR_INVALID, "unknown tag"); return; }
    uint32_t n = c->m->types[c->m->tag_types[tag]].nparams;
    if (c->h < n) { fail(c, RI_ERR_INVALID, "throw values missing"); return; }
    materialise_top(c, n);
    uint32_t p = emit2(c, RI_CODE_THROW, tag, own_slot(c, c->h - n));
    add_point(c, p, RI_POINT_TRAP, c->h);
    c->ctrls[c->nctrl - 1].unreachable = true;
}

void compile_rethrow(compiler *c, uint32_t depth) {
    ctrl *l = label_at(c, depth);
    if (!l) return;
    if (l->kind != CTRL_CATCH) { fail(c, RI_ERR_INVALID, "invalid rethrow label"); return; }
    c->catches[l->catch_index].exn_slot = l->exn_slot;
    uint32_t p = emit1(c, RI_CODE_RETHROW, l->exn_slot);
    add_point(c, p, RI_POINT_TRAP, c->h);
    c->ctrls[c->nctrl - 1].unreachable = true;
}

/* The deepest nesting of tries in the body: the exception slots it needs. */
uint32_t count_exn_slots(compiler *c, const uint8_t *start, const uint8_t *end) {
    ri_reader r;
    ri_reader_init(&r, c->m->bytes, start, end);
    ri_instr in;
    uint32_t open = 0, tries = 0, most = 0;
    while (!ri_reader_eof(&r) && ri_read_instr(&r, &in)) {
        switch (in.op) {
        case RI_OP_BLOCK: case RI_OP_LOOP: case RI_OP_IF: case RI_OP_TRY: case RI_OP_TRY_TABLE:
            if (!grow_array(c, (void **)&c->nest, &c->nest_cap, (uint64_t)open + 1, 1)) return 0;
            c->nest[open++] = in.op == RI_OP_TRY;
            if (in.op == RI_OP_TRY && ++tries > most) most = tries;
            break;
        case RI_OP_END: case RI_OP_DELEGATE:
            if (open == 0) return most; /* the function's end */
            tries -= c->nest[--open];
            break;
        default:
            break;
        }
    }
    return most;
}
