/* The host functions an interpreter's module imports beyond WASI and Emscripten's env
 * (ri/lang.h, ri_interpreter_imports_read): read from the module's type and import sections
 * only, so a server can admit them in every sandbox's config without loading the module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

struct ri_interpreter_imports {
    ri_host_function *fns;
    const char **modules;
    uint32_t n;
};

typedef struct rd {
    const uint8_t *p, *end;
    bool truncated; /* the bytes ended inside what was read (a prefix of the module) */
} rd;

static bool u32(rd *r, uint32_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        if (r->p >= r->end) return r->truncated = true, false;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (v > UINT32_MAX) return false;
            *out = (uint32_t)v;
            return true;
        }
    }
    return false;
}

static bool u64(rd *r) {
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return r->truncated = true, false;
        if (!(*r->p++ & 0x80)) return true;
    }
    return false;
}

static bool byte(rd *r, uint8_t *out) {
    if (r->p >= r->end) return r->truncated = true, false;
    *out = *r->p++;
    return true;
}

static bool skip(rd *r, size_t n) {
    if ((size_t)(r->end - r->p) < n) return r->truncated = true, false;
    r->p += n;
    return true;
}

typedef struct functype {
    uint32_t nparams, nresults;
    const uint8_t *params, *results; /* one byte per valtype (the engine's values are the encoding's) */
} functype;

static bool numeric(uint8_t t) { return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64; }

static bool valtypes(rd *r, uint32_t *n, const uint8_t **at) {
    if (!u32(r, n)) return false;
    *at = r->p;
    return skip(r, *n);
}

static bool read_types(rd *r, functype **types, uint32_t *ntypes) {
    uint32_t n;
    if (!u32(r, &n) || n > (size_t)(r->end - r->p)) return r->truncated = r->p >= r->end, false;
    *types = calloc(n ? n : 1, sizeof **types);
    if (!*types) return false;
    *ntypes = n;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t form;
        functype *t = &(*types)[i];
        /* only plain function types (0x60): a module of the GC proposal's types is not an interpreter we drive */
        if (!byte(r, &form) || form != 0x60 || !valtypes(r, &t->nparams, &t->params) ||
            !valtypes(r, &t->nresults, &t->results))
            return false;
    }
    return true;
}

static bool limits(rd *r) {
    uint8_t flags;
    return byte(r, &flags) && u64(r) && (!(flags & 1) || u64(r));
}

static char *copy_name(const uint8_t *s, size_t n) {
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static bool name_is(const uint8_t *s, uint32_t n, const char *literal) {
    return strlen(literal) == n && memcmp(s, literal, n) == 0;
}

/* The component-model resource table of an interpreter's own values: handle = value. */
static int resource_identity(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    results[0] = args[0];
    return 0;
}

static int resource_drop(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call;
    (void)user;
    (void)args;
    (void)results;
    return 0;
}

/* An import of the JavaScript host (ruby.wasm's rb-js-abi-host, ...): no such host here. The
 * error's function_name names it (no pointer into this object: sandboxes copy the function
 * and may outlive it). */
static int javascript_host(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)user;
    (void)args;
    (void)results;
    return ri_host_fail(call, "there is no JavaScript host in ri (the interpreter's JavaScript interop is not available)");
}

/* One host function for a function import (module, name) of type t. */
static bool add(ri_interpreter_imports *im, const uint8_t *module, uint32_t mlen, const uint8_t *name, uint32_t nlen,
                const functype *t) {
    ri_host_function *f = &im->fns[im->n];
    const char **mod = &im->modules[im->n];
    im->n++;
    char *fname = copy_name(name, nlen);
    f->name = fname;
    *mod = copy_name(module, mlen);
    ri_valtype *types = malloc(((size_t)t->nparams + t->nresults + 1) * sizeof *types);
    if (!fname || !*mod || !types) {
        free(types);
        return false;
    }
    for (uint32_t i = 0; i < t->nparams; i++) types[i] = (ri_valtype)t->params[i];
    for (uint32_t i = 0; i < t->nresults; i++) types[t->nparams + i] = (ri_valtype)t->results[i];
    f->nparams = t->nparams;
    f->nresults = t->nresults;
    f->params = types;
    f->results = types + t->nparams;
    bool resource = strcmp(*mod, "canonical_abi") == 0;
    if (resource && strncmp(fname, "resource_drop_", 14) == 0 && f->nresults == 0) {
        f->fn = resource_drop;
    } else if (resource && f->nparams == 1 && f->nresults == 1 && f->params[0] == f->results[0] &&
               (strncmp(fname, "resource_new_", 13) == 0 || strncmp(fname, "resource_get_", 13) == 0)) {
        f->fn = resource_identity;
    } else {
        f->fn = javascript_host;
    }
    return true;
}

