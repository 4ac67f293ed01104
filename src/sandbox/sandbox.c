/*
 * The factory and the sandbox's lifecycle: configuration (defaults, validation, the
 * owned copy), ids, statuses, live metrics, suspend, destroy, interrupt and free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"

/* ---- names ------------------------------------------------------------------------ */

const char *ri_sandbox_status_name(ri_sandbox_status status) {
    switch (status) {
    case RI_SANDBOX_CREATED: return "created";
    case RI_SANDBOX_LOADED: return "loaded";
    case RI_SANDBOX_RUNNING: return "running";
    case RI_SANDBOX_SUSPENDED: return "suspended";
    case RI_SANDBOX_DESTROYED: return "destroyed";
    }
    return "unknown";
}

ri_sandbox_status sb_status(const ri_sandbox *sb) {
    return (ri_sandbox_status)atomic_load_explicit(&((ri_sandbox *)sb)->status, memory_order_relaxed);
}

void sb_set_status(ri_sandbox *sb, ri_sandbox_status status) {
    atomic_store_explicit(&sb->status, (int)status, memory_order_relaxed);
}

/* ---- configuration ------------------------------------------------------------------ */

ri_sandbox_config ri_sandbox_config_default(void) {
    ri_sandbox_config c;
    memset(&c, 0, sizeof c);
    c.max_memory_bytes = RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES;
    c.max_gas = RI_SANDBOX_DEFAULT_MAX_GAS;
    c.max_execution_ms = RI_SANDBOX_DEFAULT_MAX_EXECUTION_MS;
    c.deterministic_seed = RI_SANDBOX_DEFAULT_SEED;
    c.has_event_timestamp = false; /* no default: the caller must supply the time */
    c.gas_schedule = RI_GAS_HOST_CALLS;
    return c;
}

static bool numeric_valtype(ri_valtype t) { return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64; }

static bool reserved_name(const char *name) {
    return strcmp(name, "memory") == 0 || strcmp(name, "__get_time") == 0 || strcmp(name, "__get_random") == 0;
}

static const char *host_module(const ri_sandbox_config *c, uint32_t i) {
    return c->host_modules && c->host_modules[i] ? c->host_modules[i] : "env";
}

static bool validate_host_function(const ri_sandbox_config *c, uint32_t i, ri_sandbox_error *err) {
    const ri_host_function *h = &c->host_functions[i];
    const char *module = host_module(c, i);
    if (!h->name || !h->name[0])
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Host function %u has no name", i), false;
    if (!module[0] || strcmp(module, "wasi_snapshot_preview1") == 0 || strcmp(module, "wasi_unstable") == 0 ||
        strcmp(module, "wasi") == 0)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Host function '%s' has an empty or blocked module name",
                            h->name), false;
    if (strcmp(module, "env") == 0 && reserved_name(h->name))
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                            "Host function name '%s' is reserved for the system imports (memory, __get_time, __get_random)",
                            h->name), false;
    if (!h->fn)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Host function '%s' has no callback", h->name), false;
    if ((h->nparams && !h->params) || (h->nresults && !h->results))
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Host function '%s' has a count but no types", h->name),
               false;
    for (uint32_t k = 0; k < h->nparams + h->nresults; k++) {
        ri_valtype t = k < h->nparams ? h->params[k] : h->results[k - h->nparams];
        if (!numeric_valtype(t))
            return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                                "Host function '%s' uses a type other than i32, i64, f32 and f64", h->name), false;
    }
    for (uint32_t k = 0; k < i; k++)
        if (strcmp(c->host_functions[k].name, h->name) == 0 &&
            strcmp(host_module(c, k), module) == 0)
            return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Host function '%s' is declared twice", h->name),
                   false;
    return true;
}

static bool validate_config(const ri_sandbox_config *c, ri_sandbox_error *err) {
    if (!c->has_event_timestamp)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                            "eventTimestamp is required: set has_event_timestamp and event_timestamp (ms since the "
                            "epoch, what __get_time returns); the sandbox never reads the real clock"), false;
    if (c->max_memory_bytes == 0)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                            "maxMemoryBytes must be at least 1: the sandbox memory has at least one 64 KiB page"),
               false;
    if (c->enable_emscripten && !c->enable_wasi)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                            "enable_emscripten needs enable_wasi: an Emscripten build's file descriptors are WASI's"),
               false;
    if (c->fusions_off & ~(uint32_t)RI_FUSE_ALL)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                            "fusions_off has bits %#x that name no fusion family (ri_fusion)",
                            c->fusions_off & ~(uint32_t)RI_FUSE_ALL), false;
    if (c->gas_schedule != RI_GAS_HOST_CALLS && c->gas_schedule != RI_GAS_INSTRUCTIONS)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Unknown gas schedule %d", (int)c->gas_schedule), false;
    if (c->nhost_functions && !c->host_functions)
        return sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "nhost_functions is %u but host_functions is NULL",
                            c->nhost_functions), false;
    for (uint32_t i = 0; i < c->nhost_functions; i++)
        if (!validate_host_function(c, i, err)) return false;
    return true;
}

