/*
 * The table of operation properties (src/engine/code_info.h):
 * - it says what the compiler's switches said before it replaced them (the old functions
 *   are copied below verbatim, for every operation): the proof that the replacement
 *   changed nothing. (To be removed once the table has been the only source for a while.)
 * - it is consistent: every fixed-size operation has a size, branch variants and
 *   accumulator variants have their base's size, and every module of the fixtures
 *   compiles to code that the table's sizes walk exactly, instruction by instruction,
 *   every stop point at an instruction's start and every call followed by its GAS;
 *   and the fusion rules are well formed (fuse_rules_check).
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
#include "engine/module.h"

/* compile_internal.h's fuse_rule_count and fuse_rules_check (that header's `fail` would
 * clash with cmocka's) */
uint32_t ri_compile_fuse_rule_count(void);
uint32_t ri_compile_fuse_rules_check(void);

/* ---- the switches compile.c had before the table (verbatim but for names) ---- */

static bool old_is_i64_op(ri_code_op op) {
    switch (op) {
#define RI_X_NUM(name, byte, a, b, r) case RI_CODE_##name: return RI_T_##a == RI_I64;
    RI_NUMERIC_OPS(RI_X_NUM)
#undef RI_X_NUM
    default: return false;
    }
}

static bool old_numeric_may_trap(uint16_t op) {
    switch (op) {
    case RI_OP_I32_DIV_S: case RI_OP_I32_DIV_U: case RI_OP_I32_REM_S: case RI_OP_I32_REM_U:
    case RI_OP_I64_DIV_S: case RI_OP_I64_DIV_U: case RI_OP_I64_REM_S: case RI_OP_I64_REM_U:
    case RI_OP_I32_TRUNC_F32_S: case RI_OP_I32_TRUNC_F32_U: case RI_OP_I32_TRUNC_F64_S:
    case RI_OP_I32_TRUNC_F64_U: case RI_OP_I64_TRUNC_F32_S: case RI_OP_I64_TRUNC_F32_U:
    case RI_OP_I64_TRUNC_F64_S: case RI_OP_I64_TRUNC_F64_U:
        return true;
    default:
        return false;
    }
}

static uint32_t old_branch_words(uint32_t op) {
    switch (op) {
    case RI_CODE_BR: return 2;
    case RI_CODE_BR_IF: case RI_CODE_BR_IFNOT: return 3;
#define RI_X_CMPBR(cmp, neg) case RI_CODE_BR_IF_##cmp: case RI_CODE_BR_IF_##cmp##_I: return 4;
    RI_CODE_CMP_BRANCHES(RI_X_CMPBR)
#undef RI_X_CMPBR
#define RI_X_FCMPBR(cmp, mirror) case RI_CODE_BR_IF_##cmp: case RI_CODE_BR_IFNOT_##cmp: return 4;
    RI_CODE_FCMP_BRANCHES(RI_X_FCMPBR)
#undef RI_X_FCMPBR
#define RI_X_ADDBR(cmp) case RI_CODE_ADDBR_##cmp##_SS: case RI_CODE_ADDBR_##cmp##_SI: \
                        case RI_CODE_ADDBR_##cmp##_IS: case RI_CODE_ADDBR_##cmp##_II: return 6;
    RI_CODE_ADDBR_CMPS(RI_X_ADDBR)
#undef RI_X_ADDBR
#define RI_X_I2ADDBR(cmp) case RI_CODE_I2ADDBR_##cmp##_SS: case RI_CODE_I2ADDBR_##cmp##_SI: \
                          case RI_CODE_I2ADDBR_##cmp##_IS: case RI_CODE_I2ADDBR_##cmp##_II: return 12;
    RI_CODE_LOOPFUSE_CMPS(RI_X_I2ADDBR)
#undef RI_X_I2ADDBR
#define RI_X_MADDBR(cmp) case RI_CODE_MADDBR_##cmp##_SS: case RI_CODE_MADDBR_##cmp##_SI: \
                         case RI_CODE_MADDBR_##cmp##_IS: case RI_CODE_MADDBR_##cmp##_II: return 8;
    RI_CODE_LOOPFUSE_CMPS(RI_X_MADDBR)
#undef RI_X_MADDBR
#define RI_X_LOADBR(load) case RI_CODE_##load##_BR_EQ_S: case RI_CODE_##load##_BR_NE_S: \
                          case RI_CODE_##load##_BR_EQ_I: case RI_CODE_##load##_BR_NE_I: return 7;
    RI_CODE_LOADBR_OPS(RI_X_LOADBR)
#undef RI_X_LOADBR
    default: return 0;
    }
}

