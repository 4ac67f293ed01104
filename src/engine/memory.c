/*
 * Linear memories and memory images (copy-on-write checkpoints).
 *
 * Storage: a memory's bytes live at the start of a reservation of its effective
 * maximum (mmap PROT_NONE, no commit), so data never moves: grow maps fresh zero
 * pages after the current end, shrink maps the tail back to PROT_NONE.
 *
 * Images (ri_memimage): immutable, reference-counted contents of a memory.
 *   full   every page p at offset p * 64 KiB of a memfd (unwritten zero pages are holes)
 *          or, without memfd, of a heap copy;
 *   delta  parent + the units in `delta` (sorted), unit delta[i] at offset i * unit of
 *          its memfd; a unit is an OS page (4 KiB), the granularity at which the kernel
 *          copies on write, so a delta holds the bytes written, not whole 64 KiB pages.
 *          content(img, u) = its stored unit if u is in delta; else content(parent, u)
 *          if u lies in a page below base_pages; else zero.
 * Loading an image into a memory maps the full ancestor's file MAP_PRIVATE over the
 * memory, then each delta's runs on top: the memory reads as the image, and writes
 * go to private anonymous copies of the pages (copy-on-write by the kernel).
 *
 * The memory's `backing` is the image it was last loaded from or captured into. The
 * invariant: a "clean" page q (no 4 KiB page of it anonymous-and-present or swapped,
 * and not in [mapped_pages, backing->pages)) holds content(backing, q). A page written
 * since became anonymous (the kernel copied it), so /proc/self/pagemap tells the
 * written pages: present (bit 63) or swapped (bit 62), and not file-backed (bit 61).
 * Correctness never depends on pagemap: when it cannot be read, every page counts as
 * written (a full image). Pages that were shrunk away and grown back are zero but may
 * be non-zero in the backing: they count as written (mapped_pages marks them).
 *
 * A capture stores the written pages in a new memfd, then maps them back from it,
 * so they read as clean again. Chains are compacted into a full image when they get
 * deep or the mappings many (the kernel limits mappings per process).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, MAP_NORESERVE */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"

/* WebAssembly 2.0 memories are at most 2^16 pages (4 GiB). */
#define MAX_PAGES 65536u
/* Past these, a capture writes a full image instead of one more delta. */
#define MAX_DEPTH 32u
#define MAX_MAPS 512u
/* pagemap entry bits */
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_FILE (1ull << 61)

struct ri_memimage {
    atomic_uint refs;
    struct ri_memimage *parent; /* a delta's parent (one reference), NULL for a full image */
    uint32_t pages;             /* the memory's size in pages */
    uint32_t base_pages;        /* delta: pages below this not stored read as the parent's */
    uint32_t nstored;           /* delta: entries of `delta` (units); full: its pages */
    uint32_t stored_pages;      /* WebAssembly pages with a stored unit (statistics) */
    uint32_t unit;              /* delta: bytes per unit, the OS page size (4 KiB) */
    uint32_t *delta;            /* delta: sorted unit numbers (unit u: bytes [u*unit, u*unit+unit)) */
    uint32_t depth;             /* deltas down to the full ancestor */
    uint32_t nruns;             /* runs of consecutive pages in `delta` */
    int fd;                     /* memfd, or -1 (heap copy, or an empty delta) */
    uint8_t *copy;              /* full image without memfd: pages * 64 KiB bytes */
};

static size_t os_page(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 && p <= (long)RI_PAGE_SIZE ? (size_t)p : 4096u;
}

/* Deltas are kept in units of one OS page: what the kernel copies on write. */
static size_t units_per_page(void) { return RI_PAGE_SIZE / os_page(); }
static size_t units_bytes(const ri_memory *mem) { return ((size_t)mem->pages * units_per_page() + 7) / 8 + 1; }

static void set_errno_error(ri_error *err, const char *what) {
    int e = errno;
    ri_error_set(err, e == ENOMEM ? RI_ERR_NOMEM : RI_ERR_LIMIT, "%s failed: %s", what, strerror(e));
}

/* ---- mappings in the reservation ---------------------------------------------------- */

static bool map_anon(ri_memory *mem, uint32_t first, uint32_t count) {
    if (!count) return true;
    void *at = mem->data + (size_t)first * RI_PAGE_SIZE;
    void *p = mmap(at, (size_t)count * RI_PAGE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) return false;
    mem->nmaps++;
    return true;
}

/* New pages of a memory: from its working file while it has one (see ri_memory_new),
 * else anonymous. Either way they read as zero. */
static bool map_fresh(ri_memory *mem, uint32_t first, uint32_t count) {
    if (mem->work_fd < 0) return map_anon(mem, first, count);
    if (!count) return true;
    void *at = mem->data + (size_t)first * RI_PAGE_SIZE;
    void *p = mmap(at, (size_t)count * RI_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, mem->work_fd,
                   (off_t)((uint64_t)first * RI_PAGE_SIZE));
    if (p == MAP_FAILED) return false;
    mem->nmaps++;
    return true;
}

