/*
 * The language tests' interpreters: the files scripts/fetch-interpreters.sh puts in
 * $RI_INTERPRETERS_DIR. Header-only.
 */
#ifndef INTERPRETER_FILE_H
#define INTERPRETER_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* $RI_INTERPRETERS_DIR/<rel> (default ~/.cache/ri/interpreters), or NULL when it is not there (the tests then skip). */
static inline uint8_t *read_interpreter(const char *rel, size_t *len) {
    const char *dir = getenv("RI_INTERPRETERS_DIR");
    char path[1024];
    const char *home = getenv("HOME");
    if (dir && dir[0]) snprintf(path, sizeof path, "%s/%s", dir, rel);
    else snprintf(path, sizeof path, "%s/.cache/ri/interpreters/%s", home ? home : ".", rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = n > 0 ? malloc((size_t)n) : NULL;
    if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *len = bytes ? (size_t)n : 0;
    return bytes;
}

#endif
