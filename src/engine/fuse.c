/*
 * The compiler's peephole fusions (code.h, "Superinstructions"): each rewrites the
 * instruction(s) just emitted and the one being compiled into one fused instruction, when
 * the first's only result feeds the second: compare-and-branch, load-and-branch and
 * loop-counter branches, fused addresses, i32 pairs and the SHA-2 chains, f64 arithmetic on
 * a load, three-way compares. The translation (compile.c) calls them; what they emit does
 * exactly what the unfused sequence did.
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

/* Emits "branch when cond (is true, or false if negate)"; returns the offset word. */
/* The loop-counter form (ADDBR_*) of conditional branch bop after an i32.add with a
 * slot or immediate step, or RI_CODE_OP_COUNT; *zero_limit: bop tests its operand
 * against 0 (br_if, br_ifnot), which becomes the limit. */
static ri_code_op addbr_form(ri_code_op bop, bool step_imm, bool *zero_limit) {
    *zero_limit = false;
    switch (bop) {
#define RI_X_ADDBR(cmp) \
    case RI_CODE_BR_IF_##cmp: return step_imm ? RI_CODE_ADDBR_##cmp##_IS : RI_CODE_ADDBR_##cmp##_SS; \
    case RI_CODE_BR_IF_##cmp##_I: return step_imm ? RI_CODE_ADDBR_##cmp##_II : RI_CODE_ADDBR_##cmp##_SI;
    RI_CODE_ADDBR_CMPS(RI_X_ADDBR)
#undef RI_X_ADDBR
    case RI_CODE_BR_IF:
        *zero_limit = true;
        return step_imm ? RI_CODE_ADDBR_I32_NE_II : RI_CODE_ADDBR_I32_NE_SI;
    case RI_CODE_BR_IFNOT:
        *zero_limit = true;
        return step_imm ? RI_CODE_ADDBR_I32_EQ_II : RI_CODE_ADDBR_I32_EQ_SI;
    default:
        return RI_CODE_OP_COUNT;
    }
}

/* The load-and-branch form (RI_CODE_LOADBR_OPS) of conditional branch bop (a, b) when the
 * instruction just before is an i32.load or i32.load8_u whose value bop tests for
 * (in)equality: emits it and returns its offset word; else NO_POS, nothing emitted. */
