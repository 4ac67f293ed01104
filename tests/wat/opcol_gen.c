/*
 * Writes opcol.wat, the fixture of tests/unit/test_opcol.c, from the operation table's
 * WebAssembly column (ri_code_wasm, code.h "The WebAssembly column"). For every operation
 * (but variants, which the contexts below make) whose form uses numeric, load, store and
 * br_if instructions only, it writes the form as a function of its
 * slot operands (parameters; constants and memory offsets as written below), exported as
 *   s:<OP>  straight-line (an operation without a branch): returns the values the form
 *           writes that nothing in it reads back;
 *   f:<OP>  its branch forward, out of a block (metered: the _FG variant; unmetered: plain),
 *           returning those values and whether the branch was taken;
 *   b:<OP>  its branch back to the header of a loop that runs at most 4 times (metered: _BG,
 *           unmetered: _BU), returning those values and the trips.
 * A result that the form reads back once is written where it is read (a temporary of the
 * operand stack, as the compiler fuses it); one read more often goes through a local.
 * The build runs it (CMakeLists.txt): opcol_gen > build/wat/opcol.wat.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/code_info.h"
#include "engine/opcodes.h"
#include "../unit/wasm_form.h"

typedef struct wasm_instr {
    const char *name;
    int in1, in2, out; /* ri_valtype, 0: none (a memory instruction: in2 is the value type) */
    int memory;        /* 1 a load, 2 a store */
} wasm_instr;

static const wasm_instr instrs[] = {
#define RI_X_NUM(name, byte, a, b, r) {#name, RI_T_##a, RI_T_##b, RI_T_##r, 0},
#define RI_X_MEM(name, byte, t, n, st) {#name, RI_I32, RI_T_##t, (st) ? 0 : RI_T_##t, (st) ? 2 : 1},
#define RI_X_SAT(name, sub, a, b, r) RI_X_NUM(name, sub, a, b, r)
    RI_NUMERIC_OPS(RI_X_NUM) RI_SAT_OPS(RI_X_SAT) RI_MEMORY_OPS(RI_X_MEM)
#undef RI_X_SAT
#undef RI_X_NUM
#undef RI_X_MEM
};

static const wasm_instr *find_instr(const char *name) {
    for (size_t i = 0; i < sizeof instrs / sizeof instrs[0]; i++)
        if (strcmp(instrs[i].name, name) == 0) return &instrs[i];
    return NULL;
}

static const char *type_name(int t) {
    return t == RI_I32 ? "i32" : t == RI_I64 ? "i64" : t == RI_F32 ? "f32" : t == RI_F64 ? "f64" : "?";
}

/* I32_ADD -> i32.add */
static void text_name(const char *name, char *out) {
    size_t i = 0;
    int dotted = 0;
    for (; name[i]; i++) {
        char c = (char)tolower((unsigned char)name[i]);
        if (c == '_' && !dotted) { c = '.'; dotted = 1; }
        out[i] = c;
    }
    out[i] = 0;
}

typedef struct gen {
    const wf_form *f;
    int param_type[32];   /* by operand word: the type of slot operand k, 0 if not a parameter */
    int param_addr[32];   /* 1: an address (the inputs are addresses) */
    int result_type[32];  /* by word: the type of result k */
    int reads[32];        /* how many times the form reads result k back */
    int in_local[32];     /* result k lives in a local */
    int nimm;             /* immediates written so far */
    const char *target;   /* the branch's label */
    char buf[4096];
    size_t len;
    int ok;
} gen;

static void put(gen *g, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g->buf + g->len, sizeof g->buf - g->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof g->buf - g->len) g->ok = 0;
    else g->len += (size_t)n;
}

/* The constant for the form's next immediate, of type t, for instruction `user`: a shift
 * count past the width for shifts, else values away from the identities. */
static void put_imm(gen *g, int t, const char *user) {
    static const long long values[] = {8, -3, 0x7f0, 100003, -2147483647LL - 1, 12};
    long long v = values[g->nimm++ % (sizeof values / sizeof values[0])];
    if (strstr(user, "SH") || strstr(user, "ROT")) v = t == RI_I64 ? 67 : 35;
    put(g, "(%s.const %lld)", type_name(t), v);
}

