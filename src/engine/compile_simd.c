/*
 * The translation of the SIMD instructions (0xFD prefix) and of the v128 forms of local.set,
 * global.get/set and select: a v128 takes two slots (simd.h), its own handlers for the
 * frequent lane operations and loads (code_simd.h). Part of the translation pass (compile.c).
 */
#include <string.h>

#include "compile_internal.h"
#include "simd.h"

/* Pops a v128 (two entries) and returns the first of two consecutive slots holding it:
 * a local's, or the entries' own slots (the halves copied there if they are elsewhere). */
static uint32_t pop_v128(compiler *c) {
    operand hi = pop(c), lo = pop(c);
    uint32_t i = c->h;
    if (lo.kind == hi.kind && (lo.kind == ENTRY_LOCAL || lo.kind == ENTRY_CONST) && hi.src == lo.src + 1) return lo.src;
    if (lo.kind != ENTRY_SLOT) emit_copy(c, own_slot(c, i), &lo);
    if (hi.kind != ENTRY_SLOT) emit_copy(c, own_slot(c, i + 1), &hi);
    return own_slot(c, i);
}

/* Pushes a v128 result in its own two slots; returns the first. */
static uint32_t push_v128(compiler *c) {
    uint32_t s = push_slot(c);
    push_slot(c);
    if (!c->failed) c->stack[c->h - 1].hi = 1;
    return s;
}

void compile_local_set_v128(compiler *c, uint32_t k, bool tee) {
    if (c->h < 2) { fail(c, RI_ERR_INVALID, "operand stack underflow"); return; }
    operand lo = c->stack[c->h - 2], hi = c->stack[c->h - 1];
    if (!(lo.kind == ENTRY_LOCAL && lo.src == k)) {
        c->written[k] = c->written[k + 1] = 1;
        flush_local(c, k, c->h - 2);
        flush_local(c, k + 1, c->h - 2);
        lo = c->stack[c->h - 2];
        hi = c->stack[c->h - 1];
        emit_copy(c, k, &lo);
        emit_copy(c, k + 1, &hi);
    }
    pop(c);
    pop(c);
    if (tee) {
        push_entry(c, ENTRY_LOCAL, k);
        push_entry(c, ENTRY_LOCAL, k + 1);
        if (!c->failed) c->stack[c->h - 1].hi = 1;
    }
}

void compile_global_v128(compiler *c, uint32_t index, bool set) {
    if (set) {
        uint32_t src = pop_v128(c);
        emit2(c, RI_CODE_V128_GLOBAL_SET, index, src);
        return;
    }
    emit2(c, RI_CODE_V128_GLOBAL_GET, own_slot(c, c->h), index);
    push_v128(c);
}

void compile_select_v128(compiler *c) {
    operand cond = pop(c);
    uint32_t sc = slot_of(c, cond, c->h);
    uint32_t sb = pop_v128(c), sa = pop_v128(c);
    emit4(c, RI_CODE_V128_SELECT, own_slot(c, c->h), sa, sb, sc);
    push_v128(c);
}

/* The operation with a handler of its own for lane operation `sub` (code_simd.h), else
 * V128_OP; for a load of memory 0, else V128_LOAD. Both keep the general one's layout. */
static ri_code_op simd_lane_op(uint32_t sub) {
    switch (sub) {
#define RI_X_SIMD_CASE(name, s, kind) case s: return RI_CODE_V128_##name;
    RI_CODE_SIMD_LANE_OPS(RI_X_SIMD_CASE)
#undef RI_X_SIMD_CASE
    default: return RI_CODE_V128_OP;
    }
}

static ri_code_op simd_load_op(uint32_t sub) {
    switch (sub) {
#define RI_X_SIMD_CASE(name, s, bytes) case s: return RI_CODE_V128_##name;
    RI_CODE_SIMD_LOAD_OPS(RI_X_SIMD_CASE)
#undef RI_X_SIMD_CASE
    default: return RI_CODE_V128_LOAD;
    }
}

/* How V128_SHUFFLE makes the half of its result with lanes l[0 .. 8) (code_simd.h). */
static uint32_t shuffle_half(const uint8_t *l) {
    bool span = true, splat = true;
    for (uint32_t i = 1; i < 8; i++) {
        span = span && l[i] == l[0] + i;
        splat = splat && l[i] == l[0];
    }
    return span ? RI_SHUFFLE_HALF(RI_SHUFFLE_SPAN, l[0]) : splat ? RI_SHUFFLE_HALF(RI_SHUFFLE_SPLAT, l[0]) : 0;
}

