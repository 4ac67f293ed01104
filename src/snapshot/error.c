/*
 * Error values of the snapshot layer, section tags, and the names used in messages
 * and in the diff's JSON.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "snapshot_internal.h"

const char snap_tags[SNAP_TAG_COUNT][4] = {
    [SNAP_TAG_META] = {'M', 'E', 'T', 'A'}, [SNAP_TAG_MODL] = {'M', 'O', 'D', 'L'},
    [SNAP_TAG_MEMS] = {'M', 'E', 'M', 'S'}, [SNAP_TAG_TBLS] = {'T', 'B', 'L', 'S'},
    [SNAP_TAG_GLBS] = {'G', 'L', 'B', 'S'}, [SNAP_TAG_SEGS] = {'S', 'E', 'G', 'S'},
    [SNAP_TAG_FRMS] = {'F', 'R', 'M', 'S'}, [SNAP_TAG_WSFS] = {'W', 'S', 'F', 'S'},
    [SNAP_TAG_WASI] = {'W', 'A', 'S', 'I'}, [SNAP_TAG_CSUM] = {'C', 'S', 'U', 'M'},
};

snap_tag_id snap_tag_lookup(const uint8_t tag[4]) {
    for (int i = 0; i < SNAP_TAG_COUNT; i++)
        if (memcmp(tag, snap_tags[i], 4) == 0) return (snap_tag_id)i;
    return SNAP_TAG_UNKNOWN;
}

bool snap_fail(ri_snap_error *err, ri_snap_errcode code, const char *fmt, ...) {
    if (!err) return false;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return false;
}

void snap_ok(ri_snap_error *err) {
    if (!err) return;
    err->code = RI_SNAP_OK;
    err->message[0] = '\0';
}

void snap_tag_text(const uint8_t tag[4], char out[20]) {
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        if (tag[i] >= 0x20 && tag[i] < 0x7F && tag[i] != '\\' && tag[i] != '\'')
            out[n++] = (char)tag[i];
        else
            n += (size_t)snprintf(out + n, 20 - n, "\\x%02X", tag[i]);
    }
    out[n] = '\0';
}

const char *ri_snap_status_name(ri_snap_status status) {
    switch (status) {
    case RI_SNAP_STATUS_LOADED: return "loaded";
    case RI_SNAP_STATUS_SUSPENDED: return "suspended";
    }
    return "unknown";
}

const char *ri_snap_valtype_name(ri_valtype type) { return ri_valtype_name(type); }

