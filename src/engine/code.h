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
 * constant is read straight from the local's or the pool's slot, or is an immediate
 * operand word (the *_I operations): local.get and *.const emit no code. The pool
 * holds only the constants read in place by operations without an immediate form (a
 * function whose constants are all immediates has none, and its ENTRY copies nothing).
 * A call passes its arguments in place: the callee's frame begins at the caller's first
 * argument slot, and the callee's results are left in its fp[0 ..), which is where the
 * caller expects them. A function returning the single result of its last instruction
 * has that instruction write it to fp[0] directly (then RETURN0).
 * frame_slots (= stack_base + max height, at least nparams + 8 for ENTRY_Z) is all the
 * space a frame needs, so the call sequence checks and reserves it with one comparison.
 *
 * ---- Code stream -------------------------------------------------------------------
 * An array of 32-bit words. An instruction is its handler word followed by operand
 * words (slot indices, immediates, branch offsets). The handler word is the
 * interpreter's label offset for that operation (see ri_interp_dispatch_table), so
 * dispatch is one load, one add and one indirect jump. Branch offsets are relative to
 * the operand word holding them, in words, as int32. 64-bit immediates take two words
 * (low first). Branch targets are resolved at compile time; nothing is decoded at run
 * time.
 * Superinstructions: besides compare-and-branch (i32, i64, and f32/f64 lt, le, gt, ge),
 * the compiler fuses an instruction with the one just before it when that one's only
 * result feeds it (a peephole on the last three emitted instructions, never across a
 * label): the address arithmetic of loads and stores (*_X, *_P; array elements and table
 * lookups, I32_LOAD_SX, _SXI, _MSXI), a load whose value a branch tests (<LOAD>_BR_*; the
 * load's result is still written), loop counters (ADDBR_*: add, compare, branch; with a
 * MOVE or I32_ADD_I2 before them, MADDBR_*, I2ADDBR_*), pairs of i32 arithmetic
 * (I32_<OUTER>_<INNER>, I32_<OUTER>I_<INNER>I), an add of a load (I32_ADD_L*), return
 * a + b, and runs of the same simple instruction (I32_ADD_I2, I32_LOAD2, *_2 stores). A
 * fused instruction does exactly what its parts did, in their order.
 *
 * ---- Metering ----------------------------------------------------------------------
 * Every straight-line region (basic block) of WebAssembly code starts with a gas
 * charge carrying the number of WebAssembly instructions of the region: ENTRY (function
 * entry), LOOP (loop header, the target of back-edges) or GAS (after a forward label
 * that some branch targets, after br_if / if, after each call). If the gas left cannot
 * pay, execution stops at that charge, before any of the region runs. Bulk
 * instructions charge their length on top when they run.
 * What counts: every WebAssembly instruction that executes, block, loop, nop and
 * local.get included, and an `end` or `else` when execution falls through it (an
 * `end` reached by a branch is not executed; dead code never is). A region is charged
 * whole when it starts, so a trap in its middle has paid for the rest of it.
 * Fused charges: the charges stay in the code where they are, but most are executed
 * by the instruction before them, without a dispatch of their own. A branch's variant
 * (RI_BRANCH_*, chosen once the body is compiled) says that its target is a GAS or LOOP
 * and that a GAS follows it: the taken branch charges the target's cost and jumps past
 * it, the fall-through charges the next GAS and skips it. A br_table whose targets are
 * all GAS or LOOP charges (BR_TABLE_G; unmetered: all LOOP_U, BR_TABLE_BU) does the same
 * for the entry it takes; one with any other target (a stub that copies values or
 * returns) stays BR_TABLE and its targets' charges run on their own. A return charges
 * the GAS that follows every call (the compiler guarantees one; 0 in unmetered code).
 * When such a charge cannot be paid, pc is set to the charge itself, so execution stops
 * exactly where the charge would have stopped it.
 * The interpreter draws gas in chunks (interp.c, RI_GAS_CHUNK): when the current chunk
 * cannot pay a charge it takes the next from the budget and polls the interrupt flag,
 * then runs the charge again; only when the budget itself cannot pay does execution
 * stop. So metered code polls the interrupt flag at least every RI_GAS_CHUNK
 * instructions (and at ENTRY with constants), not at every back-edge.
 * Unmetered code (ri_module_config.unmetered): no GAS regions (labels are the next
 * instruction), loop headers are LOOP_U and entries ENTRY_*U, which poll the interrupt
 * flag and charge nothing, calls are followed by a GAS 0 (no stop point), bulk
 * instructions charge nothing; the interrupt flag is polled at every back-edge (branch
 * variant _BU), loop header and function entry.
 *
 * ---- Stop points (pause / snapshot readiness) --------------------------------------
 * Execution can only stop at ENTRY, GAS, LOOP, a call, a bulk instruction (which
 * charges its length when it runs), or a trapping instruction.
 * Each of these gets an ri_code_point {code position, WebAssembly byte offset, operand
 * stack height}, sorted by position, so any pc where execution stopped maps back to
 * (function index, wasm offset, height). A fused instruction that can trap in two
 * places (I32_LOAD2, the *_2 stores) has a second point at position + 3,
 * and pc is set there when the second part traps. The compiler keeps this invariant:
 * at ENTRY, GAS, LOOP, calls and bulk instructions every operand-stack entry is
 * materialised in its own slot (no entry is pending as "the value of local k",
 * "constant c" or an immediate); at a trap execution ends, so there it is not needed.
 * A suspended frame is therefore fully described by (function index, wasm offset,
 * fp[0 .. nlocals) and fp[stack_base .. stack_base + height)); the constant pool is
 * rebuilt from the code.
 * A caller frame suspended in a call is described by the CALL point: its return pc is
 * the position just after that call instruction, the GAS that follows it (the
 * greatest point < return pc). Execution that stops at the charge of that GAS (when
 * the return cannot pay it) stops at the GAS point, as any other charge.
 * Since the code is a deterministic function of the module, a snapshot taken at one of
 * these points can be resumed by any engine that compiles the same module.
 */
