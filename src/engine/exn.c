/* Exceptions: objects, handler search, the store's list (see exn.h). */
#include "exn.h"

#include <stdlib.h>
#include <string.h>

/* The innermost try of code whose body holds pos: tries open in order and their bodies
 * nest, so among those holding pos it is the last. */
static uint32_t innermost_try(const ri_code *code, uint32_t pos) {
    for (uint32_t t = code->ntries; t-- > 0;)
        if (code->tries[t].start <= pos && pos < code->tries[t].end) return t;
    return RI_TRY_NONE;
}

const ri_code_catch *ri_exn_find_catch(const ri_code *code, const ri_instance *inst, uint32_t pos, const ri_exn *exn) {
    uint32_t t = innermost_try(code, pos);
    /* Each step goes to an outer try (a delegate's target holds the delegate): it ends. */
    while (t < code->ntries) {
        const ri_code_try *tr = &code->tries[t];
        if (tr->delegate != RI_TRY_CATCHES) {
            t = tr->delegate;
            continue;
        }
        for (uint32_t k = 0; k < code->ncatches && tr->ncatches; k++) {
            const ri_code_catch *c = &code->catches[k];
            if (c->try_index == t && (c->tag == RI_CATCH_ALL || inst->tags[c->tag] == exn->tag)) return c;
        }
        t = tr->parent;
    }
    return NULL;
}

bool ri_exn_kept_at(const ri_code *code, uint32_t pos) {
    for (uint32_t k = 0; k < code->ncatches; k++) {
        const ri_code_catch *c = &code->catches[k];
        if (c->exn_slot != RI_NO_SLOT && c->target <= pos && pos < c->end) return true;
    }
    return false;
}

void ri_exn_free_all(ri_exec *exec) {
    for (uint32_t i = 0; i < exec->nexns; i++) free(exec->exns[i]);
    exec->nexns = 0;
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* The index of p in the sorted list, or -1. */
static int64_t find_exn(ri_exn *const *sorted, uint32_t n, const void *p) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)sorted[mid] < (uintptr_t)p) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && sorted[lo] == p ? (int64_t)lo : -1;
}

/* Marks object i and, through their values, the objects it holds (a tag may carry exnrefs). */
static void mark(ri_exn *const *sorted, uint32_t n, uint8_t *marks, uint32_t *work, uint32_t i) {
    uint32_t top = 0;
    if (marks[i]) return;
    marks[i] = 1;
    work[top++] = i;
    while (top) {
        const ri_exn *e = sorted[work[--top]];
        for (uint32_t v = 0; v < e->n; v++) {
            int64_t k = find_exn(sorted, n, e->vals[v].ref);
            if (k >= 0 && !marks[k]) {
                marks[k] = 1;
                work[top++] = (uint32_t)k; /* each object enters once: top < n */
            }
        }
    }
}

/* Frees the listed objects nothing can reach. Every slot of the value stack in use is a
 * root, read conservatively (its bits compared with the objects' addresses, never
 * followed): exnrefs live in locals and operands of any frame, caught exceptions in the
 * exception slots, and the callers' frames lie below the running one (or reach past its
 * base: the largest frame end bounds the scan). */
static void collect(ri_exec *exec, const ri_slot *fp, const ri_code *code) {
    uint32_t n = exec->nexns;
    uint8_t *marks = calloc(n ? n : 1, 1);
    uint32_t *work = malloc((n ? n : 1) * sizeof *work);
    if (!marks || !work) { /* (then the list just grows) */
        free(marks);
        free(work);
        return;
    }
    qsort(exec->exns, n, sizeof *exec->exns, cmp_ptr);
    const ri_slot *end = fp + (code ? code->frame_slots : 0);
    for (const ri_frame *f = exec->frames; f < exec->frame_top; f++)
        if (f->code && f->fp.ptr + f->code->frame_slots > end) end = f->fp.ptr + f->code->frame_slots;
    if (end > exec->stack_end) end = exec->stack_end;
    for (const ri_slot *s = exec->stack; s < end; s++) {
        int64_t k = find_exn(exec->exns, n, s->ref);
        if (k >= 0) mark(exec->exns, n, marks, work, (uint32_t)k);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (marks[i]) exec->exns[kept++] = exec->exns[i];
        else free(exec->exns[i]);
    }
    exec->nexns = kept;
    free(marks);
    free(work);
}

bool ri_exn_listed(const ri_exec *exec, const void *p) {
    for (uint32_t i = 0; i < exec->nexns; i++)
        if (exec->exns[i] == p) return true;
    return false;
}

ri_exn *ri_exn_new(ri_exec *exec, const ri_tag *tag, const ri_slot *vals, const ri_slot *fp, const ri_code *code) {
    /* Only the outermost run collects: under a host function, the frame that called it is
     * in no frame record (its run keeps it in registers), and its kept exception must stay. */
    if (exec->nesting == 1 && exec->nexns >= exec->exns_gc_at && exec->nexns >= 64) {
        collect(exec, fp, code);
        exec->exns_gc_at = exec->nexns * 2;
    }
    if (exec->nexns == exec->exns_cap) {
        uint32_t cap = exec->exns_cap ? exec->exns_cap * 2 : 16;
        if (cap < exec->exns_cap) return NULL;
        ri_exn **p = realloc(exec->exns, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        exec->exns = p;
        exec->exns_cap = cap;
    }
    ri_exn *e = malloc(sizeof *e + (size_t)tag->nparams * sizeof(ri_slot));
    if (!e) return NULL;
    e->tag = tag;
    e->n = tag->nparams;
    if (e->n) memcpy(e->vals, vals, (size_t)e->n * sizeof *vals);
    exec->exns[exec->nexns++] = e;
    return e;
}
