/*
 * Pass 1: the WebAssembly 2.0 binary format -> struct ri_module (see module.h).
 *
 * Reading follows the reference interpreter closely so that error messages begin with
 * the texts the spec testsuite expects: section contents are read with a cursor that
 * may run to the end of the module (a section that overruns its declared size is then
 * reported as "section size mismatch"), and a length is "out of bounds" when it
 * exceeds the bytes left counted from the start of its own LEB128 encoding.
 *
 * The decoder checks structure only. Everything that needs types or index spaces
 * (index ranges, constness, function bodies' instructions) is validate.c's job, so
 * out-of-range indices are stored as they are.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instr.h"
#include "util/utf8.h"
#include "runtime.h"

/* Defaults for zero config fields, the same as ri_module_load's (module.c), so that
 * a module decoded directly (tests) gets the same limits. */
#define DEFAULT_MAX_MODULE_BYTES ((size_t)256 << 20)
#define DEFAULT_MAX_FUNCTIONS 1000000u
#define DEFAULT_MAX_LOCALS 50000u
#define DEFAULT_MAX_BLOCK_DEPTH 65536u
#define DEFAULT_MAX_TABLE_SIZE 10000000u
#define DEFAULT_MAX_MEMORY_PAGES 65536u
#define DEFAULT_MAX_TOTAL_LOCALS 16777216u

/* The largest memory the spec allows (in pages); beyond it a memory type is invalid,
 * which the validator reports, so the config limit does not pre-empt it. */
#define SPEC_MAX_MEMORY_PAGES 65536u

enum {
    SEC_CUSTOM = 0, SEC_TYPE = 1, SEC_IMPORT = 2, SEC_FUNCTION = 3, SEC_TABLE = 4,
    SEC_MEMORY = 5, SEC_GLOBAL = 6, SEC_EXPORT = 7, SEC_START = 8, SEC_ELEMENT = 9,
    SEC_CODE = 10, SEC_DATA = 11, SEC_DATA_COUNT = 12, SEC_TAG = 13,
};

static const char *const section_names[] = {
    "custom", "type", "import", "function", "table", "memory", "global",
    "export", "start", "element", "code", "data", "data count", "tag",
};

/* Position of each non-custom section in the required order (data count sits
 * between element and code, tag between memory and global). */
static const uint8_t section_rank[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13, 11, 6};

typedef struct decoder {
    ri_module *m;
    ri_error *err;
    ri_reader r;            /* over the whole module; malformations are recorded here */
    const char *section;    /* for messages; NULL in the header */
    ri_errcode status;      /* a non-reader error (limit, memory, ...), RI_OK if none */
    bool funcs_built, tables_built, memories_built, globals_built, tags_built;
    uint64_t total_locals;  /* declared locals of the bodies so far (max_total_locals) */
} decoder;

static bool ok(const decoder *d) { return !d->r.failed && d->status == RI_OK; }

/* Record a malformation at byte offset `at` (only the first error counts). */
static bool malformed_at(decoder *d, const uint8_t *at, const char *text) {
    if (!d->r.failed) {
        d->r.p = at;
        ri_reader_fail(&d->r, text);
    }
    return false;
}

/* Record a feature the engine lacks at byte offset `at` (see ri_reader_unsupported). */
static bool unsupported_at(decoder *d, const uint8_t *at, const char *text) {
    if (!d->r.failed) {
        d->r.p = at;
        ri_reader_unsupported(&d->r, text);
    }
    return false;
}

/* The valtype byte at `at`, read already: malformed fails. */
static bool check_valtype_at(decoder *d, const uint8_t *at) {
    if (!ri_is_valtype(*at)) return malformed_at(d, at, "malformed value type");
    return true;
}

