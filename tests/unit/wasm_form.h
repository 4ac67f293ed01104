/*
 * A reader of the WebAssembly column (code.h, "The WebAssembly column"; ri_code_wasm): the
 * statements of a form as trees of instructions and operand references. For the column's
 * test (test_code_wasm.c) and the generator of the per-operation fixture (tests/wat/
 * opcol_gen.c). Header-only: each user is a program of its own.
 */
#ifndef WASM_FORM_H
#define WASM_FORM_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define WF_MAX_NODES 64
#define WF_MAX_ARGS 8
#define WF_MAX_STMTS 8

typedef struct wf_node {
    char ref;          /* an operand reference's kind letter (S, I, D, ...); 0: an instruction */
    uint32_t word;     /* the reference's operand word; an @Ik instruction's opcode word */
    char name[40];     /* the instruction's name; "" for @Ik */
    uint32_t nargs;
    uint32_t args[WF_MAX_ARGS]; /* node indices */
} wf_node;

typedef struct wf_stmt {
    char dst_kind;     /* D, W, ? for "Xk = EXPR"; 0 for an EXPR statement */
    uint32_t dst;      /* the written operand word */
    uint32_t expr;     /* node index */
} wf_stmt;

typedef struct wf_form {
    wf_node nodes[WF_MAX_NODES];
    uint32_t nnodes;
    wf_stmt stmts[WF_MAX_STMTS];
    uint32_t nstmts;
    const char *error; /* NULL when the form reads */
} wf_form;

typedef struct wf_reader {
    const char *s;
    wf_form *f;
} wf_reader;

static inline bool wf_fail(wf_reader *r, const char *why) {
    if (!r->f->error) r->f->error = why;
    return false;
}

static inline bool wf_number(wf_reader *r, uint32_t *out) {
    if (!isdigit((unsigned char)*r->s)) return wf_fail(r, "an operand reference without its word");
    uint32_t v = 0;
    while (isdigit((unsigned char)*r->s)) v = v * 10 + (uint32_t)(*r->s++ - '0');
    *out = v;
    return true;
}

/* EXPR: a reference (one kind letter or '?', then digits) or NAME(EXPR, ...) / @Ik(...). */
static inline bool wf_expr(wf_reader *r, uint32_t *index) {
    if (r->f->nnodes == WF_MAX_NODES) return wf_fail(r, "too many nodes");
    uint32_t at = r->f->nnodes++;
    wf_node *n = &r->f->nodes[at];
    memset(n, 0, sizeof *n);
    *index = at;
    const char *start = r->s;
    if (*r->s == '@') {
        r->s++;
        if (*r->s++ != 'I') return wf_fail(r, "@ wants an I reference");
        if (!wf_number(r, &n->word)) return false;
    } else {
        size_t len = 0;
        while (isupper((unsigned char)r->s[len]) || isdigit((unsigned char)r->s[len]) || r->s[len] == '_' ||
               r->s[len] == '?')
            len++;
        if (len == 0) return wf_fail(r, "an expression expected");
        if (r->s[len] != '(') { /* a reference */
            if (len < 2 || isdigit((unsigned char)r->s[0]) || !isdigit((unsigned char)r->s[1]))
                return wf_fail(r, "a reference is one kind letter and a word");
            n->ref = *r->s++;
            return wf_number(r, &n->word);
        }
        if (len >= sizeof n->name) return wf_fail(r, "name too long");
        memcpy(n->name, start, len);
        r->s += len;
    }
    if (*r->s++ != '(') return wf_fail(r, "( expected");
    while (*r->s != ')') {
        if (n->nargs == WF_MAX_ARGS) return wf_fail(r, "too many arguments");
        if (n->nargs && (r->s[0] != ',' || r->s[1] != ' ')) return wf_fail(r, "\", \" expected");
        if (n->nargs) r->s += 2;
        uint32_t arg;
        if (!wf_expr(r, &arg)) return false;
        r->f->nodes[at].args[r->f->nodes[at].nargs++] = arg;
    }
    r->s++;
    return true;
}

/* Reads form s into *f; false (and f->error) if it does not read. "" has no statements. */
static inline bool wf_parse(const char *s, wf_form *f) {
    memset(f, 0, sizeof *f);
    wf_reader r = {s, f};
    while (*r.s) {
        if (f->nstmts == WF_MAX_STMTS) return wf_fail(&r, "too many statements");
        wf_stmt *st = &f->stmts[f->nstmts++];
        const char *eq = strstr(r.s, " = "), *semi = strstr(r.s, "; ");
        if (eq && (!semi || eq < semi)) {
            st->dst_kind = *r.s++;
            if (!wf_number(&r, &st->dst)) return false;
            if (strncmp(r.s, " = ", 3) != 0) return wf_fail(&r, "\" = \" expected");
            r.s += 3;
        }
        if (!wf_expr(&r, &st->expr)) return false;
        if (*r.s == 0) break;
        if (strncmp(r.s, "; ", 2) != 0) return wf_fail(&r, "\"; \" expected");
        r.s += 2;
    }
    return true;
}

/* The instructions of the form (nodes that are no reference). */
static inline uint32_t wf_count_instructions(const wf_form *f) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->nnodes; i++) n += f->nodes[i].ref == 0;
    return n;
}

/* The kind (code.h's letters) of operand word k of an operation of kinds `kinds` (fixed
 * operands only: what precedes a C count), 'l' the second word of an L; 0 past them. */
static inline char wf_kind_at(const char *kinds, uint32_t k) {
    uint32_t w = 1;
    for (const char *c = kinds; *c && *c != '*'; c++) {
        if (w == k) return *c;
        if (*c == 'L') {
            if (++w == k) return 'l';
        }
        w++;
    }
    return 0;
}

#endif
