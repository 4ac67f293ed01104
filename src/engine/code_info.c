/*
 * The table of code_info.h, expanded from code.h's lists of operations: each family's
 * entry says the size and the properties of every operation it makes.
 */
#include "code_info.h"

#include <stdbool.h>

/* One operation (with its stop point: RI_STOP_<pt>); a variant of another (which has the
 * base's stop point and call kind: read through .base); an operation with the four branch
 * variants (RI_BRANCH_*). */
#define RI_INFO_ALL(name, fl, w, pt, call, ident) [RI_CODE_##name] = {(fl), RI_CODE_##name, (w), (pt), (call), (ident)},
#define RI_INFO_P(name, fl, w, pt) RI_INFO_ALL(name, fl, w, RI_STOP_##pt, 0, 0)
#define RI_INFO(name, fl, w) RI_INFO_P(name, fl, w, NONE)
#define RI_INFO_VARIANT(name, base, fl, w) [RI_CODE_##name] = {(fl), RI_CODE_##base, (w), 0, 0, 0},
#define RI_INFO4(name, w) \
    RI_INFO(name, RI_OPF_BRANCH, w) RI_INFO_VARIANT(name##_FG, name, RI_OPF_BRANCH, w) \
    RI_INFO_VARIANT(name##_BG, name, RI_OPF_BRANCH, w) RI_INFO_VARIANT(name##_BU, name, RI_OPF_BRANCH, w)
/* ... whose plain form may trap (a load-and-branch: the variants read it through .base) */
#define RI_INFO4_TRAP(name, w) \
    RI_INFO_P(name, RI_OPF_BRANCH, w, TRAP) RI_INFO_VARIANT(name##_FG, name, RI_OPF_BRANCH, w) \
    RI_INFO_VARIANT(name##_BG, name, RI_OPF_BRANCH, w) RI_INFO_VARIANT(name##_BU, name, RI_OPF_BRANCH, w)

/* A control operation's FLAGS column: its flags and call kind; its POINT column: its stop
 * point and flags (TRAP2: a TRAP point, and a second one at + 3). */
#define RI_CTRL_FLAGS_0 0, 0
#define RI_CTRL_FLAGS_CALL_LOCAL RI_OPF_CALL, RI_CALLK_LOCAL
#define RI_CTRL_FLAGS_CALL_IMPORT RI_OPF_CALL, RI_CALLK_IMPORT
#define RI_CTRL_FLAGS_CALL_INDIRECT RI_OPF_CALL, RI_CALLK_INDIRECT
#define RI_CTRL_FLAGS_TAIL RI_OPF_CALL, RI_CALLK_TAIL
#define RI_CTRL_FLAGS_ACC_INT RI_OPF_ACC_INT, 0
#define RI_CTRL_FLAGS_ACC_MOVE RI_OPF_ACC_MOVE, 0
#define RI_CTRL_POINT_0 RI_STOP_NONE, 0
#define RI_CTRL_POINT_ENTRY RI_STOP_ENTRY, 0
#define RI_CTRL_POINT_GAS RI_STOP_GAS, 0
#define RI_CTRL_POINT_LOOP RI_STOP_LOOP, 0
#define RI_CTRL_POINT_CALL RI_STOP_CALL, 0
#define RI_CTRL_POINT_TRAP RI_STOP_TRAP, 0
#define RI_CTRL_POINT_TRAP2 RI_STOP_TRAP, RI_OPF_TRAP2
#define RI_CTRL_POINT_BULK RI_STOP_BULK, 0
#define RI_CTRL_FIRST_(a, b) a
#define RI_CTRL_SECOND_(a, b) b
#define RI_CTRL_FIRST(pair) RI_CTRL_FIRST_ pair
#define RI_CTRL_SECOND(pair) RI_CTRL_SECOND_ pair
#define RI_CTRL_INFO(name, words, flags, point) \
    RI_INFO_ALL(name, RI_CTRL_FIRST(flags) | RI_CTRL_SECOND(point), words, RI_CTRL_FIRST(point), RI_CTRL_SECOND(flags), 0)

/* Loads whose handler leaves the loaded bits in acc: every i32 load, i64.load and
 * f32.load (not f64.load, whose value is no f64 producer's, nor the narrow i64 loads). */
#define RI_LOAD_ACC(op) \
    ((op) == RI_OP_I32_LOAD || (op) == RI_OP_I64_LOAD || (op) == RI_OP_F32_LOAD || \
     ((op) >= RI_OP_I32_LOAD8_S && (op) <= RI_OP_I32_LOAD16_U) ? RI_OPF_ACC_INT : 0u)

/* Numeric operations: the accumulator of their result (the reinterprets copy slots raw:
 * none), i64 operands, traps. */
#define RI_NUM_FLAGS(name, a, r) \
    ((RI_OP_##name >= RI_OP_I32_REINTERPRET_F32 && RI_OP_##name <= RI_OP_F64_REINTERPRET_I64) ? 0u \
     : RI_T_##r == RI_T_F64 ? RI_OPF_ACC_F64 : RI_OPF_ACC_INT) | \
    (RI_T_##a == RI_I64 ? RI_OPF_I64 : 0u) | (RI_NUMERIC_MAY_TRAP(RI_OP_##name) ? RI_OPF_NUM_TRAP : 0u)

const ri_code_info ri_code_infos[RI_CODE_OP_COUNT] = {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) RI_CTRL_INFO(name, words, (RI_CTRL_FLAGS_##flags), (RI_CTRL_POINT_##point))
#define RI_X_BR(name, words) RI_INFO4(name, words)
#define RI_X_CMPBR(cmp, neg) RI_INFO4(BR_IF_##cmp, 4) RI_INFO4(BR_IF_##cmp##_I, 4)
#define RI_X_FCMPBR(cmp, mirror) RI_INFO4(BR_IF_##cmp, 4) RI_INFO4(BR_IFNOT_##cmp, 4)
#define RI_X_IMM(name, mirror, ident) RI_INFO_ALL(name##_I, RI_OPF_ACC_INT, 4, RI_STOP_NONE, 0, RI_IDENT_##ident)
#define RI_X_ADDR(name) \
    RI_INFO_P(name##_X, RI_LOAD_ACC(RI_OP_##name), 5, TRAP) RI_INFO_P(name##_XI, RI_LOAD_ACC(RI_OP_##name), 5, TRAP)
#define RI_X_ADDBR(cmp) RI_INFO4(ADDBR_##cmp##_SS, 6) RI_INFO4(ADDBR_##cmp##_SI, 6) \
                        RI_INFO4(ADDBR_##cmp##_IS, 6) RI_INFO4(ADDBR_##cmp##_II, 6)
#define RI_X_I2ADDBR(cmp) RI_INFO4(I2ADDBR_##cmp##_SS, 12) RI_INFO4(I2ADDBR_##cmp##_SI, 12) \
                          RI_INFO4(I2ADDBR_##cmp##_IS, 12) RI_INFO4(I2ADDBR_##cmp##_II, 12)
#define RI_X_MADDBR(cmp) RI_INFO4(MADDBR_##cmp##_SS, 8) RI_INFO4(MADDBR_##cmp##_SI, 8) \
                         RI_INFO4(MADDBR_##cmp##_IS, 8) RI_INFO4(MADDBR_##cmp##_II, 8)
#define RI_X_PAIR(outer, inner) \
    RI_INFO(I32_##outer##_##inner, RI_OPF_ACC_INT, 5) \
    RI_INFO(I32_##outer##_##inner##_I, RI_OPF_ACC_INT, 5)
#define RI_X_ADDL(name, words, kinds, wasm) RI_INFO_P(name, RI_OPF_ACC_INT, words, TRAP)
#define RI_X_LOADBR(load) RI_INFO4_TRAP(load##_BR_EQ_S, 7) RI_INFO4_TRAP(load##_BR_NE_S, 7) \
                          RI_INFO4_TRAP(load##_BR_EQ_I, 7) RI_INFO4_TRAP(load##_BR_NE_I, 7)
#define RI_X_STORE2(name) RI_INFO_P(name##_2, RI_OPF_TRAP2, 7, TRAP)
#define RI_X_ACC(variant, base, words, mask, cls) RI_INFO_VARIANT(variant, base, 0, words)
#define RI_X_IPAIR(outer, inner) RI_INFO(I32_##outer##I_##inner##I, RI_OPF_ACC_INT, 5)
#define RI_X_MEM(name, byte, t, n, st) RI_INFO_P(name, RI_LOAD_ACC(RI_OP_##name), 4, TRAP)
#define RI_X_NUM(name, byte, a, b, r) \
    RI_INFO_ALL(name, RI_NUM_FLAGS(name, a, r), RI_T_##b ? 4 : 3, \
                RI_NUMERIC_MAY_TRAP(RI_OP_##name) ? RI_STOP_TRAP : RI_STOP_NONE, 0, 0)
#define RI_X_SAT(name, sub, a, b, r) RI_INFO(name, 0, 3)
    RI_CODE_EVERY_OP(RI_X_SAT)
};
#include "code_xundef.h"
#undef RI_X_SAT

/* The relations of code_info.h (ri_code_rel), each from its family's list. */
#define RI_FORM(rel, op, form) [rel][RI_CODE_##op] = 1 + RI_CODE_##form,
#define RI_CODE_NONE (-1) /* a NONE column: 1 + RI_CODE_NONE is 0, no form */
const uint16_t ri_code_forms[RI_REL_COUNT][RI_CODE_OP_COUNT] = {
#define RI_X_IMM(name, mirror, ident) RI_FORM(RI_REL_IMM, name, name##_I) RI_FORM(RI_REL_MIRROR, name, mirror)
    RI_CODE_IMM_OPS(RI_X_IMM)
#undef RI_X_IMM
#define RI_X_FCMPBR(cmp, mirror) \
    RI_FORM(RI_REL_FCMP, cmp, cmp) RI_FORM(RI_REL_FCMP, mirror, cmp)
    RI_CODE_FCMP_BRANCHES(RI_X_FCMPBR)
#undef RI_X_FCMPBR
#define RI_X_ADDR(name) RI_FORM(RI_REL_ADDR, name, name##_X)
    RI_CODE_ADDR_OPS(RI_X_ADDR)
#undef RI_X_ADDR
#define RI_X_STORE2(name) RI_FORM(RI_REL_STORE2, name, name##_2)
    RI_CODE_STORE2_OPS(RI_X_STORE2)
#undef RI_X_STORE2
};

/* The names, in the enum's order (code.h). */
#define RI_NAME4(s) s, s "_FG", s "_BG", s "_BU",
const char *const ri_code_names[RI_CODE_OP_COUNT] = {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) #name,
#define RI_X_BR(name, words) RI_NAME4(#name)
#define RI_X_CMPBR(cmp, neg) RI_NAME4("BR_IF_" #cmp) RI_NAME4("BR_IF_" #cmp "_I")
#define RI_X_FCMPBR(cmp, mirror) RI_NAME4("BR_IF_" #cmp) RI_NAME4("BR_IFNOT_" #cmp)
#define RI_X_IMM(name, mirror, ident) #name "_I",
#define RI_X_ADDR(name) #name "_X", #name "_XI",
#define RI_X_KINDS4(pre, cmp) RI_NAME4(pre #cmp "_SS") RI_NAME4(pre #cmp "_SI") RI_NAME4(pre #cmp "_IS") RI_NAME4(pre #cmp "_II")
#define RI_X_ADDBR(cmp) RI_X_KINDS4("ADDBR_", cmp)
#define RI_X_I2ADDBR(cmp) RI_X_KINDS4("I2ADDBR_", cmp)
#define RI_X_MADDBR(cmp) RI_X_KINDS4("MADDBR_", cmp)
#define RI_X_PAIR(o, i) "I32_" #o "_" #i, "I32_" #o "_" #i "_I",
#define RI_X_ADDL(name, words, kinds, wasm) #name,
#define RI_X_LOADBR(load) RI_NAME4(#load "_BR_EQ_S") RI_NAME4(#load "_BR_NE_S") RI_NAME4(#load "_BR_EQ_I") \
                          RI_NAME4(#load "_BR_NE_I")
#define RI_X_STORE2(name) #name "_2",
#define RI_X_ACC(variant, base, words, mask, cls) #variant,
#define RI_X_IPAIR(o, i) "I32_" #o "I_" #i "I",
#define RI_X_MEM(name, byte, t, n, st) #name,
#define RI_X_NUM(name, byte, a, b, r) #name,
    RI_CODE_EVERY_OP(RI_X_NUM)
};
#include "code_xundef.h"

/* The operand kinds (code.h, "Operand kinds"): each family's template, control and SIMD
 * operations their KINDS column; variants (branch _FG/_BG/_BU, accumulator _A*) have none
 * here and are read through their base. */
#define RI_IS_STORE(op) ((op) >= RI_OP_I32_STORE && (op) <= RI_OP_I64_STORE32)
#define RI_KINDS(name, k) [RI_CODE_##name] = (k),
const char *const ri_code_operand_kinds[RI_CODE_OP_COUNT] = {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) RI_KINDS(name, kinds)
#define RI_X_BR(name, words) RI_KINDS(name, words == 2 ? "O" : "SO")
#define RI_X_CMPBR(cmp, neg) RI_KINDS(BR_IF_##cmp, "SSO") RI_KINDS(BR_IF_##cmp##_I, "SIO")
#define RI_X_FCMPBR(cmp, mirror) RI_KINDS(BR_IF_##cmp, "SSO") RI_KINDS(BR_IFNOT_##cmp, "SSO")
#define RI_X_IMM(name, mirror, ident) RI_KINDS(name##_I, "DSI")
#define RI_X_ADDR(name) \
    RI_KINDS(name##_X, RI_IS_STORE(RI_OP_##name) ? "SSSM" : "DSSM") \
    RI_KINDS(name##_XI, RI_IS_STORE(RI_OP_##name) ? "SISM" : "DSIM")
/* (k, x, step, limit, offset), step and limit slots (S) or immediates (I) as the name says */
#define RI_KINDS_ADDBR(pre, cmp, head) \
    RI_KINDS(pre##cmp##_SS, head "DSSSO") RI_KINDS(pre##cmp##_SI, head "DSSIO") \
    RI_KINDS(pre##cmp##_IS, head "DSISO") RI_KINDS(pre##cmp##_II, head "DSIIO")
#define RI_X_ADDBR(cmp) RI_KINDS_ADDBR(ADDBR_, cmp, "")
#define RI_X_I2ADDBR(cmp) RI_KINDS_ADDBR(I2ADDBR_, cmp, "DSIDSI")
#define RI_X_MADDBR(cmp) RI_KINDS_ADDBR(MADDBR_, cmp, "DS")
#define RI_X_PAIR(o, i) RI_KINDS(I32_##o##_##i, "DSSS") RI_KINDS(I32_##o##_##i##_I, "DSSI")
#define RI_X_ADDL(name, words, kinds, wasm) RI_KINDS(name, kinds)
#define RI_X_LOADBR(load) \
    RI_KINDS(load##_BR_EQ_S, "DSIMSO") RI_KINDS(load##_BR_NE_S, "DSIMSO") \
    RI_KINDS(load##_BR_EQ_I, "DSIMIO") RI_KINDS(load##_BR_NE_I, "DSIMIO")
#define RI_X_STORE2(name) RI_KINDS(name##_2, "SSMSSM")
#define RI_X_ACC(variant, base, words, mask, cls)
#define RI_X_IPAIR(o, i) RI_KINDS(I32_##o##I_##i##I, "DSII")
#define RI_X_MEM(name, byte, t, n, st) RI_KINDS(name, (st) ? "SSM" : "DSM")
#define RI_X_NUM(name, byte, a, b, r) RI_KINDS(name, RI_T_##b ? "DSS" : "DS")
#define RI_X_SAT(name, sub, a, b, r) RI_KINDS(name, "DS")
    RI_CODE_EVERY_OP(RI_X_SAT)
};
#include "code_xundef.h"
#undef RI_X_SAT
#undef RI_KINDS_ADDBR
#undef RI_KINDS
#undef RI_IS_STORE

/* The WebAssembly column (code.h, "The WebAssembly column"): each family's template, control
 * and SIMD operations their WASM column; variants have none here and are read through their
 * base. */
#define RI_IS_STORE(op) ((op) >= RI_OP_I32_STORE && (op) <= RI_OP_I64_STORE32)
#define RI_WASM(name, form) [RI_CODE_##name] = (form),
#define RI_WASM_BR_BR "BR(O1)"
#define RI_WASM_BR_BR_IF "BR_IF(O2, S1)"
#define RI_WASM_BR_BR_IFNOT "BR_IF(O2, I32_EQZ(S1))"
/* the add and the branch on its sum k (k written first), a and b the add's step and the limit */
#define RI_WASM_ADDBR(cmp, k, x, a, b, o) k " = I32_ADD(" x ", " a "); BR_IF(" o ", " #cmp "(" k ", " b "))"
#define RI_WASM_ADDBR4(pre, cmp, head, k, x, s, i, l, il, o) \
    RI_WASM(pre##cmp##_SS, head RI_WASM_ADDBR(cmp, k, x, s, l, o)) \
    RI_WASM(pre##cmp##_SI, head RI_WASM_ADDBR(cmp, k, x, s, il, o)) \
    RI_WASM(pre##cmp##_IS, head RI_WASM_ADDBR(cmp, k, x, i, l, o)) \
    RI_WASM(pre##cmp##_II, head RI_WASM_ADDBR(cmp, k, x, i, il, o))
#define RI_WASM_LOADBR(load, cmp, b) "D1 = " #load "(M4, I32_ADD(S2, I3)); BR_IF(O6, " #cmp "(D1, " b "))"
const char *const ri_code_wasm_forms[RI_CODE_OP_COUNT] = {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) RI_WASM(name, wasm)
#define RI_X_BR(name, words) RI_WASM(name, RI_WASM_BR_##name)
#define RI_X_CMPBR(cmp, neg) \
    RI_WASM(BR_IF_##cmp, "BR_IF(O3, " #cmp "(S1, S2))") RI_WASM(BR_IF_##cmp##_I, "BR_IF(O3, " #cmp "(S1, I2))")
#define RI_X_FCMPBR(cmp, mirror) \
    RI_WASM(BR_IF_##cmp, "BR_IF(O3, " #cmp "(S1, S2))") RI_WASM(BR_IFNOT_##cmp, "BR_IF(O3, I32_EQZ(" #cmp "(S1, S2)))")
#define RI_X_IMM(name, mirror, ident) RI_WASM(name##_I, "D1 = " #name "(S2, I3)")
#define RI_X_ADDR(name) \
    RI_WASM(name##_X, RI_IS_STORE(RI_OP_##name) ? #name "(M4, I32_ADD(S1, S2), S3)" : "D1 = " #name "(M4, I32_ADD(S2, S3))") \
    RI_WASM(name##_XI, RI_IS_STORE(RI_OP_##name) ? #name "(M4, I32_ADD(S1, I2), S3)" : "D1 = " #name "(M4, I32_ADD(S2, I3))")
#define RI_X_ADDBR(cmp) RI_WASM_ADDBR4(ADDBR_, cmp, "", "D1", "S2", "S3", "I3", "S4", "I4", "O5")
#define RI_X_I2ADDBR(cmp) \
    RI_WASM_ADDBR4(I2ADDBR_, cmp, "D1 = I32_ADD(S2, I3); D4 = I32_ADD(S5, I6); ", "D7", "S8", "S9", "I9", "S10", "I10", "O11")
#define RI_X_MADDBR(cmp) RI_WASM_ADDBR4(MADDBR_, cmp, "D1 = S2; ", "D3", "S4", "S5", "I5", "S6", "I6", "O7")
#define RI_X_PAIR(o, i) \
    RI_WASM(I32_##o##_##i, "D1 = I32_" #o "(S2, I32_" #i "(S3, S4))") \
    RI_WASM(I32_##o##_##i##_I, "D1 = I32_" #o "(S2, I32_" #i "(S3, I4))")
#define RI_X_ADDL(name, words, kinds, wasm) RI_WASM(name, wasm)
#define RI_X_LOADBR(load) \
    RI_WASM(load##_BR_EQ_S, RI_WASM_LOADBR(load, I32_EQ, "S5")) RI_WASM(load##_BR_NE_S, RI_WASM_LOADBR(load, I32_NE, "S5")) \
    RI_WASM(load##_BR_EQ_I, RI_WASM_LOADBR(load, I32_EQ, "I5")) RI_WASM(load##_BR_NE_I, RI_WASM_LOADBR(load, I32_NE, "I5"))
#define RI_X_STORE2(name) RI_WASM(name##_2, #name "(M3, S1, S2); " #name "(M6, S4, S5)")
#define RI_X_ACC(variant, base, words, mask, cls)
#define RI_X_IPAIR(o, i) RI_WASM(I32_##o##I_##i##I, "D1 = I32_" #o "(I32_" #i "(S2, I3), I4)")
#define RI_X_MEM(name, byte, t, n, st) RI_WASM(name, (st) ? #name "(M3, S1, S2)" : "D1 = " #name "(M3, S2)")
#define RI_X_NUM(name, byte, a, b, r) RI_WASM(name, RI_T_##b ? "D1 = " #name "(S2, S3)" : "D1 = " #name "(S2)")
#define RI_X_SAT(name, sub, a, b, r) RI_WASM(name, "D1 = " #name "(S2)")
    RI_CODE_EVERY_OP(RI_X_SAT)
};
#include "code_xundef.h"
#undef RI_X_SAT
#undef RI_WASM_LOADBR
#undef RI_WASM_ADDBR4
#undef RI_WASM_ADDBR
#undef RI_WASM_BR_BR
#undef RI_WASM_BR_BR_IF
#undef RI_WASM_BR_BR_IFNOT
#undef RI_WASM
#undef RI_IS_STORE

const char *ri_code_wasm(uint32_t op) {
    if (op >= RI_CODE_OP_COUNT) return NULL;
    const char *form = ri_code_wasm_forms[op];
    return form ? form : ri_code_wasm_forms[ri_code_infos[op].base];
}

uint32_t ri_code_wasm_count(uint32_t op) {
    const char *form = ri_code_wasm(op);
    uint32_t n = 0;
    for (const char *c = form ? form : ""; *c; c++) n += *c == '('; /* one NAME( per instruction */
    return n;
}

const char *ri_code_operands(uint32_t op) {
    if (op >= RI_CODE_OP_COUNT) return NULL;
    const char *k = ri_code_operand_kinds[op];
    return k ? k : ri_code_operand_kinds[ri_code_infos[op].base];
}

/* The words a kind takes. */
static uint32_t kind_words(char kind) { return kind == 'L' ? 2 : 1; }

uint32_t ri_code_size_at(uint32_t op, const uint32_t *code, uint32_t pos, uint32_t nwords) {
    const char *kinds = ri_code_operands(op);
    if (!kinds || pos >= nwords) return 0;
    uint64_t size = ri_code_words(op);
    if (!size) { /* variable: fixed operands, `*` and the repeated kind, fixed operands */
        uint64_t w = 1, count = 0;
        for (const char *k = kinds; *k; k++) {
            if (*k == '*') {
                w += count * kind_words(k[1]);
                k++;
                continue;
            }
            if (*k == 'C') {
                if (pos + w >= nwords) return 0;
                count = code[pos + w];
            }
            w += kind_words(*k);
        }
        size = w;
    }
    return size <= nwords - pos ? (uint32_t)size : 0;
}

/* V128_OP's operand i (0 dst, 1 a, 2 b, 3 c) as its last word's flags make it. */
static char v128_op_kind(uint32_t i, uint32_t word) {
    uint32_t f = word >> 16;
    switch (i) {
    case 0: return (f & RI_V128F_R_SCALAR) ? 'D' : 'W';
    case 1: return (f & RI_V128F_A_SCALAR) ? 'S' : 'V';
    case 2: return !(f & RI_V128F_HAS_B) ? '_' : (f & RI_V128F_B_SCALAR) ? 'S' : 'V';
    default: return (f & RI_V128F_HAS_C) ? 'V' : '_';
    }
}

void ri_code_for_each_operand(uint32_t op, const uint32_t *code, uint32_t pos, ri_code_operand_fn *fn, void *ctx) {
    const char *kinds = ri_code_operands(op);
    if (!kinds) return;
    uint32_t size = ri_code_words(op), w = 1, count = 0, nvar = 0;
    for (const char *k = kinds; *k; k++) {
        uint32_t reps = 1;
        if (*k == '*') { reps = count; k++; }
        for (uint32_t r = 0; r < reps; r++) {
            char kind = *k == '?' ? v128_op_kind(nvar++, code[pos + size - 1]) : *k;
            if (kind == 'C') count = code[pos + w];
            fn(w, kind, code[pos + w], ctx);
            if (kind == 'L') { w++; fn(w, 'l', code[pos + w], ctx); }
            w++;
        }
    }
}

typedef struct kind_query { uint32_t k; char kind; } kind_query;
static void find_kind(uint32_t k, char kind, uint32_t value, void *ctx) {
    (void)value;
    kind_query *q = ctx;
    if (k == q->k) q->kind = kind;
}

char ri_code_operand_at(uint32_t op, const uint32_t *code, uint32_t pos, uint32_t k) {
    kind_query q = {k, 0};
    ri_code_for_each_operand(op, code, pos, find_kind, &q);
    return q.kind;
}

/* What ri_code_slot_reads/writes look for: the slots of kinds read (S, V) or written (D, W).
 * A slot operand is held back until the next operand says whether it starts an N range. */
typedef struct slot_walk {
    bool writes;
    uint32_t pending;   /* slots of the held operand: 0 none, 1, 2 (a v128) */
    uint32_t slot;
    ri_code_slot_cb *cb;
    void *ctx;
} slot_walk;

static void flush_slots(slot_walk *s) {
    for (uint32_t i = 0; i < s->pending; i++) s->cb(s->slot + i, s->ctx);
    s->pending = 0;
}

static void walk_slots(uint32_t k, char kind, uint32_t value, void *ctx) {
    (void)k;
    slot_walk *s = ctx;
    if (kind == 'N' && s->pending) {
        for (uint32_t i = 0; i < value; i++) s->cb(s->slot + i, s->ctx);
        s->pending = 0;
        return;
    }
    flush_slots(s);
    bool read = kind == 'S' || kind == 'V', written = kind == 'D' || kind == 'W';
    if ((read && !s->writes) || (written && s->writes)) {
        s->pending = kind == 'V' || kind == 'W' ? 2 : 1;
        s->slot = value;
    }
}

static void walk(uint32_t op, const uint32_t *code, uint32_t pos, bool writes, ri_code_slot_cb *cb, void *ctx) {
    slot_walk s = {writes, 0, 0, cb, ctx};
    ri_code_for_each_operand(op, code, pos, walk_slots, &s);
    flush_slots(&s);
}

void ri_code_slot_reads(uint32_t op, const uint32_t *code, uint32_t pos, ri_code_slot_cb *cb, void *ctx) {
    walk(op, code, pos, false, cb, ctx);
}

void ri_code_slot_writes(uint32_t op, const uint32_t *code, uint32_t pos, ri_code_slot_cb *cb, void *ctx) {
    walk(op, code, pos, true, cb, ctx);
}
