/*
 * The WebAssembly 2.0 instruction set as data, shared by the validator and the
 * compiler. Each table is an X-macro: define X(...) and expand the list.
 *
 * Type letters: I32 I64 F32 F64 (ri_valtype values); _ means "none".
 */
#ifndef RI_ENGINE_OPCODES_H
#define RI_ENGINE_OPCODES_H

#include "ri/engine.h"

#define RI_T_I32 RI_I32
#define RI_T_I64 RI_I64
#define RI_T_F32 RI_F32
#define RI_T_F64 RI_F64
#define RI_T__ 0

/* Control, parametric, variable, table, reference and constant instructions:
 * each needs its own validation rule. X(NAME, BYTE) */
#define RI_SPECIAL_OPS(X) \
    X(UNREACHABLE, 0x00) X(NOP, 0x01) X(BLOCK, 0x02) X(LOOP, 0x03) X(IF, 0x04) \
    X(TRY, 0x06) X(CATCH, 0x07) X(THROW, 0x08) X(RETHROW, 0x09) X(DELEGATE, 0x18) X(CATCH_ALL, 0x19) \
    X(THROW_REF, 0x0A) X(TRY_TABLE, 0x1F) \
    X(ELSE, 0x05) X(END, 0x0B) X(BR, 0x0C) X(BR_IF, 0x0D) X(BR_TABLE, 0x0E) \
    X(RETURN, 0x0F) X(CALL, 0x10) X(CALL_INDIRECT, 0x11) \
    X(RETURN_CALL, 0x12) X(RETURN_CALL_INDIRECT, 0x13) \
    X(DROP, 0x1A) X(SELECT, 0x1B) X(SELECT_T, 0x1C) \
    X(LOCAL_GET, 0x20) X(LOCAL_SET, 0x21) X(LOCAL_TEE, 0x22) \
    X(GLOBAL_GET, 0x23) X(GLOBAL_SET, 0x24) X(TABLE_GET, 0x25) X(TABLE_SET, 0x26) \
    X(MEMORY_SIZE, 0x3F) X(MEMORY_GROW, 0x40) \
    X(I32_CONST, 0x41) X(I64_CONST, 0x42) X(F32_CONST, 0x43) X(F64_CONST, 0x44) \
    X(REF_NULL, 0xD0) X(REF_IS_NULL, 0xD1) X(REF_FUNC, 0xD2)

#define RI_PREFIX_FC 0xFC
#define RI_PREFIX_FD 0xFD /* SIMD: a later issue */

/* Loads and stores: X(NAME, BYTE, VALTYPE, BYTES, IS_STORE). The natural alignment
 * is log2(BYTES); a memarg alignment above it is invalid. Narrow loads say their
 * extension in the name (_S sign, _U zero). */
#define RI_MEMORY_OPS(X) \
    X(I32_LOAD,     0x28, I32, 4, 0) \
    X(I64_LOAD,     0x29, I64, 8, 0) \
    X(F32_LOAD,     0x2A, F32, 4, 0) \
    X(F64_LOAD,     0x2B, F64, 8, 0) \
    X(I32_LOAD8_S,  0x2C, I32, 1, 0) \
    X(I32_LOAD8_U,  0x2D, I32, 1, 0) \
    X(I32_LOAD16_S, 0x2E, I32, 2, 0) \
    X(I32_LOAD16_U, 0x2F, I32, 2, 0) \
    X(I64_LOAD8_S,  0x30, I64, 1, 0) \
    X(I64_LOAD8_U,  0x31, I64, 1, 0) \
    X(I64_LOAD16_S, 0x32, I64, 2, 0) \
    X(I64_LOAD16_U, 0x33, I64, 2, 0) \
    X(I64_LOAD32_S, 0x34, I64, 4, 0) \
    X(I64_LOAD32_U, 0x35, I64, 4, 0) \
    X(I32_STORE,    0x36, I32, 4, 1) \
    X(I64_STORE,    0x37, I64, 8, 1) \
    X(F32_STORE,    0x38, F32, 4, 1) \
    X(F64_STORE,    0x39, F64, 8, 1) \
    X(I32_STORE8,   0x3A, I32, 1, 1) \
    X(I32_STORE16,  0x3B, I32, 2, 1) \
    X(I64_STORE8,   0x3C, I64, 1, 1) \
    X(I64_STORE16,  0x3D, I64, 2, 1) \
    X(I64_STORE32,  0x3E, I64, 4, 1)

