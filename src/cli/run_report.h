/*
 * What `ri run` did, and how it is shown: a JSON document with a fixed key order, or a
 * readable summary. cmd_run.c fills the report; this file only presents it.
 */
#ifndef RI_CLI_RUN_REPORT_H
#define RI_CLI_RUN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/sandbox.h"

/* One successful execution, kept small: --repeat may make many. */
typedef struct ri_run_record {
    char *value_json;            /* owned copy, NULL when the function returned nothing */
    uint64_t gas_used;
    double duration_ms;
    ri_sandbox_metrics metrics;
} ri_run_record;

typedef enum ri_snapshot_outcome {
    RI_SNAP_NONE,                /* not asked for */
    RI_SNAP_WRITTEN,
    RI_SNAP_SKIPPED,             /* an execution failed: nothing worth saving */
    RI_SNAP_REFUSED,             /* the sandbox refused: error */
    RI_SNAP_WRITE_FAILED,        /* the file could not be written: write_error */
} ri_snapshot_outcome;

typedef struct ri_run_report {
    const char *module_path;
    const char *function;
    const char *payload;         /* valid JSON text, or NULL */
    const char *sandbox_id;
    const ri_sandbox_config *config;   /* the sandbox's own (effective) config */
    const char *timestamp_source;      /* "option", "now" or "snapshot" */
    const char *const *host_names;
    uint32_t nhosts;
    const char *restored_from;   /* NULL if no --restore */

    bool determinism_checked;
    bool determinism_ok;         /* the check itself ran */
    bool deterministic;
    ri_sandbox_error determinism_error;  /* when !determinism_ok */

    uint64_t repeat;             /* executions asked for */
    ri_run_record *records;      /* the successful executions, in order */
    size_t nrecords;
    bool failed;                 /* execution nrecords + 1 failed with error */
    ri_sandbox_error error;
    bool paused;                 /* --pause-on: execution nrecords + 1 paused (error says why) */
    uint64_t paused_gas_used;

    ri_sandbox_metrics metrics;  /* live, after everything */
    ri_sandbox_status status;

    const char *snapshot_path;
    int snapshot_format;         /* 1 or 2 */
    bool snapshot_module;        /* v2 with the module embedded */
    ri_snapshot_outcome snapshot;
    size_t snapshot_bytes;
    ri_sandbox_error snapshot_error;
    char snapshot_write_error[256];

    bool ok;                     /* everything succeeded (exit status 0) */
} ri_run_report;

void ri_run_report_print(const ri_run_report *r, bool json);

/* One line describing a sandbox error: "WASM_TRAP (unreachable): unreachable". */
void ri_describe_error(const ri_sandbox_error *e, char *buf, size_t cap);

/* After a limit was hit: a line on stderr naming the option that raises it. */
void ri_hint_limit(const char *cmd, const ri_sandbox_error *e);

const char *ri_gas_schedule_name(ri_gas_schedule s);

#endif
