/*
 * ri languages: code as text (Ruby, ...) run by a real interpreter built to WebAssembly,
 * inside ordinary sandboxes (docs/LANGUAGES.md).
 *
 * An interpreter is opened once: its module is loaded, compiled and initialised in a
 * template sandbox, and the initialised state is kept as a checkpoint. Every sandbox for
 * that language is a copy-on-write fork of it (ready for code at once), and every run of
 * code starts the interpreter afresh from that state among the files the last run left
 * (ri_sandbox_restart). A run is a WASI process: stdout and stderr go where the config's
 * WASI settings send them, stdin is read from the sandbox's input, and it ends with an exit
 * code (an uncaught error prints its message on stderr and exits 1). Everything a sandbox
 * does applies: gas, time and memory limits, pausing (RI_SANDBOX_SUSPENDED_CALL, then
 * ri_sandbox_resume), snapshots of a paused run, forks, determinism.
 */
#ifndef RI_LANG_H
#define RI_LANG_H

#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"
#include "ri/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ri_language {
    RI_LANG_NONE = 0,
    RI_LANG_RUBY = 1,
    RI_LANG_LUA = 2,
    RI_LANG_PYTHON = 3,
    RI_LANG_JAVASCRIPT = 4,
} ri_language;

/* "ruby"; NULL for an unknown value. */
RI_API const char *ri_language_name(ri_language lang);
/* The language of a name ("ruby"; "js" for "javascript"), RI_LANG_NONE when unknown. */
RI_API ri_language ri_language_from_name(const char *name);
/* The names of the languages this library can run, comma-separated ("ruby, lua, python, javascript"). */
RI_API const char *ri_language_names(void);

typedef struct ri_interpreter ri_interpreter;

/* Loads and initialises the interpreter's module (wasm: its bytes, e.g. Ruby's
 * ruby+stdlib.wasm) under config (copied; WASI is enabled whatever it says, and the imports
 * an interpreter has for a JavaScript host are answered with an error). Initialisation runs
 * in slices of config's gas and time limits, so a short default limit does not stop it.
 * NULL on error (INVALID_MODULE: not this language's interpreter; or what the load or the
 * initialisation reported). */
RI_API ri_interpreter *ri_interpreter_open(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                                           const ri_sandbox_config *config, ri_sandbox_error *err);
RI_API void ri_interpreter_free(ri_interpreter *it);
RI_API ri_language ri_interpreter_language(const ri_interpreter *it);

/* A new sandbox ready for code: a fork of the initialised interpreter (its own id, files and
 * limits; the interpreter may be freed before it). Any sandbox whose config admits the
 * interpreter's imports (WASI, and the Emscripten profile for Lua and Python) also runs it:
 * ri_interpreter_run restarts it into the interpreter, keeping its files. */
RI_API ri_sandbox *ri_interpreter_sandbox(ri_interpreter *it, ri_sandboxes *factory, ri_sandbox_error *err);

/* Runs code (UTF-8 text) in sb, a sandbox of ri_interpreter_sandbox, as a new process of
 * the interpreter: result.exited with exit_code (ok when 0); or paused
 * (RI_SANDBOX_SUSPENDED_CALL, continue with ri_interpreter_resume) when the sandbox's pause-on
 * mask says so or the program waits for input; or an error of the sandbox (gas, time,
 * memory). */
RI_API ri_sandbox_result ri_interpreter_run(ri_interpreter *it, ri_sandbox *sb, const char *code, size_t len);
/* Continues a paused run (ri_sandbox_resume with gas) and, when it ends, makes its result the
 * process's end as ri_interpreter_run does: use it, not ri_sandbox_resume, for runs of an
 * interpreter (also after a restore of a snapshot of a paused run). */
RI_API ri_sandbox_result ri_interpreter_resume(ri_interpreter *it, ri_sandbox *sb, uint64_t gas);
/* For an embedder that continues paused runs itself (ri_sandbox_resume_carry, its own time
 * slices): applied to the result that ends the run, it makes it the process's end as
 * ri_interpreter_run does (nothing for a result that is still a pause). */
