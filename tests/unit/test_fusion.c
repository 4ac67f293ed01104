/*
 * The compiler's fused instructions (code.h, "Superinstructions") compute what their
 * parts computed. Fixture: tests/wat/fusion.wat, compiled by clang-19 from the C code
 * below (the part between the markers), which this test also runs natively: every
 * export must return what the native build returns, metered or not, with NaN
 * canonicalisation on or off. The code is shaped so that the fusions apply: the int
 * pairs (sha), the f64 load sunk into F64_*_LA and
 * F64_*_MM_M*(_P) (bodies), F64_AXPY_XI_P (matmul), I32_LOAD2 (compare), a byte-fill loop
 * (mark_at), I32_ADD_RET (fib); the fused loads and stores must still trap out of bounds,
 * after the effects before them.
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

/* ---- the fixture's C source (native reference) ---- */
typedef uint32_t u32;
#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static u32 w[64];
static u32 st[8];
static u32 sha(u32 seed, u32 rounds) {
    for (int i = 0; i < 16; i++) w[i] = seed * (u32)(i + 1) + 0x9e3779b9u * (u32)i;
    for (int i = 16; i < 64; i++) {
        u32 s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        u32 s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    u32 a = 0x6a09e667, b = 0xbb67ae85, c = 0x3c6ef372, d = 0xa54ff53a;
    u32 e = 0x510e527f, f = 0x9b05688c, g = 0x1f83d9ab, h = 0x5be0cd19;
    for (u32 r = 0; r < rounds; r++) {
        for (int i = 0; i < 64; i++) {
            u32 S1 = ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25);
            u32 ch = (e & f) ^ (~e & g);
            u32 t1 = h + S1 + ch + w[i] + (u32)i * 0x428a2f98u;
            u32 S0 = ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22);
            u32 maj = (a & b) ^ (a & c) ^ (b & c);
            u32 t2 = S0 + maj;
            h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
    }
    st[0] = a; st[1] = b; st[2] = c; st[3] = d; st[4] = e; st[5] = f; st[6] = g; st[7] = h;
    return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
}
typedef struct { double x, y, z, vx, vy, vz, m; } body;
static body bs[4];
static u32 bodies(u32 k, u32 steps) {
    for (int i = 0; i < 4; i++) {
        bs[i].x = (double)(k + (u32)i * 3); bs[i].y = (double)i - 1.5; bs[i].z = 0.25 * i;
        bs[i].vx = bs[i].vy = bs[i].vz = 0; bs[i].m = 1.0 + (double)i;
    }
    for (u32 s = 0; s < steps; s++) {
        for (int i = 0; i < 4; i++) {
            body *bi = &bs[i];
            for (int j = i + 1; j < 4; j++) {
                body *bj = &bs[j];
                double dx = bi->x - bj->x, dy = bi->y - bj->y, dz = bi->z - bj->z;
                double d2 = dx * dx + dy * dy + dz * dz;
                double mag = 0.01 / (d2 * __builtin_sqrt(d2));
                bi->vx -= dx * bj->m * mag; bi->vy -= dy * bj->m * mag; bi->vz -= dz * bj->m * mag;
                bj->vx += dx * bi->m * mag; bj->vy += dy * bi->m * mag; bj->vz += dz * bi->m * mag;
            }
        }
        for (int i = 0; i < 4; i++) { bs[i].x += 0.01 * bs[i].vx; bs[i].y += 0.01 * bs[i].vy; bs[i].z += 0.01 * bs[i].vz; }
    }
    double sum = 0;
    for (int i = 0; i < 4; i++) sum += bs[i].x + bs[i].y + bs[i].z + bs[i].vx + bs[i].vy + bs[i].vz;
    return (u32)(int)(sum * 1e6);
}
static double ma[64 * 64], mb[64 * 64], mc[64 * 64];
static u32 matmul(u32 n, u32 seed) {
    if (n > 64) n = 64;
    for (u32 i = 0; i < n * n; i++) { ma[i] = (double)((seed + i) % 13) - 6; mb[i] = (double)((seed * 7 + i) % 11) - 5; mc[i] = 0; }
    for (u32 i = 0; i < n; i++)
        for (u32 k = 0; k < n; k++) {
            double a = ma[i * n + k];
            for (u32 j = 0; j < n; j++) mc[i * n + j] += a * mb[k * n + j];
        }
    double s = 0;
    for (u32 i = 0; i < n * n; i++) s += mc[i] * (double)(i % 7 + 1);
    return (u32)(int)s;
}
static int cmp3_s(int32_t x, int32_t y) { return (x > y) - (x < y); }
static int cmp3_u(u32 x, u32 y) { return (x > y) - (x < y); }
static unsigned char flags[4096];
static u32 mark(u32 start, u32 n, u32 step) {
    if (n >= 4096) n = 4095;
    for (u32 i = 0; i <= n; i++) flags[i] = 1;
    for (u32 j = start; j <= n; j += step) flags[j] = 0;
    u32 count = 0;
    for (u32 i = 0; i <= n; i++) count = count * 3 + flags[i];
    return count;
}
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
/* ---- end of the fixture's source (compare() reads two i32s at wasm addresses, mark_at(base,
 * n, step) clears every step-th byte of [base, base + n] in the wasm memory) ---- */

