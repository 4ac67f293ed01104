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
    /* NULL, or the text initialise runs in the guest (JavaScript's runtime): part of an
     * image's key, so that an image made with another version of it is not reused. */
    const char *setup;
} lang_ops;

/* The table of a language; NULL if there is none. */
const lang_ops *lang_ops_for(ri_language lang);

extern const lang_ops lang_ruby;
extern const lang_ops lang_lua;
extern const lang_ops lang_python;
extern const lang_ops lang_javascript;

/* An interpreter opened once (ri/lang.h): the generic part (lang.c) and its images (image.c). */
struct ri_interpreter {
    const lang_ops *ops;
    ri_sandbox *template_sb;         /* initialised; never runs code */
    ri_checkpoint *ready;            /* its state: what every run starts from */
    int64_t state[LANG_STATE_WORDS]; /* the language's own (lang_ops) */
    ri_interpreter_imports *imports; /* the answers to its imports of a JavaScript host */
    uint8_t key[32];                 /* what its image is bound to (image.c) */
};

/* The key of an image of lang's interpreter from these module bytes and config (image.c). */
bool lang_image_key(ri_language lang, const uint8_t *wasm, size_t len, const ri_sandbox_config *config,
                    uint8_t key[32]);

/* The first half of an open: the module loaded once, recognised, in a template sandbox
 * (created from config as every open makes it), not initialised. NULL on error (err). */
ri_interpreter *lang_prepare(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                             const ri_sandbox_config *config, ri_sandbox_error *err);
/* The second half: the template's state (initialised or restored) kept as the checkpoint
 * runs start from. it, or NULL (it freed, err set). */
ri_interpreter *lang_ready(ri_interpreter *it, ri_sandbox_error *err);

/* A call made to completion: r, a call's result, resumed while it is paused (gas, time
 * slices), up to LANG_MAX_SLICES times. The result is the call's (the caller frees it). */
#define LANG_MAX_SLICES 100000u
ri_sandbox_result lang_through(ri_sandbox *sb, ri_sandbox_result r);

/* Whether the module exports every function of `names` (n of them); why names the first
 * missing one, as `who` ("wasmoon's Lua") exports it. */
bool lang_has_exports(const ri_module *m, const char *const *names, size_t n, const char *who, char *why, size_t cap);

/* A failed result with err's code and message (for a run that could not start). */
ri_sandbox_result lang_failed(const ri_sandbox_error *err);

/* Copies bytes into memory the guest allocated with its allocator export `alloc_export`
 * (cabi_realloc-style: (old_ptr, old_size, align, new_size) -> ptr). 0 on error (err set). */
uint32_t lang_guest_bytes(ri_sandbox *sb, const char *alloc_export, const void *data, size_t len, uint32_t align,
                          ri_sandbox_error *err);

/* Calls export `name` of sb to completion (lang_through): its first result in *out (if any);
 * on failure *err, its message naming the export. */
bool lang_call(ri_sandbox *sb, const char *name, const ri_val *args, uint32_t nargs, int64_t *out,
               ri_sandbox_error *err);
/* The drivers' helpers (call.c). A driver's own failure: err set (INVALID_MODULE, the message), false. */
bool lang_fail(ri_sandbox_error *err, const char *message);
/* What the glue's initRuntime does: the stack's limits, then the constructors. */
bool lang_init_runtime(ri_sandbox *sb, ri_sandbox_error *err);

#endif
