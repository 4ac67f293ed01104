/*
 * Restoring a read image into an instance, atomically: every check first (the image
 * fits the instance), then every step that can fail (decompressing the memories,
 * building each memory's image, growing memories and tables; a failed grow shrinks
 * back what grew, which loses nothing), and only then the changes that cannot fail
 * (shrinking, contents, globals, segment flags). A memory's contents are loaded as a
 * memory image (ri_memimage_build, ri_memory_load_image): its pages read through from
 * the image until written, so a restore writes each stored page once, into the image,
 * and faults in no page of the memory.
 */
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

#define MISMATCH(...) snap_fail(err, RI_SNAP_ERR_MISMATCH, __VA_ARGS__)

static bool counts_fit(const ri_instance *inst, const ri_snap_image *img, ri_snap_error *err) {
    struct {
        const char *what;
        uint32_t image, instance;
    } c[] = {
        {"functions", img->func_count, ri_instance_func_count(inst)},
        {"memories", img->nmemories, ri_instance_memory_count(inst)},
        {"tables", img->ntables, ri_instance_table_count(inst)},
        {"globals", img->nglobals, ri_instance_global_count(inst)},
        {"element segments", img->nelems, ri_instance_elem_count(inst)},
        {"data segments", img->ndatas, ri_instance_data_count(inst)},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (c[i].image != c[i].instance)
            return MISMATCH("Snapshot does not fit the instance — the image has %u %s, the instance %u", c[i].image,
                            c[i].what, c[i].instance);
    return true;
}

/* A global's value in the instance, as the image stores it (a v128's bytes 0..7; its
 * bytes 8..15 in *high, else 0). */
static uint64_t live_bits(const ri_instance *inst, const ri_global *g, uint64_t *high) {
    ri_val v = ri_global_get(g);
    uint32_t index = RI_SNAP_NULL_REF;
    *high = 0;
    switch (v.type) {
    case RI_I32: return (uint32_t)v.of.i32;
    case RI_I64: return (uint64_t)v.of.i64;
    case RI_F32: return v.of.f32_bits;
    case RI_F64: return v.of.f64_bits;
    case RI_FUNCREF:
    case RI_EXTERNREF:
    case RI_EXNREF:
        /* A reference the image cannot name never equals a stored one. */
        if (v.of.ref && (v.type != RI_FUNCREF || !ri_instance_func_index(inst, (const ri_func *)v.of.ref, &index)))
            return UINT64_MAX;
        return index;
    case RI_V128:
        *high = ri_le_get64(v.of.v128 + 8);
        return ri_le_get64(v.of.v128);
    }
    return UINT64_MAX;
}

bool ri_snap_check(const ri_instance *inst, const ri_snap_image *img, ri_snap_error *err) {
    snap_ok(err);
    if (!inst || !img) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_check: a NULL argument");
    if (img->version != RI_SNAP_VERSION || !img->has_instance_state)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_check: a version %u image holds no instance state",
                         img->version);
    if (img->has_frames)
        return snap_fail(err, RI_SNAP_ERR_UNSUPPORTED,
                         "the image holds a suspended call (section FRMS), which only a sandbox restore can resume");
    if (!counts_fit(inst, img, err)) return false;
    for (uint32_t i = 0; i < img->nmemories; i++) {
        const ri_memory *mem = ri_instance_memory(inst, i);
        uint32_t max = ri_memory_max_pages(mem);
        if (img->memories[i].is64 != ri_memory_type(mem).is64)
            return MISMATCH("Snapshot does not fit the instance — memory %u is %s-bit in the image, %s-bit in the "
                            "instance",
                            i, img->memories[i].is64 ? "64" : "32", img->memories[i].is64 ? "32" : "64");
        if (img->memories[i].pages > max)
            return MISMATCH("Snapshot does not fit the instance — memory %u holds %u pages, above this instance's "
                            "maximum of %u pages",
                            i, img->memories[i].pages, max);
        /* A memory never shrinks below its declared minimum (the instance's type follows
         * the current size; the module keeps the declaration). */
        ri_memtype declared;
        if (ri_module_memory(ri_instance_module(inst), i, &declared, NULL) && img->memories[i].pages < declared.limits.min)
            return MISMATCH("Snapshot does not fit the instance — memory %u holds %u pages, below the module's "
                            "minimum of %u page%s",
                            i, img->memories[i].pages, declared.limits.min, declared.limits.min == 1 ? "" : "s");
    }
    /* The store's limit for all memories together (multiple memories), with the store's
     * other memories as they are: each memory counted once, though an instance may import
     * one twice. */
    uint64_t total = 0, current = 0;
    for (uint32_t i = 0; i < img->nmemories; i++) {
        bool seen = false;
        for (uint32_t k = 0; k < i && !seen; k++) seen = ri_instance_memory(inst, k) == ri_instance_memory(inst, i);
        if (seen) continue;
        total += img->memories[i].pages;
        current += ri_memory_pages(ri_instance_memory(inst, i));
    }
    const ri_memory *first = img->nmemories ? ri_instance_memory(inst, 0) : NULL;
    uint32_t total_limit = ri_memory_total_limit(first);
    uint64_t others = ri_memory_total_pages(first) - current;
    if (total_limit && total + others > total_limit)
        return MISMATCH("Snapshot does not fit the instance — its memories hold %llu pages together (its store's "
                        "other memories %llu), above the limit of %u pages for all memories",
                        (unsigned long long)total, (unsigned long long)others, total_limit);
    for (uint32_t i = 0; i < img->ntables; i++) {
        const ri_table *table = ri_instance_table(inst, i);
        const ri_snap_table *t = &img->tables[i];
        ri_valtype elem = ri_table_type(table).elem;
        if (t->elem != elem)
            return MISMATCH("Snapshot does not fit the instance — table %u holds %s in the image, %s in the instance", i,
                            ri_snap_valtype_name(t->elem), ri_snap_valtype_name(elem));
        if (t->size > ri_table_max_size(table))
            return MISMATCH("Snapshot does not fit the instance — table %u holds %u entries, above this instance's "
                            "maximum of %u",
                            i, t->size, ri_table_max_size(table));
    }
    for (uint32_t i = 0; i < img->nglobals; i++) {
        const ri_global *g = ri_instance_global(inst, i);
        const ri_snap_global *s = &img->globals[i];
        ri_globaltype type = ri_global_type(g);
        if (s->type != type.type || s->mutable_ != type.mutable_)
            return MISMATCH("Snapshot does not fit the instance — global %u is %s%s in the image, %s%s in the instance",
                            i, s->mutable_ ? "mut " : "", ri_snap_valtype_name(s->type), type.mutable_ ? "mut " : "",
                            ri_snap_valtype_name(type.type));
        /* Immutable globals are not restored: they must already be equal. */
        uint64_t high;
        if (!s->mutable_ && (s->bits != live_bits(inst, g, &high) || s->bits_high != high))
            return MISMATCH("Snapshot does not fit the instance — immutable global %u holds another value in the image",
                            i);
    }
    return true;
}

