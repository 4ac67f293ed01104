/*
 * Numeric semantics of WebAssembly 2.0 (the specification's "Numerics" chapter),
 * as static inline functions for the interpreter.
 *
 * Representation: i32/i64 are uint32_t/uint64_t (signed views are computed without
 * relying on implementation-defined conversions); f32/f64 are float/double.
 *
 * Assumptions about the platform:
 *   - float and double are IEEE 754 binary32/binary64, evaluated at their own
 *     precision (FLT_EVAL_METHOD == 0, e.g. SSE2 on x86-64, any AArch64; s390x with gcc's
 *     -fexcess-precision=fast, which CMakeLists.txt passes: under -std=c11 gcc otherwise
 *     evaluates float in double there), with no contraction into fused multiply-adds
 *     (-ffp-contract=off), and the rounding mode is the default round-to-nearest-even
 *     (the engine never changes it).
 *     Under these, f32/f64 add, sub, mul, div and the comparisons are exactly C's
 *     + - * / == != < > <= >=, so this header does not wrap them. Their NaN results
 *     are whatever the hardware produces (always an arithmetic NaN, as the spec
 *     allows); the interpreter canonicalises with ri_f32_canon/ri_f64_canon if asked.
 *   - Passing float/double by value does not touch the bits (true for SSE/NEON
 *     registers; 32-bit x86 returns floats in x87 st(0), which quiets signalling
 *     NaNs, so that target is not supported).
 *
 * Everything that could depend on the compiler or the rounding mode -- rounding to
 * integral, integer->float conversion, f64->f32 demotion, NaN propagation -- is done
 * on the bit patterns with integer arithmetic, so the results are exact and the same
 * on every platform. Nothing here has undefined behaviour for any input.
 */
#ifndef RI_ENGINE_NUMERIC_H
#define RI_ENGINE_NUMERIC_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ri/engine.h"

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD > 0
#error "ri-sandbox needs float arithmetic at native precision (FLT_EVAL_METHOD == 0: -msse2 -mfpmath=sse on 32-bit x86; gcc -fexcess-precision=fast on s390x, as CMakeLists.txt passes)"
#endif

/* ---- bit views ---------------------------------------------------------------- */

