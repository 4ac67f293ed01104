/*
 * What the compiler's passes share (compile*.c, fuse*.c, branch_variant.c, acc.c): the
 * compiler's state and the functions one pass calls in another. Internal to src/engine.
 * The short names are macros for ri_compile_* symbols, so that the static library exports
 * nothing unprefixed.
 */
#ifndef RI_ENGINE_COMPILE_INTERNAL_H
#define RI_ENGINE_COMPILE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "code.h"
#include "code_info.h"
#include "common/ri_assert.h"
#include "instr.h"
#include "runtime.h"

/* Constants beyond this many distinct values per body are materialised by CONST32 /
 * CONST64 instead: the pool is copied into the frame on every call. */
#define RI_MAX_POOL_CONSTS 64u

/* The code must stay addressable by int32 branch offsets. */
#define RI_MAX_CODE_WORDS (UINT32_C(1) << 30)

#define NO_POS UINT32_MAX
/* Room for the fusion rules (fuse_rules.c) and the operand words of a fused instruction. */
#define RI_FUSE_RULE_CAP 400
#define RI_FUSE_RULE_WORDS 11
#define RI_FUSE_RULE_BUCKETS 1024 /* a power of two */

typedef enum entry_kind {
    ENTRY_SLOT,   /* the value is in the entry's own slot */
    ENTRY_LOCAL,  /* the value is local `src` (pending) */
    ENTRY_CONST,  /* the value is constant-pool slot `src`, holding `bits` (pending) */
    ENTRY_IMM,    /* the value is the constant `bits`, in no slot (pending) */
} entry_kind;

typedef struct operand {
    uint32_t src;     /* the slot holding the value (not for ENTRY_IMM) */
    uint8_t kind;     /* entry_kind */
    uint64_t bits;    /* ENTRY_CONST, ENTRY_IMM: the constant (i32 zero-extended) */
    uint8_t hi;       /* the high slot of a v128 (the entry below is its low slot) */
} operand;

/* Marks operand words in compiler.opmap (instruction starts hold their op). */
#define NO_OP 0xFFFFu
_Static_assert(RI_CODE_OP_COUNT < NO_OP, "operations must fit compiler.opmap");
#define RI_X_ACC(variant, base, words, mask, cls) +1
enum { RI_CODE_ACC_COUNT = 0 RI_CODE_ACC_OPS(RI_X_ACC) };
#undef RI_X_ACC
_Static_assert(RI_CODE_ACC_COUNT < 255, "accumulator variants must fit compiler.acc_head");

typedef enum ctrl_kind { CTRL_FUNC, CTRL_BLOCK, CTRL_LOOP, CTRL_IF, CTRL_ELSE, CTRL_TRY, CTRL_CATCH, CTRL_TRY_TABLE } ctrl_kind;

typedef struct ctrl {
    ctrl_kind kind;
    uint32_t height;      /* operand stack height at entry, block params excluded */
    uint32_t nparams, nresults;
    uint32_t loop_pos;    /* loop: position of the LOOP header (the branch target) */
    uint32_t fixups;      /* forward branches to the label: chain through the offset words, pos + 1 (0 ends) */
    uint32_t else_fixups; /* if: the jump to the else branch (or to the end), same encoding */
    bool unreachable;     /* the rest of the block is dead code */
    uint32_t try_index;   /* try, catch: its entry in the compiler's tries */
    uint32_t catch_index; /* catch: the clause open (its entry in the compiler's catches) */
    uint32_t exn_slot;    /* try, catch: the slot its catches keep the exception in for a rethrow */
    uint32_t catch_targets; /* try_table clauses that branch to this label, bound at its end */
    /* the value types of its params and results (nparams, nresults count slots: a v128 two) */
    const uint8_t *ptypes, *rtypes;
    uint32_t npv, nrv;
} ctrl;

typedef struct emitted {
    uint32_t pos;         /* NO_POS: none */
    ri_code_op op;
    uint32_t dst_pos;     /* its dst word, when it wrote a single result (0: none) */
} emitted;


