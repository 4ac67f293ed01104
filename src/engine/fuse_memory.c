/*
 * The compiler's memory fusions (code.h, "Superinstructions"): the translation (compile.c)
 * calls fuse_load, fuse_load_pair and fuse_store, which apply the rules of fuse_rules.c (a
 * load or store joined with the address computation just before it, two loads or two
 * stores in a row, f64 arithmetic stored right away, read-modify-write, a += x * y), and
 * take_address_imm for the v128 accesses.
 */

#include "compile_internal.h"

/* Whether the instruction just before is the i32.add (or add of an immediate) whose only
 * reader is `addr`. */
static bool last_is_address_add(compiler *c, operand addr) {
    unpair(c);
    return fuse_on(c, RI_FUSE_ADDRESS) && addr.kind == ENTRY_SLOT && c->last.dst_pos && !c->failed &&
           c->last.pos != NO_POS && c->code[c->last.dst_pos] == addr.src &&
           (c->last.op == RI_CODE_I32_ADD || c->last.op == RI_CODE_I32_ADD_I);
}

/* For an access with an addend word (the v128 loads and v128.store): if `addr` is x + imm
 * computed just before, removes that add and returns x and imm (the caller lays out the
 * access, which is no fused operation of its own). */
bool take_address_imm(compiler *c, operand addr, uint32_t *x, uint32_t *imm) {
    if (!last_is_address_add(c, addr) || c->last.op != RI_CODE_I32_ADD_I) return false;
    *x = c->code[c->last.pos + 2];
    *imm = c->code[c->last.pos + 3];
    truncate_code(c, c->last.pos);
    return true;
}

/* A load of addr (as popped, not yet read) fused with what computed the address just
 * before (fuse_rules.c: an array element, a table lookup, an i32.add); true if it emitted
 * the load (and pushed its result). */
bool fuse_load(compiler *c, ri_code_op op, operand addr, uint32_t offset) {
    unpair(c);
    fuse_ctx x = {.site = FUSE_SITE_LOAD, .op = op, .a = addr, .b = {0, ENTRY_IMM, 0, 0}, .offset = offset};
    return fuse_by_rules(c, &x, NULL);
}

/* An i32 load from slot a right after another i32 load (fuse_rules.c, the memory-pair
 * family): one instruction; true if it emitted it. */
bool fuse_load_pair(compiler *c, ri_code_op op, uint32_t a, uint32_t offset) {
    fuse_ctx x = {.site = FUSE_SITE_LOAD_PAIR, .op = op, .a = {a, ENTRY_SLOT, 0, 0}, .b = {0, ENTRY_IMM, 0, 0},
                  .offset = offset};
    return fuse_by_rules(c, &x, NULL);
}

/* A store of v to addr (both as popped) fused with what computed the value or the address
 * just before (fuse_rules.c: f64 arithmetic stored right away, read-modify-write,
 * a += x * y; the address family; two stores in a row); true if it emitted the store. */
bool fuse_store(compiler *c, ri_code_op op, operand addr, operand v, uint32_t offset) {
    unpair(c);
    fuse_ctx x = {.site = FUSE_SITE_STORE, .op = op, .a = addr, .b = v, .offset = offset};
    return fuse_by_rules(c, &x, NULL);
}
