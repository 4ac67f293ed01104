/* The profile's files share this: a call's context and the handlers (profile.c lists them). */
#ifndef RI_EMSC_INTERNAL_H
#define RI_EMSC_INTERNAL_H

#include "emscripten/emscripten.h"
#include "wasi/wasi_internal.h"

typedef struct emsc_ctx {
    ri_wasi *w;
    ri_host_call *call;
    wasi_mem mem;
    ri_wasi_outcome *outcome;
} emsc_ctx;

typedef int (*emsc_fn)(emsc_ctx *c, const ri_val *args, ri_val *results);
#define EMSC_HANDLER(name) int emsc_##name(emsc_ctx *c, const ri_val *args, ri_val *results)

/* Syscalls return -errno; Emscripten's errno values are WASI's. */
static inline ri_val emsc_errno(uint32_t e) { return ri_val_i32(-(int32_t)e); }
static inline uint32_t emsc_u32(const ri_val *args, int i) { return (uint32_t)args[i].of.i32; }

/* A NUL-terminated string in guest memory at ptr, at most max bytes before the NUL: its
 * bytes (in guest memory) and length, or NULL (outside memory, or too long). */
const char *emsc_cstring(const wasi_mem *m, uint32_t ptr, uint32_t max, uint32_t *len);

/* time.c */
EMSC_HANDLER(date_now); EMSC_HANDLER(now_is_monotonic); EMSC_HANDLER(ticks_ms); EMSC_HANDLER(time_ms);
EMSC_HANDLER(gmtime); EMSC_HANDLER(localtime); EMSC_HANDLER(mktime); EMSC_HANDLER(tzset); EMSC_HANDLER(strftime);
/* syscalls.c */
EMSC_HANDLER(openat); EMSC_HANDLER(fcntl64); EMSC_HANDLER(ioctl); EMSC_HANDLER(dup3); EMSC_HANDLER(unlinkat);
EMSC_HANDLER(rmdir); EMSC_HANDLER(renameat); EMSC_HANDLER(readlinkat); EMSC_HANDLER(chdir); EMSC_HANDLER(getcwd);
EMSC_HANDLER(mkdirat); EMSC_HANDLER(poll); EMSC_HANDLER(getdents64); EMSC_HANDLER(fstat64); EMSC_HANDLER(stat64);
EMSC_HANDLER(newfstatat); EMSC_HANDLER(lstat64); EMSC_HANDLER(statfs64);

/* quickjs_host.c */
EMSC_HANDLER(qjs_host_call); EMSC_HANDLER(qjs_host_interrupt); EMSC_HANDLER(qjs_host_promise_rejection);
EMSC_HANDLER(qjs_host_module); EMSC_HANDLER(qjs_host_timezone_offset);

#endif
