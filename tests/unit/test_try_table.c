/*
 * Exception handling's final form: try_table with each kind of catch clause (a branch to
 * its label with the payload, and an exnref for the _ref forms), throw_ref (rethrow of a
 * caught exnref, trap on null), nested try_tables, clauses that target a loop and the
 * function's label, exceptions across calls and out of return_call, mixed with the legacy
 * try/catch/rethrow in both directions, a host frame in between (not caught, as for the
 * legacy form), exnref results and arguments at the embedder, the collection of the
 * store's exception list with exnrefs live in locals, validation failures at load, and
 * pauses inside try_tables with exnrefs (one holding another) live in locals, described,
 * written to a snapshot (FRMS layout 4), read back and resumed in a fresh store.
 *
 * wabt and binaryen here do not know try_table: the module is built as bytes below.
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
#include "ri/snapshot.h"
#include "sandbox_test_util.h" /* print_error */
#include "engine_slicing.h"
#include "wasm_bytes.h"

/* ---- the module ---------------------------------------------------------------------------- */

#define B(...) WASM_PUT(f, __VA_ARGS__)
static void i32c(ri_buf *f, int32_t v) {
    ri_buf_u8(f, 0x41);
    wasm_sleb(f, v);
}

enum { I32 = 0x7F, EXN = 0x69, FUNC = 0x70, EMPTY = 0x40 };
enum { BLOCK = 0x02, LOOP = 0x03, IF = 0x04, END = 0x0B, BR = 0x0C, BR_IF = 0x0D, RETURN = 0x0F, CALL = 0x10,
       RETURN_CALL = 0x12, DROP = 0x1A, LGET = 0x20, LSET = 0x21, LTEE = 0x22, I32_EQZ = 0x45, I32_EQ = 0x46,
       I32_LT_U = 0x49, I32_ADD = 0x6A, I32_MUL = 0x6C, REF_NULL = 0xD0, REF_IS_NULL = 0xD1, THROW = 0x08,
       THROW_REF = 0x0A, TRY_TABLE = 0x1F, TRY = 0x06, CATCH = 0x07, CATCH_ALL = 0x19, RETHROW = 0x09,
       UNREACHABLE = 0x00 };
enum { C_TAG = 0, C_TAG_REF = 1, C_ALL = 2, C_ALL_REF = 3 };

/* try_table with block type bt (a byte: EMPTY, a value type, or a type index below 64) and
 * one clause. */
static void try_table1(ri_buf *f, uint8_t bt, uint8_t kind, uint32_t tag, uint32_t label) {
    ri_buf_u8(f, TRY_TABLE);
    ri_buf_u8(f, bt);
    ri_buf_u8(f, 1);
    ri_buf_u8(f, kind);
    if (kind < C_ALL) wasm_uleb(f, tag);
    wasm_uleb(f, label);
}

/* Types */
enum { T_V_V, T_I_I, T_I_V, T_V_IX, T_V_X, T_X_V, NTYPES };
/* Tags */
enum { E0, EI, EX };
/* Functions (0 is the host import) */
enum { F_HOST, F_THROWER, F_CATCH, F_CATCH_ALL, F_CATCH_REF, F_CATCH_ALL_REF, F_LEGACY_MIX, F_LEGACY_INTO,
       F_NESTED, F_LOOP, F_FUNC_LABEL, F_TAIL, F_WORK, F_PAUSE, F_GC, F_GET_EXN, F_RETHROW_ARG, F_UNCAUGHT,
       F_VIA_HOST, F_PARAM, F_ACC, NFUNCS };
static const char *const names[NFUNCS] = {
    "", "thrower", "catch", "catch_all", "catch_ref", "catch_all_ref", "legacy_mix", "legacy_into_table",
    "nested", "loop_retry", "func_label", "tail_throw", "work", "pause_exnref", "gc_churn", "get_exn",
    "rethrow_arg", "throw_uncaught", "via_host", "with_param", "after_block"};
static const uint8_t func_types[NFUNCS] = {T_I_I, T_I_V, T_I_I, T_I_I, T_I_I, T_I_I, T_I_I, T_I_I, T_I_I, T_I_I,
                                           T_I_I, T_V_V, T_I_I, T_I_I, T_I_I, T_V_X, T_X_V, T_I_I, T_I_I,
                                           T_I_I, T_I_I};