/* A non-reader error: limits and allocation failures. */
static bool fail(decoder *d, ri_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static bool fail(decoder *d, ri_errcode code, const char *fmt, ...) {
    if (d->status != RI_OK || d->r.failed) return false;
    char text[RI_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    d->status = code;
    if (d->section)
        ri_error_set(d->err, code, "%s (%s section, offset 0x%x)", text, d->section, ri_reader_offset(&d->r));
    else
        ri_error_set(d->err, code, "%s", text);
    return false;
}

static bool out_of_memory(decoder *d) { return fail(d, RI_ERR_NOMEM, "out of memory"); }

/* Zeroed array of n elements; never returns NULL for n == 0 so that "absent" and
 * "empty" cannot be confused. */
static void *alloc_array(decoder *d, size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) out_of_memory(d);
    return p;
}

/* Carry a failure from a sub-reader (bounded to a function body or custom section)
 * over to the main reader. */
static bool absorb(decoder *d, const ri_reader *sub) {
    if (sub->failed && !d->r.failed) {
        d->r.failed = true;
        d->r.error = sub->error;
        d->r.error_offset = sub->error_offset;
        d->r.unsupported = sub->unsupported;
        d->r.p = d->r.end;
    }
    return !sub->failed;
}

/* A vector length or byte count: it cannot exceed the bytes left (counted from the
 * start of its encoding, as the reference interpreter does). This is also what keeps
 * hostile counts from causing huge allocations: every vector element takes a byte. */
static uint32_t read_len(ri_reader *r) {
    const uint8_t *start = r->p;
    uint32_t n = ri_read_u32(r);
    if (!r->failed && n > (size_t)(r->end - start)) {
        r->p = start;
        ri_reader_fail(r, "length out of bounds");
        return 0;
    }
    return n;
}

static bool read_name_from(ri_reader *r, ri_span *out) {
    const uint8_t *start = r->p;
    uint32_t n = read_len(r);
    const uint8_t *s = ri_read_bytes(r, n);
    if (r->failed) return false;
    if (!ri_utf8_valid(s, n)) {
        r->p = start;
        ri_reader_fail(r, "malformed UTF-8 encoding");
        return false;
    }
    out->offset = (uint32_t)(s - r->base);
    out->len = n;
    return true;
}

static bool read_name(decoder *d, ri_span *out) { return read_name_from(&d->r, out); }

static uint8_t read_valtype(decoder *d) {
    const uint8_t *at = d->r.p;
    uint8_t t = ri_read_u8(&d->r);
    if (ok(d)) check_valtype_at(d, at);
    return t;
}

static uint8_t read_reftype(decoder *d) {
    const uint8_t *at = d->r.p;
    uint8_t t = ri_read_u8(&d->r);
    if (ok(d) && !ri_is_reftype(t)) malformed_at(d, at, "malformed reference type");
    return t;
}

/* Limits: a flag read as a 1-bit LEB128 (so 2 is "integer too large" and 0x81 0x00
 * "integer representation too long"), the minimum, and the maximum if flagged.
 * Without a maximum, max is UINT32_MAX so that min(max, some cap) is the cap.
 * A memory's (is64 non-NULL) may have flag 4 or 5: a 64-bit memory, u64 limits of at most
 * 2^48 pages, held as UINT32_MAX above 2^32 - 1 (no store allows that many). */
static void read_limits(decoder *d, ri_limits *lim, bool *is64) {
    const uint8_t *at = d->r.p;
    uint64_t flag = ri_read_uleb(&d->r, 7);
    bool mem64 = is64 && (flag == 4 || flag == 5);
    /* Flags of later versions (bit 1: shared, bit 2: 64-bit) name their feature; 2 alone
     * is "integer too large", as 2.0's spec tests say. */
    if (ok(d) && (flag == 3 || flag == 6 || flag == 7)) unsupported_at(d, at, "shared memories (threads) are not supported");
    else if (ok(d) && !mem64 && (flag == 4 || flag == 5)) unsupported_at(d, at, "64-bit tables (memory64) are not supported");
    else if (ok(d) && flag > 1 && !mem64) malformed_at(d, at, "integer too large");
    if (is64) *is64 = mem64;
    lim->has_max = (flag & 1) != 0;
    if (!mem64) {
        lim->min = ri_read_u32(&d->r);
        lim->max = lim->has_max ? ri_read_u32(&d->r) : UINT32_MAX;
        return;
    }
    uint64_t min = ri_read_uleb(&d->r, 64), max = lim->has_max ? ri_read_uleb(&d->r, 64) : UINT32_MAX;
    if (ok(d) && (min > ((uint64_t)1 << 48) || (lim->has_max && max > ((uint64_t)1 << 48))))
        fail(d, RI_ERR_INVALID, "memory size must be at most 2^48 pages (256 TiB)");
    lim->min = min > UINT32_MAX ? UINT32_MAX : (uint32_t)min;
    lim->max = max > UINT32_MAX ? UINT32_MAX : (uint32_t)max;
    if (lim->has_max && min > max && lim->min <= lim->max) { /* both held as UINT32_MAX: still "min > max" */
        lim->min = UINT32_MAX;
        lim->max = UINT32_MAX - 1;
    }
}

/* An exception reference lives only while the call that caught it runs (exn.h): a table or a
 * mutable global, which outlive calls (and go into snapshots), cannot hold one. */
static void read_tabletype(decoder *d, ri_tabletype *t) {
    const uint8_t *at = d->r.p;
    t->elem = (ri_valtype)read_reftype(d);
    if (ok(d) && t->elem == RI_EXNREF)
        unsupported_at(d, at, "exception handling: a table of exnref is not supported (an exception reference "
                              "does not outlive its call)");
    if (ok(d)) read_limits(d, &t->limits, NULL);
}

static void read_globaltype(decoder *d, ri_globaltype *g) {
    g->type = (ri_valtype)read_valtype(d);
    if (!ok(d)) return;
    const uint8_t *at = d->r.p;
    uint8_t mut = ri_read_u8(&d->r);
    if (ok(d) && mut > 1) malformed_at(d, at, "malformed mutability");
    g->mutable_ = mut == 1;
    if (ok(d) && g->mutable_ && g->type == RI_EXNREF)
        unsupported_at(d, at, "exception handling: a mutable exnref global is not supported (an exception "
                              "reference does not outlive its call)");
}

/* The config limits apply to definitions the spec considers valid; invalid ones are
 * left to the validator so that it reports them with the spec's message. */
static bool check_table_limit(decoder *d, const ri_tabletype *t) {
    const ri_limits *l = &t->limits;
    if (l->has_max && l->min > l->max) return true;
    if (l->min > d->m->config.max_table_size)
        return fail(d, RI_ERR_LIMIT, "table of %u elements exceeds the limit of %u",
                    l->min, d->m->config.max_table_size);
    return true;
}

static bool check_memory_limit(decoder *d, const ri_memtype *t) {
    const ri_limits *l = &t->limits;
    if (!t->is64 && (l->min > SPEC_MAX_MEMORY_PAGES || (l->has_max && l->max > SPEC_MAX_MEMORY_PAGES))) return true;
    if (l->has_max && l->min > l->max) return true;
    if (l->min > d->m->config.max_memory_pages)
        return fail(d, RI_ERR_LIMIT, "memory of %u pages exceeds the limit of %u",
                    l->min, d->m->config.max_memory_pages);
    return true;
}

static bool check_function_limit(decoder *d, uint64_t nfuncs) {
    if (nfuncs > d->m->config.max_functions)
        return fail(d, RI_ERR_LIMIT, "%llu functions exceed the limit of %u",
                    (unsigned long long)nfuncs, d->m->config.max_functions);
    return true;
}

/* A constant expression: its extent only, up to the `end` that closes it. Nested
 * blocks are followed so that their `end` does not stop early; whether the
 * instructions are constant is the validator's business. */
static bool read_const_expr(decoder *d, ri_expr *out) {
    uint32_t start = ri_reader_offset(&d->r);
    uint32_t depth = 0;
    for (;;) {
        ri_instr in;
        const uint8_t *at = d->r.p;
        if (!ri_read_instr(&d->r, &in)) return false;
        if (in.op == RI_OP_BLOCK || in.op == RI_OP_LOOP || in.op == RI_OP_IF) {
            depth++;
        } else if (in.op == RI_OP_ELSE && depth == 0) {
            return malformed_at(d, at, "END opcode expected");
        } else if (in.op == RI_OP_END) {
            if (depth == 0) break;
            depth--;
        }
    }
    out->offset = start;
    out->len = ri_reader_offset(&d->r) - start;
    return true;
}

/* ---- index spaces: imports first, then definitions ----------------------------- */

static bool build_funcs(decoder *d, uint32_t ndefined) {
    ri_module *m = d->m;
    m->nfuncs = m->nfunc_imports + ndefined; /* cannot wrap: each takes a byte */
    if (!check_function_limit(d, m->nfuncs)) return false;
    m->func_types = alloc_array(d, m->nfuncs, sizeof *m->func_types);
    if (!m->func_types) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->nimports; i++)
        if (m->imports[i].kind == RI_EXTERN_FUNC) m->func_types[k++] = m->imports[i].type_index;
    d->funcs_built = true;
    return true;
}

