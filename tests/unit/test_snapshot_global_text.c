/*
 * ri_snap_global_text: every type in every form (ri inspect's readable and JSON text,
 * ri diff's typed text, the bits in hex), NaNs with payloads and signs, -0, infinities,
 * the extremes of the integers, a v128's lanes, null and function references, and
 * truncation to a small buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ri/snapshot.h"

static ri_snap_global global(ri_valtype type, uint64_t bits, uint64_t high) {
    ri_snap_global g;
    memset(&g, 0, sizeof g);
    g.type = type;
    g.bits = bits;
    g.bits_high = high;
    return g;
}

typedef struct text_case {
    ri_valtype type;
    uint64_t bits, high;
    const char *plain, *json, *typed, *hex, *hex64;
} text_case;

#define V128_LANES "i32x4 0x03020100 0x07060504 0x0b0a0908 0x0f0e0d0c"

static const text_case cases[] = {
    {RI_I32, 0xfffffffb, 0, "-5", "-5", "i32 -5", "0xfffffffb", "0x00000000fffffffb"},
    {RI_I32, 0x80000000, 0, "-2147483648", "-2147483648", "i32 -2147483648", "0x80000000", "0x0000000080000000"},
    {RI_I32, 0x7fffffff, 0, "2147483647", "2147483647", "i32 2147483647", "0x7fffffff", "0x000000007fffffff"},
    {RI_I64, 0x8000000000000000u, 0, "-9223372036854775808", "-9223372036854775808", "i64 -9223372036854775808",
     "0x8000000000000000", "0x8000000000000000"},
    {RI_I64, 0x7fffffffffffffffu, 0, "9223372036854775807", "9223372036854775807", "i64 9223372036854775807",
     "0x7fffffffffffffff", "0x7fffffffffffffff"},
    /* NaNs: named in the readable forms, the payload and sign in ri diff's */
    {RI_F32, 0x7fa00001, 0, "nan", "\"nan\"", "f32 nan (0x7fa00001)", "0x7fa00001", "0x000000007fa00001"},
    {RI_F32, 0xff800001, 0, "nan", "\"nan\"", "f32 -nan (0xff800001)", "0xff800001", "0x00000000ff800001"},
    {RI_F64, 0x7ff8000000000001u, 0, "nan", "\"nan\"", "f64 nan (0x7ff8000000000001)", "0x7ff8000000000001",
     "0x7ff8000000000001"},
    {RI_F64, 0x8000000000000000u, 0, "-0", "-0", "f64 -0 (0x8000000000000000)", "0x8000000000000000",
     "0x8000000000000000"},
    {RI_F64, 0x7ff0000000000000u, 0, "inf", "\"inf\"", "f64 inf (0x7ff0000000000000)", "0x7ff0000000000000",
     "0x7ff0000000000000"},
    {RI_F32, 0xff800000, 0, "-inf", "\"-inf\"", "f32 -inf (0xff800000)", "0xff800000", "0x00000000ff800000"},
    {RI_F32, 0x3fc00000, 0, "1.5", "1.5", "f32 1.5 (0x3fc00000)", "0x3fc00000", "0x000000003fc00000"},
    {RI_F64, 0x3fb999999999999au, 0, "0.10000000000000001", "0.10000000000000001",
     "f64 0.10000000000000001 (0x3fb999999999999a)", "0x3fb999999999999a", "0x3fb999999999999a"},
    {RI_F64, 1, 0, "4.9406564584124654e-324", "4.9406564584124654e-324", "f64 4.9406564584124654e-324 (0x1)",
     "0x0000000000000001", "0x0000000000000001"},
    {RI_V128, 0x0706050403020100u, 0x0f0e0d0c0b0a0908u, V128_LANES, "\"" V128_LANES "\"", "v128 " V128_LANES,
     "0x0f0e0d0c0b0a09080706050403020100", "0x0f0e0d0c0b0a09080706050403020100"},
    {RI_FUNCREF, RI_SNAP_NULL_REF, 0, "ref.null", "null", "funcref null", "0x00000000ffffffff", "0x00000000ffffffff"},
    {RI_FUNCREF, 3, 0, "func 3", "3", "funcref func 3", "0x0000000000000003", "0x0000000000000003"},
    {RI_FUNCREF, RI_SNAP_NO_ENTRY, 0, "absent", "\"absent\"", "funcref absent", "0x00000000fffffffe",
     "0x00000000fffffffe"},
    {RI_EXTERNREF, RI_SNAP_NULL_REF, 0, "ref.null", "null", "externref null", "0x00000000ffffffff",
     "0x00000000ffffffff"},
};

static void expect_text(const ri_snap_global *g, ri_snap_text_form form, const char *want) {
    char out[RI_SNAP_GLOBAL_TEXT];
    memset(out, 'x', sizeof out);
    ri_snap_global_text(g, form, out, sizeof out);
    if (strcmp(out, want) != 0) print_error("form %d of %s 0x%llx: '%s', want '%s'\n", (int)form,
                                            ri_snap_valtype_name(g->type), (unsigned long long)g->bits, out, want);
    assert_string_equal(out, want);
}

static void every_type_in_every_form(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ri_snap_global g = global(cases[i].type, cases[i].bits, cases[i].high);
        expect_text(&g, RI_SNAP_TEXT_PLAIN, cases[i].plain);
        expect_text(&g, RI_SNAP_TEXT_JSON, cases[i].json);
        expect_text(&g, RI_SNAP_TEXT_TYPED, cases[i].typed);
        expect_text(&g, RI_SNAP_TEXT_BITS, cases[i].hex);
        expect_text(&g, RI_SNAP_TEXT_BITS64, cases[i].hex64);
    }
}

/* The longest texts fit RI_SNAP_GLOBAL_TEXT; a smaller buffer gets a terminated prefix. */
static void small_buffers_truncate(void **state) {
    (void)state;
    ri_snap_global g = global(RI_V128, 0x0706050403020100u, 0x0f0e0d0c0b0a0908u);
    char out[8];
    ri_snap_global_text(&g, RI_SNAP_TEXT_TYPED, out, sizeof out);
    assert_string_equal(out, "v128 i3");
    ri_snap_global_text(&g, RI_SNAP_TEXT_TYPED, out, 3);
    assert_string_equal(out, "v1");
    ri_snap_global_text(&g, RI_SNAP_TEXT_JSON, out, 1);
    assert_string_equal(out, "");
    out[0] = 'x';
    ri_snap_global_text(&g, RI_SNAP_TEXT_PLAIN, out, 0);
    assert_int_equal(out[0], 'x');
    ri_snap_global f = global(RI_F64, 0xffefffffffffffffu, 0); /* -DBL_MAX: the longest float */
    char full[RI_SNAP_GLOBAL_TEXT];
    ri_snap_global_text(&f, RI_SNAP_TEXT_TYPED, full, sizeof full);
    assert_string_equal(full, "f64 -1.7976931348623157e+308 (0xffefffffffffffff)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_in_every_form),
        cmocka_unit_test(small_buffers_truncate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
