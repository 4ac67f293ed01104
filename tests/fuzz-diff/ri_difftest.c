/*
 * ri_difftest: the ri side of the differential test against V8 (tests/fuzz-diff/README.md).
 *
 * Runs binaryen translate-to-fuzz modules through the engine's public API the way
 * binaryen's fuzz harness runs them in JS: the imports "fuzzing-support" "log-*" print
 * their argument, and every exported function is called once, in export order, with
 * typed zero arguments. Prints one line per event, exactly as v8_run.mjs does:
 *   module PATH | compile-error | link-error | instantiate-trap | call NAME |
 *   log TYPE:VALUE | result TYPE:VALUE... | trap | fuel-exhausted | end
 * Each call gets a fuel cap (gas) instead of a time limit, so a module that would run
 * too long ends the same way on every machine ("fuel-exhausted": the driver counts the
 * module as inconclusive, not as a difference).
 *
 * Usage: ri_difftest [--fuel N] MODULE.wasm...
 */
#include <ri/engine.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FUEL UINT64_C(10000000000)
#define MAX_VALUES 64 /* params or results of one export; more is reported as a skip */

static bool is_nan32(uint32_t bits) { return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0; }
static bool is_nan64(uint64_t bits)
{
    return (bits & UINT64_C(0x7ff0000000000000)) == UINT64_C(0x7ff0000000000000) &&
           (bits & UINT64_C(0x000fffffffffffff)) != 0;
}

/* Formats like v8_run.mjs's fmt(): NaNs as "nan" (only NaN-ness is compared), other
 * floats as their IEEE bits in lowercase hex without leading zeros. */
static void print_value(FILE *out, ri_val v)
{
    switch (v.type) {
    case RI_I32: fprintf(out, "i32:%" PRId32, v.of.i32); break;
    case RI_I64: fprintf(out, "i64:%" PRId64, v.of.i64); break;
    case RI_F32:
        if (is_nan32(v.of.f32_bits)) fputs("f32:nan", out);
        else fprintf(out, "f32:%" PRIx32, v.of.f32_bits);
        break;
    case RI_F64:
        if (is_nan64(v.of.f64_bits)) fputs("f64:nan", out);
        else fprintf(out, "f64:%" PRIx64, v.of.f64_bits);
        break;
    case RI_FUNCREF: fprintf(out, "funcref:%s", v.of.ref ? "nonnull" : "null"); break;
    case RI_EXTERNREF: fprintf(out, "externref:%s", v.of.ref ? "nonnull" : "null"); break;
    default: fprintf(out, "type%d:?", (int)v.type); break;
    }
}

static int log_import(ri_host_call *call, void *user, const ri_val *args, ri_val *results)
{
    (void)call;
    (void)results;
    FILE *out = user;
    /* JS cannot take a v128: V8 throws a TypeError at the call of log-v128, a trap here */
    if (args[0].type == RI_V128) return -1;
    fputs("log ", out);
    print_value(out, args[0]);
    fputc('\n', out);
    return 0;
}

static ri_val zero_of(ri_valtype t)
{
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = t;
    return v;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        uint8_t *grown = realloc(buf, cap * 2);
        if (!grown) { free(buf); buf = NULL; break; }
        buf = grown;
        cap *= 2;
    }
    bool failed = ferror(f);
    fclose(f);
    if (failed) { free(buf); return NULL; }
    *len = n;
    return buf;
}

/* Links the fuzzing-support logging imports; anything else is a link error, as it is
 * in the JS harness (whose import object holds only those). */
static bool link_imports(ri_store *store, const ri_module *m, ri_extern *imports, FILE *out)
{
    uint32_t n = ri_module_import_count(m);
    for (uint32_t i = 0; i < n; i++) {
        ri_import_info info = ri_module_import(m, i);
        bool known = info.type.kind == RI_EXTERN_FUNC && strcmp(info.module, "fuzzing-support") == 0 &&
                     strncmp(info.name, "log-", 4) == 0 && info.type.of.func.nparams == 1 &&
                     info.type.of.func.nresults == 0;
        if (!known) return false;
        imports[i].kind = RI_EXTERN_FUNC;
        imports[i].of.func = ri_func_new_host(store, &info.type.of.func, log_import, out);
        if (!imports[i].of.func) return false;
    }
    return true;
}

