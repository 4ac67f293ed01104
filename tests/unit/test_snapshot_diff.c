/*
 * Diffs (issue 5): two snapshots of either version, or a snapshot and the live sandbox,
 * on known changes: memory ranges (merged runs, across page boundaries, grown memory),
 * globals with old and new values, table entries (set and grown), dropped segments,
 * PRNG and gas; the caps on the lists; the JSON text. Fixture: tests/wat/snap_state.wat
 * (function indices: 0 the import __get_random, 1 $one, 2 $two, 3 $three).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

#define PAGE 65536u

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

static env open_env(void) {
    env e;
    e.factory = ri_sandboxes_new();
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = 1700000000000LL;
    c.max_execution_ms = 10000;
    ri_sandbox_error err;
    e.sb = ri_sandbox_create(e.factory, &c, &err);
    assert_non_null(e.sb);
    size_t len;
    uint8_t *wasm = read_fixture("snap_state", &len);
    assert_true(ri_sandbox_load(e.sb, wasm, len, &err));
    free(wasm);
    return e;
}

static void run(ri_sandbox *sb, const char *action, const char *payload) {
    ri_sandbox_result r = ri_sandbox_execute(sb, action, payload);
    if (!r.ok) print_error("%s: %s\n", action, r.error.message);
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
}

static blob snap(ri_sandbox *sb, ri_snapshot_format format) {
    ri_snapshot_options o = {format, false, false};
    blob b;
    ri_sandbox_error err;
    if (!ri_sandbox_snapshot_with(sb, &o, &b.data, &b.len, &err)) {
        print_error("snapshot: %s\n", err.message);
        fail();
    }
    return b;
}

static ri_snap_diff diff(blob a, blob b, const ri_snap_diff_options *opts) {
    ri_snap_diff d;
    ri_sandbox_error err;
    if (!ri_snapshot_diff(a.data, a.len, b.data, b.len, opts, &d, &err)) {
        print_error("diff: %s\n", err.message);
        fail();
    }
    return d;
}

static void identical_snapshots(void **state) {
    (void)state;
    env e = open_env();
    run(e.sb, "store", "[0, 1]");
    blob a = snap(e.sb, RI_SNAPSHOT_V2), b = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff d = diff(a, b, NULL);
    assert_true(d.identical);
    assert_int_equal(d.nmemories, 0);
    assert_int_equal(d.nranges, 0);
    assert_true(d.instance_state_compared);
    char *json = ri_snap_diff_json(&d);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"identical\": true"));
    free(json);
    ri_snap_diff_free(&d);
    free(a.data);
    free(b.data);
    close_env(&e);
}

static void memory_ranges_are_merged_runs(void **state) {
    (void)state;
    env e = open_env();
    run(e.sb, "grow", "1");
    blob a = snap(e.sb, RI_SNAPSHOT_V2);
    run(e.sb, "store", "[65534, -1]");   /* 4 bytes across the page boundary: one range */
    run(e.sb, "store", "[100, 258]");    /* bytes 100 (0x02) and 101 (0x01): one range */
    run(e.sb, "store", "[200, 65536]");  /* only byte 202 is non-zero */
    blob b = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff d = diff(a, b, NULL);
    assert_false(d.identical);
    assert_int_equal(d.nmemories, 1);
    assert_int_equal(d.memories[0].old_pages, 2);
    assert_int_equal(d.memories[0].new_pages, 2);
    assert_int_equal(d.memories[0].changed_bytes, 7);
    assert_int_equal(d.memories[0].changed_pages, 2);
    assert_int_equal(d.memories[0].range_count, 3);
    assert_int_equal(d.nranges, 3);
    assert_int_equal(d.ranges[0].offset, 100);
    assert_int_equal(d.ranges[0].length, 2);
    assert_int_equal(d.ranges[1].offset, 202);
    assert_int_equal(d.ranges[1].length, 1);
    assert_int_equal(d.ranges[2].offset, 65534);
    assert_int_equal(d.ranges[2].length, 4);
    ri_snap_diff_free(&d);

    /* Capped list, exact counts. */
    ri_snap_diff_options cap = {2, 0};
    d = diff(a, b, &cap);
    assert_int_equal(d.nranges, 2);
    assert_true(d.ranges_truncated);
    assert_int_equal(d.memories[0].range_count, 3);
    char *json = ri_snap_diff_json(&d);
    assert_non_null(strstr(json, "\"rangesTruncated\": true"));
    free(json);
    ri_snap_diff_free(&d);
    free(a.data);
    free(b.data);
    close_env(&e);
}

