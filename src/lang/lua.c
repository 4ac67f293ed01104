/*
 * Lua as wasmoon builds it (docs/LANGUAGES.md), a language of ri_interpreter (ri/lang.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

#define LUA_REGISTRYINDEX (-1001000) /* -LUAI_MAXSTACK - 1000 */
#define LUA_MULTRET (-1)

/* The state is made once in the initialised image (state[0]: the lua_State); a run loads a
 * small program that holds the user's code as a long-bracket string, loads it as chunk
 * main.lua under pcall, prints an error as `lua` does, flushes, and ends the process with
 * os.exit (Emscripten's exit: the profile ends the run with the code). */

static bool lua_recognise(const ri_module *m, char *why, size_t cap) {
    static const char *const needed[] = {"luaL_newstate", "luaL_openlibs", "luaL_loadbufferx", "lua_pcallk",
                                         "malloc", "free", "emscripten_stack_init", "__wasm_call_ctors"};
    return lang_has_exports(m, needed, sizeof needed / sizeof needed[0], "wasmoon's Lua", why, cap);
}

static bool lua_initialise(ri_sandbox *sb, int64_t state[LANG_STATE_WORDS], ri_sandbox_error *err) {
    int64_t L = 0;
    if (!lang_init_runtime(sb, err) || !lang_call(sb, "luaL_newstate", NULL, 0, &L, err)) return false;
    if (L == 0) return lang_fail(err, "luaL_newstate returned NULL");
    ri_val arg = ri_val_i32((int32_t)L);
    if (!lang_call(sb, "luaL_openlibs", &arg, 1, NULL, err)) return false;
    state[0] = L;
    return true;
}

static const char lua_head[] =
    "local exit = os.exit\n"
    "os.exit = function(...) io.stdout:flush() io.stderr:flush() return exit(...) end\n"
    "local chunk, err = load(";
static const char lua_tail[] =
    ", '@main.lua', 't')\n"
    "if not chunk then io.stderr:write('lua: ', err, '\\n') io.stdout:flush() os.exit(1, false) end\n"
    "local ok, e = pcall(chunk)\n"
    "io.stdout:flush()\n"
    "if not ok then io.stderr:write('lua: ', tostring(e), '\\n') io.stderr:flush() os.exit(1, false) end\n"
    "os.exit(0, false)\n";

/* The code as a Lua long-bracket string of a level that does not occur in it; the newline
 * after the opening bracket is skipped by Lua, so the code's own first line stays line 1. */
static char *lua_program(const char *code, size_t len, size_t *out_len) {
    size_t level = 0;
    for (;; level++) {
        char close[64];
        if (level + 2 >= sizeof close) return NULL;
        close[0] = ']';
        memset(close + 1, '=', level);
        close[level + 1] = ']';
        bool found = false;
        for (size_t i = 0; !found && i + level + 2 <= len; i++) found = memcmp(code + i, close, level + 2) == 0;
        if (!found) break;
    }
    size_t head = sizeof lua_head - 1, tail = sizeof lua_tail - 1;
    size_t n = head + 2 * (level + 2) + 1 + len + tail + 1;
    char *p = malloc(n);
    if (!p) return NULL;
    size_t k = 0;
    memcpy(p + k, lua_head, head), k += head;
    p[k++] = '[';
    memset(p + k, '=', level), k += level;
    p[k++] = '[';
    p[k++] = '\n';
    memcpy(p + k, code, len), k += len;
    p[k++] = ']';
    memset(p + k, '=', level), k += level;
    p[k++] = ']';
    memcpy(p + k, lua_tail, tail), k += tail;
    p[k++] = '\0'; /* luaL_loadbufferx's chunk name follows: "=ri" */
    *out_len = k;
    return p;
}

static ri_sandbox_result lua_run(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], const char *code, size_t len) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    size_t n;
    char *program = lua_program(code, len, &n);
    if (!program || n > INT32_MAX - 8) {
        free(program);
        lang_fail(&r.error, "out of memory for the program");
        return r;
    }
    static const char name[] = "=ri";
    int64_t at = 0, status = 0;
    ri_val size = ri_val_i32((int32_t)(n + sizeof name));
    bool ok = lang_call(sb, "malloc", &size, 1, &at, &r.error) && at != 0 &&
              ri_sandbox_memory_write(sb, (uint64_t)at, program, n, &r.error) &&
              ri_sandbox_memory_write(sb, (uint64_t)at + n, name, sizeof name, &r.error);
    free(program);
    if (!ok) {
        if (!r.error.message[0]) lang_fail(&r.error, "the program does not fit Lua's heap");
        return r;
    }
    ri_val load[5] = {ri_val_i32((int32_t)state[0]), ri_val_i32((int32_t)at), ri_val_i32((int32_t)(n - 1)),
                      ri_val_i32((int32_t)(at + (int64_t)n)), ri_val_i32(0)};
    ri_val freed = ri_val_i32((int32_t)at);
    if (!lang_call(sb, "luaL_loadbufferx", load, 5, &status, &r.error) ||
        !lang_call(sb, "free", &freed, 1, NULL, &r.error))
        return r;
    if (status != 0) {
        lang_fail(&r.error, "ri's Lua runner does not load");
        return r;
    }
    ri_val pcall[6] = {ri_val_i32((int32_t)state[0]), ri_val_i32(0), ri_val_i32(0),
                       ri_val_i32(0), ri_val_i32(0), ri_val_i32(0)};
    return ri_sandbox_wasi_call(sb, "lua_pcallk", pcall, 6);
}

const lang_ops lang_lua = {RI_LANG_LUA, "lua", true, lua_recognise, lua_initialise, lua_run, NULL, NULL};
