/*
 * The SIMD family's handlers (code_simd.h), included once inside interp.c's run(): the
 * general ones (V128_OP, the shuffle, loads, stores, globals, select), and one handler
 * per operation of RI_CODE_SIMD_LANE_OPS and RI_CODE_SIMD_LOAD_OPS that computes its lanes
 * inline (simd_vec.h), without the call and the sub-opcode switch of V128_OP. On a host
 * without simd_vec.h's vectors (big-endian) those run V128_OP's code: the same layout,
 * the same result. No include guard: it is code, not declarations.
 */

/* Shuffles work on the four 64-bit halves of a then b in lane order w[0 .. 4) (w[4] = 0),
 * as the slots hold them (simd.h), so the same code is right on any host: lane k (< 32),
 * and the eight lanes from k (< 32; lanes past 31 are 0, never asked for). */
#define shuffle_lane(w, k) (((w)[(k) >> 3] >> (((k) & 7) * 8)) & 0xFFu)
#define shuffle_span(w, k) \
    (((k) & 7) ? (w)[(k) >> 3] >> (((k) & 7) * 8) | (w)[((k) >> 3) + 1] << (64 - ((k) & 7) * 8) : (w)[(k) >> 3])

/* A v128 operand (the first of its two slots, operand word i) and a result. */
#define VGET(i) rv_load_slots(&fp[pc[i]])
#define VPUT(i, v) rv_store(&fp[pc[i]], (v))

op_V128_OP: /* a lane operation (simd.c) */
    ri_simd_run_op(fp, pc, canon);
    NEXT(6);
op_V128_SHUFFLE: /* dst, a, b, the 16 lane indices in 4 words (little-endian), halves */
    {
        uint64_t w[5] = {fp[pc[2]].i64, fp[pc[2] + 1].i64, fp[pc[3]].i64, fp[pc[3] + 1].i64, 0};
        uint8_t ab[32]; /* (a then b, lane by lane, for a gather) */
        bool gathered = false;
        uint64_t half[2];
        for (uint32_t h = 0; h < 2; h++) {
            uint32_t d = pc[8] >> (8 * h), k = d & 31;
            switch ((d >> 5) & 3) {
            case RI_SHUFFLE_SPAN: half[h] = shuffle_span(w, k); break;
            case RI_SHUFFLE_SPLAT: half[h] = shuffle_lane(w, k) * UINT64_C(0x0101010101010101); break;
            default: { /* (four partial results: no chain of eight dependent ORs) */
                if (!gathered) {
#if RI_SIMD_VEC /* (little-endian: the slots' bytes are the lanes) */
                    memcpy(ab, &fp[pc[2]], 16);
                    memcpy(ab + 16, &fp[pc[3]], 16);
#else
                    for (uint32_t i = 0; i < 32; i++) ab[i] = (uint8_t)(w[i >> 3] >> (8 * (i & 7)));
#endif
                    gathered = true;
                }
                const uint32_t *l = pc + 4 + 2 * h;
#define LANE(j, at) ((uint64_t)ab[(l[(j) >> 2] >> (8 * ((j) & 3))) & 31] << (at))
                half[h] = (LANE(0, 0) | LANE(1, 8)) | (LANE(2, 16) | LANE(3, 24)) | (LANE(4, 32) | LANE(5, 40)) |
                          (LANE(6, 48) | LANE(7, 56));
#undef LANE
                break;
            }
            }
        }
        fp[pc[1]].i64 = half[0];
        fp[pc[1] + 1].i64 = half[1];
        NEXT(9);
    }
op_V128_SHUFFLE_SPAN: /* dst, a, b, s: bytes s .. s + 15 of a then b */
    {
        /* the four 64-bit halves in lane order, as the slots hold them (simd.h): a funnel
         * shift of two neighbours gives each half of the result, on any host */
        uint64_t w[5] = {fp[pc[2]].i64, fp[pc[2] + 1].i64, fp[pc[3]].i64, fp[pc[3] + 1].i64, 0};
        uint32_t s = pc[4] < 16 ? pc[4] : 16; /* (the compiler makes s <= 16) */
        fp[pc[1]].i64 = shuffle_span(w, s);
        fp[pc[1] + 1].i64 = shuffle_span(w, s + 8);
        NEXT(5);
    }
op_V128_LOAD: /* dst, addr, vec, offset, sub | lane << 8 */
    {
        uint32_t sub = pc[5] & 0xFFu, n = ri_simd_access_bytes(sub);
        uint64_t ea = (uint64_t)U32(2) + pc[4];
        if (__builtin_expect(ea + n > mem_size, 0)) TRAP(RI_TRAP_MEMORY_OOB);
        uint8_t vec[16], out[16];
        if (sub >= 0x54 && sub <= 0x57) ri_v128_from_u64s(vec, fp[pc[3]].i64, fp[pc[3] + 1].i64);
        else memset(vec, 0, sizeof vec);
        ri_simd_load(sub, pc[5] >> 8, mem_base + ea, vec, out);
        fp[pc[1]].i64 = ri_v128_u64(out);
        fp[pc[1] + 1].i64 = ri_v128_u64(out + 8);
        NEXT(6);
    }