static bool build_tables(decoder *d, uint32_t ndefined) {
    ri_module *m = d->m;
    m->ntables = m->ntable_imports + ndefined;
    m->tables = alloc_array(d, m->ntables, sizeof *m->tables);
    if (!m->tables) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->nimports; i++)
        if (m->imports[i].kind == RI_EXTERN_TABLE) m->tables[k++] = m->imports[i].table;
    d->tables_built = true;
    return true;
}

static bool build_memories(decoder *d, uint32_t ndefined) {
    ri_module *m = d->m;
    m->nmemories = m->nmemory_imports + ndefined;
    m->memories = alloc_array(d, m->nmemories, sizeof *m->memories);
    if (!m->memories) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->nimports; i++)
        if (m->imports[i].kind == RI_EXTERN_MEMORY) m->memories[k++] = m->imports[i].memory;
    d->memories_built = true;
    return true;
}

static bool build_tags(decoder *d, uint32_t ndefined) {
    ri_module *m = d->m;
    m->ntags = m->ntag_imports + ndefined; /* cannot wrap: each takes a byte */
    m->tag_types = alloc_array(d, m->ntags, sizeof *m->tag_types);
    if (!m->tag_types) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->nimports; i++)
        if (m->imports[i].kind == RI_EXTERN_TAG) m->tag_types[k++] = m->imports[i].type_index;
    d->tags_built = true;
    return true;
}

