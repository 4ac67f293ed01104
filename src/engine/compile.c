/*
 * Compilation of validated function bodies into the internal code (see code.h).
 *
 * One pass over the instructions (ri_read_instr) per body, after a quick scan that
 * collects into the frame's constant pool the constants that will be read in place (a
 * constant that becomes an immediate operand, or is only copied somewhere, needs no
 * pool slot). The compiler mirrors the WebAssembly operand stack: each entry knows
 * where its value is: its own slot, a local's slot (after local.get), a constant-pool
 * slot, or an immediate (a constant not in the pool). Consumers read that slot
 * directly or take the immediate, so local.get and *.const emit nothing. Such
 * "pending" entries are materialised (copied to their own slot) before their local is
 * overwritten, and at every block boundary and stop point, where all paths must agree
 * on where values are.
 *
 * The pipeline: translate (this file) -> fuse (peephole, during translation: the
 * translation offers each instruction to a fusion entry point first) -> branch variants ->
 * accumulator variants (passes over the compiled body). Nothing moves in the last two, so
 * stop points stay exact.
 *
 * The compiler's files: this one translates each WebAssembly instruction, the body and
 * the module; compile_simd.c the SIMD instructions, compile_exn.c exception handling,
 * compile_emit.c holds emission and the operand stack. fuse.c (branches), fuse_memory.c
 * (loads, stores) and fuse_arith.c (arithmetic) decide every fusion, by the rules of
 * fuse_rules.c, each behind its family's gate; the translation names no fused operation. branch_variant.c and
 * acc.c are the passes over a compiled body; compile_internal.h is what they all share.
 */
#include <stdlib.h>
#include <string.h>

#include "common/ri_assert.h"
#include "code_verify.h"
#include "compile_internal.h"
#include "simd.h"

/* v128 bookkeeping (two slots per value), defined with the SIMD instructions below */
static uint32_t valtype_slots(uint8_t t);
static uint32_t types_slots(const uint8_t *types, uint32_t n);
static const uint8_t *single_valtype(uint8_t t);
static void push_typed(compiler *c, const uint8_t *types, uint32_t n);

/* ---- operations with immediates ------------------------------------------------------- */

/* The internal operation of a numeric WebAssembly instruction. */
static ri_code_op numeric_code_op(uint16_t op) {
    switch (op) {
#define RI_X_NUM(name, byte, a, b, r) case RI_OP_##name: return RI_CODE_##name;
    RI_NUMERIC_OPS(RI_X_NUM)
#undef RI_X_NUM
    default: return RI_CODE_OP_COUNT;
    }
}

/* The bits of a constant instruction; false if `in` is none. */
static bool const_bits(const ri_instr *in, uint64_t *bits) {
    switch (in->op) {
    case RI_OP_I32_CONST: *bits = (uint32_t)in->imm.i32; return true;
    case RI_OP_I64_CONST: *bits = (uint64_t)in->imm.i64; return true;
    case RI_OP_F32_CONST: *bits = in->imm.f32_bits; return true;
    case RI_OP_F64_CONST: *bits = in->imm.f64_bits; return true;
    case RI_OP_REF_NULL: *bits = 0; return true;
    default: return false;
    }
}

/* Whether a constant followed by n1 (and n2, NULL at the end) will be used without a
 * pool slot: as an immediate operand, or copied into a local. A wrong guess costs a
 * CONST instruction or an unused pool slot, never correctness. */
static bool const_needs_no_pool(uint64_t bits, const ri_instr *n1, const ri_instr *n2) {
    switch (n1->op) {
    case RI_OP_LOCAL_SET: case RI_OP_LOCAL_TEE:
        return true;
    case RI_OP_LOCAL_GET: case RI_OP_GLOBAL_GET: { /* the constant is n2's first operand */
        if (!n2) return false;
        ri_code_op op = swapped_form(numeric_code_op(n2->op));
        return op != RI_CODE_OP_COUNT && imm_fits(op, bits);
    }
    default: /* the constant is n1's second operand */
        return imm_fits(numeric_code_op(n1->op), bits);
    }
}

/* The pre-scan: fills the pool with the body's first distinct constants that will be
 * read in place. Returns whether the body has a (legacy) try, the only instruction that
 * needs exception slots (count_exn_slots), read on once the pool is full. */
static bool collect_consts(compiler *c, const uint8_t *start, const uint8_t *end) {
    ri_reader r;
    ri_reader_init(&r, c->m->bytes, start, end);
    ri_instr buf[3];
    ri_instr *win[3] = {&buf[0], &buf[1], &buf[2]}; /* a constant and the two instructions after it
                                                      (rotated, not copied) */
    uint32_t n = 0;
    bool has_try = false;
    for (;;) {
        bool more = c->nconsts < RI_MAX_POOL_CONSTS && !ri_reader_eof(&r) && ri_read_instr(&r, win[n]);
        if (more) {
            has_try |= win[n]->op == RI_OP_TRY;
            n++;
        }
        if (n == 0 || (more && n < 3)) {
            if (!more) break;
            continue;
        }
        uint64_t bits;
        if (win[0]->op == RI_FD(0x0C)) { /* v128.const: two consecutive slots, unless only stored */
            uint64_t lo = ri_v128_u64(win[0]->imm.simd.bytes), hi = ri_v128_u64(win[0]->imm.simd.bytes + 8);
            if (c->nconsts + 2 <= RI_MAX_POOL_CONSTS && pool_find2(c, lo, hi) == NO_POS &&
                !(n > 1 && (win[1]->op == RI_OP_LOCAL_SET || win[1]->op == RI_OP_LOCAL_TEE))) {
                c->consts[c->nconsts++] = lo;
                c->consts[c->nconsts++] = hi;
            }
        } else if (c->nconsts < RI_MAX_POOL_CONSTS && const_bits(win[0], &bits) &&
            !(n > 1 && const_needs_no_pool(bits, win[1], n > 2 ? win[2] : NULL)) &&
            pool_find(c, bits) == NO_POS)
            c->consts[c->nconsts++] = bits;
        ri_instr *done = win[0];
        win[0] = win[1];
        win[1] = win[2];
        win[2] = done;
        n--;
        if (!more && n == 0) break;
    }
    /* the pool is full (or the body read): only a try matters from here */
    while (!has_try && !ri_reader_eof(&r) && ri_read_instr(&r, win[0])) has_try = win[0]->op == RI_OP_TRY;
    return has_try;
}

static void push_const(compiler *c, uint64_t bits) {
    uint32_t k = pool_find(c, bits);
    if (k != NO_POS) push_operand(c, (operand){c->nlocals + k, ENTRY_CONST, bits, 0});
    else push_operand(c, (operand){0, ENTRY_IMM, bits, 0});
}

/* ---- metering regions ------------------------------------------------------------------ */

static void end_region(compiler *c) {
    if (c->gas_pos) set_word(c, c->gas_pos, c->gas_count);
    c->gas_pos = 0;
}

/* Starts a straight-line region with a GAS or LOOP charge; returns its position, the
 * target for branches to a label here. */
