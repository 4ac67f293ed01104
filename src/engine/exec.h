/*
 * Execution state of a store (store->exec): the value stack and the call frames.
 * Both live on the heap; a WebAssembly call never recurses in C. Only a host function
 * that calls back into the store (ri_func_call) nests a run of the interpreter, which
 * uses the same stacks above the current top.
 *
 * The value stack is reallocated when it grows (ensure_stack in interp.c): every pointer
 * into it is then moved along, the frames' fp by ensure_stack itself, the interpreter's
 * own by re-deriving them from indices. A snapshot must not contain addresses: it
 * describes a frame by ri_exec_frame_fp_index.
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
    union {
        ri_slot *ptr;           /* caller's frame base in the value stack */
        size_t index;           /* the same as a slot index, only while ensure_stack moves the stack */
    } fp;
} ri_frame;

typedef struct ri_exec ri_exec;

struct ri_exec {
    ri_slot *stack;
    ri_slot *stack_end;         /* stack + stack_cap */
    uint32_t stack_cap;         /* slots allocated (grows up to config.max_stack_slots) */
    uint32_t stack_top;         /* first slot free for a nested run (set around host calls) */

    ri_frame *frames;
    ri_frame *frame_top;        /* the next free frame: frames in use, every nested run's included */
    ri_frame *frames_end;       /* frames + frames_cap; frames_cap never exceeds max_call_depth */
    uint32_t frames_cap;
    uint32_t nesting;           /* runs of the interpreter active on the C stack */

    /* Where the last trap happened (for diagnostics and, later, snapshots). */
    bool trap_has_location;
    uint32_t trap_func_index;
    uint32_t trap_wasm_offset;
};

/* The slot index of a frame's base (for descriptions of the stack that outlive it). */
static inline size_t ri_exec_frame_fp_index(const ri_exec *exec, const ri_frame *f) {
    return (size_t)(f->fp.ptr - exec->stack);
}

#endif