static inline uint32_t ri_f32_bits(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static inline float ri_f32_from_bits(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }
static inline uint64_t ri_f64_bits(double x) { uint64_t u; memcpy(&u, &x, sizeof u); return u; }
static inline double ri_f64_from_bits(uint64_t u) { double x; memcpy(&x, &u, sizeof x); return x; }

#define RI_F32_SIGN 0x80000000u
#define RI_F32_EXP 0x7F800000u
#define RI_F32_QUIET 0x00400000u
#define RI_F32_CANON 0x7FC00000u
#define RI_F64_SIGN 0x8000000000000000u
#define RI_F64_EXP 0x7FF0000000000000u
#define RI_F64_QUIET 0x0008000000000000u
#define RI_F64_CANON 0x7FF8000000000000u

static inline bool ri_f32_is_nan_bits(uint32_t u) { return (u & ~RI_F32_SIGN) > RI_F32_EXP; }
static inline bool ri_f64_is_nan_bits(uint64_t u) { return (u & ~RI_F64_SIGN) > RI_F64_EXP; }

/* Spec test runner: "nan:canonical" accepts either sign, "nan:arithmetic" any
 * NaN whose quiet (most significant payload) bit is set. */
static inline bool ri_f32_is_canonical_nan_bits(uint32_t u) { return (u & ~RI_F32_SIGN) == RI_F32_CANON; }
static inline bool ri_f32_is_arithmetic_nan_bits(uint32_t u) { return (u & RI_F32_CANON) == RI_F32_CANON; }
static inline bool ri_f64_is_canonical_nan_bits(uint64_t u) { return (u & ~RI_F64_SIGN) == RI_F64_CANON; }
static inline bool ri_f64_is_arithmetic_nan_bits(uint64_t u) { return (u & RI_F64_CANON) == RI_F64_CANON; }

/* Positive canonical NaN for any NaN; other values unchanged. */
static inline float ri_f32_canon(float x) { return x != x ? ri_f32_from_bits(RI_F32_CANON) : x; }
static inline double ri_f64_canon(double x) { return x != x ? ri_f64_from_bits(RI_F64_CANON) : x; }

/* The NaN result of an operation on NaN operand x: x with the quiet bit set. This is
 * what the spec requires (canonical in -> canonical out, otherwise arithmetic) and
 * what hardware does, but without depending on hardware. */
static inline float ri_f32_quiet_(float x) { return ri_f32_from_bits(ri_f32_bits(x) | RI_F32_QUIET); }
static inline double ri_f64_quiet_(double x) { return ri_f64_from_bits(ri_f64_bits(x) | RI_F64_QUIET); }

/* ---- integer ------------------------------------------------------------------ */

static inline uint32_t ri_i32_clz(uint32_t a) { return a ? (uint32_t)__builtin_clz(a) : 32u; }
static inline uint32_t ri_i32_ctz(uint32_t a) { return a ? (uint32_t)__builtin_ctz(a) : 32u; }
static inline uint32_t ri_i32_popcnt(uint32_t a) { return (uint32_t)__builtin_popcount(a); }
static inline uint64_t ri_i64_clz(uint64_t a) { return a ? (uint64_t)__builtin_clzll(a) : 64u; }
static inline uint64_t ri_i64_ctz(uint64_t a) { return a ? (uint64_t)__builtin_ctzll(a) : 64u; }
static inline uint64_t ri_i64_popcnt(uint64_t a) { return (uint64_t)__builtin_popcountll(a); }

/* Shift and rotate counts are taken modulo the width; the "& (width-1)" on the
 * complementary shift keeps a count of 0 from becoming a shift by the width (UB). */
static inline uint32_t ri_i32_rotl(uint32_t a, uint32_t b)
{
    uint32_t n = b & 31u;
    return (a << n) | (a >> ((32u - n) & 31u));
}
static inline uint32_t ri_i32_rotr(uint32_t a, uint32_t b)
{
    uint32_t n = b & 31u;
    return (a >> n) | (a << ((32u - n) & 31u));
}
static inline uint64_t ri_i64_rotl(uint64_t a, uint64_t b)
{
    unsigned n = (unsigned)(b & 63u);
    return (a << n) | (a >> ((64u - n) & 63u));
}
static inline uint64_t ri_i64_rotr(uint64_t a, uint64_t b)
{
    unsigned n = (unsigned)(b & 63u);
    return (a >> n) | (a << ((64u - n) & 63u));
}

static inline uint32_t ri_i32_shl(uint32_t a, uint32_t b) { return a << (b & 31u); }
static inline uint32_t ri_i32_shr_u(uint32_t a, uint32_t b) { return a >> (b & 31u); }
/* Arithmetic shift on unsigned values: for negative a, ~(~a >> n) shifts in ones.
 * (>> on a negative signed value is implementation-defined in C.) */
static inline uint32_t ri_i32_shr_s(uint32_t a, uint32_t b)
{
    uint32_t n = b & 31u;
    return (a & 0x80000000u) ? ~(~a >> n) : a >> n;
}
static inline uint64_t ri_i64_shl(uint64_t a, uint64_t b) { return a << (b & 63u); }
static inline uint64_t ri_i64_shr_u(uint64_t a, uint64_t b) { return a >> (b & 63u); }
static inline uint64_t ri_i64_shr_s(uint64_t a, uint64_t b)
{
    unsigned n = (unsigned)(b & 63u);
    return (a & 0x8000000000000000u) ? ~(~a >> n) : a >> n;
}

/* Signed division on magnitudes in unsigned arithmetic: no signed overflow, no
 * implementation-defined conversions. Quotient truncates toward zero, the remainder
 * has the sign of the dividend, as in the spec. */
static inline ri_trap ri_i32_div_s(uint32_t a, uint32_t b, uint32_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    if (a == 0x80000000u && b == 0xFFFFFFFFu)
        return RI_TRAP_INT_OVERFLOW; /* 2^31 is not representable */
    bool na = (a >> 31) != 0, nb = (b >> 31) != 0;
    uint32_t q = (na ? 0u - a : a) / (nb ? 0u - b : b);
    *out = (na != nb) ? 0u - q : q;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i32_div_u(uint32_t a, uint32_t b, uint32_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    *out = a / b;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i32_rem_s(uint32_t a, uint32_t b, uint32_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    /* INT_MIN rem -1 = 0 falls out: 2^31 % 1 == 0. */
    bool na = (a >> 31) != 0, nb = (b >> 31) != 0;
    uint32_t r = (na ? 0u - a : a) % (nb ? 0u - b : b);
    *out = na ? 0u - r : r;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i32_rem_u(uint32_t a, uint32_t b, uint32_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    *out = a % b;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_div_s(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    if (a == 0x8000000000000000u && b == 0xFFFFFFFFFFFFFFFFu)
        return RI_TRAP_INT_OVERFLOW;
    bool na = (a >> 63) != 0, nb = (b >> 63) != 0;
    uint64_t q = (na ? 0u - a : a) / (nb ? 0u - b : b);
    *out = (na != nb) ? 0u - q : q;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_div_u(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    *out = a / b;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_rem_s(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    bool na = (a >> 63) != 0, nb = (b >> 63) != 0;
    uint64_t r = (na ? 0u - a : a) % (nb ? 0u - b : b);
    *out = na ? 0u - r : r;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_rem_u(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b == 0)
        return RI_TRAP_INT_DIV_ZERO;
    *out = a % b;
    return RI_TRAP_NONE;
}

/* Sign extension by "flip the sign bit, subtract it" in unsigned (wrapping) arithmetic. */
static inline uint32_t ri_i32_extend8_s(uint32_t a) { return ((a & 0xFFu) ^ 0x80u) - 0x80u; }
static inline uint32_t ri_i32_extend16_s(uint32_t a) { return ((a & 0xFFFFu) ^ 0x8000u) - 0x8000u; }
static inline uint64_t ri_i64_extend8_s(uint64_t a) { return ((a & 0xFFu) ^ 0x80u) - 0x80u; }
static inline uint64_t ri_i64_extend16_s(uint64_t a) { return ((a & 0xFFFFu) ^ 0x8000u) - 0x8000u; }
static inline uint64_t ri_i64_extend32_s(uint64_t a) { return ((a & 0xFFFFFFFFu) ^ 0x80000000u) - 0x80000000u; }

/* ---- float: sign operations (pure bit operations, NaN payloads untouched) ------ */

static inline float ri_f32_abs(float x) { return ri_f32_from_bits(ri_f32_bits(x) & ~RI_F32_SIGN); }
static inline float ri_f32_neg(float x) { return ri_f32_from_bits(ri_f32_bits(x) ^ RI_F32_SIGN); }
static inline float ri_f32_copysign(float a, float b)
{
    return ri_f32_from_bits((ri_f32_bits(a) & ~RI_F32_SIGN) | (ri_f32_bits(b) & RI_F32_SIGN));
}
static inline double ri_f64_abs(double x) { return ri_f64_from_bits(ri_f64_bits(x) & ~RI_F64_SIGN); }
static inline double ri_f64_neg(double x) { return ri_f64_from_bits(ri_f64_bits(x) ^ RI_F64_SIGN); }
static inline double ri_f64_copysign(double a, double b)
{
    return ri_f64_from_bits((ri_f64_bits(a) & ~RI_F64_SIGN) | (ri_f64_bits(b) & RI_F64_SIGN));
}

/* ---- float: rounding to integral ----------------------------------------------- */

enum { RI_RND_TRUNC_, RI_RND_FLOOR_, RI_RND_CEIL_, RI_RND_NEAREST_ };

/* Round the finite, non-NaN value with bits u (format: mbits fraction bits, exponent
 * bias `bias`, sign bit `sign`) to an integral value, on the bits alone so the result
 * never depends on the rounding mode. Rounding the magnitude up is "add one unit in
 * the integer position": a carry out of the fraction correctly bumps the exponent.
 * The sign is kept, so -0.4 -> -0 and so on, as the spec requires. */
static inline uint64_t ri_round_bits_(uint64_t u, unsigned mbits, unsigned bias, uint64_t sign, int mode)
{
    uint64_t mag = u & ~sign;
    uint64_t neg = u & sign;
    unsigned e = (unsigned)(mag >> mbits);
    if (e >= bias + mbits)
        return u; /* |x| >= 2^mbits: already integral (also inf; NaN handled by callers) */
    if (e < bias) { /* |x| < 1 */
        uint64_t one = (uint64_t)bias << mbits;
        uint64_t half = (uint64_t)(bias - 1) << mbits;
        if (mag == 0)
            return u;
        switch (mode) {
        case RI_RND_FLOOR_: return neg ? (neg | one) : 0;
        case RI_RND_CEIL_: return neg ? neg : one;
        case RI_RND_NEAREST_: return mag > half ? (neg | one) : neg; /* exactly 0.5 -> even 0 */
        default: return neg;
        }
    }
    unsigned shift = bias + mbits - e; /* fraction bits below the units position: 1..mbits */
    uint64_t unit = (uint64_t)1 << shift;
    uint64_t frac = u & (unit - 1);
    if (frac == 0)
        return u;
    uint64_t down = u & ~(unit - 1); /* toward zero */
    uint64_t up = down + unit;       /* away from zero */
    switch (mode) {
    case RI_RND_FLOOR_: return neg ? up : down;
    case RI_RND_CEIL_: return neg ? down : up;
    case RI_RND_NEAREST_: {
        uint64_t halfu = unit >> 1;
        /* Parity of the integer part: its lowest bit is the hidden bit when shift == mbits. */
        bool odd = shift == mbits ? true : ((u >> shift) & 1u) != 0;
        return (frac > halfu || (frac == halfu && odd)) ? up : down;
    }
    default: return down;
    }
}

static inline float ri_f32_round_(float x, int mode)
{
    if (x != x)
        return ri_f32_quiet_(x);
    return ri_f32_from_bits((uint32_t)ri_round_bits_(ri_f32_bits(x), 23, 127, RI_F32_SIGN, mode));
}
static inline double ri_f64_round_(double x, int mode)
{
    if (x != x)
        return ri_f64_quiet_(x);
    return ri_f64_from_bits(ri_round_bits_(ri_f64_bits(x), 52, 1023, RI_F64_SIGN, mode));
}

static inline float ri_f32_ceil(float x) { return ri_f32_round_(x, RI_RND_CEIL_); }
static inline float ri_f32_floor(float x) { return ri_f32_round_(x, RI_RND_FLOOR_); }
static inline float ri_f32_trunc(float x) { return ri_f32_round_(x, RI_RND_TRUNC_); }
static inline float ri_f32_nearest(float x) { return ri_f32_round_(x, RI_RND_NEAREST_); }
static inline double ri_f64_ceil(double x) { return ri_f64_round_(x, RI_RND_CEIL_); }
static inline double ri_f64_floor(double x) { return ri_f64_round_(x, RI_RND_FLOOR_); }
static inline double ri_f64_trunc(double x) { return ri_f64_round_(x, RI_RND_TRUNC_); }
static inline double ri_f64_nearest(double x) { return ri_f64_round_(x, RI_RND_NEAREST_); }

/* IEEE sqrt is correctly rounded in hardware and libm. NaN and negative inputs are
 * handled here so the NaN result does not depend on the platform's default NaN
 * (x86 produces a negative one). sqrt(-0) = -0 is not "negative" (-0 < 0 is false). */
static inline float ri_f32_sqrt(float x)
{
    if (x != x)
        return ri_f32_quiet_(x);
    if (x < 0)
        return ri_f32_from_bits(RI_F32_CANON);
    return sqrtf(x);
}
static inline double ri_f64_sqrt(double x)
{
    if (x != x)
        return ri_f64_quiet_(x);
    if (x < 0)
        return ri_f64_from_bits(RI_F64_CANON);
    return sqrt(x);
}

/* ---- float: min / max ------------------------------------------------------------ */

/* Any NaN operand gives a NaN (the first NaN operand, quieted). For equal operands
 * the bits differ only for -0/+0: OR-ing the bits picks -0 for min, AND-ing picks
 * +0 for max, and leaves identical bits alone. */
static inline float ri_f32_min(float a, float b)
{
    if (a != a)
        return ri_f32_quiet_(a);
    if (b != b)
        return ri_f32_quiet_(b);
    if (a < b)
        return a;
    if (b < a)
        return b;
    return ri_f32_from_bits(ri_f32_bits(a) | ri_f32_bits(b));
}
static inline float ri_f32_max(float a, float b)
{
    if (a != a)
        return ri_f32_quiet_(a);
    if (b != b)
        return ri_f32_quiet_(b);
    if (a > b)
        return a;
    if (b > a)
        return b;
    return ri_f32_from_bits(ri_f32_bits(a) & ri_f32_bits(b));
}
static inline double ri_f64_min(double a, double b)
{
    if (a != a)
        return ri_f64_quiet_(a);
    if (b != b)
        return ri_f64_quiet_(b);
    if (a < b)
        return a;
    if (b < a)
        return b;
    return ri_f64_from_bits(ri_f64_bits(a) | ri_f64_bits(b));
}
static inline double ri_f64_max(double a, double b)
{
    if (a != a)
        return ri_f64_quiet_(a);
    if (b != b)
        return ri_f64_quiet_(b);
    if (a > b)
        return a;
    if (b > a)
        return b;
    return ri_f64_from_bits(ri_f64_bits(a) & ri_f64_bits(b));
}

/* ---- conversions: float -> integer --------------------------------------------------
 * Range checks compare against exactly representable bounds (powers of two, or -1),
 * written as open intervals of the values whose truncation fits; only then is the C
 * cast done, which is defined (and exact) for such values. */

static inline ri_trap ri_i32_trunc_f32_s(float x, uint32_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x >= -2147483648.0f && x < 2147483648.0f)) /* next float below -2^31 is -2^31-256 */
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint32_t)(int32_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i32_trunc_f32_u(float x, uint32_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x > -1.0f && x < 4294967296.0f))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint32_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i32_trunc_f64_s(double x, uint32_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x > -2147483649.0 && x < 2147483648.0))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint32_t)(int32_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i32_trunc_f64_u(double x, uint32_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x > -1.0 && x < 4294967296.0))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint32_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_trunc_f32_s(float x, uint64_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x >= -9223372036854775808.0f && x < 9223372036854775808.0f))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint64_t)(int64_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_trunc_f32_u(float x, uint64_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x > -1.0f && x < 18446744073709551616.0f))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint64_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_trunc_f64_s(double x, uint64_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint64_t)(int64_t)x;
    return RI_TRAP_NONE;
}
static inline ri_trap ri_i64_trunc_f64_u(double x, uint64_t *out)
{
    if (x != x)
        return RI_TRAP_INVALID_CONVERSION;
    if (!(x > -1.0 && x < 18446744073709551616.0))
        return RI_TRAP_INT_OVERFLOW;
    *out = (uint64_t)x;
    return RI_TRAP_NONE;
}

