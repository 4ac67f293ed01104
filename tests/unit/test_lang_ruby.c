/* Ruby code in sandboxes (ri/lang.h) through the real interpreter fetched by
 * scripts/fetch-interpreters.sh ($RI_INTERPRETERS_DIR/ruby.wasm, else ~/.cache/ri/interpreters/ruby.wasm):
 * output, exit codes, errors, files between runs, stdin, limits, pauses resumed across
 * snapshot files with the output of an uninterrupted run, determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "interpreter_file.h"
#include "ri/ri.h"

typedef struct fixture {
    ri_sandboxes *factory;
    ri_interpreter *ruby;
} fixture;


static ri_sandbox_config base_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000;
    c.max_memory_bytes = 512u << 20;
    c.max_gas = 300000000u; /* starting Ruby takes about 30 million; endless code stops soon */
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_execution_ms = 600000; /* far away: the tests must not depend on speed */
    return c;
}

static int setup(void **state) {
    static fixture fx;
    size_t len = 0;
    uint8_t *wasm = read_interpreter(RI_LANG_RUBY, &len);
    if (!wasm) return -1; /* (main checked that it is there) */
    fx.factory = ri_sandboxes_new();
    ri_sandbox_config c = base_config();
    ri_sandbox_error err;
    fx.ruby = ri_interpreter_open(fx.factory, RI_LANG_RUBY, wasm, len, &c, &err);
    free(wasm);
    if (!fx.ruby) {
        print_message("ri_interpreter_open: %s\n", err.message);
        return -1;
    }
    *state = &fx;
    return 0;
}

static int teardown(void **state) {
    fixture *fx = *state;
    ri_interpreter_free(fx->ruby);
    ri_sandboxes_free(fx->factory);
    return 0;
}

static ri_sandbox *new_sandbox(fixture *fx) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_interpreter_sandbox(fx->ruby, fx->factory, &err);
    if (!sb) fail_msg("ri_interpreter_sandbox: %s", err.message);
    return sb;
}

/* The stream's bytes so far as a C string (malloc'd), and cleared. */
static char *take(ri_sandbox *sb, ri_wasi_stream stream) {
    size_t n = 0;
    const uint8_t *p = ri_sandbox_wasi_output(sb, stream, &n);
    char *s = malloc(n + 1);
    assert_non_null(s);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    ri_sandbox_wasi_output_clear(sb, stream);
    return s;
}

static ri_sandbox_result run(fixture *fx, ri_sandbox *sb, const char *code) {
    return ri_interpreter_run(fx->ruby, sb, code, strlen(code));
}

static void expect_output(ri_sandbox *sb, const char *out, const char *err_part) {
    char *o = take(sb, RI_WASI_STDOUT), *e = take(sb, RI_WASI_STDERR);
    if (strcmp(o, out) != 0) fail_msg("stdout is \"%s\", expected \"%s\" (stderr: %s)", o, out, e);
    if (err_part ? !strstr(e, err_part) : e[0] != '\0') fail_msg("stderr is \"%s\", expected \"%s\"", e, err_part ? err_part : "");
    free(o);
    free(e);
}

static void hello_world(void **state) {
    fixture *fx = *state;
    ri_sandbox *sb = new_sandbox(fx);
    ri_sandbox_result r = run(fx, sb, "puts 'Hello, world'\nputs 1 + 1\nputs RUBY_VERSION.split('.').first(2).join('.')");
    assert_true(r.ok);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    expect_output(sb, "Hello, world\n2\n3.4\n", NULL);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
}

/* Quotes, backslashes, interpolation marks and control bytes reach Ruby as written. */
static void code_is_passed_verbatim(void **state) {
    fixture *fx = *state;
    ri_sandbox *sb = new_sandbox(fx);
    ri_sandbox_result r = run(fx, sb, "x = 5\nputs \"a\\\"b\\\\c #{x}\"\nputs 'single #{x} \\'q\\''\nputs \"t\\tab\".size\n# \"} end\nputs \"h\xc3\xa9\".size");
    assert_true(r.ok);
    expect_output(sb, "a\"b\\c 5\nsingle #{x} 'q'\n4\n2\n", NULL);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
}

