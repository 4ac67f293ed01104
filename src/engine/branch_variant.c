/*
 * The compiler's branch-variant pass (code.h, "Metering"): once a body is compiled, each
 * branch whose target is a GAS or LOOP charge, and whose fall-through is a GAS, becomes
 * the variant that executes those charges itself; a br_table whose targets all are, its _G
 * (or unmetered _BU) form. Nothing moves, so stop points stay exact.
 */
#include "compile_internal.h"

/* ---- branch variants --------------------------------------------------------------------- */

static bool is_call(uint32_t op) { return (ri_code_flags(op) & RI_OPF_CALL) != 0; }

static uint32_t call_words(uint32_t op) { return ri_code_words(op); }

/* The code position that the branch offset in word `word` points at, or UINT32_MAX when
 * it points outside the code. */
uint32_t branch_target(const compiler *c, uint32_t word) {
    int64_t target = (int64_t)word + (int32_t)c->code[word];
    return target >= 0 && target < c->len ? (uint32_t)target : UINT32_MAX;
}

/* The variant of the br_table at pos (code.h): BR_TABLE_G when every target is a GAS or
 * LOOP (metered), BR_TABLE_BU when every target is a LOOP_U (unmetered), else plain. */
static ri_code_op br_table_variant(const compiler *c, uint32_t pos) {
    uint32_t count = c->code[pos + 2];
    for (uint32_t i = 0; i <= count; i++) {
        uint32_t target = branch_target(c, pos + 3 + i);
        uint32_t at = target != UINT32_MAX ? c->opmap[target] : NO_OP;
        if (c->metered ? at != RI_CODE_GAS && at != RI_CODE_LOOP : at != RI_CODE_LOOP_U) return RI_CODE_BR_TABLE;
    }
    return c->metered ? RI_CODE_BR_TABLE_G : RI_CODE_BR_TABLE_BU;
}

/* Picks each branch's variant (code.h): the charges at its target and after it are
 * executed by the branch itself when they are the GAS / LOOP the variant expects. (The
 * compiler's jumps list every branch, br_table and call.) */
void choose_branch_variants(compiler *c) {
    if (c->failed) return;
    for (uint32_t j = 0; j < c->njumps; j++) {
        uint32_t pos = c->jumps[j];
        uint32_t op = c->opmap[pos];
        if (op == RI_CODE_BR_TABLE) {
            c->code[pos] = (uint32_t)c->dispatch[br_table_variant(c, pos)];
            continue;
        }
        uint32_t n = branch_words(op);
        if (is_call(op) && (pos + call_words(op) >= c->len || c->opmap[pos + call_words(op)] != RI_CODE_GAS)) {
            fail(c, RI_ERR_INVALID, "internal error: a call without its GAS");
            return;
        }
        if (n == 0) continue;
        uint32_t target = branch_target(c, pos + n - 1);
        if (target == UINT32_MAX) continue;
        uint32_t at_target = c->opmap[target];
        uint32_t after = pos + n < c->len ? c->opmap[pos + n] : NO_OP;
        uint32_t variant = 0;
        if (c->metered) {
            bool then_gas = op == RI_CODE_BR || after == RI_CODE_GAS; /* br never falls through */
            if (then_gas && at_target == RI_CODE_GAS) variant = RI_BRANCH_FG;
            else if (then_gas && at_target == RI_CODE_LOOP) variant = RI_BRANCH_BG;
        } else if (at_target == RI_CODE_LOOP_U) {
            variant = RI_BRANCH_BU;
        }
        if (variant) c->code[pos] = (uint32_t)c->dispatch[op + variant];
    }
}
