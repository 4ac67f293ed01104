/*
 * Executing an export, with the original's guards and texts in its order, in one
 * metered run, and both calling conventions:
 *
 *   direct  payload null, a number or an array of numbers: the arguments, typed per
 *           the export's signature (missing ones 0, extra ones ignored); the value is
 *           the function's result.
 *   JSON    any other payload: JSON.stringify(payload) is written into the instance's
 *           memory at __alloc(len); action(ptr, len) returns where the result lies,
 *           packed as (len << 16 | ptr) in an i32 (the original) or (len << 32 | ptr)
 *           in an i64; the bytes there are parsed as JSON.
 *
 * Results are bounds-checked; after a successful call a memory above the limit is
 * MEMORY_EXCEEDED. The status is `running` during the run and restored afterwards on
 * every path (unless destroy() came meanwhile).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

#define MAX_INLINE_RESULTS 4 /* ri_sandbox_result.results */

/* ---- the run around the calls --------------------------------------------------------- */

typedef struct execution {
    ri_sandbox *sb;
    sb_run run;
    ri_sandbox_status previous;
} execution;

static bool execution_begin(execution *x, ri_sandbox *sb, ri_sandbox_result *r) {
    x->sb = sb;
    x->previous = sb_status(sb);
    if (!sb_run_begin(sb, &x->run, sb->image->store, &r->error)) return false;
    sb_set_status(sb, RI_SANDBOX_RUNNING);
    return true;
}

static void execution_end(execution *x) {
    sb_run_end(x->sb, &x->run);
    if (!x->sb->destroy_requested) sb_set_status(x->sb, x->previous);
}

/* The metrics of the finished run, in the result and on the handle. */
static void execution_record(execution *x, ri_sandbox_result *r) {
    ri_sandbox *sb = x->sb;
    double duration = (double)((uint64_t)ri_clock_mono_ns() - x->run.start_ns) / 1e6;
    uint64_t gas = sb_run_gas_used(sb, &x->run);
    if (!r->ok && r->error.code == RI_SANDBOX_GAS_EXHAUSTED) gas = r->error.gas_used;
    sb->metrics.gas_used = gas;
    sb->metrics.execution_ms = duration;
    if (sb->destroy_requested) {
        sb_release_image(sb);
        free(r->value_json);
        r->value_json = NULL;
        r->ok = false;
        r->nresults = 0;
        sb_error_destroyed(&r->error, sb->id);
    }
    r->metrics = ri_sandbox_get_metrics(sb);
    r->gas_used = gas;
    r->duration_ms = duration;
}

static void fail_run(execution *x, ri_errcode rc, const ri_error *e, ri_sandbox_result *r) {
    r->ok = false;
    sb_map_run_error(x->sb, &x->run, rc, e, &r->error);
}

/* After a successful call: the original's post-execution memory check. */
static bool memory_within_limit(const ri_sandbox *sb, ri_sandbox_result *r) {
    uint64_t used = sb_image_memory_bytes(sb->image); /* every memory */
    if (used <= sb->config.max_memory_bytes) return true;
    r->ok = false;
    sb_error_memory(&r->error, used, sb->config.max_memory_bytes);
    return false;
}

/* ---- guards ------------------------------------------------------------------------------ */

static ri_sandbox_result new_result(const ri_sandbox *sb) {
    ri_sandbox_result r;
    memset(&r, 0, sizeof r);
    if (sb) r.metrics = ri_sandbox_get_metrics(sb);
    return r;
}

/* The original's order: destroyed, status, no instance, no such export. */
static bool guard(ri_sandbox *sb, const char *action, ri_sandbox_result *r, ri_func **func) {
    if (!sb) {
        sb_error_trap(&r->error, "invalid_state", "ri_sandbox_execute: sandbox is NULL");
        return false;
    }
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) {
        sb_error_destroyed(&r->error, sb->id);
        return false;
    }
    if (sb->pending && !sb->run) { /* a paused call (resume.c) */
        sb_error_trap(&r->error, "invalid_state",
                      "Cannot execute: a paused call to '%s' is pending \u2014 resume or abandon it first",
                      sb->pending->action);
        return false;
    }
    /* A nested execute (from a host function) would share the run's meter: refused. */
    if (sb->run) status = RI_SANDBOX_RUNNING;
    if (status != RI_SANDBOX_LOADED) {
        sb_error_trap(&r->error, "invalid_state", "Cannot execute: instance status is '%s'",
                      ri_sandbox_status_name(status));
        return false;
    }
    if (!sb->image || !sb->image->instance) {
        sb_error_trap(&r->error, "no_instance", "No WASM instance available \u2014 load a module first");
        return false;
    }
    ri_extern ext;
    if (!action || !ri_instance_export(sb->image->instance, action, &ext) || ext.kind != RI_EXTERN_FUNC) {
        char name[200];
        sb_printable_name(name, sizeof name, action ? action : "", action ? strlen(action) : 0);
        sb_error_trap(&r->error, "missing_export", "WASM module does not export a function named '%s'", name);
        return false;
    }
    *func = ext.of.func;
    return true;
}

