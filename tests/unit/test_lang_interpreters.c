/* Lua, Python and JavaScript through ri_interpreter (ri/lang.h), with the interpreters of
 * scripts/fetch-interpreters.sh ($RI_INTERPRETERS_DIR): exit codes, files kept between runs
 * while the interpreter starts afresh, and a run paused by gas again and again, moved to a
 * new sandbox through a snapshot each time, with the output and gas of an uninterrupted run.
 * Skipped (with a message) when the interpreters are not there. */
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

typedef struct language_case {
    ri_language lang;
    const char *file;
    const char *remember;   /* writes /kept.txt and sets a global */
    const char *recall;     /* prints /kept.txt and whether the global survived */
    const char *recalled;   /* what recall prints */
    const char *exit_with;  /* exits with code 3 */
    const char *counting;   /* prints a long counted sequence */
    bool no_files;          /* the build has no file access: remember/recall use none */
} language_case;

static const language_case lua_case = {
    RI_LANG_LUA, "lua.wasm",
    "local f = io.open('/kept.txt', 'w') f:write('kept') f:close() remembered = 1",
    "print(io.open('/kept.txt'):read('a'), remembered)",
    "kept\tnil\n",
    "io.write('bye') os.exit(3)",
    "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end\n"
    "for i = 10, 22 do print(i, fib(i)) end\n",
    false,
};

static const language_case python_case = {
    RI_LANG_PYTHON, "python.wasm",
    "open('/kept.txt', 'w').write('kept')\nimport sys\nsys.path.append('/remembered')",
    "import sys\nprint(open('/kept.txt').read(), '/remembered' in sys.path)",
    "kept False\n",
    "import sys\nprint('bye', end='')\nsys.exit(3)",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfor i in range(10, 20):\n    print(i, fib(i))\n",
    false,
};

/* files through ri's runtime (require('fs'), served by the host); the counting program's
 * second half runs in promise jobs (each a call of its own) after the first half, in the
 * same run */
static const language_case javascript_case = {
    RI_LANG_JAVASCRIPT, "javascript.wasm",
    "require('fs').writeFileSync('/kept.txt', 'kept'); globalThis.remembered = 1",
    "console.log(require('fs').readFileSync('/kept.txt', 'utf8'), typeof remembered)",
    "kept undefined\n",
    "process.stdout.write('bye'); process.exit(3)",
    "const fib = (n) => n < 2 ? n : fib(n - 1) + fib(n - 2);\n"
    "for (let i = 10; i < 23; i++) console.log(i, fib(i));\n"
    "(async () => { for (let i = 0; i < 4; i++) { await null; console.log('job', i, fib(5), Math.random()); } })();\n",
    false,
};


static char *take(ri_sandbox *sb) {
    size_t n = 0;
    const uint8_t *p = ri_sandbox_wasi_output(sb, RI_WASI_STDOUT, &n);
    char *s = malloc(n + 1);
    assert_non_null(s);
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    ri_sandbox_wasi_output_clear(sb, RI_WASI_STDOUT);
    return s;
}

static void append(char **all, size_t *len, char *part) {
    size_t n = strlen(part);
    *all = realloc(*all, *len + n + 1);
    assert_non_null(*all);
    memcpy(*all + *len, part, n + 1);
    *len += n;
    free(part);
}

