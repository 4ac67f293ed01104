/* The host's bounds-checked reads and writes of a sandbox's memory 0 (ri/sandbox.h): what
 * an embedder needs to hand an export a string by address, or collect what it left. */
#include "sandbox_internal.h"

/* Memory 0 when the host may touch it, else NULL with err set. */
static ri_memory *host_memory(ri_sandbox *sb, ri_sandbox_error *err) {
    if (!sb) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "no sandbox");
        return NULL;
    }
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) {
        sb_error_destroyed(err, sb->id);
        return NULL;
    }
    if (status == RI_SANDBOX_RUNNING) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                     "the memory of sandbox %s cannot be read or written while a call runs in it", sb->id);
        return NULL;
    }
    if (!sb->image || !sb->image->memory) {
        sb_error_set(err, RI_SANDBOX_OUT_OF_BOUNDS, "sandbox %s has no memory: no module is loaded", sb->id);
        return NULL;
    }
    return sb->image->memory;
}

static bool out_of_bounds(ri_sandbox *sb, ri_memory *mem, uint64_t offset, size_t len, ri_sandbox_error *err) {
    sb_error_set(err, RI_SANDBOX_OUT_OF_BOUNDS, "bytes %llu to %llu are outside the memory of sandbox %s (%llu bytes)",
                 (unsigned long long)offset, (unsigned long long)offset + len, sb->id,
                 (unsigned long long)ri_memory_size(mem));
    return false;
}

bool ri_sandbox_memory_read(ri_sandbox *sb, uint64_t offset, void *dst, size_t len, ri_sandbox_error *err) {
    ri_memory *mem = host_memory(sb, err);
    if (!mem) return false;
    if (!ri_memory_read(mem, offset, dst, len)) return out_of_bounds(sb, mem, offset, len, err);
    return true;
}

bool ri_sandbox_memory_write(ri_sandbox *sb, uint64_t offset, const void *src, size_t len, ri_sandbox_error *err) {
    ri_memory *mem = host_memory(sb, err);
    if (!mem) return false;
    if (!ri_memory_write(mem, offset, src, len)) return out_of_bounds(sb, mem, offset, len, err);
    return true;
}

uint64_t ri_sandbox_memory_size(ri_sandbox *sb) {
    return sb && sb->image && sb->image->memory ? ri_memory_size(sb->image->memory) : 0;
}