/* ---- numbers in and out --------------------------------------------------------------------- */

/* The low 64 bits of trunc(d), as JavaScript's ToInt32/ToBigInt64 wrap; non-finite is 0. */
static uint64_t wrap_to_u64(double d) {
    if (!isfinite(d)) return 0;
    double m = fmod(trunc(d), 18446744073709551616.0); /* exact, |m| < 2^64 */
    return m >= 0 ? (uint64_t)m : 0u - (uint64_t)(-m);
}

/* Round to nearest float; beyond the largest float's rounding range, infinity. */
static float double_to_f32(double d) {
    if (d >= 0x1.ffffffp127) return INFINITY;
    if (d <= -0x1.ffffffp127) return -INFINITY;
    return (float)d;
}

static ri_val zero_of(ri_valtype type) {
    ri_val v;
    memset(&v, 0, sizeof v);
    v.type = type;
    return v;
}

static ri_val val_from_double(ri_valtype type, double d) {
    ri_val v = zero_of(type);
    switch (type) {
    case RI_I32: v.of.i32 = sb_i32_from_bits((uint32_t)wrap_to_u64(d)); break;
    case RI_I64: v.of.i64 = sb_i64_from_bits(wrap_to_u64(d)); break;
    case RI_F32: {
        float f = double_to_f32(d);
        memcpy(&v.of.f32_bits, &f, sizeof f);
        break;
    }
    case RI_F64: memcpy(&v.of.f64_bits, &d, sizeof d); break;
    default: break;
    }
    return v;
}

/* A JSON number as an argument of the given type (integers stay exact for i64). */
static ri_val val_from_json(ri_valtype type, const json_t *number) {
    if (json_is_integer(number)) {
        json_int_t i = json_integer_value(number);
        if (type == RI_I64) return ri_val_i64((int64_t)i);
        if (type == RI_I32) return ri_val_i32(sb_i32_from_bits((uint32_t)(uint64_t)i));
        return val_from_double(type, (double)i);
    }
    return val_from_double(type, json_number_value(number));
}

static bool numeric(ri_valtype t) { return t == RI_I32 || t == RI_I64 || t == RI_F32 || t == RI_F64; }

static void format_value(char *buf, size_t cap, const ri_val *v) {
    switch (v->type) {
    case RI_I32: snprintf(buf, cap, "%d", (int)v->of.i32); return;
    case RI_I64: snprintf(buf, cap, "%lld", (long long)v->of.i64); return;
    case RI_F32: {
        float f;
        memcpy(&f, &v->of.f32_bits, sizeof f);
        if (isfinite(f)) sb_js_number(buf, cap, (double)f);
        else snprintf(buf, cap, "null"); /* JSON has no NaN or Infinity */
        return;
    }
    case RI_F64: {
        double d;
        memcpy(&d, &v->of.f64_bits, sizeof d);
        if (isfinite(d)) sb_js_number(buf, cap, d);
        else snprintf(buf, cap, "null");
        return;
    }
    default: snprintf(buf, cap, "null"); return; /* references and v128: typed results only */
    }
}

/* NULL for no result, a number for one, an array for several. */
static char *values_json(const ri_val *values, uint32_t n, bool *oom) {
    *oom = false;
    if (n == 0) return NULL;
    size_t cap = (size_t)n * 32 + 3;
    char *out = malloc(cap);
    if (!out) {
        *oom = true;
        return NULL;
    }
    size_t at = 0;
    if (n > 1) out[at++] = '[';
    for (uint32_t i = 0; i < n; i++) {
        char buf[32];
        format_value(buf, sizeof buf, &values[i]);
        if (i) out[at++] = ',';
        size_t len = strlen(buf);
        memcpy(out + at, buf, len);
        at += len;
    }
    if (n > 1) out[at++] = ']';
    out[at] = '\0';
    return out;
}

