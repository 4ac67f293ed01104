/*
 * The compiler's arithmetic fusions (code.h, "Superinstructions"): constant operands as
 * immediates (and x + 0 as x), then the rules of fuse_rules.c for binary operations (int,
 * int-imm and float pairs, f64 arithmetic on a load) and return a + b;
 * here the two that are not rules: sink_f64_load, which moves a load past the arithmetic
 * after it, and unpair, which splits an I32_ADD_I2. The translation (compile.c) calls
 * fuse_binary and fuse_return.
 */
#include <string.h>

#include "compile_internal.h"

/* The immediate form (NAME_I) of binary operation op, or RI_CODE_OP_COUNT. */
static ri_code_op imm_form(ri_code_op op) { return ri_code_form(op, RI_REL_IMM); }

/* Whether constant `bits` can be op's immediate (i64: sign-extended from 32 bits). */
bool imm_fits(ri_code_op op, uint64_t bits) {
    if (imm_form(op) == RI_CODE_OP_COUNT) return false;
    return !is_i64_op(op) || (int64_t)bits == (int64_t)(int32_t)(uint32_t)bits;
}

/* Whether op with immediate second operand `bits` leaves its first operand unchanged
 * (x + 0, x * 1, x & ~0, x << 0, ...): then it needs no code at all. */
static bool imm_is_identity(ri_code_op op, uint64_t bits) {
    ri_code_op imm = imm_form(op);
    if (imm == RI_CODE_OP_COUNT) return false;
    uint64_t ones = is_i64_op(op) ? UINT64_MAX : UINT32_MAX;
    switch (ri_code_infos[imm].ident) { /* code.h, RI_CODE_IMM_OPS's IDENTITY */
    case RI_IDENT_ZERO: return bits == 0;
    case RI_IDENT_ONE: return bits == 1;
    case RI_IDENT_ONES: return bits == ones;
    case RI_IDENT_SHIFT0: return (bits & (is_i64_op(op) ? 63 : 31)) == 0;
    default: return false;
    }
}

/* Splits a last I32_ADD_I2 back into its two I32_ADD_I, so that the second can be fused
 * into what consumes it. */
void unpair(compiler *c) {
    if (c->last.op != RI_CODE_I32_ADD_I2 || c->last.pos == NO_POS || c->failed) return;
    uint32_t w[6];
    memcpy(w, &c->code[c->last.pos + 1], sizeof w);
    bool second_is_result = c->last.dst_pos == c->last.pos + 4;
    truncate_code(c, c->last.pos);
    emit3(c, RI_CODE_I32_ADD_I, w[0], w[1], w[2]);
    uint32_t p = emit3(c, RI_CODE_I32_ADD_I, w[3], w[4], w[5]);
    if (second_is_result) note_dst(c, p);
}

/* Whether op only computes its f64 result from slots: it cannot trap, and writes
 * nothing but its result. */
static bool is_pure_f64(ri_code_op op) { return (ri_code_flags(op) & RI_OPF_PURE_F64) != 0; }

/* a = f64.load [addr + off] just before the pure f64 arithmetic that computed b, then
 * a op b: the load moves past that arithmetic and fuses into op (NAME_LA), so that a
 * store of the result back to [addr + off] becomes a read-modify-write (NAME_MA). The
 * load's stop point moves with it: nothing between can trap or write memory, and the
 * arithmetic neither reads the load's result nor writes its address (b's slot lies
 * above both). */