/* Saturating: NaN -> 0, out of range -> the nearest bound. */
static inline uint32_t ri_i32_trunc_sat_f32_s(float x)
{
    if (x != x)
        return 0;
    if (x < -2147483648.0f)
        return 0x80000000u;
    if (x >= 2147483648.0f)
        return 0x7FFFFFFFu;
    return (uint32_t)(int32_t)x;
}
static inline uint32_t ri_i32_trunc_sat_f32_u(float x)
{
    if (x != x || x <= -1.0f)
        return 0;
    if (x >= 4294967296.0f)
        return 0xFFFFFFFFu;
    return (uint32_t)x;
}
static inline uint32_t ri_i32_trunc_sat_f64_s(double x)
{
    if (x != x)
        return 0;
    if (x <= -2147483649.0)
        return 0x80000000u;
    if (x >= 2147483648.0)
        return 0x7FFFFFFFu;
    return (uint32_t)(int32_t)x;
}
static inline uint32_t ri_i32_trunc_sat_f64_u(double x)
{
    if (x != x || x <= -1.0)
        return 0;
    if (x >= 4294967296.0)
        return 0xFFFFFFFFu;
    return (uint32_t)x;
}
static inline uint64_t ri_i64_trunc_sat_f32_s(float x)
{
    if (x != x)
        return 0;
    if (x < -9223372036854775808.0f)
        return 0x8000000000000000u;
    if (x >= 9223372036854775808.0f)
        return 0x7FFFFFFFFFFFFFFFu;
    return (uint64_t)(int64_t)x;
}
static inline uint64_t ri_i64_trunc_sat_f32_u(float x)
{
    if (x != x || x <= -1.0f)
        return 0;
    if (x >= 18446744073709551616.0f)
        return 0xFFFFFFFFFFFFFFFFu;
    return (uint64_t)x;
}
static inline uint64_t ri_i64_trunc_sat_f64_s(double x)
{
    if (x != x)
        return 0;
    if (x < -9223372036854775808.0)
        return 0x8000000000000000u;
    if (x >= 9223372036854775808.0)
        return 0x7FFFFFFFFFFFFFFFu;
    return (uint64_t)(int64_t)x;
}
static inline uint64_t ri_i64_trunc_sat_f64_u(double x)
{
    if (x != x || x <= -1.0)
        return 0;
    if (x >= 18446744073709551616.0)
        return 0xFFFFFFFFFFFFFFFFu;
    return (uint64_t)x;
}

