/*
 * The lane operations of the SIMD fast path (interp_simd.h): one inline function per
 * operation of code_simd.h's RI_CODE_SIMD_LANE_OPS and RI_CODE_SIMD_LOAD_OPS, on a v128 held
 * in a GNU C vector (GCC and Clang lower these to SSE2 on x86-64, NEON on aarch64, and to
 * plain scalar code elsewhere). Each computes exactly the bits simd.c's reference does
 * (tests/unit/test_simd_fast.c compares them on random and edge inputs).
 *
 * Only on little-endian hosts (RI_SIMD_VEC): there the 16 bytes of a v128's two slots, and
 * of linear memory, are the vector's bytes in WebAssembly lane order, so a slot pair is
 * one 16-byte copy. A big-endian host runs the reference (simd.c) for these operations.
 * x86-64 intrinsics are used only where the baseline (SSE2) has an instruction with the
 * spec's exact result (saturating narrows, bit masks, the i16 dot product, averages).
 */
#ifndef RI_ENGINE_SIMD_VEC_H
#define RI_ENGINE_SIMD_VEC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "numeric.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && \
    (defined(__GNUC__) || defined(__clang__)) && !defined(RI_SIMD_PORTABLE)
#define RI_SIMD_VEC 1
#else
#define RI_SIMD_VEC 0
#endif

#if RI_SIMD_VEC

#if defined(__SSE2__)
#include <emmintrin.h>
#define RI_SIMD_SSE2 1
#else
#define RI_SIMD_SSE2 0
#endif

/* (unsigned lanes for arithmetic: wrapping, no signed overflow; signed ones for
 * comparisons and arithmetic shifts) */
typedef uint8_t rv_u8 __attribute__((vector_size(16)));
typedef int8_t rv_i8 __attribute__((vector_size(16)));
typedef uint16_t rv_u16 __attribute__((vector_size(16)));
typedef int16_t rv_i16 __attribute__((vector_size(16)));
typedef uint32_t rv_u32 __attribute__((vector_size(16)));
typedef int32_t rv_i32 __attribute__((vector_size(16)));
typedef uint64_t rv_u64 __attribute__((vector_size(16)));
typedef int64_t rv_i64 __attribute__((vector_size(16)));
typedef float rv_f32 __attribute__((vector_size(16)));
typedef double rv_f64 __attribute__((vector_size(16)));
typedef rv_u8 rv; /* a v128 */

static inline rv rv_load(const void *p) { rv v; memcpy(&v, p, 16); return v; }
/* A v128 operand from its two slots: as two 8-byte loads, each of which the store
 * buffer can forward from the 8-byte writes of scalar code (MOVE, CONST64 of the two
 * halves), which one 16-byte load could not (a stall of a dozen cycles or more). The
 * empty asm keeps the compiler from merging them into the one load. */
static inline rv rv_load_slots(const void *p) {
    uint64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, (const uint8_t *)p + 8, 8);
    rv_u64 v = {lo, 0};
    __asm__("" : "+x"(v));
    v[1] = hi;
    return (rv)v;
}
static inline void rv_store(void *p, rv v) { memcpy(p, &v, 16); }

/* m ? a : b, lane by lane, for a mask m of all-ones or zero lanes */
static inline rv rv_blend(rv m, rv a, rv b) { return (a & m) | (b & ~m); }
#define RV_SEL(T, m, a, b) ((rv)rv_blend((rv)(m), (rv)(a), (rv)(b)))

/* ---- splat, extract, replace ---- */

/* (a 64-bit pattern of the value, in both halves) */
static inline rv rv_splat64(uint64_t x) { return (rv)(rv_u64){x, x}; }
static inline rv rv_I8X16_SPLAT(uint64_t x) { return rv_splat64((uint8_t)x * UINT64_C(0x0101010101010101)); }
static inline rv rv_I16X8_SPLAT(uint64_t x) { return rv_splat64((uint16_t)x * UINT64_C(0x0001000100010001)); }
static inline rv rv_I32X4_SPLAT(uint64_t x) { return rv_splat64((uint32_t)x * UINT64_C(0x0000000100000001)); }
static inline rv rv_I64X2_SPLAT(uint64_t x) { return rv_splat64(x); }
#define rv_F32X4_SPLAT rv_I32X4_SPLAT
#define rv_F64X2_SPLAT rv_I64X2_SPLAT

