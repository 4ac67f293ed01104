/*
 * A compiled WebAssembly fixture instantiated in a store of its own, for the engine's
 * fusion tests (test_fusion.c, test_index_load.c, test_load_branch.c, test_float_branch.c,
 * test_table_gas.c), and a thread that interrupts a store later (those and test_exec.c).
 * Header-only, like sandbox_test_util.h (each test is its own program).
 */
#ifndef ENGINE_FIXTURE_H
#define ENGINE_FIXTURE_H

#include <time.h>

#include "ri/engine.h"
#include "sandbox_test_util.h" /* read_fixture */

typedef struct engine_fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
    ri_memory *mem; /* the export "memory", or NULL */
} engine_fixture;

/* Loads $RI_WAT_DIR/<name>.wasm, metered unless `unmetered`. */
static inline ri_module *engine_fixture_module(const char *name, bool unmetered) {
    size_t len = 0;
    uint8_t *bytes = read_fixture(name, &len);
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg);
    mcfg.unmetered = unmetered;
    ri_error err;
    ri_module *module = ri_module_load(bytes, len, &mcfg, &err);
    free(bytes);
    assert_non_null(module);
    return module;
}

/* Loads $RI_WAT_DIR/<name>.wasm (metered unless `unmetered`), instantiates it without
 * imports in a new store with configuration `cfg` (NULL: the default). */
static inline void engine_fixture_open_with(engine_fixture *fx, const char *name, bool unmetered,
                                            const ri_store_config *cfg) {
    fx->module = engine_fixture_module(name, unmetered);
    ri_error err;
    ri_store_config def = ri_store_config_default();
    fx->store = ri_store_new(cfg ? cfg : &def);
    assert_non_null(fx->store);
    fx->instance = ri_instantiate(fx->store, fx->module, NULL, 0, &err);
    assert_non_null(fx->instance);
    ri_extern ext;
    fx->mem = ri_instance_export(fx->instance, "memory", &ext) && ext.kind == RI_EXTERN_MEMORY ? ext.of.memory : NULL;
}

/* The same with the default store configuration. */
static inline void engine_fixture_open(engine_fixture *fx, const char *name, bool unmetered) {
    engine_fixture_open_with(fx, name, unmetered, NULL);
}

static inline void engine_fixture_close(engine_fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

/* A thread body that interrupts `store` after `delay_ms` (ri_store_interrupt is the
 * one cross-thread operation on a store). */
typedef struct interrupter {
    ri_store *store;
    unsigned delay_ms;
} interrupter;

static inline void *interrupt_later(void *arg) {
    interrupter *it = arg;
    struct timespec ts = {0, (long)it->delay_ms * 1000000L};
    nanosleep(&ts, NULL);
    ri_store_interrupt(it->store);
    return NULL;
}

#endif
