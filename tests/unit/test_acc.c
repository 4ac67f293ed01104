/*
 * Accumulator variants (code.h, RI_CODE_ACC_OPS; compile.c, choose_acc_variants): an
 * instruction that reads the result of the one just before it takes it from a register.
 *
 * - Every variant computes what its base operation computes. Fixture tests/wat/acc.wat
 *   (written by tests/wat/acc_gen.py from code.h): for each variant V, acc_V feeds V's
 *   operands from the instruction just before, ref_V computes the same with another
 *   instruction in between. The compiled acc_V must contain V, ref_V must not,
 *   and both must return the same for inputs with zeroes, signs, NaNs and infinities,
 *   metered or not, with NaN canonicalisation on or off.
 * - The fused variants (I32_ADD_LX_A2, ...) must appear in acc_fused.wat, whose functions
 *   (SHA-256, CRC-32, ...; C source below) must return what native code returns, or in
 *   the fixtures of the other fusion tests.
 * - No variant reads the accumulator where a branch lands (acc_landing.wat): there the
 *   register holds whatever the branch's path left in it.
 * - A MOVE leaves its bits in acc, read for either of its slots.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "engine/code.h"
#include "engine/code_info.h"
#include "engine/module.h"
#include "engine/runtime.h"

/* ---- the fixture acc_fused.wat's C source (native reference) ---- */
/* BEGIN acc_fused.c */
typedef unsigned int u32;
typedef unsigned char u8;
#define EXPORT(name) static
#define RR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static const u32 K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
static u32 H[8];
static void compress(u32 h[8], const u8 *p) {
    u32 w[64];
    for (int i = 0; i < 16; i++) w[i] = (u32)p[4 * i] << 24 | (u32)p[4 * i + 1] << 16 | (u32)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        u32 s0 = RR(w[i - 15], 7) ^ RR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        u32 s1 = RR(w[i - 2], 17) ^ RR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    u32 a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        u32 s1 = RR(e, 6) ^ RR(e, 11) ^ RR(e, 25);
        u32 ch = (e & f) ^ (~e & g);
        u32 t1 = hh + s1 + ch + K[i] + w[i];
        u32 s0 = RR(a, 2) ^ RR(a, 13) ^ RR(a, 22);
        u32 maj = (a & b) ^ (a & c) ^ (b & c);
        u32 t2 = s0 + maj;
        hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}