static inline uint64_t rv_I8X16_EXTRACT_LANE_S(rv a, uint32_t l) { return (uint32_t)(int32_t)((rv_i8)a)[l & 15]; }
static inline uint64_t rv_I8X16_EXTRACT_LANE_U(rv a, uint32_t l) { return a[l & 15]; }
static inline uint64_t rv_I16X8_EXTRACT_LANE_S(rv a, uint32_t l) { return (uint32_t)(int32_t)((rv_i16)a)[l & 7]; }
static inline uint64_t rv_I16X8_EXTRACT_LANE_U(rv a, uint32_t l) { return ((rv_u16)a)[l & 7]; }
static inline uint64_t rv_I32X4_EXTRACT_LANE(rv a, uint32_t l) { return ((rv_u32)a)[l & 3]; }
static inline uint64_t rv_I64X2_EXTRACT_LANE(rv a, uint32_t l) { return ((rv_u64)a)[l & 1]; }
#define rv_F32X4_EXTRACT_LANE rv_I32X4_EXTRACT_LANE
#define rv_F64X2_EXTRACT_LANE rv_I64X2_EXTRACT_LANE

/* (a lane mask and a blend rather than a store into the vector: such a store is a trip
 * through memory that the next 16-byte read could not be forwarded) */
static inline rv rv_I8X16_REPLACE_LANE(rv a, uint64_t x, uint32_t l) {
    rv_u8 iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return RV_SEL(rv_u8, iota == (uint8_t)(l & 15), rv_I8X16_SPLAT(x), a);
}
static inline rv rv_I16X8_REPLACE_LANE(rv a, uint64_t x, uint32_t l) {
    rv_u16 iota = {0, 1, 2, 3, 4, 5, 6, 7};
    return RV_SEL(rv_u16, iota == (uint16_t)(l & 7), rv_I16X8_SPLAT(x), a);
}
static inline rv rv_I32X4_REPLACE_LANE(rv a, uint64_t x, uint32_t l) {
    rv_u32 iota = {0, 1, 2, 3};
    return RV_SEL(rv_u32, iota == (l & 3), rv_I32X4_SPLAT(x), a);
}
static inline rv rv_I64X2_REPLACE_LANE(rv a, uint64_t x, uint32_t l) {
    rv_u64 iota = {0, 1};
    return RV_SEL(rv_u64, iota == (uint64_t)(l & 1), rv_I64X2_SPLAT(x), a);
}
#define rv_F32X4_REPLACE_LANE rv_I32X4_REPLACE_LANE
#define rv_F64X2_REPLACE_LANE rv_I64X2_REPLACE_LANE

/* ---- swizzle (the shuffles: interp_simd.h) ---- */

static inline rv rv_I8X16_SWIZZLE(rv a, rv b) {
    uint8_t t[16], r[16];
    memcpy(t, &a, 16);
    for (unsigned i = 0; i < 16; i++) r[i] = b[i] < 16 ? t[b[i]] : 0;
    return rv_load(r);
}

/* ---- bitwise ---- */

static inline rv rv_NOT(rv a) { return ~a; }
static inline rv rv_AND(rv a, rv b) { return a & b; }
static inline rv rv_ANDNOT(rv a, rv b) { return a & ~b; }
static inline rv rv_OR(rv a, rv b) { return a | b; }
static inline rv rv_XOR(rv a, rv b) { return a ^ b; }
static inline rv rv_BITSELECT(rv a, rv b, rv c) { return rv_blend(c, a, b); }
static inline uint64_t rv_ANY_TRUE(rv a) { rv_u64 v = (rv_u64)a; return (v[0] | v[1]) != 0; }

/* ---- integer comparisons (all-ones or zero lanes) ---- */

