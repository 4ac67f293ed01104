/* ri-bench-lang: code as text in-process (docs/LANGUAGES.md), per installed language:
 *   open      ri_interpreter_open_cached (the image cache beside the .wasm; first run writes it)
 *   ready     a new sandbox ready for code (ri_interpreter_sandbox: a fork of the initialised
 *             interpreter), median
 *   print     `print(1+1)` (puts for Ruby) in it: restart, run, exit, median
 *   fib(25)   the language's own recursive fib(25), printed, one run
 * and, when a native interpreter is on PATH (python3, lua5.4, ruby; node for JavaScript), fib(25)
 * there (the whole command, its start-up included), with the ratio measured in the same run.
 * Absent interpreters are skipped, saying so.
 * usage: ri-bench-lang [--reps N] [--langs python,lua,ruby,javascript] [--no-cache] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_file.h"
#include "ri/lang.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

typedef struct lang_case {
    ri_language lang;
    const char *print, *fib, *native, *native_fib;
} lang_case;

static const lang_case cases[] = {
    {RI_LANG_PYTHON, "print(1+1)", "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(25))\n",
     "python3", "python3 -c 'def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(25))'"},
    {RI_LANG_LUA, "print(1+1)",
     "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end\nprint(fib(25))\n", "lua5.4",
     "lua5.4 -e 'local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end print(fib(25))'"},
    {RI_LANG_RUBY, "puts 1+1", "def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)\nputs fib(25)\n", "ruby",
     "ruby -e 'def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2); puts fib(25)'"},
    /* JavaScript's native reference is Node (V8 compiles the JavaScript: a JIT, not an interpreter) */
    {RI_LANG_JAVASCRIPT, "console.log(1+1)",
     "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nconsole.log(fib(25));\n", "node",
     "node -e 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); } console.log(fib(25));'"},
};

/* The wall time of a shell command (ms), or -1 when it fails. */
static double time_command(const char *cmd) {
    char full[1024];
    snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
    double t0 = now_ms();
    int rc = system(full);
    return rc == 0 ? now_ms() - t0 : -1;
}

static bool on_path(const char *prog) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

int main(int argc, char **argv) {
    int reps = 50;
    const char *only = NULL;
    bool no_cache = false;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--no-cache") == 0) no_cache = true;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--langs") == 0) only = argv[i + 1];
    }
    if (reps < 1 || reps > 100000) reps = 50;
    printf("%-7s %10s %10s %10s %12s %12s %12s %8s\n", "lang", "open ms", "ready ms", "print ms", "fib25 ri ms",
           "instructions", "native ms", "ri/native");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const lang_case *lc = &cases[c];
        const char *name = ri_language_name(lc->lang);
        if (only && !strstr(only, name)) continue;
        char path[4096];
        size_t len = 0;
        uint8_t *wasm = ri_interpreter_path(lc->lang, NULL, path, sizeof path) ? bench_read_file(path, &len) : NULL;
        if (!wasm) {
            printf("%-7s skipped: no %s (scripts/fetch-interpreters.sh)\n", name, path);
            continue;
        }
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        ri_sandbox_config cfg = ri_sandbox_config_default();
        cfg.has_event_timestamp = true;
        cfg.gas_schedule = RI_GAS_INSTRUCTIONS;
        cfg.max_gas = UINT64_C(1) << 40;
        cfg.max_memory_bytes = 512u << 20;
        cfg.max_execution_ms = 600000;
        ri_sandboxes *factory = ri_sandboxes_new();
        ri_sandbox_error err;
        ri_image_use used;
        double t0 = now_ms();
        ri_interpreter *it = ri_interpreter_open_cached(factory, lc->lang, wasm, len, &cfg, no_cache ? NULL : dir, &used, &err);
        double open_ms = now_ms() - t0;
        free(wasm);
        if (!it) {
            printf("%-7s failed to open: %s\n", name, err.message);
            ri_sandboxes_free(factory);
            continue;
        }
        double *ready = calloc((size_t)reps, sizeof *ready), *print = calloc((size_t)reps, sizeof *print);
        for (int r = 0; ready && print && r < reps; r++) {
            t0 = now_ms();
            ri_sandbox *sb = ri_interpreter_sandbox(it, factory, &err); /* a fork: ready for code */
            ready[r] = now_ms() - t0;
            t0 = now_ms();
            ri_sandbox_result res = sb ? ri_interpreter_run(it, sb, lc->print, strlen(lc->print)) : (ri_sandbox_result){0};
            print[r] = now_ms() - t0;
            ri_sandbox_result_free(&res);
            ri_sandbox_free(sb);
        }
        ri_sandbox *sb = ri_interpreter_sandbox(it, factory, &err);
        t0 = now_ms();
        ri_sandbox_result res = ri_interpreter_run(it, sb, lc->fib, strlen(lc->fib));
        double fib_ms = now_ms() - t0;
        size_t n = 0;
        const uint8_t *out = ri_sandbox_wasi_output(sb, RI_WASI_STDOUT, &n);
        bool right = n >= 6 && memcmp(out, "75025\n", 6) == 0;
        double native = on_path(lc->native) ? time_command(lc->native_fib) : -1;
        printf("%-7s %10.1f %10.3f %10.3f %12.1f %12llu ", name, open_ms, median(ready, reps), median(print, reps),
               fib_ms, (unsigned long long)res.gas_used);
        if (native >= 0) printf("%12.1f %8.2f", native, fib_ms / native);
        else printf("%12s %8s", "absent", "-");
        printf("%s  (image %s)\n", right ? "" : "  WRONG fib output",
               used == RI_IMAGE_RESTORED ? "restored" : used == RI_IMAGE_WRITTEN ? "written" : "none");
        ri_sandbox_result_free(&res);
        ri_sandbox_free(sb);
        free(ready);
        free(print);
        ri_interpreter_free(it);
        ri_sandboxes_free(factory);
    }
    return 0;
}
