/* What the drivers share (call.c). */
#ifndef RI_LANG_INTERNAL_H
#define RI_LANG_INTERNAL_H

#include "lang/lang.h"

/* Calls export `name` of sb to completion: its first result in *out (if any); on failure
 * *err, its message naming the export. */
bool lang_call(ri_sandbox *sb, const char *name, const ri_val *args, uint32_t nargs, int64_t *out,
               ri_sandbox_error *err);
/* A driver's own failure: err set (INVALID_MODULE, the message), false. */
bool lang_fail(ri_sandbox_error *err, const char *message);
/* What the glue's initRuntime does: the stack's limits, then the constructors. */
bool lang_init_runtime(ri_sandbox *sb, ri_sandbox_error *err);

#endif
