/* The benchmark programs' one file reader. */
#ifndef RI_BENCH_FILE_H
#define RI_BENCH_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file at path (malloc'd, its size in *len), or NULL if it cannot be read or is
 * empty. */
static inline uint8_t *bench_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = b ? (size_t)n : 0;
    return b;
}

#endif