/* Per memory: its contents for the commit (the image's stored pages, and those of the
 * memory under it, if any), what was allocated for them, and the memory image built
 * from them (which the commit loads: the pages read through from it, not copied). */
typedef struct prepared {
    const ri_snap_memory *m, *under;
    const uint8_t *content, *under_content;
    uint8_t *owned, *under_owned;
    ri_memimage *image;
    size_t next, under_next; /* page cursors of page_at */
} prepared;

static void free_prepared(prepared *p, uint32_t n) {
    for (uint32_t i = 0; p && i < n; i++) {
        free(p[i].owned);
        free(p[i].under_owned);
        ri_memimage_release(p[i].image);
    }
    free(p);
}

/* Page `page` of the memory after the restore: the image's own stored page, else the
 * page under it (a delta's parent), else zero (NULL). Called in ascending page order. */
static const uint8_t *page_at(void *ctx, uint32_t page) {
    prepared *p = ctx;
    const uint8_t *at = NULL;
    if (p->under && page < p->under->pages && snap_bit(p->under->bitmap, page))
        at = p->under_content + (p->under_next++) * RI_SNAP_PAGE_BYTES;
    if (snap_bit(p->m->bitmap, page)) at = p->content + (p->next++) * RI_SNAP_PAGE_BYTES;
    return at;
}

