/*
 * ri_wsnp_parse: reading a WSNP v1 image without a sandbox (seed 000, checks 1-6).
 * Each check's message and their order, the view's fields, what the state JSON must
 * hold (prngState.current, timestamp, gasUsed as integers; other keys accepted; no key
 * twice), the detail that explains a corrupted state JSON while err->message stays
 * the seed's text, ri_wsnp_nonzero_pages, and that restore refuses with the same
 * message as the parser (they are one implementation).
 * Fixture: tests/wat/sb_add.wat (a module without memory: the sandbox's one page).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

#define PAGE 65536u

#define TOO_SMALL "Snapshot too small — missing header"
#define BAD_MAGIC "Invalid snapshot — bad magic bytes"
#define NO_MEMLEN "Snapshot truncated — missing memory length"
#define MEM_CUT "Snapshot truncated — memory section incomplete"
#define NO_STATELEN "Snapshot truncated — missing state length"
#define STATE_CUT "Snapshot truncated — state section incomplete"
#define CORRUPT "Invalid snapshot — corrupted state JSON"
#define GOOD_STATE "{\"prngState\":{\"current\":-631835670},\"timestamp\":1700000000000,\"gasUsed\":42}"

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

static void wr32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* A WSNP v1 image: memlen bytes of memory (mem, or zeros when NULL), the state text,
 * then `trailing` bytes 'x'. */
static blob image(const uint8_t *mem, uint32_t memlen, const char *json, size_t trailing) {
    size_t m = strlen(json);
    blob b;
    b.len = 13 + (size_t)memlen + m + trailing;
    b.data = calloc(b.len, 1);
    assert_non_null(b.data);
    memcpy(b.data, "WSNP", 4);
    b.data[4] = 1;
    wr32(b.data + 5, memlen);
    if (mem && memlen) memcpy(b.data + 9, mem, memlen);
    wr32(b.data + 9 + memlen, (uint32_t)m);
    memcpy(b.data + 13 + memlen, json, m);
    memset(b.data + 13 + memlen + m, 'x', trailing);
    return b;
}

/* Parses and expects failure with message; returns the view (for its detail). */
static ri_wsnp_view expect_error(const uint8_t *data, size_t len, const char *message) {
    ri_wsnp_view v;
    ri_sandbox_error err;
    memset(&v, 0xAB, sizeof v);
    memset(&err, 0, sizeof err);
    if (ri_wsnp_parse(data, len, &v, &err)) {
        print_error("parse accepted an image that should fail with: %s\n", message);
        fail();
    }
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_string_equal(err.message, message);
    /* A failed parse describes no image: everything but the detail is zero. */
    assert_int_equal(v.version, 0);
    assert_int_equal(v.memory_len, 0);
    assert_null(v.memory);
    assert_null(v.state);
    assert_int_equal(v.state_len, 0);
    assert_int_equal(v.trailing, 0);
    assert_int_equal(v.gas_used, 0);
    assert_int_equal(v.timestamp, 0);
    assert_int_equal(v.prng_state, 0);
    assert_true(memchr(v.detail, '\0', sizeof v.detail) != NULL);
    return v;
}

static ri_wsnp_view expect_ok(const blob b) {
    ri_wsnp_view v;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    if (!ri_wsnp_parse(b.data, b.len, &v, &err)) {
        print_error("parse: %s (%s)\n", err.message, v.detail);
        fail();
    }
    assert_int_equal(err.code, RI_SANDBOX_OK);
    assert_string_equal(v.detail, "");
    return v;
}

/* A state text in a one-page image that must be refused as corrupted; returns the detail. */
static void expect_corrupt_state(const char *json, const char *detail_part) {
    blob b = image(NULL, PAGE, json, 0);
    ri_wsnp_view v = expect_error(b.data, b.len, CORRUPT);
    if (detail_part && !strstr(v.detail, detail_part)) {
        print_error("state %s: detail \"%s\" does not mention \"%s\"\n", json, v.detail, detail_part);
        fail();
    }
    assert_true(strlen(v.detail) > 0);
    free(b.data);
}

static void expect_state_ok(const char *json, int64_t current, uint32_t prng, int64_t ts, uint64_t gas) {
    blob b = image(NULL, PAGE, json, 0);
    ri_wsnp_view v = expect_ok(b);
    assert_int_equal(v.prng_current, current);
    assert_int_equal(v.prng_state, prng);
    assert_int_equal(v.timestamp, ts);
    assert_int_equal(v.gas_used, gas);
    free(b.data);
}

