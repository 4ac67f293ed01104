/*
 * Operation coverage (opcov.h). The counters are process-wide mutable state, which the
 * library otherwise has none of (invariant 7): they exist only in the coverage build, a
 * test instrument. At exit, when RI_OP_COVERAGE_DIR names a directory, the process writes
 * DIR/opcov.<pid>: one line "NAME COUNT" per operation, in the enum's order.
 */
#include "opcov.h"

#ifdef RI_OP_COVERAGE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "code.h"
#include "code_info.h"

static uint64_t counts[RI_CODE_OP_COUNT];
static uint16_t *op_at;   /* handler offset - lowest -> 1 + operation */
static int32_t lowest, highest;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build_map(void) {
    const int32_t *d = ri_interp_dispatch_table();
    lowest = highest = d[0];
    for (uint32_t k = 0; k < RI_CODE_OP_COUNT; k++) {
        if (d[k] < lowest) lowest = d[k];
        if (d[k] > highest) highest = d[k];
    }
    op_at = calloc((size_t)((int64_t)highest - lowest + 1), sizeof *op_at);
    if (!op_at) abort();
    for (uint32_t k = RI_CODE_OP_COUNT; k-- > 0;) op_at[d[k] - lowest] = (uint16_t)(k + 1);
}

void ri_opcov_hit(uint32_t word) {
    pthread_once(&once, build_map);
    int32_t w = (int32_t)word;
    if (w < lowest || w > highest || !op_at[w - lowest]) return; /* EXIT and the like: no operation */
    __atomic_fetch_add(&counts[op_at[w - lowest] - 1], 1, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void write_counts(void) {
    const char *dir = getenv("RI_OP_COVERAGE_DIR");
    if (!dir || !*dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/opcov.%ld", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return;
    for (uint32_t k = 0; k < RI_CODE_OP_COUNT; k++)
        fprintf(f, "%s %llu\n", ri_code_names[k], (unsigned long long)__atomic_load_n(&counts[k], __ATOMIC_RELAXED));
    fclose(f);
}
#else
typedef int ri_opcov_unused; /* ISO C: a translation unit declares something */
#endif
