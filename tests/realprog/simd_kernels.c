/* SIMD kernels on generated data, printing checksums (tests/cli/test_realprog.sh).
 *
 * Built twice: for wasm32-wasi at -O3 -msimd128, where the kernels below are written with
 * wasm_simd128.h intrinsics (shuffles, swizzles, saturating arithmetic, min/max, float lanes,
 * narrowing and widening, bitmasks) and the plain loops are auto-vectorised; and natively,
 * where the same kernels are plain scalar C. Every kernel's result is defined exactly (no
 * NaN payloads, no float reassociation: the scalar code sums in the lanes' order), so the
 * two builds must print the same bytes.
 *
 *   simd_kernels [ROUNDS]      (default 3: how many times the whole set runs)
 *
 * With -DSIMD_KERNELS_BENCH (and -nostartfiles -Wl,--no-entry) it is the SIMD benchmark's
 * second program instead: run() returns a hash of what the command would print.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define W 256
#define H 192
#define TEXT_LEN 65536

static uint32_t rng_state = 2463534242u;
static uint32_t rnd(void) { /* xorshift32: the same data on every build */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static uint32_t fnv(uint32_t h, const void *data, size_t len) {
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* ---- 3x3 box blur of an 8-bit image: sums widened to 16 and 32 bits, divided by 9 with a
 * fixed-point multiply ((s * 7282 + 32768) >> 16), narrowed back with saturation. ---- */
static uint8_t blur_div9(uint32_t s) { return (uint8_t)((s * 7282u + 32768u) >> 16); }

static void blur(const uint8_t *in, uint8_t *out) {
    memcpy(out, in, W);                       /* the border rows and columns are copied */
    memcpy(out + (H - 1) * W, in + (H - 1) * W, W);
    for (int y = 1; y < H - 1; y++) {
        const uint8_t *r0 = in + (y - 1) * W, *r1 = in + y * W, *r2 = in + (y + 1) * W;
        uint8_t *o = out + y * W;
        o[0] = r1[0];
        o[W - 1] = r1[W - 1];
        int x = 1;
#ifdef __wasm_simd128__
        for (; x + 16 <= W - 1; x += 16) {
            v128_t lo = wasm_i16x8_splat(0), hi = wasm_i16x8_splat(0);
            const uint8_t *rows[3] = {r0, r1, r2};
            for (int k = 0; k < 3; k++)
                for (int d = -1; d <= 1; d++) {
                    v128_t v = wasm_v128_load(rows[k] + x + d);
                    lo = wasm_i16x8_add(lo, wasm_u16x8_extend_low_u8x16(v));
                    hi = wasm_i16x8_add(hi, wasm_u16x8_extend_high_u8x16(v));
                }
            const v128_t mul = wasm_i32x4_splat(7282), half = wasm_i32x4_splat(32768);
            v128_t q[4];
            v128_t halves[2] = {lo, hi};
            for (int h = 0; h < 2; h++) {
                v128_t a = wasm_u32x4_extend_low_u16x8(halves[h]);
                v128_t b = wasm_u32x4_extend_high_u16x8(halves[h]);
                q[2 * h] = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_mul(a, mul), half), 16);
                q[2 * h + 1] = wasm_u32x4_shr(wasm_i32x4_add(wasm_i32x4_mul(b, mul), half), 16);
            }
            v128_t w0 = wasm_u16x8_narrow_i32x4(q[0], q[1]);
            v128_t w1 = wasm_u16x8_narrow_i32x4(q[2], q[3]);
            wasm_v128_store(o + x, wasm_u8x16_narrow_i16x8(w0, w1));
        }
#endif
        for (; x < W - 1; x++) {
            uint32_t s = 0;
            for (int d = -1; d <= 1; d++) s += r0[x + d] + r1[x + d] + r2[x + d];
            o[x] = blur_div9(s);
        }
    }
}

/* ---- brightness and contrast with saturating u8 arithmetic, then clamping with min/max ---- */
static void adjust(uint8_t *img, int n, uint8_t add, uint8_t sub, uint8_t lo, uint8_t hi) {
    int i = 0;
#ifdef __wasm_simd128__
    const v128_t va = wasm_i8x16_splat((int8_t)add), vs = wasm_i8x16_splat((int8_t)sub);
    const v128_t vlo = wasm_i8x16_splat((int8_t)lo), vhi = wasm_i8x16_splat((int8_t)hi);
    for (; i + 16 <= n; i += 16) {
        v128_t v = wasm_v128_load(img + i);
        v = wasm_u8x16_sub_sat(wasm_u8x16_add_sat(v, va), vs);
        v = wasm_u8x16_min(wasm_u8x16_max(v, vlo), vhi);
        wasm_v128_store(img + i, v);
    }
#endif
    for (; i < n; i++) {
        int v = img[i] + add;
        if (v > 255) v = 255;
        v -= sub;
        if (v < 0) v = 0;
        if (v < lo) v = lo;
        if (v > hi) v = hi;
        img[i] = (uint8_t)v;
    }
}

