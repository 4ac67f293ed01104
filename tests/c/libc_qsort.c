/* Sorts pseudo-random numbers with the libc's qsort, up and down (two comparators, each
 * called through call_indirect from several call sites of qsort), and returns a hash of
 * both orders. No imports: -nostartfiles, the entry exported as "run". */
#include <stdlib.h>
#include <stdint.h>
static uint32_t rng = 12345;
static uint32_t next(void) { rng = rng * 1103515245u + 12345u; return rng >> 8; }
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}
static int cmp_desc(const void *a, const void *b) { return cmp_u32(b, a); }
__attribute__((export_name("run"))) uint32_t run(int32_t n) {
    rng = 12345;
    uint32_t *v = malloc((size_t)n * sizeof *v);
    if (!v) return 0;
    for (int i = 0; i < n; i++) v[i] = next() % 1000;
    qsort(v, (size_t)n, sizeof *v, cmp_u32);
    uint32_t h = 0;
    for (int i = 0; i < n; i++) h = h * 31 + v[i];
    qsort(v, (size_t)n, sizeof *v, cmp_desc);
    for (int i = 0; i < n; i++) h = h * 31 + v[i];
    free(v);
    return h;
}
