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

/* Marks the objects that the exception slots of a frame name (a slot of a clause that is
 * not running may hold a stale pointer: it is only compared, never followed). */
static void mark_frame(ri_exec *exec, const ri_slot *fp, const ri_code *code, uint8_t *marks) {
    if (!code) return;
    for (uint32_t s = 0; s < code->nexn; s++) {
        void *p = fp[code->exn_base + s].ref;
        if (!p) continue;
        for (uint32_t i = 0; i < exec->nexns; i++)
            if (exec->exns[i] == p) marks[i] = 1;
    }
}

/* Frees the listed objects no frame can reach. */
static void collect(ri_exec *exec, const ri_slot *fp, const ri_code *code) {
    uint8_t *marks = calloc(exec->nexns ? exec->nexns : 1, 1);
    if (!marks) return; /* (then the list just grows) */
    mark_frame(exec, fp, code, marks);
    /* frames[k] describes the caller of the frame above it: its own fp and code */
    for (const ri_frame *f = exec->frames; f < exec->frame_top; f++) mark_frame(exec, f->fp.ptr, f->code, marks);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < exec->nexns; i++) {
        if (marks[i]) exec->exns[kept++] = exec->exns[i];
        else free(exec->exns[i]);
    }
    exec->nexns = kept;
    free(marks);
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
