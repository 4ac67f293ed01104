/*
 * JSON text as JavaScript writes it, so that the JSON calling convention hands the
 * module the same bytes the original does (JSON.stringify of the parsed payload):
 * compact; object keys that are array indices first in ascending order, then the
 * others in insertion order; strings escaped as JSON.stringify escapes them; numbers
 * as Number::toString writes them (shortest round-trip digits, "1e+21", "0.000001").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

/* ---- numbers ----------------------------------------------------------------------- */

void sb_js_number(char *buf, size_t cap, double value) {
    if (!buf || cap == 0) return;
    if (isnan(value)) { snprintf(buf, cap, "NaN"); return; }
    if (value == 0) { snprintf(buf, cap, "0"); return; } /* -0 too */
    if (isinf(value)) { snprintf(buf, cap, value < 0 ? "-Infinity" : "Infinity"); return; }
    const char *sign = value < 0 ? "-" : "";
    double magnitude = fabs(value);

    /* The fewest significant digits that read back as the same double. %e rounds
     * correctly, so the first precision that round-trips gives JavaScript's digits. */
    char sci[40];
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(sci, sizeof sci, "%.*e", precision - 1, magnitude);
        if (strtod(sci, NULL) == magnitude) break;
    }
    /* sci is "d[.ddd]e±XX" (the point may be the locale's): collect digits, exponent. */
    char digits[24];
    int k = 0;
    const char *p = sci;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && k < 20) digits[k++] = *p;
    digits[k] = '\0';
    int exponent = *p == 'e' ? atoi(p + 1) : 0;
    while (k > 1 && digits[k - 1] == '0') digits[--k] = '\0'; /* never at the shortest length; kept safe */
    int n = exponent + 1; /* the decimal point sits after n digits */

    /* ECMAScript Number::toString, step by step (k digits, point after n). */
    char out[64];
    size_t at = 0;
#define OUT(c) do { if (at + 1 < sizeof out) out[at++] = (c); } while (0)
    if (k <= n && n <= 21) {
        for (int i = 0; i < k; i++) OUT(digits[i]);
        for (int i = k; i < n; i++) OUT('0');
    } else if (0 < n && n <= 21) {
        for (int i = 0; i < n; i++) OUT(digits[i]);
        OUT('.');
        for (int i = n; i < k; i++) OUT(digits[i]);
    } else if (-6 < n && n <= 0) {
        OUT('0');
        OUT('.');
        for (int i = n; i < 0; i++) OUT('0');
        for (int i = 0; i < k; i++) OUT(digits[i]);
    } else {
        OUT(digits[0]);
        if (k > 1) {
            OUT('.');
            for (int i = 1; i < k; i++) OUT(digits[i]);
        }
        int e = n - 1;
        OUT('e');
        OUT(e < 0 ? '-' : '+');
        char exp_digits[16];
        snprintf(exp_digits, sizeof exp_digits, "%d", abs(e));
        for (const char *d = exp_digits; *d; d++) OUT(*d);
    }
#undef OUT
    out[at] = '\0';
    snprintf(buf, cap, "%s%s", sign, out);
}

/* ---- a growing buffer ------------------------------------------------------------------- */

typedef struct text {
    char *data;
    size_t len, cap;
    bool oom;
} text;

static void put(text *t, const char *s, size_t n) {
    if (t->oom) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + n + 1) {
            if (cap > SIZE_MAX / 2) { t->oom = true; return; }
            cap *= 2;
        }
        char *data = realloc(t->data, cap);
        if (!data) { t->oom = true; return; }
        t->data = data;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

/* ---- values ---------------------------------------------------------------------------- */

static void put_string(text *t, const char *s, size_t len) {
    put(t, "\"", 1);
    size_t run = 0; /* bytes copied as they are */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *escape = NULL;
        char hex[8];
        switch (c) {
        case '"': escape = "\\\""; break;
        case '\\': escape = "\\\\"; break;
        case '\b': escape = "\\b"; break;
        case '\f': escape = "\\f"; break;
        case '\n': escape = "\\n"; break;
        case '\r': escape = "\\r"; break;
        case '\t': escape = "\\t"; break;
        default:
            if (c < 0x20) {
                snprintf(hex, sizeof hex, "\\u%04x", c);
                escape = hex;
            }
        }
        if (escape) {
            put(t, s + i - run, run);
            run = 0;
            puts_(t, escape);
        } else {
            run++;
        }
    }
    put(t, s + len - run, run);
    put(t, "\"", 1);
}

