/*
 * Lua (wasmoon's Emscripten build, fetched by scripts/fetch-interpreters.sh into
 * $RI_INTERPRETERS_DIR) through ri_interpreter (ri/lang.h): hello world, Lua
 * errors with their messages (error, a syntax error, pcall inside Lua: longjmp through the
 * engine's invoke and throw), fib(25), files through the workspace, and a long loop paused
 * by gas many times, each pause snapshotted, restored in a new sandbox and resumed, with
 * byte-identical output and the same gas as the uninterrupted run. Skipped, saying so,
 * when the interpreter is not there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lang_test_util.h"

#define NEED_LUA() NEED_INTERPRETER(RI_LANG_LUA)

static int setup(void **state) {
    (void)state;
    return lang_setup(RI_LANG_LUA, UINT64_C(1) << 40);
}

static int teardown(void **state) {
    (void)state;
    lang_teardown();
    return 0;
}

static void hello_world(void **state) {
    (void)state;
    NEED_LUA();
    outcome o;
    run("print('hello, world')", &o);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "hello, world\n");
    assert_int_equal(o.err_len, 0);
}

static void lua_errors_come_with_their_messages(void **state) {
    (void)state;
    NEED_LUA();
    outcome o;
    run("print('before')\nerror('boom')\nprint('after')", &o);
    assert_int_equal(o.status, 1);
    assert_string_equal(o.out, "before\n");
    assert_string_equal(o.err, "lua: main.lua:2: boom\n");
    run("x = = 1", &o);
    assert_int_equal(o.status, 1);
    assert_non_null(strstr(o.err, "main.lua:1:"));
    /* pcall inside Lua: a longjmp caught by an invoke, the program goes on */
    run("print(pcall(error, 'inner'))\nprint(select('#', pcall(function() local t = nil; return t.x end)))", &o);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "false\tinner\n2\n");
}

static void fib_25(void **state) {
    (void)state;
    NEED_LUA();
    outcome o;
    run("local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end\nprint(fib(25))", &o);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "75025\n");
    print_message("fib(25) in Lua: %.1f ms, %llu instructions\n", o.ms, (unsigned long long)o.gas);
}

static void files_live_in_the_workspace(void **state) {
    (void)state;
    NEED_LUA();
    outcome o;
    run("local f = assert(io.open('/data.txt', 'w'))\nf:write('line 1\\nline 2\\n')\nf:close()\n"
        "for l in io.lines('/data.txt') do print(l) end\n"
        "print(io.open('/missing.txt'))\nprint(os.time() > 0, os.remove('/data.txt'))",
        &o);
    if (o.status) print_error("%s\n", o.err);
    assert_int_equal(o.status, 0);
    assert_string_equal(o.out, "line 1\nline 2\nnil\t/missing.txt: No such file or directory\t44\ntrue\ttrue\n");
}

static const char long_loop[] =
    "local s, t = 0, {}\n"
    "for i = 1, 300000 do\n"
    "  s = (s * 31 + i) % 1000003\n"
    "  if i % 1000 == 0 then t[#t + 1] = tostring(s) end\n"
    "  if i % 50000 == 0 then print(i, s, #t, pcall(error, i)) end\n"
    "end\n"
    "print('done', s, table.concat(t, ','):len())\n";

static void a_long_loop_paused_snapshotted_and_resumed(void **state) {
    (void)state;
    NEED_LUA();
    outcome want, got;
    int pauses;
    run_sliced(long_loop, &want, &got, &pauses);
    assert_non_null(strstr(want.out, "done\t"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hello_world),
        cmocka_unit_test(lua_errors_come_with_their_messages),
        cmocka_unit_test(fib_25),
        cmocka_unit_test(files_live_in_the_workspace),
        cmocka_unit_test(a_long_loop_paused_snapshotted_and_resumed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
