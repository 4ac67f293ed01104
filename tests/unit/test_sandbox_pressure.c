/*
 * Memory pressure and advice (seed 001 §8; reference "Memory pressure"): pure functions
 * over live sandboxes. Levels at the exact thresholds (>= 70 WARNING, >= 85 PRESSURE,
 * >= 95 CRITICAL, >= 100 or nothing available OOM), the advice per level, its message
 * text, and its id lists (input order kept, foreground and destroyed sandboxes left out).
 * Fixture: tests/wat/sb_memimport.wat (grown to exact page counts).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ri/sandbox.h"
#include "sandbox_test_util.h"

#define PAGE 65536LL

static ri_sandbox_config test_config(void) {
    ri_sandbox_config c = ri_sandbox_config_default();
    c.has_event_timestamp = true;
    c.event_timestamp = TS;
    c.max_execution_ms = 10000;
    return c;
}

static ri_sandbox *new_created(ri_sandboxes *f) {
    ri_sandbox_config c = test_config();
    ri_sandbox_error err;
    memset(&err, 0, sizeof err);
    ri_sandbox *sb = ri_sandbox_create(f, &c, &err);
    if (!sb) print_error("create: %s\n", err.message);
    assert_non_null(sb);
    return sb;
}

/* A loaded sandbox whose memory is exactly `pages` pages. */
static ri_sandbox *with_pages(ri_sandboxes *f, uint32_t pages) {
    ri_sandbox *sb = new_created(f);
    size_t len = 0;
    uint8_t *wasm = read_fixture("sb_memimport", &len);
    ri_sandbox_error err;
    bool ok = ri_sandbox_load(sb, wasm, len, &err);
    free(wasm);
    if (!ok) print_error("load: %s\n", err.message);
    assert_true(ok);
    if (pages > 1) {
        char payload[32];
        snprintf(payload, sizeof payload, "%u", pages - 1);
        ri_sandbox_result r = ri_sandbox_execute(sb, "allocate", payload);
        assert_true(r.ok);
        assert_int_equal(r.results[0].of.i32, 1);
        ri_sandbox_result_free(&r);
    }
    assert_int_equal(ri_sandbox_get_metrics(sb).memory_used_bytes, (uint64_t)pages * 65536u);
    return sb;
}

/* The level for one sandbox of `pages` pages against `available` bytes. */
static ri_pressure_level level_for(uint32_t pages, int64_t available) {
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = with_pages(f, pages);
    ri_pressure_level level = ri_memory_pressure(&sb, 1, available);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
    return level;
}

/* ---- levels -------------------------------------------------------------------------------- */

static void nothing_used_is_normal(void **state) {
    (void)state;
    assert_int_equal(ri_memory_pressure(NULL, 0, 1000000), RI_PRESSURE_NORMAL);
}

static void nothing_available_is_oom(void **state) {
    (void)state;
    assert_int_equal(ri_memory_pressure(NULL, 0, 0), RI_PRESSURE_OOM);
    assert_int_equal(ri_memory_pressure(NULL, 0, -1), RI_PRESSURE_OOM);
    assert_int_equal(ri_memory_pressure(NULL, 0, INT64_MIN), RI_PRESSURE_OOM);
    assert_int_equal(level_for(1, 0), RI_PRESSURE_OOM);
}

static void half_is_normal(void **state) {
    (void)state;
    assert_int_equal(level_for(5, 10 * PAGE), RI_PRESSURE_NORMAL);
}

static void just_below_70_percent_is_normal(void **state) {
    (void)state;
    /* 458752 / 655456 = 69.990 % */
    assert_int_equal(level_for(7, 655456), RI_PRESSURE_NORMAL);
    /* 458752 / 655361 = 69.99989 % */
    assert_int_equal(level_for(7, 10 * PAGE + 1), RI_PRESSURE_NORMAL);
}

static void exactly_70_percent_is_warning(void **state) {
    (void)state;
    assert_int_equal(level_for(7, 10 * PAGE), RI_PRESSURE_WARNING);
}

static void seventy_five_percent_is_warning(void **state) {
    (void)state;
    assert_int_equal(level_for(3, 4 * PAGE), RI_PRESSURE_WARNING);
}

