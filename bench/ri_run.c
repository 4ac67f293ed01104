/*
 * ri-bench-run: runs one benchmark program on the engine, through the public API only.
 *
 *   ri-bench-run [--no-metering] [--repeat N] MODULE.wasm FUNC
 *       Loads MODULE, then N times (default 1): a fresh store, instantiation with no
 *       imports, one call of FUNC() -> i32. Prints the result as an unsigned decimal on
 *       stdout (every run must agree) and, with --repeat, one machine-readable line on
 *       stderr:  ri-bench-run: call runs=N median_ns=.. min_ns=.. max_ns=.. gas_used=..
 *       --no-metering loads the module unmetered (ri_module_config.unmetered: code
 *       compiled without gas charges); by default it is metered, with a finite budget.
 *       --fusions-off LIST compiles without those fusion families (ri_fusion names,
 *       comma-separated, or all): what each family gives, measured.
 *
 *   ri-bench-run --load-only [--repeat N] MODULE.wasm
 *       Times ri_module_load (decode + validate + compile) N times (default 5) and prints
 *       on stdout:  ri-bench-run: load runs=N module_bytes=.. code_bytes=.. median_ns=..
 *       min_ns=.. ns_per_code_byte=..
 *       and the size of the engine's internal code against the code section:
 *       ri-bench-run: internal_code_bytes=.. internal_code_ratio=..
 *
 * Only the call is timed (not loading or instantiation), so the numbers compare with an
 * in-process timer around run() in native code and in Node.
 *
 * Exit status: 0 on success, 1 on any error (message on stderr), 2 on bad usage.
 */
/* clock_gettime is POSIX, not C11; the build defines _GNU_SOURCE, a standalone build may not. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ri/engine.h"

/* Metering on: a budget large enough for any benchmark (about 10^15 instructions, days of
 * work) yet finite, so the accounting runs as it would for a real guest. Metering off loads
 * the module with ri_module_config.unmetered: its code charges no gas at all (and the store
 * keeps its default budget, UINT64_MAX, untouched). */
#define METERED_GAS UINT64_C(1000000000000000)

#define MAX_REPEAT 100000

static void usage(FILE *out) {
    fprintf(out,
            "usage: ri-bench-run [--no-metering] [--fusions-off LIST] [--repeat N] MODULE.wasm FUNC\n"
            "       ri-bench-run --load-only [--repeat N] MODULE.wasm\n"
            "Calls FUNC() -> i32 and prints the result as an unsigned decimal. With --repeat N\n"
            "runs N times (fresh store each time) and prints the median call time on stderr.\n"
            "--no-metering loads the module unmetered (no gas charges in its code).\n"
            "--fusions-off LIST compiles without those fusion families (names, or all).\n"
            "--load-only times decode+validate+compile in ns per byte of the code section,\n"
            "and prints the size of the engine's internal code against the code section.\n");
}

static uint64_t now_ns(void) {
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail on Linux; a zero reading would only spoil a timing. */
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* Reads a whole file. Returns NULL with a message on stderr on failure. */
static uint8_t *read_file(const char *path, size_t *len_out) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ri-bench-run: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        fprintf(stderr, "ri-bench-run: out of memory reading %s\n", path);
        return NULL;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                free(buf);
                fclose(f);
                fprintf(stderr, "ri-bench-run: out of memory reading %s\n", path);
                return NULL;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(buf);
        fprintf(stderr, "ri-bench-run: error reading %s\n", path);
        return NULL;
    }
    *len_out = len;
    return buf;
}

/* Reads an unsigned LEB128 of at most 32 bits at *pos; false if truncated or too long. */
static bool read_u32_leb(const uint8_t *b, size_t len, size_t *pos, uint32_t *out) {
    uint32_t result = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        if (*pos >= len) return false;
        uint8_t byte = b[(*pos)++];
        if (shift == 28 && (byte & 0x70) != 0) return false; /* bits beyond 32 */
        result |= (uint32_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = result;
            return true;
        }
    }
    return false;
}

/* Size of the code section's payload, found by walking the section headers. The engine
 * does not expose it, and the load timing must be normalised by code bytes, not by the
 * whole file (data segments and custom sections cost little to load). Returns false if
 * the headers do not walk cleanly or there is no code section. */