static void errors_and_exit_codes(void **state) {
    fixture *fx = *state;
    ri_sandbox *sb = new_sandbox(fx);
    ri_sandbox_result r = run(fx, sb, "puts 'before'\ndef f = raise(ArgumentError, 'boom')\nf");
    assert_false(r.ok);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 1);
    assert_int_equal(r.error.code, RI_SANDBOX_EXIT);
    /* as `ruby main.rb` prints it: none of ri's own frames */
    char *out = take(sb, RI_WASI_STDOUT), *err = take(sb, RI_WASI_STDERR);
    assert_string_equal(out, "before\n");
    assert_string_equal(err, "main.rb:2:in 'Object#f': boom (ArgumentError)\n\tfrom main.rb:3:in '<main>'\n");
    free(out);
    free(err);
    ri_sandbox_result_free(&r);

    r = run(fx, sb, "puts 'leaving'\nexit 3");
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    expect_output(sb, "leaving\n", NULL);
    ri_sandbox_result_free(&r);

    r = run(fx, sb, "def broken(\n");
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 1);
    expect_output(sb, "", "SyntaxError");
    ri_sandbox_result_free(&r);

    /* the sandbox still runs code after all that */
    r = run(fx, sb, "print :ok");
    assert_true(r.ok);
    expect_output(sb, "ok", NULL);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
}

/* Files stay from one run to the next; the interpreter itself starts afresh. */
static void files_stay_state_does_not(void **state) {
    fixture *fx = *state;
    ri_sandbox *sb = new_sandbox(fx);
    ri_sandbox_result r = run(fx, sb, "Dir.mkdir('/work')\nFile.write('/work/notes.txt', \"first\\n\")\n$counter = 41");
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    r = run(fx, sb, "File.open('/work/notes.txt', 'a') { |f| f.puts 'second' }\nputs File.read('/work/notes.txt')\nputs Dir.children('/work').inspect\np $counter");
    assert_true(r.ok);
    expect_output(sb, "first\nsecond\n[\"notes.txt\"]\nnil\n", NULL);
    ri_sandbox_result_free(&r);

    /* another sandbox of the same interpreter has its own files */
    ri_sandbox *other = new_sandbox(fx);
    r = run(fx, other, "p File.exist?('/work/notes.txt')");
    assert_true(r.ok);
    expect_output(other, "false\n", NULL);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(other);
    ri_sandbox_free(sb);
}

/* A read with no input yet pauses the run; input and a resume finish it. */
static void stdin_waits_for_input(void **state) {
    fixture *fx = *state;
    ri_sandbox *sb = new_sandbox(fx);
    ri_sandbox_result r = run(fx, sb, "name = $stdin.gets\nputs \"hello #{name.strip.upcase}\"");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    assert_true(ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)"ruby\n", 5));
    r = ri_sandbox_resume(sb, 0);
    assert_true(r.ok);
    assert_true(r.exited);
    expect_output(sb, "hello RUBY\n", NULL);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
}

static void limits_stop_endless_code(void **state) {
    fixture *fx = *state;
    ri_sandbox *sb = new_sandbox(fx);
    ri_sandbox_result r = run(fx, sb, "i = 0\nloop { i += 1 }");
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_GAS_EXHAUSTED);
    ri_sandbox_result_free(&r);
    /* the next run starts afresh */
    r = run(fx, sb, "puts :again");
    assert_true(r.ok);
    expect_output(sb, "again\n", NULL);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
}

static const char counting[] =
    "def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)\n"
    "(15..24).each { |n| puts \"fib(#{n}) = #{fib(n)}\" }\n"
    "File.write('/result.txt', fib(18).to_s)\n";

/* A run paused by gas again and again, each pause written to a snapshot file and resumed in
 * a new sandbox restored from it: the same output and files as one uninterrupted run. */