/* ---- signed 16-bit audio mixing: saturating i16 add, average, abs, min/max of the peaks ---- */
static uint32_t mix16(const int16_t *a, const int16_t *b, int16_t *out, int n, int16_t *peak_lo,
                      int16_t *peak_hi) {
    int i = 0;
    int16_t plo = 0, phi = 0;
#ifdef __wasm_simd128__
    v128_t vlo = wasm_i16x8_splat(0), vhi = wasm_i16x8_splat(0);
    for (; i + 8 <= n; i += 8) {
        v128_t x = wasm_v128_load(a + i), y = wasm_v128_load(b + i);
        v128_t s = wasm_i16x8_add_sat(x, y);
        vlo = wasm_i16x8_min(vlo, s);
        vhi = wasm_i16x8_max(vhi, s);
        wasm_v128_store(out + i, wasm_i16x8_sub_sat(s, wasm_i16x8_abs(wasm_i16x8_shr(y, 3))));
    }
    int16_t lanes_lo[8], lanes_hi[8];
    wasm_v128_store(lanes_lo, vlo);
    wasm_v128_store(lanes_hi, vhi);
    for (int l = 0; l < 8; l++) {
        if (lanes_lo[l] < plo) plo = lanes_lo[l];
        if (lanes_hi[l] > phi) phi = lanes_hi[l];
    }
#endif
    for (; i < n; i++) {
        int s = a[i] + b[i];
        if (s > 32767) s = 32767;
        if (s < -32768) s = -32768;
        if (s < plo) plo = (int16_t)s;
        if (s > phi) phi = (int16_t)s;
        int sh = b[i] >> 3;
        int t = s - (sh < 0 ? -sh : sh);
        if (t < -32768) t = -32768;
        out[i] = (int16_t)t;
    }
    *peak_lo = plo;
    *peak_hi = phi;
    return fnv(2166136261u, out, (size_t)n * 2);
}

/* ---- dot products: i16 (i32x4.dot_i16x8_s), f32 and f64 (four and two running sums, added
 * in the same order by the scalar code) ---- */
static int64_t dot_i16(const int16_t *a, const int16_t *b, int n) {
    int64_t total = 0;
    int i = 0;
#ifdef __wasm_simd128__
    v128_t acc = wasm_i64x2_splat(0);
    for (; i + 8 <= n; i += 8) { /* a lane's two products fit in i32: |a| <= 30000 */
        v128_t d = wasm_i32x4_dot_i16x8(wasm_v128_load(a + i), wasm_v128_load(b + i));
        acc = wasm_i64x2_add(acc, wasm_i64x2_add(wasm_i64x2_extend_low_i32x4(d), wasm_i64x2_extend_high_i32x4(d)));
    }
    total = wasm_i64x2_extract_lane(acc, 0) + wasm_i64x2_extract_lane(acc, 1);
#endif
    for (; i < n; i++) total += (int32_t)a[i] * b[i];
    return total;
}

static float dot_f32(const float *a, const float *b, int n) { /* n is a multiple of 4 */
    float s[4] = {0, 0, 0, 0};
#ifdef __wasm_simd128__
    v128_t acc = wasm_f32x4_splat(0);
    for (int i = 0; i < n; i += 4)
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    wasm_v128_store(s, acc);
#else
    for (int i = 0; i < n; i += 4)
        for (int l = 0; l < 4; l++) s[l] += a[i + l] * b[i + l];
#endif
    return (s[0] + s[1]) + (s[2] + s[3]);
}