static bool map_none(ri_memory *mem, uint32_t first, uint32_t count) {
    if (!count) return true;
    void *at = mem->data + (size_t)first * RI_PAGE_SIZE;
    void *p = mmap(at, (size_t)count * RI_PAGE_SIZE, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    return p != MAP_FAILED;
}

static bool map_file(ri_memory *mem, uint32_t first, uint32_t count, int fd, uint64_t file_page) {
    if (!count) return true;
    void *at = mem->data + (size_t)first * RI_PAGE_SIZE;
    void *p = mmap(at, (size_t)count * RI_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                   (off_t)(file_page * RI_PAGE_SIZE));
    if (p == MAP_FAILED) return false;
    mem->nmaps++;
    return true;
}

/* The same in units of one OS page (deltas). */
static bool map_file_units(ri_memory *mem, uint32_t first, uint32_t count, int fd, uint64_t file_unit) {
    if (!count) return true;
    size_t unit = os_page();
    void *p = mmap(mem->data + (size_t)first * unit, (size_t)count * unit, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_FIXED, fd, (off_t)(file_unit * unit));
    if (p == MAP_FAILED) return false;
    mem->nmaps++;
    return true;
}

/* ---- memories --------------------------------------------------------------------- */

static bool limits_ok(ri_limits l) { return !l.has_max || l.min <= l.max; }

ri_memory *ri_memory_new(ri_store *store, ri_memtype type, ri_error *err) {
    if (!store) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_memory_new: store is NULL");
        return NULL;
    }
    /* (a 64-bit memory's limits may exceed MAX_PAGES: the store's limit caps it below) */
    if (!limits_ok(type.limits) ||
        (!type.is64 && (type.limits.min > MAX_PAGES || (type.limits.has_max && type.limits.max > MAX_PAGES)))) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_memory_new: invalid limits (min %u, max %u)", type.limits.min,
                     type.limits.max);
        return NULL;
    }
    uint32_t max_pages = store->config.max_memory_pages;
    if (max_pages > MAX_PAGES) max_pages = MAX_PAGES;
    if (type.limits.has_max && type.limits.max < max_pages) max_pages = type.limits.max;
    if (type.limits.min > max_pages) {
        ri_error_set(err, RI_ERR_LIMIT, "memory of %u pages exceeds the store's limit of %u pages", type.limits.min,
                     max_pages);
        return NULL;
    }
    uint32_t total = store->config.max_total_memory_pages;
    if (total && store->memory_pages + type.limits.min > total) {
        ri_error_set(err, RI_ERR_LIMIT,
                     "memory of %u pages exceeds the store's limit of %u pages for all memories (%llu in use)",
                     type.limits.min, total, (unsigned long long)store->memory_pages);
        return NULL;
    }
    if (total && max_pages > total) max_pages = total; /* a smaller reservation */
    uint64_t reserve = (uint64_t)(max_pages ? max_pages : 1) * RI_PAGE_SIZE;
    if (reserve >= SIZE_MAX / 2) {
        ri_error_set(err, RI_ERR_NOMEM, "memory of %u pages does not fit the address space", max_pages);
        return NULL;
    }
    ri_memory *mem = calloc(1, sizeof *mem);
    if (!mem) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating a memory of %u pages", type.limits.min);
        return NULL;
    }
    /* Address space only: PROT_NONE and MAP_NORESERVE commit nothing. Never a NULL
     * data pointer, even for 0 pages: data + 0 must be well defined. */
    void *base = mmap(NULL, (size_t)reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        free(mem);
        ri_error_set(err, RI_ERR_NOMEM, "cannot reserve %llu bytes of address space for a memory of at most %u pages",
                     (unsigned long long)reserve, max_pages);
        return NULL;
    }
    mem->data = base;
    mem->reserved = (size_t)reserve;
    mem->pagemap_fd = -1;
    /* A working file as large as the reservation (sparse: holes cost nothing), mapped
     * shared: the first image of the memory is this file itself, frozen, so the first
     * capture copies nothing (see capture_full). Without memfd: anonymous memory. */
    mem->work_fd = memfd_create("ri-memory", MFD_CLOEXEC);
    if (mem->work_fd >= 0 && ftruncate(mem->work_fd, (off_t)reserve) != 0) {
        close(mem->work_fd);
        mem->work_fd = -1;
    }
    if (!map_fresh(mem, 0, type.limits.min)) {
        if (mem->work_fd >= 0) close(mem->work_fd);
        munmap(base, (size_t)reserve);
        free(mem);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating a memory of %u pages", type.limits.min);
        return NULL;
    }
    mem->type = type;
    mem->store = store;
    store->memory_pages += type.limits.min;
    mem->size = (uint64_t)type.limits.min * RI_PAGE_SIZE;
    mem->pages = type.limits.min;
    mem->max_pages = max_pages;
    ri_store_link(store, &mem->hdr, RI_OBJ_MEMORY);
    return mem;
}

