/*
 * Sandbox lifecycle: configuration defaults, ids, the five statuses and their
 * transitions (seed 001 §4, including the real `suspended`), idempotent destroy, live
 * metrics, isolation between instances. Fixtures: tests/wat/sb_*.wat.
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

/* The seed's defaults plus the required timestamp; a generous timeout because these
 * tests are about statuses, not time. */
static ri_sandbox_config test_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    return c;
}

static ri_sandbox *new_sandbox(ri_sandboxes *f, const ri_sandbox_config *cfg) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    ri_sandbox *sb = ri_sandbox_create(f, cfg, &err);
    if (!sb) print_error("create: %s\n", err.message);
    assert_non_null(sb);
    return sb;
}

static bool load_fixture(ri_sandbox *sb, const char *name, ri_sandbox_error *err) {
    size_t len = 0;
    uint8_t *wasm = read_fixture(name, &len);
    bool ok = ri_sandbox_load(sb, wasm, len, err);
    free(wasm);
    return ok;
}

static ri_sandbox *new_loaded(ri_sandboxes *f, const ri_sandbox_config *cfg, const char *name) {
    ri_sandbox *sb = new_sandbox(f, cfg);
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    if (!load_fixture(sb, name, &err)) {
        print_error("load %s: %s\n", name, err.message);
        fail();
    }
    return sb;
}

/* Executes and expects a single i32 result. */
static int32_t exec_i32(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s(%s): %s\n", action, payload ? payload : "", r.error.message);
    assert_true(r.ok);
    assert_int_equal(r.nresults, 1);
    assert_int_equal(r.results[0].type, RI_I32);
    int32_t v = r.results[0].of.i32;
    ri_sandbox_result_free(&r);
    return v;
}

/* ---- configuration ---------------------------------------------------------- */

static void config_default_has_seed_defaults(void **state) {
    (void)state;
    ri_sandbox_config c = ri_sandbox_config_default();
    assert_int_equal(c.max_memory_bytes, 16777216u);
    assert_int_equal(c.max_gas, 1000000u);
    assert_int_equal(c.max_execution_ms, 50u);
    assert_int_equal(c.deterministic_seed, 0u);
    assert_false(c.has_event_timestamp);
    assert_null(c.host_functions);
    assert_int_equal(c.nhost_functions, 0);
    assert_int_equal(c.gas_schedule, RI_GAS_HOST_CALLS);
    assert_int_equal(c.max_call_depth, 0);
}

static void default_constants_match_seed(void **state) {
    (void)state;
    assert_int_equal(RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES, 16777216u);
    assert_int_equal(RI_SANDBOX_DEFAULT_MAX_GAS, 1000000u);
    assert_int_equal(RI_SANDBOX_DEFAULT_MAX_EXECUTION_MS, 50u);
    assert_int_equal(RI_SANDBOX_DEFAULT_SEED, 0u);
}

static void create_without_event_timestamp_fails(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    assert_non_null(f);
    ri_sandbox_config c = ri_sandbox_config_default();
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    assert_true(strlen(err.message) > 0);
    ri_sandboxes_free(f);
}