/* A tag's type: an attribute (0: an exception), then a type index. */
static uint32_t read_tagtype(decoder *d) {
    const uint8_t *at = d->r.p;
    uint8_t attribute = ri_read_u8(&d->r);
    if (ok(d) && attribute != 0) malformed_at(d, at, "malformed tag attribute");
    return ri_read_u32(&d->r);
}

static bool build_globals(decoder *d, uint32_t ndefined) {
    ri_module *m = d->m;
    m->nglobals = m->nglobal_imports + ndefined;
    m->global_types = alloc_array(d, m->nglobals, sizeof *m->global_types);
    m->globals = alloc_array(d, ndefined, sizeof *m->globals);
    if (!m->global_types || !m->globals) return false;
    uint32_t k = 0;
    for (uint32_t i = 0; i < m->nimports; i++)
        if (m->imports[i].kind == RI_EXTERN_GLOBAL) m->global_types[k++] = m->imports[i].global;
    d->globals_built = true;
    return true;
}

/* ---- sections ------------------------------------------------------------------ */

static bool decode_types(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    m->types = alloc_array(d, n, sizeof *m->types);
    if (!m->types) return false;
    m->ntypes = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *at = d->r.p;
        uint8_t form = ri_read_u8(&d->r);
        if (!ok(d)) return false;
        /* The form is a one-byte signed LEB128 (-0x20) to the reference interpreter. */
        if (form & 0x80) return malformed_at(d, at, "integer representation too long");
        if (form != 0x60) return malformed_at(d, at, "malformed function type");
        ri_type *t = &m->types[i];
        /* The valtype bytes are the binary's own: params and results point at them. */
        t->nparams = read_len(&d->r);
        t->params = ri_read_bytes(&d->r, t->nparams);
        for (uint32_t k = 0; k < t->nparams && ok(d); k++)
            if (!check_valtype_at(d, t->params + k)) return false;
        t->nresults = read_len(&d->r);
        t->results = ri_read_bytes(&d->r, t->nresults);
        for (uint32_t k = 0; k < t->nresults && ok(d); k++)
            if (!check_valtype_at(d, t->results + k)) return false;
        if (!ok(d)) return false;
    }
    return true;
}

static bool decode_imports(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    m->imports = alloc_array(d, n, sizeof *m->imports);
    if (!m->imports) return false;
    for (uint32_t i = 0; i < n; i++) {
        ri_import *im = &m->imports[i];
        read_name(d, &im->module_name);
        read_name(d, &im->field_name);
        const uint8_t *at = d->r.p;
        uint8_t kind = ri_read_u8(&d->r);
        if (!ok(d)) return false;
        switch (kind) {
        case RI_EXTERN_FUNC: im->type_index = ri_read_u32(&d->r); m->nfunc_imports++; break;
        case RI_EXTERN_TABLE: read_tabletype(d, &im->table); m->ntable_imports++; break;
        case RI_EXTERN_MEMORY: read_limits(d, &im->memory.limits, &im->memory.is64); m->nmemory_imports++; break;
        case RI_EXTERN_GLOBAL: read_globaltype(d, &im->global); m->nglobal_imports++; break;
        case RI_EXTERN_TAG: im->type_index = read_tagtype(d); m->ntag_imports++; break;
        default: return malformed_at(d, at, "malformed import kind");
        }
        im->kind = (ri_externkind)kind;
        m->nimports = i + 1; /* only complete entries count */
        if (!ok(d)) return false;
    }
    return check_function_limit(d, m->nfunc_imports);
}

static bool decode_functions(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d) || !build_funcs(d, n)) return false;
    for (uint32_t i = 0; i < n && ok(d); i++) m->func_types[m->nfunc_imports + i] = ri_read_u32(&d->r);
    return ok(d);
}

static bool decode_tables(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d) || !build_tables(d, n)) return false;
    for (uint32_t i = 0; i < n; i++) {
        ri_tabletype *t = &m->tables[m->ntable_imports + i];
        read_tabletype(d, t);
        if (!ok(d) || !check_table_limit(d, t)) return false;
    }
    return true;
}

