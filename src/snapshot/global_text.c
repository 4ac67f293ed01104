/*
 * A global's value as text, in the forms `ri inspect`, `ri diff` and the diff's JSON
 * print: one place decides how each type reads (integers signed, floats with their NaN
 * and infinities named, references as null or a function index, v128 as four lanes).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snapshot_internal.h"

void ri_snap_v128_text(const ri_snap_global *g, char *buf, size_t cap) {
    uint32_t lane[4] = {(uint32_t)g->bits, (uint32_t)(g->bits >> 32), (uint32_t)g->bits_high,
                        (uint32_t)(g->bits_high >> 32)};
    snprintf(buf, cap, "i32x4 0x%08x 0x%08x 0x%08x 0x%08x", (unsigned)lane[0], (unsigned)lane[1], (unsigned)lane[2],
             (unsigned)lane[3]);
}

static double float_of(const ri_snap_global *g) {
    if (g->type == RI_F32) {
        float f;
        uint32_t b = (uint32_t)g->bits;
        memcpy(&f, &b, 4);
        return f;
    }
    double d;
    memcpy(&d, &g->bits, 8);
    return d;
}

static void bits_text(const ri_snap_global *g, bool at_type_width, char *out, size_t cap) {
    if (g->type == RI_V128) snprintf(out, cap, "0x%016" PRIx64 "%016" PRIx64, g->bits_high, g->bits);
    else if (at_type_width && (g->type == RI_I32 || g->type == RI_F32)) snprintf(out, cap, "0x%08" PRIx64, g->bits);
    else snprintf(out, cap, "0x%016" PRIx64, g->bits);
}

void ri_snap_global_text(const ri_snap_global *g, ri_snap_text_form form, char *out, size_t cap) {
    if (!cap) return;
    if (form == RI_SNAP_TEXT_BITS || form == RI_SNAP_TEXT_BITS64) {
        bits_text(g, form == RI_SNAP_TEXT_BITS, out, cap);
        return;
    }
    bool json = form == RI_SNAP_TEXT_JSON;
    /* TYPED: the type's name first; the rest is written after it. */
    size_t at = 0;
    if (form == RI_SNAP_TEXT_TYPED) {
        int n = snprintf(out, cap, "%s ", ri_snap_valtype_name(g->type));
        at = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    }
    char *p = out + at;
    size_t room = cap - at;
    switch (g->type) {
    case RI_I32: {
        uint32_t b = (uint32_t)g->bits;
        snprintf(p, room, "%" PRId64, b <= (uint32_t)INT32_MAX ? (int64_t)b : (int64_t)b - (int64_t)4294967296LL);
        return;
    }
    case RI_I64:
        snprintf(p, room, "%" PRId64, snap_i64_from_bits(g->bits));
        return;
    case RI_F32:
    case RI_F64: {
        double d = float_of(g);
        /* ri diff shows every float with its bits: NaN payloads and -0 stay visible. */
        if (form == RI_SNAP_TEXT_TYPED) snprintf(p, room, "%.17g (0x%" PRIx64 ")", d, g->bits);
        else if (isnan(d)) snprintf(p, room, "%s", json ? "\"nan\"" : "nan");
        else if (isinf(d)) snprintf(p, room, "%s", d > 0 ? (json ? "\"inf\"" : "inf") : (json ? "\"-inf\"" : "-inf"));
        else snprintf(p, room, "%.17g", d);
        return;
    }
    case RI_V128: {
        char text[RI_SNAP_V128_TEXT];
        ri_snap_v128_text(g, text, sizeof text);
        snprintf(p, room, json ? "\"%s\"" : "%s", text);
        return;
    }
    default: {
        uint32_t ref = (uint32_t)g->bits;
        if (ref == RI_SNAP_NULL_REF) snprintf(p, room, "%s", json ? "null" : form == RI_SNAP_TEXT_TYPED ? "null" : "ref.null");
        else if (ref == RI_SNAP_NO_ENTRY) snprintf(p, room, "%s", json ? "\"absent\"" : "absent");
        else snprintf(p, room, json ? "%" PRIu32 : "func %" PRIu32, ref);
        return;
    }
    }
}
