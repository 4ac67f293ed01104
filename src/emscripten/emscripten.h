/*
 * The Emscripten host profile (docs/LANGUAGES.md): the env imports that Emscripten builds
 * of language interpreters make, served deterministically over the sandbox's WASI context
 * (its workspace, its virtual clock, its seeded random numbers). A sandbox enables it with
 * enable_emscripten (with enable_wasi). invoke_* and _emscripten_throw_longjmp are not host
 * functions: they are bound to the engine's operations (ri_func_new_emscripten).
 */
#ifndef RI_EMSCRIPTEN_PROFILE_H
#define RI_EMSCRIPTEN_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/engine.h"
#include "wasi/wasi.h"

typedef enum ri_emsc_kind {
    RI_EMSC_HOST,   /* a host function of the profile (ri_emsc_call) */
    RI_EMSC_STUB,   /* a JavaScript-side function: admitted, and a call fails (ri_emsc_call) */
    RI_EMSC_INVOKE, /* invoke_<sig>: the engine's RI_EMSCRIPTEN_INVOKE */
    RI_EMSC_THROW,  /* _emscripten_throw_longjmp: the engine's RI_EMSCRIPTEN_THROW */
} ri_emsc_kind;

/* Whether env.<name> of type t is in the profile. On success *kind and *index (for
 * ri_emsc_call); else false with the reason in why (the name is unknown, or its type is
 * not the one the profile serves). */
bool ri_emsc_lookup(const char *name, size_t len, const ri_functype *t, ri_emsc_kind *kind, uint32_t *index,
                    char *why, size_t cap);

/* Runs function `index` (RI_EMSC_HOST or _STUB) on the WASI context w: 0, with *outcome
 * (RI_WASI_EXIT: exit() ended the process, as proc_exit), or a failed call (ri_host_fail). */
int ri_emsc_call(ri_wasi *w, uint32_t index, ri_host_call *call, const ri_val *args, ri_val *results,
                 ri_wasi_outcome *outcome);

/* The name of function `index` of the profile (for error messages). */
const char *ri_emsc_name(uint32_t index);

#endif
