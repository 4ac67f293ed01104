/*
 * The compiler's arithmetic fusions (code.h, "Superinstructions"): constant operands as
 * immediates, two i32 operations with immediates in a row (int-imm pairs), i32 arithmetic on
 * the result or load just before (int pairs), f64 arithmetic on the f64 arithmetic just
 * before (float pairs) and on a load (float-memory), the SHA-2 chains, and return a + b.
 * The translation (compile.c) calls fuse_binary and fuse_return; each family is checked
 * against its gate (fuse_on).
 */
#include <string.h>

#include "compile_internal.h"

/* The families of pair rules: code.h's RI_CODE_PAIR_OPS, _IPAIR_OPS, _FPAIR_OPS. */
typedef enum fuse_family { FUSE_PAIR, FUSE_IPAIR, FUSE_FPAIR, FUSE_PAIR_COUNT } fuse_family;

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

static ri_code_op fuse_pair_rule(fuse_family family, ri_code_op outer, ri_code_op inner) {
    for (size_t k = 0; k < families[family].n; k++) {
        const fuse_rule *r = &families[family].rules[k];
        if (r->outer == outer && r->inner == inner) return (ri_code_op)r->fused;
    }
    return RI_CODE_OP_COUNT;
}

/* i32 arithmetic on the result of the operation just before it, or on a value loaded
 * just before it: one instruction. Both operands are in slots (no immediates). */
static bool fuse_i32_pair(compiler *c, ri_code_op op, operand a, operand b) {
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

/* A return of the single value e: if e is the i32.add just before, one instruction (what
 * follows a return is dead or another block's). Part of no family: always on. True if it
 * emitted the return. */
bool fuse_return(compiler *c, const operand *e) {
    if (c->last.op != RI_CODE_I32_ADD || !from_last(c, e) || c->last.pos + 4 != c->len) return false;
    uint32_t a = c->code[c->last.pos + 2], b = c->code[c->last.pos + 3];
    truncate_code(c, c->last.pos);
    emit2(c, RI_CODE_I32_ADD_RET, a, b);
    return true;
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
        if (fuse_on(c, RI_FUSE_INT_IMM_PAIR) && from_last(c, &a)) { /* on the result of an i32 operation with an immediate */
            ri_code_op fused = fuse_pair_rule(FUSE_IPAIR, imm_op, c->last.op);
            if (fused != RI_CODE_OP_COUNT) {
                uint32_t x = c->code[c->last.pos + 2], k = c->code[c->last.pos + 3];
                truncate_code(c, c->last.pos);
                uint32_t p = emit4(c, fused, own_slot(c, c->h), x, k, (uint32_t)b.bits);
                push_slot(c);
                note_dst(c, p);
                return true;
            }
        }
        uint32_t src = slot_of(c, a, c->h);
        if (imm_op == RI_CODE_I32_ADD_I && fuse_on(c, RI_FUSE_INT_IMM_PAIR) && c->last.op == RI_CODE_I32_ADD_I &&
            c->last.pos != NO_POS && c->last.pos + 4 == c->len && !c->failed) {
            /* two additions of constants in a row (loop counters, pointers): one instruction */
            uint32_t d1 = c->code[c->last.pos + 1], a1 = c->code[c->last.pos + 2], i1 = c->code[c->last.pos + 3];
            truncate_code(c, c->last.pos);
            uint32_t p = emit_op(c, RI_CODE_I32_ADD_I2, 7);
            if (p == NO_POS) return true;
            c->code[p + 1] = d1;
            c->code[p + 2] = a1;
            c->code[p + 3] = i1;
            c->code[p + 4] = own_slot(c, c->h);
            c->code[p + 5] = src;
            c->code[p + 6] = (uint32_t)b.bits;
            push_slot(c);
            c->last.dst_pos = p + 4; /* the second result is the one that may be redirected */
            return true;
        }
        uint32_t p = emit3(c, imm_op, own_slot(c, c->h), src, (uint32_t)b.bits);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    /* f64 arithmetic on a value loaded just before: one instruction. */
    ri_code_op la = fuse_on(c, RI_FUSE_FLOAT_MEMORY) ? ri_code_form(op, RI_REL_FMEM) : RI_CODE_OP_COUNT;
    ri_code_op lb = RI_CODE_OP_COUNT, lxa = RI_CODE_OP_COUNT, lxb = RI_CODE_OP_COUNT;
    if (la != RI_CODE_OP_COUNT) {
        lb = (ri_code_op)(la + RI_FMEM_LB);
        lxa = (ri_code_op)(la + RI_FMEM_LXA);
        lxb = (ri_code_op)(la + RI_FMEM_LXB);
    }
    if ((ri_code_form(op, RI_REL_FMEM) != RI_CODE_OP_COUNT || op == RI_CODE_F64_DIV) && fuse_on(c, RI_FUSE_FLOAT_PAIR) &&
        a.kind != ENTRY_IMM && b.kind != ENTRY_IMM) {
        /* f64 arithmetic on the result of the f64 arithmetic just before: one instruction */
        bool on_b = from_last(c, &b), on_a = !on_b && from_last(c, &a);
        ri_code_op fused = on_a || on_b ? fuse_pair_rule(FUSE_FPAIR, op, c->last.op) : RI_CODE_OP_COUNT;
        if (fused != RI_CODE_OP_COUNT && on_b) fused = (ri_code_op)(fused + 1); /* _B follows _A */
        if (fused != RI_CODE_OP_COUNT) {
            uint32_t x = c->code[c->last.pos + 2], y = c->code[c->last.pos + 3];
            truncate_code(c, c->last.pos);
            uint32_t p = emit4(c, fused, own_slot(c, c->h), on_b ? a.src : b.src, x, y);
            push_slot(c);
            note_dst(c, p);
            return true;
        }
    }
    if (la != RI_CODE_OP_COUNT && sink_f64_load(c, la, a, b)) return true;
    if (la != RI_CODE_OP_COUNT && (c->last.op == RI_CODE_F64_LOAD || c->last.op == RI_CODE_F64_LOAD_XI)) {
        bool load_b = from_last(c, &b) && a.kind != ENTRY_IMM;
        bool load_a = !load_b && from_last(c, &a) && b.kind != ENTRY_IMM;
        if (load_a || load_b) {
            bool xi = c->last.op == RI_CODE_F64_LOAD_XI;
            uint32_t w[3]; /* the load's address words */
            memcpy(w, &c->code[c->last.pos + 2], (xi ? 3 : 2) * sizeof *w);
            ri_code_op fused = xi ? (load_b ? lxb : lxa) : load_b ? lb : la;
            ri_code_point pt;
            bool had = take_last(c, &pt);
            uint32_t p = emit_op(c, fused, xi ? 6 : 5);
            if (p == NO_POS) return true;
            c->code[p + 1] = own_slot(c, c->h);
            c->code[p + 2] = load_b ? a.src : b.src;
            memcpy(&c->code[p + 3], w, (xi ? 3 : 2) * sizeof *w);
            if (had) put_point(c, p, pt);
            push_slot(c);
            note_dst(c, p);
            return true;
        }
    }
    if (fuse_on(c, RI_FUSE_INT_PAIR) && fuse_i32_pair(c, op, a, b)) return true;
    return false;
}
