/*
 * The table of code_info.h, expanded from code.h's lists of operations: each family's
 * entry says the size and the properties of every operation it makes.
 */
#include "code_info.h"

/* One operation; an operation with the four branch variants (RI_BRANCH_*). */
#define RI_INFO(name, fl, w) [RI_CODE_##name] = {(fl), RI_CODE_##name, (w)},
#define RI_INFO_VARIANT(name, base, fl, w) [RI_CODE_##name] = {(fl), RI_CODE_##base, (w)},
#define RI_INFO4(name, w) \
    RI_INFO(name, RI_OPF_BRANCH, w) RI_INFO_VARIANT(name##_FG, name, RI_OPF_BRANCH, w) \
    RI_INFO_VARIANT(name##_BG, name, RI_OPF_BRANCH, w) RI_INFO_VARIANT(name##_BU, name, RI_OPF_BRANCH, w)

/* The flags of a control operation's FLAGS column (0 or one RI_OPF_ name). */
#define RI_CTRL_FLAGS_0 0
#define RI_CTRL_FLAGS_CALL RI_OPF_CALL
#define RI_CTRL_FLAGS_ACC_INT RI_OPF_ACC_INT
#define RI_CTRL_FLAGS_ACC_MOVE RI_OPF_ACC_MOVE
#define RI_CTRL_FLAGS_ACC_ADD_M RI_OPF_ACC_ADD_M

/* Loads whose handler leaves the loaded bits in acc: every i32 load, i64.load and
 * f32.load (not f64.load, whose value is no f64 producer's, nor the narrow i64 loads). */
#define RI_LOAD_ACC(op) \
    ((op) == RI_OP_I32_LOAD || (op) == RI_OP_I64_LOAD || (op) == RI_OP_F32_LOAD || \
     ((op) >= RI_OP_I32_LOAD8_S && (op) <= RI_OP_I32_LOAD16_U) ? RI_OPF_ACC_INT : 0u)

/* Numeric operations: the accumulator of their result (the reinterprets copy slots raw:
 * none), i64 operands, traps, pure f64 arithmetic (f64.add, sub, mul, div). */
#define RI_NUM_FLAGS(name, a, r) \
    ((RI_OP_##name >= RI_OP_I32_REINTERPRET_F32 && RI_OP_##name <= RI_OP_F64_REINTERPRET_I64) ? 0u \
     : RI_T_##r == RI_T_F64 ? RI_OPF_ACC_F64 : RI_OPF_ACC_INT) | \
    (RI_T_##a == RI_I64 ? RI_OPF_I64 : 0u) | (RI_NUMERIC_MAY_TRAP(RI_OP_##name) ? RI_OPF_NUM_TRAP : 0u) | \
    (RI_OP_##name >= RI_OP_F64_ADD && RI_OP_##name <= RI_OP_F64_DIV ? RI_OPF_PURE_F64 : 0u)

const ri_code_info ri_code_infos[RI_CODE_OP_COUNT] = {
#define RI_X_CTRL(name, words, flags) RI_INFO(name, RI_CTRL_FLAGS_##flags, words)
#define RI_X_BR(name, words) RI_INFO4(name, words)
#define RI_X_CMPBR(cmp, neg) RI_INFO4(BR_IF_##cmp, 4) RI_INFO4(BR_IF_##cmp##_I, 4)
#define RI_X_FCMPBR(cmp) RI_INFO4(BR_IF_##cmp, 4) RI_INFO4(BR_IFNOT_##cmp, 4)
#define RI_X_IMM(name) RI_INFO(name##_I, RI_OPF_ACC_INT, 4)
#define RI_X_ADDR(name) RI_INFO(name##_X, RI_LOAD_ACC(RI_OP_##name), 5) RI_INFO(name##_XI, RI_LOAD_ACC(RI_OP_##name), 5)
#define RI_X_ADDBR(cmp) RI_INFO4(ADDBR_##cmp##_SS, 6) RI_INFO4(ADDBR_##cmp##_SI, 6) \
                        RI_INFO4(ADDBR_##cmp##_IS, 6) RI_INFO4(ADDBR_##cmp##_II, 6)
#define RI_X_I2ADDBR(cmp) RI_INFO4(I2ADDBR_##cmp##_SS, 12) RI_INFO4(I2ADDBR_##cmp##_SI, 12) \
                          RI_INFO4(I2ADDBR_##cmp##_IS, 12) RI_INFO4(I2ADDBR_##cmp##_II, 12)
#define RI_X_MADDBR(cmp) RI_INFO4(MADDBR_##cmp##_SS, 8) RI_INFO4(MADDBR_##cmp##_SI, 8) \
                         RI_INFO4(MADDBR_##cmp##_IS, 8) RI_INFO4(MADDBR_##cmp##_II, 8)
#define RI_X_FMEM(name) \
    RI_INFO(name##_LA, RI_OPF_ACC_F64, 5) RI_INFO(name##_LB, RI_OPF_ACC_F64, 5) RI_INFO(name##_S, 0, 5) \
    RI_INFO(name##_MA, 0, 4) RI_INFO(name##_MB, 0, 4) \
    RI_INFO(name##_LXA, RI_OPF_ACC_F64, 6) RI_INFO(name##_LXB, RI_OPF_ACC_F64, 6)
#define RI_X_PAIR(outer, inner) \
    RI_INFO(I32_##outer##_##inner, RI_OPF_I32_PAIR | RI_OPF_ACC_INT, 5) \
    RI_INFO(I32_##outer##_##inner##_I, RI_OPF_I32_PAIR | RI_OPF_ACC_INT, 5)
#define RI_X_ADDL(name, words) RI_INFO(name, RI_OPF_ACC_INT, words)
#define RI_X_LOADBR(load) RI_INFO4(load##_BR_EQ_S, 7) RI_INFO4(load##_BR_NE_S, 7) \
                          RI_INFO4(load##_BR_EQ_I, 7) RI_INFO4(load##_BR_NE_I, 7)
#define RI_X_STORE2(name) RI_INFO(name##_2, 0, 7)
#define RI_X_ACC(variant, base, words, mask, cls) RI_INFO_VARIANT(variant, base, 0, words)
#define RI_X_IPAIR(outer, inner) RI_INFO(I32_##outer##I_##inner##I, RI_OPF_ACC_INT, 5)
#define RI_X_FPAIR(outer, inner) \
    RI_INFO(F64_##outer##_##inner##_A, RI_OPF_ACC_F64 | RI_OPF_PURE_F64, 5) \
    RI_INFO(F64_##outer##_##inner##_B, RI_OPF_ACC_F64 | RI_OPF_PURE_F64, 5)
#define RI_X_MEM(name, byte, t, n, st) RI_INFO(name, RI_LOAD_ACC(RI_OP_##name), 4)
#define RI_X_NUM(name, byte, a, b, r) RI_INFO(name, RI_NUM_FLAGS(name, a, r), RI_T_##b ? 4 : 3)
#define RI_X_SAT(name, sub, a, b, r) RI_INFO(name, 0, 3)
    RI_CODE_EVERY_OP(RI_X_SAT)
};
