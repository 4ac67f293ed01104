/* Interpreters opened once and forked for every sandbox (ri/lang.h): the generic part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

static const lang_ops *const languages[] = {&lang_ruby, &lang_lua, &lang_python, &lang_javascript};
#define NLANGUAGES (sizeof languages / sizeof languages[0])

static const lang_ops *ops_of(ri_language lang) {
    for (size_t i = 0; i < NLANGUAGES; i++)
        if (languages[i]->lang == lang) return languages[i];
    return NULL;
}

const char *ri_language_name(ri_language lang) {
    const lang_ops *ops = ops_of(lang);
    return ops ? ops->name : NULL;
}

ri_language ri_language_from_name(const char *name) {
    if (name && strcmp(name, "js") == 0) return RI_LANG_JAVASCRIPT;
    for (size_t i = 0; name && i < NLANGUAGES; i++)
        if (strcmp(languages[i]->name, name) == 0) return languages[i]->lang;
    return RI_LANG_NONE;
}

const char *ri_language_names(void) { return "ruby, lua, python, javascript"; }

struct ri_interpreter {
    const lang_ops *ops;
    ri_sandbox *template_sb;   /* initialised; never runs code */
    ri_checkpoint *ready;      /* its state: what every run starts from */
    int64_t state[LANG_STATE_WORDS]; /* the language's own (lang_ops) */
    ri_host_function *stubs;   /* the answers to the JavaScript host's imports */
    const char **stub_modules;
    uint32_t nstubs;
};

static void set_error(ri_sandbox_error *err, ri_sandbox_errcode code, const char *fmt, const char *detail) {
    if (!err) return;
    memset(err, 0, sizeof *err);
    err->code = code;
    snprintf(err->message, sizeof err->message, fmt, detail);
}

bool lang_has_exports(const ri_module *m, const char *const *names, size_t n, const char *who, char *why, size_t cap) {
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (uint32_t k = 0; k < ri_module_export_count(m) && !found; k++) {
            ri_export_info ex = ri_module_export(m, k);
            found = ex.type.kind == RI_EXTERN_FUNC && strlen(names[i]) == ex.name_len &&
                    memcmp(ex.name, names[i], ex.name_len) == 0;
        }
        if (!found) {
            snprintf(why, cap, "%s exports \"%s\"; this module does not", who, names[i]);
            return false;
        }
    }
    return true;
}

ri_sandbox_result lang_failed(const ri_sandbox_error *err) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    r.error = *err;
    return r;
}

ri_sandbox_result lang_call_through(ri_sandbox *sb, const char *action, const ri_val *args, uint32_t nargs) {
    ri_sandbox_result r = ri_sandbox_call(sb, action, args, nargs);
    for (uint32_t slices = 0; !r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL && slices < LANG_MAX_SLICES; slices++) {
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(sb, 0);
    }
    return r;
}

uint32_t lang_guest_bytes(ri_sandbox *sb, const char *alloc_export, const void *data, size_t len, uint32_t align,
                          ri_sandbox_error *err) {
    if (len > INT32_MAX) {
        set_error(err, RI_SANDBOX_MEMORY_EXCEEDED, "%s", "the code is larger than a 32-bit memory can hold");
        return 0;
    }
    ri_val args[4] = {ri_val_i32(0), ri_val_i32(0), ri_val_i32((int32_t)align), ri_val_i32((int32_t)len)};
    ri_sandbox_result r = lang_call_through(sb, alloc_export, args, 4);
    uint32_t at = r.ok && r.nresults == 1 ? (uint32_t)r.results[0].of.i32 : 0;
    if (!r.ok) *err = r.error;
    else if (at == 0) set_error(err, RI_SANDBOX_MEMORY_EXCEEDED, "the interpreter's %s found no memory", alloc_export);
    ri_sandbox_result_free(&r);
    if (at && !ri_sandbox_memory_write(sb, at, data, len, err)) at = 0;
    return at;
}