/* Calls every exported function in export order. false: stop the module (fuel ran out). */
static bool call_exports(ri_store *store, const ri_module *m, ri_instance *inst, uint64_t fuel, FILE *out)
{
    uint32_t n = ri_module_export_count(m);
    for (uint32_t i = 0; i < n; i++) {
        ri_export_info info = ri_module_export(m, i);
        if (info.type.kind != RI_EXTERN_FUNC) continue;
        fprintf(out, "call %.*s\n", (int)info.name_len, info.name);
        const ri_functype *ft = &info.type.of.func;
        ri_extern ex;
        if (ft->nparams > MAX_VALUES || ft->nresults > MAX_VALUES ||
            !ri_instance_export_n(inst, info.name, info.name_len, &ex)) {
            fputs("harness-skip\n", out);
            continue;
        }
        bool v128 = false; /* JS cannot call it: a TypeError before it runs, which the harness prints as a trap */
        for (uint32_t k = 0; k < ft->nparams; k++) v128 |= ft->params[k] == RI_V128;
        for (uint32_t k = 0; k < ft->nresults; k++) v128 |= ft->results[k] == RI_V128;
        if (v128) {
            fputs("trap\n", out);
            continue;
        }
        ri_val args[MAX_VALUES], results[MAX_VALUES];
        for (uint32_t k = 0; k < ft->nparams; k++) args[k] = zero_of(ft->params[k]);
        ri_error err;
        ri_store_set_gas(store, fuel);
        ri_errcode rc = ri_func_call(store, ex.of.func, args, ft->nparams, results, ft->nresults, &err);
        if (rc == RI_ERR_TRAP && err.trap == RI_TRAP_OUT_OF_GAS) {
            fputs("fuel-exhausted\n", out);
            return false;
        }
        if (rc == RI_ERR_TRAP) {
            fputs("trap\n", out); /* trap kinds are not compared; stderr says which */
            fprintf(stderr, "%.*s: trap: %s\n", (int)info.name_len, info.name, err.message);
            continue;
        }
        if (rc != RI_OK) {
            fprintf(out, "call-error %s\n", ri_errcode_name(rc));
            continue;
        }
        if (ft->nresults == 0) continue;
        fputs("result", out);
        for (uint32_t k = 0; k < ft->nresults; k++) {
            fputc(' ', out);
            print_value(out, results[k]);
        }
        fputc('\n', out);
    }
    return true;
}

static void run_module(const char *path, uint64_t fuel, FILE *out)
{
    fprintf(out, "module %s\n", path);
    size_t len = 0;
    uint8_t *bytes = read_file(path, &len);
    if (!bytes) {
        fprintf(out, "read-error %s\nend\n", strerror(errno));
        return;
    }
    ri_error err;
    ri_module *m = ri_module_load(bytes, len, NULL, &err);
    free(bytes);
    if (!m) {
        fputs("compile-error\n", out);
        fprintf(stderr, "%s: %s: %s\n", path, ri_errcode_name(err.code), err.message);
        fputs("end\n", out);
        return;
    }
    ri_store *store = ri_store_new(NULL);
    uint32_t nimports = ri_module_import_count(m);
    ri_extern *imports = calloc(nimports ? nimports : 1, sizeof *imports);
    if (!store || !imports) {
        fputs("harness-nomem\n", out);
    } else if (!link_imports(store, m, imports, out)) {
        fputs("link-error\n", out);
    } else {
        ri_instance *inst = ri_instantiate(store, m, imports, nimports, &err);
        if (!inst) fputs(err.code == RI_ERR_TRAP ? "instantiate-trap\n" : "link-error\n", out);
        else call_exports(store, m, inst, fuel, out);
    }
    fputs("end\n", out);
    fflush(out);
    free(imports);
    ri_store_free(store);
    ri_module_free(m);
}

int main(int argc, char **argv)
{
    uint64_t fuel = DEFAULT_FUEL;
    int i = 1;
    if (i + 1 < argc && strcmp(argv[i], "--fuel") == 0) {
        char *end;
        errno = 0;
        fuel = strtoull(argv[i + 1], &end, 10);
        if (errno || *end || fuel == 0) {
            fprintf(stderr, "ri_difftest: --fuel wants a positive integer\n");
            return 2;
        }
        i += 2;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: ri_difftest [--fuel N] MODULE.wasm...\n");
        return 2;
    }
    for (; i < argc; i++) run_module(argv[i], fuel, stdout);
    return 0;
}
