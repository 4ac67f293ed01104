/*
 * Every fused operation computes what the WebAssembly it stands for computes: opcol.wat
 * (written by tests/wat/opcol_gen.c from the operation table's WebAssembly column, code.h)
 * has, for each operation (not a variant) whose form is a sequence of numeric, memory and
 * br_if instructions, a function computing that sequence (s:<OP> straight-line, f:<OP> a branch
 * forward, b:<OP> a branch back to a loop header). The module is compiled with every fusion
 * on and with every family off (ri_module_config.fusions_off), metered and unmetered. For
 * each function the fused compilation must contain the operation, in the branch variant the
 * context makes (metered: _FG forward, _BG back; unmetered: plain forward, _BU back), and on
 * inputs reaching the corners (0, -1, the sign bit, shift counts past the width, NaN, -0.0,
 * addresses out of bounds) both must give the same results, the same trap, the same gas
 * left and the same memory.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/code_info.h"
#include "engine/module.h"
#include "engine_fixture.h"

typedef struct side {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
    ri_memory *mem;
} side;

static void side_open(side *s, bool unmetered, uint32_t fusions_off) {
    size_t len = 0;
    uint8_t *bytes = read_fixture("opcol", &len);
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg);
    mcfg.unmetered = unmetered;
    mcfg.fusions_off = fusions_off;
    ri_error err;
    s->module = ri_module_load(bytes, len, &mcfg, &err);
    free(bytes);
    if (!s->module) fail_msg("opcol.wasm: %s", err.message);
    ri_store_config cfg = ri_store_config_default();
    s->store = ri_store_new(&cfg);
    assert_non_null(s->store);
    s->instance = ri_instantiate(s->store, s->module, NULL, 0, &err);
    assert_non_null(s->instance);
    ri_extern ext;
    assert_true(ri_instance_export(s->instance, "memory", &ext) && ext.kind == RI_EXTERN_MEMORY);
    s->mem = ext.of.memory;
}

static void side_close(side *s) {
    ri_store_free(s->store);
    ri_module_free(s->module);
}

/* Whether operation op is an instruction of the code of function `func` (walked instruction
 * by instruction, so an operand word never counts). Operations that share a handler (the
 * reinterprets) share its word: either is found. */
static bool emits(const ri_module *m, uint32_t func, uint32_t op) {
    const int32_t *table = ri_interp_dispatch_table();
    const ri_code *code = m->codes[func - m->nimports];
    for (uint32_t pos = 0; pos < code->nwords;) {
        uint32_t at = RI_CODE_OP_COUNT;
        for (uint32_t o = 0; o < RI_CODE_OP_COUNT; o++)
            if ((int32_t)code->words[pos] == table[o]) { at = o; break; }
        if (at == RI_CODE_OP_COUNT) fail_msg("function %u: no operation at %u", func, pos);
        if (code->words[pos] == (uint32_t)table[op]) return true;
        uint32_t size = ri_code_size_at(at, code->words, pos, code->nwords);
        if (!size) fail_msg("function %u: %s at %u does not fit", func, ri_code_names[at], pos);
        pos += size;
    }
    return false;
}

static uint32_t op_named(const char *name) {
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++)
        if (strcmp(ri_code_names[op], name) == 0) return op;
    fail_msg("no operation %s", name);
    return RI_CODE_OP_COUNT;
}

/* Inputs by type; an address parameter gets addresses (the generator names none such: every
 * i32 parameter takes addresses in some rows, through the i32 list's last entries). */
static const uint32_t i32_inputs[] = {0, 1, 0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 31, 32, 33, 0x12345678u,
                                      (uint32_t)-100, 8, 65528, 65532, 65536, 0xFFFFFFF0u, 100};
static const uint64_t i64_inputs[] = {0, 1, UINT64_MAX, 0x8000000000000000u, 0x7FFFFFFFFFFFFFFFu, 63, 64, 65,
                                      0x123456789ABCDEF0u, (uint64_t)-100};
static const double f64_inputs[] = {0.0, -0.0, 1.5, -2.25, NAN, INFINITY, -INFINITY, 1e300, 3.0, -1e-310};
static const float f32_inputs[] = {0.0f, -0.0f, 1.5f, -2.25f, NAN, INFINITY, -INFINITY, 3e38f, 3.0f, -1e-40f};
/* ... and, in the rows after the first EDGE_ROWS, values from a small set, drawn at random, so
 * that compared values are often equal (the generator's immediates are among them: 8, -3)
 * and loads read the fixture's data (the same set) */
static const uint32_t i32_small[] = {0, 1, 0xFFFFFFFFu, 8, (uint32_t)-3, 5, (uint32_t)-11, 16, 0x80000000u, 0x7FFFFFFFu};
static const uint64_t i64_small[] = {0, 1, UINT64_MAX, 8, (uint64_t)-3, 5, (uint64_t)-11, 16, 0x8000000000000000u};
static const double f64_small[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, NAN, INFINITY};
static const float f32_small[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 0.5f, NAN, INFINITY};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define EDGE_ROWS 24
#define ROWS (EDGE_ROWS + 400)