op_V128_STORE: /* addr, vec, offset, sub | lane << 8 */
    {
        uint32_t sub = pc[4] & 0xFFu, n = ri_simd_access_bytes(sub);
        uint64_t ea = (uint64_t)U32(1) + pc[3];
        if (__builtin_expect(ea + n > mem_size, 0)) TRAP(RI_TRAP_MEMORY_OOB);
        uint8_t vec[16];
        ri_v128_from_u64s(vec, fp[pc[2]].i64, fp[pc[2] + 1].i64);
        ri_simd_store(sub, pc[4] >> 8, mem_base + ea, vec);
        NEXT(5);
    }
op_V128_GLOBAL_GET: /* d, d + 1 = globals[a] */
    fp[pc[1]] = inst->globals[pc[2]]->value;
    fp[pc[1] + 1] = inst->globals[pc[2]]->value_hi;
    NEXT(3);
op_V128_GLOBAL_SET: /* globals[a] = s, s + 1 */
    inst->globals[pc[1]]->value = fp[pc[2]];
    inst->globals[pc[1]]->value_hi = fp[pc[2] + 1];
    NEXT(3);
op_V128_SELECT: /* d = c ? a : b (two slots each) */
    {
        uint32_t from = U32(4) ? pc[2] : pc[3];
        ri_slot lo = fp[from], hi = fp[from + 1];
        fp[pc[1]] = lo;
        fp[pc[1] + 1] = hi;
        NEXT(5);
    }

#if RI_SIMD_VEC
/* (each reads all its operands before it writes: the result may be an operand's slot) */
#define RI_SIMD_H_UN(name) VPUT(1, rv_##name(VGET(2)))
#define RI_SIMD_H_BIN(name) VPUT(1, rv_##name(VGET(2), VGET(3)))
#define RI_SIMD_H_FBIN(name) VPUT(1, rv_##name(VGET(2), VGET(3), canon))
#define RI_SIMD_H_TERN(name) VPUT(1, rv_##name(VGET(2), VGET(3), VGET(4)))
#define RI_SIMD_H_SHIFT(name) VPUT(1, rv_##name(VGET(2), U32(3)))
#define RI_SIMD_H_TEST(name) fp[pc[1]].i64 = rv_##name(VGET(2))
#define RI_SIMD_H_SPLAT(name) VPUT(1, rv_##name(U64(2)))
#define RI_SIMD_H_EXTRACT(name) fp[pc[1]].i64 = rv_##name(VGET(2), pc[5] >> 8)
#define RI_SIMD_H_REPLACE(name) VPUT(1, rv_##name(VGET(2), U64(3), pc[5] >> 8))
#define RI_X_SIMD_HANDLER(name, sub, kind) op_V128_##name: RI_SIMD_H_##kind(name); NEXT(6);
    RI_CODE_SIMD_LANE_OPS(RI_X_SIMD_HANDLER)
#undef RI_X_SIMD_HANDLER
#define RI_X_SIMD_HANDLER(name, sub, bytes) \
    op_V128_##name: { \
        uint64_t ea = (uint64_t)(uint32_t)(U32(2) + pc[3]) + pc[4]; \
        if (__builtin_expect(ea + (bytes) > mem_size, 0)) TRAP(RI_TRAP_MEMORY_OOB); \
        VPUT(1, rv_##name(mem_base + ea)); \
        NEXT(6); \
    }
    RI_CODE_SIMD_LOAD_OPS(RI_X_SIMD_HANDLER)
#undef RI_X_SIMD_HANDLER
#else
/* V128_OP's layout: its code */
#define RI_X_SIMD_HANDLER(name, sub, kind) op_V128_##name:
    RI_CODE_SIMD_LANE_OPS(RI_X_SIMD_HANDLER)
    goto op_V128_OP;
#undef RI_X_SIMD_HANDLER
#define RI_X_SIMD_HANDLER(name, sub, bytes) \
    op_V128_##name: { \
        uint64_t ea = (uint64_t)(uint32_t)(U32(2) + pc[3]) + pc[4]; \
        if (__builtin_expect(ea + (bytes) > mem_size, 0)) TRAP(RI_TRAP_MEMORY_OOB); \
        uint8_t vec[16] = {0}, out[16]; \
        ri_simd_load(sub, 0, mem_base + ea, vec, out); \
        fp[pc[1]].i64 = ri_v128_u64(out); \
        fp[pc[1] + 1].i64 = ri_v128_u64(out + 8); \
        NEXT(6); \
    }
    RI_CODE_SIMD_LOAD_OPS(RI_X_SIMD_HANDLER)
#undef RI_X_SIMD_HANDLER
#endif
op_V128_STORE128: /* addr, vec, offset, addend */
    {
        uint64_t ea = (uint64_t)(uint32_t)(U32(1) + pc[4]) + pc[3];
        if (__builtin_expect(ea + 16 > mem_size, 0)) TRAP(RI_TRAP_MEMORY_OOB);
        uint64_t lo = LE64(fp[pc[2]].i64), hi = LE64(fp[pc[2] + 1].i64); /* (simd.h: slots hold LE values) */
        memcpy(mem_base + ea, &lo, 8);
        memcpy(mem_base + ea + 8, &hi, 8);
        NEXT(5);
    }
#undef VGET
#undef VPUT
#undef shuffle_lane
#undef shuffle_span