static u8 msg[256];
EXPORT(sha) u32 sha(u32 seed, u32 blocks) {
    static const u32 init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    for (int i = 0; i < 8; i++) H[i] = init[i];
    if (blocks > 4) blocks = 4;
    for (u32 i = 0; i < 64 * blocks; i++) msg[i] = (u8)(seed * 31u + i * 7u);
    for (u32 k = 0; k < blocks; k++) compress(H, msg + 64 * k);
    return H[0] ^ H[3] ^ H[7];
}
static u32 crc_table[256];
EXPORT(crc) u32 crc(u32 seed, u32 n) {
    for (u32 i = 0; i < 256; i++) {
        u32 c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    if (n > 256) n = 256;
    for (u32 i = 0; i < n; i++) msg[i] = (u8)(seed + i * 13u);
    u32 c = 0xffffffffu;
    for (u32 i = 0; i < n; i++) c = crc_table[(c ^ msg[i]) & 0xff] ^ (c >> 8);
    return ~c;
}
static u32 keys[1024];
EXPORT(probe) u32 probe(u32 seed, u32 n) {
    for (u32 i = 0; i < 1024; i++) keys[i] = 0;
    if (n > 700) n = 700;
    u32 hits = 0, x = seed;
    for (u32 i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        u32 key = x | 1;
        u32 idx = (key * 2654435761u) >> 22;
        while (keys[idx] != 0 && keys[idx] != key) idx = (idx + 1) & 1023;
        if (keys[idx] == key) hits++;
        keys[idx] = key;
    }
    u32 sum = hits;
    for (u32 i = 0; i < 1024; i++) sum = sum * 31u + keys[i];
    return sum;
}
EXPORT(bytesum) u32 bytesum(u32 seed, u32 n) {
    if (n > 250) n = 250;
    for (u32 i = 0; i < 256; i++) msg[i] = (u8)(seed * 17u + i * i);
    u32 s = 0;
    for (u32 i = 0; i < n; i++) s = s + msg[i] + msg[i + 1] + msg[i + 2] + msg[i + 3];
    return s;
}
static int lut[64];
EXPORT(lookup) u32 lookup(u32 seed, u32 n) {
    for (int i = 0; i < 64; i++) lut[i] = (int)(seed ^ (u32)(i * 0x9e3779b9u));
    u32 s = 0, x = seed;
    for (u32 i = 0; i < n; i++) { x = x * 69069u + 1; s += (u32)lut[x >> 26] + (u32)lut[(x >> 10) & 63]; }
    return s;
}
/* END acc_fused.c */
#undef RR
#undef EXPORT

typedef struct variant {
    const char *name;
    ri_code_op op;
} variant;

static const variant variants[] = {
#define RI_X_ACC(v, base, words, mask, cls) {#v, RI_CODE_##v},
    RI_CODE_ACC_OPS(RI_X_ACC)
#undef RI_X_ACC
};
#define NVARIANTS (sizeof variants / sizeof variants[0])

/* The compiled body of export `name`, or NULL. */
static const ri_code *export_code(engine_fixture *fx, const char *name, ri_func **func) {
    ri_extern ext;
    if (!ri_instance_export(fx->instance, name, &ext) || ext.kind != RI_EXTERN_FUNC) return NULL;
    if (func) *func = ext.of.func;
    return ext.of.func->code;
}

/* Whether the code has an instruction with handler `op` (walking the instruction
 * starts, so that an operand word never counts). */
static uint32_t words_of(const ri_code *code, uint32_t pos);
static bool has_op(const ri_code *code, ri_code_op op) {
    const int32_t *table = ri_interp_dispatch_table();
    for (uint32_t pos = 0; pos < code->nwords; pos += words_of(code, pos))
        if ((int32_t)code->words[pos] == table[op]) return true;
    return false;
}

/* The operation whose handler word is w (RI_CODE_OP_COUNT if none). */
static ri_code_op op_of(uint32_t w) {
    const int32_t *table = ri_interp_dispatch_table();
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++)
        if (table[op] == (int32_t)w) return (ri_code_op)op;
    return RI_CODE_OP_COUNT;
}

/* The size in words of the instruction at pos (code_info.h; any word that is no
 * operation's handler fails the test, so that no walk skips an instruction). */
static uint32_t words_of(const ri_code *code, uint32_t pos) {
    ri_code_op op = op_of(code->words[pos]);
    if (op == RI_CODE_OP_COUNT) {
        fail_msg("function %u: no operation at %u", code->func_index, pos);
        return 1;
    }
    if (op == RI_CODE_ENTRY) return 5 + 2 * code->words[pos + 4];
    uint32_t n = ri_code_words(op);
    return n ? n : 3 + code->words[pos + 2] + 1; /* br_table: index, count, count + 1 offsets */
}

static ri_val f32v(float f) { ri_val v; v.type = RI_F32; v.of.i64 = 0; memcpy(&v.of.f32_bits, &f, 4); return v; }
static ri_val f64v(double d) { ri_val v; v.type = RI_F64; memcpy(&v.of.f64_bits, &d, 8); return v; }

/* Inputs: (i32, i32, i64, i64, f32, f32, f64, f64). */
typedef struct input { uint32_t a, b; uint64_t c, d; float e, f; double g, h; } input;
static const input inputs[] = {
    {0, 0, 0, 0, 0.0f, 0.0f, 0.0, 0.0},
    {7, 3, 7, 3, 2.25f, -1.5f, 2.25, -1.5},
    {0xFFFFFFFFu, 31, UINT64_MAX, 63, 1e30f, 1e-30f, 1e300, 1e-300},
    {0x80000000u, 0x12345678u, 0x8000000000000000ull, 0x123456789ABCDEFull, -4.0f, 3.0f, -4.0, 3.0},
    {12345, 0xFFFFFFF0u, 987654321987ull, 5, INFINITY, -INFINITY, INFINITY, -INFINITY},
    {999, 1, 1, 2, NAN, 0.5f, NAN, 0.5},
};

