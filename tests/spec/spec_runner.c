/*
 * ri-spec: runs the WebAssembly spec testsuite against the public engine API.
 *
 *   ri-spec [--no-canonicalize] [--unmetered] [--verbose] [--timeout SEC] FILE.wast...
 *   ri-spec [options] --all [--testsuite DIR]
 *
 * Each .wast script is converted with wast2json into a per-process temporary
 * directory, and its commands run in order against one store.
 *
 * Process model: the parent converts and parses each script; a forked child executes
 * the commands and reports one line per command through a pipe. A crash or a hang
 * (per-command alarm) in the engine therefore costs one command, not the run: the
 * parent counts that command as failed and starts a new child, which replays the
 * earlier commands silently to rebuild the same store state and carries on after it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ri/engine.h"

#ifndef RI_SHARED_DIR
#define RI_SHARED_DIR "../shared"
#endif
#ifndef RI_WAST2JSON
#define RI_WAST2JSON "wast2json"
#endif

extern char **environ;

/* A child that crashes this often in one script is not worth restarting again. */
#define MAX_CRASHES_PER_SCRIPT 20
#define DEFAULT_TIMEOUT_SECONDS 120u
#define MESSAGE_MAX 1024
#define TAG_MAX 48

/* ---- small utilities ------------------------------------------------------------ */

typedef struct strbuf {
    char *data;
    size_t len, cap;
} strbuf;

static void strbuf_vprintf(strbuf *b, const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) return;
    size_t need = b->len + (size_t)n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) return; /* details are best effort; counts are kept elsewhere */
        b->data = grown;
        b->cap = cap;
    }
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

static void strbuf_printf(strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void strbuf_printf(strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

static void strbuf_free(strbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Growable arrays: returns items with room for one more element (reallocated when full,
 * capacity doubled), or NULL when out of memory, leaving items as it was. */
static void *grow(void *items, size_t *cap, size_t count, size_t elem_size) {
    if (count < *cap) return items;
    size_t new_cap = *cap ? *cap * 2 : 16;
    void *grown = realloc(items, new_cap * elem_size);
    if (grown) *cap = new_cap;
    return grown;
}

static const char *json_str(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static long json_line(const json_t *cmd) {
    const json_t *v = json_object_get(cmd, "line");
    return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

/* Strict unsigned decimal; wast2json writes every number that way. A leading '-' is
 * accepted too (two's complement), in case another converter is used. */
static bool parse_u64(const char *s, uint64_t *out) {
    if (!s) return false;
    bool negative = false;
    if (*s == '-') {
        negative = true;
        s++;
    }
    if (!isdigit((unsigned char)*s)) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s)) return false;
        unsigned digit = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - digit) / 10) return false;
        v = v * 10 + digit;
    }
    *out = negative ? (uint64_t)0 - v : v;
    return true;
}

