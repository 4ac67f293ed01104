/*
 * codeprof: lists the engine's internal code (code.h) of every function of a module and,
 * with a function name, runs it and shows how often each instruction was dispatched.
 * A development tool for the interpreter's speed work, not part of the build:
 * codeprof.sh compiles it against a copy of src/engine whose DISPATCH() calls
 * ri_prof_hit(pc) (defined here). See bench/README.md, "Profiling the internal code".
 *
 *   codeprof MODULE.wasm [-u] [FUNC]
 *       -u: compile unmetered. FUNC () -> i32 is called once; then only the executed
 *       instructions are listed, with their counts, and a histogram by operation.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/code.h"
#include "engine/module.h"
#include "ri/engine.h"

/* ---- dispatch counts by code address (open addressing) ---- */
#define PROF_N (1u << 20)
static const uint32_t *prof_key[PROF_N];
static uint64_t prof_cnt[PROF_N];

static uint32_t prof_slot(const uint32_t *pc) {
    uint32_t h = (uint32_t)(((uintptr_t)pc >> 2) * 2654435761u) & (PROF_N - 1);
    while (prof_key[h] && prof_key[h] != pc) h = (h + 1) & (PROF_N - 1);
    return h;
}
void ri_prof_hit(const uint32_t *pc);
void ri_prof_hit(const uint32_t *pc) {
    uint32_t h = prof_slot(pc);
    prof_key[h] = pc;
    prof_cnt[h]++;
}
static uint64_t prof_get(const uint32_t *pc) {
    uint32_t h = prof_slot(pc);
    return prof_key[h] ? prof_cnt[h] : 0;
}

/* ---- names and sizes of the operations, from code.h's lists ---- */
static const char *names[RI_CODE_OP_COUNT];
static int sizes[RI_CODE_OP_COUNT];
static int nops;

static void op(const char *name, int words) {
    if (nops < RI_CODE_OP_COUNT) { names[nops] = name; sizes[nops] = words; }
    nops++;
}
#define B4(s, w) op(s, w); op(s "_FG", w); op(s "_BG", w); op(s "_BU", w);