/* An import of the JavaScript host (ruby.wasm's rb-js-abi-host, ...): no such host here. */
static int javascript_host(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)args;
    (void)results;
    return ri_host_fail(call, "%s: there is no JavaScript host in ri (the interpreter's JavaScript interop is not available)",
                        (const char *)user);
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

static void free_stubs(ri_interpreter *it) {
    for (uint32_t i = 0; i < it->nstubs; i++) {
        free((void *)it->stubs[i].name);
        free((void *)it->stubs[i].params);
        free((void *)it->stubs[i].results);
        free((void *)it->stub_modules[i]);
    }
    free(it->stubs);
    free(it->stub_modules);
}

static char *copy_name(const char *s, size_t n) {
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static ri_valtype *copy_types(const ri_valtype *t, uint32_t n) {
    ri_valtype *c = malloc(n ? n * sizeof *c : 1);
    if (c && n) memcpy(c, t, n * sizeof *c);
    return c;
}

/* One host function per function import outside WASI, typed as the module declares it. */
static bool make_stubs(ri_interpreter *it, const ri_module *m, ri_sandbox_error *err) {
    uint32_t n = ri_module_import_count(m);
    it->stubs = calloc(n ? n : 1, sizeof *it->stubs);
    it->stub_modules = calloc(n ? n : 1, sizeof *it->stub_modules);
    if (!it->stubs || !it->stub_modules) goto oom;
    for (uint32_t i = 0; i < n; i++) {
        ri_import_info in = ri_module_import(m, i);
        /* WASI's, and env's (the Emscripten profile's, for a build that has them) are served */
        if (in.type.kind != RI_EXTERN_FUNC || strcmp(in.module, "wasi_snapshot_preview1") == 0 ||
            strcmp(in.module, "env") == 0)
            continue;
        ri_host_function *f = &it->stubs[it->nstubs];
        const char **mod = &it->stub_modules[it->nstubs];
        it->nstubs++;
        f->name = copy_name(in.name, in.name_len);
        *mod = copy_name(in.module, in.module_len);
        f->nparams = in.type.of.func.nparams;
        f->nresults = in.type.of.func.nresults;
        f->params = copy_types(in.type.of.func.params, f->nparams);
        f->results = copy_types(in.type.of.func.results, f->nresults);
        if (!f->name || !*mod || !f->params || !f->results) goto oom;
        bool resource = strcmp(*mod, "canonical_abi") == 0;
        if (resource && strncmp(f->name, "resource_drop_", 14) == 0 && f->nresults == 0) {
            f->fn = resource_drop;
        } else if (resource && f->nparams == 1 && f->nresults == 1 &&
                   (strncmp(f->name, "resource_new_", 13) == 0 || strncmp(f->name, "resource_get_", 13) == 0)) {
            f->fn = resource_identity;
        } else {
            f->fn = javascript_host;
            f->user = (void *)f->name;
        }
    }
    return true;
oom:
    set_error(err, RI_SANDBOX_INVALID_MODULE, "%s", "out of memory reading the interpreter's imports");
    return false;
}

/* The template's initialisation in slices of the config's limits. */
static bool initialise(ri_interpreter *it, ri_sandbox_error *err) {
    ri_sandbox *sb = it->template_sb;
    if (!ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS | RI_SUSPEND_ON_INTERRUPT, err)) return false;
    ri_sandbox_result r = ri_sandbox_wasi_initialize(sb);
    for (uint32_t slices = 0; !r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL && slices < LANG_MAX_SLICES; slices++) {
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(sb, 0);
    }
    bool ok = r.ok;
    if (!ok) *err = r.error;
    ri_sandbox_result_free(&r);
    ok = ok && it->ops->initialise(sb, it->state, err);
    /* forks start with the embedder's choice, as a created sandbox does */
    return ri_sandbox_set_pause_on(sb, 0, ok ? err : NULL) && ok;
}

