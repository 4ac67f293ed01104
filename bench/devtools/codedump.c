/*
 * codedump: one line per module with hashes of the internal code (code.h) the engine
 * compiles from it: metered, unmetered, with every fusion family off, and with each family
 * off alone (ri_module_config.fusions_off, in ri_fusion's order). Each hashes every
 * function's header, its words (handler words as operation numbers, so that two builds of
 * the interpreter compare), its stop points and its exception tables. A development tool: two builds of src/engine that must compile the same code
 * (a refactoring of the compiler, a fusion rule moved into a table) print the same lines.
 * codedump.sh builds it against a build directory's libraries.
 *
 *   codedump MODULE.wasm...        (a file that does not load prints "error")
 *   codedump --ops MODULE.wasm...  instead: every operation with the number of times it
 *                                  was emitted in all of them (in all the configurations)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/code.h"
#include "engine/code_info.h"
#include "engine/module.h"
#include "ri/engine.h"

static uint64_t fnv(uint64_t h, uint32_t w) {
    for (int i = 0; i < 4; i++) h = (h ^ ((w >> (8 * i)) & 0xFF)) * UINT64_C(0x100000001b3);
    return h;
}

/* The operation whose handler word is w, or RI_CODE_OP_COUNT. */
static uint32_t op_of(uint32_t w) {
    const int32_t *d = ri_interp_dispatch_table();
    for (uint32_t k = 0; k < RI_CODE_OP_COUNT; k++)
        if ((uint32_t)d[k] == w) return k;
    return RI_CODE_OP_COUNT;
}

static uint64_t emitted[RI_CODE_OP_COUNT];

static uint64_t hash_module(const ri_module *m, uint64_t h) {
    for (uint32_t b = 0; b < m->nbodies; b++) {
        const ri_code *c = m->codes[b];
        uint32_t head[] = {c->func_index, c->nparams, c->nresults, c->nlocals, c->nconsts,
                           c->stack_base, c->frame_slots, c->metered, c->nwords, c->npoints,
                           c->tail_calls, c->ntries, c->ncatches, c->exn_base, c->nexn};
        for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) h = fnv(h, head[i]);
        for (uint32_t pos = 0; pos < c->nwords;) {
            uint32_t op = op_of(c->words[pos]);
            if (op == RI_CODE_OP_COUNT) return 0; /* not an instruction start: report a broken walk */
            uint32_t n = op == RI_CODE_ENTRY ? 5 + 2 * c->words[pos + 4]
                       : op >= RI_CODE_BR_TABLE && op <= RI_CODE_BR_TABLE_BU ? c->words[pos + 2] + 4
                                                                            : ri_code_words(op);
            if (n == 0 || pos + n > c->nwords) return 0;
            h = fnv(h, op);
            emitted[op]++;
            for (uint32_t k = 1; k < n; k++) h = fnv(h, c->words[pos + k]);
            pos += n;
        }
        for (uint32_t i = 0; i < c->npoints; i++) {
            h = fnv(h, c->points[i].pos);
            h = fnv(h, c->points[i].wasm_offset);
            h = fnv(h, c->points[i].height);
            h = fnv(h, c->points[i].kind);
        }
        for (uint32_t i = 0; i < c->ntries; i++) {
            const ri_code_try *t = &c->tries[i];
            uint32_t w[] = {t->start, t->end, t->parent, t->delegate, t->ncatches};
            for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) h = fnv(h, w[k]);
        }
        for (uint32_t i = 0; i < c->ncatches; i++) {
            const ri_code_catch *t = &c->catches[i];
            uint32_t w[] = {t->try_index, t->tag, t->target, t->end, t->base, t->exn_slot, t->table};
            for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) h = fnv(h, w[k]);
        }
    }
    return h;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: codedump MODULE.wasm...\n");
        return 2;
    }
    bool ops = strcmp(argv[1], "--ops") == 0;
    FILE *out = ops ? fopen("/dev/null", "w") : stdout;
    if (!out) return 1;
    for (int a = ops ? 2 : 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (!f) { perror(argv[a]); return 1; }
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
        size_t n = buf ? fread(buf, 1, (size_t)len, f) : 0;
        fclose(f);
        fprintf(out, "%s", argv[a]);
        /* metered, unmetered, all fusion families off, then each family off alone */
        for (uint32_t config = 0; config < 3 || 1u << (config - 3) < RI_FUSE_ALL; config++) {
            ri_module_config cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.unmetered = config == 1;
            cfg.fusions_off = config == 2 ? RI_FUSE_ALL : config > 2 ? 1u << (config - 3) : 0;
            ri_error err;
            ri_module *m = buf ? ri_module_load(buf, n, &cfg, &err) : NULL;
            if (m) fprintf(out, " %016llx", (unsigned long long)hash_module(m, UINT64_C(0xcbf29ce484222325)));
            else fprintf(out, " error");
            ri_module_free(m);
        }
        fprintf(out, "\n");
        free(buf);
    }
    if (ops)
        for (uint32_t k = 0; k < RI_CODE_OP_COUNT; k++) printf("%s %llu\n", ri_code_names[k], (unsigned long long)emitted[k]);
    return 0;
}
