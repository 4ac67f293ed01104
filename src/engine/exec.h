/*
 * Execution state of a store (store->exec): the value stack and the call frames.
 * Both live on the heap; a WebAssembly call never recurses in C. Only a host function
 * that calls back into the store (ri_func_call) nests a run of the interpreter, which
 * uses the same stacks above the current top.
 *
 * Positions are kept as indices, not pointers: the value stack is reallocated when it
 * grows, and a snapshot must not contain addresses.
 */
#ifndef RI_ENGINE_EXEC_H
#define RI_ENGINE_EXEC_H

#include "code.h"
#include "runtime.h"

/* Host -> WebAssembly -> host ... nesting uses the C stack; bounded so that a
 * pathological embedder callback cannot overflow it. */
#define RI_EXEC_MAX_NESTING 200u

/* A suspended caller: where to resume it once its callee returns. */
typedef struct ri_frame {
    const uint32_t *ret_pc;     /* caller's pc after the call; NULL: return to C (a run's entry) */
    const ri_code *code;        /* caller's code */
    ri_instance *instance;      /* caller's instance */
    uint32_t fp;                /* caller's frame base: slot index in the value stack */
} ri_frame;

typedef struct ri_exec ri_exec;

struct ri_exec {
    ri_slot *stack;
    uint32_t stack_cap;         /* slots allocated (grows up to config.max_stack_slots) */
    uint32_t stack_top;         /* first slot free for a nested run (set around host calls) */

    ri_frame *frames;
    uint32_t frames_cap;
    uint32_t nframes;           /* frames in use, every nested run's included */
    uint32_t nesting;           /* runs of the interpreter active on the C stack */

    /* Where the last trap happened (for diagnostics and, later, snapshots). */
    bool trap_has_location;
    uint32_t trap_func_index;
    uint32_t trap_wasm_offset;
};

#endif
