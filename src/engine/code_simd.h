/*
 * The SIMD family of internal operations (code.h): X(NAME, WORDS, FLAGS, POINT) as in
 * RI_CODE_CONTROL_OPS (expanded with its RI_X_CTRL). A v128 operand or result is the
 * first of its two consecutive slots (simd.h); the lane semantics are simd.c's, selected
 * by the 0xFD sub-opcode in the instruction.
 */
#ifndef RI_ENGINE_CODE_SIMD_H
#define RI_ENGINE_CODE_SIMD_H

/* V128_OP's last word: the sub-opcode, the lane immediate, and which operands and
 * result are scalars (one slot) rather than v128 (two). */
#define RI_V128_OP_WORD(sub, lane, flags) ((uint32_t)(sub) | (uint32_t)(lane) << 8 | (uint32_t)(flags) << 16)
#define RI_V128F_A_SCALAR 1u  /* splat */
#define RI_V128F_B_SCALAR 2u  /* shifts, replace_lane */
#define RI_V128F_R_SCALAR 4u  /* extract_lane, any_true, all_true, bitmask */
#define RI_V128F_HAS_B 8u
#define RI_V128F_HAS_C 16u

#define RI_CODE_SIMD_OPS(X) \
    X(V128_OP, 6, 0, 0)         /* dst, a, b, c, RI_V128_OP_WORD: every lane operation but shuffle */ \
    X(V128_SHUFFLE, 8, 0, 0)    /* dst, a, b, the 16 lane indices in 4 words (little-endian) */ \
    X(V128_LOAD, 6, 0, TRAP)    /* dst, addr, vec (load_lane's vector), offset, sub | lane << 8 */ \
    X(V128_STORE, 5, 0, TRAP)   /* addr, vec, offset, sub | lane << 8 */ \
    X(V128_LOAD_G, 8, 0, TRAP)  /* dst, addr, vec, offset low, sub | lane << 8, memory, offset high: \
                                   any memory but a 32-bit memory 0 (i64 addresses, 64-bit offsets) */ \
    X(V128_STORE_G, 7, 0, TRAP) /* addr, vec, offset low, sub | lane << 8, memory, offset high */ \
    X(V128_GLOBAL_GET, 3, 0, 0) /* dst, global index */ \
    X(V128_GLOBAL_SET, 3, 0, 0) /* global index, src */ \
    X(V128_SELECT, 5, 0, 0)     /* dst, a, b, cond: dst = cond ? a : b */

#endif
