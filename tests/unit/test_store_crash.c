/*
 * Crash safety of the snapshot store (issue 6): a child process saves snapshots in a
 * loop (and now and then deletes an old one and collects garbage) and is killed with
 * SIGKILL at a random moment; the child reports each save on a pipe only after the
 * save returned. The moment is chosen by progress, not by the clock (the parent reads a
 * random number of the child's reports, 0 to 40, then waits a random 0 to 4 ms), so the
 * kills land before, between and inside saves however slow the build or the machine. Afterwards every reported snapshot must restore byte for byte as the
 * state it was taken from (the parent replays the child's deterministic steps), every
 * listed snapshot must be whole, temporary files must be ignored by list and removed
 * by gc, and verify must find nothing damaged. Bounded: at most ROUNDS kills and about
 * TIME_LIMIT seconds. The seed is printed so a failure can be replayed (RI_CRASH_SEED).
 */
#include "test_store_util.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define ROUNDS 24
#define TIME_LIMIT 25.0
#define PAGES 16
#define STEPS_PER_ROUND 100000

/* What the child reports: a save (kind 'S') or a deletion about to happen ('D'). */
typedef struct report {
    char kind;
    int32_t step;
} report;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Step k of a round: one page rewritten, a global set; deterministic. */
static void apply_step(ri_sandbox *sb, int32_t step) {
    CALL2(sb, "fillPage", step % PAGES, step);
    CALL1(sb, "setG", step);
    if (step % 7 == 0) CALL0(sb, "random");
}

static void step_name(char *out, size_t cap, int32_t step) { snprintf(out, cap, "step-%d", step); }

static void send(int fd, char kind, int32_t step) {
    report r = {kind, step};
    ssize_t w;
    do w = write(fd, &r, sizeof r);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)sizeof r) _exit(3);
}

/* The child: never returns. Uses the store directly (with the page cache) on even
 * rounds and the snapshot manager on odd ones. */
static void child(const char *path, int round, int fd) {
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(path, NULL, &err);
    if (!st) _exit(2);
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = new_sandbox(factory, "store_state");
    CALL1(sb, "grow", PAGES - 1);
    ri_snapshots *m = round % 2 ? ri_snapshots_new(st, sb, NULL, &err) : NULL;
    ri_snapstore_cache *cache = ri_snapstore_cache_new();
    for (int32_t k = 0; k < STEPS_PER_ROUND; k++) {
        int32_t step = round * STEPS_PER_ROUND + k;
        apply_step(sb, step);
        char name[64];
        step_name(name, sizeof name, step);
        bool ok;
        if (m) {
            ok = ri_snapshots_save(m, name, "crash test", NULL, 0, NULL, &err);
        } else {
            bytes image = snap(sb, false, false);
            ri_snapstore_put_options o;
            memset(&o, 0, sizeof o);
            o.cache = cache;
            o.replace = true;
            ok = ri_snapstore_put(st, name, image.data, image.len, &o, NULL, NULL, &err);
            free(image.data);
        }
        if (!ok) _exit(4);
        send(fd, 'S', step);
        if (k % 5 == 4) {
            /* Delete an older one (announced first: it may or may not be gone) and collect. */
            int32_t old = step - 3;
            step_name(name, sizeof name, old);
            send(fd, 'D', old);
            if (!ri_snapstore_delete(st, name, NULL, &err) || !ri_snapstore_gc(st, NULL, &err)) _exit(5);
        }
    }
    _exit(0);
}

typedef struct outcome {
    int32_t *saved;
    size_t nsaved, cap;
    int32_t *deleted;
    size_t ndeleted, dcap;
} outcome;

static void push(int32_t **a, size_t *n, size_t *cap, int32_t v) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *a = realloc(*a, *cap * sizeof **a);
        assert_non_null(*a);
    }
    (*a)[(*n)++] = v;
}

static bool contains(const int32_t *a, size_t n, int32_t v) {
    for (size_t i = 0; i < n; i++)
        if (a[i] == v) return true;
    return false;
}

/* Replays round `round` up to its last reported step and compares every reported,
 * not-deleted snapshot with the state it stands for. */
static size_t check_round(ri_snapstore *st, int round, const outcome *o) {
    int32_t last = -1;
    for (size_t i = 0; i < o->nsaved; i++)
        if (o->saved[i] / STEPS_PER_ROUND == round && o->saved[i] > last) last = o->saved[i];
    if (last < 0) return 0;
    ri_sandboxes *factory = ri_sandboxes_new();
    ri_sandbox *sb = new_sandbox(factory, "store_state");
    CALL1(sb, "grow", PAGES - 1);
    size_t checked = 0;
    for (int32_t step = round * STEPS_PER_ROUND; step <= last; step++) {
        apply_step(sb, step);
        if (!contains(o->saved, o->nsaved, step) || contains(o->deleted, o->ndeleted, step)) continue;
        char name[64];
        step_name(name, sizeof name, step);
        ri_snapstore_image_options io;
        memset(&io, 0, sizeof io);
        bytes got = {NULL, 0};
        ri_snapstore_error err;
        if (!ri_snapstore_get_image(st, name, &io, &got.data, &got.len, NULL, &err))
            print_error("reported snapshot %s: %s\n", name, err.message);
        assert_non_null(got.data);
        bytes want = snap(sb, false, false);
        assert_bytes_equal(want, got);
        free(want.data);
        free(got.data);
        checked++;
    }
    ri_sandbox_free(sb);
    ri_sandboxes_free(factory);
    return checked;
}

