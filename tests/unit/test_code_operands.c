/*
 * The operand kinds of the operation table (code.h, "Operand kinds"; code_info.h) and the
 * code verifier (code_verify.h):
 * - generated from the table: every operation has kinds, and for a fixed-size one they
 *   take exactly its size but the handler word; a variable-size one has one count and one
 *   repeated kind; a branch's last operand is its offset; an accumulator producer writes
 *   its operand 1 and an accumulator variant reads a slot where it reads the register;
 *   names are unique, and operations sharing a handler share their operands;
 * - the reads and writes derived from the kinds;
 * - every function of every fixture of tests/wat/ (metered and unmetered, every fusion
 *   family on and every one off) passes the verifier, and a corrupted code word of each
 *   kind it checks (handler, slot, index, branch offset, size, stop point) fails it (an
 *   index one past its space, with the message naming operation, operand, value and bound).
 * (test_code_verify.c: ENTRY, frame bases with their values, the handler tables.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "engine/code_info.h"
#include "engine/code_verify.h"
#include "engine/module.h"

static uint32_t kinds_words(const char *k) {
    uint32_t w = 0;
    for (; *k; k++) w += *k == 'L' ? 2 : 1;
    return w;
}

static void every_operation_has_its_kinds(void **state) {
    (void)state;
    uint32_t missing = 0;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) {
        const char *k = ri_code_operands(op);
        if (!k) {
            print_message("no operand kinds: %s\n", ri_code_names[op]);
            missing++;
            continue;
        }
        const char *star = strchr(k, '*');
        uint32_t words = ri_code_words(op);
        for (const char *c = k; *c; c++)
            if (!strchr("DSWVILOMYGTXFHBEZKPNC_?*", *c)) fail_msg("%s: unknown kind '%c'", ri_code_names[op], *c);
        if (words) { /* fixed size: the kinds take every operand word */
            if (star || strchr(k, 'C')) fail_msg("%s: a count in a fixed-size operation", ri_code_names[op]);
            if (1 + kinds_words(k) != words)
                fail_msg("%s: kinds \"%s\" take %u words, the table says %u", ri_code_names[op], k, 1 + kinds_words(k),
                         words);
        } else { /* variable: one count, before the one repeated kind */
            if (!star || !star[1] || star[1] == '*' || !strchr(k, 'C') || strchr(k, 'C') > star ||
                strchr(strchr(k, 'C') + 1, 'C'))
                fail_msg("%s: variable size, kinds \"%s\"", ri_code_names[op], k);
        }
        if (strchr(k, '?')) assert_int_equal(op, RI_CODE_V128_OP);
        /* an N follows a slot operand */
        for (const char *c = strchr(k, 'N'); c; c = strchr(c + 1, 'N')) assert_true(c > k && strchr("DS", c[-1]));
        uint32_t f = ri_code_flags(op);
        if (f & RI_OPF_BRANCH) assert_int_equal(k[strlen(k) - 1], 'O');
        else if (!star) assert_null(strchr(k, 'O'));
        if (f & RI_OPF_CALL) assert_int_equal(k[strlen(k) - 1], 'P');
        if (f & (RI_OPF_ACC_INT | RI_OPF_ACC_F64)) assert_int_equal(k[0], 'D');
        if (f & RI_OPF_ACC_MOVE) assert_string_equal(k, "DS");
        /* a variant has its base's kinds */
        uint32_t base = ri_code_infos[op].base;
        if (base != op) {
            assert_null(ri_code_operand_kinds[op]);
            assert_ptr_equal(ri_code_operands(op), ri_code_operands(base));
        }
    }
    /* an accumulator variant reads, at the operand positions of its mask, slots of its base */
