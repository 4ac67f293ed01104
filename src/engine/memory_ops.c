/*
 * The general memory instructions of the interpreter: loads, stores and bulk operations
 * on any memory but a 32-bit memory 0 (whose instructions are the fast ones in interp.c,
 * with their cached base and bounds). Out of line, so that the interpreter's hot loop is
 * compiled as before. Every bounds check is exact in 64 bits: an address plus an offset
 * (both up to 2^64 - 1 for a 64-bit memory) that passes 2^64 is out of bounds, never
 * wrapped.
 */
#include <string.h>

#include "opcodes.h"
#include "runtime.h"

/* Whether [at, at + n) lies inside the memory (no overflow for any at, n). */
static bool in_bounds(const ri_memory *mem, uint64_t at, uint64_t n) {
    return at <= mem->size && n <= mem->size - at;
}

bool ri_memop_range(const ri_memory *mem, uint64_t addr, uint64_t offset, uint64_t n, uint64_t *ea) {
    *ea = addr + offset;
    return *ea >= addr && in_bounds(mem, *ea, n);
}

/* Little-endian n bytes at p (n <= 8), and back. */
static uint64_t get_le(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;) v = v << 8 | p[i];
    return v;
}

static void put_le(uint8_t *p, unsigned n, uint64_t v) {
    for (unsigned i = 0; i < n; i++, v >>= 8) p[i] = (uint8_t)v;
}

/* The access size, and whether the loaded value is sign-extended, and into 64 bits. */
static void access_of(uint8_t opcode, unsigned *n, bool *sign, bool *wide) {
    *sign = false;
    *wide = false;
    switch (opcode) {
#define RI_X_ACCESS(name, byte, t, size, st) \
    case byte: *n = size; *wide = RI_##t == RI_I64 || RI_##t == RI_F64; break;
        RI_MEMORY_OPS(RI_X_ACCESS)
#undef RI_X_ACCESS
    default: *n = 0; return;
    }
    switch (opcode) {
    case RI_OP_I32_LOAD8_S: case RI_OP_I32_LOAD16_S: case RI_OP_I64_LOAD8_S: case RI_OP_I64_LOAD16_S:
    case RI_OP_I64_LOAD32_S:
        *sign = true;
        break;
    default: break;
    }
}

bool ri_memop_load(const ri_memory *mem, uint8_t opcode, uint64_t addr, uint64_t offset, uint64_t *out) {
    unsigned n;
    bool sign, wide;
    access_of(opcode, &n, &sign, &wide);
    uint64_t ea;
    if (n == 0 || !ri_memop_range(mem, addr, offset, n, &ea)) return false;
    uint64_t v = get_le(mem->data + ea, n);
    if (sign && n < 8) {
        uint64_t bit = (uint64_t)1 << (8 * n - 1);
        v = (v ^ bit) - bit; /* sign extension without a signed shift */
    }
    *out = wide ? v : (uint32_t)v;
    return true;
}

bool ri_memop_store(ri_memory *mem, uint8_t opcode, uint64_t addr, uint64_t offset, uint64_t value) {
    unsigned n;
    bool sign, wide;
    access_of(opcode, &n, &sign, &wide);
    uint64_t ea;
    if (n == 0 || !ri_memop_range(mem, addr, offset, n, &ea)) return false;
    put_le(mem->data + ea, n, value);
    return true;
}

bool ri_memop_fill(ri_memory *mem, uint64_t d, uint8_t value, uint64_t n) {
    if (!in_bounds(mem, d, n)) return false;
    if (n) memset(mem->data + d, value, (size_t)n);
    return true;
}

bool ri_memop_copy(ri_memory *dst, uint64_t d, const ri_memory *src, uint64_t s, uint64_t n) {
    if (!in_bounds(dst, d, n) || !in_bounds(src, s, n)) return false;
    if (n) memmove(dst->data + d, src->data + s, (size_t)n);
    return true;
}

bool ri_memop_init(ri_memory *mem, uint64_t d, const uint8_t *bytes, uint64_t len, uint64_t s, uint64_t n) {
    if (s > len || n > len - s || !in_bounds(mem, d, n)) return false;
    if (n) memcpy(mem->data + d, bytes + s, (size_t)n);
    return true;
}

int64_t ri_memop_grow(ri_memory *mem, uint64_t delta) {
    if (delta > UINT32_MAX) return -1;
    return ri_memory_grow_internal(mem, (uint32_t)delta);
}
