/*
 * The internal code: what compile.c makes of a function body and interp.c runs.
 *
 * ---- Frames -----------------------------------------------------------------------
 * A call frame is a window of 8-byte slots (ri_slot) on the store's value stack:
 *
 *     fp[0 .. nparams)                     the parameters (the caller's arguments, in place)
 *     fp[nparams .. nlocals)               declared locals, zeroed on entry
 *     fp[nlocals .. stack_base)            the constant pool, copied in on entry
 *     fp[stack_base .. stack_base + max)   the WebAssembly operand stack
 *
 * WebAssembly stack heights are static, so the compiler knows the slot of every
 * operand: entry i of the operand stack lives in fp[stack_base + i]. An instruction
 * names its operands and its result by slot, e.g. i32.add at height h becomes
 * (I32_ADD dst=stack_base+h-2 a=... b=...). An operand whose value is a local or a
 * constant is read straight from the local's or the pool's slot (local.get and
 * *.const emit no code). A call passes its arguments in place: the callee's frame
 * begins at the caller's first argument slot, and the callee's results are left in
 * its fp[0 ..), which is where the caller expects them.
 * frame_slots (= stack_base + max height) is all the space a frame needs, so the call
 * sequence checks and reserves it with one comparison.
 *
 * ---- Code stream -------------------------------------------------------------------
 * An array of 32-bit words. An instruction is its handler word followed by operand
 * words (slot indices, immediates, branch offsets). The handler word is the
 * interpreter's label offset for that operation (see ri_interp_dispatch_table), so
 * dispatch is one load, one add and one indirect jump. Branch offsets are relative to
 * the operand word holding them, in words, as int32. 64-bit immediates take two words
 * (low first). Branch targets are resolved at compile time; nothing is decoded at run
 * time.
 *
 * ---- Metering ----------------------------------------------------------------------
 * Every straight-line region (basic block) of WebAssembly code starts with a gas
 * charge carrying the number of WebAssembly instructions of the region: ENTRY (function
 * entry), LOOP (loop header, the target of back-edges; also polls the interrupt flag),
 * or GAS (after a forward label that some branch targets, after br_if / if, after each
 * call). If the gas left cannot pay, execution stops at that charge, before any of the
 * region runs. Bulk instructions charge their length on top when they run.
 * What counts: every WebAssembly instruction that executes, block, loop, nop and
 * local.get included, and an `end` or `else` when execution falls through it (an
 * `end` reached by a branch is not executed; dead code never is). A region is charged
 * whole when it starts, so a trap in its middle has paid for the rest of it.
 *
 * ---- Stop points (pause / snapshot readiness) --------------------------------------
 * Execution can only stop at ENTRY, GAS, LOOP, a call, a bulk instruction (which
 * charges its length when it runs), or a trapping instruction.
 * Each of these gets an ri_code_point {code position, WebAssembly byte offset, operand
 * stack height}, sorted by position, so any pc where execution stopped maps back to
 * (function index, wasm offset, height). The compiler keeps this invariant: at ENTRY,
 * GAS, LOOP, calls and bulk instructions every operand-stack entry is materialised in
 * its own slot (no entry is pending as "the value of local k" or "constant c"). A
 * suspended frame is therefore fully described by (function index, wasm offset,
 * fp[0 .. nlocals) and fp[stack_base .. stack_base + height)); the constant pool is
 * rebuilt from the code.
 * A caller frame suspended in a call is described by the CALL point: its return pc is
 * the position just after that call instruction (the greatest point < return pc).
 * Since the code is a deterministic function of the module, a snapshot taken at one of
 * these points can be resumed by any engine that compiles the same module.
 */
#ifndef RI_ENGINE_CODE_H
#define RI_ENGINE_CODE_H

#include <stdint.h>

#include "opcodes.h"

/* Operations that are not plain numeric ones: X(NAME, WORDS), WORDS = the
 * instruction's size, 0 if variable (ENTRY, BR_TABLE). */
#define RI_CODE_CONTROL_OPS(X) \
    X(ENTRY, 0)          /* gas, first_local, ndeclared, nconsts, consts (2 words each) */ \
    X(GAS, 2)            /* cost */ \
    X(LOOP, 2)           /* cost; polls the interrupt flag */ \
    X(BR, 2)             /* offset */ \
    X(BR_IF, 3)          /* cond, offset: branch when cond != 0 */ \
    X(BR_IFNOT, 3)       /* cond, offset: branch when cond == 0 */ \
    X(BR_TABLE, 0)       /* index, count, count + 1 offsets */ \
    X(RETURN0, 1) \
    X(RETURN1, 2)        /* src */ \
    X(RETURN_N, 3)       /* first src, count (contiguous) */ \
    X(UNREACHABLE, 1) \
    X(CALL_LOCAL, 3)     /* body index, frame base */ \
    X(CALL, 3)           /* function index (an import), frame base */ \
    X(CALL_INDIRECT, 5)  /* type index, table index, element index slot, frame base */ \
    X(MOVE, 3)           /* dst, src */ \
    X(SELECT, 5)         /* dst, a, b, cond */ \
    X(GLOBAL_GET, 3)     /* dst, global index */ \
    X(GLOBAL_SET, 3)     /* global index, src */ \
    X(CONST32, 3)        /* dst, value (when the constant pool is full) */ \
    X(CONST64, 4)        /* dst, low, high */ \
    X(MEMORY_SIZE, 2)    /* dst */ \
    X(MEMORY_GROW, 3)    /* dst, delta */ \
    X(MEMORY_INIT, 5)    /* data index, d, s, n */ \
    X(DATA_DROP, 2)      /* data index */ \
    X(MEMORY_COPY, 4)    /* d, s, n */ \
    X(MEMORY_FILL, 4)    /* d, value, n */ \
    X(TABLE_GET, 4)      /* dst, index, table */ \
    X(TABLE_SET, 4)      /* table, index, value */ \
    X(TABLE_SIZE, 3)     /* dst, table */ \
    X(TABLE_GROW, 5)     /* dst, init, n, table */ \
    X(TABLE_FILL, 5)     /* table, i, value, n */ \
    X(TABLE_COPY, 6)     /* dst table, src table, d, s, n */ \
    X(TABLE_INIT, 6)     /* elem index, table, d, s, n */ \
    X(ELEM_DROP, 2)      /* elem index */ \
    X(REF_IS_NULL, 3)    /* dst, a */ \
    X(REF_FUNC, 3)       /* dst, function index */