#define RI_X_ACC(variant, of, words, mask, cls) \
    for (uint32_t j = 1; j < (words); j++) \
        if ((mask) >> j & 1) assert_int_equal(ri_code_operands(RI_CODE_##variant)[j - 1], 'S');
    RI_CODE_ACC_OPS(RI_X_ACC)
#undef RI_X_ACC
    print_message("%u of %u operations without operand kinds\n", missing, (unsigned)RI_CODE_OP_COUNT);
    assert_int_equal(missing, 0);
    assert_null(ri_code_operands(RI_CODE_OP_COUNT));
}

static void names_are_unique(void **state) {
    (void)state;
    const int32_t *d = ri_interp_dispatch_table();
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++)
        for (uint32_t j = 0; j < op; j++) {
            if (strcmp(ri_code_names[op], ri_code_names[j]) == 0) fail_msg("name %s twice", ri_code_names[op]);
            /* (operations may share a handler, as the reinterprets do: then their layout too) */
            if (d[op] == d[j] && (ri_code_words(op) != ri_code_words(j) ||
                                  strcmp(ri_code_operands(op), ri_code_operands(j)) != 0))
                fail_msg("%s and %s share a handler, not their operands", ri_code_names[op], ri_code_names[j]);
        }
}

/* ---- reads and writes ---- */

typedef struct slots { uint32_t n, s[16]; } slots;
static void add_slot(uint32_t slot, void *ctx) {
    slots *s = ctx;
    assert_true(s->n < 16);
    s->s[s->n++] = slot;
}

static void expect(uint32_t op, const uint32_t *code, bool writes, uint32_t n, ...) {
    slots got = {0, {0}};
    if (writes) ri_code_slot_writes(op, code, 0, add_slot, &got);
    else ri_code_slot_reads(op, code, 0, add_slot, &got);
    if (got.n != n) fail_msg("%s: %u slots %s, expected %u", ri_code_names[op], got.n, writes ? "written" : "read", n);
    va_list ap;
    va_start(ap, n);
    for (uint32_t i = 0; i < n; i++) assert_int_equal(got.s[i], va_arg(ap, unsigned));
    va_end(ap);
}

static void reads_and_writes_follow_the_kinds(void **state) {
    (void)state;
    const uint32_t add[] = {0, 7, 3, 4};
    expect(RI_CODE_I32_ADD, add, false, 2, 3, 4);
    expect(RI_CODE_I32_ADD, add, true, 1, 7);
    expect(RI_CODE_I32_ADD_A2, add, false, 2, 3, 4);   /* (the slot is still there) */
    expect(RI_CODE_I32_ADD_I, add, false, 1, 3);       /* 4 is an immediate */
    const uint32_t ret[] = {0, 10, 3};
    expect(RI_CODE_RETURN_N, ret, false, 3, 10, 11, 12);
    const uint32_t ret0[] = {0, 10, 0};
    expect(RI_CODE_RETURN_N, ret0, false, 0);
    const uint32_t entry[] = {0, 5, 2, 3, 1, 0xAA, 0xBB};
    expect(RI_CODE_ENTRY, entry, true, 3, 2, 3, 4);
    expect(RI_CODE_ENTRY, entry, false, 0);
    assert_int_equal(ri_code_size_at(RI_CODE_ENTRY, entry, 0, 7), 7);
    assert_int_equal(ri_code_size_at(RI_CODE_ENTRY, entry, 0, 6), 0); /* does not fit */
    assert_int_equal(ri_code_operand_at(RI_CODE_ENTRY, entry, 0, 5), 'L');
    assert_int_equal(ri_code_operand_at(RI_CODE_ENTRY, entry, 0, 6), 'l');
    const uint32_t table[] = {0, 9, 2, 5, 6, 7};
    assert_int_equal(ri_code_size_at(RI_CODE_BR_TABLE_G, table, 0, 6), 6);
    assert_int_equal(ri_code_operand_at(RI_CODE_BR_TABLE_G, table, 0, 5), 'O');
    expect(RI_CODE_BR_TABLE_G, table, false, 1, 9);
    const uint32_t lane[] = {0, 20, 30, 40, 0, 0x6E};          /* i8x16.add: dst, a, b */
    expect(RI_CODE_V128_I8X16_ADD, lane, false, 4, 30, 31, 40, 41);
    expect(RI_CODE_V128_I8X16_ABS, lane, false, 2, 30, 31);    /* (b unused in a unary form) */
    expect(RI_CODE_V128_I8X16_ABS, lane, true, 2, 20, 21);
    const uint32_t bin[] = {0, 20, 30, 40, 0, RI_V128_OP_WORD(0x6E, 0, RI_V128F_HAS_B)};
    expect(RI_CODE_V128_OP, bin, false, 4, 30, 31, 40, 41);
    const uint32_t ext[] = {0, 20, 30, 0, 0, RI_V128_OP_WORD(0x15, 3, RI_V128F_R_SCALAR)};
    expect(RI_CODE_V128_OP, ext, true, 1, 20);
    assert_int_equal(ri_code_operand_at(RI_CODE_V128_OP, ext, 0, 3), '_');
    const uint32_t call[] = {0, 2, 3, 9, 12};
    expect(RI_CODE_CALL_INDIRECT, call, false, 1, 9);   /* the element index; not the frame */
    expect(RI_CODE_CALL_INDIRECT, call, true, 0);
}