static int32_t i32_from_bits(uint32_t bits) {
    int32_t v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static int64_t i64_from_bits(uint64_t bits) {
    int64_t v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static float f32_from_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static double f64_from_bits(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static uint32_t f32_bits(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

static uint64_t f64_bits(double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

/* snprintf for messages, where cutting a long text short is fine. */
static void format_text(char *buf, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void format_text(char *buf, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* DIR/NAME into out; false if it does not fit. */
static bool join_path(char *out, size_t len, const char *dir, const char *name) {
    int n = snprintf(out, len, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < len;
}

static bool starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- options and totals ------------------------------------------------------------ */

typedef struct runner_options {
    bool canonicalize;
    bool unmetered;            /* load modules with ri_module_config.unmetered */
    uint32_t fusions_off;      /* ri_module_config.fusions_off (--fusions-off) */
    bool verbose;
    bool all;
    const char *testsuite_dir; /* holds core/ */
    unsigned timeout_seconds;  /* per command; 0 = none */
} runner_options;

typedef struct tally {
    uint64_t passed, failed, skipped;
} tally;

typedef struct tag_count {
    char tag[TAG_MAX];
    uint64_t count;
} tag_count;

typedef struct runner {
    runner_options opts;
    char workdir[PATH_MAX];
    tally total;
    tag_count *fail_tags; /* failures by kind, for the verbose summary */
    size_t nfail_tags, cap_fail_tags;
    bool single_memory;   /* the script being run expects WebAssembly 2.0's single memory */
    /* the script's JSON while it runs: also held here so that LeakSanitizer, at a child's
     * exit, always finds it (held only in a register of the parent's frame, it was taken
     * for leaked in the children of scripts with v128 results) */
    json_t *doc;
} runner;

static void count_failure_tag(runner *rn, const char *tag) {
    for (size_t i = 0; i < rn->nfail_tags; i++) {
        if (strcmp(rn->fail_tags[i].tag, tag) == 0) {
            rn->fail_tags[i].count++;
            return;
        }
    }
    tag_count *grown = grow(rn->fail_tags, &rn->cap_fail_tags, rn->nfail_tags, sizeof *grown);
    if (!grown) return;
    rn->fail_tags = grown;
    tag_count *t = &rn->fail_tags[rn->nfail_tags++];
    snprintf(t->tag, sizeof t->tag, "%s", tag);
    t->count = 1;
}

/* ---- values: parsing the JSON, comparing, printing -------------------------------- */

typedef enum value_pattern {
    PATTERN_EXACT,
    PATTERN_NAN_CANONICAL,
    PATTERN_NAN_ARITHMETIC,
    PATTERN_NONNULL_REF, /* a funcref expectation other than null: any function */
} value_pattern;

typedef enum lane_kind { LANE_I8, LANE_I16, LANE_I32, LANE_I64, LANE_F32, LANE_F64 } lane_kind;

typedef struct spec_value {
    ri_val val;
    value_pattern pattern;   /* scalars */
    lane_kind lanes;         /* v128 */
    value_pattern lane_pattern[16];
} spec_value;

static bool parse_valtype(const char *s, ri_valtype *out) {
    static const struct { const char *name; ri_valtype type; } names[] = {
        {"i32", RI_I32}, {"i64", RI_I64}, {"f32", RI_F32}, {"f64", RI_F64},
        {"v128", RI_V128}, {"funcref", RI_FUNCREF}, {"externref", RI_EXTERNREF},
        {"exnref", RI_EXNREF},
    };
    if (!s) return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].type;
            return true;
        }
    }
    return false;
}

static unsigned lane_bytes(lane_kind k) {
    switch (k) {
    case LANE_I8: return 1;
    case LANE_I16: return 2;
    case LANE_I32: case LANE_F32: return 4;
    case LANE_I64: case LANE_F64: return 8;
    }
    return 1;
}

static const char *lane_name(lane_kind k) {
    static const char *const names[] = {"i8x16", "i16x8", "i32x4", "i64x2", "f32x4", "f64x2"};
    return names[k];
}

static bool parse_lane_kind(const char *s, lane_kind *out) {
    static const char *const names[] = {"i8", "i16", "i32", "i64", "f32", "f64"};
    if (!s) return false;
    for (unsigned i = 0; i < 6; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (lane_kind)i;
            return true;
        }
    }
    return false;
}

static uint64_t lane_get(const uint8_t *v128, lane_kind k, unsigned lane) {
    unsigned n = lane_bytes(k);
    uint64_t v = 0;
    for (unsigned b = 0; b < n; b++) v |= (uint64_t)v128[lane * n + b] << (8 * b);
    return v;
}

static void lane_set(uint8_t *v128, lane_kind k, unsigned lane, uint64_t v) {
    unsigned n = lane_bytes(k);
    for (unsigned b = 0; b < n; b++) v128[lane * n + b] = (uint8_t)(v >> (8 * b));
}

static bool parse_nan_pattern(const char *s, value_pattern *out) {
    if (strcmp(s, "nan:canonical") == 0) { *out = PATTERN_NAN_CANONICAL; return true; }
    if (strcmp(s, "nan:arithmetic") == 0) { *out = PATTERN_NAN_ARITHMETIC; return true; }
    return false;
}

/* Parses {"type": T, "value": V}. NaN patterns and non-null funcref expectations are
 * only allowed where allow_patterns (expected results, not arguments). */
static bool parse_value(const json_t *jv, bool allow_patterns, spec_value *out, char *why, size_t whylen) {
    memset(out, 0, sizeof *out);
    const char *type = json_str(jv, "type");
    if (!parse_valtype(type, &out->val.type)) {
        snprintf(why, whylen, "unsupported value type \"%s\"", type ? type : "(none)");
        return false;
    }
    if (out->val.type == RI_V128) {
        const json_t *lanes = json_object_get(jv, "value");
        if (!parse_lane_kind(json_str(jv, "lane_type"), &out->lanes) || !json_is_array(lanes) ||
            json_array_size(lanes) != 16 / lane_bytes(out->lanes)) {
            snprintf(why, whylen, "malformed v128 value");
            return false;
        }
        for (unsigned i = 0; i < json_array_size(lanes); i++) {
            const json_t *lane = json_array_get(lanes, i);
            const char *s = json_is_string(lane) ? json_string_value(lane) : NULL;
            uint64_t bits = 0;
            if (s && allow_patterns && (out->lanes == LANE_F32 || out->lanes == LANE_F64) &&
                parse_nan_pattern(s, &out->lane_pattern[i]))
                continue;
            if (!parse_u64(s, &bits)) {
                snprintf(why, whylen, "malformed v128 lane \"%s\"", s ? s : "(none)");
                return false;
            }
            lane_set(out->val.of.v128, out->lanes, i, bits);
        }
        return true;
    }
    const char *value = json_str(jv, "value");
    if (!value) {
        snprintf(why, whylen, "%s value missing", type);
        return false;
    }
    uint64_t bits = 0;
    bool is_float = out->val.type == RI_F32 || out->val.type == RI_F64;
    if (is_float && allow_patterns && parse_nan_pattern(value, &out->pattern)) return true;
    switch (out->val.type) {
    case RI_F32:
    case RI_F64:
    case RI_I32:
    case RI_I64:
        if (!parse_u64(value, &bits)) break;
        if (out->val.type == RI_I32) out->val.of.i32 = i32_from_bits((uint32_t)bits);
        else if (out->val.type == RI_I64) out->val.of.i64 = i64_from_bits(bits);
        else if (out->val.type == RI_F32) out->val.of.f32_bits = (uint32_t)bits;
        else out->val.of.f64_bits = bits;
        return true;
    case RI_EXNREF:
        if (strcmp(value, "null") == 0) return true;
        break;
    case RI_FUNCREF:
        if (strcmp(value, "null") == 0) return true;
        if (!allow_patterns) break; /* a function cannot be named in an argument */
        out->pattern = PATTERN_NONNULL_REF;
        return true;
    case RI_EXTERNREF:
        if (strcmp(value, "null") == 0) return true;
        if (!parse_u64(value, &bits) || bits >= UINTPTR_MAX) break;
        /* The host reference N travels as N + 1, so that ref.extern 0 is not null. */
        out->val.of.ref = (void *)(uintptr_t)(bits + 1);
        return true;
    case RI_V128:
        break;
    }
    snprintf(why, whylen, "malformed %s value \"%s\"", type, value);
    return false;
}

static bool f32_matches(uint32_t got, value_pattern p, uint32_t want) {
    switch (p) {
    case PATTERN_NAN_CANONICAL: return (got & 0x7fffffffu) == 0x7fc00000u;
    case PATTERN_NAN_ARITHMETIC: return (got & 0x7fc00000u) == 0x7fc00000u;
    default: return got == want;
    }
}

static bool f64_matches(uint64_t got, value_pattern p, uint64_t want) {
    switch (p) {
    case PATTERN_NAN_CANONICAL: return (got & UINT64_C(0x7fffffffffffffff)) == UINT64_C(0x7ff8000000000000);
    case PATTERN_NAN_ARITHMETIC: return (got & UINT64_C(0x7ff8000000000000)) == UINT64_C(0x7ff8000000000000);
    default: return got == want;
    }
}

static bool value_matches(const ri_val *got, const spec_value *want) {
    if (got->type != want->val.type) return false;
    switch (want->val.type) {
    case RI_I32: return got->of.i32 == want->val.of.i32;
    case RI_I64: return got->of.i64 == want->val.of.i64;
    case RI_F32: return f32_matches(got->of.f32_bits, want->pattern, want->val.of.f32_bits);
    case RI_F64: return f64_matches(got->of.f64_bits, want->pattern, want->val.of.f64_bits);
    case RI_FUNCREF:
        if (want->pattern == PATTERN_NONNULL_REF) return got->of.ref != NULL;
        return got->of.ref == want->val.of.ref;
    case RI_EXTERNREF: case RI_EXNREF: return (uintptr_t)got->of.ref == (uintptr_t)want->val.of.ref;
    case RI_V128:
        for (unsigned i = 0; i < 16 / lane_bytes(want->lanes); i++) {
            uint64_t g = lane_get(got->of.v128, want->lanes, i);
            uint64_t w = lane_get(want->val.of.v128, want->lanes, i);
            bool ok = want->lanes == LANE_F32   ? f32_matches((uint32_t)g, want->lane_pattern[i], (uint32_t)w)
                      : want->lanes == LANE_F64 ? f64_matches(g, want->lane_pattern[i], w)
                                                : g == w;
            if (!ok) return false;
        }
        return true;
    }
    return false;
}

static const char *pattern_name(value_pattern p) {
    return p == PATTERN_NAN_CANONICAL ? "nan:canonical" : p == PATTERN_NAN_ARITHMETIC ? "nan:arithmetic" : NULL;
}

/* Appends a readable form of v (lanes shown as `lanes` for v128). */
static void format_value(strbuf *b, const ri_val *v, lane_kind lanes, const value_pattern *lane_patterns) {
    switch (v->type) {
    case RI_I32: strbuf_printf(b, "i32:%" PRId32, v->of.i32); return;
    case RI_I64: strbuf_printf(b, "i64:%" PRId64, v->of.i64); return;
    case RI_F32:
        strbuf_printf(b, "f32:0x%08" PRIx32 " (%.9g)", v->of.f32_bits, (double)f32_from_bits(v->of.f32_bits));
        return;
    case RI_F64:
        strbuf_printf(b, "f64:0x%016" PRIx64 " (%.17g)", v->of.f64_bits, f64_from_bits(v->of.f64_bits));
        return;
    case RI_FUNCREF:
        if (v->of.ref) strbuf_printf(b, "funcref:%p", v->of.ref);
        else strbuf_printf(b, "funcref:null");
        return;
    case RI_EXTERNREF:
        if (v->of.ref) strbuf_printf(b, "externref:%" PRIuPTR, (uintptr_t)v->of.ref - 1);
        else strbuf_printf(b, "externref:null");
        return;
    case RI_EXNREF:
        strbuf_printf(b, "exnref:%s", v->of.ref ? "non-null" : "null");
        return;
    case RI_V128:
        strbuf_printf(b, "v128:%s", lane_name(lanes));
        for (unsigned i = 0; i < 16 / lane_bytes(lanes); i++) {
            const char *p = lane_patterns ? pattern_name(lane_patterns[i]) : NULL;
            if (p) strbuf_printf(b, " %s", p);
            else strbuf_printf(b, " 0x%" PRIx64, lane_get(v->of.v128, lanes, i));
        }
        return;
    }
    strbuf_printf(b, "(type 0x%x)", (unsigned)v->type);
}

static void format_expected(strbuf *b, const spec_value *want) {
    const char *p = pattern_name(want->pattern);
    if (p) strbuf_printf(b, "%s:%s", ri_valtype_name(want->val.type), p);
    else if (want->pattern == PATTERN_NONNULL_REF) strbuf_printf(b, "funcref:(any function)");
    else format_value(b, &want->val, want->lanes, want->lane_pattern);
}

/* ---- the outcome of one command ------------------------------------------------- */

typedef enum outcome { OUTCOME_PASS = 'P', OUTCOME_FAIL = 'F', OUTCOME_SKIP = 'S' } outcome;

typedef struct cmd_result {
    outcome outcome;
    char tag[TAG_MAX];         /* command type, plus ":why" for failures */
    char message[MESSAGE_MAX]; /* failures: expected vs got */
} cmd_result;

static void set_result(cmd_result *r, outcome o, const char *tag) {
    r->outcome = o;
    snprintf(r->tag, sizeof r->tag, "%s", tag);
    r->message[0] = '\0';
}

static void fail(cmd_result *r, const char *tag, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void fail(cmd_result *r, const char *tag, const char *fmt, ...) {
    set_result(r, OUTCOME_FAIL, tag);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/* ---- the script state (one per .wast file, lives in the child) -------------------- */

typedef struct named_instance {
    char *name;
    ri_instance *instance; /* NULL: the module of that name failed */
} named_instance;

typedef struct instance_list {
    named_instance *items;
    size_t count, cap;
} instance_list;

typedef struct spectest_export {
    const char *name;
    ri_extern ext;
} spectest_export;

#define SPECTEST_EXPORTS 13

typedef struct script_state {
    const char *dir; /* where wast2json wrote the modules */
    bool unmetered;  /* load modules unmetered */
    uint32_t fusions_off; /* ri_module_config.fusions_off */
    bool single_memory; /* load modules with ri_module_config.single_memory */
    ri_store *store;
    ri_instance *current;
    instance_list named;      /* $name -> instance */
    instance_list registered; /* `register` name -> instance */
    ri_module **modules;      /* every loaded module, freed after the store */
    size_t nmodules, cap_modules;
    spectest_export spectest[SPECTEST_EXPORTS];
    size_t nspectest;
    char spectest_error[RI_ERROR_MESSAGE_MAX]; /* why spectest is incomplete, if it is */
} script_state;

static bool instance_list_bind(instance_list *list, const char *name, ri_instance *inst) {
    named_instance *grown = grow(list->items, &list->cap, list->count, sizeof *grown);
    if (!grown) return false;
    list->items = grown;
    char *copy = strdup(name);
    if (!copy) return false;
    list->items[list->count].name = copy;
    list->items[list->count].instance = inst;
    list->count++;
    return true;
}

/* The newest binding wins: a script may reuse a name. */
static named_instance *instance_list_find(const instance_list *list, const char *name) {
    for (size_t i = list->count; i-- > 0;)
        if (strcmp(list->items[i].name, name) == 0) return &list->items[i];
    return NULL;
}

static void instance_list_free(instance_list *list) {
    for (size_t i = 0; i < list->count; i++) free(list->items[i].name);
    free(list->items);
    memset(list, 0, sizeof *list);
}

static bool remember_module(script_state *s, ri_module *m) {
    ri_module **grown = grow(s->modules, &s->cap_modules, s->nmodules, sizeof *grown);
    if (!grown) return false;
    s->modules = grown;
    s->modules[s->nmodules++] = m;
    return true;
}

/* ---- the spectest host module -------------------------------------------------- */

static int spectest_print(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)user, (void)args, (void)results;
    return 0; /* the scripts only need the imports to exist */
}

static void spectest_add(script_state *s, const char *name, ri_extern ext) {
    if (s->nspectest < SPECTEST_EXPORTS) s->spectest[s->nspectest++] = (spectest_export){name, ext};
}

static void spectest_note_error(script_state *s, const char *what, const ri_error *err) {
    if (!s->spectest_error[0])
        format_text(s->spectest_error, sizeof s->spectest_error, "spectest %s: %s", what,
                 err ? err->message : "creation failed");
}

static void spectest_init(script_state *s) {
    static const ri_valtype i32[] = {RI_I32}, i64[] = {RI_I64}, f32[] = {RI_F32}, f64[] = {RI_F64};
    static const ri_valtype i32_f32[] = {RI_I32, RI_F32}, f64_f64[] = {RI_F64, RI_F64};
    const struct { const char *name; ri_functype type; } funcs[] = {
        {"print", {0, 0, NULL, NULL}},
        {"print_i32", {1, 0, i32, NULL}},
        {"print_i64", {1, 0, i64, NULL}},
        {"print_f32", {1, 0, f32, NULL}},
        {"print_f64", {1, 0, f64, NULL}},
        {"print_i32_f32", {2, 0, i32_f32, NULL}},
        {"print_f64_f64", {2, 0, f64_f64, NULL}},
    };
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++) {
        ri_extern ext = {.kind = RI_EXTERN_FUNC};
        ext.of.func = ri_func_new_host(s->store, &funcs[i].type, spectest_print, NULL);
        if (ext.of.func) spectest_add(s, funcs[i].name, ext);
        else spectest_note_error(s, funcs[i].name, NULL);
    }

    ri_val init[4];
    memset(init, 0, sizeof init);
    init[0] = ri_val_i32(666);
    init[1] = ri_val_i64(666);
    init[2].type = RI_F32;
    init[2].of.f32_bits = f32_bits(666.6f);
    init[3].type = RI_F64;
    init[3].of.f64_bits = f64_bits(666.6);
    static const char *const global_names[4] = {"global_i32", "global_i64", "global_f32", "global_f64"};
    for (size_t i = 0; i < 4; i++) {
        ri_error err;
        memset(&err, 0, sizeof err);
        ri_globaltype type = {init[i].type, false};
        ri_extern ext = {.kind = RI_EXTERN_GLOBAL};
        ext.of.global = ri_global_new(s->store, type, init[i], &err);
        if (ext.of.global) spectest_add(s, global_names[i], ext);
        else spectest_note_error(s, global_names[i], &err);
    }

    ri_error err;
    memset(&err, 0, sizeof err);
    ri_tabletype table_type = {RI_FUNCREF, {10, 20, true}};
    ri_extern table = {.kind = RI_EXTERN_TABLE};
    table.of.table = ri_table_new(s->store, table_type, NULL, &err);
    if (table.of.table) spectest_add(s, "table", table);
    else spectest_note_error(s, "table", &err);

    ri_memtype memory_type = {{1, 2, true}, false};
    ri_extern memory = {.kind = RI_EXTERN_MEMORY};
    memory.of.memory = ri_memory_new(s->store, memory_type, &err);
    if (memory.of.memory) spectest_add(s, "memory", memory);
    else spectest_note_error(s, "memory", &err);
}

/* ---- modules and instances -------------------------------------------------------- */

static uint8_t *read_whole_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
        }
        size_t n = fread(data + size, 1, cap - size, f);
        size += n;
        if (n == 0) break;
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(data);
        return NULL;
    }
    *len = size;
    return data;
}

/* Loads FILENAME from the script's directory. On failure returns NULL with err filled;
 * a file the runner cannot read is reported as RI_ERR_ARGUMENT with a runner message. */
static ri_module *load_module(script_state *s, const char *filename, ri_error *err) {
    memset(err, 0, sizeof *err);
    if (!filename) {
        err->code = RI_ERR_ARGUMENT;
        snprintf(err->message, sizeof err->message, "runner: command has no filename");
        return NULL;
    }
    char path[PATH_MAX];
    size_t len = 0;
    uint8_t *bytes = join_path(path, sizeof path, s->dir, filename) ? read_whole_file(path, &len) : NULL;
    if (!bytes) {
        err->code = RI_ERR_ARGUMENT;
        snprintf(err->message, sizeof err->message, "runner: cannot read %s", filename);
        return NULL;
    }
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg); /* zero fields: the defaults */
    mcfg.unmetered = s->unmetered;
    mcfg.fusions_off = s->fusions_off;
    mcfg.single_memory = s->single_memory;
    ri_module *m = ri_module_load(bytes, len, &mcfg, err);
    free(bytes);
    if (m && !remember_module(s, m)) {
        ri_module_free(m);
        err->code = RI_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "runner: out of memory");
        return NULL;
    }
    return m;
}

