/*
 * The code verifier's checks beyond the operand kinds (code_verify.h): ENTRY against the
 * code's frame, a call's frame base with the callee's parameters, RETHROW's exception slot,
 * and the exception handler tables (tries: ranges, order, nesting, parents, delegates, clause
 * counts; clauses: try, tag, target, range, value and exception slots), each shown on a
 * compiled function of tests/wat/exceptions.wat (legacy try/catch/delegate/rethrow) or of
 * a try_table module built as bytes (the text tools here do not know try_table), corrupted
 * one field at a time: the unchanged code passes, the corrupted one fails with its message.
 * (test_code_operands.c: the kinds, and the index operands against the module.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "wasm_bytes.h"
#include "engine/code_info.h"
#include "engine/code_verify.h"
#include "engine/module.h"

/* ---- helpers ---- */

static uint32_t op_at(const ri_code *code, uint32_t pos) {
    const int32_t *d = ri_interp_dispatch_table();
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++)
        if (d[op] == (int32_t)code->words[pos]) return op;
    return RI_CODE_OP_COUNT;
}

/* The position of the first instruction of operation op in code, UINT32_MAX if none. */
static uint32_t find_op(const ri_code *code, uint32_t op) {
    for (uint32_t pos = 0; pos < code->nwords;) {
        uint32_t here = op_at(code, pos);
        if (here == op) return pos;
        uint32_t size = ri_code_size_at(here, code->words, pos, code->nwords);
        assert_true(size > 0);
        pos += size;
    }
    return UINT32_MAX;
}

static void passes(const ri_code_verifier *v, const ri_code *code) {
    char msg[256];
    if (!ri_code_verify(v, code, msg, sizeof msg)) fail_msg("%s", msg);
}

/* code fails with a message holding `needle` (then, restored by the caller, passes again). */
static void fails_with(const ri_code_verifier *v, const ri_code *code, const char *needle) {
    char msg[256];
    if (ri_code_verify(v, code, msg, sizeof msg)) fail_msg("passes; expected '%s'", needle);
    print_message("  %s\n", msg);
    if (!strstr(msg, needle)) fail_msg("'%s' lacks '%s'", msg, needle);
}

/* Sets *field to value, checks that code fails with needle, restores it and checks that it passes. */
static void corrupt(const ri_code_verifier *v, const ri_code *code, uint32_t *field, uint32_t value,
                    const char *needle) {
    uint32_t saved = *field;
    *field = value;
    fails_with(v, code, needle);
    *field = saved;
    passes(v, code);
}

/* The first function of m with a try that has (with_catches) or has not catch clauses (a
 * delegate), and that try's index. */
static ri_code *function_with_try(const ri_module *m, bool with_catches, uint32_t *t) {
    for (uint32_t i = 0; i < m->nbodies; i++)
        for (uint32_t k = 0; k < m->codes[i]->ntries; k++)
            if ((m->codes[i]->tries[k].ncatches > 0) == with_catches &&
                (with_catches || m->codes[i]->tries[k].delegate != RI_TRY_CATCHES)) {
                *t = k;
                return m->codes[i];
            }
    fail_msg("no such try");
    return NULL;
}

typedef struct checked {
    ri_module *m;
    ri_code_verifier *v;
} checked;

static checked open_fixture(const char *name) {
    checked c;
    c.m = engine_fixture_module(name, false);
    c.v = ri_code_verifier_new(ri_interp_dispatch_table(), c.m);
    assert_non_null(c.v);
    for (uint32_t i = 0; i < c.m->nbodies; i++) passes(c.v, c.m->codes[i]);
    return c;
}

static void close_checked(checked *c) {
    ri_code_verifier_free(c->v);
    ri_module_free(c->m);
}

/* ---- the instructions ---- */

/* ENTRY's locals and constants are the code's; an ENTRY_Z's zeroed slots are in the frame. */
static void entry_matches_the_frame(void **state) {
    (void)state;
    checked c = open_fixture("exceptions");
    ri_code *code = c.m->codes[2]; /* $step: a parameter, no declared local */
    assert_true(ri_code_stop(op_at(code, 0)) == RI_STOP_ENTRY);
    char want[96];
    snprintf(want, sizeof want, "operand 2: first local %u is not the one after the parameters (%u slots)",
             code->words[2] + 1, code->nparams);
    corrupt(c.v, code, &code->words[2], code->words[2] + 1, want);
    corrupt(c.v, code, &code->words[3], code->words[3] + 1, "declared locals after");
    corrupt(c.v, code, &code->nconsts, code->nconsts + 1, "constants, the code's pool has");
    close_checked(&c);

    /* made by hand: ENTRY_Z zeroes 8 slots after the parameters, whatever it declares */
    const int32_t *d = ri_interp_dispatch_table();
    uint32_t words[] = {(uint32_t)d[RI_CODE_ENTRY_Z], 1, 0, 1, 0, (uint32_t)d[RI_CODE_RETURN0]};
    ri_code_point points[] = {{0, 0, 0, RI_POINT_ENTRY}};
    ri_code hand = {.nwords = 6, .words = words, .npoints = 1, .points = points, .nlocals = 1, .stack_base = 1,
                    .frame_slots = 8};
    ri_module empty = {.ntypes = 0};
    ri_code_verifier *v = ri_code_verifier_new(d, &empty);
    assert_non_null(v);
    passes(v, &hand);
    corrupt(v, &hand, &hand.frame_slots, 7, "slots 0 .. 8 it zeroes or loads outside the frame (7 slots)");
    words[0] = (uint32_t)d[RI_CODE_ENTRY_Z4];
    words[3] = 5;
    hand.nlocals = hand.stack_base = 5;
    fails_with(v, &hand, "operand 3: 5 declared locals, more than the 4 it zeroes");
    ri_code_verifier_free(v);
}