typedef engine_fixture fixture;

static void fixture_open(fixture *fx, bool unmetered, bool canon) {
    ri_store_config cfg = ri_store_config_default();
    cfg.canonicalize_nans = canon;
    engine_fixture_open_with(fx, "fusion", unmetered, &cfg);
}

static void fixture_close(fixture *fx) { engine_fixture_close(fx); }

static ri_errcode call3(fixture *fx, const char *name, u32 a, u32 b, u32 c, uint32_t nargs, u32 *result, ri_error *err) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, name, &ext));
    assert_int_equal(ext.kind, RI_EXTERN_FUNC);
    ri_val in[3] = {ri_val_i32((int32_t)a), ri_val_i32((int32_t)b), ri_val_i32((int32_t)c)};
    ri_val out[1];
    ri_errcode rc = ri_func_call(fx->store, ext.of.func, in, nargs, out, 1, err);
    if (rc == RI_OK) *result = (u32)out[0].of.i32;
    return rc;
}

static u32 call_ok(fixture *fx, const char *name, u32 a, u32 b) {
    ri_error err;
    u32 r = 0;
    ri_errcode rc = call3(fx, name, a, b, 0, 2, &r, &err);
    if (rc != RI_OK) fail_msg("%s(%u, %u): %s", name, a, b, err.message);
    return r;
}

/* Every configuration: metered or not, NaN canonicalisation on or off. */
#define FOR_EACH_CONFIG(fx) \
    for (int cfg_ = 0; cfg_ < 4; cfg_++) \
        for (fixture fx, *once_ = (fixture_open(&fx, cfg_ & 1, (cfg_ & 2) != 0), &fx); once_; once_ = NULL, fixture_close(&fx))

static void test_sha_rounds_match_native(void **state) {
    (void)state;
    static const u32 cases[][2] = {{0, 1}, {1, 1}, {0xdeadbeef, 3}, {12345, 7}};
    FOR_EACH_CONFIG(fx) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            assert_int_equal(call_ok(&fx, "sha", cases[i][0], cases[i][1]), sha(cases[i][0], cases[i][1]));
    }
}

static void test_body_updates_match_native(void **state) {
    (void)state;
    FOR_EACH_CONFIG(fx) {
        for (u32 k = 0; k < 3; k++)
            assert_int_equal(call_ok(&fx, "bodies", k, 50 + k), bodies(k, 50 + k));
    }
}

static void test_daxpy_matches_native(void **state) {
    (void)state;
    FOR_EACH_CONFIG(fx) {
        assert_int_equal(call_ok(&fx, "matmul", 1, 3), matmul(1, 3));
        assert_int_equal(call_ok(&fx, "matmul", 17, 5), matmul(17, 5)); /* odd: the unrolled loop's tail */
        assert_int_equal(call_ok(&fx, "matmul", 64, 9), matmul(64, 9));
    }
}

/* compare(which, pa, pb): the comparator's two loads and three-way compare. */
static void test_comparator_matches_native(void **state) {
    (void)state;
    static const u32 values[] = {0, 1, 2, 0x7fffffff, 0x80000000u, 0xffffffffu, 12345};
    const size_t n = sizeof values / sizeof values[0];
    FOR_EACH_CONFIG(fx) {
        ri_memory *mem = NULL;
        ri_extern ext;
        assert_true(ri_instance_export(fx.instance, "memory", &ext));
        mem = ext.of.memory;
        for (size_t i = 0; i < n; i++) assert_true(ri_memory_write(mem, 64 + 4 * i, &values[i], 4));
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                u32 pa = 64 + 4 * (u32)i, pb = 64 + 4 * (u32)j, r = 99;
                ri_error err;
                assert_int_equal(call3(&fx, "compare", 0, pa, pb, 3, &r, &err), RI_OK);
                assert_int_equal((int32_t)r, cmp3_s((int32_t)values[i], (int32_t)values[j]));
                assert_int_equal(call3(&fx, "compare", 1, pa, pb, 3, &r, &err), RI_OK);
                assert_int_equal((int32_t)r, cmp3_u(values[i], values[j]));
            }
    }
}

