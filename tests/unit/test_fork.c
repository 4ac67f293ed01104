/*
 * Fork (issue 5): a forked sandbox has the original's state and a new id, and both
 * continue separately; each side matches an independent replay of its history; a
 * 4096-page memory forks and stays independent both ways (pages written before and
 * after, pages never touched before the fork, growth after it); forks of a
 * checkpoint see the checkpoint's state; many forks are freed without leaking
 * memory (ASan) or file descriptors. Fixture: tests/wat/fork_mem.wat.
 */
#include "fork_util.h"

static void steps(ri_sandbox *sb, int first, int n) {
    char args[32];
    for (int i = first; i < first + n; i++) {
        snprintf(args, sizeof args, "[%d]", i % 7);
        call_ok(sb, "mix", args);
    }
}

static void fork_diverges_and_matches_replay(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(64ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *parent = new_loaded(f, &c);
    call_ok(parent, "grow", "[6]");
    steps(parent, 0, 5);
    call_ok(parent, "dropData", NULL);

    ri_sandbox_error err;
    ri_sandbox *child = ri_sandbox_fork(f, parent, NULL, &err);
    if (!child) print_error("fork: %s\n", err.message);
    assert_non_null(child);
    assert_string_not_equal(ri_sandbox_id(child), ri_sandbox_id(parent));
    assert_int_equal(ri_sandbox_status_of(child), RI_SANDBOX_LOADED);
    assert_same_state(parent, child);

    /* Both sides go on differently. */
    steps(parent, 5, 4);
    call_ok(child, "grow", "[3]");
    steps(child, 100, 6);
    call_ok(child, "tableGrow", "[2]");

    /* Independent replays of each history. */
    ri_sandbox *rp = new_loaded(f, &c);
    call_ok(rp, "grow", "[6]");
    steps(rp, 0, 5);
    call_ok(rp, "dropData", NULL);
    ri_sandbox *rc = ri_sandbox_fork(f, rp, NULL, &err); /* the same prefix, then the child's steps */
    assert_non_null(rc);
    steps(rp, 5, 4);
    call_ok(rc, "grow", "[3]");
    steps(rc, 100, 6);
    call_ok(rc, "tableGrow", "[2]");
    assert_same_state(parent, rp);
    assert_same_state(child, rc);

    /* And a replay without any fork: the child's history from scratch. */
    ri_sandbox *fresh = new_loaded(f, &c);
    call_ok(fresh, "grow", "[6]");
    steps(fresh, 0, 5);
    call_ok(fresh, "dropData", NULL);
    call_ok(fresh, "grow", "[3]");
    steps(fresh, 100, 6);
    call_ok(fresh, "tableGrow", "[2]");
    assert_same_state(child, fresh);
    assert_int_equal(call_ok(child, "sum", NULL), call_ok(fresh, "sum", NULL));

    ri_sandbox_free(fresh);
    ri_sandbox_free(rc);
    ri_sandbox_free(rp);
    ri_sandbox_free(child);
    ri_sandbox_free(parent);
    ri_sandboxes_free(f);
}

static int32_t load_at(ri_sandbox *sb, uint32_t page) {
    char args[32];
    snprintf(args, sizeof args, "[%u]", page * PAGE);
    return call_ok(sb, "load", args);
}

static void store_at(ri_sandbox *sb, uint32_t page, int32_t v) {
    char args[48];
    snprintf(args, sizeof args, "[%u,%d]", page * PAGE, v);
    call_ok(sb, "store", args);
}

static void fork_of_4096_pages_is_independent(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(8192ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *parent = new_loaded(f, &c);
    assert_int_equal(call_ok(parent, "grow", "[4095]"), 1);
    call_ok(parent, "touch", "[0,64,64,5]"); /* pages 0, 64, ..., 4032 */
    ri_sandbox_error err;
    ri_checkpoint *cp = ri_sandbox_checkpoint(parent, NULL, &err);
    assert_non_null(cp);
    call_ok(parent, "touch", "[1,16,128,6]"); /* written after the checkpoint */

    ri_sandbox *child = ri_sandbox_fork(f, parent, NULL, &err);
    if (!child) print_error("fork: %s\n", err.message);
    assert_non_null(child);
    assert_int_equal(call_ok(child, "pages", NULL), 4096);
    assert_int_equal(load_at(child, 64), 5);
    assert_int_equal(load_at(child, 129), 6);
    assert_same_state(parent, child);

    /* Writes on one side are not seen on the other: pages written before the fork,
     * pages never touched before it, both directions. */
    store_at(parent, 64, 1000);
    store_at(parent, 3000, 1001);  /* never touched before */
    store_at(child, 129, 2000);
    store_at(child, 3001, 2001);   /* never touched before */
    assert_int_equal(load_at(child, 64), 5);
    assert_int_equal(load_at(child, 3000), 0);
    assert_int_equal(load_at(parent, 129), 6);
    assert_int_equal(load_at(parent, 3001), 0);
    assert_int_equal(load_at(parent, 64), 1000);
    assert_int_equal(load_at(child, 3001), 2001);

    /* Growth after the fork, on each side. */
    assert_int_equal(call_ok(child, "grow", "[10]"), 4096);
    store_at(child, 4100, 3000);
    assert_int_equal(call_ok(parent, "pages", NULL), 4096);
    assert_int_equal(call_ok(parent, "grow", "[20]"), 4096);
    assert_int_equal(load_at(parent, 4100), 0);
    store_at(parent, 4110, 4000);
    assert_int_equal(load_at(child, 4100), 3000);
    assert_int_equal(call_ok(child, "pages", NULL), 4106);

    /* A fork of the checkpoint sees the checkpoint, not what came after. */
    ri_sandbox *old = ri_sandbox_fork(f, parent, cp, &err);
    assert_non_null(old);
    assert_int_equal(call_ok(old, "pages", NULL), 4096);
    assert_int_equal(load_at(old, 64), 5);
    assert_int_equal(load_at(old, 129), 0);
    assert_int_equal(load_at(old, 3000), 0);

    /* The checkpoint outlives its sandbox. */
    ri_sandbox_free(parent);
    ri_sandbox *again = ri_sandbox_fork(f, old, cp, &err);
    assert_non_null(again);
    assert_same_state(old, again);
    ri_checkpoint_free(cp);
    assert_int_equal(load_at(again, 4032), 5);

    ri_sandbox_free(again);
    ri_sandbox_free(old);
    ri_sandbox_free(child);
    ri_sandboxes_free(f);
}

static void many_forks_are_freed(void **state) {
    (void)state;
    int fds_before = open_fds();
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(1024ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *parent = new_loaded(f, &c);
    call_ok(parent, "grow", "[255]");
    for (int round = 0; round < 40; round++) {
        char args[48];
        snprintf(args, sizeof args, "[%d,4,7,%d]", round % 50, round + 1);
        call_ok(parent, "touch", args);
        ri_sandbox_error err;
        ri_sandbox *kids[5];
        for (int k = 0; k < 5; k++) {
            kids[k] = ri_sandbox_fork(f, parent, NULL, &err);
            assert_non_null(kids[k]);
            snprintf(args, sizeof args, "[%d,2,3,%d]", k * 10, 1000 + k);
            call_ok(kids[k], "touch", args);
        }
        /* Grandchildren of the first child, then everything freed in mixed order. */
        ri_sandbox *grand = ri_sandbox_fork(f, kids[0], NULL, &err);
        assert_non_null(grand);
        assert_same_state(grand, kids[0]);
        ri_sandbox_free(kids[0]);
        call_ok(grand, "touch", "[1,1,1,9]");
        for (int k = 4; k >= 1; k--) ri_sandbox_free(kids[k]);
        ri_sandbox_free(grand);
    }
    ri_sandbox_free(parent);
    ri_sandboxes_free(f);
    if (fds_before >= 0) assert_int_equal(open_fds(), fds_before);
}

/* The paths without memfd or pagemap give the same forks (they only copy more). */
static void fork_without_memfd_or_pagemap(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(256ull * PAGE, RI_GAS_HOST_CALLS, 0);
    ri_sandbox *sb = new_loaded(f, &c);
    call_ok(sb, "grow", "[20]");
    call_ok(sb, "touch", "[0,21,1,4]");
    call_ok(sb, "mix", "[3]");
    const ri_checkpoint_options modes[2] = {{false, false, true}, {false, true, false}};
    for (int m = 0; m < 2; m++) {
        ri_sandbox_error err;
        ri_checkpoint *cp = ri_sandbox_checkpoint(sb, &modes[m], &err);
        assert_non_null(cp);
        ri_checkpoint_info info = ri_checkpoint_get_info(cp);
        if (m == 0) assert_false(info.memfd);
        assert_int_equal(info.depth, 0);
        ri_sandbox *child = ri_sandbox_fork(f, sb, cp, &err);
        assert_non_null(child);
        assert_same_state(sb, child);
        call_ok(child, "touch", "[2,3,5,99]");
        assert_int_equal(load_at(sb, 7), 4);
        assert_int_equal(load_at(child, 7), 99);
        ri_sandbox_free(child);
        ri_checkpoint_free(cp);
        call_ok(sb, "mix", "[4]");
    }
    ri_sandbox_free(sb);
    ri_sandboxes_free(f);
}

static void fork_refuses_what_it_cannot(void **state) {
    (void)state;
    ri_sandboxes *f = ri_sandboxes_new();
    ri_sandbox_config c = fork_config(0, RI_GAS_HOST_CALLS, 0);
    ri_sandbox_error err;
    ri_sandbox *empty = ri_sandbox_create(f, &c, &err);
    assert_non_null(empty);
    assert_null(ri_sandbox_fork(f, empty, NULL, &err));
    assert_int_equal(err.code, RI_SANDBOX_SNAPSHOT_ERROR);
    ri_sandbox *sb = new_loaded(f, &c);
    ri_sandbox_destroy(sb);
    assert_null(ri_sandbox_fork(f, sb, NULL, &err));
    assert_non_null(strstr(err.message, "destroyed"));
    assert_null(ri_sandbox_fork(NULL, sb, NULL, &err));
    ri_sandbox_free(sb);
    ri_sandbox_free(empty);
    ri_sandboxes_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fork_diverges_and_matches_replay),
        cmocka_unit_test(fork_of_4096_pages_is_independent),
        cmocka_unit_test(many_forks_are_freed),
        cmocka_unit_test(fork_without_memfd_or_pagemap),
        cmocka_unit_test(fork_refuses_what_it_cannot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
