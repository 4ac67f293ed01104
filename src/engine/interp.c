/*
 * The interpreter: runs the internal code of code.h with direct-threaded dispatch
 * (each handler word is the offset of its label from a base label, GNU "labels as
 * values"), heap frames (exec.h) and deterministic gas metering.
 *
 * The hot loop keeps pc, the frame pointer, the gas of the current chunk (the rest of
 * the budget in gas_reserve), the memory base and size in locals. Gas is written back
 * to store->gas (chunk + reserve) whenever control leaves the loop: host calls, traps,
 * exit. Call frames live in ri_exec (exec.h); the fast call path (ENTER_LOCAL) pushes
 * one and enters the callee without leaving the loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ri_assert.h"
#include "code.h"
#include "exec.h"
#include "exn.h"
#include "instr.h"
#include "numeric.h"
#include "simd.h"
#include "simd_vec.h"
#include "opcov.h"
#include "runtime.h"

/* The dispatch table holds label offsets of one function body: it must not be
 * inlined or cloned. */
#if defined(__clang__)
#define RI_SINGLE_COPY __attribute__((noinline))
#else
#define RI_SINGLE_COPY __attribute__((noinline, noclone))
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LE16(x) __builtin_bswap16(x)
#define LE32(x) __builtin_bswap32(x)
#define LE64(x) __builtin_bswap64(x)
#else
#define LE16(x) (x)
#define LE32(x) (x)
#define LE64(x) (x)
#endif

/* ---- execution state -------------------------------------------------------------- */

#define RI_EXEC_INITIAL_SLOTS 1024u
/* Metered code draws gas in chunks of this much and polls the interrupt flag at each
 * new chunk: an interrupt stops it within this many instructions. */
#define RI_GAS_CHUNK UINT64_C(65536)
#define RI_EXEC_INITIAL_FRAMES 64u

static ri_exec *exec_get(ri_store *store) {
    if (!store->exec) store->exec = calloc(1, sizeof(ri_exec));
    return store->exec;
}

ri_exec *ri_exec_get(ri_store *store) { return exec_get(store); }

void ri_exec_free(ri_exec *exec) {
    if (!exec) return;
    ri_exn_free_all(exec);
    free(exec->exns);
    free(exec->stack);
    free(exec->frames);
    free(exec);
}

/* Makes the value stack hold at least `need` slots. Moves it, and the frames' pointers
 * into it; callers re-derive their own pointers from indices. */
static bool ensure_stack(const ri_store *store, ri_exec *exec, uint64_t need) {
    if (need <= exec->stack_cap && exec->stack) return true;
    if (need == 0) need = 1; /* a frame pointer needs a stack even for an empty frame */
    uint64_t max = store->config.max_stack_slots;
    if (need > max) return false;
    uint64_t cap = exec->stack_cap ? exec->stack_cap : RI_EXEC_INITIAL_SLOTS;
    while (cap < need) cap *= 2;
    if (cap > max) cap = max;
    if (cap > SIZE_MAX / sizeof(ri_slot)) return false;
    size_t nframes = exec->frames ? (size_t)(exec->frame_top - exec->frames) : 0;
    for (size_t i = 0; i < nframes; i++) exec->frames[i].fp.index = (size_t)(exec->frames[i].fp.ptr - exec->stack);
    ri_slot *stack = realloc(exec->stack, (size_t)cap * sizeof *stack);
    if (stack) {
        /* New slots start zeroed: a collection of exceptions (exn.c) reads every slot in
         * use, also those the code has not written yet. */
        memset(stack + exec->stack_cap, 0, (size_t)(cap - exec->stack_cap) * sizeof *stack);
        exec->stack = stack;
        exec->stack_cap = (uint32_t)cap;
        exec->stack_end = stack + cap;
    }
    for (size_t i = 0; i < nframes; i++) exec->frames[i].fp.ptr = exec->stack + exec->frames[i].fp.index;
    return stack != NULL;
}

/* Room for one more frame, within max_call_depth. */
static bool ensure_frame(const ri_store *store, ri_exec *exec) {
    size_t n = exec->frames ? (size_t)(exec->frame_top - exec->frames) : 0;
    if (n >= store->config.max_call_depth) return false;
    if (n < exec->frames_cap) return true;
    uint64_t cap = exec->frames_cap ? (uint64_t)exec->frames_cap * 2 : RI_EXEC_INITIAL_FRAMES;
    if (cap > store->config.max_call_depth) cap = store->config.max_call_depth;
    ri_frame *frames = realloc(exec->frames, (size_t)cap * sizeof *frames);
    if (!frames) return false;
    exec->frames = frames;
    exec->frames_cap = (uint32_t)cap;
    exec->frame_top = frames + n;
    exec->frames_end = frames + cap;
    return true;
}

/* ---- host functions --------------------------------------------------------------- */

static ri_val slot_to_val(uint8_t type, ri_slot s) {
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = (ri_valtype)type;
    switch (type) {
    case RI_I32: v.of.i32 = (int32_t)(uint32_t)s.i64; break;
    case RI_I64: v.of.i64 = (int64_t)s.i64; break;
    case RI_F32: v.of.f32_bits = (uint32_t)s.i64; break;
    case RI_F64: v.of.f64_bits = s.i64; break;
    default: v.of.ref = s.ref; break;
    }
    return v;
}

static ri_slot val_to_slot(uint8_t type, const ri_val *v) {
    ri_slot s;
    s.i64 = 0;
    switch (type) {
    case RI_I32: s.i64 = (uint32_t)v->of.i32; break;
    case RI_I64: s.i64 = (uint64_t)v->of.i64; break;
    case RI_F32: s.i64 = v->of.f32_bits; break;
    case RI_F64: s.i64 = v->of.f64_bits; break;
    default: s.ref = v->of.ref; break;
    }
    return s;
}

static ri_errcode host_failed(ri_error *err, const char *message) {
    if (err) {
        err->code = RI_ERR_TRAP;
        err->trap = RI_TRAP_HOST;
        snprintf(err->message, sizeof err->message, "%s", message && message[0] ? message : ri_trap_message(RI_TRAP_HOST));
    }
    return RI_ERR_TRAP;
}

/* Calls host function f with its arguments in slots [at, at + nparams) of the value
 * stack (or of `outside` when not NULL) and leaves its results there. The host may
 * run WebAssembly on this store, which may move the value stack: the slots are
 * located again afterwards. RI_ERR_SUSPENDED: the host yielded (ri_host_yield) and the
 * run may be suspended: the call completed, the run pauses after it. */
static ri_errcode call_host(ri_store *store, ri_exec *exec, ri_func *f, ri_instance *caller,
                            ri_slot *outside, uint32_t at, ri_error *err) {
    const ri_type *t = &f->type;
    ri_val local_args[16], local_results[8];
    ri_val *args = local_args, *results = local_results;
    if (t->nparams > 16) args = malloc((size_t)t->nparams * sizeof *args);
    if (t->nresults > 8) results = malloc((size_t)t->nresults * sizeof *results);
    if (!args || !results) {
        if (args != local_args) free(args);
        if (results != local_results) free(results);
        return host_failed(err, "out of memory calling a host function");
    }
    const ri_slot *in = outside ? outside : exec->stack + at;
    for (uint32_t i = 0, k = 0; i < t->nparams; i++, k++) {
        args[i] = slot_to_val(t->params[i], in[k]);
        if (t->params[i] == RI_V128) { ri_v128_from_u64s(args[i].of.v128, in[k].i64, in[k + 1].i64); k++; }
    }
    for (uint32_t i = 0; i < t->nresults; i++) {
        memset(&results[i], 0, sizeof results[i]);
        results[i].type = (ri_valtype)t->results[i];
    }
    ri_host_call call;
    memset(&call, 0, sizeof call);
    call.store = store;
    call.instance = caller;
    int failed = f->host(&call, f->host_user, args, results);
    bool yielded = false;
    if (failed == RI_HOST_PAUSE_BEFORE && call.pause_before) {
        /* Nothing happened: the run stops before the call, as out of gas, or as interrupted
         * when the interrupt flag is up (the run decides whether that suspends: suspend.c). */
        if (!outside && exec->nesting == 1) {
            if (args != local_args) free(args);
            if (results != local_results) free(results);
            return RI_ERR_PAUSE_BEFORE;
        }
        bool interrupted = atomic_load_explicit(&store->interrupt, memory_order_relaxed) != 0;
        snprintf(call.message, sizeof call.message, "%s",
                 ri_trap_message(interrupted ? RI_TRAP_INTERRUPTED : RI_TRAP_OUT_OF_GAS));
    } else if (failed == RI_HOST_YIELD && call.yielded) {
        /* The call completed: the run suspends right after it, if it may (suspend.c). */
        if (!outside && (exec->suspend_mask & RI_SUSPEND_ON_YIELD) && exec->nesting == 1) {
            failed = 0;
            yielded = true;
        } else {
            snprintf(call.message, sizeof call.message, "a host function yielded, but this call cannot be suspended (%s)",
                     outside || exec->nesting != 1 ? "it was not made by the outermost WebAssembly run"
                                                   : "the store's suspend mode does not include yield");
        }
    }
    ri_errcode rc = RI_OK;
    if (failed) {
        rc = host_failed(err, call.message);
    } else {
        ri_slot *out = outside ? outside : exec->stack + at;
        for (uint32_t i = 0, k = 0; i < t->nresults; i++, k++) {
            out[k] = val_to_slot(t->results[i], &results[i]);
            if (t->results[i] == RI_V128) { /* two slots (simd.h) */
                out[k].i64 = ri_v128_u64(results[i].of.v128);
                out[++k].i64 = ri_v128_u64(results[i].of.v128 + 8);
            }
        }
        if (yielded) rc = RI_ERR_SUSPENDED; /* completed, and the caller pauses after it */
    }
    if (args != local_args) free(args);
    if (results != local_results) free(results);
    return rc;
}

/* ---- the interpreter -------------------------------------------------------------------- */

/* Operand i of the current instruction, as a slot, and typed views of it. */
#define SLOT(i) fp[pc[i]]
#define U32(i) ((uint32_t)fp[pc[i]].i64)
#define U64(i) (fp[pc[i]].i64)
#define F32(i) ri_f32_from_bits((uint32_t)fp[pc[i]].i64)
#define F64(i) (fp[pc[i]].f64)
#define REF(i) (fp[pc[i]].ref)
#define U32FP(i) ((uint32_t)fp[i].i64)
/* Each write also leaves the value in an accumulator (code.h, RI_CODE_ACC_OPS): the
 * slot's bits in acc, an f64 in facc. */
#define PUT_U32(i, v) (fp[pc[i]].i64 = acc = (uint32_t)(v))
#define PUT_U64(i, v) (fp[pc[i]].i64 = acc = (uint64_t)(v))
#define PUT_F32(i, v) (fp[pc[i]].i64 = acc = ri_f32_bits(v))
#define PUT_F64(i, v) (fp[pc[i]].f64 = facc = (v))
/* A write that leaves the accumulators alone, for operations that are not producers
 * (acc.c, acc_produced): branches, calls, two-destination operations. */
#define SET_U32(i, v) (fp[pc[i]].i64 = (uint32_t)(v))
/* Operand i read from the accumulator when bit i of mask m is set (an accumulator
 * variant), else from its slot. m is a constant: each handler keeps one of the two. */
#define AU32(m, i) ((((m) >> (i)) & 1) ? (uint32_t)acc : U32(i))
#define AU64(m, i) ((((m) >> (i)) & 1) ? acc : U64(i))
#define AF32(m, i) ((((m) >> (i)) & 1) ? ri_f32_from_bits((uint32_t)acc) : F32(i))
#define AF64(m, i) ((((m) >> (i)) & 1) ? facc : F64(i))
#define PUT_REF(i, v) do { ri_slot *s_ = &fp[pc[i]]; s_->i64 = 0; s_->ref = (v); } while (0)

#ifdef RI_OP_COVERAGE /* opcov.h: each dispatch counts its operation first */
#define DISPATCH() do { ri_opcov_hit(pc[0]); goto *((char *)&&op_ENTRY + (int32_t)pc[0]); } while (0)
#else
#define DISPATCH() goto *((char *)&&op_ENTRY + (int32_t)pc[0])
#endif
#define NEXT(n) do { pc += (n); DISPATCH(); } while (0)
/* Branch by the offset in operand word i (relative to that word). (pc + i, then the
 * offset: an unsigned i plus a negative offset must not be summed first, in unsigned.) */
#define JUMP(i) do { pc = pc + (i) + (int32_t)pc[i]; DISPATCH(); } while (0)
#define TRAP(kind) do { trap_kind = (kind); goto trap; } while (0)
/* Gas is signed so that a charge is one subtraction and a sign test (costs are below
 * 2^32: no overflow). A charge that cannot be paid is undone before leaving: by
 * out_of_gas_undo for the charges of GAS, LOOP and ENTRY (their cost is word 1 of the
 * instruction pc is set to), in place for the others (CHARGE_N). */
#define CHARGE(cost) \
    do { gas -= (int64_t)(uint64_t)(cost); if (__builtin_expect(gas < 0, 0)) goto out_of_gas_undo; } while (0)
#define CHARGE_N(cost) \
    do { int64_t c_ = (int64_t)(uint64_t)(cost); gas -= c_; \
         if (__builtin_expect(gas < 0, 0)) { gas += c_; goto out_of_gas; } } while (0)
#define POLL_INTERRUPT() \
    do { if (__builtin_expect(atomic_load_explicit(&store->interrupt, memory_order_relaxed) != 0, 0)) TRAP(RI_TRAP_INTERRUPTED); } while (0)
#define LOAD_MEMORY() \
    do { mem_base = mem ? mem->data : NULL; mem_size = mem ? mem->size : 0; \
         mem_end.e1 = mem_size; mem_end.e2 = mem_size >= 2 ? mem_size - 1 : 0; \
         mem_end.e4 = mem_size >= 4 ? mem_size - 3 : 0; mem_end.e8 = mem_size >= 8 ? mem_size - 7 : 0; } while (0)
/* Whether an access of n bytes at address ea leaves the memory: ea >= size - n + 1, the
 * first address where it would not fit, which LOAD_MEMORY keeps for each access size
 * (one comparison, no addition; 0 when the memory is smaller than n: every access
 * traps). An unexpected size always traps. */
