/*
 * The etcd client and the ownership module against a real 3-member etcd cluster, started by
 * run_coord.sh (etcd_cluster.sh). Usage: test_coord CLUSTER_SCRIPT CLUSTER_DIR
 * (test_coord child ENDPOINTS SANDBOX: the owner process that the expiry test freezes).
 *
 * Latencies are printed (not asserted). Every wait is bounded: a step that does not happen
 * within its bound fails the test with a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "coord/etcd.h"
#include "coord/owner.h"

extern char **environ;

static int failures;
static const char *endpoints_text;
static const char *cluster_script, *cluster_dir;

#define CHECK(cond, ...)                                                                                    \
    do {                                                                                                    \
        if (!(cond)) {                                                                                      \
            failures++;                                                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            fprintf(stderr, __VA_ARGS__);                                                                   \
            fprintf(stderr, "\n");                                                                          \
        }                                                                                                   \
    } while (0)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Runs etcd_cluster.sh CMD DIR ARGS; its output (first line) in out. */
static int cluster(const char *args, char *out, size_t cap) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "bash '%s' %s", cluster_script, args);
    char *p = strstr(cmd, "DIR");
    if (p) {
        char rest[512];
        snprintf(rest, sizeof rest, "%s", p + 3);
        snprintf(p, sizeof cmd - (size_t)(p - cmd), "'%s'%s", cluster_dir, rest);
    }
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    char line[256] = "";
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    int rc = pclose(f);
    line[strcspn(line, "\n")] = '\0';
    if (out) snprintf(out, cap, "%s", line);
    return rc;
}

static ri_etcd *open_client(const char *endpoints) {
    char **eps;
    size_t n;
    ri_etcd_error e;
    if (!ri_etcd_parse_endpoints(endpoints, &eps, &n, &e)) {
        fprintf(stderr, "endpoints: %s\n", e.message);
        exit(2);
    }
    ri_etcd_config cfg = {.endpoints = (const char *const *)eps, .n_endpoints = n, .connect_timeout_ms = 500,
                          .request_timeout_ms = 2000, .watch_refresh_ms = 3000};
    ri_etcd *c = ri_etcd_open(&cfg, &e);
    ri_etcd_endpoints_free(eps, n);
    if (!c) {
        fprintf(stderr, "open: %s\n", e.message);
        exit(2);
    }
    return c;
}

/* ---- callbacks the tests wait on ------------------------------------------------------------ */

typedef struct signal_box {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int count;
    char text[256];
    double at_ms;
} signal_box;

#define SIGNAL_BOX_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, "", 0}