void ri_memory_release_storage(ri_memory *mem) {
    if (mem->data) munmap(mem->data, mem->reserved);
    mem->data = NULL;
    if (mem->pagemap_fd >= 0) close(mem->pagemap_fd);
    mem->pagemap_fd = -1;
    if (mem->work_fd >= 0) close(mem->work_fd);
    mem->work_fd = -1;
    ri_memimage_release(mem->backing);
    mem->backing = NULL;
}

ri_memtype ri_memory_type(const ri_memory *mem) {
    ri_memtype t;
    memset(&t, 0, sizeof t);
    if (mem) t = mem->type; /* min follows the current size (grow updates it) */
    return t;
}

uint8_t *ri_memory_data(ri_memory *mem) { return mem ? mem->data : NULL; }

uint64_t ri_memory_size(const ri_memory *mem) { return mem ? mem->size : 0; }

uint32_t ri_memory_pages(const ri_memory *mem) { return mem ? mem->pages : 0; }

static void set_pages(ri_memory *mem, uint32_t pages) {
    mem->store->memory_pages = mem->store->memory_pages - mem->pages + pages;
    mem->pages = pages;
    mem->size = (uint64_t)pages * RI_PAGE_SIZE;
    mem->type.limits.min = pages; /* the current size, as grow keeps it */
}

/* with_total: also within the store's limit for all memories together (memory.grow);
 * a restore resizes without it, having checked the image's total (ri_snap_check), since
 * it grows some memories before it shrinks others. */
static int64_t grow_pages(ri_memory *mem, uint32_t delta_pages, bool with_total) {
    uint32_t old = mem->pages;
    if (delta_pages == 0) return old;
    uint64_t pages = (uint64_t)old + delta_pages;
    if (pages > mem->max_pages) return -1;
    uint32_t total = mem->store->config.max_total_memory_pages;
    if (with_total && total && mem->store->memory_pages + delta_pages > total) return -1;
    /* Fresh anonymous pages read as zero; memory.grow may fail, leaving all as it was. */
    if (!map_fresh(mem, old, delta_pages)) return -1;
    set_pages(mem, (uint32_t)pages);
    return old;
}

int64_t ri_memory_grow_internal(ri_memory *mem, uint32_t delta_pages) { return grow_pages(mem, delta_pages, true); }

uint32_t ri_memory_total_limit(const ri_memory *mem) { return mem ? mem->store->config.max_total_memory_pages : 0; }

uint64_t ri_memory_total_pages(const ri_memory *mem) { return mem ? mem->store->memory_pages : 0; }

int64_t ri_memory_grow(ri_memory *mem, uint32_t delta_pages) {
    if (!mem) return -1;
    return ri_memory_grow_internal(mem, delta_pages);
}

bool ri_memory_resize(ri_memory *mem, uint32_t pages) {
    if (!mem || pages > mem->max_pages) return false;
    if (pages >= mem->pages) return grow_pages(mem, pages - mem->pages, false) >= 0;
    /* The tail's contents are gone; grown back, it reads as zero (in the working file
     * too: its pages are punched out). */
    if (mem->work_fd >= 0 && fallocate(mem->work_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                       (off_t)((uint64_t)pages * RI_PAGE_SIZE),
                                       (off_t)((uint64_t)(mem->pages - pages) * RI_PAGE_SIZE)) != 0)
        return false;
    if (!map_none(mem, pages, mem->pages - pages)) return false;
    if (mem->mapped_pages > pages) mem->mapped_pages = pages;
    set_pages(mem, pages);
    return true;
}

uint32_t ri_memory_max_pages(const ri_memory *mem) { return mem ? mem->max_pages : 0; }

bool ri_memory_read(const ri_memory *mem, uint64_t offset, void *dst, size_t len) {
    if (!mem || (len && !dst)) return false;
    if (offset > mem->size || len > mem->size - offset) return false;
    if (len) memcpy(dst, mem->data + offset, len);
    return true;
}

bool ri_memory_write(ri_memory *mem, uint64_t offset, const void *src, size_t len) {
    if (!mem || (len && !src)) return false;
    if (offset > mem->size || len > mem->size - offset) return false;
    if (len) memcpy(mem->data + offset, src, len);
    return true;
}

/* ---- images ------------------------------------------------------------------------ */

void ri_memimage_retain(ri_memimage *img) {
    if (img) atomic_fetch_add_explicit(&img->refs, 1u, memory_order_relaxed);
}

void ri_memimage_release(ri_memimage *img) {
    /* Iterative: a long chain must not recurse. */
    while (img && atomic_fetch_sub_explicit(&img->refs, 1u, memory_order_acq_rel) == 1u) {
        ri_memimage *parent = img->parent;
        if (img->fd >= 0) close(img->fd);
        free(img->delta);
        free(img->copy);
        free(img);
        img = parent;
    }
}

