/*
 * The properties of every internal operation (code.h), as one table: what the compiler
 * asks of an operation (its size, whether it is a branch or a call, which accumulator its
 * handler leaves its result in, ...) is read from here, not from switches of its own.
 * The table is expanded from code.h's lists (code_info.c); tests/unit/test_code_info.c
 * checks it against the code the compiler emits and against the handlers.
 */
#ifndef RI_ENGINE_CODE_INFO_H
#define RI_ENGINE_CODE_INFO_H

#include <stdint.h>

#include "code.h"

/* Flags of an operation (ri_code_info.flags). */
enum {
    RI_OPF_BRANCH = 1u << 0,    /* a branch in one of its four variants (RI_BRANCH_*); its offset is its last word */
    RI_OPF_CALL = 1u << 1,      /* a call: the compiler puts a GAS right after it */
    RI_OPF_ACC_INT = 1u << 2,   /* its handler writes operand 1 last, through PUT_U32/U64/F32: the bits are in acc */
    RI_OPF_ACC_F64 = 1u << 3,   /* ... through PUT_F64: the value is in facc */
    RI_OPF_ACC_MOVE = 1u << 4,  /* MOVE: the bits it copies are in acc (either of its slots) */
    RI_OPF_I64 = 1u << 7,       /* a numeric operation (RI_NUMERIC_OPS) on i64 operands */
    RI_OPF_NUM_TRAP = 1u << 8,  /* a numeric operation (RI_NUMERIC_OPS) that may trap: div, rem, trunc */
    RI_OPF_TRAP2 = 1u << 9,     /* a fused instruction that may trap in its second part too: a second TRAP point at + 3 */
};

/* The stop point an operation carries (ri_code_info.point): 0 none, else 1 + its
 * ri_point_kind. The compiler gives every instruction of a TRAP, CALL or BULK operation
 * such a point at its position (TRAP2: and a TRAP at position + 3), every ENTRY and LOOP
 * one, and a GAS one unless it is the GAS 0 after a call of unmetered code. */
enum {
    RI_STOP_NONE = 0,
    RI_STOP_ENTRY = 1 + RI_POINT_ENTRY,
    RI_STOP_GAS = 1 + RI_POINT_GAS,
    RI_STOP_LOOP = 1 + RI_POINT_LOOP,
    RI_STOP_CALL = 1 + RI_POINT_CALL,
    RI_STOP_TRAP = 1 + RI_POINT_TRAP,
    RI_STOP_BULK = 1 + RI_POINT_BULK,
};

/* The kind of a call (ri_code_info.call): what its operand words are. Local: body index,
 * frame base; import: function index, frame base; indirect: type index, table index,
 * element index slot, frame base. Tail: a return_call (import's operands) or a
 * return_call_indirect (indirect's), whose callee replaces the frame: no caller waits in it. */
enum { RI_CALLK_NONE, RI_CALLK_LOCAL, RI_CALLK_IMPORT, RI_CALLK_INDIRECT, RI_CALLK_TAIL };

/* The immediates for which a binary operation with an immediate leaves its first operand
 * unchanged (ri_code_info.ident; code.h, RI_CODE_IMM_OPS). */
enum { RI_IDENT_NONE, RI_IDENT_ZERO, RI_IDENT_ONE, RI_IDENT_ONES, RI_IDENT_SHIFT0 };

/* Related operations, by relation (ri_code_form): what the compiler turns an operation
 * into. Each is a column of one family's list in code.h. */
typedef enum ri_code_rel {
    RI_REL_IMM,    /* NAME_I, the form with an immediate second operand (RI_CODE_IMM_OPS) */
    RI_REL_MIRROR, /* the operation with its operands swapped (RI_CODE_IMM_OPS's MIRROR; the float
                      compares: RI_CODE_FCMP_BRANCHES's, both ways) */
    RI_REL_FCMP,   /* a float compare's RI_CODE_FCMP_BRANCHES entry (lt, le): gt, ge map onto theirs */
    RI_REL_ADDR,   /* NAME_X, the fused-address form of a load or store (NAME_XI follows it) */
    RI_REL_STORE2, /* NAME_2, two stores in a row (RI_CODE_STORE2_OPS) */
    RI_REL_COUNT
} ri_code_rel;


typedef struct ri_code_info {
    uint16_t flags; /* RI_OPF_* */
    uint16_t base;  /* the operation this one is a variant of (branch RI_BRANCH_*, accumulator _A*), else itself */
    uint8_t words;  /* the instruction's size in words; 0 if variable (ENTRY, BR_TABLE*) */
    uint8_t point;  /* RI_STOP_*: the stop point the compiler gives it */
    uint8_t call;   /* RI_CALLK_*: its call operands, if a call */
    uint8_t ident;  /* RI_IDENT_*: a binary operation's identity immediates */
} ri_code_info;

/* Indexed by ri_code_op. Immutable. */
extern const ri_code_info ri_code_infos[RI_CODE_OP_COUNT];

/* ri_code_forms[rel][op]: 1 + the operation related to op by rel, 0 if none. Immutable. */
extern const uint16_t ri_code_forms[RI_REL_COUNT][RI_CODE_OP_COUNT];

/* The name of every operation (RI_CODE_<name>), for tools and reports. Immutable. */
extern const char *const ri_code_names[RI_CODE_OP_COUNT];

/* The operation related to op by rel (ri_code_rel), or RI_CODE_OP_COUNT if none. */
static inline ri_code_op ri_code_form(ri_code_op op, ri_code_rel rel) {
    uint32_t f = (uint32_t)op < RI_CODE_OP_COUNT ? ri_code_forms[rel][op] : 0;
    return f ? (ri_code_op)(f - 1) : RI_CODE_OP_COUNT;
}

