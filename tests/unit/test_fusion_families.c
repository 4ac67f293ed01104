/*
 * The compiler's fusion families change speed only: real C programs (tests/c, built by
 * clang-19 against wasi-libc) compiled with every family on, with each family off alone,
 * and with all off compute the same result, charge the same gas and leave the same memory.
 * And their stop points are the same: a call paused in code of one compilation is
 * described (in WebAssembly terms), rebuilt in an instance of the other and resumed there,
 * hopping between fused and unfused code at every pause, to the same end. Without the C
 * programs (RI_C_WASM_DIR empty: no clang-19 or wasi-libc at build time) the tests skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/engine.h"
#include "engine_slicing.h"
#include "sandbox_test_util.h" /* read_wasm_in */

typedef struct program {
    const char *name; /* tests/c/<name>.c, its export "run" */
    int32_t args[2];
    uint32_t nargs;
} program;

static const program programs[] = {
    {"libc_qsort", {150, 0}, 1},
    {"libc_interp", {24, 6}, 2},
};

typedef struct outcome {
    uint32_t result;
    uint64_t gas;
    uint64_t memory_hash;
} outcome;

typedef struct world {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
} world;

static uint8_t *read_program(const char *name, size_t *len) {
    const char *dir = getenv("RI_C_WASM_DIR");
    if (!dir || !dir[0]) return NULL;
    return read_wasm_in(dir, name, "RI_C_WASM_DIR", len);
}

static world open_world(const uint8_t *wasm, size_t len, uint32_t fusions_off) {
    world w;
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg);
    mcfg.fusions_off = fusions_off;
    ri_error err;
    w.module = ri_module_load(wasm, len, &mcfg, &err);
    if (!w.module) print_error("load (fusions off 0x%x): %s\n", fusions_off, err.message);
    assert_non_null(w.module);
    w.store = ri_store_new(NULL);
    assert_non_null(w.store);
    w.instance = ri_instantiate(w.store, w.module, NULL, 0, &err);
    if (!w.instance) print_error("instantiate: %s\n", err.message);
    assert_non_null(w.instance);
    return w;
}

static void close_world(world *w) {
    ri_store_free(w->store);
    ri_module_free(w->module);
}

static ri_func *run_func(const world *w) {
    ri_extern ext;
    assert_true(ri_instance_export(w->instance, "run", &ext));
    return ext.of.func;
}

static uint64_t memory_hash(const world *w) { return slicing_memory_hash(w->instance); }

static void args_of(const program *p, ri_val *a) {
    for (uint32_t i = 0; i < p->nargs; i++) a[i] = ri_val_i32(p->args[i]);
}

static outcome run_whole(const uint8_t *wasm, size_t len, const program *p, uint32_t fusions_off) {
    world w = open_world(wasm, len, fusions_off);
    uint64_t budget = UINT64_C(1) << 40;
    ri_store_set_gas(w.store, budget);
    ri_val a[2], r;
    args_of(p, a);
    ri_error err;
    ri_errcode rc = ri_func_call(w.store, run_func(&w), a, p->nargs, &r, 1, &err);
    if (rc != RI_OK) print_error("%s (fusions off 0x%x): %s\n", p->name, fusions_off, err.message);
    assert_int_equal(rc, RI_OK);
    outcome o = {(uint32_t)r.of.i32, budget - ri_store_gas(w.store), memory_hash(&w)};
    close_world(&w);
    return o;
}

static uint8_t *program_or_skip(const program *p, size_t *len) {
    uint8_t *wasm = read_program(p->name, len);
    if (!wasm) {
        print_message("no C programs were built (clang-19 and wasi-libc missing): skipped\n");
        skip();
    }
    return wasm;
}

static void every_family_off_gives_the_same_run(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
        size_t len;
        uint8_t *wasm = program_or_skip(&programs[k], &len);
        outcome want = run_whole(wasm, len, &programs[k], 0);
        assert_true(want.gas > 10000);
        for (uint32_t f = 1; f <= RI_FUSE_ALL; f <<= 1) {
            assert_non_null(ri_fusion_name(f));
            outcome got = run_whole(wasm, len, &programs[k], f);
            if (got.result != want.result || got.gas != want.gas || got.memory_hash != want.memory_hash)
                print_error("%s with %s off: result %u gas %llu (want %u, %llu)\n", programs[k].name,
                            ri_fusion_name(f), got.result, (unsigned long long)got.gas, want.result,
                            (unsigned long long)want.gas);
            assert_int_equal(got.result, want.result);
            assert_int_equal(got.gas, want.gas);
            assert_int_equal(got.memory_hash, want.memory_hash);
        }
        outcome none = run_whole(wasm, len, &programs[k], RI_FUSE_ALL);
        assert_int_equal(none.result, want.result);
        assert_int_equal(none.gas, want.gas);
        assert_int_equal(none.memory_hash, want.memory_hash);
        free(wasm);
    }
}

