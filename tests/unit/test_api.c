/*
 * The embedder API's contract: misuse is reported as an error value (never a crash),
 * limits hold, imports are type-checked, instantiation applies segments in order and
 * runs the start function, host functions see their caller and can fail.
 * The modules are hand-written binaries below, so the test needs no external files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "ri/engine.h"

/* (module
 *   (import "env" "check" (func $check (param i32) (result i32)))
 *   (memory (export "mem") 1 2)
 *   (table (export "tab") 1 3 funcref)
 *   (global (export "g") i32 (i32.const 42))
 *   (global (export "gm") (mut i64) (i64.const -1))
 *   (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
 *   (func (export "call_check") (param i32) (result i32) local.get 0 call $check)
 *   (data (i32.const 16) "hi")) */
static const uint8_t module_main[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,             /* magic, version 1 */
    0x01, 0x0c, 0x02,                                           /* type section: 2 types */
    0x60, 0x01, 0x7f, 0x01, 0x7f,                               /*   0: [i32] -> [i32] */
    0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f,                         /*   1: [i32 i32] -> [i32] */
    0x02, 0x0d, 0x01,                                           /* import section: 1 import */
    0x03, 'e', 'n', 'v', 0x05, 'c', 'h', 'e', 'c', 'k', 0x00, 0x00, /* env.check: func type 0 */
    0x03, 0x03, 0x02, 0x01, 0x00,                               /* function section: types 1, 0 */
    0x04, 0x05, 0x01, 0x70, 0x01, 0x01, 0x03,                   /* table: funcref, min 1 max 3 */
    0x05, 0x04, 0x01, 0x01, 0x01, 0x02,                         /* memory: min 1 max 2 */
    0x06, 0x0b, 0x02,                                           /* global section: 2 globals */
    0x7f, 0x00, 0x41, 0x2a, 0x0b,                               /*   i32 const = i32.const 42 */
    0x7e, 0x01, 0x42, 0x7f, 0x0b,                               /*   i64 mut = i64.const -1 */
    0x07, 0x29, 0x06,                                           /* export section: 6 exports */
    0x03, 'm', 'e', 'm', 0x02, 0x00,                            /*   "mem" memory 0 */
    0x03, 't', 'a', 'b', 0x01, 0x00,                            /*   "tab" table 0 */
    0x01, 'g', 0x03, 0x00,                                      /*   "g" global 0 */
    0x02, 'g', 'm', 0x03, 0x01,                                 /*   "gm" global 1 */
    0x03, 'a', 'd', 'd', 0x00, 0x01,                            /*   "add" func 1 */
    0x0a, 'c', 'a', 'l', 'l', '_', 'c', 'h', 'e', 'c', 'k', 0x00, 0x02, /* "call_check" func 2 */
    0x0a, 0x10, 0x02,                                           /* code section: 2 bodies */
    0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b,             /*   local.get 0 local.get 1 i32.add end */
    0x06, 0x00, 0x20, 0x00, 0x10, 0x00, 0x0b,                   /*   local.get 0 call 0 end */
    0x0b, 0x08, 0x01,                                           /* data section: 1 segment */
    0x00, 0x41, 0x10, 0x0b, 0x02, 'h', 'i',                     /*   active, i32.const 16, "hi" */
};

/* (module
 *   (import "env" "mem" (memory 1))
 *   (data (i32.const 0) "ok")
 *   (data (i32.const 65535) "xx"))   ;; out of bounds: instantiation traps */
static const uint8_t module_data_oob[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,             /* magic, version 1 */
    0x02, 0x0c, 0x01,                                           /* import section: 1 import */
    0x03, 'e', 'n', 'v', 0x03, 'm', 'e', 'm', 0x02, 0x00, 0x01, /*   env.mem: memory min 1 */
    0x0b, 0x11, 0x02,                                           /* data section: 2 segments */
    0x00, 0x41, 0x00, 0x0b, 0x02, 'o', 'k',                     /*   active, i32.const 0, "ok" */
    0x00, 0x41, 0xff, 0xff, 0x03, 0x0b, 0x02, 'x', 'x',         /*   active, i32.const 65535, "xx" */
};

