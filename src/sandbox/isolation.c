/*
 * Import isolation: the module may import only from `env`, and there only the system
 * imports (memory, __get_time, __get_random) and the declared host functions. The
 * imports are walked in order and the first refusal wins, with the original's texts.
 * Beyond the original, each import's kind and signature must match what the sandbox
 * provides, so a mismatch is a clear load error rather than an engine link failure.
 */
#include <stdio.h>
#include <string.h>

#include "sandbox_internal.h"
#include "emscripten/emscripten.h"
#include "wasi/wasi.h"

static const char *const blocked_namespaces[] = {"wasi_snapshot_preview1", "wasi_unstable", "wasi"};

static bool name_is(const char *name, size_t len, const char *literal) {
    size_t n = strlen(literal);
    return len == n && memcmp(name, literal, n) == 0;
}

const ri_host_function *sb_find_host_function(const ri_sandbox *sb, const char *module, size_t module_len,
                                              const char *name, size_t len) {
    for (uint32_t i = 0; i < sb->config.nhost_functions; i++) {
        const char *m = sb->config.host_modules[i];
        if (name_is(module, module_len, m) && name_is(name, len, sb->host_functions[i].name))
            return &sb->host_functions[i];
    }
    return NULL;
}

/* A namespace other than env is admitted when a host function declares it. */
static bool declared_namespace(const ri_sandbox *sb, const char *module, size_t len) {
    for (uint32_t i = 0; i < sb->config.nhost_functions; i++)
        if (name_is(module, len, sb->config.host_modules[i]) && !name_is(module, len, "env")) return true;
    return false;
}

static const char *kind_phrase(ri_externkind kind) {
    switch (kind) {
    case RI_EXTERN_FUNC: return "a function";
    case RI_EXTERN_TABLE: return "a table";
    case RI_EXTERN_MEMORY: return "a memory";
    case RI_EXTERN_GLOBAL: return "a global";
    case RI_EXTERN_TAG: return "an exception tag";
    }
    return "an unknown kind";
}

static bool same_types(uint32_t n, const ri_valtype *a, const ri_valtype *b) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

static bool signature_matches(const ri_functype *t, uint32_t nparams, const ri_valtype *params,
                              uint32_t nresults, const ri_valtype *results) {
    return t->nparams == nparams && t->nresults == nresults && same_types(nparams, t->params, params) &&
           same_types(nresults, t->results, results);
}

/* A function import of the wrong kind or signature; `what` names the provider. */
static bool refuse_function(char *reason, size_t cap, const char *name, const ri_externtype *type,
                            const char *what, uint32_t nparams, const ri_valtype *params, uint32_t nresults,
                            const ri_valtype *results) {
    char want[160];
    sb_format_signature(want, sizeof want, nparams, params, nresults, results);
    if (type->kind != RI_EXTERN_FUNC) {
        snprintf(reason, cap, "WASM module imports 'env.%s' as %s, but %s is a function %s.", name,
                 kind_phrase(type->kind), what, want);
        return false;
    }
    char got[160];
    sb_format_signature(got, sizeof got, type->of.func.nparams, type->of.func.params, type->of.func.nresults,
                        type->of.func.results);
    snprintf(reason, cap, "WASM module imports 'env.%s' with type %s, but %s has type %s.", name, got, what, want);
    return false;
}

static bool check_memory_import(const ri_sandbox *sb, const ri_externtype *type, char *reason, size_t cap) {
    if (type->kind != RI_EXTERN_MEMORY) {
        snprintf(reason, cap, "WASM module imports 'env.memory' as %s, but the system import env.memory is a memory.",
                 kind_phrase(type->kind));
        return false;
    }
    uint64_t min_bytes = (uint64_t)type->of.memory.limits.min * SB_PAGE_SIZE;
    if (min_bytes > sb->config.max_memory_bytes) {
        snprintf(reason, cap,
                 "WASM module imports 'env.memory' with a minimum of %u pages (%llu bytes), above the memory limit of %llu bytes.",
                 type->of.memory.limits.min, (unsigned long long)min_bytes,
                 (unsigned long long)sb->config.max_memory_bytes);
        return false;
    }
    return true;
}

static const ri_valtype i32_result[] = {RI_I32};

