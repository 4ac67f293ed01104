/*
 * The snapshotter (seed 004) on the store: refs and their strict validation, restore
 * and branch into NEW sandboxes (the current one untouched) with ids
 * "<origin>-restored-<short>" / "<origin>-branch-<short>", list newest first with the
 * limit clamped, idempotent delete, cross-session ownership (default deny, explicit
 * opt-in, audited to a sink and to DIR/audit.log, surviving a restart), and
 * cancellation (an abort signal already set does nothing; one set mid-write leaves no
 * partial snapshot). Fixture: tests/wat/store_state.wat.
 */
#include "test_store_util.h"

typedef struct audit_log {
    int calls;
    char level[16];
    char message[512];
} audit_log;

static void sink(void *user, const char *level, const char *message) {
    audit_log *a = user;
    a->calls++;
    snprintf(a->level, sizeof a->level, "%s", level);
    snprintf(a->message, sizeof a->message, "%s", message);
}

typedef struct fx {
    char *dir;
    char path[4096];
    ri_snapstore *st;
    ri_sandboxes *factory;
    ri_sandbox *sb;
    ri_snapshotter *s;
    audit_log audit;
} fx;

static ri_snapshotter *new_snapshotter(fx *f, const char *session, uint32_t max_list) {
    ri_snapshotter_config c;
    memset(&c, 0, sizeof c);
    c.session_id = session;
    c.max_list_results = max_list;
    c.factory = f->factory;
    c.audit = sink;
    c.audit_user = &f->audit;
    ri_snapstore_error err;
    ri_snapshotter *s = ri_snapshotter_new(f->st, &c, &err);
    expect_ok(s != NULL, &err);
    return s;
}

static int setup(void **state) {
    fx *f = calloc(1, sizeof *f);
    f->dir = temp_dir();
    f->st = new_store(f->dir, f->path, sizeof f->path);
    f->factory = ri_sandboxes_new();
    f->sb = new_sandbox(f->factory, "store_state");
    f->s = new_snapshotter(f, "session-A", 0);
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fx *f = *state;
    ri_snapshotter_free(f->s);
    ri_sandbox_free(f->sb);
    ri_sandboxes_free(f->factory);
    ri_snapstore_close(f->st);
    remove_tree(f->dir);
    free(f);
    return 0;
}

static ri_snapshot_ref take(fx *f, ri_snapshotter *s, ri_sandbox *sb) {
    ri_snapshot_ref ref;
    ri_snapstore_error err;
    expect_ok(ri_snapshotter_snapshot(s, sb, NULL, &ref, &err), &err);
    (void)f;
    return ref;
}

static bool has_prefix_and_hex(const char *id, const char *prefix) {
    size_t n = strlen(prefix);
    if (strncmp(id, prefix, n) != 0 || strlen(id) != n + 8) return false;
    return strspn(id + n, "0123456789abcdef") == 8;
}

/* ---- refs ------------------------------------------------------------------------------------------ */

static void test_ref_json_round_trip(void **state) {
    fx *f = *state;
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    assert_string_equal(ref.provider_id, RI_SNAPSHOTTER_DEFAULT_PROVIDER);
    assert_string_equal(ref.origin_sandbox_id, ri_sandbox_id(f->sb));
    assert_int_equal(strlen(ref.snapshot), 5 + 32);
    char *json = ri_snapshot_ref_json(&ref);
    assert_non_null(json);
    char want[512];
    snprintf(want, sizeof want, "{\"providerId\":\"ri-snapstore\",\"ref\":{\"snapshot\":\"%s\",\"originSandboxId\":\"%s\"}}",
             ref.snapshot, ref.origin_sandbox_id);
    assert_string_equal(json, want);
    ri_snapshot_ref back;
    ri_snapstore_error err;
    expect_ok(ri_snapshot_ref_parse(json, strlen(json), &back, &err), &err);
    assert_memory_equal(&ref, &back, sizeof ref);
    free(json);
}