/* (module
 *   (global (export "started") (mut i32) (i32.const 0))
 *   (func $start i32.const 1 global.set 0)
 *   (start $start)) */
static const uint8_t module_start[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,             /* magic, version 1 */
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00,                         /* type section: [] -> [] */
    0x03, 0x02, 0x01, 0x00,                                     /* function section: type 0 */
    0x06, 0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b,             /* global: mut i32 = 0 */
    0x07, 0x0b, 0x01, 0x07, 's', 't', 'a', 'r', 't', 'e', 'd', 0x03, 0x00, /* export "started" */
    0x08, 0x01, 0x00,                                           /* start section: func 0 */
    0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x01, 0x24, 0x00, 0x0b, /* code: i32.const 1 global.set 0 */
};

/* (module (func (export "boom") unreachable) (func $s unreachable) (start $s)) */
static const uint8_t module_start_traps[] = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,             /* magic, version 1 */
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00,                         /* type section: [] -> [] */
    0x03, 0x03, 0x02, 0x00, 0x00,                               /* function section: 2 x type 0 */
    0x07, 0x08, 0x01, 0x04, 'b', 'o', 'o', 'm', 0x00, 0x00,     /* export "boom" func 0 */
    0x08, 0x01, 0x01,                                           /* start section: func 1 */
    0x0a, 0x09, 0x02, 0x03, 0x00, 0x00, 0x0b, 0x03, 0x00, 0x00, 0x0b, /* code: unreachable x 2 */
};

static ri_module *load(const uint8_t *bytes, size_t len) {
    ri_error err;
    ri_module *m = ri_module_load(bytes, len, NULL, &err);
    if (!m) print_error("ri_module_load: %s\n", err.message);
    assert_non_null(m);
    return m;
}

/* What the host function env.check saw on its last call. */
typedef struct check_log {
    int calls;
    ri_store *store;
    ri_instance *instance;
    ri_memory *memory;
} check_log;

/* env.check: returns its argument doubled; fails for negative arguments. */
static int host_check(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    check_log *log = user;
    log->calls++;
    log->store = ri_host_call_store(call);
    log->instance = ri_host_call_instance(call);
    log->memory = ri_host_call_memory(call);
    if (args[0].type != RI_I32) return ri_host_fail(call, "argument is not i32");
    if (args[0].of.i32 < 0) return ri_host_fail(call, "negative argument %d", args[0].of.i32);
    results[0] = ri_val_i32(args[0].of.i32 * 2);
    return 0;
}

static const ri_valtype i32_type[1] = {RI_I32};
static const ri_functype check_type = {1, 1, i32_type, i32_type};

typedef struct main_fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
    ri_func *check;
    check_log log;
} main_fixture;

static int main_setup(void **state) {
    main_fixture *fx = test_calloc(1, sizeof *fx);
    fx->module = load(module_main, sizeof module_main);
    fx->store = ri_store_new(NULL);
    assert_non_null(fx->store);
    fx->check = ri_func_new_host(fx->store, &check_type, host_check, &fx->log);
    assert_non_null(fx->check);
    ri_extern imp = {.kind = RI_EXTERN_FUNC, .of.func = fx->check};
    ri_error err;
    fx->instance = ri_instantiate(fx->store, fx->module, &imp, 1, &err);
    if (!fx->instance) print_error("ri_instantiate: %s\n", err.message);
    assert_non_null(fx->instance);
    *state = fx;
    return 0;
}

static int main_teardown(void **state) {
    main_fixture *fx = *state;
    ri_store_free(fx->store);
    ri_module_free(fx->module);
    test_free(fx);
    return 0;
}