RI_API void ri_interpreter_end(ri_interpreter *it, ri_sandbox *sb, ri_sandbox_result *r);

/* ---- where an interpreter is -----------------------------------------------------------
 * The file of lang's interpreter, as scripts/fetch-interpreters.sh installs it:
 * DIR/<name>.wasm with DIR dir (NULL or "": $RI_INTERPRETERS_DIR, else
 * $HOME/.cache/ri/interpreters). false when the path does not fit cap or lang is unknown. */
RI_API bool ri_interpreter_path(ri_language lang, const char *dir, char *buf, size_t cap);

/* ---- the host functions of an interpreter's module --------------------------------------
 * An interpreter may import functions of a host other than WASI and Emscripten's env: Ruby's
 * JavaScript host (rb-js-abi-host), answered with an error naming the function, and its
 * table of its own values (canonical_abi.resource_*), answered with handles that are the
 * values. Every sandbox that runs the interpreter needs them among its host functions:
 * ri_interpreter_open's sandboxes have them; an embedder that makes its own sandboxes (a
 * server) puts them in its config. Read from the module's type and import sections only: a
 * prefix of the module that holds them is enough. */
typedef struct ri_interpreter_imports ri_interpreter_imports;
RI_API ri_interpreter_imports *ri_interpreter_imports_read(const uint8_t *wasm, size_t len, ri_sandbox_error *err);
/* Their number; *fns and *modules (either may be NULL): arrays for ri_sandbox_config's
 * host_functions and host_modules, valid until ri_interpreter_imports_free. */
RI_API uint32_t ri_interpreter_imports_get(const ri_interpreter_imports *im, const ri_host_function **fns,
                                           const char *const **modules);
RI_API void ri_interpreter_imports_free(ri_interpreter_imports *im);

/* ---- images of an initialised interpreter ------------------------------------------------
 * Opening an interpreter runs its initialisation (for Ruby, 1.6 billion instructions). An
 * image is that initialised state saved as bytes: opening from it loads the module and
 * restores the state, and gives the same interpreter as ri_interpreter_open would. An image
 * is bound to the module's bytes (SHA-256), this library's version and image format, and what
 * of the config the initialisation can see (seed, event time, the WASI arguments,
 * environment and terminals); any other pairing is refused. */
RI_API bool ri_interpreter_image(ri_interpreter *it, uint8_t **out, size_t *out_len, ri_sandbox_error *err);
/* ri_interpreter_open from an image; NULL with INVALID_MODULE / SNAPSHOT_ERROR when the image
 * does not match (other module, version or config; damaged) or does not restore. */
RI_API ri_interpreter *ri_interpreter_open_image(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm,
                                                 size_t len, const ri_sandbox_config *config, const uint8_t *image,
                                                 size_t image_len, ri_sandbox_error *err);

typedef enum ri_image_use {
    RI_IMAGE_NOT_CACHED = 0, /* no cache folder, or the image could not be written there */
    RI_IMAGE_RESTORED = 1,   /* opened from the cached image */
    RI_IMAGE_WRITTEN = 2,    /* initialised, and the image saved for the next open */
} ri_image_use;

/* ri_interpreter_open with a cache of images in folder cache_dir (NULL: none): an image there
 * for this module and config is restored; a missing, damaged or mismatching one is ignored
 * and the interpreter initialised, then its image written (temporary file, fsync, rename)
 * as cache_dir/<language>-<key>.image. *used (may be NULL) says which happened. */
RI_API ri_interpreter *ri_interpreter_open_cached(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm,
                                                  size_t len, const ri_sandbox_config *config, const char *cache_dir,
                                                  ri_image_use *used, ri_sandbox_error *err);

#ifdef __cplusplus
}
#endif
#endif