static bool old_is_call(uint32_t op) {
    switch (op) {
    case RI_CODE_CALL: case RI_CODE_CALL_LOCAL: case RI_CODE_CALL_INDIRECT:
    case RI_CODE_RETURN_CALL: case RI_CODE_RETURN_CALL_INDIRECT:
        return true;
    default:
        return false;
    }
}

static uint32_t old_call_words(uint32_t op) {
    switch (op) {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) case RI_CODE_##name: return words;
    RI_CODE_CONTROL_OPS(RI_X_CTRL)
#undef RI_X_CTRL
    default: return 0;
    }
}

enum { ACC_NONE, ACC_INT, ACC_F64 };

static int old_acc_produced(const uint32_t *code, uint32_t pos, uint32_t op, uint32_t slots[2]) {
    if (op == RI_CODE_MOVE) {
        slots[0] = code[pos + 1];
        slots[1] = code[pos + 2];
        return ACC_INT;
    }
    slots[0] = code[pos + 1];
    slots[1] = UINT32_MAX;
    if (op == RI_CODE_I32_REINTERPRET_F32 || op == RI_CODE_I64_REINTERPRET_F64 ||
        op == RI_CODE_F32_REINTERPRET_I32 || op == RI_CODE_F64_REINTERPRET_I64)
        return ACC_NONE;
    switch (op) {
#define RI_X_NUM(name, byte, a, b, r) \
    case RI_CODE_##name: return RI_T_##r == RI_T_F64 ? ACC_F64 : ACC_INT;
    RI_NUMERIC_OPS(RI_X_NUM)
#undef RI_X_NUM
#define RI_X_IMM(name, mirror, ident) case RI_CODE_##name##_I:
    RI_CODE_IMM_OPS(RI_X_IMM)
#undef RI_X_IMM
#define RI_X_PAIR(outer, inner) case RI_CODE_I32_##outer##_##inner: case RI_CODE_I32_##outer##_##inner##_I:
    RI_CODE_PAIR_OPS(RI_X_PAIR)
#undef RI_X_PAIR
#define RI_X_IPAIR(outer, inner) case RI_CODE_I32_##outer##I_##inner##I:
    RI_CODE_IPAIR_OPS(RI_X_IPAIR)
#undef RI_X_IPAIR
#define RI_X_ADDL(name, words, kinds, wasm) case RI_CODE_##name:
    RI_CODE_ADD_LOAD_OPS(RI_X_ADDL)
#undef RI_X_ADDL
    case RI_CODE_I32_LOAD_SX: case RI_CODE_I32_LOAD_SXI: case RI_CODE_I32_LOAD_MSXI:
    case RI_CODE_I32_LOAD: case RI_CODE_I32_LOAD_X: case RI_CODE_I32_LOAD_XI:
    case RI_CODE_I32_LOAD8_U: case RI_CODE_I32_LOAD8_U_X: case RI_CODE_I32_LOAD8_U_XI:
    case RI_CODE_I32_LOAD8_S: case RI_CODE_I32_LOAD8_S_X: case RI_CODE_I32_LOAD8_S_XI:
    case RI_CODE_I32_LOAD16_U: case RI_CODE_I32_LOAD16_U_X: case RI_CODE_I32_LOAD16_U_XI:
    case RI_CODE_I32_LOAD16_S: case RI_CODE_I32_LOAD16_S_X: case RI_CODE_I32_LOAD16_S_XI:
    case RI_CODE_I64_LOAD: case RI_CODE_I64_LOAD_X: case RI_CODE_I64_LOAD_XI:
    case RI_CODE_F32_LOAD: case RI_CODE_F32_LOAD_X: case RI_CODE_F32_LOAD_XI: /* (the bits) */
        return ACC_INT;
    default:
        return ACC_NONE;
    }
}

