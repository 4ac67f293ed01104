/* ri-bench-lang-families: what fusion families give on the real interpreters (docs/LANGUAGES.md),
 * which no family was shaped after. For each installed language and workload (an integer one,
 * fib; a float one; a string one), runs the code with all families on and with one family off
 * (ri_sandbox_config.fusions_off), interleaved round by round, and prints the ratio of the fastest
 * runs' user CPU time, off / on: above 1, the family pays on that workload. The output of both
 * compilations must be the same (a family changes speed only), and so must the gas.
 *
 * usage: ri-bench-lang-families [--rounds N] [--langs python,lua,...] [--families a,b]
 * Families default to float-pair,float-memory,all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_file.h"
#include "ri/lang.h"

typedef struct workload {
    const char *name;
    const char *code[4]; /* python, lua, ruby, javascript */
} workload;

static const ri_language langs[4] = {RI_LANG_PYTHON, RI_LANG_LUA, RI_LANG_RUBY, RI_LANG_JAVASCRIPT};

static const workload workloads[] = {
    {"fib",
     {"def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(22))\n",
      "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end\nprint(fib(22))\n",
      "def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)\nputs fib(22)\n",
      "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nconsole.log(fib(22));\n"}},
    /* an orbit step and a series: float multiply, add, divide, compare */
    {"float",
     {"def run():\n    x = 1.0\n    v = 0.0\n    s = 0.0\n    for i in range(60000):\n"
      "        a = -x / (x * x + 0.25)\n        v = v + a * 0.01\n        x = x + v * 0.01\n"
      "        s = s + x * 0.5 - v / 3.0\n    print('%.6f' % s)\nrun()\n",
      "local x, v, s = 1.0, 0.0, 0.0\nfor i = 1, 60000 do\n  local a = -x / (x * x + 0.25)\n"
      "  v = v + a * 0.01\n  x = x + v * 0.01\n  s = s + x * 0.5 - v / 3.0\nend\nprint(string.format('%.6f', s))\n",
      "x = 1.0; v = 0.0; s = 0.0\n60000.times do\n  a = -x / (x * x + 0.25)\n  v = v + a * 0.01\n"
      "  x = x + v * 0.01\n  s = s + x * 0.5 - v / 3.0\nend\nputs format('%.6f', s)\n",
      "let x = 1.0, v = 0.0, s = 0.0;\nfor (let i = 0; i < 60000; i++) {\n  const a = -x / (x * x + 0.25);\n"
      "  v = v + a * 0.01;\n  x = x + v * 0.01;\n  s = s + x * 0.5 - v / 3.0;\n}\nconsole.log(s.toFixed(6));\n"}},
    /* building, searching and counting strings */
    {"string",
     {"p = []\nfor i in range(4000):\n    p.append(str(i * 7))\nt = ','.join(p)\nprint(len(t), t.count('77'), t.find('3999'))\n",
      "local p = {}\nfor i = 0, 3999 do p[#p + 1] = tostring(i * 7) end\nlocal t = table.concat(p, ',')\n"
      "local n = 0\nfor _ in string.gmatch(t, '77') do n = n + 1 end\nprint(#t, n, string.find(t, '3999', 1, true))\n",
      "p = []\n4000.times { |i| p << (i * 7).to_s }\nt = p.join(',')\nputs t.length, t.scan('77').length, t.index('3999')\n",
      "const p = [];\nfor (let i = 0; i < 4000; i++) p.push(String(i * 7));\nconst t = p.join(',');\n"
      "console.log(t.length, t.split('77').length - 1, t.indexOf('3999'));\n"}},
};

static double user_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

/* One interpreter compiled with the families in fusions_off left out. */
typedef struct side {
    ri_sandboxes *factory;
    ri_interpreter *it;
} side;

static bool side_open(side *s, ri_language lang, const uint8_t *wasm, size_t len, const char *dir, uint32_t off) {
    ri_sandbox_config cfg = ri_sandbox_config_default();
    cfg.has_event_timestamp = true;
    cfg.gas_schedule = RI_GAS_INSTRUCTIONS;
    cfg.max_gas = UINT64_C(1) << 40;
    cfg.max_memory_bytes = 512u << 20;
    cfg.max_execution_ms = RI_SANDBOX_NO_TIME_LIMIT; /* no watchdog thread: user time is the run's */
    cfg.fusions_off = off;
    s->factory = ri_sandboxes_new();
    ri_sandbox_error err;
    ri_image_use used;
    s->it = s->factory ? ri_interpreter_open_cached(s->factory, lang, wasm, len, &cfg, dir, &used, &err) : NULL;
    if (!s->it) fprintf(stderr, "ri-bench-lang-families: %s: %s\n", ri_language_name(lang), err.message);
    return s->it != NULL;
}

