/*
 * One instruction decoded from the binary: its opcode and immediates. The one place
 * that knows the binary encoding of instructions; the decoder (constant expressions),
 * the validator and the compiler all read instructions through ri_read_instr.
 */
#ifndef RI_ENGINE_INSTR_H
#define RI_ENGINE_INSTR_H

#include "opcodes.h"
#include "reader.h"
#include "util/le.h"

/* ri_instr.op: a single-byte opcode as is, a 0xFC-prefixed one as RI_FC(sub), a 0xFD one
 * (SIMD) as RI_FD(sub) (simd.h). */
#define RI_FC(sub) (0xFC00u | (sub))

typedef enum ri_blocktype_kind {
    RI_BLOCK_EMPTY,    /* [] -> [] */
    RI_BLOCK_VALTYPE,  /* [] -> [valtype] */
    RI_BLOCK_TYPEIDX,  /* a function type of the module (multi-value) */
} ri_blocktype_kind;

typedef struct ri_blocktype {
    ri_blocktype_kind kind;
    uint8_t valtype;
    uint32_t type_index;
} ri_blocktype;

typedef struct ri_memarg {
    uint32_t align;   /* log2 of the alignment (the memory index flag, bit 6, cleared) */
    uint32_t memidx;  /* memory index (multiple memories: present when bit 6 was set) */
    uint64_t offset;  /* read as a u64 (memory64); offset32_error says if it is a u32 */
    const char *offset32_error; /* NULL if the offset's encoding is a valid u32 LEB128, else
                                   the error a 32-bit memory's offset has */
} ri_memarg;

typedef struct ri_instr {
    uint32_t offset;  /* byte offset of the opcode in the module */
    uint16_t op;
    union {
        ri_blocktype block;                 /* block, loop, if */
        uint32_t index;                     /* br, br_if, call, local.*, global.*, table.get/set,
                                               ref.func, data.drop, elem.drop, table.grow/size/fill,
                                               memory.init (data index) */
        struct { uint32_t type_index, table_index; } call_indirect;
        struct { uint32_t count; const uint8_t *targets; } br_table; /* count labels, then the
                                               default: count + 1 u32 LEBs at targets */
        ri_memarg mem;                      /* loads and stores */
        int32_t i32;
        int64_t i64;
        uint32_t f32_bits;
        uint64_t f64_bits;
        uint8_t reftype;                    /* ref.null */
        struct { uint32_t count; uint8_t type; } select_t; /* type of the first entry */
        struct { uint32_t a, b; } pair;     /* table.init (elem, table), table.copy (dst, src) */
        struct { ri_memarg mem; uint32_t lane; const uint8_t *bytes; } simd; /* 0xFD: memarg (loads,
                                               stores), lane index, the 16 bytes of v128.const or
                                               i8x16.shuffle's lanes */
    } imm;
    /* memory.size, memory.grow, memory.fill, memory.init: memory index in memidx[0];
     * memory.copy: destination, source. memidx_zero_bytes: each was one 0x00 byte (the
     * reserved bytes of WebAssembly 2.0, ri_module_config.single_memory). */
    uint32_t memidx[2];
    bool memidx_zero_bytes;
    /* try_table (imm.block is its block type): its catch clauses, the first at clauses */
    struct { uint32_t count; const uint8_t *clauses, *end; } catches;
} ri_instr;

/* True for the valtype bytes of WebAssembly 2.0 (i32 i64 f32 f64 v128 funcref externref)
 * and exception handling's exnref. */
static inline bool ri_is_valtype(uint8_t b) {
    return b == RI_I32 || b == RI_I64 || b == RI_F32 || b == RI_F64 || b == RI_V128 ||
           b == RI_FUNCREF || b == RI_EXTERNREF || b == RI_EXNREF;
}

/* Decode the instruction at r->p. Returns false on a malformed instruction, with
 * r->failed set and r->error one of the spec's texts ("illegal opcode",
 * "zero byte expected", "malformed reference type", "unexpected end", ...). */
bool ri_read_instr_full(ri_reader *r, ri_instr *in);

/* How ri_read_instr decodes an opcode byte inline: no immediate, a u32 index or an i32
 * constant of at most four LEB128 bytes (which no rule of the last byte constrains), a
 * memarg of a one-byte alignment and offset, a block type of one byte, an f32 or f64
 * constant; RI_IC_FULL: always by ri_read_instr_full. */
