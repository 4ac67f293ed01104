/*
 * Modules: loading (decode, validate, compile), reference counting, release, and the
 * public view of imports and exports.
 */
#include <stdlib.h>
#include <string.h>

#include "code.h"
#include "runtime.h"

/*
 * The public API hands out NUL-terminated names and ri_valtype arrays that live as
 * long as the module. They are built once at load time into one allocation, kept in
 * m->valtype_pool (the module's owned pool; the decoder itself points ri_type's
 * valtypes at the binary): this header first, then the arrays it points to.
 */
typedef struct api_view {
    ri_functype *functypes;       /* ntypes */
    const char **import_modules;  /* nimports */
    const char **import_names;    /* nimports */
    const char **export_names;    /* nexports */
} api_view;


/* Reserve n * size bytes aligned to align at *offset; false on size_t overflow. */
static bool reserve(size_t *offset, size_t *at, size_t n, size_t size, size_t align) {
    size_t start = (*offset + align - 1) / align * align, bytes, end;
    if (start < *offset || __builtin_mul_overflow(n, size, &bytes) || __builtin_add_overflow(start, bytes, &end))
        return false;
    *at = start;
    *offset = end;
    return true;
}

static const char *copy_name(char **chars, const ri_module *m, ri_span name) {
    char *s = *chars;
    memcpy(s, ri_span_ptr(m, name), name.len);
    s[name.len] = '\0';
    *chars += name.len + 1;
    return s;
}

static ri_errcode build_api_view(ri_module *m, ri_error *err) {
    size_t nvaltypes = 0, nchars = 0;
    for (uint32_t i = 0; i < m->ntypes; i++) nvaltypes += (size_t)m->types[i].nparams + m->types[i].nresults;
    for (uint32_t i = 0; i < m->nimports; i++)
        nchars += (size_t)m->imports[i].module_name.len + m->imports[i].field_name.len + 2;
    for (uint32_t i = 0; i < m->nexports; i++) nchars += (size_t)m->exports[i].name.len + 1;

    size_t size = sizeof(api_view), at_functypes, at_import_modules, at_import_names, at_export_names,
           at_valtypes, at_chars;
    if (!reserve(&size, &at_functypes, m->ntypes, sizeof(ri_functype), _Alignof(ri_functype)) ||
        !reserve(&size, &at_import_modules, m->nimports, sizeof(char *), _Alignof(char *)) ||
        !reserve(&size, &at_import_names, m->nimports, sizeof(char *), _Alignof(char *)) ||
        !reserve(&size, &at_export_names, m->nexports, sizeof(char *), _Alignof(char *)) ||
        !reserve(&size, &at_valtypes, nvaltypes, sizeof(ri_valtype), _Alignof(ri_valtype)) ||
        !reserve(&size, &at_chars, nchars, 1, 1)) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory: module's import and export tables are too large");
        return RI_ERR_NOMEM;
    }
    uint8_t *pool = malloc(size);
    if (!pool) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory building the module's import and export tables");
        return RI_ERR_NOMEM;
    }
    api_view *view = (api_view *)pool;
    view->functypes = (ri_functype *)(pool + at_functypes);
    view->import_modules = (const char **)(pool + at_import_modules);
    view->import_names = (const char **)(pool + at_import_names);
    view->export_names = (const char **)(pool + at_export_names);

    ri_valtype *valtypes = (ri_valtype *)(pool + at_valtypes);
    for (uint32_t i = 0; i < m->ntypes; i++) {
        const ri_type *t = &m->types[i];
        ri_functype *ft = &view->functypes[i];
        ft->nparams = t->nparams;
        ft->nresults = t->nresults;
        ft->params = valtypes;
        for (uint32_t k = 0; k < t->nparams; k++) *valtypes++ = (ri_valtype)t->params[k];
        ft->results = valtypes;
        for (uint32_t k = 0; k < t->nresults; k++) *valtypes++ = (ri_valtype)t->results[k];
    }
    char *chars = (char *)(pool + at_chars);
    for (uint32_t i = 0; i < m->nimports; i++) {
        view->import_modules[i] = copy_name(&chars, m, m->imports[i].module_name);
        view->import_names[i] = copy_name(&chars, m, m->imports[i].field_name);
    }
    for (uint32_t i = 0; i < m->nexports; i++) view->export_names[i] = copy_name(&chars, m, m->exports[i].name);

    m->valtype_pool = pool;
    return RI_OK;
}

ri_module *ri_module_load(const uint8_t *bytes, size_t len, const ri_module_config *cfg, ri_error *err) {
    if (!bytes && len > 0) {
        ri_error_set(err, RI_ERR_ARGUMENT, "ri_module_load: bytes is NULL but len is %zu", len);
        return NULL;
    }
    ri_module_config config;
    if (cfg) config = *cfg;
    else memset(&config, 0, sizeof config);
    ri_module_config_fill_defaults(&config);
    /* Before copying: an oversized input must not cost a copy. */
    if (len > config.max_module_bytes) {
        ri_error_set(err, RI_ERR_LIMIT, "module of %zu bytes exceeds the limit of %zu bytes", len,
                     config.max_module_bytes);
        return NULL;
    }

    ri_module *m = calloc(1, sizeof *m);
    if (!m) {
        ri_error_set(err, RI_ERR_NOMEM, "out of memory allocating a module");
        return NULL;
    }
    atomic_init(&m->refs, 1);
    m->config = config;
    m->bytes = malloc(len ? len : 1);
    if (!m->bytes) {
        free(m);
        ri_error_set(err, RI_ERR_NOMEM, "out of memory copying a module of %zu bytes", len);
        return NULL;
    }
    if (len) memcpy(m->bytes, bytes, len);
    m->size = len;

    ri_errcode rc = ri_decode_module(m, m->bytes, len, err);
    if (rc == RI_OK) rc = ri_validate_module(m, err);
    if (rc == RI_OK) rc = build_api_view(m, err);
    if (rc == RI_OK) rc = ri_compile_module(m, err);
    if (rc != RI_OK) {
        ri_module_release(m);
        free(m);
        return NULL;
    }
    if (err) {
        err->code = RI_OK;
        err->trap = RI_TRAP_NONE;
        err->message[0] = '\0';
    }
    return m;
}

