/* WSNP v1 parsing for ri inspect and ri run --restore (see wsnp_file.h). */
#include "cli/wsnp_file.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

static uint32_t read_u32le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* obj is an object with exactly the keys given (in any order). */
static bool exact_keys(const json_t *obj, const char *const *keys, size_t n, char *detail, size_t cap,
                       const char *what) {
    if (!json_is_object(obj)) {
        snprintf(detail, cap, "%s is not an object", what);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!json_object_get(obj, keys[i])) {
            snprintf(detail, cap, "%s has no \"%s\"", what, keys[i]);
            return false;
        }
    }
    if (json_object_size(obj) != n) {
        snprintf(detail, cap, "%s has keys other than the seed's", what);
        return false;
    }
    return true;
}

static bool integer(const json_t *v, const char *name, json_int_t *out, char *detail, size_t cap) {
    if (!json_is_integer(v)) {
        snprintf(detail, cap, "%s is not an integer", name);
        return false;
    }
    *out = json_integer_value(v);
    return true;
}

/* Check 6: the state JSON parses and has the seed's shape. */
static bool parse_state(const char *text, size_t len, ri_wsnp_view *out, char *detail, size_t cap) {
    static const char *const top_keys[] = {"prngState", "timestamp", "gasUsed"};
    static const char *const prng_keys[] = {"current"};
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(detail, cap, "%s", jerr.text);
        return false;
    }
    json_int_t current = 0, timestamp = 0, gas = 0;
    bool ok = exact_keys(root, top_keys, 3, detail, cap, "the state") &&
              exact_keys(json_object_get(root, "prngState"), prng_keys, 1, detail, cap, "prngState") &&
              integer(json_object_get(json_object_get(root, "prngState"), "current"), "prngState.current", &current,
                      detail, cap) &&
              integer(json_object_get(root, "timestamp"), "timestamp", &timestamp, detail, cap) &&
              integer(json_object_get(root, "gasUsed"), "gasUsed", &gas, detail, cap);
    if (ok && (current < INT32_MIN || current > (json_int_t)UINT32_MAX)) {
        snprintf(detail, cap, "prngState.current is not a 32-bit value");
        ok = false;
    }
    if (ok && gas < 0) {
        snprintf(detail, cap, "gasUsed is negative");
        ok = false;
    }
    json_decref(root);
    if (ok) {
        out->prng_current = (int64_t)current;
        out->timestamp = (int64_t)timestamp;
        out->gas_used = (int64_t)gas;
    }
    return ok;
}

bool ri_wsnp_parse(const uint8_t *data, size_t len, ri_wsnp_view *out, char *msg, size_t msg_cap,
                   char *detail, size_t detail_cap) {
    memset(out, 0, sizeof *out);
    detail[0] = '\0';
    /* Seed 000's checks 1 to 6, in order; each message is the seed's (and the original's). */
    if (len < RI_WSNP_HEADER_BYTES) {
        snprintf(msg, msg_cap, "Snapshot too small — missing header");
        return false;
    }
    if (memcmp(data, "WSNP", 4) != 0) {
        snprintf(msg, msg_cap, "Invalid snapshot — bad magic bytes");
        return false;
    }
    if (data[4] != 1) {
        snprintf(msg, msg_cap, "Unsupported snapshot version: %u (expected 1)", (unsigned)data[4]);
        return false;
    }
    /* Sizes are compared as "bytes left", so no sum can wrap. */
    size_t pos = RI_WSNP_HEADER_BYTES;
    if (len - pos < 4) {
        snprintf(msg, msg_cap, "Snapshot truncated — missing memory length");
        return false;
    }
    uint32_t mem_len = read_u32le(data + pos);
    pos += 4;
    if (len - pos < mem_len) {
        snprintf(msg, msg_cap, "Snapshot truncated — memory section incomplete");
        return false;
    }
    const uint8_t *memory = data + pos;
    pos += mem_len;
    if (len - pos < 4) {
        snprintf(msg, msg_cap, "Snapshot truncated — missing state length");
        return false;
    }
    uint32_t state_len = read_u32le(data + pos);
    pos += 4;
    if (len - pos < state_len) {
        snprintf(msg, msg_cap, "Snapshot truncated — state section incomplete");
        return false;
    }
    const char *state = (const char *)data + pos;
    pos += state_len;
    if (!parse_state(state, state_len, out, detail, detail_cap)) {
        snprintf(msg, msg_cap, "Invalid snapshot — corrupted state JSON");
        return false;
    }
    out->version = data[4];
    out->memory_len = mem_len;
    out->memory = memory;
    out->state_len = state_len;
    out->state = state;
    out->trailing = len - pos;
    return true;
}

uint64_t ri_wsnp_nonzero_pages(const ri_wsnp_view *view) {
    static const uint8_t zeros[RI_WSNP_PAGE_BYTES];
    uint64_t count = 0;
    for (uint64_t off = 0; off < view->memory_len; off += RI_WSNP_PAGE_BYTES) {
        uint64_t n = view->memory_len - off;
        if (n > RI_WSNP_PAGE_BYTES) n = RI_WSNP_PAGE_BYTES;
        if (memcmp(view->memory + off, zeros, (size_t)n) != 0) count++;
    }
    return count;
}
