/* Unit tests for src/engine/numeric.h: the edge cases of every numeric operation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/numeric.h"

#define F32(bits) ri_f32_from_bits(bits)
#define F64(bits) ri_f64_from_bits(bits)
#define ASSERT_F32_BITS(x, bits) assert_int_equal(ri_f32_bits(x), (uint32_t)(bits))
#define ASSERT_F64_BITS(x, bits) assert_int_equal(ri_f64_bits(x), (uint64_t)(bits))

/* f32/f64 constants used all over */
#define P0F 0x00000000u
#define N0F 0x80000000u
#define PINFF 0x7F800000u
#define NINFF 0xFF800000u
#define CNAN32 0x7FC00000u
#define SNAN32 0x7FA00001u  /* signalling, payload 0x200001 */
#define P0D 0x0000000000000000u
#define N0D 0x8000000000000000u
#define PINFD 0x7FF0000000000000u
#define NINFD 0xFFF0000000000000u
#define CNAN64 0x7FF8000000000000u
#define SNAN64 0x7FF4000000000001u

/* ---- integer --------------------------------------------------------------- */

static void test_bitcount(void **state)
{
    (void)state;
    assert_int_equal(ri_i32_clz(0), 32);
    assert_int_equal(ri_i32_clz(1), 31);
    assert_int_equal(ri_i32_clz(0x80000000u), 0);
    assert_int_equal(ri_i32_clz(0x00008000u), 16);
    assert_int_equal(ri_i32_ctz(0), 32);
    assert_int_equal(ri_i32_ctz(1), 0);
    assert_int_equal(ri_i32_ctz(0x80000000u), 31);
    assert_int_equal(ri_i32_ctz(0x00010000u), 16);
    assert_int_equal(ri_i32_popcnt(0), 0);
    assert_int_equal(ri_i32_popcnt(0xFFFFFFFFu), 32);
    assert_int_equal(ri_i32_popcnt(0xAAAA5555u), 16);
    assert_int_equal(ri_i64_clz(0), 64);
    assert_int_equal(ri_i64_clz(1), 63);
    assert_int_equal(ri_i64_clz(0x8000000000000000u), 0);
    assert_int_equal(ri_i64_clz(0x00000000FFFFFFFFu), 32);
    assert_int_equal(ri_i64_ctz(0), 64);
    assert_int_equal(ri_i64_ctz(0x8000000000000000u), 63);
    assert_int_equal(ri_i64_ctz(0x0000000100000000u), 32);
    assert_int_equal(ri_i64_popcnt(0), 0);
    assert_int_equal(ri_i64_popcnt(0xFFFFFFFFFFFFFFFFu), 64);
    assert_int_equal(ri_i64_popcnt(0x8000000000000001u), 2);
}

static void test_shift_rotate(void **state)
{
    (void)state;
    assert_int_equal(ri_i32_rotl(0x12345678u, 0), 0x12345678u);
    assert_int_equal(ri_i32_rotl(0x12345678u, 32), 0x12345678u);
    assert_int_equal(ri_i32_rotl(0x12345678u, 4), 0x23456781u);
    assert_int_equal(ri_i32_rotl(0x80000001u, 33), 0x00000003u);
    assert_int_equal(ri_i32_rotl(0x80000001u, 0xFFFFFFFFu), 0xC0000000u); /* 31 */
    assert_int_equal(ri_i32_rotr(0x12345678u, 0), 0x12345678u);
    assert_int_equal(ri_i32_rotr(0x12345678u, 4), 0x81234567u);
    assert_int_equal(ri_i32_rotr(0x80000001u, 33), 0xC0000000u);
    assert_int_equal(ri_i64_rotl(0x0123456789ABCDEFu, 0), 0x0123456789ABCDEFu);
    assert_int_equal(ri_i64_rotl(0x0123456789ABCDEFu, 64), 0x0123456789ABCDEFu);
    assert_int_equal(ri_i64_rotl(0x8000000000000001u, 1), 0x0000000000000003u);
    assert_int_equal(ri_i64_rotl(0x8000000000000001u, 65), 0x0000000000000003u);
    assert_int_equal(ri_i64_rotl(0x0123456789ABCDEFu, 33), 0x13579BDE02468ACFu);
    assert_int_equal(ri_i64_rotr(0x8000000000000001u, 1), 0xC000000000000000u);
    assert_int_equal(ri_i64_rotr(0x0123456789ABCDEFu, 0), 0x0123456789ABCDEFu);
    assert_int_equal(ri_i64_rotr(0x0123456789ABCDEFu, 0xFFFFFFFFFFFFFFFFu), 0x02468ACF13579BDEu);

    assert_int_equal(ri_i32_shl(1, 31), 0x80000000u);
    assert_int_equal(ri_i32_shl(1, 32), 1);
    assert_int_equal(ri_i32_shl(1, 33), 2);
    assert_int_equal(ri_i32_shr_u(0x80000000u, 31), 1);
    assert_int_equal(ri_i32_shr_u(0x80000000u, 32), 0x80000000u);
    assert_int_equal(ri_i32_shr_s(0x80000000u, 31), 0xFFFFFFFFu);
    assert_int_equal(ri_i32_shr_s(0x80000000u, 32), 0x80000000u);
    assert_int_equal(ri_i32_shr_s(0x80000000u, 1), 0xC0000000u);
    assert_int_equal(ri_i32_shr_s(0x7FFFFFFFu, 30), 1);
    assert_int_equal(ri_i32_shr_s(0xFFFFFFFFu, 0xFFFFFFFFu), 0xFFFFFFFFu);
    assert_int_equal(ri_i64_shl(1, 63), 0x8000000000000000u);
    assert_int_equal(ri_i64_shl(1, 64), 1);
    assert_int_equal(ri_i64_shl(1, 65), 2);
    assert_int_equal(ri_i64_shr_u(0x8000000000000000u, 63), 1);
    assert_int_equal(ri_i64_shr_u(0x8000000000000000u, 64), 0x8000000000000000u);
    assert_int_equal(ri_i64_shr_s(0x8000000000000000u, 63), 0xFFFFFFFFFFFFFFFFu);
    assert_int_equal(ri_i64_shr_s(0x8000000000000000u, 1), 0xC000000000000000u);
    assert_int_equal(ri_i64_shr_s(0x8000000000000000u, 64), 0x8000000000000000u);
    assert_int_equal(ri_i64_shr_s(0x4000000000000000u, 62), 1);
}