static void free_host_copies(ri_host_function *copies, uint32_t n) {
    if (copies) free((void *)copies[n].name); /* the modules array (see copy_host_functions) */
    for (uint32_t i = 0; copies && i < n; i++) {
        free((void *)copies[i].name);
        free((void *)copies[i].params); /* params heads one buffer holding results too */
    }
    free(copies);
}

/* The sandbox keeps its own copy: the caller's arrays may go away after create. */
static ri_host_function *copy_host_functions(const ri_sandbox_config *c) {
    /* one more entry: its name field carries the array of module names */
    ri_host_function *copies = calloc((size_t)c->nhost_functions + 1, sizeof *copies);
    const char **modules = calloc((size_t)c->nhost_functions + 1, sizeof *modules);
    if (!copies || !modules) {
        free(copies);
        free(modules);
        return NULL;
    }
    copies[c->nhost_functions].name = (const char *)modules;
    for (uint32_t i = 0; i < c->nhost_functions; i++) {
        const ri_host_function *h = &c->host_functions[i];
        copies[i] = *h;
        copies[i].name = NULL;
        copies[i].params = NULL;
        copies[i].results = NULL;
        size_t ntypes = (size_t)h->nparams + h->nresults;
        /* name and module share one allocation: "name\0module\0" */
        const char *module = host_module(c, i);
        size_t nlen = strlen(h->name), mlen = strlen(module);
        char *name = malloc(nlen + mlen + 2);
        if (name) {
            memcpy(name, h->name, nlen + 1);
            memcpy(name + nlen + 1, module, mlen + 1);
        }
        ri_valtype *types = malloc((ntypes ? ntypes : 1) * sizeof *types);
        if (!name || !types) {
            free(name);
            free(types);
            copies[i] = copies[c->nhost_functions];
            free_host_copies(copies, i);
            return NULL;
        }
        if (h->nparams) memcpy(types, h->params, h->nparams * sizeof *types);
        if (h->nresults) memcpy(types + h->nparams, h->results, h->nresults * sizeof *types);
        copies[i].name = name;
        modules[i] = name + nlen + 1;
        copies[i].params = types;
        copies[i].results = types + h->nparams;
    }
    return copies;
}

/* ---- images ------------------------------------------------------------------------------ */

sb_image *sb_image_new(const ri_sandbox *sb, uint32_t initial_pages, uint32_t max_pages, bool env_used,
                       ri_sandbox_error *err) {
    sb_image *img = calloc(1, sizeof *img);
    ri_store_config cfg = ri_store_config_default();
    cfg.max_call_depth = sb->config.max_call_depth; /* 0: the engine's default */
    cfg.max_memory_pages = sb->memory_limit_pages;  /* module-defined memories too */
    cfg.max_total_memory_pages = sb->memory_limit_pages + (env_used ? 0 : initial_pages); /* all of them */
    cfg.canonicalize_nans = true;                   /* NaN bits are deterministic */
    if (img) img->store = ri_store_new(&cfg);
    if (!img || !img->store) {
        free(img);
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Out of memory creating the sandbox store");
        return NULL;
    }
    ri_memtype type;
    type.is64 = false;
    type.limits.min = initial_pages;
    type.limits.max = max_pages;
    type.limits.has_max = true;
    ri_error e;
    img->memory = ri_memory_new(img->store, type, &e);
    if (!img->memory) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Cannot create the sandbox memory: %s", e.message);
        sb_image_free(img);
        return NULL;
    }
    return img;
}

