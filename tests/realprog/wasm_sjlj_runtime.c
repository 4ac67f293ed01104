/* OUR OWN setjmp/longjmp runtime for the wasm32-wasi programs of tests/realprog (test code,
 * not part of ri). Debian 12's wasi-libc (2022) predates the runtime that LLVM's lowering of
 * setjmp/longjmp to WebAssembly exception handling calls (newer wasi-libc ships it as
 * libsetjmp). Written from the ABI described in LLVM's WebAssemblyLowerEmscriptenEHSjLj.cpp:
 *   - setjmp(env) becomes __wasm_setjmp(env, label, invocation): record which setjmp call
 *     site (label, never 0) of which running function invocation (a unique address) env is
 *     for; the function then continues as if setjmp returned 0;
 *   - longjmp(env, val) becomes __wasm_longjmp(env, val): throw the exception tag __c_longjmp
 *     with one i32, the address of {env, val} (kept inside env, which outlives the unwinding);
 *   - every function that calls setjmp catches __c_longjmp around its calls and asks
 *     __wasm_setjmp_test(env, invocation) which of its call sites env belongs to: 0 means
 *     none (it throws again, upward), otherwise setjmp returns val at that site.
 * It must be a translation unit of its own (in the program's own unit the lowering's
 * declarations clash with these definitions), compiled with -mllvm -wasm-enable-sjlj so that
 * the tag __c_longjmp is defined here too. */
#include <stdint.h>

#include "wasm_setjmp.h"

struct record {
    void *invocation;
    uint32_t label;
    struct { /* what is thrown: the layout the lowering reads (env, then val) */
        void *env;
        int val;
    } thrown;
};
_Static_assert(sizeof(struct record) <= sizeof(jmp_buf), "jmp_buf holds the record");

void __wasm_setjmp(void *env, uint32_t label, void *invocation);
uint32_t __wasm_setjmp_test(void *env, void *invocation);
_Noreturn void __wasm_longjmp(void *env, int val);

void __wasm_setjmp(void *env, uint32_t label, void *invocation) {
    struct record *r = env;
    r->invocation = invocation;
    r->label = label;
}

uint32_t __wasm_setjmp_test(void *env, void *invocation) {
    struct record *r = env;
    return r->invocation == invocation ? r->label : 0;
}

_Noreturn void __wasm_longjmp(void *env, int val) {
    struct record *r = env;
    r->thrown.env = env;
    r->thrown.val = val == 0 ? 1 : val; /* C: longjmp(env, 0) makes setjmp return 1 */
    __builtin_wasm_throw(1, &r->thrown);   /* tag 1: __c_longjmp */
}