static bool prepare_memory(prepared *p, const ri_snap_memory *m, uint32_t index, ri_snap_error *err) {
    p->m = m;
    p->under = m->under;
    if (!snap_inflate(m, index, &p->content, &p->owned, err)) return false;
    if (p->under && !snap_inflate(p->under, index, &p->under_content, &p->under_owned, err)) return false;
    ri_error e;
    p->image = ri_memimage_build(m->pages, page_at, p, 0, &e);
    if (!p->image)
        return snap_fail(err, RI_SNAP_ERR_NOMEM,
                         "Cannot restore memory %u: %s", index, e.message);
    return true;
}

/* Grows every memory and table that the image makes larger; on failure shrinks back
 * those already grown (their old contents are intact) and returns false. */
static bool grow_all(ri_instance *inst, const ri_snap_image *img, uint32_t *old_pages, uint32_t *old_sizes,
                     ri_snap_error *err) {
    uint32_t m = 0, t = 0;
    for (; m < img->nmemories; m++) {
        ri_memory *mem = ri_instance_memory(inst, m);
        old_pages[m] = ri_memory_pages(mem);
        if (img->memories[m].pages > old_pages[m] && !ri_memory_resize(mem, img->memories[m].pages)) break;
    }
    if (m == img->nmemories) {
        for (; t < img->ntables; t++) {
            ri_table *table = ri_instance_table(inst, t);
            old_sizes[t] = ri_table_size(table);
            if (img->tables[t].size > old_sizes[t] && !ri_table_resize(table, img->tables[t].size, NULL)) break;
        }
        if (t == img->ntables) return true;
    }
    bool memory_failed = m < img->nmemories;
    for (uint32_t k = 0; k < t; k++) (void)ri_table_resize(ri_instance_table(inst, k), old_sizes[k], NULL);
    for (uint32_t k = 0; k < (memory_failed ? m : img->nmemories); k++)
        (void)ri_memory_resize(ri_instance_memory(inst, k), old_pages[k]);
    if (memory_failed)
        return snap_fail(err, RI_SNAP_ERR_NOMEM, "Cannot restore: out of memory growing memory %u to %u pages", m,
                         img->memories[m].pages);
    return snap_fail(err, RI_SNAP_ERR_NOMEM, "Cannot restore: out of memory growing table %u to %u entries", t,
                     img->tables[t].size);
}

/* Loads the prepared image: the memory maps it (no copy). Should the kernel refuse the
 * mapping (its limit on mappings), the pages are copied in instead; false only if it then
 * refuses fresh pages too (the memory is left empty: the one failure after the commit
 * point, and it is reported). */
static bool commit_memory(ri_memory *mem, prepared *p) {
    (void)ri_memory_resize(mem, p->m->pages); /* only shrinks now, which cannot fail */
    if (ri_memory_load_image(mem, p->image, NULL)) return true;
    if (!ri_memory_resize(mem, p->m->pages)) return false;
    uint8_t *data = ri_memory_data(mem);
    uint32_t pages = ri_memory_pages(mem);
    p->next = p->under_next = 0;
    for (uint32_t i = 0; i < pages; i++) {
        const uint8_t *src = page_at(p, i);
        uint8_t *page = data + (size_t)i * RI_SNAP_PAGE_BYTES;
        if (src)
            memcpy(page, src, RI_SNAP_PAGE_BYTES);
        else
            memset(page, 0, RI_SNAP_PAGE_BYTES);
    }
    return true;
}

static ri_val global_value(const ri_instance *inst, const ri_snap_global *g) {
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = g->type;
    switch (g->type) {
    case RI_I32: {
        uint32_t b = (uint32_t)g->bits; /* two's complement without an implementation-defined cast */
        v.of.i32 = b <= (uint32_t)INT32_MAX ? (int32_t)b : -(int32_t)(~b) - 1;
        break;
    }
    case RI_I64: v.of.i64 = snap_i64_from_bits(g->bits); break;
    case RI_F32: v.of.f32_bits = (uint32_t)g->bits; break;
    case RI_F64: v.of.f64_bits = g->bits; break;
    case RI_FUNCREF: v.of.ref = g->bits == RI_SNAP_NULL_REF ? NULL : ri_instance_func(inst, (uint32_t)g->bits); break;
    case RI_EXTERNREF: case RI_EXNREF: v.of.ref = NULL; break;
    case RI_V128:
        ri_le_put64(v.of.v128, g->bits);
        ri_le_put64(v.of.v128 + 8, g->bits_high);
        break;
    }
    return v;
}

