/*
 * The small utilities every layer shares (src/util): hex, base64 (strict and lenient),
 * UTF-8 (decode, validate, maximal subparts), random ids, host clocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/hex.h"
#include "util/le.h"
#include "util/random.h"
#include "util/utf8.h"

static void hex_round_trip(void **state) {
    (void)state;
    const uint8_t bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char text[2 * sizeof bytes + 1];
    ri_hex_encode(bytes, sizeof bytes, text);
    assert_string_equal(text, "00017f80abff");
    char *dup = ri_hex_dup(bytes, sizeof bytes);
    assert_string_equal(dup, text);
    free(dup);
    uint8_t back[sizeof bytes];
    assert_true(ri_hex_decode(text, sizeof bytes, back));
    assert_memory_equal(back, bytes, sizeof bytes);
    /* upper case, stray characters, wrong lengths are refused */
    assert_false(ri_hex_decode("00017F80abff", sizeof bytes, back));
    assert_false(ri_hex_decode("00017g80abff", sizeof bytes, back));
    assert_false(ri_hex_decode("00017f80abff0", sizeof bytes, back));
    assert_false(ri_hex_decode("00017f80ab", sizeof bytes, back));
    char empty[1];
    ri_hex_encode(bytes, 0, empty);
    assert_string_equal(empty, "");
}