static void body(ri_buf *code, ri_buf *f) {
    ri_buf_u8(f, END);
    wasm_sized(code, f);
}

/* The function bodies; local declarations first. */
static void emit_body(ri_buf *f, uint32_t fn) {
    switch (fn) {
    case F_THROWER: /* (k): 0 throws $ei(7), 1 throws $e0, 2 throws $ei(9), 3 throws $e0, else returns */
        ri_buf_u8(f, 0);
        B(LGET, 0, I32_EQZ, IF, EMPTY);
        i32c(f, 7);
        B(THROW, EI, END);
        B(LGET, 0, 0x41, 2, I32_EQ, IF, EMPTY);
        i32c(f, 9);
        B(THROW, EI, END);
        B(LGET, 0, 0x41, 1, I32_EQ, IF, EMPTY, THROW, E0, END);
        B(LGET, 0, 0x41, 3, I32_EQ, IF, EMPTY, THROW, E0, END);
        return;
    case F_CATCH: /* catch $ei: payload + 100 */
        ri_buf_u8(f, 0);
        B(BLOCK, I32);
        try_table1(f, I32, C_TAG, EI, 0);
        B(LGET, 0, CALL, F_THROWER, 0x41, 5, END, RETURN, END);
        i32c(f, 100);
        ri_buf_u8(f, I32_ADD);
        return;
    case F_CATCH_ALL: /* catch_all: 200 */
        ri_buf_u8(f, 0);
        B(BLOCK, EMPTY);
        try_table1(f, EMPTY, C_ALL, 0, 0);
        B(LGET, 0, CALL, F_THROWER, END, 0x41, 5, RETURN, END);
        i32c(f, 200);
        return;
    case F_CATCH_REF: /* catch_ref $ei, then throw_ref it to an outer catch $ei: payload + 1000 */
        ri_buf_u8(f, 0);
        B(BLOCK, I32);
        try_table1(f, I32, C_TAG, EI, 0);
        B(BLOCK, T_V_IX);
        try_table1(f, I32, C_TAG_REF, EI, 0);
        B(LGET, 0, CALL, F_THROWER, 0x41, 5, END, RETURN, END);
        B(THROW_REF, END, RETURN, END);
        i32c(f, 1000);
        ri_buf_u8(f, I32_ADD);
        return;
    case F_CATCH_ALL_REF: /* catch_all_ref: 300 + 1000 if the exnref (through a select) is not null */
        B(1, 1, EXN);
        B(BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        B(LGET, 0, CALL, F_THROWER, END, 0x41, 5, RETURN, END);
        /* (a typed select of exnrefs: the caught one) */
        B(LSET, 1, LGET, 1, REF_NULL, EXN, 0x41, 1, 0x1C, 1, EXN, REF_IS_NULL, I32_EQZ);
        i32c(f, 1000);
        ri_buf_u8(f, I32_MUL);
        i32c(f, 300);
        ri_buf_u8(f, I32_ADD);
        return;
    case F_LEGACY_MIX: /* throw_ref caught by a legacy catch: $ei 2000 + payload, others 3000 */
        ri_buf_u8(f, 0);
        B(TRY, I32, BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        B(LGET, 0, CALL, F_THROWER, END, 0x41, 5, RETURN, END, THROW_REF, CATCH, EI);
        i32c(f, 2000);
        B(I32_ADD, CATCH_ALL);
        i32c(f, 3000);
        ri_buf_u8(f, END);
        return;
    case F_LEGACY_INTO: /* a legacy rethrow caught by a try_table: 4000 + payload */
        ri_buf_u8(f, 0);
        B(BLOCK, I32);
        try_table1(f, I32, C_TAG, EI, 0);
        B(TRY, I32, LGET, 0, CALL, F_THROWER, 0x41, 5, CATCH_ALL, RETHROW, 0, END, END, RETURN, END);
        i32c(f, 4000);
        ri_buf_u8(f, I32_ADD);
        return;
    case F_NESTED: /* inner catches $e0 (600), outer $ei (100 + payload) */
        ri_buf_u8(f, 0);
        B(BLOCK, I32);
        try_table1(f, I32, C_TAG, EI, 0);
        B(BLOCK, EMPTY);
        try_table1(f, I32, C_TAG, E0, 0);
        B(LGET, 0, CALL, F_THROWER, 0x41, 5, END, RETURN, END);
        i32c(f, 600);
        B(END, RETURN, END);
        i32c(f, 100);
        ri_buf_u8(f, I32_ADD);
        return;
    case F_LOOP: /* (n): a catch_all to the loop's label, n times: returns n */
        B(1, 1, I32);
        B(LOOP, EMPTY);
        try_table1(f, EMPTY, C_ALL, 0, 0);
        B(LGET, 1, 0x41, 1, I32_ADD, LSET, 1, LGET, 1, LGET, 0, I32_LT_U, IF, EMPTY, THROW, E0, END, END, END);
        B(LGET, 1);
        return;
    case F_FUNC_LABEL: /* catch $ei to the function's label: returns the payload */
        ri_buf_u8(f, 0);
        try_table1(f, I32, C_TAG, EI, 0);
        B(LGET, 0, CALL, F_THROWER, 0x41, 5, END);
        return;
    case F_TAIL: /* return_call leaves the try_table: not caught */
        ri_buf_u8(f, 0);
        B(BLOCK, EMPTY);
        try_table1(f, EMPTY, C_TAG, E0, 0);
        B(0x41, 1, RETURN_CALL, F_THROWER, END, END);
        return;
    case F_WORK: /* i * 3 */
        ri_buf_u8(f, 0);
        B(LGET, 0, 0x41, 3, I32_MUL);
        return;
    case F_PAUSE: /* (n) locals x y exnref, i acc i32: n + 3 * n(n+1)/2, with exnrefs live across the loop */
        B(2, 2, EXN, 2, I32);
        /* x = the exnref of $ei(n); y = the exnref of $ex(x); x = null */
        B(BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        B(LGET, 0, THROW, EI, END, UNREACHABLE, END, LSET, 1);
        B(BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        B(LGET, 1, THROW, EX, END, UNREACHABLE, END, LSET, 2, REF_NULL, EXN, LSET, 1);
        /* the loop, inside a try_table, calls work: stops there and inside it */
        B(BLOCK, EMPTY);
        try_table1(f, EMPTY, C_ALL, 0, 0);
        B(LOOP, EMPTY, LGET, 3, 0x41, 1, I32_ADD, LTEE, 3, CALL, F_WORK, LGET, 4, I32_ADD, LSET, 4, LGET, 3, LGET, 0,
          I32_LT_U, BR_IF, 0, END, END, END);
        /* unwrap y, throw x to get n back */
        B(BLOCK, EXN);
        try_table1(f, EMPTY, C_TAG, EX, 0);
        B(LGET, 2, THROW_REF, END, UNREACHABLE, END, LSET, 1);
        B(BLOCK, I32);
        try_table1(f, EMPTY, C_TAG, EI, 0);
        B(LGET, 1, THROW_REF, END, 0x41, 0x7F, RETURN, END, LGET, 4, I32_ADD);
        return;
    case F_GC: /* (n) locals keep tmp exnref, i i32: n exceptions made, the first kept: 4242 */
        B(2, 2, EXN, 1, I32);
        B(BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        i32c(f, 4242);
        B(THROW, EI, END, UNREACHABLE, END, LSET, 1);
        B(LOOP, EMPTY, BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        B(LGET, 3, THROW, EI, END, UNREACHABLE, END, LSET, 2);
        B(LGET, 3, 0x41, 1, I32_ADD, LTEE, 3, LGET, 0, I32_LT_U, BR_IF, 0, END);
        B(BLOCK, I32);
        try_table1(f, EMPTY, C_TAG, EI, 0);
        B(LGET, 1, THROW_REF, END, 0x41, 0x7F, RETURN, END);
        return;
    case F_GET_EXN: /* () -> exnref of $ei(5) */
        ri_buf_u8(f, 0);
        B(BLOCK, EXN);
        try_table1(f, EMPTY, C_ALL_REF, 0, 0);
        B(0x41, 5, THROW, EI, END, UNREACHABLE, END);
        return;
    case F_RETHROW_ARG: /* (exnref) */
        ri_buf_u8(f, 0);
        B(LGET, 0, THROW_REF);
        return;
    case F_UNCAUGHT:
        ri_buf_u8(f, 0);
        B(LGET, 0, THROW, EI);
        return;
    case F_VIA_HOST: /* a try_table around a host call that fails: 1 if not caught... it is not */
        ri_buf_u8(f, 0);
        B(BLOCK, EMPTY);
        try_table1(f, EMPTY, C_ALL, 0, 0);
        B(LGET, 0, CALL, F_HOST, DROP, END, 0x41, 1, RETURN, END, 0x41, 2);
        return;
    case F_PARAM: /* (k) a try_table with a parameter: k + 1, or the payload to the function's label */
        ri_buf_u8(f, 0);
        B(LGET, 0, TRY_TABLE, T_I_I, 1, C_TAG, EI, 0, 0x41, 1, I32_ADD, LGET, 0, CALL, F_THROWER, END);
        return;
    case F_ACC: /* (k) the block's result made by an add just before its end, used by an add after
                 * it (the interpreter's accumulator): k * k + k, or the payload + k */
        ri_buf_u8(f, 0);
        B(BLOCK, I32);
        try_table1(f, I32, C_TAG, EI, 0);
        B(LGET, 0, CALL, F_THROWER, LGET, 0, LGET, 0, I32_MUL, END, END, LGET, 0, I32_ADD);
        return;
    default: fail();
    }
}

static ri_buf build_module(void) {
    ri_buf mod = {0}, s = {0};
    wasm_header(&mod);
    /* types */
    {
        ri_buf *f = &s;
        ri_buf_u8(f, NTYPES);
        B(0x60, 0, 0);                 /* T_V_V */
        B(0x60, 1, I32, 1, I32);       /* T_I_I */
        B(0x60, 1, I32, 0);            /* T_I_V */
        B(0x60, 0, 2, I32, EXN);       /* T_V_IX */
        B(0x60, 0, 1, EXN);            /* T_V_X */
        B(0x60, 1, EXN, 0);            /* T_X_V */
    }
    wasm_section(&mod, 1, &s);
    /* import: host.reenter (T_I_I) */
    ri_buf_u8(&s, 1);
    wasm_name(&s, "host");
    wasm_name(&s, "reenter");
    ri_buf_u8(&s, 0);
    ri_buf_u8(&s, T_I_I);
    wasm_section(&mod, 2, &s);
    /* functions */
    wasm_uleb(&s, NFUNCS - 1);
    for (uint32_t i = 1; i < NFUNCS; i++) ri_buf_u8(&s, func_types[i]);
    wasm_section(&mod, 3, &s);
    /* tags: $e0 [], $ei [i32], $ex [exnref] */
    ri_buf_u8(&s, 3);
    ri_buf_u8(&s, 0);
    ri_buf_u8(&s, T_V_V);
    ri_buf_u8(&s, 0);
    ri_buf_u8(&s, T_I_V);
    ri_buf_u8(&s, 0);
    ri_buf_u8(&s, T_X_V);
    wasm_section(&mod, 13, &s);
    /* exports */
    wasm_uleb(&s, NFUNCS - 1);
    for (uint32_t i = 1; i < NFUNCS; i++) {
        wasm_name(&s, names[i]);
        ri_buf_u8(&s, 0);
        wasm_uleb(&s, i);
    }
    wasm_section(&mod, 7, &s);
    /* code */
    wasm_uleb(&s, NFUNCS - 1);
    for (uint32_t i = 1; i < NFUNCS; i++) {
        ri_buf f = {0};
        emit_body(&f, i);
        body(&s, &f);
    }
    wasm_section(&mod, 10, &s);
    wasm_done(&mod);
    return mod;
}

/* ---- fixture ------------------------------------------------------------------------------- */

typedef struct fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
} fixture;

static ri_buf module_bytes;

static ri_func *fn(const fixture *fx, uint32_t index) {
    ri_extern ext;
    assert_true(ri_instance_export(fx->instance, names[index], &ext));
    return ext.of.func;
}

static int reenter_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    fixture *fx = user;
    ri_error err;
    if (ri_func_call(ri_host_call_store(call), fn(fx, F_UNCAUGHT), args, 1, results, 1, &err) != RI_OK)
        return ri_host_fail(call, "nested: %s", err.message);
    return 0;
}

static void fx_open(fixture *fx, bool unmetered) {
    if (!module_bytes.len) module_bytes = build_module();
    memset(fx, 0, sizeof *fx);
    ri_error err;
    ri_module_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.unmetered = unmetered;
    fx->module = ri_module_load(module_bytes.data, module_bytes.len, &cfg, &err);
    if (!fx->module) print_error("load: %s\n", err.message);
    assert_non_null(fx->module);
    fx->store = ri_store_new(NULL);
    assert_non_null(fx->store);
    static const ri_valtype i32[1] = {RI_I32};
    ri_functype t = {1, 1, i32, i32};
    ri_extern imp;
    imp.kind = RI_EXTERN_FUNC;
    imp.of.func = ri_func_new_host(fx->store, &t, reenter_fn, fx);
    fx->instance = ri_instantiate(fx->store, fx->module, &imp, 1, &err);
    if (!fx->instance) print_error("instantiate: %s\n", err.message);
    assert_non_null(fx->instance);
}

static void fx_close(fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

/* Calls f(k): RI_OK and the result, or the error. */
static ri_errcode call1(fixture *fx, uint32_t f, int32_t k, int32_t *out, ri_error *err) {
    ri_val a = ri_val_i32(k), r;
    ri_errcode rc = ri_func_call(fx->store, fn(fx, f), &a, 1, &r, 1, err);
    *out = rc == RI_OK ? r.of.i32 : 0;
    return rc;
}

static void expect(fixture *fx, uint32_t f, int32_t k, int32_t want) {
    int32_t got;
    ri_error err;
    ri_errcode rc = call1(fx, f, k, &got, &err);
    if (rc != RI_OK) print_error("%s(%d): %s\n", names[f], k, err.message);
    assert_int_equal(rc, RI_OK);
    if (got != want) print_error("%s(%d) = %d, want %d\n", names[f], k, got, want);
    assert_int_equal(got, want);
}

static void expect_trap(fixture *fx, uint32_t f, int32_t k, ri_trap trap) {
    int32_t got;
    ri_error err;
    assert_int_equal(call1(fx, f, k, &got, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, trap);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void each_clause_kind_branches_with_its_values(void **state) {
    (void)state;
    for (int unmetered = 0; unmetered < 2; unmetered++) {
        fixture fx;
        fx_open(&fx, unmetered);
        expect(&fx, F_CATCH, 0, 107);
        expect(&fx, F_CATCH, 2, 109);
        expect(&fx, F_CATCH, 4, 5);
        expect_trap(&fx, F_CATCH, 1, RI_TRAP_EXCEPTION); /* $e0: no clause takes it */
        expect(&fx, F_CATCH_ALL, 0, 200);
        expect(&fx, F_CATCH_ALL, 1, 200);
        expect(&fx, F_CATCH_ALL, 4, 5);
        expect(&fx, F_CATCH_REF, 0, 1007); /* caught with its exnref, thrown again, caught outside */
        expect(&fx, F_CATCH_REF, 2, 1009);
        expect(&fx, F_CATCH_REF, 4, 5);
        expect_trap(&fx, F_CATCH_REF, 3, RI_TRAP_EXCEPTION);
        expect(&fx, F_CATCH_ALL_REF, 0, 1300);
        expect(&fx, F_CATCH_ALL_REF, 3, 1300);
        expect(&fx, F_CATCH_ALL_REF, 4, 5);
        expect(&fx, F_NESTED, 0, 107);
        expect(&fx, F_NESTED, 1, 600);
        expect(&fx, F_NESTED, 5, 5);
        expect(&fx, F_LOOP, 1, 1);
        expect(&fx, F_LOOP, 50, 50);
        expect(&fx, F_FUNC_LABEL, 0, 7);
        expect(&fx, F_FUNC_LABEL, 2, 9);
        expect(&fx, F_FUNC_LABEL, 4, 5);
        expect(&fx, F_PARAM, 0, 7);
        expect(&fx, F_PARAM, 5, 6);
        expect(&fx, F_ACC, 0, 7);
        expect(&fx, F_ACC, 2, 11);
        expect(&fx, F_ACC, 6, 42);
        /* return_call leaves the try_table's frame: nothing catches */
        ri_error err;
        assert_int_equal(ri_func_call(fx.store, fn(&fx, F_TAIL), NULL, 0, NULL, 0, &err), RI_ERR_TRAP);
        assert_int_equal(err.trap, RI_TRAP_EXCEPTION);
        fx_close(&fx);
    }
}

static void legacy_and_final_forms_interoperate(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    expect(&fx, F_LEGACY_MIX, 0, 2007); /* throw_ref caught by a legacy catch $ei */
    expect(&fx, F_LEGACY_MIX, 1, 3000); /* ... by catch_all */
    expect(&fx, F_LEGACY_MIX, 6, 5);
    expect(&fx, F_LEGACY_INTO, 0, 4007); /* a legacy rethrow caught by a try_table */
    expect(&fx, F_LEGACY_INTO, 2, 4009);
    expect(&fx, F_LEGACY_INTO, 6, 5);
    /* a host frame in between: its failure is a trap, which no clause takes */
    expect_trap(&fx, F_VIA_HOST, 1, RI_TRAP_HOST);
    fx_close(&fx);
}

static void throw_ref_of_null_traps_and_exnrefs_at_the_embedder(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    ri_error err;
    ri_val a, r;
    a.type = RI_EXNREF;
    a.of.ref = NULL;
    assert_int_equal(ri_func_call(fx.store, fn(&fx, F_RETHROW_ARG), &a, 1, NULL, 0, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_NULL_EXNREF);
    assert_string_equal(err.message, "null exception reference");
    /* an exnref result is valid until the next call; it cannot go back in */
    assert_int_equal(ri_func_call(fx.store, fn(&fx, F_GET_EXN), NULL, 0, &r, 1, &err), RI_OK);
    assert_int_equal(r.type, RI_EXNREF);
    assert_non_null(r.of.ref);
    assert_int_equal(ri_func_call(fx.store, fn(&fx, F_RETHROW_ARG), &r, 1, NULL, 0, &err), RI_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "does not outlive its call"));
    fx_close(&fx);
}

/* 200,000 exceptions, one kept in a local the whole time: the store's list is collected
 * (it would hold them all) and the kept one survives (ASan: no use after free). */
static void kept_exnref_survives_collections(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    expect(&fx, F_GC, 200000, 4242);
    expect(&fx, F_GC, 3, 4242);
    fx_close(&fx);
}

static void load_error(const uint8_t *bytes, size_t len, ri_errcode code, const char *needle) {
    ri_error err;
    ri_module *m = ri_module_load(bytes, len, NULL, &err);
    if (m) print_error("loaded, want an error with '%s'\n", needle);
    assert_null(m);
    assert_int_equal(err.code, code);
    if (!strstr(err.message, needle)) print_error("'%s' lacks '%s'\n", err.message, needle);
    assert_non_null(strstr(err.message, needle));
}

/* A module of one function of type [] -> [] with `body` (locals included), tag 0 of type []. */
static ri_buf one_function(const uint8_t *body_bytes, size_t n) {
    ri_buf mod = {0};
    static const uint8_t head[] = {0, 'a', 's', 'm', 1, 0, 0, 0,
                                   1, 12, 3, 0x60, 0, 0, 0x60, 0, 1, EXN, 0x60, 0, 1, FUNC, /* types */
                                   3, 2, 1, 0,                                          /* func: type 0 */
                                   13, 3, 1, 0, 0};                                     /* tag: type 0 */
    ri_buf_put(&mod, head, sizeof head);
    ri_buf_u8(&mod, 10);
    wasm_uleb(&mod, n + 3); /* (bodies below 127 bytes) */
    ri_buf_u8(&mod, 1);
    wasm_uleb(&mod, n + 1);
    ri_buf_put(&mod, body_bytes, n);
    ri_buf_u8(&mod, END);
    wasm_done(&mod);
    return mod;
}

static void bad_try_tables_are_refused_at_load(void **state) {
    (void)state;
    static const struct {
        uint8_t body[24];
        size_t n;
        const char *needle;
    } cases[] = {
        /* catch_ref $e to a label of type []: it branches with an exnref */
        {{0, TRY_TABLE, EMPTY, 1, C_TAG_REF, 0, 0, END}, 8, "try_table clause 0 (catch_ref) branches with [exnref] to label 0 of type []"},
        /* catch_all to a block (result exnref) */
        {{0, BLOCK, EXN, TRY_TABLE, EMPTY, 1, C_ALL, 0, END, UNREACHABLE, END, DROP}, 12, "(catch_all) branches with [] to label 0 of type [exnref]"},
        /* catch_all_ref to a block (result funcref): exnref is not a funcref */
        {{0, BLOCK, FUNC, TRY_TABLE, EMPTY, 1, C_ALL_REF, 0, END, UNREACHABLE, END, DROP}, 12, "branches with [exnref] to label 0 of type [funcref]"},
        /* a label that does not exist */
        {{0, TRY_TABLE, EMPTY, 1, C_ALL, 1, END}, 7, "unknown label 1"},
        /* throw_ref of nothing */
        {{0, THROW_REF}, 2, "type mismatch"},
        /* ref.null exn where a funcref is expected */
        {{0, BLOCK, FUNC, REF_NULL, EXN, END, DROP}, 7, "type mismatch"},
        /* an unknown tag */
        {{0, TRY_TABLE, EMPTY, 1, C_TAG, 5, 0, END}, 8, "unknown tag 5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ri_buf m = one_function(cases[i].body, cases[i].n);
        load_error(m.data, m.len, RI_ERR_INVALID, cases[i].needle);
        ri_buf_free(&m);
    }
    /* valid: several clauses of a tag, catch_all before a tag's */
    static const uint8_t fine[] = {0, TRY_TABLE, EMPTY, 3, C_TAG, 0, 0, C_ALL, 0, C_TAG, 0, 0, END,
                                   BLOCK, EXN, TRY_TABLE, EMPTY, 2, C_ALL_REF, 0, C_TAG_REF, 0, 0, END, UNREACHABLE, END, DROP};
    ri_buf ok = one_function(fine, sizeof fine);
    ri_error err;
    ri_module *m1 = ri_module_load(ok.data, ok.len, NULL, &err);
    if (!m1) print_error("load: %s\n", err.message);
    assert_non_null(m1);
    ri_module_free(m1);
    ri_buf_free(&ok);
    /* a malformed clause kind */
    static const uint8_t malformed[] = {0, TRY_TABLE, EMPTY, 1, 4, 0, END};
    ri_buf m = one_function(malformed, sizeof malformed);
    load_error(m.data, m.len, RI_ERR_MALFORMED, "malformed catch clause");
    ri_buf_free(&m);
    /* a table of exnref: a clear refusal */
    static const uint8_t table[] = {0, 'a', 's', 'm', 1, 0, 0, 0, 4, 4, 1, EXN, 0, 1};
    load_error(table, sizeof table, RI_ERR_UNSUPPORTED, "a table of exnref is not supported");
}

/* ---- pauses ---------------------------------------------------------------------------------- */

static int32_t pause_ref(int32_t n) { return n + 3 * n * (n + 1) / 2; }

/* A sliced run's fixtures (the one it runs in, the fresh one a move opens: the host
 * function points at its fixture) and what its pauses showed. */
typedef struct sliced {
    fixture fx[2];
    int at;
    int32_t n; /* the argument */
    uint32_t with_refs, nested_refs, in_work;
} sliced;

static void note_pause(void *user, const slicing_world *w, const ri_suspension *d) {
    (void)w;
    sliced *run = user;
    if (d->nexnrefs) run->with_refs++;
    if (d->nexnrefs == 2) { /* y = $ex(x): entry 1 holds an exnref to entry 0 */
        run->nested_refs++;
        assert_int_equal(d->exnrefs[0].tag_index, EI);
        assert_int_equal(d->exnrefs[0].vals[0].bits, (uint64_t)run->n);
        assert_int_equal(d->exnrefs[1].tag_index, EX);
        assert_int_equal(d->exnrefs[1].vals[0].type, RI_EXNREF);
        assert_int_equal(d->exnrefs[1].vals[0].bits, 0);
    }
    if (d->nframes == 2) run->in_work++;
}

/* The suspended call, through a WSNP v2 image (FRMS), into a fresh fixture. */
static slicing_world move_through_snapshot(void *user, const slicing_world *from, const ri_suspension *d) {
    sliced *run = user;
    slicing_image x;
    slicing_image_of(from->instance, module_bytes.len, "pause_exnref", d, &x);
    assert_int_equal(x.call.suspension.nexnrefs, d->nexnrefs);
    fixture *to = &run->fx[!run->at];
    fx_open(to, false);
    slicing_world w = {to->store, to->instance};
    slicing_rebuild(&w, &x.call.suspension);
    slicing_image_free(&x);
    fx_close(&run->fx[run->at]);
    run->at = !run->at;
    return w;
}

/* Every slice size: a stop anywhere (inside try_tables, in work called from one, at the
 * catch targets) with the exnrefs live in locals; each stop described, the description
 * through a snapshot into a fresh store, resumed there; the result and the total gas are
 * the uninterrupted run's. */
static void paused_with_exnrefs_resumes_after_a_snapshot(void **state) {
    (void)state;
    const int32_t n = 4;
    fixture fx;
    fx_open(&fx, false);
    ri_store_set_gas(fx.store, UINT64_MAX / 2);
    expect(&fx, F_PAUSE, n, pause_ref(n));
    uint64_t want_gas = UINT64_MAX / 2 - ri_store_gas(fx.store);
    fx_close(&fx);
    sliced run;
    memset(&run, 0, sizeof run);
    run.n = n;
    for (uint64_t slice = 1; slice <= want_gas + 1; slice++) {
        run.at = 0;
        fx_open(&run.fx[0], false);
        slicing sl = {.slice = slice, .user = &run, .paused = note_pause, .move = move_through_snapshot};
        slicing_world w = {run.fx[0].store, run.fx[0].instance};
        ri_val a = ri_val_i32(n), r;
        slicing_outcome o = slicing_run(&sl, &w, fn(&run.fx[0], F_PAUSE), &a, 1, &r, 1);
        assert_int_equal(r.of.i32, pause_ref(n));
        assert_int_equal(o.gas, want_gas);
        fx_close(&run.fx[run.at]);
    }
    assert_true(run.with_refs > 0 && run.nested_refs > 0 && run.in_work > 0);
}

/* A rebuild refuses an exnref to no described exception, and an exception whose exnref
 * value refers to itself or a later one. */
static void rebuild_refuses_bad_exnrefs(void **state) {
    (void)state;
    fixture fx;
    fx_open(&fx, false);
    ri_store_set_suspend_mode(fx.store, RI_SUSPEND_ON_GAS);
    ri_store_set_gas(fx.store, 60);
    ri_val a = ri_val_i32(50), r;
    ri_error err;
    assert_int_equal(ri_func_call(fx.store, fn(&fx, F_PAUSE), &a, 1, &r, 1, &err), RI_ERR_SUSPENDED);
    ri_suspension d;
    assert_true(ri_store_describe_suspended(fx.store, fx.instance, &d, &err));
    assert_int_equal(d.nexnrefs, 2);
    fixture to;
    fx_open(&to, false);
    d.exnrefs[1].vals[0].bits = 1; /* itself */
    assert_false(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
    assert_non_null(strstr(err.message, "exnref 1: value 0 has the wrong type or an invalid value"));
    d.exnrefs[1].vals[0].bits = 0;
    ri_susp_value *y = &d.frames[0].locals[2];
    assert_int_equal(y->type, RI_EXNREF);
    y->bits = 2;
    assert_false(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
    assert_non_null(strstr(err.message, "local 2 has the wrong type or an invalid value"));
    /* a snapshot writer refuses it too (what a reader would refuse) */
    uint8_t *bytes = NULL;
    size_t len = 0;
    ri_snap_error serr;
    assert_false(slicing_write_call(fx.instance, module_bytes.len, "pause_exnref", &d, &bytes, &len, &serr));
    assert_non_null(strstr(serr.message, "frame 0 holds an exnref to no stored exception"));
    free(bytes);
    y->bits = 1;
    assert_true(ri_store_rebuild_suspended(to.store, to.instance, &d, &err));
    assert_int_equal(ri_store_resume(to.store, UINT64_MAX / 4, &r, 1, &err), RI_OK);
    assert_int_equal(r.of.i32, pause_ref(50));
    ri_suspension_free(&d);
    fx_close(&to);
    fx_close(&fx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_clause_kind_branches_with_its_values),
        cmocka_unit_test(legacy_and_final_forms_interoperate),
        cmocka_unit_test(throw_ref_of_null_traps_and_exnrefs_at_the_embedder),
        cmocka_unit_test(kept_exnref_survives_collections),
        cmocka_unit_test(bad_try_tables_are_refused_at_load),
        cmocka_unit_test(paused_with_exnrefs_resumes_after_a_snapshot),
        cmocka_unit_test(rebuild_refuses_bad_exnrefs),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(module_bytes.data);
    return rc;
}