static void test_div_rem_32(void **state)
{
    (void)state;
    uint32_t r = 0xDEADu;
    assert_int_equal(ri_i32_div_s(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i32_div_s(0x80000000u, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i32_div_s(0x80000000u, 0xFFFFFFFFu, &r), RI_TRAP_INT_OVERFLOW);
    assert_int_equal(r, 0xDEADu); /* untouched on trap */
    assert_int_equal(ri_i32_div_s(0x80000000u, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0xC0000000u);
    assert_int_equal(ri_i32_div_s(0x80000000u, 1, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x80000000u);
    assert_int_equal(ri_i32_div_s((uint32_t)-7, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint32_t)-3);
    assert_int_equal(ri_i32_div_s(7, (uint32_t)-2, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint32_t)-3);
    assert_int_equal(ri_i32_div_s((uint32_t)-7, (uint32_t)-2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 3);
    assert_int_equal(ri_i32_div_s(0x7FFFFFFFu, 0xFFFFFFFFu, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x80000001u);
    assert_int_equal(ri_i32_div_u(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i32_div_u(0x80000000u, 0xFFFFFFFFu, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0);
    assert_int_equal(ri_i32_div_u(0xFFFFFFFFu, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x7FFFFFFFu);

    assert_int_equal(ri_i32_rem_s(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i32_rem_s(0x80000000u, 0xFFFFFFFFu, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0);
    assert_int_equal(ri_i32_rem_s(0x80000000u, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0);
    assert_int_equal(ri_i32_rem_s(0x80000000u, 3, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint32_t)-2);
    assert_int_equal(ri_i32_rem_s((uint32_t)-7, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint32_t)-1);
    assert_int_equal(ri_i32_rem_s(7, (uint32_t)-2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 1);
    assert_int_equal(ri_i32_rem_s(0x7FFFFFFFu, 0x80000000u, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x7FFFFFFFu);
    assert_int_equal(ri_i32_rem_u(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i32_rem_u(0x80000000u, 0xFFFFFFFFu, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x80000000u);
    assert_int_equal(ri_i32_rem_u(0xFFFFFFFFu, 0x80000000u, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x7FFFFFFFu);
}

static void test_div_rem_64(void **state)
{
    (void)state;
    const uint64_t MIN = 0x8000000000000000u, M1 = 0xFFFFFFFFFFFFFFFFu;
    uint64_t r = 0xDEADu;
    assert_int_equal(ri_i64_div_s(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i64_div_s(MIN, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i64_div_s(MIN, M1, &r), RI_TRAP_INT_OVERFLOW);
    assert_int_equal(r, 0xDEADu);
    assert_int_equal(ri_i64_div_s(MIN, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0xC000000000000000u);
    assert_int_equal(ri_i64_div_s((uint64_t)-7, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint64_t)-3);
    assert_int_equal(ri_i64_div_s((uint64_t)-7, (uint64_t)-2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 3);
    assert_int_equal(ri_i64_div_s(0x7FFFFFFFFFFFFFFFu, M1, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x8000000000000001u);
    assert_int_equal(ri_i64_div_u(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i64_div_u(MIN, M1, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0);
    assert_int_equal(ri_i64_div_u(M1, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x7FFFFFFFFFFFFFFFu);
    assert_int_equal(ri_i64_rem_s(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i64_rem_s(MIN, M1, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0);
    assert_int_equal(ri_i64_rem_s(MIN, 3, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint64_t)-2);
    assert_int_equal(ri_i64_rem_s((uint64_t)-7, 2, &r), RI_TRAP_NONE);
    assert_int_equal(r, (uint64_t)-1);
    assert_int_equal(ri_i64_rem_s(7, (uint64_t)-2, &r), RI_TRAP_NONE);
    assert_int_equal(r, 1);
    assert_int_equal(ri_i64_rem_u(1, 0, &r), RI_TRAP_INT_DIV_ZERO);
    assert_int_equal(ri_i64_rem_u(MIN, M1, &r), RI_TRAP_NONE);
    assert_int_equal(r, MIN);
    assert_int_equal(ri_i64_rem_u(M1, MIN, &r), RI_TRAP_NONE);
    assert_int_equal(r, 0x7FFFFFFFFFFFFFFFu);
}

static void test_extend(void **state)
{
    (void)state;
    assert_int_equal(ri_i32_extend8_s(0x7F), 0x7F);
    assert_int_equal(ri_i32_extend8_s(0x80), 0xFFFFFF80u);
    assert_int_equal(ri_i32_extend8_s(0x12345680u), 0xFFFFFF80u);
    assert_int_equal(ri_i32_extend8_s(0xFFFFFF7Fu), 0x7F);
    assert_int_equal(ri_i32_extend16_s(0x7FFF), 0x7FFF);
    assert_int_equal(ri_i32_extend16_s(0x8000), 0xFFFF8000u);
    assert_int_equal(ri_i32_extend16_s(0xFFFF7FFFu), 0x7FFF);
    assert_int_equal(ri_i64_extend8_s(0x80), 0xFFFFFFFFFFFFFF80u);
    assert_int_equal(ri_i64_extend8_s(0xFFFFFFFFFFFFFF7Fu), 0x7F);
    assert_int_equal(ri_i64_extend16_s(0x8000), 0xFFFFFFFFFFFF8000u);
    assert_int_equal(ri_i64_extend16_s(0x123456789ABC7FFFu), 0x7FFF);
    assert_int_equal(ri_i64_extend32_s(0x80000000u), 0xFFFFFFFF80000000u);
    assert_int_equal(ri_i64_extend32_s(0x7FFFFFFFu), 0x7FFFFFFFu);
    assert_int_equal(ri_i64_extend32_s(0xFFFFFFFF7FFFFFFFu), 0x7FFFFFFFu);
    assert_int_equal(ri_i64_extend32_s(0), 0);
}

/* ---- float: bits, sign ops, canonical NaNs ----------------------------------- */

static void test_bits_sign(void **state)
{
    (void)state;
    assert_int_equal(ri_f32_bits(1.0f), 0x3F800000u);
    assert_int_equal(ri_f64_bits(1.0), 0x3FF0000000000000u);
    /* signalling NaNs survive every bit operation unchanged */
    ASSERT_F32_BITS(F32(SNAN32), SNAN32);
    ASSERT_F64_BITS(F64(SNAN64), SNAN64);
    ASSERT_F32_BITS(ri_f32_abs(F32(0xFFA00001u)), SNAN32);
    ASSERT_F32_BITS(ri_f32_neg(F32(SNAN32)), 0xFFA00001u);
    ASSERT_F32_BITS(ri_f32_abs(F32(N0F)), P0F);
    ASSERT_F32_BITS(ri_f32_neg(F32(P0F)), N0F);
    ASSERT_F32_BITS(ri_f32_neg(F32(NINFF)), PINFF);
    ASSERT_F32_BITS(ri_f32_copysign(F32(SNAN32), F32(N0F)), 0xFFA00001u);
    ASSERT_F32_BITS(ri_f32_copysign(F32(0x3F800000u), F32(0xFFC00000u)), 0xBF800000u);
    ASSERT_F32_BITS(ri_f32_copysign(F32(0xBF800000u), F32(CNAN32)), 0x3F800000u);
    ASSERT_F64_BITS(ri_f64_abs(F64(0xFFF4000000000001u)), SNAN64);
    ASSERT_F64_BITS(ri_f64_neg(F64(SNAN64)), 0xFFF4000000000001u);
    ASSERT_F64_BITS(ri_f64_neg(F64(P0D)), N0D);
    ASSERT_F64_BITS(ri_f64_abs(F64(N0D)), P0D);
    ASSERT_F64_BITS(ri_f64_copysign(F64(SNAN64), F64(N0D)), 0xFFF4000000000001u);
    ASSERT_F64_BITS(ri_f64_copysign(F64(0xBFF0000000000000u), F64(P0D)), 0x3FF0000000000000u);
}

static void test_canon(void **state)
{
    (void)state;
    ASSERT_F32_BITS(ri_f32_canon(F32(SNAN32)), CNAN32);
    ASSERT_F32_BITS(ri_f32_canon(F32(0xFFFFFFFFu)), CNAN32);
    ASSERT_F32_BITS(ri_f32_canon(F32(0xFFC00000u)), CNAN32);
    ASSERT_F32_BITS(ri_f32_canon(F32(N0F)), N0F);
    ASSERT_F32_BITS(ri_f32_canon(F32(NINFF)), NINFF);
    ASSERT_F32_BITS(ri_f32_canon(1.5f), 0x3FC00000u);
    ASSERT_F64_BITS(ri_f64_canon(F64(SNAN64)), CNAN64);
    ASSERT_F64_BITS(ri_f64_canon(F64(0xFFFFFFFFFFFFFFFFu)), CNAN64);
    ASSERT_F64_BITS(ri_f64_canon(F64(N0D)), N0D);
    ASSERT_F64_BITS(ri_f64_canon(F64(PINFD)), PINFD);

    assert_true(ri_f32_is_canonical_nan_bits(0x7FC00000u));
    assert_true(ri_f32_is_canonical_nan_bits(0xFFC00000u));
    assert_false(ri_f32_is_canonical_nan_bits(0x7FC00001u));
    assert_false(ri_f32_is_canonical_nan_bits(0x7F800000u));
    assert_true(ri_f32_is_arithmetic_nan_bits(0x7FC00000u));
    assert_true(ri_f32_is_arithmetic_nan_bits(0xFFC00001u));
    assert_true(ri_f32_is_arithmetic_nan_bits(0x7FFFFFFFu));
    assert_false(ri_f32_is_arithmetic_nan_bits(0x7FA00000u));
    assert_false(ri_f32_is_arithmetic_nan_bits(0x7F800000u));
    assert_false(ri_f32_is_arithmetic_nan_bits(0x3FC00000u));
    assert_true(ri_f64_is_canonical_nan_bits(0x7FF8000000000000u));
    assert_true(ri_f64_is_canonical_nan_bits(0xFFF8000000000000u));
    assert_false(ri_f64_is_canonical_nan_bits(0x7FF8000000000001u));
    assert_true(ri_f64_is_arithmetic_nan_bits(0xFFF8000000000001u));
    assert_false(ri_f64_is_arithmetic_nan_bits(0x7FF4000000000000u));
    assert_false(ri_f64_is_arithmetic_nan_bits(0x7FF0000000000000u));
    assert_false(ri_f64_is_arithmetic_nan_bits(0x3FF8000000000000u));
}

/* ---- float: rounding ------------------------------------------------------------ */

typedef struct { uint32_t in, ceil, floor, trunc, nearest; } rnd32;
typedef struct { uint64_t in, ceil, floor, trunc, nearest; } rnd64;

static void test_round_f32(void **state)
{
    (void)state;
    static const rnd32 cases[] = {
        /* in          ceil         floor        trunc        nearest */
        {0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u}, /* +0 */
        {0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u}, /* -0 */
        {0x00000001u, 0x3F800000u, 0x00000000u, 0x00000000u, 0x00000000u}, /* min subnormal */
        {0x80000001u, 0x80000000u, 0xBF800000u, 0x80000000u, 0x80000000u},
        {0x3F000000u, 0x3F800000u, 0x00000000u, 0x00000000u, 0x00000000u}, /* 0.5 */
        {0xBF000000u, 0x80000000u, 0xBF800000u, 0x80000000u, 0x80000000u}, /* -0.5 */
        {0x3F000001u, 0x3F800000u, 0x00000000u, 0x00000000u, 0x3F800000u}, /* 0.5+ulp */
        {0x3EFFFFFFu, 0x3F800000u, 0x00000000u, 0x00000000u, 0x00000000u}, /* 0.5-ulp */
        {0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u, 0x3F800000u}, /* 1 */
        {0x3FC00000u, 0x40000000u, 0x3F800000u, 0x3F800000u, 0x40000000u}, /* 1.5 */
        {0xBFC00000u, 0xBF800000u, 0xC0000000u, 0xBF800000u, 0xC0000000u}, /* -1.5 */
        {0x40200000u, 0x40400000u, 0x40000000u, 0x40000000u, 0x40000000u}, /* 2.5 */
        {0xC0200000u, 0xC0000000u, 0xC0400000u, 0xC0000000u, 0xC0000000u}, /* -2.5 */
        {0x40600000u, 0x40800000u, 0x40400000u, 0x40400000u, 0x40800000u}, /* 3.5 */
        {0x3F7FFFFFu, 0x3F800000u, 0x00000000u, 0x00000000u, 0x3F800000u}, /* 1-ulp */
        {0x4B000000u, 0x4B000000u, 0x4B000000u, 0x4B000000u, 0x4B000000u}, /* 2^23 */
        {0x4AFFFFFFu, 0x4B000000u, 0x4AFFFFFEu, 0x4AFFFFFEu, 0x4B000000u}, /* 2^23-0.5 */
        {0x4AFFFFFDu, 0x4AFFFFFEu, 0x4AFFFFFCu, 0x4AFFFFFCu, 0x4AFFFFFCu}, /* 2^23-1.5 */
        {0xCAFFFFFFu, 0xCAFFFFFEu, 0xCB000000u, 0xCAFFFFFEu, 0xCB000000u}, /* -(2^23-0.5) */
        {0x4B000001u, 0x4B000001u, 0x4B000001u, 0x4B000001u, 0x4B000001u}, /* 2^23+1 */
        {0x4A800001u, 0x4A800002u, 0x4A800000u, 0x4A800000u, 0x4A800000u}, /* 2^22+0.5 */
        {0x4A800003u, 0x4A800004u, 0x4A800002u, 0x4A800002u, 0x4A800004u}, /* 2^22+1.5 */
        {0x7F7FFFFFu, 0x7F7FFFFFu, 0x7F7FFFFFu, 0x7F7FFFFFu, 0x7F7FFFFFu}, /* max */
        {0x7F800000u, 0x7F800000u, 0x7F800000u, 0x7F800000u, 0x7F800000u}, /* +inf */
        {0xFF800000u, 0xFF800000u, 0xFF800000u, 0xFF800000u, 0xFF800000u}, /* -inf */
        {0x7FC00000u, 0x7FC00000u, 0x7FC00000u, 0x7FC00000u, 0x7FC00000u}, /* nan */
        {0xFFC00000u, 0xFFC00000u, 0xFFC00000u, 0xFFC00000u, 0xFFC00000u}, /* -nan */
        {0x7FA00001u, 0x7FE00001u, 0x7FE00001u, 0x7FE00001u, 0x7FE00001u}, /* snan: quieted */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float x = F32(cases[i].in);
        ASSERT_F32_BITS(ri_f32_ceil(x), cases[i].ceil);
        ASSERT_F32_BITS(ri_f32_floor(x), cases[i].floor);
        ASSERT_F32_BITS(ri_f32_trunc(x), cases[i].trunc);
        ASSERT_F32_BITS(ri_f32_nearest(x), cases[i].nearest);
    }
}

static void test_round_f64(void **state)
{
    (void)state;
    static const rnd64 cases[] = {
        {0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u},
        {0x8000000000000000u, 0x8000000000000000u, 0x8000000000000000u, 0x8000000000000000u, 0x8000000000000000u},
        {0x0000000000000001u, 0x3FF0000000000000u, 0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u},
        {0x8000000000000001u, 0x8000000000000000u, 0xBFF0000000000000u, 0x8000000000000000u, 0x8000000000000000u},
        {0x3FE0000000000000u, 0x3FF0000000000000u, 0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u}, /* 0.5 */
        {0xBFE0000000000000u, 0x8000000000000000u, 0xBFF0000000000000u, 0x8000000000000000u, 0x8000000000000000u}, /* -0.5 */
        {0x3FE0000000000001u, 0x3FF0000000000000u, 0x0000000000000000u, 0x0000000000000000u, 0x3FF0000000000000u},
        {0x3FF8000000000000u, 0x4000000000000000u, 0x3FF0000000000000u, 0x3FF0000000000000u, 0x4000000000000000u}, /* 1.5 */
        {0xBFF8000000000000u, 0xBFF0000000000000u, 0xC000000000000000u, 0xBFF0000000000000u, 0xC000000000000000u},
        {0x4004000000000000u, 0x4008000000000000u, 0x4000000000000000u, 0x4000000000000000u, 0x4000000000000000u}, /* 2.5 */
        {0xC004000000000000u, 0xC000000000000000u, 0xC008000000000000u, 0xC000000000000000u, 0xC000000000000000u},
        {0x4330000000000000u, 0x4330000000000000u, 0x4330000000000000u, 0x4330000000000000u, 0x4330000000000000u}, /* 2^52 */
        {0x432FFFFFFFFFFFFFu, 0x4330000000000000u, 0x432FFFFFFFFFFFFEu, 0x432FFFFFFFFFFFFEu, 0x4330000000000000u}, /* 2^52-0.5 */
        {0x432FFFFFFFFFFFFDu, 0x432FFFFFFFFFFFFEu, 0x432FFFFFFFFFFFFCu, 0x432FFFFFFFFFFFFCu, 0x432FFFFFFFFFFFFCu}, /* 2^52-1.5 */
        {0x4330000000000001u, 0x4330000000000001u, 0x4330000000000001u, 0x4330000000000001u, 0x4330000000000001u},
        {0x7FEFFFFFFFFFFFFFu, 0x7FEFFFFFFFFFFFFFu, 0x7FEFFFFFFFFFFFFFu, 0x7FEFFFFFFFFFFFFFu, 0x7FEFFFFFFFFFFFFFu},
        {0xFFF0000000000000u, 0xFFF0000000000000u, 0xFFF0000000000000u, 0xFFF0000000000000u, 0xFFF0000000000000u},
        {0x7FF8000000000000u, 0x7FF8000000000000u, 0x7FF8000000000000u, 0x7FF8000000000000u, 0x7FF8000000000000u},
        {0x7FF4000000000001u, 0x7FFC000000000001u, 0x7FFC000000000001u, 0x7FFC000000000001u, 0x7FFC000000000001u},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double x = F64(cases[i].in);
        ASSERT_F64_BITS(ri_f64_ceil(x), cases[i].ceil);
        ASSERT_F64_BITS(ri_f64_floor(x), cases[i].floor);
        ASSERT_F64_BITS(ri_f64_trunc(x), cases[i].trunc);
        ASSERT_F64_BITS(ri_f64_nearest(x), cases[i].nearest);
    }
}

/* Every f32 rounding against the C library (whose rint uses the default rounding
 * mode, round-to-nearest-even, for nearest) on a sweep of bit patterns. */
static void test_round_f32_sweep(void **state)
{
    (void)state;
    for (uint64_t b = 0; b <= 0xFFFFFFFFu; b += 0x3F1u) {
        float x = F32((uint32_t)b);
        if (x != x)
            continue;
        ASSERT_F32_BITS(ri_f32_ceil(x), ri_f32_bits(ceilf(x)));
        ASSERT_F32_BITS(ri_f32_floor(x), ri_f32_bits(floorf(x)));
        ASSERT_F32_BITS(ri_f32_trunc(x), ri_f32_bits(truncf(x)));
        ASSERT_F32_BITS(ri_f32_nearest(x), ri_f32_bits(rintf(x)));
    }
}

static void test_round_f64_sweep(void **state)
{
    (void)state;
    uint64_t x = 0x0123456789ABCDEFu;
    for (int i = 0; i < 400000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t b = x;
        if (i & 1) /* exponent around [2^-2, 2^54): where rounding does something */
            b = (b & 0x800FFFFFFFFFFFFFu) | ((uint64_t)(0x3FD + (x >> 20) % 0x39) << 52);
        if (i & 2) /* exact halves and other short fractions */
            b &= ~(uint64_t)0x3FFFFFFFFFu << (i % 16);
        double d = F64(b);
        if (d != d)
            continue;
        ASSERT_F64_BITS(ri_f64_ceil(d), ri_f64_bits(ceil(d)));
        ASSERT_F64_BITS(ri_f64_floor(d), ri_f64_bits(floor(d)));
        ASSERT_F64_BITS(ri_f64_trunc(d), ri_f64_bits(trunc(d)));
        ASSERT_F64_BITS(ri_f64_nearest(d), ri_f64_bits(rint(d)));
    }
}

static void test_sqrt(void **state)
{
    (void)state;
    ASSERT_F32_BITS(ri_f32_sqrt(4.0f), 0x40000000u);
    ASSERT_F32_BITS(ri_f32_sqrt(F32(N0F)), N0F);
    ASSERT_F32_BITS(ri_f32_sqrt(F32(P0F)), P0F);
    ASSERT_F32_BITS(ri_f32_sqrt(F32(PINFF)), PINFF);
    assert_true(ri_f32_is_canonical_nan_bits(ri_f32_bits(ri_f32_sqrt(-1.0f))));
    assert_true(ri_f32_is_canonical_nan_bits(ri_f32_bits(ri_f32_sqrt(F32(NINFF)))));
    assert_true(ri_f32_is_canonical_nan_bits(ri_f32_bits(ri_f32_sqrt(F32(0x80000001u)))));
    ASSERT_F32_BITS(ri_f32_sqrt(F32(SNAN32)), 0x7FE00001u);
    ASSERT_F32_BITS(ri_f32_sqrt(F32(0xFFC00000u)), 0xFFC00000u);
    ASSERT_F32_BITS(ri_f32_sqrt(2.0f), 0x3FB504F3u);
    ASSERT_F64_BITS(ri_f64_sqrt(2.0), 0x3FF6A09E667F3BCDu);
    ASSERT_F64_BITS(ri_f64_sqrt(F64(N0D)), N0D);
    assert_true(ri_f64_is_canonical_nan_bits(ri_f64_bits(ri_f64_sqrt(-1.0))));
    ASSERT_F64_BITS(ri_f64_sqrt(F64(SNAN64)), 0x7FFC000000000001u);
}

static void test_min_max(void **state)
{
    (void)state;
    ASSERT_F32_BITS(ri_f32_min(F32(N0F), F32(P0F)), N0F);
    ASSERT_F32_BITS(ri_f32_min(F32(P0F), F32(N0F)), N0F);
    ASSERT_F32_BITS(ri_f32_max(F32(N0F), F32(P0F)), P0F);
    ASSERT_F32_BITS(ri_f32_max(F32(P0F), F32(N0F)), P0F);
    ASSERT_F32_BITS(ri_f32_min(F32(N0F), F32(N0F)), N0F);
    ASSERT_F32_BITS(ri_f32_max(F32(P0F), F32(P0F)), P0F);
    ASSERT_F32_BITS(ri_f32_min(1.0f, 2.0f), 0x3F800000u);
    ASSERT_F32_BITS(ri_f32_min(2.0f, 1.0f), 0x3F800000u);
    ASSERT_F32_BITS(ri_f32_max(-1.0f, -2.0f), 0xBF800000u);
    ASSERT_F32_BITS(ri_f32_min(F32(NINFF), F32(0xFF7FFFFFu)), NINFF);
    ASSERT_F32_BITS(ri_f32_max(F32(PINFF), 1.0f), PINFF);
    /* any NaN gives a NaN; canonical stays canonical, others become arithmetic */
    ASSERT_F32_BITS(ri_f32_min(F32(CNAN32), 1.0f), CNAN32);
    ASSERT_F32_BITS(ri_f32_min(1.0f, F32(CNAN32)), CNAN32);
    ASSERT_F32_BITS(ri_f32_max(F32(PINFF), F32(0xFFC00000u)), 0xFFC00000u);
    ASSERT_F32_BITS(ri_f32_max(F32(SNAN32), 1.0f), 0x7FE00001u);
    ASSERT_F32_BITS(ri_f32_min(1.0f, F32(SNAN32)), 0x7FE00001u);
    assert_true(ri_f32_is_arithmetic_nan_bits(ri_f32_bits(ri_f32_min(F32(CNAN32), F32(SNAN32)))));

    ASSERT_F64_BITS(ri_f64_min(F64(N0D), F64(P0D)), N0D);
    ASSERT_F64_BITS(ri_f64_min(F64(P0D), F64(N0D)), N0D);
    ASSERT_F64_BITS(ri_f64_max(F64(N0D), F64(P0D)), P0D);
    ASSERT_F64_BITS(ri_f64_max(F64(P0D), F64(N0D)), P0D);
    ASSERT_F64_BITS(ri_f64_min(1.0, 2.0), 0x3FF0000000000000u);
    ASSERT_F64_BITS(ri_f64_max(1.0, 2.0), 0x4000000000000000u);
    ASSERT_F64_BITS(ri_f64_min(F64(CNAN64), F64(NINFD)), CNAN64);
    ASSERT_F64_BITS(ri_f64_max(1.0, F64(SNAN64)), 0x7FFC000000000001u);
    ASSERT_F64_BITS(ri_f64_max(F64(PINFD), F64(NINFD)), PINFD);
}

/* ---- conversions: float -> int --------------------------------------------------- */

#define TRAP32(fn, x, expect) do { uint32_t o_ = 0xABCDu; \
    assert_int_equal(fn(x, &o_), expect); assert_int_equal(o_, 0xABCDu); } while (0)
#define OK32(fn, x, v) do { uint32_t o_ = 0; \
    assert_int_equal(fn(x, &o_), RI_TRAP_NONE); assert_int_equal(o_, (uint32_t)(v)); } while (0)
#define TRAP64(fn, x, expect) do { uint64_t o_ = 0xABCDu; \
    assert_int_equal(fn(x, &o_), expect); assert_int_equal(o_, 0xABCDu); } while (0)
#define OK64(fn, x, v) do { uint64_t o_ = 0; \
    assert_int_equal(fn(x, &o_), RI_TRAP_NONE); assert_int_equal(o_, (uint64_t)(v)); } while (0)

static void test_trunc_i32(void **state)
{
    (void)state;
    const ri_trap OV = RI_TRAP_INT_OVERFLOW, INV = RI_TRAP_INVALID_CONVERSION;
    /* i32.trunc_f32_s: valid iff x in (-2147483904, 2147483648) */
    OK32(ri_i32_trunc_f32_s, -2147483648.0f, 0x80000000u);
    OK32(ri_i32_trunc_f32_s, F32(0x4EFFFFFFu), 2147483520);
    OK32(ri_i32_trunc_f32_s, -1.9f, (uint32_t)-1);
    OK32(ri_i32_trunc_f32_s, F32(N0F), 0);
    OK32(ri_i32_trunc_f32_s, F32(0x00000001u), 0);
    TRAP32(ri_i32_trunc_f32_s, 2147483648.0f, OV);
    TRAP32(ri_i32_trunc_f32_s, -2147483904.0f, OV);
    TRAP32(ri_i32_trunc_f32_s, F32(PINFF), OV);
    TRAP32(ri_i32_trunc_f32_s, F32(NINFF), OV);
    TRAP32(ri_i32_trunc_f32_s, F32(CNAN32), INV);
    TRAP32(ri_i32_trunc_f32_s, F32(0xFFA00001u), INV);
    /* i32.trunc_f32_u: (-1, 4294967296) */
    OK32(ri_i32_trunc_f32_u, F32(0xBF7FFFFFu), 0); /* -0.99999994 */
    OK32(ri_i32_trunc_f32_u, F32(0x4F7FFFFFu), 4294967040u);
    OK32(ri_i32_trunc_f32_u, 2147483648.0f, 0x80000000u);
    TRAP32(ri_i32_trunc_f32_u, -1.0f, OV);
    TRAP32(ri_i32_trunc_f32_u, 4294967296.0f, OV);
    TRAP32(ri_i32_trunc_f32_u, F32(NINFF), OV);
    TRAP32(ri_i32_trunc_f32_u, F32(SNAN32), INV);
    /* i32.trunc_f64_s: (-2147483649, 2147483648) */
    OK32(ri_i32_trunc_f64_s, -2147483648.9, 0x80000000u);
    OK32(ri_i32_trunc_f64_s, 2147483647.9, 0x7FFFFFFFu);
    OK32(ri_i32_trunc_f64_s, F64(0x8000000000000001u), 0);
    TRAP32(ri_i32_trunc_f64_s, -2147483649.0, OV);
    TRAP32(ri_i32_trunc_f64_s, 2147483648.0, OV);
    TRAP32(ri_i32_trunc_f64_s, F64(CNAN64), INV);
    /* i32.trunc_f64_u: (-1, 4294967296) */
    OK32(ri_i32_trunc_f64_u, -0.9999999999999999, 0);
    OK32(ri_i32_trunc_f64_u, 4294967295.9, 0xFFFFFFFFu);
    OK32(ri_i32_trunc_f64_u, 1e-300, 0);
    TRAP32(ri_i32_trunc_f64_u, -1.0, OV);
    TRAP32(ri_i32_trunc_f64_u, 4294967296.0, OV);
    TRAP32(ri_i32_trunc_f64_u, F64(PINFD), OV);
    TRAP32(ri_i32_trunc_f64_u, F64(0xFFF8000000000000u), INV);
}

static void test_trunc_i64(void **state)
{
    (void)state;
    const ri_trap OV = RI_TRAP_INT_OVERFLOW, INV = RI_TRAP_INVALID_CONVERSION;
    OK64(ri_i64_trunc_f32_s, -9223372036854775808.0f, 0x8000000000000000u);
    OK64(ri_i64_trunc_f32_s, F32(0x5EFFFFFFu), 9223371487098961920u);
    OK64(ri_i64_trunc_f32_s, -1.5f, (uint64_t)-1);
    TRAP64(ri_i64_trunc_f32_s, 9223372036854775808.0f, OV);
    TRAP64(ri_i64_trunc_f32_s, F32(0xDF000001u), OV); /* -2^63 - 2^40 */
    TRAP64(ri_i64_trunc_f32_s, F32(CNAN32), INV);
    OK64(ri_i64_trunc_f32_u, F32(0xBF7FFFFFu), 0);
    OK64(ri_i64_trunc_f32_u, F32(0x5F7FFFFFu), 18446742974197923840u);
    TRAP64(ri_i64_trunc_f32_u, -1.0f, OV);
    TRAP64(ri_i64_trunc_f32_u, 18446744073709551616.0f, OV);
    TRAP64(ri_i64_trunc_f32_u, F32(PINFF), OV);
    TRAP64(ri_i64_trunc_f32_u, F32(SNAN32), INV);
    OK64(ri_i64_trunc_f64_s, -9223372036854775808.0, 0x8000000000000000u);
    OK64(ri_i64_trunc_f64_s, F64(0x43DFFFFFFFFFFFFFu), 9223372036854774784u);
    OK64(ri_i64_trunc_f64_s, F64(0xC3DFFFFFFFFFFFFFu), (uint64_t)-9223372036854774784ll);
    TRAP64(ri_i64_trunc_f64_s, 9223372036854775808.0, OV);
    TRAP64(ri_i64_trunc_f64_s, F64(0xC3E0000000000001u), OV);
    TRAP64(ri_i64_trunc_f64_s, F64(NINFD), OV);
    TRAP64(ri_i64_trunc_f64_s, F64(SNAN64), INV);
    OK64(ri_i64_trunc_f64_u, -0.9999999999999999, 0);
    OK64(ri_i64_trunc_f64_u, F64(0x43EFFFFFFFFFFFFFu), 18446744073709549568u);
    OK64(ri_i64_trunc_f64_u, 9223372036854775808.0, 0x8000000000000000u);
    TRAP64(ri_i64_trunc_f64_u, -1.0, OV);
    TRAP64(ri_i64_trunc_f64_u, 18446744073709551616.0, OV);
    TRAP64(ri_i64_trunc_f64_u, F64(CNAN64), INV);
}

static void test_trunc_sat(void **state)
{
    (void)state;
    assert_int_equal(ri_i32_trunc_sat_f32_s(F32(CNAN32)), 0);
    assert_int_equal(ri_i32_trunc_sat_f32_s(F32(0xFFA00001u)), 0);
    assert_int_equal(ri_i32_trunc_sat_f32_s(2147483648.0f), 0x7FFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f32_s(-2147483904.0f), 0x80000000u);
    assert_int_equal(ri_i32_trunc_sat_f32_s(-2147483648.0f), 0x80000000u);
    assert_int_equal(ri_i32_trunc_sat_f32_s(F32(PINFF)), 0x7FFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f32_s(F32(NINFF)), 0x80000000u);
    assert_int_equal(ri_i32_trunc_sat_f32_s(-1.5f), 0xFFFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f32_u(F32(CNAN32)), 0);
    assert_int_equal(ri_i32_trunc_sat_f32_u(-1.0f), 0);
    assert_int_equal(ri_i32_trunc_sat_f32_u(-0.9f), 0);
    assert_int_equal(ri_i32_trunc_sat_f32_u(F32(NINFF)), 0);
    assert_int_equal(ri_i32_trunc_sat_f32_u(4294967296.0f), 0xFFFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f32_u(F32(0x4F7FFFFFu)), 4294967040u);
    assert_int_equal(ri_i32_trunc_sat_f64_s(F64(CNAN64)), 0);
    assert_int_equal(ri_i32_trunc_sat_f64_s(2147483647.9), 0x7FFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f64_s(2147483648.0), 0x7FFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f64_s(-2147483648.9), 0x80000000u);
    assert_int_equal(ri_i32_trunc_sat_f64_s(-2147483649.0), 0x80000000u);
    assert_int_equal(ri_i32_trunc_sat_f64_s(-1e300), 0x80000000u);
    assert_int_equal(ri_i32_trunc_sat_f64_u(F64(SNAN64)), 0);
    assert_int_equal(ri_i32_trunc_sat_f64_u(-1.0), 0);
    assert_int_equal(ri_i32_trunc_sat_f64_u(4294967295.9), 0xFFFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f64_u(4294967296.0), 0xFFFFFFFFu);
    assert_int_equal(ri_i32_trunc_sat_f64_u(F64(PINFD)), 0xFFFFFFFFu);

    assert_int_equal(ri_i64_trunc_sat_f32_s(F32(CNAN32)), 0);
    assert_int_equal(ri_i64_trunc_sat_f32_s(9223372036854775808.0f), 0x7FFFFFFFFFFFFFFFu);
    assert_int_equal(ri_i64_trunc_sat_f32_s(-9223372036854775808.0f), 0x8000000000000000u);
    assert_int_equal(ri_i64_trunc_sat_f32_s(F32(0xDF000001u)), 0x8000000000000000u);
    assert_int_equal(ri_i64_trunc_sat_f32_s(F32(0x5EFFFFFFu)), 9223371487098961920u);
    assert_int_equal(ri_i64_trunc_sat_f32_u(F32(SNAN32)), 0);
    assert_int_equal(ri_i64_trunc_sat_f32_u(-1.0f), 0);
    assert_int_equal(ri_i64_trunc_sat_f32_u(18446744073709551616.0f), 0xFFFFFFFFFFFFFFFFu);
    assert_int_equal(ri_i64_trunc_sat_f32_u(F32(0x5F7FFFFFu)), 18446742974197923840u);
    assert_int_equal(ri_i64_trunc_sat_f64_s(F64(CNAN64)), 0);
    assert_int_equal(ri_i64_trunc_sat_f64_s(9223372036854775808.0), 0x7FFFFFFFFFFFFFFFu);
    assert_int_equal(ri_i64_trunc_sat_f64_s(F64(NINFD)), 0x8000000000000000u);
    assert_int_equal(ri_i64_trunc_sat_f64_s(F64(0x43DFFFFFFFFFFFFFu)), 9223372036854774784u);
    assert_int_equal(ri_i64_trunc_sat_f64_s(-9223372036854775808.0), 0x8000000000000000u);
    assert_int_equal(ri_i64_trunc_sat_f64_u(F64(CNAN64)), 0);
    assert_int_equal(ri_i64_trunc_sat_f64_u(-0.9999999999999999), 0);
    assert_int_equal(ri_i64_trunc_sat_f64_u(18446744073709551616.0), 0xFFFFFFFFFFFFFFFFu);
    assert_int_equal(ri_i64_trunc_sat_f64_u(F64(0x43EFFFFFFFFFFFFFu)), 18446744073709549568u);
}

/* ---- conversions: int -> float ----------------------------------------------------- */

static void test_convert(void **state)
{
    (void)state;
    ASSERT_F32_BITS(ri_f32_convert_i32_s(0), P0F);
    ASSERT_F32_BITS(ri_f32_convert_i32_s(1), 0x3F800000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_s(0xFFFFFFFFu), 0xBF800000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_s(0x80000000u), 0xCF000000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_s(0x7FFFFFFFu), 0x4F000000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_s(16777217), 0x4B800000u); /* 2^24+1 -> tie, even down */
    ASSERT_F32_BITS(ri_f32_convert_i32_s(16777219), 0x4B800002u); /* 2^24+3 -> tie, even up */
    ASSERT_F32_BITS(ri_f32_convert_i32_s((uint32_t)-16777217), 0xCB800000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_s(1234567890), 0x4E932C06u);
    ASSERT_F32_BITS(ri_f32_convert_i32_u(0xFFFFFFFFu), 0x4F800000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_u(0x80000000u), 0x4F000000u);
    ASSERT_F32_BITS(ri_f32_convert_i32_u(0x80000080u), 0x4F000000u); /* tie, even down */
    ASSERT_F32_BITS(ri_f32_convert_i32_u(0x80000081u), 0x4F000001u);
    ASSERT_F32_BITS(ri_f32_convert_i32_u(0xFFFFFF80u), 0x4F800000u); /* tie, carry */
    ASSERT_F32_BITS(ri_f32_convert_i32_u(0xFFFFFF7Fu), 0x4F7FFFFFu);
    ASSERT_F32_BITS(ri_f32_convert_i64_s(0x8000000000000000u), 0xDF000000u);
    ASSERT_F32_BITS(ri_f32_convert_i64_s(0x7FFFFFFFFFFFFFFFu), 0x5F000000u);
    ASSERT_F32_BITS(ri_f32_convert_i64_s(0xFFFFFFFFFFFFFFFFu), 0xBF800000u);
    ASSERT_F32_BITS(ri_f32_convert_i64_s(9007199791611905u), 0x5A000001u); /* the classic double-rounding trap */
    ASSERT_F32_BITS(ri_f32_convert_i64_s((uint64_t)-9007199791611905ll), 0xDA000001u);
    ASSERT_F32_BITS(ri_f32_convert_i64_s(9007199254740993u), 0x5A000000u); /* 2^53+1 */
    ASSERT_F32_BITS(ri_f32_convert_i64_u(0xFFFFFFFFFFFFFFFFu), 0x5F800000u);
    ASSERT_F32_BITS(ri_f32_convert_i64_u(0x8000008000000000u), 0x5F000000u); /* tie, even down */
    ASSERT_F32_BITS(ri_f32_convert_i64_u(0x8000008000000001u), 0x5F000001u); /* just above tie */
    ASSERT_F32_BITS(ri_f32_convert_i64_u(0x8000018000000000u), 0x5F000002u); /* tie, even up */
    ASSERT_F32_BITS(ri_f32_convert_i64_u(0xFFFFFF7FFFFFFFFFu), 0x5F7FFFFFu);
    ASSERT_F32_BITS(ri_f32_convert_i64_u(0x0020000020000001u), 0x5A000001u);

    ASSERT_F64_BITS(ri_f64_convert_i32_s(0), P0D);
    ASSERT_F64_BITS(ri_f64_convert_i32_s(0x80000000u), 0xC1E0000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i32_s(0xFFFFFFFFu), 0xBFF0000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i32_s(0x7FFFFFFFu), 0x41DFFFFFFFC00000u);
    ASSERT_F64_BITS(ri_f64_convert_i32_u(0xFFFFFFFFu), 0x41EFFFFFFFE00000u);
    ASSERT_F64_BITS(ri_f64_convert_i64_s(0x8000000000000000u), 0xC3E0000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i64_s(0x7FFFFFFFFFFFFFFFu), 0x43E0000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i64_s(9007199254740993u), 0x4340000000000000u); /* 2^53+1: tie, down */
    ASSERT_F64_BITS(ri_f64_convert_i64_s(9007199254740995u), 0x4340000000000002u); /* 2^53+3: tie, up */
    ASSERT_F64_BITS(ri_f64_convert_i64_s((uint64_t)-9007199254740993ll), 0xC340000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i64_s(0xFFFFFFFFFFFFFFFFu), 0xBFF0000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i64_u(0xFFFFFFFFFFFFFFFFu), 0x43F0000000000000u);
    ASSERT_F64_BITS(ri_f64_convert_i64_u(0x8000000000000400u), 0x43E0000000000000u); /* tie, even down */
    ASSERT_F64_BITS(ri_f64_convert_i64_u(0x8000000000000401u), 0x43E0000000000001u);
    ASSERT_F64_BITS(ri_f64_convert_i64_u(0x8000000000000C00u), 0x43E0000000000002u); /* tie, even up */
    ASSERT_F64_BITS(ri_f64_convert_i64_u(0xFFFFFFFFFFFFFBFFu), 0x43EFFFFFFFFFFFFFu);
    ASSERT_F64_BITS(ri_f64_convert_i64_u(0xFFFFFFFFFFFFFC00u), 0x43F0000000000000u);
}

/* Against the hardware conversion (SSE2 cvtsi2ss/sd, correctly rounded) on a sweep,
 * including the two-step u64 path: anything that fits in i64 is converted signed. */
static void test_convert_sweep(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17; /* xorshift64 */
        uint64_t v = x >> (i % 64);
        int64_t s = (int64_t)(v & 0x7FFFFFFFFFFFFFFFu);
        ASSERT_F32_BITS(ri_f32_convert_i64_s((uint64_t)s), ri_f32_bits((float)s));
        ASSERT_F32_BITS(ri_f32_convert_i64_s(0u - (uint64_t)s), ri_f32_bits((float)-s));
        ASSERT_F64_BITS(ri_f64_convert_i64_s((uint64_t)s), ri_f64_bits((double)s));
        ASSERT_F64_BITS(ri_f64_convert_i64_s(0u - (uint64_t)s), ri_f64_bits((double)-s));
        int32_t s32 = (int32_t)(uint32_t)(v & 0x7FFFFFFFu);
        ASSERT_F32_BITS(ri_f32_convert_i32_s((uint32_t)s32), ri_f32_bits((float)s32));
        ASSERT_F32_BITS(ri_f32_convert_i32_u((uint32_t)v), ri_f32_bits((float)(int64_t)(uint32_t)v));
        ASSERT_F64_BITS(ri_f64_convert_i32_u((uint32_t)v), ri_f64_bits((double)(uint32_t)v));
    }
}

/* ---- float <-> float -------------------------------------------------------------- */

static void test_demote_promote(void **state)
{
    (void)state;
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(P0D)), P0F);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(N0D)), N0F);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(PINFD)), PINFF);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(NINFD)), NINFF);
    ASSERT_F32_BITS(ri_f32_demote_f64(1.0), 0x3F800000u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x3FF0000010000000u)), 0x3F800000u); /* tie, even down */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x3FF0000010000001u)), 0x3F800001u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x3FF0000030000000u)), 0x3F800002u); /* tie, even up */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x47EFFFFFE0000000u)), 0x7F7FFFFFu); /* f32 max */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x47EFFFFFEFFFFFFFu)), 0x7F7FFFFFu); /* below max + half ulp */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x47EFFFFFF0000000u)), 0x7F800000u); /* max + half ulp: inf */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0xC7EFFFFFF0000000u)), 0xFF800000u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x7FEFFFFFFFFFFFFFu)), 0x7F800000u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x3810000000000000u)), 0x00800000u); /* f32 min normal */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x380FFFFFF0000000u)), 0x00800000u); /* rounds up to it */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x36A0000000000000u)), 0x00000001u); /* f32 min subnormal */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x3690000000000000u)), 0x00000000u); /* half of it: tie to 0 */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x3690000000000001u)), 0x00000001u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0xB690000000000001u)), 0x80000001u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x36A8000000000000u)), 0x00000002u); /* 1.5 min: tie, up */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x0000000000000001u)), 0x00000000u); /* f64 subnormal */
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x800FFFFFFFFFFFFFu)), 0x80000000u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(CNAN64)), CNAN32);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0xFFF8000000000000u)), 0xFFC00000u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(SNAN64)), 0x7FE00000u);
    ASSERT_F32_BITS(ri_f32_demote_f64(F64(0x7FFFFFFFFFFFFFFFu)), 0x7FFFFFFFu);
    assert_true(ri_f32_is_arithmetic_nan_bits(ri_f32_bits(ri_f32_demote_f64(F64(0x7FF0000000000001u)))));

    ASSERT_F64_BITS(ri_f64_promote_f32(F32(P0F)), P0D);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(N0F)), N0D);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(NINFF)), NINFD);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(0x00000001u)), 0x36A0000000000000u);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(0x7F7FFFFFu)), 0x47EFFFFFE0000000u);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(CNAN32)), CNAN64);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(0xFFC00000u)), 0xFFF8000000000000u);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(SNAN32)), 0x7FFC000020000000u);
    ASSERT_F64_BITS(ri_f64_promote_f32(F32(0x7FFFFFFFu)), 0x7FFFFFFFE0000000u);
}