static void paused_runs_move_between_sandboxes(void **state) {
    fixture *fx = *state;
    /* the reference: the same run in one sandbox, given all the gas it needs at its first
     * pause (the config's 300 million do not suffice) */
    ri_sandbox *whole = new_sandbox(fx);
    ri_sandbox_error err;
    assert_true(ri_sandbox_set_pause_on(whole, RI_SUSPEND_ON_GAS, &err));
    ri_sandbox_result r = run(fx, whole, counting);
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    r = ri_sandbox_resume(whole, 100000000000u);
    assert_true(r.ok);
    char *expected = take(whole, RI_WASI_STDOUT);
    uint64_t gas_whole = r.gas_used;
    ri_sandbox_result_free(&r);

    ri_sandbox *sb = new_sandbox(fx);
    assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &err));
    r = ri_interpreter_run(fx->ruby, sb, counting, strlen(counting));
    size_t cap = 1, len = 0;
    char *got = calloc(1, cap);
    int hops = 0;
    uint64_t slice = gas_whole / 6 + 1;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        ri_sandbox_result_free(&r);
        char *part = take(sb, RI_WASI_STDOUT);
        size_t n = strlen(part);
        got = realloc(got, len + n + 1);
        memcpy(got + len, part, n + 1);
        len += n;
        free(part);
        if (hops < 3) { /* move to a new sandbox through a snapshot file's bytes */
            uint8_t *image = NULL;
            size_t image_len = 0;
            ri_snapshot_options so = {0};
            so.format = RI_SNAPSHOT_V2;
            if (!ri_sandbox_snapshot_with(sb, &so, &image, &image_len, &err)) fail_msg("snapshot: %s", err.message);
            ri_sandbox_free(sb);
            sb = new_sandbox(fx);
            if (!ri_sandbox_restore(sb, image, image_len, &err)) fail_msg("restore: %s", err.message);
            ri_free(image);
            hops++;
        }
        r = ri_sandbox_resume(sb, slice);
    }
    assert_true(r.ok);
    assert_true(r.exited);
    assert_int_equal(hops, 3);
    char *rest = take(sb, RI_WASI_STDOUT);
    got = realloc(got, len + strlen(rest) + 1);
    strcpy(got + len, rest);
    assert_string_equal(got, expected);
    assert_int_equal(r.gas_used, gas_whole);
    ri_sandbox_result_free(&r);
    r = run(fx, sb, "print File.read('/result.txt')");
    if (!r.ok) fail_msg("%s", r.error.message);
    expect_output(sb, "2584", NULL);
    ri_sandbox_result_free(&r);
    free(rest);
    free(got);
    free(expected);
    ri_sandbox_free(sb);
    ri_sandbox_free(whole);
}

/* Random numbers, hash seeds and time come from the sandbox: two sandboxes print the same. */
static void output_is_deterministic(void **state) {
    fixture *fx = *state;
    const char *code = "puts rand(1_000_000)\nputs Random.new_seed.to_s.size > 0\nputs Time.now.year\nputs({b: 1, a: 2}.hash == {b: 1, a: 2}.hash)\nputs 'x'.hash";
    char *first = NULL;
    for (int i = 0; i < 2; i++) {
        ri_sandbox *sb = new_sandbox(fx);
        ri_sandbox_result r = run(fx, sb, code);
        assert_true(r.ok);
        char *out = take(sb, RI_WASI_STDOUT);
        if (!first) first = out;
        else {
            assert_string_equal(out, first);
            free(out);
        }
        ri_sandbox_result_free(&r);
        ri_sandbox_free(sb);
    }
    assert_non_null(strstr(first, "2023\n"));
    free(first);
}

static void not_an_interpreter(void **state) {
    fixture *fx = *state;
    static const uint8_t empty_module[] = {0, 'a', 's', 'm', 1, 0, 0, 0};
    ri_sandbox_config c = base_config();
    ri_sandbox_error err;
    assert_null(ri_interpreter_open(fx->factory, RI_LANG_RUBY, empty_module, sizeof empty_module, &c, &err));
    assert_int_equal(err.code, RI_SANDBOX_INVALID_MODULE);
    assert_non_null(strstr(err.message, "ruby.wasm exports"));
    assert_null(ri_interpreter_open(fx->factory, RI_LANG_RUBY, empty_module, 4, &c, &err));
    assert_non_null(strstr(err.message, "Failed to load WASM module"));
    assert_int_equal(ri_language_from_name("ruby"), RI_LANG_RUBY);
    assert_int_equal(ri_language_from_name("cobol"), RI_LANG_NONE);
    assert_string_equal(ri_language_name(RI_LANG_RUBY), "ruby");
}

int main(void) {
    size_t len = 0;
    uint8_t *wasm = read_interpreter(RI_LANG_RUBY, &len);
    if (!wasm) {
        printf("test_lang_ruby: skipped: no ruby.wasm in RI_INTERPRETERS_DIR (run scripts/fetch-interpreters.sh)\n");
        return 0;
    }
    free(wasm);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hello_world),
        cmocka_unit_test(code_is_passed_verbatim),
        cmocka_unit_test(errors_and_exit_codes),
        cmocka_unit_test(files_stay_state_does_not),
        cmocka_unit_test(stdin_waits_for_input),
        cmocka_unit_test(limits_stop_endless_code),
        cmocka_unit_test(paused_runs_move_between_sandboxes),
        cmocka_unit_test(output_is_deterministic),
        cmocka_unit_test(not_an_interpreter),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
