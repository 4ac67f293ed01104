/* setjmp/longjmp as C programs use them for error recovery (tests/cli/test_realprog.sh).
 *
 * A recursive-descent calculator evaluates generated expressions; errors deep in the
 * recursion (division by zero, overflow, syntax) longjmp to the setjmp of the line being
 * evaluated, across many frames. Nested setjmps: a "fatal" error skips the rest of a batch,
 * longjmping past the line's own setjmp to the batch's; the line's function has two setjmp
 * call sites (a retry). Callbacks: a qsort comparator (called from libc's qsort) and a
 * function-pointer visitor longjmp out of the code that called them. longjmp(env, 0) makes
 * setjmp return 1.
 *
 * For wasm32-wasi it is built with clang's `-mllvm -wasm-enable-sjlj` (WebAssembly exception
 * handling), tests/realprog/wasm_setjmp.h and our runtime wasm_sjlj_runtime.c; natively
 * with <setjmp.h>.
 *
 *   sjlj [LINES]        (default 2400)
 */
#ifdef __wasm__
#include "wasm_setjmp.h"
#else
#include <setjmp.h>
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ERR_DIV0 = 2, ERR_SYNTAX, ERR_OVERFLOW, ERR_DEPTH, ERR_FATAL };

static uint32_t seed = 12345u;
static uint32_t rnd(void) {
    seed = seed * 1103515245u + 12345u;
    return seed >> 8;
}

/* ---- the calculator ---- */
static jmp_buf line_env, batch_env;
static const char *src;
static int depth, max_depth_seen;

static _Noreturn void fail(int code) { longjmp(line_env, code); }

static int64_t checked(int64_t v) {
    if (v > INT32_MAX || v < INT32_MIN) fail(ERR_OVERFLOW);
    return v;
}

static int64_t expr(void);

static int64_t factor(void) {
    if (++depth > 60) fail(ERR_DEPTH);
    if (depth > max_depth_seen) max_depth_seen = depth;
    int64_t v;
    char c = *src;
    if (c == '#') longjmp(batch_env, ERR_FATAL); /* past the line's setjmp */
    if (c == '(') {
        src++;
        v = expr();
        if (*src != ')') fail(ERR_SYNTAX);
        src++;
    } else if (c == '-') {
        src++;
        v = checked(-factor());
    } else if (c >= '0' && c <= '9') {
        v = 0;
        while (*src >= '0' && *src <= '9') v = checked(v * 10 + (*src++ - '0'));
    } else {
        fail(ERR_SYNTAX);
    }
    depth--;
    return v;
}

static int64_t term(void) {
    int64_t v = factor();
    for (;;) {
        char op = *src;
        if (op != '*' && op != '/' && op != '%') return v;
        src++;
        int64_t r = factor();
        if (op != '*' && r == 0) fail(ERR_DIV0);
        v = checked(op == '*' ? v * r : op == '/' ? v / r : v % r);
    }
}

static int64_t expr(void) {
    int64_t v = term();
    while (*src == '+' || *src == '-') {
        char op = *src++;
        int64_t r = term();
        v = checked(op == '+' ? v + r : v - r);
    }
    return v;
}

/* ---- generated expressions: mostly valid, sometimes dividing by zero, unbalanced, deep or
 * holding the fatal '#' ---- */
static char line[4096];
static int pos;

static void gen(int d) {
    if (pos > (int)sizeof line - 64) {
        line[pos++] = '1';
        return;
    }
    uint32_t r = rnd() % 100;
    if (d > 9 || r < 35) {
        pos += snprintf(line + pos, 16, "%u", rnd() % (r < 3 ? 100000 : 50));
    } else if (r < 45) {
        line[pos++] = '(';
        gen(d + 1);
        if (rnd() % 40) line[pos++] = ')';
    } else if (r < 50) {
        line[pos++] = '-';
        gen(d + 1);
    } else {
        gen(d + 1);
        line[pos++] = "+-*/%+-*"[rnd() % 8];
        gen(d + 1);
    }
}

static void make_line(int n) {
    pos = 0;
    if (n % 97 == 13) { /* a tower of parentheses: deeper than the calculator allows, sometimes */
        int k = 40 + (int)(rnd() % 30);
        for (int i = 0; i < k; i++) line[pos++] = '(';
        line[pos++] = '7';
        for (int i = 0; i < k; i++) line[pos++] = ')';
    } else {
        gen(0);
    }
    if (n % 211 == 100) line[pos / 2] = '#';
    line[pos] = 0;
}

