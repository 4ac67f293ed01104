/*
 * The language tests' interpreters: the files scripts/fetch-interpreters.sh installs, where
 * ri_interpreter_path finds them. Header-only.
 */
#ifndef INTERPRETER_FILE_H
#define INTERPRETER_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ri/lang.h"

/* lang's interpreter's bytes, or NULL when the file is not there (the tests then skip). */
static inline uint8_t *read_interpreter(ri_language lang, size_t *len) {
    char path[4096];
    *len = 0;
    if (!ri_interpreter_path(lang, NULL, path, sizeof path)) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    uint8_t *bytes = n > 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n) : NULL;
    if (bytes && fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        bytes = NULL;
    }
    fclose(f);
    *len = bytes ? (size_t)n : 0;
    return bytes;
}

#endif
