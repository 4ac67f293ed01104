/* <setjmp.h> for wasm32-wasi programs of tests/realprog built with clang's
 * `-mllvm -wasm-enable-sjlj`: Debian 12's wasi-libc (2022) has no <setjmp.h>. The calls to
 * setjmp and longjmp are rewritten by the compiler into calls of the runtime in
 * wasm_sjlj_runtime.c; jmp_buf only has to be large enough for that runtime's record. */
#ifndef RI_WASM_SETJMP_H
#define RI_WASM_SETJMP_H

typedef struct {
    void *slots[4];
} jmp_buf[1];

int setjmp(jmp_buf env) __attribute__((returns_twice));
_Noreturn void longjmp(jmp_buf env, int val);

#endif