/* One line: the result, or the error code from a longjmp. A division by zero is retried
 * once with every '/' and '%' turned into '+' (the second setjmp of this function). */
static int eval_line(int64_t *out, int *retried) {
    volatile int retry = 0;
    int code = setjmp(line_env);
    if (code == ERR_DIV0 && !retry) {
        retry = 1;
        for (char *p = line; *p; p++)
            if (*p == '/' || *p == '%') *p = '+';
        code = setjmp(line_env);
    }
    *retried = retry;
    if (code) return code;
    src = line;
    depth = 0;
    int64_t v = expr();
    if (*src) fail(ERR_SYNTAX);
    *out = v;
    return 0;
}

/* ---- callbacks that longjmp out of their caller ---- */
static jmp_buf cb_env;
static int bailouts;

static int cmp_poisoned(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    if (x == 666 || y == 666) {
        bailouts++;
        longjmp(cb_env, 0);
    } /* setjmp then returns 1 */
    return (x > y) - (x < y);
}

/* Sorts a copy with qsort and keeps it; when the comparator bails out (the copy's order
 * is then the libc's business), keeps the values as they were and digests them unordered. */
static uint64_t sort_digest(int64_t *v, int n) {
    static int64_t copy[64];
    memcpy(copy, v, (size_t)n * sizeof v[0]);
    if (setjmp(cb_env)) {
        uint64_t s = 0;
        for (int i = 0; i < n; i++) s += (uint64_t)v[i] * 0x9e3779b97f4a7c15u;
        return s ^ 1u;
    }
    qsort(copy, (size_t)n, sizeof copy[0], cmp_poisoned);
    memcpy(v, copy, (size_t)n * sizeof v[0]);
    uint64_t h = 14695981039346656037u;
    for (int i = 0; i < n; i++) h = (h ^ (uint64_t)v[i]) * 1099511628211u;
    return h;
}

static void visit(const int64_t *v, int n, void (*fn)(int64_t, void *), void *ctx) {
    for (int i = 0; i < n; i++) fn(v[i], ctx);
}
struct find {
    jmp_buf env;
    int64_t want;
    int seen;
};
static void find_cb(int64_t x, void *ctx) {
    struct find *f = ctx;
    f->seen++;
    if (x == f->want) longjmp(f->env, f->seen);
}
static int find_index(const int64_t *v, int n, int64_t want) {
    struct find f;
    f.want = want;
    f.seen = 0;
    int at = setjmp(f.env);
    if (at) return at - 1;
    visit(v, n, find_cb, &f);
    return -1;
}

int main(int argc, char **argv) {
    int lines = argc > 1 ? atoi(argv[1]) : 2400;
    /* (static: changed between setjmp(batch_env) and a longjmp to it) */
    static int errors[8], ok, retries, fatal, skipped;
    static int64_t sum;
    static int64_t results[64];
    static uint64_t digest;
    volatile int n = 0; /* changed after setjmp(batch_env): volatile */
    while (n < lines) {
        volatile int in_batch = 0;
        volatile int batch_start = n;
        if (setjmp(batch_env)) {
            fatal++;
            skipped += 32 - in_batch;
            n = batch_start + 32;
            continue;
        }
        int count = 0;
        for (; in_batch < 32 && n < lines; in_batch++, n++) {
            make_line(n);
            int64_t v = 0;
            int retried;
            int code = eval_line(&v, &retried);
            retries += retried;
            if (code) {
                errors[code]++;
            } else {
                ok++;
                sum += v;
                results[count++] = v;
            }
        }
        if (count > 5 && n % 3 == 0) results[count / 2] = 666;
        digest = digest * 31 + sort_digest(results, count);
        int at = find_index(results, count, results[count / 3]);
        digest += (uint64_t)at;
        if (n % 320 == 0)
            printf("after %d lines: ok %d, sum %" PRId64 ", digest %016" PRIx64 "\n", n, ok, sum, digest);
    }
    printf("lines %d ok %d syntax %d overflow %d depth %d fatal %d (skipped %d) div0 retried %d\n", lines, ok,
           errors[ERR_SYNTAX], errors[ERR_OVERFLOW], errors[ERR_DEPTH], fatal, skipped, retries);
    printf("sum %" PRId64 " digest %016" PRIx64 " deepest %d bailouts %d\n", sum, digest, max_depth_seen, bailouts);
    return 0;
}