static void check_language(const language_case *lc) {
    size_t len = 0;
    uint8_t *wasm = read_interpreter(lc->lang, &len);
    if (!wasm) {
        print_message("skipped: no %s (run scripts/fetch-interpreters.sh)\n", lc->file);
        skip();
    }
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = 20000000u; /* a first slice shorter than the counting programs */
    c.max_memory_bytes = 256u << 20;
    c.max_execution_ms = 600000;
    ri_sandbox_error err;
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_interpreter *it = ri_interpreter_open(factory, lc->lang, wasm, len, &c, &err);
    free(wasm);
    if (!it) fail_msg("open: %s", err.message);

    /* files stay, the interpreter's state does not; exit codes */
    ri_sandbox *sb = ri_interpreter_sandbox(it, factory, &err);
    assert_non_null(sb);
    ri_sandbox_result r = ri_interpreter_run(it, sb, lc->remember, strlen(lc->remember));
    assert_true(r.ok);
    assert_true(r.exited);
    ri_sandbox_result_free(&r);
    r = ri_interpreter_run(it, sb, lc->recall, strlen(lc->recall));
    assert_true(r.ok);
    char *out = take(sb);
    assert_string_equal(out, lc->recalled);
    free(out);
    ri_sandbox_result_free(&r);
    r = ri_interpreter_run(it, sb, lc->exit_with, strlen(lc->exit_with));
    assert_false(r.ok);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.error.code, RI_SANDBOX_EXIT);
    out = take(sb);
    assert_string_equal(out, "bye");
    free(out);
    ri_sandbox_result_free(&r);

    /* the reference run: in this sandbox, given all the gas it needs at its first pause */
    assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &err));
    r = ri_interpreter_run(it, sb, lc->counting, strlen(lc->counting));
    assert_int_equal(r.error.code, RI_SANDBOX_SUSPENDED_CALL);
    ri_sandbox_result_free(&r);
    r = ri_interpreter_resume(it, sb, 100000000000u);
    assert_true(r.ok);
    char *expected = take(sb);
    uint64_t gas_whole = r.gas_used;
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);

    /* paused every gas_whole/8 instructions, each pause moved to a new sandbox */
    sb = ri_interpreter_sandbox(it, factory, &err);
    assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &err));
    uint64_t slice = gas_whole / 8 + 1;
    r = ri_interpreter_run(it, sb, lc->counting, strlen(lc->counting));
    char *got = calloc(1, 1);
    size_t got_len = 0;
    int pauses = 0;
    while (!r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL) {
        ri_sandbox_result_free(&r);
        append(&got, &got_len, take(sb));
        uint8_t *image = NULL;
        size_t image_len = 0;
        ri_snapshot_options so = {0};
        so.format = RI_SNAPSHOT_V2;
        if (!ri_sandbox_snapshot_with(sb, &so, &image, &image_len, &err)) fail_msg("snapshot: %s", err.message);
        ri_sandbox_free(sb);
        sb = ri_interpreter_sandbox(it, factory, &err);
        if (!ri_sandbox_restore(sb, image, image_len, &err)) fail_msg("restore: %s", err.message);
        assert_true(ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS, &err)); /* the embedder's choice, again */
        ri_free(image);
        pauses++;
        r = ri_interpreter_resume(it, sb, slice);
    }
    if (!r.ok) fail_msg("%s", r.error.message);
    assert_true(r.exited);
    assert_true(pauses >= 7);
    append(&got, &got_len, take(sb));
    assert_string_equal(got, expected);
    assert_int_equal(r.gas_used, gas_whole);
    ri_sandbox_result_free(&r);
    free(got);
    free(expected);
    ri_sandbox_free(sb);

    /* any sandbox whose config admits the interpreter runs it (restarted into it, its own
     * files kept), even one that never loaded a module: what the server does */
    ri_sandbox_config plain = c;
    plain.enable_wasi = true;
    plain.enable_emscripten = true;
    sb = ri_sandbox_create(factory, &plain, &err);
    assert_non_null(sb);
    assert_true(ri_sandbox_file_put(sb, "/kept.txt", (const uint8_t *)"own", 3, 0, &err));
    r = ri_interpreter_run(it, sb, lc->recall, strlen(lc->recall));
    if (!r.ok) fail_msg("run in a plain sandbox: %s", r.error.message);
    out = take(sb);
    if (lc->no_files) assert_string_equal(out, lc->recalled);
    else assert_non_null(strstr(out, "own"));
    free(out);
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    ri_interpreter_free(it);
    ri_sandboxes_free(factory);
}

static void lua(void **state) {
    (void)state;
    check_language(&lua_case);
}

static void python(void **state) {
    (void)state;
    check_language(&python_case);
}

static void javascript(void **state) {
    (void)state;
    check_language(&javascript_case);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(lua), cmocka_unit_test(python), cmocka_unit_test(javascript)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