#define RV_CMP(NAME, T, op) static inline rv rv_##NAME(rv a, rv b) { return (rv)((T)a op (T)b); }
RV_CMP(I8X16_EQ, rv_u8, ==) RV_CMP(I8X16_NE, rv_u8, !=) RV_CMP(I8X16_LT_S, rv_i8, <) RV_CMP(I8X16_LT_U, rv_u8, <)
RV_CMP(I8X16_GT_S, rv_i8, >) RV_CMP(I8X16_GT_U, rv_u8, >) RV_CMP(I8X16_LE_S, rv_i8, <=) RV_CMP(I8X16_LE_U, rv_u8, <=)
RV_CMP(I8X16_GE_S, rv_i8, >=) RV_CMP(I8X16_GE_U, rv_u8, >=)
RV_CMP(I16X8_EQ, rv_u16, ==) RV_CMP(I16X8_NE, rv_u16, !=) RV_CMP(I16X8_LT_S, rv_i16, <) RV_CMP(I16X8_LT_U, rv_u16, <)
RV_CMP(I16X8_GT_S, rv_i16, >) RV_CMP(I16X8_GT_U, rv_u16, >) RV_CMP(I16X8_LE_S, rv_i16, <=) RV_CMP(I16X8_LE_U, rv_u16, <=)
RV_CMP(I16X8_GE_S, rv_i16, >=) RV_CMP(I16X8_GE_U, rv_u16, >=)
RV_CMP(I32X4_EQ, rv_u32, ==) RV_CMP(I32X4_NE, rv_u32, !=) RV_CMP(I32X4_LT_S, rv_i32, <) RV_CMP(I32X4_LT_U, rv_u32, <)
RV_CMP(I32X4_GT_S, rv_i32, >) RV_CMP(I32X4_GT_U, rv_u32, >) RV_CMP(I32X4_LE_S, rv_i32, <=) RV_CMP(I32X4_LE_U, rv_u32, <=)
RV_CMP(I32X4_GE_S, rv_i32, >=) RV_CMP(I32X4_GE_U, rv_u32, >=)
RV_CMP(I64X2_EQ, rv_u64, ==) RV_CMP(I64X2_NE, rv_u64, !=) RV_CMP(I64X2_LT_S, rv_i64, <) RV_CMP(I64X2_GT_S, rv_i64, >)
RV_CMP(I64X2_LE_S, rv_i64, <=) RV_CMP(I64X2_GE_S, rv_i64, >=)
/* float comparisons: ordered, but ne (true for NaN), as in C */
RV_CMP(F32X4_EQ, rv_f32, ==) RV_CMP(F32X4_NE, rv_f32, !=) RV_CMP(F32X4_LT, rv_f32, <) RV_CMP(F32X4_GT, rv_f32, >)
RV_CMP(F32X4_LE, rv_f32, <=) RV_CMP(F32X4_GE, rv_f32, >=)
RV_CMP(F64X2_EQ, rv_f64, ==) RV_CMP(F64X2_NE, rv_f64, !=) RV_CMP(F64X2_LT, rv_f64, <) RV_CMP(F64X2_GT, rv_f64, >)
RV_CMP(F64X2_LE, rv_f64, <=) RV_CMP(F64X2_GE, rv_f64, >=)

/* ---- integer arithmetic ---- */

#define RV_BIN(NAME, T, expr) static inline rv rv_##NAME(rv a_, rv b_) { T a = (T)a_, b = (T)b_; return (rv)(expr); }
#define RV_UN(NAME, T, expr) static inline rv rv_##NAME(rv a_) { T a = (T)a_; return (rv)(expr); }
RV_BIN(I8X16_ADD, rv_u8, a + b) RV_BIN(I8X16_SUB, rv_u8, a - b)
RV_BIN(I16X8_ADD, rv_u16, a + b) RV_BIN(I16X8_SUB, rv_u16, a - b) RV_BIN(I16X8_MUL, rv_u16, a * b)
RV_BIN(I32X4_ADD, rv_u32, a + b) RV_BIN(I32X4_SUB, rv_u32, a - b) RV_BIN(I32X4_MUL, rv_u32, a * b)
RV_BIN(I64X2_ADD, rv_u64, a + b) RV_BIN(I64X2_SUB, rv_u64, a - b) RV_BIN(I64X2_MUL, rv_u64, a * b)
RV_UN(I8X16_NEG, rv_u8, 0 - a) RV_UN(I16X8_NEG, rv_u16, 0 - a) RV_UN(I32X4_NEG, rv_u32, 0 - a) RV_UN(I64X2_NEG, rv_u64, 0 - a)
/* abs: negate the negative lanes (the most negative stays itself, as the spec says) */
#define RV_ABS(NAME, U, S) RV_UN(NAME, U, RV_SEL(U, (S)a < 0, 0 - a, a))
RV_ABS(I8X16_ABS, rv_u8, rv_i8) RV_ABS(I16X8_ABS, rv_u16, rv_i16) RV_ABS(I32X4_ABS, rv_u32, rv_i32)
RV_ABS(I64X2_ABS, rv_u64, rv_i64)
/* min, max: select by the signed or unsigned comparison */
#define RV_MINMAX(NAME, T, op) RV_BIN(NAME, T, RV_SEL(T, a op b, a, b))
RV_MINMAX(I8X16_MIN_S, rv_i8, <) RV_MINMAX(I8X16_MIN_U, rv_u8, <) RV_MINMAX(I8X16_MAX_S, rv_i8, >)
RV_MINMAX(I8X16_MAX_U, rv_u8, >) RV_MINMAX(I16X8_MIN_S, rv_i16, <) RV_MINMAX(I16X8_MIN_U, rv_u16, <)
RV_MINMAX(I16X8_MAX_S, rv_i16, >) RV_MINMAX(I16X8_MAX_U, rv_u16, >) RV_MINMAX(I32X4_MIN_S, rv_i32, <)
RV_MINMAX(I32X4_MIN_U, rv_u32, <) RV_MINMAX(I32X4_MAX_S, rv_i32, >) RV_MINMAX(I32X4_MAX_U, rv_u32, >)

