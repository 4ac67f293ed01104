/* Presenting what `ri run` did (see run_report.h). */
#include "cli/run_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/jsonw.h"
#include "cli/output.h"

/* In the readable summary: runs beyond this many are elided (the JSON has them all). */
#define TEXT_MAX_RUNS 20
#define TEXT_MAX_VALUE 200

const char *ri_gas_schedule_name(ri_gas_schedule s) {
    return s == RI_GAS_INSTRUCTIONS ? "instructions" : "host-calls";
}

void ri_describe_error(const ri_sandbox_error *e, char *buf, size_t cap) {
    const char *name = ri_sandbox_errcode_name(e->code);
    switch (e->code) {
    case RI_SANDBOX_GAS_EXHAUSTED:
        snprintf(buf, cap, "%s: gas used %" PRIu64 ", limit %" PRIu64, name, e->gas_used, e->gas_limit);
        break;
    case RI_SANDBOX_MEMORY_EXCEEDED:
        snprintf(buf, cap, "%s: memory used %" PRIu64 " bytes, limit %" PRIu64 " bytes", name, e->memory_used,
                 e->memory_limit);
        break;
    case RI_SANDBOX_TIMEOUT:
        snprintf(buf, cap, "%s: %" PRIu64 " ms elapsed, limit %" PRIu64 " ms", name, e->elapsed_ms, e->limit_ms);
        break;
    case RI_SANDBOX_WASM_TRAP:
        snprintf(buf, cap, "%s (%s): %s", name, e->trap_kind, e->message);
        break;
    case RI_SANDBOX_HOST_FUNCTION_ERROR:
        snprintf(buf, cap, "%s in '%s': %s", name, e->function_name, e->message);
        break;
    case RI_SANDBOX_INSTANCE_DESTROYED:
        snprintf(buf, cap, "%s: %s", name, e->instance_id);
        break;
    default:
        snprintf(buf, cap, "%s: %s", name, e->message);
        break;
    }
}

/* ---- JSON -------------------------------------------------------------------------- */

/* The seed's error shapes (001 §9): the code, then that code's fields. */
static void json_error(ri_jsonw *w, const ri_sandbox_error *e) {
    ri_jsonw_object(w);
    ri_jsonw_key(w, "code");
    ri_jsonw_str(w, ri_sandbox_errcode_name(e->code));
    switch (e->code) {
    case RI_SANDBOX_GAS_EXHAUSTED:
        ri_jsonw_key(w, "gasUsed");
        ri_jsonw_u64(w, e->gas_used);
        ri_jsonw_key(w, "gasLimit");
        ri_jsonw_u64(w, e->gas_limit);
        break;
    case RI_SANDBOX_MEMORY_EXCEEDED:
        ri_jsonw_key(w, "memoryUsed");
        ri_jsonw_u64(w, e->memory_used);
        ri_jsonw_key(w, "memoryLimit");
        ri_jsonw_u64(w, e->memory_limit);
        break;
    case RI_SANDBOX_TIMEOUT:
        ri_jsonw_key(w, "elapsedMs");
        ri_jsonw_u64(w, e->elapsed_ms);
        ri_jsonw_key(w, "limitMs");
        ri_jsonw_u64(w, e->limit_ms);
        break;
    case RI_SANDBOX_WASM_TRAP:
        ri_jsonw_key(w, "trapKind");
        ri_jsonw_str(w, e->trap_kind);
        ri_jsonw_key(w, "message");
        ri_jsonw_str(w, e->message);
        break;
    case RI_SANDBOX_HOST_FUNCTION_ERROR:
        ri_jsonw_key(w, "functionName");
        ri_jsonw_str(w, e->function_name);
        ri_jsonw_key(w, "message");
        ri_jsonw_str(w, e->message);
        break;
    case RI_SANDBOX_INSTANCE_DESTROYED:
        ri_jsonw_key(w, "instanceId");
        ri_jsonw_str(w, e->instance_id);
        break;
    default: /* INVALID_MODULE, SNAPSHOT_ERROR, INVALID_CONFIG, SUSPENDED */
        ri_jsonw_key(w, "reason");
        ri_jsonw_str(w, e->message);
        break;
    }
    ri_jsonw_end(w);
}

