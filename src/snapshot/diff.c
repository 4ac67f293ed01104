/*
 * What differs between two images: the meta fields, memory (streamed page by page
 * from both sides in step, so memory use does not grow with memory size; a page one
 * side does not store reads as zeros), globals, table entries and segment flags.
 * Memory differences are maximal runs of differing bytes; the lists are capped but
 * the counts are always exact.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

#define DEFAULT_MAX_LIST 10000u
#define END_OF_PAGES UINT32_MAX

static const uint8_t zero_page[RI_SNAP_PAGE_BYTES];

typedef struct diff_ctx {
    ri_snap_diff *d;
    size_t max_ranges, max_entries;
    size_t cap_memories, cap_ranges, cap_globals, cap_tables, cap_entries, cap_segments;
    ri_snap_error *err;
} diff_ctx;

/* Appends one zeroed element to a growable array; NULL on OOM. */
static void *push(void **array, size_t *n, size_t *cap, size_t size) {
    if (*n == *cap) {
        size_t next = *cap ? *cap * 2 : 16;
        if (next > SIZE_MAX / size) return NULL;
        void *grown = realloc(*array, next * size);
        if (!grown) return NULL;
        *array = grown;
        *cap = next;
    }
    void *at = (uint8_t *)*array + *n * size;
    memset(at, 0, size);
    (*n)++;
    return at;
}

static bool oom(diff_ctx *c) { return snap_fail(c->err, RI_SNAP_ERR_NOMEM, "out of memory computing a diff"); }

/* ---- memory ------------------------------------------------------------------------------------ */

/* One side's stored pages, one at a time. */
typedef struct side {
    ri_snap_pages *pages;
    uint32_t page;              /* END_OF_PAGES when done */
    const uint8_t *data;
} side;

static bool side_next(side *s, ri_snap_error *err) {
    if (!s->pages) {
        s->page = END_OF_PAGES;
        return true;
    }
    int r = ri_snap_pages_next(s->pages, &s->page, &s->data, err);
    if (r < 0) return false;
    if (r == 0) s->page = END_OF_PAGES;
    return true;
}

typedef struct run {
    bool open;
    uint64_t start, end;
} run;

static bool flush_run(diff_ctx *c, ri_snap_memory_diff *md, run *r) {
    if (!r->open) return true;
    r->open = false;
    md->range_count++;
    ri_snap_diff *d = c->d;
    if (d->nranges >= c->max_ranges) {
        d->ranges_truncated = true;
        return true;
    }
    ri_snap_range *range = push((void **)&d->ranges, &d->nranges, &c->cap_ranges, sizeof *range);
    if (!range) return oom(c);
    range->memory = md->index;
    range->offset = r->start;
    range->length = r->end - r->start;
    return true;
}

static bool compare_page(diff_ctx *c, ri_snap_memory_diff *md, run *r, uint32_t page, const uint8_t *x,
                         const uint8_t *y) {
    if (memcmp(x, y, RI_SNAP_PAGE_BYTES) == 0) return true;
    md->changed_pages++;
    uint64_t base = (uint64_t)page * RI_SNAP_PAGE_BYTES;
    for (size_t k = 0; k < RI_SNAP_PAGE_BYTES; k += 8) {
        if (memcmp(x + k, y + k, 8) == 0) continue; /* most words of a changed page are equal */
        for (size_t j = k; j < k + 8; j++) {
            if (x[j] == y[j]) continue;
            uint64_t at = base + j;
            md->changed_bytes++;
            if (r->open && at == r->end) {
                r->end++;
                continue;
            }
            if (!flush_run(c, md, r)) return false;
            r->open = true;
            r->start = at;
            r->end = at + 1;
        }
    }
    return true;
}

static bool diff_memory(diff_ctx *c, const ri_snap_image *a, const ri_snap_image *b, uint32_t index,
                        ri_snap_memory_diff *md) {
    md->index = index;
    md->in_old = index < a->nmemories;
    md->in_new = index < b->nmemories;
    md->old_pages = md->in_old ? a->memories[index].pages : 0;
    md->new_pages = md->in_new ? b->memories[index].pages : 0;
    side x = {NULL, END_OF_PAGES, NULL}, y = {NULL, END_OF_PAGES, NULL};
    bool ok = true;
    if (md->in_old) ok = (x.pages = ri_snap_pages_open(a, index, c->err)) != NULL;
    if (ok && md->in_new) ok = (y.pages = ri_snap_pages_open(b, index, c->err)) != NULL;
    ok = ok && side_next(&x, c->err) && side_next(&y, c->err);
    run r = {false, 0, 0};
    while (ok && (x.page != END_OF_PAGES || y.page != END_OF_PAGES)) {
        uint32_t page = x.page < y.page ? x.page : y.page;
        bool from_x = x.page == page, from_y = y.page == page;
        ok = compare_page(c, md, &r, page, from_x ? x.data : zero_page, from_y ? y.data : zero_page);
        if (ok && from_x) ok = side_next(&x, c->err);
        if (ok && from_y) ok = side_next(&y, c->err);
    }
    ok = ok && flush_run(c, md, &r);
    ri_snap_pages_close(x.pages);
    ri_snap_pages_close(y.pages);
    return ok;
}