void compile_simd(compiler *c, const ri_instr *in) {
    uint32_t sub = in->op & 0xFFu;
    ri_simd_info si = ri_simd_info_of(sub);
    uint32_t h0 = c->h;
    switch ((ri_simd_shape)si.shape) {
    case RI_SIMD_CONST: { /* read in place from the pool (pop_v128), or two immediates */
        uint64_t lo = ri_v128_u64(in->imm.simd.bytes), hi = ri_v128_u64(in->imm.simd.bytes + 8);
        uint32_t k = pool_find2(c, lo, hi);
        if (k != NO_POS) {
            push_operand(c, (operand){c->nlocals + k, ENTRY_CONST, lo, 0});
            push_operand(c, (operand){c->nlocals + k + 1, ENTRY_CONST, hi, 1});
            return;
        }
        push_operand(c, (operand){0, ENTRY_IMM, lo, 0});
        push_operand(c, (operand){0, ENTRY_IMM, hi, 1});
        return;
    }
    case RI_SIMD_LOAD: case RI_SIMD_LOAD_LANE: {
        const ri_memarg *ma = &in->imm.simd.mem;
        if (ma->memidx >= c->m->nmemories) { fail(c, RI_ERR_INVALID, "unknown memory"); return; }
        bool general = !fast_memory(c->m, ma->memidx);
        uint32_t vec = si.shape == RI_SIMD_LOAD_LANE ? pop_v128(c) : 0;
        operand addr = pop(c);
        /* a whole-vector load of memory 0 adds the addend in its vec word to the address:
         * the address's i32.add of an immediate just before goes there */
        uint32_t sa, add = 0;
        ri_code_op op = general ? RI_CODE_V128_LOAD_G : simd_load_op(sub);
        if (op == RI_CODE_V128_LOAD_G || op == RI_CODE_V128_LOAD || !take_address_imm(c, addr, &sa, &add))
            sa = slot_of(c, addr, c->h);
        uint32_t p = emit_op(c, op, general ? 8 : 6);
        if (p == NO_POS) return;
        c->code[p + 1] = own_slot(c, c->h);
        c->code[p + 2] = sa;
        c->code[p + 3] = op == RI_CODE_V128_LOAD_G || op == RI_CODE_V128_LOAD ? vec : add;
        c->code[p + 4] = (uint32_t)ma->offset;
        c->code[p + 5] = sub | in->imm.simd.lane << 8;
        if (general) {
            c->code[p + 6] = ma->memidx;
            c->code[p + 7] = (uint32_t)(ma->offset >> 32);
        }
        add_point(c, p, RI_POINT_TRAP, h0);
        push_v128(c);
        return;
    }
    case RI_SIMD_STORE: case RI_SIMD_STORE_LANE: {
        const ri_memarg *ma = &in->imm.simd.mem;
        if (ma->memidx >= c->m->nmemories) { fail(c, RI_ERR_INVALID, "unknown memory"); return; }
        bool general = !fast_memory(c->m, ma->memidx);
        uint32_t vec = pop_v128(c);
        operand addr = pop(c);
        /* v128.store of memory 0: the address's addend in its last word, as the loads */
        uint32_t sa, add = 0;
        bool whole = !general && sub == 0x0B;
        if (!whole || !take_address_imm(c, addr, &sa, &add)) sa = slot_of(c, addr, c->h);
        ri_code_op op = whole ? RI_CODE_V128_STORE128 : RI_CODE_V128_STORE;
        uint32_t p = emit_op(c, general ? RI_CODE_V128_STORE_G : op, general ? 7 : 5);
        if (p == NO_POS) return;
        c->code[p + 1] = sa;
        c->code[p + 2] = vec;
        c->code[p + 3] = (uint32_t)ma->offset;
        c->code[p + 4] = whole ? add : sub | in->imm.simd.lane << 8;
        if (general) {
            c->code[p + 5] = ma->memidx;
            c->code[p + 6] = (uint32_t)(ma->offset >> 32);
        }
        add_point(c, p, RI_POINT_TRAP, h0);
        return;
    }
    case RI_SIMD_SHUFFLE: {
        uint32_t b = pop_v128(c), a = pop_v128(c);
        const uint8_t *l = in->imm.simd.bytes;
        uint32_t run = 1;
        while (run < 16 && l[run] == l[0] + run) run++;
        if (run == 16 && l[0] <= 16) { /* consecutive lanes: one unaligned copy */
            emit4(c, RI_CODE_V128_SHUFFLE_SPAN, own_slot(c, c->h), a, b, l[0]);
            push_v128(c);
            return;
        }
        uint32_t p = emit_op(c, RI_CODE_V128_SHUFFLE, 9);
        if (p == NO_POS) return;
        c->code[p + 1] = own_slot(c, c->h);
        c->code[p + 2] = a;
        c->code[p + 3] = b;
        for (uint32_t w = 0; w < 4; w++) { /* lanes 4w .. 4w + 3, little-endian */
            const uint8_t *q = l + 4 * w;
            c->code[p + 4 + w] = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
        }
        c->code[p + 8] = shuffle_half(l) | shuffle_half(l + 8) << 8;
        push_v128(c);
        return;
    }
    case RI_SIMD_NONE: fail(c, RI_ERR_MALFORMED, "illegal SIMD opcode"); return;
    default: break;
    }
    uint32_t flags = 0, a = 0, b = 0, d = 0;
    switch ((ri_simd_shape)si.shape) {
    case RI_SIMD_TERN: d = pop_v128(c); flags |= RI_V128F_HAS_C; /* fall through */
    case RI_SIMD_BIN: b = pop_v128(c); flags |= RI_V128F_HAS_B; a = pop_v128(c); break;
    case RI_SIMD_SHIFT: case RI_SIMD_REPLACE: {
        operand x = pop(c);
        b = slot_of(c, x, c->h);
        flags |= RI_V128F_HAS_B | RI_V128F_B_SCALAR;
        a = pop_v128(c);
        break;
    }
    case RI_SIMD_UN: a = pop_v128(c); break;
    case RI_SIMD_TEST: case RI_SIMD_EXTRACT: a = pop_v128(c); flags |= RI_V128F_R_SCALAR; break;
    case RI_SIMD_SPLAT: {
        operand x = pop(c);
        a = slot_of(c, x, c->h);
        flags |= RI_V128F_A_SCALAR;
        break;
    }
    default: break;
    }
    uint32_t p = emit_op(c, simd_lane_op(sub), 6);
    if (p == NO_POS) return;
    c->code[p + 1] = own_slot(c, c->h);
    c->code[p + 2] = a;
    c->code[p + 3] = b;
    c->code[p + 4] = d;
    c->code[p + 5] = RI_V128_OP_WORD(sub, in->imm.simd.lane, flags);
    if (flags & RI_V128F_R_SCALAR) push_slot(c);
    else push_v128(c);
}
