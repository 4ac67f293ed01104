/*
 * Block memory of a family (docs/WORKSPACE.md "Block memory"). Fresh pages cost a page
 * fault each on first touch, which dominated large writes (about 100 MB/s where memcpy
 * into touched memory does several GB/s). A family that holds more than a few blocks
 * takes them from 2 MiB slabs instead of malloc: aligned mappings advised as huge pages,
 * so one fault maps a whole slab, and freed slots are reused before fresh ones. A slab
 * goes back to the system when its last block is freed, but for up to 8 empty ones a
 * family keeps for its next blocks. Each block records where it came from; the family's lock guards
 * its slab list (forks may allocate from several threads).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "workspace/wsfs_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define SLAB_BYTES ((size_t)2 << 20)
#define SLAB_AFTER 16     /* blocks a family holds before it takes slabs (small ones stay small) */
#define SLAB_KEEP_EMPTY 8 /* empty slabs a family keeps (16 MiB at most) */
#define SLOT_BYTES ((sizeof(wsfs_block) + 63) & ~(size_t)63)
#define HEAD_BYTES ((sizeof(struct wsfs_slab) + 63) & ~(size_t)63)
#define SLOTS ((uint32_t)((SLAB_BYTES - HEAD_BYTES) / SLOT_BYTES))

static wsfs_slab *slab_new(void) {
    /* twice the size, then the unaligned ends unmapped: an aligned slab, so that a block
     * finds its slab by masking its address */
    uint8_t *m = mmap(NULL, 2 * SLAB_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    uintptr_t at = ((uintptr_t)m + SLAB_BYTES - 1) & ~(uintptr_t)(SLAB_BYTES - 1);
    uint8_t *a = (uint8_t *)at;
    if (a > m) munmap(m, (size_t)(a - m));
    if (a + SLAB_BYTES < m + 2 * SLAB_BYTES) munmap(a + SLAB_BYTES, (size_t)(m + 2 * SLAB_BYTES - (a + SLAB_BYTES)));
#ifdef MADV_HUGEPAGE
    (void)madvise(a, SLAB_BYTES, MADV_HUGEPAGE); /* advice only: without it, 4 KiB pages */
#endif
    wsfs_slab *s = (wsfs_slab *)a;
    s->prev = s->next = NULL;
    s->free = NULL;
    s->live = s->bump = 0;
    s->listed = false;
    POISON(a + HEAD_BYTES, SLAB_BYTES - HEAD_BYTES);
    return s;
}

static void link_slab(wsfs_family *fam, wsfs_slab *s) {
    s->prev = NULL;
    s->next = fam->avail;
    if (fam->avail) fam->avail->prev = s;
    fam->avail = s;
    s->listed = true;
}

static void unlink_slab(wsfs_family *fam, wsfs_slab *s) {
    if (s->prev) s->prev->next = s->next;
    else fam->avail = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = false;
}

wsfs_block *slab_block_alloc(wsfs_family *fam) {
    if (atomic_load_explicit(&fam->blocks, memory_order_relaxed) < SLAB_AFTER) return NULL;
    pthread_mutex_lock(&fam->lock);
    wsfs_slab *s = fam->avail;
    if (!s) {
        s = slab_new();
        if (!s) {
            pthread_mutex_unlock(&fam->lock);
            return NULL; /* the caller takes malloc's */
        }
        link_slab(fam, s);
    }
    uint8_t *p;
    if (s->free) {
        p = s->free;
        UNPOISON(p, SLOT_BYTES);
        s->free = *(void **)p;
    } else {
        p = (uint8_t *)s + HEAD_BYTES + (size_t)s->bump++ * SLOT_BYTES;
        UNPOISON(p, SLOT_BYTES);
    }
    if (s->live++ == 0 && fam->empty) fam->empty--;
    if (!s->free && s->bump == SLOTS) unlink_slab(fam, s); /* full */
    pthread_mutex_unlock(&fam->lock);
    wsfs_block *b = (wsfs_block *)p;
    b->h.slab = 1;
    return b;
}

void slab_block_free(wsfs_family *fam, wsfs_block *b) {
    wsfs_slab *s = (wsfs_slab *)((uintptr_t)b & ~(uintptr_t)(SLAB_BYTES - 1));
    pthread_mutex_lock(&fam->lock);
    *(void **)b = s->free;
    s->free = b;
    POISON((uint8_t *)b + sizeof(void *), SLOT_BYTES - sizeof(void *));
    s->live--;
    bool unmap = false;
    if (s->live == 0 && fam->empty >= SLAB_KEEP_EMPTY) {
        if (s->listed) unlink_slab(fam, s);
        unmap = true;
    } else if (s->live == 0) {
        /* kept for the family's next blocks (a restore replacing a workspace frees as
         * many as it takes), from its start again: reusing it costs no fault (handing
         * part of it back would split its huge page) */
        s->free = NULL;
        s->bump = 0;
        fam->empty++;
        POISON((uint8_t *)s + HEAD_BYTES, SLAB_BYTES - HEAD_BYTES);
        if (!s->listed) link_slab(fam, s);
    } else if (!s->listed) {
        link_slab(fam, s);
    }
    pthread_mutex_unlock(&fam->lock);
    if (unmap) {
        UNPOISON(s, SLAB_BYTES);
        munmap(s, SLAB_BYTES);
    }
}

void slab_release_all(wsfs_family *fam) {
    /* at the family's end every block is freed: only empty slabs are left */
    while (fam->avail) {
        wsfs_slab *s = fam->avail;
        RI_ASSERT(s->live == 0, "W8");
        unlink_slab(fam, s);
        UNPOISON(s, SLAB_BYTES);
        munmap(s, SLAB_BYTES);
    }
}
