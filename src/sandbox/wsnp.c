/*
 * WSNP v1 (seed 000), byte for byte as the original writes it:
 *
 *   "WSNP" | 0x01 | u32le N | N bytes of memory 0 | u32le M | M bytes of state JSON
 *
 * with the state JSON exactly {"prngState":{"current":S},"timestamp":T,"gasUsed":G}
 * (S the PRNG state as a signed 32-bit number), written with snprintf so that the
 * bytes never depend on a JSON library's formatting.
 *
 * v1 holds no globals, tables or segment flags. A v1 snapshot therefore stands for
 * "those as after instantiation": snapshot refuses when one of them has changed since
 * the load (rather than losing it silently), and restore puts them back.
 *
 * Restore runs every check of seed 000 in its order with the original's texts (the
 * memory size must equal the instance's, as check 7 says; the complete format of
 * issue 5 carries the size and lifts that), and changes nothing before all passed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"

#define WSNP_VERSION 1u
#define WSNP_HEADER_SIZE 5u

static void put_u32le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool snapshot_error(ri_sandbox_error *err, const char *reason) {
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "%s", reason);
    return false;
}

/* ---- snapshot ------------------------------------------------------------------------------ */

/* Refuses when WSNP v1 would lose state: a global, table or segment flag changed. */
static bool v1_can_hold(ri_sandbox *sb, ri_sandbox_error *err) {
    sb_state now;
    if (!sb_state_capture(sb->image->instance, NULL, &now))
        return snapshot_error(err, "Out of memory inspecting the instance for a snapshot");
    char why[64];
    bool same = sb_state_equal(&sb->image->baseline, &now, why, sizeof why);
    sb_state_free(&now);
    if (same) return true;
    sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                 "Cannot snapshot: %s has changed since the module was loaded, and WSNP v1 holds only memory, "
                 "PRNG state, timestamp and gas (no globals, tables or segment state); the snapshot would lose it",
                 why);
    return false;
}

bool ri_sandbox_snapshot(ri_sandbox *sb, uint8_t **out, size_t *out_len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!sb || !out || !out_len) return snapshot_error(err, "ri_sandbox_snapshot: a NULL argument");

    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) return snapshot_error(err, "Cannot snapshot a destroyed instance");
    if (status == RI_SANDBOX_CREATED) return snapshot_error(err, "Cannot snapshot an instance that has not been loaded");
    if (status == RI_SANDBOX_RUNNING || sb->run)
        return snapshot_error(err, "Cannot snapshot a running instance \u2014 suspend first");
    if (!sb->image || !sb->image->memory || !sb->image->instance)
        return snapshot_error(err, "No WASM memory available for snapshot");
    if (!v1_can_hold(sb, err)) return false;

    uint64_t memory_size = ri_memory_size(sb->image->memory);
    if (memory_size > UINT32_MAX) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "Cannot snapshot: the memory of %llu bytes exceeds WSNP v1's 32-bit length field",
                     (unsigned long long)memory_size);
        return false;
    }
    char state[160];
    int state_len = snprintf(state, sizeof state, "{\"prngState\":{\"current\":%d},\"timestamp\":%lld,\"gasUsed\":%llu}",
                             (int)sb_i32_from_bits(sb->prng_state), (long long)sb->config.event_timestamp,
                             (unsigned long long)sb->metrics.gas_used);
    if (state_len < 0 || (size_t)state_len >= sizeof state)
        return snapshot_error(err, "Cannot snapshot: the state JSON does not fit");

    size_t total = 13u + (size_t)memory_size + (size_t)state_len;
    uint8_t *bytes = malloc(total);
    if (!bytes) return snapshot_error(err, "Out of memory allocating the snapshot");
    memcpy(bytes, "WSNP", 4);
    bytes[4] = WSNP_VERSION;
    put_u32le(bytes + 5, (uint32_t)memory_size);
    if (memory_size) memcpy(bytes + 9, ri_memory_data(sb->image->memory), (size_t)memory_size);
    put_u32le(bytes + 9 + memory_size, (uint32_t)state_len);
    memcpy(bytes + 13 + memory_size, state, (size_t)state_len);
    *out = bytes;
    *out_len = total;
    return true;
}

/* ---- restore -------------------------------------------------------------------------------- */

typedef struct wsnp_state {
    uint32_t prng;
    int64_t timestamp;
    uint64_t gas_used;
} wsnp_state;

/* A JSON number whose value is an integer in [min, max], in whatever notation
 * (JSON.parse reads 3.0 and 1.7e12 as integers too). */
