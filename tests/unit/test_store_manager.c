/*
 * The snapshot manager (seed 003) on the store: save and restore of the full state,
 * has, get, list (newest first), delete, rename, diff and diff against the live state,
 * export and import (binary and JSON, with a new name), total size and the size cap,
 * names validated, `Snapshot not found: <name>`, restore refused while an execution
 * runs (from a host function), the restored callback, restore across modules.
 * Fixtures: tests/wat/store_state.wat, store_host.wat.
 */
#include "test_store_util.h"

typedef struct fx {
    char *dir;
    char path[4096];
    ri_snapstore *st;
    ri_sandboxes *factory;
    ri_sandbox *sb;
    ri_snapshots *m;
    int restored_calls;
    char restored_name[RI_SNAPSTORE_NAME_MAX + 1];
    ri_sandbox *restored_sb;
} fx;

static void on_restored(void *user, ri_sandbox *sb, const ri_snapstore_info *info) {
    fx *f = user;
    f->restored_calls++;
    f->restored_sb = sb;
    snprintf(f->restored_name, sizeof f->restored_name, "%s", info->name);
}

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    f->dir = temp_dir();
    f->st = new_store(f->dir, f->path, sizeof f->path);
    f->factory = ri_sandboxes_new();
    f->sb = new_sandbox(f->factory, "store_state");
    ri_snapshots_options o;
    memset(&o, 0, sizeof o);
    o.session = "session-1";
    o.on_restored = on_restored;
    o.user = f;
    ri_snapstore_error err;
    f->m = ri_snapshots_new(f->st, f->sb, &o, &err);
    expect_ok(f->m != NULL, &err);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    ri_snapshots_free(f->m);
    ri_sandbox_free(f->sb);
    ri_sandboxes_free(f->factory);
    ri_snapstore_close(f->st);
    remove_tree(f->dir);
    free(f);
    return 0;
}

static void save(fx *f, const char *name) {
    ri_snapstore_error err;
    expect_ok(ri_snapshots_save(f->m, name, NULL, NULL, 0, NULL, &err), &err);
}

static void restore(fx *f, const char *name) {
    ri_snapstore_error err;
    expect_ok(ri_snapshots_restore(f->m, name, NULL, &err), &err);
}

static void test_save_restore_exact(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 3);
    CALL2(f->sb, "fillPage", 2, 11);
    CALL1(f->sb, "setG", 5);
    CALL0(f->sb, "random");
    const char *tags[] = {"a", "b"};
    ri_snapstore_info info;
    ri_snapstore_error err;
    expect_ok(ri_snapshots_save(f->m, "before-experiment", "the baseline", tags, 2, &info, &err), &err);
    assert_string_equal(info.name, "before-experiment");
    assert_string_equal(info.origin_sandbox, ri_sandbox_id(f->sb));
    assert_string_equal(info.origin_session, "session-1");
    assert_true(info.module_stored);
    ri_snapstore_info_free(&info);
    bytes before = snap(f->sb, true, false);
    int32_t next_random = (int32_t)CALL0(f->sb, "random");
    /* The experiment: everything changes. */
    CALL1(f->sb, "grow", 10);
    CALL2(f->sb, "fillPage", 2, 12);
    CALL2(f->sb, "fillPage", 9, 13);
    CALL1(f->sb, "setG", 6);
    CALL0(f->sb, "setTable");
    CALL0(f->sb, "dropData");
    restore(f, "before-experiment");
    bytes after = snap(f->sb, true, false);
    assert_bytes_equal(before, after);
    assert_int_equal(CALL0(f->sb, "random"), next_random);
    assert_int_equal(CALL0(f->sb, "pages"), 4);
    CALL0(f->sb, "initData"); /* not dropped any more */
    assert_int_equal(f->restored_calls, 1);
    assert_string_equal(f->restored_name, "before-experiment");
    assert_ptr_equal(f->restored_sb, f->sb);
    free(before.data), free(after.data);
}

