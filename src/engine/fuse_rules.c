/*
 * The compiler's fusion rules as data (code.h, "Superinstructions"), and the one matcher
 * and emitter that apply them. A rule says: when the translation is about to emit
 * operation `outer` at a site (a binary operation, an operation with an immediate, a
 * load, a second load, a store, a conditional branch, a return), and the last instruction
 * emitted (and where needed the one or two before it) is what the rule names, read as the
 * rule says, and its family is on, then those instructions and the new one become `fused`,
 * whose operand words the rule lists (word sources), with the absorbed instructions' stop
 * points moved into it. Rules are tried in table order, first match wins: a more specific
 * rule comes before the general one it refines (`a += x * y` with its address before
 * `a += x * y` before read-modify-write). The fusions that are no such rewrite stay code (constants as immediates, taking
 * a compare into its branch, sink_f64_load's reordering, unpair's split):
 * docs/ARCHITECTURE.md, "Fusion rules".
 */
#include <string.h>

#include "compile_internal.h"

/* ---- word sources ---------------------------------------------------------------------- */

/* Where each operand word of the fused instruction (and each value a check compares)
 * comes from. */
enum {
    W_END,    /* no more words */
    W_DST,    /* the result: the new top entry's own slot */
    W_OTHER,  /* the operand that is not the last instruction's result (its slot) */
    W_A,      /* operand a's slot (a load's or store's address; a branch's first word) */
    W_B,      /* operand b's slot (a store's value; a branch's second word) */
    W_SRC,    /* fuse_ctx.src: operand a's slot as the caller resolved it */
    W_IMM,    /* operand b's constant, 32 bits (an operation with an immediate) */
    W_OFFSET, /* the memory access's offset */
    W_VALUE,  /* the stored value's slot, resolved once the absorbed instructions are gone
               * (an immediate value becomes a constant emitted there) */
    W_ZERO,   /* 0 (a branch's offset, which the caller patches; a limit or an immediate of 0) */
};
#define W_L(k) (0x10 | (k)) /* operand word k of the last instruction (1: its first) */
#define W_P(k) (0x20 | (k)) /* of the one before it */
#define W_Q(k) (0x30 | (k)) /* of the one before that */
#define W_SHIFT 0x40        /* modifier: the word & 31 (a shift count, as i32.shl takes it) */

/* Checks on words (word sources as above), all of which must hold. */
enum {
    C_NONE,
    C_EQ,          /* x == y */
    C_NE,          /* x != y */
    C_TEMP,        /* x is a temporary of the operand stack (only what follows reads it) */
    C_PREV_WRITES, /* the instruction before the last wrote slot x (W_OTHER: an entry in its slot) */
};

/* How the last instruction's result feeds the new one. */
enum {
    FROM_NONE,   /* it need not (instructions in a row) */
    FROM_EITHER, /* operand b, else operand a (commutative outer); the other is W_OTHER */
    FROM_A,      /* operand a (and not b); b is W_OTHER */
    FROM_B,      /* operand b; a is W_OTHER */
};

enum {
    F_NOIMM_A = 1 << 0,   /* operand a is not an immediate */
    F_NOIMM_B = 1 << 1,   /* operand b is not an immediate */
    F_ADJ_LAST = 1 << 2,  /* the last instruction ends where the new one would begin */
    F_PREV = 1 << 3,      /* the instruction before the last is `prev`, and is absorbed too */
    F_ADJ_PREV = 1 << 4,  /* it ends where the last begins */
    F_PREV2 = 1 << 5,     /* the one before that is `prev2`, absorbed too, */
    F_ADJ_PREV2 = 1 << 6, /* ending where `prev` begins */
    F_RESULT = 1 << 7,    /* the fused instruction's result (word 1) is pushed */
    F_RESULT2 = 1 << 8,   /* a pair's second result (word 4) is pushed */
};

/* A point's place in the fused instruction, + 1 (0: none). */
#define AT(k) ((k) + 1)

typedef struct fuse_check {
    uint8_t kind, x, y;
} fuse_check;

typedef struct fuse_rule {
    uint8_t site;                 /* fuse_site */
    uint8_t from;                 /* FROM_* */
    uint16_t flags;               /* F_* */
    uint16_t outer, last, prev, prev2, fused;
    uint16_t gates;               /* the RI_FUSE_* families that must be on */
    uint8_t last_point;           /* AT(k): the last instruction's stop point moves to k */
    uint8_t prev_point;           /* the same for the one before it */
    uint8_t trap_point;           /* AT(k): a new trap point at k, */
    uint8_t trap_height;          /* operand stack height c->h + this */
    fuse_check checks[5];
    uint8_t words[RI_FUSE_RULE_WORDS]; /* the operand words, W_END-terminated */
} fuse_rule;