static void test_ref_parse_strict(void **state) {
    (void)state;
    struct {
        const char *json, *why;
    } bad[] = {
        {"{\"providerId\":\"p\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"o\"},\"extra\":1}", "unknown field \"extra\""},
        {"{\"providerId\":\"p\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"o\",\"backup\":{}}}", "unknown field \"backup\" in \"ref\""},
        {"{\"providerId\":\"p\"}", "are required"},
        {"{\"providerId\":\"p\",\"ref\":{\"snapshot\":\"s\"}}", "are required in \"ref\""},
        {"{\"providerId\":7,\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"o\"}}", "\"providerId\" is not a string"},
        {"{\"providerId\":\"p\",\"ref\":[]}", "\"ref\" is not an object"},
        {"{\"providerId\":\"p\",\"ref\":{\"snapshot\":\"../x\",\"originSandboxId\":\"o\"}}", "\"ref.snapshot\" is malformed"},
        {"{\"providerId\":\"p\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"a b\"}}", "\"ref.originSandboxId\" is malformed"},
        {"{\"providerId\":\"p\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"-x\"}}", "\"ref.originSandboxId\" is malformed"},
        {"{\"providerId\":\"\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"o\"}}", "\"providerId\" is malformed"},
        {"{\"providerId\":\"p\",\"providerId\":\"q\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"o\"}}", "not JSON"},
        {"[]", "not a JSON object"},
        {"", "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ri_snapshot_ref ref;
        ri_snapstore_error err;
        assert_false(ri_snapshot_ref_parse(bad[i].json, strlen(bad[i].json), &ref, &err));
        assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_REF);
        if (!strstr(err.message, bad[i].why)) print_error("case %zu: %s\n", i, err.message);
        assert_non_null(strstr(err.message, bad[i].why));
        assert_non_null(strstr(err.message, "Invalid snapshot ref: "));
    }
    /* NUL inside a string is refused too. */
    const char nul[] = "{\"providerId\":\"p\\u0000q\",\"ref\":{\"snapshot\":\"s\",\"originSandboxId\":\"o\"}}";
    ri_snapshot_ref ref;
    ri_snapstore_error err;
    assert_false(ri_snapshot_ref_parse(nul, strlen(nul), &ref, &err));
}

/* ---- restore and branch ------------------------------------------------------------------------------ */

static void test_restore_makes_a_new_sandbox(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 2);
    CALL2(f->sb, "fillPage", 1, 5);
    CALL1(f->sb, "setG", 12);
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    bytes then = snap(f->sb, true, false);
    /* The current sandbox moves on. */
    CALL1(f->sb, "setG", 13);
    CALL2(f->sb, "fillPage", 1, 6);
    bytes current = snap(f->sb, true, false);
    ri_snapstore_error err;
    ri_sandbox *r = ri_snapshotter_restore(f->s, &ref, NULL, &err);
    expect_ok(r != NULL, &err);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s-restored-", ri_sandbox_id(f->sb));
    assert_true(has_prefix_and_hex(ri_sandbox_id(r), prefix));
    bytes restored = snap(r, true, false);
    assert_bytes_equal(then, restored);
    /* Never touched the current sandbox. */
    bytes still = snap(f->sb, true, false);
    assert_bytes_equal(current, still);
    /* Branch: the same, another suffix, another sandbox. */
    ri_sandbox *b = ri_snapshotter_branch(f->s, &ref, NULL, &err);
    expect_ok(b != NULL, &err);
    snprintf(prefix, sizeof prefix, "%s-branch-", ri_sandbox_id(f->sb));
    assert_true(has_prefix_and_hex(ri_sandbox_id(b), prefix));
    assert_string_not_equal(ri_sandbox_id(b), ri_sandbox_id(r));
    assert_int_equal(CALL0(b, "getG"), 12);
    /* Snapshots of the restored sandbox name it as origin; restoring those does not grow
     * the id: "<origin>-restored-<new>". */
    CALL1(r, "setG", 99);
    ri_snapshot_ref ref2 = take(f, f->s, r);
    assert_string_equal(ref2.origin_sandbox_id, ri_sandbox_id(r));
    ri_sandbox *rr = ri_snapshotter_restore(f->s, &ref2, NULL, &err);
    expect_ok(rr != NULL, &err);
    snprintf(prefix, sizeof prefix, "%s-restored-", ri_sandbox_id(f->sb));
    assert_true(has_prefix_and_hex(ri_sandbox_id(rr), prefix));
    assert_int_equal(CALL0(rr, "getG"), 99);
    /* The configuration is the caller's when given. */
    ri_sandbox_config c = store_config();
    c.max_gas = 12345;
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.config = &c;
    ri_sandbox *rc = ri_snapshotter_restore(f->s, &ref, &call, &err);
    expect_ok(rc != NULL, &err);
    assert_int_equal(ri_sandbox_get_config(rc)->max_gas, 12345);
    ri_sandbox_free(rc);
    ri_sandbox_free(rr);
    ri_sandbox_free(b);
    ri_sandbox_free(r);
    free(then.data), free(current.data), free(restored.data), free(still.data);
}