/* ---- the direct convention ---------------------------------------------------------------------- */

static void call_direct(ri_sandbox *sb, ri_func *func, const char *action, const ri_val *args, ri_sandbox_result *r) {
    ri_functype type = ri_func_type(func);
    ri_val inline_results[MAX_INLINE_RESULTS];
    ri_val *results = inline_results;
    if (type.nresults > MAX_INLINE_RESULTS) {
        results = calloc(type.nresults, sizeof *results);
        if (!results) {
            sb_error_trap(&r->error, "runtime_error", "Out of memory for the results of '%s'", action);
            return;
        }
    }
    execution x;
    if (execution_begin(&x, sb, r)) {
        ri_error e;
        ri_store_set_suspend_mode(sb->image->store, sb->pause_on); /* the direct convention may pause */
        ri_errcode rc = ri_func_call(sb->image->store, func, args, type.nparams, results, type.nresults, &e);
        execution_end(&x);
        if (rc == RI_ERR_SUSPENDED) {
            execution_record(&x, r);
            if (!sb->destroy_requested) sb_pending_start(sb, action, r->gas_used, r);
        } else {
            if (rc != RI_OK) fail_run(&x, rc, &e, r);
            else if (memory_within_limit(sb, r)) sb_direct_result(sb, action, results, type.nresults, r);
            execution_record(&x, r);
            sb_wasi_finish_result(sb, action, r);
        }
    }
    if (results != inline_results) free(results);
}

void sb_direct_result(ri_sandbox *sb, const char *action, const ri_val *results, uint32_t nresults,
                      ri_sandbox_result *r) {
    if (!memory_within_limit(sb, r)) return;
    bool oom;
    r->value_json = values_json(results, nresults, &oom);
    if (oom) {
        sb_error_trap(&r->error, "runtime_error", "Out of memory for the results of '%s'", action);
    } else {
        r->ok = true;
        r->nresults = nresults < MAX_INLINE_RESULTS ? nresults : MAX_INLINE_RESULTS;
        memcpy(r->results, results, r->nresults * sizeof *results);
    }
}

/* Arguments from JSON numbers (all of them: checked by the caller). */
static void execute_direct(ri_sandbox *sb, ri_func *func, const char *action, const json_t *payload,
                           ri_sandbox_result *r) {
    ri_functype type = ri_func_type(func);
    size_t given = json_is_array(payload) ? json_array_size(payload) : json_is_number(payload) ? 1 : 0;
    ri_val *args = calloc(type.nparams ? type.nparams : 1, sizeof *args);
    if (!args) {
        sb_error_trap(&r->error, "runtime_error", "Out of memory for the arguments of '%s'", action);
        return;
    }
    for (uint32_t i = 0; i < type.nparams; i++) {
        ri_valtype t = type.params[i];
        args[i] = zero_of(t);
        if (i >= given) continue; /* missing arguments are 0 */
        if (!numeric(t)) {
            sb_error_trap(&r->error, "runtime_error", "Cannot pass a number to parameter %u of '%s' (a %s)", i,
                          action, ri_valtype_name(t));
            free(args);
            return;
        }
        args[i] = val_from_json(t, json_is_array(payload) ? json_array_get(payload, i) : payload);
    }
    call_direct(sb, func, action, args, r);
    free(args);
}

/* The original's test: null, a number, or an array of numbers (empty included). */
static bool direct_payload(const json_t *payload) {
    if (json_is_null(payload) || json_is_number(payload)) return true;
    if (!json_is_array(payload)) return false;
    for (size_t i = 0; i < json_array_size(payload); i++)
        if (!json_is_number(json_array_get(payload, i))) return false;
    return true;
}

/* ---- the JSON convention ------------------------------------------------------------------------ */

static bool has_type(ri_functype t, uint32_t np, const ri_valtype *p, uint32_t nr, const ri_valtype *res) {
    if (t.nparams != np || t.nresults != nr) return false;
    for (uint32_t i = 0; i < np; i++)
        if (t.params[i] != p[i]) return false;
    for (uint32_t i = 0; i < nr; i++)
        if (t.results[i] != res[i]) return false;
    return true;
}

