/*
 * args_* and environ_*: the configuration's strings, each written NUL-terminated into the
 * guest's buffer, with a pointer table beside it. Sizes are checked before anything is
 * written, so a bad pointer changes nothing (EFAULT).
 */
#include <string.h>

#include "wasi_internal.h"

static uint64_t strings_size(char **v, uint32_t n) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += strlen(v[i]) + 1;
    return total;
}

static uint32_t sizes_get(wasi_call *c, char **v, uint32_t n, uint32_t count_ptr, uint32_t size_ptr) {
    uint64_t size = strings_size(v, n);
    if (size > UINT32_MAX) return WASI_EOVERFLOW;
    if (!wasi_mem_range(&c->mem, count_ptr, 4) || !wasi_mem_range(&c->mem, size_ptr, 4)) return WASI_EFAULT;
    wasi_store_u32(&c->mem, count_ptr, n);
    wasi_store_u32(&c->mem, size_ptr, (uint32_t)size);
    return WASI_ESUCCESS;
}

static uint32_t strings_get(wasi_call *c, char **v, uint32_t n, uint32_t ptrs, uint32_t buf) {
    uint64_t size = strings_size(v, n);
    uint8_t *table = wasi_mem_range(&c->mem, ptrs, (uint64_t)n * 4u);
    uint8_t *bytes = wasi_mem_range(&c->mem, buf, size);
    if (!table || !bytes) return WASI_EFAULT;
    uint64_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strlen(v[i]) + 1;
        memmove(bytes + at, v[i], len);
        ri_le_put32(table + 4u * i, (uint32_t)(buf + at)); /* buf + size fits: checked */
        at += len;
    }
    return WASI_ESUCCESS;
}

WASI_HANDLER(args_sizes_get) { return sizes_get(c, c->w->argv, c->w->argc, wasi_arg32(args, 0), wasi_arg32(args, 1)); }
WASI_HANDLER(args_get) { return strings_get(c, c->w->argv, c->w->argc, wasi_arg32(args, 0), wasi_arg32(args, 1)); }
WASI_HANDLER(environ_sizes_get) {
    return sizes_get(c, c->w->env, c->w->nenv, wasi_arg32(args, 0), wasi_arg32(args, 1));
}
WASI_HANDLER(environ_get) { return strings_get(c, c->w->env, c->w->nenv, wasi_arg32(args, 0), wasi_arg32(args, 1)); }