/* ---- conversions: integer -> float ---------------------------------------------------
 * Done in integer arithmetic, so they are correctly rounded (nearest, ties to even) in
 * one step whatever the compiler's or the FPU's conversion does; in particular u64 ->
 * f32 is never rounded twice (via an intermediate double or a halving trick). */

/* Bits of the positive float nearest to m (m > 0) in a format with `prec` significand
 * bits (hidden bit included) and exponent bias `bias`. The result has at most 64
 * significant bits, far inside either format's range, so no overflow or subnormals. */
static inline uint64_t ri_u64_to_float_bits_(uint64_t m, unsigned prec, unsigned bias)
{
    unsigned top = 63u - (unsigned)__builtin_clzll(m); /* m in [2^top, 2^(top+1)) */
    uint64_t sig;
    if (top < prec) {
        sig = m << (prec - 1u - top); /* exact */
    } else {
        unsigned drop = top - (prec - 1u); /* 1..40 bits to round away */
        uint64_t rest = m & (((uint64_t)1 << drop) - 1u);
        uint64_t half = (uint64_t)1 << (drop - 1u);
        sig = m >> drop;
        if (rest > half || (rest == half && (sig & 1u)))
            sig++; /* may become 2^prec: the addition below carries into the exponent */
    }
    /* sig includes the hidden bit, so add it onto (biased exponent - 1). */
    return ((uint64_t)(top + bias - 1u) << (prec - 1u)) + sig;
}