static bool code_section_size(const uint8_t *b, size_t len, uint32_t *out) {
    static const uint8_t header[8] = {0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00};
    if (len < sizeof header || memcmp(b, header, sizeof header) != 0) return false;
    size_t pos = sizeof header;
    while (pos < len) {
        uint8_t id = b[pos++];
        uint32_t size;
        if (!read_u32_leb(b, len, &pos, &size) || size > len - pos) return false;
        if (id == 10) {
            *out = size;
            return true;
        }
        pos += size;
    }
    return false;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v and returns its median (the mean of the middle two for an even count). */
static uint64_t median(uint64_t *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_u64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

static int load_only(const uint8_t *bytes, size_t len, const char *path, long repeat) {
    uint32_t code_bytes;
    if (!code_section_size(bytes, len, &code_bytes) || code_bytes == 0) {
        fprintf(stderr, "ri-bench-run: %s: no code section (or malformed section headers)\n", path);
        return 1;
    }
    uint64_t *times = malloc((size_t)repeat * sizeof *times);
    if (!times) {
        fprintf(stderr, "ri-bench-run: out of memory\n");
        return 1;
    }
    for (long i = 0; i < repeat; i++) {
        ri_error err;
        uint64_t t0 = now_ns();
        ri_module *m = ri_module_load(bytes, len, NULL, &err);
        uint64_t t1 = now_ns();
        if (!m) {
            fprintf(stderr, "ri-bench-run: %s: load failed: %s: %s\n", path, ri_errcode_name(err.code),
                    err.message);
            free(times);
            return 1;
        }
        ri_module_free(m); /* outside the timed region: freeing is not loading */
        times[i] = t1 - t0;
    }
    uint64_t med = median(times, (size_t)repeat);
    printf("ri-bench-run: load runs=%ld module_bytes=%zu code_bytes=%" PRIu32 " median_ns=%" PRIu64
           " min_ns=%" PRIu64 " ns_per_code_byte=%.2f\n",
           repeat, len, code_bytes, med, times[0], (double)med / (double)code_bytes);
    free(times);
    /* The internal code the engine made of the bodies, against the code section. */
    ri_error err;
    ri_module *m = ri_module_load(bytes, len, NULL, &err);
    if (!m) {
        fprintf(stderr, "ri-bench-run: %s: load failed: %s: %s\n", path, ri_errcode_name(err.code), err.message);
        return 1;
    }
    size_t internal = ri_module_code_bytes(m);
    ri_module_free(m);
    printf("ri-bench-run: internal_code_bytes=%zu internal_code_ratio=%.2f\n", internal,
           (double)internal / (double)code_bytes);
    return 0;
}

/* One run: fresh store, instantiate, call FUNC. Fills *result, *call_ns and *gas_used. */
static int run_once(const ri_module *m, const char *func_name, bool metering, uint32_t *result,
                    uint64_t *call_ns, uint64_t *gas_used) {
    int rc = 1;
    ri_error err;
    ri_store *store = ri_store_new(NULL);
    if (!store) {
        fprintf(stderr, "ri-bench-run: out of memory creating a store\n");
        return 1;
    }
    if (metering) ri_store_set_gas(store, METERED_GAS);

    ri_instance *inst = ri_instantiate(store, m, NULL, 0, &err);
    if (!inst) {
        fprintf(stderr, "ri-bench-run: instantiation failed: %s: %s\n", ri_errcode_name(err.code),
                err.message);
        goto done;
    }
    ri_extern ext;
    if (!ri_instance_export(inst, func_name, &ext) || ext.kind != RI_EXTERN_FUNC) {
        fprintf(stderr, "ri-bench-run: no exported function named \"%s\"\n", func_name);
        goto done;
    }
    ri_functype ft = ri_func_type(ext.of.func);
    if (ft.nparams != 0 || ft.nresults != 1 || ft.results[0] != RI_I32) {
        fprintf(stderr, "ri-bench-run: \"%s\" is not of type [] -> [i32]\n", func_name);
        goto done;
    }
    /* The gas counter is read just around the call so instantiation (start function,
     * segments) does not count. */
    uint64_t gas_before = ri_store_gas(store);
    ri_val out;
    uint64_t t0 = now_ns();
    ri_errcode code = ri_func_call(store, ext.of.func, NULL, 0, &out, 1, &err);
    uint64_t t1 = now_ns();
    if (code != RI_OK) {
        if (code == RI_ERR_TRAP)
            fprintf(stderr, "ri-bench-run: \"%s\" trapped: %s\n", func_name, err.message);
        else
            fprintf(stderr, "ri-bench-run: calling \"%s\" failed: %s: %s\n", func_name,
                    ri_errcode_name(code), err.message);
        goto done;
    }
    if (out.type != RI_I32) {
        fprintf(stderr, "ri-bench-run: \"%s\" returned a non-i32 value\n", func_name);
        goto done;
    }
    *result = (uint32_t)out.of.i32;
    *call_ns = t1 - t0;
    uint64_t gas_after = ri_store_gas(store);
    *gas_used = gas_before >= gas_after ? gas_before - gas_after : 0;
    rc = 0;
done:
    ri_store_free(store);
    return rc;
}

static int run_calls(const uint8_t *bytes, size_t len, const char *path, const char *func_name,
                     bool metering, uint32_t fusions_off, long repeat, bool report) {
    ri_error err;
    ri_module_config cfg;
    memset(&cfg, 0, sizeof cfg); /* zero fields: the defaults */
    cfg.unmetered = !metering;
    cfg.fusions_off = fusions_off;
    ri_module *m = ri_module_load(bytes, len, &cfg, &err);
    if (!m) {
        fprintf(stderr, "ri-bench-run: %s: load failed: %s: %s\n", path, ri_errcode_name(err.code),
                err.message);
        return 1;
    }
    if (ri_module_import_count(m) != 0) {
        fprintf(stderr, "ri-bench-run: %s: has %" PRIu32 " imports; benchmarks must import nothing\n",
                path, ri_module_import_count(m));
        ri_module_free(m);
        return 1;
    }
    uint64_t *times = malloc((size_t)repeat * sizeof *times);
    if (!times) {
        fprintf(stderr, "ri-bench-run: out of memory\n");
        ri_module_free(m);
        return 1;
    }
    int rc = 0;
    uint32_t first = 0;
    uint64_t gas_used = 0;
    for (long i = 0; i < repeat; i++) {
        uint32_t result;
        if (run_once(m, func_name, metering, &result, &times[i], &gas_used) != 0) {
            rc = 1;
            break;
        }
        if (i == 0) {
            first = result;
        } else if (result != first) {
            /* A fresh instance must compute the same value every time; anything else is an
             * engine bug worth a loud failure. */
            fprintf(stderr, "ri-bench-run: run %ld returned %" PRIu32 ", run 1 returned %" PRIu32 "\n",
                    i + 1, result, first);
            rc = 1;
            break;
        }
    }
    if (rc == 0) {
        printf("%" PRIu32 "\n", first);
        if (report) {
            uint64_t med = median(times, (size_t)repeat);
            fprintf(stderr,
                    "ri-bench-run: call runs=%ld median_ns=%" PRIu64 " min_ns=%" PRIu64
                    " max_ns=%" PRIu64 " metering=%s gas_used=%" PRIu64 "\n",
                    repeat, med, times[0], times[repeat - 1], metering ? "on" : "off", gas_used);
        }
    }
    free(times);
    ri_module_free(m);
    return rc;
}

int main(int argc, char **argv) {
    bool metering = true, load = false, report = false;
    uint32_t fusions_off = 0;
    long repeat = 0;
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--no-metering") == 0) {
            metering = false;
        } else if (strcmp(a, "--fusions-off") == 0) {
            if (i + 1 >= argc || !ri_fusion_parse(argv[++i], &fusions_off)) {
                fprintf(stderr, "ri-bench-run: --fusions-off wants fusion family names (or all)\n");
                return 2;
            }
        } else if (strcmp(a, "--load-only") == 0) {
            load = true;
        } else if (strcmp(a, "--repeat") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ri-bench-run: --repeat needs a count\n");
                return 2;
            }
            char *end;
            errno = 0;
            repeat = strtol(argv[++i], &end, 10);
            if (errno != 0 || *end != '\0' || repeat < 1 || repeat > MAX_REPEAT) {
                fprintf(stderr, "ri-bench-run: --repeat wants a count from 1 to %d, got \"%s\"\n",
                        MAX_REPEAT, argv[i]);
                return 2;
            }
            report = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ri-bench-run: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (npos < 2) {
            pos[npos++] = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (npos != (load ? 1 : 2)) {
        usage(stderr);
        return 2;
    }
    if (repeat == 0) repeat = load ? 5 : 1;

    size_t len;
    uint8_t *bytes = read_file(pos[0], &len);
    if (!bytes) return 1;
    int rc = load ? load_only(bytes, len, pos[0], repeat)
                  : run_calls(bytes, len, pos[0], pos[1], metering, fusions_off, repeat, report);
    free(bytes);
    return rc;
}
