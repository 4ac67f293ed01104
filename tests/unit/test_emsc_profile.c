/*
 * The Emscripten profile in a sandbox (enable_emscripten, src/emscripten): refused by
 * default and without WASI, imports of the wrong type refused at load, invoke and throw
 * through the sandbox, and hostile arguments: pointers outside memory (EFAULT or a clear
 * failure), unterminated paths, bad descriptors, heap growth beyond the limit, a
 * JavaScript-only import and abort. Fixtures: tests/wat/emsc_profile.wat, emsc_invoke.wat.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

static ri_sandbox_config emsc_config(bool wasi, bool emsc) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 86400000LL * 365;
    c.max_memory_bytes = 3 * 65536;
    c.enable_wasi = wasi;
    c.enable_emscripten = emsc;
    return c;
}

static ri_sandbox *loaded(ri_sandboxes *f, const char *fixture, bool wasi, bool emsc, ri_sandbox_error *err) {
    ri_sandbox_config c = emsc_config(wasi, emsc);
    ri_sandbox *sb = ri_sandbox_create(f, &c, err);
    if (!sb) return NULL;
    size_t len;
    uint8_t *bytes = read_fixture(fixture, &len);
    bool ok = ri_sandbox_load(sb, bytes, len, err);
    free(bytes);
    if (!ok) {
        ri_sandbox_free(sb);
        return NULL;
    }
    return sb;
}

static int64_t call_i(ri_sandbox *sb, const char *name, const ri_val *args, uint32_t n, ri_sandbox_result *keep) {
    ri_sandbox_result r = ri_sandbox_call(sb, name, args, n);
    int64_t v = r.ok && r.nresults ? (r.results[0].type == RI_I64 ? r.results[0].of.i64 : r.results[0].of.i32) : 0;
    if (keep) *keep = r;
    else {
        if (!r.ok) print_error("%s: %s\n", name, r.error.message);
        assert_true(r.ok);
        ri_sandbox_result_free(&r);
    }
    return v;
}

static void refused_unless_enabled(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_error err;
    assert_null(loaded(f, "emsc_invoke", true, false, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    assert_non_null(strstr(err.message, "env.invoke_ii"));
    assert_null(loaded(f, "emsc_bad_type", true, true, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    assert_non_null(strstr(err.message, "does not serve"));
    assert_non_null(strstr(err.message, "i>i"));
    ri_sandbox_config c = emsc_config(false, true);
    assert_null(ri_sandbox_create(f, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_CONFIG);
    assert_non_null(strstr(err.message, "enable_wasi"));
    ri_sandboxes_free(f);
}

static void invoke_and_throw_through_the_sandbox(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_sandbox *sb = loaded(f, "emsc_invoke", true, true, &err);
    if (!sb) print_error("%s\n", err.message);
    assert_non_null(sb);
    ri_val a = ri_val_i32(5);
    assert_int_equal(call_i(sb, "deep", &a, 1, NULL), 1000000);
    ri_sandbox_result r;
    call_i(sb, "uncaught", NULL, 0, &r);
    assert_false(r.ok);
    assert_non_null(strstr(r.error.message, "uncaught longjmp"));
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void hostile_arguments(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_sandbox *sb = loaded(f, "emsc_profile", true, true, &err);
    if (!sb) print_error("%s\n", err.message);
    assert_non_null(sb);
    assert_int_equal(call_i(sb, "open_bad_pointer", NULL, 0, NULL), -21);  /* EFAULT */
    assert_int_equal(call_i(sb, "open_unterminated", NULL, 0, NULL), -37); /* ENAMETOOLONG: no NUL before the end */
    assert_int_equal(call_i(sb, "open_missing", NULL, 0, NULL), -44);      /* ENOENT */
    assert_true(call_i(sb, "open_create", NULL, 0, NULL) >= 4);            /* a WASI descriptor */
    assert_int_equal(call_i(sb, "getcwd_bad", NULL, 0, NULL), -21);
    assert_int_equal(call_i(sb, "getcwd_small", NULL, 0, NULL), -68);      /* ERANGE */
    assert_int_equal(call_i(sb, "getcwd", NULL, 0, NULL), '/');
    assert_int_equal(call_i(sb, "fstat_bad_fd", NULL, 0, NULL), -8);       /* EBADF */
    assert_int_equal(call_i(sb, "fstat_bad_buf", NULL, 0, NULL), -21);
    ri_val t = ri_val_i64(951782400); /* 2000-02-29 */
    assert_int_equal(call_i(sb, "gmtime_year", &t, 1, NULL), 100);
    ri_sandbox_result r;
    call_i(sb, "gmtime_bad", NULL, 0, &r);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_HOST_FUNCTION_ERROR);
    assert_non_null(strstr(r.error.message, "outside memory"));
    ri_sandbox_result_free(&r);
    ri_val big = ri_val_i32(4 * 65536); /* above the limit of 3 pages */
    assert_int_equal(call_i(sb, "grow", &big, 1, NULL), 0);
    assert_int_equal(call_i(sb, "pages", NULL, 0, NULL), 1);
    ri_val two = ri_val_i32(2 * 65536);
    assert_int_equal(call_i(sb, "grow", &two, 1, NULL), 1);
    assert_int_equal(call_i(sb, "pages", NULL, 0, NULL), 2);
    call_i(sb, "js", NULL, 0, &r);
    assert_false(r.ok);
    assert_non_null(strstr(r.error.message, "JavaScript"));
    ri_sandbox_result_free(&r);
    call_i(sb, "abort", NULL, 0, &r);
    assert_false(r.ok);
    assert_non_null(strstr(r.error.message, "abort"));
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refused_unless_enabled),
        cmocka_unit_test(invoke_and_throw_through_the_sandbox),
        cmocka_unit_test(hostile_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