uint32_t ri_memimage_pages(const ri_memimage *img) { return img ? img->pages : 0; }
const ri_memimage *ri_memimage_parent(const ri_memimage *img) { return img ? img->parent : NULL; }
uint32_t ri_memimage_stored_pages(const ri_memimage *img) { return img ? img->stored_pages : 0; }
uint32_t ri_memimage_depth(const ri_memimage *img) { return img ? img->depth : 0; }
bool ri_memimage_is_memfd(const ri_memimage *img) {
    while (img && img->parent) img = img->parent;
    return img && img->fd >= 0;
}
const ri_memimage *ri_memory_backing(const ri_memory *mem) { return mem ? mem->backing : NULL; }

static bool in_delta(const ri_memimage *img, uint32_t unit, uint32_t *slot) {
    uint32_t lo = 0, hi = img->nstored;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (img->delta[mid] < unit) lo = mid + 1;
        else hi = mid;
    }
    if (lo < img->nstored && img->delta[lo] == unit) {
        *slot = lo;
        return true;
    }
    return false;
}

static bool pread_all(int fd, uint8_t *dst, size_t len, uint64_t off) {
    while (len) {
        ssize_t n = pread(fd, dst, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        dst += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return true;
}

static bool pwrite_all(int fd, const uint8_t *src, size_t len, uint64_t off) {
    while (len) {
        ssize_t n = pwrite(fd, src, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        src += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return true;
}

/* `len` bytes at byte offset `off` of the image's contents (within one OS page). */
static bool read_unit(const ri_memimage *img, uint64_t off, uint8_t *dst, size_t len) {
    uint32_t page = (uint32_t)(off / RI_PAGE_SIZE);
    for (;;) {
        uint32_t slot;
        if (img->parent) {
            if (in_delta(img, (uint32_t)(off / img->unit), &slot))
                return pread_all(img->fd, dst, len, (uint64_t)slot * img->unit + off % img->unit);
            if (page < img->base_pages) {
                img = img->parent;
                continue;
            }
            break;
        }
        if (img->copy) {
            memcpy(dst, img->copy + off, len);
            return true;
        }
        return pread_all(img->fd, dst, len, off);
    }
    memset(dst, 0, len);
    return true;
}

bool ri_memimage_read_page(const ri_memimage *img, uint32_t page, uint8_t *dst) {
    if (!img || !dst || page >= img->pages) return false;
    size_t unit = os_page();
    for (size_t k = 0; k < RI_PAGE_SIZE; k += unit)
        if (!read_unit(img, (uint64_t)page * RI_PAGE_SIZE + k, dst + k, unit)) return false;
    return true;
}

static ri_memimage *image_new(uint32_t pages) {
    ri_memimage *img = calloc(1, sizeof *img);
    if (!img) return NULL;
    atomic_init(&img->refs, 1u);
    img->pages = pages;
    img->fd = -1;
    return img;
}

static int new_memfd(uint64_t bytes) {
    int fd = memfd_create("ri-memimage", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)bytes) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* ---- building an image from page contents ---------------------------------------------- */

/* Each run of pages whose contents lie back to back in the caller's buffers is one
 * pwrite into a fresh memfd: the kernel fills its page cache without a page fault per
 * 4 KiB (what copying into a mapping costs), and zero pages stay holes. */
ri_memimage *ri_memimage_build(uint32_t pages, ri_page_source source, void *ctx, unsigned flags, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!source || pages > MAX_PAGES) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_memimage_build: %s", source ? "more than 65536 pages" : "no source");
        return NULL;
    }
    ri_memimage *img = image_new(pages);
    if (!img) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory building a memory image");
        return NULL;
    }
    if (!(flags & RI_MEMIMAGE_NO_MEMFD)) img->fd = new_memfd((uint64_t)pages * RI_PAGE_SIZE);
    if (img->fd < 0) { /* no memfd: a heap copy, as capture_copy makes */
        img->copy = calloc(pages ? (size_t)pages : 1, RI_PAGE_SIZE);
        if (!img->copy) {
            ri_memimage_release(img);
            ri_error_set(err, RI_ERR_NOMEM, "out of memory building a memory image of %u pages", pages);
            return NULL;
        }
    }
    img->nstored = pages;
    const uint8_t *run = NULL; /* the pending run: pages [first, p) from run */
    uint32_t first = 0;
    for (uint32_t p = 0; p <= pages; p++) {
        const uint8_t *src = p < pages ? source(ctx, p) : NULL;
        if (src) img->stored_pages++;
        if (run && (uintptr_t)src == (uintptr_t)run + (uintptr_t)(p - first) * RI_PAGE_SIZE) continue;
        if (run) {
            size_t len = (size_t)(p - first) * RI_PAGE_SIZE;
            uint64_t off = (uint64_t)first * RI_PAGE_SIZE;
            if (img->copy) {
                memcpy(img->copy + off, run, len);
            } else if (!pwrite_all(img->fd, run, len, off)) {
                set_errno_error(err, "writing a memory image");
                ri_memimage_release(img);
                return NULL;
            }
        }
        run = src;
        first = p;
    }
    return img;
}

/* ---- which pages were written -------------------------------------------------------- */

/* PAGEMAP_SCAN (Linux 6.7): the kernel lists the matching ranges itself, much faster
 * than reading 8 bytes per 4 KiB page. Declared here because older headers lack it; the
 * layout is the kernel's stable ABI (include/uapi/linux/fs.h). */
struct ri_pm_region {
    uint64_t start, end, categories;
};
struct ri_pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define RI_PAGEMAP_SCAN _IOWR('f', 16, struct ri_pm_scan_arg)
#define RI_PAGE_IS_FILE (1u << 2)
#define RI_PAGE_IS_PRESENT (1u << 3)
#define RI_PAGE_IS_SWAPPED (1u << 4)
#define RI_PAGE_IS_PFNZERO (1u << 5)

static void mark(uint8_t *bitmap, uint32_t u, int64_t *count) {
    if (!(bitmap[u / 8] & (1u << (u % 8)))) {
        bitmap[u / 8] |= (uint8_t)(1u << (u % 8));
        (*count)++;
    }
}

static bool bit(const uint8_t *bitmap, uint32_t p) { return bitmap[p / 8] & (1u << (p % 8)); }

/* The written units (OS pages) by PAGEMAP_SCAN: present or swapped, not file-backed, and not the
 * shared zero page (a read of a fresh anonymous page maps it: nothing was written).
 * -1 when the kernel does not have it. */
static int64_t scan_ioctl(ri_memory *mem, uint8_t *bitmap) {
    enum { NREG = 256 };
    struct ri_pm_region regions[NREG];
    uint64_t start = (uint64_t)(uintptr_t)mem->data, end = start + mem->size;
    int64_t count = 0;
    while (start < end) {
        struct ri_pm_scan_arg arg;
        memset(&arg, 0, sizeof arg);
        arg.size = sizeof arg;
        arg.start = start;
        arg.end = end;
        arg.vec = (uint64_t)(uintptr_t)regions;
        arg.vec_len = NREG;
        arg.category_inverted = RI_PAGE_IS_FILE | RI_PAGE_IS_PFNZERO;
        arg.category_mask = RI_PAGE_IS_FILE | RI_PAGE_IS_PFNZERO;
        arg.category_anyof_mask = RI_PAGE_IS_PRESENT | RI_PAGE_IS_SWAPPED;
        arg.return_mask = RI_PAGE_IS_PRESENT | RI_PAGE_IS_SWAPPED;
        int n = ioctl(mem->pagemap_fd, RI_PAGEMAP_SCAN, &arg);
        if (n < 0) return -1;
        for (int i = 0; i < n; i++) {
            uint64_t lo = regions[i].start - (uint64_t)(uintptr_t)mem->data;
            uint64_t hi = regions[i].end - (uint64_t)(uintptr_t)mem->data;
            if (hi > mem->size) hi = mem->size;
            size_t unit = os_page();
            for (uint64_t u = lo / unit; u * unit < hi; u++) mark(bitmap, (uint32_t)u, &count);
        }
        if (arg.walk_end <= start) return -1; /* no progress: do not trust it */
        start = arg.walk_end;
    }
    return count;
}

/* Fills bitmap (zeroed by the caller, one bit per unit) with the units written since
 * the backing image; returns their count, or -1 when pagemap cannot be read (the caller
 * then takes all). */
static int64_t scan_pagemap(ri_memory *mem, uint8_t *bitmap) {
    if (mem->pagemap_fd < 0) {
        mem->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        if (mem->pagemap_fd < 0) return -1;
    }
    if (!mem->no_scan_ioctl) {
        int64_t n = scan_ioctl(mem, bitmap);
        if (n >= 0) return n;
        mem->no_scan_ioctl = true; /* an older kernel: read the entries */
        memset(bitmap, 0, units_bytes(mem));
    }
    size_t ps = os_page();
    enum { CHUNK = 1024 };
    uint64_t buf[CHUNK];
    size_t total = (size_t)mem->pages * (RI_PAGE_SIZE / ps);
    uint64_t first = (uint64_t)((uintptr_t)mem->data / ps);
    int64_t count = 0;
    for (size_t done = 0; done < total;) {
        size_t n = total - done < CHUNK ? total - done : CHUNK;
        if (!pread_all(mem->pagemap_fd, (uint8_t *)buf, n * sizeof buf[0], (first + done) * sizeof buf[0])) return -1;
        for (size_t i = 0; i < n; i++) {
            uint64_t e = buf[i];
            if ((e & PM_SWAPPED) || ((e & PM_PRESENT) && !(e & PM_FILE))) mark(bitmap, (uint32_t)(done + i), &count);
        }
        done += n;
    }
    return count;
}


/* The units written since the backing image, one bit each in ubits (units_bytes). All
 * of them without a backing image or pagemap. Returns their count. */
static int64_t written_units(ri_memory *mem, unsigned flags, uint8_t *ubits) {
    size_t per = units_per_page();
    uint32_t total = (uint32_t)((size_t)mem->pages * per);
    memset(ubits, 0, units_bytes(mem));
    int64_t count = -1;
    if (mem->backing && !(flags & RI_MEMIMAGE_NO_PAGEMAP) && !mem->backing->copy && ri_memimage_is_memfd(mem->backing))
        count = scan_pagemap(mem, ubits);
    if (count < 0) {
        count = 0;
        for (uint32_t u = 0; u < total; u++) mark(ubits, u, &count);
        return count;
    }
    /* Shrunk away and grown back: zero now, maybe not in the backing image. */
    uint32_t end = mem->backing->pages < mem->pages ? mem->backing->pages : mem->pages;
    for (uint32_t p = mem->mapped_pages; p < end; p++)
        for (size_t k = 0; k < per; k++) mark(ubits, (uint32_t)(p * per + k), &count);
    return count;
}

int64_t ri_memory_written_pages(ri_memory *mem, unsigned flags, uint8_t *bitmap) {
    if (!mem) return -1;
    uint8_t *ubits = malloc(units_bytes(mem));
    if (!ubits) return -1;
    written_units(mem, flags, ubits);
    size_t per = units_per_page();
    if (bitmap) memset(bitmap, 0, ((size_t)mem->pages + 7) / 8);
    int64_t n = 0;
    for (uint32_t p = 0; p < mem->pages; p++) {
        bool any = false;
        for (size_t k = 0; k < per && !any; k++) any = bit(ubits, (uint32_t)(p * per + k));
        if (!any) continue;
        n++;
        if (bitmap) bitmap[p / 8] |= (uint8_t)(1u << (p % 8));
    }
    free(ubits);
    return n;
}

/* Pages of the memory that may be non-zero: with no backing image, the present or
 * swapped ones (untouched anonymous pages are zero); else, or when pagemap cannot
 * tell, all. One bit per page. */
static void touched_pages(ri_memory *mem, unsigned flags, uint8_t *bitmap) {
    size_t bytes = ((size_t)mem->pages + 7) / 8, per = units_per_page();
    uint8_t *ubits = mem->backing || (flags & RI_MEMIMAGE_NO_PAGEMAP) ? NULL : calloc(units_bytes(mem), 1);
    if (!ubits || scan_pagemap(mem, ubits) < 0) {
        free(ubits);
        memset(bitmap, 0xFF, bytes);
        return;
    }
    memset(bitmap, 0, bytes);
    for (uint32_t p = 0; p < mem->pages; p++)
        for (size_t k = 0; k < per; k++)
            if (bit(ubits, (uint32_t)(p * per + k))) bitmap[p / 8] |= (uint8_t)(1u << (p % 8));
    free(ubits);
}

/* ---- capture ------------------------------------------------------------------------- */

static void set_backing(ri_memory *mem, ri_memimage *img) {
    ri_memimage_retain(img);
    ri_memimage_release(mem->backing);
    mem->backing = img;
    mem->mapped_pages = img->pages;
}

/* A full heap copy (no memfd). */
static ri_memimage *capture_copy(ri_memory *mem, ri_error *err) {
    ri_memimage *img = image_new(mem->pages);
    if (img) img->copy = malloc(mem->size ? (size_t)mem->size : 1);
    if (!img || !img->copy) {
        ri_memimage_release(img);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory copying a memory of %u pages", mem->pages);
        return NULL;
    }
    if (mem->size) memcpy(img->copy, mem->data, (size_t)mem->size);
    img->nstored = img->stored_pages = mem->pages;
    set_backing(mem, img);
    return img;
}

/* The first image of a memory that still writes through its working file: the file
 * becomes the image, and the memory maps it privately (copy-on-write) from now on.
 * Nothing is copied. */
static ri_memimage *capture_freeze(ri_memory *mem, ri_error *err) {
    ri_memimage *img = image_new(mem->pages);
    if (!img) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory capturing a memory");
        return NULL;
    }
    mem->nmaps = 0;
    if (!map_file(mem, 0, mem->pages, mem->work_fd, 0)) {
        /* Part of the range may map the file privately now: the same bytes. */
        set_errno_error(err, "mapping a memory image");
        ri_memimage_release(img);
        return NULL;
    }
    img->fd = mem->work_fd;
    img->nstored = img->stored_pages = mem->pages;
    mem->work_fd = -1;
    set_backing(mem, img);
    return img;
}

