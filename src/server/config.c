/* A sandbox's configuration: from the /create init message (the original's keys plus
 * "sandbox"), and to/from metadata.json. Unknown keys are ignored, wrong types refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_internal.h"

#define SRV_DEFAULT_IDLE_S 300
#define SRV_DEFAULT_GAS 10000000000ull
#define SRV_DEFAULT_EXEC_MS 30000u
#define SRV_MAX_IDLE_S 315360000 /* ten years: the timer's arithmetic stays far from overflow */

static bool get_bool(json_t *o, const char *k, bool *out, char *why, size_t cap) {
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return true;
    if (!json_is_boolean(v)) return snprintf(why, cap, "Invalid init message: \"%s\" must be a boolean.", k), false;
    *out = json_is_true(v);
    return true;
}

static bool get_uint(json_t *o, const char *k, uint64_t max, uint64_t *out, char *why, size_t cap) {
    json_t *v = json_object_get(o, k);
    if (!v || json_is_null(v)) return true;
    if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) <= (double)max &&
        json_real_value(v) == (double)(uint64_t)json_real_value(v)) {
        *out = (uint64_t)json_real_value(v);
        return true;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return snprintf(why, cap, "Invalid init message: \"%s\" must be an integer from 0 to %llu.", k,
                        (unsigned long long)max), false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static void defaults(srv_sandbox_cfg *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->idle_timeout_s = SRV_DEFAULT_IDLE_S;
    /* more than the library's 16 MiB: the interpreters of code as text declare about 17 MiB
     * (MicroPython) before a program allocates anything */
    cfg->max_memory_bytes = SRV_DEFAULT_MEMORY;
    cfg->max_gas = SRV_DEFAULT_GAS;
    cfg->max_execution_ms = SRV_DEFAULT_EXEC_MS;
    cfg->gas_schedule = RI_GAS_INSTRUCTIONS;
    cfg->event_timestamp = ri_clock_wall_ms();
}

static bool read_limits(srv_sandbox_cfg *cfg, json_t *sb, char *why, size_t cap) {
    uint64_t v;
    v = cfg->max_memory_bytes;
    if (!get_uint(sb, "max_memory_bytes", 4294967296ull, &v, why, cap)) return false;
    if (v == 0) return snprintf(why, cap, "Invalid init message: \"max_memory_bytes\" must be at least 1."), false;
    cfg->max_memory_bytes = v;
    v = cfg->max_gas;
    if (!get_uint(sb, "max_gas", UINT64_MAX / 2, &v, why, cap)) return false;
    cfg->max_gas = v;
    v = cfg->max_execution_ms;
    if (!get_uint(sb, "max_execution_ms", 86400000ull, &v, why, cap)) return false;
    cfg->max_execution_ms = (uint32_t)v;
    v = cfg->seed;
    if (!get_uint(sb, "seed", UINT32_MAX, &v, why, cap)) return false;
    cfg->seed = (uint32_t)v;
    json_t *ts = json_object_get(sb, "event_timestamp");
    if (ts && !json_is_null(ts)) {
        if (!json_is_integer(ts))
            return snprintf(why, cap, "Invalid init message: \"event_timestamp\" must be an integer."), false;
        cfg->event_timestamp = json_integer_value(ts);
    }
    json_t *gs = json_object_get(sb, "gas_schedule");
    if (gs && !json_is_null(gs)) {
        if (json_is_string(gs) && strcmp(json_string_value(gs), "instructions") == 0)
            cfg->gas_schedule = RI_GAS_INSTRUCTIONS;
        else if (json_is_string(gs) && strcmp(json_string_value(gs), "host_calls") == 0)
            cfg->gas_schedule = RI_GAS_HOST_CALLS;
        else
            return snprintf(why, cap,
                            "Invalid init message: \"gas_schedule\" must be \"instructions\" or \"host_calls\"."),
                   false;
    }
    return true;
}

bool srv_cfg_from_init(srv_sandbox_cfg *cfg, json_t *init, char *why, size_t cap) {
    defaults(cfg);
    json_t *it = json_object_get(init, "idle_timeout");
    if (it && !json_is_null(it)) {
        if (json_is_integer(it) && json_integer_value(it) >= 0 && json_integer_value(it) <= SRV_MAX_IDLE_S)
            cfg->idle_timeout_s = json_integer_value(it);
        else if (json_is_real(it) && json_real_value(it) >= 0 && json_real_value(it) <= SRV_MAX_IDLE_S)
            cfg->idle_timeout_s = (int64_t)(json_real_value(it) + 0.999);
        else
            return snprintf(why, cap, "Invalid init message: \"idle_timeout\" must be a number of seconds (at most %d).",
                            SRV_MAX_IDLE_S), false;
    } else if (it) {
        cfg->idle_timeout_s = 0;
    }
    if (!get_bool(init, "enable_checkpoint", &cfg->enable_checkpoint, why, cap) ||
        !get_bool(init, "enable_idle_timeout_auto_checkpoint", &cfg->auto_checkpoint, why, cap) ||
        !get_bool(init, "enable_sandbox_handoff", &cfg->handoff, why, cap))
        return false;
    json_t *fs = json_object_get(init, "filesystem_snapshot_name");
    if (fs && !json_is_null(fs)) {
        if (!json_is_string(fs))
            return snprintf(why, cap, "Invalid init message: \"filesystem_snapshot_name\" must be a string."), false;
        cfg->fs_snapshot_name = strdup(json_string_value(fs));
    }
    json_t *sb = json_object_get(init, "sandbox");
    if (sb && !json_is_null(sb)) {
        if (!json_is_object(sb)) {
            srv_cfg_free(cfg);
            return snprintf(why, cap, "Invalid init message: \"sandbox\" must be an object."), false;
        }
        if (!read_limits(cfg, sb, why, cap)) {
            srv_cfg_free(cfg);
            return false;
        }
        json_t *m = json_object_get(sb, "module");
        if (m && !json_is_null(m) && !json_is_string(m)) {
            srv_cfg_free(cfg);
            return snprintf(why, cap, "Invalid init message: \"sandbox.module\" must be a base64 string."), false;
        }
    }
    return true;
}

json_t *srv_cfg_to_json(const srv_sandbox_cfg *cfg) {
    json_t *o = json_pack("{s:I, s:b, s:b, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:s}}", "idle_timeout",
                          (json_int_t)cfg->idle_timeout_s, "enable_checkpoint", cfg->enable_checkpoint,
                          "enable_idle_timeout_auto_checkpoint", cfg->auto_checkpoint, "enable_sandbox_handoff",
                          cfg->handoff, "sandbox", "max_memory_bytes", (json_int_t)cfg->max_memory_bytes, "max_gas",
                          (json_int_t)cfg->max_gas, "max_execution_ms", (json_int_t)cfg->max_execution_ms, "seed",
                          (json_int_t)cfg->seed, "event_timestamp", (json_int_t)cfg->event_timestamp,
                          "gas_schedule", cfg->gas_schedule == RI_GAS_HOST_CALLS ? "host_calls" : "instructions");
    return o;
}

bool srv_cfg_from_json(srv_sandbox_cfg *cfg, json_t *j) {
    char why[256];
    if (!json_is_object(j)) return false;
    json_t *copy = json_deep_copy(j);
    if (!copy) return false;
    json_object_del(copy, "filesystem_snapshot_name");
    bool ok = srv_cfg_from_init(cfg, copy, why, sizeof why);
    json_decref(copy);
    return ok;
}

void srv_cfg_free(srv_sandbox_cfg *cfg) {
    free(cfg->fs_snapshot_name);
    cfg->fs_snapshot_name = NULL;
}