/* A call's frame base leaves room in the frame for the callee's parameters; a THROW's first
 * value for the tag's values. */
static void frame_base_holds_the_values(void **state) {
    (void)state;
    checked c = open_fixture("exceptions");
    ri_code *code = c.m->codes[2]; /* $step calls $middle (one i32) */
    uint32_t p = find_op(code, RI_CODE_CALL_LOCAL);
    assert_true(p != UINT32_MAX);
    char want[128];
    snprintf(want, sizeof want, "(CALL_LOCAL): operand 2: first slot %u and 1 value slots after it past the frame (%u slots)",
             code->frame_slots, code->frame_slots);
    corrupt(c.v, code, &code->words[p + 2], code->frame_slots, want);
    code = c.m->codes[0]; /* $thrower throws $f (i32, i64) */
    for (p = 0; p < code->nwords; p += ri_code_size_at(op_at(code, p), code->words, p, code->nwords))
        if (op_at(code, p) == RI_CODE_THROW && code->words[p + 1] == 1) break;
    assert_true(p < code->nwords);
    snprintf(want, sizeof want, "(THROW): operand 2: first slot %u and 2 value slots after it past the frame",
             code->frame_slots - 1);
    corrupt(c.v, code, &code->words[p + 2], code->frame_slots - 1, want);
    close_checked(&c);
    /* CALL_INDIRECT (type, table, index slot, frame base): the type's one parameter, not the
     * table, says how many (the table index came between them and was taken for none) */
    c = open_fixture("slot_repr");
    code = NULL;
    for (uint32_t i = 0; i < c.m->nbodies && !code; i++)
        if (find_op(c.m->codes[i], RI_CODE_CALL_INDIRECT) != UINT32_MAX) code = c.m->codes[i];
    assert_non_null(code);
    p = find_op(code, RI_CODE_CALL_INDIRECT);
    assert_int_equal(code->words[p + 4] + 1, code->words[p + 3]); /* one argument, then the index */
    snprintf(want, sizeof want, "(CALL_INDIRECT): operand 4: first slot %u and 1 value slots after it past the frame",
             code->frame_slots);
    corrupt(c.v, code, &code->words[p + 4], code->frame_slots, want);
    close_checked(&c);
}

/* RETHROW's slot is one of the exception slots. */
static void rethrow_reads_an_exception_slot(void **state) {
    (void)state;
    checked c = open_fixture("exceptions");
    ri_code *code = c.m->codes[4]; /* $rethrower */
    uint32_t p = find_op(code, RI_CODE_RETHROW);
    assert_true(p != UINT32_MAX && code->nexn > 0);
    corrupt(c.v, code, &code->words[p + 1], code->exn_base + code->nexn,
            "(RETHROW): operand 1: slot");
    corrupt(c.v, code, &code->words[p + 1], code->exn_base - 1, "is not one of the exception slots");
    close_checked(&c);
}

/* ---- the tries ---- */

static void try_ranges_order_and_nesting(void **state) {
    (void)state;
    checked c = open_fixture("exceptions");
    uint32_t t;
    ri_code *code = function_with_try(c.m, true, &t);
    ri_code_try *tr = &code->tries[t];
    corrupt(c.v, code, &tr->end, code->nwords + 1, "is no range inside the code");
    corrupt(c.v, code, &tr->start, tr->end + 1, "is no range inside the code");
    corrupt(c.v, code, &tr->start, 1, "does not begin and end at instructions' starts"); /* inside the ENTRY */
    corrupt(c.v, code, &tr->parent, t, "parent");
    corrupt(c.v, code, &tr->ncatches, tr->ncatches + 1, "catch clauses, the table has");
    corrupt(c.v, code, &tr->delegate, t, "delegate target");

    /* $rethrower: a try in the catch_all clause of another (which does not hold it) */
    code = c.m->codes[4];
    assert_true(code->ntries == 2 && code->tries[0].end <= code->tries[1].start);
    corrupt(c.v, code, &code->tries[1].start, code->tries[0].start, "overlaps try 0's");
    corrupt(c.v, code, &code->tries[1].start, 0, "try 1: opens at 0, before try 0");
    corrupt(c.v, code, &code->tries[1].parent, 0, "try 1: parent 0 is not an earlier try holding its body");

    /* $middle: a try that delegates to the caller */
    code = function_with_try(c.m, false, &t);
    corrupt(c.v, code, &code->tries[t].ncatches, 1, "delegates, yet has 1 catch clauses");
    corrupt(c.v, code, &code->tries[t].delegate, t, "is not an earlier try holding its body");
    close_checked(&c);
}

