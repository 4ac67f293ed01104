/* Decoding of single instructions and their immediates (see instr.h). */
#include "instr.h"

#include "simd.h"

static void read_blocktype(ri_reader *r, ri_blocktype *bt) {
    if (ri_reader_eof(r)) { ri_reader_fail(r, "unexpected end"); return; }
    uint8_t b = *r->p;
    if (b == 0x40) { r->p++; bt->kind = RI_BLOCK_EMPTY; return; }
    if (ri_is_valtype(b)) {
        r->p++;
        bt->kind = RI_BLOCK_VALTYPE;
        bt->valtype = b;
        return;
    }
    int64_t idx = ri_read_s33(r);
    if (r->failed) return;
    if (idx < 0) { ri_reader_fail(r, "malformed block type"); return; }
    if (idx > UINT32_MAX) { ri_reader_fail(r, "integer too large"); return; }
    bt->kind = RI_BLOCK_TYPEIDX;
    bt->type_index = (uint32_t)idx;
}

/* A memory index where WebAssembly 2.0 had a reserved zero byte: noted if it was not
 * one 0x00 byte (the validator refuses that under ri_module_config.single_memory). */
static uint32_t read_memidx(ri_reader *r, ri_instr *in) {
    if (!ri_reader_eof(r) && *r->p != 0) in->memidx_zero_bytes = false;
    return ri_read_u32(r);
}

/* Bit 6 of the alignment flags a memory index (multiple memories); the offset is a u64
 * (memory64), and whether its encoding is also a valid u32 is kept for 32-bit memories. */
static void read_memarg(ri_reader *r, ri_memarg *m) {
    m->align = ri_read_u32(r);
    m->memidx = 0;
    if (!r->failed && m->align >= 64 && m->align < 128) {
        m->align -= 64;
        m->memidx = ri_read_u32(r);
    }
    ri_reader probe = *r;
    (void)ri_read_u32(&probe);
    m->offset32_error = probe.failed ? probe.error : NULL;
    m->offset = ri_read_uleb(r, 64);
}

#define RI_X_IC_NUM(name, byte, a, b, res) [byte] = RI_IC_NONE,
#define RI_X_IC_MEM(name, byte, t, n, st) [byte] = RI_IC_MEMARG,
const uint8_t ri_instr_class[256] = {
    RI_NUMERIC_OPS(RI_X_IC_NUM)
    RI_MEMORY_OPS(RI_X_IC_MEM)
    [RI_OP_UNREACHABLE] = RI_IC_NONE, [RI_OP_NOP] = RI_IC_NONE, [RI_OP_ELSE] = RI_IC_NONE,
    [RI_OP_END] = RI_IC_NONE, [RI_OP_RETURN] = RI_IC_NONE, [RI_OP_DROP] = RI_IC_NONE,
    [RI_OP_SELECT] = RI_IC_NONE, [RI_OP_REF_IS_NULL] = RI_IC_NONE, [RI_OP_CATCH_ALL] = RI_IC_NONE,
    [RI_OP_THROW_REF] = RI_IC_NONE,
    [RI_OP_BR] = RI_IC_INDEX, [RI_OP_BR_IF] = RI_IC_INDEX, [RI_OP_CALL] = RI_IC_INDEX,
    [RI_OP_RETURN_CALL] = RI_IC_INDEX, [RI_OP_CATCH] = RI_IC_INDEX, [RI_OP_THROW] = RI_IC_INDEX,
    [RI_OP_RETHROW] = RI_IC_INDEX, [RI_OP_DELEGATE] = RI_IC_INDEX,
    [RI_OP_LOCAL_GET] = RI_IC_INDEX, [RI_OP_LOCAL_SET] = RI_IC_INDEX, [RI_OP_LOCAL_TEE] = RI_IC_INDEX,
    [RI_OP_GLOBAL_GET] = RI_IC_INDEX, [RI_OP_GLOBAL_SET] = RI_IC_INDEX,
    [RI_OP_TABLE_GET] = RI_IC_INDEX, [RI_OP_TABLE_SET] = RI_IC_INDEX, [RI_OP_REF_FUNC] = RI_IC_INDEX,
    [RI_OP_I32_CONST] = RI_IC_I32, [RI_OP_F32_CONST] = RI_IC_F32, [RI_OP_F64_CONST] = RI_IC_F64,
    [RI_OP_BLOCK] = RI_IC_BLOCK, [RI_OP_LOOP] = RI_IC_BLOCK, [RI_OP_IF] = RI_IC_BLOCK,
};
#undef RI_X_IC_NUM
#undef RI_X_IC_MEM