static uint32_t emit_load_branch(compiler *c, ri_code_op bop, uint32_t a, uint32_t b) {
    if (!fuse_on(c, RI_FUSE_LOAD_BRANCH) || c->failed || c->last.pos == NO_POS) return NO_POS;
    ri_code_op base; /* the I32_LOAD_BR_EQ_S or I32_LOAD8_U_BR_EQ_S of the load */
    bool xi;
    switch (c->last.op) {
    case RI_CODE_I32_LOAD: base = RI_CODE_I32_LOAD_BR_EQ_S; xi = false; break;
    case RI_CODE_I32_LOAD_XI: base = RI_CODE_I32_LOAD_BR_EQ_S; xi = true; break;
    case RI_CODE_I32_LOAD8_U: base = RI_CODE_I32_LOAD8_U_BR_EQ_S; xi = false; break;
    case RI_CODE_I32_LOAD8_U_XI: base = RI_CODE_I32_LOAD8_U_BR_EQ_S; xi = true; break;
    default: return NO_POS;
    }
    uint32_t words = xi ? 5 : 4;
    if (c->last.pos + words != c->len) return NO_POS;
    uint32_t d = c->code[c->last.pos + 1];
    uint32_t cmp; /* RI_BRANCH_* steps from base: EQ_S, NE_S, EQ_I, NE_I */
    switch (bop) {
    case RI_CODE_BR_IF_I32_EQ: cmp = 0; break;
    case RI_CODE_BR_IF_I32_NE: cmp = 1; break;
    case RI_CODE_BR_IF_I32_EQ_I: cmp = 2; break;
    case RI_CODE_BR_IF_I32_NE_I: cmp = 3; break;
    case RI_CODE_BR_IFNOT: cmp = 2; b = 0; break; /* d == 0 */
    case RI_CODE_BR_IF: cmp = 3; b = 0; break;    /* d != 0 */
    default: return NO_POS;
    }
    if (a != d) {
        if (cmp >= 2 || b != d) return NO_POS;
        b = a; /* == and != are symmetric: the loaded value goes first */
    }
    uint32_t addr = c->code[c->last.pos + 2];
    uint32_t imm = xi ? c->code[c->last.pos + 3] : 0;
    uint32_t off = c->code[c->last.pos + words - 1];
    ri_code_point pt;
    bool had = take_last(c, &pt);
    uint32_t p = emit_op(c, (ri_code_op)(base + 4 * cmp), 7);
    if (p == NO_POS) return NO_POS;
    c->code[p + 1] = d;
    c->code[p + 2] = addr;
    c->code[p + 3] = imm;
    c->code[p + 4] = off;
    c->code[p + 5] = b;
    if (had) put_point(c, p, pt);
    return p + 6;
}

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
    uint32_t lw = emit_load_branch(c, bop, a, b);
    if (lw != NO_POS || c->failed) return lw;
    /* A loop counter: the i32.add just before computed the value tested (as the
     * compare's second operand: the mirrored compare takes it first). */
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
    if (is_add && c->code[c->last.pos + 1] == a) {
        bool zero_limit;
        ri_code_op fused_op = addbr_form(bop, c->last.op == RI_CODE_I32_ADD_I, &zero_limit);
        if (fused_op != RI_CODE_OP_COUNT) {
            uint32_t k = c->code[c->last.pos + 1], x = c->code[c->last.pos + 2], step = c->code[c->last.pos + 3];
            truncate_code(c, c->last.pos);
            bool loopfuse = false; /* RI_CODE_LOOPFUSE_CMPS */
#define RI_X_LOOPFUSE(cmp) loopfuse |= fused_op >= RI_CODE_ADDBR_##cmp##_SS && fused_op <= RI_CODE_ADDBR_##cmp##_II;
            RI_CODE_LOOPFUSE_CMPS(RI_X_LOOPFUSE)
#undef RI_X_LOOPFUSE
            if (loopfuse && c->last.op == RI_CODE_MOVE && c->last.pos != NO_POS && c->last.pos + 3 == c->len && !c->failed) {
                /* a MOVE just before: one instruction (MADDBR_*, laid out as ADDBR_*, code.h) */
                uint32_t d = c->code[c->last.pos + 1], s = c->code[c->last.pos + 2];
                truncate_code(c, c->last.pos);
                uint32_t p = emit_op(c, (ri_code_op)(RI_CODE_MADDBR_I32_NE_SS + (fused_op - RI_CODE_ADDBR_I32_NE_SS)), 8);
                if (p == NO_POS) return NO_POS;
                c->code[p + 1] = d;
                c->code[p + 2] = s;
                c->code[p + 3] = k;
                c->code[p + 4] = x;
                c->code[p + 5] = step;
                c->code[p + 6] = zero_limit ? 0 : b;
                return p + 7;
            }
            if (loopfuse && c->last.op == RI_CODE_I32_ADD_I2 && c->last.pos != NO_POS && c->last.pos + 7 == c->len && !c->failed) {
                /* two pointer increments just before: one instruction per iteration
                 * (I2ADDBR_*, laid out as ADDBR_*, code.h) */
                uint32_t w[6];
                memcpy(w, &c->code[c->last.pos + 1], sizeof w);
                truncate_code(c, c->last.pos);
                uint32_t p = emit_op(c, (ri_code_op)(RI_CODE_I2ADDBR_I32_NE_SS + (fused_op - RI_CODE_ADDBR_I32_NE_SS)), 12);
                if (p == NO_POS) return NO_POS;
                memcpy(&c->code[p + 1], w, sizeof w);
                c->code[p + 7] = k;
                c->code[p + 8] = x;
                c->code[p + 9] = step;
                c->code[p + 10] = zero_limit ? 0 : b;
                return p + 11;
            }
            uint32_t p = emit_op(c, fused_op, 6);
            if (p == NO_POS) return NO_POS;
            c->code[p + 1] = k;
            c->code[p + 2] = x;
            c->code[p + 3] = step;
            c->code[p + 4] = zero_limit ? 0 : b;
            return p + 5;
        }
    }
    uint32_t p = two ? emit3(c, bop, a, b, 0) : emit2(c, bop, a, 0);
    return p == NO_POS ? NO_POS : p + (two ? 3 : 2);
}