#ifndef RI_ENGINE_CODE_H
#define RI_ENGINE_CODE_H

#include <stdint.h>

#include "opcodes.h"
#include "code_simd.h"

/* Operand kinds. Every operation states the kind of each of its operand words, in order,
 * as a string (ri_code_operands, code_info.h): a control or SIMD operation in its KINDS
 * column, every other family once for all its entries (code_info.c). One letter a word,
 * but L (two words):
 *   D a slot written          S a slot read           W a v128 written (two slots)
 *   V a v128 read (two slots) I a 32-bit immediate     L a 64-bit immediate (low, high)
 *   O a branch offset (relative to its own word)       M a memory offset (u32, added to an address)
 *   Y a memory index          G a global index         T a type index
 *   X a table index           F a function index       B a body index (a function of this module)
 *   H an imported function's index (below the module's function imports)
 *   E an element segment      Z a data segment         K a tag index
 *   P the first of slots that the code does not count: a callee's frame base (its arguments
 *     start there), THROW's first value (the tag says how many); the F, H, B, T or K operand
 *     before it says how many slots follow, and they lie in the frame
 *   N a count of slots: the previous slot operand is the first of that many
 *   C a count of repeated operands: `*` and the kind after it stand for that many of it
 *     (the variable-size operations: ENTRY's constants, BR_TABLE's offsets)
 *   _ a word the operation does not use    ? a slot or a v128, as V128_OP's last word says
 * The debug and sanitizer builds check every compiled body against these (code_verify.c): slots
 * against the frame, indices against the module's index spaces, offsets against the code. */

/* The WebAssembly column. Every operation states the WebAssembly instructions it stands for
 * (ri_code_wasm, code_info.h): a control or SIMD operation in its WASM column, the fused and
 * numeric families once for all their entries (code_info.c), a variant (branch _FG/_BG/_BU,
 * accumulator _A*) its base's. The form is a list of statements separated by "; ", run in
 * order:
 *   Dk = EXPR    the value of EXPR is written to operand k (a D or W slot; ?k of V128_OP)
 *   EXPR         an instruction without a result (a store, a branch, a call)
 * and EXPR is an operand reference or NAME(EXPR, ...), a folded instruction whose arguments
 * are its operands in WebAssembly's order (evaluated left to right):
 *   NAME   the instruction's opcodes.h name (RI_OP_<NAME>, the 0xFC ones RI_FC_<NAME>; SIMD:
 *          code_simd.h's lane names, I8X16_SHUFFLE, V128_STORE); its text-format name is NAME in
 *          lower case with the '_' after a type or space prefix (I32, MEMORY, ...) a '.'.
 *          @Ik: the instruction whose opcode operand word k holds (MEM_LOAD_G, V128_OP, ...).
 *   <kind><k>  operand word k (1 = the first after the handler word) of that kind (above): Sk a
 *          slot read (a local.get, or a value already on the stack), Ik / Lk a constant (an
 *          i32.const or i64.const, sign-extended for an i64 operation; CONST32 / CONST64: the
 *          bits of any type), Dk a slot this operation wrote before (read back), Mk a memory
 *          access's offset (its first argument; Yk a memory index, Xk a table index before it),
 *          Ok a branch's target (BR_IF's first argument), Gk, Fk, Tk, ... the index operands.
 *          RETURN(S1, N2): the N2 slots from S1.
 * Constants and slots are leaves: ri_code_wasm_count counts the NAMEs only. An address
 * addend of 0 (LOADBR's imm, V128_STORE128's) stands for no i32.add. "" is an operation that
 * is no WebAssembly instruction of its own: ENTRY* (a function's entry), GAS (a region's charge),
 * LOOP, LOOP_U (a loop's header: the `loop` instruction, which charges its region). MOVE
 * (local.set, local.tee, a branch's values) and CONST32 / CONST64 (a constant that needs a slot
 * of its own) are copies: "D1 = S2", no NAME. */

/* Operations that are not plain numeric ones: X(NAME, WORDS, FLAGS, POINT, KINDS, WASM), WORDS = the
 * instruction's size, 0 if variable (ENTRY, BR_TABLE); FLAGS = 0, one accumulator class
 * (ACC_INT, ACC_MOVE: code_info.h) or the kind of call (CALL_LOCAL, CALL_IMPORT,
 * CALL_INDIRECT, TAIL: a tail call); POINT = the stop point
 * the compiler gives it (code_info.h, RI_STOP_*: 0, ENTRY, GAS, LOOP, CALL, TRAP, TRAP2:
 * a second trap at position + 3, BULK); KINDS = its operand kinds, WASM = the WebAssembly it stands for
 * (above). */