bool ri_read_instr_full(ri_reader *r, ri_instr *in) {
    in->offset = ri_reader_offset(r);
    in->memidx[0] = in->memidx[1] = 0;
    in->memidx_zero_bytes = true;
    uint8_t b = ri_read_u8(r);
    if (r->failed) return false;
    in->op = b;
    switch (b) {
    case RI_OP_BLOCK: case RI_OP_LOOP: case RI_OP_IF: case RI_OP_TRY:
        read_blocktype(r, &in->imm.block);
        break;
    case RI_OP_TRY_TABLE: {
        read_blocktype(r, &in->imm.block);
        in->catches.count = ri_read_u32(r);
        in->catches.clauses = r->p;
        for (uint64_t i = 0; i < in->catches.count && !r->failed; i++) {
            uint8_t kind = ri_read_u8(r);
            if (r->failed) break;
            if (kind > RI_CATCH_ALL_REF) { ri_reader_fail(r, "malformed catch clause"); break; }
            if (kind < RI_CATCH_ALL_PLAIN) (void)ri_read_u32(r);
            (void)ri_read_u32(r);
        }
        in->catches.end = r->p;
        break;
    }
    case RI_OP_BR: case RI_OP_BR_IF: case RI_OP_CALL: case RI_OP_RETURN_CALL:
    case RI_OP_CATCH: case RI_OP_THROW: case RI_OP_RETHROW: case RI_OP_DELEGATE:
    case RI_OP_LOCAL_GET: case RI_OP_LOCAL_SET: case RI_OP_LOCAL_TEE:
    case RI_OP_GLOBAL_GET: case RI_OP_GLOBAL_SET:
    case RI_OP_TABLE_GET: case RI_OP_TABLE_SET: case RI_OP_REF_FUNC:
        in->imm.index = ri_read_u32(r);
        break;
    case RI_OP_BR_TABLE: {
        uint32_t n = ri_read_u32(r);
        in->imm.br_table.count = n;
        in->imm.br_table.targets = r->p;
        for (uint64_t i = 0; i <= n && !r->failed; i++) (void)ri_read_u32(r);
        break;
    }
    case RI_OP_CALL_INDIRECT: case RI_OP_RETURN_CALL_INDIRECT:
        in->imm.call_indirect.type_index = ri_read_u32(r);
        in->imm.call_indirect.table_index = ri_read_u32(r);
        break;
    case RI_OP_SELECT_T: {
        uint32_t n = ri_read_u32(r);
        in->imm.select_t.count = n;
        in->imm.select_t.type = 0;
        for (uint32_t i = 0; i < n && !r->failed; i++) {
            uint8_t t = ri_read_u8(r);
            if (r->failed) break;
            if (!ri_check_valtype(r, t)) break;
            if (i == 0) in->imm.select_t.type = t;
        }
        break;
    }
    case RI_OP_MEMORY_SIZE: case RI_OP_MEMORY_GROW:
        in->memidx[0] = read_memidx(r, in);
        break;
    case RI_OP_I32_CONST: in->imm.i32 = ri_read_s32(r); break;
    case RI_OP_I64_CONST: in->imm.i64 = ri_read_s64(r); break;
    case RI_OP_F32_CONST: in->imm.f32_bits = ri_read_fixed32(r); break;
    case RI_OP_F64_CONST: in->imm.f64_bits = ri_read_fixed64(r); break;
    case RI_OP_REF_NULL: {
        uint8_t t = ri_read_u8(r);
        if (!r->failed && !ri_is_reftype(t)) ri_reader_fail(r, "malformed reference type");
        in->imm.reftype = t;
        break;
    }
    case RI_PREFIX_FC: {
        uint32_t sub = ri_read_u32(r);
        if (r->failed) return false;
        if (sub > RI_FC_TABLE_FILL) { ri_reader_fail(r, "illegal opcode"); return false; }
        in->op = (uint16_t)RI_FC(sub);
        switch (sub) {
        case RI_FC_MEMORY_INIT:
            in->imm.index = ri_read_u32(r);
            in->memidx[0] = read_memidx(r, in);
            break;
        case RI_FC_DATA_DROP: case RI_FC_ELEM_DROP:
        case RI_FC_TABLE_GROW: case RI_FC_TABLE_SIZE: case RI_FC_TABLE_FILL:
            in->imm.index = ri_read_u32(r);
            break;
        case RI_FC_MEMORY_COPY:
            in->memidx[0] = read_memidx(r, in);
            in->memidx[1] = read_memidx(r, in);
            break;
        case RI_FC_MEMORY_FILL:
            in->memidx[0] = read_memidx(r, in);
            break;
        case RI_FC_TABLE_INIT: case RI_FC_TABLE_COPY:
            in->imm.pair.a = ri_read_u32(r);
            in->imm.pair.b = ri_read_u32(r);
            break;
        default: /* saturating truncations: no immediates */
            break;
        }
        break;
    }
    case RI_PREFIX_FD: {
        uint32_t sub = ri_read_u32(r);
        if (r->failed) return false;
        ri_simd_info si = ri_simd_info_of(sub);
        if (sub >= 0x100 && sub <= 0x113) { ri_reader_unsupported(r, "relaxed SIMD (0xfd 0x100..0x113) is not supported"); return false; }
        if (sub > 0xFF || si.shape == RI_SIMD_NONE) { ri_reader_fail(r, "illegal opcode"); return false; }
        in->op = (uint16_t)RI_FD(sub);
        in->imm.simd.lane = 0;
        in->imm.simd.bytes = NULL;
        switch (si.shape) {
        case RI_SIMD_LOAD: case RI_SIMD_STORE:
            read_memarg(r, &in->imm.simd.mem);
            break;
        case RI_SIMD_LOAD_LANE: case RI_SIMD_STORE_LANE:
            read_memarg(r, &in->imm.simd.mem);
            in->imm.simd.lane = ri_read_u8(r);
            break;
        case RI_SIMD_EXTRACT: case RI_SIMD_REPLACE:
            in->imm.simd.lane = ri_read_u8(r);
            break;
        case RI_SIMD_CONST: case RI_SIMD_SHUFFLE:
            if ((size_t)(r->end - r->p) < 16) { ri_reader_fail(r, "unexpected end"); return false; }
            in->imm.simd.bytes = r->p;
            r->p += 16;
            break;
        default: break;
        }
        break;
    }
    default:
        if (b >= RI_OP_I32_LOAD && b <= RI_OP_I64_STORE32) {
            read_memarg(r, &in->imm.mem);
        } else if ((b >= RI_OP_I32_EQZ && b <= RI_OP_I64_EXTEND32_S) ||
                   b == RI_OP_UNREACHABLE || b == RI_OP_NOP || b == RI_OP_ELSE ||
                   b == RI_OP_END || b == RI_OP_RETURN || b == RI_OP_DROP ||
                   b == RI_OP_SELECT || b == RI_OP_REF_IS_NULL || b == RI_OP_CATCH_ALL || b == RI_OP_THROW_REF) {
            /* no immediates */
        } else {
            const char *feature = ri_unsupported_opcode(b);
            if (feature) ri_reader_unsupported(r, feature);
            else ri_reader_fail(r, "illegal opcode");
            return false;
        }
        break;
    }
    return !r->failed;
}