ri_module *ri_module_retain(ri_module *m) {
    if (m) atomic_fetch_add_explicit(&m->refs, 1u, memory_order_relaxed);
    return m;
}

void ri_module_free(ri_module *m) {
    if (!m) return;
    /* The last reference (the embedder's or an instance's) frees it. */
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1) {
        ri_module_release(m);
        free(m);
    }
}

void ri_module_release(ri_module *m) {
    if (!m) return;
    if (m->codes) {
        for (uint32_t i = 0; i < m->nbodies; i++)
            if (m->codes[i]) ri_code_free(m->codes[i]);
        free(m->codes);
    }
    if (m->elems) {
        for (uint32_t i = 0; i < m->nelems; i++) {
            free(m->elems[i].func_indices);
            free(m->elems[i].exprs);
        }
        free(m->elems);
    }
    if (m->bodies) {
        for (uint32_t i = 0; i < m->nbodies; i++) free(m->bodies[i].local_types);
        free(m->bodies);
    }
    free(m->types);
    free(m->imports);
    free(m->func_types);
    free(m->tag_types);
    free(m->tables);
    free(m->memories);
    free(m->global_types);
    free(m->globals);
    free(m->exports);
    free(m->datas);
    free(m->func_declared);
    free(m->valtype_pool);
    free(m->bytes);
    /* Leave an empty module behind so that a second release is harmless. */
    ri_module_config config = m->config;
    unsigned refs = atomic_load(&m->refs);
    memset(m, 0, sizeof *m);
    m->config = config;
    atomic_init(&m->refs, refs);
}

/* ---- imports and exports ------------------------------------------------------- */

static const api_view *view_of(const ri_module *m) { return (const api_view *)m->valtype_pool; }

static ri_functype functype_of(const ri_module *m, uint32_t type_index) {
    ri_functype none;
    memset(&none, 0, sizeof none);
    if (!m->valtype_pool || type_index >= m->ntypes) return none;
    return view_of(m)->functypes[type_index];
}

uint32_t ri_module_import_count(const ri_module *m) { return m ? m->nimports : 0; }

ri_import_info ri_module_import(const ri_module *m, uint32_t index) {
    ri_import_info info;
    memset(&info, 0, sizeof info);
    if (!m || !m->valtype_pool || index >= m->nimports) return info;
    const ri_import *im = &m->imports[index];
    info.module = view_of(m)->import_modules[index];
    info.name = view_of(m)->import_names[index];
    info.module_len = im->module_name.len;
    info.name_len = im->field_name.len;
    info.type.kind = im->kind;
    switch (im->kind) {
    case RI_EXTERN_FUNC: info.type.of.func = functype_of(m, im->type_index); break;
    case RI_EXTERN_TABLE: info.type.of.table = im->table; break;
    case RI_EXTERN_MEMORY: info.type.of.memory = im->memory; break;
    case RI_EXTERN_GLOBAL: info.type.of.global = im->global; break;
    case RI_EXTERN_TAG: info.type.of.tag = functype_of(m, im->type_index); break;
    }
    return info;
}

uint32_t ri_module_export_count(const ri_module *m) { return m ? m->nexports : 0; }

uint32_t ri_module_memory_count(const ri_module *m) { return m ? m->nmemories : 0; }

const uint8_t *ri_module_bytes(const ri_module *m, size_t *len) {
    if (len) *len = m ? m->size : 0;
    return m ? m->bytes : NULL;
}

size_t ri_module_code_bytes(const ri_module *m) {
    size_t bytes = 0;
    if (!m || !m->codes) return 0;
    for (uint32_t i = 0; i < m->nbodies; i++)
        if (m->codes[i]) bytes += (size_t)m->codes[i]->nwords * sizeof *m->codes[i]->words;
    return bytes;
}

bool ri_module_memory(const ri_module *m, uint32_t index, ri_memtype *type, bool *imported) {
    if (!m || index >= m->nmemories) return false;
    if (type) *type = m->memories[index];
    if (imported) *imported = index < m->nmemory_imports;
    return true;
}

ri_export_info ri_module_export(const ri_module *m, uint32_t index) {
    ri_export_info info;
    memset(&info, 0, sizeof info);
    if (!m || !m->valtype_pool || index >= m->nexports) return info;
    const ri_export *ex = &m->exports[index];
    uint32_t i = ex->index; /* validated, but checked again: this is the API boundary */
    info.name = view_of(m)->export_names[index];
    info.name_len = ex->name.len;
    info.type.kind = ex->kind;
    switch (ex->kind) {
    case RI_EXTERN_FUNC:
        if (i < m->nfuncs) info.type.of.func = functype_of(m, m->func_types[i]);
        break;
    case RI_EXTERN_TABLE:
        if (i < m->ntables) info.type.of.table = m->tables[i];
        break;
    case RI_EXTERN_MEMORY:
        if (i < m->nmemories) info.type.of.memory = m->memories[i];
        break;
    case RI_EXTERN_GLOBAL:
        if (i < m->nglobals) info.type.of.global = m->global_types[i];
        break;
    case RI_EXTERN_TAG:
        if (i < m->ntags) info.type.of.tag = functype_of(m, m->tag_types[i]);
        break;
    }
    return info;
}