static bool decode_memories(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d) || !build_memories(d, n)) return false;
    for (uint32_t i = 0; i < n; i++) {
        ri_memtype *t = &m->memories[m->nmemory_imports + i];
        read_limits(d, &t->limits, &t->is64);
        if (!ok(d) || !check_memory_limit(d, t)) return false;
    }
    return true;
}

static bool decode_tags(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d) || !build_tags(d, n)) return false;
    for (uint32_t i = 0; i < n && ok(d); i++) m->tag_types[m->ntag_imports + i] = read_tagtype(d);
    return ok(d);
}

static bool decode_globals(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d) || !build_globals(d, n)) return false;
    for (uint32_t i = 0; i < n; i++) {
        ri_global_def *g = &m->globals[i];
        read_globaltype(d, &g->type);
        if (!ok(d) || !read_const_expr(d, &g->init)) return false;
        m->global_types[m->nglobal_imports + i] = g->type;
    }
    return true;
}

static bool decode_exports(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    m->exports = alloc_array(d, n, sizeof *m->exports);
    if (!m->exports) return false;
    for (uint32_t i = 0; i < n; i++) {
        ri_export *ex = &m->exports[i];
        read_name(d, &ex->name);
        const uint8_t *at = d->r.p;
        uint8_t kind = ri_read_u8(&d->r);
        if (!ok(d)) return false;
        if (kind > RI_EXTERN_TAG) return malformed_at(d, at, "malformed export kind");
        ex->kind = (ri_externkind)kind;
        ex->index = ri_read_u32(&d->r);
        m->nexports = i + 1;
        if (!ok(d)) return false;
    }
    return true;
}

static bool decode_start(decoder *d) {
    d->m->start = ri_read_u32(&d->r);
    d->m->has_start = ok(d);
    return ok(d);
}

/* Element segment encodings (the flags field): bit 0 = passive or declarative,
 * bit 1 = explicit table index (active) or declarative (otherwise), bit 2 =
 * expressions instead of function indices. */
static bool decode_elem_segment(decoder *d, ri_elem_segment *seg) {
    const uint8_t *at = d->r.p;
    uint32_t flags = ri_read_u32(&d->r);
    if (!ok(d)) return false;
    if (flags > 7) return malformed_at(d, at, "malformed elements segment kind");
    bool not_active = flags & 1, bit1 = flags & 2, uses_exprs = flags & 4;
    seg->type = RI_FUNCREF;
    if (not_active) {
        seg->mode = bit1 ? RI_SEGMENT_DECLARATIVE : RI_SEGMENT_PASSIVE;
    } else {
        seg->mode = RI_SEGMENT_ACTIVE;
        if (bit1) seg->table_index = ri_read_u32(&d->r);
        if (!ok(d) || !read_const_expr(d, &seg->offset)) return false;
    }
    /* Encodings 0 and 4 imply funcref; the others state an element kind (0x00 for
     * funcref, with function indices) or a reference type (with expressions). */
    if (not_active || bit1) {
        if (uses_exprs) {
            const uint8_t *type_at = d->r.p;
            seg->type = (ri_valtype)read_reftype(d);
            if (ok(d) && seg->type == RI_EXNREF)
                return unsupported_at(d, type_at, "exception handling: an element segment of exnref is not supported");
        } else {
            const uint8_t *kind_at = d->r.p;
            uint8_t kind = ri_read_u8(&d->r);
            if (ok(d) && kind != 0x00) return malformed_at(d, kind_at, "malformed element kind");
        }
        if (!ok(d)) return false;
    }
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    if (uses_exprs) {
        seg->exprs = alloc_array(d, n, sizeof *seg->exprs);
        if (!seg->exprs) return false;
        seg->count = n;
        for (uint32_t i = 0; i < n; i++)
            if (!read_const_expr(d, &seg->exprs[i])) return false;
    } else {
        seg->func_indices = alloc_array(d, n, sizeof *seg->func_indices);
        if (!seg->func_indices) return false;
        seg->count = n;
        for (uint32_t i = 0; i < n && ok(d); i++) seg->func_indices[i] = ri_read_u32(&d->r);
    }
    return ok(d);
}

static bool decode_elements(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    m->elems = alloc_array(d, n, sizeof *m->elems);
    if (!m->elems) return false;
    m->nelems = n; /* entries are zeroed, so releasing a partial vector is safe */
    for (uint32_t i = 0; i < n; i++)
        if (!decode_elem_segment(d, &m->elems[i])) return false;
    return true;
}