/* Registered instances first, then the built-in spectest module. */
static bool resolve_import(const script_state *s, const ri_import_info *imp, ri_extern *out) {
    const named_instance *reg = instance_list_find(&s->registered, imp->module);
    if (reg) return reg->instance && ri_instance_export_n(reg->instance, imp->name, imp->name_len, out);
    if (strcmp(imp->module, "spectest") != 0) return false;
    for (size_t i = 0; i < s->nspectest; i++) {
        if (strcmp(s->spectest[i].name, imp->name) == 0) {
            *out = s->spectest[i].ext;
            return true;
        }
    }
    return false;
}

static ri_instance *instantiate(script_state *s, const ri_module *m, ri_error *err) {
    memset(err, 0, sizeof *err);
    uint32_t n = ri_module_import_count(m);
    ri_extern *imports = calloc(n ? n : 1, sizeof *imports);
    if (!imports) {
        err->code = RI_ERR_NOMEM;
        snprintf(err->message, sizeof err->message, "runner: out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        ri_import_info imp = ri_module_import(m, i);
        if (!imp.module || !imp.name || !resolve_import(s, &imp, &imports[i])) {
            err->code = RI_ERR_UNLINKABLE;
            format_text(err->message, sizeof err->message, "unknown import \"%s\" \"%s\"%s%s",
                     imp.module ? imp.module : "?", imp.name ? imp.name : "?",
                     s->spectest_error[0] ? "; " : "", s->spectest_error);
            free(imports);
            return NULL;
        }
    }
    ri_instance *inst = ri_instantiate(s->store, m, imports, n, err);
    free(imports);
    return inst;
}

/* ---- actions ------------------------------------------------------------------------ */

typedef enum action_status {
    ACTION_DONE,         /* results are valid */
    ACTION_ENGINE_ERROR, /* the engine returned an error (a trap, usually); see err */
    ACTION_BROKEN,       /* the runner could not perform it; the result is filled */
} action_status;

typedef struct action_result {
    ri_val *values;
    uint32_t count;
    ri_error err;
} action_result;

static action_status run_action(script_state *s, const json_t *cmd, action_result *res, cmd_result *r) {
    const char *tag = json_str(cmd, "type");
    const json_t *action = json_object_get(cmd, "action");
    const char *kind = json_str(action, "type");
    const char *field = json_str(action, "field");
    const char *module_name = json_str(action, "module");
    memset(res, 0, sizeof *res);
    if (!kind || !field) {
        fail(r, tag, "malformed action in JSON");
        return ACTION_BROKEN;
    }
    /* a WebAssembly name may contain NUL bytes: its JSON length is the authority */
    size_t field_len = json_string_length(json_object_get(action, "field"));
    ri_instance *inst = s->current;
    if (module_name) {
        const named_instance *named = instance_list_find(&s->named, module_name);
        if (!named) {
            fail(r, tag, "unknown module %s", module_name);
            return ACTION_BROKEN;
        }
        inst = named->instance;
    }
    if (!inst) {
        fail(r, tag, "no instance for %s (its module failed to load or instantiate)",
             module_name ? module_name : "the current module");
        return ACTION_BROKEN;
    }
    ri_extern ext;
    memset(&ext, 0, sizeof ext);
    if (!ri_instance_export_n(inst, field, field_len, &ext)) {
        fail(r, tag, "no export \"%s\"", field);
        return ACTION_BROKEN;
    }

    if (strcmp(kind, "get") == 0) {
        if (ext.kind != RI_EXTERN_GLOBAL) {
            fail(r, tag, "export \"%s\" is not a global", field);
            return ACTION_BROKEN;
        }
        res->values = calloc(1, sizeof *res->values);
        if (!res->values) {
            fail(r, tag, "runner: out of memory");
            return ACTION_BROKEN;
        }
        res->values[0] = ri_global_get(ext.of.global);
        res->count = 1;
        return ACTION_DONE;
    }
    if (strcmp(kind, "invoke") != 0) {
        fail(r, tag, "unknown action type \"%s\"", kind);
        return ACTION_BROKEN;
    }
    if (ext.kind != RI_EXTERN_FUNC) {
        fail(r, tag, "export \"%s\" is not a function", field);
        return ACTION_BROKEN;
    }

    const json_t *jargs = json_object_get(action, "args");
    size_t nargs = json_is_array(jargs) ? json_array_size(jargs) : 0;
    ri_functype type = ri_func_type(ext.of.func);
    ri_val *args = calloc(nargs ? nargs : 1, sizeof *args);
    res->values = calloc(type.nresults ? type.nresults : 1, sizeof *res->values);
    if (!args || !res->values) {
        free(args);
        fail(r, tag, "runner: out of memory");
        return ACTION_BROKEN;
    }
    for (size_t i = 0; i < nargs; i++) {
        spec_value v;
        char why[128];
        if (!parse_value(json_array_get(jargs, i), false, &v, why, sizeof why)) {
            free(args);
            fail(r, tag, "argument %zu: %s", i, why);
            return ACTION_BROKEN;
        }
        args[i] = v.val;
    }
    res->count = type.nresults;
    ri_errcode code = ri_func_call(s->store, ext.of.func, args, (uint32_t)nargs, res->values, type.nresults,
                                   &res->err);
    free(args);
    if (code != RI_OK) {
        res->err.code = code;
        return ACTION_ENGINE_ERROR;
    }
    return ACTION_DONE;
}

static void action_result_free(action_result *res) {
    free(res->values);
    res->values = NULL;
}

static void describe_error(char *buf, size_t len, const ri_error *err) {
    snprintf(buf, len, "%s: %s", ri_errcode_name(err->code), err->message);
}

/* ---- commands -------------------------------------------------------------------- */

static void cmd_module(script_state *s, const json_t *cmd, cmd_result *r) {
    const char *name = json_str(cmd, "name");
    ri_error err;
    char why[RI_ERROR_MESSAGE_MAX + 32];
    ri_instance *inst = NULL;
    ri_module *m = load_module(s, json_str(cmd, "filename"), &err);
    if (!m) {
        describe_error(why, sizeof why, &err);
        fail(r, "module:load", "loading failed: %s", why);
    } else if (!(inst = instantiate(s, m, &err))) {
        describe_error(why, sizeof why, &err);
        fail(r, "module:instantiate", "instantiation failed: %s", why);
    } else {
        set_result(r, OUTCOME_PASS, "module");
    }
    /* A failed module still becomes current, so that later commands fail visibly
     * instead of silently running against the previous module. */
    s->current = inst;
    if (name && !instance_list_bind(&s->named, name, inst)) fail(r, "module", "runner: out of memory");
}

static void cmd_register(script_state *s, const json_t *cmd, cmd_result *r) {
    const char *as = json_str(cmd, "as");
    const char *name = json_str(cmd, "name");
    ri_instance *inst = s->current;
    if (name) {
        const named_instance *named = instance_list_find(&s->named, name);
        inst = named ? named->instance : NULL;
    }
    if (!as) fail(r, "register", "malformed register command");
    else if (!inst) fail(r, "register", "no instance to register as \"%s\"", as);
    else if (!instance_list_bind(&s->registered, as, inst)) fail(r, "register", "runner: out of memory");
    else set_result(r, OUTCOME_PASS, "register");
}

static void cmd_action(script_state *s, const json_t *cmd, cmd_result *r) {
    action_result res;
    action_status st = run_action(s, cmd, &res, r);
    if (st == ACTION_DONE) set_result(r, OUTCOME_PASS, "action");
    else if (st == ACTION_ENGINE_ERROR) {
        char why[RI_ERROR_MESSAGE_MAX + 32];
        describe_error(why, sizeof why, &res.err);
        fail(r, "action", "unexpected %s", why);
    }
    action_result_free(&res);
}

static void cmd_assert_return(script_state *s, const json_t *cmd, cmd_result *r) {
    action_result res;
    action_status st = run_action(s, cmd, &res, r);
    if (st == ACTION_BROKEN) {
        action_result_free(&res);
        return;
    }
    if (st == ACTION_ENGINE_ERROR) {
        char why[RI_ERROR_MESSAGE_MAX + 32];
        describe_error(why, sizeof why, &res.err);
        fail(r, "assert_return:error", "unexpected %s", why);
        action_result_free(&res);
        return;
    }
    const json_t *expected = json_object_get(cmd, "expected");
    size_t nexpected = json_is_array(expected) ? json_array_size(expected) : 0;
    if (nexpected != res.count) {
        fail(r, "assert_return:arity", "expected %zu results, got %" PRIu32, nexpected, res.count);
        action_result_free(&res);
        return;
    }
    set_result(r, OUTCOME_PASS, "assert_return");
    for (size_t i = 0; i < nexpected; i++) {
        spec_value want;
        char why[128];
        if (!parse_value(json_array_get(expected, i), true, &want, why, sizeof why)) {
            fail(r, "assert_return:json", "result %zu: %s", i, why);
            break;
        }
        if (value_matches(&res.values[i], &want)) continue;
        strbuf msg = {0};
        strbuf_printf(&msg, "result %zu: expected ", i);
        format_expected(&msg, &want);
        strbuf_printf(&msg, ", got ");
        format_value(&msg, &res.values[i], want.lanes, NULL);
        fail(r, "assert_return:value", "%s", msg.data ? msg.data : "mismatch");
        strbuf_free(&msg);
        break;
    }
    action_result_free(&res);
}

/* assert_trap and assert_exhaustion: the call must trap, with a message that starts
 * with the script's text (as the reference interpreter checks it). */
static void cmd_assert_trap(script_state *s, const json_t *cmd, cmd_result *r, const char *default_text) {
    const char *type = json_str(cmd, "type");
    const char *text = json_str(cmd, "text");
    if (!text) text = default_text;
    action_result res;
    action_status st = run_action(s, cmd, &res, r);
    char tag[TAG_MAX];
    if (st == ACTION_DONE) {
        snprintf(tag, sizeof tag, "%s:returned", type);
        fail(r, tag, "expected trap \"%s\", but the call returned", text);
    } else if (st == ACTION_ENGINE_ERROR) {
        if (res.err.code != RI_ERR_TRAP) {
            char why[RI_ERROR_MESSAGE_MAX + 32];
            describe_error(why, sizeof why, &res.err);
            snprintf(tag, sizeof tag, "%s:%s", type, ri_errcode_name(res.err.code));
            fail(r, tag, "expected trap \"%s\", got %s", text, why);
        } else if (!starts_with(res.err.message, text)) {
            snprintf(tag, sizeof tag, "%s:text", type);
            fail(r, tag, "expected trap \"%s\", got trap \"%s\"", text, res.err.message);
        } else {
            set_result(r, OUTCOME_PASS, type);
        }
    }
    action_result_free(&res);
}

static bool is_text_module(const json_t *cmd) {
    const char *mt = json_str(cmd, "module_type");
    return mt && strcmp(mt, "text") == 0;
}

/* assert_invalid and assert_malformed: loading must fail, with one of the codes. */
static void cmd_assert_load_fails(script_state *s, const json_t *cmd, cmd_result *r, ri_errcode code,
                                  ri_errcode also_accepted) {
    const char *type = json_str(cmd, "type");
    const char *text = json_str(cmd, "text");
    if (is_text_module(cmd)) {
        /* The engine reads the binary format only. */
        set_result(r, OUTCOME_SKIP, type);
        return;
    }
    ri_error err;
    ri_module *m = load_module(s, json_str(cmd, "filename"), &err);
    char tag[TAG_MAX];
    if (m) {
        snprintf(tag, sizeof tag, "%s:loaded", type);
        fail(r, tag, "expected %s module (\"%s\"), but it loaded", ri_errcode_name(code), text ? text : "");
        return;
    }
    if (err.code == code || err.code == also_accepted) {
        set_result(r, OUTCOME_PASS, type);
        return;
    }
    char why[RI_ERROR_MESSAGE_MAX + 32];
    describe_error(why, sizeof why, &err);
    snprintf(tag, sizeof tag, "%s:%s", type, ri_errcode_name(err.code));
    fail(r, tag, "expected %s (\"%s\"), got %s", ri_errcode_name(code), text ? text : "", why);
}

/* assert_unlinkable and assert_uninstantiable: the module loads, instantiation fails. */
static void cmd_assert_instantiate_fails(script_state *s, const json_t *cmd, cmd_result *r, ri_errcode code) {
    const char *type = json_str(cmd, "type");
    const char *text = json_str(cmd, "text");
    if (!text) text = "";
    char tag[TAG_MAX];
    char why[RI_ERROR_MESSAGE_MAX + 32];
    ri_error err;
    ri_module *m = load_module(s, json_str(cmd, "filename"), &err);
    if (!m) {
        describe_error(why, sizeof why, &err);
        snprintf(tag, sizeof tag, "%s:load", type);
        fail(r, tag, "expected the module to load, got %s", why);
        return;
    }
    if (instantiate(s, m, &err)) {
        snprintf(tag, sizeof tag, "%s:instantiated", type);
        fail(r, tag, "expected %s (\"%s\"), but it instantiated", ri_errcode_name(code), text);
        return;
    }
    if (err.code != code) {
        describe_error(why, sizeof why, &err);
        snprintf(tag, sizeof tag, "%s:%s", type, ri_errcode_name(err.code));
        fail(r, tag, "expected %s (\"%s\"), got %s", ri_errcode_name(code), text, why);
        return;
    }
    /* A trap during instantiation is a trap like any other: its message must match. */
    if (code == RI_ERR_TRAP && !starts_with(err.message, text)) {
        snprintf(tag, sizeof tag, "%s:text", type);
        fail(r, tag, "expected trap \"%s\", got trap \"%s\"", text, err.message);
        return;
    }
    set_result(r, OUTCOME_PASS, type);
}

static void run_command(script_state *s, const json_t *cmd, cmd_result *r) {
    const char *type = json_str(cmd, "type");
    if (!type) fail(r, "json", "command without a type");
    else if (strcmp(type, "module") == 0) cmd_module(s, cmd, r);
    else if (strcmp(type, "register") == 0) cmd_register(s, cmd, r);
    else if (strcmp(type, "action") == 0) cmd_action(s, cmd, r);
    else if (strcmp(type, "assert_return") == 0) cmd_assert_return(s, cmd, r);
    else if (strcmp(type, "assert_trap") == 0) cmd_assert_trap(s, cmd, r, "");
    else if (strcmp(type, "assert_exhaustion") == 0) cmd_assert_trap(s, cmd, r, "call stack exhausted");
    /* exception handling: an exception no handler caught ends the call as a trap of its own */
    else if (strcmp(type, "assert_exception") == 0) cmd_assert_trap(s, cmd, r, "uncaught exception");
    else if (strcmp(type, "assert_invalid") == 0) cmd_assert_load_fails(s, cmd, r, RI_ERR_INVALID, RI_ERR_INVALID);
    /* Decoders may legitimately find some malformations only while validating. */
    else if (strcmp(type, "assert_malformed") == 0) cmd_assert_load_fails(s, cmd, r, RI_ERR_MALFORMED, RI_ERR_INVALID);
    else if (strcmp(type, "assert_unlinkable") == 0) cmd_assert_instantiate_fails(s, cmd, r, RI_ERR_UNLINKABLE);
    else if (strcmp(type, "assert_uninstantiable") == 0) cmd_assert_instantiate_fails(s, cmd, r, RI_ERR_TRAP);
    else fail(r, "unknown-command", "unknown command type \"%s\"", type);
}

/* Commands that cannot change the store need not be replayed after a crash. */
static bool changes_state(const json_t *cmd) {
    const char *type = json_str(cmd, "type");
    return !type || (strcmp(type, "assert_invalid") != 0 && strcmp(type, "assert_malformed") != 0);
}

/* Replaying a command that crashed: what the script would see had it failed. */
static void replay_crashed(script_state *s, const json_t *cmd) {
    const char *type = json_str(cmd, "type");
    if (!type || strcmp(type, "module") != 0) return;
    s->current = NULL;
    const char *name = json_str(cmd, "name");
    if (name) instance_list_bind(&s->named, name, NULL);
}

/* ---- the child: executes one script, reporting through fd ------------------------ */

static void report(int fd, size_t index, const cmd_result *r) {
    char message[MESSAGE_MAX];
    snprintf(message, sizeof message, "%s", r->message);
    for (char *p = message; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    dprintf(fd, "%zu %c %s %s\n", index, (char)r->outcome, r->tag, message);
}

static int child_main(const runner *rn, const char *dir, const json_t *commands, size_t resume, const bool *crashed,
                      int fd) {
    script_state s;
    memset(&s, 0, sizeof s);
    s.dir = dir;
    s.unmetered = rn->opts.unmetered;
    s.fusions_off = rn->opts.fusions_off;
    s.single_memory = rn->single_memory;
    ri_store_config cfg = ri_store_config_default();
    cfg.canonicalize_nans = rn->opts.canonicalize;
    s.store = ri_store_new(&cfg);
    size_t n = json_array_size(commands);
    if (!s.store) {
        cmd_result r;
        fail(&r, "store", "ri_store_new failed");
        for (size_t i = resume; i < n; i++) report(fd, i, &r);
        return 0;
    }
    spectest_init(&s);
    for (size_t i = 0; i < n; i++) {
        const json_t *cmd = json_array_get(commands, i);
        if (crashed[i]) {
            replay_crashed(&s, cmd);
            continue;
        }
        if (i < resume && !changes_state(cmd)) continue;
        cmd_result r;
        set_result(&r, OUTCOME_FAIL, "?");
        alarm(rn->opts.timeout_seconds);
        run_command(&s, cmd, &r);
        alarm(0);
        if (i >= resume) report(fd, i, &r);
    }
    ri_store_free(s.store);
    for (size_t i = 0; i < s.nmodules; i++) ri_module_free(s.modules[i]);
    free(s.modules);
    instance_list_free(&s.named);
    instance_list_free(&s.registered);
    return 0;
}

/* ---- the parent: conversion, children, tallies -------------------------------------- */

typedef struct script_report {
    tally counts;
    strbuf details; /* verbose failure lines */
} script_report;

static void record_failure(runner *rn, script_report *rep, long line, const char *tag, const char *message) {
    rep->counts.failed++;
    count_failure_tag(rn, tag);
    if (line > 0) strbuf_printf(&rep->details, "  line %ld: %s: %s\n", line, tag, message);
    else strbuf_printf(&rep->details, "  %s: %s\n", tag, message);
}

static const char *command_type(const json_t *cmd) {
    const char *type = json_str(cmd, "type");
    return type ? type : "command";
}

static void empty_workdir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[PATH_MAX];
        if (join_path(path, sizeof path, dir, e->d_name)) unlink(path);
    }
    closedir(d);
}