/* ---- the verifier on the fixtures ---- */

/* Calls fn on every module of the fixtures, compiled in each of the four ways. */
static uint32_t each_fixture_module(void (*fn)(ri_module *m, void *ctx), void *ctx) {
    const char *dir = getenv("RI_WAT_DIR");
    assert_non_null(dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    uint32_t modules = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".wasm") != 0) continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(len - 5), e->d_name); /* (d_name: under 256 bytes) */
        size_t got = 0;
        uint8_t *bytes = read_fixture(name, &got);
        for (int way = 0; way < 4; way++) {
            ri_module_config mcfg;
            memset(&mcfg, 0, sizeof mcfg);
            mcfg.unmetered = way & 1;
            mcfg.fusions_off = (way & 2) ? RI_FUSE_ALL : 0;
            ri_error err;
            ri_module *m = ri_module_load(bytes, got, &mcfg, &err);
            if (!m) continue; /* fixtures that are meant not to load */
            fn(m, ctx);
            ri_module_free(m);
            modules++;
        }
        free(bytes);
    }
    closedir(d);
    return modules;
}

static void verify_all(ri_module *m, void *ctx) {
    uint32_t *functions = ctx;
    ri_code_verifier *v = ri_code_verifier_new(ri_interp_dispatch_table(), m);
    assert_non_null(v);
    for (uint32_t i = 0; i < m->nbodies; i++) {
        char msg[256];
        if (!ri_code_verify(v, m->codes[i], msg, sizeof msg)) fail_msg("%s", msg);
        (*functions)++;
    }
    ri_code_verifier_free(v);
}

static void fixtures_pass_the_verifier(void **state) {
    (void)state;
    uint32_t functions = 0;
    uint32_t modules = each_fixture_module(verify_all, &functions);
    print_message("%u modules, %u functions verified\n", modules, functions);
    assert_true(modules > 40);
}

/* ---- corrupted code fails it ---- */

/* Whether code, with word `at` replaced by value (or, at == UINT32_MAX, its point `point`
 * moved by one word), passes the verifier. The code is restored. */
static bool passes_with(const ri_code_verifier *v, ri_code *code, uint32_t at, uint32_t value, uint32_t point,
                        char *msg) {
    uint32_t old = 0;
    if (at != UINT32_MAX) { old = code->words[at]; code->words[at] = value; }
    else code->points[point].pos++;
    bool ok = ri_code_verify(v, code, msg, 256);
    if (at != UINT32_MAX) code->words[at] = old;
    else code->points[point].pos--;
    return ok;
}

/* The index kinds (code.h, "Operand kinds"), with the name the verifier gives their spaces. */
static const char index_kinds[] = "FHBTXYGEZK";
static const char *const index_names[] = {"function", "imported function", "body", "type", "table", "memory",
                                          "global", "element segment", "data segment", "tag"};

static uint32_t index_bound(const ri_module *m, char kind) {
    switch (kind) {
    case 'F': return m->nfuncs;
    case 'H': return m->nfunc_imports;
    case 'B': return m->nbodies;
    case 'T': return m->ntypes;
    case 'X': return m->ntables;
    case 'Y': return m->nmemories;
    case 'G': return m->nglobals;
    case 'E': return m->nelems;
    case 'Z': return m->ndatas;
    default: return m->ntags;
    }
}

typedef struct corruptions { uint32_t slot, branch, handler, size, point, v128, index[10]; } corruptions;

static uint32_t op_at(const uint32_t *words, uint32_t pos) {
    const int32_t *d = ri_interp_dispatch_table();
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++)
        if (d[op] == (int32_t)words[pos]) return op;
    return RI_CODE_OP_COUNT;
}