/* ---- the clauses ---- */

static void legacy_clauses(void **state) {
    (void)state;
    checked c = open_fixture("exceptions");
    uint32_t t;
    ri_code *code = function_with_try(c.m, true, &t);
    uint32_t k = 0;
    while (code->catches[k].try_index != t) k++;
    ri_code_catch *cc = &code->catches[k];
    char want[128];
    snprintf(want, sizeof want, "catch %u: tag index %u out of range (the module has %u)", k, c.m->ntags, c.m->ntags);
    corrupt(c.v, code, &cc->tag, c.m->ntags, want);
    corrupt(c.v, code, &cc->try_index, code->ntries, "out of range (the code has");
    corrupt(c.v, code, &cc->target, cc->target + 1, "is not a GAS instruction");
    corrupt(c.v, code, &cc->base, code->frame_slots, "not on the operand stack");
    corrupt(c.v, code, &cc->base, code->stack_base - 1, "not on the operand stack");
    corrupt(c.v, code, &cc->end, cc->target - 1, "does not end at an instruction's start after its target");
    corrupt(c.v, code, &cc->exn_slot, code->exn_base + code->nexn, "is not one of the exception slots");
    if (code->tries[t].parent == RI_TRY_NONE) /* its body made to reach past the clause */
        corrupt(c.v, code, &code->tries[t].end, code->nwords, "inside its try");
    corrupt(c.v, code, &code->nexn, code->stack_base, "exception slots");
    close_checked(&c);
}

/* A module of one function (i32) -> i32: a block (result i32 exnref) around a try_table whose
 * clause catch_ref $e goes to it; the try_table's body throws $e (i32). */
static ri_module *try_table_module(void) {
    ri_buf mod = {0}, s = {0}, f = {0};
    wasm_header(&mod);
    WASM_PUT(&s, 3, 0x60, 1, 0x7F, 0, 0x60, 1, 0x7F, 1, 0x7F, 0x60, 0, 2, 0x7F, 0x69);
    wasm_section(&mod, 1, &s);
    WASM_PUT(&s, 1, 1);
    wasm_section(&mod, 3, &s);
    WASM_PUT(&s, 1, 0, 0); /* tag $e: type 0 */
    wasm_section(&mod, 13, &s);
    WASM_PUT(&f, 0,                        /* no locals */
             0x02, 2,                      /* block (type 2) */
             0x1F, 0x40, 1, 1, 0, 0,       /* try_table (catch_ref $e 0) */
             0x20, 0, 0x08, 0, 0x0B,       /* local.get 0, throw $e, end */
             0x41, 0, 0x0F, 0x0B,          /* i32.const 0, return, end */
             0x1A, 0x0B);                  /* drop (the exnref), end */
    ri_buf_u8(&s, 1);
    wasm_sized(&s, &f);
    wasm_section(&mod, 10, &s);
    wasm_done(&mod);
    ri_module_config cfg;
    memset(&cfg, 0, sizeof cfg);
    ri_error err;
    ri_module *m = ri_module_load(mod.data, mod.len, &cfg, &err);
    if (!m) fail_msg("load: %s", err.message);
    ri_buf_free(&mod);
    return m;
}

static void try_table_clauses(void **state) {
    (void)state;
    ri_module *m = try_table_module();
    ri_code_verifier *v = ri_code_verifier_new(ri_interp_dispatch_table(), m);
    assert_non_null(v);
    ri_code *code = m->codes[0];
    passes(v, code);
    assert_int_equal(code->ncatches, 1);
    ri_code_catch *cc = &code->catches[0];
    assert_true(cc->table && cc->exn_slot == cc->base + 1);
    /* a target inside an instruction: one word into the one there (none here is 1 word long
     * but RETURN0, which is not a label) */
    assert_true(ri_code_words(op_at(code, cc->target)) != 1);
    uint32_t target = cc->target;
    cc->target = cc->end = target + 1;
    fails_with(v, code, "is not an instruction's start");
    cc->target = cc->end = target;
    corrupt(v, code, &cc->end, target + 1, "a try_table clause's end");
    corrupt(v, code, &cc->exn_slot, cc->base + 2, "is not the one after its values");
    corrupt(v, code, &cc->tag, RI_CATCH_ALL, "is not the one after its values"); /* no values: after base */
    corrupt(v, code, &cc->base, code->frame_slots, "not on the operand stack");
    corrupt(v, code, &code->ntries, 0, "1 catch clauses, no try");
    ri_code_verifier_free(v);
    ri_module_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(entry_matches_the_frame),
        cmocka_unit_test(frame_base_holds_the_values),
        cmocka_unit_test(rethrow_reads_an_exception_slot),
        cmocka_unit_test(try_ranges_order_and_nesting),
        cmocka_unit_test(legacy_clauses),
        cmocka_unit_test(try_table_clauses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