#define RI_CODE_CONTROL_OPS(X) \
    X(ENTRY, 0, 0, ENTRY, "IDNC*L", "")          /* gas, first_local, ndeclared, nconsts, consts (2 words each) */ \
    X(ENTRY_Z, 5, 0, ENTRY, "IDNI", "")        /* the same without constants, ndeclared <= 8: zeroes 8 slots */ \
    X(ENTRY_Z4, 5, 0, ENTRY, "IDNI", "")       /* ... ndeclared <= 4: zeroes 4 slots */ \
    X(ENTRY_Z0, 5, 0, ENTRY, "IDNI", "")       /* ... no declared locals */ \
    X(ENTRY_ZU, 5, 0, ENTRY, "IDNI", "")       /* ENTRY_Z, ENTRY_Z4, ENTRY_Z0 of unmetered code: charge nothing */ \
    X(ENTRY_Z4U, 5, 0, ENTRY, "IDNI", "") \
    X(ENTRY_Z0U, 5, 0, ENTRY, "IDNI", "") \
    X(GAS, 2, 0, GAS, "I", "")            /* cost */ \
    X(LOOP, 2, 0, LOOP, "I", "")           /* cost */ \
    X(LOOP_U, 2, 0, LOOP, "I", "")         /* LOOP of unmetered code: polls the interrupt flag (cost 0) */ \
    X(BR_TABLE, 0, 0, 0, "SC*OO", "BR_TABLE(S1)")       /* index, count, count + 1 offsets */ \
    X(BR_TABLE_G, 0, 0, 0, "SC*OO", "BR_TABLE(S1)")     /* the same, every target a GAS or LOOP (metered): the taken entry charges it, skips it */ \
    X(BR_TABLE_BU, 0, 0, 0, "SC*OO", "BR_TABLE(S1)")    /* the same, every target a LOOP_U (unmetered): the taken entry polls, skips it */ \
    X(RETURN0, 1, 0, 0, "", "RETURN()") \
    X(RETURN1, 2, 0, 0, "S", "RETURN(S1)")        /* src */ \
    X(RETURN_N, 3, 0, 0, "SN", "RETURN(S1, N2)")       /* first src, count (contiguous) */ \
    X(I32_ADD_RET, 3, 0, 0, "SS", "RETURN(I32_ADD(S1, S2))")    /* a, b: return a + b (an I32_ADD whose result RETURN1 returns) */ \
    X(UNREACHABLE, 1, 0, TRAP, "", "UNREACHABLE()") \
    X(CALL_LOCAL, 3, CALL_LOCAL, CALL, "BP", "CALL(B1, P2)")     /* body index, frame base */ \
    X(CALL, 3, CALL_IMPORT, CALL, "HP", "CALL(H1, P2)")           /* function index (an import), frame base */ \
    X(CALL_INDIRECT, 5, CALL_INDIRECT, CALL, "TXSP", "CALL_INDIRECT(T1, X2, P4, S3)")  /* type index, table index, element index slot, frame base */ \
    X(RETURN_CALL, 3, TAIL, CALL, "FP", "RETURN_CALL(F1, P2)")          /* function index, frame base: a tail call (the callee's frame replaces \
                            this one; a host callee is called, then the RETURN after the GAS returns its results) */ \
    X(RETURN_CALL_INDIRECT, 5, TAIL, CALL, "TXSP", "RETURN_CALL_INDIRECT(T1, X2, P4, S3)") /* type index, table index, element index slot, frame base: the same */ \
    X(THROW, 3, 0, TRAP, "KP", "THROW(K1, P2)")       /* tag index, first value's slot: throw (the code's handler tables say where to) */ \
    X(RETHROW, 2, 0, TRAP, "S", "RETHROW(S1)")     /* exception slot: throw again the exception a catch keeps there */ \
    X(THROW_REF, 2, 0, TRAP, "S", "THROW_REF(S1)")   /* exnref slot: throw the exception it refers to (trap if null) */ \
    X(MOVE, 3, ACC_MOVE, 0, "DS", "D1 = S2")           /* dst, src */ \
    X(I32_ADD_I2, 7, 0, 0, "DSIDSI", "D1 = I32_ADD(S2, I3); D4 = I32_ADD(S5, I6)")     /* d1, a1, imm1, d2, a2, imm2: two I32_ADD_I, in order */ \
    X(I32_LOAD2, 7, 0, TRAP2, "DSMDSM", "D1 = I32_LOAD(M3, S2); D4 = I32_LOAD(M6, S5)")      /* d1, a1, off1, d2, a2, off2: two I32_LOAD, in order; the second's \
                            stop point is at position + 3 */ \
    X(I32_LOAD_SX, 6, ACC_INT, TRAP, "DSSIM", "D1 = I32_LOAD(M5, I32_ADD(S2, I32_SHL(S3, I4)))")    /* d, a, x, k, off: I32_LOAD at (u32)(a + (x << k)) + off (the address an I32_ADD_SHL_I \
                            computed into a temporary; k < 32): an element of an array at a */ \
    X(I32_LOAD_SXI, 6, ACC_INT, TRAP, "DSIIM", "D1 = I32_LOAD(M5, I32_ADD(I32_SHL(S2, I3), I4))")   /* d, x, k, base, off: I32_LOAD at (u32)((x << k) + base) + off (I32_ADDI_SHLI's): an \
                            element of an array at a constant address */ \
    X(I32_LOAD_MSXI, 7, ACC_INT, TRAP, "DSIIIM", "D1 = I32_LOAD(M6, I32_ADD(I32_SHL(I32_AND(S2, I3), I4), I5))")  /* d, x, mask, k, base, off: I32_LOAD at (u32)(((x & mask) << k) + base) + off (an \
                            I32_SHLI_ANDI into a temporary, then I32_LOAD_XI on it): a table lookup */ \
    X(SELECT, 5, 0, 0, "DSSS", "D1 = SELECT(S2, S3, S4)")         /* dst, a, b, cond */ \
    X(GLOBAL_GET, 3, 0, 0, "DG", "D1 = GLOBAL_GET(G2)")     /* dst, global index */ \
    X(GLOBAL_SET, 3, 0, 0, "GS", "GLOBAL_SET(G1, S2)")     /* global index, src */ \
    X(CONST32, 3, 0, 0, "DI", "D1 = I2")        /* dst, value (zero-extended) */ \
    X(CONST64, 4, 0, 0, "DL", "D1 = L2")        /* dst, low, high */ \
    X(MEMORY_SIZE, 2, 0, 0, "D", "D1 = MEMORY_SIZE()")    /* dst */ \
    X(MEMORY_GROW, 3, 0, 0, "DS", "D1 = MEMORY_GROW(S2)")    /* dst, delta */ \
    X(MEMORY_INIT, 5, 0, BULK, "ZSSS", "MEMORY_INIT(Z1, S2, S3, S4)")    /* data index, d, s, n */ \
    X(DATA_DROP, 2, 0, 0, "Z", "DATA_DROP(Z1)")      /* data index */ \
    X(MEMORY_COPY, 4, 0, BULK, "SSS", "MEMORY_COPY(S1, S2, S3)")    /* d, s, n */ \
    X(MEMORY_FILL, 4, 0, BULK, "SSS", "MEMORY_FILL(S1, S2, S3)")    /* d, value, n */ \
    X(MEM_LOAD_G, 7, 0, TRAP, "DSIYL", "D1 = @I3(Y4, L5, S2)")     /* dst, address, opcode, memory, offset (2 words): a load (its WebAssembly opcode) from \
                            any memory but a 32-bit memory 0 (whose loads are the fast ones above): an i64 address \
                            if the memory is 64-bit, exact bounds (address + offset past 2^64 traps too) */ \
    X(MEM_STORE_G, 7, 0, TRAP, "SSIYL", "@I3(Y4, L5, S1, S2)")    /* address, value, opcode, memory, offset (2 words): the same for a store */ \
    X(MEMORY_SIZE_G, 3, 0, 0, "DY", "D1 = MEMORY_SIZE(Y2)")  /* dst, memory: memory.size of any memory (i64 if 64-bit) */ \
    X(MEMORY_GROW_G, 4, 0, 0, "DSY", "D1 = MEMORY_GROW(Y3, S2)")  /* dst, delta, memory */ \
    X(MEMORY_INIT_G, 6, 0, BULK, "ZYSSS", "MEMORY_INIT(Z1, Y2, S3, S4, S5)")  /* data index, memory, d, s, n */ \
    X(MEMORY_COPY_G, 6, 0, BULK, "YYSSS", "MEMORY_COPY(Y1, Y2, S3, S4, S5)")  /* dst memory, src memory, d, s, n */ \
    X(MEMORY_FILL_G, 5, 0, BULK, "YSSS", "MEMORY_FILL(Y1, S2, S3, S4)")  /* memory, d, value, n */ \
    X(TABLE_GET, 4, 0, TRAP, "DSX", "D1 = TABLE_GET(X3, S2)")      /* dst, index, table */ \
    X(TABLE_SET, 4, 0, TRAP, "XSS", "TABLE_SET(X1, S2, S3)")      /* table, index, value */ \
    X(TABLE_SIZE, 3, 0, 0, "DX", "D1 = TABLE_SIZE(X2)")     /* dst, table */ \
    X(TABLE_GROW, 5, 0, 0, "DSSX", "D1 = TABLE_GROW(X4, S2, S3)")     /* dst, init, n, table */ \
    X(TABLE_FILL, 5, 0, BULK, "XSSS", "TABLE_FILL(X1, S2, S3, S4)")     /* table, i, value, n */ \
    X(TABLE_COPY, 6, 0, BULK, "XXSSS", "TABLE_COPY(X1, X2, S3, S4, S5)")     /* dst table, src table, d, s, n */ \
    X(TABLE_INIT, 6, 0, BULK, "EXSSS", "TABLE_INIT(E1, X2, S3, S4, S5)")     /* elem index, table, d, s, n */ \
    X(ELEM_DROP, 2, 0, 0, "E", "ELEM_DROP(E1)")      /* elem index */ \
    X(REF_IS_NULL, 3, 0, 0, "DS", "D1 = REF_IS_NULL(S2)")    /* dst, a */ \
    X(REF_FUNC, 3, 0, 0, "DF", "D1 = REF_FUNC(F2)")       /* dst, function index */