/* saturating add and sub, rounding average */
#if RI_SIMD_SSE2
#define RV_SSE(NAME, fn) \
    static inline rv rv_##NAME(rv a, rv b) { __m128i x, y; memcpy(&x, &a, 16); memcpy(&y, &b, 16); x = fn(x, y); return rv_load(&x); }
RV_SSE(I8X16_ADD_SAT_S, _mm_adds_epi8) RV_SSE(I8X16_ADD_SAT_U, _mm_adds_epu8)
RV_SSE(I8X16_SUB_SAT_S, _mm_subs_epi8) RV_SSE(I8X16_SUB_SAT_U, _mm_subs_epu8)
RV_SSE(I16X8_ADD_SAT_S, _mm_adds_epi16) RV_SSE(I16X8_ADD_SAT_U, _mm_adds_epu16)
RV_SSE(I16X8_SUB_SAT_S, _mm_subs_epi16) RV_SSE(I16X8_SUB_SAT_U, _mm_subs_epu16)
RV_SSE(I8X16_AVGR_U, _mm_avg_epu8) RV_SSE(I16X8_AVGR_U, _mm_avg_epu16)
/* i16x8.narrow_i32x4_u has no SSE2 instruction (packusdw is SSE4.1): see below */
RV_SSE(I8X16_NARROW_I16X8_S, _mm_packs_epi16) RV_SSE(I8X16_NARROW_I16X8_U, _mm_packus_epi16)
RV_SSE(I16X8_NARROW_I32X4_S, _mm_packs_epi32)
/* pmaddwd: the two products' sum wraps as the spec's does (only -32768 * -32768 * 2
 * overflows, to 0x80000000 both ways) */
RV_SSE(I32X4_DOT_I16X8_S, _mm_madd_epi16)
#else
/* unsigned: the wrapped sum is below an operand exactly when it overflowed (to all
 * ones); the wrapped difference above a when it underflowed (to zero) */
RV_BIN(I8X16_ADD_SAT_U, rv_u8, (a + b) | (rv_u8)(a + b < a)) RV_BIN(I8X16_SUB_SAT_U, rv_u8, (a - b) & ~(rv_u8)(a < b))
RV_BIN(I16X8_ADD_SAT_U, rv_u16, (a + b) | (rv_u16)(a + b < a)) RV_BIN(I16X8_SUB_SAT_U, rv_u16, (a - b) & ~(rv_u16)(a < b))
/* signed: lane by lane in int */
#define RV_SAT_S(NAME, T, n, expr, lo, hi) \
    static inline rv rv_##NAME(rv a_, rv b_) { \
        T a = (T)a_, b = (T)b_, r = {0}; \
        for (unsigned i = 0; i < (n); i++) { int x = (expr); r[i] = x < (lo) ? (lo) : x > (hi) ? (hi) : x; } \
        return (rv)r; \
    }
RV_SAT_S(I8X16_ADD_SAT_S, rv_i8, 16, a[i] + b[i], -128, 127) RV_SAT_S(I8X16_SUB_SAT_S, rv_i8, 16, a[i] - b[i], -128, 127)
RV_SAT_S(I16X8_ADD_SAT_S, rv_i16, 8, a[i] + b[i], -32768, 32767)
RV_SAT_S(I16X8_SUB_SAT_S, rv_i16, 8, a[i] - b[i], -32768, 32767)
/* (a + b + 1) >> 1 without overflow: (a | b) - ((a ^ b) >> 1) */
RV_BIN(I8X16_AVGR_U, rv_u8, (a | b) - ((a ^ b) >> 1)) RV_BIN(I16X8_AVGR_U, rv_u16, (a | b) - ((a ^ b) >> 1))
#endif