static bool decode_data_count(decoder *d) {
    d->m->data_count = ri_read_u32(&d->r);
    d->m->has_data_count = ok(d);
    return ok(d);
}

/* Parameters of defined function `i`, or 0 when its type is unknown (the validator
 * reports that; the locals limit then counts the declared locals alone). */
static uint32_t defined_func_params(const ri_module *m, uint32_t i) {
    if (!m->func_types || i >= m->nfuncs - m->nfunc_imports) return 0;
    uint32_t t = m->func_types[m->nfunc_imports + i];
    return t < m->ntypes ? m->types[t].nparams : 0;
}

/* One function body: its size, then (inside it) the local declarations as
 * count + type runs, then the instructions. */
static bool decode_body(decoder *d, uint32_t index, ri_body *body) {
    const ri_module *m = d->m;
    uint32_t size = read_len(&d->r);
    if (!ok(d)) return false;
    const uint8_t *start = d->r.p;
    /* read_len lets a size overrun the module by its own LEB128 bytes */
    if (size > ri_reader_left(&d->r)) return malformed_at(d, d->r.end, "unexpected end");
    const uint8_t *end = start + size;

    ri_reader br;
    ri_reader_init(&br, d->r.base, start, end);
    uint32_t nruns = read_len(&br);
    uint64_t total = 0; /* < 2^64: at most 2^32 runs of at most 2^32 - 1 */
    for (uint32_t i = 0; i < nruns && !br.failed; i++) {
        total += ri_read_u32(&br);
        const uint8_t *at = br.p;
        uint8_t t = ri_read_u8(&br);
        if (!br.failed) {
            br.p = at; /* the error's offset is the type's */
            if (ri_check_valtype(&br, t)) br.p++;
        }
    }
    if (!absorb(d, &br)) return false;
    if (total > UINT32_MAX) return malformed_at(d, start, "too many locals");
    uint64_t with_params = total + defined_func_params(m, index);
    if (with_params > m->config.max_locals)
        return fail(d, RI_ERR_LIMIT, "too many locals: function %u has %llu with its parameters, the limit is %u",
                    m->nfunc_imports + index, (unsigned long long)with_params, m->config.max_locals);

    d->total_locals += total;
    if (d->total_locals > m->config.max_total_locals)
        return fail(d, RI_ERR_LIMIT, "too many locals: the functions up to %u declare %llu together, the limit is %u",
                    m->nfunc_imports + index, (unsigned long long)d->total_locals, m->config.max_total_locals);

    body->local_types = alloc_array(d, (size_t)total, 1);
    if (!body->local_types) return false;
    body->nlocals = (uint32_t)total;

    /* Second pass over the runs, now known to be well-formed, to expand them. */
    ri_reader_init(&br, d->r.base, start, end);
    nruns = ri_read_u32(&br);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nruns; i++) {
        uint32_t count = ri_read_u32(&br);
        uint8_t t = ri_read_u8(&br);
        memset(body->local_types + k, t, count);
        k += count;
    }
    body->code.offset = ri_reader_offset(&br);
    body->code.len = (uint32_t)(end - br.p);
    d->r.p = end;
    return true;
}

static bool decode_code(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    m->bodies = alloc_array(d, n, sizeof *m->bodies);
    if (!m->bodies) return false;
    m->nbodies = n;
    for (uint32_t i = 0; i < n; i++)
        if (!decode_body(d, i, &m->bodies[i])) return false;
    return true;
}

static bool decode_data(decoder *d) {
    ri_module *m = d->m;
    uint32_t n = read_len(&d->r);
    if (!ok(d)) return false;
    m->datas = alloc_array(d, n, sizeof *m->datas);
    if (!m->datas) return false;
    m->ndatas = n;
    for (uint32_t i = 0; i < n; i++) {
        ri_data_segment *seg = &m->datas[i];
        const uint8_t *at = d->r.p;
        uint32_t flags = ri_read_u32(&d->r);
        if (!ok(d)) return false;
        switch (flags) {
        case 0: seg->mode = RI_SEGMENT_ACTIVE; break;
        case 1: seg->mode = RI_SEGMENT_PASSIVE; break;
        case 2: seg->mode = RI_SEGMENT_ACTIVE; seg->memory_index = ri_read_u32(&d->r); break;
        default: return malformed_at(d, at, "malformed data segment kind");
        }
        if (seg->mode == RI_SEGMENT_ACTIVE && (!ok(d) || !read_const_expr(d, &seg->offset))) return false;
        uint32_t len = read_len(&d->r);
        const uint8_t *bytes = ri_read_bytes(&d->r, len);
        if (!ok(d)) return false;
        seg->init.offset = (uint32_t)(bytes - d->r.base);
        seg->init.len = len;
    }
    return true;
}