#define OP(name) RI_CODE_##name

/* ---- the rules -------------------------------------------------------------------------- */

/* Arithmetic, in slots: FPAIR (code.h RI_CODE_FPAIR_OPS), f64 arithmetic on the result of
 * the f64 arithmetic just before: _A when it was operand a, _B when b. */
#define R_FPAIR(o, i) \
    {.site = FUSE_SITE_BINARY, .outer = OP(F64_##o), .last = OP(F64_##i), .fused = OP(F64_##o##_##i##_A), \
     .gates = RI_FUSE_FLOAT_PAIR, .from = FROM_A, .flags = F_NOIMM_A | F_NOIMM_B | F_RESULT, \
     .words = {W_DST, W_OTHER, W_L(2), W_L(3)}}, \
    {.site = FUSE_SITE_BINARY, .outer = OP(F64_##o), .last = OP(F64_##i), .fused = OP(F64_##o##_##i##_B), \
     .gates = RI_FUSE_FLOAT_PAIR, .from = FROM_B, .flags = F_NOIMM_A | F_NOIMM_B | F_RESULT, \
     .words = {W_DST, W_OTHER, W_L(2), W_L(3)}},

/* RI_CODE_FMEM_OPS: f64 arithmetic on the value loaded just before (F64_LOAD: _LA/_LB,
 * F64_LOAD_XI: _LXA/_LXB); the load's stop point becomes the fused instruction's. */
#define R_FMEM_LOAD(name, load, side, fused_op, ...) \
    {.site = FUSE_SITE_BINARY, .outer = OP(name), .last = OP(load), .fused = OP(fused_op), \
     .gates = RI_FUSE_FLOAT_MEMORY, .from = side, .flags = F_NOIMM_A | F_NOIMM_B | F_RESULT, \
     .last_point = AT(0), .words = {W_DST, W_OTHER, __VA_ARGS__}},
#define R_FMEM_LOADS(name) \
    R_FMEM_LOAD(name, F64_LOAD, FROM_B, name##_LB, W_L(2), W_L(3)) \
    R_FMEM_LOAD(name, F64_LOAD, FROM_A, name##_LA, W_L(2), W_L(3)) \
    R_FMEM_LOAD(name, F64_LOAD_XI, FROM_B, name##_LXB, W_L(2), W_L(3), W_L(4)) \
    R_FMEM_LOAD(name, F64_LOAD_XI, FROM_A, name##_LXA, W_L(2), W_L(3), W_L(4))

/* RI_CODE_ADD_LOAD_OPS: i32.add of a value loaded just before (its address words follow
 * the addend; the load's stop point moves). */
#define R_ADD_LOAD(load, fused_op, ...) \
    {.site = FUSE_SITE_BINARY, .outer = OP(I32_ADD), .last = OP(load), .fused = OP(fused_op), \
     .gates = RI_FUSE_INT_PAIR, .from = FROM_EITHER, .flags = F_NOIMM_A | F_NOIMM_B | F_RESULT, \
     .last_point = AT(0), .words = {W_DST, W_OTHER, __VA_ARGS__}},

/* RI_CODE_PAIR_OPS: I32_<OUTER> on I32_<INNER> or its _I form. */
#define R_PAIR1(o, i, fused_op) \
    {.site = FUSE_SITE_BINARY, .outer = OP(I32_##o), .last = OP(i), .fused = OP(fused_op), \
     .gates = RI_FUSE_INT_PAIR, .from = FROM_EITHER, .flags = F_NOIMM_A | F_NOIMM_B | F_RESULT, \
     .words = {W_DST, W_OTHER, W_L(2), W_L(3)}},
#define R_PAIR(o, i) R_PAIR1(o, I32_##i, I32_##o##_##i) R_PAIR1(o, I32_##i##_I, I32_##o##_##i##_I)

/* RI_CODE_IPAIR_OPS: I32_<OUTER>_I on the result of I32_<INNER>_I. */
#define R_IPAIR(o, i) \
    {.site = FUSE_SITE_IMM, .outer = OP(I32_##o##_I), .last = OP(I32_##i##_I), .fused = OP(I32_##o##I_##i##I), \
     .gates = RI_FUSE_INT_IMM_PAIR, .from = FROM_A, .flags = F_RESULT, \
     .words = {W_DST, W_L(2), W_L(3), W_IMM}},

/* RI_CODE_ADDR_OPS: a load or store whose address is the i32.add (of an immediate: _XI)
 * just before; the access's trap point is the fused instruction's. */
#define R_ADDR_LOAD1(name, add, fused_op) \
    {.site = FUSE_SITE_LOAD, .outer = OP(name), .last = OP(add), .fused = OP(fused_op), \
     .gates = RI_FUSE_ADDRESS, .from = FROM_A, .flags = F_RESULT, .trap_point = AT(0), .trap_height = 1, \
     .words = {W_DST, W_L(2), W_L(3), W_OFFSET}},
#define R_ADDR_LOAD(name) R_ADDR_LOAD1(name, I32_ADD, name##_X) R_ADDR_LOAD1(name, I32_ADD_I, name##_XI)
#define R_ADDR_STORE1(name, add, fused_op) \
    {.site = FUSE_SITE_STORE, .outer = OP(name), .last = OP(add), .fused = OP(fused_op), \
     .gates = RI_FUSE_ADDRESS, .from = FROM_A, .trap_point = AT(0), .trap_height = 2, \
     .words = {W_L(2), W_L(3), W_VALUE, W_OFFSET}},
#define R_ADDR_STORE(name) R_ADDR_STORE1(name, I32_ADD, name##_X) R_ADDR_STORE1(name, I32_ADD_I, name##_XI)

/* RI_CODE_FMEM_OPS: f64 arithmetic stored right away (_S). */
#define R_FMEM_STORE(name) \
    {.site = FUSE_SITE_STORE, .outer = OP(F64_STORE), .last = OP(name), .fused = OP(name##_S), \
     .gates = RI_FUSE_FLOAT_MEMORY, .from = FROM_B, .flags = F_NOIMM_A, .trap_point = AT(0), .trap_height = 2, \
     .words = {W_A, W_L(2), W_L(3), W_OFFSET}},

/* Read-modify-write: x = load [addr + offset] op y (_LA / _LB), then a store of x to the
 * same place. Only the load can trap (the store goes to the same bytes): its stop point
 * stays, the fused instruction's. RMW_BASE is what every such rule checks. */
#define RMW_BASE(l, fused_op) \
    .site = FUSE_SITE_STORE, .outer = OP(F64_STORE), .last = OP(l), .fused = OP(fused_op), \
    .gates = RI_FUSE_FLOAT_MEMORY, .from = FROM_B
#define RMW_SAME_PLACE {C_EQ, W_L(3), W_A}, {C_EQ, W_L(4), W_OFFSET}
/* the products (x * y) * b computed just before, into the operand the load's arithmetic
 * read (mem op= (x * y) * b); _P: with the address computed before them (k = x + imm,
 * kept in k) */
#define R_RMW_MM(l, fused_op) \
    {RMW_BASE(l, fused_op##_P), .prev = OP(F64_MUL_MUL_A), .prev2 = OP(I32_ADD_I), \
     .flags = F_NOIMM_A | F_PREV | F_PREV2 | F_ADJ_PREV2, .last_point = AT(0), \
     .checks = {RMW_SAME_PLACE, {C_PREV_WRITES, W_L(2), W_END}, {C_EQ, W_Q(1), W_A}}, \
     .words = {W_A, W_Q(2), W_Q(3), W_P(2), W_P(3), W_P(4), W_OFFSET}},
#define R_RMW_MM2(l, fused_op) \
    {RMW_BASE(l, fused_op), .prev = OP(F64_MUL_MUL_A), .flags = F_NOIMM_A | F_PREV, .last_point = AT(0), \
     .checks = {RMW_SAME_PLACE, {C_PREV_WRITES, W_L(2), W_END}}, .words = {W_A, W_P(2), W_P(3), W_P(4), W_OFFSET}},
#define R_RMW(name) \
    {RMW_BASE(name##_LA, name##_MA), .flags = F_NOIMM_A, .last_point = AT(0), .checks = {RMW_SAME_PLACE}, .words = {W_A, W_L(2), W_OFFSET}}, \
    {RMW_BASE(name##_LB, name##_MB), .flags = F_NOIMM_A, .last_point = AT(0), .checks = {RMW_SAME_PLACE}, .words = {W_A, W_L(2), W_OFFSET}},

/* RI_CODE_STORE2_OPS: two stores of a kind in a row; the second's trap point at + 3. */
#define R_STORE2(name) \
    {.site = FUSE_SITE_STORE, .outer = OP(name), .last = OP(name), .fused = OP(name##_2), \
     .gates = RI_FUSE_MEMORY_PAIR, .flags = F_NOIMM_A | F_NOIMM_B | F_ADJ_LAST, .last_point = AT(0), \
     .trap_point = AT(3), .trap_height = 2, .words = {W_L(1), W_L(2), W_L(3), W_A, W_B, W_OFFSET}},

/* RI_CODE_LOADBR_OPS: a conditional branch on the i32 loaded just before, the load's
 * stop point the fused instruction's: the loaded value d, the load's address words (a
 * plain load's imm is 0), then what d is compared with (a branch on d itself: with 0). */
#define R_LOADBR1(load, bop, fused_op, value, limit, imm, off) \
    {.site = FUSE_SITE_BRANCH, .outer = OP(bop), .last = OP(load), .fused = OP(fused_op), \
     .gates = RI_FUSE_LOAD_BRANCH, .flags = F_ADJ_LAST, .last_point = AT(0), .checks = {{C_EQ, value, W_L(1)}}, \
     .words = {W_L(1), W_L(2), imm, off, limit, W_ZERO}},
#define R_LOADBR_OF(load, name, imm, off) \
    R_LOADBR1(load, BR_IF_I32_EQ, name##_BR_EQ_S, W_A, W_B, imm, off) \
    R_LOADBR1(load, BR_IF_I32_EQ, name##_BR_EQ_S, W_B, W_A, imm, off) /* ==, != are symmetric */ \
    R_LOADBR1(load, BR_IF_I32_NE, name##_BR_NE_S, W_A, W_B, imm, off) \
    R_LOADBR1(load, BR_IF_I32_NE, name##_BR_NE_S, W_B, W_A, imm, off) \
    R_LOADBR1(load, BR_IF_I32_EQ_I, name##_BR_EQ_I, W_A, W_B, imm, off) \
    R_LOADBR1(load, BR_IF_I32_NE_I, name##_BR_NE_I, W_A, W_B, imm, off) \
    R_LOADBR1(load, BR_IFNOT, name##_BR_EQ_I, W_A, W_ZERO, imm, off) \
    R_LOADBR1(load, BR_IF, name##_BR_NE_I, W_A, W_ZERO, imm, off)
#define R_LOADBR(name) R_LOADBR_OF(name, name, W_ZERO, W_L(3)) R_LOADBR_OF(name##_XI, name, W_L(3), W_L(4))

/* RI_CODE_ADDBR_CMPS: a conditional branch on the sum k = x + step of the i32.add just
 * before (a loop counter): ADDBR_<cmp>_<step kind><limit kind> (k, x, step, limit);
 * br_if / br_ifnot on k itself test k != 0 / k == 0. For RI_CODE_LOOPFUSE_CMPS also with
 * the MOVE (MADDBR_*) or the I32_ADD_I2 (I2ADDBR_*) just before the add, words first. */
#define ADDBR_WORDS(limit) W_L(1), W_L(2), W_L(3), limit, W_ZERO
#define R_ADDBR_PLAIN(bop, add, fused_op, limit) \
    {.site = FUSE_SITE_BRANCH, .outer = OP(bop), .last = OP(add), .fused = OP(ADDBR_##fused_op), \
     .gates = RI_FUSE_COUNTER_BRANCH, .checks = {{C_EQ, W_L(1), W_A}}, .words = {ADDBR_WORDS(limit)}},
#define R_ADDBR_MOVE(bop, add, fused_op, limit) \
    {.site = FUSE_SITE_BRANCH, .outer = OP(bop), .last = OP(add), .prev = OP(MOVE), .fused = OP(MADDBR_##fused_op), \
     .gates = RI_FUSE_COUNTER_BRANCH, .flags = F_PREV | F_ADJ_PREV, .checks = {{C_EQ, W_L(1), W_A}}, \
     .words = {W_P(1), W_P(2), ADDBR_WORDS(limit)}},
#define R_ADDBR_I2(bop, add, fused_op, limit) \
    {.site = FUSE_SITE_BRANCH, .outer = OP(bop), .last = OP(add), .prev = OP(I32_ADD_I2), \
     .fused = OP(I2ADDBR_##fused_op), .gates = RI_FUSE_COUNTER_BRANCH, .flags = F_PREV | F_ADJ_PREV, \
     .checks = {{C_EQ, W_L(1), W_A}}, \
     .words = {W_P(1), W_P(2), W_P(3), W_P(4), W_P(5), W_P(6), ADDBR_WORDS(limit)}},
/* the four kinds of compare cmp (R: one of the above) */
#define R_ADDBR_KINDS(R, cmp) \
    R(BR_IF_##cmp, I32_ADD, cmp##_SS, W_B) R(BR_IF_##cmp, I32_ADD_I, cmp##_IS, W_B) \
    R(BR_IF_##cmp##_I, I32_ADD, cmp##_SI, W_B) R(BR_IF_##cmp##_I, I32_ADD_I, cmp##_II, W_B)
/* br_if (k != 0), br_ifnot (k == 0) */
#define R_ADDBR_ZERO(R, bop, cmp) R(bop, I32_ADD, cmp##_SI, W_ZERO) R(bop, I32_ADD_I, cmp##_II, W_ZERO)
#define R_ADDBR(cmp) R_ADDBR_KINDS(R_ADDBR_PLAIN, cmp)
#define R_LOOPFUSE(cmp) R_ADDBR_KINDS(R_ADDBR_MOVE, cmp) R_ADDBR_KINDS(R_ADDBR_I2, cmp)

static const fuse_rule rules[] = {
    /* ---- binary operations, both operands in slots (fuse_binary) ---- */
    RI_CODE_FPAIR_OPS(R_FPAIR)
    RI_CODE_FMEM_OPS(R_FMEM_LOADS)
    R_ADD_LOAD(I32_LOAD, I32_ADD_L, W_L(2), W_L(3))
    R_ADD_LOAD(I32_LOAD_X, I32_ADD_LX, W_L(2), W_L(3), W_L(4))
    R_ADD_LOAD(I32_LOAD_XI, I32_ADD_LXI, W_L(2), W_L(3), W_L(4))
    R_ADD_LOAD(I32_LOAD8_U, I32_ADD_L8U, W_L(2), W_L(3))
    R_ADD_LOAD(I32_LOAD8_U_X, I32_ADD_LX8U, W_L(2), W_L(3), W_L(4))
    R_ADD_LOAD(I32_LOAD8_U_XI, I32_ADD_LXI8U, W_L(2), W_L(3), W_L(4))
    RI_CODE_PAIR_OPS(R_PAIR)

    /* ---- an operation with an immediate (fuse_binary) ---- */
    RI_CODE_IPAIR_OPS(R_IPAIR)
    /* two additions of constants in a row (loop counters, pointers), dependent or not */
    {.site = FUSE_SITE_IMM, .outer = OP(I32_ADD_I), .last = OP(I32_ADD_I), .fused = OP(I32_ADD_I2),
     .gates = RI_FUSE_INT_IMM_PAIR, .flags = F_ADJ_LAST | F_RESULT2,
     .words = {W_L(1), W_L(2), W_L(3), W_DST, W_SRC, W_IMM}},

    /* ---- loads (fuse_load, fuse_load_pair) ---- */
    /* an array element: the address a + (x << k) or (x << k) + base, computed just before */
    {.site = FUSE_SITE_LOAD, .outer = OP(I32_LOAD), .last = OP(I32_ADD_SHL_I), .fused = OP(I32_LOAD_SX),
     .gates = RI_FUSE_ADDRESS, .from = FROM_A, .flags = F_ADJ_LAST | F_RESULT, .trap_point = AT(0), .trap_height = 1,
     .words = {W_DST, W_L(2), W_L(3), W_L(4) | W_SHIFT, W_OFFSET}},
    {.site = FUSE_SITE_LOAD, .outer = OP(I32_LOAD), .last = OP(I32_ADDI_SHLI), .fused = OP(I32_LOAD_SXI),
     .gates = RI_FUSE_ADDRESS, .from = FROM_A, .flags = F_ADJ_LAST | F_RESULT, .trap_point = AT(0), .trap_height = 1,
     .words = {W_DST, W_L(2), W_L(3) | W_SHIFT, W_L(4), W_OFFSET}},
    /* a table lookup: the index ((v & mask) << k) computed just before the address's add,
     * into a temporary that only the add read */
    {.site = FUSE_SITE_LOAD, .outer = OP(I32_LOAD), .last = OP(I32_ADD_I), .prev = OP(I32_SHLI_ANDI),
     .fused = OP(I32_LOAD_MSXI), .gates = RI_FUSE_ADDRESS, .from = FROM_A,
     .flags = F_PREV | F_ADJ_PREV | F_RESULT, .trap_point = AT(0), .trap_height = 1,
     .checks = {{C_PREV_WRITES, W_L(2), W_END}, {C_TEMP, W_L(2), W_END}},
     .words = {W_DST, W_P(2), W_P(3), W_P(4) | W_SHIFT, W_L(3), W_OFFSET}},
    RI_CODE_ADDR_LOAD_OPS(R_ADDR_LOAD)
    /* two i32 loads in a row: the second's trap point at + 3 */
    {.site = FUSE_SITE_LOAD_PAIR, .outer = OP(I32_LOAD), .last = OP(I32_LOAD), .fused = OP(I32_LOAD2),
     .gates = RI_FUSE_MEMORY_PAIR, .flags = F_ADJ_LAST | F_RESULT2, .last_point = AT(0), .trap_point = AT(3),
     .trap_height = 1, .words = {W_L(1), W_L(2), W_L(3), W_DST, W_A, W_OFFSET}},

    /* ---- stores (fuse_store) ---- */
    RI_CODE_FMEM_OPS(R_FMEM_STORE)
    /* mem[p] = a * mem[q] + mem[p] (a += x * y): the multiplication's load keeps the first
     * stop point, the addition's goes to + 3; _XI_P: p computed just before (k = x + imm) */
    {RMW_BASE(F64_ADD_LB, F64_AXPY_XI_P), .prev = OP(F64_MUL_LXB), .prev2 = OP(I32_ADD_I),
     .flags = F_NOIMM_A | F_PREV | F_PREV2 | F_ADJ_PREV2, .last_point = AT(3), .prev_point = AT(0),
     .checks = {RMW_SAME_PLACE, {C_PREV_WRITES, W_L(2), W_END}, {C_EQ, W_Q(1), W_A}},
     .words = {W_A, W_Q(2), W_Q(3), W_OFFSET, W_P(2), W_P(3), W_P(4), W_P(5)}},
    {RMW_BASE(F64_ADD_LB, F64_AXPY_XI), .prev = OP(F64_MUL_LXB), .flags = F_NOIMM_A | F_PREV,
     .last_point = AT(3), .prev_point = AT(0), .checks = {RMW_SAME_PLACE, {C_PREV_WRITES, W_L(2), W_END}},
     .words = {W_A, W_OFFSET, W_P(2), W_P(3), W_P(4), W_P(5)}},
    {RMW_BASE(F64_ADD_LB, F64_AXPY), .prev = OP(F64_MUL_LB), .flags = F_NOIMM_A | F_PREV,
     .last_point = AT(3), .prev_point = AT(0), .checks = {RMW_SAME_PLACE, {C_PREV_WRITES, W_L(2), W_END}},
     .words = {W_A, W_OFFSET, W_P(2), W_P(3), W_P(4)}},
    R_RMW_MM(F64_ADD_LA, F64_ADD_MM_MA) R_RMW_MM(F64_ADD_LB, F64_ADD_MM_MB)
    R_RMW_MM(F64_SUB_LA, F64_SUB_MM_MA) R_RMW_MM(F64_SUB_LB, F64_SUB_MM_MB)
    R_RMW_MM2(F64_ADD_LA, F64_ADD_MM_MA) R_RMW_MM2(F64_ADD_LB, F64_ADD_MM_MB)
    R_RMW_MM2(F64_SUB_LA, F64_SUB_MM_MA) R_RMW_MM2(F64_SUB_LB, F64_SUB_MM_MB)
    RI_CODE_FMEM_OPS(R_RMW)
    RI_CODE_ADDR_STORE_OPS(R_ADDR_STORE)
    RI_CODE_STORE2_OPS(R_STORE2)

    /* ---- conditional branches (emit_cond_branch): loads, then loop counters ---- */
    RI_CODE_LOADBR_OPS(R_LOADBR)
    RI_CODE_LOOPFUSE_CMPS(R_LOOPFUSE)
    R_ADDBR_ZERO(R_ADDBR_MOVE, BR_IF, I32_NE) R_ADDBR_ZERO(R_ADDBR_I2, BR_IF, I32_NE)
    RI_CODE_ADDBR_CMPS(R_ADDBR)
    R_ADDBR_ZERO(R_ADDBR_PLAIN, BR_IF, I32_NE) R_ADDBR_ZERO(R_ADDBR_PLAIN, BR_IFNOT, I32_EQ)

    /* ---- return (fuse_return): of the i32.add just before, the function's last
     * instruction so far (what follows a return is dead or another block's); no family ---- */
    {.site = FUSE_SITE_RETURN, .outer = OP(RETURN1), .last = OP(I32_ADD), .fused = OP(I32_ADD_RET),
     .from = FROM_A, .flags = F_ADJ_LAST, .words = {W_L(2), W_L(3)}},
};

#define RULE_COUNT (sizeof rules / sizeof rules[0])
_Static_assert(RULE_COUNT <= RI_FUSE_RULE_CAP, "compiler.rule_next holds every rule");

uint32_t fuse_rule_count(void) { return (uint32_t)RULE_COUNT; }

/* The bucket of the rules for emitting `outer` after `last`: only rules with both the
 * same can match the same instructions, so table order need hold only within a bucket, and
 * a lookup walks a few rules instead of every rule of the operation. */
static uint32_t rule_bucket(uint32_t outer, uint32_t last) {
    return (outer * 2654435761u ^ last * 40503u) >> 7 & (RI_FUSE_RULE_BUCKETS - 1);
}

/* Links the rules of each bucket, in table order (compiler.rule_head, rule_next). */
void index_fuse_rules(compiler *c) {
    for (uint32_t i = RULE_COUNT; i-- > 0;) {
        uint32_t b = rule_bucket(rules[i].outer, rules[i].last);
        c->rule_next[i] = c->rule_head[b];
        c->rule_head[b] = (uint16_t)(i + 1);
    }
}

/* Whether word source s reads a word that instruction op (of ri_code_words(op) words) has. */
static bool word_in(uint8_t s, ri_code_op op) {
    uint32_t k = s & 15;
    return k >= 1 && k < ri_code_words(op);
}

/* Whether every source of r names something there: a word of an instruction the rule
 * absorbs (of its fixed size), or a value of its site. */
static bool sources_valid(const fuse_rule *r, uint8_t s) {
    switch (s & 0x30) {
    case 0x10: return word_in(s, (ri_code_op)r->last);
    case 0x20: return (r->flags & F_PREV) && word_in(s, (ri_code_op)r->prev);
    case 0x30: return (r->flags & F_PREV2) && word_in(s, (ri_code_op)r->prev2);
    default: return (s & ~W_SHIFT) >= W_DST && (s & ~W_SHIFT) <= W_ZERO;
    }
}

uint32_t fuse_rules_check(void) {
    for (uint32_t i = 0; i < RULE_COUNT; i++) {
        const fuse_rule *r = &rules[i];
        uint32_t n = 0;
        while (n < RI_FUSE_RULE_WORDS && r->words[n] != W_END) n++;
        bool ok = r->outer < RI_CODE_OP_COUNT && r->last < RI_CODE_OP_COUNT && r->fused < RI_CODE_OP_COUNT &&
                  ri_code_words((ri_code_op)r->fused) == n + 1 && ri_code_words((ri_code_op)r->last) != 0 &&
                  (!(r->flags & F_PREV2) || (r->flags & F_PREV)) && r->last_point <= n + 1 &&
                  r->prev_point <= n + 1 && r->trap_point <= n + 1 &&
                  (!(r->flags & F_RESULT2) || (n >= 4 && r->words[3] == W_DST)) &&
                  (!(r->flags & F_RESULT) || r->words[0] == W_DST) &&
                  (!(r->flags & F_PREV) || (r->prev < RI_CODE_OP_COUNT && ri_code_words((ri_code_op)r->prev) != 0)) &&
                  (!(r->flags & F_PREV2) || (r->prev2 < RI_CODE_OP_COUNT && ri_code_words((ri_code_op)r->prev2) != 0));
        for (uint32_t k = 0; ok && k < n; k++) ok = sources_valid(r, r->words[k]);
        for (size_t k = 0; ok && k < sizeof r->checks / sizeof r->checks[0] && r->checks[k].kind != C_NONE; k++)
            ok = sources_valid(r, r->checks[k].x) &&
                 (r->checks[k].kind == C_TEMP || r->checks[k].kind == C_PREV_WRITES || sources_valid(r, r->checks[k].y));
        if (!ok) return i;
    }
    return UINT32_MAX;
}

/* ---- the matcher and the emitter -------------------------------------------------------- */

static const operand NO_OPERAND = {0, ENTRY_IMM, 0, 0};

/* Whether the instruction before the last is there (not cut off by a label or a rewrite):
 * what removing the last makes the last again (truncate_code). */
static bool has_prev(const compiler *c) { return c->prev.pos != NO_POS && c->prev.pos < c->last.pos; }
static bool has_prev2(const compiler *c) { return c->prev2.pos != NO_POS && c->prev2.pos < c->prev.pos; }

static uint32_t word_of(const compiler *c, const fuse_ctx *x, const operand *other, uint8_t s) {
    uint32_t v = 0;
    switch (s & 0x30) {
    case 0x10: v = c->code[c->last.pos + (s & 15)]; break;
    case 0x20: v = c->code[c->prev.pos + (s & 15)]; break;
    case 0x30: v = c->code[c->prev2.pos + (s & 15)]; break;
    default:
        switch (s & ~W_SHIFT) {
        case W_DST: v = own_slot(c, c->h); break;
        case W_OTHER: v = other->src; break;
        case W_A: v = x->a.src; break;
        case W_B: v = x->b.src; break;
        case W_SRC: v = x->src; break;
        case W_IMM: v = (uint32_t)x->b.bits; break;
        case W_OFFSET: v = x->offset; break;
        case W_ZERO: v = 0; break;
        default: break;
        }
    }
    return s & W_SHIFT ? v & 31 : v;
}

static bool checks_hold(const compiler *c, const fuse_rule *r, const fuse_ctx *x, const operand *other) {
    for (size_t k = 0; k < sizeof r->checks / sizeof r->checks[0] && r->checks[k].kind != C_NONE; k++) {
        const fuse_check *ck = &r->checks[k];
        uint32_t v = word_of(c, x, other, ck->x);
        switch (ck->kind) {
        case C_EQ: if (v != word_of(c, x, other, ck->y)) return false; break;
        case C_NE: if (v == word_of(c, x, other, ck->y)) return false; break;
        case C_TEMP: if (v < c->stack_base) return false; break;
        case C_PREV_WRITES:
            if ((ck->x == W_OTHER && other->kind != ENTRY_SLOT) || !c->prev.dst_pos || c->code[c->prev.dst_pos] != v)
                return false;
            break;
        default: return false;
        }
    }
    return true;
}

/* Whether rule r applies; *other: the operand that is not the last instruction's result. */
static bool rule_matches(const compiler *c, const fuse_rule *r, const fuse_ctx *x, operand *other) {
    if (r->outer != x->op || r->last != c->last.op || r->site != x->site || !fuse_on(c, r->gates)) return false;
    if (((r->flags & F_NOIMM_A) && x->a.kind == ENTRY_IMM) || ((r->flags & F_NOIMM_B) && x->b.kind == ENTRY_IMM))
        return false;
    switch (r->from) {
    case FROM_EITHER:
        if (from_last(c, &x->b)) *other = x->a;
        else if (from_last(c, &x->a)) *other = x->b;
        else return false;
        break;
    case FROM_A:
        if (!from_last(c, &x->a) || from_last(c, &x->b)) return false;
        *other = x->b;
        break;
    case FROM_B:
        if (!from_last(c, &x->b)) return false;
        *other = x->a;
        break;
    default: *other = NO_OPERAND; break;
    }
    if ((r->flags & F_ADJ_LAST) && c->last.pos + ri_code_words(c->last.op) != c->len) return false;
    if (r->flags & F_PREV) {
        if (!has_prev(c) || c->prev.op != r->prev) return false;
        if ((r->flags & F_ADJ_PREV) && c->prev.pos + ri_code_words(c->prev.op) != c->last.pos) return false;
        if (r->flags & F_PREV2) {
            if (!has_prev2(c) || c->prev2.op != r->prev2) return false;
            if ((r->flags & F_ADJ_PREV2) && c->prev2.pos + ri_code_words(c->prev2.op) != c->prev.pos) return false;
        }
    }
    return checks_hold(c, r, x, other);
}

/* Replaces the instructions rule r absorbs and the one being compiled by r's fused one. */
static uint32_t emit_rule(compiler *c, const fuse_rule *r, const fuse_ctx *x, const operand *other) {
    uint32_t w[RI_FUSE_RULE_WORDS], n = 0;
    for (; n < RI_FUSE_RULE_WORDS && r->words[n] != W_END; n++) w[n] = word_of(c, x, other, r->words[n]);
    ri_code_point last_pt, prev_pt;
    bool had_last = false, had_prev = false;
    if (r->last_point) had_last = take_last(c, &last_pt);
    else truncate_code(c, c->last.pos);
    if (r->flags & F_PREV) {
        if (r->prev_point) had_prev = take_last(c, &prev_pt);
        else truncate_code(c, c->last.pos);
        if (r->flags & F_PREV2) truncate_code(c, c->last.pos);
    }
    for (uint32_t k = 0; k < n; k++)
        if (r->words[k] == W_VALUE) w[k] = slot_of(c, x->b, c->h + 1); /* may emit its constant */
    uint32_t p = emit_op(c, (ri_code_op)r->fused, n + 1);
    if (p == NO_POS) return NO_POS;
    memcpy(&c->code[p + 1], w, n * sizeof *w);
    if (had_prev) put_point(c, p + r->prev_point - 1, prev_pt);
    if (had_last) put_point(c, p + r->last_point - 1, last_pt);
    if (r->trap_point) add_point(c, p + r->trap_point - 1, RI_POINT_TRAP, c->h + r->trap_height);
    if (r->flags & (F_RESULT | F_RESULT2)) {
        push_slot(c);
        if (r->flags & F_RESULT) note_dst(c, p);
        else c->last.dst_pos = p + 4; /* the second result is the one that may be redirected */
    }
    return p + n + 1;
}

bool fuse_by_rules(compiler *c, const fuse_ctx *x, uint32_t *end) {
    if (c->failed || c->last.pos == NO_POS) return false;
    operand other;
    for (uint32_t i = c->rule_head[rule_bucket(x->op, c->last.op)]; i; i = c->rule_next[i - 1]) {
        const fuse_rule *r = &rules[i - 1];
        if (!rule_matches(c, r, x, &other)) continue;
        uint32_t e = emit_rule(c, r, x, &other);
        if (end) *end = e;
        return true;
    }
    return false;
}
