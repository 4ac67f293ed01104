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
    const uint32_t *ret_pc;     /* caller's pc after the call; a run's entry marker: ri_interp_exit_code() */
    const ri_code *code;        /* caller's code */
    uintptr_t inst_bits;        /* caller's instance, its low bits the callee's RI_FRAME_VIA_* */
    uint64_t aux;               /* RI_FRAME_VIA_INVOKE, _SETTHREW: saved stack pointer | invoke's results << 32 */
    union {
        ri_slot *ptr;           /* caller's frame base in the value stack */
        size_t index;           /* the same as a slot index, only while ensure_stack moves the stack */
    } fp;
} ri_frame;

typedef struct ri_exec ri_exec;

/* How a frame's callee was entered (the low bits of inst_bits; instances are aligned to 8):
 * by a call, by an Emscripten invoke (a catch point), or as the setThrew of a caught throw.
 * Only tagged frames have aux; the hot call path writes the plain instance and no aux. */
#define RI_FRAME_VIA_MASK ((uintptr_t)3)
#define RI_FRAME_VIA_INVOKE ((uintptr_t)1)
#define RI_FRAME_VIA_SETTHREW ((uintptr_t)2)
static inline ri_instance *ri_frame_instance(const ri_frame *f) {
    return (ri_instance *)(f->inst_bits & ~RI_FRAME_VIA_MASK);
}
static inline uint32_t ri_frame_via(const ri_frame *f) { return (uint32_t)(f->inst_bits & RI_FRAME_VIA_MASK); }

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

    /* Exceptions thrown (exn.c): every object a throw made, until the outermost run ends. */
    struct ri_exn **exns;
    uint32_t nexns, exns_cap, exns_gc_at;

    /* Suspension (suspend.c; docs/ARCHITECTURE.md "Suspension"). */
    uint32_t suspend_mask;      /* RI_SUSPEND_ON_*: what suspends the outermost run */
    const uint32_t *resume_pc;  /* run(): start there instead of at the code's entry (once) */
    struct ri_exec_suspended {
        bool active;
        ri_suspend_reason reason;
        ri_func *func;          /* the function the embedder called */
        uint32_t base;          /* its frame's slot (the entry marker's fp) */
        size_t marker;          /* index of the entry marker in frames */
        ri_trap trap;           /* run(): why it stopped (a trap records where, for this) */
        const uint32_t *pc;     /* the running frame: its stop point, code, instance, frame */
        const ri_code *code;
        ri_instance *instance;
        size_t fp;
    } susp;
};

/* The slot index of a frame's base (for descriptions of the stack that outlive it). */
static inline size_t ri_exec_frame_fp_index(const ri_exec *exec, const ri_frame *f) {
    return (size_t)(f->fp.ptr - exec->stack);
}

/* call_host: the host function asked to pause before its call (ri_host_pause_before).
 * Internal: above every public ri_errcode, so that no error a host call passes on is
 * taken for it. */
#define RI_ERR_PAUSE_BEFORE ((ri_errcode)63)
_Static_assert(RI_ERR_UNSUPPORTED < 63, "RI_ERR_PAUSE_BEFORE must not be a public error code");

/* interp.c: the store's execution state (created on first use; NULL on OOM). */
ri_exec *ri_exec_get(ri_store *store);
/* interp.c: continues the suspended call (store->exec->susp), leaving its results in
 * results[0 .. nresults slots). */
ri_errcode ri_exec_resume(ri_store *store, ri_slot *results, ri_error *err);
/* interp.c: drops the suspended call's frames. */
void ri_exec_abandon(ri_exec *exec);
/* suspend.c: whether the outermost run, stopped by `trap`, is suspended instead (the
 * mode asks for it; out of gas and interrupts stop at a stop point). If so, sets the
 * reason, clears the trap location and returns true; the frames are as run() left them. */
bool ri_exec_suspend_wanted(ri_exec *exec, ri_trap trap);
/* validate.c: the value types of the operand stack just before the instruction at byte
 * offset `offset` of body `body_index` (what a stop point there holds); *types is
 * malloc'd (NULL when *n is 0). RI_ERR_ARGUMENT if no instruction starts there. */
ri_errcode ri_validate_stack_at(const ri_module *m, uint32_t body_index, uint32_t offset, uint8_t **types,
                                uint32_t *n, ri_error *err);

#endif