typedef struct compiler {
    const ri_module *m;
    const int32_t *dispatch;
    struct ri_code_verifier *verifier; /* builds with assertions: checks each compiled body (invariant 15) */
    ri_error *err;
    bool failed;
    bool metered;         /* false: ri_module_config.unmetered, no gas charges */
    uint32_t fusions_off; /* ri_module_config.fusions_off: families (ri_fusion) left out */
    bool tail_calls;      /* the body has a return_call or return_call_indirect */
    /* exception handling: the tables of ri_code, and the exception slots in use */
    ri_code_try *tries;
    uint32_t ntries, tries_cap;
    ri_code_catch *catches;
    uint32_t ncatches, catches_cap;
    uint32_t exn_base, nexn, exn_depth;
    uint8_t *nest;        /* scratch of count_exn_slots: per open block, whether it is a try */
    uint32_t nest_cap;

    uint32_t func_index;
    const ri_type *type;
    const uint8_t *body_end;

    uint32_t *code;
    uint32_t len, cap;
    uint16_t *opmap;      /* per code word: the op starting there, or NO_OP */
    uint32_t opmap_cap;
    ri_code_point *points;
    uint32_t npoints, points_cap;
    /* the positions of the branches, br_tables and calls emitted, in code order: the passes
     * over the compiled body (branch and accumulator variants) visit only these */
    uint32_t *jumps;
    uint32_t njumps, jumps_cap;

    uint32_t nlocals, stack_base;
    /* v128 takes two slots (simd.h): the slot counts of the parameters, results and
     * declared locals, the number of locals (values), and the first slot of each local
     * (lslot; NULL when local i is slot i) */
    uint32_t pslots, rslots, dslots, nlocal_vals;
    uint32_t *lslot;
    uint32_t lslot_cap;
    const uint8_t *decl_types;
    uint8_t *written;     /* per local: some local.set/tee of it came before (in code order) */
    uint32_t written_cap;
    uint32_t loops;       /* enclosing loops */
    uint64_t consts[RI_MAX_POOL_CONSTS];
    uint32_t nconsts;

    operand *stack;
    uint32_t h, max_h, stack_cap;
    uint32_t npending;    /* entries that are not ENTRY_SLOT */

    ctrl *ctrls;
    uint32_t nctrl, ctrl_cap;
    uint32_t dead_depth;  /* blocks opened inside dead code */
    uint32_t *stubs;      /* br_table scratch: stub position per label depth */
    uint32_t stubs_cap;

    uint32_t gas_pos;     /* word holding the cost of the current region (0: none) */
    uint32_t gas_count;   /* WebAssembly instructions in the current region so far */
    uint32_t call_gas_pos; /* the GAS right after the last call: it stays (returns charge it) */

    /* The last instructions emitted, for peephole rewrites (fusions): rewrites match last
     * and prev; prev2 is what becomes prev again when a rewrite removes last, so that a
     * fusion taking back two instructions still sees the one before them (the a += x * y
     * forms with their address: without it six of the bench and fixture modules compile
     * differently). Cleared at labels: no rewrite reaches across one. */
    emitted last, prev, prev2;

    uint32_t wasm_offset;  /* of the instruction being compiled */
    uint32_t next_offset;  /* of the instruction after it: where a region opened here begins */
    /* accumulator variants (choose_acc_variants): acc_head[op] = 1 + the index in acc_variants
     * of op's first variant (0: none), acc_next[i] = 1 + the next one's; a per-word landing
     * map, reused from function to function */
    uint8_t acc_head[RI_CODE_OP_COUNT];
    uint8_t acc_next[RI_CODE_ACC_COUNT];
    /* the fusion rules (fuse_rules.c, index_fuse_rules), hashed by the operation emitted and
     * the last one: rule_head[bucket] = 1 + the index of the bucket's first rule (0: none),
     * rule_next[i] = 1 + the next one's, in table order */
    uint16_t rule_head[RI_FUSE_RULE_BUCKETS];
    uint16_t rule_next[RI_FUSE_RULE_CAP];
    uint8_t *landing;
    uint32_t landing_cap;
} compiler;

/* Whether fusion family f (ri_fusion) is on for this module. */
static inline bool fuse_on(const compiler *c, uint32_t f) { return (c->fusions_off & f) == 0; }

/* Whether operand e is a constant (in the pool, or an immediate). */
static inline bool is_const(const operand *e) { return e->kind == ENTRY_CONST || e->kind == ENTRY_IMM; }

