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
 * ri_wsnp_parse runs seed 000's checks 1-6 in its order with the original's texts and
 * needs no sandbox; restore runs it, then check 7 (the memory size must equal the
 * instance's; the complete format of issue 5 carries the size and lifts that), and
 * changes nothing before all passed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "util/le.h"

#define WSNP_VERSION RI_WSNP_VERSION
#define WSNP_HEADER_SIZE 5u

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

bool sb_snapshot_allowed(ri_sandbox *sb, ri_sandbox_error *err) {
    ri_sandbox_status status = sb_status(sb);
    if (status == RI_SANDBOX_DESTROYED) return snapshot_error(err, "Cannot snapshot a destroyed instance");
    if (status == RI_SANDBOX_CREATED) return snapshot_error(err, "Cannot snapshot an instance that has not been loaded");
    if (status == RI_SANDBOX_RUNNING || sb->run)
        return snapshot_error(err, "Cannot snapshot a running instance \u2014 suspend first");
    if (!sb->image || !sb->image->memory || !sb->image->instance)
        return snapshot_error(err, "No WASM memory available for snapshot");
    return true;
}

bool ri_sandbox_snapshot(ri_sandbox *sb, uint8_t **out, size_t *out_len, ri_sandbox_error *err) {
    ri_snapshot_options v1 = {RI_SNAPSHOT_V1, false, false};
    return ri_sandbox_snapshot_with(sb, &v1, out, out_len, err);
}

bool sb_snapshot_v1(ri_sandbox *sb, uint8_t **out, size_t *out_len, ri_sandbox_error *err) {
    if (sb->pending)
        return snapshot_error(err, "Cannot snapshot a paused call in WSNP v1, which has no room for one: use v2");
    if (!v1_can_hold(sb, err)) return false;
    if (ri_instance_memory_count(sb->image->instance) > 1)
        return snapshot_error(err, "Cannot snapshot several memories in WSNP v1, which holds one: use v2");

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
    ri_le_put32(bytes + 5, (uint32_t)memory_size);
    if (memory_size) memcpy(bytes + 9, ri_memory_data(sb->image->memory), (size_t)memory_size);
    ri_le_put32(bytes + 9 + memory_size, (uint32_t)state_len);
    memcpy(bytes + 13 + memory_size, state, (size_t)state_len);
    *out = bytes;
    *out_len = total;
    return true;
}

/* ---- parsing (ri_wsnp_parse) ------------------------------------------------------------------ */

/* Sets out->detail; returns false so that a failed step reads as one line. */
static bool state_wrong(ri_wsnp_view *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static bool state_wrong(ri_wsnp_view *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->detail, sizeof out->detail, fmt, ap);
    va_end(ap);
    return false;
}

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

/* object[key], which must be there and an integral number in [min, max]. */
static bool integer_field(const json_t *object, const char *key, const char *name, int64_t min, int64_t max,
                          const char *range, int64_t *value, ri_wsnp_view *out) {
    const json_t *v = json_object_get(object, key);
    if (!v) return state_wrong(out, "%s is missing", name);
    if (!json_is_number(v)) return state_wrong(out, "%s is not a number", name);
    if (!integral_number(v, min, max, value)) return state_wrong(out, "%s must be an integer %s", name, range);
    return true;
}

/* Check 6. The fields a restore needs must be there with the right types; other keys
 * are accepted (a later writer may add some), but a key given twice is refused, as
 * which value counts would be up to the reader. */
static bool parse_state(const char *text, size_t len, ri_wsnp_view *out) {
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) return state_wrong(out, "%s", jerr.text);
    int64_t current = 0, timestamp = 0, gas = 0;
    const json_t *prng = json_object_get(root, "prngState");
    bool ok = json_is_object(root) || state_wrong(out, "%s is not an object", "the state");
    ok = ok && (prng || state_wrong(out, "%s is missing", "prngState"));
    ok = ok && (json_is_object(prng) || state_wrong(out, "%s is not an object", "prngState"));
    ok = ok && integer_field(prng, "current", "prngState.current", INT32_MIN, UINT32_MAX,
                             "in [-2^31, 2^32)", &current, out);
    ok = ok && integer_field(root, "timestamp", "timestamp", INT64_MIN, INT64_MAX, "in the 64-bit range",
                             &timestamp, out);
    ok = ok && integer_field(root, "gasUsed", "gasUsed", 0, INT64_MAX, "in [0, 2^63)", &gas, out);
    json_decref(root);
    if (!ok) return false;
    out->prng_current = current;
    out->prng_state = (uint32_t)(uint64_t)current; /* -631835670 and 3663131626 are one state */
    out->timestamp = timestamp;
    out->gas_used = (uint64_t)gas;
    return true;
}

