/*
 * ri_sandbox_load: the original's checks with its texts, in its order (destroyed,
 * bytes, compilation, imports, instantiation), plus the memory limit on memories the
 * module defines itself. Everything is built in a new image (store, memory, host
 * functions, instance) that replaces the old one only on success, so a failed load
 * leaves the sandbox as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "emscripten/emscripten.h"
#include "wasi/wasi.h"

#define LOAD_FAILED "Failed to load WASM module: "

static bool fail(ri_sandbox_error *err, const char *fmt, const char *detail) {
    sb_error_set(err, RI_SANDBOX_INVALID_MODULE, fmt, detail);
    return false;
}

/* The module's own memory must fit the limit; its maximum is clamped by the store. */
static bool check_defined_memory(const ri_sandbox *sb, const ri_module *module, ri_sandbox_error *err) {
    ri_memtype type;
    bool imported = true;
    if (!ri_module_memory(module, 0, &type, &imported) || imported) return true;
    uint32_t min_pages = type.limits.min;
    uint64_t min_bytes = (uint64_t)min_pages * SB_PAGE_SIZE;
    if (min_bytes <= sb->config.max_memory_bytes) return true;
    sb_error_set(err, RI_SANDBOX_INVALID_MODULE,
                 LOAD_FAILED "the module defines a memory of at least %u pages (%llu bytes), above the memory limit of %llu bytes",
                 min_pages, (unsigned long long)min_bytes, (unsigned long long)sb->config.max_memory_bytes);
    return false;
}

/* The env.memory the module imports: as large as it asks (at least the original's
 * one page), at most the limit and its own declared maximum. Whether it imports one. */
static bool env_memory_pages(const ri_sandbox *sb, const ri_module *module, uint32_t *initial, uint32_t *max) {
    bool imported = false;
    *initial = 1;
    *max = sb->memory_limit_pages;
    uint32_t n = ri_module_import_count(module);
    for (uint32_t i = 0; i < n; i++) {
        ri_import_info info = ri_module_import(module, i);
        if (info.type.kind != RI_EXTERN_MEMORY) continue;
        imported = true;
        const ri_limits *l = &info.type.of.memory.limits;
        if (l->min > *initial) *initial = l->min;
        if (l->has_max && l->max < *max) *max = l->max;
    }
    if (*max < *initial) *max = *initial; /* only when the limit is below one page */
    return imported;
}

/* Host functions for every function import, memory for the memory import. */
static bool link_imports(ri_sandbox *sb, sb_image *img, ri_extern *externs, ri_sandbox_error *err) {
    uint32_t n = ri_module_import_count(img->module);
    for (uint32_t i = 0; i < n; i++) {
        ri_import_info info = ri_module_import(img->module, i);
        externs[i].kind = info.type.kind;
        if (info.type.kind == RI_EXTERN_MEMORY) {
            externs[i].of.memory = img->memory;
            continue;
        }
        /* isolation.c admitted only memory and functions */
        sb_binding *b = &img->bindings[i];
        b->sb = sb;
        bool env = info.module_len == 3 && memcmp(info.module, "env", 3) == 0;
        bool wasi = sb->wasi && info.module_len == strlen(RI_WASI_MODULE) &&
                    memcmp(info.module, RI_WASI_MODULE, info.module_len) == 0;
        if (wasi) {
            b->kind = SB_IMPORT_WASI;
            ri_wasi_lookup(info.name, info.name_len, &b->wasi_index); /* isolation.c checked it */
        } else if (env && info.name_len == 10 && memcmp(info.name, "__get_time", 10) == 0) {
            b->kind = SB_IMPORT_TIME;
        } else if (env && info.name_len == 12 && memcmp(info.name, "__get_random", 12) == 0) {
            b->kind = SB_IMPORT_RANDOM;
        } else {
            b->kind = SB_IMPORT_HOST;
            b->host = sb_find_host_function(sb, info.module, info.module_len, info.name, info.name_len);
        }
        ri_emsc_kind ek;
        char why[200];
        if (env && !b->host && b->kind == SB_IMPORT_HOST && sb->config.enable_emscripten &&
            ri_emsc_lookup(info.name, info.name_len, &info.type.of.func, &ek, &b->wasi_index, why, sizeof why)) {
            if (ek == RI_EMSC_INVOKE || ek == RI_EMSC_THROW) { /* engine operations, not host functions */
                externs[i].of.func = ri_func_new_emscripten(
                    img->store, ek == RI_EMSC_INVOKE ? RI_EMSCRIPTEN_INVOKE : RI_EMSCRIPTEN_THROW, &info.type.of.func);
                if (!externs[i].of.func) {
                    sb_error_set(err, RI_SANDBOX_INVALID_MODULE, LOAD_FAILED "out of memory creating host functions");
                    return false;
                }
                continue;
            }
            b->kind = SB_IMPORT_EMSC;
        }
        externs[i].of.func = sb_bridge_make(img->store, b, &info.type.of.func);
        if (!externs[i].of.func) {
            sb_error_set(err, RI_SANDBOX_INVALID_MODULE, LOAD_FAILED "out of memory creating host functions");
            return false;
        }
    }
    return true;
}