/* Branches: X(NAME, WORDS); the offset is the last word. Compare-and-branch
 * superinstructions follow in RI_CODE_CMP_BRANCHES. */
#define RI_CODE_BRANCH_OPS(X) \
    X(BR, 2)             /* offset */ \
    X(BR_IF, 3)          /* cond, offset: branch when cond != 0 */ \
    X(BR_IFNOT, 3)       /* cond, offset: branch when cond == 0 */

/* Compare-and-branch superinstructions, made when br_if or if consumes the result of
 * the compare just before it: BR_IF_<cmp> (a, b, offset) and BR_IF_<cmp>_I (a, imm,
 * offset; imm as for the *_I operations below), 4 words each.
 * X(CMP, NEGATION): `if` branches to its else on the negated compare. */
#define RI_CODE_CMP_BRANCHES(X) \
    X(I32_EQ, I32_NE) X(I32_NE, I32_EQ) \
    X(I32_LT_S, I32_GE_S) X(I32_GE_S, I32_LT_S) X(I32_LT_U, I32_GE_U) X(I32_GE_U, I32_LT_U) \
    X(I32_GT_S, I32_LE_S) X(I32_LE_S, I32_GT_S) X(I32_GT_U, I32_LE_U) X(I32_LE_U, I32_GT_U) \
    X(I64_EQ, I64_NE) X(I64_NE, I64_EQ) \
    X(I64_LT_S, I64_GE_S) X(I64_GE_S, I64_LT_S) X(I64_LT_U, I64_GE_U) X(I64_GE_U, I64_LT_U) \
    X(I64_GT_S, I64_LE_S) X(I64_LE_S, I64_GT_S) X(I64_GT_U, I64_LE_U) X(I64_LE_U, I64_GT_U)

/* Float compare-and-branch, made as RI_CODE_CMP_BRANCHES: BR_IF_<cmp> and BR_IFNOT_<cmp>
 * (a, b, offset), 4 words: branch when a <cmp> b holds / does not hold (a NaN makes both
 * compares false, so the negation, for `if`, is an operation of its own); > and >= are
 * these with the operands swapped. X(CMP, MIRROR): MIRROR is the compare that is CMP with its
 * operands swapped. */
#define RI_CODE_FCMP_BRANCHES(X) X(F32_LT, F32_GT) X(F32_LE, F32_GE) X(F64_LT, F64_GT) X(F64_LE, F64_GE)

/* Every branch comes in four consecutive variants (RI_CODE_<branch> + RI_BRANCH_*),
 * chosen after the body is compiled (fused metering, see above):
 *   +0  plain: the target's own GAS/LOOP runs when reached.
 *   +1  _FG: the target is a GAS: the taken branch charges it and skips it; a
 *            conditional branch that falls through charges the GAS that follows it.
 *   +2  _BG: the target is a LOOP: the taken branch polls the interrupt flag, charges
 *            it and skips it; the fall-through is as in _FG.
 *   +3  _BU: unmetered code: the target is a LOOP_U: the taken branch polls the
 *            interrupt flag and skips it; the fall-through is plain. */
#define RI_BRANCH_FG 1
#define RI_BRANCH_BG 2
#define RI_BRANCH_BU 3