#define MEM_END(n) ((n) == 1 ? mem_end.e1 : (n) == 2 ? mem_end.e2 : (n) == 4 ? mem_end.e4 : (n) == 8 ? mem_end.e8 : 0)
#define OOB(ea, n) ((uint64_t)(ea) >= MEM_END(n))
#define SWITCH_INSTANCE(to) \
    do { inst = (to); codes = inst->module->codes; mem = inst->module->nmemories ? inst->memories[0] : NULL; } while (0)

/* (Conversions to signed types are modular in GCC and Clang: implementation-defined, not undefined.) */
#define S32_LT(a, b) ((int32_t)(uint32_t)(a) < (int32_t)(uint32_t)(b))
#define S64_LT(a, b) ((int64_t)(uint64_t)(a) < (int64_t)(uint64_t)(b))
#define CMP_EQ(a, b) ((a) == (b))
#define CMP_NE(a, b) ((a) != (b))
#define CMP_LT_U(a, b) ((a) < (b))
#define CMP_GT_U(a, b) ((a) > (b))
#define CMP_LE_U(a, b) ((a) <= (b))
#define CMP_GE_U(a, b) ((a) >= (b))
#define CMP32_LT_S(a, b) S32_LT(a, b)
#define CMP32_GT_S(a, b) S32_LT(b, a)
#define CMP32_LE_S(a, b) (!S32_LT(b, a))
#define CMP32_GE_S(a, b) (!S32_LT(a, b))
#define CMP64_LT_S(a, b) S64_LT(a, b)
#define CMP64_GT_S(a, b) S64_LT(b, a)
#define CMP64_LE_S(a, b) (!S64_LT(b, a))
#define CMP64_GE_S(a, b) (!S64_LT(a, b))

/* Handler templates: d = operand 1, a = operand 2, b = operand 3. */
/* (the *M forms take the label and the accumulator mask m of a variant, see AU32) */
#define BIN32M(label, m, expr) op_##label: { uint32_t a = AU32(m, 2), b = AU32(m, 3); PUT_U32(1, expr); NEXT(4); }
#define BIN32(name, expr) BIN32M(name, 0, expr)
#define BIN64M(label, m, expr) op_##label: { uint64_t a = AU64(m, 2), b = AU64(m, 3); PUT_U64(1, expr); NEXT(4); }
#define BIN64(name, expr) BIN64M(name, 0, expr)
#define CMP64(name, expr) op_##name: { uint64_t a = U64(2), b = U64(3); PUT_U32(1, expr); NEXT(4); }
#define UN32(name, expr) op_##name: { uint32_t a = U32(2); PUT_U32(1, expr); NEXT(3); }
#define UN64(name, expr) op_##name: { uint64_t a = U64(2); PUT_U64(1, expr); NEXT(3); }
#define DIV32(name, fn) op_##name: { uint32_t r; ri_trap t = fn(U32(2), U32(3), &r); if (t) TRAP(t); PUT_U32(1, r); NEXT(4); }
#define DIV64(name, fn) op_##name: { uint64_t r; ri_trap t = fn(U64(2), U64(3), &r); if (t) TRAP(t); PUT_U64(1, r); NEXT(4); }
/* Float results of arithmetic pass through CANON32/64: NaN -> canonical NaN if asked. */
#define CANON32(r) (__builtin_expect((r) != (r), 0) && canon ? ri_f32_from_bits(RI_F32_CANON) : (r))
#define CANON64(r) (__builtin_expect((r) != (r), 0) && canon ? ri_f64_from_bits(RI_F64_CANON) : (r))
#define FBIN32M(label, m, expr) \
    op_##label: { float a = AF32(m, 2), b = AF32(m, 3); float r = (expr); PUT_F32(1, CANON32(r)); NEXT(4); }
#define FBIN32(name, expr) FBIN32M(name, 0, expr)
#define FBIN64M(label, m, expr) \
    op_##label: { double a = AF64(m, 2), b = AF64(m, 3); double r = (expr); PUT_F64(1, CANON64(r)); NEXT(4); }
#define FBIN64(name, expr) FBIN64M(name, 0, expr)
#define FBIN32_RAW(name, expr) op_##name: { float a = F32(2), b = F32(3); PUT_F32(1, expr); NEXT(4); }
#define FBIN64_RAW(name, expr) op_##name: { double a = F64(2), b = F64(3); PUT_F64(1, expr); NEXT(4); }
#define FUN32(name, expr) op_##name: { float a = F32(2); float r = (expr); PUT_F32(1, CANON32(r)); NEXT(3); }
#define FUN64M(label, m, expr) op_##label: { double a = AF64(m, 2); double r = (expr); PUT_F64(1, CANON64(r)); NEXT(3); }
#define FUN64(name, expr) FUN64M(name, 0, expr)
#define FUN32_RAW(name, expr) op_##name: { float a = F32(2); PUT_F32(1, expr); NEXT(3); }
#define FUN64_RAW(name, expr) op_##name: { double a = F64(2); PUT_F64(1, expr); NEXT(3); }
#define FCMP32(name, expr) op_##name: { float a = F32(2), b = F32(3); PUT_U32(1, expr); NEXT(4); }
#define FCMP64(name, expr) op_##name: { double a = F64(2), b = F64(3); PUT_U32(1, expr); NEXT(4); }
#define TRUNC(name, T, GET, PUT, fn) op_##name: { T r; ri_trap t = fn(GET(2), &r); if (t) TRAP(t); PUT(1, r); NEXT(3); }
#define CONV(name, GET, PUT, fn) op_##name: { PUT(1, fn(GET(2))); NEXT(3); }
/* Immediate second operand (operand 3): i32 as is, i64 sign-extended. */
#define IMM32 (pc[3])
#define IMM64 ((uint64_t)(int64_t)(int32_t)pc[3])
#define BIN32IM(label, m, expr) op_##label: { uint32_t a = AU32(m, 2), b = IMM32; PUT_U32(1, expr); NEXT(4); }
#define BIN32I(name, expr) BIN32IM(name##_I, 0, expr)
#define BIN64IM(label, m, expr) op_##label: { uint64_t a = AU64(m, 2), b = IMM64; PUT_U64(1, expr); NEXT(4); }
#define BIN64I(name, expr) BIN64IM(name##_I, 0, expr)
#define CMP64I(name, expr) op_##name##_I: { uint64_t a = U64(2), b = IMM64; PUT_U32(1, expr); NEXT(4); }

/* Branches with fused metering (code.h): the target t is a GAS or LOOP [handler, cost];
 * the taken branch does its work and continues after it. When the charge cannot be
 * paid, or the interrupt flag is up, execution stops at t exactly as t would have. */
#define JUMP_FG(i) \
    do { const uint32_t *t_ = pc + (i) + (int32_t)pc[i]; gas -= (int64_t)t_[1]; \
         if (__builtin_expect(gas < 0, 0)) { pc = t_; goto out_of_gas_undo; } \
         pc = t_ + 2; DISPATCH(); } while (0)
/* (Metered code polls the interrupt flag when it draws gas from the reserve, below.) */
#define JUMP_BG(i) JUMP_FG(i)
#define JUMP_BU(i) \
    do { const uint32_t *t_ = pc + (i) + (int32_t)pc[i]; \
         if (__builtin_expect(atomic_load_explicit(&store->interrupt, memory_order_relaxed) != 0, 0)) { pc = t_; TRAP(RI_TRAP_INTERRUPTED); } \
         pc = t_ + 2; DISPATCH(); } while (0)
/* Falling through an n-word conditional branch into the GAS after it. */
#define NEXT_G(n) \
    do { gas -= (int64_t)pc[(n) + 1]; \
         if (__builtin_expect(gas < 0, 0)) { pc += (n); goto out_of_gas_undo; } \
         pc += (n) + 2; DISPATCH(); } while (0)
/* The four variants of a conditional branch of n words (offset in the last). */
#define COND_BRANCH(name, n, cond) \
    op_##name: if (cond) JUMP((n) - 1); NEXT(n); \
    op_##name##_FG: if (cond) JUMP_FG((n) - 1); NEXT_G(n); \
    op_##name##_BG: if (cond) JUMP_BG((n) - 1); NEXT_G(n); \
    op_##name##_BU: if (cond) JUMP_BU((n) - 1); NEXT(n);
/* Compare-and-branch: a = operand 1, b = operand 2 (or the immediate), offset in operand 3. */
#define BRCMP32(name, cmp) \
    COND_BRANCH(BR_IF_##name, 4, cmp(U32(1), U32(2))) \
    COND_BRANCH(BR_IF_##name##_I, 4, cmp(U32(1), pc[2]))
/* Loop counter: k = x + step (operands 1..3), branch when k cmp limit (operand 4). */
/* (The limit is read after k is written: it may be k's own slot.) */
#define ADDBR_COND(STEP, LIMIT, CMPFN) __extension__({ uint32_t k_ = U32(2) + (STEP); SET_U32(1, k_); CMPFN(k_, LIMIT); })
/* The four forms of a loop-counter branch of n words, its step in operand s and its limit
 * in operand l each a slot (S) or an immediate (I): PREFIX_cmp_SS, _SI, _IS, _II. */
#define LOOP_BRANCH4(PREFIX, cmp, n, COND, CMPFN, s, l) \
    COND_BRANCH(PREFIX##_##cmp##_SS, n, COND(U32(s), U32(l), CMPFN)) \
    COND_BRANCH(PREFIX##_##cmp##_SI, n, COND(U32(s), pc[l], CMPFN)) \
    COND_BRANCH(PREFIX##_##cmp##_IS, n, COND(pc[s], U32(l), CMPFN)) \
    COND_BRANCH(PREFIX##_##cmp##_II, n, COND(pc[s], pc[l], CMPFN))
#define ADDBR(cmp, CMPFN) LOOP_BRANCH4(ADDBR, cmp, 6, ADDBR_COND, CMPFN, 3, 4)
/* Two additions of immediates first (operands 1..6, as I32_ADD_I2), then the loop counter (7..10). */
#define I2ADDBR_COND(STEP, LIMIT, CMPFN) __extension__({ \
        SET_U32(1, U32(2) + pc[3]); SET_U32(4, U32(5) + pc[6]); \
        uint32_t k_ = U32(8) + (STEP); SET_U32(7, k_); CMPFN(k_, LIMIT); })
#define I2ADDBR(cmp, CMPFN) LOOP_BRANCH4(I2ADDBR, cmp, 12, I2ADDBR_COND, CMPFN, 9, 10)
/* A MOVE first (operands 1, 2), then the loop counter (3..6). */
#define MADDBR_COND(STEP, LIMIT, CMPFN) __extension__({ \
        SLOT(1) = SLOT(2); \
        uint32_t k_ = U32(4) + (STEP); SET_U32(3, k_); CMPFN(k_, LIMIT); })
#define MADDBR(cmp, CMPFN) LOOP_BRANCH4(MADDBR, cmp, 8, MADDBR_COND, CMPFN, 5, 6)
/* A load (operands 1..4, addressed as *_LOAD_XI), then a branch on the value against
 * operand 5 (a slot, or the immediate), read after the load's destination is written. */
#define LOADBR_COND(T, n, swap, CMPFN, B) __extension__({ \
        ADDR_X(2, pc[3], n); T v_; memcpy(&v_, ptr, n); uint32_t x_ = swap(v_); SET_U32(1, x_); CMPFN(x_, B); })
