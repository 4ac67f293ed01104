/*
 * The last saved pages of one sandbox, so that a save hashes only the pages that
 * changed: a page whose bytes equal the cached page at the same index has the cached
 * hash (a 64 KiB memcmp costs a tenth of a SHA-256 of it), and a restore takes a page
 * from here when its hash is the cached one instead of reading and verifying its blob.
 *
 * It is a memo of "these bytes hash to this": true whatever happens to the store, so
 * it never needs invalidating. What it does not say is that the blob exists; a save
 * checks that separately.
 */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

typedef struct cache_memory {
    uint32_t npages;             /* slots allocated */
    uint8_t **bytes;             /* NULL: not cached */
    uint8_t *hashes;             /* npages * 32 */
} cache_memory;

struct ri_snapstore_cache {
    uint32_t nmem;
    cache_memory *mem;
};

ri_snapstore_cache *ri_snapstore_cache_new(void) { return calloc(1, sizeof(ri_snapstore_cache)); }

static void free_memory(cache_memory *m) {
    for (uint32_t i = 0; i < m->npages; i++) free(m->bytes[i]);
    free(m->bytes);
    free(m->hashes);
    memset(m, 0, sizeof *m);
}

void ri_snapstore_cache_free(ri_snapstore_cache *c) {
    if (!c) return;
    for (uint32_t i = 0; i < c->nmem; i++) free_memory(&c->mem[i]);
    free(c->mem);
    free(c);
}

static const uint8_t *page_of(const ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t **hash) {
    if (!c || mem >= c->nmem || page >= c->mem[mem].npages || !c->mem[mem].bytes[page]) return NULL;
    *hash = c->mem[mem].hashes + (size_t)page * SS_HASH;
    return c->mem[mem].bytes[page];
}

bool ss_cache_match(const ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t *bytes,
                    uint8_t hash[SS_HASH]) {
    const uint8_t *h;
    const uint8_t *cached = page_of(c, mem, page, &h);
    if (!cached || memcmp(cached, bytes, SS_PAGE) != 0) return false;
    memcpy(hash, h, SS_HASH);
    return true;
}

const uint8_t *ss_cache_by_hash(const ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t hash[SS_HASH]) {
    const uint8_t *h;
    const uint8_t *cached = page_of(c, mem, page, &h);
    return cached && memcmp(h, hash, SS_HASH) == 0 ? cached : NULL;
}

static bool grow(ri_snapstore_cache *c, uint32_t mem, uint32_t page) {
    if (mem >= c->nmem) {
        cache_memory *m = realloc(c->mem, ((size_t)mem + 1) * sizeof *m);
        if (!m) return false;
        memset(m + c->nmem, 0, ((size_t)mem + 1 - c->nmem) * sizeof *m);
        c->mem = m;
        c->nmem = mem + 1;
    }
    cache_memory *m = &c->mem[mem];
    if (page < m->npages) return true;
    uint32_t n = m->npages ? m->npages : 16;
    while (n <= page) n = n > UINT32_MAX / 2 ? page + 1 : n * 2;
    uint8_t **bytes = realloc(m->bytes, (size_t)n * sizeof *bytes);
    if (!bytes) return false;
    m->bytes = bytes;
    uint8_t *hashes = realloc(m->hashes, (size_t)n * SS_HASH);
    if (!hashes) return false;
    m->hashes = hashes;
    memset(m->bytes + m->npages, 0, (size_t)(n - m->npages) * sizeof *bytes);
    m->npages = n;
    return true;
}

bool ss_cache_set(ri_snapstore_cache *c, uint32_t mem, uint32_t page, const uint8_t *bytes, const uint8_t hash[SS_HASH]) {
    if (!c) return true;
    if (!grow(c, mem, page)) return false;
    cache_memory *m = &c->mem[mem];
    if (!m->bytes[page]) {
        m->bytes[page] = malloc(SS_PAGE);
        if (!m->bytes[page]) return false;
    }
    if (m->bytes[page] != bytes) memcpy(m->bytes[page], bytes, SS_PAGE);
    memcpy(m->hashes + (size_t)page * SS_HASH, hash, SS_HASH);
    return true;
}

void ss_cache_trim(ri_snapstore_cache *c, uint32_t nmem, const uint32_t *pages, const uint8_t *const *bitmaps) {
    if (!c) return;
    for (uint32_t i = 0; i < c->nmem; i++) {
        cache_memory *m = &c->mem[i];
        if (i >= nmem) {
            free_memory(m);
            continue;
        }
        for (uint32_t p = 0; p < m->npages; p++) {
            bool keep = p < pages[i] && (bitmaps[i][p / 8] >> (p % 8) & 1);
            if (!keep && m->bytes[p]) {
                free(m->bytes[p]);
                m->bytes[p] = NULL;
            }
        }
    }
}