ri_catch_clause ri_try_table_clause(const ri_instr *in, uint32_t i) {
    /* the clauses were read once already: they are well formed up to the instruction's end */
    const uint8_t *p = in->catches.clauses;
    ri_reader r;
    ri_reader_init(&r, p, p, in->catches.end);
    ri_catch_clause c = {0, 0, 0};
    for (uint32_t k = 0; k <= i; k++) {
        c.kind = ri_read_u8(&r);
        c.tag = c.kind < RI_CATCH_ALL_PLAIN ? ri_read_u32(&r) : 0;
        c.label = ri_read_u32(&r);
    }
    return c;
}

const char *ri_unsupported_opcode(uint8_t b) {
    switch (b) {
    case 0xfe: return "threads (atomic operations, 0xfe prefix) are not supported";
    case 0xfb: return "garbage collection (0xfb prefix) is not supported";
    case 0x14: return "typed function references (call_ref) are not supported";
    case 0x15: return "tail calls (return_call_ref) are not supported";
    case 0xd3: case 0xd4: case 0xd6: return "typed function references (ref.as_non_null, br_on_null) are not supported";
    case 0xd5: return "garbage collection (ref.eq) is not supported";
    default: return NULL;
    }
}

const char *ri_opcode_name(uint16_t op) {
    switch (op) {
    case RI_OP_UNREACHABLE: return "unreachable";
    case RI_OP_NOP: return "nop";
    case RI_OP_BLOCK: return "block";
    case RI_OP_LOOP: return "loop";
    case RI_OP_IF: return "if";
    case RI_OP_ELSE: return "else";
    case RI_OP_END: return "end";
    case RI_OP_BR: return "br";
    case RI_OP_BR_IF: return "br_if";
    case RI_OP_BR_TABLE: return "br_table";
    case RI_OP_RETURN: return "return";
    case RI_OP_CALL: return "call";
    case RI_OP_CALL_INDIRECT: return "call_indirect";
    case RI_OP_RETURN_CALL: return "return_call";
    case RI_OP_TRY: return "try";
    case RI_OP_CATCH: return "catch";
    case RI_OP_CATCH_ALL: return "catch_all";
    case RI_OP_THROW: return "throw";
    case RI_OP_RETHROW: return "rethrow";
    case RI_OP_TRY_TABLE: return "try_table";
    case RI_OP_THROW_REF: return "throw_ref";
    case RI_OP_DELEGATE: return "delegate";
    case RI_OP_RETURN_CALL_INDIRECT: return "return_call_indirect";
    case RI_OP_DROP: return "drop";
    case RI_OP_SELECT: case RI_OP_SELECT_T: return "select";
    case RI_OP_LOCAL_GET: return "local.get";
    case RI_OP_LOCAL_SET: return "local.set";
    case RI_OP_LOCAL_TEE: return "local.tee";
    case RI_OP_GLOBAL_GET: return "global.get";
    case RI_OP_GLOBAL_SET: return "global.set";
    case RI_OP_TABLE_GET: return "table.get";
    case RI_OP_TABLE_SET: return "table.set";
    case RI_OP_MEMORY_SIZE: return "memory.size";
    case RI_OP_MEMORY_GROW: return "memory.grow";
    case RI_OP_I32_CONST: return "i32.const";
    case RI_OP_I64_CONST: return "i64.const";
    case RI_OP_F32_CONST: return "f32.const";
    case RI_OP_F64_CONST: return "f64.const";
    case RI_OP_REF_NULL: return "ref.null";
    case RI_OP_REF_IS_NULL: return "ref.is_null";
    case RI_OP_REF_FUNC: return "ref.func";
    case RI_FC(RI_FC_MEMORY_INIT): return "memory.init";
    case RI_FC(RI_FC_DATA_DROP): return "data.drop";
    case RI_FC(RI_FC_MEMORY_COPY): return "memory.copy";
    case RI_FC(RI_FC_MEMORY_FILL): return "memory.fill";
    case RI_FC(RI_FC_TABLE_INIT): return "table.init";
    case RI_FC(RI_FC_ELEM_DROP): return "elem.drop";
    case RI_FC(RI_FC_TABLE_COPY): return "table.copy";
    case RI_FC(RI_FC_TABLE_GROW): return "table.grow";
    case RI_FC(RI_FC_TABLE_SIZE): return "table.size";
    case RI_FC(RI_FC_TABLE_FILL): return "table.fill";
    default: break;
    }
    if (op >= RI_OP_I32_LOAD && op <= RI_OP_I64_STORE32) return op >= RI_OP_I32_STORE ? "store" : "load";
    if (op <= 0xFF) return "numeric instruction";
    if (RI_IS_FD(op)) return "SIMD instruction";
    return "saturating truncation";
}