/* The compiler's opmap holds the operations it emitted, never a variant (the branch
 * and accumulator variants are written into the code words only), so that is the
 * domain on which the old functions were asked; the table is also right on variants. */
static bool is_variant(uint32_t op) { return ri_code_infos[op].base != op; }

static void table_says_what_the_switches_said(void **state) {
    (void)state;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) {
        uint32_t f = ri_code_flags(op);
        assert_int_equal(old_is_i64_op((ri_code_op)op), (f & RI_OPF_I64) != 0);
        assert_int_equal(old_is_call(op), (f & RI_OPF_CALL) != 0);
        if (old_is_call(op)) assert_int_equal(old_call_words(op), ri_code_words(op));
        if (!is_variant(op)) assert_int_equal(old_branch_words(op), ri_code_branch_words(op));
        else assert_int_equal(old_branch_words(ri_code_infos[op].base), ri_code_branch_words(op));
        /* operand words, some of them repeating operand 1's slot */
        static const uint32_t codes[3][13] = {
            {0, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21},
            {0, 10, 11, 12, 10, 14, 15, 16, 17, 18, 19, 20, 21},
            {0, 10, 11, 12, 13, 14, 15, 16, 10, 18, 19, 20, 21},
        };
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t s_old[2], s_new[2];
            int a = is_variant(op) ? ACC_NONE : old_acc_produced(codes[k], 0, op, s_old);
            int b = ri_code_acc_produced(codes[k], 0, op, s_new);
            if (a != b) fail_msg("operation %u: accumulator %d, the table says %d", op, a, b);
            if (a != ACC_NONE && !is_variant(op)) {
                assert_int_equal(s_old[0], s_new[0]);
                assert_int_equal(s_old[1], s_new[1]);
            }
        }
    }
    assert_int_equal(ri_code_flags(0xFFFF), 0);
    assert_int_equal(ri_code_branch_words(0xFFFF), 0);
#define RI_X_NUM(name, byte, a, b, r) \
    assert_int_equal(old_numeric_may_trap(RI_OP_##name), (ri_code_flags(RI_CODE_##name) & RI_OPF_NUM_TRAP) != 0);
    RI_NUMERIC_OPS(RI_X_NUM)
#undef RI_X_NUM
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) /* the flag belongs to numeric ops only */
        if (ri_code_flags(op) & (RI_OPF_NUM_TRAP | RI_OPF_I64)) assert_true(op >= RI_CODE_I32_EQZ);
}

/* ---- the table's own consistency ---- */

static void table_is_consistent(void **state) {
    (void)state;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) {
        const ri_code_info *in = &ri_code_infos[op];
        bool variable = op == RI_CODE_ENTRY || op == RI_CODE_BR_TABLE || op == RI_CODE_BR_TABLE_G ||
                        op == RI_CODE_BR_TABLE_BU;
        if (variable != (in->words == 0)) fail_msg("operation %u: size %u", op, in->words);
        assert_true(in->base < RI_CODE_OP_COUNT);
        const ri_code_info *base = &ri_code_infos[in->base];
        assert_int_equal(base->base, in->base); /* a variant's base is no variant */
        assert_int_equal(base->words, in->words);
        if (in->flags & RI_OPF_BRANCH) { /* four variants in a row, the offset the last word */
            uint32_t first = in->base;
            assert_true(op >= first && op <= first + RI_BRANCH_BU);
            assert_int_equal(ri_code_infos[first + RI_BRANCH_BU].base, first);
            assert_true(in->words >= 2);
        }
        uint32_t acc = in->flags & (RI_OPF_ACC_INT | RI_OPF_ACC_F64 | RI_OPF_ACC_MOVE);
        assert_true((acc & (acc - 1)) == 0); /* at most one accumulator class */
        if (acc) assert_true(in->words >= 2);
    }
    /* accumulator variants: the operand positions they read lie inside the instruction */