static inline float ri_f32_from_u64_(uint64_t m, bool neg)
{
    uint32_t bits = m ? (uint32_t)ri_u64_to_float_bits_(m, 24, 127) : 0u;
    return ri_f32_from_bits(bits | (neg ? RI_F32_SIGN : 0u));
}
static inline double ri_f64_from_u64_(uint64_t m, bool neg)
{
    uint64_t bits = m ? ri_u64_to_float_bits_(m, 53, 1023) : 0u;
    return ri_f64_from_bits(bits | (neg ? RI_F64_SIGN : 0u));
}

static inline float ri_f32_convert_i32_s(uint32_t a)
{
    bool neg = (a >> 31) != 0;
    return ri_f32_from_u64_(neg ? 0u - a : a, neg);
}
static inline float ri_f32_convert_i32_u(uint32_t a) { return ri_f32_from_u64_(a, false); }
static inline float ri_f32_convert_i64_s(uint64_t a)
{
    bool neg = (a >> 63) != 0;
    return ri_f32_from_u64_(neg ? 0u - a : a, neg);
}
static inline float ri_f32_convert_i64_u(uint64_t a) { return ri_f32_from_u64_(a, false); }
static inline double ri_f64_convert_i32_s(uint32_t a)
{
    bool neg = (a >> 31) != 0;
    return ri_f64_from_u64_(neg ? 0u - a : a, neg);
}
static inline double ri_f64_convert_i32_u(uint32_t a) { return ri_f64_from_u64_(a, false); }
static inline double ri_f64_convert_i64_s(uint64_t a)
{
    bool neg = (a >> 63) != 0;
    return ri_f64_from_u64_(neg ? 0u - a : a, neg);
}
static inline double ri_f64_convert_i64_u(uint64_t a) { return ri_f64_from_u64_(a, false); }