static void init_ops(void) {
#define RI_X_CTRL(name, words, flags, point, kinds, wasm) op(#name, words);
#define RI_X_BR(name, words) B4(#name, words)
#define RI_X_CMPBR(cmp, neg) B4("BR_IF_" #cmp, 4) B4("BR_IF_" #cmp "_I", 4)
#define RI_X_FCMPBR(cmp, mirror) B4("BR_IF_" #cmp, 4) B4("BR_IFNOT_" #cmp, 4)
#define RI_X_IMM(name, mirror, ident) op(#name "_I", 4);
#define RI_X_ADDR(name) op(#name "_X", 5); op(#name "_XI", 5);
#define RI_X_ADDBR(cmp) B4("ADDBR_" #cmp "_SS", 6) B4("ADDBR_" #cmp "_SI", 6) B4("ADDBR_" #cmp "_IS", 6) \
                        B4("ADDBR_" #cmp "_II", 6)
#define RI_X_I2ADDBR(cmp) B4("I2ADDBR_" #cmp "_SS", 12) B4("I2ADDBR_" #cmp "_SI", 12) B4("I2ADDBR_" #cmp "_IS", 12) \
                          B4("I2ADDBR_" #cmp "_II", 12)
#define RI_X_MADDBR(cmp) B4("MADDBR_" #cmp "_SS", 8) B4("MADDBR_" #cmp "_SI", 8) B4("MADDBR_" #cmp "_IS", 8) \
                         B4("MADDBR_" #cmp "_II", 8)
#define RI_X_PAIR(o, i) op("I32_" #o "_" #i, 5); op("I32_" #o "_" #i "_I", 5);
#define RI_X_ADDL(name, words, kinds, wasm) op(#name, words);
#define RI_X_LOADBR(load) B4(#load "_BR_EQ_S", 7) B4(#load "_BR_NE_S", 7) B4(#load "_BR_EQ_I", 7) \
                          B4(#load "_BR_NE_I", 7)
#define RI_X_STORE2(name) op(#name "_2", 7);
#define RI_X_ACC(variant, base, words, mask, cls) op(#variant, words);
#define RI_X_IPAIR(o, i) op("I32_" #o "I_" #i "I", 5);
#define RI_X_MEM(name, byte, t, n, st) op(#name, 4);
#define RI_X_NUM(name, byte, a, b, r) op(#name, RI_T_##b ? 4 : 3);
#define RI_X_SAT(name, byte, a, b, r) op(#name, 3);
    RI_CODE_EVERY_OP(RI_X_SAT)
}

/* The size of the instruction at w (op -1: unknown handler word, 1). */
static uint32_t instr_words(int o, const uint32_t *w) {
    if (o < 0) return 1;
    if (o == RI_CODE_ENTRY) return 5 + 2 * w[4];
    if (o == RI_CODE_BR_TABLE || o == RI_CODE_BR_TABLE_G || o == RI_CODE_BR_TABLE_BU) return w[2] + 4;
    return (uint32_t)sizes[o];
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: codeprof MODULE.wasm [-u] [FUNC]\n");
        return 2;
    }
    init_ops();
    if (nops != RI_CODE_OP_COUNT) {
        fprintf(stderr, "codeprof: %d operation names for %d operations: update init_ops\n", nops, RI_CODE_OP_COUNT);
        return 1;
    }
    bool unmetered = argc > 2 && strcmp(argv[2], "-u") == 0;
    const char *func = argc > (unmetered ? 3 : 2) ? argv[unmetered ? 3 : 2] : NULL;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    static uint8_t buf[64u << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ri_module_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.unmetered = unmetered;
    ri_error err;
    ri_module *m = ri_module_load(buf, n, &cfg, &err);
    if (!m) { fprintf(stderr, "load: %s\n", err.message); return 1; }
    if (func) {
        ri_store *st = ri_store_new(NULL);
        if (!unmetered) ri_store_set_gas(st, UINT64_C(1000000000000000));
        ri_instance *inst = st ? ri_instantiate(st, m, NULL, 0, &err) : NULL;
        ri_extern ex;
        if (!inst) { fprintf(stderr, "instantiate: %s\n", st ? err.message : "out of memory"); return 1; }
        if (!ri_instance_export(inst, func, &ex) || ex.kind != RI_EXTERN_FUNC) { fprintf(stderr, "no function %s\n", func); return 1; }
        ri_val res[1];
        if (ri_func_call(st, ex.of.func, NULL, 0, res, 1, &err) != RI_OK) { fprintf(stderr, "call: %s\n", err.message); return 1; }
        printf("result %u\n", (unsigned)res[0].of.i32);
    }
    const int32_t *d = ri_interp_dispatch_table();
    uint64_t total = 0, by_op[RI_CODE_OP_COUNT] = {0};
    for (uint32_t b = 0; b < m->nbodies; b++) {
        const ri_code *c = m->codes[b];
        printf("== function %u: params %u, locals %u, constants %u, stack base %u, frame %u slots, %u words\n",
               c->func_index, c->nparams, c->nlocals, c->nconsts, c->stack_base, c->frame_slots, c->nwords);
        for (uint32_t pos = 0; pos < c->nwords;) {
            int o = -1;
            for (int k = 0; k < RI_CODE_OP_COUNT; k++)
                if ((uint32_t)d[k] == c->words[pos]) { o = k; break; }
            uint32_t len = instr_words(o, &c->words[pos]);
            uint64_t cnt = prof_get(&c->words[pos]);
            total += cnt;
            if (o >= 0) by_op[o] += cnt;
            if (!func || cnt) {
                if (func) printf("%12llu ", (unsigned long long)cnt);
                printf("%5u  %-24s", pos, o >= 0 ? names[o] : "?");
                for (uint32_t k = 1; k < len && pos + k < c->nwords; k++) printf(" %d", (int32_t)c->words[pos + k]);
                printf("\n");
            }
            pos += len;
        }
    }
    if (func) {
        printf("dispatches: %llu\n", (unsigned long long)total);
        for (int k = 0; k < RI_CODE_OP_COUNT; k++)
            if (by_op[k] * 200 > total) /* at least 0.5% */
                printf("  %-26s %12llu %5.1f%%\n", names[k], (unsigned long long)by_op[k], 100.0 * (double)by_op[k] / (double)total);
    }
    ri_module_free(m);
    return 0;
}
