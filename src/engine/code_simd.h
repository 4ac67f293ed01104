/*
 * The SIMD family of internal operations (code.h): X(NAME, WORDS, FLAGS, POINT, KINDS, WASM) as in
 * RI_CODE_CONTROL_OPS (expanded with its RI_X_CTRL). A v128 operand or result is the
 * first of its two consecutive slots (simd.h); the lane semantics are simd.c's, selected
 * by the 0xFD sub-opcode in the instruction.
 */
#ifndef RI_ENGINE_CODE_SIMD_H
#define RI_ENGINE_CODE_SIMD_H

/* V128_SHUFFLE's last word: byte h (0, 1) says how half h (lanes 8h .. 8h + 7) is made:
 * SPAN k: lanes k .. k + 7 of a then b; SPLAT k: lane k eight times; else GATHER. */
#define RI_SHUFFLE_GATHER 0u
#define RI_SHUFFLE_SPAN 1u
#define RI_SHUFFLE_SPLAT 2u
#define RI_SHUFFLE_HALF(kind, k) ((uint32_t)(kind) << 5 | (uint32_t)(k))

/* V128_OP's last word: the sub-opcode, the lane immediate, and which operands and
 * result are scalars (one slot) rather than v128 (two). */
#define RI_V128_OP_WORD(sub, lane, flags) ((uint32_t)(sub) | (uint32_t)(lane) << 8 | (uint32_t)(flags) << 16)
#define RI_V128F_A_SCALAR 1u  /* splat */
#define RI_V128F_B_SCALAR 2u  /* shifts, replace_lane */
#define RI_V128F_R_SCALAR 4u  /* extract_lane, any_true, all_true, bitmask */
#define RI_V128F_HAS_B 8u
#define RI_V128F_HAS_C 16u

#define RI_CODE_SIMD_OPS(X) \
    X(V128_OP, 6, 0, 0, "????I", "?1 = @I5(?2, ?3, ?4)")         /* dst, a, b, c, RI_V128_OP_WORD: every lane operation but shuffle */ \
    X(V128_SHUFFLE, 9, 0, 0, "WVVIIIII", "W1 = I8X16_SHUFFLE(V2, V3, I4, I5, I6, I7)")    /* dst, a, b, the 16 lane indices in 4 words (little-endian), how \
                                   each half of the result is made (RI_SHUFFLE_HALF) */ \
    X(V128_SHUFFLE_SPAN, 5, 0, 0, "WVVI", "W1 = I8X16_SHUFFLE(V2, V3, I4)") /* dst, a, b, s: a shuffle of lanes s .. s + 15, bytes s .. s + 15 \
                                     of a then b (a sliding window) */ \
    X(V128_LOAD, 6, 0, TRAP, "WSVMI", "W1 = @I5(M4, S2, V3)")    /* dst, addr, vec (load_lane's vector), offset, sub | lane << 8 */ \
    X(V128_STORE, 5, 0, TRAP, "SVMI", "@I4(M3, S1, V2)")   /* addr, vec, offset, sub | lane << 8 */ \
    X(V128_LOAD_G, 8, 0, TRAP, "WSVMIYI", "W1 = @I5(Y6, M4, I7, S2, V3)")  /* dst, addr, vec, offset low, sub | lane << 8, memory, offset high: \
                                   any memory but a 32-bit memory 0 (i64 addresses, 64-bit offsets) */ \
    X(V128_STORE_G, 7, 0, TRAP, "SVMIYI", "@I4(Y5, M3, I6, S1, V2)") /* addr, vec, offset low, sub | lane << 8, memory, offset high */ \
    X(V128_GLOBAL_GET, 3, 0, 0, "WG", "W1 = GLOBAL_GET(G2)") /* dst, global index */ \
    X(V128_GLOBAL_SET, 3, 0, 0, "GV", "GLOBAL_SET(G1, V2)") /* global index, src */ \
    X(V128_SELECT, 5, 0, 0, "WVVS", "W1 = SELECT(V2, V3, S4)")     /* dst, a, b, cond: dst = cond ? a : b */ \
    X(V128_STORE128, 5, 0, TRAP, "SVMI", "V128_STORE(M3, I32_ADD(S1, I4), V2)") /* v128.store of memory 0: addr, vec, offset, addend: at \
                                    (u32)(addr + addend) + offset */