/* ---- the view ---------------------------------------------------------------------------------- */

static void view_describes_the_image(void **state) {
    (void)state;
    uint8_t *mem = calloc(PAGE, 1);
    assert_non_null(mem);
    mem[7] = 9;
    blob b = image(mem, PAGE, GOOD_STATE, 0);
    ri_wsnp_view v = expect_ok(b);
    assert_int_equal(v.version, 1);
    assert_int_equal(v.memory_len, PAGE);
    assert_ptr_equal(v.memory, b.data + 9); /* into the caller's buffer, not a copy */
    assert_int_equal(v.memory[7], 9);
    assert_int_equal(v.state_len, strlen(GOOD_STATE));
    assert_ptr_equal(v.state, (const char *)b.data + 13 + PAGE);
    assert_memory_equal(v.state, GOOD_STATE, v.state_len);
    assert_int_equal(v.trailing, 0);
    assert_int_equal(v.prng_current, -631835670);
    assert_int_equal(v.prng_state, 3663131626u);
    assert_int_equal(v.timestamp, TS);
    assert_int_equal(v.gas_used, 42);
    free(b.data);
    free(mem);
}

static void trailing_bytes_are_counted_not_refused(void **state) {
    (void)state;
    blob b = image(NULL, PAGE, GOOD_STATE, 5);
    ri_wsnp_view v = expect_ok(b);
    assert_int_equal(v.trailing, 5);
    assert_int_equal(v.gas_used, 42);
    free(b.data);
}

static void empty_memory_section_is_an_image(void **state) {
    (void)state;
    blob b = image(NULL, 0, GOOD_STATE, 0);
    ri_wsnp_view v = expect_ok(b);
    assert_int_equal(v.memory_len, 0);
    assert_int_equal(ri_wsnp_nonzero_pages(&v), 0);
    free(b.data);
}

static void null_err_and_null_out_are_allowed(void **state) {
    (void)state;
    blob b = image(NULL, PAGE, GOOD_STATE, 0);
    assert_true(ri_wsnp_parse(b.data, b.len, NULL, NULL));
    assert_false(ri_wsnp_parse(b.data, 3, NULL, NULL));
    ri_sandbox_error err;
    assert_false(ri_wsnp_parse(NULL, 0, NULL, &err));
    assert_string_equal(err.message, TOO_SMALL);
    free(b.data);
}

static void reads_what_snapshot_writes(void **state) {
    (void)state;
    const char *dir = getenv("RI_WAT_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/sb_add.wasm", dir ? dir : "wat");
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open fixture %s (is RI_WAT_DIR set?)\n", path);
        fail();
    }
    uint8_t wasm[4096];
    size_t wasm_len = fread(wasm, 1, sizeof wasm, f);
    fclose(f);
    assert_true(wasm_len > 8);

    ri_sandboxes *factory = ri_sandboxes_new();
    assert_non_null(factory);
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &c, &err);
    assert_non_null(sb);
    assert_true(ri_sandbox_load(sb, wasm, wasm_len, &err));
    ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[2,3]");
    assert_true(r.ok);
    uint64_t gas = r.gas_used;
    ri_sandbox_result_free(&r);

    uint8_t *bytes = NULL;
    size_t len = 0;
    assert_true(ri_sandbox_snapshot(sb, &bytes, &len, &err));
    blob b = {bytes, len};
    ri_wsnp_view v = expect_ok(b);
    assert_int_equal(v.memory_len, PAGE);
    assert_int_equal(v.timestamp, TS);
    assert_int_equal(v.gas_used, gas);
    assert_int_equal(v.prng_current, 0); /* seed 0, nothing drawn */
    assert_int_equal(v.trailing, 0);
    assert_int_equal(ri_wsnp_nonzero_pages(&v), 0);
    free(bytes);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
}

/* ---- checks 1-5, each message, in the seed's order ---------------------------------------------- */

static void check1_too_small(void **state) {
    (void)state;
    expect_error(NULL, 0, TOO_SMALL);
    expect_error((const uint8_t *)"", 0, TOO_SMALL);
    expect_error((const uint8_t *)"WSNP", 4, TOO_SMALL);
    /* Four bytes that are not the magic: still "too small", the size comes first. */
    expect_error((const uint8_t *)"XXXX", 4, TOO_SMALL);
}

static void check2_bad_magic(void **state) {
    (void)state;
    expect_error((const uint8_t *)"WASM\001", 5, BAD_MAGIC);
    expect_error((const uint8_t *)"wsnp\001\000\000\000\000", 9, BAD_MAGIC);
    /* The magic comes before the version. */
    expect_error((const uint8_t *)"XSNP\002", 5, BAD_MAGIC);
}