static ri_extern export_of(main_fixture *fx, const char *name, ri_externkind kind) {
    ri_extern ext;
    memset(&ext, 0, sizeof ext);
    assert_true(ri_instance_export(fx->instance, name, &ext));
    assert_int_equal(ext.kind, kind);
    return ext;
}

/* ---- NULL arguments --------------------------------------------------------------- */

static void test_null_arguments(void **state) {
    (void)state;
    ri_error err;
    ri_store_free(NULL);
    ri_store_set_gas(NULL, 5);
    assert_int_equal(ri_store_gas(NULL), 0);
    ri_store_interrupt(NULL);
    ri_store_clear_interrupt(NULL);

    ri_store *store = ri_store_new(NULL);
    assert_non_null(store);
    ri_module *m = load(module_start, sizeof module_start);

    assert_null(ri_instantiate(NULL, m, NULL, 0, &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    assert_null(ri_instantiate(store, NULL, NULL, 0, &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);

    assert_int_equal(ri_func_call(NULL, NULL, NULL, 0, NULL, 0, &err), RI_ERR_ARGUMENT);
    assert_int_equal(ri_func_call(store, NULL, NULL, 0, NULL, 0, &err), RI_ERR_ARGUMENT);
    assert_int_equal(ri_func_call(store, NULL, NULL, 0, NULL, 0, NULL), RI_ERR_ARGUMENT);

    assert_null(ri_func_new_host(NULL, &check_type, host_check, NULL));
    assert_null(ri_func_new_host(store, NULL, host_check, NULL));
    assert_null(ri_func_new_host(store, &check_type, NULL, NULL));
    ri_functype no_params = {1, 0, NULL, NULL}; /* claims a param, gives no array */
    assert_null(ri_func_new_host(store, &no_params, host_check, NULL));
    ri_functype zero = ri_func_type(NULL);
    assert_int_equal(zero.nparams, 0);

    ri_memtype mt = {{1, 0, false}, false};
    assert_null(ri_memory_new(NULL, mt, &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    assert_int_equal(ri_memory_grow(NULL, 1), -1);
    assert_int_equal(ri_memory_size(NULL), 0);
    assert_int_equal(ri_memory_pages(NULL), 0);
    assert_null(ri_memory_data(NULL));
    uint8_t byte = 0;
    assert_false(ri_memory_read(NULL, 0, &byte, 1));
    assert_false(ri_memory_write(NULL, 0, &byte, 1));

    ri_tabletype tt = {RI_FUNCREF, {1, 0, false}};
    assert_null(ri_table_new(NULL, tt, NULL, &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    void *ref = NULL;
    assert_false(ri_table_get(NULL, 0, &ref));
    assert_false(ri_table_set(NULL, 0, NULL));
    assert_int_equal(ri_table_grow(NULL, 1, NULL), -1);
    assert_int_equal(ri_table_size(NULL), 0);

    ri_globaltype gt = {RI_I32, true};
    assert_null(ri_global_new(NULL, gt, ri_val_i32(1), &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    assert_false(ri_global_set(NULL, ri_val_i32(1)));

    ri_instance *inst = ri_instantiate(store, m, NULL, 0, &err);
    assert_non_null(inst);
    ri_extern ext;
    assert_false(ri_instance_export(NULL, "started", &ext));
    assert_false(ri_instance_export(inst, NULL, &ext));
    assert_false(ri_instance_export(inst, "started", NULL));
    assert_false(ri_instance_export(inst, "nope", &ext));
    assert_null(ri_instance_module(NULL));
    assert_ptr_equal(ri_instance_module(inst), m);

    ri_store_free(store);
    ri_module_free(m);
}

/* ---- calls ------------------------------------------------------------------------- */

static void test_call_ok(void **state) {
    main_fixture *fx = *state;
    ri_func *add = export_of(fx, "add", RI_EXTERN_FUNC).of.func;
    ri_functype t = ri_func_type(add);
    assert_int_equal(t.nparams, 2);
    assert_int_equal(t.nresults, 1);
    assert_int_equal(t.params[0], RI_I32);
    assert_int_equal(t.params[1], RI_I32);
    assert_int_equal(t.results[0], RI_I32);

    ri_val args[2] = {ri_val_i32(-7), ri_val_i32(50)};
    ri_val result;
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, add, args, 2, &result, 1, &err), RI_OK);
    assert_int_equal(err.code, RI_OK);
    assert_int_equal(result.type, RI_I32);
    assert_int_equal(result.of.i32, 43);
}

static void test_call_wrong_arity(void **state) {
    main_fixture *fx = *state;
    ri_func *add = export_of(fx, "add", RI_EXTERN_FUNC).of.func;
    ri_val args[3] = {ri_val_i32(1), ri_val_i32(2), ri_val_i32(3)};
    ri_val results[2];
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, add, args, 1, results, 1, &err), RI_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "argument"));
    assert_int_equal(ri_func_call(fx->store, add, args, 3, results, 1, &err), RI_ERR_ARGUMENT);
    assert_int_equal(ri_func_call(fx->store, add, args, 2, results, 0, &err), RI_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "result"));
    assert_int_equal(ri_func_call(fx->store, add, args, 2, results, 2, &err), RI_ERR_ARGUMENT);
    assert_int_equal(ri_func_call(fx->store, add, NULL, 2, results, 1, &err), RI_ERR_ARGUMENT);
    assert_int_equal(ri_func_call(fx->store, add, args, 2, NULL, 1, &err), RI_ERR_ARGUMENT);
}

static void test_call_wrong_types(void **state) {
    main_fixture *fx = *state;
    ri_func *add = export_of(fx, "add", RI_EXTERN_FUNC).of.func;
    ri_val args[2] = {ri_val_i32(1), ri_val_i64(2)};
    ri_val result;
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, add, args, 2, &result, 1, &err), RI_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "argument 1"));
    args[1].type = (ri_valtype)0x42; /* not a value type at all */
    assert_int_equal(ri_func_call(fx->store, add, args, 2, &result, 1, &err), RI_ERR_ARGUMENT);
}