static bool diff_memories(diff_ctx *c, const ri_snap_image *a, const ri_snap_image *b) {
    uint32_t n = a->nmemories > b->nmemories ? a->nmemories : b->nmemories;
    size_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        ri_snap_memory_diff md;
        memset(&md, 0, sizeof md);
        if (!diff_memory(c, a, b, i, &md)) return false;
        if (md.in_old == md.in_new && md.old_pages == md.new_pages && md.changed_bytes == 0) continue;
        ri_snap_memory_diff *slot = push((void **)&c->d->memories, &count, &c->cap_memories, sizeof *slot);
        if (!slot) return oom(c);
        *slot = md;
        c->d->nmemories = (uint32_t)count;
    }
    return true;
}

/* ---- globals, tables, segments ----------------------------------------------------------------- */

static bool diff_globals(diff_ctx *c, const ri_snap_image *a, const ri_snap_image *b) {
    ri_snap_diff *d = c->d;
    d->old_nglobals = a->nglobals;
    d->new_nglobals = b->nglobals;
    uint32_t n = a->nglobals > b->nglobals ? a->nglobals : b->nglobals;
    ri_snap_global absent;
    memset(&absent, 0, sizeof absent);
    for (uint32_t i = 0; i < n; i++) {
        bool in_old = i < a->nglobals, in_new = i < b->nglobals;
        const ri_snap_global *x = in_old ? &a->globals[i] : &absent;
        const ri_snap_global *y = in_new ? &b->globals[i] : &absent;
        if (in_old && in_new && x->type == y->type && x->mutable_ == y->mutable_ && x->bits == y->bits &&
            x->bits_high == y->bits_high)
            continue;
        ri_snap_global_diff *g = push((void **)&d->globals, &d->nglobals, &c->cap_globals, sizeof *g);
        if (!g) return oom(c);
        g->index = i;
        g->old_value = *x;
        g->new_value = *y;
        g->in_old = in_old;
        g->in_new = in_new;
    }
    return true;
}

static bool push_entry(diff_ctx *c, uint32_t table, uint32_t index, uint32_t old_ref, uint32_t new_ref) {
    ri_snap_diff *d = c->d;
    if (d->nentries >= c->max_entries) {
        d->entries_truncated = true;
        return true;
    }
    ri_snap_entry_diff *e = push((void **)&d->entries, &d->nentries, &c->cap_entries, sizeof *e);
    if (!e) return oom(c);
    e->table = table;
    e->index = index;
    e->old_ref = old_ref;
    e->new_ref = new_ref;
    return true;
}

static uint32_t entry(const ri_snap_table *t, uint32_t i) { return ri_le_get32(t->entries + (size_t)i * 4); }

static bool diff_table(diff_ctx *c, const ri_snap_table *x, const ri_snap_table *y, ri_snap_table_diff *td) {
    uint32_t common = x->size < y->size ? x->size : y->size;
    for (uint32_t i = 0; i < common; i++) {
        uint32_t u = entry(x, i), v = entry(y, i);
        if (u == v) continue;
        td->changed_entries++;
        if (!push_entry(c, td->index, i, u, v)) return false;
    }
    /* Beyond the smaller size: the grown (or dropped) entries that hold a function; the
     * null ones are told by the size. */
    const ri_snap_table *big = x->size > y->size ? x : y;
    for (uint32_t i = common; i < big->size; i++) {
        uint32_t v = entry(big, i);
        if (v == RI_SNAP_NULL_REF) continue;
        td->changed_entries++;
        if (!push_entry(c, td->index, i, big == x ? v : RI_SNAP_NO_ENTRY, big == y ? v : RI_SNAP_NO_ENTRY))
            return false;
    }
    return true;
}