/* The fused-address form (NAME_X or NAME_XI) of load or store op, or RI_CODE_OP_COUNT. */
static ri_code_op addr_form(ri_code_op op, bool imm) {
    ri_code_op x = ri_code_form(op, RI_REL_ADDR);
    return x == RI_CODE_OP_COUNT || !imm ? x : (ri_code_op)(x + 1); /* NAME_XI follows NAME_X */
}

/* If the address `addr` is the result of the i32.add emitted just before, removes that
 * add and returns the fused form of op with the add's operands in *a and *b. */
/* Whether the instruction just before is the i32.add (or add of an immediate) whose only
 * reader is `addr`. */
static bool last_is_address_add(compiler *c, operand addr) {
    unpair(c);
    return fuse_on(c, RI_FUSE_ADDRESS) && addr.kind == ENTRY_SLOT && c->last.dst_pos && !c->failed &&
           c->last.pos != NO_POS && c->code[c->last.dst_pos] == addr.src &&
           (c->last.op == RI_CODE_I32_ADD || c->last.op == RI_CODE_I32_ADD_I);
}

ri_code_op take_address(compiler *c, ri_code_op op, operand addr, uint32_t *a, uint32_t *b) {
    if (!last_is_address_add(c, addr)) return RI_CODE_OP_COUNT;
    ri_code_op fused = addr_form(op, c->last.op == RI_CODE_I32_ADD_I);
    if (fused == RI_CODE_OP_COUNT) return fused;
    *a = c->code[c->last.pos + 2];
    *b = c->code[c->last.pos + 3];
    truncate_code(c, c->last.pos);
    return fused;
}

/* The same for an access with an addend word (the v128 loads and v128.store): if `addr`
 * is x + imm computed just before, removes that add and returns x and imm. */
bool take_address_imm(compiler *c, operand addr, uint32_t *x, uint32_t *imm) {
    if (!last_is_address_add(c, addr) || c->last.op != RI_CODE_I32_ADD_I) return false;
    *x = c->code[c->last.pos + 2];
    *imm = c->code[c->last.pos + 3];
    truncate_code(c, c->last.pos);
    return true;
}

/* ---- pair rules as data -------------------------------------------------------------- */

/* A pair rule: operation `outer` reading the result of `inner`, the instruction just
 * before it, becomes `fused` (whose operand words the caller lays out: each family's
 * comment in code.h). One table per family, each made from its code.h list, and one
 * matcher for all. */
typedef struct fuse_rule {
    uint16_t outer, inner, fused;
} fuse_rule;