/* A full memfd image, mapped back over the whole memory. */
static ri_memimage *capture_full(ri_memory *mem, unsigned flags, ri_error *err) {
    if (mem->work_fd >= 0) return capture_freeze(mem, err);
    uint8_t *touched = malloc(((size_t)mem->pages + 8) / 8);
    ri_memimage *img = image_new(mem->pages);
    if (!touched || !img) {
        free(touched);
        ri_memimage_release(img);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory capturing a memory");
        return NULL;
    }
    touched_pages(mem, flags, touched);
#ifdef MADV_POPULATE_READ
    /* Pages that read through from an image fault in one at a time as pwrite reads
     * them; one call maps them all first (Linux 5.14; an error only costs the speed). */
    if (mem->backing && mem->size) (void)madvise(mem->data, (size_t)mem->size, MADV_POPULATE_READ);
#endif
    img->fd = new_memfd(mem->size);
    if (img->fd < 0) {
        free(touched);
        ri_memimage_release(img);
        /* No memfd here (ENOSYS, EPERM) or none left (EMFILE, ENFILE, ...): a heap
         * copy holds the same bytes, only at a copy's cost. */
        return capture_copy(mem, err);
    }
    /* Untouched pages stay holes (they read as zero). */
    for (uint32_t p = 0; p < mem->pages;) {
        if (!bit(touched, p)) {
            p++;
            continue;
        }
        uint32_t q = p;
        while (q < mem->pages && bit(touched, q)) q++;
        if (!pwrite_all(img->fd, mem->data + (size_t)p * RI_PAGE_SIZE, (size_t)(q - p) * RI_PAGE_SIZE,
                        (uint64_t)p * RI_PAGE_SIZE)) {
            set_errno_error(err, "writing a memory image");
            free(touched);
            ri_memimage_release(img);
            return NULL;
        }
        img->nstored += q - p;
        img->stored_pages += q - p;
        p = q;
    }
    free(touched);
    /* From here on the memory reads from the image; a failed map would leave it
     * half-mapped, so it is checked before the memory is told. */
    mem->nmaps = 0;
    if (!map_file(mem, 0, mem->pages, img->fd, 0)) {
        set_errno_error(err, "mapping a memory image");
        ri_memimage_release(img);
        return NULL;
    }
    set_backing(mem, img);
    return img;
}

