/*
 * The translation's emission and operand stack (compile_internal.h): appending code words and
 * stop points, the record of the last instructions emitted (which the peephole fusions
 * rewrite), the operand stack with its pending entries (a local, a pool constant, an
 * immediate) and their materialisation, and the constant pool's lookups.
 */
#include <stdlib.h>
#include <string.h>

#include "common/ri_assert.h"
#include "compile_internal.h"

static const emitted NO_EMITTED = {UINT32_MAX, RI_CODE_OP_COUNT, 0};

/* ---- failure ------------------------------------------------------------------------ */

void fail(compiler *c, ri_errcode code, const char *what) {
    if (c->failed) return;
    c->failed = true;
    ri_error_set(c->err, code, "compiling function %u at offset 0x%x: %s", c->func_index,
                 c->wasm_offset, what);
}

bool grow_array_to(compiler *c, void **ptr, uint32_t *cap, uint64_t need, size_t elem) {
    if (need <= *cap) return true;
    uint64_t n = *cap ? (uint64_t)*cap * 2 : 64;
    while (n < need) n *= 2;
    if (n > UINT32_MAX || n > SIZE_MAX / elem) { fail(c, RI_ERR_LIMIT, "function too large"); return false; }
    void *p = realloc(*ptr, (size_t)n * elem);
    if (!p) { fail(c, RI_ERR_NOMEM, "out of memory"); return false; }
    *ptr = p;
    *cap = (uint32_t)n;
    return true;
}

/* ---- emission ------------------------------------------------------------------------ */

/* Reserves an instruction of n words starting with op's handler; returns its
 * position, or NO_POS after a failure (then nothing is written). */
uint32_t emit_op(compiler *c, ri_code_op op, uint32_t n) {
    if (c->failed) return NO_POS;
    if ((uint64_t)c->len + n > RI_MAX_CODE_WORDS) { fail(c, RI_ERR_LIMIT, "function code too large"); return NO_POS; }
    if (!grow_array(c, (void **)&c->code, &c->cap, (uint64_t)c->len + n, sizeof *c->code)) return NO_POS;
    if (!grow_array(c, (void **)&c->opmap, &c->opmap_cap, (uint64_t)c->len + n, sizeof *c->opmap)) return NO_POS;
    bool jump = (ri_code_flags(op) & (RI_OPF_BRANCH | RI_OPF_CALL)) || op == RI_CODE_BR_TABLE;
    if (jump && !grow_array(c, (void **)&c->jumps, &c->jumps_cap, (uint64_t)c->njumps + 1, sizeof *c->jumps))
        return NO_POS;
    /* invariant 13: the table's size is what is emitted (0: variable, ENTRY, BR_TABLE) */
    RI_ASSERT(ri_code_words(op) == 0 || ri_code_words(op) == n, "I13");
    uint32_t pos = c->len;
    c->code[pos] = (uint32_t)c->dispatch[op];
    c->opmap[pos] = (uint16_t)op;
    for (uint32_t i = 1; i < n; i++) { /* (a few words: no memset call) */
        c->code[pos + i] = 0;
        c->opmap[pos + i] = NO_OP;
    }
    if (jump) c->jumps[c->njumps++] = pos;
    c->len += n;
    c->prev2 = c->prev;
    c->prev = c->last;
    c->last = (emitted){pos, op, 0};
    return pos;
}

void set_word(compiler *c, uint32_t pos, uint32_t value) {
    if (!c->failed && pos < c->len) c->code[pos] = value;
}

uint32_t emit1(compiler *c, ri_code_op op, uint32_t a) {
    uint32_t p = emit_op(c, op, 2);
    if (p != NO_POS) c->code[p + 1] = a;
    return p;
}
uint32_t emit2(compiler *c, ri_code_op op, uint32_t a, uint32_t b) {
    uint32_t p = emit_op(c, op, 3);
    if (p != NO_POS) { c->code[p + 1] = a; c->code[p + 2] = b; }
    return p;
}
uint32_t emit3(compiler *c, ri_code_op op, uint32_t a, uint32_t b, uint32_t d) {
    uint32_t p = emit_op(c, op, 4);
    if (p != NO_POS) { c->code[p + 1] = a; c->code[p + 2] = b; c->code[p + 3] = d; }
    return p;
}
uint32_t emit4(compiler *c, ri_code_op op, uint32_t a, uint32_t b, uint32_t d, uint32_t e) {
    uint32_t p = emit_op(c, op, 5);
    if (p != NO_POS) { c->code[p + 1] = a; c->code[p + 2] = b; c->code[p + 3] = d; c->code[p + 4] = e; }
    return p;
}
void add_point(compiler *c, uint32_t pos, ri_point_kind kind, uint32_t height) {
    if (c->failed || pos == NO_POS) return;
    if (!grow_array(c, (void **)&c->points, &c->points_cap, (uint64_t)c->npoints + 1, sizeof *c->points)) return;
    c->points[c->npoints++] = (ri_code_point){pos, c->wasm_offset, height, (uint32_t)kind};
}

/* Drops everything emitted from pos on (peephole rewrites of the last instruction).
 * When that is the last instruction, the one before it becomes the last again. */
void truncate_code(compiler *c, uint32_t pos) {
    c->len = pos;
    while (c->npoints && c->points[c->npoints - 1].pos >= pos) c->npoints--;
    while (c->njumps && c->jumps[c->njumps - 1] >= pos) c->njumps--;
    if (pos == c->last.pos && c->prev.pos != NO_POS && c->prev.pos < pos) {
        c->last = c->prev;
        c->prev = c->prev2.pos != NO_POS && c->prev2.pos < c->last.pos ? c->prev2 : NO_EMITTED;
    } else {
        c->last = NO_EMITTED;
        c->prev = NO_EMITTED;
    }
    c->prev2 = NO_EMITTED;
}

