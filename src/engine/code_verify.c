/*
 * The code verifier (code_verify.h): one walk over the code by the operation table, each
 * operand checked by its kind (slots against the frame, indices against the module), then the
 * branch targets and the stop points against the instruction starts the walk found, then the
 * exception handler tables.
 */
#include "code_verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_info.h"
#include "common/ri_assert.h"

/* The handler words sorted, each with its operation: words are label offsets, far apart
 * and unordered, so a search finds the operation of one. Sorted once per verifier. */
typedef struct handler { int32_t word; uint32_t op; } handler;

struct ri_code_verifier {
    const ri_module *m;
    handler h[RI_CODE_OP_COUNT];
};

static int by_word(const void *a, const void *b) {
    int32_t x = ((const handler *)a)->word, y = ((const handler *)b)->word;
    return (x > y) - (x < y);
}

ri_code_verifier *ri_code_verifier_new(const int32_t *dispatch, const ri_module *m) {
    ri_code_verifier *cv = malloc(sizeof *cv);
    if (!cv) return NULL;
    cv->m = m;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) cv->h[op] = (handler){dispatch[op], op};
    qsort(cv->h, RI_CODE_OP_COUNT, sizeof *cv->h, by_word);
    return cv;
}

void ri_code_verifier_free(ri_code_verifier *cv) { free(cv); }

static uint32_t op_of(const handler *h, uint32_t word) {
    uint32_t lo = 0, hi = RI_CODE_OP_COUNT;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h[mid].word < (int32_t)word) lo = mid + 1;
        else hi = mid;
    }
    return lo < RI_CODE_OP_COUNT && h[lo].word == (int32_t)word ? h[lo].op : RI_CODE_OP_COUNT;
}

typedef struct verifier {
    const ri_code_verifier *cv;
    const ri_code *code;
    uint8_t *start;     /* start[pos]: an instruction starts at pos */
    char *msg;
    size_t cap;
    bool ok;
    bool tables;        /* checking the handler tables (no instruction to name) */
    uint32_t pos, op;   /* the instruction being checked */
    uint32_t last_slot; /* the last slot operand, not yet checked if pending */
    uint32_t pending;   /* its slots (1, or 2 for a v128), 0 if none is pending */
    uint32_t pending_k; /* its operand word */
    uint32_t values;    /* the slots of the values a P starts: the parameters of the callee or the
                           values of the tag an operand before it named */
} verifier;

