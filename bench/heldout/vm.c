/* Held-out: a small bytecode interpreter (switch dispatch) running a loop program. */
#include "bench.h" /* ../shared/bench/src/bench.h */
enum { PUSH, ADD, SUB, MUL, DUP, SWAP, JNZ, DEC, XOR, POP, OVER, HALT };
static const i32 prog[] = { PUSH, 1, PUSH, 3000000,
  /* 4: [a, n] */ SWAP, PUSH, 7, MUL, OVER, XOR, SWAP, DEC, DUP, JNZ, 4, HALT };
EXPORT("run") u32 run(void) {
  i32 st[64]; int sp = 0; int pc = 0; u32 steps = 0;
  for (;;) {
    steps++;
    switch (prog[pc++]) {
    case PUSH: st[sp++] = prog[pc++]; break;
    case ADD: sp--; st[sp-1] += st[sp]; break;
    case SUB: sp--; st[sp-1] -= st[sp]; break;
    case MUL: sp--; st[sp-1] *= st[sp]; break;
    case DUP: st[sp] = st[sp-1]; sp++; break;
    case SWAP: { i32 t = st[sp-1]; st[sp-1] = st[sp-2]; st[sp-2] = t; break; }
    case JNZ: { i32 t = prog[pc++]; if (st[--sp]) pc = t; break; }
    case DEC: st[sp-1]--; break;
    case XOR: sp--; st[sp-1] ^= st[sp] + 0x9E3779B9; break;
    case POP: sp--; break;
    case OVER: st[sp] = st[sp-2]; sp++; break;
    case HALT: return steps ^ (u32)st[sp-1];
    }
  }
}