/* Binary operations with an immediate second operand: NAME_I (dst, a, imm), 4 words.
 * For i32 the immediate is the value; for i64 it is sign-extended from 32 bits (the
 * compiler uses these only for constants that fit). X(NAME, MIRROR, IDENTITY): MIRROR is
 * the operation with its two operands swapped (NAME itself if commutative, the mirrored
 * compare, NONE), so that a constant first operand can become the immediate; IDENTITY
 * the immediates that leave the first operand unchanged (ZERO, ONE, ONES: all bits set,
 * SHIFT0: a multiple of the width; NONE), for which no code is emitted. */
#define RI_CODE_IMM_OPS(X) \
    X(I32_ADD, I32_ADD, ZERO) X(I32_SUB, NONE, ZERO) X(I32_MUL, I32_MUL, ONE) X(I32_AND, I32_AND, ONES) \
    X(I32_OR, I32_OR, ZERO) X(I32_XOR, I32_XOR, ZERO) X(I32_SHL, NONE, SHIFT0) X(I32_SHR_S, NONE, SHIFT0) \
    X(I32_SHR_U, NONE, SHIFT0) X(I32_ROTL, NONE, SHIFT0) X(I32_ROTR, NONE, SHIFT0) X(I32_EQ, I32_EQ, NONE) \
    X(I32_NE, I32_NE, NONE) X(I32_LT_S, I32_GT_S, NONE) X(I32_LT_U, I32_GT_U, NONE) X(I32_GT_S, I32_LT_S, NONE) \
    X(I32_GT_U, I32_LT_U, NONE) X(I32_LE_S, I32_GE_S, NONE) X(I32_LE_U, I32_GE_U, NONE) X(I32_GE_S, I32_LE_S, NONE) \
    X(I32_GE_U, I32_LE_U, NONE) \
    X(I64_ADD, I64_ADD, ZERO) X(I64_SUB, NONE, ZERO) X(I64_MUL, I64_MUL, ONE) X(I64_AND, I64_AND, ONES) \
    X(I64_OR, I64_OR, ZERO) X(I64_XOR, I64_XOR, ZERO) X(I64_SHL, NONE, SHIFT0) X(I64_SHR_S, NONE, SHIFT0) \
    X(I64_SHR_U, NONE, SHIFT0) X(I64_ROTL, NONE, SHIFT0) X(I64_ROTR, NONE, SHIFT0) X(I64_EQ, I64_EQ, NONE) \
    X(I64_NE, I64_NE, NONE) X(I64_LT_S, I64_GT_S, NONE) X(I64_LT_U, I64_GT_U, NONE) X(I64_GT_S, I64_LT_S, NONE) \
    X(I64_GT_U, I64_LT_U, NONE) X(I64_LE_S, I64_GE_S, NONE) X(I64_LE_U, I64_GE_U, NONE) X(I64_GE_S, I64_LE_S, NONE) \
    X(I64_GE_U, I64_LE_U, NONE)

/* Loads and stores whose address is the i32.add emitted just before them, fused:
 * NAME_X: loads (dst, a, b, offset), stores (a, b, value, offset), the address being
 * (u32)(a + b) + offset; NAME_XI: the same with b an immediate. 5 words. */
#define RI_CODE_ADDR_LOAD_OPS(X) \
    X(I32_LOAD) X(I64_LOAD) X(F32_LOAD) X(F64_LOAD) \
    X(I32_LOAD8_S) X(I32_LOAD8_U) X(I32_LOAD16_S) X(I32_LOAD16_U)
#define RI_CODE_ADDR_STORE_OPS(X) X(I32_STORE) X(I64_STORE) X(F32_STORE) X(F64_STORE) X(I32_STORE8) X(I32_STORE16)
#define RI_CODE_ADDR_OPS(X) RI_CODE_ADDR_LOAD_OPS(X) RI_CODE_ADDR_STORE_OPS(X)

/* Loop-counter branches: an i32.add whose result a compare-and-branch tests, fused:
 * ADDBR_<cmp>_<kinds> (k, x, step, limit, offset), 6 words: k = x + step, then branch
 * when k <cmp> limit. <kinds> tells whether step and limit are slots (S) or immediates
 * (I): SS, SI, IS, II. Four branch variants each (RI_BRANCH_*). br_if / if on the sum
 * itself are its NE / EQ with the immediate 0. */
#define RI_CODE_ADDBR_CMPS(X) \
    X(I32_EQ) X(I32_NE) X(I32_LT_S) X(I32_LT_U) X(I32_GT_S) X(I32_GT_U) \
    X(I32_LE_S) X(I32_LE_U) X(I32_GE_S) X(I32_GE_U)

/* Loop-counter branches with the instruction before them fused in, for the compares of
 * RI_CODE_LOOPFUSE_CMPS only (each compare costs the interpreter 32 handlers, and a
 * larger interpreter loop makes the compiler keep fewer of its variables in registers):
 * I2ADDBR_<cmp>_<kinds> (d1, a1, imm1, d2, a2, imm2, k, x, step, limit, offset), 12
 * words: I32_ADD_I2 (pointer increments), then the ADDBR_<cmp>_<kinds>. Four branch
 * variants each (RI_BRANCH_*). */
#define RI_CODE_LOOPFUSE_CMPS(X) X(I32_NE)

/* MADDBR_<cmp>_<kinds> (d, s, k, x, step, limit, offset), 8 words: a MOVE d = s, then the
 * ADDBR_<cmp>_<kinds> (RI_CODE_LOOPFUSE_CMPS). Four branch variants each. */

/* i32 arithmetic whose other operand the operation just before it computed, fused:
 * I32_<OUTER>_<INNER> (d, a, x, y): d = a OUTER (x INNER y), and I32_<OUTER>_<INNER>_I
 * with y an immediate. 5 words. OUTER is commutative, so the computed operand may have
 * been either of its two. */
#define RI_CODE_PAIR_INNER(X, outer) \
    X(outer, ADD) X(outer, SUB) X(outer, MUL) X(outer, AND) X(outer, OR) X(outer, XOR) \
    X(outer, SHL) X(outer, SHR_S) X(outer, SHR_U) X(outer, ROTL) X(outer, ROTR)
