/* Names of WebAssembly types for ri's output: "i32", "func (i32, i64) -> (f32)", ... */
#ifndef RI_CLI_WASM_TYPES_H
#define RI_CLI_WASM_TYPES_H

#include <stdio.h>

#include "ri/engine.h"
#include "cli/jsonw.h"

const char *ri_externkind_name(ri_externkind k);
/* The type as one line of text (no newline): "func (i32) -> (i32)", "memory 1..256 pages", "memory 1 page, no maximum". */
void ri_externtype_print(FILE *f, const ri_externtype *t);
/* The type's members, written into an open JSON object: "kind", then the kind's fields. */
void ri_externtype_json(ri_jsonw *w, const ri_externtype *t);

#endif