/* The memory after an onto restore: its contents stay, resized to the image's, with the
 * image's stored pages written over them. Cannot fail (grown already; shrinking cannot). */
static void commit_onto(ri_memory *mem, prepared *p) {
    (void)ri_memory_resize(mem, p->m->pages);
    uint8_t *data = ri_memory_data(mem);
    size_t next = 0;
    for (uint32_t i = 0; i < p->m->pages; i++)
        if (snap_bit(p->m->bitmap, i))
            memcpy(data + (size_t)i * RI_SNAP_PAGE_BYTES, p->content + (next++) * RI_SNAP_PAGE_BYTES,
                   RI_SNAP_PAGE_BYTES);
}

/* onto: the memories keep their contents under the image's stored pages (a delta read
 * alone, restored on its parent's state); else they become the image's. */
static bool restore(ri_instance *inst, const ri_snap_image *img, bool onto, ri_snap_error *err) {
    if (!ri_snap_check(inst, img, err)) return false;

    /* Fallible, changing nothing: decompression (which checks every payload). */
    prepared *prep = calloc(img->nmemories ? img->nmemories : 1, sizeof *prep);
    uint32_t *old_pages = calloc(img->nmemories ? img->nmemories : 1, sizeof *old_pages);
    uint32_t *old_sizes = calloc(img->ntables ? img->ntables : 1, sizeof *old_sizes);
    bool ok = prep && old_pages && old_sizes;
    if (!ok) snap_fail(err, RI_SNAP_ERR_NOMEM, "Cannot restore: out of memory");
    for (uint32_t i = 0; ok && i < img->nmemories; i++) {
        if (onto) {
            prep[i].m = &img->memories[i];
            ok = snap_inflate(&img->memories[i], i, &prep[i].content, &prep[i].owned, err);
        } else {
            ok = prepare_memory(&prep[i], &img->memories[i], i, err);
        }
    }
    /* Fallible, undone on failure: growing. */
    ok = ok && grow_all(inst, img, old_pages, old_sizes, err);
    free(old_pages);
    free(old_sizes);
    if (!ok) {
        free_prepared(prep, img->nmemories);
        return false;
    }

    /* From here nothing fails (but for the kernel refusing memory twice: commit_memory). */
    uint32_t lost = UINT32_MAX;
    for (uint32_t i = 0; i < img->nmemories; i++) {
        if (onto) commit_onto(ri_instance_memory(inst, i), &prep[i]);
        else if (!commit_memory(ri_instance_memory(inst, i), &prep[i]) && lost == UINT32_MAX) lost = i;
    }
    free_prepared(prep, img->nmemories);
    for (uint32_t i = 0; i < img->ntables; i++) {
        ri_table *table = ri_instance_table(inst, i);
        const ri_snap_table *t = &img->tables[i];
        (void)ri_table_resize(table, t->size, NULL);
        for (uint32_t e = 0; e < t->size; e++) {
            uint32_t index = ri_le_get32(t->entries + (size_t)e * 4);
            ri_table_set(table, e, index == RI_SNAP_NULL_REF ? NULL : ri_instance_func(inst, index));
        }
    }
    for (uint32_t i = 0; i < img->nglobals; i++)
        if (img->globals[i].mutable_) ri_global_set(ri_instance_global(inst, i), global_value(inst, &img->globals[i]));
    for (uint32_t i = 0; i < img->nelems; i++) ri_instance_set_elem_dropped(inst, i, img->elem_dropped[i] != 0);
    for (uint32_t i = 0; i < img->ndatas; i++) ri_instance_set_data_dropped(inst, i, img->data_dropped[i] != 0);
    if (lost != UINT32_MAX)
        return snap_fail(err, RI_SNAP_ERR_NOMEM,
                         "Restore incomplete: the system refused memory for memory %u (mapping its image, then "
                         "fresh pages); that memory is left empty",
                         lost);
    snap_ok(err);
    return true;
}

bool ri_snap_restore(ri_instance *inst, const ri_snap_image *img, ri_snap_error *err) {
    return restore(inst, img, false, err);
}

bool ri_snap_restore_onto(ri_instance *inst, const ri_snap_image *img, ri_snap_error *err) {
    return restore(inst, img, true, err);
}