/* Instantiation runs the start function (unless run_start is false: a fork): metered
 * like an execution. */
static bool instantiate(ri_sandbox *sb, sb_image *img, const ri_extern *externs, bool run_start,
                        ri_sandbox_error *err) {
    uint32_t prng_before = sb->prng_state;
    sb_run run;
    if (!sb_run_begin(sb, &run, img->store, err)) return false;
    ri_error e;
    uint32_t nimports = ri_module_import_count(img->module);
    img->instance = run_start ? ri_instantiate(img->store, img->module, externs, nimports, &e)
                              : ri_instantiate_nostart(img->store, img->module, externs, nimports, &e);
    sb_run_end(sb, &run);
    if (img->instance) return true;
    sb->prng_state = prng_before; /* a failed load changes nothing */
    ri_sandbox_error cause;
    if (e.code == RI_ERR_TRAP) {
        sb_map_run_error(sb, &run, e.code, &e, &cause);
    } else {
        sb_error_trap(&cause, "runtime_error", "%s", e.message);
    }
    /* (A destroy during the start function is reported by the caller.)
     * INVALID_MODULE with the original's text; the cause's fields stay for callers
     * who want them (trap kind, gas, elapsed time, failing host function). */
    *err = cause;
    err->code = RI_SANDBOX_INVALID_MODULE;
    sb_error_prefix(err, "Failed to instantiate WASM module: ");
    return false;
}

/* Everything a load does but the swap: the bytes' checks, compilation, the memory
 * limit, import isolation, instantiation (the start function runs), the baseline.
 * On success *out is a complete image the caller installs (the start function's PRNG
 * draws stay, as for any load); on failure nothing of the sandbox changed. */
/* The bytes' checks in the original's order and words; the decoded module or NULL. */
static ri_module *decode_module(const uint8_t *wasm, size_t len, uint32_t fusions_off, ri_sandbox_error *err) {
    if (!wasm || len == 0) {
        fail(err, "%s", LOAD_FAILED "Empty WASM bytes \u2014 module must not be empty");
        return NULL;
    }
    if (len < 8) {
        sb_error_set(err, RI_SANDBOX_INVALID_MODULE, LOAD_FAILED "WASM module too small: %zu bytes (minimum 8)", len);
        return NULL;
    }
    if (memcmp(wasm, "\0asm", 4) != 0) {
        fail(err, "%s", LOAD_FAILED "Invalid WASM magic bytes \u2014 expected \\0asm header");
        return NULL;
    }
    ri_error e;
    ri_module_config cfg = {.fusions_off = fusions_off}; /* zero: the engine's default limits */
    ri_module *module = ri_module_load(wasm, len, &cfg, &e);
    if (!module) fail(err, LOAD_FAILED "WASM compilation failed: %s", e.message);
    return module;
}

bool ri_module_check(const uint8_t *wasm, size_t len, ri_sandbox_error *err) {
    ri_module *module = decode_module(wasm, len, 0, err);
    ri_module_free(module);
    return module != NULL;
}