/* The lane operations with handlers of their own (interp_simd.h; the lanes: simd_vec.h's
 * rv_NAME): X(NAME, SUB, KIND) is operation V128_NAME, what compile_simd.c emits instead of
 * V128_OP for 0xFD sub-opcode SUB, in V128_OP's layout (its last word too). KIND is the
 * handler's form: UN, BIN, FBIN (floats: NaNs made canonical when asked), TERN, SHIFT
 * (b scalar), TEST (scalar result), SPLAT (a scalar), EXTRACT, REPLACE (lane in the last
 * word). Every other sub-opcode stays V128_OP. */
#define RI_CODE_SIMD_LANE_OPS(X) \
    X(I8X16_SWIZZLE, 0x0E, BIN) \
    X(I8X16_SPLAT, 0x0F, SPLAT) X(I16X8_SPLAT, 0x10, SPLAT) X(I32X4_SPLAT, 0x11, SPLAT) \
    X(I64X2_SPLAT, 0x12, SPLAT) X(F32X4_SPLAT, 0x13, SPLAT) X(F64X2_SPLAT, 0x14, SPLAT) \
    X(I8X16_EXTRACT_LANE_S, 0x15, EXTRACT) X(I8X16_EXTRACT_LANE_U, 0x16, EXTRACT) \
    X(I8X16_REPLACE_LANE, 0x17, REPLACE) \
    X(I16X8_EXTRACT_LANE_S, 0x18, EXTRACT) X(I16X8_EXTRACT_LANE_U, 0x19, EXTRACT) \
    X(I16X8_REPLACE_LANE, 0x1A, REPLACE) \
    X(I32X4_EXTRACT_LANE, 0x1B, EXTRACT) X(I32X4_REPLACE_LANE, 0x1C, REPLACE) \
    X(I64X2_EXTRACT_LANE, 0x1D, EXTRACT) X(I64X2_REPLACE_LANE, 0x1E, REPLACE) \
    X(F32X4_EXTRACT_LANE, 0x1F, EXTRACT) X(F32X4_REPLACE_LANE, 0x20, REPLACE) \
    X(F64X2_EXTRACT_LANE, 0x21, EXTRACT) X(F64X2_REPLACE_LANE, 0x22, REPLACE) \
    X(I8X16_EQ, 0x23, BIN) X(I8X16_NE, 0x24, BIN) X(I8X16_LT_S, 0x25, BIN) X(I8X16_LT_U, 0x26, BIN) \
    X(I8X16_GT_S, 0x27, BIN) X(I8X16_GT_U, 0x28, BIN) X(I8X16_LE_S, 0x29, BIN) X(I8X16_LE_U, 0x2A, BIN) \
    X(I8X16_GE_S, 0x2B, BIN) X(I8X16_GE_U, 0x2C, BIN) \
    X(I16X8_EQ, 0x2D, BIN) X(I16X8_NE, 0x2E, BIN) X(I16X8_LT_S, 0x2F, BIN) X(I16X8_LT_U, 0x30, BIN) \
    X(I16X8_GT_S, 0x31, BIN) X(I16X8_GT_U, 0x32, BIN) X(I16X8_LE_S, 0x33, BIN) X(I16X8_LE_U, 0x34, BIN) \
    X(I16X8_GE_S, 0x35, BIN) X(I16X8_GE_U, 0x36, BIN) \
    X(I32X4_EQ, 0x37, BIN) X(I32X4_NE, 0x38, BIN) X(I32X4_LT_S, 0x39, BIN) X(I32X4_LT_U, 0x3A, BIN) \
    X(I32X4_GT_S, 0x3B, BIN) X(I32X4_GT_U, 0x3C, BIN) X(I32X4_LE_S, 0x3D, BIN) X(I32X4_LE_U, 0x3E, BIN) \
    X(I32X4_GE_S, 0x3F, BIN) X(I32X4_GE_U, 0x40, BIN) \
    X(F32X4_EQ, 0x41, BIN) X(F32X4_NE, 0x42, BIN) X(F32X4_LT, 0x43, BIN) X(F32X4_GT, 0x44, BIN) \
    X(F32X4_LE, 0x45, BIN) X(F32X4_GE, 0x46, BIN) \
    X(F64X2_EQ, 0x47, BIN) X(F64X2_NE, 0x48, BIN) X(F64X2_LT, 0x49, BIN) X(F64X2_GT, 0x4A, BIN) \
    X(F64X2_LE, 0x4B, BIN) X(F64X2_GE, 0x4C, BIN) \
    X(NOT, 0x4D, UN) X(AND, 0x4E, BIN) X(ANDNOT, 0x4F, BIN) X(OR, 0x50, BIN) X(XOR, 0x51, BIN) \
    X(BITSELECT, 0x52, TERN) X(ANY_TRUE, 0x53, TEST) \
    X(I8X16_ABS, 0x60, UN) X(I8X16_NEG, 0x61, UN) X(I8X16_ALL_TRUE, 0x63, TEST) X(I8X16_BITMASK, 0x64, TEST) \
    X(I8X16_NARROW_I16X8_S, 0x65, BIN) X(I8X16_NARROW_I16X8_U, 0x66, BIN) \
    X(I8X16_SHL, 0x6B, SHIFT) X(I8X16_SHR_S, 0x6C, SHIFT) X(I8X16_SHR_U, 0x6D, SHIFT) \
    X(I8X16_ADD, 0x6E, BIN) X(I8X16_ADD_SAT_S, 0x6F, BIN) X(I8X16_ADD_SAT_U, 0x70, BIN) \
    X(I8X16_SUB, 0x71, BIN) X(I8X16_SUB_SAT_S, 0x72, BIN) X(I8X16_SUB_SAT_U, 0x73, BIN) \
    X(I8X16_MIN_S, 0x76, BIN) X(I8X16_MIN_U, 0x77, BIN) X(I8X16_MAX_S, 0x78, BIN) X(I8X16_MAX_U, 0x79, BIN) \
    X(I8X16_AVGR_U, 0x7B, BIN) \
    X(I16X8_ABS, 0x80, UN) X(I16X8_NEG, 0x81, UN) X(I16X8_ALL_TRUE, 0x83, TEST) X(I16X8_BITMASK, 0x84, TEST) \
    X(I16X8_NARROW_I32X4_S, 0x85, BIN) X(I16X8_NARROW_I32X4_U, 0x86, BIN) \
    X(I16X8_EXTEND_LOW_I8X16_S, 0x87, UN) X(I16X8_EXTEND_HIGH_I8X16_S, 0x88, UN) \
    X(I16X8_EXTEND_LOW_I8X16_U, 0x89, UN) X(I16X8_EXTEND_HIGH_I8X16_U, 0x8A, UN) \
    X(I16X8_SHL, 0x8B, SHIFT) X(I16X8_SHR_S, 0x8C, SHIFT) X(I16X8_SHR_U, 0x8D, SHIFT) \
    X(I16X8_ADD, 0x8E, BIN) X(I16X8_ADD_SAT_S, 0x8F, BIN) X(I16X8_ADD_SAT_U, 0x90, BIN) \
    X(I16X8_SUB, 0x91, BIN) X(I16X8_SUB_SAT_S, 0x92, BIN) X(I16X8_SUB_SAT_U, 0x93, BIN) \
    X(I16X8_MUL, 0x95, BIN) \
    X(I16X8_MIN_S, 0x96, BIN) X(I16X8_MIN_U, 0x97, BIN) X(I16X8_MAX_S, 0x98, BIN) X(I16X8_MAX_U, 0x99, BIN) \
    X(I16X8_AVGR_U, 0x9B, BIN) \
    X(I16X8_EXTMUL_LOW_I8X16_S, 0x9C, BIN) X(I16X8_EXTMUL_HIGH_I8X16_S, 0x9D, BIN) \
    X(I16X8_EXTMUL_LOW_I8X16_U, 0x9E, BIN) X(I16X8_EXTMUL_HIGH_I8X16_U, 0x9F, BIN) \
    X(I32X4_ABS, 0xA0, UN) X(I32X4_NEG, 0xA1, UN) X(I32X4_ALL_TRUE, 0xA3, TEST) X(I32X4_BITMASK, 0xA4, TEST) \
    X(I32X4_EXTEND_LOW_I16X8_S, 0xA7, UN) X(I32X4_EXTEND_HIGH_I16X8_S, 0xA8, UN) \
    X(I32X4_EXTEND_LOW_I16X8_U, 0xA9, UN) X(I32X4_EXTEND_HIGH_I16X8_U, 0xAA, UN) \
    X(I32X4_SHL, 0xAB, SHIFT) X(I32X4_SHR_S, 0xAC, SHIFT) X(I32X4_SHR_U, 0xAD, SHIFT) \
    X(I32X4_ADD, 0xAE, BIN) X(I32X4_SUB, 0xB1, BIN) X(I32X4_MUL, 0xB5, BIN) \
    X(I32X4_MIN_S, 0xB6, BIN) X(I32X4_MIN_U, 0xB7, BIN) X(I32X4_MAX_S, 0xB8, BIN) X(I32X4_MAX_U, 0xB9, BIN) \
    X(I32X4_DOT_I16X8_S, 0xBA, BIN) \
    X(I32X4_EXTMUL_LOW_I16X8_S, 0xBC, BIN) X(I32X4_EXTMUL_HIGH_I16X8_S, 0xBD, BIN) \
    X(I32X4_EXTMUL_LOW_I16X8_U, 0xBE, BIN) X(I32X4_EXTMUL_HIGH_I16X8_U, 0xBF, BIN) \
    X(I64X2_ABS, 0xC0, UN) X(I64X2_NEG, 0xC1, UN) X(I64X2_ALL_TRUE, 0xC3, TEST) X(I64X2_BITMASK, 0xC4, TEST) \
    X(I64X2_EXTEND_LOW_I32X4_S, 0xC7, UN) X(I64X2_EXTEND_HIGH_I32X4_S, 0xC8, UN) \
    X(I64X2_EXTEND_LOW_I32X4_U, 0xC9, UN) X(I64X2_EXTEND_HIGH_I32X4_U, 0xCA, UN) \
    X(I64X2_SHL, 0xCB, SHIFT) X(I64X2_SHR_S, 0xCC, SHIFT) X(I64X2_SHR_U, 0xCD, SHIFT) \
    X(I64X2_ADD, 0xCE, BIN) X(I64X2_SUB, 0xD1, BIN) X(I64X2_MUL, 0xD5, BIN) \
    X(I64X2_EQ, 0xD6, BIN) X(I64X2_NE, 0xD7, BIN) X(I64X2_LT_S, 0xD8, BIN) X(I64X2_GT_S, 0xD9, BIN) \
    X(I64X2_LE_S, 0xDA, BIN) X(I64X2_GE_S, 0xDB, BIN) \
    X(F32X4_ABS, 0xE0, UN) X(F32X4_NEG, 0xE1, UN) \
    X(F32X4_ADD, 0xE4, FBIN) X(F32X4_SUB, 0xE5, FBIN) X(F32X4_MUL, 0xE6, FBIN) X(F32X4_DIV, 0xE7, FBIN) \
    X(F32X4_MIN, 0xE8, FBIN) X(F32X4_MAX, 0xE9, FBIN) X(F32X4_PMIN, 0xEA, BIN) X(F32X4_PMAX, 0xEB, BIN) \
    X(F64X2_ABS, 0xEC, UN) X(F64X2_NEG, 0xED, UN) \
    X(F64X2_ADD, 0xF0, FBIN) X(F64X2_SUB, 0xF1, FBIN) X(F64X2_MUL, 0xF2, FBIN) X(F64X2_DIV, 0xF3, FBIN) \
    X(F64X2_MIN, 0xF4, FBIN) X(F64X2_MAX, 0xF5, FBIN) X(F64X2_PMIN, 0xF6, BIN) X(F64X2_PMAX, 0xF7, BIN) \
    X(F32X4_CONVERT_I32X4_S, 0xFA, UN)