uint32_t start_region(compiler *c, ri_code_op op, ri_point_kind kind) {
    if (!c->metered) {
        /* Unmetered code has no GAS: the label is whatever comes next. LOOP stays, to
         * poll the interrupt flag (its cost stays 0). */
        forget_emitted(c);
        if (op == RI_CODE_GAS) return c->len;
        uint32_t pos = emit1(c, op, 0);
        uint32_t at = c->wasm_offset;
        c->wasm_offset = c->next_offset;
        add_point(c, pos, kind, c->h);
        c->wasm_offset = at;
        return pos;
    }
    /* A charge with nothing after it and nothing to pay is replaced, at the same
     * position, so labels already bound to it stay right. */
    bool empty = c->gas_pos && c->gas_count == 0 && c->last.op == RI_CODE_GAS &&
                 c->last.pos != NO_POS && c->last.pos + 2 == c->len && c->last.pos != c->call_gas_pos;
    if (empty) truncate_code(c, c->len - 2);
    end_region(c);
    forget_emitted(c); /* no peephole rewrite may reach across a label */
    uint32_t pos = emit1(c, op, 0);
    uint32_t at = c->wasm_offset;
    c->wasm_offset = c->next_offset; /* execution resumes with the region's first instruction */
    add_point(c, pos, kind, c->h);
    c->wasm_offset = at;
    c->gas_pos = pos == NO_POS ? 0 : pos + 1;
    c->gas_count = 0;
    return pos;
}

/* ---- labels and branches -------------------------------------------------------------- */

ctrl *label_at(compiler *c, uint32_t depth) {
    if (depth >= c->nctrl) { fail(c, RI_ERR_INVALID, "unknown label"); return NULL; }
    return &c->ctrls[c->nctrl - 1 - depth];
}

uint32_t label_arity(const ctrl *l) { return l->kind == CTRL_LOOP ? l->nparams : l->nresults; }

/* Makes the offset word at `word` branch to label l (now for loops, at bind time
 * for forward labels). */
void branch_to(compiler *c, ctrl *l, uint32_t word) {
    if (c->failed || word == NO_POS) return;
    if (l->kind == CTRL_LOOP) {
        c->code[word] = (uint32_t)(int32_t)((int64_t)l->loop_pos - (int64_t)word);
    } else {
        c->code[word] = l->fixups;
        l->fixups = word + 1;
    }
}

static void bind_chain(compiler *c, uint32_t chain, uint32_t target) {
    while (chain && !c->failed) {
        uint32_t word = chain - 1;
        if (word >= c->len) { fail(c, RI_ERR_INVALID, "bad branch chain"); return; }
        chain = c->code[word];
        c->code[word] = (uint32_t)(int32_t)((int64_t)target - (int64_t)word);
    }
}

/* Whether branching to l needs the top values copied into the label's slots. */
static bool needs_copies(const compiler *c, const ctrl *l) {
    uint32_t n = label_arity(l);
    for (uint32_t i = 0; i < n; i++) {
        const operand *e = &c->stack[c->h - n + i];
        if (e->kind == ENTRY_IMM || e->src != own_slot(c, l->height + i)) return true;
    }
    return false;
}

/* Emits the copies of the top values into l's slots. Leaves the compile-time stack
 * as it is: these run only on the branch's path. Copying upwards is safe: the label's
 * slots lie at or below the values' own slots. */
static void emit_copies(compiler *c, const ctrl *l) {
    uint32_t n = label_arity(l);
    for (uint32_t i = 0; i < n; i++) {
        const operand *e = &c->stack[c->h - n + i];
        uint32_t dst = own_slot(c, l->height + i);
        if (e->kind == ENTRY_IMM || e->src != dst) emit_copy(c, dst, e);
    }
}

/* Returns the top nresults values; like emit_copies, leaves the compile-time stack. */
static void emit_return(compiler *c) {
    uint32_t n = c->rslots;
    if (c->h < n) { fail(c, RI_ERR_INVALID, "operand stack underflow at return"); return; }
    uint32_t p;
    if (n == 0) {
        p = emit_op(c, RI_CODE_RETURN0, 1);
    } else if (n == 1) {
        const operand *e = &c->stack[c->h - 1];
        if (fuse_return(c, e)) return;
        if (from_last(c, e) && (c->nlocals > 0 || c->nconsts == 0)) {
            /* the last instruction's single result goes straight to fp[0], where the
             * caller expects it (as a local.set 0 would redirect it), and nothing moves */
            c->code[c->last.dst_pos] = 0;
            c->last.dst_pos = 0;
            emit_op(c, RI_CODE_RETURN0, 1);
            return;
        }
        uint32_t src = e->src;
        if (e->kind == ENTRY_IMM) { /* into the entry's own slot: the stack stays as it is */
            src = own_slot(c, c->h - 1);
            emit_const(c, src, e->bits);
        }
        p = emit1(c, RI_CODE_RETURN1, src);
    } else {
        for (uint32_t i = c->h - n; i < c->h; i++)
            if (c->stack[i].kind != ENTRY_SLOT) emit_copy(c, own_slot(c, i), &c->stack[i]);
        p = emit2(c, RI_CODE_RETURN_N, own_slot(c, c->h - n), n);
    }
    (void)p;
}

/* An unconditional branch to label `depth` (br, and the taken side of br_if). */
static void emit_branch(compiler *c, ctrl *l) {
    if (l->kind == CTRL_FUNC) { emit_return(c); return; }
    emit_copies(c, l);
    uint32_t p = emit1(c, RI_CODE_BR, 0);
    if (p != NO_POS) branch_to(c, l, p + 1);
}

/* ---- control stack ------------------------------------------------------------------- */

ctrl *push_ctrl(compiler *c, ctrl_kind kind, uint32_t nparams, uint32_t nresults) {
    if (c->failed) return NULL;
    if (c->h < nparams) { fail(c, RI_ERR_INVALID, "block parameters missing"); return NULL; }
    if (!grow_array(c, (void **)&c->ctrls, &c->ctrl_cap, (uint64_t)c->nctrl + 1, sizeof *c->ctrls)) return NULL;
    if (!grow_array(c, (void **)&c->stubs, &c->stubs_cap, c->ctrl_cap, sizeof *c->stubs)) return NULL;
    ctrl *l = &c->ctrls[c->nctrl++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->height = c->h - nparams;
    l->nparams = nparams;
    l->nresults = nresults;
    return l;
}

/* A block's params and results, in slots (a v128 takes two). */
bool block_arity(compiler *c, const ri_blocktype *bt, uint32_t *np, uint32_t *nr) {
    switch (bt->kind) {
    case RI_BLOCK_EMPTY: *np = 0; *nr = 0; return true;
    case RI_BLOCK_VALTYPE: *np = 0; *nr = valtype_slots(bt->valtype); return true;
    case RI_BLOCK_TYPEIDX: {
        if (bt->type_index >= c->m->ntypes) { fail(c, RI_ERR_INVALID, "unknown type"); return false; }
        const ri_type *t = &c->m->types[bt->type_index];
        *np = types_slots(t->params, t->nparams);
        *nr = types_slots(t->results, t->nresults);
        return true;
    }
    }
    return false;
}

/* Gives the block just pushed its value types (for reset_stack). */
void set_block_types(compiler *c, const ri_blocktype *bt) {
    if (c->failed || !c->nctrl) return;
    ctrl *l = &c->ctrls[c->nctrl - 1];
    if (bt->kind == RI_BLOCK_VALTYPE) {
        l->rtypes = single_valtype(bt->valtype);
        l->nrv = 1;
    } else if (bt->kind == RI_BLOCK_TYPEIDX) {
        const ri_type *t = &c->m->types[bt->type_index];
        l->ptypes = t->params;
        l->npv = t->nparams;
        l->rtypes = t->results;
        l->nrv = t->nresults;
    }
}

/* Makes the top `n` entries (a block's results or params) live in their own slots,
 * which are the label's slots. */
void materialise_top(compiler *c, uint32_t n) {
    for (uint32_t i = c->h - n; c->npending && i < c->h; i++) materialise(c, i);
}

/* Resets the stack to a label's state: everything above `height` gone, n values of
 * these types in their own slots. */
void reset_stack(compiler *c, uint32_t height, const uint8_t *types, uint32_t n) {
    drop_to(c, height);
    push_typed(c, types, n);
}

/* ---- v128: two slots (simd.h) ------------------------------------------------------------ */

static uint32_t valtype_slots(uint8_t t) { return t == RI_V128 ? 2u : 1u; }

static uint32_t types_slots(const uint8_t *types, uint32_t n) {
    uint32_t k = n;
    for (uint32_t i = 0; i < n; i++) k += types[i] == RI_V128;
    return k;
}

static const uint8_t *single_valtype(uint8_t t) {
    static const uint8_t all[] = {RI_I32, RI_I64, RI_F32, RI_F64, RI_V128, RI_FUNCREF, RI_EXTERNREF, RI_EXNREF};
    for (size_t i = 0; i < sizeof all; i++)
        if (all[i] == t) return &all[i];
    return &all[0];
}

/* Pushes n results of these types, each in its own slots. */
static void push_typed(compiler *c, const uint8_t *types, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        push_slot(c);
        if (types[i] == RI_V128 && !c->failed) { push_slot(c); c->stack[c->h - 1].hi = 1; }
    }
}