/* Reads one report into o; its kind, or 0 at the end of the pipe. */
static char take_report(int fd, outcome *o) {
    report r;
    ssize_t got;
    do got = read(fd, &r, sizeof r);
    while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof r) return 0;
    if (r.kind == 'S') push(&o->saved, &o->nsaved, &o->cap, r.step);
    else push(&o->deleted, &o->ndeleted, &o->dcap, r.step);
    return r.kind;
}

static void test_sigkill_during_saves(void **state) {
    (void)state;
    char *dir = temp_dir();
    char path[4096];
    ri_snapstore *st = new_store(dir, path, sizeof path);
    const char *env_seed = getenv("RI_CRASH_SEED");
    unsigned seed = env_seed ? (unsigned)strtoul(env_seed, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
    printf("crash test seed %u (RI_CRASH_SEED to replay)\n", seed);
    srand(seed);
    outcome o;
    memset(&o, 0, sizeof o);
    double start = now_s();
    int rounds = 0;
    for (int round = 0; round < ROUNDS && now_s() - start < TIME_LIMIT; round++, rounds++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        fflush(stdout);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child(path, round, fds[1]);
        }
        close(fds[1]);
        /* Killed somewhere between its first steps and a few dozen saves in. */
        int saves = rand() % 41;
        for (int k = 0; k < saves;) {
            char kind = take_report(fds[0], &o);
            if (!kind) break; /* the child died: waitpid below says how */
            k += kind == 'S';
        }
        struct timespec wait = {0, (long)(rand() % 4000) * 1000L};
        nanosleep(&wait, NULL);
        assert_int_equal(kill(pid, SIGKILL), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            print_error("round %d: the child ended by itself (status %d)\n", round, status);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        while (take_report(fds[0], &o)) continue;
        close(fds[0]);
    }
    printf("%d kills, %zu saves reported, %zu deletions announced\n", rounds, o.nsaved, o.ndeleted);

    /* A fresh handle, as after a restart. */
    ri_snapstore_close(st);
    ri_snapstore_error err;
    st = ri_snapstore_open(path, NULL, &err);
    expect_ok(st != NULL, &err);
    /* Nothing half-written is visible: every listed snapshot is whole. */
    ri_snapstore_info *list;
    size_t n;
    expect_ok(ri_snapstore_list(st, NULL, &list, &n, &err), &err);
    for (size_t i = 0; i < n; i++) {
        ri_snapstore_image_options io;
        memset(&io, 0, sizeof io);
        uint8_t *img;
        size_t len;
        expect_ok(ri_snapstore_get_image(st, list[i].name, &io, &img, &len, NULL, &err), &err);
        free(img);
    }
    ri_snapstore_list_free(list, n);
    /* Every reported save restores exactly. */
    size_t checked = 0;
    for (int round = 0; round < rounds; round++) checked += check_round(st, round, &o);
    printf("%zu reported snapshots restored exactly, %zu listed\n", checked, n);
    assert_true(checked > 0);
    uint64_t nchecked, bad;
    ri_snapstore_error first;
    expect_ok(ri_snapstore_verify(st, &nchecked, &bad, &first, &err), &err);
    if (bad) print_error("verify: %s\n", first.message);
    assert_int_equal(bad, 0);
    /* Left-over temporary files go at the next collection. */
    ri_snapstore_gc_stats gs;
    expect_ok(ri_snapstore_gc(st, &gs, &err), &err);
    ri_snapstore_usage u;
    expect_ok(ri_snapstore_usage_of(st, &u, &err), &err);
    assert_int_equal(u.temp_files, 0);
    printf("gc removed %llu temporary files and %llu unreferenced blobs\n", (unsigned long long)gs.temp_removed,
           (unsigned long long)gs.blobs_removed);
    for (int round = 0; round < rounds; round++) check_round(st, round, &o);
    ri_snapstore_close(st);
    free(o.saved);
    free(o.deleted);
    remove_tree(dir);
}

/* A creation killed half-way leaves directories and the lock but no store.json: it is
 * not a store, and creating it again completes it. */
static void test_interrupted_creation(void **state) {
    (void)state;
    char *dir = temp_dir();
    char p[4200];
    snprintf(p, sizeof p, "%s/store", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/store/blobs", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/store/lock", dir);
    write_path(p, (const uint8_t *)"", 0);
    snprintf(p, sizeof p, "%s/store/.tmp-0011223344556677", dir);
    write_path(p, (const uint8_t *)"{\"format\"", 9);
    snprintf(p, sizeof p, "%s/store", dir);
    ri_snapstore_error err;
    assert_null(ri_snapstore_open(p, NULL, &err));
    assert_int_equal(err.code, RI_SNAPSTORE_ERR_NOT_STORE);
    ri_snapstore_options create = {true};
    ri_snapstore *st = ri_snapstore_open(p, &create, &err);
    expect_ok(st != NULL, &err);
    ri_snapstore_gc_stats gs;
    expect_ok(ri_snapstore_gc(st, &gs, &err), &err);
    assert_int_equal(gs.temp_removed, 1);
    ri_snapstore_close(st);
    remove_tree(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sigkill_during_saves),
        cmocka_unit_test(test_interrupted_creation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
