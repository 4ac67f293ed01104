/*
 * Conditional branches fused with the load just before them (code.h, RI_CODE_LOADBR_OPS):
 * the same results as the unfused load and branch for i32.load and i32.load8_u, each
 * address form (local, local + constant wrapping around 2^32), each test (== / != a
 * local or a constant, != 0, == 0), through br_if, `if` and a loop's back-edge, metered
 * and unmetered, the loaded value kept for later; the gas of each call and of every smaller budget as the unfused code
 * (regions counted by hand from tests/wat/load_branch.wat); and the load's trap out of
 * bounds. Fixture: tests/wat/load_branch.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"

typedef engine_fixture fixture;

static void fixture_open(fixture *fx, bool unmetered) {
    engine_fixture_open(fx, "load_branch", unmetered);
    assert_non_null(fx->mem);
}

static void fixture_close(fixture *fx) { engine_fixture_close(fx); }

static ri_errcode call2(fixture *fx, const char *name, uint32_t p, uint32_t b, int32_t *result, ri_error *err) {
    ri_extern ext;
    if (!ri_instance_export(fx->instance, name, &ext)) fail_msg("no export %s", name);
    ri_val in[2] = {ri_val_i32((int32_t)p), ri_val_i32((int32_t)b)}, out[1];
    ri_errcode rc = ri_func_call(fx->store, ext.of.func, in, 2, out, 1, err);
    if (rc == RI_OK) *result = out[0].of.i32;
    return rc;
}

static const char *const loads[2] = {"load", "load8u"};
static const char *const addrs[2] = {"p", "xi"};
static const char *const tests[6] = {"eq_s", "ne_s", "eq_i", "ne_i", "eqz", "nz"};
static const uint32_t addr_words[2] = {1, 3}; /* instructions of the address */
static const uint32_t test_words[6] = {2, 2, 2, 2, 1, 0};

/* What <load>_<addr>_<test>(p, b) returns when the load reads v. */
static int32_t expect(uint32_t test, uint32_t v, uint32_t b) {
    switch (test) {
    case 0: return v == b;
    case 1: return v != b;
    case 2: return v == 7;
    case 3: return v != 7;
    case 4: return v == 0;
    default: return v != 0;
    }
}

/* The value at wasm address a as <load> reads it. */
static uint32_t loaded(fixture *fx, uint32_t load, uint32_t a) {
    uint8_t bytes[4];
    assert_true(ri_memory_read(fx->mem, a, bytes, load == 0 ? 4 : 1));
    return load == 0 ? (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 | (uint32_t)bytes[3] << 24
                     : bytes[0];
}

static void test_results_match_the_unfused_tests(void **state) {
    (void)state;
    static const uint32_t words[] = {0, 7, 1, 0x107, 0xffffffffu, 0x80000000u, 0x700};
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fixture_open(&fx, unmetered != 0);
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            /* the word at 100 (p = 96, offset 4) and at 108 (p + 8, offset 4) */
            uint32_t v = words[w], v2 = words[(w + 3) % (sizeof words / sizeof words[0])];
            assert_true(ri_memory_write(fx.mem, 100, &v, 4));
            assert_true(ri_memory_write(fx.mem, 108, &v2, 4));
            for (uint32_t l = 0; l < 2; l++)
                for (uint32_t a = 0; a < 2; a++)
                    for (uint32_t t = 0; t < 6; t++) {
                        char name[32];
                        snprintf(name, sizeof name, "%s_%s_%s", loads[l], addrs[a], tests[t]);
                        uint32_t at = a == 0 ? 100 : 108;
                        uint32_t got_v = loaded(&fx, l, at);
                        static const uint32_t bs[] = {0, 7, 0x107, 0xffffffffu};
                        for (size_t k = 0; k < sizeof bs / sizeof bs[0]; k++) {
                            ri_error err;
                            int32_t r = -1;
                            if (call2(&fx, name, 96, bs[k], &r, &err) != RI_OK) fail_msg("%s: %s", name, err.message);
                            if (r != expect(t, got_v, bs[k]))
                                fail_msg("%s(96, %u) with %#x loaded: %d", name, bs[k], got_v, r);
                        }
                    }
            /* if: load == b; load8_u at p + 8 + 4 != 0 */
            ri_error err;
            int32_t r = -1;
            assert_int_equal(call2(&fx, "load_if_eq", 96, v, &r, &err), RI_OK);
            assert_int_equal(r, 1);
            assert_int_equal(call2(&fx, "load_if_eq", 96, v + 1, &r, &err), RI_OK);
            assert_int_equal(r, 0);
            assert_int_equal(call2(&fx, "load8u_if_nz", 96, 0, &r, &err), RI_OK);
            assert_int_equal(r, (v2 & 0xff) != 0);
            assert_int_equal(call2(&fx, "load_tee", 96, 0, &r, &err), RI_OK); /* the load's result is kept */
            assert_int_equal(r, v ? (int32_t)v : -1);
        }
        fixture_close(&fx);
    }
}

