/*
 * Loading and import isolation (seed 001, reference "load()"): the byte checks and
 * their exact messages, import rules walked in order with the first failure winning,
 * and the check of each import's kind and signature against what the sandbox provides.
 * Fixtures: tests/wat/sb_*.wat (sb_imp_* for the import cases).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

static ri_sandbox_config test_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    return c;
}

static int double_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = ri_val_i32(args[0].of.i32 * 2);
    return 0;
}

static const ri_valtype I32[] = {RI_I32};

/* A config declaring env.double (i32) -> i32. */
static ri_sandbox_config config_with_double(ri_host_function *storage) {
    ri_host_function h = {"double", 1, I32, 1, I32, double_fn, NULL};
    *storage = h;
    ri_sandbox_config c = test_config();
    c.host_functions = storage;
    c.nhost_functions = 1;
    return c;
}

/* A fresh factory and sandbox per case; the result of loading bytes into it. */
typedef struct load_case {
    ri_sandboxes *factory;
    ri_sandbox *sb;
    bool ok;
    ri_sandbox_error err;
} load_case;

static void load_bytes(load_case *lc, const ri_sandbox_config *cfg, const uint8_t *bytes, size_t len) {
    memset(lc, 0, sizeof *lc);
    lc->factory = ri_sandboxes_new();
    assert_non_null(lc->factory);
    ri_sandbox_error err;
    lc->sb = ri_sandbox_create(lc->factory, cfg, &err);
    assert_non_null(lc->sb);
    lc->ok = ri_sandbox_load(lc->sb, bytes, len, &lc->err);
}

static void load_named(load_case *lc, const ri_sandbox_config *cfg, const char *fixture) {
    size_t len = 0;
    uint8_t *wasm = read_fixture(fixture, &len);
    load_bytes(lc, cfg, wasm, len);
    free(wasm);
}

static void close_case(load_case *lc) {
    ri_sandbox_free(lc->sb);
    ri_sandboxes_free(lc->factory);
}

/* Expects load to have failed as INVALID_MODULE with exactly this message; the sandbox
 * stays `created`. */
static void expect_rejected(load_case *lc, const char *message) {
    assert_false(lc->ok);
    assert_int_equal(lc->err.code, RI_SANDBOX_INVALID_MODULE);
    assert_string_equal(lc->err.message, message);
    assert_int_equal(ri_sandbox_status_of(lc->sb), RI_SANDBOX_CREATED);
}

/* Expects load to have failed as INVALID_MODULE with a message starting with prefix and
 * mentioning `mention` (when given). */
static void expect_rejected_like(load_case *lc, const char *prefix, const char *mention) {
    assert_false(lc->ok);
    assert_int_equal(lc->err.code, RI_SANDBOX_INVALID_MODULE);
    if (prefix && strncmp(lc->err.message, prefix, strlen(prefix)) != 0) {
        print_error("message \"%s\" does not start with \"%s\"\n", lc->err.message, prefix);
        fail();
    }
    if (mention && !strstr(lc->err.message, mention)) {
        print_error("message \"%s\" does not mention \"%s\"\n", lc->err.message, mention);
        fail();
    }
    assert_int_equal(ri_sandbox_status_of(lc->sb), RI_SANDBOX_CREATED);
}

static void expect_loaded(load_case *lc) {
    if (!lc->ok) print_error("load failed: %s\n", lc->err.message);
    assert_true(lc->ok);
    assert_int_equal(ri_sandbox_status_of(lc->sb), RI_SANDBOX_LOADED);
}

/* ---- byte checks ------------------------------------------------------------------ */

static void empty_bytes_are_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    static const uint8_t none[1] = {0};
    load_case lc;
    load_bytes(&lc, &c, none, 0);
    expect_rejected(&lc, "Failed to load WASM module: Empty WASM bytes — module must not be empty");
    close_case(&lc);
}