static uint32_t count_runs(const uint32_t *pages, uint32_t n) {
    uint32_t runs = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || pages[i] != pages[i - 1] + 1) runs++;
    return runs;
}

ri_memimage *ri_memory_capture(ri_memory *mem, unsigned flags, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!mem) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_memory_capture: memory is NULL");
        return NULL;
    }
    if (flags & RI_MEMIMAGE_NO_MEMFD) return capture_copy(mem, err);
    ri_memimage *base = mem->backing;
    if (!base || base->copy || !ri_memimage_is_memfd(base) || (flags & RI_MEMIMAGE_FULL) ||
        base->depth + 1 >= MAX_DEPTH)
        return capture_full(mem, flags, err);

    size_t per = units_per_page(), unit = os_page();
    uint32_t total = (uint32_t)((size_t)mem->pages * per);
    uint8_t *bitmap = malloc(units_bytes(mem));
    if (!bitmap) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory capturing a memory");
        return NULL;
    }
    int64_t n = written_units(mem, flags, bitmap);
    if (n == 0 && mem->pages == base->pages && mem->mapped_pages == base->pages) {
        free(bitmap); /* nothing written: the backing image is the memory's contents */
        ri_memimage_retain(base);
        return base;
    }
    if (n == (int64_t)total) {
        free(bitmap); /* everything: a delta would be a full image with a parent */
        return capture_full(mem, flags, err);
    }
    ri_memimage *img = image_new(mem->pages);
    if (img) img->delta = malloc((size_t)(n ? n : 1) * sizeof *img->delta);
    if (!img || !img->delta) {
        free(bitmap);
        ri_memimage_release(img);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory capturing a memory");
        return NULL;
    }
    img->unit = (uint32_t)unit;
    for (uint32_t u = 0; u < total; u++) {
        /* Skip whole zero bytes: the written units are few in a large memory. */
        if ((u & 7u) == 0 && !bitmap[u / 8]) {
            u += 7;
            continue;
        }
        if (!bit(bitmap, u)) continue;
        if (!img->nstored || img->delta[img->nstored - 1] / per != u / per) img->stored_pages++;
        img->delta[img->nstored++] = u;
    }
    free(bitmap);
    img->nruns = count_runs(img->delta, img->nstored);
    if (mem->nmaps + 2u * img->nruns > MAX_MAPS) {
        ri_memimage_release(img);
        return capture_full(mem, flags, err); /* too many mappings: compact */
    }
    if (img->nstored) {
        img->fd = new_memfd((uint64_t)img->nstored * unit);
        if (img->fd < 0) {
            ri_memimage_release(img);
            return capture_copy(mem, err); /* as in capture_full */
        }
    }
    /* Write every run, then map every run back (clean again). */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < img->nstored;) {
            uint32_t j = i + 1;
            while (j < img->nstored && img->delta[j] == img->delta[j - 1] + 1) j++;
            uint32_t first = img->delta[i], count = j - i;
            bool ok = pass == 0 ? pwrite_all(img->fd, mem->data + (size_t)first * unit, (size_t)count * unit,
                                             (uint64_t)i * unit)
                                : map_file_units(mem, first, count, img->fd, i);
            if (!ok) {
                set_errno_error(err, pass == 0 ? "writing a memory image" : "mapping a memory image");
                ri_memimage_release(img);
                /* A failed map may have replaced part of a run with the same bytes
                 * from the file: the contents are right, only the cleanliness is
                 * unknown, so drop the backing (the next capture is full). */
                if (pass == 1) {
                    ri_memimage_release(mem->backing);
                    mem->backing = NULL;
                    mem->mapped_pages = 0;
                }
                return NULL;
            }
            i = j;
        }
    }
    img->parent = base;
    ri_memimage_retain(base);
    img->base_pages = mem->mapped_pages < base->pages ? mem->mapped_pages : base->pages;
    img->depth = base->depth + 1;
    set_backing(mem, img);
    return img;
}