/* Compare-and-branch superinstructions (BR_IF_<cmp> a b offset, 4 words), made when
 * br_if or if consumes the result of the compare just before it.
 * X(CMP, NEGATION): `if` branches to its else on the negated compare. */
#define RI_CODE_CMP_BRANCHES(X) \
    X(I32_EQ, I32_NE) X(I32_NE, I32_EQ) \
    X(I32_LT_S, I32_GE_S) X(I32_GE_S, I32_LT_S) X(I32_LT_U, I32_GE_U) X(I32_GE_U, I32_LT_U) \
    X(I32_GT_S, I32_LE_S) X(I32_LE_S, I32_GT_S) X(I32_GT_U, I32_LE_U) X(I32_LE_U, I32_GT_U) \
    X(I64_EQ, I64_NE) X(I64_NE, I64_EQ) \
    X(I64_LT_S, I64_GE_S) X(I64_GE_S, I64_LT_S) X(I64_LT_U, I64_GE_U) X(I64_GE_U, I64_LT_U) \
    X(I64_GT_S, I64_LE_S) X(I64_LE_S, I64_GT_S) X(I64_GT_U, I64_LE_U) X(I64_LE_U, I64_GT_U)

/* Every internal operation. Loads (dst, addr, offset) and stores (addr, value, offset)
 * keep their opcodes.h names, 4 words; numeric ops too: unary (dst, a) 3 words,
 * binary (dst, a, b) 4 words. */
typedef enum ri_code_op {
#define RI_X_CTRL(name, words) RI_CODE_##name,
#define RI_X_CMPBR(cmp, neg) RI_CODE_BR_IF_##cmp,
#define RI_X_MEM(name, byte, t, n, st) RI_CODE_##name,
#define RI_X_NUM(name, byte, a, b, r) RI_CODE_##name,
    RI_CODE_CONTROL_OPS(RI_X_CTRL)
    RI_CODE_CMP_BRANCHES(RI_X_CMPBR)
    RI_MEMORY_OPS(RI_X_MEM)
    RI_NUMERIC_OPS(RI_X_NUM)
    RI_SAT_OPS(RI_X_NUM)
#undef RI_X_CTRL
#undef RI_X_CMPBR
#undef RI_X_MEM
#undef RI_X_NUM
    RI_CODE_OP_COUNT
} ri_code_op;

/* What kind of stop a point is. */
typedef enum ri_point_kind {
    RI_POINT_ENTRY,   /* function entry: interrupt poll + gas */
    RI_POINT_GAS,     /* region start: gas */
    RI_POINT_LOOP,    /* loop header: interrupt poll + gas (back-edges land here) */
    RI_POINT_CALL,    /* call, call_indirect: the caller waits here */
    RI_POINT_TRAP,    /* an instruction that may trap */
    RI_POINT_BULK,    /* memory/table init, copy, fill: charges its length, may trap */
} ri_point_kind;

typedef struct ri_code_point {
    uint32_t pos;         /* word index of the instruction in ri_code.words */
    /* Byte offset in the module of the WebAssembly instruction execution is at:
     * ENTRY, GAS, LOOP: the first instruction of the region (after the call, br_if,
     * if, else, end or loop that opened it); CALL, TRAP, BULK: the instruction itself. */
    uint32_t wasm_offset;
    uint32_t height;      /* operand stack height there (before a CALL/TRAP/BULK instruction) */
    uint32_t kind;        /* ri_point_kind */
} ri_code_point;

typedef struct ri_code {
    uint32_t func_index;  /* in the module's function index space */
    uint32_t nparams, nresults;
    uint32_t nlocals;     /* params + declared locals */
    uint32_t nconsts;     /* constant pool slots */
    uint32_t stack_base;  /* nlocals + nconsts: slot of operand stack entry 0 */
    uint32_t frame_slots; /* stack_base + maximum operand stack height */
    uint32_t nwords;
    uint32_t *words;
    uint32_t npoints;
    ri_code_point *points;
} ri_code;

/* interp.c: the label offsets of the interpreter's handlers, indexed by ri_code_op.
 * compile.c writes these into handler words. Immutable, shared by all threads. */
const int32_t *ri_interp_dispatch_table(void);

/* The stop point at code position pos: the one at pos exactly, else the last before
 * it; NULL if there is none. */
const ri_code_point *ri_code_find_point(const ri_code *code, uint32_t pos);

#endif