/* p + 8 wraps around 2^32 as the i32.add did: p = -4 reads offset 4 of address 4. */
static void test_address_wraps_as_i32_add(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    uint32_t v = 7;
    assert_true(ri_memory_write(fx.mem, 8, &v, 4));
    ri_error err;
    int32_t r = -1;
    assert_int_equal(call2(&fx, "load_xi_eq_i", 0xfffffffcu, 0, &r, &err), RI_OK);
    assert_int_equal(r, 1);
    assert_int_equal(call2(&fx, "load8u_xi_ne_s", 0xfffffffcu, 7, &r, &err), RI_OK);
    assert_int_equal(r, 0);
    fixture_close(&fx);
}

/* Out of bounds the fused load traps, as the load did; the last bytes still load. */
static void test_load_traps_out_of_bounds(void **state) {
    (void)state;
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fixture_open(&fx, unmetered != 0);
        uint32_t size = (uint32_t)ri_memory_size(fx.mem);
        for (uint32_t l = 0; l < 2; l++)
            for (uint32_t a = 0; a < 2; a++)
                for (uint32_t t = 0; t < 6; t++) {
                    char name[32];
                    snprintf(name, sizeof name, "%s_%s_%s", loads[l], addrs[a], tests[t]);
                    uint32_t n = l == 0 ? 4 : 1;
                    uint32_t last = size - n - 4 - (a == 0 ? 0 : 8); /* p whose access ends at the memory's end */
                    ri_error err;
                    int32_t r = -1;
                    if (call2(&fx, name, last, 0, &r, &err) != RI_OK) fail_msg("%s at the end: %s", name, err.message);
                    assert_int_equal(call2(&fx, name, last + 1, 0, &r, &err), RI_ERR_TRAP);
                    assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
                    assert_int_equal(call2(&fx, name, 0x7ffffff0u, 0, &r, &err), RI_ERR_TRAP);
                    assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
                }
        fixture_close(&fx);
    }
}

/* Gas of <load>_<addr>_<test>: entry = block + address + load + test + br_if, then 2
 * (i32.const and return, or i32.const and end); every smaller budget stops at the entry
 * (all of it left) or at the second region (what the entry left). */
static void test_gas_as_unfused(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    for (uint32_t l = 0; l < 2; l++)
        for (uint32_t a = 0; a < 2; a++)
            for (uint32_t t = 0; t < 6; t++) {
                char name[32];
                snprintf(name, sizeof name, "%s_%s_%s", loads[l], addrs[a], tests[t]);
                uint64_t entry = 1 + addr_words[a] + 1 + test_words[t] + 1, total = entry + 2;
                for (uint32_t b = 0; b < 2; b++) { /* the branch taken or not (the word at 100 is 0 or 1) */
                    assert_true(ri_memory_write(fx.mem, 100, &b, 4));
                    assert_true(ri_memory_write(fx.mem, 108, &b, 4));
                    for (uint64_t budget = 0; budget <= total; budget++) {
                        ri_store_set_gas(fx.store, budget);
                        ri_error err;
                        int32_t r = -1;
                        ri_errcode rc = call2(&fx, name, 96, 1, &r, &err);
                        if (budget == total) {
                            assert_int_equal(rc, RI_OK);
                            assert_int_equal(ri_store_gas(fx.store), 0);
                            continue;
                        }
                        if (rc != RI_ERR_TRAP || err.trap != RI_TRAP_OUT_OF_GAS)
                            fail_msg("%s with gas %llu of %llu: not out of gas", name, (unsigned long long)budget,
                                     (unsigned long long)total);
                        assert_int_equal(ri_store_gas(fx.store), budget < entry ? budget : budget - entry);
                    }
                }
            }
    fixture_close(&fx);
}

/* strlen: the back-edge is the fused byte load and branch. Gas: entry (local.get,
 * local.set, loop) 3, per byte and the final 0 (LOOP: local.get, i32.const, i32.add,
 * local.tee, i32.const, i32.add, i32.load8_u, br_if) 8, then the loop's end, local.get,
 * local.get, i32.sub, i32.const, i32.sub, end 7. */
static void test_strlen_loop(void **state) {
    (void)state;
    static const char *const strs[] = {"", "a", "hello", "a longer string of bytes"};
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fixture_open(&fx, unmetered != 0);
        for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
            size_t n = strlen(strs[i]);
            assert_true(ri_memory_write(fx.mem, 300, strs[i], n + 1));
            ri_store_set_gas(fx.store, 1000000);
            ri_error err;
            int32_t r = -1;
            assert_int_equal(call2(&fx, "strlen", 300, 0, &r, &err), RI_OK);
            assert_int_equal(r, (int32_t)n);
            uint64_t used = 1000000 - ri_store_gas(fx.store);
            assert_int_equal(used, unmetered ? 0 : 3 + 8 * (n + 1) + 7);
        }
        fixture_close(&fx);
    }
}

int main(void) {
    const struct CMUnitTest tests_[] = {
        cmocka_unit_test(test_results_match_the_unfused_tests),
        cmocka_unit_test(test_address_wraps_as_i32_add),
        cmocka_unit_test(test_load_traps_out_of_bounds),
        cmocka_unit_test(test_gas_as_unfused),
        cmocka_unit_test(test_strlen_loop),
    };
    return cmocka_run_group_tests(tests_, NULL, NULL);
}