static void four_bytes_are_too_small(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    static const uint8_t four[] = {0x00, 0x61, 0x73, 0x6d};
    load_case lc;
    load_bytes(&lc, &c, four, sizeof four);
    expect_rejected(&lc, "Failed to load WASM module: WASM module too small: 4 bytes (minimum 8)");
    close_case(&lc);
}

static void seven_bytes_are_too_small(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    static const uint8_t seven[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00};
    load_case lc;
    load_bytes(&lc, &c, seven, sizeof seven);
    expect_rejected(&lc, "Failed to load WASM module: WASM module too small: 7 bytes (minimum 8)");
    close_case(&lc);
}

static void bad_magic_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    static const uint8_t junk[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    load_case lc;
    load_bytes(&lc, &c, junk, sizeof junk);
    /* The original's text has a literal backslash before the 0. */
    expect_rejected(&lc, "Failed to load WASM module: Invalid WASM magic bytes — expected \\0asm header");
    close_case(&lc);
}

static void bad_magic_with_long_body_is_rejected_before_decoding(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    uint8_t bytes[64];
    memset(bytes, 0xAB, sizeof bytes);
    load_case lc;
    load_bytes(&lc, &c, bytes, sizeof bytes);
    expect_rejected(&lc, "Failed to load WASM module: Invalid WASM magic bytes — expected \\0asm header");
    close_case(&lc);
}

static void undecodable_module_is_compilation_failure(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    /* Valid header, then a type section whose size runs past the end. */
    static const uint8_t bad[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x7f, 0x01};
    load_case lc;
    load_bytes(&lc, &c, bad, sizeof bad);
    expect_rejected_like(&lc, "Failed to load WASM module: WASM compilation failed: ", NULL);
    /* A detail follows the prefix. */
    assert_true(strlen(lc.err.message) > strlen("Failed to load WASM module: WASM compilation failed: "));
    close_case(&lc);
}

static void wrong_version_is_compilation_failure(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    static const uint8_t v2[] = {0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00};
    load_case lc;
    load_bytes(&lc, &c, v2, sizeof v2);
    expect_rejected_like(&lc, "Failed to load WASM module: WASM compilation failed: ", NULL);
    close_case(&lc);
}

static void invalid_function_body_is_compilation_failure(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    /* (func (result i32)) with an empty body: fails validation (missing result). */
    static const uint8_t bad[] = {
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
        0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, /* type: () -> i32 */
        0x03, 0x02, 0x01, 0x00,                   /* func 0: type 0 */
        0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b,       /* body: no locals, end */
    };
    load_case lc;
    load_bytes(&lc, &c, bad, sizeof bad);
    expect_rejected_like(&lc, "Failed to load WASM module: WASM compilation failed: ", NULL);
    close_case(&lc);
}

static void minimal_empty_module_loads(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    static const uint8_t minimal[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
    load_case lc;
    load_bytes(&lc, &c, minimal, sizeof minimal);
    expect_loaded(&lc);
    close_case(&lc);
}

/* ---- accepted imports ---------------------------------------------------------------- */

static void module_without_imports_loads(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_add");
    expect_loaded(&lc);
    close_case(&lc);
}

static void memory_import_is_accepted(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_memimport");
    expect_loaded(&lc);
    close_case(&lc);
}

static void get_time_import_is_accepted(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_time");
    expect_loaded(&lc);
    close_case(&lc);
}

static void get_random_import_is_accepted(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_random");
    expect_loaded(&lc);
    close_case(&lc);
}

static void all_system_imports_together_are_accepted(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_system");
    expect_loaded(&lc);
    ri_sandbox_result r = ri_sandbox_execute(lc.sb, "both", NULL);
    assert_true(r.ok);
    /* __get_time() ^ __get_random() with seed 0: -807049216 ^ 1144304738. */
    assert_int_equal(r.results[0].of.i32, -1949180830);
    assert_int_equal(r.gas_used, 2);
    ri_sandbox_result_free(&r);
    close_case(&lc);
}

static void declared_host_function_import_is_accepted(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_hostcall");
    expect_loaded(&lc);
    close_case(&lc);
}

static void declared_but_unused_host_function_is_fine(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_add");
    expect_loaded(&lc);
    close_case(&lc);
}

/* ---- rejected imports, exact texts ------------------------------------------------------ */

static void wasi_preview1_is_blocked(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_wasi");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports from blocked namespace "
                    "'wasi_snapshot_preview1' (import: 'fd_write'). WASI and system interfaces are "
                    "not allowed in deterministic sandboxes.");
    close_case(&lc);
}

