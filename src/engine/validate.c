/*
 * Validation of a decoded module (WebAssembly 2.0 without SIMD instructions).
 *
 * Function bodies follow the specification's validation algorithm (appendix
 * "Validation Algorithm"): an operand stack of value types, where VT_UNKNOWN stands
 * for any type in stack-polymorphic code, and a control stack of frames. The stacks
 * live in one `validator` and are reused for every body, so validating allocates only
 * when a body needs deeper stacks than any before it.
 *
 * Errors start with the testsuite's text ("type mismatch", "unknown local", ...) and
 * go on with a detail naming the function and the byte offset of the instruction.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "instr.h"
#include "module.h"
#include "runtime.h"
#include "simd.h"

/* The type of an operand whose type is unconstrained (popped from the empty operand
 * stack of unreachable code). Not a valtype byte. */
#define VT_UNKNOWN 0x00

/* The operand stack is bounded by the code in reachable code, but multi-value blocks
 * in unreachable code can grow it faster than the code; this caps the memory a
 * hostile body can make the validator use. */
#define MAX_OPERAND_STACK (1u << 24)

#define DEFAULT_MAX_LOCALS 50000u
#define DEFAULT_MAX_BLOCK_DEPTH 65536u
#define MAX_MEMORY_PAGES 65536u

/* Leaves room for the " (function N, offset 0x...)" detail in an ri_error message. */
#define DETAIL_ROOM 48

/* ---- instruction signatures, from the opcode tables ------------------------- */

typedef struct numeric_sig {
    uint8_t in1, in2, out; /* in2 == 0: unary; out == 0: not a numeric opcode */
} numeric_sig;

#define SIG_ENTRY(name, byte, a, b, r) [byte] = {RI_T_##a, RI_T_##b, RI_T_##r},
static const numeric_sig numeric_sigs[256] = {RI_NUMERIC_OPS(SIG_ENTRY)};
static const numeric_sig sat_sigs[8] = {RI_SAT_OPS(SIG_ENTRY)};
#undef SIG_ENTRY

typedef struct memory_sig {
    uint8_t type;
    uint8_t max_align; /* log2 of the access size: the natural alignment */
    uint8_t is_store;
} memory_sig;

#define LOG2_BYTES(n) ((n) == 8 ? 3 : (n) == 4 ? 2 : (n) == 2 ? 1 : 0)
#define MEM_ENTRY(name, byte, t, n, st) [(byte) - RI_OP_I32_LOAD] = {RI_T_##t, LOG2_BYTES(n), st},
static const memory_sig memory_sigs[RI_OP_I64_STORE32 - RI_OP_I32_LOAD + 1] = {RI_MEMORY_OPS(MEM_ENTRY)};
#undef MEM_ENTRY
#undef LOG2_BYTES

/* Upper-case names from the tables, turned into "i32.trunc_f32_s" form on demand
 * (only when an error message needs one). */
#define NAME_ENTRY(name, byte, ...) [byte] = #name,
static const char *const numeric_names[256] = {RI_NUMERIC_OPS(NAME_ENTRY) RI_MEMORY_OPS(NAME_ENTRY)};
static const char *const sat_names[8] = {RI_SAT_OPS(NAME_ENTRY)};
#undef NAME_ENTRY

typedef struct name_buf {
    char text[32];
} name_buf;

static const char *table_name(const char *upper, name_buf *buf) {
    size_t i = 0;
    bool dotted = false;
    for (; upper[i] && i + 1 < sizeof buf->text; i++) {
        char c = upper[i];
        if (c == '_' && !dotted) {
            c = '.';
            dotted = true;
        } else if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        buf->text[i] = c;
    }
    buf->text[i] = '\0';
    return buf->text;
}

/* What an operand check is about: an opcode (< 0x10000) or the end of a frame. */
enum {
    WHAT_FRAME_END = 0x10000, /* + frame kind */
};

enum frame_kind { K_FUNC, K_BLOCK, K_LOOP, K_IF, K_ELSE, K_TRY, K_CATCH, K_CATCH_ALL };

static const char *what_name(uint32_t what, name_buf *buf) {
    if (what >= WHAT_FRAME_END) {
        switch (what - WHAT_FRAME_END) {
        case K_FUNC: return "end of function";
        case K_BLOCK: return "end of block";
        case K_LOOP: return "end of loop";
        case K_IF: return "end of if";
        case K_ELSE: return "end of else";
        case K_TRY: return "end of try";
        case K_CATCH: return "end of catch";
        case K_CATCH_ALL: return "end of catch_all";
        default: return "end";
        }
    }
    if (what <= 0xFF && numeric_names[what]) return table_name(numeric_names[what], buf);
    if (what >= RI_FC(0) && what < RI_FC(8)) return table_name(sat_names[what - RI_FC(0)], buf);
    return ri_opcode_name((uint16_t)what);
}

static const char *valtype_name(uint8_t t) {
    switch (t) {
    case RI_I32: case RI_I64: case RI_F32: case RI_F64: case RI_V128: case RI_FUNCREF: case RI_EXTERNREF: case RI_EXNREF:
        return ri_valtype_name((ri_valtype)t);
    case VT_UNKNOWN: return "unknown";
    default: return "?";
    }
}

/* "i32 i64 ..." for at most 6 types (the last ones when there are more). */
static void format_types(char *buf, size_t cap, const uint8_t *types, uint32_t n) {
    size_t len = 0;
    buf[0] = '\0';
    uint32_t first = 0;
    if (n > 6) {
        first = n - 6;
        int w = snprintf(buf, cap, "...%u more", first);
        len = w > 0 && (size_t)w < cap ? (size_t)w : cap - 1;
    }
    for (uint32_t i = first; i < n && len + 1 < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", len ? " " : "", valtype_name(types[i]));
        if (w < 0) break;
        len += (size_t)w;
        if (len >= cap) { len = cap - 1; break; }
    }
}

static bool is_num(uint8_t t) { return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64; }
static bool is_ref(uint8_t t) { return t == RI_FUNCREF || t == RI_EXTERNREF || t == RI_EXNREF; }

static const uint8_t no_types[1] = {0};
static const uint8_t single_types[] = {RI_I32, RI_I64, RI_F32, RI_F64, RI_V128, RI_FUNCREF, RI_EXTERNREF, RI_EXNREF};
static const uint8_t i32_x3[3] = {RI_I32, RI_I32, RI_I32};

/* A one-element type list for a block type's single result. */
static const uint8_t *single_type(uint8_t t) {
    for (size_t i = 0; i < sizeof single_types; i++)
        if (single_types[i] == t) return &single_types[i];
    return no_types;
}

