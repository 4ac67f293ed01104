/*
 * ri_read_instr (src/engine/instr.h) decodes the common instructions inline and leaves the
 * rest to ri_read_instr_full: for every opcode byte, followed by immediates of one byte
 * and of several, of either sign, valid and not, and cut short at every length, both
 * must decode the same instruction, leave the reader at the same place and fail the same
 * way.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/instr.h"

/* The fields of ri_instr that the decoding of an instruction with no prefix sets. */
static void assert_same_instr(const ri_instr *a, const ri_instr *b) {
    assert_int_equal(a->offset, b->offset);
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->memidx[0], b->memidx[0]);
    assert_int_equal(a->memidx[1], b->memidx[1]);
    assert_int_equal(a->memidx_zero_bytes, b->memidx_zero_bytes);
    switch (ri_instr_class[a->op & 0xFF]) {
    case RI_IC_INDEX: assert_int_equal(a->imm.index, b->imm.index); break;
    case RI_IC_I32: assert_int_equal(a->imm.i32, b->imm.i32); break;
    case RI_IC_MEMARG:
        assert_int_equal(a->imm.mem.align, b->imm.mem.align);
        assert_int_equal(a->imm.mem.memidx, b->imm.mem.memidx);
        assert_true(a->imm.mem.offset == b->imm.mem.offset);
        assert_ptr_equal(a->imm.mem.offset32_error, b->imm.mem.offset32_error);
        break;
    case RI_IC_BLOCK:
        assert_int_equal(a->imm.block.kind, b->imm.block.kind);
        if (a->imm.block.kind == RI_BLOCK_VALTYPE) assert_int_equal(a->imm.block.valtype, b->imm.block.valtype);
        if (a->imm.block.kind == RI_BLOCK_TYPEIDX) assert_int_equal(a->imm.block.type_index, b->imm.block.type_index);
        break;
    case RI_IC_F32: assert_int_equal(a->imm.f32_bits, b->imm.f32_bits); break;
    case RI_IC_F64: assert_true(a->imm.f64_bits == b->imm.f64_bits); break;
    default: break;
    }
}

static void check_bytes(const uint8_t *bytes, size_t len) {
    for (size_t cut = 0; cut <= len; cut++) {
        ri_reader fast, full;
        ri_reader_init(&fast, bytes, bytes, bytes + cut);
        ri_reader_init(&full, bytes, bytes, bytes + cut);
        ri_instr a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        bool ok_fast = ri_read_instr(&fast, &a);
        bool ok_full = ri_read_instr_full(&full, &b);
        assert_int_equal(ok_fast, ok_full);
        assert_ptr_equal(fast.p, full.p);
        assert_int_equal(fast.failed, full.failed);
        assert_ptr_equal(fast.error, full.error);
        assert_int_equal(fast.error_offset, full.error_offset);
        assert_int_equal(fast.unsupported, full.unsupported);
        if (ok_fast) assert_same_instr(&a, &b);
    }
}

static void fast_decoding_matches_full(void **state) {
    (void)state;
    /* immediate bytes: small, with bit 6 (the sign of a LEB128's last byte), continued,
     * value types, and the alignments that flag a memory index */
    static const uint8_t imm[] = {0x00, 0x01, 0x3F, 0x40, 0x41, 0x7C, 0x7F, 0x80, 0xC0, 0xFF};
    size_t n = sizeof imm;
    for (unsigned op = 0; op < 0x100; op++) {
        if (op == RI_PREFIX_FC || op == RI_PREFIX_FD) continue; /* never on the fast path */
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                for (size_t k = 0; k < n; k++)
                    for (size_t l = 0; l < n; l++) {
                        /* (the fifth byte ends any LEB128 or fails the last byte's rules) */
                        uint8_t bytes[12] = {(uint8_t)op, imm[i], imm[j], imm[k], imm[l], imm[(i + l) % n],
                                             0x01, 0x0B, 0x0B, 0x0B, 0x0B, 0x0B};
                        check_bytes(bytes, sizeof bytes);
                    }
    }
}

/* The fast path knows only opcodes that the full decoding reads without a prefix. */
static void fast_classes_are_single_byte_opcodes(void **state) {
    (void)state;
    assert_int_equal(ri_instr_class[RI_PREFIX_FC], RI_IC_FULL);
    assert_int_equal(ri_instr_class[RI_PREFIX_FD], RI_IC_FULL);
    assert_int_equal(ri_instr_class[RI_OP_TRY_TABLE], RI_IC_FULL);
    assert_int_equal(ri_instr_class[RI_OP_BLOCK], RI_IC_BLOCK);
    assert_int_equal(ri_instr_class[RI_OP_I32_ADD], RI_IC_NONE);
    assert_int_equal(ri_instr_class[RI_OP_LOCAL_GET], RI_IC_INDEX);
    assert_int_equal(ri_instr_class[RI_OP_I32_CONST], RI_IC_I32);
    assert_int_equal(ri_instr_class[RI_OP_I64_STORE32], RI_IC_MEMARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fast_decoding_matches_full),
        cmocka_unit_test(fast_classes_are_single_byte_opcodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
