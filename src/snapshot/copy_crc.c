/*
 * One pass over a 64 KiB page for the raw writer: copy it, test it for zero and
 * advance the CRC-32C register over it. Separately (memcpy, then a CRC pass over the
 * copy) the CRC runs after the copy instead of beside it, which made a raw image cost
 * about twice a memcpy of the memory; together the copy hides in the CRC's time.
 *
 * The CRC runs four independent streams over the page's four 16 KiB quarters (the
 * instruction takes 3 cycles but can start every cycle), joined by linearity:
 * crc(c, A || B) = x^(8|B|) * crc(c, A) ^ crc(0, B) modulo the polynomial.
 */
#include <string.h>

#include "snapshot_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define QUARTER (RI_SNAP_PAGE_BYTES / 4)
/* x^(8 * 16384) modulo the reflected polynomial 0x82F63B78 (bit 31 is x^0): computed
 * offline, and equal to snap_crc32c_shift(1u << 31, 16384). */
#define SHIFT_QUARTER 0xBF455269u

/* a * b modulo the polynomial, both reflected. */
static uint32_t mul_mod(uint32_t a, uint32_t b) {
    uint32_t r = 0;
    for (uint32_t m = 1u << 31; m; m >>= 1) {
        if (a & m) r ^= b;
        b = b & 1u ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return r;
}

__attribute__((target("sse4.2"))) static bool copy_crc_hw(uint8_t *dst, const uint8_t *src, uint32_t *reg) {
    uint64_t c0 = *reg, c1 = 0, c2 = 0, c3 = 0, any = 0;
    for (size_t k = 0; k < QUARTER; k += 8) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, src + k, 8);
        memcpy(&w1, src + QUARTER + k, 8);
        memcpy(&w2, src + 2 * QUARTER + k, 8);
        memcpy(&w3, src + 3 * QUARTER + k, 8);
        memcpy(dst + k, &w0, 8);
        memcpy(dst + QUARTER + k, &w1, 8);
        memcpy(dst + 2 * QUARTER + k, &w2, 8);
        memcpy(dst + 3 * QUARTER + k, &w3, 8);
        any |= w0 | w1 | w2 | w3;
        c0 = _mm_crc32_u64(c0, w0);
        c1 = _mm_crc32_u64(c1, w1);
        c2 = _mm_crc32_u64(c2, w2);
        c3 = _mm_crc32_u64(c3, w3);
    }
    if (!any) return false;
    uint32_t c = mul_mod(SHIFT_QUARTER, (uint32_t)c0) ^ (uint32_t)c1;
    c = mul_mod(SHIFT_QUARTER, c) ^ (uint32_t)c2;
    *reg = mul_mod(SHIFT_QUARTER, c) ^ (uint32_t)c3;
    return true;
}
#endif

bool snap_copy_page_crc(uint8_t *dst, const uint8_t *src, uint32_t *reg) {
#if defined(QUARTER)
    if (__builtin_cpu_supports("sse4.2")) return copy_crc_hw(dst, src, reg);
#endif
    memcpy(dst, src, RI_SNAP_PAGE_BYTES);
    if (snap_page_is_zero(dst)) return false;
    *reg = snap_crc32c_update(*reg, dst, RI_SNAP_PAGE_BYTES); /* the copy is still in cache */
    return true;
}