static void json_metrics(ri_jsonw *w, const ri_sandbox_metrics *m) {
    ri_jsonw_object(w);
    ri_jsonw_key(w, "memoryUsedBytes");
    ri_jsonw_u64(w, m->memory_used_bytes);
    ri_jsonw_key(w, "memoryLimitBytes");
    ri_jsonw_u64(w, m->memory_limit_bytes);
    ri_jsonw_key(w, "gasUsed");
    ri_jsonw_u64(w, m->gas_used);
    ri_jsonw_key(w, "gasLimit");
    ri_jsonw_u64(w, m->gas_limit);
    ri_jsonw_key(w, "executionMs");
    ri_jsonw_ms(w, m->execution_ms);
    ri_jsonw_key(w, "executionLimitMs");
    if (m->execution_limit_ms == RI_CLI_NO_TIMEOUT) ri_jsonw_null(w); /* no time limit */
    else ri_jsonw_u64(w, m->execution_limit_ms);
    ri_jsonw_end(w);
}

/* The library's value text goes in as JSON; should it ever not parse (it always should),
 * it goes in as a string rather than break the document. */
static void json_value(ri_jsonw *w, const char *value_json) {
    if (!value_json) {
        ri_jsonw_null(w);
        return;
    }
    json_error_t jerr;
    json_t *v = json_loads(value_json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (v)
        ri_jsonw_raw(w, value_json);
    else
        ri_jsonw_str(w, value_json);
    json_decref(v);
}

static void json_config(ri_jsonw *w, const ri_run_report *r) {
    const ri_sandbox_config *c = r->config;
    ri_jsonw_object(w);
    ri_jsonw_key(w, "maxMemoryBytes");
    ri_jsonw_u64(w, c->max_memory_bytes);
    ri_jsonw_key(w, "maxGas");
    ri_jsonw_u64(w, c->max_gas);
    ri_jsonw_key(w, "maxExecutionMs");
    if (c->max_execution_ms == RI_CLI_NO_TIMEOUT) ri_jsonw_null(w); /* no time limit */
    else ri_jsonw_u64(w, c->max_execution_ms);
    ri_jsonw_key(w, "deterministicSeed");
    ri_jsonw_u64(w, c->deterministic_seed);
    ri_jsonw_key(w, "eventTimestamp");
    ri_jsonw_i64(w, c->event_timestamp);
    ri_jsonw_key(w, "eventTimestampSource");
    ri_jsonw_str(w, r->timestamp_source);
    ri_jsonw_key(w, "gasSchedule");
    ri_jsonw_str(w, ri_gas_schedule_name(c->gas_schedule));
    ri_jsonw_key(w, "maxCallDepth");
    ri_jsonw_u64(w, c->max_call_depth);
    ri_jsonw_key(w, "hostFunctions");
    ri_jsonw_array_flat(w);
    for (uint32_t i = 0; i < r->nhosts; i++) ri_jsonw_str(w, r->host_names[i]);
    ri_jsonw_end(w);
    ri_jsonw_end(w);
}

static void json_snapshot(ri_jsonw *w, const ri_run_report *r) {
    if (r->snapshot == RI_SNAP_NONE) {
        ri_jsonw_null(w);
        return;
    }
    ri_jsonw_object(w);
    ri_jsonw_key(w, "file");
    ri_jsonw_str(w, r->snapshot_path);
    ri_jsonw_key(w, "format");
    ri_jsonw_u64(w, (uint64_t)r->snapshot_format);
    ri_jsonw_key(w, "moduleEmbedded");
    ri_jsonw_bool(w, r->snapshot_module);
    ri_jsonw_key(w, "written");
    ri_jsonw_bool(w, r->snapshot == RI_SNAP_WRITTEN);
    switch (r->snapshot) {
    case RI_SNAP_WRITTEN:
        ri_jsonw_key(w, "bytes");
        ri_jsonw_u64(w, r->snapshot_bytes);
        break;
    case RI_SNAP_SKIPPED:
        ri_jsonw_key(w, "reason");
        ri_jsonw_str(w, "not taken: an execution failed");
        break;
    case RI_SNAP_REFUSED:
        ri_jsonw_key(w, "error");
        json_error(w, &r->snapshot_error);
        break;
    case RI_SNAP_WRITE_FAILED:
        ri_jsonw_key(w, "reason");
        ri_jsonw_str(w, r->snapshot_write_error);
        break;
    case RI_SNAP_NONE:
        break;
    }
    ri_jsonw_end(w);
}

static void print_json(const ri_run_report *r) {
    ri_jsonw w;
    ri_jsonw_init(&w, stdout);
    ri_jsonw_object(&w);
    ri_jsonw_key(&w, "ok");
    ri_jsonw_bool(&w, r->ok);
    ri_jsonw_key(&w, "sandbox");
    ri_jsonw_str(&w, r->sandbox_id);
    ri_jsonw_key(&w, "module");
    ri_jsonw_str(&w, r->module_path);
    ri_jsonw_key(&w, "function");
    ri_jsonw_str(&w, r->function);
    ri_jsonw_key(&w, "payload");
    if (r->payload)
        ri_jsonw_raw(&w, r->payload);
    else
        ri_jsonw_null(&w);
    ri_jsonw_key(&w, "config");
    json_config(&w, r);
    ri_jsonw_key(&w, "restoredFrom");
    ri_jsonw_str(&w, r->restored_from);

    ri_jsonw_key(&w, "determinism");
    if (!r->determinism_checked) {
        ri_jsonw_null(&w);
    } else {
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "deterministic");
        if (r->determinism_ok)
            ri_jsonw_bool(&w, r->deterministic);
        else
            ri_jsonw_null(&w);
        ri_jsonw_key(&w, "error");
        if (r->determinism_ok)
            ri_jsonw_null(&w);
        else
            json_error(&w, &r->determinism_error);
        ri_jsonw_end(&w);
    }

    /* Each execution in the seed's ExecutionResult shape (001 §5). */
    ri_jsonw_key(&w, "executions");
    ri_jsonw_array(&w);
    for (size_t i = 0; i < r->nrecords; i++) {
        const ri_run_record *rec = &r->records[i];
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "ok");
        ri_jsonw_bool(&w, true);
        ri_jsonw_key(&w, "value");
        json_value(&w, rec->value_json);
        ri_jsonw_key(&w, "metrics");
        json_metrics(&w, &rec->metrics);
        ri_jsonw_key(&w, "gasUsed");
        ri_jsonw_u64(&w, rec->gas_used);
        ri_jsonw_key(&w, "durationMs");
        ri_jsonw_ms(&w, rec->duration_ms);
        ri_jsonw_end(&w);
    }
    if (r->failed || r->paused) { /* a paused execution: error SUSPENDED (--pause-on) */
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "ok");
        ri_jsonw_bool(&w, false);
        ri_jsonw_key(&w, "error");
        json_error(&w, &r->error);
        if (r->paused) {
            ri_jsonw_key(&w, "gasUsed");
            ri_jsonw_u64(&w, r->paused_gas_used);
        }
        ri_jsonw_end(&w);
    }
    ri_jsonw_end(&w);

    /* The last execution's outcome, for the common single run. */
    ri_jsonw_key(&w, "value");
    if (!r->failed && r->nrecords > 0)
        json_value(&w, r->records[r->nrecords - 1].value_json);
    else
        ri_jsonw_null(&w);
    ri_jsonw_key(&w, "error");
    if (r->failed || r->paused)
        json_error(&w, &r->error);
    else
        ri_jsonw_null(&w);
    ri_jsonw_key(&w, "metrics");
    json_metrics(&w, &r->metrics);
    ri_jsonw_key(&w, "status");
    ri_jsonw_str(&w, ri_sandbox_status_name(r->status));
    ri_jsonw_key(&w, "snapshot");
    json_snapshot(&w, r);
    ri_jsonw_end(&w);
    ri_jsonw_finish(&w);
}

