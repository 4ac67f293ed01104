/*
 * Language drivers (docs/LANGUAGES.md): run code given as text through a real interpreter
 * built with Emscripten, in a sandbox with enable_wasi and enable_emscripten. The driver
 * sets the interpreter up once, then each run hands it a program through the sandbox's
 * workspace and collects stdout and stderr from the WASI context. A run is an ordinary
 * sandbox call: it meters, pauses (ri_sandbox_resume), snapshots and restores as any other.
 */
#ifndef RI_LANG_EMSC_DRIVERS_H
#define RI_LANG_EMSC_DRIVERS_H

#include <stddef.h>
#include <stdint.h>

#include "ri/sandbox.h"

/* Lua 5.4 as wasmoon builds it. */
typedef struct ri_lua {
    ri_sandbox *sb;
    int32_t L;          /* the lua_State (a guest address: the same in a restored copy) */
    int64_t runner;     /* registry reference of the runner function */
} ri_lua;

/* Loads wasmoon's glue.wasm into sb (created with enable_wasi and enable_emscripten, WASI
 * stdio buffered) and sets up a Lua state with the standard libraries. */
bool ri_lua_open(ri_lua *lua, ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err);

/* Starts running `code` (a Lua chunk named "input"); its errors go to stderr. The result
 * may be a pause (RI_SANDBOX_SUSPENDED_CALL): ri_sandbox_resume the sandbox until it is
 * not, then ri_lua_finish. */
ri_sandbox_result ri_lua_start(ri_lua *lua, const char *code, size_t len);

/* After the run's call completed with lua_pcallk's status `pcall_status` (the result's
 * value): the program's status (0 ok, 1 a Lua error, reported on stderr; -1 the driver
 * failed: err says why), the Lua stack emptied for the next run. */
int ri_lua_finish(ri_lua *lua, int32_t pcall_status, ri_sandbox_error *err);

/* MicroPython as @micropython/micropython-webassembly-pyscript builds it. */
typedef struct ri_python {
    ri_sandbox *sb;
    int32_t code, out;  /* the running program's text and result record (guest addresses) */
} ri_python;

/* Loads micropython.wasm into sb (as for Lua) and initialises the interpreter. */
bool ri_python_open(ri_python *py, ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err);
/* Starts running `code` as a module; may pause like ri_lua_start. */
ri_sandbox_result ri_python_start(ri_python *py, const char *code, size_t len);
/* After the call completed: 0 ok, 1 an uncaught exception (*error: "<type>\x04<traceback>",
 * malloc'd), -1 the driver failed (err). */
int ri_python_finish(ri_python *py, char **error, ri_sandbox_error *err);

#endif