static bool diff_tables(diff_ctx *c, const ri_snap_image *a, const ri_snap_image *b) {
    uint32_t n = a->ntables > b->ntables ? a->ntables : b->ntables;
    size_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        ri_snap_table_diff td;
        memset(&td, 0, sizeof td);
        td.index = i;
        td.in_old = i < a->ntables;
        td.in_new = i < b->ntables;
        const ri_snap_table *x = td.in_old ? &a->tables[i] : NULL, *y = td.in_new ? &b->tables[i] : NULL;
        td.old_elem = x ? x->elem : RI_V128;
        td.new_elem = y ? y->elem : RI_V128;
        td.old_size = x ? x->size : 0;
        td.new_size = y ? y->size : 0;
        if (x && y && !diff_table(c, x, y, &td)) return false;
        if (td.in_old == td.in_new && td.old_elem == td.new_elem && td.old_size == td.new_size && !td.changed_entries)
            continue;
        ri_snap_table_diff *slot = push((void **)&c->d->tables, &count, &c->cap_tables, sizeof *slot);
        if (!slot) return oom(c);
        *slot = td;
        c->d->ntables = (uint32_t)count;
    }
    return true;
}

static bool diff_flags(diff_ctx *c, bool data, const uint8_t *x, uint32_t nx, const uint8_t *y, uint32_t ny) {
    ri_snap_diff *d = c->d;
    uint32_t n = nx < ny ? nx : ny;
    for (uint32_t i = 0; i < n; i++) {
        if (x[i] == y[i]) continue;
        ri_snap_segment_diff *s = push((void **)&d->segments, &d->nsegments, &c->cap_segments, sizeof *s);
        if (!s) return oom(c);
        s->data = data;
        s->index = i;
        s->old_dropped = x[i] != 0;
        s->new_dropped = y[i] != 0;
    }
    return true;
}

/* ---- the whole ---------------------------------------------------------------------------------- */

static bool compute_identical(const ri_snap_diff *d, const ri_snap_image *a, const ri_snap_image *b) {
    const ri_snap_meta *x = &d->old_meta, *y = &d->new_meta;
    if (d->old_version != d->new_version || d->old_has_module_hash != d->new_has_module_hash || d->module_changed)
        return false;
    if (x->status != y->status || x->prng_state != y->prng_state || x->gas_used != y->gas_used ||
        x->event_timestamp != y->event_timestamp)
        return false;
    if (d->nmemories || d->nglobals || d->ntables || d->nsegments) return false;
    if (d->instance_state_compared &&
        (a->nglobals != b->nglobals || a->ntables != b->ntables || a->nelems != b->nelems || a->ndatas != b->ndatas))
        return false;
    return true;
}

bool ri_snap_diff_images(const ri_snap_image *a, const ri_snap_image *b, const ri_snap_diff_options *opts,
                         ri_snap_diff *out, ri_snap_error *err) {
    snap_ok(err);
    if (!out) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_diff_images: out is NULL");
    memset(out, 0, sizeof *out);
    if (!a || !b) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_diff_images: an image is NULL");
    diff_ctx c;
    memset(&c, 0, sizeof c);
    c.d = out;
    c.err = err;
    c.max_ranges = opts && opts->max_ranges ? opts->max_ranges : DEFAULT_MAX_LIST;
    c.max_entries = opts && opts->max_entries ? opts->max_entries : DEFAULT_MAX_LIST;

    out->old_version = a->version;
    out->new_version = b->version;
    out->old_meta = a->meta;
    out->new_meta = b->meta;
    out->old_has_module_hash = a->has_module_hash;
    out->new_has_module_hash = b->has_module_hash;
    out->module_changed = a->has_module_hash && b->has_module_hash &&
                          memcmp(a->meta.module_sha256, b->meta.module_sha256, RI_SNAP_SHA256_BYTES) != 0;
    out->instance_state_compared = a->has_instance_state && b->has_instance_state;
    bool ok = diff_memories(&c, a, b);
    if (ok && out->instance_state_compared)
        ok = diff_globals(&c, a, b) && diff_tables(&c, a, b) &&
             diff_flags(&c, false, a->elem_dropped, a->nelems, b->elem_dropped, b->nelems) &&
             diff_flags(&c, true, a->data_dropped, a->ndatas, b->data_dropped, b->ndatas);
    if (!ok) {
        ri_snap_diff_free(out);
        return false;
    }
    out->identical = compute_identical(out, a, b);
    return true;
}

void ri_snap_diff_free(ri_snap_diff *d) {
    if (!d) return;
    free(d->memories);
    free(d->ranges);
    free(d->globals);
    free(d->tables);
    free(d->entries);
    free(d->segments);
    memset(d, 0, sizeof *d);
}