/* In each function: every instruction's slot operands set to frame_slots, its branch
 * offsets moved by one word (into the middle of an instruction, or past it), and its
 * handler word changed; each must fail. */
static void corrupt_all(ri_module *m, void *ctx) {
    corruptions *c = ctx;
    const int32_t *d = ri_interp_dispatch_table();
    ri_code_verifier *v = ri_code_verifier_new(d, m);
    assert_non_null(v);
    char msg[256];
    uint8_t seen[RI_CODE_OP_COUNT] = {0}; /* each operation once a module (each check walks the whole function) */
    for (uint32_t i = 0; i < m->nbodies; i++) {
        ri_code *code = m->codes[i];
        for (uint32_t pos = 0; pos < code->nwords;) {
            uint32_t op = op_at(code->words, pos);
            uint32_t size = ri_code_size_at(op, code->words, pos, code->nwords);
            assert_true(size > 0);
            if (seen[op]++) {
                pos += size;
                continue;
            }
            for (uint32_t k = 1; k < size; k++) {
                char kind = ri_code_operand_at(op, code->words, pos, k);
                if (kind == 'D' || kind == 'S') {
                    /* (the first of an empty range of slots may be anything) */
                    if (k + 1 < size && ri_code_operand_at(op, code->words, pos, k + 1) == 'N' &&
                        code->words[pos + k + 1] == 0)
                        continue;
                    if (passes_with(v, code, pos + k, code->frame_slots, 0, msg))
                        fail_msg("%s at %u: slot operand %u = frame_slots passes", ri_code_names[op], pos, k);
                    c->slot++;
                } else if (kind && strchr(index_kinds, kind)) {
                    /* one past the module's last index of its space */
                    uint32_t i = (uint32_t)(strchr(index_kinds, kind) - index_kinds), bound = index_bound(m, kind);
                    if (passes_with(v, code, pos + k, bound, 0, msg))
                        fail_msg("%s at %u: %s index operand %u = %u passes", ri_code_names[op], pos, index_names[i], k,
                                 bound);
                    char want[96];
                    snprintf(want, sizeof want, "(%s): operand %u: %s index %u out of range (the module has %u)",
                             ri_code_names[op], k, index_names[i], bound, bound);
                    if (!strstr(msg, want)) fail_msg("'%s' lacks '%s'", msg, want);
                    c->index[i]++;
                } else if (kind == 'V' || kind == 'W') {
                    if (passes_with(v, code, pos + k, code->frame_slots - 1, 0, msg))
                        fail_msg("%s at %u: v128 operand %u = frame_slots - 1 passes", ri_code_names[op], pos, k);
                    c->v128++;
                } else if (kind == 'O') {
                    /* one word further: inside an instruction, unless the target was the last
                     * word before another instruction (a 1-word one: a RETURN0) */
                    uint32_t t = pos + k + code->words[pos + k];
                    uint32_t nop = t + 1 < code->nwords ? op_at(code->words, t) : RI_CODE_OP_COUNT;
                    if (nop < RI_CODE_OP_COUNT && ri_code_words(nop) == 1) continue;
                    if (passes_with(v, code, pos + k, code->words[pos + k] + 1, 0, msg))
                        fail_msg("%s at %u: branch offset %u moved passes", ri_code_names[op], pos, k);
                    c->branch++;
                }
            }
            /* a handler word of no operation */
            if (passes_with(v, code, pos, (uint32_t)d[RI_CODE_OP_COUNT + 2] + 1u, 0, msg))
                fail_msg("%s at %u: a bad handler word passes", ri_code_names[op], pos);
            c->handler++;
            /* the code cut inside its last instruction: the walk does not end at its end */
            if (pos + size == code->nwords && size > 1) {
                code->nwords--;
                if (ri_code_verify(v, code, msg, sizeof msg)) fail_msg("function %u: cut code passes", code->func_index);
                code->nwords++;
                c->size++;
            }
            pos += size;
        }
        for (uint32_t p = 0; p < code->npoints && p < 8; p++) {
            if (p + 1 < code->npoints && code->points[p].pos + 1 == code->points[p + 1].pos) continue;
            uint32_t at = code->points[p].pos + 1;
            /* moved by one word: inside its instruction (unless that is 1 word long) */
            if (at < code->nwords && op_at(code->words, at - 1) < RI_CODE_OP_COUNT &&
                ri_code_words(op_at(code->words, at - 1)) == 1)
                continue;
            if (passes_with(v, code, UINT32_MAX, 0, p, msg)) fail_msg("function %u: point %u moved passes", code->func_index, p);
            c->point++;
        }
    }
    ri_code_verifier_free(v);
}