#define RI_CODE_PAIR_OPS(X) \
    RI_CODE_PAIR_INNER(X, ADD) RI_CODE_PAIR_INNER(X, XOR) RI_CODE_PAIR_INNER(X, AND) \
    RI_CODE_PAIR_INNER(X, OR)

/* An i32 operation with an immediate on the result of one just before it, fused:
 * I32_<OUTER>I_<INNER>I (d, x, k_inner, k_outer), 5 words: d = (x INNER k_inner) OUTER
 * k_outer (address arithmetic: (i + 1) & mask, (i & mask) << 2, x * 31 + 7, ...). */
#define RI_CODE_IPAIR_INNER(X, outer) \
    X(outer, ADD) X(outer, AND) X(outer, OR) X(outer, XOR) X(outer, SHL) X(outer, SHR_U) X(outer, MUL)
#define RI_CODE_IPAIR_OPS(X) \
    RI_CODE_IPAIR_INNER(X, ADD) RI_CODE_IPAIR_INNER(X, AND) RI_CODE_IPAIR_INNER(X, OR) \
    RI_CODE_IPAIR_INNER(X, XOR) RI_CODE_IPAIR_INNER(X, SHL) RI_CODE_IPAIR_INNER(X, SHR_U) \
    RI_CODE_IPAIR_INNER(X, MUL)

/* i32.add of a value loaded just before: I32_ADD_L (d, a, addr, offset) 5 words, d = a +
 * mem32[addr + offset]; I32_ADD_LX / _LXI (d, a, p, q, offset) 6 words, the address being
 * that of I32_LOAD_X / _XI. X(NAME, WORDS, KINDS, WASM). */
#define RI_CODE_ADD_LOAD_OPS(X) \
    X(I32_ADD_L, 5, "DSSM", "D1 = I32_ADD(S2, I32_LOAD(M4, S3))") \
    X(I32_ADD_LX, 6, "DSSSM", "D1 = I32_ADD(S2, I32_LOAD(M5, I32_ADD(S3, S4)))") \
    X(I32_ADD_LXI, 6, "DSSIM", "D1 = I32_ADD(S2, I32_LOAD(M5, I32_ADD(S3, I4)))") \
    X(I32_ADD_L8U, 5, "DSSM", "D1 = I32_ADD(S2, I32_LOAD8_U(M4, S3))") /* the same with i32.load8_u */ \
    X(I32_ADD_LX8U, 6, "DSSSM", "D1 = I32_ADD(S2, I32_LOAD8_U(M5, I32_ADD(S3, S4)))") \
    X(I32_ADD_LXI8U, 6, "DSSIM", "D1 = I32_ADD(S2, I32_LOAD8_U(M5, I32_ADD(S3, I4)))")

/* Conditional branches on an i32 loaded just before them, fused: <LOAD>_BR_<cmp>_<kind>
 * (d, a, imm, off, b, offset), 7 words: d = the load at (u32)(a + imm) + off (the address
 * of *_LOAD_XI; a plain load's imm is 0), then branch when d <cmp> b, b a slot (S) or an
 * immediate (I; br_if / br_ifnot on the loaded value itself are NE / EQ with 0). b is read
 * after d is written. The load's stop point (trap) is the instruction's. Four branch
 * variants each (RI_BRANCH_*). */
#define RI_CODE_LOADBR_OPS(X) X(I32_LOAD) X(I32_LOAD8_U)

/* Two stores of the same kind in a row: NAME_2 (a1, v1, off1, a2, v2, off2), 7 words, in
 * order; the second's stop point is at position + 3. */
#define RI_CODE_STORE2_OPS(X) X(I32_STORE) X(I64_STORE) X(F64_STORE) X(I32_STORE8)

/* Accumulator variants (acc.c, choose_acc_variants): every handler that writes a slot
 * through PUT_U32/U64/F32 also leaves the slot's new bits in the interpreter's register
 * `acc`, and through PUT_F64 the value in `facc` (a MOVE's last move: its bits in acc).
 * When an instruction reads, at operand positions MASK, the slot that the instruction just
 * before it wrote as its operand 1 (a MOVE: either slot of its last move) and that one was
 * a producer of that class (ACC_INT or ACC_F64), and no branch lands between them, it
 * becomes VARIANT, which reads those operands from the register: the value does
 * not make the round trip through memory (a store, then a load that waits for it) on the
 * dependency chain. The slot is still written; only that read changes.
 * X(VARIANT, BASE, WORDS, MASK, CLASS). */
/* _A2 / _A3: operand 2 / 3 of a binary (d, a, b) from the accumulator; _I_A2: the
 * immediate form's a. */
#define RI_ACC_BIN(X, name, cls) X(name##_A2, name, 4, 0x4, cls) X(name##_A3, name, 4, 0x8, cls)
#define RI_ACC_BINI(X, name) RI_ACC_BIN(X, name, INT) X(name##_I_A2, name##_I, 4, 0x4, INT)
/* loads (d, addr, off): _A2 the address; stores (addr, value, off): _A1 the address,
 * _A2 the value (of class cls) */