static double dot_f64(const double *a, const double *b, int n) { /* n is even */
    double s[2] = {0, 0};
#ifdef __wasm_simd128__
    v128_t acc = wasm_f64x2_splat(0);
    for (int i = 0; i < n; i += 2)
        acc = wasm_f64x2_add(acc, wasm_f64x2_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    wasm_v128_store(s, acc);
#else
    for (int i = 0; i < n; i += 2)
        for (int l = 0; l < 2; l++) s[l] += a[i + l] * b[i + l];
#endif
    return s[0] + s[1];
}

/* ---- float lanes: sqrt, pseudo-min/max, rounding, conversions both ways. NaNs made by sqrt
 * of negative numbers are only counted (their bits are the machine's, or canonical). ---- */
#ifndef __wasm_simd128__ /* the scalar lanes: wasm's pmin, pmax and trunc_sat */
static float pminf_(float a, float b) { return b < a ? b : a; }
static float pmaxf_(float a, float b) { return a < b ? b : a; }
static int32_t trunc_sat(float f) {
    if (f != f) return 0;
    if (f >= 2147483648.0f) return INT32_MAX;
    if (f < -2147483648.0f) return INT32_MIN;
    return (int32_t)f;
}
#endif

static uint32_t float_lanes(const float *x, int n, int *nans) { /* n is a multiple of 4 */
    uint32_t h = 2166136261u;
    int count = 0;
    for (int i = 0; i < n; i += 4) {
        int32_t out[20];
#ifdef __wasm_simd128__
        v128_t v = wasm_v128_load(x + i);
        v128_t r = wasm_f32x4_sqrt(v);
        v128_t isnan = wasm_f32x4_ne(r, r);
        count -= wasm_i32x4_extract_lane(isnan, 0) + wasm_i32x4_extract_lane(isnan, 1) +
                 wasm_i32x4_extract_lane(isnan, 2) + wasm_i32x4_extract_lane(isnan, 3);
        v128_t a = wasm_f32x4_abs(v);
        v128_t m = wasm_f32x4_pmax(wasm_f32x4_pmin(a, wasm_f32x4_splat(1000.0f)), wasm_f32x4_splat(0.5f));
        v128_t s = wasm_f32x4_sqrt(m);
        wasm_v128_store(out, wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(s, wasm_f32x4_splat(10.0f)))));
        wasm_v128_store(out + 4, wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_floor(wasm_f32x4_mul(a, wasm_f32x4_splat(0.25f)))));
        wasm_v128_store(out + 8, wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_ceil(wasm_f32x4_neg(v))));
        wasm_v128_store(out + 12, wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_trunc(wasm_f32x4_div(v, wasm_f32x4_splat(3.0f)))));
        v128_t back = wasm_f32x4_convert_i32x4(wasm_v128_load(out));
        v128_t d = wasm_f64x2_promote_low_f32x4(wasm_f32x4_sub(s, back));
        v128_t e = wasm_f32x4_demote_f64x2_zero(wasm_f64x2_mul(d, wasm_f64x2_convert_low_i32x4(wasm_v128_load(out + 4))));
        wasm_v128_store(out + 16, e);
#else
        float e[4] = {0, 0, 0, 0};
        for (int l = 0; l < 4; l++) {
            float v = x[i + l];
            float r = sqrtf(v);
            if (r != r) count++;
            float a = fabsf(v);
            float s = sqrtf(pmaxf_(pminf_(a, 1000.0f), 0.5f));
            out[l] = trunc_sat(rintf(s * 10.0f));
            out[4 + l] = trunc_sat(floorf(a * 0.25f));
            out[8 + l] = trunc_sat(ceilf(-v));
            out[12 + l] = trunc_sat(truncf(v / 3.0f));
            if (l < 2) e[l] = (float)((double)(s - (float)out[l]) * (double)out[4 + l]);
        }
        memcpy(out + 16, e, sizeof e);
#endif
        h = fnv(h, out, sizeof out);
    }
    *nans = count;
    return h;
}

/* ---- base64: encoding 12 bytes at a time (a swizzle spreads them into 32-bit lanes, shifts
 * and masks cut the 6-bit groups, a saturating subtract and a swizzled table map them to
 * ASCII); decoding in scalar code, to check the round trip ---- */