uint64_t sb_image_memory_bytes(const sb_image *img) {
    if (!img) return 0;
    if (!img->instance) return ri_memory_size(img->memory);
    uint64_t bytes = 0;
    uint32_t n = ri_instance_memory_count(img->instance);
    for (uint32_t i = 0; i < n; i++) {
        ri_memory *mem = ri_instance_memory(img->instance, i);
        bool seen = false;
        for (uint32_t k = 0; k < i && !seen; k++) seen = ri_instance_memory(img->instance, k) == mem;
        if (!seen) bytes += ri_memory_size(mem);
    }
    return bytes;
}

void sb_image_free(sb_image *img) {
    if (!img) return;
    ri_store_free(img->store); /* drops the instance's reference to the module */
    ri_module_free(img->module);
    free(img->bindings);
    sb_state_free(&img->baseline);
    free(img);
}

void sb_release_image(ri_sandbox *sb) {
    sb_pending_free(sb->pending); /* a paused call lives in the image's store */
    sb->pending = NULL;
    sb_image_free(sb->image);
    sb->image = NULL;
}

/* ---- the factory ------------------------------------------------------------------------ */

ri_sandboxes *ri_sandboxes_new(void) {
    ri_sandboxes *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->watchdog = sb_watchdog_new();
    if (!f->watchdog || pthread_mutex_init(&f->lock, NULL) != 0) {
        sb_watchdog_release(f->watchdog);
        free(f);
        return NULL;
    }
    return f;
}

void ri_sandboxes_free(ri_sandboxes *factory) {
    if (!factory) return;
    sb_watchdog_release(factory->watchdog); /* the thread ends with the last sandbox */
    pthread_mutex_destroy(&factory->lock);
    free(factory);
}

/* ---- create and free --------------------------------------------------------------------- */

/* A caller-chosen id: 1 to RI_SANDBOX_ID_MAX characters from A-Z a-z 0-9 . _ - (it
 * appears in messages and file names, so nothing that needs quoting). */
static bool valid_id(const char *id) {
    size_t n = strlen(id);
    if (n == 0 || n > RI_SANDBOX_ID_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                  c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

/* id NULL: the factory's next "sandbox-N". */
static ri_sandbox *create_sandbox(ri_sandboxes *factory, const ri_sandbox_config *config, const char *id,
                                  ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!factory || !config) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "ri_sandbox_create: %s is NULL", factory ? "config" : "factory");
        return NULL;
    }
    if (id && !valid_id(id)) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG,
                     "Invalid sandbox id: ids are 1 to %d characters from A-Z a-z 0-9 . _ -", RI_SANDBOX_ID_MAX);
        return NULL;
    }
    if (!validate_config(config, err)) return NULL;

    ri_sandbox *sb = calloc(1, sizeof *sb);
    if (!sb) {
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Out of memory creating a sandbox");
        return NULL;
    }
    sb->config = *config;
    sb->host_functions = copy_host_functions(config);
    if (!sb->host_functions || pthread_mutex_init(&sb->interrupt_lock, NULL) != 0) {
        free_host_copies(sb->host_functions, config->nhost_functions);
        free(sb);
        sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "Out of memory creating a sandbox");
        return NULL;
    }
    sb->config.host_functions = sb->host_functions;
    sb->config.host_modules = (const char *const *)sb->host_functions[config->nhost_functions].name;
    uint64_t pages = config->max_memory_bytes / SB_PAGE_SIZE + (config->max_memory_bytes % SB_PAGE_SIZE != 0);
    sb->memory_limit_pages = pages > SB_MAX_PAGES ? SB_MAX_PAGES : (uint32_t)pages;

    /* The original's create(): a memory of 1 page, at most the limit. */
    sb->image = sb_image_new(sb, 1, sb->memory_limit_pages, true, err);
    if (!sb->image) {
        pthread_mutex_destroy(&sb->interrupt_lock);
        free_host_copies(sb->host_functions, config->nhost_functions);
        free(sb);
        return NULL;
    }
    if (id) {
        snprintf(sb->id, sizeof sb->id, "%s", id);
    } else {
        pthread_mutex_lock(&factory->lock);
        uint64_t next = factory->next_id++;
        pthread_mutex_unlock(&factory->lock);
        snprintf(sb->id, sizeof sb->id, "sandbox-%llu", (unsigned long long)next);
    }
    sb->watchdog = factory->watchdog;
    sb_watchdog_retain(sb->watchdog);

    sb->prng_state = config->deterministic_seed;
    sb->config.wasi = NULL; /* the WASI context holds its own copies */
    if (config->enable_wasi) {
        sb->config.wasi = config->wasi;
        bool made = sb_wasi_create(sb, err);
        sb->config.wasi = NULL;
        if (!made) {
            sb_image_free(sb->image);
            sb_watchdog_release(sb->watchdog);
            pthread_mutex_destroy(&sb->interrupt_lock);
            free_host_copies(sb->host_functions, config->nhost_functions);
            free(sb);
            return NULL;
        }
    }
    sb->metrics.memory_limit_bytes = config->max_memory_bytes;
    sb->metrics.gas_limit = config->max_gas;
    sb->metrics.execution_limit_ms = config->max_execution_ms;
    sb_set_status(sb, RI_SANDBOX_CREATED);
    return sb;
}

