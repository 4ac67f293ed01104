/*
 * Array element loads (code.h, I32_LOAD_SX / I32_LOAD_SXI / I32_LOAD_MSXI): an i32.load
 * whose address a + (i << k), (i << k) + base or ((v & mask) << k) + base was computed just
 * before it reads what the unfused and, shift, add and load read: addresses wrapping around 2^32, shift counts taken modulo 32,
 * the last word of the memory, a trap one byte further, an address kept in a local too,
 * and a loop over an array; metered and unmetered. Fixture: tests/wat/index_load.wat.
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
    engine_fixture_open(fx, "index_load", unmetered);
    assert_non_null(fx->mem);
    /* word w at byte 4w holds w * 0x01010101 + 1 */
    for (uint32_t w = 0; w < 65536 / 4; w++) {
        uint32_t v = w * 0x01010101u + 1;
        uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
        assert_true(ri_memory_write(fx->mem, 4 * w, b, 4));
    }
}

static void fixture_close(fixture *fx) { engine_fixture_close(fx); }

static ri_errcode call2(fixture *fx, const char *name, uint32_t a, uint32_t b, uint32_t *result, ri_error *err) {
    ri_extern ext;
    if (!ri_instance_export(fx->instance, name, &ext)) fail_msg("no export %s", name);
    ri_val in[2] = {ri_val_i32((int32_t)a), ri_val_i32((int32_t)b)}, out[1];
    ri_errcode rc = ri_func_call(fx->store, ext.of.func, in, 2, out, 1, err);
    if (rc == RI_OK) *result = (uint32_t)out[0].of.i32;
    return rc;
}

/* The word at byte address ea (4-aligned or not), as i32.load reads it. */
static uint32_t word_at(uint32_t ea) {
    uint32_t v = 0;
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t byte_addr = ea + k, w = byte_addr / 4, word = w * 0x01010101u + 1;
        v |= ((word >> (8 * (byte_addr % 4))) & 0xffu) << (8 * k);
    }
    return v;
}

static uint32_t call_ok(fixture *fx, const char *name, uint32_t a, uint32_t b) {
    ri_error err;
    uint32_t r = 0;
    if (call2(fx, name, a, b, &r, &err) != RI_OK) fail_msg("%s(%u, %u): %s", name, a, b, err.message);
    return r;
}

static void test_elements_match_the_unfused_loads(void **state) {
    (void)state;
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fixture_open(&fx, unmetered != 0);
        static const uint32_t as[] = {0, 4, 1001, 60000};
        static const uint32_t is[] = {0, 1, 7, 100};
        for (size_t x = 0; x < 4; x++)
            for (size_t y = 0; y < 4; y++) {
                uint32_t a = as[x], i = is[y];
                assert_int_equal(call_ok(&fx, "elem", a, i), word_at(a + (i << 2) + 4));
                assert_int_equal(call_ok(&fx, "elem_const", 0, i), word_at((i << 2) + 1024));
                assert_int_equal(call_ok(&fx, "elem_tee", a, i), word_at(a + (i << 2)) + a + (i << 2));
            }
        /* a + (i << 2) wraps: a = 2^32 - 8, i = 3 reads offset 4 of address 4 */
        assert_int_equal(call_ok(&fx, "elem", 0xfffffff8u, 3), word_at(8));
        /* (i << 2) loses the high bits: i = 2^30 + 5 is element 5 */
        assert_int_equal(call_ok(&fx, "elem_const", 0, 0x40000005u), word_at(20 + 1024));
        for (uint32_t v = 0; v < 600; v += 7)
            assert_int_equal(call_ok(&fx, "lookup", v, 0x5a), word_at((((v ^ 0x5a) & 255) << 2) + 2048 + 4));
        assert_int_equal(call_ok(&fx, "lookup_wrap", 0x40000014u, 0), word_at(80));
        assert_int_equal(call_ok(&fx, "lookup_wrap", 100, 0), word_at(400));
        uint32_t s = 0;
        for (uint32_t j = 0; j < 37; j++) s ^= word_at(400 + 4 * j);
        assert_int_equal(call_ok(&fx, "sum", 400, 37), s);
        fixture_close(&fx);
    }
}

static void test_element_loads_trap_out_of_bounds(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false);
    uint32_t size = (uint32_t)ri_memory_size(fx.mem);
    ri_error err;
    uint32_t r;
    /* elem(a, i) reads a + 4i + 4 .. + 8: the last word, then one byte further */
    assert_int_equal(call2(&fx, "elem", size - 8 - 40, 10, &r, &err), RI_OK);
    assert_int_equal(r, word_at(size - 4));
    assert_int_equal(call2(&fx, "elem", size - 8 - 40 + 1, 10, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
    assert_int_equal(call2(&fx, "elem_const", 0, size / 4 - 256 - 1, &r, &err), RI_OK);
    assert_int_equal(call2(&fx, "elem_const", 0, size / 4 - 256, &r, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
    fixture_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elements_match_the_unfused_loads),
        cmocka_unit_test(test_element_loads_trap_out_of_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