/* ---- widening, narrowing ---- */

/* The low or high half's lanes, widened: the lanes interleaved with zeros (unsigned) or
 * with themselves and shifted arithmetically (signed). */
#define RV_LO8 0, 1, 2, 3, 4, 5, 6, 7
#define RV_HI8 8, 9, 10, 11, 12, 13, 14, 15
static inline rv rv_I16X8_EXTEND_LOW_I8X16_U(rv a) {
    return __builtin_shufflevector(a, (rv){0}, 0, 16, 1, 16, 2, 16, 3, 16, 4, 16, 5, 16, 6, 16, 7, 16);
}
static inline rv rv_I16X8_EXTEND_HIGH_I8X16_U(rv a) {
    return __builtin_shufflevector(a, (rv){0}, 8, 16, 9, 16, 10, 16, 11, 16, 12, 16, 13, 16, 14, 16, 15, 16);
}
static inline rv rv_I16X8_EXTEND_LOW_I8X16_S(rv a) {
    return (rv)((rv_i16)__builtin_shufflevector(a, a, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7) >> 8);
}
static inline rv rv_I16X8_EXTEND_HIGH_I8X16_S(rv a) {
    return (rv)((rv_i16)__builtin_shufflevector(a, a, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15) >> 8);
}
static inline rv rv_I32X4_EXTEND_LOW_I16X8_U(rv a) {
    rv_u16 v = (rv_u16)a;
    return (rv)__builtin_shufflevector(v, (rv_u16){0}, 0, 8, 1, 8, 2, 8, 3, 8);
}
static inline rv rv_I32X4_EXTEND_HIGH_I16X8_U(rv a) {
    rv_u16 v = (rv_u16)a;
    return (rv)__builtin_shufflevector(v, (rv_u16){0}, 4, 8, 5, 8, 6, 8, 7, 8);
}
static inline rv rv_I32X4_EXTEND_LOW_I16X8_S(rv a) {
    rv_u16 v = (rv_u16)a;
    return (rv)((rv_i32)__builtin_shufflevector(v, v, 0, 0, 1, 1, 2, 2, 3, 3) >> 16);
}
static inline rv rv_I32X4_EXTEND_HIGH_I16X8_S(rv a) {
    rv_u16 v = (rv_u16)a;
    return (rv)((rv_i32)__builtin_shufflevector(v, v, 4, 4, 5, 5, 6, 6, 7, 7) >> 16);
}
static inline rv rv_I64X2_EXTEND_LOW_I32X4_U(rv a) {
    rv_u32 v = (rv_u32)a;
    return (rv)__builtin_shufflevector(v, (rv_u32){0}, 0, 4, 1, 4);
}
static inline rv rv_I64X2_EXTEND_HIGH_I32X4_U(rv a) {
    rv_u32 v = (rv_u32)a;
    return (rv)__builtin_shufflevector(v, (rv_u32){0}, 2, 4, 3, 4);
}
static inline rv rv_I64X2_EXTEND_LOW_I32X4_S(rv a) {
    rv_u32 v = (rv_u32)a;
    return (rv)((rv_i64)__builtin_shufflevector(v, v, 0, 0, 1, 1) >> 32);
}
static inline rv rv_I64X2_EXTEND_HIGH_I32X4_S(rv a) {
    rv_u32 v = (rv_u32)a;
    return (rv)((rv_i64)__builtin_shufflevector(v, v, 2, 2, 3, 3) >> 32);
}
/* extmul: both halves widened, then multiplied (the products fit) */
#define RV_EXTMUL(NAME, T, ext) static inline rv rv_##NAME(rv a, rv b) { return (rv)((T)ext(a) * (T)ext(b)); }
RV_EXTMUL(I16X8_EXTMUL_LOW_I8X16_S, rv_u16, rv_I16X8_EXTEND_LOW_I8X16_S)
RV_EXTMUL(I16X8_EXTMUL_HIGH_I8X16_S, rv_u16, rv_I16X8_EXTEND_HIGH_I8X16_S)
RV_EXTMUL(I16X8_EXTMUL_LOW_I8X16_U, rv_u16, rv_I16X8_EXTEND_LOW_I8X16_U)
RV_EXTMUL(I16X8_EXTMUL_HIGH_I8X16_U, rv_u16, rv_I16X8_EXTEND_HIGH_I8X16_U)
RV_EXTMUL(I32X4_EXTMUL_LOW_I16X8_S, rv_u32, rv_I32X4_EXTEND_LOW_I16X8_S)
RV_EXTMUL(I32X4_EXTMUL_HIGH_I16X8_S, rv_u32, rv_I32X4_EXTEND_HIGH_I16X8_S)
RV_EXTMUL(I32X4_EXTMUL_LOW_I16X8_U, rv_u32, rv_I32X4_EXTEND_LOW_I16X8_U)
RV_EXTMUL(I32X4_EXTMUL_HIGH_I16X8_U, rv_u32, rv_I32X4_EXTEND_HIGH_I16X8_U)