/* Runs wast2json; on failure describes it in why (its first line of output). */
static bool convert(const runner *rn, const char *wast, const char *json_path, char *why, size_t whylen) {
    char log_path[PATH_MAX];
    if (!join_path(log_path, sizeof log_path, rn->workdir, "wast2json.log")) {
        snprintf(why, whylen, "path too long");
        return false;
    }
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) {
        snprintf(why, whylen, "cannot run wast2json: out of memory");
        return false;
    }
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    /* A script of a proposal (proposals/<name>/) needs that proposal's syntax. */
    static const struct { const char *dir, *flag; } proposals[] = {
        {"/proposals/extended-const/", "--enable-extended-const"}, {"/proposals/tail-call/", "--enable-tail-call"},
        {"/proposals/exception-handling/", "--enable-exceptions"}, {"/proposals/multi-memory/", "--enable-multi-memory"},
        {"/proposals/memory64/", "--enable-memory64"},            {"/proposals/threads/", "--enable-threads"},
    };
    char *flag = (char *)"--enable-annotations"; /* harmless when no proposal applies */
    for (size_t i = 0; i < sizeof proposals / sizeof *proposals; i++)
        if (strstr(wast, proposals[i].dir)) flag = (char *)proposals[i].flag;
    char *argv[] = {(char *)RI_WAST2JSON, flag, (char *)wast, (char *)"-o", (char *)json_path, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, RI_WAST2JSON, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        snprintf(why, whylen, "cannot run %s: %s", RI_WAST2JSON, strerror(rc));
        return false;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, whylen, "waiting for wast2json: %s", strerror(errno));
            return false;
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    char first_line[256] = "";
    FILE *log = fopen(log_path, "r");
    if (log) {
        if (!fgets(first_line, sizeof first_line, log)) first_line[0] = '\0';
        first_line[strcspn(first_line, "\n")] = '\0';
        fclose(log);
    }
    if (WIFEXITED(status))
        snprintf(why, whylen, "wast2json exited with status %d: %s", WEXITSTATUS(status), first_line);
    else
        snprintf(why, whylen, "wast2json killed by signal %d", WTERMSIG(status));
    return false;
}

