/*
 * The compiler's operand rewrites give the results of the plain operations: a constant
 * operand becomes an immediate, an identity (0 + x, x * 1, -1 & x, x << 0, ...) becomes no
 * code, a constant first operand of a commutative operation or a compare is swapped to
 * second (the compare mirrored). Fixture: operands.wat, written at build time by
 * tests/wat/gen/operands.py: each case k_C (the constant in place) must return what r_C
 * (the constant read from a local, which no rewrite touches) returns, or trap as it does,
 * for inputs around the edges, metered or not.
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

static ri_func *export_func(engine_fixture *fx, const char *name) {
    ri_extern ext;
    if (!ri_instance_export(fx->instance, name, &ext) || ext.kind != RI_EXTERN_FUNC) return NULL;
    return ext.of.func;
}

/* The call's result, or a trap as the text "trap: <code>". */
static void call(engine_fixture *fx, ri_func *f, uint32_t x, char *out, size_t cap) {
    ri_val args[1] = {ri_val_i32((int32_t)x)};
    ri_val res[1];
    ri_error err;
    ri_errcode rc = ri_func_call(fx->store, f, args, 1, res, 1, &err);
    if (rc == RI_OK) snprintf(out, cap, "%#llx", (unsigned long long)res[0].of.i64);
    else snprintf(out, cap, "trap: %d", (int)rc);
}

static const uint32_t inputs[] = {0, 1, 2, 7, 31, 32, 63, 0x80000000u, 0xffffffffu, 12345, 0xfc, 0x1f8};

static void check_all(bool unmetered) {
    engine_fixture fx;
    engine_fixture_open(&fx, "operands", unmetered);
    uint32_t cases = 0, failures = 0;
    static const char *const types[] = {"i32", "i64"};
    static const char *const ops[] = {"add", "sub", "mul", "and", "or", "xor", "shl", "shr_s", "shr_u",
                                      "rotl", "rotr", "eq", "ne", "lt_s", "lt_u", "gt_s", "gt_u", "le_s",
                                      "le_u", "ge_s", "ge_u", "div_s", "div_u", "rem_s", "rem_u"};
    static const char *const producers[] = {"clz", "add", "load"};
    static const char *const sides[] = {"kx", "xk"};
    for (size_t t = 0; t < 2; t++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (unsigned k = 0;; k++) {
                char name[96];
                snprintf(name, sizeof name, "k_%s_%s_%u_clz_kx", types[t], ops[o], k);
                if (!export_func(&fx, name)) break;
                for (size_t p = 0; p < 3; p++)
                    for (size_t s = 0; s < 2; s++) {
                        snprintf(name, sizeof name, "%s_%s_%u_%s_%s", types[t], ops[o], k, producers[p], sides[s]);
                        char kn[100], rn[100];
                        snprintf(kn, sizeof kn, "k_%s", name);
                        snprintf(rn, sizeof rn, "r_%s", name);
                        ri_func *kf = export_func(&fx, kn), *rf = export_func(&fx, rn);
                        assert_non_null(kf);
                        assert_non_null(rf);
                        for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
                            char want[64], got[64];
                            call(&fx, rf, inputs[i], want, sizeof want);
                            call(&fx, kf, inputs[i], got, sizeof got);
                            if (strcmp(want, got) != 0 && failures++ < 20)
                                print_error("%s (%s) x=%#x: %s, want %s\n", name,
                                            unmetered ? "unmetered" : "metered", inputs[i], got, want);
                        }
                        cases++;
                    }
            }
    assert_true(cases >= 2500);
    if (failures) fail_msg("%u of %u cases x inputs differ", failures, cases);
    engine_fixture_close(&fx);
}

static void test_rewrites_metered(void **state) {
    (void)state;
    check_all(false);
}

static void test_rewrites_unmetered(void **state) {
    (void)state;
    check_all(true);
}

/* The module that showed the bug: the identity constant first, the other operand
 * computed; a slot written earlier in the call (g) or by an earlier call held the
 * answer returned. */
static void test_identity_first_operand(void **state) {
    (void)state;
    engine_fixture fx;
    engine_fixture_open(&fx, "identity_first", false);
    static const struct { const char *name; uint64_t want; } cases[] = {
        {"f", 32}, {"g", 32}, {"h", 64}, {"m", 3}, {"f", 32}, {"h", 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ri_func *f = export_func(&fx, cases[i].name);
        assert_non_null(f);
        ri_val args[1] = {ri_val_i32(0)};
        ri_val res[1];
        ri_error err;
        assert_int_equal(ri_func_call(fx.store, f, args, 1, res, 1, &err), RI_OK);
        uint64_t got = res[0].type == RI_I32 ? (uint32_t)res[0].of.i32 : (uint64_t)res[0].of.i64;
        if (got != cases[i].want)
            fail_msg("%s(0) = %llu, want %llu", cases[i].name, (unsigned long long)got,
                     (unsigned long long)cases[i].want);
    }
    engine_fixture_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_first_operand),
        cmocka_unit_test(test_rewrites_metered),
        cmocka_unit_test(test_rewrites_unmetered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