ri_sandbox *ri_sandbox_create(ri_sandboxes *factory, const ri_sandbox_config *config, ri_sandbox_error *err) {
    return create_sandbox(factory, config, NULL, err);
}

ri_sandbox *ri_sandbox_create_with_id(ri_sandboxes *factory, const ri_sandbox_config *config, const char *id,
                                      ri_sandbox_error *err) {
    if (!id) {
        if (err) sb_error_set(err, RI_SANDBOX_INVALID_CONFIG, "ri_sandbox_create_with_id: id is NULL");
        return NULL;
    }
    return create_sandbox(factory, config, id, err);
}

void ri_sandbox_free(ri_sandbox *sb) {
    if (!sb) return;
    ri_sandbox_destroy(sb);
    if (sb->run) return; /* freed from inside its own run: the handle must outlive it (documented misuse) */
    sb_watchdog_release(sb->watchdog);
    pthread_mutex_destroy(&sb->interrupt_lock);
    free_host_copies(sb->host_functions, sb->config.nhost_functions);
    ri_wasi_free(sb->wasi);
    free(sb);
}

/* ---- accessors ------------------------------------------------------------------------------ */

const char *ri_sandbox_id(const ri_sandbox *sb) { return sb ? sb->id : ""; }

ri_sandbox_status ri_sandbox_status_of(const ri_sandbox *sb) {
    return sb ? sb_status(sb) : RI_SANDBOX_DESTROYED;
}

const ri_sandbox_config *ri_sandbox_get_config(const ri_sandbox *sb) { return sb ? &sb->config : NULL; }

ri_sandbox_metrics ri_sandbox_get_metrics(const ri_sandbox *sb) {
    ri_sandbox_metrics m;
    memset(&m, 0, sizeof m);
    if (!sb) return m;
    m = sb->metrics;
    m.memory_used_bytes = sb_image_memory_bytes(sb->image);
    if (sb->run) { /* live: the execution in progress */
        m.gas_used = sb_run_gas_used(sb, sb->run);
        m.execution_ms = sb_run_elapsed_ms(sb->run);
    }
    return m;
}

/* ---- suspend, destroy, interrupt ---------------------------------------------------------- */

bool ri_sandbox_suspend(ri_sandbox *sb, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) {
        sb_error_trap(err, "invalid_state", "ri_sandbox_suspend: sandbox is NULL");
        return false;
    }
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) {
        sb_error_destroyed(err, sb->id);
        return false;
    }
    if (status == RI_SANDBOX_SUSPENDED) return true;
    if (status != RI_SANDBOX_LOADED || sb->run) {
        sb_error_trap(err, "invalid_state", "Cannot suspend: instance status is '%s'",
                      ri_sandbox_status_name(sb->run ? RI_SANDBOX_RUNNING : status));
        return false;
    }
    sb_set_status(sb, RI_SANDBOX_SUSPENDED);
    return true;
}

void ri_sandbox_destroy(ri_sandbox *sb) {
    if (!sb || sb_status(sb) == RI_SANDBOX_DESTROYED) return;
    sb_set_status(sb, RI_SANDBOX_DESTROYED);
    if (sb->run) {
        /* Called from a host function: the store is in use. Stop the run; whoever
         * started it releases the image when it returns. */
        sb->destroy_requested = true;
        ri_store_interrupt(sb->run->store);
        return;
    }
    sb_release_image(sb);
}

void ri_sandbox_interrupt(ri_sandbox *sb) {
    if (!sb) return;
    pthread_mutex_lock(&sb->interrupt_lock);
    if (sb->interruptible) ri_store_interrupt(sb->interruptible);
    pthread_mutex_unlock(&sb->interrupt_lock);
}

void ri_sandbox_result_free(ri_sandbox_result *result) {
    if (!result) return;
    free(result->value_json);
    result->value_json = NULL;
}

void ri_free(void *p) { free(p); }