typedef struct child_end {
    size_t next;       /* first command the child did not report */
    int status;        /* from waitpid */
    bool wait_failed;
} child_end;

/* Forks a child for commands[resume..], collecting its reports into rep. */
static child_end run_child(runner *rn, const json_t *commands, size_t resume, const bool *crashed,
                           script_report *rep) {
    child_end end = {resume, 0, false};
    int fds[2];
    if (pipe(fds) != 0) {
        end.wait_failed = true;
        return end;
    }
    fflush(NULL); /* or the child would print the parent's buffered output again */
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        end.wait_failed = true;
        return end;
    }
    if (pid == 0) {
        close(fds[0]);
        signal(SIGALRM, SIG_DFL);
        int rc = child_main(rn, rn->workdir, commands, resume, crashed, fds[1]);
        close(fds[1]);
        exit(rc);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    if (in) {
        char *line = NULL;
        size_t cap = 0;
        size_t n = json_array_size(commands);
        while (getline(&line, &cap, in) > 0) {
            line[strcspn(line, "\n")] = '\0';
            char *endp;
            unsigned long long index = strtoull(line, &endp, 10);
            /* "INDEX OUTCOME TAG MESSAGE", as report() writes it */
            if (endp == line || endp[0] != ' ' || !endp[1] || endp[2] != ' ' || index < end.next || index >= n)
                continue;
            char verdict = endp[1];
            char *tag = endp + 3;
            char *message = strchr(tag, ' ');
            if (message) *message++ = '\0';
            else message = (char *)"";
            if (verdict == OUTCOME_PASS) rep->counts.passed++;
            else if (verdict == OUTCOME_SKIP) rep->counts.skipped++;
            else record_failure(rn, rep, json_line(json_array_get(commands, index)), tag, message);
            end.next = (size_t)index + 1;
        }
        free(line);
        fclose(in);
    } else {
        close(fds[0]);
    }
    while (waitpid(pid, &end.status, 0) < 0) {
        if (errno != EINTR) {
            end.wait_failed = true;
            break;
        }
    }
    return end;
}