static uint64_t call(engine_fixture *fx, ri_func *func, const input *in) {
    ri_val args[8] = {ri_val_i32((int32_t)in->a), ri_val_i32((int32_t)in->b), ri_val_i64((int64_t)in->c),
                      ri_val_i64((int64_t)in->d), f32v(in->e), f32v(in->f), f64v(in->g), f64v(in->h)};
    ri_val out[1];
    ri_error err;
    ri_errcode rc = ri_func_call(fx->store, func, args, 8, out, 1, &err);
    if (rc != RI_OK) fail_msg("call failed: %s", err.message);
    return (uint64_t)out[0].of.i64;
}

static void check_variants(bool unmetered, bool canon) {
    engine_fixture fx;
    ri_store_config cfg = ri_store_config_default();
    cfg.canonicalize_nans = canon;
    engine_fixture_open_with(&fx, "acc", unmetered, &cfg);
    uint32_t tested = 0;
    for (size_t i = 0; i < NVARIANTS; i++) {
        char name[96];
        ri_func *acc_f = NULL, *ref_f = NULL;
        snprintf(name, sizeof name, "acc_%s", variants[i].name);
        const ri_code *acc = export_code(&fx, name, &acc_f);
        snprintf(name, sizeof name, "ref_%s", variants[i].name);
        const ri_code *ref = export_code(&fx, name, &ref_f);
        if (!acc && !ref) continue; /* a fused variant: see test_fused_variants_occur */
        assert_non_null(acc);
        assert_non_null(ref);
        if (!has_op(acc, variants[i].op)) fail_msg("acc_%s does not use %s", variants[i].name, variants[i].name);
        if (has_op(ref, variants[i].op)) fail_msg("ref_%s uses %s", variants[i].name, variants[i].name);
        for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
            uint64_t want = call(&fx, ref_f, &inputs[k]), got = call(&fx, acc_f, &inputs[k]);
            if (want != got)
                fail_msg("%s, input %zu: %#llx, want %#llx", variants[i].name, k, (unsigned long long)got,
                         (unsigned long long)want);
        }
        tested++;
    }
    assert_true(tested >= 90); /* the generic variants: all but the fused ones */
    engine_fixture_close(&fx);
}

static void test_variants_match_their_base(void **state) {
    (void)state;
    check_variants(false, true);
    check_variants(true, true);
    check_variants(false, false);
}

/* The variants acc.wat does not test (fused operations) occur in acc_fused.wat (checked
 * against native code below) or in the fixtures of the fusion tests, which compare their
 * functions with native code or hand-computed values. */
static const char *const fused_fixtures[] = {"acc_fused", "fusion", "index_load", "load_branch"};

static bool occurs_in(const ri_module *m, ri_code_op op) {
    const int32_t *table = ri_interp_dispatch_table();
    for (uint32_t f = 0; f < m->nbodies; f++) {
        const ri_code *code = m->codes[f];
        /* (any word: the fused operations' sizes are not in words_of) */
        for (uint32_t w = 0; w < code->nwords; w++)
            if ((int32_t)code->words[w] == table[op]) return true;
    }
    return false;
}

