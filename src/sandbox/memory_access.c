/*
 * The embedder's reads and writes of the sandbox's memory (the memory that counts: memory 0
 * or env.memory), between executions: how a driver hands text to a module that takes a
 * pointer (src/lang). Bounds-checked; refused while an execution runs.
 */
#include <string.h>

#include "sandbox_internal.h"

static uint8_t *memory_range(ri_sandbox *sb, uint64_t offset, size_t len, const char *what,
                             ri_sandbox_error *err) {
    ri_sandbox_status st = sb ? sb_status(sb) : RI_SANDBOX_DESTROYED;
    if (st != RI_SANDBOX_LOADED && st != RI_SANDBOX_SUSPENDED) {
        sb_error_trap(err, "invalid_state", "%s: the sandbox has no module loaded, or an execution is running", what);
        return NULL;
    }
    ri_memory *mem = sb->image ? sb->image->memory : NULL;
    uint64_t size = mem ? ri_memory_size(mem) : 0;
    if (!mem || len > size || offset > size - len) {
        sb_error_trap(err, "out_of_bounds_memory", "%s: bytes [%llu, %llu + %zu) are outside the memory (%llu bytes)",
                      what, (unsigned long long)offset, (unsigned long long)offset, len, (unsigned long long)size);
        return NULL;
    }
    return ri_memory_data(mem) + offset;
}

bool ri_sandbox_memory_read(ri_sandbox *sb, uint64_t offset, void *out, size_t len, ri_sandbox_error *err) {
    uint8_t *p = memory_range(sb, offset, len, "ri_sandbox_memory_read", err);
    if (p && len) memcpy(out, p, len);
    return p != NULL;
}

bool ri_sandbox_memory_write(ri_sandbox *sb, uint64_t offset, const void *data, size_t len, ri_sandbox_error *err) {
    uint8_t *p = memory_range(sb, offset, len, "ri_sandbox_memory_write", err);
    if (p && len) memcpy(p, data, len);
    return p != NULL;
}
