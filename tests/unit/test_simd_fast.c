/*
 * The SIMD fast path (src/engine/interp_simd.h, simd_vec.h) computes what the general
 * operation V128_OP (simd.c's ri_simd_apply, the reference) computes, bit for bit:
 * - every operation of RI_CODE_SIMD_LANE_OPS (each lane immediate of the extracts and
 *   replaces), and the shuffle, on random and edge inputs (NaNs of every kind, -0,
 *   infinities, lane minima and maxima, equal and sign-flipped operands), with NaN
 *   canonicalisation on and off, also with its result in its operand's slot;
 * - every load of RI_CODE_SIMD_LOAD_OPS and v128.store, with and without the address's
 *   i32.add folded in (the addend word), at addresses up to and past the end of memory
 *   and with an address that wraps around 2^32.
 * The module is made here, one function per case; each function's code is checked to use
 * the operation with its own handler (not V128_OP).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/code.h"
#include "engine/code_info.h"
#include "engine/module.h"
#include "engine/simd.h"
#include "ri/engine.h"
#include "wasm_bytes.h"

/* ---- a module, made by hand ---- */

static void put_fd(ri_buf *b, uint32_t sub) { ri_buf_u8(b, 0xFD); wasm_uleb(b, sub); }

#define MAX_FUNCS 512
typedef struct fn {
    ri_valtype params[3];
    uint32_t np;
    ri_valtype result;      /* RI_FUNCREF: none */
    ri_buf body;
    ri_code_op want;        /* the operation its code must use */
    uint32_t sub, lane;     /* the instruction */
    uint8_t lanes[16];      /* a shuffle's */
    int chain;              /* 1: op(op(a, b), b) */
    int addend;             /* loads and stores: the address is param + 7 */
} fn;

static fn funcs[MAX_FUNCS];
static uint32_t nfuncs;

static uint8_t valtype_byte(ri_valtype t) {
    switch (t) {
    case RI_I32: return 0x7F;
    case RI_I64: return 0x7E;
    case RI_F32: return 0x7D;
    case RI_F64: return 0x7C;
    default: return 0x7B;
    }
}

static fn *new_fn(ri_code_op want, uint32_t sub, uint32_t lane) {
    assert_true(nfuncs < MAX_FUNCS);
    fn *f = &funcs[nfuncs++];
    memset(f, 0, sizeof *f);
    f->want = want;
    f->sub = sub;
    f->lane = lane;
    f->result = RI_FUNCREF;
    return f;
}

static void get(fn *f, uint32_t i) { ri_buf_u8(&f->body, 0x20); wasm_uleb(&f->body, i); }

static uint8_t *make_module(size_t *len) {
    ri_buf m = {0}, s = {0};
    wasm_header(&m);
    wasm_uleb(&s, nfuncs); /* types: one per function */
    for (uint32_t i = 0; i < nfuncs; i++) {
        ri_buf_u8(&s, 0x60);
        wasm_uleb(&s, funcs[i].np);
        for (uint32_t k = 0; k < funcs[i].np; k++) ri_buf_u8(&s, valtype_byte(funcs[i].params[k]));
        if (funcs[i].result == RI_FUNCREF) wasm_uleb(&s, 0);
        else { wasm_uleb(&s, 1); ri_buf_u8(&s, valtype_byte(funcs[i].result)); }
    }
    wasm_section(&m, 1, &s);
    wasm_uleb(&s, nfuncs);
    for (uint32_t i = 0; i < nfuncs; i++) wasm_uleb(&s, i);
    wasm_section(&m, 3, &s);
    wasm_uleb(&s, 1); ri_buf_u8(&s, 0); wasm_uleb(&s, 1); /* memory: 1 page */
    wasm_section(&m, 5, &s);
    wasm_uleb(&s, nfuncs + 1);
    for (uint32_t i = 0; i < nfuncs; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%u", i);
        wasm_name(&s, name);
        ri_buf_u8(&s, 0); wasm_uleb(&s, i);
    }
    wasm_name(&s, "memory");
    ri_buf_u8(&s, 2); wasm_uleb(&s, 0);
    wasm_section(&m, 7, &s);
    wasm_uleb(&s, nfuncs);
    for (uint32_t i = 0; i < nfuncs; i++) {
        ri_buf body = {0};
        wasm_uleb(&body, 0); /* no locals */
        ri_buf_put(&body, funcs[i].body.data, funcs[i].body.len);
        ri_buf_u8(&body, 0x0B);
        wasm_sized(&s, &body);
        ri_buf_free(&funcs[i].body);
    }
    wasm_section(&m, 10, &s);
    wasm_done(&m);
    *len = m.len;
    return m.data;
}