static void check3_unsupported_version(void **state) {
    (void)state;
    expect_error((const uint8_t *)"WSNP\002", 5, "Unsupported snapshot version: 2 (expected 1)");
    expect_error((const uint8_t *)"WSNP\000", 5, "Unsupported snapshot version: 0 (expected 1)");
    expect_error((const uint8_t *)"WSNP\377", 5, "Unsupported snapshot version: 255 (expected 1)");
    /* A complete image of another version is refused by its version, not parsed. */
    blob b = image(NULL, PAGE, GOOD_STATE, 0);
    b.data[4] = 2;
    expect_error(b.data, b.len, "Unsupported snapshot version: 2 (expected 1)");
    free(b.data);
}

static void check4_memory_section(void **state) {
    (void)state;
    expect_error((const uint8_t *)"WSNP\001", 5, NO_MEMLEN);
    expect_error((const uint8_t *)"WSNP\001\000\000\000", 8, NO_MEMLEN);
    blob b = image(NULL, PAGE, GOOD_STATE, 0);
    expect_error(b.data, 9, MEM_CUT);
    expect_error(b.data, 9 + PAGE - 1, MEM_CUT);
    /* A length near 2^32 cannot wrap past the end. */
    wr32(b.data + 5, 0xFFFFFFFFu);
    expect_error(b.data, b.len, MEM_CUT);
    free(b.data);
}

static void check5_state_section(void **state) {
    (void)state;
    blob b = image(NULL, PAGE, GOOD_STATE, 0);
    expect_error(b.data, 9 + PAGE, NO_STATELEN);
    expect_error(b.data, 9 + PAGE + 3, NO_STATELEN);
    expect_error(b.data, 13 + PAGE, STATE_CUT);
    expect_error(b.data, b.len - 1, STATE_CUT);
    wr32(b.data + 9 + PAGE, 0xFFFFFFFFu);
    expect_error(b.data, b.len, STATE_CUT);
    free(b.data);
}

static void truncation_checked_before_state_json(void **state) {
    (void)state;
    /* The state text is garbage, but the image is cut first: the cut is what is reported. */
    blob b = image(NULL, PAGE, "{garbage", 0);
    expect_error(b.data, b.len - 1, STATE_CUT);
    free(b.data);
}

/* ---- check 6: the state JSON ---------------------------------------------------------------------- */

static void check6_unparsable_json(void **state) {
    (void)state;
    expect_corrupt_state("", NULL);
    expect_corrupt_state("{bad}", NULL);
    expect_corrupt_state("not json", NULL);
    expect_corrupt_state("{\"prngState\":", NULL);
    expect_corrupt_state(GOOD_STATE "}", NULL);          /* something after the value */
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":0,\"s\":\"\\u0000\"}", NULL);
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":0,\"s\":\"\xff\"}", NULL);
}

static void check6_duplicate_keys_refused(void **state) {
    (void)state;
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":0,\"gasUsed\":1}", "duplicate");
    expect_corrupt_state("{\"prngState\":{\"current\":0,\"current\":1},\"timestamp\":1,\"gasUsed\":0}", "duplicate");
}

static void check6_missing_fields_refused(void **state) {
    (void)state;
    expect_corrupt_state("{}", "prngState is missing");
    expect_corrupt_state("[1,2,3]", "the state is not an object");
    expect_corrupt_state("{\"timestamp\":1,\"gasUsed\":0}", "prngState is missing");
    expect_corrupt_state("{\"prngState\":{},\"timestamp\":1,\"gasUsed\":0}", "prngState.current is missing");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"gasUsed\":0}", "timestamp is missing");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1}", "gasUsed is missing");
}

static void check6_mistyped_fields_refused(void **state) {
    (void)state;
    expect_corrupt_state("{\"prngState\":7,\"timestamp\":1,\"gasUsed\":0}", "prngState is not an object");
    expect_corrupt_state("{\"prngState\":[0],\"timestamp\":1,\"gasUsed\":0}", "prngState is not an object");
    expect_corrupt_state("{\"prngState\":{\"current\":\"0\"},\"timestamp\":1,\"gasUsed\":0}",
                         "prngState.current is not a number");
    expect_corrupt_state("{\"prngState\":{\"current\":null},\"timestamp\":1,\"gasUsed\":0}",
                         "prngState.current is not a number");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":true,\"gasUsed\":0}",
                         "timestamp is not a number");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":{}}", "gasUsed is not a number");
    expect_corrupt_state("{\"prngState\":{\"current\":0.5},\"timestamp\":1,\"gasUsed\":0}",
                         "prngState.current must be an integer");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1.25,\"gasUsed\":0}",
                         "timestamp must be an integer");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":2.5}", "gasUsed must be an integer");
}