static void corrupted_code_fails_the_verifier(void **state) {
    (void)state;
    corruptions c = {0};
    each_fixture_module(corrupt_all, &c);
    print_message("corrupted and caught: %u slots, %u v128 slots, %u branch offsets, %u handler words, "
                  "%u stop points, %u cut functions\n", c.slot, c.v128, c.branch, c.handler, c.point, c.size);
    assert_true(c.slot > 1000 && c.branch > 100 && c.handler > 1000 && c.point > 100 && c.v128 > 10 && c.size > 100);
    for (uint32_t i = 0; i < 10; i++) print_message("  %u %s indices out of range\n", c.index[i], index_names[i]);
    for (uint32_t i = 0; i < 10; i++) assert_true(c.index[i] > 0); /* (the fixtures name every index space) */
}

/* One word, with its message: the operand of a GAS made a slot of I32_ADD's. */
static void the_message_names_the_word(void **state) {
    (void)state;
    engine_fixture fx;
    engine_fixture_open(&fx, "exec", false);
    ri_code *code = fx.module->codes[0];
    char msg[256];
    ri_code_verifier *v = ri_code_verifier_new(ri_interp_dispatch_table(), fx.module);
    assert_non_null(v);
    assert_true(ri_code_verify(v, code, msg, sizeof msg));
    uint32_t saved = code->words[0];
    code->words[0] = 12345;
    assert_false(ri_code_verify(v, code, msg, sizeof msg));
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "word 0"));
    assert_non_null(strstr(msg, "no operation"));
    code->words[0] = saved;
    assert_true(ri_code_verify(v, code, msg, sizeof msg));
    ri_code_verifier_free(v);
    engine_fixture_close(&fx);
}

/* A throw of a tag without values at the top of a frame with no slots: its first value's slot
 * is the frame's end, which is right (it reads none). (THROW's kinds had it a slot read:
 * the verifier stopped the exception-handling spec scripts.) */
static void a_throw_without_values_passes(void **state) {
    (void)state;
    const int32_t *d = ri_interp_dispatch_table();
    uint32_t words[] = {(uint32_t)d[RI_CODE_ENTRY_Z0], 2, 0, 0, 0, (uint32_t)d[RI_CODE_THROW], 0, 0};
    ri_code_point points[] = {{0, 0, 0, RI_POINT_ENTRY}, {5, 0, 0, RI_POINT_TRAP}};
    ri_code code = {.nwords = 8, .words = words, .npoints = 2, .points = points, .frame_slots = 0};
    /* a module with one tag, of type [] -> [] */
    uint32_t tag_types[] = {0};
    ri_type types[] = {{0, 0, NULL, NULL}};
    ri_module m = {.ntypes = 1, .types = types, .ntags = 1, .tag_types = tag_types};
    ri_code_verifier *v = ri_code_verifier_new(d, &m);
    assert_non_null(v);
    char msg[256];
    if (!ri_code_verify(v, &code, msg, sizeof msg)) fail_msg("%s", msg);
    words[7] = 1; /* past the frame's end */
    assert_false(ri_code_verify(v, &code, msg, sizeof msg));
    assert_non_null(strstr(msg, "THROW"));
    words[7] = 0;
    words[6] = 1; /* a tag the module does not have */
    assert_false(ri_code_verify(v, &code, msg, sizeof msg));
    assert_non_null(strstr(msg, "operand 1: tag index 1 out of range (the module has 1)"));
    ri_code_verifier_free(v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_operation_has_its_kinds),
        cmocka_unit_test(names_are_unique),
        cmocka_unit_test(reads_and_writes_follow_the_kinds),
        cmocka_unit_test(fixtures_pass_the_verifier),
        cmocka_unit_test(corrupted_code_fails_the_verifier),
        cmocka_unit_test(the_message_names_the_word),
        cmocka_unit_test(a_throw_without_values_passes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