/* ---- conversions: float <-> float ------------------------------------------------- */

/* f64 -> f32 rounded to nearest even on the bits. NaN: keep the sign and the top 22
 * payload bits and set the quiet bit (canonical stays canonical). */
static inline float ri_f32_demote_f64(double x)
{
    uint64_t u = ri_f64_bits(x);
    uint32_t sign = (uint32_t)(u >> 32) & RI_F32_SIGN;
    uint64_t mag = u & ~RI_F64_SIGN;
    unsigned e = (unsigned)(mag >> 52);
    uint64_t frac = mag & 0x000FFFFFFFFFFFFFu;
    if (e == 0x7FF) {
        if (frac == 0)
            return ri_f32_from_bits(sign | RI_F32_EXP);
        return ri_f32_from_bits(sign | RI_F32_CANON | (uint32_t)(frac >> 29));
    }
    if (mag == 0)
        return ri_f32_from_bits(sign);
    /* x = m * 2^(q - 1075), m < 2^53 (subnormal f64: e = 0, no hidden bit, q = 1). */
    uint64_t m = e ? (frac | 0x0010000000000000u) : frac;
    int q = e ? (int)e : 1;
    int top = 63 - __builtin_clzll(m) + q - 1075;  /* x in [2^top, 2^(top+1)) */
    int quantum = top - 23 < -149 ? -149 : top - 23; /* f32 ulp at x (subnormal floor) */
    int drop = quantum - (q - 1075);                 /* low bits of m below that ulp: >= 29 */
    uint64_t sig;
    if (drop >= 64) {
        sig = 0; /* m < 2^53 <= half an ulp: rounds to zero */
    } else {
        uint64_t rest = m & (((uint64_t)1 << drop) - 1u);
        uint64_t half = (uint64_t)1 << (drop - 1);
        sig = m >> drop;
        if (rest > half || (rest == half && (sig & 1u)))
            sig++;
    }
    /* x ~ sig * 2^quantum. With sig including the hidden bit (2^23 for a normal), the
     * encoding is ((quantum + 149) << 23) + sig; subnormals (quantum = -149) and a
     * carry to 2^24 come out right, and anything at or past 0x7F800000 is infinity. */
    if (quantum + 149 >= 255)
        return ri_f32_from_bits(sign | RI_F32_EXP);
    uint64_t bits = ((uint64_t)(quantum + 149) << 23) + sig;
    if (bits >= RI_F32_EXP)
        bits = RI_F32_EXP;
    return ri_f32_from_bits(sign | (uint32_t)bits);
}

/* f32 -> f64 is exact for every non-NaN value, so the C conversion is fine; NaNs are
 * built on the bits (payload moved to the top, quiet bit set). */
static inline double ri_f64_promote_f32(float x)
{
    uint32_t u = ri_f32_bits(x);
    if (ri_f32_is_nan_bits(u)) {
        uint64_t sign = (uint64_t)(u & RI_F32_SIGN) << 32;
        uint64_t payload = (uint64_t)(u & 0x007FFFFFu) << 29;
        return ri_f64_from_bits(sign | RI_F64_CANON | payload);
    }
    return (double)x;
}

#endif /* RI_ENGINE_NUMERIC_H */
