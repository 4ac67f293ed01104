/* Executions of code as text ({"language":"python"|"lua"|"javascript","code":...}): the interpreters of
 * ri/lang.h, each opened once per server on its first use (loaded, initialised, kept as a
 * checkpoint), and every execution restarts the sandbox into one of them among its own
 * files (ri_interpreter_run), as a WASI process like any other: streamed output, stdin,
 * exit code, time slices, live checkpoints. docs/SERVER.md "Languages". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

/* The languages the server runs; Ruby's interpreter needs host functions of its own that a
 * server sandbox does not have. */
static const ri_language served[] = {RI_LANG_PYTHON, RI_LANG_LUA, RI_LANG_JAVASCRIPT};

ri_language srv_language_of(const char *name) {
    ri_language lang = ri_language_from_name(name);
    for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
        if (served[i] == lang) return lang;
    return RI_LANG_NONE;
}

const char *srv_language_names(void) { return "wasm, python, lua, javascript"; }

static char *interpreter_path(const srv *s, ri_language lang) {
    const char *dir = s->cfg.interpreters_dir;
    const char *env = getenv("RI_INTERPRETERS_DIR"), *home = getenv("HOME");
    char path[4096];
    if (dir && dir[0]) snprintf(path, sizeof path, "%s/%s.wasm", dir, ri_language_name(lang));
    else if (env && env[0]) snprintf(path, sizeof path, "%s/%s.wasm", env, ri_language_name(lang));
    else snprintf(path, sizeof path, "%s/.cache/ri/interpreters/%s.wasm", home ? home : ".", ri_language_name(lang));
    return strdup(path);
}

ri_interpreter *srv_interpreter(srv *s, ri_language lang, char *why, size_t cap) {
    if (lang <= RI_LANG_NONE || lang >= SRV_LANGUAGES) {
        snprintf(why, cap, "Unsupported language");
        return NULL;
    }
    pthread_mutex_lock(&s->lang_lock);
    ri_interpreter *it = s->interpreters[lang];
    if (!it) {
        char *path = interpreter_path(s, lang);
        uint8_t *wasm = NULL;
        size_t len = 0;
        FILE *f = path ? fopen(path, "rb") : NULL;
        if (f && fseek(f, 0, SEEK_END) == 0) {
            long n = ftell(f);
            if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (wasm = malloc((size_t)n)) != NULL &&
                fread(wasm, 1, (size_t)n, f) == (size_t)n)
                len = (size_t)n;
        }
        if (f) fclose(f);
        if (!len) {
            snprintf(why, cap, "The %s interpreter is not installed on this server (%s; scripts/fetch-interpreters.sh).",
                     ri_language_name(lang), path ? path : "?");
        } else {
            /* the template's limits: the server's largest (initialisation runs in slices) */
            ri_sandbox_config c = ri_sandbox_config_default();
            c.has_event_timestamp = true;
            c.gas_schedule = RI_GAS_INSTRUCTIONS;
            c.max_gas = s->cfg.max_gas;
            c.max_memory_bytes = s->cfg.max_sandbox_memory;
            c.max_execution_ms = s->cfg.max_execution_ms;
            ri_sandbox_error err;
            it = ri_interpreter_open(s->lang_factory, lang, wasm, len, &c, &err);
            if (!it) snprintf(why, cap, "The %s interpreter does not start: %s", ri_language_name(lang), err.message);
            s->interpreters[lang] = it;
        }
        free(wasm);
        free(path);
    }
    pthread_mutex_unlock(&s->lang_lock);
    return it;
}

void srv_interpreters_free(srv *s) {
    for (size_t i = 0; i < SRV_LANGUAGES; i++) {
        ri_interpreter_free(s->interpreters[i]);
        s->interpreters[i] = NULL;
    }
}