static void grown_memory_shows_in_pages(void **state) {
    (void)state;
    env e = open_env();
    blob a = snap(e.sb, RI_SNAPSHOT_V2);
    run(e.sb, "grow", "2");
    blob b = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff d = diff(a, b, NULL);
    assert_int_equal(d.nmemories, 1);
    assert_int_equal(d.memories[0].old_pages, 1);
    assert_int_equal(d.memories[0].new_pages, 3);
    assert_int_equal(d.memories[0].changed_bytes, 0); /* new pages are zero */
    run(e.sb, "store", "[131072, 5]");
    blob c = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff_free(&d);
    d = diff(a, c, NULL);
    assert_int_equal(d.memories[0].changed_bytes, 1);
    assert_int_equal(d.ranges[0].offset, 131072);
    ri_snap_diff_free(&d);
    free(a.data);
    free(b.data);
    free(c.data);
    close_env(&e);
}

static void globals_tables_segments_prng_gas(void **state) {
    (void)state;
    env e = open_env();
    blob a = snap(e.sb, RI_SNAPSHOT_V2);
    run(e.sb, "bump", NULL);
    run(e.sb, "swap", NULL);
    run(e.sb, "tableGrow", "2");
    run(e.sb, "dropData", NULL);
    run(e.sb, "random", NULL);
    blob b = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff d = diff(a, b, NULL);
    assert_false(d.identical);

    /* Globals 1-4 changed (0 is the immutable one, 5 the funcref still null). */
    assert_int_equal(d.nglobals, 4);
    assert_int_equal(d.globals[0].index, 1);
    assert_int_equal(d.globals[0].old_value.type, RI_I32);
    assert_int_equal(d.globals[0].old_value.bits, 1);
    assert_int_equal(d.globals[0].new_value.bits, 2);
    assert_int_equal(d.globals[1].index, 2);
    assert_int_equal(d.globals[1].new_value.bits, (uint64_t)-6);

    /* Table 0: entry 0 $one -> $two; grown from 2 to 4 with $three. */
    assert_int_equal(d.ntables, 1);
    assert_int_equal(d.tables[0].old_size, 2);
    assert_int_equal(d.tables[0].new_size, 4);
    assert_int_equal(d.tables[0].changed_entries, 3);
    assert_int_equal(d.nentries, 3);
    assert_int_equal(d.entries[0].index, 0);
    assert_int_equal(d.entries[0].old_ref, 1);
    assert_int_equal(d.entries[0].new_ref, 2);
    assert_int_equal(d.entries[1].index, 2);
    assert_int_equal(d.entries[1].old_ref, RI_SNAP_NO_ENTRY);
    assert_int_equal(d.entries[1].new_ref, 3);

    assert_int_equal(d.nsegments, 1);
    assert_true(d.segments[0].data);
    assert_false(d.segments[0].old_dropped);
    assert_true(d.segments[0].new_dropped);

    assert_int_not_equal(d.old_meta.prng_state, d.new_meta.prng_state);
    assert_int_equal(d.old_meta.gas_used, 0);
    assert_int_equal(d.new_meta.gas_used, 1);
    assert_false(d.module_changed);

    /* The JSON: keys in order, values typed. */
    char *text = ri_snap_diff_json(&d);
    assert_non_null(text);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    assert_non_null(root);
    const char *keys[] = {"identical", "old", "new", "changed", "memories", "globals", "tables", "segments"};
    const char *prev = text;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char quoted[32];
        snprintf(quoted, sizeof quoted, "\"%s\":", keys[i]);
        const char *at = strstr(prev, quoted);
        assert_non_null(at);
        prev = at;
    }
    assert_true(json_is_true(json_object_get(json_object_get(root, "changed"), "prngState")));
    json_t *g = json_array_get(json_object_get(root, "globals"), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(g, "new"), "value")), -6);
    json_t *f = json_array_get(json_object_get(root, "globals"), 2);
    assert_true(json_real_value(json_object_get(json_object_get(f, "new"), "value")) == 2.0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(f, "new"), "bits")), "0x40000000");
    json_t *entries = json_object_get(json_array_get(json_object_get(root, "tables"), 0), "entries");
    assert_string_equal(json_string_value(json_object_get(json_array_get(entries, 1), "old")), "absent");
    json_t *seg = json_array_get(json_object_get(root, "segments"), 0);
    assert_string_equal(json_string_value(json_object_get(seg, "kind")), "data");
    json_decref(root);
    free(text);
    ri_snap_diff_free(&d);
    free(a.data);
    free(b.data);
    close_env(&e);
}