static ri_val input(ri_valtype t, uint32_t param, uint32_t row) {
    uint32_t k = row * (2 * param + 1) + param * 5;
    if (row >= EDGE_ROWS) { /* a hash of (row, param) */
        k = (row * 2654435761u) ^ ((param + 1) * 40503u);
        k ^= k >> 15;
        k *= 2246822519u;
        k ^= k >> 13;
        ri_val v;
        memset(&v, 0, sizeof v);
        v.type = t;
        switch (t) {
        case RI_I32: v.of.i32 = (int32_t)i32_small[k % COUNT(i32_small)]; return v;
        case RI_I64: v.of.i64 = (int64_t)i64_small[k % COUNT(i64_small)]; return v;
        case RI_F64: memcpy(&v.of.f64_bits, &f64_small[k % COUNT(f64_small)], 8); return v;
        case RI_F32: memcpy(&v.of.f32_bits, &f32_small[k % COUNT(f32_small)], 4); return v;
        default: fail_msg("parameter of type %d", (int)t);
        }
    }
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = t;
    switch (t) {
    case RI_I32: v.of.i32 = (int32_t)i32_inputs[k % COUNT(i32_inputs)]; break;
    case RI_I64: v.of.i64 = (int64_t)i64_inputs[k % COUNT(i64_inputs)]; break;
    case RI_F64: {
        double d = f64_inputs[k % COUNT(f64_inputs)];
        memcpy(&v.of.f64_bits, &d, sizeof d);
        break;
    }
    case RI_F32: {
        float f = f32_inputs[k % COUNT(f32_inputs)];
        memcpy(&v.of.f32_bits, &f, sizeof f);
        break;
    }
    default: fail_msg("parameter of type %d", (int)t);
    }
    return v;
}

typedef struct outcome {
    ri_errcode code;
    ri_trap trap;
    ri_val results[8];
    uint64_t gas;
} outcome;

static outcome run(side *s, ri_func *f, const ri_val *args, uint32_t nargs, uint32_t nresults) {
    outcome o;
    memset(&o, 0, sizeof o);
    ri_store_set_gas(s->store, 1000000);
    ri_error err;
    o.code = ri_func_call(s->store, f, args, nargs, o.results, nresults, &err);
    o.trap = o.code == RI_ERR_TRAP ? err.trap : RI_TRAP_NONE;
    o.gas = ri_store_gas(s->store);
    return o;
}

static bool same_val(const ri_val *a, const ri_val *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case RI_I32: return a->of.i32 == b->of.i32;
    case RI_F32: return a->of.f32_bits == b->of.f32_bits;
    default: return a->of.i64 == b->of.i64;
    }
}

/* Runs every function of the fixture in the fused and the unfused compilation; returns how
 * many operations were checked. */
static uint32_t check_all(bool unmetered, uint8_t *reached, uint32_t *failures) {
    side fused, plain;
    side_open(&fused, unmetered, 0);
    side_open(&plain, unmetered, RI_FUSE_ALL);
    uint32_t checked = 0;
    for (uint32_t e = 0; e < ri_module_export_count(fused.module); e++) {
        const ri_export *ex = &fused.module->exports[e];
        if (ex->kind != RI_EXTERN_FUNC) continue;
        ri_export_info info = ri_module_export(fused.module, e);
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)info.name_len, info.name);
        char ctx = name[0];
        uint32_t op = op_named(name + 2);
        uint32_t want = op;
        if (ctx == 'f') want = op + (unmetered ? 0 : RI_BRANCH_FG);
        if (ctx == 'b') want = op + (unmetered ? RI_BRANCH_BU : RI_BRANCH_BG);
        if (!emits(fused.module, ex->index, want)) {
            printf("%s%s: %s not emitted\n", unmetered ? "unmetered " : "", name, ri_code_names[want]);
            (*failures)++;
            continue;
        }
        reached[want] = 1;
        ri_extern a, b;
        assert_true(ri_instance_export(fused.instance, name, &a));
        assert_true(ri_instance_export(plain.instance, name, &b));
        ri_functype type = ri_func_type(a.of.func);
        assert_true(type.nparams <= 16 && type.nresults <= 8);
        for (uint32_t row = 0; row < ROWS; row++) {
            ri_val args[16];
            for (uint32_t p = 0; p < type.nparams; p++) args[p] = input(type.params[p], p, row);
            outcome got = run(&fused, a.of.func, args, type.nparams, type.nresults);
            outcome ref = run(&plain, b.of.func, args, type.nparams, type.nresults);
            if (got.code != ref.code || got.trap != ref.trap)
                fail_msg("%s, row %u: %s/%s, unfused %s/%s", name, row, ri_errcode_name(got.code),
                         ri_trap_message(got.trap), ri_errcode_name(ref.code), ri_trap_message(ref.trap));
            if (got.gas != ref.gas)
                fail_msg("%s, row %u: gas left %llu, unfused %llu", name, row, (unsigned long long)got.gas,
                         (unsigned long long)ref.gas);
            for (uint32_t r = 0; got.code == RI_OK && r < type.nresults; r++)
                if (!same_val(&got.results[r], &ref.results[r]))
                    fail_msg("%s, row %u: result %u is %#llx, unfused %#llx", name, row, r,
                             (unsigned long long)got.results[r].of.i64, (unsigned long long)ref.results[r].of.i64);
            if (memcmp(ri_memory_data(fused.mem), ri_memory_data(plain.mem), ri_memory_size(fused.mem)) != 0)
                fail_msg("%s, row %u: the memory differs", name, row);
        }
        checked++;
    }
    side_close(&fused);
    side_close(&plain);
    return checked;
}

static void test_fused_operations_match_their_webassembly(void **state) {
    (void)state;
    uint8_t reached[RI_CODE_OP_COUNT];
    memset(reached, 0, sizeof reached);
    uint32_t failures = 0;
    uint32_t metered = check_all(false, reached, &failures), unmetered = check_all(true, reached, &failures), n = 0;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) n += reached[op];
    assert_int_equal(metered, unmetered);
    printf("opcol: %u functions, %u operations emitted and checked, metered and unmetered\n", metered, n);
    assert_int_equal(failures, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fused_operations_match_their_webassembly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