static uint8_t local_valtype(const compiler *c, uint32_t index) {
    return index < c->type->nparams ? c->type->params[index] : c->decl_types[index - c->type->nparams];
}

static bool local_is_v128(const compiler *c, uint32_t index) { return c->lslot && local_valtype(c, index) == RI_V128; }

static uint32_t local_slot(const compiler *c, uint32_t index) { return c->lslot ? c->lslot[index] : index; }

/* The slot counts of the function's values and, when it has a v128 local, each local's
 * first slot. */
static bool layout_locals(compiler *c, const ri_body *body) {
    const ri_type *t = c->type;
    c->decl_types = body->local_types;
    c->nlocal_vals = t->nparams + body->nlocals;
    c->pslots = types_slots(t->params, t->nparams);
    c->rslots = types_slots(t->results, t->nresults);
    c->dslots = body->nlocals ? types_slots(body->local_types, body->nlocals) : 0;
    bool wide = c->pslots != t->nparams || c->dslots != body->nlocals;
    if (!wide) {
        free(c->lslot);
        c->lslot = NULL;
        c->lslot_cap = 0;
        return true;
    }
    if (!grow_array(c, (void **)&c->lslot, &c->lslot_cap, c->nlocal_vals, sizeof *c->lslot)) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->nlocal_vals; i++) {
        c->lslot[i] = k;
        k += valtype_slots(local_valtype(c, i));
    }
    return true;
}

/* ---- instructions ---------------------------------------------------------------------- */

static void compile_br_if(compiler *c, uint32_t depth) {
    operand cond = pop(c);
    ri_code_op cmp = RI_CODE_BR_IF;
    uint32_t a = 0, b = 0;
    bool fused = take_compare(c, cond, &cmp, &a, &b);
    flush_all(c); /* the fall-through is a stop point */
    ctrl *l = label_at(c, depth);
    if (!l || c->failed) return;
    if (c->h < label_arity(l)) { fail(c, RI_ERR_INVALID, "branch values missing"); return; }
    if (l->kind != CTRL_FUNC && !needs_copies(c, l)) {
        uint32_t word = emit_cond_branch(c, cond, fused, cmp, a, b, false);
        branch_to(c, l, word);
    } else {
        uint32_t skip = emit_cond_branch(c, cond, fused, cmp, a, b, true);
        emit_branch(c, l);
        uint32_t here = start_region(c, RI_CODE_GAS, RI_POINT_GAS);
        bind_chain(c, skip == NO_POS ? 0 : skip + 1, here);
        return;
    }
    start_region(c, RI_CODE_GAS, RI_POINT_GAS);
}

static void compile_br_table(compiler *c, const ri_instr *in) {
    operand index = pop(c);
    uint32_t count = in->imm.br_table.count;
    if ((uint64_t)count + 3 > RI_MAX_CODE_WORDS) { fail(c, RI_ERR_LIMIT, "br_table too large"); return; }
    uint32_t index_slot = slot_of(c, index, c->h);
    uint32_t p = emit_op(c, RI_CODE_BR_TABLE, count + 4);
    if (p == NO_POS) return;
    c->code[p + 1] = index_slot;
    c->code[p + 2] = count;
    for (uint32_t d = 0; d < c->nctrl; d++) c->stubs[d] = NO_POS;
    ri_reader r;
    ri_reader_init(&r, c->m->bytes, in->imm.br_table.targets, c->body_end);
    /* First the labels reachable directly; the others get a stub with the copies. */
    for (uint32_t i = 0; i <= count && !c->failed; i++) {
        uint32_t depth = ri_read_u32(&r);
        if (r.failed) { fail(c, RI_ERR_MALFORMED, "bad br_table"); return; }
        ctrl *l = label_at(c, depth);
        if (!l) return;
        if (c->h < label_arity(l)) { fail(c, RI_ERR_INVALID, "branch values missing"); return; }
        uint32_t word = p + 3 + i;
        if (l->kind != CTRL_FUNC && !needs_copies(c, l)) {
            branch_to(c, l, word);
        } else {
            c->code[word] = depth; /* resolved below */
            c->stubs[depth] = 0;
        }
    }
    ri_reader_init(&r, c->m->bytes, in->imm.br_table.targets, c->body_end);
    for (uint32_t i = 0; i <= count && !c->failed; i++) {
        uint32_t depth = ri_read_u32(&r);
        ctrl *l = label_at(c, depth);
        if (!l) return;
        if (l->kind != CTRL_FUNC && !needs_copies(c, l)) continue;
        if (c->stubs[depth] == 0) {
            c->stubs[depth] = c->len;
            forget_emitted(c);
            emit_branch(c, l);
        }
        uint32_t word = p + 3 + i;
        set_word(c, word, (uint32_t)(int32_t)((int64_t)c->stubs[depth] - (int64_t)word));
    }
}

static void emit_call_gas(compiler *c);

static void compile_call(compiler *c, uint32_t func_index, bool indirect, uint32_t type_index,
                         uint32_t table_index) {
    const ri_module *m = c->m;
    const ri_type *t;
    if (indirect) {
        if (type_index >= m->ntypes) { fail(c, RI_ERR_INVALID, "unknown type"); return; }
        t = &m->types[type_index];
    } else {
        if (func_index >= m->nfuncs || m->func_types[func_index] >= m->ntypes) {
            fail(c, RI_ERR_INVALID, "unknown function");
            return;
        }
        t = &m->types[m->func_types[func_index]];
    }
    flush_all(c); /* arguments in place, and the caller waits at a stop point */
    uint32_t height = c->h;
    uint32_t need = types_slots(t->params, t->nparams) + (indirect ? 1u : 0u);
    if (c->h < need) { fail(c, RI_ERR_INVALID, "call arguments missing"); return; }
    uint32_t base = own_slot(c, c->h - need);
    uint32_t p;
    if (indirect) {
        p = emit_op(c, RI_CODE_CALL_INDIRECT, 5);
        if (p != NO_POS) {
            c->code[p + 1] = type_index;
            c->code[p + 2] = table_index;
            c->code[p + 3] = own_slot(c, c->h - 1);
            c->code[p + 4] = base;
        }
    } else if (func_index >= m->nfunc_imports) {
        p = emit2(c, RI_CODE_CALL_LOCAL, func_index - m->nfunc_imports, base);
    } else {
        p = emit2(c, RI_CODE_CALL, func_index, base);
    }
    add_point(c, p, RI_POINT_CALL, height);
    drop_to(c, c->h - need);
    push_typed(c, t->results, t->nresults);
    emit_call_gas(c);
}

