/*
 * code_hash: a developer tool for changing the compiler safely (docs/ARCHITECTURE.md). For
 * each .wasm file named on the command line (or one per line on stdin with "-"), compiles
 * the module with the default configuration, unmetered, with every fusion family off, and
 * with each family off alone, and prints one line: the file, then one FNV-1a hash per
 * configuration over all functions' code words, stop points, exception tables and frame
 * layout. A refactoring of the compiler that must not change the code keeps the output
 * byte-identical. Handler words are hashed as their operation's number, so the hashes do
 * not depend on where the interpreter's handlers are. Not installed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/code.h"
#include "engine/module.h"
#include "ri/engine.h"

/* The interpreter's handler offsets, sorted, with their operations (for canonical). */
typedef struct handler {
    uint32_t word, op;
} handler;
static handler handlers[RI_CODE_OP_COUNT];

static int by_word(const void *a, const void *b) {
    uint32_t x = ((const handler *)a)->word, y = ((const handler *)b)->word;
    return x < y ? -1 : x > y;
}

static void index_handlers(void) {
    const int32_t *d = ri_interp_dispatch_table();
    for (uint32_t k = 0; k < RI_CODE_OP_COUNT; k++) handlers[k] = (handler){(uint32_t)d[k], k};
    qsort(handlers, RI_CODE_OP_COUNT, sizeof handlers[0], by_word);
}

typedef struct hasher {
    uint64_t h;
} hasher;

static void mix(hasher *s, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        s->h ^= (v >> (8 * i)) & 0xFFu;
        s->h *= UINT64_C(0x100000001b3);
    }
}

/* A handler word as its operation (with a marker bit); any other word as itself. */
static uint32_t canonical(uint32_t word) {
    handler key = {word, 0};
    const handler *h = bsearch(&key, handlers, RI_CODE_OP_COUNT, sizeof handlers[0], by_word);
    return h ? UINT32_C(0x80000000) | h->op : word;
}

static void hash_code(hasher *s, const ri_code *code) {
    const uint32_t head[] = {code->func_index, code->nparams,  code->nresults, code->nlocals,
                             code->nconsts,    code->stack_base, code->frame_slots, code->metered,
                             code->tail_calls, code->nwords,   code->npoints,  code->ntries,
                             code->ncatches,   code->exn_base, code->nexn};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) mix(s, head[i]);
    for (uint32_t i = 0; i < code->nwords; i++) mix(s, canonical(code->words[i]));
    for (uint32_t i = 0; i < code->npoints; i++) {
        const ri_code_point *p = &code->points[i];
        mix(s, p->pos), mix(s, p->wasm_offset), mix(s, p->height), mix(s, p->kind);
    }
    for (uint32_t i = 0; i < code->ntries; i++) {
        const ri_code_try *t = &code->tries[i];
        mix(s, t->start), mix(s, t->end), mix(s, t->parent), mix(s, t->delegate), mix(s, t->ncatches);
    }
    for (uint32_t i = 0; i < code->ncatches; i++) {
        const ri_code_catch *k = &code->catches[i];
        mix(s, k->try_index), mix(s, k->tag), mix(s, k->target), mix(s, k->end);
        mix(s, k->base), mix(s, k->exn_slot), mix(s, k->table);
    }
}

/* Prints the hash of bytes compiled with cfg, or "error:CODE" if the module does not load. */
static void print_hash(const uint8_t *bytes, size_t len, const ri_module_config *cfg) {
    ri_error err;
    memset(&err, 0, sizeof err);
    ri_module *m = ri_module_load(bytes, len, cfg, &err);
    if (!m) {
        printf(" error:%d", (int)err.code);
        return;
    }
    hasher s = {UINT64_C(0xcbf29ce484222325)};
    mix(&s, m->nbodies);
    for (uint32_t i = 0; i < m->nbodies; i++) hash_code(&s, m->codes[i]);
    printf(" %016llx", (unsigned long long)s.h);
    ri_module_free(m);
}

static int hash_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "code_hash: cannot open %s\n", path); return 1; }
    size_t cap = 1 << 16, len = 0;
    uint8_t *bytes = malloc(cap);
    size_t n;
    while (bytes && (n = fread(bytes + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            uint8_t *grown = realloc(bytes, cap * 2);
            if (!grown) { free(bytes); bytes = NULL; break; }
            bytes = grown, cap *= 2;
        }
    }
    fclose(f);
    if (!bytes) { fprintf(stderr, "code_hash: out of memory reading %s\n", path); return 1; }
    printf("%s", path);
    ri_module_config cfg;
    memset(&cfg, 0, sizeof cfg);
    print_hash(bytes, len, &cfg);                  /* the default */
    cfg.unmetered = true;
    print_hash(bytes, len, &cfg);                  /* unmetered */
    cfg.unmetered = false;
    cfg.fusions_off = RI_FUSE_ALL;
    print_hash(bytes, len, &cfg);                  /* no fusion */
    for (uint32_t f = 1; f < RI_FUSE_ALL; f <<= 1) { /* each family off alone */
        cfg.fusions_off = f;
        print_hash(bytes, len, &cfg);
    }
    printf("\n");
    free(bytes);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: code_hash FILE.wasm... (or - to read the file names from stdin)\n");
        return 2;
    }
    index_handlers();
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-") != 0) { rc |= hash_file(argv[i]); continue; }
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (*line) rc |= hash_file(line);
        }
    }
    return rc;
}