/* Numeric instructions with a fixed signature and no immediates:
 * X(NAME, BYTE, IN1, IN2, OUT). Unary ops have IN2 = _. */
#define RI_NUMERIC_OPS(X) \
    X(I32_EQZ, 0x45, I32, _, I32) \
    X(I32_EQ, 0x46, I32, I32, I32) X(I32_NE, 0x47, I32, I32, I32) \
    X(I32_LT_S, 0x48, I32, I32, I32) X(I32_LT_U, 0x49, I32, I32, I32) \
    X(I32_GT_S, 0x4A, I32, I32, I32) X(I32_GT_U, 0x4B, I32, I32, I32) \
    X(I32_LE_S, 0x4C, I32, I32, I32) X(I32_LE_U, 0x4D, I32, I32, I32) \
    X(I32_GE_S, 0x4E, I32, I32, I32) X(I32_GE_U, 0x4F, I32, I32, I32) \
    X(I64_EQZ, 0x50, I64, _, I32) \
    X(I64_EQ, 0x51, I64, I64, I32) X(I64_NE, 0x52, I64, I64, I32) \
    X(I64_LT_S, 0x53, I64, I64, I32) X(I64_LT_U, 0x54, I64, I64, I32) \
    X(I64_GT_S, 0x55, I64, I64, I32) X(I64_GT_U, 0x56, I64, I64, I32) \
    X(I64_LE_S, 0x57, I64, I64, I32) X(I64_LE_U, 0x58, I64, I64, I32) \
    X(I64_GE_S, 0x59, I64, I64, I32) X(I64_GE_U, 0x5A, I64, I64, I32) \
    X(F32_EQ, 0x5B, F32, F32, I32) X(F32_NE, 0x5C, F32, F32, I32) \
    X(F32_LT, 0x5D, F32, F32, I32) X(F32_GT, 0x5E, F32, F32, I32) \
    X(F32_LE, 0x5F, F32, F32, I32) X(F32_GE, 0x60, F32, F32, I32) \
    X(F64_EQ, 0x61, F64, F64, I32) X(F64_NE, 0x62, F64, F64, I32) \
    X(F64_LT, 0x63, F64, F64, I32) X(F64_GT, 0x64, F64, F64, I32) \
    X(F64_LE, 0x65, F64, F64, I32) X(F64_GE, 0x66, F64, F64, I32) \
    X(I32_CLZ, 0x67, I32, _, I32) X(I32_CTZ, 0x68, I32, _, I32) X(I32_POPCNT, 0x69, I32, _, I32) \
    X(I32_ADD, 0x6A, I32, I32, I32) X(I32_SUB, 0x6B, I32, I32, I32) X(I32_MUL, 0x6C, I32, I32, I32) \
    X(I32_DIV_S, 0x6D, I32, I32, I32) X(I32_DIV_U, 0x6E, I32, I32, I32) \
    X(I32_REM_S, 0x6F, I32, I32, I32) X(I32_REM_U, 0x70, I32, I32, I32) \
    X(I32_AND, 0x71, I32, I32, I32) X(I32_OR, 0x72, I32, I32, I32) X(I32_XOR, 0x73, I32, I32, I32) \
    X(I32_SHL, 0x74, I32, I32, I32) X(I32_SHR_S, 0x75, I32, I32, I32) X(I32_SHR_U, 0x76, I32, I32, I32) \
    X(I32_ROTL, 0x77, I32, I32, I32) X(I32_ROTR, 0x78, I32, I32, I32) \
    X(I64_CLZ, 0x79, I64, _, I64) X(I64_CTZ, 0x7A, I64, _, I64) X(I64_POPCNT, 0x7B, I64, _, I64) \
    X(I64_ADD, 0x7C, I64, I64, I64) X(I64_SUB, 0x7D, I64, I64, I64) X(I64_MUL, 0x7E, I64, I64, I64) \
    X(I64_DIV_S, 0x7F, I64, I64, I64) X(I64_DIV_U, 0x80, I64, I64, I64) \
    X(I64_REM_S, 0x81, I64, I64, I64) X(I64_REM_U, 0x82, I64, I64, I64) \
    X(I64_AND, 0x83, I64, I64, I64) X(I64_OR, 0x84, I64, I64, I64) X(I64_XOR, 0x85, I64, I64, I64) \
    X(I64_SHL, 0x86, I64, I64, I64) X(I64_SHR_S, 0x87, I64, I64, I64) X(I64_SHR_U, 0x88, I64, I64, I64) \
    X(I64_ROTL, 0x89, I64, I64, I64) X(I64_ROTR, 0x8A, I64, I64, I64) \
    X(F32_ABS, 0x8B, F32, _, F32) X(F32_NEG, 0x8C, F32, _, F32) X(F32_CEIL, 0x8D, F32, _, F32) \
    X(F32_FLOOR, 0x8E, F32, _, F32) X(F32_TRUNC, 0x8F, F32, _, F32) X(F32_NEAREST, 0x90, F32, _, F32) \
    X(F32_SQRT, 0x91, F32, _, F32) \
    X(F32_ADD, 0x92, F32, F32, F32) X(F32_SUB, 0x93, F32, F32, F32) X(F32_MUL, 0x94, F32, F32, F32) \
    X(F32_DIV, 0x95, F32, F32, F32) X(F32_MIN, 0x96, F32, F32, F32) X(F32_MAX, 0x97, F32, F32, F32) \
    X(F32_COPYSIGN, 0x98, F32, F32, F32) \
    X(F64_ABS, 0x99, F64, _, F64) X(F64_NEG, 0x9A, F64, _, F64) X(F64_CEIL, 0x9B, F64, _, F64) \
    X(F64_FLOOR, 0x9C, F64, _, F64) X(F64_TRUNC, 0x9D, F64, _, F64) X(F64_NEAREST, 0x9E, F64, _, F64) \
    X(F64_SQRT, 0x9F, F64, _, F64) \
    X(F64_ADD, 0xA0, F64, F64, F64) X(F64_SUB, 0xA1, F64, F64, F64) X(F64_MUL, 0xA2, F64, F64, F64) \
    X(F64_DIV, 0xA3, F64, F64, F64) X(F64_MIN, 0xA4, F64, F64, F64) X(F64_MAX, 0xA5, F64, F64, F64) \
    X(F64_COPYSIGN, 0xA6, F64, F64, F64) \
    X(I32_WRAP_I64, 0xA7, I64, _, I32) \
    X(I32_TRUNC_F32_S, 0xA8, F32, _, I32) X(I32_TRUNC_F32_U, 0xA9, F32, _, I32) \
    X(I32_TRUNC_F64_S, 0xAA, F64, _, I32) X(I32_TRUNC_F64_U, 0xAB, F64, _, I32) \
    X(I64_EXTEND_I32_S, 0xAC, I32, _, I64) X(I64_EXTEND_I32_U, 0xAD, I32, _, I64) \
    X(I64_TRUNC_F32_S, 0xAE, F32, _, I64) X(I64_TRUNC_F32_U, 0xAF, F32, _, I64) \
    X(I64_TRUNC_F64_S, 0xB0, F64, _, I64) X(I64_TRUNC_F64_U, 0xB1, F64, _, I64) \
    X(F32_CONVERT_I32_S, 0xB2, I32, _, F32) X(F32_CONVERT_I32_U, 0xB3, I32, _, F32) \
    X(F32_CONVERT_I64_S, 0xB4, I64, _, F32) X(F32_CONVERT_I64_U, 0xB5, I64, _, F32) \
    X(F32_DEMOTE_F64, 0xB6, F64, _, F32) \
    X(F64_CONVERT_I32_S, 0xB7, I32, _, F64) X(F64_CONVERT_I32_U, 0xB8, I32, _, F64) \
    X(F64_CONVERT_I64_S, 0xB9, I64, _, F64) X(F64_CONVERT_I64_U, 0xBA, I64, _, F64) \
    X(F64_PROMOTE_F32, 0xBB, F32, _, F64) \
    X(I32_REINTERPRET_F32, 0xBC, F32, _, I32) X(I64_REINTERPRET_F64, 0xBD, F64, _, I64) \
    X(F32_REINTERPRET_I32, 0xBE, I32, _, F32) X(F64_REINTERPRET_I64, 0xBF, I64, _, F64) \
    X(I32_EXTEND8_S, 0xC0, I32, _, I32) X(I32_EXTEND16_S, 0xC1, I32, _, I32) \
    X(I64_EXTEND8_S, 0xC2, I64, _, I64) X(I64_EXTEND16_S, 0xC3, I64, _, I64) \
    X(I64_EXTEND32_S, 0xC4, I64, _, I64)

