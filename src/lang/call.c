/* Calls into a driver's sandbox (lang_internal.h). */
#include <stdio.h>
#include <string.h>

#include "lang/lang_internal.h"

bool lang_fail(ri_sandbox_error *err, const char *message) {
    memset(err, 0, sizeof *err);
    err->code = RI_SANDBOX_INVALID_MODULE;
    snprintf(err->message, sizeof err->message, "%s", message);
    return false;
}

bool lang_init_runtime(ri_sandbox *sb, ri_sandbox_error *err) {
    return lang_call(sb, "emscripten_stack_init", NULL, 0, NULL, err) &&
           lang_call(sb, "__wasm_call_ctors", NULL, 0, NULL, err);
}
