/*
 * The MicroPython driver over @micropython/micropython-webassembly-pyscript's build
 * (docs/LANGUAGES.md), driven as its glue's runPython does: mp_js_init(pystack, heap),
 * proxy_c_init(), then per run the code copied into memory from malloc and
 * mp_js_do_exec(code, len, out), whose 12-byte `out` says what came back: kind -1 is an
 * uncaught exception, with the text "<type>\x04<traceback>" at a malloc'd address.
 */
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

#define PYSTACK 2048          /* the glue's defaults */
#define HEAP_BYTES 1048576
#define KIND_EXCEPTION (-1)

bool ri_python_open(ri_python *py, ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err) {
    memset(py, 0, sizeof *py);
    py->sb = sb;
    ri_val init[2] = {ri_val_i32(PYSTACK), ri_val_i32(HEAP_BYTES)};
    return ri_sandbox_load(sb, wasm, len, err) && lang_init_runtime(sb, err) &&
           lang_call(sb, "mp_js_init", init, 2, NULL, err) && lang_call(sb, "proxy_c_init", NULL, 0, NULL, err);
}

ri_sandbox_result ri_python_start(ri_python *py, const char *code, size_t len) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    int64_t buf = 0, out = 0;
    ri_val n = ri_val_i32((int32_t)(len + 1)), twelve = ri_val_i32(12);
    if (len >= INT32_MAX || !lang_call(py->sb, "malloc", &n, 1, &buf, &r.error) || !buf ||
        !lang_call(py->sb, "malloc", &twelve, 1, &out, &r.error) || !out) {
        if (!r.error.message[0]) lang_fail(&r.error, "the program does not fit the interpreter's heap");
        return r;
    }
    static const char nul = 0;
    if (!ri_sandbox_memory_write(py->sb, (uint64_t)buf, code, len, &r.error) ||
        !ri_sandbox_memory_write(py->sb, (uint64_t)buf + len, &nul, 1, &r.error))
        return r;
    py->code = (int32_t)buf;
    py->out = (int32_t)out;
    ri_val exec[3] = {ri_val_i32(py->code), ri_val_i32((int32_t)len), ri_val_i32(py->out)};
    return ri_sandbox_call(py->sb, "mp_js_do_exec", exec, 3);
}

static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

int ri_python_finish(ri_python *py, char **error, ri_sandbox_error *err) {
    *error = NULL;
    uint8_t out[12];
    if (!ri_sandbox_memory_read(py->sb, (uint64_t)(uint32_t)py->out, out, sizeof out, err)) return -1;
    int status = 0;
    if ((int32_t)le32(out) == KIND_EXCEPTION) {
        uint32_t n = le32(out + 4), at = le32(out + 8);
        status = 1;
        *error = malloc((size_t)n + 1);
        if (!*error || !ri_sandbox_memory_read(py->sb, at, *error, n, err)) {
            free(*error);
            *error = NULL;
            return -1;
        }
        (*error)[n] = 0;
        ri_val p = ri_val_i32((int32_t)at);
        if (!lang_call(py->sb, "free", &p, 1, NULL, err)) return -1;
    }
    ri_val code = ri_val_i32(py->code), o = ri_val_i32(py->out);
    if (!lang_call(py->sb, "free", &code, 1, NULL, err) || !lang_call(py->sb, "free", &o, 1, NULL, err)) return -1;
    return status;
}
