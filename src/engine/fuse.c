/*
 * The compiler's peephole fusions (code.h, "Superinstructions"): each rewrites the
 * instruction(s) just emitted and the one being compiled into one fused instruction, when
 * the first's only result feeds the second. This file: the branch fusions (compare-and-branch,
 * load-and-branch, loop-counter branches) and the families' names; fuse_memory.c fuses loads
 * and stores, fuse_arith.c arithmetic. The translation (compile.c) calls them; each checks
 * its family's gate (fuse_on); what they emit does exactly what the unfused sequence did.
 */
#include <string.h>

#include "compile_internal.h"

/* A float compare as one of RI_CODE_FCMP_BRANCHES (lt, le), *swap when its operands
 * swap (gt, ge: a > b is b < a, a >= b is b <= a, NaN included); else RI_CODE_OP_COUNT. */
static ri_code_op float_compare(ri_code_op op, bool *swap) {
    ri_code_op f = ri_code_form(op, RI_REL_FCMP);
    *swap = f != RI_CODE_OP_COUNT && f != op;
    return f;
}

/* If `cond` is the result of the i32/i64 compare emitted just before, removes that
 * compare and returns its operation (and operands) for a compare-and-branch. The same for
 * f32/f64 lt, le, gt, ge (as lt, le), and for the i32.eqz of one (*cmp BR_IFNOT_<lt, le>). */
bool take_compare(compiler *c, operand cond, ri_code_op *cmp, uint32_t *a, uint32_t *b) {
    if (!fuse_on(c, RI_FUSE_COMPARE_BRANCH) || cond.kind != ENTRY_SLOT || !c->last.dst_pos || c->failed || c->last.pos == NO_POS ||
        c->code[c->last.dst_pos] != cond.src)
        return false;
    bool eqz = c->last.op == RI_CODE_I32_EQZ || c->last.op == RI_CODE_I64_EQZ;
    bool swap = false;
    ri_code_op fcmp = float_compare(c->last.op, &swap);
    switch (c->last.op) {
#define RI_X_CMPBR(name, neg) case RI_CODE_##name: case RI_CODE_##name##_I:
    RI_CODE_CMP_BRANCHES(RI_X_CMPBR)
#undef RI_X_CMPBR
    case RI_CODE_I32_EQZ:
    case RI_CODE_I64_EQZ:
        break;
    default:
        if (fcmp == RI_CODE_OP_COUNT) return false;
        break;
    }
    *cmp = fcmp != RI_CODE_OP_COUNT ? fcmp : c->last.op;
    *a = c->code[c->last.pos + (swap ? 3 : 2)];
    *b = eqz ? 0 : c->code[c->last.pos + (swap ? 2 : 3)];
    truncate_code(c, c->last.pos);
    /* i32.eqz of a float compare just before it, on a temporary (its own stack slot, which
     * nothing reads after the eqz): the negated float branch. */
    if (*cmp == RI_CODE_I32_EQZ && !c->failed && c->last.pos != NO_POS && c->last.pos + 4 == c->len &&
        c->last.dst_pos && c->code[c->last.dst_pos] == *a && *a >= c->stack_base &&
        (fcmp = float_compare(c->last.op, &swap)) != RI_CODE_OP_COUNT) {
        switch (fcmp) {
#define RI_X_FCMPBR(name, mirror) case RI_CODE_##name: *cmp = RI_CODE_BR_IFNOT_##name; break;
        RI_CODE_FCMP_BRANCHES(RI_X_FCMPBR)
#undef RI_X_FCMPBR
        default: break;
        }
        *a = c->code[c->last.pos + (swap ? 3 : 2)];
        *b = c->code[c->last.pos + (swap ? 2 : 3)];
        truncate_code(c, c->last.pos);
    }
    return true;
}

static ri_code_op branch_op_for(ri_code_op cmp, bool negate) {
    switch (cmp) {
#define RI_X_CMPBR(name, neg) \
    case RI_CODE_##name: return negate ? RI_CODE_BR_IF_##neg : RI_CODE_BR_IF_##name; \
    case RI_CODE_##name##_I: return negate ? RI_CODE_BR_IF_##neg##_I : RI_CODE_BR_IF_##name##_I;
    RI_CODE_CMP_BRANCHES(RI_X_CMPBR)
#undef RI_X_CMPBR
    case RI_CODE_I64_EQZ: return negate ? RI_CODE_BR_IF_I64_NE_I : RI_CODE_BR_IF_I64_EQ_I; /* a == 0 */
#define RI_X_FCMPBR(name, mirror) \
    case RI_CODE_##name: return negate ? RI_CODE_BR_IFNOT_##name : RI_CODE_BR_IF_##name; \
    case RI_CODE_BR_IFNOT_##name: return negate ? RI_CODE_BR_IF_##name : RI_CODE_BR_IFNOT_##name; /* i32.eqz of it */
    RI_CODE_FCMP_BRANCHES(RI_X_FCMPBR)
#undef RI_X_FCMPBR
    default: return negate ? RI_CODE_BR_IF : RI_CODE_BR_IFNOT; /* i32.eqz */
    }
}

