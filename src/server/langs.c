/* Executions of code as text ({"language":"python"|"lua"|"ruby"|"javascript","code":...}): the
 * interpreters of ri/lang.h, each opened once per server on its first use (loaded and
 * initialised, or restored from the image cached beside its .wasm, and kept as a checkpoint),
 * and every execution restarts the sandbox into one of them among its own files
 * (ri_interpreter_run), as a WASI process like any other: streamed output, stdin, exit code,
 * time slices, live checkpoints. docs/SERVER.md "Languages". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

static const ri_language served[] = {RI_LANG_PYTHON, RI_LANG_LUA, RI_LANG_RUBY, RI_LANG_JAVASCRIPT};
#define NSERVED (sizeof served / sizeof served[0])

ri_language srv_language_of(const char *name) {
    ri_language lang = ri_language_from_name(name);
    for (size_t i = 0; i < NSERVED; i++)
        if (served[i] == lang) return lang;
    return RI_LANG_NONE;
}

const char *srv_language_names(void) { return "wasm, python, lua, ruby, javascript"; }

/* The interpreter file's bytes (malloc'd), or NULL. */
static uint8_t *read_interpreter(const srv *s, ri_language lang, char *path, size_t cap, size_t *len) {
    *len = 0;
    if (!ri_interpreter_path(lang, s->cfg.interpreters_dir, path, cap)) return NULL;
    uint8_t *wasm = NULL;
    FILE *f = fopen(path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (wasm = malloc((size_t)n)) != NULL &&
            fread(wasm, 1, (size_t)n, f) == (size_t)n)
            *len = (size_t)n;
    }
    if (f) fclose(f);
    if (!*len) {
        free(wasm);
        wasm = NULL;
    }
    return wasm;
}

void srv_lang_imports_read(srv *s) {
    for (size_t i = 0; i < NSERVED; i++) {
        char path[4096];
        size_t len;
        uint8_t *wasm = read_interpreter(s, served[i], path, sizeof path, &len);
        if (wasm) s->lang_imports[served[i]] = ri_interpreter_imports_read(wasm, len, NULL);
        free(wasm);
    }
}

uint32_t srv_lang_imports_add(const srv *s, srv_host_fns *fns, uint32_t n) {
    for (size_t l = 0; l < SRV_LANGUAGES; l++) {
        const ri_host_function *f;
        const char *const *m;
        uint32_t k = ri_interpreter_imports_get(s->lang_imports[l], &f, &m);
        for (uint32_t i = 0; i < k && n < SRV_HOST_FNS; i++, n++) {
            fns->fns[n] = f[i];
            fns->modules[n] = m[i];
        }
    }
    return n;
}

/* Opens lang's interpreter, on the calling worker, with no lock held. */
static ri_interpreter *open_interpreter(srv *s, ri_language lang, char *why, size_t cap) {
    char path[4096];
    size_t len;
    uint8_t *wasm = read_interpreter(s, lang, path, sizeof path, &len);
    if (!wasm) {
        snprintf(why, cap, "The %s interpreter is not installed on this server (%s; scripts/fetch-interpreters.sh).",
                 ri_language_name(lang), path);
        return NULL;
    }
    /* the template's limits: the server's largest (initialisation runs in slices) */
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.gas_schedule = RI_GAS_INSTRUCTIONS;
    c.max_gas = s->cfg.max_gas;
    c.max_memory_bytes = s->cfg.max_sandbox_memory;
    c.max_execution_ms = s->cfg.max_execution_ms;
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0'; /* the image cache: beside the .wasm */
    ri_sandbox_error err;
    ri_image_use used;
    ri_interpreter *it = ri_interpreter_open_cached(s->lang_factory, lang, wasm, len, &c, slash ? path : ".", &used, &err);
    free(wasm);
    if (!it) snprintf(why, cap, "The %s interpreter does not start: %s", ri_language_name(lang), err.message);
    else
        srv_log(s, "info", "interpreter opened", "{s:s, s:s}", "language", ri_language_name(lang), "image",
                used == RI_IMAGE_RESTORED ? "restored" : used == RI_IMAGE_WRITTEN ? "written" : "none");
    return it;
}

ri_interpreter *srv_interpreter(srv *s, ri_language lang, char *why, size_t cap) {
    if (lang <= RI_LANG_NONE || lang >= SRV_LANGUAGES) {
        snprintf(why, cap, "Unsupported language");
        return NULL;
    }
    pthread_mutex_lock(&s->lang_lock);
    /* one worker opens it (seconds for Ruby) without the lock: other languages go on, and
     * executions of this one wait for it */
    while (!s->interpreters[lang] && s->opening[lang]) pthread_cond_wait(&s->lang_cond, &s->lang_lock);
    ri_interpreter *it = s->interpreters[lang];
    if (!it) {
        s->opening[lang] = true;
        pthread_mutex_unlock(&s->lang_lock);
        it = open_interpreter(s, lang, why, cap);
        pthread_mutex_lock(&s->lang_lock);
        s->interpreters[lang] = it;
        s->opening[lang] = false;
        pthread_cond_broadcast(&s->lang_cond);
    }
    pthread_mutex_unlock(&s->lang_lock);
    return it;
}

void srv_interpreters_free(srv *s) {
    for (size_t i = 0; i < SRV_LANGUAGES; i++) {
        ri_interpreter_free(s->interpreters[i]);
        s->interpreters[i] = NULL;
        ri_interpreter_imports_free(s->lang_imports[i]);
        s->lang_imports[i] = NULL;
    }
}
