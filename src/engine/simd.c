/* SIMD (v128) lane semantics and the shapes of the 0xFD instructions (see simd.h). Every
 * lane is read and written little-endian through the helpers below, so the results are
 * the same bits on every CPU; float lanes use numeric.h's exact operations. */
#include "simd.h"

#include <string.h>

#include "code_simd.h"
#include "numeric.h"
#include "runtime.h"

ri_simd_info ri_simd_info_of(uint32_t sub) {
    ri_simd_info r = {RI_SIMD_NONE, 0, 0};
#define SET(s, t, k) do { r.shape = (s); r.type = (t); r.n = (k); return r; } while (0)
    if (sub <= 0x0A) { static const uint8_t lg[11] = {4, 3, 3, 3, 3, 3, 3, 0, 1, 2, 3}; SET(RI_SIMD_LOAD, 0, lg[sub]); }
    switch (sub) {
    case 0x0B: SET(RI_SIMD_STORE, 0, 4);
    case 0x0C: SET(RI_SIMD_CONST, 0, 0);
    case 0x0D: SET(RI_SIMD_SHUFFLE, 0, 32);
    case 0x0E: SET(RI_SIMD_BIN, 0, 0);
    case 0x0F: SET(RI_SIMD_SPLAT, RI_I32, 16);
    case 0x10: SET(RI_SIMD_SPLAT, RI_I32, 8);
    case 0x11: SET(RI_SIMD_SPLAT, RI_I32, 4);
    case 0x12: SET(RI_SIMD_SPLAT, RI_I64, 2);
    case 0x13: SET(RI_SIMD_SPLAT, RI_F32, 4);
    case 0x14: SET(RI_SIMD_SPLAT, RI_F64, 2);
    case 0x15: case 0x16: SET(RI_SIMD_EXTRACT, RI_I32, 16);
    case 0x17: SET(RI_SIMD_REPLACE, RI_I32, 16);
    case 0x18: case 0x19: SET(RI_SIMD_EXTRACT, RI_I32, 8);
    case 0x1A: SET(RI_SIMD_REPLACE, RI_I32, 8);
    case 0x1B: SET(RI_SIMD_EXTRACT, RI_I32, 4);
    case 0x1C: SET(RI_SIMD_REPLACE, RI_I32, 4);
    case 0x1D: SET(RI_SIMD_EXTRACT, RI_I64, 2);
    case 0x1E: SET(RI_SIMD_REPLACE, RI_I64, 2);
    case 0x1F: SET(RI_SIMD_EXTRACT, RI_F32, 4);
    case 0x20: SET(RI_SIMD_REPLACE, RI_F32, 4);
    case 0x21: SET(RI_SIMD_EXTRACT, RI_F64, 2);
    case 0x22: SET(RI_SIMD_REPLACE, RI_F64, 2);
    case 0x4D: SET(RI_SIMD_UN, 0, 0);
    case 0x52: SET(RI_SIMD_TERN, 0, 0);
    case 0x53: SET(RI_SIMD_TEST, 0, 0);
    case 0x54: SET(RI_SIMD_LOAD_LANE, 0, 0);
    case 0x55: SET(RI_SIMD_LOAD_LANE, 1, 1);
    case 0x56: SET(RI_SIMD_LOAD_LANE, 2, 2);
    case 0x57: SET(RI_SIMD_LOAD_LANE, 3, 3);
    case 0x58: SET(RI_SIMD_STORE_LANE, 0, 0);
    case 0x59: SET(RI_SIMD_STORE_LANE, 1, 1);
    case 0x5A: SET(RI_SIMD_STORE_LANE, 2, 2);
    case 0x5B: SET(RI_SIMD_STORE_LANE, 3, 3);
    case 0x5C: SET(RI_SIMD_LOAD, 0, 2);
    case 0x5D: SET(RI_SIMD_LOAD, 0, 3);
    case 0x5E: case 0x5F: SET(RI_SIMD_UN, 0, 0);
    case 0x63: case 0x64: case 0x83: case 0x84: case 0xA3: case 0xA4: case 0xC3: case 0xC4:
        SET(RI_SIMD_TEST, 0, 0);
    case 0x6B: case 0x6C: case 0x6D: case 0x8B: case 0x8C: case 0x8D:
    case 0xAB: case 0xAC: case 0xAD: case 0xCB: case 0xCC: case 0xCD:
        SET(RI_SIMD_SHIFT, 0, 0);
    /* unary */
    case 0x60: case 0x61: case 0x62: case 0x67: case 0x68: case 0x69: case 0x6A: case 0x74: case 0x75:
    case 0x7A: case 0x7C: case 0x7D: case 0x7E: case 0x7F: case 0x80: case 0x81: case 0x87: case 0x88:
    case 0x89: case 0x8A: case 0x94: case 0xA0: case 0xA1: case 0xA7: case 0xA8: case 0xA9: case 0xAA:
    case 0xC0: case 0xC1: case 0xC7: case 0xC8: case 0xC9: case 0xCA: case 0xE0: case 0xE1: case 0xE3:
    case 0xEC: case 0xED: case 0xEF: case 0xF8: case 0xF9: case 0xFA: case 0xFB: case 0xFC: case 0xFD:
    case 0xFE: case 0xFF:
        SET(RI_SIMD_UN, 0, 0);
    /* reserved */
    case 0x9A: case 0xA2: case 0xA5: case 0xA6: case 0xAF: case 0xB0: case 0xB2: case 0xB3: case 0xB4:
    case 0xBB: case 0xC2: case 0xC5: case 0xC6: case 0xCF: case 0xD0: case 0xD2: case 0xD3: case 0xD4:
    case 0xE2: case 0xEE:
        return r;
    default: break;
    }
    if (sub >= 0x23 && sub <= 0xF7) SET(RI_SIMD_BIN, 0, 0);
#undef SET
    return r;
}

