/*
 * Real C programs built with clang-19 and wasi-libc as ordinary WASI commands
 * (tests/c-wasi, crt1-command: _start calls main), run through the library with exact
 * expected output: files and directories, stdin echoed uppercased (with a pause for
 * input), an exit code with arguments. Skipped when the build had no clang/wasi-libc.
 */
#include "sandbox_test_util.h"

static uint8_t *read_program(const char *name, size_t *len) {
    const char *dir = getenv("RI_C_WASI_DIR");
    if (!dir || !*dir) return NULL;
    return read_wasm_in(dir, name, "is RI_C_WASI_DIR set?", len);
}

static ri_sandbox *start(ri_sandboxes *f, const char *name, const ri_wasi_config *wc) {
    size_t len;
    uint8_t *wasm = read_program(name, &len);
    if (!wasm) return NULL;
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.enable_wasi = true;
    c.wasi = wc;
    ri_sandbox_error err;
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    assert_non_null(sb);
    if (!ri_sandbox_load(sb, wasm, len, &err)) print_error("load %s: %s\n", name, err.message);
    free(wasm);
    return sb;
}

static void test_files(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = start(f, "files", NULL);
    if (!sb) {
        ri_sandboxes_free(f);
        skip();
    }
    ri_sandbox_result r = ri_sandbox_wasi_run(sb);
    if (!r.ok) print_error("run: %s (exit %u)\n", r.error.message, r.exit_code);
    assert_true(r.ok && r.exited);
    assert_int_equal(r.exit_code, 0);
    ri_sandbox_result_free(&r);
    wasi_stream_is(sb, RI_WASI_STDOUT, "a.txt: file 1\nb.txt: file 0\nz.txt: file 2\n");
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void test_upper_stdin(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = start(f, "upper", NULL);
    if (!sb) {
        ri_sandboxes_free(f);
        skip();
    }
    ri_sandbox_result r = ri_sandbox_wasi_run(sb); /* no input yet: pauses */
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)"Hello, ", 7);
    r = ri_sandbox_resume(sb, 0);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)"wasi!\n", 6);
    ri_sandbox_wasi_stdin_close(sb);
    r = ri_sandbox_resume(sb, 0);
    assert_true(r.ok && r.exited);
    ri_sandbox_result_free(&r);
    wasi_stream_is(sb, RI_WASI_STDOUT, "HELLO, WASI!\n");
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void test_exit_code(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    const char *argv[] = {"exitcode", "5"};
    ri_wasi_config wc;
    memset(&wc, 0, sizeof wc);
    wc.argv = argv;
    wc.argc = 2;
    ri_sandbox *sb = start(f, "exitcode", &wc);
    if (!sb) {
        ri_sandboxes_free(f);
        skip();
    }
    ri_sandbox_result r = ri_sandbox_wasi_run(sb);
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_EXIT);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 5);
    ri_sandbox_result_free(&r);
    wasi_stream_is(sb, RI_WASI_STDOUT, "args=2\n");
    wasi_stream_is(sb, RI_WASI_STDERR, "bye\n");
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_upper_stdin),
        cmocka_unit_test(test_exit_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