/* ---- load ---------------------------------------------------------------------------- */

static bool load_copy(ri_memory *mem, ri_memimage *img) {
    /* Resize as ri_memory_resize does (a shrunk working file loses its tail). */
    if (!ri_memory_resize(mem, img->pages)) return false;
    if (mem->size) memcpy(mem->data, img->copy, (size_t)mem->size);
    return true;
}

/* Maps the chain of img over the memory: the full ancestor, then each delta's runs. */
static bool load_mapped(ri_memory *mem, ri_memimage *img) {
    uint32_t depth = img->depth;
    ri_memimage **chain = malloc(((size_t)depth + 1) * sizeof *chain);
    uint32_t *limit = malloc(((size_t)depth + 1) * sizeof *limit);
    if (!chain || !limit) {
        free(chain);
        free(limit);
        errno = ENOMEM;
        return false;
    }
    /* chain[depth] = img ... chain[0] = the full image; limit: the pages each level
     * can show through the levels above it. */
    ri_memimage *it = img;
    uint32_t lim = img->pages;
    for (uint32_t k = depth + 1; k-- > 0;) {
        chain[k] = it;
        limit[k] = lim;
        if (it->parent && it->base_pages < lim) lim = it->base_pages;
        it = it->parent;
    }
    uint32_t old_pages = mem->pages;
    bool ok = true;
    mem->nmaps = 0;
    uint32_t root_pages = chain[0]->pages < limit[0] ? chain[0]->pages : limit[0];
    ok = map_file(mem, 0, root_pages, chain[0]->fd, 0) && map_anon(mem, root_pages, img->pages - root_pages);
    size_t per = units_per_page();
    for (uint32_t k = 1; ok && k <= depth; k++) {
        const ri_memimage *d = chain[k];
        uint32_t lim_units = (uint32_t)((size_t)limit[k] * per);
        for (uint32_t i = 0; ok && i < d->nstored;) {
            uint32_t j = i + 1;
            while (j < d->nstored && d->delta[j] == d->delta[j - 1] + 1) j++;
            uint32_t first = d->delta[i], end = d->delta[j - 1] + 1;
            if (end > lim_units) end = lim_units;
            if (first < end) ok = map_file_units(mem, first, end - first, d->fd, i);
            i = j;
        }
    }
    if (ok && old_pages > img->pages) ok = map_none(mem, img->pages, old_pages - img->pages);
    free(chain);
    free(limit);
    return ok;
}