enum { RI_IC_FULL, RI_IC_NONE, RI_IC_INDEX, RI_IC_I32, RI_IC_MEMARG, RI_IC_BLOCK, RI_IC_F32, RI_IC_F64 };
extern const uint8_t ri_instr_class[256];

/* The LEB128 of at most four bytes at p (its value in *value, its length in *len); false if
 * it is longer. */
static inline bool ri_short_leb(const uint8_t *p, uint32_t *value, uint32_t *len) {
    uint32_t v = 0;
    for (uint32_t i = 0; i < 4; i++) {
        v |= (uint32_t)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            *value = v;
            *len = i + 1;
            return true;
        }
    }
    return false;
}

/* ri_read_instr_full, with the common instructions decoded inline: every body is decoded
 * more than once (validation, the compiler's pre-scan and translation), and most of its
 * instructions are a plain opcode or one with a short immediate. */
static inline bool ri_read_instr(ri_reader *r, ri_instr *in) {
    const uint8_t *p = r->p;
    if (r->end - p < 9) return ri_read_instr_full(r, in); /* (also a failed reader: p == end) */
    uint8_t b = p[0];
    uint32_t v, n;
    const uint8_t *next;
    switch (ri_instr_class[b]) {
    case RI_IC_NONE: next = p + 1; break;
    case RI_IC_INDEX:
        if (!ri_short_leb(p + 1, &v, &n)) return ri_read_instr_full(r, in);
        in->imm.index = v;
        next = p + 1 + n;
        break;
    case RI_IC_I32:
        if (!ri_short_leb(p + 1, &v, &n)) return ri_read_instr_full(r, in);
        /* sign-extend from bit 7n - 1, without shifting a negative value */
        in->imm.i32 = (int32_t)(v & ((UINT32_C(1) << (7 * n - 1)) - 1)) - (int32_t)(v & (UINT32_C(1) << (7 * n - 1)));
        next = p + 1 + n;
        break;
    case RI_IC_MEMARG:
        if (p[1] >= 64 || (p[2] & 0x80)) return ri_read_instr_full(r, in); /* (64..127: a memory index follows) */
        in->imm.mem.align = p[1];
        in->imm.mem.memidx = 0;
        in->imm.mem.offset = p[2];
        in->imm.mem.offset32_error = NULL;
        next = p + 3;
        break;
    case RI_IC_BLOCK:
        if (p[1] == 0x40) {
            in->imm.block.kind = RI_BLOCK_EMPTY;
        } else if (ri_is_valtype(p[1])) {
            in->imm.block.kind = RI_BLOCK_VALTYPE;
            in->imm.block.valtype = p[1];
        } else {
            return ri_read_instr_full(r, in);
        }
        next = p + 2;
        break;
    case RI_IC_F32:
        in->imm.f32_bits = ri_le_get32(p + 1);
        next = p + 5;
        break;
    case RI_IC_F64:
        in->imm.f64_bits = ri_le_get64(p + 1);
        next = p + 9;
        break;
    default: return ri_read_instr_full(r, in);
    }
    in->offset = ri_reader_offset(r);
    in->op = b;
    in->memidx[0] = in->memidx[1] = 0;
    in->memidx_zero_bytes = true;
    r->p = next;
    return true;
}

/* Checks the valtype byte b just read by r: fails r if it is not a value type
 * ("malformed value type"). */
static inline bool ri_check_valtype(ri_reader *r, uint8_t b) {
    if (!ri_is_valtype(b)) ri_reader_fail(r, "malformed value type");
    return !r->failed;
}

/* The feature of a later WebAssembly version that opcode byte b begins (SIMD, threads,
 * tail calls, exception handling, ...), as a message, or NULL. */
const char *ri_unsupported_opcode(uint8_t b);
static inline bool ri_is_reftype(uint8_t b) { return b == RI_FUNCREF || b == RI_EXTERNREF || b == RI_EXNREF; }

/* try_table's catch clauses (exception handling): the kind byte, then the tag (not for the
 * catch_all forms) and the label. */
enum { RI_CATCH_TAG = 0, RI_CATCH_TAG_REF = 1, RI_CATCH_ALL_PLAIN = 2, RI_CATCH_ALL_REF = 3 };
typedef struct ri_catch_clause {
    uint8_t kind;
    uint32_t tag, label;
} ri_catch_clause;
/* Reads clause i of a try_table, whose clauses ri_read_instr checked. */
ri_catch_clause ri_try_table_clause(const ri_instr *in, uint32_t i);

/* Name of an opcode for error messages ("i32.add", "memory.init", ...). */
const char *ri_opcode_name(uint16_t op);

#endif