static void create_with_timestamp_starts_created(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_CREATED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void create_ids_are_sandbox_counter(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *a = new_sandbox(f, &c);
    ri_sandbox *b = new_sandbox(f, &c);
    const char *ia = ri_sandbox_id(a), *ib = ri_sandbox_id(b);
    assert_non_null(ia);
    assert_non_null(ib);
    assert_memory_equal(ia, "sandbox-", 8);
    assert_memory_equal(ib, "sandbox-", 8);
    char *end = NULL;
    unsigned long na = strtoul(ia + 8, &end, 10);
    assert_true(end != ia + 8 && *end == '\0');
    unsigned long nb = strtoul(ib + 8, &end, 10);
    assert_true(end != ib + 8 && *end == '\0');
    /* One counter: consecutive creates get consecutive numbers. */
    assert_int_equal(nb, na + 1);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
    ri_sandboxes_free(f);
}

static void create_ids_are_unique(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    enum { N = 64 };
    ri_sandbox *sbs[N];
    for (int i = 0; i < N; i++) sbs[i] = new_sandbox(f, &c);
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            assert_string_not_equal(ri_sandbox_id(sbs[i]), ri_sandbox_id(sbs[j]));
    for (int i = 0; i < N; i++) ri_sandbox_free(sbs[i]);
    ri_sandboxes_free(f);
}

static void create_copies_config(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    c.max_memory_bytes = 196608;
    c.max_gas = 77;
    c.max_execution_ms = 1234;
    c.deterministic_seed = 42;
    c.event_timestamp = 5;
    ri_sandbox *sb = new_sandbox(f, &c);
    /* Changing the caller's struct afterwards must not reach the sandbox. */
    c.max_gas = 1;
    c.deterministic_seed = 7;
    const ri_sandbox_config *got = ri_sandbox_get_config(sb);
    assert_non_null(got);
    assert_int_equal(got->max_memory_bytes, 196608u);
    assert_int_equal(got->max_gas, 77u);
    assert_int_equal(got->max_execution_ms, 1234u);
    assert_int_equal(got->deterministic_seed, 42u);
    assert_true(got->has_event_timestamp);
    assert_int_equal(got->event_timestamp, 5);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void create_metrics_show_config_limits(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    c.max_memory_bytes = 196608;
    c.max_gas = 500000;
    c.max_execution_ms = 75;
    ri_sandbox *sb = new_sandbox(f, &c);
    ri_sandbox_metrics m = ri_sandbox_get_metrics(sb);
    assert_int_equal(m.memory_limit_bytes, 196608u);
    assert_int_equal(m.gas_limit, 500000u);
    assert_int_equal(m.execution_limit_ms, 75u);
    assert_int_equal(m.gas_used, 0);
    /* The sandbox's memory exists from create on: one page. */
    assert_int_equal(m.memory_used_bytes, 65536);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void create_accepts_zero_gas_budget(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    c.max_gas = 0;
    ri_sandbox *sb = new_sandbox(f, &c);
    assert_int_equal(ri_sandbox_get_metrics(sb).gas_limit, 0);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void create_with_zero_memory_limit_fails(void **state) {
    (void)state;
    /* The sandbox memory has at least one page; the original's create() throws too. */
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    c.max_memory_bytes = 0;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    assert_true(strlen(err.message) > 0);
    ri_sandboxes_free(f);
}

static void create_with_host_function_without_callback_fails(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_host_function h = {"double", 0, NULL, 0, NULL, NULL, NULL};
    ri_sandbox_config c = test_config();
    c.host_functions = &h;
    c.nhost_functions = 1;
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    assert_non_null(strstr(err.message, "double"));
    ri_sandboxes_free(f);
}

/* ---- statuses and transitions ------------------------------------------------ */

static void load_moves_created_to_loaded(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    ri_sandbox_error err;
    assert_true(load_fixture(sb, "sb_add", &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void failed_load_leaves_created(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    static const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8};
    ri_sandbox_error err;
    assert_false(ri_sandbox_load(sb, junk, sizeof junk, &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_CREATED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void execute_leaves_loaded_after_success(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    assert_int_equal(exec_i32(sb, "add", "[1,1]"), 2);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void execute_leaves_loaded_after_trap(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_traps");
    ri_sandbox_result r = ri_sandbox_execute(sb, "unreachable", NULL);
    assert_false(r.ok);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(sb, "ok", NULL), 1);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void execute_leaves_loaded_after_missing_export(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_result r = ri_sandbox_execute(sb, "nonExistent", "[1]");
    assert_false(r.ok);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* What a probe host function sees of its own sandbox while it runs. */
typedef struct probe_ctx {
    ri_sandbox *sb;
    int calls;
    ri_sandbox_status status[8];
    uint64_t gas[8];
} probe_ctx;

static int probe_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    probe_ctx *p = user;
    if (p->calls < 8) {
        p->status[p->calls] = ri_sandbox_status_of(p->sb);
        p->gas[p->calls] = ri_sandbox_get_metrics(p->sb).gas_used;
    }
    p->calls++;
    return 0;
}

static ri_sandbox *new_probe_sandbox(ri_sandboxes *f, probe_ctx *p) {
    static const ri_host_function hf = {"probe", 0, NULL, 0, NULL, probe_fn, NULL};
    ri_host_function h = hf;
    h.user = p;
    ri_sandbox_config c = test_config();
    c.host_functions = &h;
    c.nhost_functions = 1;
    ri_sandbox *sb = new_loaded(f, &c, "sb_probe");
    p->sb = sb;
    return sb;
}

static void status_is_running_during_execution(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    probe_ctx p;
    memset(&p, 0, sizeof p);
    ri_sandbox *sb = new_probe_sandbox(f, &p);
    assert_int_equal(exec_i32(sb, "probe1", NULL), 7);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.status[0], RI_SANDBOX_RUNNING);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void metrics_are_live_during_execution(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    probe_ctx p;
    memset(&p, 0, sizeof p);
    ri_sandbox *sb = new_probe_sandbox(f, &p);
    ri_sandbox_result r = ri_sandbox_execute(sb, "probe3", NULL);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    assert_int_equal(p.calls, 3);
    /* Each import call is charged before it runs: the n-th call sees n. */
    assert_int_equal(p.gas[0], 1);
    assert_int_equal(p.gas[1], 2);
    assert_int_equal(p.gas[2], 3);
    assert_int_equal(ri_sandbox_get_metrics(sb).gas_used, 3);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* A host function that tries to execute its own sandbox again. */
typedef struct nested_ctx {
    ri_sandbox *sb;
    bool ok;
    ri_sandbox_error err;
} nested_ctx;

static int nested_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    nested_ctx *n = user;
    ri_sandbox_result r = ri_sandbox_execute(n->sb, "probe1", NULL);
    n->ok = r.ok;
    n->err = r.error;
    ri_sandbox_result_free(&r);
    return 0;
}

static void nested_execute_from_host_is_refused(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    nested_ctx n;
    memset(&n, 0, sizeof n);
    ri_host_function h = {"probe", 0, NULL, 0, NULL, nested_fn, &n};
    ri_sandbox_config c = test_config();
    c.host_functions = &h;
    c.nhost_functions = 1;
    ri_sandbox *sb = new_loaded(f, &c, "sb_probe");
    n.sb = sb;
    /* Seed 001 §4: execute starts from `loaded` only; `running` goes back to loaded. */
    ri_sandbox_result r = ri_sandbox_execute(sb, "probe1", NULL);
    assert_true(r.ok);
    assert_int_equal(r.results[0].of.i32, 7);
    assert_int_equal(r.gas_used, 1);
    ri_sandbox_result_free(&r);
    assert_false(n.ok);
    assert_int_equal(n.err.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(n.err.trap_kind, "invalid_state");
    assert_string_equal(n.err.message, "Cannot execute: instance status is 'running'");
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void execute_on_created_is_invalid_state(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[1,2]");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(r.error.trap_kind, "invalid_state");
    assert_string_equal(r.error.message, "Cannot execute: instance status is 'created'");
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_CREATED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void suspend_moves_loaded_to_suspended(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(sb, &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_SUSPENDED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void execute_on_suspended_is_refused(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(sb, &err));
    ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[1,2]");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_WASM_TRAP);
    assert_string_equal(r.error.trap_kind, "invalid_state");
    assert_string_equal(r.error.message, "Cannot execute: instance status is 'suspended'");
    ri_sandbox_result_free(&r);
    /* Refusing does not change the status. */
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_SUSPENDED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void call_on_suspended_is_refused(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(sb, &err));
    ri_val args[2] = {ri_val_i32(1), ri_val_i32(2)};
    ri_sandbox_result r = ri_sandbox_call(sb, "add", args, 2);
    assert_false(r.ok);
    assert_string_equal(r.error.trap_kind, "invalid_state");
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void restore_brings_suspended_back_to_loaded(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_error err;
    assert_true(ri_sandbox_suspend(sb, &err));
    uint8_t *snap = NULL;
    size_t len = 0;
    /* A suspended sandbox is stable: it may be snapshotted. */
    assert_true(ri_sandbox_snapshot(sb, &snap, &len, &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_SUSPENDED);
    assert_true(ri_sandbox_restore(sb, snap, len, &err));
    free(snap);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(sb, "add", "[2,3]"), 5);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void suspend_on_created_fails(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_suspend(sb, &err));
    assert_true(strlen(err.message) > 0);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_CREATED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void suspend_on_destroyed_fails(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_destroy(sb);
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(ri_sandbox_suspend(sb, &err));
    assert_true(strlen(err.message) > 0);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_DESTROYED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void destroy_from_every_status(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox_error err;

    ri_sandbox *created = new_sandbox(f, &c);
    ri_sandbox_destroy(created);
    assert_int_equal(ri_sandbox_status_of(created), RI_SANDBOX_DESTROYED);

    ri_sandbox *loaded = new_loaded(f, &c, "sb_add");
    ri_sandbox_destroy(loaded);
    assert_int_equal(ri_sandbox_status_of(loaded), RI_SANDBOX_DESTROYED);

    ri_sandbox *suspended = new_loaded(f, &c, "sb_add");
    assert_true(ri_sandbox_suspend(suspended, &err));
    ri_sandbox_destroy(suspended);
    assert_int_equal(ri_sandbox_status_of(suspended), RI_SANDBOX_DESTROYED);

    ri_sandbox_free(created);
    ri_sandbox_free(loaded);
    ri_sandbox_free(suspended);
    ri_sandboxes_free(f);
}

static void destroy_is_idempotent(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    char id[64];
    snprintf(id, sizeof id, "%s", ri_sandbox_id(sb));
    ri_sandbox_destroy(sb);
    ri_sandbox_destroy(sb);
    ri_sandbox_destroy(sb);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_DESTROYED);
    /* The handle stays valid until freed, id included. */
    assert_string_equal(ri_sandbox_id(sb), id);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void execute_after_destroy_is_instance_destroyed(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    assert_int_equal(exec_i32(sb, "add", "[1,2]"), 3);
    ri_sandbox_destroy(sb);
    ri_sandbox_result r = ri_sandbox_execute(sb, "add", "[1,2]");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    assert_string_equal(r.error.instance_id, ri_sandbox_id(sb));
    ri_sandbox_result_free(&r);
    /* The destroyed check comes before the export lookup. */
    r = ri_sandbox_execute(sb, "noSuchExport", NULL);
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void call_after_destroy_is_instance_destroyed(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandbox_destroy(sb);
    ri_val args[2] = {ri_val_i32(1), ri_val_i32(2)};
    ri_sandbox_result r = ri_sandbox_call(sb, "add", args, 2);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    assert_string_equal(r.error.instance_id, ri_sandbox_id(sb));
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* A host function that destroys its own sandbox mid-execution. */
static int destroy_fn(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)args;
    (void)results;
    ri_sandbox_destroy(*(ri_sandbox **)user);
    return 0;
}

static void destroy_during_execution_ends_it(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *target = NULL;
    ri_host_function h = {"probe", 0, NULL, 0, NULL, destroy_fn, &target};
    ri_sandbox_config c = test_config();
    c.host_functions = &h;
    c.nhost_functions = 1;
    ri_sandbox *sb = new_loaded(f, &c, "sb_probe");
    target = sb;
    /* Seed 001 §4: destroy() moves any status, running included, to destroyed. */
    ri_sandbox_result r = ri_sandbox_execute(sb, "probe3", NULL);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_DESTROYED);
    r = ri_sandbox_execute(sb, "probe1", NULL);
    assert_int_equal(r.error.code, RI_SANDBOX_INSTANCE_DESTROYED);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void load_into_destroyed_fails_with_id(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    ri_sandbox_destroy(sb);
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    assert_false(load_fixture(sb, "sb_add", &err));
    char want[160];
    snprintf(want, sizeof want, "Cannot load module into destroyed instance: %s", ri_sandbox_id(sb));
    assert_string_equal(err.message, want);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_DESTROYED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void full_transition_walk(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_sandbox(f, &c);
    ri_sandbox_error err;
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_CREATED);
    assert_true(load_fixture(sb, "sb_memcounter", &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(sb, "increment", NULL), 1);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    uint8_t *snap = NULL;
    size_t len = 0;
    assert_true(ri_sandbox_snapshot(sb, &snap, &len, &err));
    assert_true(ri_sandbox_suspend(sb, &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_SUSPENDED);
    assert_true(ri_sandbox_restore(sb, snap, len, &err));
    free(snap);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(sb, "increment", NULL), 2);
    ri_sandbox_destroy(sb);
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_DESTROYED);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* ---- loading again ------------------------------------------------------------ */

static void reload_reinstantiates(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_counter");
    for (int i = 0; i < 3; i++) exec_i32(sb, "increment", NULL);
    assert_int_equal(exec_i32(sb, "get", NULL), 3);
    ri_sandbox_error err;
    assert_true(load_fixture(sb, "sb_counter", &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(sb, "get", NULL), 0);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void failed_reload_keeps_previous_module(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_counter");
    exec_i32(sb, "increment", NULL);
    exec_i32(sb, "increment", NULL);
    ri_sandbox_error err;
    /* Fails import isolation after decoding: nothing may change. */
    assert_false(load_fixture(sb, "sb_imp_wasi", &err));
    assert_int_equal(ri_sandbox_status_of(sb), RI_SANDBOX_LOADED);
    assert_int_equal(exec_i32(sb, "get", NULL), 2);
    /* Fails the magic check. */
    static const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_false(ri_sandbox_load(sb, junk, sizeof junk, &err));
    assert_int_equal(exec_i32(sb, "get", NULL), 2);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* ---- metrics ------------------------------------------------------------------- */

static void metrics_after_execute(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    c.max_gas = 500000;
    ri_sandbox *sb = new_loaded(f, &c, "sb_memimport");
    assert_int_equal(exec_i32(sb, "getMemSize", NULL), 1);
    ri_sandbox_metrics m = ri_sandbox_get_metrics(sb);
    assert_int_equal(m.memory_used_bytes, 65536);
    assert_int_equal(m.memory_limit_bytes, RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES);
    assert_int_equal(m.gas_used, 0);
    assert_int_equal(m.gas_limit, 500000);
    assert_true(m.execution_ms >= 0.0);
    assert_int_equal(m.execution_limit_ms, 10000);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void result_metrics_match_live_metrics(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_fib");
    ri_sandbox_result r = ri_sandbox_execute(sb, "fib", "20");
    assert_true(r.ok);
    ri_sandbox_metrics m = ri_sandbox_get_metrics(sb);
    assert_int_equal(r.gas_used, 21);
    assert_int_equal(r.metrics.gas_used, 21);
    assert_int_equal(m.gas_used, 21);
    assert_int_equal(r.metrics.memory_used_bytes, m.memory_used_bytes);
    assert_int_equal(r.metrics.memory_limit_bytes, m.memory_limit_bytes);
    assert_int_equal(r.metrics.gas_limit, m.gas_limit);
    assert_int_equal(r.metrics.execution_limit_ms, m.execution_limit_ms);
    assert_true(r.duration_ms >= 0.0);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void metrics_gas_is_last_execution(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_fib");
    assert_int_equal(exec_i32(sb, "fib", "20"), 6765);
    assert_int_equal(ri_sandbox_get_metrics(sb).gas_used, 21);
    assert_int_equal(exec_i32(sb, "fib", "0"), 0);
    assert_int_equal(ri_sandbox_get_metrics(sb).gas_used, 1);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void metrics_memory_is_live_after_grow(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_memimport");
    assert_int_equal(ri_sandbox_get_metrics(sb).memory_used_bytes, 65536);
    assert_int_equal(exec_i32(sb, "allocate", "2"), 1);
    assert_int_equal(ri_sandbox_get_metrics(sb).memory_used_bytes, 3 * 65536);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

/* ---- isolation ----------------------------------------------------------------- */

static void counter_instances_are_isolated(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *a = new_loaded(f, &c, "sb_counter");
    ri_sandbox *b = new_loaded(f, &c, "sb_counter");
    for (int i = 0; i < 3; i++) exec_i32(a, "increment", NULL);
    for (int i = 0; i < 5; i++) exec_i32(b, "increment", NULL);
    assert_int_equal(exec_i32(a, "get", NULL), 3);
    assert_int_equal(exec_i32(b, "get", NULL), 5);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
    ri_sandboxes_free(f);
}

static void destroying_one_leaves_the_other(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config ca = test_config();
    ca.deterministic_seed = 1;
    ri_sandbox_config cb = test_config();
    cb.deterministic_seed = 2;
    ri_sandbox *a = new_loaded(f, &ca, "sb_counter");
    ri_sandbox *b = new_loaded(f, &cb, "sb_add");
    for (int i = 0; i < 3; i++) exec_i32(a, "increment", NULL);
    assert_int_equal(exec_i32(a, "get", NULL), 3);
    assert_int_equal(exec_i32(b, "add", "[42,58]"), 100);
    assert_string_not_equal(ri_sandbox_id(a), ri_sandbox_id(b));
    ri_sandbox_destroy(a);
    assert_int_equal(exec_i32(b, "add", "[1,1]"), 2);
    assert_int_equal(ri_sandbox_status_of(b), RI_SANDBOX_LOADED);
    ri_sandbox_free(a);
    ri_sandbox_free(b);
    ri_sandboxes_free(f);
}

static void add_17_25_is_42_a_hundred_times(void **state) {
    (void)state;
    ri_sandbox_config c = test_config();
    c.deterministic_seed = 42;
    for (int i = 0; i < 100; i++) {
        ri_sandboxes *f = ri_sandboxes_new();
        ri_sandbox *sb = new_loaded(f, &c, "sb_add");
        assert_int_equal(exec_i32(sb, "add", "[17,25]"), 42);
        ri_sandbox_destroy(sb);
        ri_sandbox_free(sb);
        ri_sandboxes_free(f);
    }
}

static void add_in_one_instance_a_hundred_times(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    for (int i = 0; i < 100; i++) {
        char payload[64];
        snprintf(payload, sizeof payload, "[%d,%d]", i, i + 1);
        assert_int_equal(exec_i32(sb, "add", payload), 2 * i + 1);
    }
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void sandboxes_outlive_their_factory(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_add");
    ri_sandboxes_free(f);
    assert_int_equal(exec_i32(sb, "add", "[20,22]"), 42);
    ri_sandbox_free(sb);
}

/* ---- names ---------------------------------------------------------------------- */

static void status_names(void **state) {
    (void)state;
    assert_string_equal(ri_sandbox_status_name(RI_SANDBOX_CREATED), "created");
    assert_string_equal(ri_sandbox_status_name(RI_SANDBOX_LOADED), "loaded");
    assert_string_equal(ri_sandbox_status_name(RI_SANDBOX_RUNNING), "running");
    assert_string_equal(ri_sandbox_status_name(RI_SANDBOX_SUSPENDED), "suspended");
    assert_string_equal(ri_sandbox_status_name(RI_SANDBOX_DESTROYED), "destroyed");
}

static void error_code_names(void **state) {
    (void)state;
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_GAS_EXHAUSTED), "GAS_EXHAUSTED");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_MEMORY_EXCEEDED), "MEMORY_EXCEEDED");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_TIMEOUT), "TIMEOUT");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_WASM_TRAP), "WASM_TRAP");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_INVALID_MODULE), "INVALID_MODULE");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_HOST_FUNCTION_ERROR), "HOST_FUNCTION_ERROR");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_INSTANCE_DESTROYED), "INSTANCE_DESTROYED");
    assert_string_equal(ri_sandbox_errcode_name(RI_SANDBOX_SNAPSHOT_ERROR), "SNAPSHOT_ERROR");
}

static void result_free_handles_no_value(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = test_config();
    ri_sandbox *sb = new_loaded(f, &c, "sb_types");
    ri_sandbox_result r = ri_sandbox_execute(sb, "nothing", NULL);
    assert_true(r.ok);
    assert_null(r.value_json);
    ri_sandbox_result_free(&r);
    r = ri_sandbox_execute(sb, "noSuchExport", NULL);
    assert_false(r.ok);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_default_has_seed_defaults),
        cmocka_unit_test(default_constants_match_seed),
        cmocka_unit_test(create_without_event_timestamp_fails),
        cmocka_unit_test(create_with_timestamp_starts_created),
        cmocka_unit_test(create_ids_are_sandbox_counter),
        cmocka_unit_test(create_ids_are_unique),
        cmocka_unit_test(create_copies_config),
        cmocka_unit_test(create_metrics_show_config_limits),
        cmocka_unit_test(create_accepts_zero_gas_budget),
        cmocka_unit_test(create_with_zero_memory_limit_fails),
        cmocka_unit_test(create_with_host_function_without_callback_fails),
        cmocka_unit_test(load_moves_created_to_loaded),
        cmocka_unit_test(failed_load_leaves_created),
        cmocka_unit_test(execute_leaves_loaded_after_success),
        cmocka_unit_test(execute_leaves_loaded_after_trap),
        cmocka_unit_test(execute_leaves_loaded_after_missing_export),
        cmocka_unit_test(status_is_running_during_execution),
        cmocka_unit_test(metrics_are_live_during_execution),
        cmocka_unit_test(nested_execute_from_host_is_refused),
        cmocka_unit_test(execute_on_created_is_invalid_state),
        cmocka_unit_test(suspend_moves_loaded_to_suspended),
        cmocka_unit_test(execute_on_suspended_is_refused),
        cmocka_unit_test(call_on_suspended_is_refused),
        cmocka_unit_test(restore_brings_suspended_back_to_loaded),
        cmocka_unit_test(suspend_on_created_fails),
        cmocka_unit_test(suspend_on_destroyed_fails),
        cmocka_unit_test(destroy_from_every_status),
        cmocka_unit_test(destroy_is_idempotent),
        cmocka_unit_test(execute_after_destroy_is_instance_destroyed),
        cmocka_unit_test(call_after_destroy_is_instance_destroyed),
        cmocka_unit_test(destroy_during_execution_ends_it),
        cmocka_unit_test(load_into_destroyed_fails_with_id),
        cmocka_unit_test(full_transition_walk),
        cmocka_unit_test(reload_reinstantiates),
        cmocka_unit_test(failed_reload_keeps_previous_module),
        cmocka_unit_test(metrics_after_execute),
        cmocka_unit_test(result_metrics_match_live_metrics),
        cmocka_unit_test(metrics_gas_is_last_execution),
        cmocka_unit_test(metrics_memory_is_live_after_grow),
        cmocka_unit_test(counter_instances_are_isolated),
        cmocka_unit_test(destroying_one_leaves_the_other),
        cmocka_unit_test(add_17_25_is_42_a_hundred_times),
        cmocka_unit_test(add_in_one_instance_a_hundred_times),
        cmocka_unit_test(sandboxes_outlive_their_factory),
        cmocka_unit_test(status_names),
        cmocka_unit_test(error_code_names),
        cmocka_unit_test(result_free_handles_no_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