static void check6_ranges(void **state) {
    (void)state;
    /* current: a 32-bit state written signed (as the original does) or unsigned. */
    expect_state_ok("{\"prngState\":{\"current\":-2147483648},\"timestamp\":0,\"gasUsed\":0}", INT32_MIN,
                    0x80000000u, 0, 0);
    expect_state_ok("{\"prngState\":{\"current\":4294967295},\"timestamp\":0,\"gasUsed\":0}", 4294967295LL,
                    0xFFFFFFFFu, 0, 0);
    expect_corrupt_state("{\"prngState\":{\"current\":-2147483649},\"timestamp\":0,\"gasUsed\":0}",
                         "prngState.current must be an integer in [-2^31, 2^32)");
    expect_corrupt_state("{\"prngState\":{\"current\":4294967296},\"timestamp\":0,\"gasUsed\":0}",
                         "prngState.current must be an integer in [-2^31, 2^32)");
    /* timestamp: any int64, negative too. */
    expect_state_ok("{\"prngState\":{\"current\":0},\"timestamp\":-5,\"gasUsed\":0}", 0, 0, -5, 0);
    expect_state_ok("{\"prngState\":{\"current\":0},\"timestamp\":9223372036854775807,\"gasUsed\":0}", 0, 0, INT64_MAX,
                    0);
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":9.3e18,\"gasUsed\":0}",
                         "timestamp must be an integer");
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":1e300,\"gasUsed\":0}",
                         "timestamp must be an integer");
    /* gasUsed: not negative. */
    expect_corrupt_state("{\"prngState\":{\"current\":0},\"timestamp\":0,\"gasUsed\":-1}",
                         "gasUsed must be an integer in [0, 2^63)");
    expect_state_ok("{\"prngState\":{\"current\":0},\"timestamp\":0,\"gasUsed\":-0}", 0, 0, 0, 0);
}

static void check6_integral_numbers_in_any_notation(void **state) {
    (void)state;
    /* JSON.parse reads these as the integers 1831565813, 1700000000000 and 3. */
    expect_state_ok("{\"prngState\":{\"current\":1831565813.0},\"timestamp\":1.7e12,\"gasUsed\":3.0}", 1831565813,
                    1831565813u, TS, 3);
    expect_state_ok("{\"prngState\":{\"current\":-1E0},\"timestamp\":17e11,\"gasUsed\":30e-1}", -1, 0xFFFFFFFFu, TS, 3);
}

static void check6_extra_keys_accepted(void **state) {
    (void)state;
    /* Forward compatibility: a later writer may add keys; the three fields are what count. */
    expect_state_ok("{\"prngState\":{\"current\":5,\"note\":1},\"timestamp\":7,\"gasUsed\":3,\"writer\":\"other\"}", 5,
                    5, 7, 3);
    expect_state_ok("{\"v\":[1,{\"x\":null}],\"gasUsed\":1,\"timestamp\":2,\"prngState\":{\"current\":3}}", 3, 3, 2, 1);
    /* Whitespace and key order are free. */
    expect_state_ok(" { \"gasUsed\" : 5 , \"timestamp\" : 6 , \"prngState\" : { \"current\" : -7 } } ", -7,
                    (uint32_t)-7, 6, 5);
}

static void detail_stays_out_of_the_message(void **state) {
    (void)state;
    blob b = image(NULL, PAGE, "{\"prngState\":{\"current\":0},\"timestamp\":1}", 0);
    ri_wsnp_view v;
    ri_sandbox_error err;
    assert_false(ri_wsnp_parse(b.data, b.len, &v, &err));
    assert_string_equal(err.message, CORRUPT); /* exactly the seed's text */
    assert_string_equal(v.detail, "gasUsed is missing");
    /* Checks 1-5 give no detail. */
    assert_false(ri_wsnp_parse(b.data, 3, &v, &err));
    assert_string_equal(v.detail, "");
    /* A success clears a detail left from before. */
    free(b.data);
    b = image(NULL, PAGE, GOOD_STATE, 0);
    memset(v.detail, 'z', sizeof v.detail - 1);
    v.detail[sizeof v.detail - 1] = '\0';
    assert_true(ri_wsnp_parse(b.data, b.len, &v, &err));
    assert_string_equal(v.detail, "");
    free(b.data);
}

