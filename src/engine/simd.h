/*
 * Fixed-width SIMD (v128): the 0xFD instructions as data (their shapes, for the decoder,
 * the validator and the compiler) and their lane semantics (simd.c), in portable C11 with
 * WebAssembly's little-endian lane order on every host.
 *
 * A v128 value lives in two consecutive 8-byte slots: the low slot holds bytes 0..7 (lane
 * 0 first) as a little-endian u64, the high slot bytes 8..15, so that the slots' integer
 * values are the same on every CPU (snapshots, v128.const as two 64-bit constants).
 */
#ifndef RI_ENGINE_SIMD_H
#define RI_ENGINE_SIMD_H

#include <stdbool.h>
#include <stdint.h>

#include "opcodes.h"

/* ri_instr.op of a 0xFD-prefixed instruction (sub-opcodes are below 0x100). */
#define RI_FD(sub) (0xFD00u | (sub))
#define RI_IS_FD(op) (((op) & 0xFF00u) == 0xFD00u)

typedef enum ri_simd_shape {
    RI_SIMD_NONE = 0,   /* not an instruction */
    RI_SIMD_LOAD,       /* memarg: [i32] -> [v128] */
    RI_SIMD_LOAD_LANE,  /* memarg, lane: [i32 v128] -> [v128] */
    RI_SIMD_STORE,      /* memarg: [i32 v128] -> [] */
    RI_SIMD_STORE_LANE, /* memarg, lane: [i32 v128] -> [] */
    RI_SIMD_CONST,      /* 16 bytes: [] -> [v128] */
    RI_SIMD_SHUFFLE,    /* 16 lane indices < 32: [v128 v128] -> [v128] */
    RI_SIMD_UN,         /* [v128] -> [v128] */
    RI_SIMD_BIN,        /* [v128 v128] -> [v128] */
    RI_SIMD_TERN,       /* [v128 v128 v128] -> [v128] (bitselect) */
    RI_SIMD_SHIFT,      /* [v128 i32] -> [v128] */
    RI_SIMD_TEST,       /* [v128] -> [i32] (any_true, all_true, bitmask) */
    RI_SIMD_SPLAT,      /* [t] -> [v128] */
    RI_SIMD_EXTRACT,    /* lane: [v128] -> [t] */
    RI_SIMD_REPLACE,    /* lane: [v128 t] -> [v128] */
} ri_simd_shape;

typedef struct ri_simd_info {
    uint8_t shape;  /* ri_simd_shape */
    uint8_t type;   /* SPLAT, EXTRACT, REPLACE: the scalar type */
    uint8_t n;      /* loads, stores: log2 of the access (natural alignment); lane ops: the lane count */
} ri_simd_info;

/* The shape of 0xFD sub-opcode sub (RI_SIMD_NONE: not an instruction). */
ri_simd_info ri_simd_info_of(uint32_t sub);

/* Runs a non-memory SIMD instruction: out = op(a, b, c) as 16 bytes in WebAssembly order
 * (a scalar operand or result: its slot's bits as a u64 in the first 8 bytes,
 * little-endian). lane: the lane immediate. imm: the shuffle's 16 lane indices. canon:
 * NaN results are made canonical. out may alias the inputs. */
void ri_simd_apply(uint32_t sub, uint32_t lane, const uint8_t *imm, uint8_t out[16], const uint8_t a[16],
                   const uint8_t b[16], const uint8_t c[16], bool canon);

/* A load of the SIMD loads' shape from the `bytes` read at the effective address into
 * out (vec: the vector operand of a load_lane). The number of bytes an access reads or
 * writes: ri_simd_access_bytes. */
void ri_simd_load(uint32_t sub, uint32_t lane, const uint8_t *mem, const uint8_t vec[16], uint8_t out[16]);
/* A store (lane or whole) of vec to mem. */
void ri_simd_store(uint32_t sub, uint32_t lane, uint8_t *mem, const uint8_t vec[16]);
uint32_t ri_simd_access_bytes(uint32_t sub);

/* Runs a V128_OP (code_simd.h) on the frame fp: pc at the instruction. */
union ri_slot;
void ri_simd_run_op(union ri_slot *fp, const uint32_t *pc, bool canon);

/* Slot pair <-> 16 bytes in WebAssembly order. */
static inline void ri_v128_from_u64s(uint8_t out[16], uint64_t lo, uint64_t hi) {
    for (int i = 0; i < 8; i++) { out[i] = (uint8_t)(lo >> (8 * i)); out[8 + i] = (uint8_t)(hi >> (8 * i)); }
}
static inline uint64_t ri_v128_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

#endif