/* A GAS follows every call: the return charges it (in unmetered code it costs 0).
 * It is a stop point in both: a host function may yield, and the caller then
 * suspends there, after the call. */
static void emit_call_gas(compiler *c) {
    if (c->metered) {
        c->call_gas_pos = start_region(c, RI_CODE_GAS, RI_POINT_GAS);
    } else {
        uint32_t g = emit1(c, RI_CODE_GAS, 0);
        uint32_t at = c->wasm_offset;
        c->wasm_offset = c->next_offset;
        add_point(c, g, RI_POINT_GAS, c->h);
        c->wasm_offset = at;
        start_region(c, RI_CODE_GAS, RI_POINT_GAS);
    }
}

/* return_call, return_call_indirect: the arguments in place as for a call; the handler
 * moves them down to the frame's base and enters the callee there, in this frame's place
 * (constant stack). A callee that is not WebAssembly code of a store's instance (a host
 * function) is called as by a call instead: its results come back to the GAS after it, and
 * a return passes them on. */
static void compile_return_call(compiler *c, uint32_t func_index, bool indirect, uint32_t type_index,
                                uint32_t table_index) {
    const ri_module *m = c->m;
    if (indirect ? type_index >= m->ntypes : func_index >= m->nfuncs || m->func_types[func_index] >= m->ntypes) {
        fail(c, RI_ERR_INVALID, indirect ? "unknown type" : "unknown function");
        return;
    }
    const ri_type *t = indirect ? &m->types[type_index] : &m->types[m->func_types[func_index]];
    flush_all(c);
    uint32_t height = c->h;
    uint32_t need = types_slots(t->params, t->nparams) + (indirect ? 1u : 0u);
    if (c->h < need) { fail(c, RI_ERR_INVALID, "call arguments missing"); return; }
    uint32_t base = own_slot(c, c->h - need);
    uint32_t p;
    c->tail_calls = true;
    if (indirect) {
        p = emit_op(c, RI_CODE_RETURN_CALL_INDIRECT, 5);
        if (p != NO_POS) {
            c->code[p + 1] = type_index;
            c->code[p + 2] = table_index;
            c->code[p + 3] = own_slot(c, c->h - 1);
            c->code[p + 4] = base;
        }
    } else {
        p = emit2(c, RI_CODE_RETURN_CALL, func_index, base);
    }
    add_point(c, p, RI_POINT_CALL, height);
    drop_to(c, c->h - need);
    push_typed(c, t->results, t->nresults);
    emit_call_gas(c);
    emit_return(c);
    c->ctrls[c->nctrl - 1].unreachable = true;
}

static void compile_local_set(compiler *c, uint32_t k, bool tee) {
    if (k >= c->nlocals) { fail(c, RI_ERR_INVALID, "unknown local"); return; }
    if (c->h == 0) { fail(c, RI_ERR_INVALID, "operand stack underflow"); return; }
    operand v = c->stack[c->h - 1];
    if (v.kind == ENTRY_LOCAL && v.src == k) { /* local.get k; local.set/tee k */
        if (!tee) pop(c);
        return;
    }
    if (is_const(&v) && v.bits == 0 && k >= c->pslots && !c->written[k] && c->loops == 0) {
        /* storing 0 into a declared local nothing wrote yet, outside any loop: it is
         * still 0 from function entry (C compilers emit these initialisations) */
        if (!tee) pop(c);
        return;
    }
    c->written[k] = 1;
    flush_local(c, k, c->h - 1);
    bool redirect = v.kind == ENTRY_SLOT && c->last.dst_pos && !c->failed &&
                    c->code[c->last.dst_pos] == v.src;
    if (redirect) {
        c->code[c->last.dst_pos] = k;
        c->last.dst_pos = 0;
    } else {
        emit_copy(c, k, &v); /* (a copy hoisted above the last instruction leaves its dst_pos) */
    }
    pop(c);
    if (tee) {
        if (redirect) push_entry(c, ENTRY_LOCAL, k);
        else push_operand(c, v);
    }
}

static void compile_load(compiler *c, ri_code_op op, const ri_instr *in) {
    operand addr = pop(c);
    if (fuse_load(c, op, addr, in->imm.mem.offset)) return;
    uint32_t a = slot_of(c, addr, c->h);
    if (fuse_load_pair(c, op, a, in->imm.mem.offset)) return;
    uint32_t p = emit3(c, op, own_slot(c, c->h), a, in->imm.mem.offset);
    add_point(c, p, RI_POINT_TRAP, c->h + 1);
    push_slot(c);
    note_dst(c, p);
}

static void compile_store(compiler *c, ri_code_op op, const ri_instr *in) {
    operand v = pop(c), addr = pop(c);
    if (fuse_store(c, op, addr, v, in->imm.mem.offset)) return;
    uint32_t a = slot_of(c, addr, c->h), b = slot_of(c, v, c->h + 1);
    uint32_t p = emit3(c, op, a, b, in->imm.mem.offset);
    add_point(c, p, RI_POINT_TRAP, c->h + 2);
}

static void compile_unary(compiler *c, ri_code_op op) {
    bool may_trap = ri_code_stop(op) == RI_STOP_TRAP;
    operand a = pop(c);
    uint32_t src = slot_of(c, a, c->h);
    uint32_t p = emit2(c, op, own_slot(c, c->h), src);
    if (may_trap) add_point(c, p, RI_POINT_TRAP, c->h + 1);
    push_slot(c);
    note_dst(c, p);
}

static void compile_binary(compiler *c, ri_code_op op) {
    bool may_trap = ri_code_stop(op) == RI_STOP_TRAP;
    operand b = pop(c), a = pop(c);
    if (fuse_binary(c, op, a, b)) return;
    uint32_t sa = slot_of(c, a, c->h), sb = slot_of(c, b, c->h + 1);
    uint32_t p = emit3(c, op, own_slot(c, c->h), sa, sb);
    if (may_trap) add_point(c, p, RI_POINT_TRAP, c->h + 2);
    push_slot(c);
    note_dst(c, p);
}


/* Memory, table and bulk instructions: pops `nin` operands, emits op with the
 * immediates first (or last) and the operands (bottom first), pushes a result if
 * `result`; op's stop point, if any, is its table's (TRAP or BULK). Bulk instructions
 * charge gas as they run, so they are stop points where every operand is materialised. */
