/* A bytecode interpreter whose handlers pass control to each other by guaranteed tail calls
 * (__attribute__((musttail))), as fast interpreters are written: every executed instruction
 * is one call, so millions of them run in a constant stack only because the calls are
 * return_call / return_call_indirect (clang -mtail-call). Without them the run would need a
 * frame per executed instruction, far beyond any call stack (ri's default: 10,000 frames).
 *
 * The bytecode program sums the Collatz chain lengths of 1..N and counts the primes below N
 * by trial division, printing progress lines from a PRINT instruction.
 *
 *   musttail_interp [N]        (default 3000)
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct vm vm;
typedef uint64_t handler(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps);

struct vm {
    handler *const *table;
    const uint8_t *code;
};

enum { HALT, LOADI, MOV, ADD, ADDI, SUB, MUL, DIVU, MODU, SHRI, ANDI, JMP, JNZ, JLT, JEQI, PRINT, NOPS };

#define MUSTTAIL __attribute__((musttail))

/* The next instruction: the handler of its opcode, through the table. */
#define NEXT(len) MUSTTAIL return m->table[pc[len]](pc + (len), reg, m, steps + 1)

/* A taken jump: a direct tail call (return_call), then the table's dispatch. */
__attribute__((noinline)) static uint64_t jump(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    int16_t off = (int16_t)(pc[0] | pc[1] << 8);
    const uint8_t *to = pc + 2 + off;
    MUSTTAIL return m->table[*to](to, reg, m, steps);
}