static void test_has_get_list_delete_rename(void **state) {
    fx *f = *state;
    ri_snapstore_error err;
    bool has;
    expect_ok(ri_snapshots_has(f->m, "x", &has, &err), &err);
    assert_false(has);
    save(f, "x");
    save(f, "y");
    save(f, "z");
    expect_ok(ri_snapshots_has(f->m, "x", &has, &err), &err);
    assert_true(has);
    ri_snapstore_info info;
    expect_ok(ri_snapshots_get(f->m, "y", &info, &err), &err);
    assert_string_equal(info.name, "y");
    assert_int_equal(info.memory_bytes, PAGE);
    ri_snapstore_info_free(&info);
    ri_snapstore_info *list;
    size_t n;
    expect_ok(ri_snapshots_list(f->m, &list, &n, &err), &err);
    assert_int_equal(n, 3);
    assert_string_equal(list[0].name, "z"); /* newest first */
    assert_string_equal(list[2].name, "x");
    assert_true(list[0].created_ns >= list[1].created_ns && list[1].created_ns >= list[2].created_ns);
    ri_snapstore_list_free(list, n);
    expect_ok(ri_snapshots_rename(f->m, "x", "x2", &err), &err);
    expect_ok(ri_snapshots_has(f->m, "x", &has, &err), &err);
    assert_false(has);
    bool deleted;
    expect_ok(ri_snapshots_delete(f->m, "x2", &deleted, &err), &err);
    assert_true(deleted);
    expect_ok(ri_snapshots_delete(f->m, "x2", &deleted, &err), &err);
    assert_false(deleted);
    /* save under an existing name replaces it (seed 003). */
    CALL1(f->sb, "setG", 77);
    save(f, "y");
    CALL1(f->sb, "setG", 0);
    restore(f, "y");
    assert_int_equal(CALL0(f->sb, "getG"), 77);
}

