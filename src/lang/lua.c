/*
 * The Lua driver over wasmoon's build (docs/LANGUAGES.md). The sandbox API passes numbers
 * only, so text goes through the WASI context: at setup a small runner chunk arrives on
 * stdin (luaL_loadfilex with no file name reads stdin) and is kept in the registry; each
 * run writes the program to a workspace file the runner opens with io.open (the profile's
 * openat over the workspace), runs under pcall and reports on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "lang/lang_internal.h"
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

bool ri_lua_open(ri_lua *lua, ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err) {
    memset(lua, 0, sizeof *lua);
    lua->sb = sb;
    if (!ri_sandbox_load(sb, wasm, len, err)) return false;
    int64_t v = 0;
    if (!lang_init_runtime(sb, err) || !lang_call(sb, "luaL_newstate", NULL, 0, &v, err))
        return false;
    if (v == 0) return lang_fail(err, "luaL_newstate returned NULL");
    lua->L = (int32_t)v;
    ri_val L = ri_val_i32(lua->L);
    if (!lang_call(lua->sb, "luaL_openlibs", &L, 1, NULL, err)) return false;
    if (!ri_sandbox_wasi_stdin_push(sb, (const uint8_t *)runner, sizeof runner - 1))
        return lang_fail(err, "the runner does not fit stdin");
    ri_sandbox_wasi_stdin_close(sb);
    ri_val load[3] = {L, ri_val_i32(0), ri_val_i32(0)};
    if (!lang_call(lua->sb, "luaL_loadfilex", load, 3, &v, err)) return false;
    if (v != 0) return lang_fail(err, "the runner chunk does not load");
    ri_val pcall[6] = {L, ri_val_i32(0), ri_val_i32(1), ri_val_i32(0), ri_val_i32(0), ri_val_i32(0)};
    if (!lang_call(lua->sb, "lua_pcallk", pcall, 6, &v, err)) return false;
    if (v != 0) return lang_fail(err, "the runner chunk failed");
    ri_val ref[2] = {L, ri_val_i32(LUA_REGISTRYINDEX)};
    if (!lang_call(lua->sb, "luaL_ref", ref, 2, &lua->runner, err)) return false;
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
        lang_fail(&r.error, "cannot write the program to the workspace");
        return r;
    }
    ri_val get[3] = {ri_val_i32(lua->L), ri_val_i32(LUA_REGISTRYINDEX), ri_val_i64(lua->runner)};
    ri_sandbox_error err;
    if (!lang_call(lua->sb, "lua_rawgeti", get, 3, NULL, &err)) {
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
    if (pcall_status == 0 && !lang_call(lua->sb, "lua_tointegerx", top, 3, &status, err)) return -1;
    ri_val settop[2] = {L, ri_val_i32(0)};
    if (!lang_call(lua->sb, "lua_settop", settop, 2, NULL, err)) return -1;
    return status == 0 ? 0 : 1;
}
