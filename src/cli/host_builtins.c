/* Built-in host functions for ri run --host (see host_builtins.h). */
#include "cli/host_builtins.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/output.h"

/* log_str shows at most this much of a string: a guest must not flood the terminal. */
#define LOG_STR_MAX 4096u

static int host_log_i32(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)results;
    fprintf(stderr, "[log_i32] %" PRId32 "\n", args[0].of.i32);
    return 0;
}

static int host_log_str(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)user, (void)results;
    uint32_t ptr = (uint32_t)args[0].of.i32, len = (uint32_t)args[1].of.i32;
    ri_memory *mem = ri_host_call_memory(call);
    if (!mem) return ri_host_fail(call, "log_str: the module has no memory");
    uint64_t size = ri_memory_size(mem);
    if ((uint64_t)ptr + len > size)
        return ri_host_fail(call, "log_str: [%" PRIu32 ", %" PRIu32 " + %" PRIu32 ") is outside memory (%" PRIu64 " bytes)",
                            ptr, ptr, len, size);
    uint32_t shown = len < LOG_STR_MAX ? len : LOG_STR_MAX;
    char buf[LOG_STR_MAX];
    if (!ri_memory_read(mem, ptr, buf, shown)) return ri_host_fail(call, "log_str: cannot read memory");
    fputs("[log_str] ", stderr);
    ri_put_safe(stderr, buf, shown);
    if (shown < len) fprintf(stderr, " ... (%" PRIu32 " bytes in all)", len);
    fputc('\n', stderr);
    return 0;
}

static int host_fail(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)user, (void)results;
    return ri_host_fail(call, "fail(%" PRId32 ") called", args[0].of.i32);
}

static int host_tick(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)args, (void)results;
    return 0;
}

static const ri_valtype one_i32[] = {RI_I32};
static const ri_valtype two_i32[] = {RI_I32, RI_I32};

static const ri_host_function builtins[] = {
    {"log_i32", 1, one_i32, 0, NULL, host_log_i32, NULL},
    {"log_str", 2, two_i32, 0, NULL, host_log_str, NULL},
    {"fail", 1, one_i32, 0, NULL, host_fail, NULL},
    {"tick", 0, NULL, 0, NULL, host_tick, NULL},
};

const char ri_host_builtins_help[] =
    "  log_i32 (i32) -> ()        prints the number on stderr\n"
    "  log_str (i32 ptr, i32 len) -> ()\n"
    "                             prints len bytes of memory at ptr on stderr\n"
    "  fail    (i32 code) -> ()   always fails: the execution ends HOST_FUNCTION_ERROR\n"
    "  tick    () -> ()           does nothing (a host call: costs 1 gas)\n";

const ri_host_function *ri_host_builtin(const char *name) {
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
    return NULL;
}