static bool integral_number(const json_t *v, int64_t min, int64_t max, int64_t *out) {
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < min || i > max) return false;
        *out = (int64_t)i;
        return true;
    }
    if (!json_is_real(v)) return false;
    double d = json_real_value(v);
    /* (double)max + 1 rounds to a power of two at the top of int64: a strict bound. */
    if (d != trunc(d) || d < (double)min || d >= (double)max + 1.0) return false;
    *out = (int64_t)d;
    return true;
}

/* An object with exactly the given keys. */
static bool exact_keys(const json_t *object, const char *const *keys, size_t n) {
    if (!json_is_object(object) || json_object_size(object) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!json_object_get(object, keys[i])) return false;
    return true;
}

/* Strict: exactly the three keys and prngState.current (no others, no duplicates),
 * each an integer in range: the PRNG state 32 bits (written signed, unsigned
 * accepted), the gas not negative. */
static bool parse_state(const uint8_t *text, size_t len, wsnp_state *out) {
    static const char *const top_keys[] = {"prngState", "timestamp", "gasUsed"};
    static const char *const prng_keys[] = {"current"};
    json_error_t jerr;
    json_t *root = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &jerr);
    const json_t *prng = json_object_get(root, "prngState");
    int64_t current, timestamp, gas;
    bool ok = exact_keys(root, top_keys, 3) && exact_keys(prng, prng_keys, 1) &&
              integral_number(json_object_get(prng, "current"), INT32_MIN, UINT32_MAX, &current) &&
              integral_number(json_object_get(root, "timestamp"), INT64_MIN, INT64_MAX, &timestamp) &&
              integral_number(json_object_get(root, "gasUsed"), 0, INT64_MAX, &gas);
    if (ok) {
        out->prng = (uint32_t)(uint64_t)current;
        out->timestamp = timestamp;
        out->gas_used = (uint64_t)gas;
    }
    json_decref(root);
    return ok;
}

bool ri_sandbox_restore(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (!sb) return snapshot_error(err, "ri_sandbox_restore: sandbox is NULL");
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) return snapshot_error(err, "Cannot restore into a destroyed instance");
    if (status == RI_SANDBOX_CREATED)
        return snapshot_error(err, "Cannot restore into an instance that has not been loaded");
    if (status == RI_SANDBOX_RUNNING || sb->run)
        return snapshot_error(err, "Cannot restore into a running instance \u2014 suspend first");
    if (!snapshot) len = 0;

    /* Seed 000's checks, in order. Offsets are computed in 64 bits: no wrap. */
    if (len < WSNP_HEADER_SIZE) return snapshot_error(err, "Snapshot too small \u2014 missing header");
    if (memcmp(snapshot, "WSNP", 4) != 0) return snapshot_error(err, "Invalid snapshot \u2014 bad magic bytes");
    if (snapshot[4] != WSNP_VERSION) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Unsupported snapshot version: %u (expected 1)", snapshot[4]);
        return false;
    }
    if (len < 9) return snapshot_error(err, "Snapshot truncated \u2014 missing memory length");
    uint64_t memory_len = get_u32le(snapshot + 5);
    if (9 + memory_len > len) return snapshot_error(err, "Snapshot truncated \u2014 memory section incomplete");
    if (9 + memory_len + 4 > len) return snapshot_error(err, "Snapshot truncated \u2014 missing state length");
    uint64_t state_len = get_u32le(snapshot + 9 + memory_len);
    if (13 + memory_len + state_len > len)
        return snapshot_error(err, "Snapshot truncated \u2014 state section incomplete");
    wsnp_state state;
    if (!parse_state(snapshot + 13 + memory_len, (size_t)state_len, &state))
        return snapshot_error(err, "Invalid snapshot \u2014 corrupted state JSON");
    sb_image *img = sb->image;
    if (!img || !img->memory || !img->instance) return snapshot_error(err, "No WASM memory available for restore");
    if (memory_len != ri_memory_size(img->memory)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Snapshot memory size (%llu) does not match instance memory (%llu)",
                     (unsigned long long)memory_len, (unsigned long long)ri_memory_size(img->memory));
        return false;
    }

    /* Everything is valid. The one failable step (an allocation) changes nothing when it fails. */
    if (!sb_state_apply(img->instance, NULL, &img->baseline))
        return snapshot_error(err, "Cannot restore: out of memory resetting globals and tables");
    if (memory_len) memcpy(ri_memory_data(img->memory), snapshot + 9, (size_t)memory_len);
    sb->prng_state = state.prng;
    sb->metrics.gas_used = state.gas_used;
    sb_set_status(sb, RI_SANDBOX_LOADED);
    return true;
}