static bool same_types(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
    if (na != nb) return false;
    for (uint32_t i = 0; i < na; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* ---- the validator ---------------------------------------------------------- */

typedef struct frame {
    const uint8_t *params, *results;
    uint32_t nparams, nresults;
    uint32_t height;   /* operand stack height at entry (params excluded) */
    uint8_t kind;      /* enum frame_kind */
    bool unreachable;
} frame;

typedef struct validator {
    const ri_module *m;
    ri_error *err;

    uint8_t *vals;
    uint32_t nvals, vals_cap;
    frame *ctrls;
    uint32_t nctrls, ctrls_cap;
    uint32_t max_depth;

    /* the body being validated */
    uint32_t func_index;       /* in the function index space */
    uint32_t offset;           /* of the current instruction */
    const ri_type *type;
    const uint8_t *local_types; /* declared locals, after the params */
    uint32_t nlocals;           /* params included */

    /* ri_validate_stack_at: stop before the instruction at probe_offset */
    bool probing, probe_hit;
    uint32_t probe_offset;
} validator;

static ri_errcode body_error(validator *v, ri_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static ri_errcode body_error(validator *v, ri_errcode code, const char *fmt, ...) {
    char msg[RI_ERROR_MESSAGE_MAX - DETAIL_ROOM];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ri_error_set(v->err, code, "%s (function %u, offset 0x%x)", msg, v->func_index, v->offset);
    return code;
}

static ri_errcode nomem(validator *v) {
    ri_error_set(v->err, RI_ERR_NOMEM, "out of memory while validating");
    return RI_ERR_NOMEM;
}

/* Makes room for n more operands. */
static ri_errcode reserve_vals(validator *v, uint32_t n) {
    uint64_t need = (uint64_t)v->nvals + n;
    if (need <= v->vals_cap) return RI_OK;
    if (need > MAX_OPERAND_STACK)
        return body_error(v, RI_ERR_LIMIT, "operand stack deeper than %u values", MAX_OPERAND_STACK);
    uint64_t cap = v->vals_cap ? (uint64_t)v->vals_cap * 2 : 256;
    while (cap < need) cap *= 2;
    if (cap > MAX_OPERAND_STACK) cap = MAX_OPERAND_STACK;
    uint8_t *p = realloc(v->vals, (size_t)cap);
    if (!p) return nomem(v);
    v->vals = p;
    v->vals_cap = (uint32_t)cap;
    return RI_OK;
}

static inline frame *top_frame(validator *v) { return &v->ctrls[v->nctrls - 1]; }

/* Mismatch between the `n` expected types and the operands: shows the top `show`
 * operands of the current frame. */
static ri_errcode mismatch(validator *v, uint32_t what, const uint8_t *expected, uint32_t n, uint32_t show) {
    frame *f = top_frame(v);
    uint32_t avail = v->nvals - f->height;
    if (show > avail) show = avail;
    char want[80], got[80];
    name_buf nb;
    format_types(want, sizeof want, expected, n);
    format_types(got, sizeof got, v->vals + v->nvals - show, show);
    return body_error(v, RI_ERR_INVALID, "type mismatch: %s expects [%s], got [%s]",
                      what_name(what, &nb), want, got);
}

/* Checks that the top operands match `types` (the last one on top), as popping them
 * would, without popping. */
static ri_errcode check_top(validator *v, const uint8_t *types, uint32_t n, uint32_t what) {
    frame *f = top_frame(v);
    uint32_t avail = v->nvals - f->height;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t expected = types[n - 1 - i];
        if (i < avail) {
            uint8_t actual = v->vals[v->nvals - 1 - i];
            if (actual != expected && actual != VT_UNKNOWN) return mismatch(v, what, types, n, n);
        } else if (!f->unreachable) {
            return mismatch(v, what, types, n, n);
        }
    }
    return RI_OK;
}

static ri_errcode pop_types(validator *v, const uint8_t *types, uint32_t n, uint32_t what) {
    ri_errcode rc = check_top(v, types, n, what);
    if (rc) return rc;
    uint32_t avail = v->nvals - top_frame(v)->height;
    v->nvals -= n < avail ? n : avail;
    return RI_OK;
}

static inline ri_errcode pop_type(validator *v, uint8_t type, uint32_t what) {
    frame *f = top_frame(v);
    if (v->nvals > f->height && v->vals[v->nvals - 1] == type) {
        v->nvals--;
        return RI_OK;
    }
    return pop_types(v, single_type(type), 1, what);
}

/* Pops an operand of any type into *type (VT_UNKNOWN from the polymorphic stack). */
static ri_errcode pop_any(validator *v, uint8_t *type, uint32_t what) {
    frame *f = top_frame(v);
    if (v->nvals > f->height) {
        *type = v->vals[--v->nvals];
        return RI_OK;
    }
    if (f->unreachable) {
        *type = VT_UNKNOWN;
        return RI_OK;
    }
    name_buf nb;
    return body_error(v, RI_ERR_INVALID, "type mismatch: %s expects an operand, got []", what_name(what, &nb));
}

/* Callers reserved room (every instruction reserves a few slots up front). */
static inline void push(validator *v, uint8_t type) { v->vals[v->nvals++] = type; }

static ri_errcode push_types(validator *v, const uint8_t *types, uint32_t n) {
    ri_errcode rc = reserve_vals(v, n);
    if (rc) return rc;
    for (uint32_t i = 0; i < n; i++) v->vals[v->nvals++] = types[i];
    return RI_OK;
}

static ri_errcode push_frame(validator *v, uint8_t kind, const uint8_t *params, uint32_t np,
                             const uint8_t *results, uint32_t nr) {
    /* the function's own frame is not a nesting level */
    if (v->nctrls > v->max_depth)
        return body_error(v, RI_ERR_LIMIT, "blocks nested deeper than %u", v->max_depth);
    if (v->nctrls == v->ctrls_cap) {
        uint64_t cap = v->ctrls_cap ? (uint64_t)v->ctrls_cap * 2 : 32;
        if (cap > UINT32_MAX || cap > SIZE_MAX / sizeof(frame)) return nomem(v);
        frame *p = realloc(v->ctrls, (size_t)cap * sizeof *p);
        if (!p) return nomem(v);
        v->ctrls = p;
        v->ctrls_cap = (uint32_t)cap;
    }
    frame *f = &v->ctrls[v->nctrls++];
    f->params = params;
    f->nparams = np;
    f->results = results;
    f->nresults = nr;
    f->height = v->nvals;
    f->kind = kind;
    f->unreachable = false;
    return push_types(v, params, np);
}

/* Checks that the frame's operands are exactly its results, and pops them. */
static ri_errcode end_frame(validator *v) {
    frame *f = top_frame(v);
    uint32_t what = WHAT_FRAME_END + f->kind;
    uint32_t avail = v->nvals - f->height;
    if (avail > f->nresults || (avail < f->nresults && !f->unreachable))
        return mismatch(v, what, f->results, f->nresults, avail);
    ri_errcode rc = check_top(v, f->results, f->nresults, what);
    if (rc) return rc;
    v->nvals = f->height;
    return RI_OK;
}

static void set_unreachable(validator *v) {
    frame *f = top_frame(v);
    v->nvals = f->height;
    f->unreachable = true;
}

static inline void label_types(const frame *f, const uint8_t **types, uint32_t *n) {
    if (f->kind == K_LOOP) {
        *types = f->params;
        *n = f->nparams;
    } else {
        *types = f->results;
        *n = f->nresults;
    }
}

static const ri_type *func_type(const ri_module *m, uint32_t func_index) {
    return &m->types[m->func_types[func_index]];
}

static inline const uint8_t *type_list(const uint8_t *p) { return p ? p : no_types; }

/* A try_table's clause i: its label's types must be what it branches with, the tag's values
 * (catch, catch_ref) and an exnref (catch_ref, catch_all_ref). No subtyping among the
 * engine's reference types: the types must be the same. */
static ri_errcode check_catch_clause(validator *v, ri_catch_clause c, uint32_t i) {
    static const char *const names[] = {"catch", "catch_ref", "catch_all", "catch_all_ref"};
    const uint8_t *tp = no_types;
    uint32_t ntp = 0;
    if (c.kind == RI_CATCH_TAG || c.kind == RI_CATCH_TAG_REF) {
        if (c.tag >= v->m->ntags) return body_error(v, RI_ERR_INVALID, "unknown tag %u", c.tag);
        const ri_type *t = &v->m->types[v->m->tag_types[c.tag]];
        tp = type_list(t->params);
        ntp = t->nparams;
    }
    bool ref = c.kind == RI_CATCH_TAG_REF || c.kind == RI_CATCH_ALL_REF;
    if (c.label >= v->nctrls) return body_error(v, RI_ERR_INVALID, "unknown label %u", c.label);
    const uint8_t *want;
    uint32_t nwant;
    label_types(&v->ctrls[v->nctrls - 1 - c.label], &want, &nwant);
    if (nwant == (uint64_t)ntp + ref && same_types(want, ntp, tp, ntp) && (!ref || want[ntp] == RI_EXNREF)) return RI_OK;
    char a[96], b[96];
    format_types(a, sizeof a, want, nwant);
    format_types(b, sizeof b, tp, ntp);
    return body_error(v, RI_ERR_INVALID, "type mismatch: try_table clause %u (%s) branches with [%s%s%s] to label %u of type [%s]",
                      i, names[c.kind], b, ref && ntp ? " " : "", ref ? "exnref" : "", c.label, a);
}

static uint8_t local_type(const validator *v, uint32_t index) {
    uint32_t np = v->type->nparams;
    return index < np ? v->type->params[index] : v->local_types[index - np];
}

static ri_errcode need_memory(validator *v) {
    if (v->m->nmemories == 0) return body_error(v, RI_ERR_INVALID, "unknown memory 0");
    return RI_OK;
}

/* The memory an instruction names, and its address type (i64 for a 64-bit memory). */
static ri_errcode need_memory_at(validator *v, uint32_t index, uint8_t *addr_type) {
    if (index >= v->m->nmemories) return body_error(v, RI_ERR_INVALID, "unknown memory %u", index);
    *addr_type = v->m->memories[index].is64 ? RI_I64 : RI_I32;
    return RI_OK;
}

/* memory.size, .grow, .fill, .copy, .init: where WebAssembly 2.0 has reserved zero bytes
 * (ri_module_config.single_memory) the memory indices must be exactly those. */
static ri_errcode need_memidx_bytes(validator *v, const ri_instr *in) {
    if (v->m->config.single_memory && !in->memidx_zero_bytes)
        return body_error(v, RI_ERR_MALFORMED, "zero byte expected");
    return RI_OK;
}

static ri_errcode need_table(validator *v, uint32_t index) {
    if (index >= v->m->ntables) return body_error(v, RI_ERR_INVALID, "unknown table %u", index);
    return RI_OK;
}

/* memory.init and data.drop need the data count section: a *decoding* rule. A module
 * with no data segments at all gets "unknown data segment" instead: that is what its
 * text form (from which tools such as wast2json drop the empty data count) is. */
static bool data_count_missing(const ri_module *m) { return !m->has_data_count && m->ndatas > 0; }

static ri_errcode need_data(validator *v, uint32_t index) {
    if (data_count_missing(v->m))
        return body_error(v, RI_ERR_MALFORMED, "data count section required");
    uint32_t count = v->m->has_data_count ? v->m->data_count : 0;
    if (index >= count) return body_error(v, RI_ERR_INVALID, "unknown data segment %u", index);
    return RI_OK;
}

static ri_errcode block_signature(validator *v, const ri_blocktype *bt, const uint8_t **params, uint32_t *np,
                                  const uint8_t **results, uint32_t *nr) {
    switch (bt->kind) {
    case RI_BLOCK_EMPTY:
        *params = *results = no_types;
        *np = *nr = 0;
        return RI_OK;
    case RI_BLOCK_VALTYPE:
        *params = no_types;
        *np = 0;
        *results = single_type(bt->valtype);
        *nr = 1;
        return RI_OK;
    case RI_BLOCK_TYPEIDX:
        if (bt->type_index >= v->m->ntypes)
            return body_error(v, RI_ERR_INVALID, "unknown type %u", bt->type_index);
        const ri_type *t = &v->m->types[bt->type_index];
        *params = type_list(t->params);
        *np = t->nparams;
        *results = type_list(t->results);
        *nr = t->nresults;
        return RI_OK;
    }
    return body_error(v, RI_ERR_MALFORMED, "malformed block type");
}

static ri_errcode validate_br_table(validator *v, const ri_instr *in, const uint8_t *body_end) {
    ri_errcode rc = pop_type(v, RI_I32, in->op);
    if (rc) return rc;
    ri_reader r;
    ri_reader_init(&r, v->m->bytes, in->imm.br_table.targets, body_end);
    uint32_t arity = 0;
    const uint8_t *checked = NULL; /* the label types last checked: labels often repeat */
    uint32_t nchecked = 0;
    const uint8_t *types = no_types;
    uint32_t n = 0;
    for (uint64_t i = 0; i <= in->imm.br_table.count; i++) {
        uint32_t depth = ri_read_u32(&r);
        if (r.failed) return body_error(v, RI_ERR_MALFORMED, "%s", r.error);
        if (depth >= v->nctrls) return body_error(v, RI_ERR_INVALID, "unknown label %u", depth);
        label_types(&v->ctrls[v->nctrls - 1 - depth], &types, &n);
        if (i == 0) arity = n;
        else if (n != arity)
            return body_error(v, RI_ERR_INVALID, "type mismatch: br_table targets of arities %u and %u", arity, n);
        if (types == checked && n == nchecked) continue;
        /* Every target must accept the operands; in unreachable code they may be
         * unknown, which each target accepts separately (they are not refined). */
        rc = check_top(v, types, n, in->op);
        if (rc) return rc;
        checked = types;
        nchecked = n;
    }
    /* the last target read is the default */
    rc = pop_types(v, types, n, in->op);
    if (rc) return rc;
    set_unreachable(v);
    return RI_OK;
}

static ri_errcode validate_numeric(validator *v, const numeric_sig *sig, uint32_t what) {
    frame *f = top_frame(v);
    uint32_t n = v->nvals;
    if (sig->in2) {
        if (n >= f->height + 2 && v->vals[n - 1] == sig->in2 && v->vals[n - 2] == sig->in1) {
            v->vals[n - 2] = sig->out;
            v->nvals = n - 1;
            return RI_OK;
        }
        const uint8_t ins[2] = {sig->in1, sig->in2};
        ri_errcode rc = pop_types(v, ins, 2, what);
        if (rc) return rc;
    } else {
        if (n >= f->height + 1 && v->vals[n - 1] == sig->in1) {
            v->vals[n - 1] = sig->out;
            return RI_OK;
        }
        ri_errcode rc = pop_types(v, &sig->in1, 1, what);
        if (rc) return rc;
    }
    push(v, sig->out);
    return RI_OK;
}

static ri_errcode validate_memory_op(validator *v, const ri_instr *in) {
    const memory_sig *sig = &memory_sigs[in->op - RI_OP_I32_LOAD];
    uint8_t at = RI_I32;
    ri_errcode rc = need_memory(v);
    if (rc || (rc = need_memory_at(v, in->imm.mem.memidx, &at))) return rc;
    if (at == RI_I32 && in->imm.mem.offset32_error) return body_error(v, RI_ERR_MALFORMED, "%s", in->imm.mem.offset32_error);
    if (in->imm.mem.align > sig->max_align) {
        name_buf nb;
        return body_error(v, RI_ERR_INVALID, "alignment must not be larger than natural: %s with 2**%u > 2**%u",
                          what_name(in->op, &nb), in->imm.mem.align, sig->max_align);
    }
    if (sig->is_store) {
        const uint8_t ins[2] = {at, sig->type};
        return pop_types(v, ins, 2, in->op);
    }
    if ((rc = pop_type(v, at, in->op))) return rc;
    push(v, sig->type);
    return RI_OK;
}

/* A 0xFD instruction (simd.h gives its shape). */
static ri_errcode validate_simd(validator *v, const ri_instr *in) {
    static const uint8_t v1[1] = {RI_V128}, v2[2] = {RI_V128, RI_V128}, v3[3] = {RI_V128, RI_V128, RI_V128},
                         vi[2] = {RI_V128, RI_I32};
    uint8_t at = RI_I32; /* the address type of the memory a load or store names */
    ri_simd_info si = ri_simd_info_of(in->op & 0xFFu);
    ri_errcode rc;
    uint32_t lanes = si.n;
    switch ((ri_simd_shape)si.shape) {
    case RI_SIMD_LOAD: case RI_SIMD_STORE: case RI_SIMD_LOAD_LANE: case RI_SIMD_STORE_LANE:
        if ((rc = need_memory(v)) || (rc = need_memory_at(v, in->imm.simd.mem.memidx, &at))) return rc;
        if (at == RI_I32 && in->imm.simd.mem.offset32_error)
            return body_error(v, RI_ERR_MALFORMED, "%s", in->imm.simd.mem.offset32_error);
        if (in->imm.simd.mem.align > si.n)
            return body_error(v, RI_ERR_INVALID, "alignment must not be larger than natural: SIMD 0x%x with 2**%u > 2**%u",
                              in->op & 0xFFu, in->imm.simd.mem.align, si.n);
        if (si.shape == RI_SIMD_LOAD_LANE || si.shape == RI_SIMD_STORE_LANE) {
            if (in->imm.simd.lane >= (16u >> si.n))
                return body_error(v, RI_ERR_INVALID, "invalid lane index %u", in->imm.simd.lane);
        }
        const uint8_t av[2] = {at, RI_V128};
        if (si.shape == RI_SIMD_LOAD) {
            if ((rc = pop_type(v, at, in->op))) return rc;
        } else if ((rc = pop_types(v, av, 2, in->op))) {
            return rc;
        }
        if (si.shape == RI_SIMD_LOAD || si.shape == RI_SIMD_LOAD_LANE) push(v, RI_V128);
        return RI_OK;
    case RI_SIMD_CONST: push(v, RI_V128); return RI_OK;
    case RI_SIMD_SHUFFLE:
        for (int i = 0; i < 16; i++)
            if (in->imm.simd.bytes[i] >= 32) return body_error(v, RI_ERR_INVALID, "invalid lane index %u", in->imm.simd.bytes[i]);
        if ((rc = pop_types(v, v2, 2, in->op))) return rc;
        push(v, RI_V128);
        return RI_OK;
    case RI_SIMD_UN: case RI_SIMD_TEST:
        if ((rc = pop_types(v, v1, 1, in->op))) return rc;
        push(v, si.shape == RI_SIMD_TEST ? RI_I32 : RI_V128);
        return RI_OK;
    case RI_SIMD_BIN: case RI_SIMD_TERN: case RI_SIMD_SHIFT:
        if ((rc = pop_types(v, si.shape == RI_SIMD_BIN ? v2 : si.shape == RI_SIMD_TERN ? v3 : vi,
                            si.shape == RI_SIMD_TERN ? 3 : 2, in->op)))
            return rc;
        push(v, RI_V128);
        return RI_OK;
    case RI_SIMD_SPLAT:
        if ((rc = pop_type(v, si.type, in->op))) return rc;
        push(v, RI_V128);
        return RI_OK;
    case RI_SIMD_EXTRACT: case RI_SIMD_REPLACE:
        if (in->imm.simd.lane >= lanes) return body_error(v, RI_ERR_INVALID, "invalid lane index %u", in->imm.simd.lane);
        if (si.shape == RI_SIMD_EXTRACT) {
            if ((rc = pop_types(v, v1, 1, in->op))) return rc;
            push(v, si.type);
        } else {
            const uint8_t sig[2] = {RI_V128, si.type};
            if ((rc = pop_types(v, sig, 2, in->op))) return rc;
            push(v, RI_V128);
        }
        return RI_OK;
    case RI_SIMD_NONE: break;
    }
    return body_error(v, RI_ERR_MALFORMED, "illegal opcode 0xfd 0x%x", in->op & 0xFFu);
}

#define NUMERIC_CASE(name, byte, ...) case byte:
#define SAT_CASE(name, sub, ...) case RI_FC(sub):

/* One instruction: a single switch over every opcode, so that the dispatch is one
 * indirect jump. */
static inline ri_errcode validate_instr(validator *v, const ri_instr *in, ri_reader *r) {
    const ri_module *m = v->m;
    ri_errcode rc = RI_OK;
    uint8_t t1 = VT_UNKNOWN, t2 = VT_UNKNOWN;
    switch (in->op) {
    RI_NUMERIC_OPS(NUMERIC_CASE)
        return validate_numeric(v, &numeric_sigs[in->op], in->op);
    RI_MEMORY_OPS(NUMERIC_CASE)
        return validate_memory_op(v, in);
    RI_SAT_OPS(SAT_CASE)
        return validate_numeric(v, &sat_sigs[in->op - RI_FC(0)], in->op);
    case RI_OP_UNREACHABLE:
        set_unreachable(v);
        return RI_OK;
    case RI_OP_NOP:
        return RI_OK;
    case RI_OP_BLOCK: case RI_OP_LOOP: case RI_OP_IF: {
        const uint8_t *params, *results;
        uint32_t np, nr;
        if ((rc = block_signature(v, &in->imm.block, &params, &np, &results, &nr))) return rc;
        if (in->op == RI_OP_IF && (rc = pop_type(v, RI_I32, in->op))) return rc;
        if ((rc = pop_types(v, params, np, in->op))) return rc;
        uint8_t kind = in->op == RI_OP_BLOCK ? K_BLOCK : in->op == RI_OP_LOOP ? K_LOOP : K_IF;
        return push_frame(v, kind, params, np, results, nr);
    }
    case RI_OP_ELSE: {
        frame *f = top_frame(v);
        if (f->kind != K_IF) return body_error(v, RI_ERR_MALFORMED, "END opcode expected (else without if)");
        if ((rc = end_frame(v))) return rc;
        f->kind = K_ELSE;
        f->unreachable = false;
        return push_types(v, f->params, f->nparams);
    }
    case RI_OP_END: {
        frame *f = top_frame(v);
        if ((rc = end_frame(v))) return rc;
        /* an `if` without `else` has an empty else branch: it must map params to results */
        if (f->kind == K_IF && !same_types(f->params, f->nparams, f->results, f->nresults)) {
            char want[80], got[80];
            format_types(want, sizeof want, f->results, f->nresults);
            format_types(got, sizeof got, f->params, f->nparams);
            return body_error(v, RI_ERR_INVALID, "type mismatch: if without else expects [%s], got [%s]",
                              want, got);
        }
        const uint8_t *results = f->results;
        uint32_t nr = f->nresults;
        v->nctrls--;
        if (v->nctrls == 0) return RI_OK;
        return push_types(v, results, nr);
    }
    case RI_OP_BR: case RI_OP_BR_IF: {
        uint32_t depth = in->imm.index;
        if (depth >= v->nctrls) return body_error(v, RI_ERR_INVALID, "unknown label %u", depth);
        if (in->op == RI_OP_BR_IF && (rc = pop_type(v, RI_I32, in->op))) return rc;
        const uint8_t *types;
        uint32_t n;
        label_types(&v->ctrls[v->nctrls - 1 - depth], &types, &n);
        if ((rc = pop_types(v, types, n, in->op))) return rc;
        if (in->op == RI_OP_BR) {
            set_unreachable(v);
            return RI_OK;
        }
        return push_types(v, types, n);
    }
    case RI_OP_BR_TABLE:
        return validate_br_table(v, in, r->end);
    case RI_OP_RETURN:
        if ((rc = pop_types(v, type_list(v->type->results), v->type->nresults, in->op))) return rc;
        set_unreachable(v);
        return RI_OK;
    case RI_OP_CALL: {
        if (in->imm.index >= m->nfuncs) return body_error(v, RI_ERR_INVALID, "unknown function %u", in->imm.index);
        const ri_type *t = func_type(m, in->imm.index);
        if ((rc = pop_types(v, type_list(t->params), t->nparams, in->op))) return rc;
        return push_types(v, type_list(t->results), t->nresults);
    }
    case RI_OP_CALL_INDIRECT: {
        uint32_t table = in->imm.call_indirect.table_index, type = in->imm.call_indirect.type_index;
        if ((rc = need_table(v, table))) return rc;
        if (type >= m->ntypes) return body_error(v, RI_ERR_INVALID, "unknown type %u", type);
        if (m->tables[table].elem != RI_FUNCREF)
            return body_error(v, RI_ERR_INVALID, "type mismatch: call_indirect needs a funcref table, table %u is %s",
                              table, valtype_name((uint8_t)m->tables[table].elem));
        const ri_type *t = &m->types[type];
        if ((rc = pop_type(v, RI_I32, in->op))) return rc;
        if ((rc = pop_types(v, type_list(t->params), t->nparams, in->op))) return rc;
        return push_types(v, type_list(t->results), t->nresults);
    }
    case RI_OP_TRY: {
        const uint8_t *params, *results;
        uint32_t np, nr;
        if ((rc = block_signature(v, &in->imm.block, &params, &np, &results, &nr))) return rc;
        if ((rc = pop_types(v, params, np, in->op))) return rc;
        return push_frame(v, K_TRY, params, np, results, nr);
    }
    case RI_OP_TRY_TABLE: {
        const uint8_t *params, *results;
        uint32_t np, nr;
        if ((rc = block_signature(v, &in->imm.block, &params, &np, &results, &nr))) return rc;
        /* the clauses' labels are counted from the block around the try_table */
        for (uint32_t i = 0; i < in->catches.count; i++)
            if ((rc = check_catch_clause(v, ri_try_table_clause(in, i), i))) return rc;
        if ((rc = pop_types(v, params, np, in->op))) return rc;
        return push_frame(v, K_BLOCK, params, np, results, nr);
    }
    case RI_OP_THROW_REF:
        if ((rc = pop_type(v, RI_EXNREF, in->op))) return rc;
        set_unreachable(v);
        return RI_OK;
    case RI_OP_CATCH: case RI_OP_CATCH_ALL: {
        frame *f = top_frame(v);
        if (f->kind != K_TRY && f->kind != K_CATCH)
            return body_error(v, RI_ERR_INVALID, "%s without try (or after catch_all)", ri_opcode_name(in->op));
        const ri_type *t = NULL;
        if (in->op == RI_OP_CATCH) {
            if (in->imm.index >= m->ntags) return body_error(v, RI_ERR_INVALID, "unknown tag %u", in->imm.index);
            t = &m->types[m->tag_types[in->imm.index]];
        }
        if ((rc = end_frame(v))) return rc;
        f->kind = in->op == RI_OP_CATCH ? K_CATCH : K_CATCH_ALL;
        f->unreachable = false;
        return t ? push_types(v, type_list(t->params), t->nparams) : RI_OK;
    }
    case RI_OP_DELEGATE: {
        frame *f = top_frame(v);
        if (f->kind != K_TRY) return body_error(v, RI_ERR_INVALID, "delegate without try");
        if ((rc = end_frame(v))) return rc;
        const uint8_t *results = f->results;
        uint32_t nr = f->nresults;
        v->nctrls--;
        /* the label is counted from the block around the try */
        if (in->imm.index >= v->nctrls) return body_error(v, RI_ERR_INVALID, "unknown label %u", in->imm.index);
        return push_types(v, results, nr);
    }
    case RI_OP_THROW: {
        if (in->imm.index >= m->ntags) return body_error(v, RI_ERR_INVALID, "unknown tag %u", in->imm.index);
        const ri_type *t = &m->types[m->tag_types[in->imm.index]];
        if ((rc = pop_types(v, type_list(t->params), t->nparams, in->op))) return rc;
        set_unreachable(v);
        return RI_OK;
    }
    case RI_OP_RETHROW: {
        uint32_t depth = in->imm.index;
        if (depth >= v->nctrls) return body_error(v, RI_ERR_INVALID, "unknown label %u", depth);
        uint8_t k = v->ctrls[v->nctrls - 1 - depth].kind;
        if (k != K_CATCH && k != K_CATCH_ALL) return body_error(v, RI_ERR_INVALID, "invalid rethrow label %u", depth);
        set_unreachable(v);
        return RI_OK;
    }
    case RI_OP_RETURN_CALL: case RI_OP_RETURN_CALL_INDIRECT: {
        /* The callee's results are the caller's: it returns in the caller's place. */
        const ri_type *t;
        if (in->op == RI_OP_RETURN_CALL) {
            if (in->imm.index >= m->nfuncs) return body_error(v, RI_ERR_INVALID, "unknown function %u", in->imm.index);
            t = func_type(m, in->imm.index);
        } else {
            uint32_t table = in->imm.call_indirect.table_index, type = in->imm.call_indirect.type_index;
            if ((rc = need_table(v, table))) return rc;
            if (type >= m->ntypes) return body_error(v, RI_ERR_INVALID, "unknown type %u", type);
            if (m->tables[table].elem != RI_FUNCREF)
                return body_error(v, RI_ERR_INVALID, "type mismatch: return_call_indirect needs a funcref table, table %u is %s",
                                  table, valtype_name((uint8_t)m->tables[table].elem));
            t = &m->types[type];
            if ((rc = pop_type(v, RI_I32, in->op))) return rc;
        }
        const ri_type *own = v->type;
        if (t->nresults != own->nresults ||
            (t->nresults && memcmp(t->results, own->results, t->nresults) != 0))
            return body_error(v, RI_ERR_INVALID, "type mismatch: %s calls a function whose results are not the caller's",
                              ri_opcode_name(in->op));
        if ((rc = pop_types(v, type_list(t->params), t->nparams, in->op))) return rc;
        set_unreachable(v);
        return RI_OK;
    }
    case RI_OP_DROP:
        return pop_any(v, &t1, in->op);
    case RI_OP_SELECT: case RI_OP_SELECT_T: {
        if (in->op == RI_OP_SELECT_T) {
            if (in->imm.select_t.count != 1)
                return body_error(v, RI_ERR_INVALID, "invalid result arity: select takes 1 type, got %u",
                                  in->imm.select_t.count);
            uint8_t t = in->imm.select_t.type;
            const uint8_t sig[3] = {t, t, RI_I32};
            if ((rc = pop_types(v, sig, 3, in->op))) return rc;
            push(v, t);
            return RI_OK;
        }
        if ((rc = pop_type(v, RI_I32, in->op))) return rc;
        if ((rc = pop_any(v, &t1, in->op)) || (rc = pop_any(v, &t2, in->op))) return rc;
        /* without a type immediate, only numeric (and vector) operands */
        bool ok1 = is_num(t1) || t1 == RI_V128 || t1 == VT_UNKNOWN;
        bool ok2 = is_num(t2) || t2 == RI_V128 || t2 == VT_UNKNOWN;
        if (!ok1 || !ok2 || (t1 != t2 && t1 != VT_UNKNOWN && t2 != VT_UNKNOWN))
            return body_error(v, RI_ERR_INVALID,
                              "type mismatch: select without type expects two equal numeric operands, got [%s %s]",
                              valtype_name(t2), valtype_name(t1));
        push(v, t1 == VT_UNKNOWN ? t2 : t1);
        return RI_OK;
    }
    case RI_OP_LOCAL_GET: case RI_OP_LOCAL_SET: case RI_OP_LOCAL_TEE: {
        if (in->imm.index >= v->nlocals) return body_error(v, RI_ERR_INVALID, "unknown local %u", in->imm.index);
        uint8_t t = local_type(v, in->imm.index);
        if (in->op != RI_OP_LOCAL_GET && (rc = pop_type(v, t, in->op))) return rc;
        if (in->op != RI_OP_LOCAL_SET) push(v, t);
        return RI_OK;
    }
    case RI_OP_GLOBAL_GET: case RI_OP_GLOBAL_SET: {
        if (in->imm.index >= m->nglobals) return body_error(v, RI_ERR_INVALID, "unknown global %u", in->imm.index);
        const ri_globaltype *g = &m->global_types[in->imm.index];
        if (in->op == RI_OP_GLOBAL_GET) {
            push(v, (uint8_t)g->type);
            return RI_OK;
        }
        if (!g->mutable_) return body_error(v, RI_ERR_INVALID, "global is immutable: global %u", in->imm.index);
        return pop_type(v, (uint8_t)g->type, in->op);
    }
    case RI_OP_TABLE_GET: case RI_OP_TABLE_SET: {
        if ((rc = need_table(v, in->imm.index))) return rc;
        uint8_t t = (uint8_t)m->tables[in->imm.index].elem;
        if (in->op == RI_OP_TABLE_GET) {
            if ((rc = pop_type(v, RI_I32, in->op))) return rc;
            push(v, t);
            return RI_OK;
        }
        const uint8_t sig[2] = {RI_I32, t};
        return pop_types(v, sig, 2, in->op);
    }
    case RI_OP_MEMORY_SIZE: {
        uint8_t at = RI_I32;
        if ((rc = need_memory(v)) || (rc = need_memidx_bytes(v, in)) || (rc = need_memory_at(v, in->memidx[0], &at)))
            return rc;
        push(v, at);
        return RI_OK;
    }
    case RI_OP_MEMORY_GROW: {
        uint8_t at = RI_I32;
        if ((rc = need_memory(v)) || (rc = need_memidx_bytes(v, in)) || (rc = need_memory_at(v, in->memidx[0], &at)) ||
            (rc = pop_type(v, at, in->op)))
            return rc;
        push(v, at);
        return RI_OK;
    }
    case RI_OP_I32_CONST: push(v, RI_I32); return RI_OK;
    case RI_OP_I64_CONST: push(v, RI_I64); return RI_OK;
    case RI_OP_F32_CONST: push(v, RI_F32); return RI_OK;
    case RI_OP_F64_CONST: push(v, RI_F64); return RI_OK;
    case RI_OP_REF_NULL:
        push(v, in->imm.reftype);
        return RI_OK;
    case RI_OP_REF_IS_NULL:
        if ((rc = pop_any(v, &t1, in->op))) return rc;
        if (!is_ref(t1) && t1 != VT_UNKNOWN)
            return body_error(v, RI_ERR_INVALID, "type mismatch: ref.is_null expects a reference, got [%s]",
                              valtype_name(t1));
        push(v, RI_I32);
        return RI_OK;
    case RI_OP_REF_FUNC:
        if (in->imm.index >= m->nfuncs) return body_error(v, RI_ERR_INVALID, "unknown function %u", in->imm.index);
        if (!m->func_declared || !m->func_declared[in->imm.index])
            return body_error(v, RI_ERR_INVALID, "undeclared function reference: function %u", in->imm.index);
        push(v, RI_FUNCREF);
        return RI_OK;
    case RI_FC(RI_FC_MEMORY_INIT): {
        uint8_t at = RI_I32;
        if ((rc = need_memory(v)) || (rc = need_memidx_bytes(v, in)) || (rc = need_memory_at(v, in->memidx[0], &at)) ||
            (rc = need_data(v, in->imm.index)))
            return rc;
        const uint8_t sig[3] = {at, RI_I32, RI_I32};
        return pop_types(v, sig, 3, in->op);
    }
    case RI_FC(RI_FC_DATA_DROP):
        return need_data(v, in->imm.index);
    case RI_FC(RI_FC_MEMORY_FILL): {
        uint8_t at = RI_I32;
        if ((rc = need_memory(v)) || (rc = need_memidx_bytes(v, in)) || (rc = need_memory_at(v, in->memidx[0], &at)))
            return rc;
        const uint8_t sig[3] = {at, RI_I32, at};
        return pop_types(v, sig, 3, in->op);
    }
    case RI_FC(RI_FC_MEMORY_COPY): {
        /* d has the destination's address type, s the source's, n the narrower one */
        uint8_t dt = RI_I32, st = RI_I32;
        if ((rc = need_memory(v)) || (rc = need_memidx_bytes(v, in)) || (rc = need_memory_at(v, in->memidx[0], &dt)) ||
            (rc = need_memory_at(v, in->memidx[1], &st)))
            return rc;
        const uint8_t sig[3] = {dt, st, dt == RI_I64 && st == RI_I64 ? RI_I64 : RI_I32};
        return pop_types(v, sig, 3, in->op);
    }
    case RI_FC(RI_FC_TABLE_INIT): {
        uint32_t elem = in->imm.pair.a, table = in->imm.pair.b;
        if ((rc = need_table(v, table))) return rc;
        if (elem >= m->nelems) return body_error(v, RI_ERR_INVALID, "unknown elem segment %u", elem);
        if (m->elems[elem].type != m->tables[table].elem)
            return body_error(v, RI_ERR_INVALID, "type mismatch: table.init of %s segment %u into %s table %u",
                              valtype_name((uint8_t)m->elems[elem].type), elem,
                              valtype_name((uint8_t)m->tables[table].elem), table);
        return pop_types(v, i32_x3, 3, in->op);
    }
    case RI_FC(RI_FC_ELEM_DROP):
        if (in->imm.index >= m->nelems)
            return body_error(v, RI_ERR_INVALID, "unknown elem segment %u", in->imm.index);
        return RI_OK;
    case RI_FC(RI_FC_TABLE_COPY): {
        uint32_t dst = in->imm.pair.a, src = in->imm.pair.b;
        if ((rc = need_table(v, dst)) || (rc = need_table(v, src))) return rc;
        if (m->tables[dst].elem != m->tables[src].elem)
            return body_error(v, RI_ERR_INVALID, "type mismatch: table.copy from %s table %u to %s table %u",
                              valtype_name((uint8_t)m->tables[src].elem), src,
                              valtype_name((uint8_t)m->tables[dst].elem), dst);
        return pop_types(v, i32_x3, 3, in->op);
    }
    case RI_FC(RI_FC_TABLE_GROW): case RI_FC(RI_FC_TABLE_FILL): {
        if ((rc = need_table(v, in->imm.index))) return rc;
        uint8_t t = (uint8_t)m->tables[in->imm.index].elem;
        if (in->op == RI_FC(RI_FC_TABLE_GROW)) {
            const uint8_t sig[2] = {t, RI_I32};
            if ((rc = pop_types(v, sig, 2, in->op))) return rc;
            push(v, RI_I32);
            return RI_OK;
        }
        const uint8_t sig[3] = {RI_I32, t, RI_I32};
        return pop_types(v, sig, 3, in->op);
    }
    case RI_FC(RI_FC_TABLE_SIZE):
        if ((rc = need_table(v, in->imm.index))) return rc;
        push(v, RI_I32);
        return RI_OK;
    default:
        if (RI_IS_FD(in->op)) return validate_simd(v, in);
        break;
    }
    return body_error(v, RI_ERR_MALFORMED, "illegal opcode 0x%x", in->op);
}

#undef NUMERIC_CASE
#undef SAT_CASE

/* The message for a body that is cut short. The reference interpreter reads on past
 * the body's declared size: at the end of the module it runs out ("unexpected end of
 * section or function"), elsewhere it finds some other byte where `end` must be. */
static const char *early_end_message(const validator *v, const ri_reader *r, uint32_t depth) {
    const uint8_t *module_end = v->m->bytes + v->m->size;
    if (r->end >= module_end) return "unexpected end of section or function";
    /* it would take the next byte for the function's `end` and find the section longer */
    if (depth == 1 && *r->end == RI_OP_END) return "section size mismatch";
    return "END opcode expected";
}

/* A malformed instruction's text; running out of bytes is reported as the reference
 * interpreter does inside a section. */
/* The error code of a failed read: a feature the engine lacks, or malformed bytes. */
static ri_errcode reader_errcode(const ri_reader *r) {
    return r->unsupported ? RI_ERR_UNSUPPORTED : RI_ERR_MALFORMED;
}

static const char *instr_error_message(const ri_reader *r) {
    if (!r->error) return "malformed instruction";
    if (strcmp(r->error, "unexpected end") == 0) return "unexpected end of section or function";
    return r->error;
}

static ri_errcode validate_body(validator *v, uint32_t body_index) {
    const ri_module *m = v->m;
    const ri_body *body = &m->bodies[body_index];
    v->func_index = m->nfunc_imports + body_index;
    v->offset = body->code.offset;
    v->type = func_type(m, v->func_index);
    v->local_types = body->local_types;

    uint64_t nlocals = (uint64_t)v->type->nparams + body->nlocals;
    uint32_t max_locals = m->config.max_locals ? m->config.max_locals : DEFAULT_MAX_LOCALS;
    if (nlocals > max_locals)
        return body_error(v, RI_ERR_LIMIT, "too many locals: %llu, the limit is %u",
                          (unsigned long long)nlocals, max_locals);
    v->nlocals = (uint32_t)nlocals;

    if ((uint64_t)body->code.offset + body->code.len > m->size)
        return body_error(v, RI_ERR_MALFORMED, "function body out of bounds");
    ri_reader r;
    const uint8_t *start = m->bytes + body->code.offset;
    ri_reader_init(&r, m->bytes, start, start + body->code.len);

    v->nvals = 0;
    v->nctrls = 0;
    ri_errcode rc = reserve_vals(v, 16); /* so the stack is never a null pointer */
    if (rc) return rc;
    rc = push_frame(v, K_FUNC, no_types, 0, type_list(v->type->results), v->type->nresults);
    if (rc) return rc;

    ri_instr in;
    while (v->nctrls > 0) {
        if (ri_reader_eof(&r)) {
            v->offset = ri_reader_offset(&r);
            return body_error(v, RI_ERR_MALFORMED, "%s: the body ends inside a block", early_end_message(v, &r, v->nctrls));
        }
        if (!ri_read_instr(&r, &in)) {
            v->offset = r.error_offset;
            return body_error(v, reader_errcode(&r), "%s", instr_error_message(&r));
        }
        v->offset = in.offset;
        if (__builtin_expect(v->probing, 0) && in.offset == v->probe_offset) {
            v->probe_hit = true;
            return RI_OK;
        }
        /* room for the single pushes of every instruction; multi-value pushes reserve more */
        if (v->vals_cap - v->nvals < 4 && (rc = reserve_vals(v, 4))) return rc;
        if ((rc = validate_instr(v, &in, &r))) return rc;
    }
    if (!ri_reader_eof(&r)) {
        v->offset = ri_reader_offset(&r);
        return body_error(v, RI_ERR_MALFORMED, "section size mismatch: bytes after the function's final end");
    }
    return RI_OK;
}

/* Doubles the operand stack without reporting failure (for the error path). */
static bool grow_quietly(validator *v) {
    uint64_t cap = v->vals_cap ? (uint64_t)v->vals_cap * 2 : 256;
    if (cap > UINT32_MAX) return false;
    uint8_t *p = realloc(v->vals, (size_t)cap);
    if (!p) return false;
    v->vals = p;
    v->vals_cap = (uint32_t)cap;
    return true;
}

/* After a validation error: the specification decodes the whole module before it
 * validates anything, so a malformed body anywhere (from body `from` on; the earlier
 * ones were fully read) must win. Replaces *err and returns true if one is found. */
static bool find_malformed_body(validator *v, uint32_t from) {
    const ri_module *m = v->m;
    for (uint32_t b = from; b < m->nbodies; b++) {
        const ri_body *body = &m->bodies[b];
        if ((uint64_t)body->code.offset + body->code.len > m->size) return false;
        v->func_index = m->nfunc_imports + b;
        ri_reader r;
        const uint8_t *start = m->bytes + body->code.offset;
        ri_reader_init(&r, m->bytes, start, start + body->code.len);
        /* nesting: the operand stack's bytes serve as a stack of frame kinds */
        v->nvals = 0;
        if (v->vals_cap == 0 && !grow_quietly(v)) return false;
        push(v, K_FUNC);
        ri_instr in;
        while (v->nvals > 0) {
            v->offset = ri_reader_offset(&r);
            if (ri_reader_eof(&r)) {
                body_error(v, RI_ERR_MALFORMED, "%s: the body ends inside a block", early_end_message(v, &r, v->nvals));
                return true;
            }
            if (!ri_read_instr(&r, &in)) {
                v->offset = r.error_offset;
                body_error(v, reader_errcode(&r), "%s", instr_error_message(&r));
                return true;
            }
            switch (in.op) {
            case RI_OP_BLOCK: case RI_OP_LOOP: case RI_OP_IF: case RI_OP_TRY: case RI_OP_TRY_TABLE:
                if (v->nvals == v->vals_cap && !grow_quietly(v)) return false;
                push(v, in.op == RI_OP_IF ? K_IF : K_BLOCK);
                break;
            case RI_OP_DELEGATE:
                v->nvals--;
                break;
            case RI_OP_ELSE:
                if (v->vals[v->nvals - 1] != K_IF) {
                    body_error(v, RI_ERR_MALFORMED, "END opcode expected (else without if)");
                    return true;
                }
                v->vals[v->nvals - 1] = K_ELSE;
                break;
            case RI_OP_END:
                v->nvals--;
                break;
            case RI_FC(RI_FC_MEMORY_INIT): case RI_FC(RI_FC_DATA_DROP):
                if (data_count_missing(m)) {
                    body_error(v, RI_ERR_MALFORMED, "data count section required");
                    return true;
                }
                break;
            default:
                break;
            }
        }
        if (!ri_reader_eof(&r)) {
            v->offset = ri_reader_offset(&r);
            body_error(v, RI_ERR_MALFORMED, "section size mismatch: bytes after the function's final end");
            return true;
        }
    }
    return false;
}

/* ---- module level ----------------------------------------------------------- */

static ri_errcode module_error(ri_error *err, ri_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static ri_errcode module_error(ri_error *err, ri_errcode code, const char *fmt, ...) {
    char msg[RI_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ri_error_set(err, code, "%s", msg);
    return code;
}

/* A constant expression: t.const, ref.null, ref.func, global.get of an immutable
 * imported global and (extended constant expressions, WebAssembly 3.0) i32/i64 add, sub
 * and mul, then end; exactly one value of type `expected` left. The operand stack is
 * tracked by type; its height is bounded by RI_CONST_EXPR_MAX_DEPTH (an implementation
 * limit, which ri_eval_const relies on). `what`/`index` name its place for messages
 * ("global", 3). */
static ri_errcode validate_const_expr(const ri_module *m, ri_expr expr, uint8_t expected, const char *what,
                                      uint32_t index, ri_error *err) {
    if ((uint64_t)expr.offset + expr.len > m->size)
        return module_error(err, RI_ERR_MALFORMED, "constant expression out of bounds (%s %u)", what, index);
    ri_reader r;
    const uint8_t *start = m->bytes + expr.offset;
    ri_reader_init(&r, m->bytes, start, start + expr.len);
    uint8_t got[RI_CONST_EXPR_MAX_DEPTH];
    uint32_t ngot = 0;
    ri_instr in;
    for (;;) {
        if (ri_reader_eof(&r))
            return module_error(err, RI_ERR_MALFORMED, "END opcode expected (%s %u, offset 0x%x)", what, index,
                                ri_reader_offset(&r));
        if (!ri_read_instr(&r, &in))
            return module_error(err, reader_errcode(&r), "%s (%s %u, offset 0x%x)",
                                r.error ? r.error : "malformed instruction", what, index, r.error_offset);
        if (in.op == RI_OP_END) break;
        uint8_t t;
        switch (in.op) {
        case RI_OP_I32_CONST: t = RI_I32; break;
        case RI_OP_I64_CONST: t = RI_I64; break;
        case RI_OP_F32_CONST: t = RI_F32; break;
        case RI_OP_F64_CONST: t = RI_F64; break;
        case RI_OP_REF_NULL: t = in.imm.reftype; break;
        case RI_FD(0x0C): t = RI_V128; break; /* v128.const */
        case RI_OP_I32_ADD: case RI_OP_I32_SUB: case RI_OP_I32_MUL:
        case RI_OP_I64_ADD: case RI_OP_I64_SUB: case RI_OP_I64_MUL: {
            t = in.op == RI_OP_I32_ADD || in.op == RI_OP_I32_SUB || in.op == RI_OP_I32_MUL ? RI_I32 : RI_I64;
            if (ngot < 2 || got[ngot - 1] != t || got[ngot - 2] != t) {
                name_buf nb;
                return module_error(err, RI_ERR_INVALID, "type mismatch: %s expects two %s operands (%s %u, offset 0x%x)",
                                    what_name(in.op, &nb), ri_valtype_name((ri_valtype)t), what, index, in.offset);
            }
            ngot -= 2;
            break;
        }
        case RI_OP_REF_FUNC:
            if (in.imm.index >= m->nfuncs)
                return module_error(err, RI_ERR_INVALID, "unknown function %u (%s %u, offset 0x%x)", in.imm.index,
                                    what, index, in.offset);
            t = RI_FUNCREF;
            break;
        case RI_OP_GLOBAL_GET:
            /* only imported globals are visible to constant expressions */
            if (in.imm.index >= m->nglobal_imports || in.imm.index >= m->nglobals)
                return module_error(err, RI_ERR_INVALID, "unknown global %u (%s %u, offset 0x%x)", in.imm.index,
                                    what, index, in.offset);
            if (m->global_types[in.imm.index].mutable_)
                return module_error(err, RI_ERR_INVALID,
                                    "constant expression required: global %u is mutable (%s %u, offset 0x%x)",
                                    in.imm.index, what, index, in.offset);
            t = (uint8_t)m->global_types[in.imm.index].type;
            break;
        default: {
            name_buf nb;
            return module_error(err, RI_ERR_INVALID, "constant expression required: %s is not constant (%s %u, offset 0x%x)",
                                what_name(in.op, &nb), what, index, in.offset);
        }
        }
        if (ngot == RI_CONST_EXPR_MAX_DEPTH)
            return module_error(err, RI_ERR_LIMIT, "constant expression deeper than %u values (%s %u, offset 0x%x)",
                                RI_CONST_EXPR_MAX_DEPTH, what, index, in.offset);
        got[ngot++] = t;
    }
    if (!ri_reader_eof(&r))
        return module_error(err, RI_ERR_MALFORMED, "section size mismatch: bytes after a constant expression (%s %u)",
                            what, index);
    if (ngot != 1 || got[0] != expected) {
        char gotbuf[80];
        format_types(gotbuf, sizeof gotbuf, got, ngot);
        return module_error(err, RI_ERR_INVALID, "type mismatch: constant expression expects [%s], got [%s] (%s %u)",
                            valtype_name(expected), gotbuf, what, index);
    }
    return RI_OK;
}

static ri_errcode validate_limits(const ri_limits *l, uint64_t range, const char *range_msg, const char *what,
                                  uint32_t index, ri_error *err) {
    if (l->min > range)
        return module_error(err, RI_ERR_INVALID, "%s: minimum %u (%s %u)", range_msg, l->min, what, index);
    if (l->has_max) {
        if (l->max > range)
            return module_error(err, RI_ERR_INVALID, "%s: maximum %u (%s %u)", range_msg, l->max, what, index);
        if (l->min > l->max)
            return module_error(err, RI_ERR_INVALID,
                                "size minimum must not be greater than maximum: %u > %u (%s %u)", l->min, l->max,
                                what, index);
    }
    return RI_OK;
}

static uint32_t hash_name(const uint8_t *p, uint32_t len) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (uint32_t i = 0; i < len; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* Export names must be unique: an open-addressing hash set of export indices. */
static ri_errcode validate_export_names(const ri_module *m, ri_error *err) {
    if (m->nexports < 2) return RI_OK;
    uint64_t cap = 4;
    while (cap < (uint64_t)m->nexports * 2) cap *= 2;
    uint32_t *slots = cap <= SIZE_MAX / sizeof(uint32_t) ? malloc((size_t)cap * sizeof *slots) : NULL;
    if (!slots) return module_error(err, RI_ERR_NOMEM, "out of memory while validating exports");
    memset(slots, 0xFF, (size_t)cap * sizeof *slots);
    ri_errcode rc = RI_OK;
    for (uint32_t i = 0; i < m->nexports && !rc; i++) {
        ri_span name = m->exports[i].name;
        const uint8_t *p = m->bytes + name.offset;
        for (uint64_t s = hash_name(p, name.len) & (cap - 1);; s = (s + 1) & (cap - 1)) {
            if (slots[s] == UINT32_MAX) {
                slots[s] = i;
                break;
            }
            ri_span other = m->exports[slots[s]].name;
            if (other.len == name.len && (name.len == 0 || memcmp(m->bytes + other.offset, p, name.len) == 0)) {
                rc = module_error(err, RI_ERR_INVALID, "duplicate export name \"%.*s\" (exports %u and %u)",
                                  (int)(name.len > 64 ? 64 : name.len), (const char *)p, slots[s], i);
                break;
            }
        }
    }
    free(slots);
    return rc;
}

static ri_errcode validate_exports(const ri_module *m, ri_error *err) {
    static const char *const kind_names[] = {"function", "table", "memory", "global", "tag"};
    for (uint32_t i = 0; i < m->nexports; i++) {
        const ri_export *e = &m->exports[i];
        uint32_t count;
        switch (e->kind) {
        case RI_EXTERN_FUNC: count = m->nfuncs; break;
        case RI_EXTERN_TABLE: count = m->ntables; break;
        case RI_EXTERN_MEMORY: count = m->nmemories; break;
        case RI_EXTERN_GLOBAL: count = m->nglobals; break;
        case RI_EXTERN_TAG: count = m->ntags; break;
        default: return module_error(err, RI_ERR_MALFORMED, "malformed export kind (export %u)", i);
        }
        if (e->index >= count)
            return module_error(err, RI_ERR_INVALID, "unknown %s %u (export %u)", kind_names[e->kind], e->index, i);
    }
    return validate_export_names(m, err);
}

static ri_errcode validate_types_and_imports(const ri_module *m, ri_error *err) {
    for (uint32_t i = 0; i < m->nimports; i++) {
        const ri_import *imp = &m->imports[i];
        if (imp->kind == RI_EXTERN_FUNC && imp->type_index >= m->ntypes)
            return module_error(err, RI_ERR_INVALID, "unknown type %u (import %u)", imp->type_index, i);
    }
    for (uint32_t f = 0; f < m->nfuncs; f++)
        if (m->func_types[f] >= m->ntypes)
            return module_error(err, RI_ERR_INVALID, "unknown type %u (function %u)", m->func_types[f], f);
    for (uint32_t t = 0; t < m->ntags; t++) {
        if (m->tag_types[t] >= m->ntypes)
            return module_error(err, RI_ERR_INVALID, "unknown type %u (tag %u)", m->tag_types[t], t);
        const ri_type *tt = &m->types[m->tag_types[t]];
        if (tt->nresults) return module_error(err, RI_ERR_INVALID, "non-empty tag result type (tag %u)", t);
        /* An exception's values are one slot each (exceptions keep them as ri_slot). */
        for (uint32_t i = 0; i < tt->nparams; i++)
            if (tt->params[i] == RI_V128)
                return module_error(err, RI_ERR_UNSUPPORTED,
                                    "exception handling: a tag with a v128 value is not supported (tag %u)", t);
    }
    return RI_OK;
}

static ri_errcode validate_tables_and_memories(const ri_module *m, ri_error *err) {
    ri_errcode rc;
    for (uint32_t i = 0; i < m->ntables; i++)
        if ((rc = validate_limits(&m->tables[i].limits, UINT32_MAX, "table size must be at most 2^32-1", "table", i,
                                  err)))
            return rc;
    if (m->nmemories > 1 && m->config.single_memory)
        return module_error(err, RI_ERR_INVALID, "multiple memories: %u", m->nmemories);
    /* (a 64-bit memory's range, 2^48 pages, is checked by the decoder: limits above 2^32
     * are held as UINT32_MAX) */
    for (uint32_t i = 0; i < m->nmemories; i++)
        if ((rc = validate_limits(&m->memories[i].limits, m->memories[i].is64 ? UINT32_MAX : MAX_MEMORY_PAGES,
                                  "memory size must be at most 65536 pages (4GiB)", "memory", i, err)))
            return rc;
    return RI_OK;
}

static ri_errcode validate_globals(const ri_module *m, ri_error *err) {
    for (uint32_t g = m->nglobal_imports; g < m->nglobals; g++) {
        ri_errcode rc = validate_const_expr(m, m->globals[g - m->nglobal_imports].init,
                                            (uint8_t)m->global_types[g].type, "global", g, err);
        if (rc) return rc;
    }
    return RI_OK;
}

static ri_errcode validate_elems(const ri_module *m, ri_error *err) {
    for (uint32_t i = 0; i < m->nelems; i++) {
        const ri_elem_segment *seg = &m->elems[i];
        ri_errcode rc;
        for (uint32_t k = 0; k < seg->count; k++) {
            if (seg->func_indices && seg->func_indices[k] >= m->nfuncs)
                return module_error(err, RI_ERR_INVALID, "unknown function %u (elem segment %u)",
                                    seg->func_indices[k], i);
            if (seg->exprs && (rc = validate_const_expr(m, seg->exprs[k], (uint8_t)seg->type, "elem segment", i, err)))
                return rc;
        }
        if (seg->mode != RI_SEGMENT_ACTIVE) continue;
        if (seg->table_index >= m->ntables)
            return module_error(err, RI_ERR_INVALID, "unknown table %u (elem segment %u)", seg->table_index, i);
        if ((rc = validate_const_expr(m, seg->offset, RI_I32, "elem segment", i, err))) return rc;
        if (seg->type != m->tables[seg->table_index].elem)
            return module_error(err, RI_ERR_INVALID, "type mismatch: %s segment for %s table %u (elem segment %u)",
                                valtype_name((uint8_t)seg->type),
                                valtype_name((uint8_t)m->tables[seg->table_index].elem), seg->table_index, i);
    }
    return RI_OK;
}

static ri_errcode validate_datas(const ri_module *m, ri_error *err) {
    if (m->has_data_count && m->data_count != m->ndatas)
        return module_error(err, RI_ERR_MALFORMED, "data count and data section have inconsistent lengths: %u and %u",
                            m->data_count, m->ndatas);
    for (uint32_t i = 0; i < m->ndatas; i++) {
        const ri_data_segment *seg = &m->datas[i];
        if (seg->mode != RI_SEGMENT_ACTIVE) continue;
        if (seg->memory_index >= m->nmemories)
            return module_error(err, RI_ERR_INVALID, "unknown memory %u (data segment %u)", seg->memory_index, i);
        ri_errcode rc = validate_const_expr(m, seg->offset, m->memories[seg->memory_index].is64 ? RI_I64 : RI_I32,
                                           "data segment", i, err);
        if (rc) return rc;
    }
    return RI_OK;
}

static ri_errcode validate_start(const ri_module *m, ri_error *err) {
    if (!m->has_start) return RI_OK;
    if (m->start >= m->nfuncs) return module_error(err, RI_ERR_INVALID, "unknown function %u (start)", m->start);
    const ri_type *t = func_type(m, m->start);
    if (t->nparams || t->nresults)
        return module_error(err, RI_ERR_INVALID, "start function %u must have type [] -> []", m->start);
    return RI_OK;
}

static ri_errcode validate_bodies(validator *v, uint32_t *failed_body) {
    const ri_module *m = v->m;
    if (m->nbodies != m->nfuncs - m->nfunc_imports)
        return module_error(v->err, RI_ERR_MALFORMED, "function and code section have inconsistent lengths");
    for (uint32_t b = 0; b < m->nbodies; b++) {
        ri_errcode rc = validate_body(v, b);
        if (rc) {
            *failed_body = b;
            return rc;
        }
    }
    return RI_OK;
}

ri_errcode ri_validate_module(const ri_module *m, ri_error *err) {
    validator v;
    memset(&v, 0, sizeof v);
    v.m = m;
    v.err = err;
    v.max_depth = m->config.max_block_depth ? m->config.max_block_depth : DEFAULT_MAX_BLOCK_DEPTH;

    /* the order of the reference interpreter, so a module with several errors
     * reports the same first one */
    uint32_t first_unread_body = 0; /* bodies before it were fully decoded */
    ri_errcode rc = validate_types_and_imports(m, err);
    if (!rc) rc = validate_tables_and_memories(m, err);
    if (!rc) rc = validate_globals(m, err);
    if (!rc) rc = validate_elems(m, err);
    if (!rc) rc = validate_datas(m, err);
    if (!rc) {
        rc = validate_bodies(&v, &first_unread_body);
        if (!rc) first_unread_body = m->nbodies;
    }
    if (!rc) rc = validate_start(m, err);
    if (!rc) rc = validate_exports(m, err);

    if ((rc == RI_ERR_INVALID || rc == RI_ERR_LIMIT) && find_malformed_body(&v, first_unread_body))
        rc = RI_ERR_MALFORMED;

    free(v.vals);
    free(v.ctrls);
    return rc;
}

/* For suspension (exec.h): the operand stack at an instruction of a valid body. */
ri_errcode ri_validate_stack_at(const ri_module *m, uint32_t body_index, uint32_t offset, uint8_t **types,
                                uint32_t *n, ri_error *err) {
    *types = NULL;
    *n = 0;
    if (body_index >= m->nbodies) {
        ri_error_set(err, RI_ERR_ARGUMENT, "no function body %u", body_index);
        return RI_ERR_ARGUMENT;
    }
    validator v;
    memset(&v, 0, sizeof v);
    v.m = m;
    v.err = err;
    v.max_depth = m->config.max_block_depth ? m->config.max_block_depth : DEFAULT_MAX_BLOCK_DEPTH;
    v.probing = true;
    v.probe_offset = offset;
    ri_errcode rc = validate_body(&v, body_index);
    if (rc == RI_OK && !v.probe_hit) {
        ri_error_set(err, RI_ERR_ARGUMENT, "no instruction of function %u starts at offset 0x%x",
                     m->nfunc_imports + body_index, offset);
        rc = RI_ERR_ARGUMENT;
    }
    for (uint32_t i = 0; rc == RI_OK && i < v.nvals; i++) {
        if (v.vals[i] == VT_UNKNOWN) { /* unreachable code: no stop point is there */
            ri_error_set(err, RI_ERR_ARGUMENT, "offset 0x%x of function %u is unreachable code", offset,
                         m->nfunc_imports + body_index);
            rc = RI_ERR_ARGUMENT;
        }
    }
    if (rc == RI_OK && v.nvals) {
        *types = malloc(v.nvals);
        if (!*types) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory");
            rc = RI_ERR_NOMEM;
        } else {
            memcpy(*types, v.vals, v.nvals);
            *n = v.nvals;
        }
    }
    free(v.vals);
    free(v.ctrls);
    return rc;
}