static void wasi_unstable_is_blocked(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_wasi_unstable");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports from blocked namespace "
                    "'wasi_unstable' (import: 'proc_exit'). WASI and system interfaces are not "
                    "allowed in deterministic sandboxes.");
    close_case(&lc);
}

static void wasi_namespace_is_blocked(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_wasi_plain");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports from blocked namespace 'wasi' "
                    "(import: 'random_get'). WASI and system interfaces are not allowed in "
                    "deterministic sandboxes.");
    close_case(&lc);
}

static void custom_namespace_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_custom");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports from undeclared namespace "
                    "'custom_ns' (import: 'something'). Only the 'env' namespace is supported.");
    close_case(&lc);
}

static void undeclared_env_function_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_undeclared");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports undeclared function "
                    "'env.undeclared_fn'. Only declared host functions and system imports "
                    "(memory, __get_time, __get_random) are allowed.");
    close_case(&lc);
}

static void host_import_without_declaration_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_hostcall");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports undeclared function "
                    "'env.double'. Only declared host functions and system imports "
                    "(memory, __get_time, __get_random) are allowed.");
    close_case(&lc);
}

static void one_of_two_host_functions_undeclared_is_rejected(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_multihost");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports undeclared function "
                    "'env.triple'. Only declared host functions and system imports "
                    "(memory, __get_time, __get_random) are allowed.");
    close_case(&lc);
}

static void first_failing_import_wins(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_first_wins");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports undeclared function "
                    "'env.undeclared_fn'. Only declared host functions and system imports "
                    "(memory, __get_time, __get_random) are allowed.");
    close_case(&lc);
}

static void blocked_namespace_before_undeclared_namespace(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_wasi_then_custom");
    expect_rejected(&lc,
                    "Import validation failed: WASM module imports from blocked namespace "
                    "'wasi_snapshot_preview1' (import: 'fd_write'). WASI and system interfaces are "
                    "not allowed in deterministic sandboxes.");
    close_case(&lc);
}

/* ---- kind and signature checks (beyond the original) ------------------------------------ */

static void host_function_imported_as_global_is_rejected(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_imp_kind_global");
    expect_rejected_like(&lc, NULL, "double");
    close_case(&lc);
}

static void host_function_with_other_params_is_rejected(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_imp_sig_i64");
    expect_rejected_like(&lc, NULL, "double");
    close_case(&lc);
}

static void host_function_without_its_result_is_rejected(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_imp_sig_noresult");
    expect_rejected_like(&lc, NULL, "double");
    close_case(&lc);
}

static void get_time_with_wrong_signature_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_time_sig");
    expect_rejected_like(&lc, NULL, "__get_time");
    close_case(&lc);
}

static void get_random_imported_as_global_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_random_global");
    expect_rejected_like(&lc, NULL, "__get_random");
    close_case(&lc);
}

static void memory_imported_as_function_is_rejected(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_imp_memory_func");
    expect_rejected_like(&lc, NULL, "memory");
    close_case(&lc);
}

/* ---- instantiation ----------------------------------------------------------------------- */

static void trapping_start_function_fails_instantiation(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_start_trap");
    expect_rejected_like(&lc, "Failed to instantiate WASM module: ", NULL);
    close_case(&lc);
}

static void rejected_reload_keeps_working_module(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_add");
    expect_loaded(&lc);
    size_t len = 0;
    uint8_t *wasm = read_fixture("sb_start_trap", &len);
    ri_sandbox_error err;
    assert_false(ri_sandbox_load(lc.sb, wasm, len, &err));
    free(wasm);
    assert_int_equal(ri_sandbox_status_of(lc.sb), RI_SANDBOX_LOADED);
    ri_sandbox_result r = ri_sandbox_execute(lc.sb, "add", "[40,2]");
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 42);
    ri_sandbox_result_free(&r);
    close_case(&lc);
}

