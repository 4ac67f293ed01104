/*
 * MicroPython (@micropython/micropython-webassembly-pyscript 1.27.0, fetched by
 * scripts/fetch-interpreters.sh into $RI_INTERPRETERS_DIR) through ri_interpreter (ri/lang.h):
 * hello world, an uncaught exception with its traceback, exceptions
 * caught in Python (nlr's longjmp through the engine's invoke and throw), fib(25), files in
 * the workspace, a JavaScript-only import refused with a clear message, and a long loop
 * paused by gas, snapshotted, restored and resumed with byte-identical output and the same
 * gas. Skipped, saying so, when the interpreter is not there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lang_test_util.h"

#define NEED_PY() NEED_INTERPRETER(RI_LANG_PYTHON)

static int setup(void **state) {
    (void)state;
    return lang_setup(RI_LANG_PYTHON, UINT64_C(1) << 40);
}

static int teardown(void **state) {
    (void)state;
    lang_teardown();
    return 0;
}

static void hello_world(void **state) {
    (void)state;
    NEED_PY();
    outcome o;
    run("print('hello, world')", &o);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "hello, world\n");
}

static void exceptions(void **state) {
    (void)state;
    NEED_PY();
    outcome o;
    run("print('before')\nraise ValueError('boom')", &o);
    assert_int_equal(o.status, 1);
    assert_string_equal(o.out, "before\n");
    assert_non_null(strstr(o.err, "ValueError: boom"));
    assert_non_null(strstr(o.err, "line 2"));
    run("try:\n  1 // 0\nexcept ZeroDivisionError as e:\n  print('caught', e)\nprint(int('12') + 1)", &o);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "caught divide by zero\n13\n");
}

static void fib_25(void **state) {
    (void)state;
    NEED_PY();
    outcome o;
    run("def fib(n):\n  return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(25))", &o);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "75025\n");
    print_message("fib(25) in MicroPython: %.1f ms, %llu instructions\n", o.ms, (unsigned long long)o.gas);
}

static void files_and_javascript(void **state) {
    (void)state;
    NEED_PY();
    outcome o;
    run("with open('/data.txt', 'w') as f:\n  f.write('one\\ntwo\\n')\n"
        "print(open('/data.txt').read().split())\nimport os\nprint('data.txt' in os.listdir('/'))",
        &o);
    if (o.status) print_error("%s\n", o.err);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "['one', 'two']\nTrue\n");
    /* The `js` module needs JavaScript: the call fails, clearly. */
    ri_sandbox *sb = sandbox_of(NULL, 0, 0);
    const char *code = "import js\nprint(js.Math)";
    ri_sandbox_result r = ri_interpreter_run(interp, sb, code, strlen(code));
    assert_false(r.ok);
    assert_int_equal(r.error.code, RI_SANDBOX_HOST_FUNCTION_ERROR);
    assert_non_null(strstr(r.error.message, "JavaScript"));
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
}

static const char long_loop[] =
    "s = 0\nt = []\n"
    "for i in range(1, 60001):\n"
    "    s = (s * 31 + i) % 1000003\n"
    "    if i % 1000 == 0: t.append(str(s))\n"
    "    if i % 10000 == 0:\n"
    "        try:\n"
    "            raise KeyError(i)\n"
    "        except KeyError as e:\n"
    "            print(i, s, len(t), repr(e))\n"
    "print('done', s, len(','.join(t)))\n";

static void a_long_loop_paused_snapshotted_and_resumed(void **state) {
    (void)state;
    NEED_PY();
    outcome want, got;
    int pauses;
    run_sliced(long_loop, &want, &got, &pauses);
    assert_non_null(strstr(want.out, "done "));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hello_world),
        cmocka_unit_test(exceptions),
        cmocka_unit_test(fib_25),
        cmocka_unit_test(files_and_javascript),
        cmocka_unit_test(a_long_loop_paused_snapshotted_and_resumed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