#define RI_ACC_LOAD(X, name) X(name##_A2, name, 4, 0x4, INT)
#define RI_ACC_STORE(X, name, cls) X(name##_A1, name, 4, 0x2, INT) X(name##_A2, name, 4, 0x4, cls)
#define RI_CODE_ACC_OPS(X) \
    RI_ACC_BINI(X, I32_ADD) RI_ACC_BINI(X, I32_SUB) RI_ACC_BINI(X, I32_MUL) RI_ACC_BINI(X, I32_AND) \
    RI_ACC_BINI(X, I32_OR) RI_ACC_BINI(X, I32_XOR) RI_ACC_BINI(X, I32_SHL) RI_ACC_BINI(X, I32_SHR_S) \
    RI_ACC_BINI(X, I32_SHR_U) RI_ACC_BINI(X, I32_ROTL) RI_ACC_BINI(X, I32_ROTR) \
    RI_ACC_BINI(X, I64_ADD) RI_ACC_BINI(X, I64_SUB) RI_ACC_BINI(X, I64_MUL) RI_ACC_BINI(X, I64_AND) \
    RI_ACC_BINI(X, I64_OR) RI_ACC_BINI(X, I64_XOR) RI_ACC_BINI(X, I64_SHL) RI_ACC_BINI(X, I64_SHR_U) \
    RI_ACC_BINI(X, I64_ROTL) \
    RI_ACC_BIN(X, F64_ADD, F64) RI_ACC_BIN(X, F64_SUB, F64) RI_ACC_BIN(X, F64_MUL, F64) RI_ACC_BIN(X, F64_DIV, F64) \
    X(F64_ADD_A23, F64_ADD, 4, 0xC, F64) X(F64_MUL_A23, F64_MUL, 4, 0xC, F64) X(F64_SQRT_A2, F64_SQRT, 3, 0x4, F64) \
    RI_ACC_BIN(X, F32_ADD, INT) RI_ACC_BIN(X, F32_SUB, INT) RI_ACC_BIN(X, F32_MUL, INT) RI_ACC_BIN(X, F32_DIV, INT) \
    X(F32_ADD_A23, F32_ADD, 4, 0xC, INT) X(F32_MUL_A23, F32_MUL, 4, 0xC, INT) \
    RI_ACC_LOAD(X, I32_LOAD) RI_ACC_LOAD(X, I32_LOAD8_U) RI_ACC_LOAD(X, I32_LOAD8_S) RI_ACC_LOAD(X, I32_LOAD16_U) \
    RI_ACC_LOAD(X, I32_LOAD16_S) RI_ACC_LOAD(X, I64_LOAD) RI_ACC_LOAD(X, F32_LOAD) RI_ACC_LOAD(X, F64_LOAD) \
    RI_ACC_STORE(X, I32_STORE, INT) RI_ACC_STORE(X, I32_STORE8, INT) RI_ACC_STORE(X, I32_STORE16, INT) \
    RI_ACC_STORE(X, I64_STORE, INT) RI_ACC_STORE(X, F32_STORE, INT) RI_ACC_STORE(X, F64_STORE, F64) \
    X(I32_ADD_LX_A2, I32_ADD_LX, 6, 0x4, INT) X(I32_ADD_LXI_A2, I32_ADD_LXI, 6, 0x4, INT) \
    X(I32_ADD_LX8U_A2, I32_ADD_LX8U, 6, 0x4, INT) X(I32_ADD_LXI8U_A2, I32_ADD_LXI8U, 6, 0x4, INT) \
    X(I32_LOAD_SX_A2, I32_LOAD_SX, 6, 0x4, INT) X(I32_LOAD_SX_A3, I32_LOAD_SX, 6, 0x8, INT) \
    X(I32_LOAD_SXI_A2, I32_LOAD_SXI, 6, 0x4, INT) X(I32_LOAD_MSXI_A2, I32_LOAD_MSXI, 7, 0x4, INT) \
    X(I32_ADD_SHL_I_A2, I32_ADD_SHL_I, 5, 0x4, INT) X(I32_ADD_SHL_I_A3, I32_ADD_SHL_I, 5, 0x8, INT) \
    X(I32_XOR_SHR_U_I_A2, I32_XOR_SHR_U_I, 5, 0x4, INT) X(I32_XOR_SHR_U_I_A3, I32_XOR_SHR_U_I, 5, 0x8, INT) \

/* Every family of operations in the enum's order: the enum, the handler table (interp.c)
 * and codeprof expand this one list, each with its own RI_X_CTRL ... RI_X_NUM defined;
 * SAT is the X for the saturating conversions (numeric ops too, mostly). */
#define RI_CODE_EVERY_OP(SAT) \
    RI_CODE_CONTROL_OPS(RI_X_CTRL) RI_CODE_BRANCH_OPS(RI_X_BR) RI_CODE_CMP_BRANCHES(RI_X_CMPBR) \
    RI_CODE_FCMP_BRANCHES(RI_X_FCMPBR) \
    RI_CODE_IMM_OPS(RI_X_IMM) RI_CODE_ADDR_OPS(RI_X_ADDR) RI_CODE_ADDBR_CMPS(RI_X_ADDBR) \
    RI_CODE_LOOPFUSE_CMPS(RI_X_I2ADDBR) RI_CODE_LOOPFUSE_CMPS(RI_X_MADDBR) \
    RI_CODE_PAIR_OPS(RI_X_PAIR) RI_CODE_ADD_LOAD_OPS(RI_X_ADDL) RI_CODE_LOADBR_OPS(RI_X_LOADBR) \
    RI_CODE_STORE2_OPS(RI_X_STORE2) RI_CODE_ACC_OPS(RI_X_ACC) \
    RI_CODE_IPAIR_OPS(RI_X_IPAIR) RI_MEMORY_OPS(RI_X_MEM) \
    RI_NUMERIC_OPS(RI_X_NUM) RI_SAT_OPS(SAT) RI_CODE_SIMD_OPS(RI_X_CTRL) \
    RI_CODE_SIMD_LANE_OPS(RI_X_SIMD_LANE) RI_CODE_SIMD_LOAD_OPS(RI_X_SIMD_LOAD)

/* Every internal operation. Loads (dst, addr, offset) and stores (addr, value, offset)
 * keep their opcodes.h names, 4 words; numeric ops too: unary (dst, a) 3 words,
 * binary (dst, a, b) 4 words. */