ri_interpreter *ri_interpreter_open(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                                    const ri_sandbox_config *config, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    const lang_ops *ops = ops_of(lang);
    if (!ops || !factory || !config || !wasm) {
        set_error(err, RI_SANDBOX_INVALID_CONFIG, "%s", ops ? "ri_interpreter_open: a NULL argument" : "unknown language");
        return NULL;
    }
    if (!ri_module_check(wasm, len, err)) return NULL;
    ri_error e;
    ri_module *m = ri_module_load(wasm, len, NULL, &e);
    if (!m) {
        set_error(err, RI_SANDBOX_INVALID_MODULE, "Failed to load WASM module: %s", e.message);
        return NULL;
    }
    ri_interpreter *it = calloc(1, sizeof *it);
    char why[200];
    bool ok = it != NULL;
    if (!ok) set_error(err, RI_SANDBOX_INVALID_MODULE, "%s", "out of memory");
    if (ok && !ops->recognise(m, why, sizeof why)) {
        set_error(err, RI_SANDBOX_INVALID_MODULE, "not an interpreter this library can drive: %s", why);
        ok = false;
    }
    if (ok) {
        it->ops = ops;
        ok = make_stubs(it, m, err);
    }
    ri_module_free(m);
    if (ok) {
        ri_sandbox_config c = *config;
        c.enable_wasi = true;
        c.enable_emscripten = ops->emscripten;
        c.host_functions = it->stubs;
        c.nhost_functions = it->nstubs;
        c.host_modules = it->stub_modules;
        if (c.gas_schedule != RI_GAS_INSTRUCTIONS) c.gas_schedule = RI_GAS_INSTRUCTIONS; /* slices need it */
        it->template_sb = ri_sandbox_create(factory, &c, err);
        ok = it->template_sb && ri_sandbox_load(it->template_sb, wasm, len, err) && initialise(it, err);
    }
    if (ok) it->ready = ri_sandbox_checkpoint(it->template_sb, NULL, err);
    if (!ok || !it->ready) {
        ri_interpreter_free(it);
        return NULL;
    }
    return it;
}

void ri_interpreter_free(ri_interpreter *it) {
    if (!it) return;
    ri_checkpoint_free(it->ready);
    ri_sandbox_free(it->template_sb);
    free_stubs(it);
    free(it);
}

ri_language ri_interpreter_language(const ri_interpreter *it) { return it ? it->ops->lang : RI_LANG_NONE; }

ri_sandbox *ri_interpreter_sandbox(ri_interpreter *it, ri_sandboxes *factory, ri_sandbox_error *err) {
    if (!it || !factory) {
        set_error(err, RI_SANDBOX_INVALID_CONFIG, "%s", "ri_interpreter_sandbox: a NULL argument");
        return NULL;
    }
    return ri_sandbox_fork(factory, it->template_sb, it->ready, err);
}

ri_sandbox_result ri_interpreter_run(ri_interpreter *it, ri_sandbox *sb, const char *code, size_t len) {
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    if (!it || !sb || (!code && len)) {
        set_error(&err, RI_SANDBOX_INVALID_CONFIG, "%s", "ri_interpreter_run: a NULL argument");
        return lang_failed(&err);
    }
    /* a fresh interpreter among the files the last run left */
    if (!ri_sandbox_restart(sb, it->ready, &err)) return lang_failed(&err);
    ri_sandbox_result r = it->ops->run(sb, it->state, code ? code : "", len);
    ri_interpreter_end(it, sb, &r);
    return r;
}

void ri_interpreter_end(ri_interpreter *it, ri_sandbox *sb, ri_sandbox_result *r) {
    if (it && sb && r && it->ops->finish && !(!r->ok && r->error.code == RI_SANDBOX_SUSPENDED_CALL))
        it->ops->finish(sb, it->state, r);
}

ri_sandbox_result ri_interpreter_resume(ri_interpreter *it, ri_sandbox *sb, uint64_t gas) {
    ri_sandbox_result r = ri_sandbox_resume(sb, gas);
    ri_interpreter_end(it, sb, &r);
    return r;
}