/* The slot of operand stack entry index. */
static inline uint32_t own_slot(const compiler *c, uint32_t index) { return c->stack_base + index; }

/* Whether numeric operation op works on i64 operands. */
static inline bool is_i64_op(ri_code_op op) { return (ri_code_flags(op) & RI_OPF_I64) != 0; }

/* op with its two operands swapped: op itself if commutative, the mirrored compare,
 * or RI_CODE_OP_COUNT. */
static inline ri_code_op swapped_form(ri_code_op op) { return ri_code_form(op, RI_REL_MIRROR); }

/* The size of branch instruction op (its offset is the last word), 0 if op is none. */
static inline uint32_t branch_words(uint32_t op) { return ri_code_branch_words(op); }

/* ---- compile_emit.c ---- */
#define add_point ri_compile_add_point
void add_point(compiler *c, uint32_t pos, ri_point_kind kind, uint32_t height);
#define drop_to ri_compile_drop_to
void drop_to(compiler *c, uint32_t height);
#define emit1 ri_compile_emit1
uint32_t emit1(compiler *c, ri_code_op op, uint32_t a);
#define emit2 ri_compile_emit2
uint32_t emit2(compiler *c, ri_code_op op, uint32_t a, uint32_t b);
#define emit3 ri_compile_emit3
uint32_t emit3(compiler *c, ri_code_op op, uint32_t a, uint32_t b, uint32_t d);
#define emit4 ri_compile_emit4
uint32_t emit4(compiler *c, ri_code_op op, uint32_t a, uint32_t b, uint32_t d, uint32_t e);
#define emit_const ri_compile_emit_const
uint32_t emit_const(compiler *c, uint32_t dst, uint64_t bits);
#define emit_copy ri_compile_emit_copy
void emit_copy(compiler *c, uint32_t dst, const operand *e);
#define emit_op ri_compile_emit_op
uint32_t emit_op(compiler *c, ri_code_op op, uint32_t n);
#define fail ri_compile_fail
void fail(compiler *c, ri_errcode code, const char *what);
#define flush_all ri_compile_flush_all
void flush_all(compiler *c);
#define flush_local ri_compile_flush_local
void flush_local(compiler *c, uint32_t k, uint32_t below);
#define forget_emitted ri_compile_forget_emitted
void forget_emitted(compiler *c);
#define from_last ri_compile_from_last
bool from_last(const compiler *c, const operand *e);
#define grow_array_to ri_compile_grow_array_to
bool grow_array_to(compiler *c, void **ptr, uint32_t *cap, uint64_t need, size_t elem);
/* Makes room for need elements of *ptr (capacity *cap); false after failing c. Inline: it is
 * asked on every emission and push, and almost always has the room already. */
static inline bool grow_array(compiler *c, void **ptr, uint32_t *cap, uint64_t need, size_t elem) {
    return need <= *cap || grow_array_to(c, ptr, cap, need, elem);
}
#define keep_operand ri_compile_keep_operand
void keep_operand(compiler *c, operand e);
#define materialise ri_compile_materialise
void materialise(compiler *c, uint32_t i);
#define note_dst ri_compile_note_dst
void note_dst(compiler *c, uint32_t pos);
#define pool_find ri_compile_pool_find
uint32_t pool_find(const compiler *c, uint64_t bits);
#define pool_find2 ri_compile_pool_find2
uint32_t pool_find2(const compiler *c, uint64_t lo, uint64_t hi);
#define pop_underflow ri_compile_pop_underflow
operand pop_underflow(compiler *c);
/* Pops the top operand; past the current block's height, fails c ("operand stack
 * underflow"). (The operand stack's operations are inline: every instruction makes some.) */
static inline operand pop(compiler *c) {
    if (c->h == 0 || c->h <= (c->nctrl ? c->ctrls[c->nctrl - 1].height : 0)) return pop_underflow(c);
    operand e = c->stack[--c->h];
    RI_ASSERT(e.kind != ENTRY_SLOT || e.src == own_slot(c, c->h), "I11");
    if (e.kind != ENTRY_SLOT) c->npending--;
    return e;
}
/* Pushes an entry as it was (an operand popped before, pushed back unchanged). An entry
 * in a slot is in its own slot (invariant 11). */