/* A custom section: a UTF-8 name that fits in the section, then any payload. */
static bool decode_custom(decoder *d, const uint8_t *end, bool truncated) {
    ri_reader cr;
    ri_reader_init(&cr, d->r.base, d->r.p, end);
    ri_span name;
    read_name_from(&cr, &name);
    if (!absorb(d, &cr)) return false;
    if (truncated) return malformed_at(d, d->r.end, "unexpected end");
    d->r.p = end;
    return true;
}

/* ---- func_declared --------------------------------------------------------------- */

static void declare(ri_module *m, uint32_t func) {
    if (func < m->nfuncs) m->func_declared[func] = true; /* else "unknown function" later */
}

static void declare_in_expr(ri_module *m, ri_expr e) {
    if (e.len == 0) return;
    ri_reader r;
    ri_reader_init(&r, m->bytes, m->bytes + e.offset, m->bytes + e.offset + e.len);
    ri_instr in;
    while (!ri_reader_eof(&r) && ri_read_instr(&r, &in))
        if (in.op == RI_OP_REF_FUNC) declare(m, in.imm.index);
}

/* Every function named outside function bodies: the ones ref.func may name. */
static bool collect_declared(decoder *d) {
    ri_module *m = d->m;
    m->func_declared = alloc_array(d, m->nfuncs, sizeof *m->func_declared);
    if (!m->func_declared) return false;
    for (uint32_t i = 0; i < m->nglobals - m->nglobal_imports; i++) declare_in_expr(m, m->globals[i].init);
    for (uint32_t i = 0; i < m->nelems; i++) {
        const ri_elem_segment *seg = &m->elems[i];
        declare_in_expr(m, seg->offset);
        for (uint32_t k = 0; k < seg->count; k++) {
            if (seg->func_indices) declare(m, seg->func_indices[k]);
            else declare_in_expr(m, seg->exprs[k]);
        }
    }
    for (uint32_t i = 0; i < m->ndatas; i++) declare_in_expr(m, m->datas[i].offset);
    for (uint32_t i = 0; i < m->nexports; i++)
        if (m->exports[i].kind == RI_EXTERN_FUNC) declare(m, m->exports[i].index);
    return true;
}

/* ---- the module -------------------------------------------------------------------- */

void ri_module_config_fill_defaults(ri_module_config *c) {
    if (!c->max_module_bytes) c->max_module_bytes = DEFAULT_MAX_MODULE_BYTES;
    if (!c->max_functions) c->max_functions = DEFAULT_MAX_FUNCTIONS;
    if (!c->max_locals) c->max_locals = DEFAULT_MAX_LOCALS;
    if (!c->max_block_depth) c->max_block_depth = DEFAULT_MAX_BLOCK_DEPTH;
    if (!c->max_table_size) c->max_table_size = DEFAULT_MAX_TABLE_SIZE;
    if (!c->max_memory_pages) c->max_memory_pages = DEFAULT_MAX_MEMORY_PAGES;
    if (!c->max_total_locals) c->max_total_locals = DEFAULT_MAX_TOTAL_LOCALS;
}

static bool decode_header(decoder *d) {
    static const uint8_t magic[4] = {0x00, 0x61, 0x73, 0x6D};
    static const uint8_t version[4] = {0x01, 0x00, 0x00, 0x00};
    const uint8_t *p = ri_read_bytes(&d->r, 4);
    if (!p) return false;
    if (memcmp(p, magic, 4) != 0) return malformed_at(d, p, "magic header not detected");
    p = ri_read_bytes(&d->r, 4);
    if (!p) return false;
    if (memcmp(p, version, 4) != 0) return malformed_at(d, p, "unknown binary version");
    return true;
}

static bool decode_section(decoder *d, uint8_t id, const uint8_t *end, bool overruns) {
    switch (id) {
    case SEC_CUSTOM: return decode_custom(d, end, overruns);
    case SEC_TYPE: return decode_types(d);
    case SEC_IMPORT: return decode_imports(d);
    case SEC_FUNCTION: return decode_functions(d);
    case SEC_TABLE: return decode_tables(d);
    case SEC_MEMORY: return decode_memories(d);
    case SEC_TAG: return decode_tags(d);
    case SEC_GLOBAL: return decode_globals(d);
    case SEC_EXPORT: return decode_exports(d);
    case SEC_START: return decode_start(d);
    case SEC_ELEMENT: return decode_elements(d);
    case SEC_DATA_COUNT: return decode_data_count(d);
    case SEC_CODE: return decode_code(d);
    case SEC_DATA: return decode_data(d);
    default: return false;
    }
}

