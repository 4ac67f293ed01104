/* Which ABI an execution's module speaks: a module importing from wasi_snapshot_preview1
 * runs as a WASI process, others with ri.write/ri.read (exec.c). Only the import section
 * is read (the module was loaded and validated already; a malformed one reads as not WASI). */
#include <string.h>

#include "server_internal.h"

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static bool uleb(rd *r, uint32_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        if (r->p >= r->end) return false;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (v > UINT32_MAX) return false;
            *out = (uint32_t)v;
            return true;
        }
    }
    return false;
}

static bool skip(rd *r, size_t n) {
    if ((size_t)(r->end - r->p) < n) return false;
    r->p += n;
    return true;
}

/* A u64 LEB128 skipped (a 64-bit memory's limits). */
static bool skip_uleb64(rd *r) {
    for (unsigned i = 0; i < 10; i++) {
        if (r->p >= r->end) return false;
        if (!(*r->p++ & 0x80)) return true;
    }
    return false;
}

static bool limits(rd *r) {
    uint32_t flags, v;
    if (!uleb(r, &flags)) return false;
    if (flags & 4) return skip_uleb64(r) && (!(flags & 1) || skip_uleb64(r)); /* memory64 */
    if (!uleb(r, &v)) return false;
    return (flags & 1) ? uleb(r, &v) : true;
}

/* One import's description after its names. */
static bool import_desc(rd *r) {
    if (r->p >= r->end) return false;
    uint8_t kind = *r->p++;
    uint32_t v;
    switch (kind) {
    case 0: return uleb(r, &v);                         /* function: type index */
    case 1: return skip(r, 1) && limits(r);             /* table: reftype, limits */
    case 2: return limits(r);                           /* memory */
    case 3: return skip(r, 2);                          /* global: valtype, mutability */
    case 4: return skip(r, 1) && uleb(r, &v);           /* tag: attribute, type index */
    default: return false;
    }
}

bool srv_module_imports_wasi(const uint8_t *wasm, size_t n) {
    static const char ns[] = "wasi_snapshot_preview1";
    if (n < 8) return false;
    rd r = {wasm + 8, wasm + n};
    while (r.p < r.end) {
        uint8_t id = *r.p++;
        uint32_t size;
        if (!uleb(&r, &size) || (size_t)(r.end - r.p) < size) return false;
        if (id != 2) {
            r.p += size;
            continue;
        }
        rd s = {r.p, r.p + size};
        uint32_t count;
        if (!uleb(&s, &count)) return false;
        for (uint32_t i = 0; i < count; i++) {
            uint32_t len;
            if (!uleb(&s, &len) || (size_t)(s.end - s.p) < len) return false;
            bool wasi = len == sizeof ns - 1 && memcmp(s.p, ns, len) == 0;
            if (wasi) return true;
            s.p += len;
            if (!uleb(&s, &len) || !skip(&s, len) || !import_desc(&s)) return false;
        }
        return false; /* one import section */
    }
    return false;
}