static inline void push_operand(compiler *c, operand e) {
    if (c->failed) return;
    if (!grow_array(c, (void **)&c->stack, &c->stack_cap, (uint64_t)c->h + 1, sizeof *c->stack)) return;
    RI_ASSERT(e.kind != ENTRY_SLOT || e.src == own_slot(c, c->h), "I11");
    if (e.kind != ENTRY_SLOT) c->npending++;
    c->stack[c->h++] = e;
    if (c->h > c->max_h) c->max_h = c->h;
}
static inline void push_entry(compiler *c, entry_kind kind, uint32_t src) {
    push_operand(c, (operand){src, (uint8_t)kind, 0, 0});
}
/* Pushes a result computed into its own slot; returns that slot. */
static inline uint32_t push_slot(compiler *c) {
    uint32_t slot = own_slot(c, c->h);
    push_entry(c, ENTRY_SLOT, slot);
    return slot;
}
#define put_point ri_compile_put_point
void put_point(compiler *c, uint32_t pos, ri_code_point pt);
#define set_word ri_compile_set_word
void set_word(compiler *c, uint32_t pos, uint32_t value);
#define slot_of ri_compile_slot_of
uint32_t slot_of(compiler *c, operand e, uint32_t index);
#define take_last ri_compile_take_last
bool take_last(compiler *c, ri_code_point *pt);
#define truncate_code ri_compile_truncate_code
void truncate_code(compiler *c, uint32_t pos);

/* ---- compile.c ---- */
#define block_arity ri_compile_block_arity
bool block_arity(compiler *c, const ri_blocktype *bt, uint32_t *np, uint32_t *nr);
#define branch_to ri_compile_branch_to
void branch_to(compiler *c, ctrl *l, uint32_t word);
#define compile_end ri_compile_compile_end
void compile_end(compiler *c);
#define fast_memory ri_compile_fast_memory
bool fast_memory(const ri_module *m, uint32_t memidx);
#define label_arity ri_compile_label_arity
uint32_t label_arity(const ctrl *l);
#define label_at ri_compile_label_at
ctrl *label_at(compiler *c, uint32_t depth);
#define materialise_top ri_compile_materialise_top
void materialise_top(compiler *c, uint32_t n);
#define push_ctrl ri_compile_push_ctrl
ctrl *push_ctrl(compiler *c, ctrl_kind kind, uint32_t nparams, uint32_t nresults);
#define reset_stack ri_compile_reset_stack
void reset_stack(compiler *c, uint32_t height, const uint8_t *types, uint32_t n);
#define set_block_types ri_compile_set_block_types
void set_block_types(compiler *c, const ri_blocktype *bt);
#define start_region ri_compile_start_region
uint32_t start_region(compiler *c, ri_code_op op, ri_point_kind kind);

/* ---- compile_simd.c ---- */
#define compile_local_set_v128 ri_compile_compile_local_set_v128
void compile_local_set_v128(compiler *c, uint32_t k, bool tee);
#define compile_global_v128 ri_compile_compile_global_v128
void compile_global_v128(compiler *c, uint32_t index, bool set);
#define compile_select_v128 ri_compile_compile_select_v128
void compile_select_v128(compiler *c);
#define compile_simd ri_compile_compile_simd
void compile_simd(compiler *c, const ri_instr *in);

/* ---- compile_exn.c ---- */
#define emit_catch_return ri_compile_emit_catch_return
void emit_catch_return(compiler *c);
#define bind_catch_targets ri_compile_bind_catch_targets
void bind_catch_targets(compiler *c, uint32_t label, uint32_t target);
#define compile_try_table ri_compile_compile_try_table
void compile_try_table(compiler *c, const ri_instr *in);
#define compile_throw_ref ri_compile_compile_throw_ref
void compile_throw_ref(compiler *c);
#define compile_try ri_compile_compile_try
void compile_try(compiler *c, const ri_blocktype *bt);
#define end_try ri_compile_end_try
void end_try(compiler *c, const ctrl *l);
#define compile_catch ri_compile_compile_catch
void compile_catch(compiler *c, const ri_instr *in);
#define compile_delegate ri_compile_compile_delegate
void compile_delegate(compiler *c, uint32_t depth);
#define compile_throw ri_compile_compile_throw
void compile_throw(compiler *c, uint32_t tag);
#define compile_rethrow ri_compile_compile_rethrow
void compile_rethrow(compiler *c, uint32_t depth);
#define count_exn_slots ri_compile_count_exn_slots
uint32_t count_exn_slots(compiler *c, const uint8_t *start, const uint8_t *end);

