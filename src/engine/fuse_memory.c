/*
 * The compiler's memory fusions (code.h, "Superinstructions"): a load or store joined with
 * the address computation just before it (the address family), two loads or two stores in
 * a row (memory pairs), and f64 arithmetic stored right away, read-modify-write and
 * a += x * y (float-memory). The translation (compile.c) calls fuse_load, fuse_load_pair and
 * fuse_store; each checks its family's gate (fuse_on).
 */
#include <string.h>

#include "compile_internal.h"

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

static ri_code_op take_address(compiler *c, ri_code_op op, operand addr, uint32_t *a, uint32_t *b) {
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

/* A load of addr (as popped, not yet read) fused with what computed the address just
 * before (the address family: an array element, a table lookup, an i32.add); true if it
 * emitted the load (and pushed its result). */
bool fuse_load(compiler *c, ri_code_op op, operand addr, uint32_t offset) {
    if (op == RI_CODE_I32_LOAD && fuse_on(c, RI_FUSE_ADDRESS) && from_last(c, &addr) && c->last.pos + 5 == c->len &&
        (c->last.op == RI_CODE_I32_ADD_SHL_I || c->last.op == RI_CODE_I32_ADDI_SHLI)) {
        /* an array element: the address a + (x << k) or (x << k) + base, in a temporary,
         * computed just before (I32_ADD_SHL_I: a, x, k; I32_ADDI_SHLI: x, k, base) */
        bool sxi = c->last.op == RI_CODE_I32_ADDI_SHLI;
        uint32_t w[3];
        memcpy(w, &c->code[c->last.pos + 2], sizeof w);
        if (sxi) w[1] &= 31; else w[2] &= 31; /* the shift count, as i32.shl takes it */
        truncate_code(c, c->last.pos);
        uint32_t p = emit_op(c, sxi ? RI_CODE_I32_LOAD_SXI : RI_CODE_I32_LOAD_SX, 6);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        memcpy(&c->code[p + 2], w, sizeof w);
        c->code[p + 5] = offset;
        add_point(c, p, RI_POINT_TRAP, c->h + 1);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    uint32_t x, y;
    ri_code_op fused = take_address(c, op, addr, &x, &y);
    if (fused == RI_CODE_I32_LOAD_XI && !c->failed && c->last.op == RI_CODE_I32_SHLI_ANDI && c->last.pos != NO_POS &&
        c->last.pos + 5 == c->len && c->last.dst_pos && c->code[c->last.dst_pos] == x && x >= c->stack_base) {
        /* a table lookup: the index ((v & mask) << k) computed just before into a temporary
         * of the operand stack, which only the address read */
        uint32_t v = c->code[c->last.pos + 2], mask = c->code[c->last.pos + 3], k = c->code[c->last.pos + 4] & 31;
        truncate_code(c, c->last.pos);
        uint32_t p = emit_op(c, RI_CODE_I32_LOAD_MSXI, 7);
        if (p == NO_POS) return true;
        c->code[p + 1] = own_slot(c, c->h);
        c->code[p + 2] = v;
        c->code[p + 3] = mask;
        c->code[p + 4] = k;
        c->code[p + 5] = y;
        c->code[p + 6] = offset;
        add_point(c, p, RI_POINT_TRAP, c->h + 1);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    if (fused != RI_CODE_OP_COUNT) {
        uint32_t p = emit4(c, fused, own_slot(c, c->h), x, y, offset);
        add_point(c, p, RI_POINT_TRAP, c->h + 1);
        push_slot(c);
        note_dst(c, p);
        return true;
    }
    return false;
}

/* Two memory accesses in a row (the memory-pair family) as one instruction `pair`: the last
 * access's three operand words and stop point, then w4, w5 and offset, with a second stop
 * point at + 3 for the second access (operand stack height `height` there). Returns the
 * instruction's position, NO_POS if the emission failed. */
static uint32_t emit_memory_pair(compiler *c, ri_code_op pair, uint32_t w4, uint32_t w5, uint32_t offset,
                                 uint32_t height) {
    uint32_t w[3];
    memcpy(w, &c->code[c->last.pos + 1], sizeof w);
    ri_code_point pt;
    bool had = take_last(c, &pt);
    uint32_t p = emit_op(c, pair, 7);
    if (p == NO_POS) return NO_POS;
    memcpy(&c->code[p + 1], w, sizeof w);
    c->code[p + 4] = w4;
    c->code[p + 5] = w5;
    c->code[p + 6] = offset;
    if (had) put_point(c, p, pt);
    add_point(c, p + 3, RI_POINT_TRAP, height);
    return p;
}

/* An i32 load from slot a right after another i32 load (the memory-pair family): one
 * instruction; true if it emitted it. */
bool fuse_load_pair(compiler *c, ri_code_op op, uint32_t a, uint32_t offset) {
    if (!(op == RI_CODE_I32_LOAD && fuse_on(c, RI_FUSE_MEMORY_PAIR) && c->last.op == RI_CODE_I32_LOAD &&
          c->last.pos != NO_POS && c->last.pos + 4 == c->len && !c->failed))
        return false;
    uint32_t p = emit_memory_pair(c, RI_CODE_I32_LOAD2, own_slot(c, c->h), a, offset, c->h + 1);
    if (p == NO_POS) return true;
    push_slot(c);
    c->last.dst_pos = p + 4;
    return true;
}

/* A store of v to addr (both as popped) fused with what computed the value or the address
 * just before (float-memory: f64 arithmetic stored right away, read-modify-write, a += x * y;
 * the address family; memory pairs: two stores in a row); true if it emitted the store. */
bool fuse_store(compiler *c, ri_code_op op, operand addr, operand v, uint32_t offset) {
    if (op == RI_CODE_F64_STORE && fuse_on(c, RI_FUSE_FLOAT_MEMORY) && from_last(c, &v) && addr.kind != ENTRY_IMM) {
        ri_code_op fused = ri_code_form(c->last.op, RI_REL_FMEM); /* f64 arithmetic stored right away: one instruction */
        if (fused != RI_CODE_OP_COUNT) fused = (ri_code_op)(fused + RI_FMEM_S);
        if (fused != RI_CODE_OP_COUNT) {
            uint32_t a = c->code[c->last.pos + 2], b = c->code[c->last.pos + 3];
            truncate_code(c, c->last.pos);
            uint32_t p = emit4(c, fused, addr.src, a, b, offset);
            add_point(c, p, RI_POINT_TRAP, c->h + 2);
            return true;
        }
        /* x = load [addr + offset] op y; store [addr + offset] = x: read-modify-write.
         * Only the load can trap (the store goes to the same bytes): its stop point stays. */
        fused = ri_code_form(c->last.op, RI_REL_RMW);
        if (fused != RI_CODE_OP_COUNT && c->code[c->last.pos + 3] == addr.src &&
            c->code[c->last.pos + 4] == offset) {
            uint32_t other = c->code[c->last.pos + 2];
            ri_code_point pt;
            bool had = take_last(c, &pt);
            operand t = {other, ENTRY_SLOT, 0, 0};
            if (fused == RI_CODE_F64_ADD_MB && !c->failed &&
                (c->last.op == RI_CODE_F64_MUL_LB || c->last.op == RI_CODE_F64_MUL_LXB) && from_last(c, &t)) {
                /* mem[p] = a * mem[q] + mem[p]: the multiplication's load stays the first
                 * stop point, the addition's goes to position + 3 */
                bool xi = c->last.op == RI_CODE_F64_MUL_LXB;
                uint32_t w[4]; /* a, q, (imm,) qoff */
                memcpy(w, &c->code[c->last.pos + 2], (xi ? 4 : 3) * sizeof *w);
                ri_code_point pq;
                bool had_q = take_last(c, &pq);
                if (xi && c->last.op == RI_CODE_I32_ADD_I && c->last.pos != NO_POS && c->last.pos + 4 == c->len &&
                    c->code[c->last.pos + 1] == addr.src && !c->failed) {
                    /* p computed just before (k = x + imm, kept in k): one instruction */
                    uint32_t x = c->code[c->last.pos + 2], kimm = c->code[c->last.pos + 3];
                    truncate_code(c, c->last.pos);
                    uint32_t p = emit_op(c, RI_CODE_F64_AXPY_XI_P, 9);
                    if (p == NO_POS) return true;
                    c->code[p + 1] = addr.src;
                    c->code[p + 2] = x;
                    c->code[p + 3] = kimm;
                    c->code[p + 4] = offset;
                    memcpy(&c->code[p + 5], w, 4 * sizeof *w);
                    if (had_q) put_point(c, p, pq);
                    if (had) put_point(c, p + 3, pt);
                    return true;
                }
                uint32_t p = emit_op(c, xi ? RI_CODE_F64_AXPY_XI : RI_CODE_F64_AXPY, xi ? 7 : 6);
                if (p == NO_POS) return true;
                c->code[p + 1] = addr.src;
                c->code[p + 2] = offset;
                memcpy(&c->code[p + 3], w, (xi ? 4 : 3) * sizeof *w);
                if (had_q) put_point(c, p, pq);
                if (had) put_point(c, p + 3, pt);
                return true;
            }
            ri_code_op mm = fused == RI_CODE_F64_ADD_MA ? RI_CODE_F64_ADD_MM_MA : fused == RI_CODE_F64_ADD_MB ? RI_CODE_F64_ADD_MM_MB
                          : fused == RI_CODE_F64_SUB_MA ? RI_CODE_F64_SUB_MM_MA : fused == RI_CODE_F64_SUB_MB ? RI_CODE_F64_SUB_MM_MB
                          : RI_CODE_OP_COUNT;
            if (mm != RI_CODE_OP_COUNT && c->last.op == RI_CODE_F64_MUL_MUL_A && from_last(c, &t)) {
                /* mem op= (x * y) * b: the products computed just before, in one instruction */
                uint32_t w[3]; /* b, x, y */
                memcpy(w, &c->code[c->last.pos + 2], sizeof w);
                truncate_code(c, c->last.pos);
                if (c->last.op == RI_CODE_I32_ADD_I && c->last.pos != NO_POS && c->last.pos + 4 == c->len &&
                    c->code[c->last.pos + 1] == addr.src && !c->failed) {
                    /* the address computed just before (k = x + imm, kept in k): _P */
                    uint32_t x = c->code[c->last.pos + 2], kimm = c->code[c->last.pos + 3];
                    truncate_code(c, c->last.pos);
                    uint32_t p = emit_op(c, (ri_code_op)(mm == RI_CODE_F64_ADD_MM_MA ? RI_CODE_F64_ADD_MM_MA_P
                                                         : mm == RI_CODE_F64_ADD_MM_MB ? RI_CODE_F64_ADD_MM_MB_P
                                                         : mm == RI_CODE_F64_SUB_MM_MA ? RI_CODE_F64_SUB_MM_MA_P
                                                                                       : RI_CODE_F64_SUB_MM_MB_P), 8);
                    if (p == NO_POS) return true;
                    c->code[p + 1] = addr.src;
                    c->code[p + 2] = x;
                    c->code[p + 3] = kimm;
                    memcpy(&c->code[p + 4], w, sizeof w);
                    c->code[p + 7] = offset;
                    if (had) put_point(c, p, pt);
                    return true;
                }
                uint32_t p = emit_op(c, mm, 6);
                if (p == NO_POS) return true;
                c->code[p + 1] = addr.src;
                memcpy(&c->code[p + 2], w, sizeof w);
                c->code[p + 5] = offset;
                if (had) put_point(c, p, pt);
                return true;
            }
            uint32_t p = emit3(c, fused, addr.src, other, offset);
            if (had) put_point(c, p, pt);
            return true;
        }
    }
    uint32_t x, y;
    ri_code_op fused = take_address(c, op, addr, &x, &y);
    if (fused != RI_CODE_OP_COUNT) {
        uint32_t sv = slot_of(c, v, c->h + 1);
        uint32_t p = emit4(c, fused, x, y, sv, offset);
        add_point(c, p, RI_POINT_TRAP, c->h + 2);
        return true;
    }
    ri_code_op pair = ri_code_form(op, RI_REL_STORE2);
    if (pair != RI_CODE_OP_COUNT && fuse_on(c, RI_FUSE_MEMORY_PAIR) && c->last.op == op && c->last.pos != NO_POS &&
        c->last.pos + 4 == c->len &&
        addr.kind != ENTRY_IMM && v.kind != ENTRY_IMM && !c->failed) {
        emit_memory_pair(c, pair, addr.src, v.src, offset, c->h + 2);
        return true;
    }
    return false;
}
