/*
 * Several processes on one store directory (issue 6: "several workers and two servers
 * may share a directory"): writers saving at once (some of their pages equal, so they
 * race to write the same blobs), a collector running gc in a loop meanwhile, and a
 * renamer moving its own snapshots about. Every save a writer reported must restore
 * exactly afterwards, and verify must find nothing damaged: gc never removes a blob a
 * committed manifest names or one a save is about to name.
 */
#include "test_store_util.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

#define WRITERS 3
#define SAVES 12
#define PAGES 8

/* Writer w's state after save k: page p holds seed f(w, k, p); pages 0-3 are the same
 * for every writer (shared blobs), pages 4-7 their own. */
static int32_t seed_of(int w, int k, int p) { return p < 4 ? k * 100 + p : 100000 * (w + 1) + k * 100 + p; }

static void set_state(ri_sandbox *sb, int w, int k) {
    for (int p = 0; p < PAGES; p++) CALL2(sb, "fillPage", p, seed_of(w, k, p));
    CALL1(sb, "setG", w * 1000 + k);
}

static void writer(const char *path, int w) {
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, NULL, &err);
    if (!st) _exit(2);
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = new_sandbox(factory, "store_state");
    CALL1(sb, "grow", PAGES - 1);
    ri_snapshots_options mo;
    memset(&mo, 0, sizeof mo);
    char session[32];
    snprintf(session, sizeof session, "worker-%d", w);
    mo.session = session;
    ri_snapshots *m = ri_snapshots_new(st, sb, &mo, &err);
    for (int k = 0; k < SAVES; k++) {
        set_state(sb, w, k);
        char name[32];
        snprintf(name, sizeof name, "w%d-%d", w, k);
        if (!ri_snapshots_save(m, name, NULL, NULL, 0, NULL, &err)) {
            fprintf(stderr, "writer %d: %s\n", w, err.message);
            _exit(3);
        }
    }
    ri_snapshots_free(m);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    ri_snapstore_close(st);
    _exit(0);
}

static void collector(const char *path, int rounds) {
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, NULL, &err);
    if (!st) _exit(2);
    for (int i = 0; i < rounds; i++) {
        ri_snapstore_usage u;
        if (!ri_snapstore_gc(st, NULL, &err) || !ri_snapstore_usage_of(st, &u, &err)) {
            fprintf(stderr, "collector: %s\n", err.message);
            _exit(3);
        }
    }
    ri_snapstore_close(st);
    _exit(0);
}

/* Saves one snapshot and renames it back and forth. */
static void renamer(const char *path, int rounds) {
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, NULL, &err);
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = new_sandbox(factory, "store_state");
    CALL2(sb, "fillPage", 0, 424242);
    bytes image = snap(sb, true, false);
    if (!st || !ri_snapstore_put(st, "moving-0", image.data, image.len, NULL, NULL, NULL, &err)) _exit(2);
    for (int i = 0; i < rounds; i++) {
        char from[32], to[32];
        snprintf(from, sizeof from, "moving-%d", i);
        snprintf(to, sizeof to, "moving-%d", i + 1);
        if (!ri_snapstore_rename(st, from, to, &err)) {
            fprintf(stderr, "renamer: %s\n", err.message);
            _exit(3);
        }
    }
    free(image.data);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    ri_snapstore_close(st);
    _exit(0);
}

static void test_concurrent_processes(void **state) {
    (void)state;
    char *dir = temp_dir();
    char path[4096];
    ri_snapstore *st = new_store(dir, path, sizeof path);
    pid_t pids[WRITERS + 2];
    int n = 0;
    fflush(stdout);
    fflush(stderr);
    for (int w = 0; w < WRITERS; w++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) writer(path, w);
        pids[n++] = pid;
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) collector(path, 40);
    pids[n++] = pid;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) renamer(path, 50);
    pids[n++] = pid;
    for (int i = 0; i < n; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) print_error("child %d: status %d\n", i, status);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    /* Every save restores exactly. */
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = new_sandbox(factory, "store_state");
    CALL1(sb, "grow", PAGES - 1);
    ri_snapstore_error err;
    for (int w = 0; w < WRITERS; w++) {
        for (int k = 0; k < SAVES; k++) {
            set_state(sb, w, k);
            char name[32];
            snprintf(name, sizeof name, "w%d-%d", w, k);
            bytes got = {NULL, 0};
            ri_snapstore_image_options io;
            memset(&io, 0, sizeof io);
            expect_ok(ri_snapstore_get_image(st, name, &io, &got.data, &got.len, NULL, &err), &err);
            bytes want = snap(sb, false, false);
            assert_bytes_equal(want, got);
            free(want.data);
            free(got.data);
        }
    }
    bool exists;
    expect_ok(ri_snapstore_exists(st, "moving-50", &exists, &err), &err);
    assert_true(exists);
    /* The ownership recorded by each writer's manager is in the store. */
    ri_snapstore_list_options lo = {"worker-1", false, 0};
    ri_snapstore_info *list;
    size_t count;
    expect_ok(ri_snapstore_list(st, &lo, &list, &count, &err), &err);
    assert_int_equal(count, SAVES);
    ri_snapstore_list_free(list, count);
    uint64_t checked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(st, &checked, &bad, &first, &err), &err);
    assert_int_equal(bad, 0);
    /* Pages 0-3 were shared: far fewer blobs than pages saved. */
    ri_snapstore_usage u;
    expect_ok(ri_snapstore_gc(st, NULL, &err), &err);
    expect_ok(ri_snapstore_usage_of(st, &u, &err), &err);
    assert_int_equal(u.blobs, (uint64_t)SAVES * 4 + (uint64_t)WRITERS * SAVES * 4 + 1 + 1);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    ri_snapstore_close(st);
    remove_tree(dir);
}

/* Two handles in one process work on one store side by side (each takes its locks on
 * a descriptor of its own, so they would exclude each other as processes do). */
static void test_two_handles_one_process(void **state) {
    (void)state;
    char *dir = temp_dir();
    char path[4096];
    ri_snapstore *a = new_store(dir, path, sizeof path);
    ri_snapstore_error err;
    ri_snapstore *b = ri_snapstore_open(path, NULL, &err);
    expect_ok(b != NULL, &err);
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = new_sandbox(factory, "store_state");
    CALL2(sb, "fillPage", 0, 5);
    bytes image = snap(sb, false, false);
    expect_ok(ri_snapstore_put(a, "one", image.data, image.len, NULL, NULL, NULL, &err), &err);
    expect_ok(ri_snapstore_gc(b, NULL, &err), &err);
    bytes got = {NULL, 0};
    expect_ok(ri_snapstore_get_image(b, "one", NULL, &got.data, &got.len, NULL, &err), &err);
    assert_bytes_equal(image, got);
    free(image.data);
    free(got.data);
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    ri_snapstore_close(a);
    ri_snapstore_close(b);
    remove_tree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_processes),
        cmocka_unit_test(test_two_handles_one_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