/* RI_CODE_PAIR_OPS: I32_<OUTER> on I32_<INNER> (or its _I form) */
static const fuse_rule pair_rules[] = {
#define RI_X_PAIR(o, i) \
    {RI_CODE_I32_##o, RI_CODE_I32_##i, RI_CODE_I32_##o##_##i}, \
    {RI_CODE_I32_##o, RI_CODE_I32_##i##_I, RI_CODE_I32_##o##_##i##_I},
    RI_CODE_PAIR_OPS(RI_X_PAIR)
#undef RI_X_PAIR
};

/* RI_CODE_IPAIR_OPS: I32_<OUTER>_I on I32_<INNER>_I */
static const fuse_rule ipair_rules[] = {
#define RI_X_IPAIR(o, i) {RI_CODE_I32_##o##_I, RI_CODE_I32_##i##_I, RI_CODE_I32_##o##I_##i##I},
    RI_CODE_IPAIR_OPS(RI_X_IPAIR)
#undef RI_X_IPAIR
};

/* RI_CODE_FPAIR_OPS: F64_<OUTER> on F64_<INNER>, the _A form (_B follows it) */
static const fuse_rule fpair_rules[] = {
#define RI_X_FPAIR(o, i) {RI_CODE_F64_##o, RI_CODE_F64_##i, RI_CODE_F64_##o##_##i##_A},
    RI_CODE_FPAIR_OPS(RI_X_FPAIR)
#undef RI_X_FPAIR
};

static const struct {
    const fuse_rule *rules;
    size_t n;
} families[FUSE_PAIR_COUNT] = {
    [FUSE_PAIR] = {pair_rules, sizeof pair_rules / sizeof pair_rules[0]},
    [FUSE_IPAIR] = {ipair_rules, sizeof ipair_rules / sizeof ipair_rules[0]},
    [FUSE_FPAIR] = {fpair_rules, sizeof fpair_rules / sizeof fpair_rules[0]},
};

ri_code_op fuse_pair_rule(fuse_family family, ri_code_op outer, ri_code_op inner) {
    for (size_t k = 0; k < families[family].n; k++) {
        const fuse_rule *r = &families[family].rules[k];
        if (r->outer == outer && r->inner == inner) return (ri_code_op)r->fused;
    }
    return RI_CODE_OP_COUNT;
}

/* i32 arithmetic on the result of the operation just before it, or on a value loaded
 * just before it: one instruction. Both operands are in slots (no immediates). */
bool fuse_i32_pair(compiler *c, ri_code_op op, operand a, operand b) {
    if (a.kind == ENTRY_IMM || b.kind == ENTRY_IMM) return false;
    operand other;
    if (from_last(c, &b)) other = a;
    else if (from_last(c, &a)) other = b; /* commutative: the computed one goes second */
    else return false;
    ri_code_op add_load = RI_CODE_OP_COUNT;
    uint32_t n = 3; /* address words of the load */
    switch (op == RI_CODE_I32_ADD ? c->last.op : RI_CODE_OP_COUNT) {
    case RI_CODE_I32_LOAD: add_load = RI_CODE_I32_ADD_L; n = 2; break;
    case RI_CODE_I32_LOAD_X: add_load = RI_CODE_I32_ADD_LX; break;
    case RI_CODE_I32_LOAD_XI: add_load = RI_CODE_I32_ADD_LXI; break;
    case RI_CODE_I32_LOAD8_U: add_load = RI_CODE_I32_ADD_L8U; n = 2; break;
    case RI_CODE_I32_LOAD8_U_X: add_load = RI_CODE_I32_ADD_LX8U; break;
    case RI_CODE_I32_LOAD8_U_XI: add_load = RI_CODE_I32_ADD_LXI8U; break;
    default: break;
    }
    if (add_load != RI_CODE_OP_COUNT) {
        ri_code_op fused = add_load;
        uint32_t w[3];
        memcpy(w, &c->code[c->last.pos + 2], n * sizeof *w);
        ri_code_point pt;
        bool had = take_last(c, &pt);
        uint32_t p = emit_op(c, fused, 3 + n);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        c->code[p + 2] = other.src;
        memcpy(&c->code[p + 3], w, n * sizeof *w);
        if (had) put_point(c, p, pt);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    /* An addition of SHA-2's choice, or of rotl(x, k1) ^ rotl(y, k2) ^ (z >> k3): one
     * instruction, the last one's operand words then the addend. */
    static const struct {
        ri_code_op last, fused;
        uint32_t words; /* the last instruction's operands after its destination */
    } add_after[] = {
        {RI_CODE_I32_CH, RI_CODE_I32_CH_ADD, 5},
        {RI_CODE_I32_XOR_ROTL2_SHR_U, RI_CODE_I32_XOR_ROTL2_SHR_U_ADD, 6},
    };
    bool sha2 = fuse_on(c, RI_FUSE_SHA2);
    for (size_t k = 0; sha2 && op == RI_CODE_I32_ADD && k < sizeof add_after / sizeof add_after[0]; k++) {
        if (c->last.op != add_after[k].last) continue;
        uint32_t w[6], n = add_after[k].words;
        memcpy(w, &c->code[c->last.pos + 2], n * sizeof *w);
        truncate_code(c, c->last.pos);
        uint32_t p = emit_op(c, add_after[k].fused, n + 3);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        memcpy(&c->code[p + 2], w, n * sizeof *w);
        c->code[p + 2 + n] = other.src;
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    ri_code_op fused = fuse_pair_rule(FUSE_PAIR, op, c->last.op);
    if (fused == RI_CODE_OP_COUNT) return false;
    uint32_t x = c->code[c->last.pos + 2], y = c->code[c->last.pos + 3];
    truncate_code(c, c->last.pos);
    if (sha2 && fused == RI_CODE_I32_XOR_ROTL_I && c->last.op == RI_CODE_I32_ROTL_I && from_last(c, &other)) {
        /* rotl(x1, k1) ^ rotl(x2, k2): the other operand is the rotation before */
        uint32_t x1 = c->code[c->last.pos + 2], k1 = c->code[c->last.pos + 3];
        truncate_code(c, c->last.pos);
        uint32_t p = emit_op(c, RI_CODE_I32_XOR_ROTL2, 6);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        c->code[p + 2] = x1;
        c->code[p + 3] = k1;
        c->code[p + 4] = x;
        c->code[p + 5] = y;
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    if (sha2 && (fused == RI_CODE_I32_XOR_ROTL_I || fused == RI_CODE_I32_XOR_SHR_U_I) &&
        c->last.op == RI_CODE_I32_XOR_ROTL2 && from_last(c, &other)) {
        /* rotl(x1, k1) ^ rotl(x2, k2) ^ rotl(x, y) (or x >> y) */
        uint32_t w[4];
        memcpy(w, &c->code[c->last.pos + 2], sizeof w);
        truncate_code(c, c->last.pos);
        uint32_t p = emit_op(c, fused == RI_CODE_I32_XOR_ROTL_I ? RI_CODE_I32_XOR_ROTL3 : RI_CODE_I32_XOR_ROTL2_SHR_U, 8);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        memcpy(&c->code[p + 2], w, sizeof w);
        c->code[p + 6] = x;
        c->code[p + 7] = y;
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    if (sha2 && fused == RI_CODE_I32_XOR_AND && c->last.op == RI_CODE_I32_AND_XOR && from_last(c, &other) &&
        c->code[c->last.pos + 3] == x && c->code[c->last.pos + 4] == y && x != other.src && y != other.src) {
        /* (a & (x ^ y)) ^ (x & y): the majority function of SHA-2, one instruction */
        uint32_t a = c->code[c->last.pos + 2];
        truncate_code(c, c->last.pos);
        uint32_t p = emit4(c, RI_CODE_I32_MAJ, own_slot(c, c->h), a, x, y);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    if (sha2 && fused == RI_CODE_I32_OR_AND && c->last.op == RI_CODE_I32_AND_XOR_I && from_last(c, &other) &&
        x != other.src && y != other.src) {
        /* (a & (x ^ k)) | (p & q): the choice function of SHA-2 (k = -1), one instruction */
        uint32_t w[3];
        memcpy(w, &c->code[c->last.pos + 2], sizeof w);
        truncate_code(c, c->last.pos);
        uint32_t p = emit_op(c, RI_CODE_I32_CH, 7);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        memcpy(&c->code[p + 2], w, sizeof w);
        c->code[p + 5] = x;
        c->code[p + 6] = y;
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    uint32_t p = emit4(c, fused, own_slot(c, c->h), other.src, x, y);
    push_slot(c);
    note_dst(c, p);
    return true;
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
bool sink_f64_load(compiler *c, ri_code_op la, operand a, operand b) {
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
    truncate_code(c, c->prev.pos);
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