static const ri_valtype type_i32[] = {RI_I32};
static const ri_valtype type_i64[] = {RI_I64};
static const ri_valtype type_i32_i32[] = {RI_I32, RI_I32};

static bool check_json_exports(ri_sandbox *sb, ri_func *func, const char *action, ri_func **alloc,
                               ri_sandbox_result *r) {
    ri_extern ext;
    char sig[160];
    if (!ri_instance_export(sb->image->instance, "__alloc", &ext) || ext.kind != RI_EXTERN_FUNC) {
        sb_error_trap(&r->error, "runtime_error",
                      "JSON payload requires WASM module to export '__alloc', but '%s' was called with a non-numeric payload",
                      action);
        return false;
    }
    ri_functype at = ri_func_type(ext.of.func);
    if (!has_type(at, 1, type_i32, 1, type_i32)) {
        sb_format_signature(sig, sizeof sig, at.nparams, at.params, at.nresults, at.results);
        sb_error_trap(&r->error, "runtime_error", "'__alloc' must have type (i32) -> i32, but it has type %s", sig);
        return false;
    }
    ri_functype ft = ri_func_type(func);
    if (!has_type(ft, 2, type_i32_i32, 1, type_i32) && !has_type(ft, 2, type_i32_i32, 1, type_i64) &&
        !has_type(ft, 2, type_i32_i32, 0, NULL)) {
        sb_format_signature(sig, sizeof sig, ft.nparams, ft.params, ft.nresults, ft.results);
        sb_error_trap(&r->error, "runtime_error",
                      "JSON payload requires '%s' to have type (i32, i32) -> i32 or (i32, i32) -> i64, but it has type %s",
                      action, sig);
        return false;
    }
    if (!ri_instance_memory(sb->image->instance, 0)) {
        sb_error_trap(&r->error, "runtime_error", "JSON payload requires a WASM memory, but the module has none");
        return false;
    }
    *alloc = ext.of.func;
    return true;
}

/* Reads and parses the packed result (ptr, len) into r->value_json. */
static void decode_json_result(ri_sandbox *sb, const char *action, uint64_t ptr, uint64_t len, ri_sandbox_result *r) {
    if (len == 0) { /* no value */
        r->ok = true;
        return;
    }
    ri_memory *mem = sb->image->memory;
    char *bytes = len < SIZE_MAX ? malloc((size_t)len + 1) : NULL;
    if (!bytes || !ri_memory_read(mem, ptr, bytes, (size_t)len)) {
        if (bytes) {
            sb_error_trap(&r->error, "runtime_error",
                          "The result of '%s' (pointer %llu, length %llu) lies outside the WASM memory (%llu bytes)",
                          action, (unsigned long long)ptr, (unsigned long long)len,
                          (unsigned long long)ri_memory_size(mem));
        } else {
            sb_error_trap(&r->error, "runtime_error", "Out of memory reading the result of '%s'", action);
        }
        free(bytes);
        return;
    }
    json_error_t jerr;
    json_t *value = sb_js_parse(bytes, (size_t)len, &jerr);
    free(bytes);
    if (!value) {
        sb_error_trap(&r->error, "runtime_error", "The result of '%s' is not valid JSON: %s", action, jerr.text);
        return;
    }
    r->value_json = sb_js_stringify(value);
    json_decref(value);
    if (!r->value_json) {
        sb_error_trap(&r->error, "runtime_error", "Out of memory for the result of '%s'", action);
        return;
    }
    r->ok = true;
}

