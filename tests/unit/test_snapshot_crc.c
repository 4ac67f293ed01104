/*
 * CRC-32C of large buffers (issue 5): the three-stream path (blocks of 8 KiB joined by
 * linearity) must give the standard value for every length around its block boundaries
 * and for whole memories, checked against a bit-at-a-time reference.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "ri/snapshot.h"

static uint32_t crc32c_bitwise(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void large_buffers_match_the_reference(void **state) {
    (void)state;
    size_t cap = 3 * 8192 * 3 + 100;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    uint32_t x = 12345;
    for (size_t i = 0; i < cap; i++) {
        x = x * 1664525u + 1013904223u;
        buf[i] = (uint8_t)(x >> 24);
    }
    const size_t lengths[] = {24575, 24576, 24577, 24583, 49151, 49152, 49160, 73728, 73735, cap - 3};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        for (size_t off = 0; off < 3; off++)
            assert_int_equal(ri_snap_crc32c(buf + off, lengths[i]), crc32c_bitwise(buf + off, lengths[i]));
    free(buf);
    /* A whole page of zeros and a memory's worth (the blocks repeat the same state). */
    uint8_t *zeros = calloc(1, 1u << 20);
    assert_non_null(zeros);
    assert_int_equal(ri_snap_crc32c(zeros, 1u << 20), crc32c_bitwise(zeros, 1u << 20));
    free(zeros);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(large_buffers_match_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