static void failed_load_leaves_prng_untouched(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    load_case lc;
    load_named(&lc, &c, "sb_random");
    expect_loaded(&lc);
    ri_sandbox_result r = ri_sandbox_execute(lc.sb, "getRandom", NULL);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 1144304738);
    ri_sandbox_result_free(&r);
    /* The start function draws, then traps: the load fails and changes nothing. */
    size_t len = 0;
    uint8_t *wasm = read_fixture("sb_start_random_trap", &len);
    ri_sandbox_error err;
    assert_false(ri_sandbox_load(lc.sb, wasm, len, &err));
    free(wasm);
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    r = ri_sandbox_execute(lc.sb, "getRandom", NULL);
    assert_true(r.ok);
    /* Seed 0's second output: the failed start's draw did not count. */
    assert_int_equal(r.results[0].of.i32, 1416247);
    ri_sandbox_result_free(&r);
    close_case(&lc);
}

static void loaded_host_function_is_callable(void **state) {
    (void)state;
    ri_host_function h;
    ri_sandbox_config c = config_with_double(&h);
    load_case lc;
    load_named(&lc, &c, "sb_hostcall");
    expect_loaded(&lc);
    ri_sandbox_result r = ri_sandbox_execute(lc.sb, "callDouble", "21");
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 42);
    ri_sandbox_result_free(&r);
    close_case(&lc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_bytes_are_rejected),
        cmocka_unit_test(four_bytes_are_too_small),
        cmocka_unit_test(seven_bytes_are_too_small),
        cmocka_unit_test(bad_magic_is_rejected),
        cmocka_unit_test(bad_magic_with_long_body_is_rejected_before_decoding),
        cmocka_unit_test(undecodable_module_is_compilation_failure),
        cmocka_unit_test(wrong_version_is_compilation_failure),
        cmocka_unit_test(invalid_function_body_is_compilation_failure),
        cmocka_unit_test(minimal_empty_module_loads),
        cmocka_unit_test(module_without_imports_loads),
        cmocka_unit_test(memory_import_is_accepted),
        cmocka_unit_test(get_time_import_is_accepted),
        cmocka_unit_test(get_random_import_is_accepted),
        cmocka_unit_test(all_system_imports_together_are_accepted),
        cmocka_unit_test(declared_host_function_import_is_accepted),
        cmocka_unit_test(declared_but_unused_host_function_is_fine),
        cmocka_unit_test(wasi_preview1_is_blocked),
        cmocka_unit_test(wasi_unstable_is_blocked),
        cmocka_unit_test(wasi_namespace_is_blocked),
        cmocka_unit_test(custom_namespace_is_rejected),
        cmocka_unit_test(undeclared_env_function_is_rejected),
        cmocka_unit_test(host_import_without_declaration_is_rejected),
        cmocka_unit_test(one_of_two_host_functions_undeclared_is_rejected),
        cmocka_unit_test(first_failing_import_wins),
        cmocka_unit_test(blocked_namespace_before_undeclared_namespace),
        cmocka_unit_test(host_function_imported_as_global_is_rejected),
        cmocka_unit_test(host_function_with_other_params_is_rejected),
        cmocka_unit_test(host_function_without_its_result_is_rejected),
        cmocka_unit_test(get_time_with_wrong_signature_is_rejected),
        cmocka_unit_test(get_random_imported_as_global_is_rejected),
        cmocka_unit_test(memory_imported_as_function_is_rejected),
        cmocka_unit_test(trapping_start_function_fails_instantiation),
        cmocka_unit_test(rejected_reload_keeps_working_module),
        cmocka_unit_test(failed_load_leaves_prng_untouched),
        cmocka_unit_test(loaded_host_function_is_callable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