/* Whether numeric instruction op (of RI_NUMERIC_OPS) may trap: the integer divisions and
 * remainders (by zero, INT_MIN / -1) and the non-saturating float-to-integer truncations. */
#define RI_NUMERIC_MAY_TRAP(op) \
    (((op) >= RI_OP_I32_DIV_S && (op) <= RI_OP_I32_REM_U) || ((op) >= RI_OP_I64_DIV_S && (op) <= RI_OP_I64_REM_U) || \
     ((op) >= RI_OP_I32_TRUNC_F32_S && (op) <= RI_OP_I32_TRUNC_F64_U) || \
     ((op) >= RI_OP_I64_TRUNC_F32_S && (op) <= RI_OP_I64_TRUNC_F64_U))

/* 0xFC-prefixed instructions: X(NAME, SUBOPCODE). The saturating truncations
 * (0..7) are plain numeric ops, listed with their signature in RI_SAT_OPS. */
#define RI_SAT_OPS(X) \
    X(I32_TRUNC_SAT_F32_S, 0, F32, _, I32) X(I32_TRUNC_SAT_F32_U, 1, F32, _, I32) \
    X(I32_TRUNC_SAT_F64_S, 2, F64, _, I32) X(I32_TRUNC_SAT_F64_U, 3, F64, _, I32) \
    X(I64_TRUNC_SAT_F32_S, 4, F32, _, I64) X(I64_TRUNC_SAT_F32_U, 5, F32, _, I64) \
    X(I64_TRUNC_SAT_F64_S, 6, F64, _, I64) X(I64_TRUNC_SAT_F64_U, 7, F64, _, I64)

