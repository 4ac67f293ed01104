/*
 * The Lua driver over wasmoon's build (docs/LANGUAGES.md). The sandbox API passes numbers
 * only, so text goes through the WASI context: at setup a small runner chunk arrives on
 * stdin (luaL_loadfilex with no file name reads stdin) and is kept in the registry; each
 * run writes the program to a workspace file the runner opens with io.open (the profile's
 * openat over the workspace), runs under pcall and reports on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "lang/lang.h"
#include "workspace/wsfs.h"

#define LUA_REGISTRYINDEX (-1001000) /* -LUAI_MAXSTACK - 1000 */
#define LUA_MULTRET (-1)
#define INPUT_NAME ".ri-input.lua"

static const char runner[] =
    "return function()\n"
    "  local f = assert(io.open('/" INPUT_NAME "', 'rb'))\n"
    "  local src = f:read('a')\n"
    "  f:close()\n"
    "  local chunk, err = load(src, '=input')\n"
    "  if not chunk then io.stderr:write(err, '\\n') io.stdout:flush() return 1 end\n"
    "  local ok, e = pcall(chunk)\n"
    "  io.stdout:flush()\n"
    "  if not ok then io.stderr:write(tostring(e), '\\n') return 1 end\n"
    "  return 0\n"
    "end\n";

static bool fail(ri_sandbox_error *err, const char *fmt, const char *what) {
    memset(err, 0, sizeof *err);
    err->code = RI_SANDBOX_INVALID_MODULE;
    snprintf(err->message, sizeof err->message, fmt, what);
    return false;
}

/* Calls export `name` to completion: its first result in *out (if any). */
static bool call(ri_lua *lua, const char *name, const ri_val *args, uint32_t nargs, int64_t *out,
                 ri_sandbox_error *err) {
    ri_sandbox_result r = ri_sandbox_call(lua->sb, name, args, nargs);
    bool ok = r.ok;
    if (ok && out) *out = r.nresults ? (r.results[0].type == RI_I64 ? r.results[0].of.i64 : r.results[0].of.i32) : 0;
    if (!ok) {
        *err = r.error;
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, " (Lua driver: %s)", name);
    }
    ri_sandbox_result_free(&r);
    return ok;
}

bool ri_lua_open(ri_lua *lua, ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err) {
    memset(lua, 0, sizeof *lua);
    lua->sb = sb;
    if (!ri_sandbox_load(sb, wasm, len, err)) return false;
    int64_t v = 0;
    /* What the glue's initRuntime does: the stack's limits, then the constructors. */
    if (!call(lua, "emscripten_stack_init", NULL, 0, NULL, err) || !call(lua, "__wasm_call_ctors", NULL, 0, NULL, err) ||
        !call(lua, "luaL_newstate", NULL, 0, &v, err))
        return false;
    if (v == 0) return fail(err, "%s", "luaL_newstate returned NULL");
    lua->L = (int32_t)v;
    ri_val L = ri_val_i32(lua->L);
    if (!call(lua, "luaL_openlibs", &L, 1, NULL, err)) return false;
    if (!ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)runner, sizeof runner - 1))
        return fail(err, "%s", "the runner does not fit stdin");
    ri_sandbox_wasi_stdin_close(sb);
    ri_val load[3] = {L, ri_val_i32(0), ri_val_i32(0)};
    if (!call(lua, "luaL_loadfilex", load, 3, &v, err)) return false;
    if (v != 0) return fail(err, "%s", "the runner chunk does not load");
    ri_val pcall[6] = {L, ri_val_i32(0), ri_val_i32(1), ri_val_i32(0), ri_val_i32(0), ri_val_i32(0)};
    if (!call(lua, "lua_pcallk", pcall, 6, &v, err)) return false;
    if (v != 0) return fail(err, "%s", "the runner chunk failed");
    ri_val ref[2] = {L, ri_val_i32(LUA_REGISTRYINDEX)};
    if (!call(lua, "luaL_ref", ref, 2, &lua->runner, err)) return false;
    return true;
}

ri_sandbox_result ri_lua_start(ri_lua *lua, const char *code, size_t len) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    wsfs *fs = ri_sandbox_wasi_workspace(lua->sb);
    uint64_t ino;
    size_t n = 0;
    wsfs_errno e = fs ? wsfs_open(fs, WSFS_ROOT_INO, INPUT_NAME, strlen(INPUT_NAME), WSFS_O_CREAT | WSFS_O_TRUNC, &ino)
                      : 1;
    if (!e) e = wsfs_pwrite(fs, ino, code, len, 0, &n);
    if (e || n != len) {
        fail(&r.error, "cannot write the program to the workspace (WASI errno %s)", e ? "set" : "0, short write");
        return r;
    }
    ri_val get[3] = {ri_val_i32(lua->L), ri_val_i32(LUA_REGISTRYINDEX), ri_val_i64(lua->runner)};
    ri_sandbox_error err;
    if (!call(lua, "lua_rawgeti", get, 3, NULL, &err)) {
        r.error = err;
        return r;
    }
    ri_val pcall[6] = {ri_val_i32(lua->L), ri_val_i32(0), ri_val_i32(1), ri_val_i32(0), ri_val_i32(0), ri_val_i32(0)};
    return ri_sandbox_call(lua->sb, "lua_pcallk", pcall, 6);
}

int ri_lua_finish(ri_lua *lua, int32_t pcall_status, ri_sandbox_error *err) {
    ri_val L = ri_val_i32(lua->L);
    ri_val top[3] = {L, ri_val_i32(-1), ri_val_i32(0)};
    int64_t status = 1; /* the runner itself failed (out of memory, say): its message is not printed */
    if (pcall_status == 0 && !call(lua, "lua_tointegerx", top, 3, &status, err)) return -1;
    ri_val settop[2] = {L, ri_val_i32(0)};
    if (!call(lua, "lua_settop", settop, 2, NULL, err)) return -1;
    return status == 0 ? 0 : 1;
}
