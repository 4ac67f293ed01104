/*
 * codedump: one line per module with a hash of the internal code (code.h) the engine
 * compiles from it, metered and unmetered: every function's header, its words (handler
 * words as operation numbers, so that two builds of the interpreter compare) and its stop
 * points. A development tool: two builds of src/engine that must compile the same code
 * (a refactoring of the compiler, a fusion rule moved into a table) print the same lines.
 * codedump.sh builds it against a build directory's libraries.
 *
 *   codedump MODULE.wasm...        (a file that does not load prints "error")
 *   codedump --ops MODULE.wasm...  instead: every operation with the number of times it
 *                                  was emitted in all of them (metered and unmetered)
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
                           c->stack_base, c->frame_slots, c->metered, c->nwords, c->npoints};
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
        for (int unmetered = 0; unmetered < 2; unmetered++) {
            ri_module_config cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.unmetered = unmetered;
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