static void v1_against_v2_compares_what_both_hold(void **state) {
    (void)state;
    env e = open_env();
    run(e.sb, "store", "[8, 3]");
    blob a = snap(e.sb, RI_SNAPSHOT_V1);
    blob b = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff d = diff(a, b, NULL);
    assert_false(d.instance_state_compared);
    assert_int_equal(d.old_version, 1);
    assert_int_equal(d.new_version, 2);
    assert_int_equal(d.nmemories, 0); /* the same memory */
    assert_false(d.identical);        /* but not the same kind of image */
    char *json = ri_snap_diff_json(&d);
    assert_non_null(strstr(json, "\"globals\": null"));
    free(json);
    ri_snap_diff_free(&d);
    run(e.sb, "store", "[8, 4]");
    blob c = snap(e.sb, RI_SNAPSHOT_V1);
    d = diff(a, c, NULL);
    assert_int_equal(d.nranges, 1);
    assert_int_equal(d.ranges[0].offset, 8);
    ri_snap_diff_free(&d);
    free(a.data);
    free(b.data);
    free(c.data);
    close_env(&e);
}

static void snapshot_against_the_live_sandbox(void **state) {
    (void)state;
    env e = open_env();
    blob a = snap(e.sb, RI_SNAPSHOT_V2);
    ri_snap_diff d;
    ri_sandbox_error err;
    assert_true(ri_sandbox_diff(e.sb, a.data, a.len, NULL, &d, &err));
    assert_true(d.identical);
    ri_snap_diff_free(&d);
    run(e.sb, "store", "[16, 1]");
    run(e.sb, "bump", NULL);
    assert_true(ri_sandbox_diff(e.sb, a.data, a.len, NULL, &d, &err));
    assert_false(d.identical);
    assert_int_equal(d.nranges, 1);
    assert_int_equal(d.ranges[0].offset, 16);
    assert_int_equal(d.nglobals, 4);
    ri_snap_diff_free(&d);
    /* A corrupt snapshot is an error, not a diff. */
    a.data[a.len - 1] ^= 1;
    assert_false(ri_sandbox_diff(e.sb, a.data, a.len, NULL, &d, &err));
    assert_non_null(strstr(err.message, "checksum mismatch"));
    free(a.data);
    close_env(&e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identical_snapshots),
        cmocka_unit_test(memory_ranges_are_merged_runs),
        cmocka_unit_test(grown_memory_shows_in_pages),
        cmocka_unit_test(globals_tables_segments_prng_gas),
        cmocka_unit_test(v1_against_v2_compares_what_both_hold),
        cmocka_unit_test(snapshot_against_the_live_sandbox),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
