/*
 * The WebAssembly column of the operation table (code.h, "The WebAssembly column";
 * ri_code_wasm): every operation has its form, the form reads, every instruction it names
 * is a WebAssembly instruction (opcodes.h's and code_simd.h's lists), every operand it
 * refers to is an operand of the operation of that kind (ri_code_operands), every slot the
 * operation reads or writes and every offset and branch target is referred to, a result read
 * back was written before, ri_code_wasm_count counts the names, and a variant stands for
 * what its base stands for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/code_info.h"
#include "engine/opcodes.h"
#include "wasm_form.h"

/* The WebAssembly instructions, by opcodes.h's names (and the SIMD ones code_simd.h names). */
static const char *const wasm_names[] = {
#define RI_X_NAME(name, ...) #name,
    RI_SPECIAL_OPS(RI_X_NAME) RI_MEMORY_OPS(RI_X_NAME) RI_NUMERIC_OPS(RI_X_NAME) RI_SAT_OPS(RI_X_NAME)
    RI_FC_OPS(RI_X_NAME) RI_CODE_SIMD_LANE_OPS(RI_X_NAME)
#undef RI_X_NAME
    "I8X16_SHUFFLE", "V128_STORE",
};

static bool is_wasm_name(const char *name) {
    for (size_t i = 0; i < sizeof wasm_names / sizeof wasm_names[0]; i++)
        if (strcmp(wasm_names[i], name) == 0) return true;
    return false;
}

/* The operand kinds that a form must refer to when the operation has them: the slots it
 * reads and writes, memory offsets, branch targets. */
static bool must_refer(char kind) { return strchr("DSWVMO?", kind) != NULL; }

static void check_form(uint32_t op) {
    const char *name = ri_code_names[op], *form = ri_code_wasm(op), *kinds = ri_code_operands(op);
    if (!form) fail_msg("%s: no WebAssembly form", name);
    wf_form f;
    if (!wf_parse(form, &f)) fail_msg("%s: \"%s\" does not read: %s", name, form, f.error);
    if (ri_code_wasm_count(op) != wf_count_instructions(&f))
        fail_msg("%s: count %u, the form names %u", name, ri_code_wasm_count(op), wf_count_instructions(&f));
    bool referred[32] = {false}, written[32] = {false};
    for (uint32_t s = 0; s < f.nstmts; s++) {
        /* the statement's expression first: a result is written after its operands are read */
        uint32_t first = f.stmts[s].expr, last = s + 1 < f.nstmts ? f.stmts[s + 1].expr : f.nnodes;
        for (uint32_t i = first; i < last; i++) {
            const wf_node *n = &f.nodes[i];
            if (n->ref == 0 && n->name[0] && !is_wasm_name(n->name))
                fail_msg("%s: %s is no WebAssembly instruction", name, n->name);
            if (n->ref == 0 && n->name[0] == 0 && wf_kind_at(kinds, n->word) != 'I')
                fail_msg("%s: @I%u is no immediate operand", name, n->word);
            if (n->ref == 0) {
                if (n->name[0] == 0 && n->word < 32) referred[n->word] = true;
                continue;
            }
            if (n->word >= 32) fail_msg("%s: operand %u", name, n->word);
            referred[n->word] = true;
            if (n->ref == 'D' || n->ref == 'W') {
                if (!written[n->word]) fail_msg("%s: %c%u read before it is written", name, n->ref, n->word);
                continue;
            }
            char kind = wf_kind_at(kinds, n->word);
            if (kind != n->ref) fail_msg("%s: %c%u, but operand %u is of kind %c", name, n->ref, n->word, n->word, kind);
        }
        if (f.stmts[s].dst_kind) {
            uint32_t k = f.stmts[s].dst;
            char kind = k < 32 ? wf_kind_at(kinds, k) : 0;
            if (kind != f.stmts[s].dst_kind || !strchr("DW?", kind))
                fail_msg("%s: writes %c%u, but operand %u is of kind %c", name, f.stmts[s].dst_kind, k, k, kind);
            written[k] = referred[k] = true;
        }
    }
    if (!form[0]) return; /* no WebAssembly instruction of its own: nothing to refer to */
    for (uint32_t k = 1; k < 32 && wf_kind_at(kinds, k); k++)
        if (must_refer(wf_kind_at(kinds, k)) && !referred[k])
            fail_msg("%s: \"%s\" does not refer to operand %u (%c)", name, form, k, wf_kind_at(kinds, k));
}

static void test_every_operation_has_a_valid_form(void **state) {
    (void)state;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) check_form(op);
    assert_null(ri_code_wasm(RI_CODE_OP_COUNT));
}

static void test_variants_stand_for_their_base(void **state) {
    (void)state;
    uint32_t variants = 0;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) {
        uint32_t base = ri_code_infos[op].base;
        if (base == op) {
            if (!ri_code_wasm_forms[op]) fail_msg("%s: no entry in the column", ri_code_names[op]);
            continue;
        }
        variants++;
        if (ri_code_wasm_forms[op]) fail_msg("%s: a variant with a form of its own", ri_code_names[op]);
        assert_string_equal(ri_code_wasm(op), ri_code_wasm(base));
        assert_int_equal(ri_code_wasm_count(op), ri_code_wasm_count(base));
    }
    assert_true(variants > 0);
}

/* A few rows as the documentation shows them. */
static void test_examples(void **state) {
    (void)state;
    assert_string_equal(ri_code_wasm(RI_CODE_I32_ADD_I), "D1 = I32_ADD(S2, I3)");
    assert_string_equal(ri_code_wasm(RI_CODE_ADDBR_I32_LT_S_SI_BG), "D1 = I32_ADD(S2, S3); BR_IF(O5, I32_LT_S(D1, I4))");
    assert_string_equal(ri_code_wasm(RI_CODE_I32_LOAD_MSXI), "D1 = I32_LOAD(M6, I32_ADD(I32_SHL(I32_AND(S2, I3), I4), I5))");
    assert_int_equal(ri_code_wasm_count(RI_CODE_I32_LOAD_MSXI), 4);
    assert_int_equal(ri_code_wasm_count(RI_CODE_I32_STORE_2), 2);
    assert_int_equal(ri_code_wasm_count(RI_CODE_GAS), 0);
    assert_int_equal(ri_code_wasm_count(RI_CODE_MOVE), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_operation_has_a_valid_form),
        cmocka_unit_test(test_variants_stand_for_their_base),
        cmocka_unit_test(test_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