/* ---- fuse.c: branches (their rules: fuse_rules.c) ---- */
#define emit_cond_branch ri_compile_emit_cond_branch
uint32_t emit_cond_branch(compiler *c, operand cond, bool fused, ri_code_op cmp, uint32_t a, uint32_t b,
                          bool negate);
#define take_compare ri_compile_take_compare
bool take_compare(compiler *c, operand cond, ri_code_op *cmp, uint32_t *a, uint32_t *b);

/* ---- fuse_rules.c: the fusion rules as data ---- */
/* Where a fusion rule applies: what the translation is emitting. */
typedef enum fuse_site {
    FUSE_SITE_BINARY,    /* a binary operation, operands a, b in slots */
    FUSE_SITE_IMM,       /* one with an immediate: a, b.bits; src is a's slot */
    FUSE_SITE_LOAD,      /* a load: a is the address */
    FUSE_SITE_LOAD_PAIR, /* an i32 load from slot a.src right after another */
    FUSE_SITE_STORE,     /* a store: a is the address, b the value */
    FUSE_SITE_RETURN,    /* a return of one value, a */
    FUSE_SITE_BRANCH,    /* a conditional branch op (a, b): slots or immediates as its words */
} fuse_site;

/* The instruction being compiled, as the rules see it. */
typedef struct fuse_ctx {
    fuse_site site;
    ri_code_op op;    /* the operation it would be on its own */
    operand a, b;     /* operands as popped (ENTRY_IMM with bits 0: none) */
    uint32_t src;     /* FUSE_SITE_IMM: a's slot */
    uint32_t offset;  /* loads and stores */
} fuse_ctx;

#define fuse_by_rules ri_compile_fuse_by_rules
/* Emits x fused with the instructions just before it by the first rule that applies (and
 * pushes its result); false if none does (nothing changed). *end (if end): the position
 * after the fused instruction, NO_POS if its emission failed. */
bool fuse_by_rules(compiler *c, const fuse_ctx *x, uint32_t *end);
#define fuse_rule_count ri_compile_fuse_rule_count
uint32_t fuse_rule_count(void);
#define fuse_rules_check ri_compile_fuse_rules_check
/* The index of the first rule that is not well formed (its words not its fused operation's
 * size, a word of an instruction it does not absorb, ...), UINT32_MAX if none. */
uint32_t fuse_rules_check(void);
#define index_fuse_rules ri_compile_index_fuse_rules
void index_fuse_rules(compiler *c);

/* ---- fuse_memory.c ---- */
#define fuse_load ri_compile_fuse_load
bool fuse_load(compiler *c, ri_code_op op, operand addr, uint32_t offset);
#define fuse_load_pair ri_compile_fuse_load_pair
bool fuse_load_pair(compiler *c, ri_code_op op, uint32_t a, uint32_t offset);
#define fuse_store ri_compile_fuse_store
bool fuse_store(compiler *c, ri_code_op op, operand addr, operand v, uint32_t offset);
#define take_address_imm ri_compile_take_address_imm
bool take_address_imm(compiler *c, operand addr, uint32_t *x, uint32_t *imm);

/* ---- fuse_arith.c ---- */
#define fuse_binary ri_compile_fuse_binary
bool fuse_binary(compiler *c, ri_code_op op, operand a, operand b);
#define fuse_return ri_compile_fuse_return
bool fuse_return(compiler *c, const operand *e);
#define imm_fits ri_compile_imm_fits
bool imm_fits(ri_code_op op, uint64_t bits);
#define unpair ri_compile_unpair
void unpair(compiler *c);

/* ---- branch_variant.c ---- */
#define branch_target ri_compile_branch_target
uint32_t branch_target(const compiler *c, uint32_t word);
#define choose_branch_variants ri_compile_choose_branch_variants
void choose_branch_variants(compiler *c);

/* ---- acc.c ---- */
#define choose_acc_variants ri_compile_choose_acc_variants
void choose_acc_variants(compiler *c);
#define index_acc_variants ri_compile_index_acc_variants
void index_acc_variants(compiler *c);

#endif
