/*
 * The compiler's accumulator pass (code.h, RI_CODE_ACC_OPS): each instruction that reads
 * the result of the one just before it, left in the interpreter's acc / facc register,
 * becomes the variant that reads the register, unless a branch lands between them.
 */
#include <string.h>

#include "compile_internal.h"

/* ---- accumulator variants (code.h, RI_CODE_ACC_OPS) -------------------------------------- */

enum { ACC_NONE = RI_ACC_NONE, ACC_INT = RI_ACC_INT, ACC_F64 = RI_ACC_F64 };

/* Which accumulator holds the value the instruction at pos wrote to its operand 1, and
 * the slots holding it (code_info.h: the table's RI_OPF_ACC_* flags, which list the
 * operations whose handler writes operand 1 through PUT_U32/U64/F32 (ACC_INT) or PUT_F64
 * (ACC_F64) and writes no slot after it; the reinterprets copy slots raw and are not). */
static int acc_produced(const compiler *c, uint32_t pos, uint32_t op, uint32_t slots[2]) {
    return ri_code_acc_produced(c->code, pos, op, slots);
}

static const struct acc_variant {
    uint16_t base, variant;
    uint16_t mask; /* operand positions read from the accumulator */
    uint8_t cls;   /* ACC_INT / ACC_F64 */
} acc_variants[] = {
#define RI_X_ACC(variant, base, words, mask, cls) {RI_CODE_##base, RI_CODE_##variant, mask, ACC_##cls},
    RI_CODE_ACC_OPS(RI_X_ACC)
#undef RI_X_ACC
};

static void mark_landing(const compiler *c, uint8_t *landing, uint32_t target) {
    landing[target] = 1;
    uint32_t at = c->opmap[target];
    if ((at == RI_CODE_GAS || at == RI_CODE_LOOP || at == RI_CODE_LOOP_U) && target + 2 < c->len)
        landing[target + 2] = 1;
}

/* Marks in `landing` every code position a branch can continue at: its target, and
 * the instruction after the target when that is a GAS / LOOP / LOOP_U (which the fused
 * variants skip). Calls return after their GAS, and stopped runs resume at stop points,
 * whose instructions produce nothing (so what follows them never reads an accumulator). */
static void mark_landings(const compiler *c, uint8_t *landing) {
    for (uint32_t j = 0; j < c->njumps; j++) { /* (every branch is among the jumps) */
        uint32_t pos = c->jumps[j];
        uint32_t op = c->opmap[pos];
        uint32_t first = 0, count = 0;
        if (op == RI_CODE_BR_TABLE) {
            first = pos + 3;
            count = c->code[pos + 2] + 1;
        } else if (branch_words(op)) {
            first = pos + branch_words(op) - 1;
            count = 1;
        }
        for (uint32_t word = first; word < first + count; word++) {
            uint32_t target = branch_target(c, word);
            if (target == UINT32_MAX) continue;
            mark_landing(c, landing, target);
        }
    }
    /* a try_table clause continues at its label's branch target (in unmetered code, whatever
     * instruction follows the block's end) */
    for (uint32_t k = 0; k < c->ncatches; k++)
        if (c->catches[k].table && c->catches[k].target < c->len) mark_landing(c, landing, c->catches[k].target);
}

/* Turns each instruction that reads the result of the one just before it into its
 * accumulator variant (code.h, RI_CODE_ACC_OPS), unless a branch lands on it. (Without
 * memory for the landing map, grow_array has failed the compilation.) */
void choose_acc_variants(compiler *c) {
    if (c->failed || c->len == 0) return;
    if (!grow_array(c, (void **)&c->landing, &c->landing_cap, c->len, 1)) return;
    uint8_t *landing = c->landing;
    memset(landing, 0, c->len);
    mark_landings(c, landing);
    uint32_t prev = UINT32_MAX;
    for (uint32_t pos = 0; pos < c->len; pos++) {
        uint32_t op = c->opmap[pos];
        if (op == NO_OP) continue;
        uint32_t slots[2];
        int cls = prev != UINT32_MAX && !landing[pos] && c->acc_head[op] ? acc_produced(c, prev, c->opmap[prev], slots)
                                                                         : ACC_NONE;
        prev = pos;
        if (cls == ACC_NONE) continue;
        /* the variant of op reading the most operands from that accumulator */
        const struct acc_variant *best = NULL;
        for (uint32_t i = c->acc_head[op]; i; i = c->acc_next[i - 1]) {
            const struct acc_variant *v = &acc_variants[i - 1];
            if (v->cls != cls) continue;
            bool all = true;
            for (uint32_t rest = v->mask & 0xFFFEu; rest && all; rest &= rest - 1) { /* operands 1..15 */
                uint32_t k = (uint32_t)__builtin_ctz(rest);
                all = pos + k < c->len && (c->code[pos + k] == slots[0] || c->code[pos + k] == slots[1]);
            }
            if (all && (!best || __builtin_popcount(v->mask) > __builtin_popcount(best->mask))) best = v;
        }
        if (best) c->code[pos] = (uint32_t)c->dispatch[best->variant];
    }
}

/* Links each operation's accumulator variants (compiler.acc_head, acc_next). */
void index_acc_variants(compiler *c) {
    for (uint32_t i = RI_CODE_ACC_COUNT; i-- > 0;) {
        c->acc_next[i] = c->acc_head[acc_variants[i].base];
        c->acc_head[acc_variants[i].base] = (uint8_t)(i + 1);
    }
}