/* A hopping run: the program, the world the call runs in and the fresh one a move opens. */
typedef struct hopping {
    const uint8_t *wasm;
    size_t len;
    const program *p;
    uint64_t slice;
    world w[2];
    int at;
    uint32_t off; /* the fusions off in w[at] */
    uint32_t *hops;
} hopping;

/* The paused call rebuilt in an instance compiled the other way, the state copied. */
static slicing_world hop(void *user, const slicing_world *from, const ri_suspension *d) {
    hopping *h = user;
    h->off = h->off ? 0 : RI_FUSE_ALL;
    world *to = &h->w[!h->at];
    *to = open_world(h->wasm, h->len, h->off);
    slicing_world w = {to->store, to->instance};
    slicing_copy_state(from, &w);
    ri_error err;
    if (!ri_store_rebuild_suspended(to->store, to->instance, d, &err)) {
        print_error("%s, slice %llu: rebuild in %s code: %s\n", h->p->name, (unsigned long long)h->slice,
                    h->off ? "unfused" : "fused", err.message);
        fail();
    }
    close_world(&h->w[h->at]);
    h->at = !h->at;
    (*h->hops)++;
    return w;
}

/* p by slices of `slice` gas, each pause moved into an instance compiled the other way
 * (fused, then unfused, ...). */
static outcome run_hopping(const uint8_t *wasm, size_t len, const program *p, uint64_t slice, uint32_t *hops) {
    hopping h = {.wasm = wasm, .len = len, .p = p, .slice = slice, .at = 0, .off = 0, .hops = hops};
    h.w[0] = open_world(wasm, len, 0);
    slicing sl = {.slice = slice, .user = &h, .move = hop};
    slicing_world w = {h.w[0].store, h.w[0].instance};
    ri_val a[2], r;
    args_of(p, a);
    slicing_outcome o = slicing_run(&sl, &w, run_func(&h.w[0]), a, p->nargs, &r, 1);
    outcome got = {(uint32_t)r.of.i32, o.gas, memory_hash(&h.w[h.at])};
    close_world(&h.w[h.at]);
    return got;
}

static void paused_calls_move_between_fused_and_unfused_code(void **state) {
    (void)state;
    for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
        size_t len;
        uint8_t *wasm = program_or_skip(&programs[k], &len);
        outcome want = run_whole(wasm, len, &programs[k], 0);
        static const uint64_t slices[] = {997, 4099, 20011};
        uint32_t hops = 0;
        for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++) {
            outcome got = run_hopping(wasm, len, &programs[k], slices[i], &hops);
            assert_int_equal(got.result, want.result);
            assert_int_equal(got.gas, want.gas);
            assert_int_equal(got.memory_hash, want.memory_hash);
        }
        print_message("%s: %llu gas, %u moves between fused and unfused code\n", programs[k].name,
                      (unsigned long long)want.gas, hops);
        assert_true(hops > 20);
        free(wasm);
    }
}

static void family_names_parse(void **state) {
    (void)state;
    uint32_t m = 99;
    assert_true(ri_fusion_parse("all", &m));
    assert_int_equal(m, RI_FUSE_ALL);
    assert_true(ri_fusion_parse("sha2,accumulator", &m));
    assert_int_equal(m, RI_FUSE_SHA2 | RI_FUSE_ACCUMULATOR);
    assert_true(ri_fusion_parse("", &m));
    assert_int_equal(m, 0);
    m = 7;
    assert_false(ri_fusion_parse("sha2,nonsense", &m));
    assert_int_equal(m, 7); /* unchanged on an unknown name */
    assert_false(ri_fusion_parse("al", &m));
    for (uint32_t f = 1; f <= RI_FUSE_ALL; f <<= 1) {
        assert_true(ri_fusion_parse(ri_fusion_name(f), &m));
        assert_int_equal(m, f);
    }
    assert_null(ri_fusion_name(RI_FUSE_ALL + 1));
    assert_null(ri_fusion_name(3));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(family_names_parse),
        cmocka_unit_test(every_family_off_gives_the_same_run),
        cmocka_unit_test(paused_calls_move_between_fused_and_unfused_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