/* The stop point (RI_STOP_*) of op; RI_STOP_NONE for anything that is not an operation. */
static inline uint32_t ri_code_stop(uint32_t op) { return op < RI_CODE_OP_COUNT ? ri_code_infos[op].point : 0; }

/* The call kind (RI_CALLK_*) of op. */
static inline uint32_t ri_code_call_kind(uint32_t op) { return op < RI_CODE_OP_COUNT ? ri_code_infos[op].call : 0; }

/* The flags of op; 0 for anything that is not an operation (the compiler's NO_OP). */
static inline uint32_t ri_code_flags(uint32_t op) { return op < RI_CODE_OP_COUNT ? ri_code_infos[op].flags : 0; }

/* op's size in words, 0 if variable or if op is none. */
static inline uint32_t ri_code_words(uint32_t op) { return op < RI_CODE_OP_COUNT ? ri_code_infos[op].words : 0; }

/* The size of branch op (its offset is its last word), 0 if op is not a branch. */
static inline uint32_t ri_code_branch_words(uint32_t op) {
    return (ri_code_flags(op) & RI_OPF_BRANCH) ? ri_code_words(op) : 0;
}

/* ---- Operand kinds (code.h, "Operand kinds") ---- */

/* ri_code_operand_kinds[op]: op's operand kinds, or NULL for a variant (a branch's _FG/_BG/
 * _BU, an accumulator variant), whose kinds are its base's. Immutable. */
extern const char *const ri_code_operand_kinds[RI_CODE_OP_COUNT];

/* The operand kinds of op (its base's for a variant); NULL if op is not an operation. */
const char *ri_code_operands(uint32_t op);

/* ---- The WebAssembly column (code.h, "The WebAssembly column") ---- */

/* ri_code_wasm_forms[op]: the WebAssembly instructions op stands for, or NULL for a variant,
 * whose form is its base's. Immutable. */
extern const char *const ri_code_wasm_forms[RI_CODE_OP_COUNT];

/* The WebAssembly instructions op stands for (its base's for a variant), e.g. I32_ADD_SHL_I's
 * "D1 = I32_ADD(S2, I32_SHL(S3, I4))"; "" for an operation that is none (ENTRY, GAS, LOOP);
 * NULL if op is not an operation. */
const char *ri_code_wasm(uint32_t op);

/* How many WebAssembly instructions ri_code_wasm(op) names (constants and slots not counted). */
uint32_t ri_code_wasm_count(uint32_t op);

/* The size in words of the instruction of operation op at code[pos], given the nwords words
 * of code: the table's size, or a variable-size operation's from its count operand; 0 if op
 * is none or the instruction does not fit in the code. */
uint32_t ri_code_size_at(uint32_t op, const uint32_t *code, uint32_t pos, uint32_t nwords);

/* Calls fn(k, kind, value, ctx) for each operand word k of the instruction of op at
 * code[pos] (which fits: ri_code_size_at), in order, value = code[pos + k], kind as
 * ri_code_operand_at gives it. */
typedef void ri_code_operand_fn(uint32_t k, char kind, uint32_t value, void *ctx);
void ri_code_for_each_operand(uint32_t op, const uint32_t *code, uint32_t pos, ri_code_operand_fn *fn, void *ctx);

/* The kind of operand word k (1 .. size - 1) of the instruction of op at code[pos] (which
 * fits: ri_code_size_at): D, S, ... as in code.h; V128_OP's '?' resolved from its last word
 * (D/W, S/V, or _ for an operand it does not have); the second word of an L is 'l', a
 * repeated operand has its own kind. 0 if k is past the instruction. */
char ri_code_operand_at(uint32_t op, const uint32_t *code, uint32_t pos, uint32_t k);

/* Calls cb(slot, ctx) for every slot the instruction of op at code[pos] reads (S; both
 * slots of a V; the range of an N after a read slot) / writes (D, W; an N after a written
 * slot). A P is neither: how many slots it starts is not in the code (a callee's frame, which
 * the callee reads and writes; the values THROW reads, as many as its tag has). */
typedef void ri_code_slot_cb(uint32_t slot, void *ctx);
void ri_code_slot_reads(uint32_t op, const uint32_t *code, uint32_t pos, ri_code_slot_cb *cb, void *ctx);
void ri_code_slot_writes(uint32_t op, const uint32_t *code, uint32_t pos, ri_code_slot_cb *cb, void *ctx);

/* Accumulator classes (acc.c, choose_acc_variants). */
enum { RI_ACC_NONE, RI_ACC_INT, RI_ACC_F64 };

/* Which accumulator holds, when the instruction at code[pos] (operation op) ends, the
 * value it wrote to its operand 1: RI_ACC_INT (the slot's bits: i32, i64, f32), RI_ACC_F64
 * or RI_ACC_NONE; slots[] gets the slots holding that value: operand 1 (and UINT32_MAX),
 * or both slots of a MOVE. */
static inline int ri_code_acc_produced(const uint32_t *code, uint32_t pos, uint32_t op, uint32_t slots[2]) {
    uint32_t flags = ri_code_flags(op);
    slots[0] = code[pos + 1];
    slots[1] = UINT32_MAX;
    if (flags & RI_OPF_ACC_MOVE) {
        slots[1] = code[pos + 2];
        return RI_ACC_INT;
    }
    return (flags & RI_OPF_ACC_INT) ? RI_ACC_INT : (flags & RI_OPF_ACC_F64) ? RI_ACC_F64 : RI_ACC_NONE;
}

#endif
