/*
 * The pair fusions (fuse_rules.c's rules, made from code.h's RI_CODE_PAIR_OPS and
 * RI_CODE_IPAIR_OPS) compute what their unfused sequence computes: for every rule,
 * pair.wat (written by tests/wat/pair_gen.py from the same lists) has fused_F, which the
 * compiler fuses into F, and ref_F, the same with a call between the two operations. Both
 * run on inputs chosen to reach the corners (zero, sign bit, all ones, shift counts past 31),
 * metered and unmetered, and must agree; F must occur in the compiled module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/code.h"
#include "engine/module.h"
#include "engine_fixture.h"

static const struct rule {
    const char *name;
    ri_code_op op;
} rules[] = {
#define RI_X_PAIR(o, i) {"I32_" #o "_" #i, RI_CODE_I32_##o##_##i}, {"I32_" #o "_" #i "_I", RI_CODE_I32_##o##_##i##_I},
    RI_CODE_PAIR_OPS(RI_X_PAIR)
#undef RI_X_PAIR
#define RI_X_IPAIR(o, i) {"I32_" #o "I_" #i "I", RI_CODE_I32_##o##I_##i##I},
    RI_CODE_IPAIR_OPS(RI_X_IPAIR)
#undef RI_X_IPAIR
};

static const uint32_t inputs[][3] = {
    {0, 0, 0}, {1, 2, 3}, {0xFFFFFFFFu, 0x80000000u, 31}, {0x80000000u, 0xFFFFFFFFu, 32},
    {12345, 0x12345678u, 0xFFFFFFF0u}, {0x7FFFFFFFu, 7, 33}, {999, 0xDEADBEEFu, 1},
};

static bool occurs_in(const ri_module *m, ri_code_op op) {
    const int32_t *table = ri_interp_dispatch_table();
    for (uint32_t f = 0; f < m->nbodies; f++)
        for (uint32_t w = 0; w < m->codes[f]->nwords; w++)
            if ((int32_t)m->codes[f]->words[w] == table[op]) return true;
    return false;
}

static ri_func *export_func(engine_fixture *fx, const char *prefix, const char *name) {
    char full[96];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    ri_extern ext;
    if (!ri_instance_export(fx->instance, full, &ext) || ext.kind != RI_EXTERN_FUNC) fail_msg("no export %s", full);
    return ext.of.func;
}

static uint32_t call3(engine_fixture *fx, ri_func *f, const uint32_t in[3]) {
    ri_val args[3] = {ri_val_i32((int32_t)in[0]), ri_val_i32((int32_t)in[1]), ri_val_i32((int32_t)in[2])}, out[1];
    ri_error err;
    if (ri_func_call(fx->store, f, args, 3, out, 1, &err) != RI_OK) fail_msg("call failed: %s", err.message);
    return (uint32_t)out[0].of.i32;
}

static void test_pairs_match_their_sequence(void **state) {
    (void)state;
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        engine_fixture fx;
        engine_fixture_open(&fx, "pair", unmetered);
        for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
            if (!occurs_in(fx.module, rules[r].op)) fail_msg("%s: not emitted for fused_%s", rules[r].name, rules[r].name);
            ri_func *fused = export_func(&fx, "fused_", rules[r].name), *ref = export_func(&fx, "ref_", rules[r].name);
            for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
                uint32_t want = call3(&fx, ref, inputs[k]), got = call3(&fx, fused, inputs[k]);
                if (want != got) fail_msg("%s, input %zu: %#x, want %#x", rules[r].name, k, got, want);
            }
        }
        engine_fixture_close(&fx);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pairs_match_their_sequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