static void side_close(side *s) {
    ri_interpreter_free(s->it);
    ri_sandboxes_free(s->factory);
}

/* Runs code once in a fresh sandbox; its user time, output (malloc'd) and gas. */
static double side_run(side *s, const char *code, char **out, uint64_t *gas) {
    ri_sandbox_error err;
    ri_sandbox *sb = ri_interpreter_sandbox(s->it, s->factory, &err);
    if (!sb) {
        fprintf(stderr, "ri-bench-lang-families: %s\n", err.message);
        exit(1);
    }
    double t0 = user_seconds();
    ri_sandbox_result r = ri_interpreter_run(s->it, sb, code, strlen(code));
    double t = user_seconds() - t0;
    size_t n = 0;
    const uint8_t *o = ri_sandbox_wasi_output(sb, RI_WASI_STDOUT, &n);
    *out = calloc(1, n + 1);
    if (*out && n) memcpy(*out, o, n);
    *gas = r.gas_used;
    if (!r.ok) {
        fprintf(stderr, "ri-bench-lang-families: run failed: %s\n", r.error.message);
        exit(1);
    }
    ri_sandbox_result_free(&r);
    ri_sandbox_free(sb);
    return t;
}

int main(int argc, char **argv) {
    int rounds = 5;
    const char *only = NULL, *families = "float-pair,float-memory,all";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--langs") == 0) only = argv[i + 1];
        else if (strcmp(argv[i], "--families") == 0) families = argv[i + 1];
        else {
            fprintf(stderr, "usage: ri-bench-lang-families [--rounds N] [--langs LIST] [--families LIST]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 1000) rounds = 5;
    printf("user CPU time, fastest of %d interleaved rounds; ratio = family off / all on (above 1: it pays)\n", rounds);
    printf("%-11s %-8s %-14s %10s %10s %7s\n", "language", "workload", "family off", "on ms", "off ms", "ratio");
    char list[256];
    snprintf(list, sizeof list, "%s", families);
    for (int l = 0; l < 4; l++) {
        const char *name = ri_language_name(langs[l]);
        if (only && !strstr(only, name)) continue;
        char path[4096], dir[4096];
        size_t len = 0;
        uint8_t *wasm = ri_interpreter_path(langs[l], NULL, path, sizeof path) ? bench_read_file(path, &len) : NULL;
        if (!wasm) {
            printf("%-11s skipped: no %s (scripts/fetch-interpreters.sh)\n", name, path);
            continue;
        }
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        side on;
        if (!side_open(&on, langs[l], wasm, len, dir, 0)) return 1;
        char *save = NULL;
        for (char *fam = strtok_r(list, ",", &save); fam; fam = strtok_r(NULL, ",", &save)) {
            uint32_t off = 0;
            if (!ri_fusion_parse(fam, &off)) {
                fprintf(stderr, "ri-bench-lang-families: unknown family %s\n", fam);
                return 2;
            }
            side other;
            if (!side_open(&other, langs[l], wasm, len, dir, off)) return 1;
            for (size_t w = 0; w < sizeof workloads / sizeof workloads[0]; w++) {
                double best[2] = {1e30, 1e30};
                char *want = NULL;
                uint64_t want_gas = 0;
                for (int r = 0; r < rounds; r++)
                    for (int k = 0; k < 2; k++) {
                        char *out;
                        uint64_t gas;
                        double t = side_run(k ? &other : &on, workloads[w].code[l], &out, &gas);
                        if (t < best[k]) best[k] = t;
                        if (!want) {
                            want = out;
                            want_gas = gas;
                            continue;
                        }
                        if (strcmp(out, want) != 0 || gas != want_gas) {
                            fprintf(stderr, "ri-bench-lang-families: %s %s with %s off: output or gas differ\n", name,
                                    workloads[w].name, fam);
                            return 1;
                        }
                        free(out);
                    }
                printf("%-11s %-8s %-14s %10.1f %10.1f %7.3f\n", name, workloads[w].name, fam, best[0] * 1e3,
                       best[1] * 1e3, best[1] / best[0]);
                fflush(stdout);
                free(want);
            }
            side_close(&other);
        }
        snprintf(list, sizeof list, "%s", families);
        side_close(&on);
        free(wasm);
    }
    return 0;
}
