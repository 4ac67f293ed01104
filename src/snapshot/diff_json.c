/*
 * A diff as JSON text (jansson), keys in a fixed order: what `ri diff --json` prints
 * and what programs read. 64-bit integers stay exact; a value's bits are given in hex
 * too, so NaN payloads and infinities are never lost to JSON's number syntax.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "snapshot_internal.h"

/* jansson's setters steal the reference; a NULL value (OOM) makes the set fail, which
 * the final dump reports as NULL through `ok`. */
typedef struct jctx {
    bool ok;
} jctx;

static void set(jctx *j, json_t *obj, const char *key, json_t *value) {
    if (!obj || !value || json_object_set_new(obj, key, value) != 0) j->ok = false;
}

static void append(jctx *j, json_t *array, json_t *value) {
    if (!array || !value || json_array_append_new(array, value) != 0) j->ok = false;
}

static json_t *u64(uint64_t v) { return v <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v); }

static json_t *ref_value(uint32_t ref) {
    if (ref == RI_SNAP_NULL_REF) return json_null();
    if (ref == RI_SNAP_NO_ENTRY) return json_string("absent");
    return json_integer(ref);
}

static json_t *global_value(jctx *j, const ri_snap_global *g, bool present) {
    if (!present) return json_null();
    json_t *o = json_object();
    set(j, o, "type", json_string(ri_snap_valtype_name(g->type)));
    set(j, o, "mutable", json_boolean(g->mutable_));
    /* The JSON form's text, parsed: floats as reals (1.0, not 1), as jansson writes them. */
    char text[RI_SNAP_GLOBAL_TEXT];
    ri_snap_global_text(g, RI_SNAP_TEXT_JSON, text, sizeof text);
    size_t flags = JSON_DECODE_ANY | (g->type == RI_F32 || g->type == RI_F64 ? JSON_DECODE_INT_AS_REAL : 0);
    json_t *v = json_loads(text, flags, NULL);
    set(j, o, "value", v);
    ri_snap_global_text(g, RI_SNAP_TEXT_BITS, text, sizeof text);
    set(j, o, "bits", json_string(text));
    return o;
}

static json_t *side(jctx *j, uint8_t version, const ri_snap_meta *m, bool has_hash) {
    json_t *o = json_object();
    set(j, o, "version", json_integer(version));
    char hex[2 * RI_SNAP_SHA256_BYTES + 1];
    ri_snap_hex(m->module_sha256, hex);
    set(j, o, "module", has_hash ? json_string(hex) : json_null());
    set(j, o, "status", json_string(ri_snap_status_name(m->status)));
    set(j, o, "prngState", json_integer(m->prng_state));
    set(j, o, "gasUsed", u64(m->gas_used));
    set(j, o, "eventTimestamp", json_integer((json_int_t)m->event_timestamp));
    return o;
}

static json_t *memories(jctx *j, const ri_snap_diff *d) {
    json_t *a = json_array();
    size_t r = 0;
    for (uint32_t i = 0; i < d->nmemories; i++) {
        const ri_snap_memory_diff *m = &d->memories[i];
        json_t *o = json_object();
        set(j, o, "index", json_integer(m->index));
        set(j, o, "oldPages", m->in_old ? json_integer(m->old_pages) : json_null());
        set(j, o, "newPages", m->in_new ? json_integer(m->new_pages) : json_null());
        set(j, o, "changedBytes", u64(m->changed_bytes));
        set(j, o, "changedPages", u64(m->changed_pages));
        set(j, o, "rangeCount", u64(m->range_count));
        json_t *ranges = json_array();
        while (r < d->nranges && d->ranges[r].memory < m->index) r++;
        uint64_t listed = 0;
        for (; r < d->nranges && d->ranges[r].memory == m->index; r++, listed++) {
            json_t *range = json_object();
            set(j, range, "offset", u64(d->ranges[r].offset));
            set(j, range, "length", u64(d->ranges[r].length));
            append(j, ranges, range);
        }
        set(j, o, "ranges", ranges);
        set(j, o, "rangesTruncated", json_boolean(listed < m->range_count));
        append(j, a, o);
    }
    return a;
}

