/*
 * The compiler's arithmetic fusions (code.h, "Superinstructions"): constant operands as
 * immediates (and x + 0 as x), then the rules of fuse_rules.c for binary operations (int
 * and int-imm pairs, an add of a load) and return a + b; here the one that is not a rule:
 * unpair, which splits an I32_ADD_I2. The translation (compile.c) calls
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

/* A return of the single value e (fuse_rules.c: return a + b); true if it emitted the
 * return. */
bool fuse_return(compiler *c, const operand *e) {
    fuse_ctx x = {.site = FUSE_SITE_RETURN, .op = RI_CODE_RETURN1, .a = *e, .b = {0, ENTRY_IMM, 0, 0}};
    return fuse_by_rules(c, &x, NULL);
}

/* Binary operation op on a and b (as popped) with an immediate operand, or fused with the
 * instruction just before it (int-imm pairs, i32 pairs, an add of a load); true if it emitted the operation (and pushed its result). */
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
    /* the pair rules (fuse_rules.c) */
    fuse_ctx x = {.site = FUSE_SITE_BINARY, .op = op, .a = a, .b = b};
    return fuse_by_rules(c, &x, NULL);
}