/* Node n, whose value is wanted of type t (0: a statement); returns n's type. */
static int emit(gen *g, uint32_t n, int t, int addr, const char *user);

static int emit_ref(gen *g, const wf_node *n, int t, int addr, const char *user) {
    switch (n->ref) {
    case 'S':
        if (!t) { g->ok = 0; return 0; }
        if (g->param_type[n->word] && g->param_type[n->word] != t) g->ok = 0;
        g->param_type[n->word] = t;
        g->param_addr[n->word] |= addr;
        put(g, "(local.get $s%u)", n->word);
        return t;
    case 'I':
        if (t != RI_I32 && t != RI_I64) { g->ok = 0; return 0; }
        put_imm(g, t, user);
        return t;
    case 'D':
        if (g->in_local[n->word]) {
            put(g, "(local.get $d%u)", n->word);
            return g->result_type[n->word];
        }
        for (uint32_t s = 0; s < g->f->nstmts; s++) /* read once: computed here */
            if (g->f->stmts[s].dst_kind == 'D' && g->f->stmts[s].dst == n->word) return emit(g, g->f->stmts[s].expr, t, addr, user);
        g->ok = 0;
        return 0;
    default: g->ok = 0; return 0;
    }
}

static int emit(gen *g, uint32_t index, int t, int addr, const char *user) {
    const wf_node *n = &g->f->nodes[index];
    if (n->ref) return emit_ref(g, n, t, addr, user);
    char text[48];
    text_name(n->name, text);
    if (strcmp(n->name, "BR_IF") == 0) {
        if (n->nargs != 2 || g->f->nodes[n->args[0]].ref != 'O' || !g->target) { g->ok = 0; return 0; }
        put(g, "(br_if %s ", g->target);
        emit(g, n->args[1], RI_I32, 0, n->name);
        put(g, ")");
        return 0;
    }
    const wasm_instr *in = find_instr(n->name);
    if (!in) { g->ok = 0; return 0; }
    if (in->memory) {
        if (n->nargs != (uint32_t)in->memory + 1 || g->f->nodes[n->args[0]].ref != 'M') { g->ok = 0; return 0; }
        put(g, "(%s offset=4 ", text);
        emit(g, n->args[1], RI_I32, 1, n->name);
        if (in->memory == 2) { put(g, " "); emit(g, n->args[2], in->in2, 0, n->name); }
        put(g, ")");
    } else {
        if (n->nargs != (in->in2 ? 2u : 1u)) { g->ok = 0; return 0; }
        /* an i32.add's operands are an address when its sum is */
        int operand_addr = addr && strcmp(n->name, "I32_ADD") == 0;
        put(g, "(%s ", text);
        emit(g, n->args[0], in->in1, operand_addr, n->name);
        if (in->in2) { put(g, " "); emit(g, n->args[1], in->in2, operand_addr, n->name); }
        put(g, ")");
    }
    if (t && in->out != t) g->ok = 0;
    return in->out;
}

/* The type an expression computes, without writing it. */
static int expr_type(const wf_form *f, uint32_t index) {
    const wf_node *n = &f->nodes[index];
    if (n->ref) return 0;
    const wasm_instr *in = find_instr(n->name);
    return in ? in->out : 0;
}