static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encode(const uint8_t *in, size_t n, char *out) {
    size_t i = 0, o = 0;
#ifdef __wasm_simd128__
    const v128_t spread = wasm_i8x16_make(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const v128_t six = wasm_i32x4_splat(63);
    const v128_t lut = wasm_i8x16_make(71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0);
    for (; i + 16 <= n; i += 12, o += 16) {
        v128_t w = wasm_i8x16_swizzle(wasm_v128_load(in + i), spread);
        v128_t s0 = wasm_v128_and(wasm_u32x4_shr(w, 10), six);
        v128_t s1 = wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(w, 4), six), 8);
        v128_t s2 = wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(w, 22), six), 16);
        v128_t s3 = wasm_i32x4_shl(wasm_v128_and(wasm_u32x4_shr(w, 16), six), 24);
        v128_t v = wasm_v128_or(wasm_v128_or(s0, s1), wasm_v128_or(s2, s3));
        v128_t idx = wasm_u8x16_sub_sat(v, wasm_u8x16_splat(51));
        idx = wasm_v128_or(idx, wasm_v128_and(wasm_u8x16_lt(v, wasm_u8x16_splat(26)), wasm_u8x16_splat(13)));
        wasm_v128_store(out + o, wasm_i8x16_add(v, wasm_i8x16_swizzle(lut, idx)));
    }
#endif
    for (; i + 3 <= n; i += 3, o += 4) {
        uint32_t t = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o] = b64[t >> 18];
        out[o + 1] = b64[(t >> 12) & 63];
        out[o + 2] = b64[(t >> 6) & 63];
        out[o + 3] = b64[t & 63];
    }
    if (i < n) {
        uint32_t t = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);
        out[o++] = b64[t >> 18];
        out[o++] = b64[(t >> 12) & 63];
        out[o++] = i + 1 < n ? b64[(t >> 6) & 63] : '=';
        out[o++] = '=';
    }
    return o;
}

static int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static long b64_decode(const char *in, size_t n, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) v[k] = in[i + k] == '=' ? 0 : b64_value(in[i + k]);
        if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0) return -1;
        uint32_t t = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[o++] = (uint8_t)(t >> 16);
        if (in[i + 2] != '=') out[o++] = (uint8_t)(t >> 8);
        if (in[i + 3] != '=') out[o++] = (uint8_t)t;
    }
    return (long)o;
}