#define RI_FC_OPS(X) \
    X(MEMORY_INIT, 8) X(DATA_DROP, 9) X(MEMORY_COPY, 10) X(MEMORY_FILL, 11) \
    X(TABLE_INIT, 12) X(ELEM_DROP, 13) X(TABLE_COPY, 14) X(TABLE_GROW, 15) \
    X(TABLE_SIZE, 16) X(TABLE_FILL, 17)

/* Opcode constants: RI_OP_<NAME> = byte (for 0xFC ops: the sub-opcode, RI_FC_<NAME>). */
enum {
#define RI_X_SPECIAL(name, byte) RI_OP_##name = byte,
#define RI_X_MEM(name, byte, t, n, st) RI_OP_##name = byte,
#define RI_X_NUM(name, byte, a, b, r) RI_OP_##name = byte,
    RI_SPECIAL_OPS(RI_X_SPECIAL)
    RI_MEMORY_OPS(RI_X_MEM)
    RI_NUMERIC_OPS(RI_X_NUM)
#undef RI_X_SPECIAL
#undef RI_X_MEM
#undef RI_X_NUM
};

enum {
#define RI_X_SAT(name, sub, a, b, r) RI_FC_##name = sub,
#define RI_X_FC(name, sub) RI_FC_##name = sub,
    RI_SAT_OPS(RI_X_SAT)
    RI_FC_OPS(RI_X_FC)
#undef RI_X_SAT
#undef RI_X_FC
};

#endif