/* ---- ri_wsnp_nonzero_pages ------------------------------------------------------------------------- */

static void nonzero_pages_counts_pages_with_a_set_byte(void **state) {
    (void)state;
    uint32_t memlen = 3 * PAGE + 100; /* a partial last page counts as a page */
    uint8_t *mem = calloc(memlen, 1);
    assert_non_null(mem);
    blob b = image(mem, memlen, GOOD_STATE, 0);
    ri_wsnp_view v = expect_ok(b);
    assert_int_equal(ri_wsnp_nonzero_pages(&v), 0);
    free(b.data);
    mem[PAGE - 1] = 1;         /* last byte of page 0 */
    mem[2 * PAGE] = 1;         /* first byte of page 2 */
    mem[3 * PAGE + 99] = 1;    /* last byte of the partial page */
    b = image(mem, memlen, GOOD_STATE, 0);
    v = expect_ok(b);
    assert_int_equal(ri_wsnp_nonzero_pages(&v), 3);
    free(b.data);
    free(mem);
    ri_wsnp_view zero;
    memset(&zero, 0, sizeof zero);
    assert_int_equal(ri_wsnp_nonzero_pages(&zero), 0);
}

/* ---- one implementation: restore refuses with the parser's message ------------------------------------ */

static void restore_reports_what_parse_reports(void **state) {
    (void)state;
    const char *dir = getenv("RI_WAT_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/sb_add.wasm", dir ? dir : "wat");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t wasm[4096];
    size_t wasm_len = fread(wasm, 1, sizeof wasm, f);
    fclose(f);
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(factory, &c, &err);
    assert_non_null(sb);
    assert_true(ri_sandbox_load(sb, wasm, wasm_len, &err));

    static const char *states[] = {
        "{bad}", "{}", "{\"prngState\":{\"current\":0},\"timestamp\":1}",
        "{\"prngState\":{\"current\":0},\"timestamp\":1,\"gasUsed\":0,\"gasUsed\":0}",
    };
    blob good = image(NULL, PAGE, GOOD_STATE, 0);
    size_t cuts[] = {0, 4, 5, 8, 100, 9 + PAGE, 9 + PAGE + 2, 13 + PAGE, good.len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        ri_sandbox_error perr, rerr;
        assert_false(ri_wsnp_parse(good.data, cuts[i], NULL, &perr));
        assert_false(ri_sandbox_restore(sb, good.data, cuts[i], &rerr));
        assert_int_equal(rerr.code, perr.code);
        assert_string_equal(rerr.message, perr.message);
    }
    for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
        blob b = image(NULL, PAGE, states[i], 0);
        assert_false(ri_sandbox_restore(sb, b.data, b.len, &err));
        assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
        assert_string_equal(err.message, CORRUPT);
        free(b.data);
    }
    /* And what the parser accepts, restore accepts (the memory size fits this sandbox). */
    blob extra = image(NULL, PAGE, "{\"prngState\":{\"current\":1},\"timestamp\":1,\"gasUsed\":4,\"x\":[]}", 0);
    assert_true(ri_sandbox_restore(sb, extra.data, extra.len, &err));
    assert_int_equal(ri_sandbox_get_metrics(sb).gas_used, 4);
    free(extra.data);
    free(good.data);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(view_describes_the_image),
        cmocka_unit_test(trailing_bytes_are_counted_not_refused),
        cmocka_unit_test(empty_memory_section_is_an_image),
        cmocka_unit_test(null_err_and_null_out_are_allowed),
        cmocka_unit_test(reads_what_snapshot_writes),
        cmocka_unit_test(check1_too_small),
        cmocka_unit_test(check2_bad_magic),
        cmocka_unit_test(check3_unsupported_version),
        cmocka_unit_test(check4_memory_section),
        cmocka_unit_test(check5_state_section),
        cmocka_unit_test(truncation_checked_before_state_json),
        cmocka_unit_test(check6_unparsable_json),
        cmocka_unit_test(check6_duplicate_keys_refused),
        cmocka_unit_test(check6_missing_fields_refused),
        cmocka_unit_test(check6_mistyped_fields_refused),
        cmocka_unit_test(check6_ranges),
        cmocka_unit_test(check6_integral_numbers_in_any_notation),
        cmocka_unit_test(check6_extra_keys_accepted),
        cmocka_unit_test(detail_stays_out_of_the_message),
        cmocka_unit_test(nonzero_pages_counts_pages_with_a_set_byte),
        cmocka_unit_test(restore_reports_what_parse_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