static void test_not_found_and_names(void **state) {
    fx *f = *state;
    ri_snapstore_error err;
    ri_snapstore_info info;
    assert_false(ri_snapshots_restore(f->m, "ghost", NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_FOUND);
    assert_string_equal(err.message, "Snapshot not found: ghost");
    assert_false(ri_snapshots_get(f->m, "ghost", &info, &err));
    assert_string_equal(err.message, "Snapshot not found: ghost");
    assert_false(ri_snapshots_rename(f->m, "ghost", "spirit", &err));
    assert_string_equal(err.message, "Snapshot not found: ghost");
    ri_snap_diff d;
    assert_false(ri_snapshots_diff_current(f->m, "ghost", NULL, &d, &err));
    assert_string_equal(err.message, "Snapshot not found: ghost");
    uint8_t *out;
    size_t len;
    assert_false(ri_snapshots_export(f->m, "ghost", RI_SNAPSTORE_EXPORT_JSON, &out, &len, &err));
    assert_string_equal(err.message, "Snapshot not found: ghost");
    assert_false(ri_snapshots_save(f->m, "no spaces", NULL, NULL, 0, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_NAME);
    assert_non_null(strstr(err.message, "character ' ' at position 3"));
    assert_false(ri_snapshots_restore(f->m, "../../etc/passwd", NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_NAME);
    assert_int_equal(f->restored_calls, 0);
}

/* ---- restore while an execution runs ------------------------------------------------------------- */

typedef struct hook_ctx {
    ri_snapshots *m;
    ri_snapstore_error restore_err, save_err;
    bool restore_ok, save_ok;
} hook_ctx;

static int hook(ri_host_call *call, void *user, const ri_val *args, ri_val *results) {
    (void)call, (void)args, (void)results;
    hook_ctx *h = user;
    h->restore_ok = ri_snapshots_restore(h->m, "calm", NULL, &h->restore_err);
    h->save_ok = ri_snapshots_save(h->m, "mid-run", NULL, NULL, 0, NULL, &h->save_err);
    return 0;
}

static void test_restore_refused_while_running(void **state) {
    fx *f = *state;
    hook_ctx h;
    memset(&h, 0, sizeof h);
    ri_host_function hf = {"hook", 0, NULL, 0, NULL, hook, &h};
    ri_sandbox_config c = store_config();
    c.host_functions = &hf;
    c.nhost_functions = 1;
    ri_sandbox_error se;
    ri_sandbox *sb = ri_sandbox_create(f->factory, &c, &se);
    assert_non_null(sb);
    load_fixture(sb, "store_host");
    ri_snapstore_error err;
    h.m = ri_snapshots_new(f->st, sb, NULL, &err);
    expect_ok(h.m != NULL, &err);
    CALL1(sb, "set", 1);
    expect_ok(ri_snapshots_save(h.m, "calm", NULL, NULL, 0, NULL, &err), &err);
    /* run stores 42, calls the hook (which tries to restore "calm", where memory holds
     * 1), then returns what memory holds: still 42, the restore was refused. */
    assert_int_equal(CALL0(sb, "run"), 42);
    assert_false(h.restore_ok);
    assert_int_equal(h.restore_err.code, RI_SNAPSTORE_ERR_CONFLICT);
    assert_non_null(strstr(h.restore_err.message, "Cannot restore snapshot 'calm': an execution is running in"));
    assert_false(h.save_ok);
    assert_int_equal(h.save_err.code, RI_SNAPSTORE_ERR_CONFLICT);
    bool has;
    expect_ok(ri_snapshots_has(h.m, "mid-run", &has, &err), &err);
    assert_false(has);
    /* Once the execution returned, the restore works. */
    expect_ok(ri_snapshots_restore(h.m, "calm", NULL, &err), &err);
    ri_snapshots_free(h.m);
    ri_sandbox_free(sb);
}

/* ---- diff ------------------------------------------------------------------------------------------- */

static void test_diff(void **state) {
    fx *f = *state;
    save(f, "a");
    CALL2(f->sb, "fillPage", 0, 1);
    CALL1(f->sb, "setG", 3);
    save(f, "b");
    ri_snap_diff d;
    ri_snapstore_error err;
    expect_ok(ri_snapshots_diff(f->m, "a", "b", NULL, &d, &err), &err);
    assert_false(d.identical);
    assert_int_equal(d.nmemories, 1);
    assert_int_equal(d.memories[0].changed_pages, 1);
    assert_int_equal(d.nglobals, 1);
    ri_snap_diff_free(&d);
    expect_ok(ri_snapshots_diff(f->m, "b", "b", NULL, &d, &err), &err);
    assert_true(d.identical);
    ri_snap_diff_free(&d);
    /* Against the live state. */
    expect_ok(ri_snapshots_diff_current(f->m, "b", NULL, &d, &err), &err);
    assert_true(d.identical);
    ri_snap_diff_free(&d);
    CALL2(f->sb, "store", 1000, (int32_t)(CALL1(f->sb, "load", 1000) ^ 0x40));
    expect_ok(ri_snapshots_diff_current(f->m, "b", NULL, &d, &err), &err);
    assert_false(d.identical);
    assert_int_equal(d.memories[0].changed_bytes, 1);
    char *json = ri_snap_diff_json(&d);
    assert_non_null(strstr(json, "\"changedBytes\": 1"));
    free(json);
    ri_snap_diff_free(&d);
}

/* ---- export and import -------------------------------------------------------------------------------- */

static void test_export_import(void **state) {
    fx *f = *state;
    CALL2(f->sb, "fillPage", 0, 21);
    CALL2(f->sb, "textPage", 0, 3);
    CALL1(f->sb, "setG", 8);
    const char *tags[] = {"exported"};
    ri_snapstore_error err;
    expect_ok(ri_snapshots_save(f->m, "orig", "to travel", tags, 1, NULL, &err), &err);
    bytes state_then = snap(f->sb, true, true);
    /* Binary: a WSNP v2 image any sandbox restores alone. */
    bytes bin;
    expect_ok(ri_snapshots_export(f->m, "orig", RI_SNAPSTORE_EXPORT_BINARY, &bin.data, &bin.len, &err), &err);
    ri_sandbox_config c = store_config();
    ri_sandbox *fresh = ri_sandbox_create(f->factory, &c, NULL);
    ri_sandbox_error se;
    assert_true(ri_sandbox_restore(fresh, bin.data, bin.len, &se));
    bytes fresh_state = snap(fresh, true, true);
    assert_bytes_equal(state_then, fresh_state);
    ri_sandbox_free(fresh);
    /* Imported elsewhere (another store), metadata kept, a new id. */
    char other_path[4200];
    snprintf(other_path, sizeof other_path, "%s/other", f->dir);
    ri_snapstore_options create = {true};
    ri_snapstore *other = ri_snapstore_open(other_path, &create, &err);
    expect_ok(other != NULL, &err);
    ri_snapstore_info info, orig;
    expect_ok(ri_snapstore_import(other, bin.data, bin.len, NULL, NULL, &info, &err), &err);
    expect_ok(ri_snapshots_get(f->m, "orig", &orig, &err), &err);
    assert_string_equal(info.name, "orig");
    assert_string_equal(info.description, "to travel");
    assert_int_equal(info.ntags, 1);
    assert_string_equal(info.origin_session, "session-1");
    assert_int_equal(info.created_ns, orig.created_ns);
    assert_string_not_equal(info.id, orig.id);
    ri_snapstore_info_free(&info);
    ri_snapstore_info_free(&orig);
    /* JSON: the same snapshot; imported under a new name here. */
    bytes json;
    expect_ok(ri_snapshots_export(f->m, "orig", RI_SNAPSTORE_EXPORT_JSON, &json.data, &json.len, &err), &err);
    assert_non_null(strstr((const char *)json.data, "\"format\": \"ri-snapshot\""));
    expect_ok(ri_snapshots_import(f->m, json.data, json.len, "copy", &info, &err), &err);
    assert_string_equal(info.name, "copy");
    ri_snapstore_info_free(&info);
    CALL1(f->sb, "setG", 0);
    expect_ok(ri_snapshots_restore(f->m, "copy", NULL, &err), &err);
    assert_int_equal(CALL0(f->sb, "getG"), 8);
    /* Import never replaces. */
    assert_false(ri_snapshots_import(f->m, json.data, json.len, NULL, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_EXISTS);
    /* An edited export is refused: the metadata no longer describes the image. */
    char *text = malloc(json.len + 1);
    memcpy(text, json.data, json.len);
    text[json.len] = '\0';
    char *g = strstr(text, "\"gasUsed\": ");
    assert_non_null(g);
    g[11] = g[11] == '9' ? '8' : '9';
    assert_false(ri_snapshots_import(f->m, (uint8_t *)text, json.len, "edited", NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INPUT);
    assert_non_null(strstr(err.message, "gasUsed"));
    /* Unknown keys, broken base64, not an export at all. */
    const char *bad[] = {"{\"format\": \"ri-snapshot\", \"version\": 1, \"snapshot\": {}, \"wsnp\": \"\", \"x\": 1}",
                         "[1, 2]", "not json {", "WSNP\x01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(ri_snapshots_import(f->m, (const uint8_t *)bad[i], strlen(bad[i]), "bad", NULL, &err));
        assert_true(err.code == RI_SNAPSTORE_ERR_INPUT);
    }
    free(text);
    ri_snapstore_close(other);
    free(bin.data), free(json.data), free(state_then.data), free(fresh_state.data);
}

/* ---- sizes -------------------------------------------------------------------------------------------- */

static void test_total_size_and_cap(void **state) {
    fx *f = *state;
    ri_snapstore_error err;
    uint64_t size0, size1;
    expect_ok(ri_snapshots_total_size(f->m, &size0, &err), &err);
    assert_int_equal(size0, 0);
    for (int i = 0; i < 6; i++) {
        CALL2(f->sb, "fillPage", 0, 500 + i);
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        save(f, name);
    }
    expect_ok(ri_snapshots_total_size(f->m, &size1, &err), &err);
    assert_true(size1 > 6 * 60000);
    expect_ok(ri_snapshots_set_max_size(f->m, size1 / 2, &err), &err);
    uint64_t size2;
    expect_ok(ri_snapshots_total_size(f->m, &size2, &err), &err);
    assert_true(size2 <= size1 / 2);
    bool has;
    expect_ok(ri_snapshots_has(f->m, "n0", &has, &err), &err);
    assert_false(has);
    expect_ok(ri_snapshots_has(f->m, "n5", &has, &err), &err);
    assert_true(has);
    restore(f, "n5");
}

/* ---- modules ------------------------------------------------------------------------------------------- */

static void test_restore_across_modules(void **state) {
    fx *f = *state;
    CALL1(f->sb, "setG", 31);
    save(f, "state-module");
    /* The sandbox now runs another module: the snapshot brings its own back. */
    load_fixture(f->sb, "snap_other");
    restore(f, "state-module");
    assert_int_equal(CALL0(f->sb, "getG"), 31);
    /* A sandbox that was never loaded. */
    ri_sandbox *created = new_sandbox(f->factory, NULL);
    ri_snapstore_error err;
    ri_snapshots *m2 = ri_snapshots_new(f->st, created, NULL, &err);
    assert_false(ri_snapshots_save(m2, "nothing", NULL, NULL, 0, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_SANDBOX);
    assert_int_equal(err.sandbox_code, RI_SANDBOX_SNAPSHOT_ERROR);
    assert_non_null(strstr(err.message, "not been loaded"));
    expect_ok(ri_snapshots_restore(m2, "state-module", NULL, &err), &err);
    assert_int_equal(CALL0(created, "getG"), 31);
    ri_snapshots_free(m2);
    ri_sandbox_free(created);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_save_restore_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_has_get_list_delete_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_found_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_refused_while_running, setup, teardown),
        cmocka_unit_test_setup_teardown(test_diff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_import, setup, teardown),
        cmocka_unit_test_setup_teardown(test_total_size_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_across_modules, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