/* Either load of the fused comparator out of bounds traps, as the loads did. */
static void test_comparator_loads_trap_out_of_bounds(void **state) {
    (void)state;
    FOR_EACH_CONFIG(fx) {
        ri_extern ext;
        assert_true(ri_instance_export(fx.instance, "memory", &ext));
        u32 size = (u32)ri_memory_size(ext.of.memory);
        static const u32 which[] = {0, 1};
        for (size_t k = 0; k < 2; k++) {
            const u32 bad[][2] = {{size - 2, 64}, {64, size - 2}, {size, size}, {0xfffffffcu, 64}};
            for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                ri_error err;
                u32 r = 0;
                assert_int_equal(call3(&fx, "compare", which[k], bad[i][0], bad[i][1], 3, &r, &err), RI_ERR_TRAP);
                assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
            }
            u32 r = 7;
            ri_error err;
            assert_int_equal(call3(&fx, "compare", which[k], size - 4, size - 4, 3, &r, &err), RI_OK); /* the last word */
            assert_int_equal(r, 0);
        }
    }
}

static void test_mark_and_fib_match_native(void **state) {
    (void)state;
    FOR_EACH_CONFIG(fx) {
        static const u32 cases[][3] = {{4, 1000, 4}, {9, 4095, 9}, {0, 10, 1}};
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            ri_error err;
            u32 r = 0;
            assert_int_equal(call3(&fx, "mark", cases[i][0], cases[i][1], cases[i][2], 3, &r, &err), RI_OK);
            assert_int_equal(r, mark(cases[i][0], cases[i][1], cases[i][2]));
        }
        for (u32 n = 0; n < 12; n++) {
            ri_error err;
            u32 r = 0;
            assert_int_equal(call3(&fx, "fib", n, 0, 0, 1, &r, &err), RI_OK);
            assert_int_equal(r, (u32)fib((int)n));
        }
    }
}

/* The byte-fill loop (a store and the loop counter): every step-th byte cleared, the
 * others kept; out of bounds, the bytes before the trapping one are cleared. */
static void test_fill_loop_stores_then_traps(void **state) {
    (void)state;
    FOR_EACH_CONFIG(fx) {
        ri_extern ext;
        assert_true(ri_instance_export(fx.instance, "memory", &ext));
        ri_memory *mem = ext.of.memory;
        uint8_t ones[200], got[200];
        memset(ones, 1, sizeof ones);
        assert_true(ri_memory_write(mem, 60000, ones, sizeof ones));
        ri_error err;
        u32 r = 0;
        assert_int_equal(call3(&fx, "mark_at", 60000, 150, 7, 3, &r, &err), RI_OK);
        assert_true(ri_memory_read(mem, 60000, got, sizeof got));
        for (u32 i = 0; i < sizeof got; i++) assert_int_equal(got[i], i <= 150 && i % 7 == 0 ? 0 : 1);
        u32 size = (u32)ri_memory_size(mem);
        assert_true(ri_memory_write(mem, size - 16, ones, 16));
        assert_int_equal(call3(&fx, "mark_at", size - 10, 20, 3, 3, &r, &err), RI_ERR_TRAP);
        assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
        assert_true(ri_memory_read(mem, size - 16, got, 16));
        for (u32 i = 0; i < 16; i++) assert_int_equal(got[i], i >= 6 && (i - 6) % 3 == 0 ? 0 : 1);
    }
}

/* Metered: the fused code charges a fixed amount per round, and the same run twice
 * charges the same (the rounds loop is straight-line code plus its back-edge). */
static void test_fused_code_gas_is_linear(void **state) {
    (void)state;
    fixture fx;
    fixture_open(&fx, false, true);
    uint64_t used[4];
    for (u32 r = 1; r <= 3; r++) {
        ri_store_set_gas(fx.store, 1000000000);
        (void)call_ok(&fx, "sha", 5, r);
        used[r] = 1000000000 - ri_store_gas(fx.store);
    }
    ri_store_set_gas(fx.store, 1000000000);
    (void)call_ok(&fx, "sha", 5, 3);
    assert_int_equal(1000000000 - ri_store_gas(fx.store), used[3]);
    assert_true(used[2] > used[1]);
    assert_int_equal(used[3] - used[2], used[2] - used[1]);
    fixture_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha_rounds_match_native),
        cmocka_unit_test(test_body_updates_match_native),
        cmocka_unit_test(test_daxpy_matches_native),
        cmocka_unit_test(test_comparator_matches_native),
        cmocka_unit_test(test_comparator_loads_trap_out_of_bounds),
        cmocka_unit_test(test_mark_and_fib_match_native),
        cmocka_unit_test(test_fill_loop_stores_then_traps),
        cmocka_unit_test(test_fused_code_gas_is_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