static void test_call_other_store(void **state) {
    main_fixture *fx = *state;
    ri_func *add = export_of(fx, "add", RI_EXTERN_FUNC).of.func;
    ri_store *other = ri_store_new(NULL);
    ri_val args[2] = {ri_val_i32(1), ri_val_i32(2)};
    ri_val result;
    ri_error err;
    assert_int_equal(ri_func_call(other, add, args, 2, &result, 1, &err), RI_ERR_ARGUMENT);
    ri_store_free(other);
}

/* ---- host functions --------------------------------------------------------------- */

static void test_host_from_wasm(void **state) {
    main_fixture *fx = *state;
    ri_func *call_check = export_of(fx, "call_check", RI_EXTERN_FUNC).of.func;
    ri_memory *mem = export_of(fx, "mem", RI_EXTERN_MEMORY).of.memory;
    ri_val arg = ri_val_i32(21), result;
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, call_check, &arg, 1, &result, 1, &err), RI_OK);
    assert_int_equal(result.of.i32, 42);
    assert_int_equal(fx->log.calls, 1);
    assert_ptr_equal(fx->log.store, fx->store);
    assert_ptr_equal(fx->log.instance, fx->instance);
    assert_ptr_equal(fx->log.memory, mem);
}

static void test_host_failure(void **state) {
    main_fixture *fx = *state;
    ri_func *call_check = export_of(fx, "call_check", RI_EXTERN_FUNC).of.func;
    ri_val arg = ri_val_i32(-3), result;
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, call_check, &arg, 1, &result, 1, &err), RI_ERR_TRAP);
    assert_int_equal(err.code, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_HOST);
    assert_non_null(strstr(err.message, "negative argument -3"));

    /* The store is still usable after the trap. */
    arg = ri_val_i32(5);
    assert_int_equal(ri_func_call(fx->store, call_check, &arg, 1, &result, 1, &err), RI_OK);
    assert_int_equal(result.of.i32, 10);
}

