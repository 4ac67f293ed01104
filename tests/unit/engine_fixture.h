/*
 * A compiled WebAssembly fixture instantiated in a store of its own, for the engine's
 * fusion tests (test_index_load.c, test_load_branch.c, test_float_branch.c,
 * test_table_gas.c). Header-only, like sandbox_test_util.h (each test is its own program).
 */
#ifndef ENGINE_FIXTURE_H
#define ENGINE_FIXTURE_H

#include "ri/engine.h"
#include "sandbox_test_util.h" /* read_fixture */

typedef struct engine_fixture {
    ri_module *module;
    ri_store *store;
    ri_instance *instance;
    ri_memory *mem; /* the export "memory", or NULL */
} engine_fixture;

/* Loads $RI_WAT_DIR/<name>.wasm (metered unless `unmetered`), instantiates it without
 * imports in a new store with the default configuration. */
static inline void engine_fixture_open(engine_fixture *fx, const char *name, bool unmetered) {
    size_t len = 0;
    uint8_t *bytes = read_fixture(name, &len);
    ri_module_config mcfg;
    memset(&mcfg, 0, sizeof mcfg);
    mcfg.unmetered = unmetered;
    ri_error err;
    fx->module = ri_module_load(bytes, len, &mcfg, &err);
    free(bytes);
    assert_non_null(fx->module);
    ri_store_config cfg = ri_store_config_default();
    fx->store = ri_store_new(&cfg);
    assert_non_null(fx->store);
    fx->instance = ri_instantiate(fx->store, fx->module, NULL, 0, &err);
    assert_non_null(fx->instance);
    ri_extern ext;
    fx->mem = ri_instance_export(fx->instance, "memory", &ext) && ext.kind == RI_EXTERN_MEMORY ? ext.of.memory : NULL;
}

static inline void engine_fixture_close(engine_fixture *fx) {
    ri_store_free(fx->store);
    ri_module_free(fx->module);
}

#endif