/* The loads of memory 0 with handlers of their own (interp_simd.h): X(NAME, SUB, BYTES) is
 * operation V128_NAME for sub-opcode SUB, reading BYTES bytes, in V128_LOAD's layout but
 * for word 3, an addend: dst, addr, addend, offset, sub; the access is at
 * (u32)(addr + addend) + offset (take_address_imm, fuse_memory.c, folds an i32.add of an immediate into it). The
 * lane loads and stores stay V128_LOAD and V128_STORE (v128.store is V128_STORE128). */
#define RI_CODE_SIMD_LOAD_OPS(X) \
    X(LOAD128, 0x00, 16) X(LOAD8X8_S, 0x01, 8) X(LOAD8X8_U, 0x02, 8) X(LOAD16X4_S, 0x03, 8) \
    X(LOAD16X4_U, 0x04, 8) X(LOAD32X2_S, 0x05, 8) X(LOAD32X2_U, 0x06, 8) X(LOAD8_SPLAT, 0x07, 1) \
    X(LOAD16_SPLAT, 0x08, 2) X(LOAD32_SPLAT, 0x09, 4) X(LOAD64_SPLAT, 0x0A, 8) X(LOAD32_ZERO, 0x5C, 4) \
    X(LOAD64_ZERO, 0x5D, 8)