#define RI_X_ACC(variant, of, words, mask, cls) \
    assert_int_equal(ri_code_infos[RI_CODE_##variant].base, RI_CODE_##of); \
    assert_true((mask) < (1u << (words)) && ((mask) & 1) == 0);
    RI_CODE_ACC_OPS(RI_X_ACC)
#undef RI_X_ACC
}

/* The columns added for stop points, calls, identities, related forms and names. */
static void table_columns_are_consistent(void **state) {
    (void)state;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) {
        const ri_code_info *in = &ri_code_infos[op];
        assert_non_null(ri_code_names[op]); /* the names cover the enum */
        for (uint32_t k = 0; k < op && k < 8; k++) assert_string_not_equal(ri_code_names[op], ri_code_names[op - 1 - k]);
        /* a call, and only a call, has a call kind and the CALL stop point */
        assert_int_equal((in->flags & RI_OPF_CALL) != 0, in->call != RI_CALLK_NONE);
        if (in->call) assert_int_equal(in->point, RI_STOP_CALL);
        if (in->flags & RI_OPF_TRAP2) assert_true(in->point == RI_STOP_TRAP && in->words > 4);
        if (in->ident) assert_int_equal(ri_code_form((ri_code_op)(op - 0), RI_REL_IMM), RI_CODE_OP_COUNT);
        /* variants carry no stop point, call or identity of their own: they are their base's */
        if (in->base != op) assert_true(in->point == 0 && in->call == 0 && in->ident == 0);
        ri_code_op imm = ri_code_form((ri_code_op)op, RI_REL_IMM);
        if (imm != RI_CODE_OP_COUNT) assert_true(ri_code_words(imm) == 4 && ri_code_words(op) == 4);
        ri_code_op mirror = ri_code_form((ri_code_op)op, RI_REL_MIRROR);
        if (mirror != RI_CODE_OP_COUNT) assert_int_equal(ri_code_form(mirror, RI_REL_MIRROR), op); /* an involution */
        ri_code_op x = ri_code_form((ri_code_op)op, RI_REL_ADDR);
        if (x != RI_CODE_OP_COUNT) assert_true(ri_code_words(x) == 5 && ri_code_words(x + 1) == 5);
        ri_code_op store2 = ri_code_form((ri_code_op)op, RI_REL_STORE2);
        if (store2 != RI_CODE_OP_COUNT) assert_true(ri_code_flags(store2) & RI_OPF_TRAP2);
    }
    assert_string_equal(ri_code_names[RI_CODE_I32_ADD_I], "I32_ADD_I");
    assert_string_equal(ri_code_names[RI_CODE_OP_COUNT - 1], "V128_LOAD64_ZERO");
    assert_int_equal(ri_code_form(RI_CODE_F32_GT, RI_REL_FCMP), RI_CODE_F32_LT);
    assert_int_equal(ri_code_form(RI_CODE_F64_LE, RI_REL_FCMP), RI_CODE_F64_LE);
    assert_int_equal(ri_code_infos[RI_CODE_I32_MUL_I].ident, RI_IDENT_ONE);
    assert_int_equal(ri_code_call_kind(RI_CODE_CALL_INDIRECT), RI_CALLK_INDIRECT);
    assert_int_equal(ri_code_stop(RI_CODE_I32_DIV_S), RI_STOP_TRAP);
    assert_int_equal(ri_code_stop(RI_CODE_I32_ADD), RI_STOP_NONE);
}

/* The operation whose handler word is w (RI_CODE_OP_COUNT if none). */
static uint32_t op_of(uint32_t w) {
    const int32_t *table = ri_interp_dispatch_table();
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++)
        if (table[op] == (int32_t)w) return op;
    return RI_CODE_OP_COUNT;
}

