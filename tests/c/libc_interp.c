/* A small expression interpreter: builds random expression trees (recursion), evaluates
 * them through a table of operator functions (calls through pointers), sorts the results
 * with qsort and looks them up again with bsearch. No imports: the checksum is returned. */
#include <stdint.h>
#include <stdlib.h>

typedef struct node {
    int op; /* -1: a leaf */
    int32_t value;
    struct node *l, *r;
} node;

typedef int32_t (*op_fn)(int32_t, int32_t);
static int32_t op_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t op_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static int32_t op_mul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
static int32_t op_xor(int32_t a, int32_t b) { return a ^ b; }
static int32_t op_div(int32_t a, int32_t b) { return b == 0 || (a == INT32_MIN && b == -1) ? a : a / b; }
static const op_fn ops[] = {op_add, op_sub, op_mul, op_xor, op_div};

static uint32_t seed;
static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; return seed >> 9; }

static node *build(int depth) {
    node *n = malloc(sizeof *n);
    if (!n) abort();
    if (depth == 0 || rnd() % 4 == 0) {
        n->op = -1;
        n->value = (int32_t)(rnd() % 100) - 50;
        n->l = n->r = NULL;
    } else {
        n->op = (int)(rnd() % (sizeof ops / sizeof ops[0]));
        n->l = build(depth - 1);
        n->r = build(depth - 1);
    }
    return n;
}

static int32_t eval(const node *n) {
    if (n->op < 0) return n->value;
    return ops[n->op](eval(n->l), eval(n->r));
}

static void release(node *n) {
    if (!n) return;
    release(n->l);
    release(n->r);
    free(n);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

__attribute__((export_name("run"))) uint32_t run(int32_t count, int32_t depth) {
    seed = (uint32_t)count * 7919u + (uint32_t)depth;
    int32_t *vals = malloc((size_t)count * sizeof *vals);
    if (!vals) return 0;
    for (int32_t i = 0; i < count; i++) {
        node *t = build(depth);
        vals[i] = eval(t);
        release(t);
    }
    qsort(vals, (size_t)count, sizeof *vals, cmp_i32);
    uint32_t h = 2166136261u;
    for (int32_t i = 0; i < count; i++) {
        const int32_t *hit = bsearch(&vals[(i * 7) % count], vals, (size_t)count, sizeof *vals, cmp_i32);
        h = (h ^ (uint32_t)(hit ? *hit : -1)) * 16777619u;
    }
    free(vals);
    return h;
}
