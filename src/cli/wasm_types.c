/* WebAssembly type names and formats for ri's output (see wasm_types.h). */
#include "cli/wasm_types.h"

#include <inttypes.h>

const char *ri_externkind_name(ri_externkind k) {
    switch (k) {
    case RI_EXTERN_FUNC: return "func";
    case RI_EXTERN_TABLE: return "table";
    case RI_EXTERN_MEMORY: return "memory";
    case RI_EXTERN_GLOBAL: return "global";
    case RI_EXTERN_TAG: return "tag";
    }
    return "unknown";
}

static void print_valtypes(FILE *f, const ri_valtype *types, uint32_t n) {
    fputc('(', f);
    for (uint32_t i = 0; i < n; i++) fprintf(f, "%s%s", i ? ", " : "", ri_valtype_name(types[i]));
    fputc(')', f);
}

/* "1..256 pages", or "1 page, no maximum". */
static void print_limits(FILE *f, const ri_limits *l, const char *unit) {
    if (l->has_max)
        fprintf(f, "%" PRIu32 "..%" PRIu32 " %ss", l->min, l->max, unit);
    else
        fprintf(f, "%" PRIu32 " %s%s, no maximum", l->min, unit, l->min == 1 ? "" : "s");
}

void ri_externtype_print(FILE *f, const ri_externtype *t) {
    fputs(ri_externkind_name(t->kind), f);
    fputc(' ', f);
    switch (t->kind) {
    case RI_EXTERN_FUNC:
        print_valtypes(f, t->of.func.params, t->of.func.nparams);
        fputs(" -> ", f);
        print_valtypes(f, t->of.func.results, t->of.func.nresults);
        break;
    case RI_EXTERN_TABLE:
        fprintf(f, "%s ", ri_valtype_name(t->of.table.elem));
        print_limits(f, &t->of.table.limits, "element");
        break;
    case RI_EXTERN_MEMORY:
        print_limits(f, &t->of.memory.limits, "page");
        break;
    case RI_EXTERN_GLOBAL:
        fprintf(f, "%s%s", t->of.global.mutable_ ? "mut " : "", ri_valtype_name(t->of.global.type));
        break;
    case RI_EXTERN_TAG:
        print_valtypes(f, t->of.tag.params, t->of.tag.nparams);
        break;
    }
}

static void json_valtypes(ri_jsonw *w, const char *key, const ri_valtype *types, uint32_t n) {
    ri_jsonw_key(w, key);
    ri_jsonw_array_flat(w);
    for (uint32_t i = 0; i < n; i++) ri_jsonw_str(w, ri_valtype_name(types[i]));
    ri_jsonw_end(w);
}

static void json_limits(ri_jsonw *w, const ri_limits *l) {
    ri_jsonw_key(w, "min");
    ri_jsonw_u64(w, l->min);
    ri_jsonw_key(w, "max");
    if (l->has_max)
        ri_jsonw_u64(w, l->max);
    else
        ri_jsonw_null(w);
}

void ri_externtype_json(ri_jsonw *w, const ri_externtype *t) {
    ri_jsonw_key(w, "kind");
    ri_jsonw_str(w, ri_externkind_name(t->kind));
    switch (t->kind) {
    case RI_EXTERN_FUNC:
        json_valtypes(w, "params", t->of.func.params, t->of.func.nparams);
        json_valtypes(w, "results", t->of.func.results, t->of.func.nresults);
        break;
    case RI_EXTERN_TABLE:
        ri_jsonw_key(w, "element");
        ri_jsonw_str(w, ri_valtype_name(t->of.table.elem));
        json_limits(w, &t->of.table.limits);
        break;
    case RI_EXTERN_MEMORY:
        json_limits(w, &t->of.memory.limits);
        break;
    case RI_EXTERN_GLOBAL:
        ri_jsonw_key(w, "type");
        ri_jsonw_str(w, ri_valtype_name(t->of.global.type));
        ri_jsonw_key(w, "mutable");
        ri_jsonw_bool(w, t->of.global.mutable_);
        break;
    case RI_EXTERN_TAG:
        json_valtypes(w, "params", t->of.tag.params, t->of.tag.nparams);
        break;
    }
}
