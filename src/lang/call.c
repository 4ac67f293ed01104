/* Calls into a driver's sandbox (lang_internal.h). */
#include <stdio.h>
#include <string.h>

#include "lang/lang_internal.h"

bool lang_call(ri_sandbox *sb, const char *name, const ri_val *args, uint32_t nargs, int64_t *out,
               ri_sandbox_error *err) {
    ri_sandbox_result r = ri_sandbox_call(sb, name, args, nargs);
    bool ok = r.ok;
    if (ok && out) *out = r.nresults ? (r.results[0].type == RI_I64 ? r.results[0].of.i64 : r.results[0].of.i32) : 0;
    if (!ok) {
        *err = r.error;
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, " (driver: %s)", name);
    }
    ri_sandbox_result_free(&r);
    return ok;
}

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