static bool decode_sections(decoder *d) {
    ri_module *m = d->m;
    unsigned last_rank = 0;
    bool seen_data = false;
    while (!ri_reader_eof(&d->r)) {
        d->section = NULL;
        const uint8_t *at = d->r.p;
        uint8_t id = ri_read_u8(&d->r);
        if (id > SEC_TAG) return malformed_at(d, at, "malformed section id");
        if (id != SEC_CUSTOM) {
            /* A repeated or misplaced section ends the module as far as the
             * reference interpreter is concerned: what follows is junk. */
            if (section_rank[id] <= last_rank) return malformed_at(d, at, "unexpected content after last section");
            last_rank = section_rank[id];
        }
        d->section = section_names[id];
        uint32_t size = read_len(&d->r);
        if (!ok(d)) return false;
        /* read_len lets a size overrun the module by its own LEB128 bytes; such a
         * section ends where the module does and cannot be consumed exactly. */
        bool overruns = size > ri_reader_left(&d->r);
        const uint8_t *start = d->r.p, *end = overruns ? d->r.end : start + size;
        if (!decode_section(d, id, end, overruns)) return false;
        if (overruns || d->r.p != end) return malformed_at(d, start, "section size mismatch");
        seen_data |= id == SEC_DATA;
    }
    d->section = NULL;

    /* Index spaces whose section was absent hold the imports alone. */
    if ((!d->funcs_built && !build_funcs(d, 0)) || (!d->tables_built && !build_tables(d, 0)) ||
        (!d->memories_built && !build_memories(d, 0)) || (!d->globals_built && !build_globals(d, 0)) ||
        (!d->tags_built && !build_tags(d, 0)))
        return false;
    if (m->nbodies != m->nfuncs - m->nfunc_imports)
        return fail(d, RI_ERR_MALFORMED,
                    "function and code section have inconsistent lengths (%u functions declared, %u bodies)",
                    m->nfuncs - m->nfunc_imports, m->nbodies);
    if (m->has_data_count && m->data_count != (seen_data ? m->ndatas : 0))
        return fail(d, RI_ERR_MALFORMED,
                    "data count and data section have inconsistent lengths (data count %u, %u segments)",
                    m->data_count, m->ndatas);
    return collect_declared(d);
}

ri_errcode ri_decode_module(ri_module *m, const uint8_t *bytes, size_t len, ri_error *err) {
    decoder d;
    memset(&d, 0, sizeof d);
    d.m = m;
    d.err = err;
    ri_module_config_fill_defaults(&m->config);

    if (len > m->config.max_module_bytes || len > UINT32_MAX) {
        size_t limit = m->config.max_module_bytes < UINT32_MAX ? m->config.max_module_bytes : UINT32_MAX;
        ri_error_set(err, RI_ERR_LIMIT, "module of %zu bytes exceeds the limit of %zu bytes", len, limit);
        return RI_ERR_LIMIT;
    }
    if (len > 0 && !bytes) {
        ri_error_set(err, RI_ERR_ARGUMENT, "module bytes are NULL");
        return RI_ERR_ARGUMENT;
    }
    /* Spans are offsets into m->bytes, so the module needs its own copy unless the
     * caller (ri_module_load) already made one. */
    if (m->bytes != bytes) {
        m->bytes = malloc(len ? len : 1);
        if (!m->bytes) {
            ri_error_set(err, RI_ERR_NOMEM, "out of memory copying a module of %zu bytes", len);
            return RI_ERR_NOMEM;
        }
        if (len) memcpy(m->bytes, bytes, len);
    }
    m->size = len;

    ri_reader_init(&d.r, m->bytes, m->bytes, m->bytes + len);
    if (decode_header(&d)) decode_sections(&d);

    if (d.status != RI_OK) return d.status; /* its message is already set */
    if (d.r.failed) {
        const char *text = d.r.error;
        /* Past the header, running out of bytes always happens inside a section. */
        if (d.section && strcmp(text, "unexpected end") == 0) text = "unexpected end of section or function";
        ri_errcode code = d.r.unsupported ? RI_ERR_UNSUPPORTED : RI_ERR_MALFORMED;
        if (d.section)
            ri_error_set(err, code, "%s (%s section, offset 0x%x)", text, d.section, d.r.error_offset);
        else
            ri_error_set(err, code, "%s (offset 0x%x)", text, d.r.error_offset);
        return code;
    }
    return RI_OK;
}