#define LOADBR(load, T, n, swap) \
    COND_BRANCH(load##_BR_EQ_S, 7, LOADBR_COND(T, n, swap, CMP_EQ, U32(5))) \
    COND_BRANCH(load##_BR_NE_S, 7, LOADBR_COND(T, n, swap, CMP_NE, U32(5))) \
    COND_BRANCH(load##_BR_EQ_I, 7, LOADBR_COND(T, n, swap, CMP_EQ, pc[5])) \
    COND_BRANCH(load##_BR_NE_I, 7, LOADBR_COND(T, n, swap, CMP_NE, pc[5]))
#define BRCMP64(name, cmp) \
    COND_BRANCH(BR_IF_##name, 4, cmp(U64(1), U64(2))) \
    COND_BRANCH(BR_IF_##name##_I, 4, cmp(U64(1), (uint64_t)(int64_t)(int32_t)pc[2]))

/* Effective address of a load (address operand 2) or store (address operand 1) of
 * n bytes; traps unless the whole access is inside the memory. */
#define ADDR(i, n) ADDR_OFF(i, 3, n)
#define ADDR_OFF(i, o, n) ADDR_OFF_M(0, i, o, n)
#define ADDR_OFF_M(m, i, o, n) \
    uint64_t ea = (uint64_t)AU32(m, i) + pc[o]; \
    if (__builtin_expect(OOB(ea, (n)), 0)) TRAP(RI_TRAP_MEMORY_OOB); \
    const uint8_t *ptr = mem_base + ea
#define LOADM(label, m, T, n, swap, PUT, ext) \
    op_##label: { ADDR_OFF_M(m, 2, 3, n); T v; memcpy(&v, ptr, n); v = swap(v); PUT(1, ext(v)); NEXT(4); }
#define LOAD(name, T, n, swap, PUT, ext) LOADM(name, 0, T, n, swap, PUT, ext)
#define STOREV(label, m, T, n, swap, value) \
    op_##label: { ADDR_OFF_M(m, 1, 3, n); T v = (T)(value); v = swap(v); memcpy((uint8_t *)ptr, &v, n); NEXT(4); }
#define STORE(name, T, n, swap, GET) STOREV(name, 0, T, n, swap, GET(2))
#define ID(x) (x)
#define NOSWAP(x) (x)
/* The same with the address (u32)(a + b) of the fused i32.add (operands 2 and 3 of
 * loads, 1 and 2 of stores; b may be the immediate), the offset in operand 4. */
#define ADDR_X(ia, B, n) \
    uint64_t ea = (uint64_t)(uint32_t)(U32(ia) + (B)) + pc[4]; \
    if (__builtin_expect(OOB(ea, (n)), 0)) TRAP(RI_TRAP_MEMORY_OOB); \
    const uint8_t *ptr = mem_base + ea
#define LOAD_X(name, T, n, swap, PUT, ext) \
    op_##name##_X: { ADDR_X(2, U32(3), n); T v; memcpy(&v, ptr, n); v = swap(v); PUT(1, ext(v)); NEXT(5); } \
    op_##name##_XI: { ADDR_X(2, pc[3], n); T v; memcpy(&v, ptr, n); v = swap(v); PUT(1, ext(v)); NEXT(5); }
#define STORE_X(name, T, n, swap, GET) \
    op_##name##_X: { ADDR_X(1, U32(2), n); T v = (T)GET(3); v = swap(v); memcpy((uint8_t *)ptr, &v, n); NEXT(5); } \
    op_##name##_XI: { ADDR_X(1, pc[2], n); T v = (T)GET(3); v = swap(v); memcpy((uint8_t *)ptr, &v, n); NEXT(5); }

/* Runs `code` (in `inst`) with its frame at slot fp_index until the frame below it,
 * the run's entry marker, is reached. With table_out, only returns the dispatch table. */
static RI_SINGLE_COPY ri_errcode run(ri_store *store, ri_exec *exec, const ri_code *code, ri_instance *inst,
                                     uint32_t fp_index, ri_error *err, const int32_t **table_out) {
#define RI_OFFSET(name) [RI_CODE_##name] = &&op_##name - &&op_ENTRY,
#define RI_OFFSETS4(name) RI_OFFSET(name) RI_OFFSET(name##_FG) RI_OFFSET(name##_BG) RI_OFFSET(name##_BU)
    /* The handlers, then 3 words that are the code the entry marker returns to (see
     * ri_interp_exit_code): a GAS of cost 0 (word 1, which a return charges), then EXIT. */
    static const int32_t dispatch[RI_CODE_OP_COUNT + 3] = {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) RI_OFFSET(name)
#define RI_X_BR(name, words) RI_OFFSETS4(name)
#define RI_X_CMPBR(cmp, neg) RI_OFFSETS4(BR_IF_##cmp) RI_OFFSETS4(BR_IF_##cmp##_I)
#define RI_X_FCMPBR(cmp, mirror) RI_OFFSETS4(BR_IF_##cmp) RI_OFFSETS4(BR_IFNOT_##cmp)
#define RI_X_IMM(name, mirror, ident) RI_OFFSET(name##_I)
#define RI_X_ADDR(name) RI_OFFSET(name##_X) RI_OFFSET(name##_XI)
#define RI_X_ADDBR(cmp) RI_OFFSETS4(ADDBR_##cmp##_SS) RI_OFFSETS4(ADDBR_##cmp##_SI) \
                        RI_OFFSETS4(ADDBR_##cmp##_IS) RI_OFFSETS4(ADDBR_##cmp##_II)
#define RI_X_PAIR(outer, inner) RI_OFFSET(I32_##outer##_##inner) RI_OFFSET(I32_##outer##_##inner##_I)
#define RI_X_ADDL(name, words, kinds, wasm) RI_OFFSET(name)
#define RI_X_LOADBR(load) RI_OFFSETS4(load##_BR_EQ_S) RI_OFFSETS4(load##_BR_NE_S) \
                          RI_OFFSETS4(load##_BR_EQ_I) RI_OFFSETS4(load##_BR_NE_I)
#define RI_X_STORE2(name) RI_OFFSET(name##_2)
#define RI_X_ACC(variant, base, words, mask, cls) RI_OFFSET(variant)
#define RI_X_IPAIR(outer, inner) RI_OFFSET(I32_##outer##I_##inner##I)
#define RI_X_I2ADDBR(cmp) RI_OFFSETS4(I2ADDBR_##cmp##_SS) RI_OFFSETS4(I2ADDBR_##cmp##_SI) \
                          RI_OFFSETS4(I2ADDBR_##cmp##_IS) RI_OFFSETS4(I2ADDBR_##cmp##_II)
#define RI_X_MADDBR(cmp) RI_OFFSETS4(MADDBR_##cmp##_SS) RI_OFFSETS4(MADDBR_##cmp##_SI) \
                         RI_OFFSETS4(MADDBR_##cmp##_IS) RI_OFFSETS4(MADDBR_##cmp##_II)
#define RI_X_MEM(name, byte, t, n, st) RI_OFFSET(name)
#define RI_X_NUM(name, byte, a, b, r) RI_OFFSET(name)
        RI_CODE_EVERY_OP(RI_X_NUM)
#include "code_xundef.h"
#undef RI_OFFSETS4
#undef RI_OFFSET
        [RI_CODE_OP_COUNT + 2] = &&op_EXIT - &&op_ENTRY,
    };
    if (table_out) {
        *table_out = dispatch;
        return RI_OK;
    }

    const bool canon = store->config.canonicalize_nans;
    /* Gas: `gas` is what the charges draw from; the rest of the budget waits in
     * gas_reserve and comes over in chunks of at most RI_GAS_CHUNK (see out_of_gas). */
    int64_t gas = (int64_t)(store->gas < RI_GAS_CHUNK ? store->gas : RI_GAS_CHUNK);
    uint64_t gas_reserve = store->gas - (uint64_t)gas;
    const uint32_t *pc = exec->resume_pc ? exec->resume_pc : code->words; /* a resumed call: its stop point */
    exec->resume_pc = NULL;
    ri_slot *fp = exec->stack + fp_index;
    ri_code *const *codes;
    ri_memory *mem;
    uint8_t *mem_base;
    uint64_t mem_size;
    /* (in memory, its address given away below, so that each bounds check compares
     * against it in place rather than loading it into a register first) */
    struct { uint64_t e1, e2, e4, e8; } mem_end; /* see OOB */
    __asm__ volatile("" : : "r"(&mem_end) : "memory");
    uint64_t acc = 0; /* the accumulators: see PUT_U32 */
    double facc = 0.0;
    ri_trap trap_kind = RI_TRAP_NONE;
    uint32_t trap_element = 0; /* call_indirect: the table element a trap names */
    SWITCH_INSTANCE(inst);
    LOAD_MEMORY();

    /* State of a call being made: the callee and where its frame starts. */
    ri_func *callee_func;
    const ri_code *callee;
    ri_instance *callee_inst;
    uint32_t call_base, call_size;
    ri_exn *exn; /* an exception being thrown */


    DISPATCH();

    /* ---- control ---- */

op_ENTRY: /* enter a function: poll interrupt, charge the first region, zero declared locals, load the constant pool */
    {
        POLL_INTERRUPT();
        CHARGE(pc[1]);
        ri_slot *local = fp + pc[2];
        uint32_t n = pc[3];
        if (n <= 8) { /* most functions: a few stores, no call */
            if (n & 1) local++->i64 = 0;
            if (n & 2) { local[0].i64 = 0; local[1].i64 = 0; local += 2; }
            if (n & 4) { local[0].i64 = 0; local[1].i64 = 0; local[2].i64 = 0; local[3].i64 = 0; local += 4; }
            if (n & 8) { local[0].i64 = 0; local[1].i64 = 0; local[2].i64 = 0; local[3].i64 = 0;
                         local[4].i64 = 0; local[5].i64 = 0; local[6].i64 = 0; local[7].i64 = 0; local += 8; }
        } else {
            memset(local, 0, (size_t)n * sizeof *local);
            local += n;
        }
        uint32_t nconsts = pc[4];
        for (uint32_t i = 0; i < nconsts; i++) local[i].i64 = pc[5 + 2 * i] | (uint64_t)pc[6 + 2 * i] << 32;
        NEXT(5 + 2 * nconsts);
    }
op_ENTRY_Z: /* ENTRY without constants and at most 8 declared locals (the frame has room for 8) */
    CHARGE(pc[1]); /* metered code: the interrupt flag is polled at each new chunk of gas */
    goto zero8;
op_ENTRY_ZU: /* ENTRY_Z of unmetered code */
    POLL_INTERRUPT();
zero8:
    {
        ri_slot *local = fp + pc[2];
        local[0].i64 = 0; local[1].i64 = 0; local[2].i64 = 0; local[3].i64 = 0;
        local[4].i64 = 0; local[5].i64 = 0; local[6].i64 = 0; local[7].i64 = 0;
        NEXT(5);
    }
op_ENTRY_Z4: /* ENTRY without constants and at most 4 declared locals (the frame has room for 4) */
    CHARGE(pc[1]);
    goto zero4;
op_ENTRY_Z4U: /* ENTRY_Z4 of unmetered code */
    POLL_INTERRUPT();
zero4:
    {
        ri_slot *local = fp + pc[2];
        local[0].i64 = 0; local[1].i64 = 0; local[2].i64 = 0; local[3].i64 = 0;
        NEXT(5);
    }
op_ENTRY_Z0: /* ENTRY without constants or declared locals */
    CHARGE(pc[1]);
    NEXT(5);
op_ENTRY_Z0U: /* ENTRY_Z0 of unmetered code */
    POLL_INTERRUPT();
    NEXT(5);
op_GAS: /* start of a region: charge its instructions */
    CHARGE(pc[1]);
    NEXT(2);
op_LOOP: /* loop header (back-edges land here): charge the region */
    CHARGE(pc[1]); /* metered code: the interrupt flag is polled at each new chunk of gas */
    NEXT(2);
op_LOOP_U: /* loop header of unmetered code: poll interrupt */
    POLL_INTERRUPT();
    NEXT(2);
op_BR: /* pc += offset */
    JUMP(1);
op_BR_FG: /* branch to a GAS, charging it */
    JUMP_FG(1);
op_BR_BG: /* branch to a LOOP, polling and charging it */
    JUMP_BG(1);
op_BR_BU: /* branch to an unmetered LOOP, polling it */
    JUMP_BU(1);
    COND_BRANCH(BR_IF, 3, U32(1))     /* if a != 0 then branch */
    COND_BRANCH(BR_IFNOT, 3, !U32(1)) /* if a == 0 then branch */
    BRCMP32(I32_EQ, CMP_EQ)       /* if a == b then branch */
    BRCMP32(I32_NE, CMP_NE)       /* if a != b then branch */
    BRCMP32(I32_LT_S, CMP32_LT_S) /* if a < b (signed) then branch */
    BRCMP32(I32_LT_U, CMP_LT_U)   /* if a < b (unsigned) then branch */
    BRCMP32(I32_GT_S, CMP32_GT_S) /* if a > b (signed) then branch */
    BRCMP32(I32_GT_U, CMP_GT_U)   /* if a > b (unsigned) then branch */
    BRCMP32(I32_LE_S, CMP32_LE_S) /* if a <= b (signed) then branch */
    BRCMP32(I32_LE_U, CMP_LE_U)   /* if a <= b (unsigned) then branch */
    BRCMP32(I32_GE_S, CMP32_GE_S) /* if a >= b (signed) then branch */
    BRCMP32(I32_GE_U, CMP_GE_U)   /* if a >= b (unsigned) then branch */
    BRCMP64(I64_EQ, CMP_EQ)       /* if a == b (i64) then branch */
    BRCMP64(I64_NE, CMP_NE)       /* if a != b (i64) then branch */
    BRCMP64(I64_LT_S, CMP64_LT_S) /* if a < b (i64 signed) then branch */
    BRCMP64(I64_LT_U, CMP_LT_U)   /* if a < b (i64 unsigned) then branch */
    BRCMP64(I64_GT_S, CMP64_GT_S) /* if a > b (i64 signed) then branch */
    BRCMP64(I64_GT_U, CMP_GT_U)   /* if a > b (i64 unsigned) then branch */
    BRCMP64(I64_LE_S, CMP64_LE_S) /* if a <= b (i64 signed) then branch */
    BRCMP64(I64_LE_U, CMP_LE_U)   /* if a <= b (i64 unsigned) then branch */
    BRCMP64(I64_GE_S, CMP64_GE_S) /* if a >= b (i64 signed) then branch */
    BRCMP64(I64_GE_U, CMP_GE_U)   /* if a >= b (i64 unsigned) then branch */
    COND_BRANCH(BR_IF_F32_LT, 4, F32(1) < F32(2))         /* if a < b (f32) then branch */
    COND_BRANCH(BR_IFNOT_F32_LT, 4, !(F32(1) < F32(2)))   /* unless a < b (f32): NaN branches */
    COND_BRANCH(BR_IF_F32_LE, 4, F32(1) <= F32(2))
    COND_BRANCH(BR_IFNOT_F32_LE, 4, !(F32(1) <= F32(2)))
    COND_BRANCH(BR_IF_F64_LT, 4, F64(1) < F64(2))
    COND_BRANCH(BR_IFNOT_F64_LT, 4, !(F64(1) < F64(2)))
    COND_BRANCH(BR_IF_F64_LE, 4, F64(1) <= F64(2))
    COND_BRANCH(BR_IFNOT_F64_LE, 4, !(F64(1) <= F64(2)))
    ADDBR(I32_EQ, CMP_EQ)         /* k = x + step; if k == limit then branch */
    ADDBR(I32_NE, CMP_NE)
    ADDBR(I32_LT_S, CMP32_LT_S)
    ADDBR(I32_LT_U, CMP_LT_U)
    ADDBR(I32_GT_S, CMP32_GT_S)
    ADDBR(I32_GT_U, CMP_GT_U)
    ADDBR(I32_LE_S, CMP32_LE_S)
    ADDBR(I32_LE_U, CMP_LE_U)
    ADDBR(I32_GE_S, CMP32_GE_S)
    ADDBR(I32_GE_U, CMP_GE_U)
    I2ADDBR(I32_NE, CMP_NE)       /* d1 = a1 + imm1; d2 = a2 + imm2; k = x + step; if k != limit then branch */
    MADDBR(I32_NE, CMP_NE)        /* d = s; k = x + step; if k != limit then branch */
    LOADBR(I32_LOAD, uint32_t, 4, LE32)  /* d = mem32[(u32)(a + imm) + off]; if d == / != b then branch */
    LOADBR(I32_LOAD8_U, uint8_t, 1, ID)  /* d = mem8[(u32)(a + imm) + off]; the same */
op_BR_TABLE_G: /* BR_TABLE (below), the target a GAS or LOOP: charge it and skip it */
    {
        uint32_t i = U32(1), count = pc[2];
        if (i > count) i = count;
        JUMP_FG(3 + i);
    }
op_BR_TABLE_BU: /* BR_TABLE, the target a LOOP_U: poll the interrupt flag and skip it */
    {
        uint32_t i = U32(1), count = pc[2];
        if (i > count) i = count;
        JUMP_BU(3 + i);
    }
op_BR_TABLE: /* branch to offset[min(a, count)] */
    {
        uint32_t i = U32(1), count = pc[2];
        if (i > count) i = count;
        JUMP(3 + i);
    }
op_RETURN0: /* return */
    goto do_return;
op_RETURN1: /* return a */
    fp[0] = SLOT(1);
    goto do_return;
op_I32_ADD_RET: /* return a + b */
    fp[0].i64 = (uint32_t)(U32(1) + U32(2));
    goto do_return;
op_RETURN_N: /* return slots [a, a + n) */
    memmove(fp, fp + pc[1], (size_t)pc[2] * sizeof *fp);
    goto do_return;
do_return:
    {
        const ri_frame *f = --exec->frame_top;
        /* (the entry marker returns to ri_interp_exit_code: EXIT) */
        pc = f->ret_pc;
        code = f->code;
        fp = f->fp.ptr;
        RI_ASSERT(!code || (size_t)(exec->stack_end - fp) >= code->frame_slots, "I12");
        if (f->inst_bits != (uintptr_t)inst) { /* another instance, or a tagged frame (exec.h) */
            SWITCH_INSTANCE(ri_frame_instance(f));
            LOAD_MEMORY();
        }
        { /* the GAS after the call (code.h: every call has one; 0 in unmetered code) */
            gas -= (int64_t)pc[1];
            if (__builtin_expect(gas < 0, 0)) goto out_of_gas_undo;
            pc += 2;
        }
        DISPATCH();
    }
op_EXIT: /* the run's entry marker was returned to: leave */
    goto finish;
op_UNREACHABLE: /* trap */
    TRAP(RI_TRAP_UNREACHABLE);

/* Enters `callee`, a function of this instance, with its frame at fp + base, returning
 * to pc + size, when the stack and the frame array have room; else does nothing. */
#define ENTER_LOCAL(base, size) \
    do { \
        ri_frame *f_ = exec->frame_top; \
        if (__builtin_expect((size_t)(exec->stack_end - fp) >= (size_t)(base) + callee->frame_slots && \
                             f_ < exec->frames_end, 1)) { \
            exec->frame_top = f_ + 1; \
            f_->ret_pc = pc + (size); \
            f_->code = code; \
            f_->inst_bits = (uintptr_t)inst; \
            f_->fp.ptr = fp; \
            fp += (base); \
            code = callee; \
            pc = callee->words; \
            DISPATCH(); \
        } \
    } while (0)
op_CALL_LOCAL: /* call function a of this module, frame at b */
    callee = codes[pc[1]];
    ENTER_LOCAL(pc[2], 3); /* the common case inline */
    call_size = 3; /* the stack or the frame array must grow first */
    callee_inst = inst;
    call_base = pc[2];
    goto call_wasm;
op_CALL: /* call function a (an import), frame at b */
    callee_func = inst->funcs[pc[1]];
    call_base = pc[2];
    call_size = 3;
    goto call_func;
/* call_indirect of `words` words: the element's checks, then the fast path of CALL_LOCAL
 * for a function of this instance (each variant inline, its size a constant). */
#define CALL_INDIRECT_TO(words) \
    do { \
        const ri_table *tab_ = inst->tables[pc[2]]; \
        uint32_t i_ = U32(3); \
        if (__builtin_expect(i_ >= tab_->size, 0)) { trap_element = i_; TRAP(RI_TRAP_UNDEFINED_ELEMENT); } \
        callee_func = tab_->elems[i_]; \
        if (__builtin_expect(!callee_func, 0)) { trap_element = i_; TRAP(RI_TRAP_UNINITIALIZED_ELEMENT); } \
        if (__builtin_expect(callee_func->type_id != inst->type_ids[pc[1]], 0)) TRAP(RI_TRAP_INDIRECT_MISMATCH); \
        callee = callee_func->code; \
        if (__builtin_expect(callee_func->instance == inst && callee != NULL, 1)) ENTER_LOCAL(pc[4], words); \
        call_size = (words); \
        call_base = pc[4]; \
        goto call_func; \
    } while (0)
op_CALL_INDIRECT: /* call table[t][c] checked against type a, frame at d */
    CALL_INDIRECT_TO(5);
op_THROW: /* throw an exception of tag a, its values at slots [b, b + n) */
    exn = ri_exn_new(exec, inst->tags[pc[1]], fp + pc[2], fp, code);
    if (!exn) {
        host_failed(err, "out of memory for an exception");
        TRAP(RI_TRAP_HOST);
    }
    goto do_throw;
op_RETHROW: /* throw again the exception kept in slot a */
    exn = (ri_exn *)SLOT(1).ref;
    if (!exn) TRAP(RI_TRAP_UNREACHABLE); /* (only a hostile rebuilt frame has none there) */
    goto do_throw;
op_THROW_REF: /* throw the exception the exnref in slot a refers to */
    exn = (ri_exn *)SLOT(1).ref;
    if (!exn) TRAP(RI_TRAP_NULL_EXNREF);
do_throw: /* the handler tables of each frame, from the running one down to the run's entry */
    for (;;) {
        const ri_code_catch *c_ = ri_exn_find_catch(code, inst, (uint32_t)(pc - code->words), exn);
        if (c_) {
            if (c_->tag != RI_CATCH_ALL && exn->n) memcpy(fp + c_->base, exn->vals, (size_t)exn->n * sizeof *fp);
            if (c_->exn_slot != RI_NO_SLOT) {
                fp[c_->exn_slot].i64 = 0;
                fp[c_->exn_slot].ref = exn;
            }
            pc = code->words + c_->target; /* its GAS */
            DISPATCH();
        }
        const ri_frame *f = exec->frame_top - 1;
        if (!f->code) TRAP(RI_TRAP_EXCEPTION); /* the run's entry: uncaught (pc at the outermost frame's call) */
        exec->frame_top--;
        pc = f->ret_pc - 1; /* inside the call it waits in */
        code = f->code;
        fp = f->fp.ptr;
        if (f->inst_bits != (uintptr_t)inst) {
            SWITCH_INSTANCE(ri_frame_instance(f));
            LOAD_MEMORY();
        }
    }
op_RETURN_CALL: /* tail call of function a, its arguments at b */
    callee_func = inst->funcs[pc[1]];
    call_base = pc[2];
    call_size = 3;
    goto tail_call;
op_RETURN_CALL_INDIRECT: /* tail call of table[t][c] checked against type a, its arguments at d */
    {
        const ri_table *tab_ = inst->tables[pc[2]];
        uint32_t i_ = U32(3);
        if (__builtin_expect(i_ >= tab_->size, 0)) { trap_element = i_; TRAP(RI_TRAP_UNDEFINED_ELEMENT); }
        callee_func = tab_->elems[i_];
        if (__builtin_expect(!callee_func, 0)) { trap_element = i_; TRAP(RI_TRAP_UNINITIALIZED_ELEMENT); }
        if (__builtin_expect(callee_func->type_id != inst->type_ids[pc[1]], 0)) TRAP(RI_TRAP_INDIRECT_MISMATCH);
        call_base = pc[4];
        call_size = 5;
    }
tail_call: /* the callee's frame replaces this one: its arguments move down to fp[0] */
    callee = callee_func->code;
    if (callee_func->host || callee_func->emsc_op || !callee || !callee_func->instance)
        goto call_func; /* a plain call; the RETURN after its GAS passes the results on */
    {
        uint32_t at = (uint32_t)(fp - exec->stack);
        if (__builtin_expect((uint64_t)at + callee->frame_slots > exec->stack_cap, 0)) {
            if (!ensure_stack(store, exec, (uint64_t)at + callee->frame_slots)) TRAP(RI_TRAP_STACK_EXHAUSTED);
            fp = exec->stack + at;
        }
        memmove(fp, fp + call_base, (size_t)callee->nparams * sizeof *fp);
        code = callee;
        pc = callee->words;
        if (callee_func->instance != inst) {
            SWITCH_INSTANCE(callee_func->instance);
            LOAD_MEMORY();
        }
        DISPATCH();
    }
call_func:
    if (callee_func->host) {
        /* Polled here too: the gas chunk is refilled after each host call, so a loop that
         * calls an import would never draw a new one. Stops at the call (made on resume). */
        POLL_INTERRUPT();
        uint32_t at = (uint32_t)(fp - exec->stack);
        exec->stack_top = at + call_base; /* a nested run starts above this frame */
        store->gas = (uint64_t)gas + gas_reserve;
        ri_errcode rc = call_host(store, exec, callee_func, inst, NULL, at + call_base, err);
        fp = exec->stack + at;
        gas = (int64_t)(store->gas < RI_GAS_CHUNK ? store->gas : RI_GAS_CHUNK);
        gas_reserve = store->gas - (uint64_t)gas;
        LOAD_MEMORY();
        if (rc != RI_OK) {
            if (rc == RI_ERR_SUSPENDED) { /* it yielded: suspend at the GAS after the call */
                pc += call_size;
                goto suspend;
            }
            if (rc == RI_ERR_PAUSE_BEFORE) /* at the call: a suspension, if the mode wants one */
                TRAP(atomic_load_explicit(&store->interrupt, memory_order_relaxed) != 0 ? RI_TRAP_INTERRUPTED
                                                                                        : RI_TRAP_OUT_OF_GAS);
            TRAP(RI_TRAP_HOST);
        }
        NEXT(call_size);
    }
    if (callee_func->emsc_op) goto emscripten_op;
    callee = callee_func->code;
    callee_inst = callee_func->instance;
    if (!callee || !callee_inst) TRAP(RI_TRAP_UNREACHABLE);
    goto call_wasm;
emscripten_op:
    /* Emscripten invoke and throw (ri/engine.h, ri_func_new_emscripten): on heap frames,
     * so that a call inside an invoke pauses and resumes like any other. */
    {
        const char *why = ri_emsc_resolve(inst);
        if (why) {
            host_failed(err, why);
            TRAP(RI_TRAP_HOST);
        }
        uint32_t at = (uint32_t)(fp - exec->stack);
        if (callee_func->emsc_op == RI_EMSCRIPTEN_INVOKE) {
            /* table 0's element, as call_indirect checks it; its arguments move down over
             * the index, so its results land where the invoke's go */
            uint32_t i_ = U32FP(call_base);
            if (inst->module->ntables == 0) { trap_element = i_; TRAP(RI_TRAP_UNDEFINED_ELEMENT); }
            const ri_table *tab_ = inst->tables[0];
            if (i_ >= tab_->size) { trap_element = i_; TRAP(RI_TRAP_UNDEFINED_ELEMENT); }
            ri_func *target = tab_->elems[i_];
            if (!target) { trap_element = i_; TRAP(RI_TRAP_UNINITIALIZED_ELEMENT); }
            if (target->type_id != callee_func->emsc_target_type) TRAP(RI_TRAP_INDIRECT_MISMATCH);
            uint32_t nargs = callee_func->type.nparams - 1;
            if (!target->code || !target->instance) {
                /* a host function or another operation: nothing of this run to unwind
                 * into it, so a plain call (a throw under it finds the callers' catch points) */
                memmove(fp + call_base, fp + call_base + 1, (size_t)nargs * sizeof *fp);
                callee_func = target;
                goto call_func;
            }
            callee = target->code;
            uint64_t callee_at = (uint64_t)at + call_base;
            if (callee_at + callee->frame_slots > exec->stack_cap) {
                if (!ensure_stack(store, exec, callee_at + callee->frame_slots)) TRAP(RI_TRAP_STACK_EXHAUSTED);
                fp = exec->stack + at;
            }
            if (exec->frame_top >= exec->frames_end && !ensure_frame(store, exec)) TRAP(RI_TRAP_STACK_EXHAUSTED);
            memmove(fp + call_base, fp + call_base + 1, (size_t)nargs * sizeof *fp);
            ri_frame *f = exec->frame_top++;
            f->ret_pc = pc + call_size;
            f->code = code;
            f->inst_bits = (uintptr_t)inst | RI_FRAME_VIA_INVOKE;
            f->aux = (uint32_t)inst->globals[inst->emsc.sp_global]->value.i64 |
                     (uint64_t)callee_func->type.nresults << 32;
            f->fp.ptr = fp;
            fp += call_base;
            code = callee;
            pc = callee->words;
            if (target->instance != inst) {
                SWITCH_INSTANCE(target->instance);
                LOAD_MEMORY();
            }
            DISPATCH();
        }
        /* A throw: the nearest catch point of this run (the run's entry marker has no code). */
        ri_frame *c = exec->frame_top;
        while (c > exec->frames && c[-1].code && ri_frame_via(&c[-1]) != RI_FRAME_VIA_INVOKE) c--;
        if (c == exec->frames || !c[-1].code) {
            host_failed(err, "uncaught longjmp: _emscripten_throw_longjmp was called with no invoke_* call of "
                             "this run to catch it");
            TRAP(RI_TRAP_HOST);
        }
        ri_frame *f = c - 1;
        ri_instance *ci = ri_frame_instance(f);
        why = ri_emsc_resolve(ci);
        if (why) {
            host_failed(err, why);
            TRAP(RI_TRAP_HOST);
        }
        /* Where the invoke's callee frame is: the next record's caller, or the running frame. */
        size_t callee_at = (size_t)((c < exec->frame_top ? c->fp.ptr : fp) - exec->stack);
        uint32_t nres = (uint32_t)(f->aux >> 32);
        ci->globals[ci->emsc.sp_global]->value.i64 = (uint32_t)f->aux; /* stackRestore */
        exec->frame_top = c;
        f->inst_bits = (uintptr_t)ci | RI_FRAME_VIA_SETTHREW;
        /* setThrew(1, 0) above the invoke's results (zeros), returning where the invoke returns */
        callee = ci->emsc.set_threw->code;
        size_t st_at = callee_at + nres;
        if ((uint64_t)st_at + callee->frame_slots > exec->stack_cap &&
            !ensure_stack(store, exec, (uint64_t)st_at + callee->frame_slots))
            TRAP(RI_TRAP_STACK_EXHAUSTED);
        for (uint32_t k = 0; k < nres; k++) exec->stack[callee_at + k].i64 = 0;
        exec->stack[st_at] = ri_slot_of_u32(1);
        exec->stack[st_at + 1] = ri_slot_of_u32(0);
        fp = exec->stack + st_at;
        code = callee;
        pc = callee->words;
        if (ci != inst) SWITCH_INSTANCE(ci);
        LOAD_MEMORY();
        DISPATCH();
    }
call_wasm:
    {
        uint32_t at = (uint32_t)(fp - exec->stack);
        uint64_t callee_at = (uint64_t)at + call_base;
        if (__builtin_expect(callee_at + callee->frame_slots > exec->stack_cap, 0)) {
            if (!ensure_stack(store, exec, callee_at + callee->frame_slots)) TRAP(RI_TRAP_STACK_EXHAUSTED);
            fp = exec->stack + at;
        }
        /* frames_cap never exceeds max_call_depth: one test covers both */
        if (__builtin_expect(exec->frame_top >= exec->frames_end, 0) && !ensure_frame(store, exec))
            TRAP(RI_TRAP_STACK_EXHAUSTED);
        ri_frame *f = exec->frame_top++;
        f->ret_pc = pc + call_size;
        f->code = code;
        f->inst_bits = (uintptr_t)inst;
        f->fp.ptr = fp;
        fp += call_base;
        code = callee;
        pc = callee->words;
        if (callee_inst != inst) {
            SWITCH_INSTANCE(callee_inst);
            LOAD_MEMORY();
        }
        DISPATCH();
    }

    /* ---- parametric and variables ---- */

/* A MOVE also leaves the bits in acc (acc.c: both of its slots then hold them). */
#define MOVE_ACC(d, s) do { ri_slot v_ = SLOT(s); SLOT(d) = v_; acc = v_.i64; } while (0)
op_MOVE: /* d = a */
    MOVE_ACC(1, 2);
    NEXT(3);
/* d = mem32[ea]; next instruction after n words */
#define LOAD32_AT(ea_expr, n) \
    { uint64_t ea = (ea_expr); if (__builtin_expect(OOB(ea, 4), 0)) TRAP(RI_TRAP_MEMORY_OOB); \
      uint32_t v; memcpy(&v, mem_base + ea, 4); PUT_U32(1, LE32(v)); NEXT(n); }
#define LOAD_SX(label, m) op_##label: LOAD32_AT((uint64_t)(uint32_t)(AU32(m, 2) + (AU32(m, 3) << pc[4])) + pc[5], 6)
#define LOAD_SXI(label, m) op_##label: LOAD32_AT((uint64_t)(uint32_t)((AU32(m, 2) << pc[3]) + pc[4]) + pc[5], 6)
#define LOAD_MSXI(label, m) \
    op_##label: LOAD32_AT((uint64_t)(uint32_t)(((AU32(m, 2) & pc[3]) << pc[4]) + pc[5]) + pc[6], 7)
    LOAD_SX(I32_LOAD_SX, 0)       /* d = mem32[(u32)(a + (x << k)) + off] */
    LOAD_SXI(I32_LOAD_SXI, 0)     /* d = mem32[(u32)((x << k) + base) + off] */
    LOAD_MSXI(I32_LOAD_MSXI, 0)   /* d = mem32[(u32)(((x & mask) << k) + base) + off] */
op_I32_LOAD2: /* d1 = mem32[a1 + off1]; d2 = mem32[a2 + off2] */
    {
        uint64_t ea = (uint64_t)U32(2) + pc[3];
        if (__builtin_expect(OOB(ea, 4), 0)) TRAP(RI_TRAP_MEMORY_OOB);
        uint32_t v;
        memcpy(&v, mem_base + ea, 4);
        PUT_U32(1, LE32(v));
        ea = (uint64_t)U32(5) + pc[6];
        if (__builtin_expect(OOB(ea, 4), 0)) { pc += 3; TRAP(RI_TRAP_MEMORY_OOB); }
        memcpy(&v, mem_base + ea, 4);
        PUT_U32(4, LE32(v));
        NEXT(7);
    }
op_I32_ADD_I2: /* d1 = a1 + imm1; d2 = a2 + imm2 */
    SET_U32(1, U32(2) + pc[3]);
    SET_U32(4, U32(5) + pc[6]);
    NEXT(7);
op_SELECT: /* d = c ? a : b */
    SLOT(1) = U32(4) ? SLOT(2) : SLOT(3);
    NEXT(5);
#include "interp_simd.h" /* the SIMD family */
op_GLOBAL_GET: /* d = globals[a] */
    SLOT(1) = inst->globals[pc[2]]->value;
    NEXT(3);
op_GLOBAL_SET: /* globals[a] = b */
    inst->globals[pc[1]]->value = SLOT(2);
    NEXT(3);
op_CONST32: /* d = 32-bit constant */
    SLOT(1).i64 = pc[2];
    NEXT(3);
op_CONST64: /* d = 64-bit constant */
    SLOT(1).i64 = pc[2] | (uint64_t)pc[3] << 32;
    NEXT(4);
op_REF_IS_NULL: /* d = a == null */
    PUT_U32(1, REF(2) == NULL);
    NEXT(3);
op_REF_FUNC: /* d = funcs[a] */
    PUT_REF(1, inst->funcs[pc[2]]);
    NEXT(3);

    /* ---- memory ---- */

    LOAD(I32_LOAD, uint32_t, 4, LE32, PUT_U32, ID)                      /* d = mem32[a + off] */
    LOAD(I64_LOAD, uint64_t, 8, LE64, PUT_U64, ID)                      /* d = mem64[a + off] */
    LOAD(F32_LOAD, uint32_t, 4, LE32, PUT_U32, ID)                      /* d = mem32[a + off] (bits) */
    LOAD(F64_LOAD, uint64_t, 8, LE64, PUT_U64, ID)                      /* d = mem64[a + off] (bits) */
    LOAD(I32_LOAD8_S, uint8_t, 1, NOSWAP, PUT_U32, ri_i32_extend8_s)    /* d = sext(mem8[a + off]) */
    LOAD(I32_LOAD8_U, uint8_t, 1, NOSWAP, PUT_U32, ID)                  /* d = mem8[a + off] */
    LOAD(I32_LOAD16_S, uint16_t, 2, LE16, PUT_U32, ri_i32_extend16_s)   /* d = sext(mem16[a + off]) */
    LOAD(I32_LOAD16_U, uint16_t, 2, LE16, PUT_U32, ID)                  /* d = mem16[a + off] */
    LOAD(I64_LOAD8_S, uint8_t, 1, NOSWAP, PUT_U64, ri_i64_extend8_s)    /* d = sext64(mem8[a + off]) */
    LOAD(I64_LOAD8_U, uint8_t, 1, NOSWAP, PUT_U64, ID)                  /* d = mem8[a + off] */
    LOAD(I64_LOAD16_S, uint16_t, 2, LE16, PUT_U64, ri_i64_extend16_s)   /* d = sext64(mem16[a + off]) */
    LOAD(I64_LOAD16_U, uint16_t, 2, LE16, PUT_U64, ID)                  /* d = mem16[a + off] */
    LOAD(I64_LOAD32_S, uint32_t, 4, LE32, PUT_U64, ri_i64_extend32_s)   /* d = sext64(mem32[a + off]) */
    LOAD(I64_LOAD32_U, uint32_t, 4, LE32, PUT_U64, ID)                  /* d = mem32[a + off] */
    STORE(I32_STORE, uint32_t, 4, LE32, U32)                            /* mem32[a + off] = b */
    STORE(I64_STORE, uint64_t, 8, LE64, U64)                            /* mem64[a + off] = b */
    STORE(F32_STORE, uint32_t, 4, LE32, U32)                            /* mem32[a + off] = b (bits) */
    STORE(F64_STORE, uint64_t, 8, LE64, U64)                            /* mem64[a + off] = b (bits) */
    STORE(I32_STORE8, uint8_t, 1, NOSWAP, U32)                          /* mem8[a + off] = b */
    STORE(I32_STORE16, uint16_t, 2, LE16, U32)                          /* mem16[a + off] = b */
    STORE(I64_STORE8, uint8_t, 1, NOSWAP, U64)                          /* mem8[a + off] = b */
    STORE(I64_STORE16, uint16_t, 2, LE16, U64)                          /* mem16[a + off] = b */
    STORE(I64_STORE32, uint32_t, 4, LE32, U64)                          /* mem32[a + off] = b */

#define STORE2(name, T, n, swap, GET) \
    op_##name##_2: { \
        { ADDR(1, n); T v = (T)GET(2); v = swap(v); memcpy((uint8_t *)ptr, &v, n); } \
        uint64_t ea2 = (uint64_t)U32(4) + pc[6]; \
        if (__builtin_expect(OOB(ea2, (n)), 0)) { pc += 3; TRAP(RI_TRAP_MEMORY_OOB); } \
        T v2 = (T)GET(5); v2 = swap(v2); memcpy(mem_base + ea2, &v2, n); \
        NEXT(7); }
    STORE2(I32_STORE, uint32_t, 4, LE32, U32)                           /* two stores in a row */
    STORE2(I64_STORE, uint64_t, 8, LE64, U64)
    STORE2(F64_STORE, uint64_t, 8, LE64, U64)
    STORE2(I32_STORE8, uint8_t, 1, NOSWAP, U32)
    LOAD_X(I32_LOAD, uint32_t, 4, LE32, PUT_U32, ID)                    /* d = mem32[(u32)(a + b) + off] */
    LOAD_X(I64_LOAD, uint64_t, 8, LE64, PUT_U64, ID)
    LOAD_X(F32_LOAD, uint32_t, 4, LE32, PUT_U32, ID)
    LOAD_X(F64_LOAD, uint64_t, 8, LE64, PUT_U64, ID)
    LOAD_X(I32_LOAD8_S, uint8_t, 1, NOSWAP, PUT_U32, ri_i32_extend8_s)
    LOAD_X(I32_LOAD8_U, uint8_t, 1, NOSWAP, PUT_U32, ID)
    LOAD_X(I32_LOAD16_S, uint16_t, 2, LE16, PUT_U32, ri_i32_extend16_s)
    LOAD_X(I32_LOAD16_U, uint16_t, 2, LE16, PUT_U32, ID)
    STORE_X(I32_STORE, uint32_t, 4, LE32, U32)                          /* mem32[(u32)(a + b) + off] = v */
    STORE_X(I64_STORE, uint64_t, 8, LE64, U64)
    STORE_X(F32_STORE, uint32_t, 4, LE32, U32)
    STORE_X(F64_STORE, uint64_t, 8, LE64, U64)
    STORE_X(I32_STORE8, uint8_t, 1, NOSWAP, U32)
    STORE_X(I32_STORE16, uint16_t, 2, LE16, U32)

    /* I32_ADD_L*8U: d = a + mem8[address] */
op_I32_ADD_L8U: { ADDR_OFF(3, 4, 1); PUT_U32(1, U32(2) + *ptr); NEXT(5); }
/* d = a + the n-byte T at (u32)(p + B) + off (I32_ADD_LX*: T uint32_t; *8U: uint8_t) */
#define ADD_LXN(label, m, B, T, n, swap) \
    op_##label: { uint64_t ea = (uint64_t)(uint32_t)(AU32(m, 3) + (B)) + pc[5]; \
                  if (__builtin_expect(OOB(ea, n), 0)) TRAP(RI_TRAP_MEMORY_OOB); \
                  T v; memcpy(&v, mem_base + ea, n); PUT_U32(1, AU32(m, 2) + swap(v)); NEXT(6); }
#define ADD_LX(label, m, B) ADD_LXN(label, m, B, uint32_t, 4, LE32)
#define ADD_LX8U(label, m, B) ADD_LXN(label, m, B, uint8_t, 1, NOSWAP)
    ADD_LX8U(I32_ADD_LX8U, 0, U32(4))
    ADD_LX8U(I32_ADD_LXI8U, 0, pc[4])
    /* I32_ADD_L*: d = a + mem32[address] */
op_I32_ADD_L: { ADDR_OFF(3, 4, 4); uint32_t v; memcpy(&v, ptr, 4); PUT_U32(1, U32(2) + LE32(v)); NEXT(5); }
    ADD_LX(I32_ADD_LX, 0, U32(4))
    ADD_LX(I32_ADD_LXI, 0, pc[4])

op_MEMORY_SIZE: /* d = memory size in pages */
    PUT_U32(1, mem->pages);
    NEXT(2);
op_MEMORY_GROW: /* d = grow memory by a pages (old size, or -1) */
    {
        int64_t old = ri_memory_grow_internal(mem, U32(2));
        PUT_U32(1, (uint32_t)old);
        LOAD_MEMORY();
        NEXT(3);
    }
op_MEMORY_INIT: /* mem[d .. d+n) = data[x][s .. s+n) */
    {
        uint32_t x = pc[1];
        uint64_t d = U32(2), s = U32(3), n = U32(4);
        if (code->metered) CHARGE_N(n);
        const ri_data_segment *seg = &inst->module->datas[x];
        uint64_t len = inst->data_dropped[x] ? 0 : seg->init.len;
        if (s + n > len || d + n > mem_size) TRAP(RI_TRAP_MEMORY_OOB);
        if (n) memcpy(mem_base + d, inst->module->bytes + seg->init.offset + s, (size_t)n);
        NEXT(5);
    }
op_DATA_DROP: /* data[x] = empty */
    inst->data_dropped[pc[1]] = true;
    NEXT(2);
op_MEMORY_COPY: /* mem[d .. d+n) = mem[s .. s+n) (overlap-safe) */
    {
        uint64_t d = U32(1), s = U32(2), n = U32(3);
        if (code->metered) CHARGE_N(n);
        if (s + n > mem_size || d + n > mem_size) TRAP(RI_TRAP_MEMORY_OOB);
        if (n) memmove(mem_base + d, mem_base + s, (size_t)n);
        NEXT(4);
    }
op_MEMORY_FILL: /* mem[d .. d+n) = byte b */
    {
        uint64_t d = U32(1), n = U32(3);
        uint8_t value = (uint8_t)U32(2);
        if (code->metered) CHARGE_N(n);
        if (d + n > mem_size) TRAP(RI_TRAP_MEMORY_OOB);
        if (n) memset(mem_base + d, value, (size_t)n);
        NEXT(4);
    }
    /* The general forms (any memory but a 32-bit memory 0; memory_ops.c): addresses,
     * sizes and deltas are i64 for a 64-bit memory. Memory 0's cache is reloaded after a
     * grow, since memory 0 may be the same memory under another index. A bulk length is
     * charged up to 2^32 (no memory is larger; a longer one traps after that charge), so
     * that an i64 length cannot make the chunked charge loop 2^48 times. */
#define GADDR(mem_, i) ((mem_)->type.is64 ? U64(i) : (uint64_t)U32(i))
#define GCHARGE(n) do { if (code->metered) CHARGE_N((n) < ((uint64_t)1 << 32) ? (n) : ((uint64_t)1 << 32)); } while (0)
op_MEM_LOAD_G:
    {
        const ri_memory *gm = inst->memories[pc[4]];
        uint64_t v;
        if (!ri_memop_load(gm, (uint8_t)pc[3], GADDR(gm, 2), pc[5] | (uint64_t)pc[6] << 32, &v))
            TRAP(RI_TRAP_MEMORY_OOB);
        fp[pc[1]].i64 = v;
        NEXT(7);
    }
op_MEM_STORE_G:
    {
        ri_memory *gm = inst->memories[pc[4]];
        if (!ri_memop_store(gm, (uint8_t)pc[3], GADDR(gm, 1), pc[5] | (uint64_t)pc[6] << 32, U64(2)))
            TRAP(RI_TRAP_MEMORY_OOB);
        NEXT(7);
    }
op_V128_LOAD_G: /* dst, addr, vec, offset low, sub | lane << 8, memory, offset high */
    {
        const ri_memory *gm = inst->memories[pc[6]];
        uint32_t sub = pc[5] & 0xFFu, n = ri_simd_access_bytes(sub);
        uint64_t ea;
        if (__builtin_expect(!ri_memop_range(gm, GADDR(gm, 2), pc[4] | (uint64_t)pc[7] << 32, n, &ea), 0))
            TRAP(RI_TRAP_MEMORY_OOB);
        uint8_t vec[16], out[16];
        if (sub >= 0x54 && sub <= 0x57) ri_v128_from_u64s(vec, fp[pc[3]].i64, fp[pc[3] + 1].i64);
        else memset(vec, 0, sizeof vec);
        ri_simd_load(sub, pc[5] >> 8, gm->data + ea, vec, out);
        fp[pc[1]].i64 = ri_v128_u64(out);
        fp[pc[1] + 1].i64 = ri_v128_u64(out + 8);
        NEXT(8);
    }
op_V128_STORE_G: /* addr, vec, offset low, sub | lane << 8, memory, offset high */
    {
        ri_memory *gm = inst->memories[pc[5]];
        uint32_t sub = pc[4] & 0xFFu, n = ri_simd_access_bytes(sub);
        uint64_t ea;
        if (__builtin_expect(!ri_memop_range(gm, GADDR(gm, 1), pc[3] | (uint64_t)pc[6] << 32, n, &ea), 0))
            TRAP(RI_TRAP_MEMORY_OOB);
        uint8_t vec[16];
        ri_v128_from_u64s(vec, fp[pc[2]].i64, fp[pc[2] + 1].i64);
        ri_simd_store(sub, pc[4] >> 8, gm->data + ea, vec);
        NEXT(7);
    }
op_MEMORY_SIZE_G:
    fp[pc[1]].i64 = inst->memories[pc[2]]->pages;
    NEXT(3);
op_MEMORY_GROW_G:
    {
        ri_memory *gm = inst->memories[pc[3]];
        int64_t old = ri_memop_grow(gm, GADDR(gm, 2));
        fp[pc[1]].i64 = gm->type.is64 ? (uint64_t)old : (uint32_t)old;
        LOAD_MEMORY();
        NEXT(4);
    }
op_MEMORY_INIT_G: /* data index, memory, d, s, n */
    {
        ri_memory *gm = inst->memories[pc[2]];
        uint64_t n = U32(5);
        GCHARGE(n);
        const ri_data_segment *seg = &inst->module->datas[pc[1]];
        uint64_t len = inst->data_dropped[pc[1]] ? 0 : seg->init.len;
        if (!ri_memop_init(gm, GADDR(gm, 3), inst->module->bytes + seg->init.offset, len, U32(4), n))
            TRAP(RI_TRAP_MEMORY_OOB);
        NEXT(6);
    }
op_MEMORY_COPY_G: /* dst memory, src memory, d, s, n (i64 if both memories are) */
    {
        ri_memory *gd = inst->memories[pc[1]], *gs = inst->memories[pc[2]];
        uint64_t n = gd->type.is64 && gs->type.is64 ? U64(5) : U32(5);
        GCHARGE(n);
        if (!ri_memop_copy(gd, GADDR(gd, 3), gs, GADDR(gs, 4), n)) TRAP(RI_TRAP_MEMORY_OOB);
        NEXT(6);
    }
op_MEMORY_FILL_G: /* memory, d, value, n */
    {
        ri_memory *gm = inst->memories[pc[1]];
        uint64_t n = GADDR(gm, 4);
        GCHARGE(n);
        if (!ri_memop_fill(gm, GADDR(gm, 2), (uint8_t)U32(3), n)) TRAP(RI_TRAP_MEMORY_OOB);
        NEXT(5);
    }
#undef GADDR
#undef GCHARGE

    /* ---- tables ---- */

op_TABLE_GET: /* d = table[t][a] */
    {
        const ri_table *tab = inst->tables[pc[3]];
        uint32_t i = U32(2);
        if (i >= tab->size) TRAP(RI_TRAP_TABLE_OOB);
        PUT_REF(1, tab->elems[i]);
        NEXT(4);
    }
op_TABLE_SET: /* table[t][a] = b */
    {
        ri_table *tab = inst->tables[pc[1]];
        uint32_t i = U32(2);
        if (i >= tab->size) TRAP(RI_TRAP_TABLE_OOB);
        tab->elems[i] = REF(3);
        NEXT(4);
    }
op_TABLE_SIZE: /* d = size of table t */
    PUT_U32(1, inst->tables[pc[2]]->size);
    NEXT(3);
op_TABLE_GROW: /* d = grow table t by n entries of a (old size, or -1) */
    PUT_U32(1, (uint32_t)ri_table_grow_internal(inst->tables[pc[4]], U32(3), REF(2)));
    NEXT(5);
op_TABLE_FILL: /* table[t][i .. i+n) = a */
    {
        ri_table *tab = inst->tables[pc[1]];
        uint64_t i = U32(2), n = U32(4);
        void *value = REF(3);
        if (code->metered) CHARGE_N(n);
        if (i + n > tab->size) TRAP(RI_TRAP_TABLE_OOB);
        for (uint64_t k = 0; k < n; k++) tab->elems[i + k] = value;
        NEXT(5);
    }
op_TABLE_COPY: /* table[x][d .. d+n) = table[y][s .. s+n) (overlap-safe) */
    {
        ri_table *dst = inst->tables[pc[1]];
        const ri_table *src = inst->tables[pc[2]];
        uint64_t d = U32(3), s = U32(4), n = U32(5);
        if (code->metered) CHARGE_N(n);
        if (s + n > src->size || d + n > dst->size) TRAP(RI_TRAP_TABLE_OOB);
        if (n) memmove(dst->elems + d, src->elems + s, (size_t)n * sizeof *dst->elems);
        NEXT(6);
    }
op_TABLE_INIT: /* table[t][d .. d+n) = elem[x][s .. s+n) */
    {
        uint32_t x = pc[1];
        ri_table *tab = inst->tables[pc[2]];
        uint64_t d = U32(3), s = U32(4), n = U32(5);
        if (code->metered) CHARGE_N(n);
        const ri_elem_segment *seg = &inst->module->elems[x];
        uint64_t len = inst->elem_dropped[x] ? 0 : seg->count;
        if (s + n > len || d + n > tab->size) TRAP(RI_TRAP_TABLE_OOB);
        for (uint64_t k = 0; k < n; k++) tab->elems[d + k] = ri_elem_item(inst, seg, (uint32_t)(s + k));
        NEXT(6);
    }
op_ELEM_DROP: /* elem[x] = empty */
    inst->elem_dropped[pc[1]] = true;
    NEXT(2);

    /* ---- numeric ---- */

    UN32(I32_EQZ, a == 0)                            /* d = a == 0 */
    BIN32(I32_EQ, a == b)                            /* d = a == b */
    BIN32(I32_NE, a != b)                            /* d = a != b */
    BIN32(I32_LT_S, CMP32_LT_S(a, b))                /* d = a < b (signed) */
    BIN32(I32_LT_U, a < b)                           /* d = a < b */
    BIN32(I32_GT_S, CMP32_GT_S(a, b))                /* d = a > b (signed) */
    BIN32(I32_GT_U, a > b)                           /* d = a > b */
    BIN32(I32_LE_S, CMP32_LE_S(a, b))                /* d = a <= b (signed) */
    BIN32(I32_LE_U, a <= b)                          /* d = a <= b */
    BIN32(I32_GE_S, CMP32_GE_S(a, b))                /* d = a >= b (signed) */
    BIN32(I32_GE_U, a >= b)                          /* d = a >= b */
op_I64_EQZ: /* d = a == 0 (i64) */
    PUT_U32(1, U64(2) == 0);
    NEXT(3);
    CMP64(I64_EQ, a == b)                            /* d = a == b (i64) */
    CMP64(I64_NE, a != b)                            /* d = a != b (i64) */
    CMP64(I64_LT_S, CMP64_LT_S(a, b))                /* d = a < b (i64 signed) */
    CMP64(I64_LT_U, a < b)                           /* d = a < b (i64) */
    CMP64(I64_GT_S, CMP64_GT_S(a, b))                /* d = a > b (i64 signed) */
    CMP64(I64_GT_U, a > b)                           /* d = a > b (i64) */
    CMP64(I64_LE_S, CMP64_LE_S(a, b))                /* d = a <= b (i64 signed) */
    CMP64(I64_LE_U, a <= b)                          /* d = a <= b (i64) */
    CMP64(I64_GE_S, CMP64_GE_S(a, b))                /* d = a >= b (i64 signed) */
    CMP64(I64_GE_U, a >= b)                          /* d = a >= b (i64) */
    FCMP32(F32_EQ, a == b)                           /* d = a == b (f32) */
    FCMP32(F32_NE, a != b)                           /* d = a != b (f32) */
    FCMP32(F32_LT, a < b)                            /* d = a < b (f32) */
    FCMP32(F32_GT, a > b)                            /* d = a > b (f32) */
    FCMP32(F32_LE, a <= b)                           /* d = a <= b (f32) */
    FCMP32(F32_GE, a >= b)                           /* d = a >= b (f32) */
    FCMP64(F64_EQ, a == b)                           /* d = a == b (f64) */
    FCMP64(F64_NE, a != b)                           /* d = a != b (f64) */
    FCMP64(F64_LT, a < b)                            /* d = a < b (f64) */
    FCMP64(F64_GT, a > b)                            /* d = a > b (f64) */
    FCMP64(F64_LE, a <= b)                           /* d = a <= b (f64) */
    FCMP64(F64_GE, a >= b)                           /* d = a >= b (f64) */

    UN32(I32_CLZ, ri_i32_clz(a))                     /* d = leading zeros of a */
    UN32(I32_CTZ, ri_i32_ctz(a))                     /* d = trailing zeros of a */
    UN32(I32_POPCNT, ri_i32_popcnt(a))               /* d = set bits of a */
    BIN32(I32_ADD, a + b)                            /* d = a + b */
    BIN32(I32_SUB, a - b)                            /* d = a - b */
    BIN32(I32_MUL, a * b)                            /* d = a * b */
    DIV32(I32_DIV_S, ri_i32_div_s)                   /* d = a / b (signed; traps) */
    DIV32(I32_DIV_U, ri_i32_div_u)                   /* d = a / b (traps) */
    DIV32(I32_REM_S, ri_i32_rem_s)                   /* d = a % b (signed; traps) */
    DIV32(I32_REM_U, ri_i32_rem_u)                   /* d = a % b (traps) */
    BIN32(I32_AND, a & b)                            /* d = a & b */
    BIN32(I32_OR, a | b)                             /* d = a | b */
    BIN32(I32_XOR, a ^ b)                            /* d = a ^ b */
    BIN32(I32_SHL, ri_i32_shl(a, b))                 /* d = a << b */
    BIN32(I32_SHR_S, ri_i32_shr_s(a, b))             /* d = a >> b (arithmetic) */
    BIN32(I32_SHR_U, ri_i32_shr_u(a, b))             /* d = a >> b (logical) */
    BIN32(I32_ROTL, ri_i32_rotl(a, b))               /* d = a rotl b */
    BIN32(I32_ROTR, ri_i32_rotr(a, b))               /* d = a rotr b */
    UN64(I64_CLZ, ri_i64_clz(a))                     /* d = leading zeros of a (i64) */
    UN64(I64_CTZ, ri_i64_ctz(a))                     /* d = trailing zeros of a (i64) */
    UN64(I64_POPCNT, ri_i64_popcnt(a))               /* d = set bits of a (i64) */
    BIN64(I64_ADD, a + b)                            /* d = a + b (i64) */
    BIN64(I64_SUB, a - b)                            /* d = a - b (i64) */
    BIN64(I64_MUL, a * b)                            /* d = a * b (i64) */
    DIV64(I64_DIV_S, ri_i64_div_s)                   /* d = a / b (i64 signed; traps) */
    DIV64(I64_DIV_U, ri_i64_div_u)                   /* d = a / b (i64; traps) */
    DIV64(I64_REM_S, ri_i64_rem_s)                   /* d = a % b (i64 signed; traps) */
    DIV64(I64_REM_U, ri_i64_rem_u)                   /* d = a % b (i64; traps) */
    BIN64(I64_AND, a & b)                            /* d = a & b (i64) */
    BIN64(I64_OR, a | b)                             /* d = a | b (i64) */
    BIN64(I64_XOR, a ^ b)                            /* d = a ^ b (i64) */
    BIN64(I64_SHL, ri_i64_shl(a, b))                 /* d = a << b (i64) */
    BIN64(I64_SHR_S, ri_i64_shr_s(a, b))             /* d = a >> b (i64 arithmetic) */
    BIN64(I64_SHR_U, ri_i64_shr_u(a, b))             /* d = a >> b (i64 logical) */
    BIN64(I64_ROTL, ri_i64_rotl(a, b))               /* d = a rotl b (i64) */
    BIN64(I64_ROTR, ri_i64_rotr(a, b))               /* d = a rotr b (i64) */

    /* i32 pairs: d = a OUTER (x INNER y) */
#define I32OP_ADD(a, b) ((a) + (b))
#define I32OP_SUB(a, b) ((a) - (b))
#define I32OP_MUL(a, b) ((a) * (b))
#define I32OP_AND(a, b) ((a) & (b))
#define I32OP_OR(a, b) ((a) | (b))
#define I32OP_XOR(a, b) ((a) ^ (b))
#define I32OP_SHL(a, b) ri_i32_shl(a, b)
#define I32OP_SHR_S(a, b) ri_i32_shr_s(a, b)
#define I32OP_SHR_U(a, b) ri_i32_shr_u(a, b)
#define I32OP_ROTL(a, b) ri_i32_rotl(a, b)
#define I32OP_ROTR(a, b) ri_i32_rotr(a, b)
#define PAIRIM(label, m, outer, inner) \
    op_##label: { uint32_t t = I32OP_##inner(AU32(m, 3), pc[4]); PUT_U32(1, I32OP_##outer(AU32(m, 2), t)); NEXT(5); }
#define PAIR(outer, inner) \
    op_I32_##outer##_##inner: { uint32_t t = I32OP_##inner(U32(3), U32(4)); PUT_U32(1, I32OP_##outer(U32(2), t)); NEXT(5); } \
    PAIRIM(I32_##outer##_##inner##_I, 0, outer, inner)
    RI_CODE_PAIR_OPS(PAIR)
#undef PAIR
    /* i32 immediate pairs: d = (x INNER k1) OUTER k2 */
#define IPAIR(outer, inner) \
    op_I32_##outer##I_##inner##I: { uint32_t t = I32OP_##inner(U32(2), pc[3]); PUT_U32(1, I32OP_##outer(t, pc[4])); NEXT(5); }
    RI_CODE_IPAIR_OPS(IPAIR)
#undef IPAIR

    /* immediate second operand: d = a op imm */
    BIN32I(I32_ADD, a + b)
    BIN32I(I32_SUB, a - b)
    BIN32I(I32_MUL, a * b)
    BIN32I(I32_AND, a & b)
    BIN32I(I32_OR, a | b)
    BIN32I(I32_XOR, a ^ b)
    BIN32I(I32_SHL, ri_i32_shl(a, b))
    BIN32I(I32_SHR_S, ri_i32_shr_s(a, b))
    BIN32I(I32_SHR_U, ri_i32_shr_u(a, b))
    BIN32I(I32_ROTL, ri_i32_rotl(a, b))
    BIN32I(I32_ROTR, ri_i32_rotr(a, b))
    BIN32I(I32_EQ, a == b)
    BIN32I(I32_NE, a != b)
    BIN32I(I32_LT_S, CMP32_LT_S(a, b))
    BIN32I(I32_LT_U, a < b)
    BIN32I(I32_GT_S, CMP32_GT_S(a, b))
    BIN32I(I32_GT_U, a > b)
    BIN32I(I32_LE_S, CMP32_LE_S(a, b))
    BIN32I(I32_LE_U, a <= b)
    BIN32I(I32_GE_S, CMP32_GE_S(a, b))
    BIN32I(I32_GE_U, a >= b)
    BIN64I(I64_ADD, a + b)
    BIN64I(I64_SUB, a - b)
    BIN64I(I64_MUL, a * b)
    BIN64I(I64_AND, a & b)
    BIN64I(I64_OR, a | b)
    BIN64I(I64_XOR, a ^ b)
    BIN64I(I64_SHL, ri_i64_shl(a, b))
    BIN64I(I64_SHR_S, ri_i64_shr_s(a, b))
    BIN64I(I64_SHR_U, ri_i64_shr_u(a, b))
    BIN64I(I64_ROTL, ri_i64_rotl(a, b))
    BIN64I(I64_ROTR, ri_i64_rotr(a, b))
    CMP64I(I64_EQ, a == b)
    CMP64I(I64_NE, a != b)
    CMP64I(I64_LT_S, CMP64_LT_S(a, b))
    CMP64I(I64_LT_U, a < b)
    CMP64I(I64_GT_S, CMP64_GT_S(a, b))
    CMP64I(I64_GT_U, a > b)
    CMP64I(I64_LE_S, CMP64_LE_S(a, b))
    CMP64I(I64_LE_U, a <= b)
    CMP64I(I64_GE_S, CMP64_GE_S(a, b))
    CMP64I(I64_GE_U, a >= b)

    FUN32_RAW(F32_ABS, ri_f32_abs(a))                /* d = |a| (sign bit only) */
    FUN32_RAW(F32_NEG, ri_f32_neg(a))                /* d = -a (sign bit only) */
    FUN32(F32_CEIL, ri_f32_ceil(a))                  /* d = ceil(a) */
    FUN32(F32_FLOOR, ri_f32_floor(a))                /* d = floor(a) */
    FUN32(F32_TRUNC, ri_f32_trunc(a))                /* d = trunc(a) */
    FUN32(F32_NEAREST, ri_f32_nearest(a))            /* d = round half to even(a) */
    FUN32(F32_SQRT, ri_f32_sqrt(a))                  /* d = sqrt(a) */
    FBIN32(F32_ADD, a + b)                           /* d = a + b (f32) */
    FBIN32(F32_SUB, a - b)                           /* d = a - b (f32) */
    FBIN32(F32_MUL, a * b)                           /* d = a * b (f32) */
    FBIN32(F32_DIV, a / b)                           /* d = a / b (f32) */
    FBIN32(F32_MIN, ri_f32_min(a, b))                /* d = min(a, b) (f32) */
    FBIN32(F32_MAX, ri_f32_max(a, b))                /* d = max(a, b) (f32) */
    FBIN32_RAW(F32_COPYSIGN, ri_f32_copysign(a, b))  /* d = |a| with the sign of b */
    FUN64_RAW(F64_ABS, ri_f64_abs(a))                /* d = |a| (sign bit only) */
    FUN64_RAW(F64_NEG, ri_f64_neg(a))                /* d = -a (sign bit only) */
    FUN64(F64_CEIL, ri_f64_ceil(a))                  /* d = ceil(a) */
    FUN64(F64_FLOOR, ri_f64_floor(a))                /* d = floor(a) */
    FUN64(F64_TRUNC, ri_f64_trunc(a))                /* d = trunc(a) */
    FUN64(F64_NEAREST, ri_f64_nearest(a))            /* d = round half to even(a) */
    FUN64(F64_SQRT, ri_f64_sqrt(a))                  /* d = sqrt(a) */
    FBIN64(F64_ADD, a + b)                           /* d = a + b (f64) */
    FBIN64(F64_SUB, a - b)                           /* d = a - b (f64) */
    FBIN64(F64_MUL, a * b)                           /* d = a * b (f64) */
    FBIN64(F64_DIV, a / b)                           /* d = a / b (f64) */
    FBIN64(F64_MIN, ri_f64_min(a, b))                /* d = min(a, b) (f64) */
    FBIN64(F64_MAX, ri_f64_max(a, b))                /* d = max(a, b) (f64) */
    FBIN64_RAW(F64_COPYSIGN, ri_f64_copysign(a, b))  /* d = |a| with the sign of b */

op_I32_WRAP_I64: /* d = low 32 bits of a */
    PUT_U32(1, (uint32_t)U64(2));
    NEXT(3);
    TRUNC(I32_TRUNC_F32_S, uint32_t, F32, PUT_U32, ri_i32_trunc_f32_s) /* d = (i32)a, traps */
    TRUNC(I32_TRUNC_F32_U, uint32_t, F32, PUT_U32, ri_i32_trunc_f32_u) /* d = (u32)a, traps */
    TRUNC(I32_TRUNC_F64_S, uint32_t, F64, PUT_U32, ri_i32_trunc_f64_s) /* d = (i32)a, traps */
    TRUNC(I32_TRUNC_F64_U, uint32_t, F64, PUT_U32, ri_i32_trunc_f64_u) /* d = (u32)a, traps */
op_I64_EXTEND_I32_S: /* d = sign-extended a */
    PUT_U64(1, ri_i64_extend32_s(U32(2)));
    NEXT(3);
op_I64_EXTEND_I32_U: /* d = zero-extended a */
    PUT_U64(1, U32(2));
    NEXT(3);
    TRUNC(I64_TRUNC_F32_S, uint64_t, F32, PUT_U64, ri_i64_trunc_f32_s) /* d = (i64)a, traps */
    TRUNC(I64_TRUNC_F32_U, uint64_t, F32, PUT_U64, ri_i64_trunc_f32_u) /* d = (u64)a, traps */
    TRUNC(I64_TRUNC_F64_S, uint64_t, F64, PUT_U64, ri_i64_trunc_f64_s) /* d = (i64)a, traps */
    TRUNC(I64_TRUNC_F64_U, uint64_t, F64, PUT_U64, ri_i64_trunc_f64_u) /* d = (u64)a, traps */
    CONV(F32_CONVERT_I32_S, U32, PUT_F32, ri_f32_convert_i32_s)        /* d = (f32)(i32)a */
    CONV(F32_CONVERT_I32_U, U32, PUT_F32, ri_f32_convert_i32_u)        /* d = (f32)(u32)a */
    CONV(F32_CONVERT_I64_S, U64, PUT_F32, ri_f32_convert_i64_s)        /* d = (f32)(i64)a */
    CONV(F32_CONVERT_I64_U, U64, PUT_F32, ri_f32_convert_i64_u)        /* d = (f32)(u64)a */
op_F32_DEMOTE_F64: /* d = (f32)a */
    {
        float r = ri_f32_demote_f64(F64(2));
        PUT_F32(1, CANON32(r));
        NEXT(3);
    }
    CONV(F64_CONVERT_I32_S, U32, PUT_F64, ri_f64_convert_i32_s)        /* d = (f64)(i32)a */
    CONV(F64_CONVERT_I32_U, U32, PUT_F64, ri_f64_convert_i32_u)        /* d = (f64)(u32)a */
    CONV(F64_CONVERT_I64_S, U64, PUT_F64, ri_f64_convert_i64_s)        /* d = (f64)(i64)a */
    CONV(F64_CONVERT_I64_U, U64, PUT_F64, ri_f64_convert_i64_u)        /* d = (f64)(u64)a */
op_F64_PROMOTE_F32: /* d = (f64)a */
    {
        double r = ri_f64_promote_f32(F32(2));
        PUT_F64(1, CANON64(r));
        NEXT(3);
    }
op_I32_REINTERPRET_F32: /* d = bits of a */
op_I64_REINTERPRET_F64:
op_F32_REINTERPRET_I32:
op_F64_REINTERPRET_I64:
    SLOT(1) = SLOT(2);
    NEXT(3);
    UN32(I32_EXTEND8_S, ri_i32_extend8_s(a))         /* d = sext of the low 8 bits */
    UN32(I32_EXTEND16_S, ri_i32_extend16_s(a))       /* d = sext of the low 16 bits */
    UN64(I64_EXTEND8_S, ri_i64_extend8_s(a))         /* d = sext of the low 8 bits (i64) */
    UN64(I64_EXTEND16_S, ri_i64_extend16_s(a))       /* d = sext of the low 16 bits (i64) */
    UN64(I64_EXTEND32_S, ri_i64_extend32_s(a))       /* d = sext of the low 32 bits (i64) */
    CONV(I32_TRUNC_SAT_F32_S, F32, PUT_U32, ri_i32_trunc_sat_f32_s)    /* d = (i32)a, saturating */
    CONV(I32_TRUNC_SAT_F32_U, F32, PUT_U32, ri_i32_trunc_sat_f32_u)    /* d = (u32)a, saturating */
    CONV(I32_TRUNC_SAT_F64_S, F64, PUT_U32, ri_i32_trunc_sat_f64_s)    /* d = (i32)a, saturating */
    CONV(I32_TRUNC_SAT_F64_U, F64, PUT_U32, ri_i32_trunc_sat_f64_u)    /* d = (u32)a, saturating */
    CONV(I64_TRUNC_SAT_F32_S, F32, PUT_U64, ri_i64_trunc_sat_f32_s)    /* d = (i64)a, saturating */
    CONV(I64_TRUNC_SAT_F32_U, F32, PUT_U64, ri_i64_trunc_sat_f32_u)    /* d = (u64)a, saturating */
    CONV(I64_TRUNC_SAT_F64_S, F64, PUT_U64, ri_i64_trunc_sat_f64_s)    /* d = (i64)a, saturating */
    CONV(I64_TRUNC_SAT_F64_U, F64, PUT_U64, ri_i64_trunc_sat_f64_u)    /* d = (u64)a, saturating */

    /* ---- accumulator variants (code.h, RI_CODE_ACC_OPS): operands in the masked
     * positions come from acc / facc, the rest as in the base handler ---- */
#define I64OP_ADD(a, b) ((a) + (b))
#define I64OP_SUB(a, b) ((a) - (b))
#define I64OP_MUL(a, b) ((a) * (b))
#define I64OP_AND(a, b) ((a) & (b))
#define I64OP_OR(a, b) ((a) | (b))
#define I64OP_XOR(a, b) ((a) ^ (b))
#define I64OP_SHL(a, b) ri_i64_shl(a, b)
#define I64OP_SHR_U(a, b) ri_i64_shr_u(a, b)
#define I64OP_ROTL(a, b) ri_i64_rotl(a, b)
#define ACC_BINI32(op) BIN32M(I32_##op##_A2, 0x4, I32OP_##op(a, b)) BIN32M(I32_##op##_A3, 0x8, I32OP_##op(a, b)) \
                       BIN32IM(I32_##op##_I_A2, 0x4, I32OP_##op(a, b))
#define ACC_BINI64(op) BIN64M(I64_##op##_A2, 0x4, I64OP_##op(a, b)) BIN64M(I64_##op##_A3, 0x8, I64OP_##op(a, b)) \
                       BIN64IM(I64_##op##_I_A2, 0x4, I64OP_##op(a, b))
#define F64OP_ADD(a, b) ((a) + (b))
#define F64OP_SUB(a, b) ((a) - (b))
#define F64OP_MUL(a, b) ((a) * (b))
#define F64OP_DIV(a, b) ((a) / (b))
#define ACC_FBIN64(op) FBIN64M(F64_##op##_A2, 0x4, F64OP_##op(a, b)) FBIN64M(F64_##op##_A3, 0x8, F64OP_##op(a, b))
#define ACC_FBIN32(op) FBIN32M(F32_##op##_A2, 0x4, F64OP_##op(a, b)) FBIN32M(F32_##op##_A3, 0x8, F64OP_##op(a, b))
    ACC_BINI32(ADD) ACC_BINI32(SUB) ACC_BINI32(MUL) ACC_BINI32(AND) ACC_BINI32(OR) ACC_BINI32(XOR)
    ACC_BINI32(SHL) ACC_BINI32(SHR_S) ACC_BINI32(SHR_U) ACC_BINI32(ROTL) ACC_BINI32(ROTR)
    ACC_BINI64(ADD) ACC_BINI64(SUB) ACC_BINI64(MUL) ACC_BINI64(AND) ACC_BINI64(OR) ACC_BINI64(XOR)
    ACC_BINI64(SHL) ACC_BINI64(SHR_U) ACC_BINI64(ROTL)
    ACC_FBIN64(ADD) ACC_FBIN64(SUB) ACC_FBIN64(MUL) ACC_FBIN64(DIV)
    FBIN64M(F64_ADD_A23, 0xC, a + b)
    FBIN64M(F64_MUL_A23, 0xC, a * b)
    FUN64M(F64_SQRT_A2, 0x4, ri_f64_sqrt(a))
    ACC_FBIN32(ADD) ACC_FBIN32(SUB) ACC_FBIN32(MUL) ACC_FBIN32(DIV)
    FBIN32M(F32_ADD_A23, 0xC, a + b)
    FBIN32M(F32_MUL_A23, 0xC, a * b)
    LOADM(I32_LOAD_A2, 0x4, uint32_t, 4, LE32, PUT_U32, ID)
    LOADM(I32_LOAD8_U_A2, 0x4, uint8_t, 1, NOSWAP, PUT_U32, ID)
    LOADM(I32_LOAD8_S_A2, 0x4, uint8_t, 1, NOSWAP, PUT_U32, ri_i32_extend8_s)
    LOADM(I32_LOAD16_U_A2, 0x4, uint16_t, 2, LE16, PUT_U32, ID)
    LOADM(I32_LOAD16_S_A2, 0x4, uint16_t, 2, LE16, PUT_U32, ri_i32_extend16_s)
    LOADM(I64_LOAD_A2, 0x4, uint64_t, 8, LE64, PUT_U64, ID)
    LOADM(F32_LOAD_A2, 0x4, uint32_t, 4, LE32, PUT_U32, ID)
    LOADM(F64_LOAD_A2, 0x4, uint64_t, 8, LE64, PUT_U64, ID)
    STOREV(I32_STORE_A1, 0x2, uint32_t, 4, LE32, U32(2))
    STOREV(I32_STORE_A2, 0, uint32_t, 4, LE32, (uint32_t)acc)
    STOREV(I32_STORE8_A1, 0x2, uint8_t, 1, NOSWAP, U32(2))
    STOREV(I32_STORE8_A2, 0, uint8_t, 1, NOSWAP, (uint32_t)acc)
    STOREV(I32_STORE16_A1, 0x2, uint16_t, 2, LE16, U32(2))
    STOREV(I32_STORE16_A2, 0, uint16_t, 2, LE16, (uint32_t)acc)
    STOREV(I64_STORE_A1, 0x2, uint64_t, 8, LE64, U64(2))
    STOREV(I64_STORE_A2, 0, uint64_t, 8, LE64, acc)
    STOREV(F32_STORE_A1, 0x2, uint32_t, 4, LE32, U32(2))
    STOREV(F32_STORE_A2, 0, uint32_t, 4, LE32, (uint32_t)acc)
    STOREV(F64_STORE_A1, 0x2, uint64_t, 8, LE64, U64(2))
    STOREV(F64_STORE_A2, 0, uint64_t, 8, LE64, ri_f64_bits(facc))
    ADD_LX(I32_ADD_LX_A2, 0x4, U32(4))
    ADD_LX(I32_ADD_LXI_A2, 0x4, pc[4])
    ADD_LX8U(I32_ADD_LX8U_A2, 0x4, U32(4))
    ADD_LX8U(I32_ADD_LXI8U_A2, 0x4, pc[4])
    LOAD_SX(I32_LOAD_SX_A2, 0x4)
    LOAD_SX(I32_LOAD_SX_A3, 0x8)
    LOAD_SXI(I32_LOAD_SXI_A2, 0x4)
    LOAD_MSXI(I32_LOAD_MSXI_A2, 0x4)
    PAIRIM(I32_ADD_SHL_I_A2, 0x4, ADD, SHL)
    PAIRIM(I32_ADD_SHL_I_A3, 0x8, ADD, SHL)
    PAIRIM(I32_XOR_SHR_U_I_A2, 0x4, XOR, SHR_U)
    PAIRIM(I32_XOR_SHR_U_I_A3, 0x8, XOR, SHR_U)

    /* ---- leaving the loop ---- */

out_of_gas_undo: /* a charge at pc (GAS, LOOP, ENTRY: cost in word 1) was taken from gas: give it back */
    gas += (int64_t)pc[1];
out_of_gas:
    /* pc is at a charge (GAS, LOOP, ENTRY, a bulk instruction) that `gas` cannot pay.
     * With gas in reserve: poll the interrupt flag, move a chunk over and run the
     * charge again. Else execution stops there (a later change may suspend instead:
     * every frame is at a stop point), with the gas left untouched. */
    if (gas_reserve == 0) {
        trap_kind = RI_TRAP_OUT_OF_GAS;
        goto trap;
    }
    POLL_INTERRUPT();
    {
        uint64_t take = gas_reserve < RI_GAS_CHUNK ? gas_reserve : RI_GAS_CHUNK;
        gas += (int64_t)take;
        gas_reserve -= take;
    }
    DISPATCH();
trap:
    /* Where it stopped, for a suspension instead (out of gas, interrupted: pc is a stop
     * point; the caller decides, out of this function, so that the loop keeps its registers). */
    exec->susp.pc = pc;
    exec->susp.code = code;
    exec->susp.instance = inst;
    exec->susp.fp = (size_t)(fp - exec->stack);
    exec->susp.trap = trap_kind;
    store->gas = (uint64_t)gas + gas_reserve;
    exec->trap_has_location = true;
    exec->trap_func_index = code->func_index;
    {
        const ri_code_point *point = ri_code_find_point(code, (uint32_t)(pc - code->words));
        exec->trap_wasm_offset = point ? point->wasm_offset : 0;
    }
    if (trap_kind != RI_TRAP_HOST) ri_error_trap(err, trap_kind); /* host traps carry their own message */
    /* call_indirect's element traps name the element, as the reference interpreter does
     * ("uninitialized element 2"); the spec text stays the message's prefix. */
    if (err && (trap_kind == RI_TRAP_UNDEFINED_ELEMENT || trap_kind == RI_TRAP_UNINITIALIZED_ELEMENT))
        snprintf(err->message, sizeof err->message, "%s %u", ri_trap_message(trap_kind), trap_element);
    return RI_ERR_TRAP;
finish:
    store->gas = (uint64_t)gas + gas_reserve;
    return RI_OK;
suspend:
    /* A host function yielded: pc is the GAS after its call; every other frame waits in a call. */
    store->gas = (uint64_t)gas + gas_reserve;
    exec->susp.reason = RI_SUSPENDED_YIELD;
    exec->susp.pc = pc;
    exec->susp.code = code;
    exec->susp.instance = inst;
    exec->susp.fp = (size_t)(fp - exec->stack);
    return RI_ERR_SUSPENDED;
}

const int32_t *ri_interp_dispatch_table(void) {
    const int32_t *table = NULL;
    (void)run(NULL, NULL, NULL, NULL, 0, NULL, &table);
    return table;
}

const uint32_t *ri_interp_exit_code(void) {
    return (const uint32_t *)(ri_interp_dispatch_table() + RI_CODE_OP_COUNT);
}

/* ---- entry from C ----------------------------------------------------------------------- */

static ri_errcode exec_trap(ri_error *err, ri_trap trap) {
    ri_error_trap(err, trap);
    return RI_ERR_TRAP;
}

ri_errcode ri_exec_call(ri_store *store, ri_func *func, ri_slot *args_results, ri_error *err) {
    ri_exec *exec = exec_get(store);
    if (!exec) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory for the execution stack");
        return RI_ERR_NOMEM;
    }
    if (exec->nesting == 0 && exec->susp.active) {
        ri_error_set(err, RI_ERR_ARGUMENT, "a suspended call is pending on this store: resume or abandon it first");
        return RI_ERR_ARGUMENT;
    }
    if (exec->nesting == 0) {
        exec->trap_has_location = false;
        ri_exn_free_all(exec); /* the last call's exceptions (its exnref results were valid until now) */
    }
    if (exec->nesting >= RI_EXEC_MAX_NESTING) return exec_trap(err, RI_TRAP_STACK_EXHAUSTED);
    if (func->host) {
        exec->nesting++;
        ri_errcode rc = call_host(store, exec, func, NULL, args_results, 0, err);
        exec->nesting--;
        return rc;
    }
    const ri_code *code = func->code;
    if (!code || !func->instance) {
        ri_error_set(err, RI_ERR_ARGUMENT, "function %u has no code", func->func_index);
        return RI_ERR_ARGUMENT;
    }
    uint32_t base = exec->stack_top;
    if (!ensure_stack(store, exec, (uint64_t)base + code->frame_slots) || !ensure_frame(store, exec))
        return exec_trap(err, RI_TRAP_STACK_EXHAUSTED);
    size_t saved_frames = (size_t)(exec->frame_top - exec->frames);
    if (code->nparams) memcpy(exec->stack + base, args_results, (size_t)code->nparams * sizeof(ri_slot));
    /* The entry marker: returning to it leaves the interpreter. */
    ri_frame *marker = exec->frame_top++;
    marker->ret_pc = ri_interp_exit_code();
    marker->code = NULL;
    marker->inst_bits = (uintptr_t)func->instance; /* (returning to it switches nothing) */
    marker->fp.ptr = exec->stack + base;
    exec->nesting++;
    ri_errcode rc = run(store, exec, code, func->instance, base, err, NULL);
    exec->nesting--;
    if (rc == RI_ERR_TRAP && exec->nesting == 0 && ri_exec_suspend_wanted(exec, exec->susp.trap)) rc = RI_ERR_SUSPENDED;
    if (rc == RI_ERR_SUSPENDED) { /* the frames stay, from the marker up */
        exec->susp.active = true;
        exec->susp.func = func;
        exec->susp.base = base;
        exec->susp.marker = saved_frames;
        ri_error_set(err, RI_ERR_SUSPENDED, "suspended (%s)", ri_suspend_reason_name(exec->susp.reason));
        return rc;
    }
    if (rc == RI_ERR_TRAP && exec->nesting > 0 && err &&
        ((err->trap == RI_TRAP_OUT_OF_GAS && (exec->suspend_mask & RI_SUSPEND_ON_GAS)) ||
         (err->trap == RI_TRAP_INTERRUPTED && (exec->suspend_mask & RI_SUSPEND_ON_INTERRUPT)))) {
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, " (not suspended: a call from a host function into "
                                                            "WebAssembly cannot be suspended)");
    }
    if (rc == RI_OK && code->nresults)
        memcpy(args_results, exec->stack + base, (size_t)code->nresults * sizeof(ri_slot));
    exec->frame_top = exec->frames + saved_frames;
    exec->stack_top = base;
    return rc;
}

/* ---- suspended calls (suspend.c has the rest) ---------------------------------------- */

ri_errcode ri_exec_resume(ri_store *store, ri_slot *results, ri_error *err) {
    ri_exec *exec = store->exec;
    if (!exec || !exec->susp.active) {
        ri_error_set(err, RI_ERR_ARGUMENT, "no suspended call to resume");
        return RI_ERR_ARGUMENT;
    }
    if (exec->nesting) {
        ri_error_set(err, RI_ERR_ARGUMENT, "cannot resume a suspended call from inside a running call");
        return RI_ERR_ARGUMENT;
    }
    exec->susp.active = false;
    exec->trap_has_location = false;
    exec->resume_pc = exec->susp.pc;
    exec->nesting++;
    ri_errcode rc = run(store, exec, exec->susp.code, exec->susp.instance, (uint32_t)exec->susp.fp, err, NULL);
    exec->nesting--;
    exec->resume_pc = NULL;
    if (rc == RI_ERR_TRAP && ri_exec_suspend_wanted(exec, exec->susp.trap)) rc = RI_ERR_SUSPENDED;
    if (rc == RI_ERR_SUSPENDED) {
        exec->susp.active = true;
        ri_error_set(err, RI_ERR_SUSPENDED, "suspended (%s)", ri_suspend_reason_name(exec->susp.reason));
        return rc;
    }
    const ri_code *code = exec->susp.func->code;
    if (rc == RI_OK && code->nresults)
        memcpy(results, exec->stack + exec->susp.base, (size_t)code->nresults * sizeof(ri_slot));
    exec->frame_top = exec->frames + exec->susp.marker;
    exec->stack_top = exec->susp.base;
    return rc;
}

void ri_exec_abandon(ri_exec *exec) {
    if (!exec || !exec->susp.active) return;
    exec->susp.active = false;
    exec->frame_top = exec->frames + exec->susp.marker;
    exec->stack_top = exec->susp.base;
    ri_exn_free_all(exec);
}