static void test_refs_checked_against_the_store(void **state) {
    fx *f = *state;
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    ri_snapstore_error err;
    /* Another origin than the snapshot's: tampered. */
    ri_snapshot_ref forged = ref;
    snprintf(forged.origin_sandbox_id, sizeof forged.origin_sandbox_id, "sandbox-999");
    assert_null(ri_snapshotter_restore(f->s, &forged, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_REF);
    assert_non_null(strstr(err.message, "was taken from"));
    forged = ref;
    snprintf(forged.provider_id, sizeof forged.provider_id, "cloudflare-sandbox");
    assert_null(ri_snapshotter_branch(f->s, &forged, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_REF);
    assert_non_null(strstr(err.message, "provider 'cloudflare-sandbox'"));
    forged = ref;
    snprintf(forged.snapshot, sizeof forged.snapshot, "snap-%032d", 0);
    assert_null(ri_snapshotter_restore(f->s, &forged, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_FOUND);
    assert_string_equal(err.message, "Snapshot not found: snap-00000000000000000000000000000000");
    snprintf(forged.snapshot, sizeof forged.snapshot, "../../x");
    assert_null(ri_snapshotter_restore(f->s, &forged, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_REF);
}

/* ---- list and delete ------------------------------------------------------------------------------------ */

static void test_list_newest_first_and_clamped(void **state) {
    fx *f = *state;
    ri_snapshotter *s = new_snapshotter(f, "session-L", 3);
    ri_snapshot_ref refs[5];
    for (int i = 0; i < 5; i++) {
        CALL1(f->sb, "setG", i);
        refs[i] = take(f, s, f->sb);
    }
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    ri_snapshot_ref *list;
    size_t n;
    ri_snapstore_error err;
    call.limit = 100; /* asked for more than the maximum: clamped */
    expect_ok(ri_snapshotter_list(s, &call, &list, &n, &err), &err);
    assert_int_equal(n, 3);
    assert_string_equal(list[0].snapshot, refs[4].snapshot);
    assert_string_equal(list[1].snapshot, refs[3].snapshot);
    assert_string_equal(list[2].snapshot, refs[2].snapshot);
    free(list);
    call.limit = 2;
    expect_ok(ri_snapshotter_list(s, &call, &list, &n, &err), &err);
    assert_int_equal(n, 2);
    free(list);
    expect_ok(ri_snapshotter_list(s, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 3);
    free(list);
    ri_snapshotter_free(s);
}

static void test_default_max_list_is_100(void **state) {
    fx *f = *state;
    for (int i = 0; i < 105; i++) take(f, f->s, f->sb);
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.limit = 1000;
    ri_snapshot_ref *list;
    size_t n;
    ri_snapstore_error err;
    expect_ok(ri_snapshotter_list(f->s, &call, &list, &n, &err), &err);
    assert_int_equal(n, 100);
    free(list);
}

static void test_delete_idempotent(void **state) {
    fx *f = *state;
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    ri_snapstore_error err;
    expect_ok(ri_snapshotter_delete(f->s, &ref, NULL, &err), &err);
    expect_ok(ri_snapshotter_delete(f->s, &ref, NULL, &err), &err);
    assert_null(ri_snapshotter_restore(f->s, &ref, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_FOUND);
    ri_snapshot_ref *list;
    size_t n;
    expect_ok(ri_snapshotter_list(f->s, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 0);
    free(list);
    /* Malformed refs are still refused, gone or not. */
    snprintf(ref.snapshot, sizeof ref.snapshot, "a b");
    assert_false(ri_snapshotter_delete(f->s, &ref, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_INVALID_REF);
}

/* ---- cross-session ownership ------------------------------------------------------------------------------- */

static size_t audit_lines(fx *f, const char *needle) {
    char p[4200];
    snprintf(p, sizeof p, "%s/audit.log", f->path);
    FILE *fp = fopen(p, "r");
    if (!fp) return 0;
    size_t n = 0;
    char line[2048];
    while (fgets(line, sizeof line, fp))
        if (strstr(line, "\"level\":\"warning\"") && strstr(line, needle)) n++;
    fclose(fp);
    return n;
}

static void test_cross_session_denied_unless_opted_in(void **state) {
    fx *f = *state;
    ri_snapshot_ref mine = take(f, f->s, f->sb);
    ri_snapshotter *other = new_snapshotter(f, "session-B", 0);
    ri_snapshot_ref theirs = take(f, other, f->sb);
    ri_snapstore_error err;
    /* Default deny on every operation. */
    assert_null(ri_snapshotter_restore(other, &mine, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_FORBIDDEN);
    assert_non_null(strstr(err.message, "belongs to session session-A, not to this session (session-B)"));
    assert_null(ri_snapshotter_branch(other, &mine, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_FORBIDDEN);
    assert_false(ri_snapshotter_delete(other, &mine, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_FORBIDDEN);
    ri_snapshot_ref *list;
    size_t n;
    expect_ok(ri_snapshotter_list(other, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].snapshot, theirs.snapshot);
    free(list);
    assert_int_equal(f->audit.calls, 0);
    assert_int_equal(audit_lines(f, "cross-session"), 0);
    /* Opted in: allowed, and audited at warning level, to the sink and the store's log. */
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.allow_cross_session = true;
    ri_sandbox *r = ri_snapshotter_restore(other, &mine, &call, &err);
    expect_ok(r != NULL, &err);
    assert_int_equal(f->audit.calls, 1);
    assert_string_equal(f->audit.level, "warning");
    assert_non_null(strstr(f->audit.message, "cross-session restore: session session-B"));
    assert_non_null(strstr(f->audit.message, mine.snapshot));
    assert_int_equal(audit_lines(f, "\"operation\":\"restore\""), 1);
    ri_sandbox_free(r);
    expect_ok(ri_snapshotter_list(other, &call, &list, &n, &err), &err);
    assert_int_equal(n, 2);
    free(list);
    assert_int_equal(audit_lines(f, "\"operation\":\"list\""), 1);
    expect_ok(ri_snapshotter_delete(other, &mine, &call, &err), &err);
    assert_int_equal(audit_lines(f, "\"operation\":\"delete\""), 1);
    assert_int_equal(f->audit.calls, 3);
    /* Own snapshots need no opt-in and are not audited. */
    ri_sandbox *own = ri_snapshotter_restore(other, &theirs, NULL, &err);
    expect_ok(own != NULL, &err);
    assert_int_equal(f->audit.calls, 3);
    ri_sandbox_free(own);
    ri_snapshotter_free(other);
}

static void test_ownership_survives_restart(void **state) {
    fx *f = *state;
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    /* Everything closed and opened again, as after a restart. */
    ri_snapshotter_free(f->s);
    ri_snapstore_close(f->st);
    ri_snapstore_error err;
    f->st = ri_snapstore_open(f->path, NULL, &err);
    expect_ok(f->st != NULL, &err);
    f->s = new_snapshotter(f, "session-A", 0);
    ri_snapshot_ref *list;
    size_t n;
    expect_ok(ri_snapshotter_list(f->s, NULL, &list, &n, &err), &err);
    assert_int_equal(n, 1);
    assert_memory_equal(&list[0], &ref, sizeof ref);
    free(list);
    ri_sandbox *r = ri_snapshotter_restore(f->s, &ref, NULL, &err);
    expect_ok(r != NULL, &err);
    ri_sandbox_free(r);
    assert_int_equal(f->audit.calls, 0);
    /* Snapshots with no session (saved by a manager without one) are nobody's. */
    ri_snapshots *m = ri_snapshots_new(f->st, f->sb, NULL, &err);
    expect_ok(ri_snapshots_save(m, "anonymous", NULL, NULL, 0, NULL, &err), &err);
    ri_snapshots_free(m);
    ri_snapshot_ref anon = ref;
    snprintf(anon.snapshot, sizeof anon.snapshot, "anonymous");
    assert_null(ri_snapshotter_restore(f->s, &anon, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_FORBIDDEN);
    assert_non_null(strstr(err.message, "belongs to no session"));
}

/* ---- cancellation ------------------------------------------------------------------------------------------ */

static void test_abort_already_set(void **state) {
    fx *f = *state;
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    atomic_bool flag;
    atomic_init(&flag, true);
    ri_snapstore_abort ab = {&flag, NULL, NULL};
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.abort = &ab;
    call.allow_cross_session = true;
    ri_snapstore_error err;
    ri_snapshot_ref out;
    assert_false(ri_snapshotter_snapshot(f->s, f->sb, &call, &out, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    assert_string_equal(err.message, "Aborted before it started: nothing was done");
    assert_null(ri_snapshotter_restore(f->s, &ref, &call, &err));
    assert_string_equal(err.message, "Aborted before it started: nothing was done");
    assert_null(ri_snapshotter_branch(f->s, &ref, &call, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    ri_snapshot_ref *list;
    size_t n;
    assert_false(ri_snapshotter_list(f->s, &call, &list, &n, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    assert_false(ri_snapshotter_delete(f->s, &ref, &call, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    /* Nothing happened: still one snapshot, nothing audited. */
    atomic_store(&flag, false);
    expect_ok(ri_snapshotter_list(f->s, &call, &list, &n, &err), &err);
    assert_int_equal(n, 1);
    free(list);
    assert_int_equal(f->audit.calls, 1); /* the list just now */
}

typedef struct countdown {
    int left;
    int checks;
} countdown;

static bool tick(void *user) {
    countdown *c = user;
    c->checks++;
    return --c->left < 0;
}

static void test_abort_mid_write_leaves_nothing(void **state) {
    fx *f = *state;
    CALL1(f->sb, "grow", 127);
    for (int p = 0; p < 128; p++) CALL2(f->sb, "fillPage", p, 9000 + p);
    ri_snapstore_error err;
    /* Abort at each possible check in turn: no partial snapshot, ever. */
    for (int after = 1; after < 40; after += 3) {
        countdown c = {after, 0};
        ri_snapstore_abort ab = {NULL, tick, &c};
        ri_snapshot_call call;
        memset(&call, 0, sizeof call);
        call.abort = &ab;
        ri_snapshot_ref out;
        bool ok = ri_snapshotter_snapshot(f->s, f->sb, &call, &out, &err);
        if (ok) break; /* past the last check: the save completed */
        assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
        assert_non_null(strstr(err.message, "Aborted"));
        ri_snapshot_ref *list;
        size_t n;
        expect_ok(ri_snapshotter_list(f->s, NULL, &list, &n, &err), &err);
        assert_int_equal(n, 0);
        free(list);
        ri_snapstore_usage u;
        expect_ok(ri_snapstore_usage_of(f->st, &u, &err), &err);
        assert_int_equal(u.temp_files, 0);
        assert_int_equal(u.snapshots, 0);
    }
    /* And a restore aborted half-way gives no sandbox. */
    ri_snapshot_ref ref = take(f, f->s, f->sb);
    countdown c = {2, 0};
    ri_snapstore_abort ab = {NULL, tick, &c};
    ri_snapshot_call call;
    memset(&call, 0, sizeof call);
    call.abort = &ab;
    ri_snapshotter *cold = new_snapshotter(f, "session-A", 0); /* no cached pages: reads blobs */
    assert_null(ri_snapshotter_restore(cold, &ref, &call, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_ABORTED);
    ri_snapshotter_free(cold);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ref_json_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ref_parse_strict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_makes_a_new_sandbox, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refs_checked_against_the_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_newest_first_and_clamped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_max_list_is_100, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cross_session_denied_unless_opted_in, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ownership_survives_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_already_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_mid_write_leaves_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