/* Saturating narrows: each lane clamped, then the low halves of both operands' lanes. */
#define RV_CLAMP(T, x, lo, hi) ((T)RV_SEL(T, (x) < (lo), (T){0} + (lo), RV_SEL(T, (x) > (hi), (T){0} + (hi), x)))
static inline rv rv_I16X8_NARROW_I32X4_U(rv a, rv b) {
    rv_u16 x = (rv_u16)RV_CLAMP(rv_i32, (rv_i32)a, 0, 65535), y = (rv_u16)RV_CLAMP(rv_i32, (rv_i32)b, 0, 65535);
    return (rv)__builtin_shufflevector(x, y, 0, 2, 4, 6, 8, 10, 12, 14);
}
#if !RI_SIMD_SSE2
static inline rv rv_I8X16_NARROW_I16X8_S(rv a, rv b) {
    rv x = (rv)RV_CLAMP(rv_i16, (rv_i16)a, -128, 127), y = (rv)RV_CLAMP(rv_i16, (rv_i16)b, -128, 127);
    return __builtin_shufflevector(x, y, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
static inline rv rv_I8X16_NARROW_I16X8_U(rv a, rv b) {
    rv x = (rv)RV_CLAMP(rv_i16, (rv_i16)a, 0, 255), y = (rv)RV_CLAMP(rv_i16, (rv_i16)b, 0, 255);
    return __builtin_shufflevector(x, y, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
static inline rv rv_I16X8_NARROW_I32X4_S(rv a, rv b) {
    rv_u16 x = (rv_u16)RV_CLAMP(rv_i32, (rv_i32)a, -32768, 32767), y = (rv_u16)RV_CLAMP(rv_i32, (rv_i32)b, -32768, 32767);
    return (rv)__builtin_shufflevector(x, y, 0, 2, 4, 6, 8, 10, 12, 14);
}
static inline rv rv_I32X4_DOT_I16X8_S(rv a, rv b) {
    rv_i16 x = (rv_i16)a, y = (rv_i16)b;
    rv_u32 r = {0};
    for (unsigned i = 0; i < 4; i++)
        r[i] = (uint32_t)((int32_t)x[2 * i] * y[2 * i]) + (uint32_t)((int32_t)x[2 * i + 1] * y[2 * i + 1]);
    return (rv)r;
}
#endif

/* ---- shifts (the count modulo the lane width) ---- */

#define RV_SHIFT(NAME, T, op, bits) \
    static inline rv rv_##NAME(rv a, uint32_t s) { return (rv)((T)a op (int)(s & ((bits) - 1))); }
RV_SHIFT(I8X16_SHL, rv_u8, <<, 8) RV_SHIFT(I8X16_SHR_S, rv_i8, >>, 8) RV_SHIFT(I8X16_SHR_U, rv_u8, >>, 8)
RV_SHIFT(I16X8_SHL, rv_u16, <<, 16) RV_SHIFT(I16X8_SHR_S, rv_i16, >>, 16) RV_SHIFT(I16X8_SHR_U, rv_u16, >>, 16)
RV_SHIFT(I32X4_SHL, rv_u32, <<, 32) RV_SHIFT(I32X4_SHR_S, rv_i32, >>, 32) RV_SHIFT(I32X4_SHR_U, rv_u32, >>, 32)
RV_SHIFT(I64X2_SHL, rv_u64, <<, 64) RV_SHIFT(I64X2_SHR_S, rv_i64, >>, 64) RV_SHIFT(I64X2_SHR_U, rv_u64, >>, 64)

/* ---- tests: any_true (above), all_true, bitmask ---- */

#if RI_SIMD_SSE2
static inline int rv_movemask8(rv a) { __m128i x; memcpy(&x, &a, 16); return _mm_movemask_epi8(x); }
static inline uint64_t rv_I8X16_BITMASK(rv a) { return (uint32_t)rv_movemask8(a); }
/* the lanes' sign bits: every other byte's after packing the lanes' signs into bytes */
static inline uint64_t rv_I16X8_BITMASK(rv a) {
    __m128i x; memcpy(&x, &a, 16);
    return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(x, _mm_setzero_si128()));
}
static inline uint64_t rv_I32X4_BITMASK(rv a) { __m128 x; memcpy(&x, &a, 16); return (uint32_t)_mm_movemask_ps(x); }
static inline uint64_t rv_I64X2_BITMASK(rv a) { __m128d x; memcpy(&x, &a, 16); return (uint32_t)_mm_movemask_pd(x); }
#define RV_ALL_TRUE(NAME, T) static inline uint64_t rv_##NAME(rv a) { return rv_movemask8((rv)((T)a == 0)) == 0; }
#else
#define RV_BITMASK(NAME, T, n, shift) \
    static inline uint64_t rv_##NAME(rv a_) { \
        T a = (T)a_; uint32_t m = 0; \
        for (unsigned i = 0; i < (n); i++) m |= (uint32_t)(a[i] >> (shift)) << i; \
        return m; \
    }
RV_BITMASK(I8X16_BITMASK, rv_u8, 16, 7) RV_BITMASK(I16X8_BITMASK, rv_u16, 8, 15)
RV_BITMASK(I32X4_BITMASK, rv_u32, 4, 31) RV_BITMASK(I64X2_BITMASK, rv_u64, 2, 63)
/* no lane is zero: the 64-bit halves of the lanes-are-zero mask are both zero */
#define RV_ALL_TRUE(NAME, T) static inline uint64_t rv_##NAME(rv a) { return !rv_ANY_TRUE((rv)((T)a == 0)); }
#endif
RV_ALL_TRUE(I8X16_ALL_TRUE, rv_u8) RV_ALL_TRUE(I16X8_ALL_TRUE, rv_u16) RV_ALL_TRUE(I32X4_ALL_TRUE, rv_u32)
RV_ALL_TRUE(I64X2_ALL_TRUE, rv_u64)

/* ---- floats ---- */

/* NaN lanes made canonical when asked (simd.c's sf32, sf64) */
static inline rv rv_canon32(rv r, bool canon) {
    if (!canon) return r;
    rv_f32 f = (rv_f32)r;
    return RV_SEL(rv_u32, f != f, (rv_u32){0} + RI_F32_CANON, r);
}
static inline rv rv_canon64(rv r, bool canon) {
    if (!canon) return r;
    rv_f64 f = (rv_f64)r;
    return RV_SEL(rv_u64, f != f, (rv_u64){0} + RI_F64_CANON, r);
}
#define RV_FBIN(NAME, T, c, expr) \
    static inline rv rv_##NAME(rv a_, rv b_, bool canon) { T a = (T)a_, b = (T)b_; return rv_canon##c((rv)(expr), canon); }
RV_FBIN(F32X4_ADD, rv_f32, 32, a + b) RV_FBIN(F32X4_SUB, rv_f32, 32, a - b) RV_FBIN(F32X4_MUL, rv_f32, 32, a * b)
RV_FBIN(F32X4_DIV, rv_f32, 32, a / b)
RV_FBIN(F64X2_ADD, rv_f64, 64, a + b) RV_FBIN(F64X2_SUB, rv_f64, 64, a - b) RV_FBIN(F64X2_MUL, rv_f64, 64, a * b)
RV_FBIN(F64X2_DIV, rv_f64, 64, a / b)
/* min, max (numeric.h's ri_f32_min): a NaN operand gives it quieted (a's first); equal
 * operands give a | b (min: -0 over +0) or a & b (max) */
#define RV_FMINMAX(NAME, F, U, c, QUIET, lt, join) \
    static inline rv rv_##NAME(rv a_, rv b_, bool canon) { \
        F a = (F)a_, b = (F)b_; U ua = (U)a_, ub = (U)b_; \
        U r = (U)RV_SEL(U, a lt b, ua, RV_SEL(U, b lt a, ub, ua join ub)); \
        r = (U)RV_SEL(U, b != b, ub | (QUIET), r); \
        r = (U)RV_SEL(U, a != a, ua | (QUIET), r); \
        return rv_canon##c((rv)r, canon); \
    }
RV_FMINMAX(F32X4_MIN, rv_f32, rv_u32, 32, RI_F32_QUIET, <, |) RV_FMINMAX(F32X4_MAX, rv_f32, rv_u32, 32, RI_F32_QUIET, >, &)
RV_FMINMAX(F64X2_MIN, rv_f64, rv_u64, 64, RI_F64_QUIET, <, |) RV_FMINMAX(F64X2_MAX, rv_f64, rv_u64, 64, RI_F64_QUIET, >, &)
/* pmin: b < a ? b : a; pmax: a < b ? b : a (an operand as it is, never canonicalised) */
RV_BIN(F32X4_PMIN, rv_f32, RV_SEL(rv_u32, b < a, b, a)) RV_BIN(F32X4_PMAX, rv_f32, RV_SEL(rv_u32, a < b, b, a))
RV_BIN(F64X2_PMIN, rv_f64, RV_SEL(rv_u64, b < a, b, a)) RV_BIN(F64X2_PMAX, rv_f64, RV_SEL(rv_u64, a < b, b, a))
RV_UN(F32X4_ABS, rv_u32, a & ~RI_F32_SIGN) RV_UN(F32X4_NEG, rv_u32, a ^ RI_F32_SIGN)
RV_UN(F64X2_ABS, rv_u64, a & ~RI_F64_SIGN) RV_UN(F64X2_NEG, rv_u64, a ^ RI_F64_SIGN)
/* int32 -> float rounds to nearest, as numeric.h's conversion (never a NaN) */
RV_UN(F32X4_CONVERT_I32X4_S, rv_i32, __builtin_convertvector(a, rv_f32))

/* ---- memory: the bytes an access reads, made a v128 ---- */

/* (the bytes read into a scalar, then made a vector: a vector filled in memory would
 * be read back before the store buffer could forward it) */
static inline rv rv_mem8(const uint8_t *p) { uint64_t x; memcpy(&x, p, 8); return (rv)(rv_u64){x, 0}; }
static inline rv rv_LOAD128(const uint8_t *p) { return rv_load(p); }
static inline rv rv_LOAD8X8_S(const uint8_t *p) { return rv_I16X8_EXTEND_LOW_I8X16_S(rv_mem8(p)); }
static inline rv rv_LOAD8X8_U(const uint8_t *p) { return rv_I16X8_EXTEND_LOW_I8X16_U(rv_mem8(p)); }
static inline rv rv_LOAD16X4_S(const uint8_t *p) { return rv_I32X4_EXTEND_LOW_I16X8_S(rv_mem8(p)); }
static inline rv rv_LOAD16X4_U(const uint8_t *p) { return rv_I32X4_EXTEND_LOW_I16X8_U(rv_mem8(p)); }
static inline rv rv_LOAD32X2_S(const uint8_t *p) { return rv_I64X2_EXTEND_LOW_I32X4_S(rv_mem8(p)); }
static inline rv rv_LOAD32X2_U(const uint8_t *p) { return rv_I64X2_EXTEND_LOW_I32X4_U(rv_mem8(p)); }
static inline rv rv_LOAD8_SPLAT(const uint8_t *p) { return rv_I8X16_SPLAT(p[0]); }
static inline rv rv_LOAD16_SPLAT(const uint8_t *p) { uint16_t x; memcpy(&x, p, 2); return rv_I16X8_SPLAT(x); }
static inline rv rv_LOAD32_SPLAT(const uint8_t *p) { uint32_t x; memcpy(&x, p, 4); return rv_I32X4_SPLAT(x); }
static inline rv rv_LOAD64_SPLAT(const uint8_t *p) { uint64_t x; memcpy(&x, p, 8); return rv_I64X2_SPLAT(x); }
static inline rv rv_LOAD32_ZERO(const uint8_t *p) { uint32_t x; memcpy(&x, p, 4); return (rv)(rv_u32){x, 0, 0, 0}; }
#define rv_LOAD64_ZERO rv_mem8

#endif /* RI_SIMD_VEC */

#endif