static void failf(verifier *v, const char *fmt, ...) {
    if (!v->ok) return; /* the first failure is the one reported */
    v->ok = false;
    if (!v->msg || !v->cap) return;
    int n = v->tables ? snprintf(v->msg, v->cap, "function %u: ", v->code->func_index)
                      : snprintf(v->msg, v->cap, "function %u, word %u (%s): ", v->code->func_index, v->pos,
                                 v->op < RI_CODE_OP_COUNT ? ri_code_names[v->op] : "?");
    if (n < 0 || (size_t)n >= v->cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg + n, v->cap - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- index spaces ---- */

/* The index space of an index kind (code.h, "Operand kinds"): its name, and in *bound the
 * module's count; NULL if kind is no index. */
static const char *index_space(const ri_module *m, char kind, uint32_t *bound) {
    switch (kind) {
    case 'F': *bound = m->nfuncs; return "function";
    case 'H': *bound = m->nfunc_imports; return "imported function";
    case 'B': *bound = m->nbodies; return "body";
    case 'T': *bound = m->ntypes; return "type";
    case 'X': *bound = m->ntables; return "table";
    case 'Y': *bound = m->nmemories; return "memory";
    case 'G': *bound = m->nglobals; return "global";
    case 'E': *bound = m->nelems; return "element segment";
    case 'Z': *bound = m->ndatas; return "data segment";
    case 'K': *bound = m->ntags; return "tag";
    default: return NULL;
    }
}

/* The slots of type index t's parameters (a v128 takes two); 0 if t is none. */
static uint32_t param_slots(const ri_module *m, uint32_t t) {
    if (t >= m->ntypes) return 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->types[t].nparams; i++) n += m->types[t].params[i] == RI_V128 ? 2 : 1;
    return n;
}

/* Whether index (of a kind index_space knows, in range) says how many values a P starts: a
 * function's or a type's parameters, a tag's values; their slots in *slots. (A table index
 * between CALL_INDIRECT's type and its frame base says nothing of them.) */
static bool values_of(const ri_module *m, char kind, uint32_t index, uint32_t *slots) {
    switch (kind) {
    case 'F': case 'H': *slots = param_slots(m, m->func_types[index]); return true;
    case 'B': *slots = param_slots(m, m->func_types[m->nfunc_imports + index]); return true;
    case 'T': *slots = param_slots(m, index); return true;
    case 'K': *slots = param_slots(m, m->tag_types[index]); return true;
    default: return false;
    }
}

/* The slots of tag's values; 0 for RI_CATCH_ALL. */
static uint32_t tag_slots(const ri_module *m, uint32_t tag) {
    return tag == RI_CATCH_ALL ? 0 : param_slots(m, m->tag_types[tag]);
}

/* ---- the walk over the instructions ---- */

/* A slot operand is checked when the next operand says whether it starts an N range. */
static void check_pending(verifier *v) {
    if (!v->pending) return;
    if ((uint64_t)v->last_slot + v->pending > v->code->frame_slots)
        failf(v, "operand %u: slot %u%s outside the frame (%u slots)", v->pending_k, v->last_slot,
              v->pending == 2 ? " (a v128's first)" : "", v->code->frame_slots);
    v->pending = 0;
}

static void check_operand(verifier *v, uint32_t k, char kind, uint32_t value) {
    uint64_t slots = v->code->frame_slots;
    if (kind == 'N' && v->pending) {
        if ((uint64_t)v->last_slot + value > slots)
            failf(v, "operand %u: slots %u .. %u outside the frame (%u slots)", k, v->last_slot,
                  v->last_slot + value, v->code->frame_slots);
        v->pending = 0;
        return;
    }
    check_pending(v);
    uint32_t bound;
    const char *space = index_space(v->cv->m, kind, &bound);
    if (space) {
        if (value >= bound)
            failf(v, "operand %u: %s index %u out of range (the module has %u)", k, space, value, bound);
        else
            values_of(v->cv->m, kind, value, &v->values);
        return;
    }
    switch (kind) {
    case 'D': case 'S': case 'V': case 'W':
        v->pending = kind == 'V' || kind == 'W' ? 2 : 1;
        v->pending_k = k;
        v->last_slot = value;
        break;
    case 'P':
        if ((uint64_t)value + v->values > slots)
            failf(v, "operand %u: first slot %u and %u value slots after it past the frame (%u slots)", k, value,
                  v->values, v->code->frame_slots);
        break;
    default: break;
    }
}

/* ENTRY's operands (gas, first local, declared locals, ...) against the code's frame: the
 * declared locals follow the parameters, the constants follow them, and the slots an ENTRY_Z*
 * zeroes (8, 4 or none, however many locals it declares) are in the frame. */
static void check_entry(verifier *v) {
    const ri_code *code = v->code;
    const uint32_t *w = code->words + v->pos;
    uint32_t first = w[2], declared = w[3], zeroed = declared;
    switch (v->op) {
    case RI_CODE_ENTRY_Z: case RI_CODE_ENTRY_ZU: zeroed = 8; break;
    case RI_CODE_ENTRY_Z4: case RI_CODE_ENTRY_Z4U: zeroed = 4; break;
    case RI_CODE_ENTRY_Z0: case RI_CODE_ENTRY_Z0U: zeroed = 0; break;
    default: break;
    }
    uint32_t nconsts = v->op == RI_CODE_ENTRY ? w[4] : 0;
    if (first != code->nparams)
        failf(v, "operand 2: first local %u is not the one after the parameters (%u slots)", first, code->nparams);
    else if ((uint64_t)first + declared != code->nlocals)
        failf(v, "operand 3: %u declared locals after %u parameter slots, the code has %u locals", declared, first,
              code->nlocals);
    else if (declared > zeroed)
        failf(v, "operand 3: %u declared locals, more than the %u it zeroes", declared, zeroed);
    else if (nconsts != code->nconsts)
        failf(v, "operand 4: %u constants, the code's pool has %u", nconsts, code->nconsts);
    else if ((uint64_t)first + zeroed + nconsts > code->frame_slots)
        failf(v, "slots %u .. %llu it zeroes or loads outside the frame (%u slots)", first,
              (unsigned long long)first + zeroed + nconsts, code->frame_slots);
}

/* What the kinds do not say of one instruction: ENTRY's frame, RETHROW's exception slot. */
static void check_instruction(verifier *v) {
    const ri_code *code = v->code;
    if (ri_code_stop(v->op) == RI_STOP_ENTRY) check_entry(v);
    if (v->op == RI_CODE_RETHROW) {
        uint32_t slot = code->words[v->pos + 1];
        if (slot < code->exn_base || slot - code->exn_base >= code->nexn)
            failf(v, "operand 1: slot %u is not one of the exception slots [%u, %u)", slot, code->exn_base,
                  code->exn_base + code->nexn);
    }
}

static void check_branch(verifier *v, uint32_t k, uint32_t value) {
    int64_t target = (int64_t)v->pos + k + (int32_t)value;
    if (target < 0 || target >= (int64_t)v->code->nwords || !v->start[target])
        failf(v, "operand %u: branch offset %d lands at %lld, not at an instruction", k, (int32_t)value,
              (long long)target);
}

/* The operands of one instruction: the slot and index kinds on the first pass, the branch
 * offsets on the second, once every instruction start is known. */
static void operand_first(uint32_t k, char kind, uint32_t value, void *ctx) { check_operand(ctx, k, kind, value); }
static void operand_second(uint32_t k, char kind, uint32_t value, void *ctx) {
    if (kind == 'O') check_branch(ctx, k, value);
}

static bool visit(verifier *v, bool branches) {
    const ri_code *code = v->code;
    for (v->pos = 0; v->pos < code->nwords && v->ok;) {
        v->op = op_of(v->cv->h, code->words[v->pos]);
        if (v->op == RI_CODE_OP_COUNT) {
            failf(v, "handler word %u is no operation's", code->words[v->pos]);
            break;
        }
        uint32_t size = ri_code_size_at(v->op, code->words, v->pos, code->nwords);
        if (size == 0) {
            failf(v, "the instruction runs past the end of the code (%u words)", code->nwords);
            break;
        }
        if (v->pos == 0 && ri_code_stop(v->op) != RI_STOP_ENTRY) failf(v, "the code does not start with an ENTRY");
        if (!branches) v->start[v->pos] = 1;
        v->pending = 0;
        v->values = 0;
        ri_code_for_each_operand(v->op, code->words, v->pos, branches ? operand_second : operand_first, v);
        check_pending(v);
        if (!branches) check_instruction(v);
        v->pos += size;
    }
    return v->ok;
}

static void check_points(verifier *v) {
    const ri_code *code = v->code;
    v->op = RI_CODE_OP_COUNT;
    for (uint32_t i = 0; i < code->npoints && v->ok; i++) {
        uint32_t p = code->points[i].pos;
        v->pos = p;
        if (i > 0 && p <= code->points[i - 1].pos) failf(v, "stop point %u is not after the one before it", i);
        else if (p >= code->nwords) failf(v, "stop point %u past the end of the code", i);
        else if (!v->start[p] && !(p >= 3 && v->start[p - 3] &&
                                   (ri_code_flags(op_of(v->cv->h, code->words[p - 3])) & RI_OPF_TRAP2)))
            failf(v, "stop point %u is not at an instruction's start", i);
    }
}

/* ---- the exception handler tables ---- */

/* Whether p is an instruction's start or the code's end (where a range may begin or end). */
static bool at_boundary(const verifier *v, uint32_t p) {
    return p == v->code->nwords || (p < v->code->nwords && v->start[p]);
}

/* Whether `outer` (try t's parent or its delegate's target) is RI_TRY_NONE or an earlier try
 * whose body holds t's: the runtime's search goes outwards through these and ends. */
static bool encloses(const ri_code *code, uint32_t outer, uint32_t t) {
    if (outer == RI_TRY_NONE) return true;
    if (outer >= t) return false;
    const ri_code_try *o = &code->tries[outer], *in = &code->tries[t];
    return o->start <= in->start && in->end <= o->end;
}

/* The tries: bodies in the code between instruction starts, opened in order and nested
 * (open[] holds the tries whose bodies hold the current one's start, outermost first; the
 * innermost of them must hold its body whole), parents and delegate targets enclosing. */
static void check_tries(verifier *v, uint32_t *open) {
    const ri_code *code = v->code;
    uint32_t depth = 0;
    for (uint32_t t = 0; t < code->ntries && v->ok; t++) {
        const ri_code_try *tr = &code->tries[t];
        if (tr->start > tr->end || tr->end > code->nwords) {
            failf(v, "try %u: body [%u, %u) is no range inside the code (%u words)", t, tr->start, tr->end, code->nwords);
        } else if (!at_boundary(v, tr->start) || !at_boundary(v, tr->end)) {
            failf(v, "try %u: body [%u, %u) does not begin and end at instructions' starts", t, tr->start, tr->end);
        } else if (t > 0 && tr->start < code->tries[t - 1].start) {
            failf(v, "try %u: opens at %u, before try %u (at %u)", t, tr->start, t - 1, code->tries[t - 1].start);
        } else if (!encloses(code, tr->parent, t)) {
            failf(v, "try %u: parent %u is not an earlier try holding its body [%u, %u)", t, tr->parent, tr->start,
                  tr->end);
        } else if (tr->delegate != RI_TRY_CATCHES && !encloses(code, tr->delegate, t)) {
            failf(v, "try %u: delegate target %u is not an earlier try holding its body [%u, %u)", t, tr->delegate,
                  tr->start, tr->end);
        } else if (tr->delegate != RI_TRY_CATCHES && tr->ncatches) {
            failf(v, "try %u: delegates, yet has %u catch clauses", t, tr->ncatches);
        } else {
            while (depth && code->tries[open[depth - 1]].end <= tr->start) depth--;
            const ri_code_try *o = depth ? &code->tries[open[depth - 1]] : NULL;
            if (o && tr->end > o->end)
                failf(v, "try %u: body [%u, %u) overlaps try %u's [%u, %u) without nesting in it", t, tr->start,
                      tr->end, open[depth - 1], o->start, o->end);
            open[depth++] = t;
        }
    }
}

/* A legacy clause (catch, catch_all): a GAS after its try's body, its range in the code, its
 * exception kept in an exception slot. */
static void check_legacy_clause(verifier *v, uint32_t k, const ri_code_catch *cc) {
    const ri_code *code = v->code;
    const ri_code_try *tr = &code->tries[cc->try_index];
    if (cc->target >= code->nwords || !v->start[cc->target] ||
        op_of(v->cv->h, code->words[cc->target]) != RI_CODE_GAS)
        failf(v, "catch %u: target %u is not a GAS instruction", k, cc->target);
    else if (cc->target < tr->end)
        failf(v, "catch %u: target %u inside its try %u's body [%u, %u)", k, cc->target, cc->try_index, tr->start,
              tr->end);
    else if (cc->end < cc->target || !at_boundary(v, cc->end))
        failf(v, "catch %u: clause [%u, %u) does not end at an instruction's start after its target", k, cc->target,
              cc->end);
    else if (cc->exn_slot != RI_NO_SLOT && (cc->exn_slot < code->exn_base || cc->exn_slot - code->exn_base >= code->nexn))
        failf(v, "catch %u: exception slot %u is not one of the exception slots [%u, %u)", k, cc->exn_slot,
              code->exn_base, code->exn_base + code->nexn);
}

/* A try_table clause: its target a branch target (its end the same), its exnref, if kept,
 * in the slot after its values. */
static void check_table_clause(verifier *v, uint32_t k, const ri_code_catch *cc, uint32_t values) {
    const ri_code *code = v->code;
    if (cc->target >= code->nwords || !v->start[cc->target])
        failf(v, "catch %u: target %u is not an instruction's start", k, cc->target);
    else if (cc->end != cc->target)
        failf(v, "catch %u: a try_table clause's end %u is not its target %u", k, cc->end, cc->target);
    else if (cc->exn_slot != RI_NO_SLOT && ((uint64_t)cc->exn_slot != (uint64_t)cc->base + values ||
                                            cc->exn_slot >= code->frame_slots))
        failf(v, "catch %u: exnref slot %u is not the one after its values (%llu) inside the frame (%u slots)", k,
              cc->exn_slot, (unsigned long long)cc->base + values, code->frame_slots);
}

/* The clauses: try and tag in range, values' slots on the operand stack inside the frame,
 * as many for each try as it says. clauses[t] counts try t's. */
static void check_catches(verifier *v, uint32_t *clauses) {
    const ri_code *code = v->code;
    const ri_module *m = v->cv->m;
    for (uint32_t k = 0; k < code->ncatches && v->ok; k++) {
        const ri_code_catch *cc = &code->catches[k];
        if (cc->try_index >= code->ntries) {
            failf(v, "catch %u: try %u out of range (the code has %u)", k, cc->try_index, code->ntries);
            break;
        }
        if (cc->tag != RI_CATCH_ALL && cc->tag >= m->ntags) {
            failf(v, "catch %u: tag index %u out of range (the module has %u)", k, cc->tag, m->ntags);
            break;
        }
        clauses[cc->try_index]++;
        uint32_t values = tag_slots(m, cc->tag);
        if (cc->base < code->stack_base || (uint64_t)cc->base + values > code->frame_slots)
            failf(v, "catch %u: value slots %u .. %llu not on the operand stack [%u, %u)", k, cc->base,
                  (unsigned long long)cc->base + values, code->stack_base, code->frame_slots);
        else if (cc->table) check_table_clause(v, k, cc, values);
        else check_legacy_clause(v, k, cc);
    }
    for (uint32_t t = 0; t < code->ntries && v->ok; t++)
        if (clauses[t] != code->tries[t].ncatches)
            failf(v, "try %u: says %u catch clauses, the table has %u", t, code->tries[t].ncatches, clauses[t]);
}

/* The frame's layout (code.h): parameters, declared locals, constants, exception slots, the
 * operand stack. */
static void check_frame(verifier *v) {
    const ri_code *code = v->code;
    if (code->nparams > code->nlocals || code->nlocals > code->stack_base || code->stack_base > code->frame_slots)
        failf(v, "frame layout: %u parameter slots, %u locals, operand stack at %u, %u slots", code->nparams,
              code->nlocals, code->stack_base, code->frame_slots);
    else if (code->nexn && (code->exn_base < code->nlocals || (uint64_t)code->exn_base + code->nexn > code->stack_base))
        failf(v, "exception slots [%u, %llu) not between the locals (%u) and the operand stack (%u)", code->exn_base,
              (unsigned long long)code->exn_base + code->nexn, code->nlocals, code->stack_base);
}

static void check_tables(verifier *v) {
    const ri_code *code = v->code;
    v->tables = true;
    check_frame(v);
    if (!v->ok || !code->ntries) {
        if (v->ok && code->ncatches) failf(v, "%u catch clauses, no try", code->ncatches);
        return;
    }
    uint32_t *scratch = calloc((size_t)code->ntries * 2, sizeof *scratch);
    if (!scratch) {
        failf(v, "out of memory");
        return;
    }
    check_tries(v, scratch);
    if (v->ok) check_catches(v, scratch + code->ntries);
    free(scratch);
}

bool ri_code_verify(const ri_code_verifier *cv, const ri_code *code, char *msg, size_t cap) {
    if (msg && cap) msg[0] = '\0';
    uint8_t *start = calloc((size_t)code->nwords + 1, 1);
    if (!start) {
        if (msg && cap) snprintf(msg, cap, "out of memory");
        return false;
    }
    verifier v = {.cv = cv, .code = code, .start = start, .msg = msg, .cap = cap, .ok = true, .op = RI_CODE_OP_COUNT};
    if (code->nwords == 0) failf(&v, "no code");
    if (visit(&v, false) && visit(&v, true)) check_points(&v);
    if (v.ok) check_tables(&v);
    free(start);
    return v.ok;
}

void ri_code_assert_valid(const ri_code_verifier *cv, const ri_code *code) {
    char msg[256];
    bool ok = ri_code_verify(cv, code, msg, sizeof msg);
    if (ok || strstr(msg, "out of memory")) return; /* (nothing checked: no failure to report) */
    fprintf(stderr, "code verifier: %s\n", msg);
    RI_ASSERT(ok, "I15");
}
