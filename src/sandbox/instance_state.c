/*
 * The state an instance holds besides its code: globals, tables, the dropped flags of
 * element and data segments, and the memories (memory 0, then the others of several).
 * Captured, compared and applied as a whole:
 * the determinism check runs twice from one captured state, and WSNP v1 (which holds
 * memory only) keeps the rest as captured after instantiation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

void sb_state_free(sb_state *s) {
    if (!s) return;
    free(s->globals);
    for (uint32_t i = 0; s->tables && i < s->ntables; i++) free(s->tables[i].elems);
    free(s->tables);
    free(s->elem_dropped);
    free(s->data_dropped);
    free(s->memory);
    for (uint32_t i = 0; s->more && i < s->nmore; i++) free(s->more[i].bytes);
    free(s->more);
    memset(s, 0, sizeof *s);
}

/* calloc that never returns NULL for zero elements, so NULL always means OOM. */
static void *alloc_array(size_t n, size_t size) { return calloc(n ? n : 1, size); }

bool sb_state_capture(ri_instance *inst, ri_memory *memory, sb_state *out) {
    memset(out, 0, sizeof *out);
    out->nglobals = ri_instance_global_count(inst);
    out->globals = alloc_array(out->nglobals, sizeof *out->globals);
    if (!out->globals) goto oom;
    for (uint32_t i = 0; i < out->nglobals; i++) out->globals[i] = ri_global_get(ri_instance_global(inst, i));

    out->ntables = ri_instance_table_count(inst);
    out->tables = alloc_array(out->ntables, sizeof *out->tables);
    if (!out->tables) goto oom;
    for (uint32_t i = 0; i < out->ntables; i++) {
        const ri_table *table = ri_instance_table(inst, i);
        uint32_t size = ri_table_size(table);
        out->tables[i].size = size;
        out->tables[i].elems = alloc_array(size, sizeof(void *));
        if (!out->tables[i].elems) goto oom;
        for (uint32_t k = 0; k < size; k++) ri_table_get(table, k, &out->tables[i].elems[k]);
    }

    out->nelems = ri_instance_elem_count(inst);
    out->ndatas = ri_instance_data_count(inst);
    out->elem_dropped = alloc_array(out->nelems, sizeof(bool));
    out->data_dropped = alloc_array(out->ndatas, sizeof(bool));
    if (!out->elem_dropped || !out->data_dropped) goto oom;
    for (uint32_t i = 0; i < out->nelems; i++) out->elem_dropped[i] = ri_instance_elem_dropped(inst, i);
    for (uint32_t i = 0; i < out->ndatas; i++) out->data_dropped[i] = ri_instance_data_dropped(inst, i);

    if (memory) {
        uint64_t size = ri_memory_size(memory);
        out->has_memory = true;
        out->memory_pages = ri_memory_pages(memory);
        out->memory = malloc(size ? (size_t)size : 1);
        if (!out->memory) goto oom;
        if (size) memcpy(out->memory, ri_memory_data(memory), (size_t)size);
        uint32_t n = ri_instance_memory_count(inst);
        out->more = alloc_array(n, sizeof *out->more);
        if (!out->more) goto oom;
        for (uint32_t i = 1; i < n; i++) {
            ri_memory *mem = ri_instance_memory(inst, i);
            if (mem == memory) continue;
            sb_memory_copy *c = &out->more[out->nmore++];
            c->index = i;
            c->pages = ri_memory_pages(mem);
            size = ri_memory_size(mem);
            c->bytes = malloc(size ? (size_t)size : 1);
            if (!c->bytes) goto oom;
            if (size) memcpy(c->bytes, ri_memory_data(mem), (size_t)size);
        }
    }
    return true;
oom:
    sb_state_free(out);
    return false;
}

/* Values compare by their bits (NaN payloads included) and references by identity. */
static bool val_equal(const ri_val *a, const ri_val *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case RI_I32: return a->of.i32 == b->of.i32;
    case RI_I64: return a->of.i64 == b->of.i64;
    case RI_F32: return a->of.f32_bits == b->of.f32_bits;
    case RI_F64: return a->of.f64_bits == b->of.f64_bits;
    case RI_V128: return memcmp(a->of.v128, b->of.v128, 16) == 0;
    case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF: return a->of.ref == b->of.ref;
    }
    return false;
}

/* Names the first difference ("global 3", "the memory contents") and returns false. */
static bool differ(char *why, size_t cap, const char *what, int64_t index) {
    if (why && cap) {
        if (index < 0) snprintf(why, cap, "%s", what);
        else snprintf(why, cap, "%s %lld", what, (long long)index);
    }
    return false;
}

