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

/* 16-byte loads and stores (half the store instructions of 8-byte words); the CRC
 * reads the same bytes again as words, from L1 where the vector load just put them. */
__attribute__((target("sse4.2"))) static bool copy_crc_hw(uint8_t *dst, const uint8_t *src, uint32_t *reg) {
    uint64_t c[4] = {*reg, 0, 0, 0};
    __m128i any = _mm_setzero_si128();
    for (size_t k = 0; k < QUARTER; k += 16) {
        for (size_t q = 0; q < 4; q++) {
            const uint8_t *s = src + q * QUARTER + k;
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
            _mm_storeu_si128((__m128i *)(void *)(dst + q * QUARTER + k), v);
            any = _mm_or_si128(any, v);
            uint64_t lo, hi;
            memcpy(&lo, s, 8);
            memcpy(&hi, s + 8, 8);
            c[q] = _mm_crc32_u64(_mm_crc32_u64(c[q], lo), hi);
        }
    }
    if (_mm_testz_si128(any, any)) return false;
    uint32_t r = mul_mod(SHIFT_QUARTER, (uint32_t)c[0]) ^ (uint32_t)c[1];
    r = mul_mod(SHIFT_QUARTER, r) ^ (uint32_t)c[2];
    *reg = mul_mod(SHIFT_QUARTER, r) ^ (uint32_t)c[3];
    return true;
}
#endif

bool snap_copy_page_crc(uint8_t *dst, const uint8_t *src, uint32_t *reg) {
#if defined(QUARTER)
    if (snap_cpu_has_sse42()) return copy_crc_hw(dst, src, reg);
#endif
    memcpy(dst, src, RI_SNAP_PAGE_BYTES);
    if (snap_page_is_zero(dst)) return false;
    *reg = snap_crc32c_update(*reg, dst, RI_SNAP_PAGE_BYTES); /* the copy is still in cache */
    return true;
}