static void just_below_85_percent_is_warning(void **state) {
    (void)state;
    assert_int_equal(level_for(17, 20 * PAGE + 1), RI_PRESSURE_WARNING);
}

static void exactly_85_percent_is_pressure(void **state) {
    (void)state;
    assert_int_equal(level_for(17, 20 * PAGE), RI_PRESSURE_PRESSURE);
}

static void ninety_percent_is_pressure(void **state) {
    (void)state;
    assert_int_equal(level_for(9, 10 * PAGE), RI_PRESSURE_PRESSURE);
}

static void just_below_95_percent_is_pressure(void **state) {
    (void)state;
    assert_int_equal(level_for(19, 20 * PAGE + 1), RI_PRESSURE_PRESSURE);
}

static void exactly_95_percent_is_critical(void **state) {
    (void)state;
    assert_int_equal(level_for(19, 20 * PAGE), RI_PRESSURE_CRITICAL);
}

static void just_below_100_percent_is_critical(void **state) {
    (void)state;
    assert_int_equal(level_for(20, 20 * PAGE + 1), RI_PRESSURE_CRITICAL);
}

static void exactly_100_percent_is_oom(void **state) {
    (void)state;
    assert_int_equal(level_for(20, 20 * PAGE), RI_PRESSURE_OOM);
}

static void over_100_percent_is_oom(void **state) {
    (void)state;
    assert_int_equal(level_for(20, 19 * PAGE), RI_PRESSURE_OOM);
    assert_int_equal(level_for(1, 1), RI_PRESSURE_OOM);
}

static void usage_is_summed_over_sandboxes(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *two[2] = {with_pages(f, 3), with_pages(f, 4)};
    /* 7 of 10 pages: 70 %. */
    assert_int_equal(ri_memory_pressure(two, 2, 10 * PAGE), RI_PRESSURE_WARNING);
    assert_int_equal(ri_memory_pressure(two, 1, 10 * PAGE), RI_PRESSURE_NORMAL);
    ri_sandbox *four[4] = {with_pages(f, 2), with_pages(f, 2), with_pages(f, 2), with_pages(f, 3)};
    /* 9 of 10 pages: 90 %. */
    assert_int_equal(ri_memory_pressure(four, 4, 10 * PAGE), RI_PRESSURE_PRESSURE);
    for (int i = 0; i < 2; i++) ri_sandbox_free(two[i]);
    for (int i = 0; i < 4; i++) ri_sandbox_free(four[i]);
    ri_sandboxes_free(f);
}

