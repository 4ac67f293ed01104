/*
 * The code verifier (code_verify.h): one walk over the code by the operation table, each
 * operand checked by its kind, then the branch targets and the stop points against the
 * instruction starts the walk found.
 */
#include "code_verify.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_info.h"
#include "common/ri_assert.h"

/* The handler words sorted, each with its operation: words are label offsets, far apart
 * and unordered, so a search finds the operation of one. */
typedef struct handler { int32_t word; uint32_t op; } handler;

static int by_word(const void *a, const void *b) {
    int32_t x = ((const handler *)a)->word, y = ((const handler *)b)->word;
    return (x > y) - (x < y);
}

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
    const ri_code *code;
    uint8_t *start;     /* start[pos]: an instruction starts at pos */
    char *msg;
    size_t cap;
    bool ok;
    uint32_t pos, op;   /* the instruction being checked */
    uint32_t last_slot; /* the last slot operand, not yet checked if pending */
    uint32_t pending;   /* its slots (1, or 2 for a v128), 0 if none is pending */
    uint32_t pending_k; /* its operand word */
} verifier;

static void failf(verifier *v, const char *fmt, ...) {
    if (!v->ok) return; /* the first failure is the one reported */
    v->ok = false;
    if (!v->msg || !v->cap) return;
    int n = snprintf(v->msg, v->cap, "function %u, word %u (%s): ", v->code->func_index, v->pos,
                     v->op < RI_CODE_OP_COUNT ? ri_code_names[v->op] : "?");
    if (n < 0 || (size_t)n >= v->cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->msg + n, v->cap - (size_t)n, fmt, ap);
    va_end(ap);
}

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
    switch (kind) {
    case 'D': case 'S': case 'V': case 'W':
        v->pending = kind == 'V' || kind == 'W' ? 2 : 1;
        v->pending_k = k;
        v->last_slot = value;
        break;
    case 'P':
        if (value > slots) failf(v, "operand %u: first slot %u past the frame (%u slots)", k, value, v->code->frame_slots);
        break;
    default: break;
    }
}

static void check_branch(verifier *v, uint32_t k, uint32_t value) {
    int64_t target = (int64_t)v->pos + k + (int32_t)value;
    if (target < 0 || target >= (int64_t)v->code->nwords || !v->start[target])
        failf(v, "operand %u: branch offset %d lands at %lld, not at an instruction", k, (int32_t)value,
              (long long)target);
}

/* The operands of one instruction: the slot kinds on the first pass, the branch offsets on
 * the second, once every instruction start is known. */
static void operand_first(uint32_t k, char kind, uint32_t value, void *ctx) { check_operand(ctx, k, kind, value); }
static void operand_second(uint32_t k, char kind, uint32_t value, void *ctx) {
    if (kind == 'O') check_branch(ctx, k, value);
}

static bool visit(verifier *v, const handler *h, bool branches) {
    const ri_code *code = v->code;
    for (v->pos = 0; v->pos < code->nwords && v->ok;) {
        v->op = op_of(h, code->words[v->pos]);
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
        ri_code_for_each_operand(v->op, code->words, v->pos, branches ? operand_second : operand_first, v);
        check_pending(v);
        v->pos += size;
    }
    return v->ok;
}

static void check_points(verifier *v, const handler *h) {
    const ri_code *code = v->code;
    v->op = RI_CODE_OP_COUNT;
    for (uint32_t i = 0; i < code->npoints && v->ok; i++) {
        uint32_t p = code->points[i].pos;
        v->pos = p;
        if (i > 0 && p <= code->points[i - 1].pos) failf(v, "stop point %u is not after the one before it", i);
        else if (p >= code->nwords) failf(v, "stop point %u past the end of the code", i);
        else if (!v->start[p] && !(p >= 3 && v->start[p - 3] &&
                                   (ri_code_flags(op_of(h, code->words[p - 3])) & RI_OPF_TRAP2)))
            failf(v, "stop point %u is not at an instruction's start", i);
    }
}

bool ri_code_verify(const ri_code *code, const int32_t *dispatch, char *msg, size_t cap) {
    if (msg && cap) msg[0] = '\0';
    handler *h = malloc(RI_CODE_OP_COUNT * sizeof *h);
    uint8_t *start = calloc((size_t)code->nwords + 1, 1);
    verifier v = {code, start, msg, cap, true, 0, RI_CODE_OP_COUNT, 0, 0, 0};
    if (!h || !start) {
        free(h);
        free(start);
        if (msg && cap) snprintf(msg, cap, "out of memory");
        return false;
    }
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) h[op] = (handler){dispatch[op], op};
    qsort(h, RI_CODE_OP_COUNT, sizeof *h, by_word);
    if (code->nwords == 0) failf(&v, "no code");
    if (visit(&v, h, false) && visit(&v, h, true)) check_points(&v, h);
    free(h);
    free(start);
    return v.ok;
}

void ri_code_assert_valid(const ri_code *code, const int32_t *dispatch) {
    char msg[256];
    bool ok = ri_code_verify(code, dispatch, msg, sizeof msg);
    if (ok || strcmp(msg, "out of memory") == 0) return; /* (nothing checked: no failure to report) */
    fprintf(stderr, "code verifier: %s\n", msg);
    RI_ASSERT(ok, "I15");
}