/* With enable_wasi: a function of wasi_snapshot_preview1 with its witx signature. */
static bool check_wasi_import(const ri_import_info *info, const char *mod, const char *name, char *reason,
                              size_t cap) {
    uint32_t index;
    if (!ri_wasi_lookup(info->name, info->name_len, &index)) {
        snprintf(reason, cap, "WASM module imports '%s.%s', which is not a %s function.", mod, name, RI_WASI_MODULE);
        return false;
    }
    ri_functype want = ri_wasi_function_type(index);
    if (info->type.kind == RI_EXTERN_FUNC &&
        signature_matches(&info->type.of.func, want.nparams, want.params, want.nresults, want.results))
        return true;
    char what[400], sig[160], got[160];
    sb_format_signature(sig, sizeof sig, want.nparams, want.params, want.nresults, want.results);
    snprintf(what, sizeof what, "'%s.%s'", mod, name);
    if (info->type.kind != RI_EXTERN_FUNC) {
        snprintf(reason, cap, "WASM module imports %s as %s, but WASI's %s is a function %s.", what,
                 kind_phrase(info->type.kind), name, sig);
        return false;
    }
    sb_format_signature(got, sizeof got, info->type.of.func.nparams, info->type.of.func.params,
                        info->type.of.func.nresults, info->type.of.func.results);
    snprintf(reason, cap, "WASM module imports %s with type %s, but WASI's %s has type %s.", what, got, name, sig);
    return false;
}

bool sb_validate_imports(const ri_sandbox *sb, const ri_module *module, char *reason, size_t cap) {
    uint32_t n = ri_module_import_count(module);
    for (uint32_t i = 0; i < n; i++) {
        ri_import_info info = ri_module_import(module, i);
        char mod[160], name[160];
        sb_printable_name(mod, sizeof mod, info.module, info.module_len);
        sb_printable_name(name, sizeof name, info.name, info.name_len);

        if (sb->config.enable_wasi && name_is(info.module, info.module_len, RI_WASI_MODULE)) {
            if (!check_wasi_import(&info, mod, name, reason, cap)) return false;
            continue;
        }
        for (size_t b = 0; b < sizeof blocked_namespaces / sizeof blocked_namespaces[0]; b++) {
            if (name_is(info.module, info.module_len, blocked_namespaces[b])) {
                snprintf(reason, cap,
                         "WASM module imports from blocked namespace '%s' (import: '%s'). WASI and system interfaces are not allowed in deterministic sandboxes.",
                         mod, name);
                return false;
            }
        }
        if (!name_is(info.module, info.module_len, "env") && declared_namespace(sb, info.module, info.module_len)) {
            const ri_host_function *host =
                sb_find_host_function(sb, info.module, info.module_len, info.name, info.name_len);
            if (!host) {
                snprintf(reason, cap, "WASM module imports undeclared function '%s.%s'. Only declared host functions are allowed.",
                         mod, name);
                return false;
            }
            if (info.type.kind != RI_EXTERN_FUNC ||
                !signature_matches(&info.type.of.func, host->nparams, host->params, host->nresults, host->results)) {
                char what[400];
                snprintf(what, sizeof what, "the declared host function '%s.%s'", mod, name);
                return refuse_function(reason, cap, name, &info.type, what, host->nparams, host->params,
                                       host->nresults, host->results);
            }
            continue;
        }
        if (!name_is(info.module, info.module_len, "env")) {
            snprintf(reason, cap,
                     "WASM module imports from undeclared namespace '%s' (import: '%s'). Only the 'env' namespace is supported.",
                     mod, name);
            return false;
        }
        if (name_is(info.name, info.name_len, "memory")) {
            if (!check_memory_import(sb, &info.type, reason, cap)) return false;
            continue;
        }
        if (name_is(info.name, info.name_len, "__get_time") || name_is(info.name, info.name_len, "__get_random")) {
            if (info.type.kind != RI_EXTERN_FUNC ||
                !signature_matches(&info.type.of.func, 0, NULL, 1, i32_result)) {
                char what[200];
                snprintf(what, sizeof what, "the system import env.%s", name);
                return refuse_function(reason, cap, name, &info.type, what, 0, NULL, 1, i32_result);
            }
            continue;
        }
        const ri_host_function *host = sb_find_host_function(sb, info.module, info.module_len, info.name, info.name_len);
        if (host) {
            if (info.type.kind != RI_EXTERN_FUNC ||
                !signature_matches(&info.type.of.func, host->nparams, host->params, host->nresults, host->results)) {
                char what[200];
                snprintf(what, sizeof what, "the declared host function '%s'", name);
                return refuse_function(reason, cap, name, &info.type, what, host->nparams, host->params,
                                       host->nresults, host->results);
            }
            continue;
        }
        if (sb->config.enable_emscripten) { /* the Emscripten profile (src/emscripten) */
            ri_emsc_kind kind;
            uint32_t index;
            char why[200];
            if (info.type.kind == RI_EXTERN_FUNC &&
                ri_emsc_lookup(info.name, info.name_len, &info.type.of.func, &kind, &index, why, sizeof why))
                continue;
            if (info.type.kind != RI_EXTERN_FUNC) snprintf(why, sizeof why, "it is %s", kind_phrase(info.type.kind));
            snprintf(reason, cap, "WASM module imports 'env.%s', which the Emscripten profile does not serve: %s.",
                     name, why);
            return false;
        }
        snprintf(reason, cap,
                 "WASM module imports undeclared function 'env.%s'. Only declared host functions and system imports (memory, __get_time, __get_random) are allowed.",
                 name);
        return false;
    }
    return true;
}
