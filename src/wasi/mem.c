/*
 * Guest memory access: every pointer and length the guest passes is checked against its
 * memory 0 with 64-bit arithmetic (a u32 pointer plus a u32 or u64 length cannot wrap),
 * and every multi-byte value is read and written byte by byte, little-endian, so the
 * layout is the wasm32 one on any host (s390x included) and alignment does not matter.
 */
#include <string.h>

#include "wasi_internal.h"

wasi_mem wasi_mem_of(ri_host_call *call) {
    wasi_mem m = {NULL, 0};
    ri_memory *mem = call ? ri_host_call_memory(call) : NULL;
    if (mem) {
        m.data = ri_memory_data(mem);
        m.size = ri_memory_size(mem);
    }
    return m;
}

uint8_t *wasi_mem_range(const wasi_mem *m, uint32_t ptr, uint64_t len) {
    if (!m->data) return NULL;
    if (len > m->size || (uint64_t)ptr > m->size - len) return NULL;
    return m->data + ptr;
}


bool wasi_load_u32(const wasi_mem *m, uint32_t ptr, uint32_t *out) {
    const uint8_t *p = wasi_mem_range(m, ptr, 4);
    if (!p) return false;
    *out = ri_le_get32(p);
    return true;
}
bool wasi_load_u64(const wasi_mem *m, uint32_t ptr, uint64_t *out) {
    const uint8_t *p = wasi_mem_range(m, ptr, 8);
    if (!p) return false;
    *out = ri_le_get64(p);
    return true;
}
bool wasi_store_u32(const wasi_mem *m, uint32_t ptr, uint32_t v) {
    uint8_t *p = wasi_mem_range(m, ptr, 4);
    if (!p) return false;
    ri_le_put32(p, v);
    return true;
}
bool wasi_store_u64(const wasi_mem *m, uint32_t ptr, uint64_t v) {
    uint8_t *p = wasi_mem_range(m, ptr, 8);
    if (!p) return false;
    ri_le_put64(p, v);
    return true;
}

uint32_t wasi_iovs_get(const wasi_mem *m, uint32_t iovs, uint32_t n, wasi_iovs *out) {
    memset(out, 0, sizeof *out);
    uint8_t *entries = wasi_mem_range(m, iovs, (uint64_t)n * 8u);
    if (!entries) return WASI_EFAULT;
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t buf = ri_le_get32(entries + 8u * i), len = ri_le_get32(entries + 8u * i + 4);
        if (!wasi_mem_range(m, buf, len)) return WASI_EFAULT;
        total += len;
        if (total > UINT32_MAX) return WASI_EINVAL; /* the byte count is a u32 */
    }
    out->n = n;
    out->entries = entries;
    out->total = total;
    return WASI_ESUCCESS;
}

uint8_t *wasi_iov_buf(const wasi_mem *m, const wasi_iovs *v, uint32_t i, uint32_t *len) {
    uint32_t buf = ri_le_get32(v->entries + 8u * i);
    *len = ri_le_get32(v->entries + 8u * i + 4);
    return wasi_mem_range(m, buf, *len);
}

uint64_t wasi_iovs_scatter(const wasi_mem *m, const wasi_iovs *v, const uint8_t *src, uint64_t len) {
    uint64_t done = 0;
    for (uint32_t i = 0; i < v->n && done < len; i++) {
        uint32_t n;
        uint8_t *dst = wasi_iov_buf(m, v, i, &n);
        if (!dst) break;
        uint64_t k = len - done < n ? len - done : n;
        memmove(dst, src + done, (size_t)k);
        done += k;
    }
    return done;
}