static void base64_strict(void **state) {
    (void)state;
    static const char *const text[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const b64[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        char *e = ri_base64_encode((const uint8_t *)text[i], strlen(text[i]));
        assert_string_equal(e, b64[i]);
        free(e);
        uint8_t *d;
        size_t n;
        assert_true(ri_base64_decode(b64[i], strlen(b64[i]), &d, &n));
        assert_int_equal(n, strlen(text[i]));
        assert_memory_equal(d, text[i], n);
        free(d);
    }
    uint8_t *d;
    size_t n;
    assert_false(ri_base64_decode("Zg", 2, &d, &n));       /* padding required */
    assert_false(ri_base64_decode("Zh==", 4, &d, &n));     /* unused bits set */
    assert_false(ri_base64_decode("Zm9v\n", 5, &d, &n));  /* whitespace */
    assert_false(ri_base64_decode("Zm-_", 4, &d, &n));     /* URL alphabet is not strict base64 */
    assert_null(d);
}

static void base64_lenient(void **state) {
    (void)state;
    uint8_t *d;
    size_t n;
    assert_true(ri_base64_decode_lenient("Zm9vYg", 6, &d, &n)); /* no padding */
    assert_int_equal(n, 4);
    assert_memory_equal(d, "foob", 4);
    free(d);
    assert_true(ri_base64_decode_lenient("-_-_", 4, &d, &n)); /* URL-safe alphabet */
    assert_int_equal(n, 3);
    assert_int_equal(d[0], 0xfb);
    free(d);
    assert_false(ri_base64_decode_lenient("Zm9vY", 5, &d, &n)); /* a lone sixth bit group */
    assert_false(ri_base64_decode_lenient("Zm 9v", 5, &d, &n));
}

static void utf8_rules(void **state) {
    (void)state;
    uint32_t cp = 0;
    assert_int_equal(ri_utf8_decode((const uint8_t *)"A", 1, &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(ri_utf8_decode((const uint8_t *)"\xc3\xa9", 2, &cp), 2);
    assert_int_equal(cp, 0xE9);
    assert_int_equal(ri_utf8_decode((const uint8_t *)"\xe2\x82\xac", 3, &cp), 3);
    assert_int_equal(cp, 0x20AC);
    assert_int_equal(ri_utf8_decode((const uint8_t *)"\xf4\x8f\xbf\xbf", 4, &cp), 4);
    assert_int_equal(cp, 0x10FFFF);
    /* overlongs, surrogates, above U+10FFFF, stray continuations, truncations */
    static const char *const bad[] = {"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "\xf5\x80\x80\x80", "\x80", "\xe2\x82", "\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(ri_utf8_decode((const uint8_t *)bad[i], strlen(bad[i]), &cp), 0);
        assert_false(ri_utf8_valid((const uint8_t *)bad[i], strlen(bad[i])));
    }
    assert_true(ri_utf8_valid((const uint8_t *)"caf\xc3\xa9 \xe2\x82\xac", 9));
    assert_true(ri_utf8_valid((const uint8_t *)"", 0));
    /* maximal subparts: what one replacement character stands for */
    assert_int_equal(ri_utf8_subpart((const uint8_t *)"\xe2\x82", 2), 2);       /* incomplete, valid so far */
    assert_int_equal(ri_utf8_subpart((const uint8_t *)"\xe2\x82\x41", 3), 2);   /* cut by an ASCII byte */
    assert_int_equal(ri_utf8_subpart((const uint8_t *)"\xe0\x80", 2), 1);       /* overlong at byte 2 */
    assert_int_equal(ri_utf8_subpart((const uint8_t *)"\xed\xa0\x80", 3), 1);   /* surrogate at byte 2 */
    assert_int_equal(ri_utf8_subpart((const uint8_t *)"\x80", 1), 0);           /* no lead at all */
    assert_int_equal(ri_utf8_subpart((const uint8_t *)"\xc0\x80", 2), 0);       /* C0 never leads */
}

static void random_ids_and_clocks(void **state) {
    (void)state;
    char a[33], b[33];
    assert_true(ri_random_hex(a, 32));
    assert_true(ri_random_hex(b, 32));
    assert_int_equal(strlen(a), 32);
    assert_int_equal(strspn(a, "0123456789abcdef"), 32);
    assert_string_not_equal(a, b);
    char odd[6];
    assert_true(ri_random_hex(odd, 5));
    assert_int_equal(strlen(odd), 5);
    char big[200];
    assert_false(ri_random_hex(big, 130));
    int64_t m1 = ri_clock_mono_ns(), m2 = ri_clock_mono_ns();
    assert_true(m2 >= m1);
    assert_true(ri_clock_wall_ms() > 1600000000000LL); /* after 2020 */
}

static void buffer_and_little_endian(void **state) {
    (void)state;
    ri_buf b = {0};
    ri_buf_u8(&b, 0xAB);
    ri_buf_u16(&b, 0x1234);
    ri_buf_u32(&b, 0xDEADBEEF);
    ri_buf_u64(&b, 0x0102030405060708ull);
    ri_buf_zeros(&b, 3);
    ri_buf_put(&b, "xyz", 3);
    assert_false(b.failed);
    static const uint8_t want[] = {0xAB, 0x34, 0x12, 0xEF, 0xBE, 0xAD, 0xDE, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 'x', 'y', 'z'};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    assert_int_equal(ri_le_get16(b.data + 1), 0x1234);
    assert_int_equal(ri_le_get32(b.data + 3), 0xDEADBEEF);
    assert_true(ri_le_get64(b.data + 7) == 0x0102030405060708ull);
    for (int i = 0; i < 10000; i++) ri_buf_u32(&b, (uint32_t)i); /* grows */
    assert_int_equal(b.len, sizeof want + 40000);
    assert_int_equal(ri_le_get32(b.data + sizeof want + 4 * 9999), 9999);
    /* a size that cannot exist fails once and every later write is dropped */
    assert_false(ri_buf_reserve(&b, SIZE_MAX));
    assert_true(b.failed);
    size_t len = b.len;
    ri_buf_u8(&b, 1);
    assert_int_equal(b.len, len);
    ri_buf_free(&b);
    assert_null(b.data);
    assert_false(b.failed);
}

static void value_type_names(void **state) {
    (void)state;
    assert_string_equal(ri_valtype_name(RI_I32), "i32");
    assert_string_equal(ri_valtype_name(RI_F64), "f64");
    assert_string_equal(ri_valtype_name(RI_V128), "v128");
    assert_string_equal(ri_valtype_name(RI_EXTERNREF), "externref");
    assert_string_equal(ri_valtype_name(RI_EXNREF), "exnref");
    assert_string_equal(ri_valtype_name((ri_valtype)0x42), "unknown");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hex_round_trip),   cmocka_unit_test(base64_strict),         cmocka_unit_test(base64_lenient),
        cmocka_unit_test(utf8_rules),       cmocka_unit_test(random_ids_and_clocks), cmocka_unit_test(value_type_names), cmocka_unit_test(buffer_and_little_endian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