static void put_number(text *t, double value) {
    char buf[40];
    if (!isfinite(value)) {
        puts_(t, "null"); /* JSON.stringify(NaN) */
        return;
    }
    sb_js_number(buf, sizeof buf, value);
    puts_(t, buf);
}

/* An array index as JavaScript orders object keys: a canonical decimal below 2^32 - 1. */
static bool array_index(const char *key, uint32_t *out) {
    size_t len = strlen(key);
    if (len == 0 || len > 10 || (len > 1 && key[0] == '0')) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (key[i] < '0' || key[i] > '9') return false;
        v = v * 10 + (uint64_t)(key[i] - '0');
    }
    if (v >= 0xFFFFFFFFu) return false;
    *out = (uint32_t)v;
    return true;
}

typedef struct index_key {
    uint32_t index;
    const char *key;
} index_key;

static int compare_index_keys(const void *a, const void *b) {
    uint32_t x = ((const index_key *)a)->index, y = ((const index_key *)b)->index;
    return x < y ? -1 : x > y;
}

static void put_value(text *t, const json_t *v, unsigned depth);

static void put_member(text *t, const char *key, const json_t *value, bool *first, unsigned depth) {
    if (!*first) put(t, ",", 1);
    *first = false;
    put_string(t, key, strlen(key));
    put(t, ":", 1);
    put_value(t, value, depth + 1);
}

static void put_object(text *t, const json_t *v, unsigned depth) {
    put(t, "{", 1);
    size_t n = json_object_size(v), nindex = 0;
    index_key *indices = calloc(n ? n : 1, sizeof *indices);
    if (!indices) {
        t->oom = true;
        return;
    }
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)v, key, value) {
        uint32_t index;
        if (array_index(key, &index)) indices[nindex++] = (index_key){index, key};
    }
    qsort(indices, nindex, sizeof *indices, compare_index_keys);
    bool first = true;
    for (size_t i = 0; i < nindex; i++) put_member(t, indices[i].key, json_object_get(v, indices[i].key), &first, depth);
    free(indices);
    json_object_foreach((json_t *)v, key, value) {
        uint32_t index;
        if (!array_index(key, &index)) put_member(t, key, value, &first, depth);
    }
    put(t, "}", 1);
}

static void put_value(text *t, const json_t *v, unsigned depth) {
    if (depth > 10000) { /* jansson's parser nests at most 2048 deep; belt and braces */
        t->oom = true;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: put_object(t, v, depth); return;
    case JSON_ARRAY:
        put(t, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) put(t, ",", 1);
            put_value(t, json_array_get(v, i), depth + 1);
        }
        put(t, "]", 1);
        return;
    case JSON_STRING: put_string(t, json_string_value(v), json_string_length(v)); return;
    case JSON_INTEGER: {
        /* JavaScript reads every number as a double: beyond 2^53 it rounds. */
        json_int_t i = json_integer_value(v);
        if (i >= -9007199254740992LL && i <= 9007199254740992LL) {
            char buf[32];
            snprintf(buf, sizeof buf, "%lld", (long long)i);
            puts_(t, buf);
        } else {
            put_number(t, (double)i);
        }
        return;
    }
    case JSON_REAL: put_number(t, json_real_value(v)); return;
    case JSON_TRUE: puts_(t, "true"); return;
    case JSON_FALSE: puts_(t, "false"); return;
    case JSON_NULL: puts_(t, "null"); return;
    }
}

json_t *sb_js_parse(const char *text, size_t len, json_error_t *error) {
    json_t *value = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, error);
    if (value) return value;
    /* JavaScript reads every number as a double: an integer too big for 64 bits is
     * still a number there. The first error is the one reported. */
    json_error_t again;
    return json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, &again);
}

char *sb_js_stringify(const json_t *value) {
    text t = {0};
    put_value(&t, value, 0);
    if (t.oom || !t.data) {
        free(t.data);
        return NULL;
    }
    return t.data;
}