/* Emits "branch when cond (is true, or false if negate)"; returns the offset word. The
 * branch fuses with the instruction(s) just before it by the rules of fuse_rules.c (a
 * load, a loop counter's i32.add). */
uint32_t emit_cond_branch(compiler *c, operand cond, bool fused, ri_code_op cmp, uint32_t a,
                                 uint32_t b, bool negate) {
    ri_code_op bop;
    bool two = true; /* a and b (4 words), or a alone (3) */
    if (fused) {
        bop = branch_op_for(cmp, negate);
        two = cmp != RI_CODE_I32_EQZ;
    } else {
        a = slot_of(c, cond, c->h); /* cond was the entry just above the stack */
        bop = negate ? RI_CODE_BR_IFNOT : RI_CODE_BR_IF;
        two = false;
    }
    unpair(c);
    /* A loop counter: the i32.add just before computed the value tested as the compare's
     * second operand: the mirrored compare takes it first, as the rules want it. */
    bool is_add = (c->last.op == RI_CODE_I32_ADD || c->last.op == RI_CODE_I32_ADD_I) &&
                  c->last.pos != NO_POS && !c->failed && fuse_on(c, RI_FUSE_COUNTER_BRANCH);
    if (is_add && two && c->code[c->last.pos + 1] == b && c->code[c->last.pos + 1] != a) {
        ri_code_op mirrored = RI_CODE_OP_COUNT;
        switch (bop) { /* slot-slot i32 compares only: b is a slot here */
#define RI_X_CMPBR(cmp, neg) case RI_CODE_BR_IF_##cmp: mirrored = swapped_form(RI_CODE_##cmp); break;
        RI_CODE_CMP_BRANCHES(RI_X_CMPBR)
#undef RI_X_CMPBR
        default: break;
        }
        if (mirrored != RI_CODE_OP_COUNT && !is_i64_op(mirrored)) {
            bop = branch_op_for(mirrored, false);
            uint32_t t = a;
            a = b;
            b = t;
        }
    }
    fuse_ctx x = {.site = FUSE_SITE_BRANCH, .op = bop, .a = {a, ENTRY_SLOT, 0, 0}, .b = {b, ENTRY_SLOT, 0, 0}};
    uint32_t end;
    if (fuse_by_rules(c, &x, &end)) return end == NO_POS ? NO_POS : end - 1;
    uint32_t p = two ? emit3(c, bop, a, b, 0) : emit2(c, bop, a, 0);
    return p == NO_POS ? NO_POS : p + (two ? 3 : 2);
}

/* ---- the families' names (ri_fusion) ----------------------------------------------------- */

static const char *const fusion_names[] = {
    "immediate", "compare-branch", "counter-branch", "load-branch", "address", "memory-pair", "int-pair",
    "int-imm-pair", "float-pair", "float-memory", "sha2", "accumulator",
};
_Static_assert(RI_FUSE_ALL == (1u << sizeof fusion_names / sizeof fusion_names[0]) - 1, "a name per fusion family");

const char *ri_fusion_name(uint32_t family) {
    for (uint32_t i = 0; i < sizeof fusion_names / sizeof fusion_names[0]; i++)
        if (family == 1u << i) return fusion_names[i];
    return NULL;
}

bool ri_fusion_parse(const char *list, uint32_t *mask) {
    uint32_t m = 0;
    const char *p = list;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        bool known = false;
        if (n == 3 && strncmp(p, "all", 3) == 0) {
            m |= RI_FUSE_ALL;
            known = true;
        }
        for (uint32_t i = 0; !known && i < sizeof fusion_names / sizeof fusion_names[0]; i++)
            if (strlen(fusion_names[i]) == n && strncmp(p, fusion_names[i], n) == 0) {
                m |= 1u << i;
                known = true;
            }
        if (!known) return false;
        p += n;
        if (*p == ',') p++;
    }
    *mask = m;
    return true;
}