static void compile_generic(compiler *c, ri_code_op op, const uint32_t *imms, uint32_t nimm,
                            uint32_t nin, bool result, bool imms_last) {
    uint32_t stop = ri_code_stop(op);
    uint32_t words[8];
    operand ins[4];
    if (stop == RI_STOP_BULK) flush_all(c);
    for (uint32_t i = nin; i-- > 0;) ins[i] = pop(c);
    uint32_t n = 0;
    if (result) words[n++] = own_slot(c, c->h);
    if (!imms_last) for (uint32_t i = 0; i < nimm; i++) words[n++] = imms[i];
    for (uint32_t i = 0; i < nin; i++) words[n++] = slot_of(c, ins[i], c->h + i);
    if (imms_last) for (uint32_t i = 0; i < nimm; i++) words[n++] = imms[i];
    uint32_t p = emit_op(c, op, n + 1);
    if (p == NO_POS) return;
    memcpy(&c->code[p + 1], words, n * sizeof *words);
    if (stop != RI_STOP_NONE) add_point(c, p, (ri_point_kind)(stop - 1), c->h + nin);
    if (result) { push_slot(c); note_dst(c, p); }
}

/* Memory 0 when it is 32-bit: its instructions are the fast operations (cached base and
 * bounds, fusions); any other memory's go through the general ones (code.h, *_G). */
bool fast_memory(const ri_module *m, uint32_t memidx) {
    return memidx == 0 && m->nmemories && !m->memories[0].is64;
}

/* A load or store of the general form: opcode, memory and the 64-bit offset last. */
static void compile_memory_g(compiler *c, const ri_instr *in, bool store) {
    if (in->imm.mem.memidx >= c->m->nmemories) { fail(c, RI_ERR_INVALID, "unknown memory"); return; }
    uint32_t imms[4] = {(uint8_t)in->op, in->imm.mem.memidx, (uint32_t)in->imm.mem.offset,
                        (uint32_t)(in->imm.mem.offset >> 32)};
    if (store) compile_generic(c, RI_CODE_MEM_STORE_G, imms, 4, 2, false, true);
    else compile_generic(c, RI_CODE_MEM_LOAD_G, imms, 4, 1, true, true);
}

/* ---- structured control ------------------------------------------------------------------ */

void compile_end(compiler *c) {
    ctrl *l = &c->ctrls[c->nctrl - 1];
    bool reachable = !l->unreachable;
    if (l->kind == CTRL_FUNC) {
        if (reachable) emit_return(c);
        end_region(c);
        if (l->catch_targets) emit_catch_return(c);
        c->nctrl--;
        return;
    }
    if (reachable) materialise_top(c, l->nresults);
    if (l->kind == CTRL_TRY || l->kind == CTRL_CATCH) end_try(c, l);
    if (l->kind == CTRL_TRY_TABLE) c->tries[l->try_index].end = c->len;
    ctrl done = *l;
    c->nctrl--;
    reset_stack(c, done.height, done.rtypes, done.nrv);
    if (done.kind == CTRL_LOOP) {
        c->loops--;
        if (!reachable) c->ctrls[c->nctrl - 1].unreachable = true;
        return;
    }
    bool used = done.fixups || done.else_fixups || done.catch_targets;
    if (used) {
        uint32_t here = start_region(c, RI_CODE_GAS, RI_POINT_GAS);
        bind_chain(c, done.fixups, here);
        bind_chain(c, done.else_fixups, here);
        if (done.catch_targets) bind_catch_targets(c, c->nctrl, here);
    } else if (!reachable) {
        c->ctrls[c->nctrl - 1].unreachable = true;
    }
}

static void compile_else(compiler *c) {
    ctrl *l = &c->ctrls[c->nctrl - 1];
    if (l->kind != CTRL_IF) { fail(c, RI_ERR_INVALID, "else without if"); return; }
    if (!l->unreachable) {
        materialise_top(c, l->nresults);
        uint32_t p = emit1(c, RI_CODE_BR, 0);
        if (p != NO_POS) branch_to(c, l, p + 1);
    }
    reset_stack(c, l->height, l->ptypes, l->npv);
    uint32_t here = start_region(c, RI_CODE_GAS, RI_POINT_GAS);
    l = &c->ctrls[c->nctrl - 1];
    bind_chain(c, l->else_fixups, here);
    l->else_fixups = 0;
    l->kind = CTRL_ELSE;
    l->unreachable = false;
}

static void compile_if(compiler *c, const ri_blocktype *bt) {
    uint32_t np, nr;
    if (!block_arity(c, bt, &np, &nr)) return;
    operand cond = pop(c);
    ri_code_op cmp = RI_CODE_BR_IF;
    uint32_t a = 0, b = 0;
    bool fused = take_compare(c, cond, &cmp, &a, &b);
    flush_all(c);
    ctrl *l = push_ctrl(c, CTRL_IF, np, nr);
    if (!l) return;
    set_block_types(c, bt);
    uint32_t word = emit_cond_branch(c, cond, fused, cmp, a, b, true);
    l = &c->ctrls[c->nctrl - 1];
    if (word != NO_POS) { c->code[word] = 0; l->else_fixups = word + 1; }
    start_region(c, RI_CODE_GAS, RI_POINT_GAS);
}

/* ---- the body -------------------------------------------------------------------------------- */