#define RI_X_BRANCH_ENUM(name) RI_CODE_##name, RI_CODE_##name##_FG, RI_CODE_##name##_BG, RI_CODE_##name##_BU,
typedef enum ri_code_op {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) RI_CODE_##name,
#define RI_X_BR(name, words) RI_X_BRANCH_ENUM(name)
#define RI_X_CMPBR(cmp, neg) RI_X_BRANCH_ENUM(BR_IF_##cmp) RI_X_BRANCH_ENUM(BR_IF_##cmp##_I)
#define RI_X_FCMPBR(cmp, mirror) RI_X_BRANCH_ENUM(BR_IF_##cmp) RI_X_BRANCH_ENUM(BR_IFNOT_##cmp)
#define RI_X_IMM(name, mirror, ident) RI_CODE_##name##_I,
#define RI_X_ADDR(name) RI_CODE_##name##_X, RI_CODE_##name##_XI,
#define RI_X_ADDBR(cmp) RI_X_BRANCH_ENUM(ADDBR_##cmp##_SS) RI_X_BRANCH_ENUM(ADDBR_##cmp##_SI) \
                        RI_X_BRANCH_ENUM(ADDBR_##cmp##_IS) RI_X_BRANCH_ENUM(ADDBR_##cmp##_II)
#define RI_X_PAIR(outer, inner) RI_CODE_I32_##outer##_##inner, RI_CODE_I32_##outer##_##inner##_I,
#define RI_X_ADDL(name, words, kinds, wasm) RI_CODE_##name,
#define RI_X_LOADBR(load) RI_X_BRANCH_ENUM(load##_BR_EQ_S) RI_X_BRANCH_ENUM(load##_BR_NE_S) \
                          RI_X_BRANCH_ENUM(load##_BR_EQ_I) RI_X_BRANCH_ENUM(load##_BR_NE_I)
#define RI_X_STORE2(name) RI_CODE_##name##_2,
#define RI_X_ACC(variant, base, words, mask, cls) RI_CODE_##variant,
#define RI_X_IPAIR(outer, inner) RI_CODE_I32_##outer##I_##inner##I,
#define RI_X_I2ADDBR(cmp) RI_X_BRANCH_ENUM(I2ADDBR_##cmp##_SS) RI_X_BRANCH_ENUM(I2ADDBR_##cmp##_SI) \
                          RI_X_BRANCH_ENUM(I2ADDBR_##cmp##_IS) RI_X_BRANCH_ENUM(I2ADDBR_##cmp##_II)
#define RI_X_MADDBR(cmp) RI_X_BRANCH_ENUM(MADDBR_##cmp##_SS) RI_X_BRANCH_ENUM(MADDBR_##cmp##_SI) \
                         RI_X_BRANCH_ENUM(MADDBR_##cmp##_IS) RI_X_BRANCH_ENUM(MADDBR_##cmp##_II)
#define RI_X_MEM(name, byte, t, n, st) RI_CODE_##name,
#define RI_X_NUM(name, byte, a, b, r) RI_CODE_##name,
    RI_CODE_EVERY_OP(RI_X_NUM)
#include "code_xundef.h"
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

/* Exception handling (try, catch, catch_all, delegate): static tables of the code, so that
 * the position where an exception is thrown (or the call it came out of) is all that says
 * which handlers apply; nothing about them is in the frames. */
#define RI_TRY_NONE UINT32_MAX       /* no try: the exception goes on to the caller */
#define RI_TRY_CATCHES (UINT32_MAX - 1) /* ri_code_try.delegate: not a delegate, its catches apply */
#define RI_CATCH_ALL UINT32_MAX     /* ri_code_catch.tag of catch_all */
#define RI_NO_SLOT UINT32_MAX

typedef struct ri_code_try {
    uint32_t start, end;     /* code positions of the try's body, [start, end) */
    uint32_t parent;         /* the innermost try whose body holds this try, or RI_TRY_NONE */
    uint32_t delegate;       /* RI_TRY_CATCHES; or a delegate's target: a try, or RI_TRY_NONE (the caller) */
    uint32_t ncatches;       /* its catch clauses (ri_code.catches of this try_index, in order) */
} ri_code_try;

typedef struct ri_code_catch {
    uint32_t try_index;      /* the try it belongs to (a try's clauses need not be adjacent: a clause may
                                hold tries with clauses of their own) */
    uint32_t tag;            /* tag index, or RI_CATCH_ALL */
    uint32_t target, end;    /* code positions of the clause, [target, end); target is its GAS */
    uint32_t base;           /* slot of the exception's first value (the try's label height) */
    uint32_t exn_slot;       /* slot that keeps the exception for a rethrow in the clause, or RI_NO_SLOT;
                                a try_table clause: where its exnref goes (catch_ref, catch_all_ref) */
    uint32_t table;          /* 1: a try_table clause: target is the branch target of its label (a block's
                                end, a loop's header, or a return), base that label's slots; no [target, end) */
} ri_code_catch;

typedef struct ri_code {
    uint32_t func_index;  /* in the module's function index space */
    uint32_t nparams, nresults;
    uint32_t nlocals;     /* params + declared locals */
    uint32_t nconsts;     /* constant pool slots */
    uint32_t stack_base;  /* nlocals + nconsts: slot of operand stack entry 0 */
    uint32_t frame_slots; /* stack_base + maximum operand stack height */
    uint32_t metered;     /* 0: compiled without gas charges (ri_module_config.unmetered) */
    uint32_t tail_calls;  /* 1: the body makes tail calls (a caller of it may wait for another function) */
    uint32_t nwords;
    uint32_t *words;
    uint32_t npoints;
    ri_code_point *points;
    uint32_t ntries, ncatches;
    ri_code_try *tries;      /* in the order the tries open (an inner one after its outer ones) */
    ri_code_catch *catches;
    uint32_t exn_base, nexn; /* the slots a catch keeps its exception in, [exn_base, exn_base + nexn) */
} ri_code;

/* interp.c: the label offsets of the interpreter's handlers, indexed by ri_code_op.
 * The compiler (compile_emit.c) writes these into handler words. Immutable, shared by
 * all threads. */
const int32_t *ri_interp_dispatch_table(void);
/* interp.c: where a run's entry marker frame returns to: a GAS of cost 0, then EXIT,
 * which leaves the interpreter (so that a return needs no test for the marker). */
const uint32_t *ri_interp_exit_code(void);

/* The stop point at code position pos: the one at pos exactly, else the last before
 * it; NULL if there is none. */
const ri_code_point *ri_code_find_point(const ri_code *code, uint32_t pos);

#endif