uint32_t ri_simd_access_bytes(uint32_t sub) {
    switch (sub) {
    case 0x00: case 0x0B: return 16;
    case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x06: case 0x0A: case 0x5D: case 0x57: case 0x5B:
        return 8;
    case 0x07: case 0x54: case 0x58: return 1;
    case 0x08: case 0x55: case 0x59: return 2;
    default: return 4; /* 0x09, 0x5C, 0x56, 0x5A */
    }
}

/* ---- lanes, little-endian ---- */

typedef struct v128 { uint8_t b[16]; } v128;

static inline uint16_t g16(const v128 *v, unsigned i) { return (uint16_t)(v->b[2 * i] | v->b[2 * i + 1] << 8); }
static inline uint32_t g32(const v128 *v, unsigned i) {
    const uint8_t *p = v->b + 4 * i;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t g64(const v128 *v, unsigned i) { return ri_v128_u64(v->b + 8 * i); }
static inline void s16(v128 *v, unsigned i, uint32_t x) { v->b[2 * i] = (uint8_t)x; v->b[2 * i + 1] = (uint8_t)(x >> 8); }
static inline void s32(v128 *v, unsigned i, uint32_t x) {
    for (unsigned k = 0; k < 4; k++) v->b[4 * i + k] = (uint8_t)(x >> (8 * k));
}
static inline void s64(v128 *v, unsigned i, uint64_t x) {
    for (unsigned k = 0; k < 8; k++) v->b[8 * i + k] = (uint8_t)(x >> (8 * k));
}
static inline float gf32(const v128 *v, unsigned i) { return ri_f32_from_bits(g32(v, i)); }
static inline double gf64(const v128 *v, unsigned i) { return ri_f64_from_bits(g64(v, i)); }
static inline void sf32(v128 *v, unsigned i, float x, bool canon) {
    s32(v, i, canon && x != x ? RI_F32_CANON : ri_f32_bits(x));
}
static inline void sf64(v128 *v, unsigned i, double x, bool canon) {
    s64(v, i, canon && x != x ? RI_F64_CANON : ri_f64_bits(x));
}
/* signed views (conversions to signed types are modular in GCC and Clang) */
static inline int32_t sx8(uint8_t x) { return (int32_t)(int8_t)x; }
static inline int32_t sx16(uint16_t x) { return (int32_t)(int16_t)x; }
static inline int64_t sx32(uint32_t x) { return (int64_t)(int32_t)x; }

static inline uint32_t sat_s(int64_t x, int64_t lo, int64_t hi) { return (uint32_t)(x < lo ? lo : x > hi ? hi : x); }
static inline uint32_t sat_u(int64_t x, int64_t hi) { return (uint32_t)(x < 0 ? 0 : x > hi ? hi : x); }

static float f32_pmin(float a, float b) { return b < a ? b : a; }
static float f32_pmax(float a, float b) { return a < b ? b : a; }
static double f64_pmin(double a, double b) { return b < a ? b : a; }
static double f64_pmax(double a, double b) { return a < b ? b : a; }

/* Integer lane compares: all ones or zero. */
#define CMP_LANES(n, get, set, T, expr) \
    for (unsigned i = 0; i < (n); i++) { T x = (T)get(&a, i), y = (T)get(&b, i); set(&r, i, (expr) ? ~0u : 0u); } \
    break
#define CMP_LANES64(get, T, expr) \
    for (unsigned i = 0; i < 2; i++) { T x = (T)get(&a, i), y = (T)get(&b, i); s64(&r, i, (expr) ? ~UINT64_C(0) : 0); } \
    break
static inline uint8_t g8(const v128 *v, unsigned i) { return v->b[i]; }
static inline void s8(v128 *v, unsigned i, uint32_t x) { v->b[i] = (uint8_t)x; }

#define I8_CMPS(base) \
    case base + 0: CMP_LANES(16, g8, s8, uint32_t, x == y); \
    case base + 1: CMP_LANES(16, g8, s8, uint32_t, x != y); \
    case base + 2: CMP_LANES(16, g8, s8, int32_t, sx8((uint8_t)x) < sx8((uint8_t)y)); \
    case base + 3: CMP_LANES(16, g8, s8, uint32_t, x < y); \
    case base + 4: CMP_LANES(16, g8, s8, int32_t, sx8((uint8_t)x) > sx8((uint8_t)y)); \
    case base + 5: CMP_LANES(16, g8, s8, uint32_t, x > y); \
    case base + 6: CMP_LANES(16, g8, s8, int32_t, sx8((uint8_t)x) <= sx8((uint8_t)y)); \
    case base + 7: CMP_LANES(16, g8, s8, uint32_t, x <= y); \
    case base + 8: CMP_LANES(16, g8, s8, int32_t, sx8((uint8_t)x) >= sx8((uint8_t)y)); \
    case base + 9: CMP_LANES(16, g8, s8, uint32_t, x >= y);

/* Lane-wise integer arithmetic: x, y the unsigned lanes (as uint64_t), expr the result. */
#define MAP2(n, get, set, expr) \
    for (unsigned i = 0; i < (n); i++) { uint64_t x = get(&a, i), y = get(&b, i); (void)y; set(&r, i, expr); } \
    break
#define MAP1(n, get, set, expr) \
    for (unsigned i = 0; i < (n); i++) { uint64_t x = get(&a, i); set(&r, i, expr); } \
    break
#define FMAP2(n, get, set, expr) \
    for (unsigned i = 0; i < (n); i++) { __typeof__(get(&a, 0)) x = get(&a, i), y = get(&b, i); set(&r, i, expr, canon); } \
    break
/* pmin, pmax select one operand, NaN or not (as copysign): no canonicalisation */
#define PMAP(n, get, set, expr) \
    for (unsigned i = 0; i < (n); i++) { __typeof__(get(&a, 0)) x = get(&a, i), y = get(&b, i); set(&r, i, expr, false); } \
    break
#define FMAP1(n, get, set, expr) \
    for (unsigned i = 0; i < (n); i++) { __typeof__(get(&a, 0)) x = get(&a, i); set(&r, i, expr, canon); } \
    break
#define FCMP(n, get, set1, expr) \
    for (unsigned i = 0; i < (n); i++) { __typeof__(get(&a, 0)) x = get(&a, i), y = get(&b, i); set1; } \
    break

static uint64_t shl64(uint64_t x, unsigned s) { return x << s; }

static inline uint64_t abs64(uint64_t x) { return (x >> 63) ? (uint64_t)0 - x : x; }

void ri_simd_apply(uint32_t sub, uint32_t lane, const uint8_t *imm, uint8_t out[16], const uint8_t ain[16],
                   const uint8_t bin[16], const uint8_t cin[16], bool canon) {
    v128 a, b, c, r;
    memcpy(a.b, ain, 16);
    if (bin) memcpy(b.b, bin, 16); else memset(b.b, 0, 16);
    if (cin) memcpy(c.b, cin, 16); else memset(c.b, 0, 16);
    memset(r.b, 0, 16);
    uint64_t sa = g64(&b, 0); /* a scalar second operand (shift count, replace_lane value) */
    switch (sub) {
    case 0x0D: /* i8x16.shuffle */
        for (unsigned i = 0; i < 16; i++) r.b[i] = imm[i] < 16 ? a.b[imm[i]] : b.b[imm[i] & 15];
        break;
    case 0x0E: /* i8x16.swizzle */
        for (unsigned i = 0; i < 16; i++) r.b[i] = b.b[i] < 16 ? a.b[b.b[i]] : 0;
        break;
    case 0x0F: for (unsigned i = 0; i < 16; i++) r.b[i] = a.b[0]; break;
    case 0x10: for (unsigned i = 0; i < 8; i++) s16(&r, i, g16(&a, 0)); break;
    case 0x11: case 0x13: for (unsigned i = 0; i < 4; i++) s32(&r, i, g32(&a, 0)); break;
    case 0x12: case 0x14: for (unsigned i = 0; i < 2; i++) s64(&r, i, g64(&a, 0)); break;
    case 0x15: s64(&r, 0, (uint32_t)sx8(a.b[lane & 15])); break;
    case 0x16: s64(&r, 0, a.b[lane & 15]); break;
    case 0x17: r = a; r.b[lane & 15] = (uint8_t)sa; break;
    case 0x18: s64(&r, 0, (uint32_t)sx16(g16(&a, lane & 7))); break;
    case 0x19: s64(&r, 0, g16(&a, lane & 7)); break;
    case 0x1A: r = a; s16(&r, lane & 7, (uint32_t)sa); break;
    case 0x1B: case 0x1F: s64(&r, 0, g32(&a, lane & 3)); break;
    case 0x1C: case 0x20: r = a; s32(&r, lane & 3, (uint32_t)sa); break;
    case 0x1D: case 0x21: s64(&r, 0, g64(&a, lane & 1)); break;
    case 0x1E: case 0x22: r = a; s64(&r, lane & 1, sa); break;
    I8_CMPS(0x23)
    case 0x2D: CMP_LANES(8, g16, s16, uint32_t, x == y);
    case 0x2E: CMP_LANES(8, g16, s16, uint32_t, x != y);
    case 0x2F: CMP_LANES(8, g16, s16, int32_t, sx16((uint16_t)x) < sx16((uint16_t)y));
    case 0x30: CMP_LANES(8, g16, s16, uint32_t, x < y);
    case 0x31: CMP_LANES(8, g16, s16, int32_t, sx16((uint16_t)x) > sx16((uint16_t)y));
    case 0x32: CMP_LANES(8, g16, s16, uint32_t, x > y);
    case 0x33: CMP_LANES(8, g16, s16, int32_t, sx16((uint16_t)x) <= sx16((uint16_t)y));
    case 0x34: CMP_LANES(8, g16, s16, uint32_t, x <= y);
    case 0x35: CMP_LANES(8, g16, s16, int32_t, sx16((uint16_t)x) >= sx16((uint16_t)y));
    case 0x36: CMP_LANES(8, g16, s16, uint32_t, x >= y);
    case 0x37: CMP_LANES(4, g32, s32, uint32_t, x == y);
    case 0x38: CMP_LANES(4, g32, s32, uint32_t, x != y);
    case 0x39: CMP_LANES(4, g32, s32, int64_t, sx32((uint32_t)x) < sx32((uint32_t)y));
    case 0x3A: CMP_LANES(4, g32, s32, uint32_t, x < y);
    case 0x3B: CMP_LANES(4, g32, s32, int64_t, sx32((uint32_t)x) > sx32((uint32_t)y));
    case 0x3C: CMP_LANES(4, g32, s32, uint32_t, x > y);
    case 0x3D: CMP_LANES(4, g32, s32, int64_t, sx32((uint32_t)x) <= sx32((uint32_t)y));
    case 0x3E: CMP_LANES(4, g32, s32, uint32_t, x <= y);
    case 0x3F: CMP_LANES(4, g32, s32, int64_t, sx32((uint32_t)x) >= sx32((uint32_t)y));
    case 0x40: CMP_LANES(4, g32, s32, uint32_t, x >= y);
    case 0x41: FCMP(4, gf32, s32(&r, i, x == y ? ~0u : 0u), 0);
    case 0x42: FCMP(4, gf32, s32(&r, i, x != y ? ~0u : 0u), 0);
    case 0x43: FCMP(4, gf32, s32(&r, i, x < y ? ~0u : 0u), 0);
    case 0x44: FCMP(4, gf32, s32(&r, i, x > y ? ~0u : 0u), 0);
    case 0x45: FCMP(4, gf32, s32(&r, i, x <= y ? ~0u : 0u), 0);
    case 0x46: FCMP(4, gf32, s32(&r, i, x >= y ? ~0u : 0u), 0);
    case 0x47: FCMP(2, gf64, s64(&r, i, x == y ? ~UINT64_C(0) : 0), 0);
    case 0x48: FCMP(2, gf64, s64(&r, i, x != y ? ~UINT64_C(0) : 0), 0);
    case 0x49: FCMP(2, gf64, s64(&r, i, x < y ? ~UINT64_C(0) : 0), 0);
    case 0x4A: FCMP(2, gf64, s64(&r, i, x > y ? ~UINT64_C(0) : 0), 0);
    case 0x4B: FCMP(2, gf64, s64(&r, i, x <= y ? ~UINT64_C(0) : 0), 0);
    case 0x4C: FCMP(2, gf64, s64(&r, i, x >= y ? ~UINT64_C(0) : 0), 0);
    case 0x4D: for (unsigned i = 0; i < 16; i++) r.b[i] = (uint8_t)~a.b[i]; break;
    case 0x4E: for (unsigned i = 0; i < 16; i++) r.b[i] = a.b[i] & b.b[i]; break;
    case 0x4F: for (unsigned i = 0; i < 16; i++) r.b[i] = a.b[i] & (uint8_t)~b.b[i]; break;
    case 0x50: for (unsigned i = 0; i < 16; i++) r.b[i] = a.b[i] | b.b[i]; break;
    case 0x51: for (unsigned i = 0; i < 16; i++) r.b[i] = a.b[i] ^ b.b[i]; break;
    case 0x52: for (unsigned i = 0; i < 16; i++) r.b[i] = (uint8_t)((a.b[i] & c.b[i]) | (b.b[i] & ~c.b[i])); break;
    case 0x53: { unsigned any = 0; for (unsigned i = 0; i < 16; i++) any |= a.b[i]; s64(&r, 0, any != 0); break; }
    case 0x5E: /* f32x4.demote_f64x2_zero */
        for (unsigned i = 0; i < 2; i++) sf32(&r, i, ri_f32_demote_f64(gf64(&a, i)), canon);
        break;
    case 0x5F: /* f64x2.promote_low_f32x4 */
        for (unsigned i = 0; i < 2; i++) sf64(&r, i, ri_f64_promote_f32(gf32(&a, i)), canon);
        break;
    /* i8x16 */
    case 0x60: MAP1(16, g8, s8, (uint32_t)(sx8((uint8_t)x) < 0 ? -sx8((uint8_t)x) : sx8((uint8_t)x)));
    case 0x61: MAP1(16, g8, s8, (uint32_t)(0u - (uint32_t)x));
    case 0x62: MAP1(16, g8, s8, (uint32_t)__builtin_popcount((unsigned)x));
    case 0x63: { unsigned all = 1; for (unsigned i = 0; i < 16; i++) all &= a.b[i] != 0; s64(&r, 0, all); break; }
    case 0x64: { uint32_t m = 0; for (unsigned i = 0; i < 16; i++) m |= (uint32_t)(a.b[i] >> 7) << i; s64(&r, 0, m); break; }
    case 0x65: case 0x66: /* i8x16.narrow_i16x8_s/u */
        for (unsigned i = 0; i < 16; i++) {
            int32_t x = sx16(i < 8 ? g16(&a, i) : g16(&b, i - 8));
            r.b[i] = (uint8_t)(sub == 0x65 ? sat_s(x, -128, 127) : sat_u(x, 255));
        }
        break;
    case 0x67: FMAP1(4, gf32, sf32, ri_f32_ceil(x));
    case 0x68: FMAP1(4, gf32, sf32, ri_f32_floor(x));
    case 0x69: FMAP1(4, gf32, sf32, ri_f32_trunc(x));
    case 0x6A: FMAP1(4, gf32, sf32, ri_f32_nearest(x));
    case 0x6B: MAP1(16, g8, s8, (uint32_t)(x << (sa & 7)));
    case 0x6C: MAP1(16, g8, s8, (uint32_t)(sx8((uint8_t)x) >> (sa & 7)));
    case 0x6D: MAP1(16, g8, s8, (uint32_t)(x >> (sa & 7)));
    case 0x6E: MAP2(16, g8, s8, (uint32_t)(x + y));
    case 0x6F: MAP2(16, g8, s8, sat_s(sx8((uint8_t)x) + sx8((uint8_t)y), -128, 127));
    case 0x70: MAP2(16, g8, s8, sat_u((int64_t)(x + y), 255));
    case 0x71: MAP2(16, g8, s8, (uint32_t)(x - y));
    case 0x72: MAP2(16, g8, s8, sat_s(sx8((uint8_t)x) - sx8((uint8_t)y), -128, 127));
    case 0x73: MAP2(16, g8, s8, sat_u((int64_t)x - (int64_t)y, 255));
    case 0x74: FMAP1(2, gf64, sf64, ri_f64_ceil(x));
    case 0x75: FMAP1(2, gf64, sf64, ri_f64_floor(x));
    case 0x76: MAP2(16, g8, s8, sx8((uint8_t)x) < sx8((uint8_t)y) ? x : y);
    case 0x77: MAP2(16, g8, s8, x < y ? x : y);
    case 0x78: MAP2(16, g8, s8, sx8((uint8_t)x) > sx8((uint8_t)y) ? x : y);
    case 0x79: MAP2(16, g8, s8, x > y ? x : y);
    case 0x7A: FMAP1(2, gf64, sf64, ri_f64_trunc(x));
    case 0x7B: MAP2(16, g8, s8, (uint32_t)((x + y + 1) >> 1));
    case 0x7C: for (unsigned i = 0; i < 8; i++) s16(&r, i, (uint32_t)(sx8(a.b[2 * i]) + sx8(a.b[2 * i + 1]))); break;
    case 0x7D: for (unsigned i = 0; i < 8; i++) s16(&r, i, (uint32_t)a.b[2 * i] + a.b[2 * i + 1]); break;
    case 0x7E:
        for (unsigned i = 0; i < 4; i++) s32(&r, i, (uint32_t)(sx16(g16(&a, 2 * i)) + sx16(g16(&a, 2 * i + 1))));
        break;
    case 0x7F: for (unsigned i = 0; i < 4; i++) s32(&r, i, (uint32_t)g16(&a, 2 * i) + g16(&a, 2 * i + 1)); break;
    /* i16x8 */
    case 0x80: MAP1(8, g16, s16, (uint32_t)(sx16((uint16_t)x) < 0 ? -sx16((uint16_t)x) : sx16((uint16_t)x)));
    case 0x81: MAP1(8, g16, s16, (uint32_t)(0u - (uint32_t)x));
    case 0x82: MAP2(8, g16, s16, sat_s(((int64_t)sx16((uint16_t)x) * sx16((uint16_t)y) + 0x4000) >> 15, -32768, 32767));
    case 0x83: { unsigned all = 1; for (unsigned i = 0; i < 8; i++) all &= g16(&a, i) != 0; s64(&r, 0, all); break; }
    case 0x84: { uint32_t m = 0; for (unsigned i = 0; i < 8; i++) m |= (uint32_t)(g16(&a, i) >> 15) << i; s64(&r, 0, m); break; }
    case 0x85: case 0x86: /* i16x8.narrow_i32x4_s/u */
        for (unsigned i = 0; i < 8; i++) {
            int64_t x = sx32(i < 4 ? g32(&a, i) : g32(&b, i - 4));
            s16(&r, i, sub == 0x85 ? sat_s(x, -32768, 32767) : sat_u(x, 65535));
        }
        break;
    case 0x87: for (unsigned i = 0; i < 8; i++) s16(&r, i, (uint32_t)sx8(a.b[i])); break;
    case 0x88: for (unsigned i = 0; i < 8; i++) s16(&r, i, (uint32_t)sx8(a.b[8 + i])); break;
    case 0x89: for (unsigned i = 0; i < 8; i++) s16(&r, i, a.b[i]); break;
    case 0x8A: for (unsigned i = 0; i < 8; i++) s16(&r, i, a.b[8 + i]); break;
    case 0x8B: MAP1(8, g16, s16, (uint32_t)(x << (sa & 15)));
    case 0x8C: MAP1(8, g16, s16, (uint32_t)(sx16((uint16_t)x) >> (sa & 15)));
    case 0x8D: MAP1(8, g16, s16, (uint32_t)(x >> (sa & 15)));
    case 0x8E: MAP2(8, g16, s16, (uint32_t)(x + y));
    case 0x8F: MAP2(8, g16, s16, sat_s(sx16((uint16_t)x) + sx16((uint16_t)y), -32768, 32767));
    case 0x90: MAP2(8, g16, s16, sat_u((int64_t)(x + y), 65535));
    case 0x91: MAP2(8, g16, s16, (uint32_t)(x - y));
    case 0x92: MAP2(8, g16, s16, sat_s(sx16((uint16_t)x) - sx16((uint16_t)y), -32768, 32767));
    case 0x93: MAP2(8, g16, s16, sat_u((int64_t)x - (int64_t)y, 65535));
    case 0x94: FMAP1(2, gf64, sf64, ri_f64_nearest(x));
    case 0x95: MAP2(8, g16, s16, (uint32_t)(x * y));
    case 0x96: MAP2(8, g16, s16, sx16((uint16_t)x) < sx16((uint16_t)y) ? x : y);
    case 0x97: MAP2(8, g16, s16, x < y ? x : y);
    case 0x98: MAP2(8, g16, s16, sx16((uint16_t)x) > sx16((uint16_t)y) ? x : y);
    case 0x99: MAP2(8, g16, s16, x > y ? x : y);
    case 0x9B: MAP2(8, g16, s16, (uint32_t)((x + y + 1) >> 1));
    case 0x9C: case 0x9D: case 0x9E: case 0x9F: { /* i16x8.extmul_{low,high}_i8x16_{s,u} */
        unsigned off = (sub == 0x9D || sub == 0x9F) ? 8 : 0;
        for (unsigned i = 0; i < 8; i++) {
            uint8_t x = a.b[off + i], y = b.b[off + i];
            s16(&r, i, sub <= 0x9D ? (uint32_t)(sx8(x) * sx8(y)) : (uint32_t)x * y);
        }
        break;
    }
    /* i32x4 */
    case 0xA0: MAP1(4, g32, s32, (uint32_t)abs64((uint64_t)sx32((uint32_t)x)));
    case 0xA1: MAP1(4, g32, s32, (uint32_t)(0u - (uint32_t)x));
    case 0xA3: { unsigned all = 1; for (unsigned i = 0; i < 4; i++) all &= g32(&a, i) != 0; s64(&r, 0, all); break; }
    case 0xA4: { uint32_t m = 0; for (unsigned i = 0; i < 4; i++) m |= (g32(&a, i) >> 31) << i; s64(&r, 0, m); break; }
    case 0xA7: for (unsigned i = 0; i < 4; i++) s32(&r, i, (uint32_t)sx16(g16(&a, i))); break;
    case 0xA8: for (unsigned i = 0; i < 4; i++) s32(&r, i, (uint32_t)sx16(g16(&a, 4 + i))); break;
    case 0xA9: for (unsigned i = 0; i < 4; i++) s32(&r, i, g16(&a, i)); break;
    case 0xAA: for (unsigned i = 0; i < 4; i++) s32(&r, i, g16(&a, 4 + i)); break;
    case 0xAB: MAP1(4, g32, s32, (uint32_t)(x << (sa & 31)));
    case 0xAC: MAP1(4, g32, s32, (uint32_t)(sx32((uint32_t)x) >> (sa & 31)));
    case 0xAD: MAP1(4, g32, s32, (uint32_t)(x >> (sa & 31)));
    case 0xAE: MAP2(4, g32, s32, (uint32_t)(x + y));
    case 0xB1: MAP2(4, g32, s32, (uint32_t)(x - y));
    case 0xB5: MAP2(4, g32, s32, (uint32_t)(x * y));
    case 0xB6: MAP2(4, g32, s32, sx32((uint32_t)x) < sx32((uint32_t)y) ? (uint32_t)x : (uint32_t)y);
    case 0xB7: MAP2(4, g32, s32, x < y ? (uint32_t)x : (uint32_t)y);
    case 0xB8: MAP2(4, g32, s32, sx32((uint32_t)x) > sx32((uint32_t)y) ? (uint32_t)x : (uint32_t)y);
    case 0xB9: MAP2(4, g32, s32, x > y ? (uint32_t)x : (uint32_t)y);
    case 0xBA: /* i32x4.dot_i16x8_s */
        for (unsigned i = 0; i < 4; i++) {
            int64_t p = (int64_t)sx16(g16(&a, 2 * i)) * sx16(g16(&b, 2 * i)) +
                        (int64_t)sx16(g16(&a, 2 * i + 1)) * sx16(g16(&b, 2 * i + 1));
            s32(&r, i, (uint32_t)p);
        }
        break;
    case 0xBC: case 0xBD: case 0xBE: case 0xBF: {
        unsigned off = (sub == 0xBD || sub == 0xBF) ? 4 : 0;
        for (unsigned i = 0; i < 4; i++) {
            uint16_t x = g16(&a, off + i), y = g16(&b, off + i);
            s32(&r, i, sub <= 0xBD ? (uint32_t)((int64_t)sx16(x) * sx16(y)) : (uint32_t)x * y);
        }
        break;
    }
    /* i64x2 */
    case 0xC0: MAP1(2, g64, s64, abs64(x));
    case 0xC1: MAP1(2, g64, s64, 0u - x);
    case 0xC3: s64(&r, 0, g64(&a, 0) != 0 && g64(&a, 1) != 0); break;
    case 0xC4: s64(&r, 0, (g64(&a, 0) >> 63) | (g64(&a, 1) >> 63) << 1); break;
    case 0xC7: for (unsigned i = 0; i < 2; i++) s64(&r, i, (uint64_t)sx32(g32(&a, i))); break;
    case 0xC8: for (unsigned i = 0; i < 2; i++) s64(&r, i, (uint64_t)sx32(g32(&a, 2 + i))); break;
    case 0xC9: for (unsigned i = 0; i < 2; i++) s64(&r, i, g32(&a, i)); break;
    case 0xCA: for (unsigned i = 0; i < 2; i++) s64(&r, i, g32(&a, 2 + i)); break;
    case 0xCB: MAP1(2, g64, s64, shl64(x, (unsigned)(sa & 63)));
    case 0xCC: MAP1(2, g64, s64, ri_i64_shr_s(x, sa));
    case 0xCD: MAP1(2, g64, s64, x >> (sa & 63));
    case 0xCE: MAP2(2, g64, s64, x + y);
    case 0xD1: MAP2(2, g64, s64, x - y);
    case 0xD5: MAP2(2, g64, s64, x * y);
    case 0xD6: CMP_LANES64(g64, uint64_t, x == y);
    case 0xD7: CMP_LANES64(g64, uint64_t, x != y);
    case 0xD8: CMP_LANES64(g64, int64_t, x < y);
    case 0xD9: CMP_LANES64(g64, int64_t, x > y);
    case 0xDA: CMP_LANES64(g64, int64_t, x <= y);
    case 0xDB: CMP_LANES64(g64, int64_t, x >= y);
    case 0xDC: case 0xDD: case 0xDE: case 0xDF: {
        unsigned off = (sub == 0xDD || sub == 0xDF) ? 2 : 0;
        for (unsigned i = 0; i < 2; i++) {
            uint32_t x = g32(&a, off + i), y = g32(&b, off + i);
            s64(&r, i, sub <= 0xDD ? (uint64_t)(sx32(x) * sx32(y)) : (uint64_t)x * y);
        }
        break;
    }
    /* f32x4 */
    case 0xE0: MAP1(4, g32, s32, (uint32_t)x & ~RI_F32_SIGN);
    case 0xE1: MAP1(4, g32, s32, (uint32_t)x ^ RI_F32_SIGN);
    case 0xE3: FMAP1(4, gf32, sf32, ri_f32_sqrt(x));
    case 0xE4: FMAP2(4, gf32, sf32, x + y);
    case 0xE5: FMAP2(4, gf32, sf32, x - y);
    case 0xE6: FMAP2(4, gf32, sf32, x * y);
    case 0xE7: FMAP2(4, gf32, sf32, x / y);
    case 0xE8: FMAP2(4, gf32, sf32, ri_f32_min(x, y));
    case 0xE9: FMAP2(4, gf32, sf32, ri_f32_max(x, y));
    case 0xEA: PMAP(4, gf32, sf32, f32_pmin(x, y));
    case 0xEB: PMAP(4, gf32, sf32, f32_pmax(x, y));
    /* f64x2 */
    case 0xEC: MAP1(2, g64, s64, x & ~RI_F64_SIGN);
    case 0xED: MAP1(2, g64, s64, x ^ RI_F64_SIGN);
    case 0xEF: FMAP1(2, gf64, sf64, ri_f64_sqrt(x));
    case 0xF0: FMAP2(2, gf64, sf64, x + y);
    case 0xF1: FMAP2(2, gf64, sf64, x - y);
    case 0xF2: FMAP2(2, gf64, sf64, x * y);
    case 0xF3: FMAP2(2, gf64, sf64, x / y);
    case 0xF4: FMAP2(2, gf64, sf64, ri_f64_min(x, y));
    case 0xF5: FMAP2(2, gf64, sf64, ri_f64_max(x, y));
    case 0xF6: PMAP(2, gf64, sf64, f64_pmin(x, y));
    case 0xF7: PMAP(2, gf64, sf64, f64_pmax(x, y));
    /* conversions */
    case 0xF8: for (unsigned i = 0; i < 4; i++) s32(&r, i, ri_i32_trunc_sat_f32_s(gf32(&a, i))); break;
    case 0xF9: for (unsigned i = 0; i < 4; i++) s32(&r, i, ri_i32_trunc_sat_f32_u(gf32(&a, i))); break;
    case 0xFA: for (unsigned i = 0; i < 4; i++) sf32(&r, i, ri_f32_convert_i32_s(g32(&a, i)), canon); break;
    case 0xFB: for (unsigned i = 0; i < 4; i++) sf32(&r, i, ri_f32_convert_i32_u(g32(&a, i)), canon); break;
    case 0xFC: for (unsigned i = 0; i < 2; i++) s32(&r, i, ri_i32_trunc_sat_f64_s(gf64(&a, i))); break;
    case 0xFD: for (unsigned i = 0; i < 2; i++) s32(&r, i, ri_i32_trunc_sat_f64_u(gf64(&a, i))); break;
    case 0xFE: for (unsigned i = 0; i < 2; i++) sf64(&r, i, ri_f64_convert_i32_s(g32(&a, i)), canon); break;
    case 0xFF: for (unsigned i = 0; i < 2; i++) sf64(&r, i, ri_f64_convert_i32_u(g32(&a, i)), canon); break;
    default: break;
    }
    memcpy(out, r.b, 16);
}

static uint32_t ld32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ri_simd_load(uint32_t sub, uint32_t lane, const uint8_t *mem, const uint8_t vec[16], uint8_t out[16]) {
    v128 r;
    memset(r.b, 0, 16);
    switch (sub) {
    case 0x00: memcpy(r.b, mem, 16); break;
    case 0x01: for (unsigned i = 0; i < 8; i++) s16(&r, i, (uint32_t)sx8(mem[i])); break;
    case 0x02: for (unsigned i = 0; i < 8; i++) s16(&r, i, mem[i]); break;
    case 0x03: for (unsigned i = 0; i < 4; i++) s32(&r, i, (uint32_t)sx16((uint16_t)(mem[2 * i] | mem[2 * i + 1] << 8))); break;
    case 0x04: for (unsigned i = 0; i < 4; i++) s32(&r, i, (uint32_t)(mem[2 * i] | mem[2 * i + 1] << 8)); break;
    case 0x05: for (unsigned i = 0; i < 2; i++) s64(&r, i, (uint64_t)sx32(ld32(mem + 4 * i))); break;
    case 0x06: for (unsigned i = 0; i < 2; i++) s64(&r, i, ld32(mem + 4 * i)); break;
    case 0x07: memset(r.b, mem[0], 16); break;
    case 0x08: for (unsigned i = 0; i < 8; i++) memcpy(r.b + 2 * i, mem, 2); break;
    case 0x09: for (unsigned i = 0; i < 4; i++) memcpy(r.b + 4 * i, mem, 4); break;
    case 0x0A: for (unsigned i = 0; i < 2; i++) memcpy(r.b + 8 * i, mem, 8); break;
    case 0x5C: memcpy(r.b, mem, 4); break;
    case 0x5D: memcpy(r.b, mem, 8); break;
    default: { /* load_lane 0x54..0x57 */
        uint32_t n = ri_simd_access_bytes(sub);
        memcpy(r.b, vec, 16);
        memcpy(r.b + (lane & (16 / n - 1)) * n, mem, n);
        break;
    }
    }
    memcpy(out, r.b, 16);
}

void ri_simd_store(uint32_t sub, uint32_t lane, uint8_t *mem, const uint8_t vec[16]) {
    uint32_t n = ri_simd_access_bytes(sub);
    if (sub == 0x0B) memcpy(mem, vec, 16);
    else memcpy(mem, vec + (lane & (16 / n - 1)) * n, n);
}

/* ---- the interpreter's side ---- */

static void get_v128(const ri_slot *fp, uint32_t slot, bool scalar, uint8_t out[16]) {
    ri_v128_from_u64s(out, fp[slot].i64, scalar ? 0 : fp[slot + 1].i64);
}

void ri_simd_run_op(ri_slot *fp, const uint32_t *pc, bool canon) {
    uint32_t w = pc[5], flags = w >> 16;
    uint8_t a[16], b[16], c[16], r[16];
    get_v128(fp, pc[2], (flags & RI_V128F_A_SCALAR) != 0, a);
    if (flags & RI_V128F_HAS_B) get_v128(fp, pc[3], (flags & RI_V128F_B_SCALAR) != 0, b);
    if (flags & RI_V128F_HAS_C) get_v128(fp, pc[4], false, c);
    ri_simd_apply(w & 0xFFu, (w >> 8) & 0xFFu, NULL, r, a, (flags & RI_V128F_HAS_B) ? b : NULL,
                  (flags & RI_V128F_HAS_C) ? c : NULL, canon);
    fp[pc[1]].i64 = ri_v128_u64(r);
    if (!(flags & RI_V128F_R_SCALAR)) fp[pc[1] + 1].i64 = ri_v128_u64(r + 8);
}