static void test_fused_variants_occur(void **state) {
    (void)state;
    engine_fixture acc, others[sizeof fused_fixtures / sizeof fused_fixtures[0]];
    engine_fixture_open(&acc, "acc", false);
    for (size_t k = 0; k < sizeof fused_fixtures / sizeof fused_fixtures[0]; k++)
        engine_fixture_open(&others[k], fused_fixtures[k], false);
    uint32_t missing = 0;
    for (size_t i = 0; i < NVARIANTS; i++) {
        char name[96];
        snprintf(name, sizeof name, "acc_%s", variants[i].name);
        if (export_code(&acc, name, NULL)) continue;
        bool found = false;
        for (size_t k = 0; k < sizeof fused_fixtures / sizeof fused_fixtures[0] && !found; k++)
            found = occurs_in(others[k].module, variants[i].op);
        if (!found) {
            print_error("%s is tested by no fixture\n", variants[i].name);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
    for (size_t k = 0; k < sizeof fused_fixtures / sizeof fused_fixtures[0]; k++) engine_fixture_close(&others[k]);
    engine_fixture_close(&acc);
}

/* acc_fused.wat's functions return what the native build of the same C returns. */
static void test_fused_match_native(void **state) {
    (void)state;
    static const struct { const char *name; u32 (*native)(u32, u32); } fns[] = {
        {"sha", sha}, {"crc", crc}, {"probe", probe}, {"bytesum", bytesum}, {"lookup", lookup}};
    for (int mode = 0; mode < 2; mode++) {
        engine_fixture fx;
        engine_fixture_open(&fx, "acc_fused", mode == 1);
        for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
            ri_func *f = NULL;
            assert_non_null(export_code(&fx, fns[i].name, &f));
            for (u32 seed = 0; seed < 3; seed++) {
                u32 n = seed == 0 ? 1 : 200 + seed * 300;
                ri_val args[2] = {ri_val_i32((int32_t)(seed * 0x9e3779b9u)), ri_val_i32((int32_t)n)}, out[1];
                ri_error err;
                assert_int_equal(ri_func_call(fx.store, f, args, 2, out, 1, &err), RI_OK);
                u32 want = fns[i].native(seed * 0x9e3779b9u, n);
                if ((u32)out[0].of.i32 != want)
                    fail_msg("%s(%u, %u): %#x, native %#x", fns[i].name, seed, n, (u32)out[0].of.i32, want);
            }
        }
        engine_fixture_close(&fx);
    }
}

/* acc_landing.wat: `landing` has a producer, then a label some branch targets, then an
 * instruction reading the producer's slot; `straight` the same without the branch. */
static void check_landing(bool unmetered) {
    engine_fixture fx;
    engine_fixture_open(&fx, "acc_landing", unmetered);
    ri_func *landing = NULL, *straight = NULL;
    const ri_code *lc = export_code(&fx, "landing", &landing);
    const ri_code *sc = export_code(&fx, "straight", &straight);
    assert_non_null(lc);
    assert_non_null(sc);
    /* the same shape without a label gets the variant, so the label is what prevents it */
    assert_true(has_op(sc, RI_CODE_I32_ADD_I_A2));
    assert_false(has_op(lc, RI_CODE_I32_ADD_I_A2));
    for (int32_t p = 0; p < 3; p++) {
        ri_val args[1] = {ri_val_i32(p)}, out[1];
        ri_error err;
        assert_int_equal(ri_func_call(fx.store, landing, args, 1, out, 1, &err), RI_OK);
        assert_int_equal(out[0].of.i32, p ? 5 + 7 : 5 * 3 + 7);
        assert_int_equal(ri_func_call(fx.store, straight, args, 1, out, 1, &err), RI_OK);
        assert_int_equal(out[0].of.i32, (p + 5) * 3 + 7);
    }
    engine_fixture_close(&fx);
}

static void test_no_accumulator_where_a_branch_lands(void **state) {
    (void)state;
    check_landing(false);
    check_landing(true);
}

/* acc_landing.wat's move_*: a MOVE leaves the bits it moved in acc, where both of its
 * slots can be read from. */
static void test_moves_produce(void **state) {
    (void)state;
    static const struct { const char *name; ri_code_op variant; int sign; } fns[] = {
        {"move_dst", RI_CODE_I32_SUB_A2, 1}, {"move_src", RI_CODE_I32_SUB_A3, -1}, {"move2_dst", RI_CODE_I32_SUB_A2, -1}};
    for (int mode = 0; mode < 2; mode++) {
        engine_fixture fx;
        engine_fixture_open(&fx, "acc_landing", mode == 1);
        for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
            ri_func *f = NULL;
            const ri_code *code = export_code(&fx, fns[i].name, &f);
            assert_non_null(code);
            if (!has_op(code, fns[i].variant)) fail_msg("%s does not read the MOVE's accumulator", fns[i].name);
            ri_val args[2] = {ri_val_i32(1000), ri_val_i32(37)}, out[1];
            ri_error err;
            assert_int_equal(ri_func_call(fx.store, f, args, 2, out, 1, &err), RI_OK);
            assert_int_equal(out[0].of.i32, fns[i].sign * (1000 - 37));
        }
        engine_fixture_close(&fx);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variants_match_their_base),
        cmocka_unit_test(test_fused_variants_occur),
        cmocka_unit_test(test_fused_match_native),
        cmocka_unit_test(test_no_accumulator_where_a_branch_lands),
        cmocka_unit_test(test_moves_produce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
