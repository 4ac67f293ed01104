/*
 * A small streaming JSON writer for ri's machine-readable output: keys come out in the
 * order the code writes them (a stable order is part of the output's contract), numbers
 * exactly as given (64-bit integers stay exact, durations get a fixed 3 decimals), and
 * every string is valid JSON whatever bytes it holds.
 */
#ifndef RI_CLI_JSONW_H
#define RI_CLI_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RI_JSONW_MAX_DEPTH 32

typedef struct ri_jsonw {
    FILE *out;
    int depth;
    bool has_items[RI_JSONW_MAX_DEPTH]; /* per open container: something written already */
    char closer[RI_JSONW_MAX_DEPTH];    /* per open container: '}' or ']' */
    bool flat[RI_JSONW_MAX_DEPTH];      /* per open container: on one line */
    bool after_key;                     /* the next value completes a "key": pair */
} ri_jsonw;

void ri_jsonw_init(ri_jsonw *w, FILE *out);
/* Ends the document with a newline. */
void ri_jsonw_finish(ri_jsonw *w);

void ri_jsonw_object(ri_jsonw *w);
void ri_jsonw_array(ri_jsonw *w);
/* An array written on one line ("[1, 2]"), for short lists of scalars. */
void ri_jsonw_array_flat(ri_jsonw *w);
void ri_jsonw_end(ri_jsonw *w);     /* closes the innermost object or array */

void ri_jsonw_key(ri_jsonw *w, const char *key);
void ri_jsonw_str(ri_jsonw *w, const char *s);       /* NULL writes null */
void ri_jsonw_strn(ri_jsonw *w, const char *s, size_t n);
void ri_jsonw_u64(ri_jsonw *w, uint64_t v);
void ri_jsonw_i64(ri_jsonw *w, int64_t v);
void ri_jsonw_ms(ri_jsonw *w, double ms);            /* 3 decimals; null if not finite */
void ri_jsonw_bool(ri_jsonw *w, bool v);
void ri_jsonw_null(ri_jsonw *w);
/* Inserts JSON text as the value. The caller vouches that it is valid JSON. */
void ri_jsonw_raw(ri_jsonw *w, const char *json);

#endif