/* No peephole rewrite may reach back across this point (a label). */
void forget_emitted(compiler *c) {
    c->last = NO_EMITTED;
    c->prev = NO_EMITTED;
    c->prev2 = NO_EMITTED;
}

/* Marks the last instruction as having written one result to the word at +1, so a
 * following local.set/tee can redirect it into the local. */
void note_dst(compiler *c, uint32_t pos) {
    if (pos != NO_POS) c->last.dst_pos = pos + 1;
}

/* ---- operand stack (pop and push: compile_internal.h) ----------------------------------- */

/* pop's failure, out of line. */
operand pop_underflow(compiler *c) {
    fail(c, RI_ERR_INVALID, "operand stack underflow");
    return (operand){own_slot(c, 0), ENTRY_SLOT, 0, 0};
}

void drop_to(compiler *c, uint32_t height) {
    while (c->h > height) {
        operand e = c->stack[--c->h];
        if (e.kind != ENTRY_SLOT) c->npending--;
    }
}

/* dst = src. */
static void emit_move(compiler *c, uint32_t dst, uint32_t src) { emit2(c, RI_CODE_MOVE, dst, src); }

/* Whether operand e is the single result of the last emitted instruction: a
 * temporary nothing else reads, so that instruction may be fused into its consumer. */
bool from_last(const compiler *c, const operand *e) {
    return e->kind == ENTRY_SLOT && !c->failed && c->last.pos != NO_POS && c->last.dst_pos &&
           c->code[c->last.dst_pos] == e->src;
}

/* Pushes operand e, popped from a higher entry (the second operand of a binary operation
 * whose result it becomes), as the new top entry. A value in a slot must move into the
 * new entry's own slot: push_operand takes an ENTRY_SLOT to be in its own slot already,
 * and the slot e came from is above the stack now, free for the next temporary. */
void keep_operand(compiler *c, operand e) {
    uint32_t own = own_slot(c, c->h);
    if (e.kind == ENTRY_SLOT && e.src != own) {
        if (from_last(c, &e)) c->code[c->last.dst_pos] = own; /* the producer writes there */
        else emit_move(c, own, e.src);
        e.src = own;
    }
    push_operand(c, e);
}

/* Removes the last instruction (to fuse it into the next); returns its stop point in
 * *pt if it had one. */
bool take_last(compiler *c, ri_code_point *pt) {
    bool had = c->npoints && c->points[c->npoints - 1].pos == c->last.pos;
    if (had) *pt = c->points[c->npoints - 1];
    truncate_code(c, c->last.pos);
    return had;
}

void put_point(compiler *c, uint32_t pos, ri_code_point pt) {
    if (c->failed || pos == NO_POS) return;
    if (!grow_array(c, (void **)&c->points, &c->points_cap, (uint64_t)c->npoints + 1, sizeof *c->points)) return;
    pt.pos = pos;
    c->points[c->npoints++] = pt;
}

uint32_t emit_const(compiler *c, uint32_t dst, uint64_t bits) {
    return bits >> 32 ? emit3(c, RI_CODE_CONST64, dst, (uint32_t)bits, (uint32_t)(bits >> 32))
                      : emit2(c, RI_CODE_CONST32, dst, (uint32_t)bits);
}

/* Emits dst = the value of e (a MOVE, or a constant for an immediate). */
void emit_copy(compiler *c, uint32_t dst, const operand *e) {
    if (e->kind == ENTRY_IMM) emit_const(c, dst, e->bits);
    else emit_move(c, dst, e->src);
}

/* Copies a pending entry's value into its own slot. */
void materialise(compiler *c, uint32_t i) {
    operand *e = &c->stack[i];
    if (e->kind == ENTRY_SLOT) return;
    emit_copy(c, own_slot(c, i), e);
    e->kind = ENTRY_SLOT;
    e->src = own_slot(c, i);
    c->npending--;
}

/* The slot to read operand e from, e having been popped from stack entry `index`: an
 * immediate is first materialised into that entry's own slot. */
uint32_t slot_of(compiler *c, operand e, uint32_t index) {
    if (e.kind != ENTRY_IMM) return e.src;
    emit_const(c, own_slot(c, index), e.bits);
    return own_slot(c, index);
}

void flush_all(compiler *c) {
    for (uint32_t i = 0; c->npending && i < c->h; i++) materialise(c, i);
}

/* Before local k is written: entries reading it must take their copy now. */
void flush_local(compiler *c, uint32_t k, uint32_t below) {
    for (uint32_t i = 0; c->npending && i < below; i++)
        if (c->stack[i].kind == ENTRY_LOCAL && c->stack[i].src == k) materialise(c, i);
}

/* ---- constants ----------------------------------------------------------------------- */

uint32_t pool_find(const compiler *c, uint64_t bits) {
    for (uint32_t i = 0; i < c->nconsts; i++)
        if (c->consts[i] == bits) return i;
    return NO_POS;
}

/* A v128 constant's two slots, lo then hi. */
uint32_t pool_find2(const compiler *c, uint64_t lo, uint64_t hi) {
    for (uint32_t i = 0; i + 1 < c->nconsts; i++)
        if (c->consts[i] == lo && c->consts[i + 1] == hi) return i;
    return NO_POS;
}