/* ---- text -------------------------------------------------------------------------- */

static void text_value(const char *value_json) {
    if (!value_json) {
        fputs("(no value)", stdout);
        return;
    }
    size_t n = strlen(value_json);
    size_t shown = n < TEXT_MAX_VALUE ? n : TEXT_MAX_VALUE;
    ri_put_safe(stdout, value_json, shown);
    if (shown < n) printf(" ... (%zu bytes)", n);
}

static void text_run(size_t index, const ri_run_record *rec) {
    printf("  run %-6zu ok   ", index + 1);
    if (rec->value_json) fputs("value ", stdout);
    text_value(rec->value_json);
    printf("   gas %" PRIu64 "   %.3f ms\n", rec->gas_used, rec->duration_ms);
}

static void print_text(const ri_run_report *r) {
    const ri_sandbox_config *c = r->config;
    char buf[1024];
    ri_printf_safe(stdout, "%s %s%s%s  (%s)\n", r->module_path, r->function, r->payload ? " " : "",
                   r->payload ? r->payload : "", r->sandbox_id);
    char timeout[32];
    if (c->max_execution_ms == RI_CLI_NO_TIMEOUT) snprintf(timeout, sizeof timeout, "none");
    else snprintf(timeout, sizeof timeout, "%" PRIu32 " ms", c->max_execution_ms);
    printf("  config     memory %" PRIu64 " bytes, gas %" PRIu64 " (%s), timeout %s, seed %" PRIu32
           ", timestamp %" PRId64 " (%s)",
           c->max_memory_bytes, c->max_gas, ri_gas_schedule_name(c->gas_schedule), timeout,
           c->deterministic_seed, c->event_timestamp, r->timestamp_source);
    if (c->max_call_depth) printf(", call depth %" PRIu32, c->max_call_depth);
    for (uint32_t i = 0; i < r->nhosts; i++) printf("%s%s", i ? ", " : ", host ", r->host_names[i]);
    putchar('\n');
    if (r->restored_from) ri_printf_safe(stdout, "  restored   from %s\n", r->restored_from);
    if (r->determinism_checked) {
        if (!r->determinism_ok) {
            ri_describe_error(&r->determinism_error, buf, sizeof buf);
            ri_printf_safe(stdout, "  determinism  could not be checked: %s\n", buf);
        } else if (r->deterministic) {
            printf("  determinism  deterministic: two runs from the same state agreed on result, gas and state\n");
        } else {
            printf("  determinism  NOT deterministic: two runs from the same state differed\n");
        }
    }
    for (size_t i = 0; i < r->nrecords; i++) {
        /* Long series: the first runs and the last one. */
        if (r->nrecords > TEXT_MAX_RUNS && i == TEXT_MAX_RUNS - 1 && i + 1 < r->nrecords) {
            printf("  ...        %zu more successful runs\n", r->nrecords - TEXT_MAX_RUNS);
            i = r->nrecords - 1;
        }
        text_run(i, &r->records[i]);
    }
    if (r->failed || r->paused) {
        ri_describe_error(&r->error, buf, sizeof buf);
        ri_printf_safe(stdout, "  run %-6zu %s  %s\n", r->nrecords + 1, r->paused ? "PAUSED" : "FAILED", buf);
    }
    const ri_sandbox_metrics *m = &r->metrics;
    if (m->execution_limit_ms == RI_CLI_NO_TIMEOUT) snprintf(timeout, sizeof timeout, "no limit");
    else snprintf(timeout, sizeof timeout, "%" PRIu64 " ms", m->execution_limit_ms);
    printf("  metrics    memory %" PRIu64 " / %" PRIu64 " bytes, gas %" PRIu64 " / %" PRIu64 ", time %.3f ms / %s"
           ", status %s\n",
           m->memory_used_bytes, m->memory_limit_bytes, m->gas_used, m->gas_limit, m->execution_ms,
           timeout, ri_sandbox_status_name(r->status));
    switch (r->snapshot) {
    case RI_SNAP_NONE:
        break;
    case RI_SNAP_WRITTEN:
        ri_printf_safe(stdout, "  snapshot   wrote %s (WSNP v%d%s, %zu bytes)\n", r->snapshot_path, r->snapshot_format,
                       r->snapshot_module ? " with the module" : "", r->snapshot_bytes);
        break;
    case RI_SNAP_SKIPPED:
        ri_printf_safe(stdout, "  snapshot   %s not written: an execution failed\n", r->snapshot_path);
        break;
    case RI_SNAP_REFUSED:
        ri_describe_error(&r->snapshot_error, buf, sizeof buf);
        ri_printf_safe(stdout, "  snapshot   %s not written: %s\n", r->snapshot_path, buf);
        break;
    case RI_SNAP_WRITE_FAILED:
        ri_printf_safe(stdout, "  snapshot   %s not written: %s\n", r->snapshot_path, r->snapshot_write_error);
        break;
    }
}

void ri_run_report_print(const ri_run_report *r, bool json) {
    if (json)
        print_json(r);
    else
        print_text(r);
}

/* After a limit was hit: the option that raises it. */
void ri_hint_limit(const char *cmd, const ri_sandbox_error *e) {
    const char *how = NULL;
    if (e->code == RI_SANDBOX_GAS_EXHAUSTED) how = "--max-gas N raises the gas limit";
    else if (e->code == RI_SANDBOX_TIMEOUT) how = "--timeout MS raises the time limit (--timeout none removes it)";
    else if (e->code == RI_SANDBOX_MEMORY_EXCEEDED) how = "--max-memory BYTES raises the memory limit";
    else if (e->code == RI_SANDBOX_WASM_TRAP && strcmp(e->trap_kind, "call_stack_exhausted") == 0)
        how = "--max-call-depth N allows deeper calls";
    if (how) ri_fail(0, cmd, "%s", how);
}