static void box_post(signal_box *b, const char *text) {
    pthread_mutex_lock(&b->mu);
    b->count++;
    b->at_ms = now_ms();
    snprintf(b->text, sizeof b->text, "%s", text);
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Waits until count >= n, at most ms; returns the count. */
static int box_wait(signal_box *b, int n, int ms) {
    double until = now_ms() + ms;
    pthread_mutex_lock(&b->mu);
    while (b->count < n && now_ms() < until) {
        pthread_mutex_unlock(&b->mu);
        sleep_ms(10);
        pthread_mutex_lock(&b->mu);
    }
    int c = b->count;
    pthread_mutex_unlock(&b->mu);
    return c;
}

static void on_lost(void *user, const char *const *ids, size_t n, const char *reason) {
    char text[256];
    snprintf(text, sizeof text, "%zu:%s:%s", n, n && ids ? ids[0] : "-", reason);
    box_post(user, text);
}

static void on_handoff(void *user, const char *id, const char *requester) {
    char text[256];
    snprintf(text, sizeof text, "%s<-%s", id, requester);
    box_post(user, text);
}

static ri_owner *open_owner(ri_etcd *c, const char *id, int64_t ttl, signal_box *lost, signal_box *handoff) {
    /* handoff requests are tested with their own callbacks (test_handoff) */
    (void)handoff;
    ri_owner_config cfg = {.etcd = c, .server_id = id, .address = "127.0.0.1:1", .ttl_seconds = ttl,
                           .on_lost = on_lost, .user = lost};
    ri_owner_error err;
    ri_owner *o = ri_owner_open(&cfg, &err);
    if (!o) {
        fprintf(stderr, "owner open %s: %s\n", id, err.message);
        exit(2);
    }
    return o;
}

/* ---- 1. basics ------------------------------------------------------------------------------- */

static void test_basics(ri_etcd *c) {
    ri_etcd_error e;
    ri_etcd_range r;
    int64_t rev = 0, deleted = 0;
    CHECK(ri_etcd_put(c, "/t/basic/a", "1", 1, 0, &rev, &e), "%s", e.message);
    CHECK(ri_etcd_put(c, "/t/basic/b", "two", 3, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_get(c, "/t/basic/a", false, &r, &e), "%s", e.message);
    CHECK(r.n == 1 && r.kvs[0].value_len == 1 && r.kvs[0].mod_revision == rev, "get a");
    ri_etcd_range_free(&r);
    CHECK(ri_etcd_get(c, "/t/basic/", true, &r, &e) && r.n == 2, "prefix get: %s", e.message);
    CHECK(r.n == 2 && strcmp((char *)r.kvs[1].value, "two") == 0 && strcmp(r.kvs[1].key, "/t/basic/b") == 0,
          "prefix order");
    ri_etcd_range_free(&r);
    CHECK(ri_etcd_get(c, "/t/basic/none", false, &r, &e) && r.n == 0, "absent key");
    ri_etcd_range_free(&r);

    /* txn: create-if-absent succeeds once, then fails and reads the key */
    ri_etcd_compare absent = {.key = "/t/basic/c", .target = RI_ETCD_CREATE, .result = RI_ETCD_EQUAL};
    ri_etcd_op put = {.kind = RI_ETCD_OP_PUT, .key = "/t/basic/c", .value = "x", .value_len = 1};
    ri_etcd_op get = {.kind = RI_ETCD_OP_GET, .key = "/t/basic/c"};
    ri_etcd_txn_result t;
    CHECK(ri_etcd_txn(c, &absent, 1, &put, 1, &get, 1, &t, &e) && t.succeeded, "txn 1: %s", e.message);
    int64_t created = t.revision;
    ri_etcd_txn_result_free(&t);
    CHECK(ri_etcd_txn(c, &absent, 1, &put, 1, &get, 1, &t, &e) && !t.succeeded, "txn 2: %s", e.message);
    CHECK(t.n == 1 && t.ranges[0].n == 1 && t.ranges[0].kvs[0].create_revision == created, "txn 2 read");
    ri_etcd_txn_result_free(&t);
    ri_etcd_compare value_is = {.key = "/t/basic/b", .target = RI_ETCD_VALUE, .result = RI_ETCD_EQUAL,
                                .value = "two", .value_len = 3};
    ri_etcd_compare version_gt = {.key = "/t/basic/b", .target = RI_ETCD_VERSION, .result = RI_ETCD_GREATER,
                                  .number = 0};
    ri_etcd_compare both[2] = {value_is, version_gt};
    CHECK(ri_etcd_txn(c, both, 2, &get, 1, NULL, 0, &t, &e) && t.succeeded, "txn value/version: %s", e.message);
    ri_etcd_txn_result_free(&t);
    ri_etcd_compare mod_less = {.key = "/t/basic/b", .target = RI_ETCD_MOD, .result = RI_ETCD_LESS, .number = 1};
    CHECK(ri_etcd_txn(c, &mod_less, 1, &get, 1, NULL, 0, &t, &e) && !t.succeeded, "txn mod: %s", e.message);
    ri_etcd_txn_result_free(&t);

    CHECK(ri_etcd_delete(c, "/t/basic/", true, &deleted, NULL, &e) && deleted == 3, "delete prefix: %s %" PRId64,
          e.message, deleted);

    /* leases: a key bound to a lease goes with it */
    ri_etcd_lease l, k;
    CHECK(ri_etcd_lease_grant(c, 5, &l, &e) && l.id && l.ttl == 5, "grant: %s", e.message);
    CHECK(ri_etcd_put(c, "/t/basic/leased", "v", 1, l.id, NULL, &e), "put leased: %s", e.message);
    CHECK(ri_etcd_lease_keepalive(c, l.id, 0, &k, &e) && k.ttl == 5, "keepalive: %s", e.message);
    CHECK(ri_etcd_lease_revoke(c, l.id, &e), "revoke: %s", e.message);
    CHECK(ri_etcd_get(c, "/t/basic/leased", false, &r, &e) && r.n == 0, "leased key gone");
    ri_etcd_range_free(&r);
    CHECK(!ri_etcd_lease_keepalive(c, l.id, 0, &k, &e) && e.code == RI_ETCD_E_LEASE_NOT_FOUND,
          "keepalive of a revoked lease: %s", e.message);
    CHECK(!ri_etcd_put(c, "/t/basic/x", "v", 1, l.id, NULL, &e) && e.code == RI_ETCD_E_SERVER && e.grpc_code == 5,
          "put with a revoked lease: %s", e.message);
    printf("error text of a put with a revoked lease: %s\n", e.message);

    /* latencies */
    int n = 50;
    double t0 = now_ms();
    for (int i = 0; i < n; i++) ri_etcd_put(c, "/t/basic/lat", "v", 1, 0, NULL, &e);
    double t1 = now_ms();
    for (int i = 0; i < n; i++) {
        ri_etcd_get(c, "/t/basic/lat", false, &r, &e);
        ri_etcd_range_free(&r);
    }
    double t2 = now_ms();
    printf("latency: put %.2f ms, get %.2f ms (mean of %d)\n", (t1 - t0) / n, (t2 - t1) / n, n);
    ri_etcd_delete(c, "/t/basic/lat", false, NULL, NULL, &e);
}

/* ---- watch basics ---------------------------------------------------------------------------- */

typedef struct watch_log {
    pthread_mutex_t mu;
    char keys[64][64];
    int kinds[64];
    int n;
    int compacted;
} watch_log;

static void on_watch(void *user, const ri_etcd_event *ev) {
    watch_log *w = user;
    if (ev->kind == RI_ETCD_EV_DISCONNECTED) printf("  watch: disconnected: %s\n", ev->error->message);
    if (ev->kind == RI_ETCD_EV_COMPACTED) {
        pthread_mutex_lock(&w->mu);
        w->compacted++;
        pthread_mutex_unlock(&w->mu);
    }
    if (ev->kind != RI_ETCD_EV_PUT && ev->kind != RI_ETCD_EV_DELETE) return;
    pthread_mutex_lock(&w->mu);
    if (w->n < 64) {
        snprintf(w->keys[w->n], sizeof w->keys[0], "%s", ev->kv->key);
        w->kinds[w->n] = ev->kind;
        w->n++;
    }
    pthread_mutex_unlock(&w->mu);
}

static int watch_count(watch_log *w, int n, int ms) {
    double until = now_ms() + ms;
    int c;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        c = w->n;
        pthread_mutex_unlock(&w->mu);
        if (c >= n || now_ms() >= until) return c;
        sleep_ms(10);
    }
}

static void test_watch(ri_etcd *c) {
    ri_etcd_error e;
    ri_etcd_range r;
    CHECK(ri_etcd_get(c, "/t/none", false, &r, &e), "%s", e.message);
    int64_t start = r.revision + 1;
    ri_etcd_range_free(&r);
    CHECK(ri_etcd_put(c, "/t/w/1", "a", 1, 0, NULL, &e), "%s", e.message); /* before the watch starts */
    watch_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ri_etcd_watch *w = ri_etcd_watch_start(c, "/t/w/", true, start, on_watch, &log, &e);
    CHECK(w, "watch: %s", e.message);
    CHECK(ri_etcd_put(c, "/t/w/2", "b", 1, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_put(c, "/t/other", "c", 1, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_delete(c, "/t/w/1", false, NULL, NULL, &e), "%s", e.message);
    CHECK(watch_count(&log, 3, 10000) == 3, "3 events (got %d)", log.n);
    CHECK(strcmp(log.keys[0], "/t/w/1") == 0 && strcmp(log.keys[1], "/t/w/2") == 0 &&
              log.kinds[2] == RI_ETCD_EV_DELETE,
          "events in order: %s %s", log.keys[0], log.keys[1]);
    /* past a refresh of the stream (3 s), nothing repeats and nothing is lost */
    sleep_ms(3500);
    CHECK(ri_etcd_put(c, "/t/w/3", "d", 1, 0, NULL, &e), "%s", e.message);
    CHECK(watch_count(&log, 4, 10000) == 4 && strcmp(log.keys[3], "/t/w/3") == 0, "after a refresh: %d events",
          log.n);
    sleep_ms(200);
    CHECK(log.n == 4, "no repeated event (%d)", log.n);
    ri_etcd_watch_stop(w);

    /* from a compacted revision: told so, then the events after the compaction */
    CHECK(ri_etcd_put(c, "/t/w/4", "e", 1, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_get(c, "/t/none", false, &r, &e), "%s", e.message);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "etcdctl --endpoints=%s compact %" PRId64 " >/dev/null", endpoints_text, r.revision);
    ri_etcd_range_free(&r);
    CHECK(system(cmd) == 0, "etcdctl compact");
    watch_log late = {.mu = PTHREAD_MUTEX_INITIALIZER};
    w = ri_etcd_watch_start(c, "/t/w/", true, start, on_watch, &late, &e);
    CHECK(ri_etcd_put(c, "/t/w/5", "f", 1, 0, NULL, &e), "%s", e.message);
    /* the compaction's own revision (the put of /t/w/4) is the first one left */
    CHECK(watch_count(&late, 2, 10000) == 2 && strcmp(late.keys[0], "/t/w/4") == 0 &&
              strcmp(late.keys[1], "/t/w/5") == 0,
          "after compaction: %d %s", late.n, late.keys[0]);
    CHECK(late.compacted == 1, "compaction reported (%d)", late.compacted);
    ri_etcd_watch_stop(w);

    /* deletions only (NOPUT): etcd leaves the puts out of the stream */
    watch_log dels = {.mu = PTHREAD_MUTEX_INITIALIZER};
    w = ri_etcd_watch_start_filtered(c, "/t/f/", true, 0, RI_ETCD_WATCH_NO_PUT, on_watch, &dels, &e);
    CHECK(w, "filtered watch: %s", e.message);
    sleep_ms(300); /* "from now": the stream exists before the writes */
    CHECK(ri_etcd_put(c, "/t/f/1", "g", 1, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_put(c, "/t/f/2", "h", 1, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_delete(c, "/t/f/1", false, NULL, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_put(c, "/t/f/3", "i", 1, 0, NULL, &e), "%s", e.message);
    CHECK(ri_etcd_delete(c, "/t/f/3", false, NULL, NULL, &e), "%s", e.message);
    CHECK(watch_count(&dels, 2, 10000) == 2, "2 deletions (got %d)", dels.n);
    sleep_ms(200);
    CHECK(dels.n == 2 && dels.kinds[0] == RI_ETCD_EV_DELETE && dels.kinds[1] == RI_ETCD_EV_DELETE &&
              strcmp(dels.keys[0], "/t/f/1") == 0 && strcmp(dels.keys[1], "/t/f/3") == 0,
          "only the deletions, in order (%d events, first %s)", dels.n, dels.keys[0]);
    ri_etcd_watch_stop(w);
    ri_etcd_delete(c, "/t/", true, NULL, NULL, &e);
}

/* ---- 2. two owners race for one sandbox --------------------------------------------------------- */

typedef struct racer {
    ri_owner *owner;
    const char *sandbox;
    pthread_barrier_t *go;
    bool won;
    int64_t token;
    ri_owner_error err;
    double ms;
} racer;

static void *race(void *arg) {
    racer *r = arg;
    pthread_barrier_wait(r->go);
    double t0 = now_ms();
    r->won = ri_owner_acquire(r->owner, r->sandbox, &r->token, &r->err);
    r->ms = now_ms() - t0;
    return NULL;
}

static void test_race(ri_etcd *ca, ri_etcd *cb) {
    signal_box la = SIGNAL_BOX_INIT, lb = SIGNAL_BOX_INIT;
    ri_owner *a = open_owner(ca, "srv-a", 10, &la, NULL), *b = open_owner(cb, "srv-b", 10, &lb, NULL);
    int rounds = 20, single = 0, a_wins = 0;
    double total = 0;
    for (int i = 0; i < rounds; i++) {
        char id[32];
        snprintf(id, sizeof id, "race-%d", i);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        racer ra = {a, id, &go, false, 0, {0}, 0}, rb = {b, id, &go, false, 0, {0}, 0};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, race, &ra);
        pthread_create(&tb, NULL, race, &rb);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        pthread_barrier_destroy(&go);
        total += ra.ms + rb.ms;
        if (ra.won != rb.won) single++;
        a_wins += ra.won;
        racer *loser = ra.won ? &rb : &ra;
        CHECK(ra.won != rb.won, "round %d: exactly one owner (a %d, b %d)", i, ra.won, rb.won);
        CHECK(loser->err.code == RI_OWNER_E_TAKEN && strstr(loser->err.message, ra.won ? "srv-a" : "srv-b"),
              "round %d: the loser is told who owns it: %s", i, loser->err.message);
        /* the winner acquiring again gets the same token */
        racer *winner = ra.won ? &ra : &rb;
        int64_t again;
        ri_owner_error err;
        CHECK(ri_owner_acquire(winner->owner, id, &again, &err) && again == winner->token, "re-acquire");
        CHECK(ri_owner_release(winner->owner, id, winner->token, &err), "release: %s", err.message);
    }
    printf("race: %d rounds, exactly one owner in %d, srv-a won %d; acquire %.2f ms mean\n", rounds, single,
           a_wins, total / (2 * rounds));
    ri_owner_close(a);
    ri_owner_close(b);
    CHECK(la.count == 0 && lb.count == 0, "no ownership lost");
}

/* ---- 3. fencing: a lease that etcd ended while its owner did not notice -------------------- */

static void test_fencing(ri_etcd *c) {
    signal_box la = SIGNAL_BOX_INIT, lb = SIGNAL_BOX_INIT;
    /* a long TTL: a's own keepalive does not notice the revocation during the test */
    ri_owner *a = open_owner(c, "srv-a", 60, &la, NULL), *b = open_owner(c, "srv-b", 60, &lb, NULL);
    ri_owner_error err;
    int64_t ta, tb;
    double t0 = now_ms();
    CHECK(ri_owner_acquire(a, "fence-1", &ta, &err), "%s", err.message);
    double t1 = now_ms();
    CHECK(ri_owner_confirm_checkpoint(a, "fence-1", ta, "ckpt-a1", &err), "%s", err.message);
    double t2 = now_ms();
    CHECK(ri_owner_put_meta(a, "fence-1", ta, "{\"m\":1}", 7, &err), "%s", err.message);
    printf("fencing: acquire %.2f ms, confirm_checkpoint %.2f ms\n", t1 - t0, t2 - t1);
    CHECK(!ri_owner_acquire(b, "fence-1", &tb, &err) && err.code == RI_OWNER_E_TAKEN, "b refused: %s", err.message);
    /* etcd ends a's lease (as if it expired while a was frozen) */
    ri_etcd_error e;
    CHECK(ri_etcd_lease_revoke(c, ri_owner_lease_id(a), &e), "%s", e.message);
    CHECK(ri_owner_acquire(b, "fence-1", &tb, &err), "b takes over: %s", err.message);
    CHECK(tb > ta, "higher token: %" PRId64 " > %" PRId64, tb, ta);
    CHECK(ri_owner_confirm_checkpoint(b, "fence-1", tb, "ckpt-b1", &err), "%s", err.message);
    /* a, still believing it owns the sandbox, writes late: refused by etcd */
    CHECK(ri_owner_holds(a, "fence-1", NULL), "a still thinks it holds it");
    CHECK(!ri_owner_confirm_checkpoint(a, "fence-1", ta, "ckpt-a2", &err) && err.code == RI_OWNER_E_FENCED,
          "a's late checkpoint refused: %s", err.message);
    printf("a late write is refused: %s\n", err.message);
    CHECK(!ri_owner_holds(a, "fence-1", NULL), "a dropped it");
    CHECK(!ri_owner_put_meta(a, "fence-1", ta, "x", 1, &err) && err.code == RI_OWNER_E_FENCED, "late meta");
    ri_owner_route route;
    CHECK(ri_owner_route_get(b, "fence-1", &route, &err), "%s", err.message);
    CHECK(route.owner && strcmp(route.owner, "srv-b") == 0 && route.token == tb, "route owner");
    CHECK(route.latest && strcmp(route.latest, "ckpt-b1") == 0 && route.latest_token == tb, "latest is b's");
    CHECK(route.meta_len == 7 && memcmp(route.meta, "{\"m\":1}", 7) == 0, "meta kept");
    CHECK(route.owner_address && strcmp(route.owner_address, "127.0.0.1:1") == 0, "address");
    ri_owner_route_free(&route);
    /* a's keepalive learns that the lease is gone: lost reported, then a new lease */
    ri_owner_close(a);
    ri_owner_close(b);
}

/* ---- 3b. the owner process frozen (SIGSTOP) past its lease ------------------------------------ */

static int child_main(const char *endpoints, const char *sandbox) {
    ri_etcd *c = open_client(endpoints);
    signal_box lost = SIGNAL_BOX_INIT;
    ri_owner *o = open_owner(c, "srv-child", 2, &lost, NULL);
    ri_owner_error err;
    int64_t token;
    if (!ri_owner_acquire(o, sandbox, &token, &err) || !ri_owner_confirm_checkpoint(o, sandbox, token, "child-1", &err)) {
        printf("error %s\n", err.message);
        return 1;
    }
    printf("token %" PRId64 "\n", token);
    fflush(stdout);
    char line[64];
    if (!fgets(line, sizeof line, stdin)) return 1; /* the parent: stopped us, then continued us */
    bool ok = ri_owner_confirm_checkpoint(o, sandbox, token, "child-2", &err);
    printf("confirm %s %s\n", ok ? "ok" : ri_owner_code_name(err.code), err.message);
    int n = box_wait(&lost, 1, 10000);
    printf("lost %d %s\n", n, lost.text);
    fflush(stdout);
    ri_owner_close(o);
    ri_etcd_close(c);
    return 0;
}

static void test_frozen_owner(ri_etcd *c, const char *self, const char *endpoints) {
    int to_child[2], from_child[2];
    if (pipe(to_child) || pipe(from_child)) abort();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from_child[1], 1);
    posix_spawn_file_actions_addclose(&fa, to_child[1]);
    posix_spawn_file_actions_addclose(&fa, from_child[0]);
    char *argv[] = {(char *)self, "child", (char *)endpoints, "frozen-1", NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, self, &fa, NULL, argv, environ) == 0, "spawn");
    posix_spawn_file_actions_destroy(&fa);
    close(to_child[0]);
    close(from_child[1]);
    FILE *in = fdopen(from_child[0], "r");
    char line[512] = "";
    int64_t child_token = 0;
    CHECK(fgets(line, sizeof line, in) && sscanf(line, "token %" SCNd64, &child_token) == 1, "child: %s", line);
    kill(pid, SIGSTOP);
    double stopped = now_ms();
    signal_box lb = SIGNAL_BOX_INIT;
    ri_owner *b = open_owner(c, "srv-b", 10, &lb, NULL);
    ri_owner_error err;
    int64_t tb = 0;
    bool got = false;
    int tries = 0;
    while (!got && now_ms() - stopped < 20000) { /* the child's 2 s lease must run out first */
        got = ri_owner_acquire(b, "frozen-1", &tb, &err);
        tries++;
        if (!got) {
            CHECK(err.code == RI_OWNER_E_TAKEN, "while frozen: %s", err.message);
            sleep_ms(100);
        }
    }
    CHECK(got && tb > child_token, "b took over after the lease: token %" PRId64 " > %" PRId64, tb, child_token);
    printf("frozen owner: taken over %.0f ms after SIGSTOP (lease TTL 2 s, %d tries)\n", now_ms() - stopped, tries);
    CHECK(ri_owner_confirm_checkpoint(b, "frozen-1", tb, "b-1", &err), "%s", err.message);
    kill(pid, SIGCONT);
    CHECK(write(to_child[1], "go\n", 3) == 3, "write");
    CHECK(fgets(line, sizeof line, in) != NULL, "child confirm");
    /* Refused either by etcd (fenced) or locally if its keepalive noticed first (ownership lost). */
    CHECK(strncmp(line, "confirm fenced", 14) == 0 || strncmp(line, "confirm ownership lost", 22) == 0,
          "the woken owner's write is refused: %s", line);
    printf("woken owner: %s", line);
    CHECK(fgets(line, sizeof line, in) && strncmp(line, "lost 1 ", 7) == 0, "the woken owner reports: %s", line);
    printf("woken owner: %s", line);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit %d", status);
    fclose(in);
    close(to_child[1]);
    ri_owner_route route;
    CHECK(ri_owner_route_get(b, "frozen-1", &route, &err), "%s", err.message);
    CHECK(route.latest && strcmp(route.latest, "b-1") == 0, "latest is still b's: %s", route.latest);
    ri_owner_route_free(&route);
    ri_owner_close(b);
}

/* ---- 4. a handoff request reaches the owner ---------------------------------------------------- */

typedef struct handoff_user {
    signal_box lost, handoff, released;
} handoff_user;

static void ho_released(void *user, const char *id) {
    if (id) box_post(&((handoff_user *)user)->released, id); /* NULL: a (re)connection, not a release */
}

static void ho_lost(void *user, const char *const *ids, size_t n, const char *reason) {
    on_lost(&((handoff_user *)user)->lost, ids, n, reason);
}
static void ho_handoff(void *user, const char *id, const char *requester) {
    on_handoff(&((handoff_user *)user)->handoff, id, requester);
}

static void test_handoff(ri_etcd *c) {
    handoff_user ua = {SIGNAL_BOX_INIT, SIGNAL_BOX_INIT, SIGNAL_BOX_INIT},
                 ub = {SIGNAL_BOX_INIT, SIGNAL_BOX_INIT, SIGNAL_BOX_INIT};
    ri_owner_error err;
    ri_owner_config ca = {.etcd = c, .server_id = "srv-a", .ttl_seconds = 10, .on_lost = ho_lost,
                          .on_handoff = ho_handoff, .on_released = ho_released, .user = &ua};
    ri_owner_config cb = ca;
    cb.server_id = "srv-b";
    cb.user = &ub;
    ri_owner *a = ri_owner_open(&ca, &err), *b = ri_owner_open(&cb, &err);
    CHECK(a && b, "%s", err.message);
    if (!a || !b) return;
    int64_t ta, tb;
    CHECK(ri_owner_acquire(a, "ho-1", &ta, &err), "%s", err.message);
    double t0 = now_ms();
    CHECK(ri_owner_request_handoff(b, "ho-1", &err), "%s", err.message);
    CHECK(box_wait(&ua.handoff, 1, 10000) == 1, "the owner hears of the request");
    printf("handoff: request to the owner's callback %.2f ms\n", ua.handoff.at_ms - t0);
    CHECK(strcmp(ua.handoff.text, "ho-1<-srv-b") == 0, "handoff text %s", ua.handoff.text);
    CHECK(ub.handoff.count == 0, "the requester is not told of its own request");
    ri_owner_route route;
    CHECK(ri_owner_route_get(b, "ho-1", &route, &err) && route.handoff_requester &&
              strcmp(route.handoff_requester, "srv-b") == 0,
          "pending request visible");
    ri_owner_route_free(&route);
    double t1 = now_ms();
    CHECK(ri_owner_release(a, "ho-1", ta, &err), "%s", err.message);
    /* the asker hears of the release from its watch (no polling) */
    CHECK(box_wait(&ub.released, 1, 10000) >= 1 && strcmp(ub.released.text, "ho-1") == 0,
          "the release reaches the asker's callback (%d: %s)", ub.released.count, ub.released.text);
    printf("handoff: release to the asker's callback %.2f ms\n", ub.released.at_ms - t1);
    CHECK(ri_owner_acquire(b, "ho-1", &tb, &err) && tb > ta, "b acquires: %s", err.message);
    printf("handoff: release + acquire %.2f ms\n", now_ms() - t1);
    CHECK(ri_owner_route_get(b, "ho-1", &route, &err) && !route.handoff_requester && route.token == tb,
          "the request is gone once b owns it");
    ri_owner_route_free(&route);
    CHECK(!ri_owner_release(a, "ho-1", ta, &err) && err.code == RI_OWNER_E_FENCED, "a's stale release refused");
    ri_owner_close(a);
    ri_owner_close(b);
}

/* ---- 5. a member and the leader killed: failover ------------------------------------------------ */

static bool ops_work(ri_etcd *c, ri_owner *o, const char *sandbox, int64_t *token, const char *ckpt) {
    ri_etcd_error e;
    ri_owner_error err;
    ri_etcd_range r;
    bool ok = ri_etcd_put(c, "/t/fo", ckpt, strlen(ckpt), 0, NULL, &e);
    if (!ok) printf("  put: %s\n", e.message);
    if (ok && !(ok = ri_etcd_get(c, "/t/fo", false, &r, &e))) printf("  get: %s\n", e.message);
    if (ok) ri_etcd_range_free(&r);
    if (ok && !*token && !(ok = ri_owner_acquire(o, sandbox, token, &err))) printf("  acquire: %s\n", err.message);
    if (ok && !(ok = ri_owner_confirm_checkpoint(o, sandbox, *token, ckpt, &err)))
        printf("  confirm: %s\n", err.message);
    return ok;
}

static void kill_member(int member, const char *what) { /* and wait until it is gone */
    char args[128];
    snprintf(args, sizeof args, "signal DIR %d KILL", member);
    CHECK(cluster(args, NULL, 0) == 0, "kill %s", what);
}

static void restart_member(int member) {
    char args[128];
    snprintf(args, sizeof args, "restart DIR %d", member);
    CHECK(cluster(args, NULL, 0) == 0, "restart %d", member);
    CHECK(cluster("wait-healthy DIR", NULL, 0) == 0, "healthy again");
}

static int leader(void) {
    char out[32] = "";
    cluster("leader DIR", out, sizeof out);
    return atoi(out);
}

static void test_failover(ri_etcd *c) {
    signal_box lost = SIGNAL_BOX_INIT;
    ri_owner *o = open_owner(c, "srv-f", 10, &lost, NULL);
    watch_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ri_etcd_error e;
    ri_etcd_range r;
    /* from a known revision: "from now" (0) would be when the stream is established */
    CHECK(ri_etcd_get(c, "/t/fo", false, &r, &e), "%s", e.message);
    ri_etcd_watch *w = ri_etcd_watch_start(c, "/t/fo", false, r.revision + 1, on_watch, &log, &e);
    ri_etcd_range_free(&r);
    int64_t token = 0;
    CHECK(ops_work(c, o, "fo-1", &token, "c0"), "before any fault");
    int puts = 1;
    /* the member the client talks to now, then the leader */
    /* a follower killed (the client's own member if it is one), the leader killed, then the
     * client's member frozen (SIGSTOP: its connections hang instead of failing) */
    for (int round = 0; round < 3; round++) {
        int lead = leader(), mine = (int)ri_etcd_current_endpoint(c) + 1;
        int victim = round == 1 ? lead : round == 2 ? mine : mine != lead ? mine : lead % 3 + 1;
        const char *sig = round == 2 ? "STOP" : "KILL";
        char what[64];
        snprintf(what, sizeof what, "%s%s", victim == lead ? "the leader" : "a follower",
                 victim == mine ? ", the client's member" : "");
        CHECK(victim >= 1, "a member to stop");
        if (victim < 1) break;
        char args[128];
        snprintf(args, sizeof args, "signal DIR %d %s", victim, sig);
        CHECK(cluster(args, NULL, 0) == 0, "SIG%s %s", sig, what);
        double t0 = now_ms();
        bool ok = false;
        int tries = 0;
        /* the first tries may meet the election of a new leader */
        while (!ok && now_ms() - t0 < 15000) {
            ok = ops_work(c, o, "fo-1", &token, round == 0 ? "c1" : round == 1 ? "c2" : "c3");
            tries++;
            if (!ok) sleep_ms(100);
        }
        puts++;
        CHECK(ok, "operations after SIG%s of %s (member %d)", sig, what, victim);
        printf("failover: SIG%s %s (member %d): operations succeed %.0f ms later (%d tries), now on member %zu\n",
               sig, what, victim, now_ms() - t0, tries, ri_etcd_current_endpoint(c) + 1);
        CHECK(watch_count(&log, puts, 15000) >= puts, "the watch follows (%d events of %d)", log.n, puts);
        printf("failover: the watch has the write %.0f ms after the signal\n", now_ms() - t0);
        if (round == 2) {
            snprintf(args, sizeof args, "signal DIR %d CONT", victim);
            CHECK(cluster(args, NULL, 0) == 0, "SIGCONT");
            CHECK(cluster("wait-healthy DIR", NULL, 0) == 0, "healthy again");
        } else {
            restart_member(victim);
        }
    }
    CHECK(lost.count == 0, "ownership kept through the failovers: %s", lost.text);
    ri_etcd_watch_stop(w);
    ri_owner_close(o);
}

/* ---- 5b. no quorum for longer than the keepalive's window, then a new leader -------------------- */

/* The leader and a follower frozen: no leader, so nothing expires the lease, but no keepalive is
 * answered past the module's deadline either. When a quorum is back, the new leader extends
 * every lease: the same lease is renewed, so nothing was lost and nothing may be dropped. */
typedef struct quorum_user {
    signal_box *lost, *confirm;
} quorum_user;

static void q_lost(void *user, const char *const *ids, size_t n, const char *reason) {
    on_lost(((quorum_user *)user)->lost, ids, n, reason);
}

static void q_confirm(void *user, bool confirmed, int64_t unconfirmed_ms) {
    char text[64];
    if (confirmed) snprintf(text, sizeof text, "confirmed after %lld ms", (long long)unconfirmed_ms);
    else snprintf(text, sizeof text, "unconfirmed");
    box_post(((quorum_user *)user)->confirm, text);
}

static void test_no_quorum(ri_etcd *c) {
    signal_box lost = SIGNAL_BOX_INIT, confirm = SIGNAL_BOX_INIT;
    const int ttl = 6;
    ri_owner_config cfg = {.etcd = c, .server_id = "srv-q", .ttl_seconds = ttl, .on_lost = q_lost,
                           .on_confirm = q_confirm, .user = &(quorum_user){&lost, &confirm}};
    ri_owner_error err;
    ri_owner *o = ri_owner_open(&cfg, &err);
    CHECK(o != NULL, "open: %s", err.message);
    if (!o) return;
    int64_t token = 0, held = 0;
    CHECK(ri_owner_acquire(o, "quorum-1", &token, &err), "%s", err.message);
    int64_t lease = ri_owner_lease_id(o);
    int lead = leader(), follower = lead % 3 + 1;
    char args[128];
    snprintf(args, sizeof args, "signal DIR %d STOP", lead);
    CHECK(cluster(args, NULL, 0) == 0, "SIGSTOP the leader");
    snprintf(args, sizeof args, "signal DIR %d STOP", follower);
    CHECK(cluster(args, NULL, 0) == 0, "SIGSTOP a follower");
    double t0 = now_ms();
    /* past the deadline whenever the last keepalive was answered (at most TTL - TTL/6 after) */
    sleep_ms(ttl * 1000 - ttl * 1000 / 6 + 500);
    CHECK(lost.count == 0, "nothing reported lost while etcd cannot say: %s", lost.text);
    CHECK(ri_owner_holds(o, "quorum-1", &held) && held == token, "the sandbox is still held");
    CHECK(ri_owner_get_state(o) == RI_OWNER_UNCONFIRMED && !ri_owner_confirmed(o), "unconfirmed: nothing new starts");
    CHECK(confirm.count == 1 && strcmp(confirm.text, "unconfirmed") == 0, "the server is told: %d %s", confirm.count,
          confirm.text);
    int64_t other = 0;
    CHECK(!ri_owner_acquire(o, "quorum-2", &other, &err) && err.code == RI_OWNER_E_ETCD &&
              err.etcd_code == RI_ETCD_E_UNAVAILABLE && strstr(err.message, "unconfirmed"),
          "no new sandbox taken meanwhile: %s", err.message);
    printf("no quorum: unconfirmed; acquire: %s\n", err.message);
    snprintf(args, sizeof args, "signal DIR %d CONT", follower);
    CHECK(cluster(args, NULL, 0) == 0, "SIGCONT the follower");
    double t1 = now_ms();
    bool confirmed = false;
    while (!confirmed && now_ms() - t1 < 15000) {
        confirmed = ri_owner_confirm_checkpoint(o, "quorum-1", token, "q1", &err);
        if (!confirmed) sleep_ms(100);
    }
    CHECK(confirmed, "a quorum again: the same ownership confirms a checkpoint: %s", err.message);
    printf("no quorum: %.0f ms without a leader; the same lease confirmed again %.0f ms after the quorum was back\n",
           t1 - t0, now_ms() - t1);
    CHECK(lost.count == 0, "nothing lost: %s", lost.text);
    CHECK(ri_owner_get_state(o) == RI_OWNER_ACTIVE && ri_owner_lease_id(o) == lease, "the same lease, active");
    CHECK(box_wait(&confirm, 2, 5000) == 2 && strncmp(confirm.text, "confirmed after ", 16) == 0,
          "the server is told it may go on: %s", confirm.text);
    CHECK(ri_owner_confirmed(o) && ri_owner_acquire(o, "quorum-2", &other, &err), "and takes sandboxes again: %s",
          err.message);
    if (other) CHECK(ri_owner_release(o, "quorum-2", other, &err), "%s", err.message);
    snprintf(args, sizeof args, "signal DIR %d CONT", lead);
    CHECK(cluster(args, NULL, 0) == 0, "SIGCONT the old leader");
    CHECK(cluster("wait-healthy DIR", NULL, 0) == 0, "healthy again");
    CHECK(ri_owner_release(o, "quorum-1", token, &err), "%s", err.message);
    ri_owner_close(o);
}

/* ---- 6. every member down, then back ------------------------------------------------------------- */

static void test_all_down(ri_etcd *c) {
    signal_box lost = SIGNAL_BOX_INIT;
    ri_owner *o = open_owner(c, "srv-d", 2, &lost, NULL);
    ri_owner_error err;
    int64_t token;
    CHECK(ri_owner_acquire(o, "down-1", &token, &err), "%s", err.message);
    int64_t old_lease = ri_owner_lease_id(o);
    for (int m = 1; m <= 3; m++) kill_member(m, "a member");
    double t0 = now_ms();
    ri_etcd_error e;
    ri_etcd_range r;
    CHECK(!ri_etcd_get(c, "/t/x", false, &r, &e) && e.code == RI_ETCD_E_UNAVAILABLE, "unavailable: %s", e.message);
    printf("all down: a get fails in %.0f ms: %s\n", now_ms() - t0, e.message);
    CHECK(strstr(e.message, "127.0.0.1:") != NULL, "the message names an endpoint");
    CHECK(!ri_owner_confirm_checkpoint(o, "down-1", token, "d1", &err), "confirm refused while down");
    printf("all down: confirm_checkpoint: %s: %s\n", ri_owner_code_name(err.code), err.message);
    CHECK(box_wait(&lost, 1, 10000) == 1, "ownership lost reported");
    printf("all down: ownership lost %.0f ms after the kill (lease TTL 2 s): %s\n", lost.at_ms - t0, lost.text);
    CHECK(strncmp(lost.text, "1:down-1:", 9) == 0, "the lost list names the sandbox: %s", lost.text);
    CHECK(ri_owner_get_state(o) == RI_OWNER_LOST, "state lost");
    CHECK(!ri_owner_acquire(o, "down-2", &token, &err) && err.code == RI_OWNER_E_LOST, "acquire while lost: %s",
          err.message);
    /* opened while no member answers: an error, unless asked to start unavailable (LOST,
     * nothing owned, a lease once etcd answers) */
    ri_owner_config oc = {.etcd = c, .server_id = "srv-late", .ttl_seconds = 2};
    ri_owner *none = ri_owner_open(&oc, &err);
    CHECK(!none && err.code == RI_OWNER_E_ETCD && err.etcd_code == RI_ETCD_E_UNAVAILABLE, "open refused: %s",
          err.message);
    oc.start_unavailable = true;
    ri_owner *late = ri_owner_open(&oc, &err);
    CHECK(late && ri_owner_get_state(late) == RI_OWNER_LOST, "opened unavailable: %s", late ? "" : err.message);
    ri_owner_status st = {0};
    if (late) ri_owner_get_status(late, &st);
    CHECK(st.lease_id == 0 && st.n_held == 0 && st.ttl_seconds == 2 && strstr(st.last_error, "127.0.0.1:") &&
              st.last_error_age_ms >= 0,
          "its status: lease %" PRId64 ", error '%s'", st.lease_id, st.last_error);
    CHECK(late && !ri_owner_acquire(late, "down-3", &token, &err) && err.code == RI_OWNER_E_LOST,
          "acquire before etcd answers: %s", err.message);
    for (int m = 1; m <= 3; m++) {
        char args[64];
        snprintf(args, sizeof args, "restart DIR %d", m);
        cluster(args, NULL, 0);
    }
    CHECK(cluster("wait-healthy DIR", NULL, 0) == 0, "cluster back");
    double t1 = now_ms();
    while (ri_owner_get_state(o) != RI_OWNER_ACTIVE && now_ms() - t1 < 20000) sleep_ms(50);
    CHECK(ri_owner_get_state(o) == RI_OWNER_ACTIVE && ri_owner_lease_id(o) != old_lease, "a new lease");
    printf("all down: recovered with a new lease %.0f ms after the cluster was healthy\n", now_ms() - t1);
    CHECK(ri_owner_acquire(o, "down-1", &token, &err), "acquire after recovery: %s", err.message);
    CHECK(ri_etcd_get(c, "/t/x", false, &r, &e), "get after recovery: %s", e.message);
    ri_etcd_range_free(&r);
    ri_owner_close(o);
    if (!late) return;
    while (ri_owner_get_state(late) != RI_OWNER_ACTIVE && now_ms() - t1 < 20000) sleep_ms(50);
    CHECK(ri_owner_get_state(late) == RI_OWNER_ACTIVE && ri_owner_lease_id(late) != 0,
          "the module opened unavailable takes a lease once etcd answers");
    CHECK(ri_owner_acquire(late, "down-3", &token, &err), "and owns: %s", err.message);
    CHECK(ri_owner_release(late, "down-3", token, &err), "%s", err.message);
    ri_owner_close(late);
}

/* ---- 7. user and password ------------------------------------------------------------------- */

static int etcdctl(const char *args) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "etcdctl --endpoints=%s %s >/dev/null 2>&1", endpoints_text, args);
    return system(cmd);
}

static ri_etcd *auth_client(const char *user, const char *password) {
    char **eps;
    size_t n;
    ri_etcd_error e;
    if (!ri_etcd_parse_endpoints(endpoints_text, &eps, &n, &e)) return NULL;
    ri_etcd_config cfg = {.endpoints = (const char *const *)eps, .n_endpoints = n, .user = user,
                          .password = password, .request_timeout_ms = 2000};
    ri_etcd *c = ri_etcd_open(&cfg, &e);
    ri_etcd_endpoints_free(eps, n);
    return c;
}

static void test_auth(ri_etcd *plain) {
    CHECK(etcdctl("user add root:ri-pw") == 0 && etcdctl("auth enable") == 0, "enable auth");
    ri_etcd *good = auth_client("root", "ri-pw"), *bad = auth_client("root", "wrong");
    ri_etcd_error e;
    ri_etcd_range r;
    CHECK(good && ri_etcd_put(good, "/t/auth", "v", 1, 0, NULL, &e), "put with a password: %s", e.message);
    CHECK(good && ri_etcd_get(good, "/t/auth", false, &r, &e) && r.n == 1, "get with a password: %s", e.message);
    if (good && e.code == RI_ETCD_OK) ri_etcd_range_free(&r);
    watch_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ri_etcd_watch *w = good ? ri_etcd_watch_start(good, "/t/auth", false, 1, on_watch, &log, &e) : NULL;
    CHECK(w && watch_count(&log, 1, 10000) == 1, "a watch with a password: %d events", log.n);
    ri_etcd_watch_stop(w);
    CHECK(bad && !ri_etcd_get(bad, "/t/auth", false, &r, &e) && e.code == RI_ETCD_E_AUTH, "wrong password: %s",
          e.message);
    printf("auth: wrong password: %s\n", e.message);
    CHECK(!ri_etcd_get(plain, "/t/auth", false, &r, &e) && e.code == RI_ETCD_E_SERVER, "no credentials: %s",
          e.message);
    printf("auth: no credentials: %s\n", e.message);
    CHECK(etcdctl("--user root:ri-pw auth disable") == 0 && etcdctl("user delete root") == 0, "disable auth");
    ri_etcd_close(good);
    ri_etcd_close(bad);
}

/* ---- 8. TLS with client certificates (a member of its own) -------------------------------------- */

static ri_etcd *tls_client(const char *endpoint, const char *ca, const char *cert, const char *key) {
    const char *eps[] = {endpoint};
    ri_etcd_config cfg = {.endpoints = eps, .n_endpoints = 1, .ca_file = ca, .cert_file = cert, .key_file = key,
                          .request_timeout_ms = 2000};
    ri_etcd_error e;
    ri_etcd *c = ri_etcd_open(&cfg, &e);
    CHECK(c, "open: %s", e.message);
    return c;
}

static void test_tls(ri_etcd *plain) {
    (void)plain;
    char endpoint[64] = "";
    CHECK(cluster("start-tls DIR", endpoint, sizeof endpoint) == 0 && endpoint[0], "a TLS member");
    if (!endpoint[0]) return;
    char ca[600], cert[600], key[600];
    snprintf(ca, sizeof ca, "%s/tls/ca.crt", cluster_dir);
    snprintf(cert, sizeof cert, "%s/tls/client.crt", cluster_dir);
    snprintf(key, sizeof key, "%s/tls/client.key", cluster_dir);
    ri_etcd *good = tls_client(endpoint, ca, cert, key), *no_cert = tls_client(endpoint, ca, NULL, NULL);
    ri_etcd *no_ca = tls_client(endpoint, NULL, cert, key);
    ri_etcd_error e;
    ri_etcd_range r;
    CHECK(good && ri_etcd_put(good, "/t/tls", "v", 1, 0, NULL, &e), "put over TLS: %s", e.message);
    CHECK(good && ri_etcd_get(good, "/t/tls", false, &r, &e) && r.n == 1, "get over TLS: %s", e.message);
    if (good && e.code == RI_ETCD_OK) ri_etcd_range_free(&r);
    if (good) {
        signal_box lost = SIGNAL_BOX_INIT;
        ri_owner *o = open_owner(good, "srv-tls", 5, &lost, NULL);
        ri_owner_error err;
        int64_t token;
        CHECK(ri_owner_acquire(o, "tls-1", &token, &err) && ri_owner_confirm_checkpoint(o, "tls-1", token, "c", &err),
              "ownership over TLS: %s", err.message);
        ri_owner_close(o);
    }
    CHECK(no_cert && !ri_etcd_get(no_cert, "/t/tls", false, &r, &e) && strstr(e.message, "https://"),
          "no client certificate: %s", e.message);
    printf("tls: no client certificate: %s\n", e.message);
    CHECK(no_ca && !ri_etcd_get(no_ca, "/t/tls", false, &r, &e), "an unknown CA: %s", e.message);
    printf("tls: the server's CA not given: %s\n", e.message);
    ri_etcd_close(good);
    ri_etcd_close(no_cert);
    ri_etcd_close(no_ca);
    CHECK(cluster("signal DIR tls KILL", NULL, 0) == 0, "stop the TLS member");
}

static ri_etcd *second_client;
static void run_race(ri_etcd *c) { test_race(c, second_client); }
static void run_frozen(ri_etcd *c) { test_frozen_owner(c, "/proc/self/exe", endpoints_text); }

int main(int argc, char **argv) {
    ri_etcd_error e;
    if (!ri_etcd_global_init(&e)) return 2;
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        int rc = child_main(argv[2], argv[3]);
        ri_etcd_global_cleanup();
        return rc;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: test_coord CLUSTER_SCRIPT CLUSTER_DIR\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    cluster_script = argv[1];
    cluster_dir = argv[2];
    char endpoints[512];
    if (cluster("endpoints DIR", endpoints, sizeof endpoints) != 0) return 2;
    printf("cluster: %s\n", endpoints);
    ri_etcd *c = open_client(endpoints);
    second_client = open_client(endpoints);
    endpoints_text = endpoints;
    struct {
        const char *name;
        void (*fn)(ri_etcd *);
    } tests[] = {{"basics", test_basics},   {"watch", test_watch},       {"fencing", test_fencing},
                 {"race", run_race},        {"frozen_owner", run_frozen}, {"handoff", test_handoff},
                 {"failover", test_failover}, {"no_quorum", test_no_quorum}, {"all_down", test_all_down}, {"auth", test_auth}, {"tls", test_tls}};
    int passed = 0, total = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        int before = failures;
        double t0 = now_ms();
        tests[i].fn(c);
        total++;
        passed += failures == before;
        printf("%s %s (%.0f ms)\n", failures == before ? "ok" : "FAILED", tests[i].name, now_ms() - t0);
    }
    ri_etcd_close(c);
    ri_etcd_close(second_client);
    ri_etcd_global_cleanup();
    printf("%d passed, %d failed (%d checks failed)\n", passed, total - passed, failures);
    return failures ? 1 : 0;
}