static uint32_t walk_function(const ri_code *code, uint32_t *seen) {
    uint32_t pos = 0, n = 0;
    while (pos < code->nwords) {
        uint32_t op = op_of(code->words[pos]);
        if (op == RI_CODE_OP_COUNT) fail_msg("function %u: no operation at %u", code->func_index, pos);
        uint32_t words = ri_code_words(op);
        if (op == RI_CODE_ENTRY) words = 5 + 2 * code->words[pos + 4];
        else if (words == 0) words = 4 + code->words[pos + 2]; /* br_table: index, count, count + 1 offsets */
        if (ri_code_flags(op) & RI_OPF_CALL) {
            assert_true(pos + words < code->nwords);
            assert_int_equal(op_of(code->words[pos + words]), RI_CODE_GAS);
        }
        seen[op] = 1;
        pos += words;
        n++;
    }
    assert_int_equal(pos, code->nwords); /* the sizes walk the code exactly */
    return n;
}

/* Every stop point is at an instruction's start or 3 words into one (a second trap). */
static void check_points(const ri_code *code) {
    uint8_t *start = calloc(code->nwords + 1, 1);
    assert_non_null(start);
    for (uint32_t pos = 0; pos < code->nwords;) {
        start[pos] = 1;
        uint32_t op = op_of(code->words[pos]);
        uint32_t words = ri_code_words(op);
        if (op == RI_CODE_ENTRY) words = 5 + 2 * code->words[pos + 4];
        else if (words == 0) words = 4 + code->words[pos + 2];
        pos += words;
    }
    for (uint32_t i = 0; i < code->npoints; i++) {
        uint32_t p = code->points[i].pos;
        assert_true(p < code->nwords);
        if (!start[p]) assert_true(p >= 3 && start[p - 3]);
    }
    free(start);
}

static void compiled_code_walks_by_the_table(void **state) {
    (void)state;
    const char *dir = getenv("RI_WAT_DIR");
    assert_non_null(dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    uint32_t *seen = calloc(RI_CODE_OP_COUNT, sizeof *seen);
    assert_non_null(seen);
    uint32_t modules = 0, instrs = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".wasm") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *bytes = malloc(size > 0 ? (size_t)size : 1);
        assert_non_null(bytes);
        size_t got = fread(bytes, 1, (size_t)(size > 0 ? size : 0), f);
        fclose(f);
        for (int unmetered = 0; unmetered < 2; unmetered++) {
            ri_module_config mcfg;
            memset(&mcfg, 0, sizeof mcfg);
            mcfg.unmetered = unmetered;
            ri_error err;
            ri_module *m = ri_module_load(bytes, got, &mcfg, &err);
            if (!m) continue; /* fixtures that are meant not to load */
            for (uint32_t i = 0; i < m->nbodies; i++) {
                instrs += walk_function(m->codes[i], seen);
                check_points(m->codes[i]);
            }
            ri_module_free(m);
            modules++;
        }
        free(bytes);
    }
    closedir(d);
    uint32_t distinct = 0;
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) distinct += seen[op];
    print_message("%u modules, %u instructions, %u of %u operations\n", modules, instrs, distinct,
                  (unsigned)RI_CODE_OP_COUNT);
    assert_true(modules > 10);
    free(seen);
}

/* The fusion rules (fuse_rules.c) are well formed: each lists exactly its fused operation's
 * operand words, reads only words of the instructions it absorbs, puts its stop points
 * inside the fused instruction, and pushes a result from a word that is one. */
static void fusion_rules_are_well_formed(void **state) {
    (void)state;
    assert_true(ri_compile_fuse_rule_count() > 250);
    assert_int_equal(ri_compile_fuse_rules_check(), UINT32_MAX);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_says_what_the_switches_said),
        cmocka_unit_test(table_is_consistent),
        cmocka_unit_test(table_columns_are_consistent),
        cmocka_unit_test(compiled_code_walks_by_the_table),
        cmocka_unit_test(fusion_rules_are_well_formed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