static void test_host_direct(void **state) {
    main_fixture *fx = *state;
    ri_val arg = ri_val_i32(4), result;
    ri_error err;
    assert_int_equal(ri_func_call(fx->store, fx->check, &arg, 1, &result, 1, &err), RI_OK);
    assert_int_equal(result.type, RI_I32);
    assert_int_equal(result.of.i32, 8);
    assert_null(fx->log.instance); /* called by the embedder */
    assert_null(fx->log.memory);
    arg = ri_val_i32(-1);
    assert_int_equal(ri_func_call(fx->store, fx->check, &arg, 1, &result, 1, &err), RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_HOST);
    assert_non_null(strstr(err.message, "negative argument -1"));

    ri_functype t = ri_func_type(fx->check);
    assert_int_equal(t.nparams, 1);
    assert_int_equal(t.params[0], RI_I32);
    assert_int_equal(t.results[0], RI_I32);

    ri_valtype bogus[1] = {(ri_valtype)0x42};
    ri_functype bad = {1, 0, bogus, NULL};
    assert_null(ri_func_new_host(fx->store, &bad, host_check, NULL));
}

/* ---- globals ------------------------------------------------------------------------ */

static void test_globals(void **state) {
    main_fixture *fx = *state;
    ri_global *g = export_of(fx, "g", RI_EXTERN_GLOBAL).of.global;
    ri_global *gm = export_of(fx, "gm", RI_EXTERN_GLOBAL).of.global;
    assert_int_equal(ri_global_type(g).type, RI_I32);
    assert_false(ri_global_type(g).mutable_);
    assert_int_equal(ri_global_get(g).of.i32, 42);
    assert_false(ri_global_set(g, ri_val_i32(1))); /* immutable */
    assert_int_equal(ri_global_get(g).of.i32, 42);

    assert_true(ri_global_type(gm).mutable_);
    assert_int_equal(ri_global_get(gm).type, RI_I64);
    assert_int_equal(ri_global_get(gm).of.i64, -1);
    assert_false(ri_global_set(gm, ri_val_i32(1))); /* wrong type */
    assert_true(ri_global_set(gm, ri_val_i64(INT64_MIN)));
    assert_int_equal(ri_global_get(gm).of.i64, INT64_MIN);

    ri_error err;
    ri_globaltype ft = {RI_F32, false};
    assert_null(ri_global_new(fx->store, ft, ri_val_i32(0), &err)); /* init of another type */
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    ri_val nan = {.type = RI_F32, .of.f32_bits = 0x7fa00001u}; /* a signalling NaN survives */
    ri_global *fg = ri_global_new(fx->store, ft, nan, &err);
    assert_non_null(fg);
    assert_int_equal(ri_global_get(fg).of.f32_bits, 0x7fa00001u);
}

/* ---- memories ----------------------------------------------------------------------- */

static void test_memory_bounds(void **state) {
    main_fixture *fx = *state;
    ri_memory *mem = export_of(fx, "mem", RI_EXTERN_MEMORY).of.memory;
    assert_int_equal(ri_memory_pages(mem), 1);
    assert_int_equal(ri_memory_size(mem), 65536);
    char hi[3] = {0};
    assert_true(ri_memory_read(mem, 16, hi, 2)); /* the data segment */
    assert_string_equal(hi, "hi");

    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    assert_true(ri_memory_write(mem, 65536 - 8, buf, 8));
    assert_false(ri_memory_write(mem, 65536 - 7, buf, 8));
    assert_false(ri_memory_write(mem, 65537, buf, 0));
    assert_true(ri_memory_write(mem, 65536, buf, 0));
    assert_false(ri_memory_read(mem, UINT64_MAX - 2, out, 8)); /* offset + len wraps */
    assert_false(ri_memory_read(mem, 0, out, SIZE_MAX));
    assert_true(ri_memory_read(mem, 65536 - 8, out, 8));
    assert_memory_equal(out, buf, 8);
    assert_int_equal(ri_memory_data(mem)[65535], 8);
}