static bool sink_f64_load(compiler *c, ri_code_op la, operand a, operand b) {
    if (a.kind != ENTRY_SLOT || !from_last(c, &b) || !is_pure_f64(c->last.op) || c->prev.pos == NO_POS ||
        c->prev.op != RI_CODE_F64_LOAD || c->prev.pos + 4 != c->last.pos || !c->prev.dst_pos ||
        c->code[c->prev.dst_pos] != a.src || c->len - c->last.pos > 8 ||
        (c->npoints && c->points[c->npoints - 1].pos == c->last.pos))
        return false;
    uint32_t addr = c->code[c->prev.pos + 2], off = c->code[c->prev.pos + 3];
    ri_code_op mid = c->last.op;
    uint32_t n = c->len - c->last.pos, w[8];
    memcpy(w, &c->code[c->last.pos], n * sizeof *w);
    bool had = c->npoints && c->points[c->npoints - 1].pos == c->prev.pos;
    ri_code_point pt = had ? c->points[c->npoints - 1] : (ri_code_point){0, 0, 0, 0};
    /* the instruction before the load stays the one before the arithmetic: a rule of the
     * store that follows may absorb it too (F64_ADD_MM_MA_P: its address's I32_ADD_I) */
    emitted none = {NO_POS, RI_CODE_OP_COUNT, 0};
    emitted before = c->prev2.pos != NO_POS && c->prev2.pos < c->prev.pos ? c->prev2 : none;
    truncate_code(c, c->prev.pos);
    c->last = before; /* truncate_code forgot it */
    uint32_t q = emit_op(c, mid, n);
    if (q == NO_POS) return true;
    memcpy(&c->code[q], w, n * sizeof *w);
    note_dst(c, q); /* b, its single result, at + 1 as before */
    uint32_t p = emit4(c, la, own_slot(c, c->h), b.src, addr, off);
    if (had) put_point(c, p, pt);
    push_slot(c);
    note_dst(c, p);
    return true;
}

/* A return of the single value e (fuse_rules.c: return a + b); true if it emitted the
 * return. */
bool fuse_return(compiler *c, const operand *e) {
    fuse_ctx x = {.site = FUSE_SITE_RETURN, .op = RI_CODE_RETURN1, .a = *e, .b = {0, ENTRY_IMM, 0, 0}};
    return fuse_by_rules(c, &x, NULL);
}

/* Binary operation op on a and b (as popped) with an immediate operand, or fused with the
 * instruction just before it (int-imm pairs, float pairs, f64 arithmetic on a load, i32
 * pairs); true if it emitted the operation (and pushed its result). */
bool fuse_binary(compiler *c, ri_code_op op, operand a, operand b) {
    /* A constant operand becomes an immediate: the second, or the first of a
     * commutative operation or a compare (mirrored). */
    ri_code_op imm_op = fuse_on(c, RI_FUSE_IMMEDIATE) ? imm_form(op) : RI_CODE_OP_COUNT;
    if (imm_op != RI_CODE_OP_COUNT && is_const(&a) && !is_const(&b)) {
        ri_code_op swapped = swapped_form(op);
        if (swapped != RI_CODE_OP_COUNT && imm_fits(swapped, a.bits)) {
            operand t = a;
            a = b;
            b = t;
            op = swapped;
            imm_op = imm_form(op);
        }
    }
    if (imm_op != RI_CODE_OP_COUNT && is_const(&b) && imm_fits(op, b.bits)) {
        if (imm_is_identity(op, b.bits)) { /* the result is the first operand, as it is */
            keep_operand(c, a);
            return true;
        }
        /* a's slot: an entry in its slot is there already (nothing emitted), which is all
         * the rules that read a's producer accept */
        uint32_t src = slot_of(c, a, c->h);
        fuse_ctx x = {.site = FUSE_SITE_IMM, .op = imm_op, .a = a, .b = b, .src = src};
        if (fuse_by_rules(c, &x, NULL)) return true;
        uint32_t p = emit3(c, imm_op, own_slot(c, c->h), src, (uint32_t)b.bits);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    /* the pair rules (fuse_rules.c); else f64 arithmetic whose f64 load moves past the
     * arithmetic computing its other operand (no rule can match then: the rules that read
     * that arithmetic are the float pairs, which did not match) */
    fuse_ctx x = {.site = FUSE_SITE_BINARY, .op = op, .a = a, .b = b};
    if (fuse_by_rules(c, &x, NULL)) return true;
    ri_code_op la = fuse_on(c, RI_FUSE_FLOAT_MEMORY) ? ri_code_form(op, RI_REL_FMEM) : RI_CODE_OP_COUNT;
    if (la != RI_CODE_OP_COUNT && sink_f64_load(c, la, a, b)) return true;
    return false;
}