static json_t *globals(jctx *j, const ri_snap_diff *d) {
    json_t *a = json_array();
    for (size_t i = 0; i < d->nglobals; i++) {
        json_t *o = json_object();
        set(j, o, "index", json_integer(d->globals[i].index));
        set(j, o, "old", global_value(j, &d->globals[i].old_value, d->globals[i].in_old));
        set(j, o, "new", global_value(j, &d->globals[i].new_value, d->globals[i].in_new));
        append(j, a, o);
    }
    return a;
}

static json_t *tables(jctx *j, const ri_snap_diff *d) {
    json_t *a = json_array();
    size_t e = 0;
    for (uint32_t i = 0; i < d->ntables; i++) {
        const ri_snap_table_diff *t = &d->tables[i];
        json_t *o = json_object();
        set(j, o, "index", json_integer(t->index));
        set(j, o, "oldElement", t->in_old ? json_string(ri_snap_valtype_name(t->old_elem)) : json_null());
        set(j, o, "newElement", t->in_new ? json_string(ri_snap_valtype_name(t->new_elem)) : json_null());
        set(j, o, "oldSize", t->in_old ? json_integer(t->old_size) : json_null());
        set(j, o, "newSize", t->in_new ? json_integer(t->new_size) : json_null());
        set(j, o, "changedEntries", u64(t->changed_entries));
        json_t *entries = json_array();
        while (e < d->nentries && d->entries[e].table < t->index) e++;
        uint64_t listed = 0;
        for (; e < d->nentries && d->entries[e].table == t->index; e++, listed++) {
            json_t *entry = json_object();
            set(j, entry, "index", json_integer(d->entries[e].index));
            set(j, entry, "old", ref_value(d->entries[e].old_ref));
            set(j, entry, "new", ref_value(d->entries[e].new_ref));
            append(j, entries, entry);
        }
        set(j, o, "entries", entries);
        set(j, o, "entriesTruncated", json_boolean(listed < t->changed_entries));
        append(j, a, o);
    }
    return a;
}

static json_t *segments(jctx *j, const ri_snap_diff *d) {
    json_t *a = json_array();
    for (size_t i = 0; i < d->nsegments; i++) {
        const ri_snap_segment_diff *s = &d->segments[i];
        json_t *o = json_object();
        set(j, o, "kind", json_string(s->data ? "data" : "element"));
        set(j, o, "index", json_integer(s->index));
        set(j, o, "oldDropped", json_boolean(s->old_dropped));
        set(j, o, "newDropped", json_boolean(s->new_dropped));
        append(j, a, o);
    }
    return a;
}

char *ri_snap_diff_json(const ri_snap_diff *d) {
    if (!d) return NULL;
    jctx j = {true};
    const ri_snap_meta *x = &d->old_meta, *y = &d->new_meta;
    json_t *root = json_object();
    set(&j, root, "identical", json_boolean(d->identical));
    set(&j, root, "old", side(&j, d->old_version, x, d->old_has_module_hash));
    set(&j, root, "new", side(&j, d->new_version, y, d->new_has_module_hash));
    json_t *changed = json_object();
    set(&j, changed, "module", json_boolean(d->module_changed || d->old_has_module_hash != d->new_has_module_hash));
    set(&j, changed, "status", json_boolean(x->status != y->status));
    set(&j, changed, "prngState", json_boolean(x->prng_state != y->prng_state));
    set(&j, changed, "gasUsed", json_boolean(x->gas_used != y->gas_used));
    set(&j, changed, "eventTimestamp", json_boolean(x->event_timestamp != y->event_timestamp));
    set(&j, root, "changed", changed);
    set(&j, root, "memories", memories(&j, d));
    set(&j, root, "globals", d->instance_state_compared ? globals(&j, d) : json_null());
    set(&j, root, "tables", d->instance_state_compared ? tables(&j, d) : json_null());
    set(&j, root, "segments", d->instance_state_compared ? segments(&j, d) : json_null());
    char *text = j.ok ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return text;
}