static void execute_json(ri_sandbox *sb, ri_func *func, const char *action, const json_t *payload,
                         ri_sandbox_result *r) {
    ri_func *alloc;
    if (!check_json_exports(sb, func, action, &alloc, r)) return;
    char *text = sb_js_stringify(payload);
    if (!text) {
        sb_error_trap(&r->error, "runtime_error", "Out of memory serializing the payload");
        return;
    }
    size_t len = strlen(text);
    if (len > INT32_MAX) {
        sb_error_trap(&r->error, "runtime_error", "The payload of %zu bytes does not fit a WASM i32 length", len);
        free(text);
        return;
    }
    ri_functype ft = ri_func_type(func);
    execution x;
    if (!execution_begin(&x, sb, r)) {
        free(text);
        return;
    }
    ri_error e;
    ri_store_set_suspend_mode(sb->image->store, 0); /* the JSON convention never pauses */
    ri_val arg = ri_val_i32((int32_t)len), ptr_val, packed;
    memset(&packed, 0, sizeof packed);
    ri_errcode rc = ri_func_call(sb->image->store, alloc, &arg, 1, &ptr_val, 1, &e);
    bool written = false;
    uint32_t ptr = 0;
    if (rc == RI_OK) {
        ptr = (uint32_t)ptr_val.of.i32;
        /* The memory as it is after __alloc (it may have grown). */
        written = ri_memory_write(sb->image->memory, ptr, text, len);
        if (written) {
            ri_val args[2] = {ri_val_i32(sb_i32_from_bits(ptr)), ri_val_i32((int32_t)len)};
            rc = ri_func_call(sb->image->store, func, args, 2, &packed, ft.nresults, &e);
        }
    }
    execution_end(&x);
    free(text);
    if (rc != RI_OK) {
        fail_run(&x, rc, &e, r);
    } else if (!written) {
        sb_error_trap(&r->error, "runtime_error",
                      "__alloc returned %u, but %zu payload bytes there lie outside the WASM memory (%llu bytes)", ptr,
                      len, (unsigned long long)ri_memory_size(sb->image->memory));
    } else if (memory_within_limit(sb, r)) {
        uint64_t result_ptr = 0, result_len = 0;
        if (ft.nresults == 1 && ft.results[0] == RI_I32) {
            uint32_t bits = (uint32_t)packed.of.i32;
            result_ptr = bits & 0xFFFFu;
            result_len = (bits >> 16) & 0xFFFFu;
        } else if (ft.nresults == 1) {
            uint64_t bits = (uint64_t)packed.of.i64;
            result_ptr = bits & 0xFFFFFFFFu;
            result_len = bits >> 32;
        }
        decode_json_result(sb, action, result_ptr, result_len, r);
    }
    execution_record(&x, r);
}

/* ---- entry points ------------------------------------------------------------------------------- */

ri_sandbox_result ri_sandbox_execute(ri_sandbox *sb, const char *action, const char *payload_json) {
    ri_sandbox_result r = new_result(sb);
    ri_func *func;
    if (!guard(sb, action, &r, &func)) return r;
    json_t *payload = NULL;
    if (payload_json) {
        json_error_t jerr;
        payload = sb_js_parse(payload_json, strlen(payload_json), &jerr);
        if (!payload) {
            sb_error_trap(&r.error, "runtime_error", "Invalid JSON payload: %s (line %d, column %d)", jerr.text,
                          jerr.line, jerr.column);
            return r;
        }
    }
    if (!payload || direct_payload(payload)) execute_direct(sb, func, action, payload, &r);
    else execute_json(sb, func, action, payload, &r);
    json_decref(payload);
    return r;
}

ri_sandbox_result ri_sandbox_call(ri_sandbox *sb, const char *action, const ri_val *args, uint32_t nargs) {
    ri_sandbox_result r = new_result(sb);
    ri_func *func;
    if (!guard(sb, action, &r, &func)) return r;
    if (nargs && !args) {
        sb_error_trap(&r.error, "runtime_error", "ri_sandbox_call: %u argument(s) but args is NULL", nargs);
        return r;
    }
    ri_functype type = ri_func_type(func);
    ri_val *typed = calloc(type.nparams ? type.nparams : 1, sizeof *typed);
    if (!typed) {
        sb_error_trap(&r.error, "runtime_error", "Out of memory for the arguments of '%s'", action);
        return r;
    }
    for (uint32_t i = 0; i < type.nparams; i++) {
        typed[i] = zero_of(type.params[i]); /* missing arguments are 0 */
        if (i >= nargs) continue;
        if (args[i].type != type.params[i]) {
            sb_error_trap(&r.error, "runtime_error", "Argument %u of '%s' is %s, but the function takes %s", i,
                          action, ri_valtype_name(args[i].type), ri_valtype_name(type.params[i]));
            free(typed);
            return r;
        }
        typed[i] = args[i];
    }
    call_direct(sb, func, action, typed, &r);
    free(typed);
    return r;
}
