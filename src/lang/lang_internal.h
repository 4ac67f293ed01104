/*
 * The language layer (docs/LANGUAGES.md): what the generic part (lang.c: open, fork, run,
 * the answers to JavaScript-host imports, calls made to completion) needs of each language
 * (ruby.c, ...): one table of operations per language.
 */
#ifndef RI_LANG_INTERNAL_H
#define RI_LANG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ri/engine.h"
#include "ri/lang.h"
#include "lang/emsc_drivers.h"

/* What a language keeps of its initialised interpreter (guest addresses and the like: the
 * same in every fork), filled by initialise, read by run and finish. */
#define LANG_STATE_WORDS 4

typedef struct lang_ops {
    ri_language lang;
    const char *name;
    bool emscripten; /* an Emscripten build: the sandbox gets the Emscripten profile */
    /* Whether the module is this language's interpreter (by its exports); why says what
     * is missing. */
    bool (*recognise)(const ri_module *module, char *why, size_t cap);
    /* After _initialize: the interpreter's own start-up (its arguments, its library). */
    bool (*initialise)(ri_sandbox *sb, int64_t state[LANG_STATE_WORDS], ri_sandbox_error *err);
    /* Starts a run of code: the one call whose result is the run's (it may pause). */
    ri_sandbox_result (*run)(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], const char *code, size_t len);
    /* NULL, or what turns the completed call's result into the process's end (exited and
     * exit_code) when the interpreter cannot end the process itself. */
    void (*finish)(ri_sandbox *sb, const int64_t state[LANG_STATE_WORDS], ri_sandbox_result *r);
} lang_ops;

extern const lang_ops lang_ruby;
extern const lang_ops lang_lua;
extern const lang_ops lang_python;
extern const lang_ops lang_javascript;

/* A call made to completion: paused slices (gas, time) are resumed until it ends, up to
 * LANG_MAX_SLICES. The result is the call's (the caller frees it). */
#define LANG_MAX_SLICES 100000u
ri_sandbox_result lang_call_through(ri_sandbox *sb, const char *action, const ri_val *args, uint32_t nargs);

/* Whether the module exports every function of `names` (n of them); why names the first
 * missing one, as `who` ("wasmoon's Lua") exports it. */
bool lang_has_exports(const ri_module *m, const char *const *names, size_t n, const char *who, char *why, size_t cap);

/* A failed result with err's code and message (for a run that could not start). */
ri_sandbox_result lang_failed(const ri_sandbox_error *err);

/* Copies bytes into memory the guest allocated with its allocator export `alloc_export`
 * (cabi_realloc-style: (old_ptr, old_size, align, new_size) -> ptr). 0 on error (err set). */
uint32_t lang_guest_bytes(ri_sandbox *sb, const char *alloc_export, const void *data, size_t len, uint32_t align,
                          ri_sandbox_error *err);

/* The Emscripten drivers' helpers (call.c). Calls export `name` of sb to completion: its
 * first result in *out (if any); on failure *err, its message naming the export. */
bool lang_call(ri_sandbox *sb, const char *name, const ri_val *args, uint32_t nargs, int64_t *out,
               ri_sandbox_error *err);
/* A driver's own failure: err set (INVALID_MODULE, the message), false. */
bool lang_fail(ri_sandbox_error *err, const char *message);
/* What the glue's initRuntime does: the stack's limits, then the constructors. */
bool lang_init_runtime(ri_sandbox *sb, ri_sandbox_error *err);

#endif