static void describe_child_end(const runner *rn, const child_end *end, char *buf, size_t len) {
    if (end->wait_failed) snprintf(buf, len, "could not run the command (fork, pipe or wait failed)");
    else if (WIFSIGNALED(end->status) && WTERMSIG(end->status) == SIGALRM)
        snprintf(buf, len, "timed out after %u s", rn->opts.timeout_seconds);
    else if (WIFSIGNALED(end->status))
        snprintf(buf, len, "crashed: killed by signal %d (%s)", WTERMSIG(end->status), strsignal(WTERMSIG(end->status)));
    else snprintf(buf, len, "crashed: exited with status %d", WEXITSTATUS(end->status));
}

static void execute_commands(runner *rn, const json_t *commands, script_report *rep) {
    size_t n = json_array_size(commands);
    bool *crashed = calloc(n ? n : 1, sizeof *crashed);
    if (!crashed) {
        record_failure(rn, rep, 0, "runner", "out of memory");
        return;
    }
    size_t resume = 0;
    unsigned crashes = 0;
    while (resume < n) {
        child_end end = run_child(rn, commands, resume, crashed, rep);
        bool clean = !end.wait_failed && WIFEXITED(end.status) && WEXITSTATUS(end.status) == 0;
        char why[256];
        if (end.next >= n) {
            if (!clean) {
                /* Every command reported, but the child ended badly: e.g. LeakSanitizer. */
                describe_child_end(rn, &end, why, sizeof why);
                record_failure(rn, rep, 0, "runner:exit", why);
            }
            break;
        }
        /* The child stopped at command end.next: count it and go on after it. */
        const json_t *cmd = json_array_get(commands, end.next);
        describe_child_end(rn, &end, why, sizeof why);
        if (clean) snprintf(why, sizeof why, "the runner child stopped without reporting this command");
        char tag[TAG_MAX];
        snprintf(tag, sizeof tag, "%s:crash", command_type(cmd));
        record_failure(rn, rep, json_line(cmd), tag, why);
        crashed[end.next] = true;
        resume = end.next + 1;
        if (++crashes >= MAX_CRASHES_PER_SCRIPT && resume < n) {
            char msg[128];
            snprintf(msg, sizeof msg, "%zu commands not run after %u crashes", n - resume, crashes);
            record_failure(rn, rep, 0, "runner:gave-up", msg);
            rep->counts.failed += n - resume - 1; /* record_failure counted one */
            break;
        }
    }
    free(crashed);
}