static uint64_t op_halt(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    (void)pc, (void)reg, (void)m;
    return steps;
}
static uint64_t op_loadi(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    reg[pc[1]] = (int32_t)((uint32_t)pc[2] | (uint32_t)pc[3] << 8 | (uint32_t)pc[4] << 16 | (uint32_t)pc[5] << 24);
    NEXT(6);
}
static uint64_t op_mov(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    reg[pc[1]] = reg[pc[2]];
    NEXT(3);
}
#define ARITH(name, expr)                                                                   \
    static uint64_t name(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {          \
        int64_t a = reg[pc[2]], b = reg[pc[3]];                                             \
        reg[pc[1]] = (expr);                                                                \
        NEXT(4);                                                                            \
    }
ARITH(op_add, (int64_t)((uint64_t)a + (uint64_t)b))
ARITH(op_sub, (int64_t)((uint64_t)a - (uint64_t)b))
ARITH(op_mul, (int64_t)((uint64_t)a * (uint64_t)b))
ARITH(op_divu, b ? (int64_t)((uint64_t)a / (uint64_t)b) : 0)
ARITH(op_modu, b ? (int64_t)((uint64_t)a % (uint64_t)b) : 0)
static uint64_t op_addi(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    reg[pc[1]] = (int64_t)((uint64_t)reg[pc[2]] + (uint64_t)(int8_t)pc[3]);
    NEXT(4);
}
static uint64_t op_shri(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    reg[pc[1]] = (int64_t)((uint64_t)reg[pc[2]] >> (pc[3] & 63));
    NEXT(4);
}
static uint64_t op_andi(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    reg[pc[1]] = reg[pc[2]] & pc[3];
    NEXT(4);
}
static uint64_t op_jmp(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    MUSTTAIL return jump(pc + 1, reg, m, steps + 1);
}
static uint64_t op_jnz(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    if (reg[pc[1]] != 0) MUSTTAIL return jump(pc + 2, reg, m, steps + 1);
    NEXT(4);
}
static uint64_t op_jlt(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    if (reg[pc[1]] < reg[pc[2]]) MUSTTAIL return jump(pc + 3, reg, m, steps + 1);
    NEXT(5);
}
static uint64_t op_jeqi(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    if (reg[pc[1]] == (int8_t)pc[2]) MUSTTAIL return jump(pc + 3, reg, m, steps + 1);
    NEXT(5);
}
static uint64_t op_print(const uint8_t *pc, int64_t *reg, vm *m, uint64_t steps) {
    printf("r%u=%" PRId64 " r%u=%" PRId64 " after %" PRIu64 " instructions\n", pc[1], reg[pc[1]], pc[2],
           reg[pc[2]], steps);
    NEXT(3);
}

static handler *const table[NOPS] = {
    [HALT] = op_halt, [LOADI] = op_loadi, [MOV] = op_mov,   [ADD] = op_add,   [ADDI] = op_addi, [SUB] = op_sub,
    [MUL] = op_mul,   [DIVU] = op_divu,   [MODU] = op_modu, [SHRI] = op_shri, [ANDI] = op_andi, [JMP] = op_jmp,
    [JNZ] = op_jnz,   [JLT] = op_jlt,     [JEQI] = op_jeqi, [PRINT] = op_print,
};

/* ---- a tiny assembler: jump offsets filled in once every label is placed ---- */
static uint8_t code[256];
static int len, nfix;
static int label_at[16], fix_at[32], fix_label[32];

static void op(int opcode, int a, int b, int c, int n) { /* the opcode and its first n - 1 operands */
    int v[3] = {a, b, c};
    code[len++] = (uint8_t)opcode;
    for (int i = 0; i < n - 1; i++) code[len++] = (uint8_t)v[i];
}
static void to(int label) {
    fix_at[nfix] = len;
    fix_label[nfix++] = label;
    len += 2;
}
static void loadi(int r, int32_t v) {
    op(LOADI, r, v & 255, (v >> 8) & 255, 4);
    code[len++] = (uint8_t)((v >> 16) & 255);
    code[len++] = (uint8_t)((uint32_t)v >> 24);
}
static void place(int label) { label_at[label] = len; }
static void resolve(void) {
    for (int i = 0; i < nfix; i++) {
        int off = label_at[fix_label[i]] - (fix_at[i] + 2);
        code[fix_at[i]] = (uint8_t)(off & 255);
        code[fix_at[i] + 1] = (uint8_t)((off >> 8) & 255);
    }
}

int main(int argc, char **argv) {
    int32_t n = argc > 1 ? atoi(argv[1]) : 3000;
    enum { OUTER, CHAIN, ODD, CHAINED, TRIAL, NOTDIV, PRIME, NEXT_I, CONT, END, REPORT };
    /* r0 = N, r1 = i, r2 = x, r3 = the chains' total length, r4 = scratch, r5 = primes, r6 = d */
    loadi(0, n), loadi(1, 1), loadi(3, 0), loadi(5, 0);
    place(OUTER);
    op(MOV, 2, 1, 0, 3);
    place(CHAIN); /* while x != 1: x = x even ? x / 2 : 3x + 1, counted */
    op(JEQI, 2, 1, 0, 3), to(CHAINED);
    op(ADDI, 3, 3, 1, 4);
    op(ANDI, 4, 2, 1, 4);
    op(JNZ, 4, 0, 0, 2), to(ODD);
    op(SHRI, 2, 2, 1, 4);
    op(JMP, 0, 0, 0, 1), to(CHAIN);
    place(ODD);
    op(ADD, 4, 2, 2, 4);
    op(ADD, 2, 4, 2, 4);
    op(ADDI, 2, 2, 1, 4);
    op(JMP, 0, 0, 0, 1), to(CHAIN);
    place(CHAINED); /* is i prime? trial division by d = 2, 3, ... while d * d <= i */
    op(JEQI, 1, 1, 0, 3), to(NEXT_I);
    loadi(6, 2);
    place(TRIAL);
    op(MUL, 4, 6, 6, 4);
    op(JLT, 1, 4, 0, 3), to(PRIME);
    op(MODU, 4, 1, 6, 4);
    op(JNZ, 4, 0, 0, 2), to(NOTDIV);
    op(JMP, 0, 0, 0, 1), to(NEXT_I);
    place(NOTDIV);
    op(ADDI, 6, 6, 1, 4);
    op(JMP, 0, 0, 0, 1), to(TRIAL);
    place(PRIME);
    op(ADDI, 5, 5, 1, 4);
    place(NEXT_I); /* a progress line every 512 numbers */
    op(SHRI, 4, 1, 9, 4);
    op(MUL, 4, 4, 7, 4); /* r7 = 512 */
    op(SUB, 4, 4, 1, 4);
    op(JEQI, 4, 0, 0, 3), to(REPORT);
    place(CONT);
    op(ADDI, 1, 1, 1, 4);
    op(JLT, 0, 1, 0, 3), to(END);
    op(JMP, 0, 0, 0, 1), to(OUTER);
    place(END);
    op(PRINT, 3, 5, 0, 3);
    op(HALT, 0, 0, 0, 1);
    place(REPORT);
    op(PRINT, 1, 3, 0, 3);
    op(JMP, 0, 0, 0, 1), to(CONT);
    resolve();

    int64_t reg[8] = {0};
    reg[7] = 512;
    vm m = {table, code};
    uint64_t steps = table[code[0]](code, reg, &m, 0);
    printf("%d bytes of bytecode, %" PRIu64 " instructions executed, each a tail call\n", len, steps);
    return reg[5] == 0;
}