bool ri_wsnp_parse(const uint8_t *data, size_t len, ri_wsnp_view *out, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    ri_wsnp_view unused;
    if (!err) err = &scratch;
    if (!out) out = &unused;
    sb_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!data) len = 0;

    /* Seed 000's checks, in order. Sizes are compared as "bytes left": no sum can wrap. */
    if (len < WSNP_HEADER_SIZE) return snapshot_error(err, "Snapshot too small \u2014 missing header");
    if (memcmp(data, "WSNP", 4) != 0) return snapshot_error(err, "Invalid snapshot \u2014 bad magic bytes");
    if (data[4] != WSNP_VERSION) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Unsupported snapshot version: %u (expected 1)", data[4]);
        return false;
    }
    size_t pos = WSNP_HEADER_SIZE;
    if (len - pos < 4) return snapshot_error(err, "Snapshot truncated \u2014 missing memory length");
    uint32_t memory_len = ri_le_get32(data + pos);
    pos += 4;
    if (len - pos < memory_len) return snapshot_error(err, "Snapshot truncated \u2014 memory section incomplete");
    const uint8_t *memory = data + pos;
    pos += memory_len;
    if (len - pos < 4) return snapshot_error(err, "Snapshot truncated \u2014 missing state length");
    uint32_t state_len = ri_le_get32(data + pos);
    pos += 4;
    if (len - pos < state_len) return snapshot_error(err, "Snapshot truncated \u2014 state section incomplete");
    const char *state = (const char *)data + pos;
    pos += state_len;
    if (!parse_state(state, state_len, out)) {
        /* Keep the detail, clear the rest: a failed parse describes no image. */
        char detail[sizeof out->detail];
        memcpy(detail, out->detail, sizeof detail);
        memset(out, 0, sizeof *out);
        memcpy(out->detail, detail, sizeof detail);
        return snapshot_error(err, "Invalid snapshot \u2014 corrupted state JSON");
    }
    out->version = data[4];
    out->memory_len = memory_len;
    out->memory = memory;
    out->state_len = state_len;
    out->state = state;
    out->trailing = len - pos;
    return true;
}

uint64_t ri_wsnp_nonzero_pages(const ri_wsnp_view *view) {
    static const uint8_t zeros[RI_WSNP_PAGE_BYTES];
    uint64_t count = 0;
    if (!view || !view->memory) return 0;
    for (uint64_t off = 0; off < view->memory_len; off += RI_WSNP_PAGE_BYTES) {
        uint64_t n = view->memory_len - off;
        if (n > RI_WSNP_PAGE_BYTES) n = RI_WSNP_PAGE_BYTES;
        if (memcmp(view->memory + off, zeros, (size_t)n) != 0) count++;
    }
    return count;
}

/* ---- restore -------------------------------------------------------------------------------- */

bool sb_restore_v1(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_sandbox_error *err) {
    /* Seed 000's checks 1-6: the same parser `ri inspect` uses. */
    ri_wsnp_view view;
    if (!ri_wsnp_parse(snapshot, len, &view, err)) return false;
    sb_image *img = sb->image;
    if (!img || !img->memory || !img->instance) return snapshot_error(err, "No WASM memory available for restore");
    if (ri_instance_memory_count(img->instance) > 1)
        return snapshot_error(err, "Cannot restore a WSNP v1 image, which holds one memory, into an instance of several");
    if (view.memory_len != ri_memory_size(img->memory)) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Snapshot memory size (%llu) does not match instance memory (%llu)",
                     (unsigned long long)view.memory_len, (unsigned long long)ri_memory_size(img->memory));
        return false;
    }

    /* Everything is valid. The one failable step (an allocation) changes nothing when it fails. */
    if (!sb_state_apply(img->instance, NULL, &img->baseline))
        return snapshot_error(err, "Cannot restore: out of memory resetting globals and tables");
    if (view.memory_len) memcpy(ri_memory_data(img->memory), view.memory, view.memory_len);
    sb->prng_state = view.prng_state;
    sb->metrics.gas_used = view.gas_used;
    sb_set_status(sb, RI_SANDBOX_LOADED);
    return true;
}