/* The function of op in context ctx ('s', 'f', 'b'); 0 if the form is beyond this generator. */
static bool write_func(const char *name, const wf_form *f, char ctx, FILE *out) {
    gen g;
    memset(&g, 0, sizeof g);
    g.f = f;
    g.ok = 1;
    g.target = ctx == 'f' ? "$B" : ctx == 'b' ? "$L" : NULL;
    for (uint32_t i = 0; i < f->nnodes; i++)
        if (f->nodes[i].ref == 'D') g.reads[f->nodes[i].word]++;
    for (uint32_t s = 0; s < f->nstmts; s++) {
        const wf_stmt *st = &f->stmts[s];
        if (!st->dst_kind) continue;
        if (st->dst_kind != 'D') return false;
        g.result_type[st->dst] = expr_type(f, st->expr);
        if (f->nodes[st->expr].ref == 'S') g.result_type[st->dst] = RI_I32; /* a MOVE: of an i32 here */
        g.in_local[st->dst] = g.reads[st->dst] != 1;
    }
    /* the body first (it finds the parameters' types) */
    const char *indent = ctx == 's' ? "    " : "      ";
    for (uint32_t s = 0; s < f->nstmts; s++) {
        const wf_stmt *st = &f->stmts[s];
        if (st->dst_kind && !g.in_local[st->dst]) continue; /* written where it is read */
        put(&g, "%s", indent);
        if (st->dst_kind) {
            put(&g, "(local.set $d%u ", st->dst);
            emit(&g, st->expr, g.result_type[st->dst], 0, "");
            put(&g, ")\n");
        } else {
            if (emit(&g, st->expr, 0, 0, "") != 0) return false;
            put(&g, "\n");
        }
    }
    if (!g.ok) return false;
    fprintf(out, "  (func (export \"%c:%s\")", ctx, name);
    for (int k = 0; k < 32; k++)
        if (g.param_type[k]) fprintf(out, " (param $s%d %s)", k, type_name(g.param_type[k]));
    fprintf(out, " (result");
    for (int k = 0; k < 32; k++)
        if (g.result_type[k] && g.in_local[k]) fprintf(out, " %s", type_name(g.result_type[k]));
    fprintf(out, "%s)\n", ctx == 's' ? "" : " i32");
    for (int k = 0; k < 32; k++)
        if (g.result_type[k] && g.in_local[k]) fprintf(out, "    (local $d%d %s)\n", k, type_name(g.result_type[k]));
    if (ctx == 'f') {
        fprintf(out, "    (local $t i32)\n    (local.set $t (i32.const 1))\n    (block $B\n");
        fprintf(out, "%.*s      (local.set $t (i32.const 0)))\n", (int)g.len, g.buf);
    } else if (ctx == 'b') {
        fprintf(out, "    (local $t i32)\n    (block $out\n      (loop $L\n");
        fprintf(out, "        (local.set $t (i32.add (local.get $t) (i32.const 1)))\n");
        fprintf(out, "        (br_if $out (i32.gt_u (local.get $t) (i32.const 3)))\n");
        fprintf(out, "%.*s      ))\n", (int)g.len, g.buf);
    } else {
        fprintf(out, "%.*s", (int)g.len, g.buf);
    }
    for (int k = 0; k < 32; k++)
        if (g.result_type[k] && g.in_local[k]) fprintf(out, "    (local.get $d%d)\n", k);
    if (ctx != 's') fprintf(out, "    (local.get $t)\n");
    fprintf(out, "  )\n");
    return true;
}

int main(void) {
    FILE *out = stdout;
    fprintf(out, ";; Generated by tests/wat/opcol_gen.c from the operation table's WebAssembly column: do not edit.\n");
    fprintf(out, "(module\n  (memory (export \"memory\") 1)\n");
    /* i32 values that the test's inputs are often equal to (test_opcol.c), then other bytes */
    static const int32_t small[] = {0, 1, -1, 8, -3, 5, -11, 16};
    fprintf(out, "  (data (i32.const 0) \"");
    for (int i = 0; i < 64; i++)
        for (int b = 0; b < 4; b++) fprintf(out, "\\%02x", ((uint32_t)small[i % 8] >> (8 * b)) & 0xFF);
    for (int i = 0; i < 256; i++) fprintf(out, "\\%02x", (unsigned)(i * 37 + 11) & 0xFF);
    fprintf(out, "\")\n");
    for (uint32_t op = 0; op < RI_CODE_OP_COUNT; op++) {
        if (ri_code_infos[op].base != op) continue; /* variants: by context */
        bool branch = (ri_code_flags(op) & RI_OPF_BRANCH) != 0;
        if (ri_code_wasm_count(op) == 0) continue; /* no instruction of its own, or a copy */
        wf_form f;
        if (!wf_parse(ri_code_wasm(op), &f)) return 1;
        bool written = branch ? write_func(ri_code_names[op], &f, 'f', out) && write_func(ri_code_names[op], &f, 'b', out)
                              : write_func(ri_code_names[op], &f, 's', out);
        if (!written) /* instructions beyond numeric, memory and br_if ones */
            fprintf(out, "  ;; not generated: %s \"%s\"\n", ri_code_names[op], ri_code_wasm(op));
    }
    fprintf(out, ")\n");
    return 0;
}