/* Demotion against the hardware's (SSE2 cvtsd2ss, correctly rounded) on a sweep of
 * non-NaN f64 bit patterns concentrated around the f32 range. */
static void test_demote_sweep(void **state)
{
    (void)state;
    uint64_t x = 0x243F6A8885A308D3u;
    for (int i = 0; i < 400000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint64_t b = x;
        if (i & 1) /* exponent in [0x360, 0x480): f32 subnormals .. overflow */
            b = (b & 0x800FFFFFFFFFFFFFu) | ((uint64_t)(0x360 + (x >> 20) % 0x120) << 52);
        if (i & 2) /* few low bits set: exercises exact ties */
            b &= ~(uint64_t)0x0FFFFFFFu << (i % 8);
        double d = F64(b);
        if (d != d)
            continue;
        ASSERT_F32_BITS(ri_f32_demote_f64(d), ri_f32_bits((float)d));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitcount),
        cmocka_unit_test(test_shift_rotate),
        cmocka_unit_test(test_div_rem_32),
        cmocka_unit_test(test_div_rem_64),
        cmocka_unit_test(test_extend),
        cmocka_unit_test(test_bits_sign),
        cmocka_unit_test(test_canon),
        cmocka_unit_test(test_round_f32),
        cmocka_unit_test(test_round_f64),
        cmocka_unit_test(test_round_f32_sweep),
        cmocka_unit_test(test_round_f64_sweep),
        cmocka_unit_test(test_sqrt),
        cmocka_unit_test(test_min_max),
        cmocka_unit_test(test_trunc_i32),
        cmocka_unit_test(test_trunc_i64),
        cmocka_unit_test(test_trunc_sat),
        cmocka_unit_test(test_convert),
        cmocka_unit_test(test_convert_sweep),
        cmocka_unit_test(test_demote_promote),
        cmocka_unit_test(test_demote_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