static void pressure_follows_live_growth(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sb = with_pages(f, 5);
    assert_int_equal(ri_memory_pressure(&sb, 1, 10 * PAGE), RI_PRESSURE_NORMAL);
    ri_sandbox_result r = ri_sandbox_execute(sb, "allocate", "4");
    assert_true(r.ok);
    ri_sandbox_result_free(&r);
    assert_int_equal(ri_memory_pressure(&sb, 1, 10 * PAGE), RI_PRESSURE_PRESSURE);
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void level_names(void **state) {
    (void)state;
    assert_string_equal(ri_pressure_level_name(RI_PRESSURE_NORMAL), "NORMAL");
    assert_string_equal(ri_pressure_level_name(RI_PRESSURE_WARNING), "WARNING");
    assert_string_equal(ri_pressure_level_name(RI_PRESSURE_PRESSURE), "PRESSURE");
    assert_string_equal(ri_pressure_level_name(RI_PRESSURE_CRITICAL), "CRITICAL");
    assert_string_equal(ri_pressure_level_name(RI_PRESSURE_OOM), "OOM");
}

/* ---- advice ----------------------------------------------------------------------------------- */

typedef struct trio {
    ri_sandboxes *factory;
    ri_sandbox *sb[3];
    char id[3][64];
} trio;

static void open_trio(trio *t) {
    t->factory = ri_sandboxes_new();
    for (int i = 0; i < 3; i++) {
        t->sb[i] = new_created(t->factory);
        snprintf(t->id[i], sizeof t->id[i], "%s", ri_sandbox_id(t->sb[i]));
    }
}

static void close_trio(trio *t) {
    for (int i = 0; i < 3; i++) ri_sandbox_free(t->sb[i]);
    ri_sandboxes_free(t->factory);
}

/* Expects exactly these ids, in this order. */
static void assert_ids(const ri_pressure_advice *a, const char *const *ids, size_t n) {
    assert_int_equal(a->ninstance_ids, n);
    for (size_t i = 0; i < n; i++) assert_string_equal(a->instance_ids[i], ids[i]);
}

static void normal_advises_nothing(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_NORMAL, t.sb, 3, NULL);
    assert_int_equal(a.action, RI_ADVICE_NONE);
    assert_int_equal(a.ninstance_ids, 0);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void warning_logs_the_instance_count(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_WARNING, t.sb, 3, NULL);
    assert_int_equal(a.action, RI_ADVICE_LOG);
    assert_string_equal(a.message, "Memory usage is above 70%. 3 active instance(s).");
    assert_int_equal(a.ninstance_ids, 0);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void warning_with_one_instance(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_WARNING, t.sb, 1, NULL);
    assert_int_equal(a.action, RI_ADVICE_LOG);
    assert_string_equal(a.message, "Memory usage is above 70%. 1 active instance(s).");
    ri_pressure_advice_free(&a);
    a = ri_advise(RI_PRESSURE_WARNING, NULL, 0, NULL);
    assert_string_equal(a.message, "Memory usage is above 70%. 0 active instance(s).");
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void pressure_suspends_all_but_foreground(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_PRESSURE, t.sb, 3, t.id[0]);
    assert_int_equal(a.action, RI_ADVICE_SUSPEND);
    const char *want[2] = {t.id[1], t.id[2]};
    assert_ids(&a, want, 2);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void pressure_without_foreground_suspends_all(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_PRESSURE, t.sb, 3, NULL);
    assert_int_equal(a.action, RI_ADVICE_SUSPEND);
    const char *want[3] = {t.id[0], t.id[1], t.id[2]};
    assert_ids(&a, want, 3);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void critical_saves_all_but_foreground(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_CRITICAL, t.sb, 3, t.id[1]);
    assert_int_equal(a.action, RI_ADVICE_EMERGENCY_SAVE);
    const char *want[2] = {t.id[0], t.id[2]};
    assert_ids(&a, want, 2);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void oom_saves_all_but_foreground(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_OOM, t.sb, 3, t.id[0]);
    assert_int_equal(a.action, RI_ADVICE_EMERGENCY_SAVE);
    const char *want[2] = {t.id[1], t.id[2]};
    assert_ids(&a, want, 2);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void destroyed_sandboxes_are_left_out(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_sandbox_destroy(t.sb[1]);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_PRESSURE, t.sb, 3, t.id[0]);
    const char *want[1] = {t.id[2]};
    assert_ids(&a, want, 1);
    ri_pressure_advice_free(&a);
    a = ri_advise(RI_PRESSURE_CRITICAL, t.sb, 3, NULL);
    const char *want2[2] = {t.id[0], t.id[2]};
    assert_ids(&a, want2, 2);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void only_foreground_gives_empty_list(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_CRITICAL, t.sb, 1, t.id[0]);
    assert_int_equal(a.action, RI_ADVICE_EMERGENCY_SAVE);
    assert_int_equal(a.ninstance_ids, 0);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void no_sandboxes_gives_empty_list(void **state) {
    (void)state;
    ri_pressure_advice a = ri_advise(RI_PRESSURE_PRESSURE, NULL, 0, NULL);
    assert_int_equal(a.action, RI_ADVICE_SUSPEND);
    assert_int_equal(a.ninstance_ids, 0);
    ri_pressure_advice_free(&a);
}

static void input_order_is_kept(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_sandbox *order[3] = {t.sb[2], t.sb[0], t.sb[1]};
    ri_pressure_advice a = ri_advise(RI_PRESSURE_PRESSURE, order, 3, NULL);
    const char *want[3] = {t.id[2], t.id[0], t.id[1]};
    assert_ids(&a, want, 3);
    ri_pressure_advice_free(&a);
    a = ri_advise(RI_PRESSURE_OOM, order, 3, t.id[0]);
    const char *want2[2] = {t.id[2], t.id[1]};
    assert_ids(&a, want2, 2);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void unknown_foreground_protects_nobody(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_PRESSURE, t.sb, 3, "sandbox-none");
    const char *want[3] = {t.id[0], t.id[1], t.id[2]};
    assert_ids(&a, want, 3);
    ri_pressure_advice_free(&a);
    close_trio(&t);
}

static void advice_ids_are_owned_copies(void **state) {
    (void)state;
    trio t;
    open_trio(&t);
    ri_pressure_advice a = ri_advise(RI_PRESSURE_CRITICAL, t.sb, 3, NULL);
    close_trio(&t);
    /* The sandboxes are gone; the advice still holds its ids. */
    const char *want[3] = {t.id[0], t.id[1], t.id[2]};
    assert_ids(&a, want, 3);
    ri_pressure_advice_free(&a);
}

static void measured_level_then_advice(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox *sbs[2] = {with_pages(f, 10), with_pages(f, 9)};
    ri_pressure_level level = ri_memory_pressure(sbs, 2, 20 * PAGE);
    assert_int_equal(level, RI_PRESSURE_CRITICAL);
    ri_pressure_advice a = ri_advise(level, sbs, 2, ri_sandbox_id(sbs[0]));
    assert_int_equal(a.action, RI_ADVICE_EMERGENCY_SAVE);
    const char *want[1] = {ri_sandbox_id(sbs[1])};
    assert_ids(&a, want, 1);
    ri_pressure_advice_free(&a);
    ri_sandbox_free(sbs[0]);
    ri_sandbox_free(sbs[1]);
    ri_sandboxes_free(f);
}

static void action_names(void **state) {
    (void)state;
    assert_string_equal(ri_pressure_action_name(RI_ADVICE_NONE), "none");
    assert_string_equal(ri_pressure_action_name(RI_ADVICE_LOG), "log");
    assert_string_equal(ri_pressure_action_name(RI_ADVICE_SUSPEND), "suspend");
    assert_string_equal(ri_pressure_action_name(RI_ADVICE_EMERGENCY_SAVE), "emergency_save");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_used_is_normal),
        cmocka_unit_test(nothing_available_is_oom),
        cmocka_unit_test(half_is_normal),
        cmocka_unit_test(just_below_70_percent_is_normal),
        cmocka_unit_test(exactly_70_percent_is_warning),
        cmocka_unit_test(seventy_five_percent_is_warning),
        cmocka_unit_test(just_below_85_percent_is_warning),
        cmocka_unit_test(exactly_85_percent_is_pressure),
        cmocka_unit_test(ninety_percent_is_pressure),
        cmocka_unit_test(just_below_95_percent_is_pressure),
        cmocka_unit_test(exactly_95_percent_is_critical),
        cmocka_unit_test(just_below_100_percent_is_critical),
        cmocka_unit_test(exactly_100_percent_is_oom),
        cmocka_unit_test(over_100_percent_is_oom),
        cmocka_unit_test(usage_is_summed_over_sandboxes),
        cmocka_unit_test(pressure_follows_live_growth),
        cmocka_unit_test(level_names),
        cmocka_unit_test(normal_advises_nothing),
        cmocka_unit_test(warning_logs_the_instance_count),
        cmocka_unit_test(warning_with_one_instance),
        cmocka_unit_test(pressure_suspends_all_but_foreground),
        cmocka_unit_test(pressure_without_foreground_suspends_all),
        cmocka_unit_test(critical_saves_all_but_foreground),
        cmocka_unit_test(oom_saves_all_but_foreground),
        cmocka_unit_test(destroyed_sandboxes_are_left_out),
        cmocka_unit_test(only_foreground_gives_empty_list),
        cmocka_unit_test(no_sandboxes_gives_empty_list),
        cmocka_unit_test(input_order_is_kept),
        cmocka_unit_test(unknown_foreground_protects_nobody),
        cmocka_unit_test(advice_ids_are_owned_copies),
        cmocka_unit_test(measured_level_then_advice),
        cmocka_unit_test(action_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