/* The image of a decoded module (owned from here, freed on failure). */
static bool build_image_of(ri_sandbox *sb, ri_module *module, sb_image **out, ri_sandbox_error *err) {
    if (!check_defined_memory(sb, module, err)) {
        ri_module_free(module);
        return false;
    }
    char reason[400];
    if (!sb_validate_imports(sb, module, reason, sizeof reason)) {
        ri_module_free(module);
        return fail(err, "Import validation failed: %s", reason);
    }
    return sb_build_image_from(sb, module, true, out, err);
}

bool sb_build_image(ri_sandbox *sb, const uint8_t *wasm, size_t len, sb_image **out, ri_sandbox_error *err) {
    *out = NULL;
    ri_module *module = decode_module(wasm, len, sb->config.fusions_off, err);
    return module && build_image_of(sb, module, out, err);
}

bool sb_build_image_from(ri_sandbox *sb, ri_module *module, bool run_start, sb_image **out, ri_sandbox_error *err) {
    *out = NULL;
    uint32_t initial, max;
    bool env_used = env_memory_pages(sb, module, &initial, &max);
    sb_image *img = sb_image_new(sb, initial, max, env_used, err);
    if (!img) {
        ri_module_free(module);
        err->code = RI_SANDBOX_INVALID_MODULE;
        return false;
    }
    img->module = module; /* the image owns it from here */
    uint32_t nimports = ri_module_import_count(module);
    img->bindings = calloc(nimports ? nimports : 1, sizeof *img->bindings);
    ri_extern *externs = calloc(nimports ? nimports : 1, sizeof *externs);
    bool ok = img->bindings && externs;
    if (!ok) sb_error_set(err, RI_SANDBOX_INVALID_MODULE, LOAD_FAILED "out of memory");
    ok = ok && link_imports(sb, img, externs, err) && instantiate(sb, img, externs, run_start, err);
    free(externs);
    if (sb->destroy_requested) {
        /* destroy() came from the start function: finish it now. */
        sb_image_free(img);
        sb_release_image(sb);
        sb_error_destroyed(err, sb->id);
        return false;
    }
    if (!ok) {
        sb_image_free(img);
        return false;
    }

    ri_memory *own = ri_instance_memory(img->instance, 0);
    if (own) img->memory = own; /* imported or its own: the memory that counts */
    if (!sb_state_capture(img->instance, NULL, &img->baseline)) {
        sb_image_free(img);
        return fail(err, "%s", LOAD_FAILED "out of memory");
    }
    *out = img;
    return true;
}

static bool load(ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_module *module, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) return fail(err, "%s", "ri_sandbox_load: sandbox is NULL");
    if (sb_status(sb) == RI_SANDBOX_DESTROYED) {
        sb_error_set(err, RI_SANDBOX_INSTANCE_DESTROYED, "Cannot load module into destroyed instance: %s", sb->id);
        snprintf(err->instance_id, sizeof err->instance_id, "%s", sb->id);
        return false;
    }
    if (sb->run) return fail(err, "Cannot load module into a running instance: %s", sb->id);

    sb_image *img = NULL;
    if (module) {
        if (!build_image_of(sb, ri_module_retain(module), &img, err)) return false;
    } else if (!sb_build_image(sb, wasm, len, &img, err)) {
        return false;
    }
    sb_pending_free(sb->pending); /* a paused call dies with its image */
    sb->pending = NULL;
    sb_image_free(sb->image);
    sb->image = img;
    sb_set_status(sb, RI_SANDBOX_LOADED);
    return true;
}

bool ri_sandbox_load(ri_sandbox *sb, const uint8_t *wasm, size_t len, ri_sandbox_error *err) {
    return load(sb, wasm, len, NULL, err);
}

bool ri_sandbox_load_module(ri_sandbox *sb, ri_module *module, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!module) return fail(err ? err : &scratch, "%s", "ri_sandbox_load_module: module is NULL");
    return load(sb, NULL, 0, module, err);
}