bool ri_memory_load_image(ri_memory *mem, ri_memimage *img, ri_error *err) {
    ri_error scratch;
    if (!err) err = &scratch;
    if (!mem || !img) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_memory_load_image: a NULL argument");
        return false;
    }
    if (img->pages > mem->max_pages) {
        ri_error_set(err, RI_ERR_LIMIT, "an image of %u pages does not fit a memory of at most %u pages", img->pages,
                     mem->max_pages);
        return false;
    }
    if (img->copy) {
        if (!load_copy(mem, img)) {
            set_errno_error(err, "mapping memory");
            return false;
        }
        set_backing(mem, img);
        return true;
    }
    if (!load_mapped(mem, img)) {
        /* The reservation may be half-mapped: make it all fresh and zero-sized rather
         * than leave mixed contents, and say so. */
        set_errno_error(err, "mapping a memory image");
        map_none(mem, 0, mem->pages > img->pages ? mem->pages : img->pages);
        set_pages(mem, 0);
        if (mem->work_fd >= 0) close(mem->work_fd); /* its old bytes must not come back on grow */
        mem->work_fd = -1;
        ri_memimage_release(mem->backing);
        mem->backing = NULL;
        mem->mapped_pages = 0;
        return false;
    }
    set_pages(mem, img->pages);
    set_backing(mem, img);
    if (mem->work_fd >= 0) close(mem->work_fd); /* no longer mapped */
    mem->work_fd = -1;
    return true;
}
