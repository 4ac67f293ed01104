/* Interpreters opened once and forked for every sandbox (ri/lang.h): the generic part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/lang_internal.h"

static const lang_ops *const languages[] = {&lang_ruby, &lang_lua, &lang_python, &lang_javascript};
#define NLANGUAGES (sizeof languages / sizeof languages[0])

const lang_ops *lang_ops_for(ri_language lang) {
    for (size_t i = 0; i < NLANGUAGES; i++)
        if (languages[i]->lang == lang) return languages[i];
    return NULL;
}

const char *ri_language_name(ri_language lang) {
    const lang_ops *ops = lang_ops_for(lang);
    return ops ? ops->name : NULL;
}

ri_language ri_language_from_name(const char *name) {
    if (name && strcmp(name, "js") == 0) return RI_LANG_JAVASCRIPT;
    for (size_t i = 0; name && i < NLANGUAGES; i++)
        if (strcmp(languages[i]->name, name) == 0) return languages[i]->lang;
    return RI_LANG_NONE;
}

const char *ri_language_names(void) { return "ruby, lua, python, javascript"; }

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

ri_sandbox_result lang_through(ri_sandbox *sb, ri_sandbox_result r) {
    for (uint32_t slices = 0; !r.ok && r.error.code == RI_SANDBOX_SUSPENDED_CALL && slices < LANG_MAX_SLICES; slices++) {
        ri_sandbox_result_free(&r);
        r = ri_sandbox_resume(sb, 0);
    }
    return r;
}

bool lang_call(ri_sandbox *sb, const char *name, const ri_val *args, uint32_t nargs, int64_t *out,
               ri_sandbox_error *err) {
    ri_sandbox_result r = lang_through(sb, ri_sandbox_call(sb, name, args, nargs));
    bool ok = r.ok;
    if (ok && out) *out = r.nresults ? (r.results[0].type == RI_I64 ? r.results[0].of.i64 : r.results[0].of.i32) : 0;
    if (!ok) {
        *err = r.error;
        size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n, " (calling %s)", name);
    }
    ri_sandbox_result_free(&r);
    return ok;
}

uint32_t lang_guest_bytes(ri_sandbox *sb, const char *alloc_export, const void *data, size_t len, uint32_t align,
                          ri_sandbox_error *err) {
    if (len > INT32_MAX) {
        set_error(err, RI_SANDBOX_MEMORY_EXCEEDED, "%s", "the code is larger than a 32-bit memory can hold");
        return 0;
    }
    ri_val args[4] = {ri_val_i32(0), ri_val_i32(0), ri_val_i32((int32_t)align), ri_val_i32((int32_t)len)};
    int64_t v = 0;
    if (!lang_call(sb, alloc_export, args, 4, &v, err)) return 0;
    uint32_t at = (uint32_t)v;
    if (at == 0) set_error(err, RI_SANDBOX_MEMORY_EXCEEDED, "the interpreter's %s found no memory", alloc_export);
    if (at && !ri_sandbox_memory_write(sb, at, data, len, err)) at = 0;
    return at;
}

/* The template's initialisation in slices of the config's limits. */
static bool initialise(ri_interpreter *it, ri_sandbox_error *err) {
    ri_sandbox *sb = it->template_sb;
    if (!ri_sandbox_set_pause_on(sb, RI_SUSPEND_ON_GAS | RI_SUSPEND_ON_INTERRUPT, err)) return false;
    ri_sandbox_result r = lang_through(sb, ri_sandbox_wasi_initialize(sb));
    bool ok = r.ok;
    if (!ok) *err = r.error;
    ri_sandbox_result_free(&r);
    ok = ok && it->ops->initialise(sb, it->state, err);
    /* forks start with the embedder's choice, as a created sandbox does */
    return ri_sandbox_set_pause_on(sb, 0, ok ? err : NULL) && ok;
}

ri_interpreter *lang_prepare(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                             const ri_sandbox_config *config, ri_sandbox_error *err) {
    const lang_ops *ops = lang_ops_for(lang);
    if (!ops || !factory || !config || !wasm) {
        set_error(err, RI_SANDBOX_INVALID_CONFIG, "%s", ops ? "ri_interpreter_open: a NULL argument" : "unknown language");
        return NULL;
    }
    ri_error e;
    ri_module_config mcfg = {.fusions_off = config->fusions_off}; /* zero: the engine's default limits */
    ri_module *m = ri_module_load(wasm, len, &mcfg, &e); /* once: the template's sandbox retains it */
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
        it->imports = ri_interpreter_imports_read(wasm, len, err);
        ok = it->imports != NULL;
        if (ok && !lang_image_key(lang, wasm, len, config, it->key))
            ok = false, set_error(err, RI_SANDBOX_INVALID_MODULE, "%s", "out of memory");
    }
    if (ok) {
        ri_sandbox_config c = *config;
        c.enable_wasi = true;
        c.enable_emscripten = ops->emscripten;
        const char *const *modules;
        const ri_host_function *fns;
        c.nhost_functions = ri_interpreter_imports_get(it->imports, &fns, &modules);
        c.host_functions = fns;
        c.host_modules = modules;
        if (c.gas_schedule != RI_GAS_INSTRUCTIONS) c.gas_schedule = RI_GAS_INSTRUCTIONS; /* slices need it */
        it->template_sb = ri_sandbox_create(factory, &c, err);
        ok = it->template_sb && ri_sandbox_load_module(it->template_sb, m, err);
    }
    ri_module_free(m);
    if (!ok) {
        ri_interpreter_free(it);
        return NULL;
    }
    return it;
}

ri_interpreter *lang_ready(ri_interpreter *it, ri_sandbox_error *err) {
    it->ready = ri_sandbox_checkpoint(it->template_sb, NULL, err);
    if (!it->ready) {
        ri_interpreter_free(it);
        return NULL;
    }
    return it;
}

ri_interpreter *ri_interpreter_open(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                                    const ri_sandbox_config *config, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    ri_interpreter *it = lang_prepare(factory, lang, wasm, len, config, err);
    if (it && !initialise(it, err)) {
        ri_interpreter_free(it);
        return NULL;
    }
    return it ? lang_ready(it, err) : NULL;
}

void ri_interpreter_free(ri_interpreter *it) {
    if (!it) return;
    ri_checkpoint_free(it->ready);
    ri_sandbox_free(it->template_sb);
    ri_interpreter_imports_free(it->imports);
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

bool ri_interpreter_path(ri_language lang, const char *dir, char *buf, size_t cap) {
    const char *name = ri_language_name(lang);
    if (!name || !buf || cap == 0) return false;
    const char *env = getenv("RI_INTERPRETERS_DIR"), *home = getenv("HOME");
    int n;
    if (dir && dir[0]) n = snprintf(buf, cap, "%s/%s.wasm", dir, name);
    else if (env && env[0]) n = snprintf(buf, cap, "%s/%s.wasm", env, name);
    else n = snprintf(buf, cap, "%s/.cache/ri/interpreters/%s.wasm", home && home[0] ? home : ".", name);
    return n >= 0 && (size_t)n < cap;
}