static void test_memory_grow_limits(void **state) {
    main_fixture *fx = *state;
    ri_memory *mem = export_of(fx, "mem", RI_EXTERN_MEMORY).of.memory; /* max 2 */
    assert_int_equal(ri_memory_grow(mem, 0), 1);
    assert_int_equal(ri_memory_grow(mem, 2), -1);
    assert_int_equal(ri_memory_pages(mem), 1);
    assert_int_equal(ri_memory_grow(mem, UINT32_MAX), -1);
    assert_int_equal(ri_memory_grow(mem, 1), 1);
    assert_int_equal(ri_memory_pages(mem), 2);
    assert_int_equal(ri_memory_size(mem), 2 * 65536);
    assert_int_equal(ri_memory_type(mem).limits.min, 2);
    assert_int_equal(ri_memory_data(mem)[2 * 65536 - 1], 0); /* new pages are zero */
    assert_int_equal(ri_memory_grow(mem, 1), -1);

    /* The store's limit caps memories without a maximum. */
    ri_store_config cfg = ri_store_config_default();
    cfg.max_memory_pages = 3;
    ri_store *small = ri_store_new(&cfg);
    ri_error err;
    ri_memtype unbounded = {{1, 0, false}, false};
    ri_memory *m = ri_memory_new(small, unbounded, &err);
    assert_non_null(m);
    assert_int_equal(ri_memory_grow(m, 3), -1);
    assert_int_equal(ri_memory_grow(m, 2), 1);
    assert_int_equal(ri_memory_grow(m, 1), -1);
    ri_memtype too_big = {{4, 0, false}, false};
    assert_null(ri_memory_new(small, too_big, &err));
    assert_int_equal(err.code, RI_ERR_LIMIT);
    ri_memtype inverted = {{2, 1, true}, false};
    assert_null(ri_memory_new(small, inverted, &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    ri_store_free(small);
}

/* ---- tables ------------------------------------------------------------------------ */

static void test_tables(void **state) {
    main_fixture *fx = *state;
    ri_table *tab = export_of(fx, "tab", RI_EXTERN_TABLE).of.table; /* min 1 max 3 */
    assert_int_equal(ri_table_size(tab), 1);
    assert_int_equal(ri_table_type(tab).elem, RI_FUNCREF);
    void *ref = fx;
    assert_true(ri_table_get(tab, 0, &ref));
    assert_null(ref);
    assert_false(ri_table_get(tab, 1, &ref));
    assert_false(ri_table_get(tab, 0, NULL));
    assert_true(ri_table_set(tab, 0, fx->check));
    assert_false(ri_table_set(tab, 1, fx->check));
    assert_int_equal(ri_table_grow(tab, 3, NULL), -1);
    assert_int_equal(ri_table_size(tab), 1);
    assert_int_equal(ri_table_grow(tab, 0, NULL), 1);
    assert_int_equal(ri_table_grow(tab, 2, fx->check), 1);
    assert_int_equal(ri_table_size(tab), 3);
    assert_true(ri_table_get(tab, 2, &ref));
    assert_ptr_equal(ref, fx->check);
    assert_int_equal(ri_table_grow(tab, 1, NULL), -1);

    ri_store_config cfg = ri_store_config_default();
    cfg.max_table_elems = 10;
    ri_store *small = ri_store_new(&cfg);
    ri_error err;
    ri_tabletype ext = {RI_EXTERNREF, {2, 0, false}};
    int token;
    ri_table *t = ri_table_new(small, ext, &token, &err);
    assert_non_null(t);
    assert_true(ri_table_get(t, 1, &ref));
    assert_ptr_equal(ref, &token);
    assert_int_equal(ri_table_grow(t, 9, NULL), -1);
    assert_int_equal(ri_table_grow(t, 8, NULL), 2);
    assert_int_equal(ri_table_grow(t, UINT32_MAX, NULL), -1);
    ri_tabletype not_ref = {RI_I32, {0, 0, false}};
    assert_null(ri_table_new(small, not_ref, NULL, &err));
    assert_int_equal(err.code, RI_ERR_ARGUMENT);
    ri_tabletype too_big = {RI_FUNCREF, {11, 0, false}};
    assert_null(ri_table_new(small, too_big, NULL, &err));
    assert_int_equal(err.code, RI_ERR_LIMIT);
    ri_store_free(small);
}

/* ---- instantiation ------------------------------------------------------------------ */

static void test_import_mismatch(void **state) {
    (void)state;
    ri_module *m = load(module_main, sizeof module_main);
    ri_store *store = ri_store_new(NULL);
    ri_error err;

    /* wrong count */
    assert_null(ri_instantiate(store, m, NULL, 0, &err));
    assert_int_equal(err.code, RI_ERR_UNLINKABLE);
    assert_int_equal(strncmp(err.message, "incompatible import type", 24), 0);

    /* wrong function type: [i32] -> [] instead of [i32] -> [i32] */
    ri_functype no_result = {1, 0, i32_type, NULL};
    check_log log = {0};
    ri_extern imp = {.kind = RI_EXTERN_FUNC, .of.func = ri_func_new_host(store, &no_result, host_check, &log)};
    assert_null(ri_instantiate(store, m, &imp, 1, &err));
    assert_int_equal(err.code, RI_ERR_UNLINKABLE);
    assert_int_equal(strncmp(err.message, "incompatible import type", 24), 0);
    assert_non_null(strstr(err.message, "check")); /* names the import */

    /* wrong kind */
    ri_memtype mt = {{1, 0, false}, false};
    imp.kind = RI_EXTERN_MEMORY;
    imp.of.memory = ri_memory_new(store, mt, &err);
    assert_null(ri_instantiate(store, m, &imp, 1, &err));
    assert_int_equal(err.code, RI_ERR_UNLINKABLE);

    /* NULL extern */
    imp.kind = RI_EXTERN_FUNC;
    imp.of.func = NULL;
    assert_null(ri_instantiate(store, m, &imp, 1, &err));
    assert_int_equal(err.code, RI_ERR_UNLINKABLE);

    /* a structurally equal host type matches, even though it was made separately */
    imp.of.func = ri_func_new_host(store, &check_type, host_check, &log);
    assert_non_null(ri_instantiate(store, m, &imp, 1, &err));

    ri_store_free(store);
    ri_module_free(m);
}

static void test_memory_import_limits(void **state) {
    (void)state;
    ri_module *m = load(module_data_oob, sizeof module_data_oob); /* imports (memory 1) */
    ri_store *store = ri_store_new(NULL);
    ri_error err;
    ri_memtype empty = {{0, 0, false}, false};
    ri_extern imp = {.kind = RI_EXTERN_MEMORY, .of.memory = ri_memory_new(store, empty, &err)};
    assert_null(ri_instantiate(store, m, &imp, 1, &err)); /* 0 pages < min 1 */
    assert_int_equal(err.code, RI_ERR_UNLINKABLE);
    assert_int_equal(strncmp(err.message, "incompatible import type", 24), 0);
    ri_store_free(store);
    ri_module_free(m);
}

static void test_data_segment_out_of_bounds(void **state) {
    (void)state;
    ri_module *m = load(module_data_oob, sizeof module_data_oob);
    ri_store *store = ri_store_new(NULL);
    ri_error err;
    ri_memtype one = {{1, 0, false}, false};
    ri_memory *mem = ri_memory_new(store, one, &err);
    ri_extern imp = {.kind = RI_EXTERN_MEMORY, .of.memory = mem};
    assert_null(ri_instantiate(store, m, &imp, 1, &err));
    assert_int_equal(err.code, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_MEMORY_OOB);
    assert_string_equal(err.message, "out of bounds memory access");
    /* The first segment stays applied; the failing one wrote nothing. */
    assert_memory_equal(ri_memory_data(mem), "ok", 2);
    assert_int_equal(ri_memory_data(mem)[65535], 0);

    /* With a second page the same module instantiates. */
    assert_int_equal(ri_memory_grow(mem, 1), 1);
    assert_non_null(ri_instantiate(store, m, &imp, 1, &err));
    assert_memory_equal(ri_memory_data(mem) + 65535, "xx", 2);
    ri_store_free(store);
    ri_module_free(m);
}

static void test_start_function(void **state) {
    (void)state;
    ri_module *m = load(module_start, sizeof module_start);
    ri_store *store = ri_store_new(NULL);
    ri_error err;
    ri_instance *inst = ri_instantiate(store, m, NULL, 0, &err);
    assert_non_null(inst);
    ri_extern ext;
    assert_true(ri_instance_export(inst, "started", &ext));
    assert_int_equal(ext.kind, RI_EXTERN_GLOBAL);
    assert_int_equal(ri_global_get(ext.of.global).of.i32, 1);
    ri_store_free(store);
    ri_module_free(m);
}

static void test_start_function_traps(void **state) {
    (void)state;
    ri_module *m = load(module_start_traps, sizeof module_start_traps);
    ri_store *store = ri_store_new(NULL);
    ri_error err;
    assert_null(ri_instantiate(store, m, NULL, 0, &err));
    assert_int_equal(err.code, RI_ERR_TRAP);
    assert_int_equal(err.trap, RI_TRAP_UNREACHABLE);
    ri_store_free(store);
    ri_module_free(m);
}

/* Stores are independent: the module outlives a store, and a store outlives the
 * embedder's module handle (the instance keeps its own reference). */
static void test_module_lifetime(void **state) {
    (void)state;
    ri_module *m = load(module_start, sizeof module_start);
    ri_store *a = ri_store_new(NULL), *b = ri_store_new(NULL);
    ri_error err;
    assert_non_null(ri_instantiate(a, m, NULL, 0, &err));
    ri_instance *ib = ri_instantiate(b, m, NULL, 0, &err);
    assert_non_null(ib);
    ri_store_free(a);
    ri_module_free(m);
    ri_extern ext;
    assert_true(ri_instance_export(ib, "started", &ext));
    assert_int_equal(ri_global_get(ext.of.global).of.i32, 1);
    ri_store_free(b);
}

static void test_store_config(void **state) {
    (void)state;
    ri_store_config d = ri_store_config_default();
    assert_int_equal(d.max_call_depth, 10000);
    assert_int_equal(d.max_stack_slots, 1048576);
    assert_int_equal(d.max_memory_pages, 65536);
    assert_int_equal(d.max_table_elems, 10000000);
    assert_true(d.canonicalize_nans);

    ri_store *s = ri_store_new(NULL);
    assert_int_equal(ri_store_gas(s), UINT64_MAX);
    ri_store_set_gas(s, 123);
    assert_int_equal(ri_store_gas(s), 123);
    ri_store_interrupt(s);
    ri_store_clear_interrupt(s);
    ri_store_free(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test_setup_teardown(test_call_ok, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_call_wrong_arity, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_call_wrong_types, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_call_other_store, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_host_from_wasm, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_host_failure, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_host_direct, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_globals, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_memory_bounds, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_memory_grow_limits, main_setup, main_teardown),
        cmocka_unit_test_setup_teardown(test_tables, main_setup, main_teardown),
        cmocka_unit_test(test_import_mismatch),
        cmocka_unit_test(test_memory_import_limits),
        cmocka_unit_test(test_data_segment_out_of_bounds),
        cmocka_unit_test(test_start_function),
        cmocka_unit_test(test_start_function_traps),
        cmocka_unit_test(test_module_lifetime),
        cmocka_unit_test(test_store_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
