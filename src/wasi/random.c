/*
 * random_get: bytes from the sandbox's seeded PRNG (Mulberry32, whose state snapshots
 * hold), four per output, little-endian; the last output's unused bytes are dropped.
 * The whole buffer is checked first: EFAULT draws nothing.
 */
#include "wasi_internal.h"

WASI_HANDLER(random_get) {
    uint32_t len = wasi_arg32(args, 1);
    uint8_t *buf = wasi_mem_range(&c->mem, wasi_arg32(args, 0), len);
    if (!buf) return WASI_EFAULT;
    if (!c->w->services.random32) return WASI_ENOSYS;
    for (uint64_t at = 0; at < len; at += 4) {
        uint32_t r = c->w->services.random32(c->w->services.ctx);
        for (unsigned k = 0; k < 4 && at + k < len; k++) buf[at + k] = (uint8_t)(r >> (8 * k));
    }
    return WASI_ESUCCESS;
}