void ri_interpreter_imports_free(ri_interpreter_imports *im) {
    if (!im) return;
    for (uint32_t i = 0; i < im->n; i++) {
        free((void *)im->fns[i].name);
        free((void *)im->fns[i].params); /* results share it */
        free((void *)im->modules[i]);
    }
    free(im->fns);
    free(im->modules);
    free(im);
}

static ri_interpreter_imports *fail(ri_interpreter_imports *im, functype *types, ri_sandbox_error *err,
                                    const char *why) {
    ri_interpreter_imports_free(im);
    free(types);
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = RI_SANDBOX_INVALID_MODULE;
        snprintf(err->message, sizeof err->message, "the interpreter's imports: %s", why);
    }
    return NULL;
}

ri_interpreter_imports *ri_interpreter_imports_read(const uint8_t *wasm, size_t len, ri_sandbox_error *err) {
    static const uint8_t header[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
    if (!wasm || len < 8 || memcmp(wasm, header, 8) != 0) return fail(NULL, NULL, err, "not a WebAssembly module");
    ri_interpreter_imports *im = calloc(1, sizeof *im);
    if (!im) return fail(NULL, NULL, err, "out of memory");
    rd r = {wasm + 8, wasm + len, false};
    functype *types = NULL;
    uint32_t ntypes = 0;
    bool imports_seen = false;
    while (r.p < r.end && !imports_seen) {
        uint8_t id;
        uint32_t size;
        if (!byte(&r, &id) || !u32(&r, &size)) break;
        if (id > 2) break; /* past the import section (sections are in order; custom ones, id 0, anywhere) */
        if ((size_t)(r.end - r.p) < size) {
            r.truncated = true;
            break;
        }
        rd s = {r.p, r.p + size, false};
        r.p += size;
        if (id == 1) {
            free(types);
            types = NULL;
            if (!read_types(&s, &types, &ntypes)) return fail(im, types, err, "a malformed type section");
        } else if (id == 2) {
            imports_seen = true;
            uint32_t n;
            if (!u32(&s, &n) || n > size) return fail(im, types, err, "a malformed import section");
            im->fns = calloc(n ? n : 1, sizeof *im->fns);
            im->modules = calloc(n ? n : 1, sizeof *im->modules);
            if (!im->fns || !im->modules) return fail(im, types, err, "out of memory");
            for (uint32_t i = 0; i < n; i++) {
                uint32_t mlen, nlen, index;
                const uint8_t *mod, *name;
                uint8_t kind, b;
                bool ok = u32(&s, &mlen) && (mod = s.p, skip(&s, mlen)) && u32(&s, &nlen) && (name = s.p, skip(&s, nlen)) &&
                          byte(&s, &kind);
                if (ok && kind == 0) ok = u32(&s, &index);
                else if (ok && kind == 1) ok = byte(&s, &b) && limits(&s);
                else if (ok && kind == 2) ok = limits(&s);
                else if (ok && kind == 3) ok = skip(&s, 2);
                else if (ok && kind == 4) ok = byte(&s, &b) && u32(&s, &index);
                else ok = false;
                if (!ok || (kind == 0 && index >= ntypes)) return fail(im, types, err, "a malformed import section");
                /* WASI's, and env's (the Emscripten profile's and the sandbox's own) are served already */
                if (kind != 0 || name_is(mod, mlen, "wasi_snapshot_preview1") || name_is(mod, mlen, "env")) continue;
                const functype *t = &types[index];
                bool servable = true;
                for (uint32_t k = 0; k < t->nparams; k++) servable = servable && numeric(t->params[k]);
                for (uint32_t k = 0; k < t->nresults; k++) servable = servable && numeric(t->results[k]);
                if (servable && !add(im, mod, mlen, name, nlen, t)) return fail(im, types, err, "out of memory");
            }
        }
    }
    free(types);
    if (!imports_seen && r.truncated) return fail(im, NULL, err, "the bytes end before the import section does");
    return im;
}

uint32_t ri_interpreter_imports_get(const ri_interpreter_imports *im, const ri_host_function **fns,
                                    const char *const **modules) {
    if (fns) *fns = im ? im->fns : NULL;
    if (modules) *modules = im ? (const char *const *)im->modules : NULL;
    return im ? im->n : 0;
}