bool sb_state_equal(const sb_state *a, const sb_state *b, char *why, size_t cap) {
    if (why && cap) why[0] = '\0';
    if (a->nglobals != b->nglobals || a->ntables != b->ntables || a->nelems != b->nelems || a->ndatas != b->ndatas)
        return differ(why, cap, "the instance layout", -1);
    for (uint32_t i = 0; i < a->nglobals; i++)
        if (!val_equal(&a->globals[i], &b->globals[i])) return differ(why, cap, "global", i);
    for (uint32_t i = 0; i < a->ntables; i++) {
        const sb_table_state *x = &a->tables[i], *y = &b->tables[i];
        if (x->size != y->size || (x->size && memcmp(x->elems, y->elems, x->size * sizeof(void *)) != 0))
            return differ(why, cap, "table", i);
    }
    for (uint32_t i = 0; i < a->nelems; i++)
        if (a->elem_dropped[i] != b->elem_dropped[i]) return differ(why, cap, "element segment", i);
    for (uint32_t i = 0; i < a->ndatas; i++)
        if (a->data_dropped[i] != b->data_dropped[i]) return differ(why, cap, "data segment", i);
    if (a->has_memory && b->has_memory) {
        if (a->memory_pages != b->memory_pages) return differ(why, cap, "the memory size", -1);
        if (memcmp(a->memory, b->memory, (size_t)a->memory_pages * SB_PAGE_SIZE) != 0)
            return differ(why, cap, "the memory contents", -1);
        if (a->nmore != b->nmore) return differ(why, cap, "the instance layout", -1);
        for (uint32_t i = 0; i < a->nmore; i++) {
            const sb_memory_copy *x = &a->more[i], *y = &b->more[i];
            if (x->pages != y->pages) return differ(why, cap, "the size of memory", x->index);
            if (memcmp(x->bytes, y->bytes, (size_t)x->pages * SB_PAGE_SIZE) != 0)
                return differ(why, cap, "the contents of memory", x->index);
        }
    }
    return true;
}

/* The other memories a state holds: those it makes larger grow first (the failable step;
 * on failure the grown ones shrink back to old[], contents intact). */
static void shrink_more(ri_instance *inst, const sb_state *s, uint32_t upto, const uint32_t *old) {
    for (uint32_t k = 0; k < upto; k++) (void)ri_memory_resize(ri_instance_memory(inst, s->more[k].index), old[k]);
}

static bool grow_more(ri_instance *inst, const sb_state *s, uint32_t *old) {
    for (uint32_t i = 0; i < s->nmore; i++)
        if (s->more[i].index >= ri_instance_memory_count(inst)) return false;
    for (uint32_t i = 0; i < s->nmore; i++) {
        ri_memory *mem = ri_instance_memory(inst, s->more[i].index);
        old[i] = ri_memory_pages(mem);
        if (s->more[i].pages > old[i] && !ri_memory_resize(mem, s->more[i].pages)) {
            shrink_more(inst, s, i, old);
            return false;
        }
    }
    return true;
}

bool sb_state_apply(ri_instance *inst, ri_memory *memory, const sb_state *s) {
    if (ri_instance_global_count(inst) != s->nglobals || ri_instance_table_count(inst) != s->ntables ||
        ri_instance_elem_count(inst) != s->nelems || ri_instance_data_count(inst) != s->ndatas)
        return false;
    /* First every step that can fail (growing), so that failure changes nothing. */
    uint32_t *old_sizes = alloc_array(s->ntables, sizeof *old_sizes);
    uint32_t nmore = s->has_memory && memory ? s->nmore : 0;
    uint32_t *more_old = alloc_array(nmore, sizeof *more_old);
    if (!old_sizes || !more_old) {
        free(old_sizes);
        free(more_old);
        return false;
    }
    for (uint32_t i = 0; i < s->ntables; i++) old_sizes[i] = ri_table_size(ri_instance_table(inst, i));
    uint32_t old_pages = memory ? ri_memory_pages(memory) : 0;
    if (s->has_memory && memory && s->memory_pages > old_pages &&
        ri_memory_grow(memory, s->memory_pages - old_pages) < 0) {
        free(old_sizes);
        free(more_old);
        return false;
    }
    if (nmore && !grow_more(inst, s, more_old)) {
        (void)ri_memory_resize(memory, old_pages);
        free(old_sizes);
        free(more_old);
        return false;
    }
    for (uint32_t i = 0; i < s->ntables; i++) {
        ri_table *table = ri_instance_table(inst, i);
        if (s->tables[i].size > old_sizes[i] && ri_table_grow(table, s->tables[i].size - old_sizes[i], NULL) < 0) {
            for (uint32_t k = 0; k < i; k++) (void)ri_table_resize(ri_instance_table(inst, k), old_sizes[k], NULL);
            if (memory) (void)ri_memory_resize(memory, old_pages);
            shrink_more(inst, s, nmore, more_old);
            free(old_sizes);
            free(more_old);
            return false;
        }
    }
    free(old_sizes);
    free(more_old);
    /* From here nothing fails. */
    for (uint32_t i = 0; i < s->nglobals; i++) {
        ri_global *g = ri_instance_global(inst, i);
        if (ri_global_type(g).mutable_) ri_global_set(g, s->globals[i]);
    }
    for (uint32_t i = 0; i < s->ntables; i++) {
        ri_table *table = ri_instance_table(inst, i);
        (void)ri_table_resize(table, s->tables[i].size, NULL);
        for (uint32_t k = 0; k < s->tables[i].size; k++) ri_table_set(table, k, s->tables[i].elems[k]);
    }
    for (uint32_t i = 0; i < s->nelems; i++) ri_instance_set_elem_dropped(inst, i, s->elem_dropped[i]);
    for (uint32_t i = 0; i < s->ndatas; i++) ri_instance_set_data_dropped(inst, i, s->data_dropped[i]);
    if (s->has_memory && memory) {
        (void)ri_memory_resize(memory, s->memory_pages);
        size_t size = (size_t)s->memory_pages * SB_PAGE_SIZE;
        if (size) memcpy(ri_memory_data(memory), s->memory, size);
        for (uint32_t i = 0; i < nmore; i++) {
            ri_memory *mem = ri_instance_memory(inst, s->more[i].index);
            (void)ri_memory_resize(mem, s->more[i].pages);
            size = (size_t)s->more[i].pages * SB_PAGE_SIZE;
            if (size) memcpy(ri_memory_data(mem), s->more[i].bytes, size);
        }
    }
    return true;
}