/* ---- the cases ---- */

static void add_lane_case(ri_code_op want, uint32_t sub, uint32_t lane, ri_simd_info si, int chain) {
    fn *f = new_fn(want, sub, lane);
    f->chain = chain;
    ri_valtype t = (ri_valtype)si.type;
    switch ((ri_simd_shape)si.shape) {
    case RI_SIMD_UN: f->np = 1; f->params[0] = RI_V128; f->result = RI_V128; break;
    case RI_SIMD_BIN: f->np = 2; f->params[0] = f->params[1] = RI_V128; f->result = RI_V128; break;
    case RI_SIMD_TERN: f->np = 3; f->params[0] = f->params[1] = f->params[2] = RI_V128; f->result = RI_V128; break;
    case RI_SIMD_SHIFT: f->np = 2; f->params[0] = RI_V128; f->params[1] = RI_I32; f->result = RI_V128; break;
    case RI_SIMD_TEST: f->np = 1; f->params[0] = RI_V128; f->result = RI_I32; break;
    case RI_SIMD_SPLAT: f->np = 1; f->params[0] = t; f->result = RI_V128; break;
    case RI_SIMD_EXTRACT: f->np = 1; f->params[0] = RI_V128; f->result = t; break;
    case RI_SIMD_REPLACE: f->np = 2; f->params[0] = RI_V128; f->params[1] = t; f->result = RI_V128; break;
    default: fail_msg("sub-opcode 0x%x: unexpected shape %d", sub, si.shape);
    }
    for (uint32_t i = 0; i < f->np; i++) get(f, i);
    put_fd(&f->body, sub);
    if (si.shape == RI_SIMD_EXTRACT || si.shape == RI_SIMD_REPLACE) ri_buf_u8(&f->body, (uint8_t)lane);
    if (chain) { get(f, 1); put_fd(&f->body, sub); } /* the second reads the first's result slot */
}