/* ---- hex encoding: nibbles looked up by a swizzle, interleaved by a two-vector shuffle ---- */
static void hex_encode(const uint8_t *in, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    size_t i = 0;
#ifdef __wasm_simd128__
    const v128_t lut = wasm_v128_load(digits);
    for (; i + 16 <= n; i += 16) {
        v128_t v = wasm_v128_load(in + i);
        v128_t hi = wasm_i8x16_swizzle(lut, wasm_u8x16_shr(v, 4));
        v128_t lo = wasm_i8x16_swizzle(lut, wasm_v128_and(v, wasm_u8x16_splat(15)));
        wasm_v128_store(out + 2 * i, wasm_i8x16_shuffle(hi, lo, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23));
        wasm_v128_store(out + 2 * i + 16,
                        wasm_i8x16_shuffle(hi, lo, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31));
    }
#endif
    for (; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
}

/* ---- byte statistics: a histogram of the high nibbles (byte counters per lane, flushed by
 * pairwise widening adds before they can overflow) and the total of set bits (popcnt) ---- */
static void nibble_histogram(const uint8_t *p, size_t n, uint32_t hist[16], uint32_t *bits) {
    memset(hist, 0, 16 * sizeof hist[0]);
    uint32_t total = 0;
    size_t i = 0;
#ifdef __wasm_simd128__
    while (i + 16 <= n) {
        v128_t acc[16], pop = wasm_i16x8_splat(0);
        for (int b = 0; b < 16; b++) acc[b] = wasm_i8x16_splat(0);
        for (int k = 0; k < 255 && i + 16 <= n; k++, i += 16) {
            v128_t v = wasm_v128_load(p + i);
            v128_t hi = wasm_u8x16_shr(v, 4);
            for (int b = 0; b < 16; b++) acc[b] = wasm_i8x16_sub(acc[b], wasm_i8x16_eq(hi, wasm_i8x16_splat((int8_t)b)));
            pop = wasm_i16x8_add(pop, wasm_u16x8_extadd_pairwise_u8x16(wasm_i8x16_popcnt(v)));
        }
        for (int b = 0; b < 16; b++) {
            v128_t w = wasm_u32x4_extadd_pairwise_u16x8(wasm_u16x8_extadd_pairwise_u8x16(acc[b]));
            hist[b] += wasm_u32x4_extract_lane(w, 0) + wasm_u32x4_extract_lane(w, 1) + wasm_u32x4_extract_lane(w, 2) +
                       wasm_u32x4_extract_lane(w, 3);
        }
        v128_t pw = wasm_u32x4_extadd_pairwise_u16x8(pop);
        total += wasm_u32x4_extract_lane(pw, 0) + wasm_u32x4_extract_lane(pw, 1) + wasm_u32x4_extract_lane(pw, 2) +
                 wasm_u32x4_extract_lane(pw, 3);
    }
#endif
    for (; i < n; i++) {
        hist[p[i] >> 4]++;
        for (int b = 0; b < 8; b++) total += (p[i] >> b) & 1;
    }
    *bits = total;
}

/* ---- substring search: the first and last bytes of the needle compared 16 positions at a
 * time, candidates taken from the bitmask and checked with memcmp ---- */
static void search(const char *text, size_t n, const char *needle, unsigned *count, uint64_t *possum) {
    size_t m = strlen(needle), i = 0;
    unsigned c = 0;
    uint64_t ps = 0;
#ifdef __wasm_simd128__
    const v128_t first = wasm_i8x16_splat(needle[0]), last = wasm_i8x16_splat(needle[m - 1]);
    for (; i + m - 1 + 16 <= n; i += 16) {
        v128_t hit = wasm_v128_and(wasm_i8x16_eq(wasm_v128_load(text + i), first),
                                   wasm_i8x16_eq(wasm_v128_load(text + i + m - 1), last));
        if (!wasm_v128_any_true(hit)) continue;
        uint32_t mask = wasm_i8x16_bitmask(hit);
        while (mask) {
            unsigned bit = (unsigned)__builtin_ctz(mask);
            if (memcmp(text + i + bit + 1, needle + 1, m - 2) == 0) {
                c++;
                ps += i + bit;
            }
            mask &= mask - 1;
        }
    }
#endif
    for (; i + m <= n; i++)
        if (memcmp(text + i, needle, m) == 0) {
            c++;
            ps += i;
        }
    *count = c;
    *possum = ps;
}

/* ---- plain loops that clang vectorises by itself at -O3 -msimd128 ---- */
static uint32_t sad(const uint8_t *a, const uint8_t *b, int n) {
    uint32_t s = 0;
    for (int i = 0; i < n; i++) s += (uint32_t)abs(a[i] - b[i]);
    return s;
}
static void saxpy_i32(int32_t *y, const int32_t *x, int32_t k, int n) {
    for (int i = 0; i < n; i++) y[i] = k * x[i] + (y[i] >> 1);
}
static int32_t max_i32(const int32_t *x, int n) {
    int32_t m = INT32_MIN;
    for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}
static void reverse_bytes(uint8_t *p, int n) {
    for (int i = 0, j = n - 1; i < j; i++, j--) {
        uint8_t t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

#define NSAMPLES 8192
#define NFLOATS 4096

static uint8_t img[W * H], tmp_img[W * H], prev[W * H];
static int16_t wave_a[NSAMPLES], wave_b[NSAMPLES], mixed[NSAMPLES];
static float fa[NFLOATS], fb[NFLOATS];
static double da[NFLOATS], db[NFLOATS];
static int32_t ia[NFLOATS], ib[NFLOATS];
static char text[TEXT_LEN + 16];
static char enc[(W * H / 3 + 2) * 4 + 16];
static uint8_t dec[W * H + 16];
static char hex[2 * W * H + 16];

#ifdef SIMD_KERNELS_BENCH
/* The SIMD benchmark's build (bench/README.md): a module importing nothing (no stdio), whose
 * run() returns a hash of the values the command prints, read by their conversions. */
#include <stdarg.h>
static uint32_t printed = 2166136261u;
static int report(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') continue;
        while (*++f >= '0' && *f <= '9') {}
        int longs = 0;
        for (; *f == 'l' || *f == 'z'; f++) longs = *f == 'z' ? 1 : 2;
        if (*f == 'a') {
            double d = va_arg(ap, double);
            printed = fnv(printed, &d, sizeof d);
        } else if (*f == 's') {
            const char *str = va_arg(ap, const char *);
            printed = fnv(printed, str, strlen(str));
        } else if (longs == 2) {
            long long v = va_arg(ap, long long);
            printed = fnv(printed, &v, sizeof v);
        } else {
            uint32_t v = longs ? (uint32_t)va_arg(ap, size_t) : va_arg(ap, unsigned);
            printed = fnv(printed, &v, sizeof v);
        }
    }
    va_end(ap);
    return 0;
}
#define printf report
#endif

static int kernels(int rounds) {
    for (int i = 0; i < W * H; i++) img[i] = (uint8_t)((i % W) ^ (i / W) ^ (rnd() & 31));
    for (int i = 0; i < NSAMPLES; i++) {
        wave_a[i] = (int16_t)(rnd() % 60001) - 30000;
        wave_b[i] = (int16_t)((int)(rnd() % 40001) - 20000);
    }
    for (int i = 0; i < NFLOATS; i++) {
        fa[i] = (float)((int)(rnd() % 2000001) - 1000000) / 997.0f;
        fb[i] = (float)(rnd() % 10000) / 4096.0f;
        da[i] = (double)((int)(rnd() % 2000001) - 1000000) / 8191.0;
        db[i] = (double)(rnd() % 100000) / 65536.0;
        ia[i] = (int32_t)(rnd() % 200001) - 100000;
        ib[i] = (int32_t)(rnd() % 2001) - 1000;
    }
    static const char *words[] = {"abra", "cad", "abracadabra", "simd", "lane", "shuffle", "ab", "ra"};
    size_t tl = 0;
    while (tl < TEXT_LEN) {
        const char *w = words[rnd() % 8];
        size_t wl = strlen(w);
        if (tl + wl + 1 > TEXT_LEN) break;
        memcpy(text + tl, w, wl);
        tl += wl;
        text[tl++] = (rnd() & 3) ? ' ' : '\n';
    }
    text[tl] = 0;

    uint32_t all = 2166136261u;
    for (int r = 0; r < rounds; r++) {
        memcpy(prev, img, sizeof img);
        blur(img, tmp_img);
        blur(tmp_img, img);
        uint32_t hb = fnv(2166136261u, img, sizeof img);
        adjust(img, W * H, (uint8_t)(7 + r), (uint8_t)(3 + 2 * r), 12, 240);
        uint32_t ha = fnv(2166136261u, img, sizeof img);
        printf("round %d blur %08x adjust %08x sad %u\n", r, hb, ha, sad(img, prev, W * H));

        int16_t plo, phi;
        uint32_t hm = mix16(wave_a, wave_b, mixed, NSAMPLES - r, &plo, &phi);
        printf("round %d mix %08x peaks %d %d dot16 %lld\n", r, hm, plo, phi,
               (long long)dot_i16(wave_a + r, mixed, NSAMPLES - 8));
        memcpy(wave_b, mixed, sizeof mixed);

        float f = dot_f32(fa, fb, NFLOATS);
        double d = dot_f64(da, db, NFLOATS);
        int nans;
        uint32_t hf = float_lanes(fa, NFLOATS, &nans);
        printf("round %d dotf32 %a dotf64 %a lanes %08x nans %d\n", r, f, d, hf, nans);
        for (int i = 0; i < NFLOATS; i++) fb[i] = fb[(i * 7 + 1) % NFLOATS] * 0.75f + 0.125f;

        saxpy_i32(ib, ia, 3 - r, NFLOATS);
        printf("round %d saxpy max %d\n", r, max_i32(ib, NFLOATS));

        size_t n = W * H - (size_t)r * 7;
        size_t el = b64_encode(img, n, enc);
        long dl = b64_decode(enc, el, dec);
        printf("round %d base64 %zu %08x roundtrip %s\n", r, el, fnv(2166136261u, enc, el),
               dl == (long)n && memcmp(dec, img, n) == 0 ? "ok" : "BAD");
        hex_encode(img, n, hex);
        uint32_t hist[16], bits;
        nibble_histogram(img, n, hist, &bits);
        printf("round %d hex %08x bits %u hist", r, fnv(2166136261u, hex, 2 * n), bits);
        for (int b = 0; b < 16; b++) printf(" %u", hist[b]);
        printf("\n");

        unsigned count;
        uint64_t ps;
        static const char *needles[] = {"abracadabra", "ar\nba", "simd lane", "ra ab"};
        search(text, tl, needles[r % 4], &count, &ps);
        printf("round %d search \"%s\" %u %llu\n", r, r % 4 == 1 ? "ar\\nba" : needles[r % 4], count,
               (unsigned long long)ps);
        reverse_bytes((uint8_t *)text, (int)tl);

        all = fnv(all, img, sizeof img);
        all = fnv(all, mixed, sizeof mixed);
        all = fnv(all, ib, sizeof ib);
    }
    printf("all %08x\n", all);
    return 0;
}

#ifdef SIMD_KERNELS_BENCH
__attribute__((export_name("run"))) uint32_t run(void) {
    kernels(3);
    return printed;
}
#else
int main(int argc, char **argv) { return kernels(argc > 1 ? atoi(argv[1]) : 3); }
#endif