/* "core/NAME.wast": the file's folder and name. */
static const char *display_name(const char *path) {
    const char *end = path + strlen(path);
    const char *p = end;
    int slashes = 0;
    while (p > path) {
        if (p[-1] == '/' && ++slashes == 2) break;
        p--;
    }
    return p;
}

static void run_script(runner *rn, const char *wast) {
    script_report rep;
    memset(&rep, 0, sizeof rep);

    /* NAME.json next to NAME.N.wasm, in the (emptied) work directory. */
    const char *base = strrchr(wast, '/');
    base = base ? base + 1 : wast;
    size_t stem_len = strlen(base);
    if (stem_len > 5 && strcmp(base + stem_len - 5, ".wast") == 0) stem_len -= 5;
    char json_name[NAME_MAX + 8];
    format_text(json_name, sizeof json_name, "%.*s.json", (int)(stem_len < NAME_MAX ? stem_len : NAME_MAX), base);
    char json_path[PATH_MAX];

    empty_workdir(rn->workdir);
    /* Every suite but multi-memory's was written for one memory (2.0's rule, which the
     * memory64 proposal's scripts still test: "multiple memories"). */
    rn->single_memory = !strstr(wast, "/proposals/multi-memory/");
    char why[512];
    if (!join_path(json_path, sizeof json_path, rn->workdir, json_name)) {
        record_failure(rn, &rep, 0, "runner", "path too long");
    } else if (!convert(rn, wast, json_path, why, sizeof why)) {
        record_failure(rn, &rep, 0, "wast2json", why);
    } else {
        json_error_t jerr;
        json_t *root = json_load_file(json_path, JSON_ALLOW_NUL, &jerr);
        rn->doc = root;
        const json_t *commands = json_object_get(root, "commands");
        if (!root) {
            snprintf(why, sizeof why, "%s (line %d)", jerr.text, jerr.line);
            record_failure(rn, &rep, 0, "json", why);
        } else if (!json_is_array(commands)) {
            record_failure(rn, &rep, 0, "json", "no \"commands\" array");
        } else {
            execute_commands(rn, commands, &rep);
        }
        json_decref(root);
        rn->doc = NULL;
    }
    empty_workdir(rn->workdir);

    printf("%s: %" PRIu64 " passed, %" PRIu64 " failed, %" PRIu64 " skipped\n", display_name(wast),
           rep.counts.passed, rep.counts.failed, rep.counts.skipped);
    if (rn->opts.verbose && rep.details.len) fputs(rep.details.data, stdout);
    fflush(stdout);
    rn->total.passed += rep.counts.passed;
    rn->total.failed += rep.counts.failed;
    rn->total.skipped += rep.counts.skipped;
    strbuf_free(&rep.details);
}