/* The two lists as RI_CODE_EVERY_OP's entries (code.h), expanded with its RI_X_CTRL. */
#define RI_X_SIMD_LANE(name, sub, kind) RI_X_CTRL(V128_##name, 6, 0, 0, RI_SIMD_KINDS_##kind, RI_SIMD_WASM_##kind(name))
#define RI_X_SIMD_LOAD(name, sub, bytes) RI_X_CTRL(V128_##name, 6, 0, TRAP, "WSIMI", "W1 = @I5(M4, I32_ADD(S2, I3))")
/* The operand kinds (code.h) of each lane-operation form, in V128_OP's layout: dst, a, b,
 * c, the sub-opcode word; an operand the form does not have is an unused word. */
#define RI_SIMD_KINDS_UN "WV__I"
#define RI_SIMD_KINDS_BIN "WVV_I"
#define RI_SIMD_KINDS_FBIN "WVV_I"
#define RI_SIMD_KINDS_TERN "WVVVI"
#define RI_SIMD_KINDS_SHIFT "WVS_I"
#define RI_SIMD_KINDS_TEST "DV__I"
#define RI_SIMD_KINDS_SPLAT "WS__I"
#define RI_SIMD_KINDS_EXTRACT "DV__I"
#define RI_SIMD_KINDS_REPLACE "WVS_I"
/* ... and their WebAssembly column (code.h, "The WebAssembly column"): the instruction is the
 * lane list's NAME (NOT, AND, ANDNOT, OR, XOR, BITSELECT, ANY_TRUE are v128's); a lane
 * immediate is in the last word. */
#define RI_SIMD_WASM_UN(name) "W1 = " #name "(V2)"
#define RI_SIMD_WASM_BIN(name) "W1 = " #name "(V2, V3)"
#define RI_SIMD_WASM_FBIN(name) "W1 = " #name "(V2, V3)"
#define RI_SIMD_WASM_TERN(name) "W1 = " #name "(V2, V3, V4)"
#define RI_SIMD_WASM_SHIFT(name) "W1 = " #name "(V2, S3)"
#define RI_SIMD_WASM_TEST(name) "D1 = " #name "(V2)"
#define RI_SIMD_WASM_SPLAT(name) "W1 = " #name "(S2)"
#define RI_SIMD_WASM_EXTRACT(name) "D1 = " #name "(I5, V2)"
#define RI_SIMD_WASM_REPLACE(name) "W1 = " #name "(I5, V2, S3)"

#endif