static void add_lane_ops(void) {
#define RI_X_CASE(name, sub_, kind) \
    do { \
        uint32_t s_ = (sub_); \
        ri_simd_info si = ri_simd_info_of(s_); \
        uint32_t nl = si.shape == RI_SIMD_EXTRACT || si.shape == RI_SIMD_REPLACE ? si.n : 1; \
        for (uint32_t l = 0; l < nl; l++) \
            for (int chain = 0; chain < (si.shape == RI_SIMD_BIN ? 2 : 1); chain++) \
                add_lane_case(RI_CODE_V128_##name, s_, l, si, chain); \
    } while (0);
    RI_CODE_SIMD_LANE_OPS(RI_X_CASE)
#undef RI_X_CASE
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void add_shuffles(void) {
    static const uint8_t fixed[][16] = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
        {31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16},
        {8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 0, 1, 2, 3},
        {0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23},
        {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
        {15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30},
        {16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
        {17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 0},
        {0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0},
        {22, 8, 9, 10, 11, 12, 13, 14, 0, 0, 0, 0, 0, 0, 0, 0},
        {8, 9, 10, 11, 12, 13, 14, 15, 31, 31, 31, 31, 31, 31, 31, 31},
        {24, 25, 26, 27, 28, 29, 30, 31, 7, 6, 5, 4, 3, 2, 1, 0},
    };
    enum { NFIXED = sizeof fixed / sizeof fixed[0] };
    for (uint32_t k = 0; k < NFIXED + 8; k++) {
        /* consecutive lanes from a lane up to 16 are V128_SHUFFLE_SPAN */
        bool span = k == 0 || (k >= 4 && k <= 6);
        fn *f = new_fn(span ? RI_CODE_V128_SHUFFLE_SPAN : RI_CODE_V128_SHUFFLE, 0x0D, 0);
        for (int i = 0; i < 16; i++) f->lanes[i] = k < NFIXED ? fixed[k][i] : (uint8_t)(rnd() % 32);
        f->np = 2; f->params[0] = f->params[1] = RI_V128; f->result = RI_V128;
        get(f, 0); get(f, 1);
        put_fd(&f->body, 0x0D);
        for (int i = 0; i < 16; i++) ri_buf_u8(&f->body, f->lanes[i]);
    }
}

#define MEM_OFFSET 5
#define ADDEND 7
static void add_memory_ops(void) {
    for (int addend = 0; addend < 2; addend++) {
#define RI_X_CASE(name, sub, bytes) \
        do { \
            fn *f = new_fn(RI_CODE_V128_##name, (sub), 0); \
            f->addend = addend; \
            f->np = 1; f->params[0] = RI_I32; f->result = RI_V128; \
            get(f, 0); \
            if (addend) { ri_buf_u8(&f->body, 0x41); wasm_sleb(&f->body, ADDEND); ri_buf_u8(&f->body, 0x6A); } \
            put_fd(&f->body, (sub)); ri_buf_u8(&f->body, 0); wasm_uleb(&f->body, MEM_OFFSET); \
        } while (0);
        RI_CODE_SIMD_LOAD_OPS(RI_X_CASE)
#undef RI_X_CASE
        fn *f = new_fn(RI_CODE_V128_STORE128, 0x0B, 0);
        f->addend = addend;
        f->np = 2; f->params[0] = RI_I32; f->params[1] = RI_V128;
        get(f, 0);
        if (addend) { ri_buf_u8(&f->body, 0x41); wasm_sleb(&f->body, ADDEND); ri_buf_u8(&f->body, 0x6A); }
        get(f, 1);
        put_fd(&f->body, 0x0B); ri_buf_u8(&f->body, 0); wasm_uleb(&f->body, MEM_OFFSET);
    }
}

/* ---- inputs ---- */

static const uint64_t edge64[] = {
    0, 1, UINT64_MAX, 0x8000000000000000u, 0x7FFFFFFFFFFFFFFFu, 0x7FF8000000000000u, 0xFFF8000000000001u,
    0x7FF0000000000001u, 0x7FF4000000000000u, 0x7FF0000000000000u, 0xFFF0000000000000u, 0x3FF0000000000000u,
    0xBFF8000000000000u, 0x43E0000000000000u, 0xC1E0000000000000u, 0x41EFFFFFFFE00000u, 0x000FFFFFFFFFFFFFu,
};
static const uint32_t edge32[] = {
    0, 1, UINT32_MAX, 0x80000000u, 0x7FFFFFFFu, 0x7FC00000u, 0xFFC00000u, 0x7FA00001u, 0xFF800001u, 0x7F800000u,
    0xFF800000u, 0x3F800000u, 0xBFC00000u, 0x4F000000u, 0xCF000000u, 0x0000FFFFu, 0xFFFF8000u, 0x00008000u,
    0x00000001u, 0x7F7FFFFFu,
};
static const uint16_t edge16[] = {0, 1, 0xFFFF, 0x8000, 0x7FFF, 0x00FF, 0xFF00, 0x0080, 0xFF7F, 0x0100};
static const uint8_t edge8[] = {0, 1, 0xFF, 0x80, 0x7F, 0xFE, 0x81};
#define PICK(a) (a)[rnd() % (sizeof(a) / sizeof((a)[0]))]

static void random_v128(uint8_t v[16]) {
    unsigned mode = (unsigned)(rnd() % 5);
    for (unsigned i = 0; i < 16;) {
        bool edge = rnd() & 1;
        uint64_t x = rnd();
        unsigned n;
        switch (mode) {
        case 0: n = 16; break;
        case 1: n = 1; if (edge) x = PICK(edge8); break;
        case 2: n = 2; if (edge) x = PICK(edge16); break;
        case 3: n = 4; if (edge) x = PICK(edge32); break;
        default: n = 8; if (edge) x = PICK(edge64); break;
        }
        if (n == 16) { x = rnd(); n = 8; }
        for (unsigned k = 0; k < n; k++) v[i + k] = (uint8_t)(x >> (8 * k));
        i += n;
    }
}

static uint64_t random_scalar(ri_valtype t) {
    bool edge = rnd() & 1;
    switch (t) {
    case RI_I64: case RI_F64: return edge ? PICK(edge64) : rnd();
    default: return edge ? PICK(edge32) : (uint32_t)rnd();
    }
}

static ri_val make_val(ri_valtype t, const uint8_t v[16], uint64_t scalar) {
    ri_val r;
    memset(&r, 0, sizeof r);
    r.type = t;
    switch (t) {
    case RI_I32: r.of.i32 = (int32_t)(uint32_t)scalar; break;
    case RI_I64: r.of.i64 = (int64_t)scalar; break;
    case RI_F32: r.of.f32_bits = (uint32_t)scalar; break;
    case RI_F64: r.of.f64_bits = scalar; break;
    default: memcpy(r.of.v128, v, 16); break;
    }
    return r;
}

/* A result's bits as 16 bytes (a scalar: little-endian in the first 8, zero-extended). */
static void val_bytes(const ri_val *v, uint8_t out[16]) {
    uint64_t x = 0;
    memset(out, 0, 16);
    switch (v->type) {
    case RI_I32: x = (uint32_t)v->of.i32; break;
    case RI_I64: x = (uint64_t)v->of.i64; break;
    case RI_F32: x = v->of.f32_bits; break;
    case RI_F64: x = v->of.f64_bits; break;
    default: memcpy(out, v->of.v128, 16); return;
    }
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(x >> (8 * i));
}

static void hex(char *s, const uint8_t v[16]) {
    for (int i = 0; i < 16; i++) sprintf(s + 2 * i, "%02x", v[i]);
}

/* ---- running ---- */

typedef struct env {
    ri_module *module;
    ri_store *store;
    ri_instance *inst;
    uint8_t *mem;
} env;

static env open_env(const uint8_t *wasm, size_t len, bool canon) {
    env e;
    ri_error err;
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg);
    e.module = ri_module_load(wasm, len, &mcfg, &err);
    if (!e.module) fail_msg("load: %s", err.message);
    ri_store_config cfg = ri_store_config_default();
    cfg.canonicalize_nans = canon;
    e.store = ri_store_new(&cfg);
    assert_non_null(e.store);
    e.inst = ri_instantiate(e.store, e.module, NULL, 0, &err);
    if (!e.inst) fail_msg("instantiate: %s", err.message);
    ri_extern ext;
    assert_true(ri_instance_export(e.inst, "memory", &ext) && ext.kind == RI_EXTERN_MEMORY);
    e.mem = ri_memory_data(ext.of.memory);
    return e;
}

static void close_env(env *e) {
    ri_store_free(e->store);
    ri_module_free(e->module);
}

static ri_func *func_of(const env *e, uint32_t i) {
    char name[16];
    snprintf(name, sizeof name, "f%u", i);
    ri_extern ext;
    assert_true(ri_instance_export(e->inst, name, &ext) && ext.kind == RI_EXTERN_FUNC);
    return ext.of.func;
}

/* Function i's code uses its operation and no V128_OP. */
static void check_code(const env *e, uint32_t i) {
    const int32_t *table = ri_interp_dispatch_table();
    const struct ri_code *code = e->module->codes[i];
    bool found = false;
    for (uint32_t w = 0; w < code->nwords; w++) {
        if (code->words[w] == (uint32_t)table[funcs[i].want]) found = true;
        if (code->words[w] == (uint32_t)table[RI_CODE_V128_OP])
            fail_msg("f%u (0x%x): its code has a V128_OP", i, funcs[i].sub);
    }
    if (!found) fail_msg("f%u (0x%x): its code lacks %s", i, funcs[i].sub, ri_code_names[funcs[i].want]);
}

/* Without canonicalisation, which NaN an arithmetic operation on NaNs gives is the
 * hardware's (and the C compiler's operand order's) choice, in the scalar reference too:
 * for +, -, *, / a NaN lane only has to be a NaN in both. */
static bool nan_lanes_agree(uint32_t sub, const uint8_t want[16], const uint8_t got[16]) {
    unsigned w = sub >= 0xE4 && sub <= 0xE7 ? 4 : sub >= 0xF0 && sub <= 0xF3 ? 8 : 0;
    if (!w) return false;
    for (unsigned i = 0; i < 16; i += w) {
        uint64_t x = 0, y = 0;
        for (unsigned k = 0; k < w; k++) { x |= (uint64_t)want[i + k] << (8 * k); y |= (uint64_t)got[i + k] << (8 * k); }
        bool xn = w == 4 ? (x & 0x7FFFFFFFu) > 0x7F800000u : (x & 0x7FFFFFFFFFFFFFFFu) > 0x7FF0000000000000u;
        bool yn = w == 4 ? (y & 0x7FFFFFFFu) > 0x7F800000u : (y & 0x7FFFFFFFFFFFFFFFu) > 0x7FF0000000000000u;
        if (xn ? !yn : x != y) return false;
    }
    return true;
}

static void check_lane_case(const env *e, uint32_t i, bool canon) {
    const fn *f = &funcs[i];
    uint8_t in[3][16] = {{0}}, want[16], got[16];
    uint64_t sc[3] = {0};
    ri_val args[3], res;
    for (uint32_t k = 0; k < f->np; k++) {
        random_v128(in[k]);
        if (f->params[k] != RI_V128) {
            sc[k] = f->sub >= 0x6B ? (uint32_t)(rnd() % 200) : random_scalar(f->params[k]); /* shift counts */
            memset(in[k], 0, 16);
            for (int b = 0; b < 8; b++) in[k][b] = (uint8_t)(sc[k] >> (8 * b));
        }
    }
    unsigned twist = (unsigned)(rnd() % 4); /* equal operands, or b = a with every sign flipped */
    if (f->np >= 2 && f->params[1] == RI_V128 && twist == 1) memcpy(in[1], in[0], 16);
    if (f->np >= 2 && f->params[1] == RI_V128 && twist == 2)
        for (int b = 0; b < 16; b++) in[1][b] = (uint8_t)(in[0][b] ^ ((b % 4 == 3 || b % 8 == 7) ? 0x80 : 0));
    for (uint32_t k = 0; k < f->np; k++) args[k] = make_val(f->params[k], in[k], sc[k]);
    ri_error err;
    ri_errcode rc = ri_func_call(e->store, func_of(e, i), args, f->np, &res, 1, &err);
    if (rc != RI_OK) fail_msg("f%u (0x%x): %s", i, f->sub, err.message);
    val_bytes(&res, got);
    const uint8_t *lanes = f->sub == 0x0D ? f->lanes : NULL;
    ri_simd_apply(f->sub, f->lane, lanes, want, in[0], f->np > 1 ? in[1] : NULL, f->np > 2 ? in[2] : NULL, canon);
    if (f->chain) ri_simd_apply(f->sub, f->lane, lanes, want, want, in[1], NULL, canon);
    if (memcmp(want, got, 16) != 0 && !(!canon && nan_lanes_agree(f->sub, want, got))) {
        char a[33], b[33], w[33], g[33];
        hex(a, in[0]); hex(b, in[1]); hex(w, want); hex(g, got);
        fail_msg("f%u: 0x%x lane %u%s canon %d: a %s b %s: want %s got %s", i, f->sub, f->lane,
                 f->chain ? " (chained)" : "", canon, a, b, w, g);
    }
}

static void check_memory_case(const env *e, uint32_t i) {
    const fn *f = &funcs[i];
    static const uint32_t near_end[] = {65536 - 16, 65536 - 8, 65536 - 4, 65536 - 2, 65536 - 1, 65536, 0xFFFFFFFFu};
    uint32_t ea_base = (uint32_t)(rnd() % 65536); /* the address the access starts at (u64 below) */
    if (rnd() % 3 == 0) ea_base = PICK(near_end);
    /* the parameter that makes it: param (+ ADDEND) + MEM_OFFSET, the first sum wrapping */
    uint32_t param = ea_base - MEM_OFFSET - (f->addend ? ADDEND : 0);
    if (f->addend && rnd() % 4 == 0) param = 0xFFFFFFFFu - (uint32_t)(rnd() % 6); /* wraps to a low address */
    uint64_t ea = (uint64_t)(uint32_t)(param + (f->addend ? ADDEND : 0)) + MEM_OFFSET;
    uint32_t n = f->sub == 0x0B ? 16 : ri_simd_access_bytes(f->sub);
    bool oob = ea + n > 65536;
    for (int b = 0; b < 64; b++) e->mem[(ea + (uint64_t)b) % 65536] = (uint8_t)rnd();
    uint8_t vec[16] = {0}, want[16], got[16], before[16] = {0};
    random_v128(vec);
    ri_val args[2] = {make_val(RI_I32, NULL, param), make_val(RI_V128, vec, 0)}, res;
    ri_error err;
    if (!oob) memcpy(before, e->mem + ea, 16 < 65536 - ea ? 16 : 65536 - ea);
    bool store = f->sub == 0x0B;
    ri_errcode rc = ri_func_call(e->store, func_of(e, i), args, store ? 2 : 1, &res, store ? 0 : 1, &err);
    if (oob) {
        if (rc != RI_ERR_TRAP || err.trap != RI_TRAP_MEMORY_OOB)
            fail_msg("f%u (0x%x): param 0x%x: an access at %llu of %u bytes must trap", i, f->sub, param,
                     (unsigned long long)ea, n);
        return;
    }
    if (rc != RI_OK) fail_msg("f%u (0x%x): param 0x%x: %s", i, f->sub, param, err.message);
    if (store) {
        assert_memory_equal(e->mem + ea, vec, 16);
        return;
    }
    uint8_t zero[16] = {0};
    ri_simd_load(f->sub, 0, before, zero, want);
    val_bytes(&res, got);
    if (memcmp(want, got, 16) != 0) fail_msg("f%u: load 0x%x at %llu differs", i, f->sub, (unsigned long long)ea);
}

static void test_fast_path(void **state) {
    (void)state;
    nfuncs = 0;
    add_lane_ops();
    add_shuffles();
    uint32_t first_memory = nfuncs;
    add_memory_ops();
    size_t len;
    uint8_t *wasm = make_module(&len);
    for (int canon = 0; canon < 2; canon++) {
        env e = open_env(wasm, len, canon != 0);
        for (uint32_t i = 0; i < nfuncs; i++) {
            check_code(&e, i);
            for (int rep = 0; rep < 200; rep++) {
                if (i < first_memory) check_lane_case(&e, i, canon != 0);
                else check_memory_case(&e, i);
            }
        }
        close_env(&e);
    }
    free(wasm);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