static void compile_instr(compiler *c, const ri_instr *in) {
    const ri_module *m = c->m;
    uint16_t op = in->op;
    if (RI_IS_FD(op)) { compile_simd(c, in); return; }
    switch (op) {
    case RI_OP_UNREACHABLE: {
        uint32_t p = emit_op(c, RI_CODE_UNREACHABLE, 1);
        add_point(c, p, RI_POINT_TRAP, c->h);
        c->ctrls[c->nctrl - 1].unreachable = true;
        return;
    }
    case RI_OP_NOP: return;
    case RI_OP_BLOCK: case RI_OP_LOOP: {
        uint32_t np, nr;
        if (!block_arity(c, &in->imm.block, &np, &nr)) return;
        flush_all(c);
        ctrl *l = push_ctrl(c, op == RI_OP_LOOP ? CTRL_LOOP : CTRL_BLOCK, np, nr);
        if (!l) return;
        set_block_types(c, &in->imm.block);
        if (op == RI_OP_LOOP) {
            uint32_t pos = start_region(c, c->metered ? RI_CODE_LOOP : RI_CODE_LOOP_U, RI_POINT_LOOP);
            c->ctrls[c->nctrl - 1].loop_pos = pos;
            c->loops++;
        }
        return;
    }
    case RI_OP_IF: compile_if(c, &in->imm.block); return;
    case RI_OP_TRY: compile_try(c, &in->imm.block); return;
    case RI_OP_TRY_TABLE: compile_try_table(c, in); return;
    case RI_OP_THROW_REF: compile_throw_ref(c); return;
    case RI_OP_CATCH: case RI_OP_CATCH_ALL: compile_catch(c, in); return;
    case RI_OP_DELEGATE: compile_delegate(c, in->imm.index); return;
    case RI_OP_THROW: compile_throw(c, in->imm.index); return;
    case RI_OP_RETHROW: compile_rethrow(c, in->imm.index); return;
    case RI_OP_ELSE: compile_else(c); return;
    case RI_OP_END: compile_end(c); return;
    case RI_OP_BR: {
        ctrl *l = label_at(c, in->imm.index);
        if (!l) return;
        if (c->h < label_arity(l)) { fail(c, RI_ERR_INVALID, "branch values missing"); return; }
        emit_branch(c, l);
        c->ctrls[c->nctrl - 1].unreachable = true;
        return;
    }
    case RI_OP_BR_IF: compile_br_if(c, in->imm.index); return;
    case RI_OP_BR_TABLE:
        compile_br_table(c, in);
        c->ctrls[c->nctrl - 1].unreachable = true;
        return;
    case RI_OP_RETURN:
        emit_return(c);
        c->ctrls[c->nctrl - 1].unreachable = true;
        return;
    case RI_OP_CALL: compile_call(c, in->imm.index, false, 0, 0); return;
    case RI_OP_CALL_INDIRECT:
        if (in->imm.call_indirect.table_index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_call(c, 0, true, in->imm.call_indirect.type_index, in->imm.call_indirect.table_index);
        return;
    case RI_OP_RETURN_CALL: compile_return_call(c, in->imm.index, false, 0, 0); return;
    case RI_OP_RETURN_CALL_INDIRECT:
        if (in->imm.call_indirect.table_index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_return_call(c, 0, true, in->imm.call_indirect.type_index, in->imm.call_indirect.table_index);
        return;
    case RI_OP_DROP: if (pop(c).hi) pop(c); return; /* a v128: both slots */
    case RI_OP_SELECT: case RI_OP_SELECT_T: {
        if (c->h >= 2 && c->stack[c->h - 2].hi) { compile_select_v128(c); return; }
        operand cond = pop(c), b = pop(c), a = pop(c);
        uint32_t sa = slot_of(c, a, c->h), sb = slot_of(c, b, c->h + 1), sc = slot_of(c, cond, c->h + 2);
        uint32_t p = emit4(c, RI_CODE_SELECT, own_slot(c, c->h), sa, sb, sc);
        push_slot(c);
        note_dst(c, p);
        return;
    }
    case RI_OP_LOCAL_GET: {
        if (in->imm.index >= c->nlocal_vals) { fail(c, RI_ERR_INVALID, "unknown local"); return; }
        uint32_t k = local_slot(c, in->imm.index);
        push_entry(c, ENTRY_LOCAL, k);
        if (local_is_v128(c, in->imm.index)) { push_entry(c, ENTRY_LOCAL, k + 1); c->stack[c->h - 1].hi = 1; }
        return;
    }
    case RI_OP_LOCAL_SET: case RI_OP_LOCAL_TEE:
        if (in->imm.index >= c->nlocal_vals) { fail(c, RI_ERR_INVALID, "unknown local"); return; }
        if (local_is_v128(c, in->imm.index))
            compile_local_set_v128(c, local_slot(c, in->imm.index), op == RI_OP_LOCAL_TEE);
        else
            compile_local_set(c, local_slot(c, in->imm.index), op == RI_OP_LOCAL_TEE);
        return;
    case RI_OP_GLOBAL_GET: {
        if (in->imm.index >= m->nglobals) { fail(c, RI_ERR_INVALID, "unknown global"); return; }
        if (m->global_types[in->imm.index].type == RI_V128) { compile_global_v128(c, in->imm.index, false); return; }
        uint32_t p = emit2(c, RI_CODE_GLOBAL_GET, own_slot(c, c->h), in->imm.index);
        push_slot(c);
        note_dst(c, p);
        return;
    }
    case RI_OP_GLOBAL_SET: {
        if (in->imm.index >= m->nglobals) { fail(c, RI_ERR_INVALID, "unknown global"); return; }
        if (m->global_types[in->imm.index].type == RI_V128) { compile_global_v128(c, in->imm.index, true); return; }
        operand v = pop(c);
        uint32_t src = slot_of(c, v, c->h);
        emit2(c, RI_CODE_GLOBAL_SET, in->imm.index, src);
        return;
    }
    case RI_OP_TABLE_GET: {
        if (in->imm.index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_generic(c, RI_CODE_TABLE_GET, &in->imm.index, 1, 1, true, true);
        return;
    }
    case RI_OP_TABLE_SET:
        if (in->imm.index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_generic(c, RI_CODE_TABLE_SET, &in->imm.index, 1, 2, false, false);
        return;
    case RI_OP_MEMORY_SIZE:
    case RI_OP_MEMORY_GROW:
        if (m->nmemories == 0) { fail(c, RI_ERR_INVALID, "unknown memory"); return; }
        if (!fast_memory(m, in->memidx[0])) {
            if (op == RI_OP_MEMORY_SIZE) compile_generic(c, RI_CODE_MEMORY_SIZE_G, in->memidx, 1, 0, true, true);
            else compile_generic(c, RI_CODE_MEMORY_GROW_G, in->memidx, 1, 1, true, true);
            return;
        }
        if (op == RI_OP_MEMORY_SIZE) compile_generic(c, RI_CODE_MEMORY_SIZE, NULL, 0, 0, true, false);
        else compile_generic(c, RI_CODE_MEMORY_GROW, NULL, 0, 1, true, false);
        return;
    case RI_OP_I32_CONST: push_const(c, (uint32_t)in->imm.i32); return;
    case RI_OP_I64_CONST: push_const(c, (uint64_t)in->imm.i64); return;
    case RI_OP_F32_CONST: push_const(c, in->imm.f32_bits); return;
    case RI_OP_F64_CONST: push_const(c, in->imm.f64_bits); return;
    case RI_OP_REF_NULL: push_const(c, 0); return;
    case RI_OP_REF_IS_NULL: compile_unary(c, RI_CODE_REF_IS_NULL); return;
    case RI_OP_REF_FUNC: {
        if (in->imm.index >= m->nfuncs) { fail(c, RI_ERR_INVALID, "unknown function"); return; }
        uint32_t p = emit2(c, RI_CODE_REF_FUNC, own_slot(c, c->h), in->imm.index);
        push_slot(c);
        note_dst(c, p);
        return;
    }

#define RI_X_MEM(name, byte, t, n, st) \
    case RI_OP_##name: \
        if (m->nmemories == 0) { fail(c, RI_ERR_INVALID, "unknown memory"); return; } \
        if (!fast_memory(m, in->imm.mem.memidx)) { compile_memory_g(c, in, st); return; } \
        if (st) compile_store(c, RI_CODE_##name, in); else compile_load(c, RI_CODE_##name, in); \
        return;
    RI_MEMORY_OPS(RI_X_MEM)
#undef RI_X_MEM

#define RI_X_NUM(name, byte, a, b, r) \
    case RI_OP_##name: \
        if (RI_T_##b) compile_binary(c, RI_CODE_##name); \
        else compile_unary(c, RI_CODE_##name); \
        return;
    RI_NUMERIC_OPS(RI_X_NUM)
#undef RI_X_NUM

#define RI_X_SAT(name, sub, a, b, r) case RI_FC(sub): compile_unary(c, RI_CODE_##name); return;
    RI_SAT_OPS(RI_X_SAT)
#undef RI_X_SAT

    case RI_FC(RI_FC_MEMORY_INIT):
        if (m->nmemories == 0 || in->imm.index >= m->ndatas) { fail(c, RI_ERR_INVALID, "unknown data segment"); return; }
        if (!fast_memory(m, in->memidx[0])) {
            uint32_t imms[2] = {in->imm.index, in->memidx[0]};
            compile_generic(c, RI_CODE_MEMORY_INIT_G, imms, 2, 3, false, false);
            return;
        }
        compile_generic(c, RI_CODE_MEMORY_INIT, &in->imm.index, 1, 3, false, false);
        return;
    case RI_FC(RI_FC_DATA_DROP):
        if (in->imm.index >= m->ndatas) { fail(c, RI_ERR_INVALID, "unknown data segment"); return; }
        compile_generic(c, RI_CODE_DATA_DROP, &in->imm.index, 1, 0, false, false);
        return;
    case RI_FC(RI_FC_MEMORY_COPY):
    case RI_FC(RI_FC_MEMORY_FILL):
        if (m->nmemories == 0) { fail(c, RI_ERR_INVALID, "unknown memory"); return; }
        if (!fast_memory(m, in->memidx[0]) || (op == RI_FC(RI_FC_MEMORY_COPY) && !fast_memory(m, in->memidx[1]))) {
            if (op == RI_FC(RI_FC_MEMORY_COPY)) compile_generic(c, RI_CODE_MEMORY_COPY_G, in->memidx, 2, 3, false, false);
            else compile_generic(c, RI_CODE_MEMORY_FILL_G, in->memidx, 1, 3, false, false);
            return;
        }
        compile_generic(c, op == RI_FC(RI_FC_MEMORY_COPY) ? RI_CODE_MEMORY_COPY : RI_CODE_MEMORY_FILL,
                        NULL, 0, 3, false, false);
        return;
    case RI_FC(RI_FC_TABLE_INIT): {
        if (in->imm.pair.a >= m->nelems || in->imm.pair.b >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table or segment"); return; }
        uint32_t imms[2] = {in->imm.pair.a, in->imm.pair.b};
        compile_generic(c, RI_CODE_TABLE_INIT, imms, 2, 3, false, false);
        return;
    }
    case RI_FC(RI_FC_ELEM_DROP):
        if (in->imm.index >= m->nelems) { fail(c, RI_ERR_INVALID, "unknown element segment"); return; }
        compile_generic(c, RI_CODE_ELEM_DROP, &in->imm.index, 1, 0, false, false);
        return;
    case RI_FC(RI_FC_TABLE_COPY): {
        if (in->imm.pair.a >= m->ntables || in->imm.pair.b >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        uint32_t imms[2] = {in->imm.pair.a, in->imm.pair.b};
        compile_generic(c, RI_CODE_TABLE_COPY, imms, 2, 3, false, false);
        return;
    }
    case RI_FC(RI_FC_TABLE_GROW):
        if (in->imm.index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_generic(c, RI_CODE_TABLE_GROW, &in->imm.index, 1, 2, true, true);
        return;
    case RI_FC(RI_FC_TABLE_SIZE):
        if (in->imm.index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_generic(c, RI_CODE_TABLE_SIZE, &in->imm.index, 1, 0, true, false);
        return;
    case RI_FC(RI_FC_TABLE_FILL):
        if (in->imm.index >= m->ntables) { fail(c, RI_ERR_INVALID, "unknown table"); return; }
        compile_generic(c, RI_CODE_TABLE_FILL, &in->imm.index, 1, 3, false, false);
        return;
    default:
        fail(c, RI_ERR_INVALID, "unsupported instruction");
        return;
    }
}

/* Dead code (after br, br_table, return, unreachable) is skipped up to the end or
 * else of its block; only the block structure inside it is followed. */
static void skip_dead(compiler *c, const ri_instr *in) {
    switch (in->op) {
    case RI_OP_BLOCK: case RI_OP_LOOP: case RI_OP_IF: case RI_OP_TRY: case RI_OP_TRY_TABLE: c->dead_depth++; return;
    case RI_OP_END:
        if (c->dead_depth) { c->dead_depth--; return; }
        compile_end(c);
        return;
    case RI_OP_DELEGATE:
        if (c->dead_depth) { c->dead_depth--; return; }
        compile_delegate(c, in->imm.index);
        return;
    case RI_OP_CATCH: case RI_OP_CATCH_ALL:
        if (c->dead_depth) return;
        compile_catch(c, in);
        return;
    case RI_OP_ELSE:
        if (c->dead_depth) return;
        compile_else(c);
        return;
    default: return;
    }
}

#if RI_ASSERTS_ON
/* Invariant 13: the table (code_info.h) describes the code compiled: the instructions
 * follow one another by the table's sizes, and the stop points are exactly those the table
 * gives their operations (every TRAP, CALL, BULK, ENTRY and LOOP instruction has its point,
 * a TRAP2 one a second TRAP point at + 3; a GAS may have none: the GAS 0 after a call in
 * unmetered code). */
static void check_against_table(const compiler *c) {
    uint32_t next_point = 0;
    for (uint32_t pos = 0; pos < c->len;) {
        uint32_t op = c->opmap[pos];
        RI_ASSERT(op < RI_CODE_OP_COUNT, "I13");
        uint32_t words = op == RI_CODE_ENTRY ? 5 + 2 * c->code[pos + 4]
                       : op == RI_CODE_BR_TABLE ? c->code[pos + 2] + 4 : ri_code_words(op);
        RI_ASSERT(words > 0 && pos + words <= c->len, "I13");
        for (uint32_t k = 1; k < words; k++) RI_ASSERT(c->opmap[pos + k] == NO_OP, "I13");
        uint32_t stop = ri_code_stop(ri_code_infos[op].base);
        bool has = next_point < c->npoints && c->points[next_point].pos == pos;
        RI_ASSERT(has ? c->points[next_point].kind + 1 == stop : stop == RI_STOP_NONE || stop == RI_STOP_GAS, "I13");
        if (has) next_point++;
        bool second = next_point < c->npoints && c->points[next_point].pos == pos + 3 && words > 3;
        RI_ASSERT(second == ((ri_code_flags(op) & RI_OPF_TRAP2) != 0), "I13");
        if (second) RI_ASSERT(c->points[next_point++].kind == RI_POINT_TRAP, "I13");
        RI_ASSERT(next_point >= c->npoints || c->points[next_point].pos >= pos + words, "I13");
        pos += words;
    }
    RI_ASSERT(next_point == c->npoints, "I13");
}
#endif

static ri_code *compile_function(compiler *c, uint32_t body_index) {
    const ri_module *m = c->m;
    const ri_body *body = &m->bodies[body_index];
    c->func_index = m->nfunc_imports + body_index;
    c->wasm_offset = body->code.offset;
    if (c->func_index >= m->nfuncs || m->func_types[c->func_index] >= m->ntypes) {
        fail(c, RI_ERR_INVALID, "function without a type");
        return NULL;
    }
    c->type = &m->types[m->func_types[c->func_index]];
    if ((uint64_t)body->code.offset + body->code.len > m->size) {
        fail(c, RI_ERR_MALFORMED, "body outside the module");
        return NULL;
    }
    const uint8_t *start = m->bytes + body->code.offset;
    c->body_end = start + body->code.len;
    uint64_t nlocals = (uint64_t)c->type->nparams + body->nlocals;
    if (nlocals > UINT32_MAX / 4) { fail(c, RI_ERR_LIMIT, "too many locals"); return NULL; }
    if (!layout_locals(c, body)) return NULL;
    c->nlocals = c->pslots + c->dslots;
    c->nconsts = 0;
    bool has_try = collect_consts(c, start, c->body_end);
    c->exn_base = c->nlocals + c->nconsts;
    c->nexn = has_try ? count_exn_slots(c, start, c->body_end) : 0;
    c->exn_depth = 0;
    c->ntries = c->ncatches = 0;
    c->tail_calls = false;
    c->stack_base = c->exn_base + c->nexn;

    c->len = 0;
    c->npoints = 0;
    c->njumps = 0;
    c->h = c->max_h = 0;
    c->npending = 0;
    c->nctrl = 0;
    c->dead_depth = 0;
    c->call_gas_pos = NO_POS;
    c->loops = 0;
    if (!grow_array(c, (void **)&c->written, &c->written_cap, c->nlocals, 1)) return NULL;
    if (c->nlocals) memset(c->written, 0, c->nlocals);
    forget_emitted(c);

    /* ENTRY: cost, first declared local, count, pool size, pool. */
    uint32_t p = emit_op(c, RI_CODE_ENTRY, 5 + 2 * c->nconsts);
    if (p == NO_POS) return NULL;
    c->code[p + 2] = c->pslots;
    c->code[p + 3] = c->dslots;
    c->code[p + 4] = c->nconsts;
    for (uint32_t i = 0; i < c->nconsts; i++) {
        c->code[p + 5 + 2 * i] = (uint32_t)c->consts[i];
        c->code[p + 6 + 2 * i] = (uint32_t)(c->consts[i] >> 32);
    }
    add_point(c, p, RI_POINT_ENTRY, 0);
    c->gas_pos = c->metered ? p + 1 : 0;
    c->gas_count = 0;
    forget_emitted(c);
    push_ctrl(c, CTRL_FUNC, 0, c->rslots);
    if (c->nctrl) { c->ctrls[0].rtypes = c->type->results; c->ctrls[0].nrv = c->type->nresults; }

    ri_reader r;
    ri_reader_init(&r, m->bytes, start, c->body_end);
    ri_instr in;
    while (c->nctrl && !c->failed) {
        if (!ri_read_instr(&r, &in)) {
            c->wasm_offset = r.error_offset;
            fail(c, RI_ERR_MALFORMED, r.error ? r.error : "bad instruction");
            break;
        }
        c->wasm_offset = in.offset;
        c->next_offset = ri_reader_offset(&r);
        if (c->ctrls[c->nctrl - 1].unreachable) { skip_dead(c, &in); continue; }
        c->gas_count++;
        compile_instr(c, &in);
    }
    if (c->failed) return NULL;
    if (c->nctrl) { fail(c, RI_ERR_MALFORMED, "body ends inside a block"); return NULL; }
    choose_branch_variants(c);
    if (fuse_on(c, RI_FUSE_ACCUMULATOR)) choose_acc_variants(c);
    if (c->failed) return NULL; /* (an internal error or no memory in either pass) */
#if RI_ASSERTS_ON
    check_against_table(c);
#endif

    ri_code *code = calloc(1, sizeof *code);
    if (!code) { fail(c, RI_ERR_NOMEM, "out of memory"); return NULL; }
    code->func_index = c->func_index;
    code->nparams = c->pslots;
    code->nresults = c->rslots;
    code->nlocals = c->nlocals;
    code->nconsts = c->nconsts;
    code->stack_base = c->stack_base;
    uint64_t frame = (uint64_t)c->stack_base + c->max_h;
    if (frame < code->nresults) frame = code->nresults;
    if (c->nconsts == 0 && c->dslots <= 8) { /* ENTRY_Z* zero 0, 4 or 8 slots after the parameters */
        uint32_t zeroed = c->dslots == 0 ? 0 : c->dslots <= 4 ? 4 : 8;
        ri_code_op entry = zeroed == 0 ? (c->metered ? RI_CODE_ENTRY_Z0 : RI_CODE_ENTRY_Z0U)
                         : zeroed == 4 ? (c->metered ? RI_CODE_ENTRY_Z4 : RI_CODE_ENTRY_Z4U)
                                       : (c->metered ? RI_CODE_ENTRY_Z : RI_CODE_ENTRY_ZU);
        c->code[0] = (uint32_t)c->dispatch[entry];
        if (frame < (uint64_t)c->pslots + zeroed) frame = (uint64_t)c->pslots + zeroed;
    }
    if (frame > UINT32_MAX / 2) { free(code); fail(c, RI_ERR_LIMIT, "frame too large"); return NULL; }
    code->frame_slots = (uint32_t)frame;
    code->metered = c->metered;
    code->tail_calls = c->tail_calls;
    code->exn_base = c->exn_base;
    code->nexn = c->nexn;
    code->ntries = c->ntries;
    code->ncatches = c->ncatches;
    if (c->ntries) {
        code->tries = malloc((size_t)c->ntries * sizeof *code->tries);
        if (code->tries) memcpy(code->tries, c->tries, (size_t)c->ntries * sizeof *code->tries);
    }
    if (c->ncatches) {
        code->catches = malloc((size_t)c->ncatches * sizeof *code->catches);
        if (code->catches) memcpy(code->catches, c->catches, (size_t)c->ncatches * sizeof *code->catches);
    }
    if ((c->ntries && !code->tries) || (c->ncatches && !code->catches)) {
        ri_code_free(code);
        fail(c, RI_ERR_NOMEM, "out of memory");
        return NULL;
    }
    code->nwords = c->len;
    code->words = malloc((size_t)c->len * sizeof *code->words);
    code->npoints = c->npoints;
    code->points = malloc((size_t)(c->npoints ? c->npoints : 1) * sizeof *code->points);
    if (!code->words || !code->points) {
        ri_code_free(code);
        fail(c, RI_ERR_NOMEM, "out of memory");
        return NULL;
    }
    memcpy(code->words, c->code, (size_t)c->len * sizeof *code->words);
    if (c->npoints) memcpy(code->points, c->points, (size_t)c->npoints * sizeof *code->points);
#if RI_ASSERTS_ON
    if (c->verifier) ri_code_assert_valid(c->verifier, code); /* invariant 15 (code_verify.c) */
#endif
    return code;
}

ri_errcode ri_compile_module(ri_module *m, ri_error *err) {
    m->codes = NULL;
    if (m->nbodies == 0) return RI_OK;
    ri_code **codes = calloc(m->nbodies, sizeof *codes);
    if (!codes) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory compiling the module");
        return RI_ERR_NOMEM;
    }
    compiler c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.err = err;
    c.dispatch = ri_interp_dispatch_table();
    c.metered = !m->config.unmetered;
    c.fusions_off = m->config.fusions_off;
    index_acc_variants(&c);
    index_fuse_rules(&c);
#if RI_ASSERTS_ON
    c.verifier = ri_code_verifier_new(c.dispatch, m); /* once for all the bodies (NULL: out of memory, unchecked) */
#endif
    ri_errcode rc = RI_OK;
    for (uint32_t i = 0; i < m->nbodies; i++) {
        codes[i] = compile_function(&c, i);
        if (!codes[i]) {
            rc = err ? err->code : RI_ERR_INVALID;
            if (rc == RI_OK) rc = RI_ERR_INVALID;
            break;
        }
    }
    free(c.code);
    free(c.opmap);
    free(c.written);
    free(c.lslot);
    free(c.points);
    free(c.jumps);
    free(c.stack);
    free(c.ctrls);
    free(c.stubs);
    free(c.landing);
    free(c.tries);
    free(c.catches);
    free(c.nest);
    ri_code_verifier_free(c.verifier);
    if (rc != RI_OK) {
        for (uint32_t i = 0; i < m->nbodies; i++) ri_code_free(codes[i]);
        free(codes);
        return rc;
    }
    m->codes = codes;
    return RI_OK;
}

void ri_code_free(ri_code *code) {
    if (!code) return;
    free(code->words);
    free(code->points);
    free(code->tries);
    free(code->catches);
    free(code);
}

const ri_code_point *ri_code_find_point(const ri_code *code, uint32_t pos) {
    uint32_t lo = 0, hi = code->npoints;
    while (lo < hi) { /* first point with pos > target */
        uint32_t mid = lo + (hi - lo) / 2;
        if (code->points[mid].pos <= pos) lo = mid + 1;
        else hi = mid;
    }
    return lo ? &code->points[lo - 1] : NULL;
}