/* ---- main ------------------------------------------------------------------------- */

typedef struct path_list {
    char **items;
    size_t count, cap;
} path_list;

static bool path_list_add(path_list *list, const char *path) {
    char **grown = grow(list->items, &list->cap, list->count, sizeof *grown);
    if (!grown) return false;
    list->items = grown;
    char *copy = strdup(path);
    if (!copy) return false;
    list->items[list->count++] = copy;
    return true;
}

static void path_list_free(path_list *list) {
    for (size_t i = 0; i < list->count; i++) free(list->items[i]);
    free(list->items);
}

static int is_wast(const struct dirent *e) {
    size_t len = strlen(e->d_name);
    return len > 5 && strcmp(e->d_name + len - 5, ".wast") == 0;
}

/* Adds DIR/SUB/\*.wast in name order. */
static bool add_folder(path_list *list, const char *testsuite_dir, const char *sub) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", testsuite_dir, sub);
    struct dirent **entries;
    int n = scandir(dir, &entries, is_wast, alphasort);
    if (n < 0) {
        fprintf(stderr, "ri-spec: cannot read %s: %s\n", dir, strerror(errno));
        return false;
    }
    bool ok = n > 0;
    if (!ok) fprintf(stderr, "ri-spec: no .wast files in %s\n", dir);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (ok && (!join_path(path, sizeof path, dir, entries[i]->d_name) || !path_list_add(list, path))) ok = false;
        free(entries[i]);
    }
    free(entries);
    return ok;
}

/* The suites --all runs: 2.0's core and SIMD, and the proposals of 3.0 the engine implements
 * (the threads proposal's scripts are not run: shared memories are refused). */
static const char *const all_suites[] = {"core",
                                         "simd",
                                         "proposals/extended-const",
                                         "proposals/tail-call",
                                         "proposals/exception-handling",
                                         "proposals/multi-memory",
                                         "proposals/memory64"};

static bool add_testsuite(path_list *list, const char *testsuite_dir) {
    bool ok = true;
    for (size_t i = 0; i < sizeof all_suites / sizeof *all_suites; i++)
        ok = add_folder(list, testsuite_dir, all_suites[i]) && ok;
    return ok;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: ri-spec [--no-canonicalize] [--unmetered] [--fusions-off LIST] [--verbose] [--timeout SEC] FILE.wast...\n"
            "       ri-spec [options] --all [--testsuite DIR]\n"
            "\n"
            "Runs WebAssembly spec test scripts (converted with %s) against the engine.\n"
            "  --all               every script of core/, simd/ and the implemented proposals/\n"
            "  --testsuite DIR     the wasm-testsuite folder (default %s/wasm-testsuite)\n"
            "  --no-canonicalize   run with NaN canonicalisation off\n"
            "  --unmetered         load modules without gas metering (ri_module_config.unmetered)\n"
            "  --fusions-off LIST  compile without these fusion families (comma-separated names, or all)\n"
            "  --verbose, -v       print every failure\n"
            "  --timeout SEC       per-command time limit (default %u; 0 = none)\n",
            RI_WAST2JSON, RI_SHARED_DIR, DEFAULT_TIMEOUT_SECONDS);
}

static bool make_workdir(runner *rn) {
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    int n = snprintf(rn->workdir, sizeof rn->workdir, "%s/ri-spec.XXXXXX", tmp);
    if (n < 0 || (size_t)n >= sizeof rn->workdir || !mkdtemp(rn->workdir)) {
        fprintf(stderr, "ri-spec: cannot create a directory under %s: %s\n", tmp, strerror(errno));
        return false;
    }
    return true;
}

int main(int argc, char **argv) {
    runner rn;
    memset(&rn, 0, sizeof rn);
    rn.opts.canonicalize = true;
    rn.opts.timeout_seconds = DEFAULT_TIMEOUT_SECONDS;
    rn.opts.testsuite_dir = RI_SHARED_DIR "/wasm-testsuite";
    path_list files = {0};
    int status = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--no-canonicalize") == 0) rn.opts.canonicalize = false;
        else if (strcmp(a, "--unmetered") == 0) rn.opts.unmetered = true;
        else if (strcmp(a, "--fusions-off") == 0 && i + 1 < argc) {
            if (!ri_fusion_parse(argv[++i], &rn.opts.fusions_off)) {
                fprintf(stderr, "ri-spec: bad --fusions-off %s (names: immediate, compare-branch, ..., or all)\n", argv[i]);
                return 2;
            }
        }
        else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) rn.opts.verbose = true;
        else if (strcmp(a, "--all") == 0) rn.opts.all = true;
        else if (strcmp(a, "--testsuite") == 0 && i + 1 < argc) rn.opts.testsuite_dir = argv[++i];
        else if (strcmp(a, "--timeout") == 0 && i + 1 < argc) {
            uint64_t t;
            if (!parse_u64(argv[++i], &t) || t > UINT_MAX) {
                fprintf(stderr, "ri-spec: bad --timeout %s\n", argv[i]);
                return 2;
            }
            rn.opts.timeout_seconds = (unsigned)t;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "ri-spec: unknown option %s\n", a);
            usage(stderr);
            path_list_free(&files);
            return 2;
        } else if (!path_list_add(&files, a)) {
            fprintf(stderr, "ri-spec: out of memory\n");
            path_list_free(&files);
            return 2;
        }
    }
    if (rn.opts.all && !add_testsuite(&files, rn.opts.testsuite_dir)) status = 2;
    if (status == 0 && files.count == 0) {
        usage(stderr);
        status = 2;
    }
    if (status == 0 && !make_workdir(&rn)) status = 2;
    if (status != 0) {
        path_list_free(&files);
        return status;
    }

    for (size_t i = 0; i < files.count; i++) run_script(&rn, files.items[i]);
    rmdir(rn.workdir);

    if (rn.opts.verbose && rn.nfail_tags) {
        printf("failures by kind:");
        for (size_t i = 0; i < rn.nfail_tags; i++)
            printf("%s %s %" PRIu64, i ? "," : "", rn.fail_tags[i].tag, rn.fail_tags[i].count);
        printf("\n");
    }
    printf("%" PRIu64 " passed, %" PRIu64 " failed, %" PRIu64 " skipped\n", rn.total.passed, rn.total.failed,
           rn.total.skipped);
    free(rn.fail_tags);
    path_list_free(&files);
    return rn.total.failed ? 1 : 0;
}
