/*
 * The etcd client without etcd: arguments, endpoint lists, and the errors and failover of a
 * call against fake members on 127.0.0.1 (a closed port; a member that answers "no leader";
 * one that answers what is not JSON; one that answers a range).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coord/etcd.h"
#include "coord/owner.h"

/* A member that answers every request with one canned HTTP response, then closes. */
typedef struct fake {
    int fd;
    int port;
    const char *response;
    atomic_int served;
    pthread_t thread;
} fake;

static void *serve(void *arg) {
    fake *f = arg;
    for (;;) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0) return NULL;
        char buf[8192];
        size_t n = 0;
        /* read the headers and a Content-Length body */
        for (;;) {
            ssize_t r = read(c, buf + n, sizeof buf - 1 - n);
            if (r <= 0) break;
            n += (size_t)r;
            buf[n] = '\0';
            char *end = strstr(buf, "\r\n\r\n");
            char *cl = strcasestr(buf, "Content-Length:");
            if (end && (!cl || n >= (size_t)(end + 4 - buf) + (size_t)atoi(cl + 15))) break;
        }
        f->served++;
        ssize_t w = write(c, f->response, strlen(f->response));
        (void)w;
        close(c);
    }
}

static void fake_start(fake *f, const char *response) {
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    getsockname(f->fd, (struct sockaddr *)&a, &len);
    f->port = ntohs(a.sin_port);
    assert_int_equal(listen(f->fd, 8), 0);
    f->response = response;
    atomic_init(&f->served, 0);
    pthread_create(&f->thread, NULL, serve, f);
}

static void fake_stop(fake *f) {
    shutdown(f->fd, SHUT_RDWR);
    close(f->fd);
    pthread_join(f->thread, NULL);
}

/* A port with nothing listening (bound, then closed). */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static ri_etcd *client_of(const char *list) {
    char **eps;
    size_t n;
    ri_etcd_error e;
    assert_true(ri_etcd_parse_endpoints(list, &eps, &n, &e));
    ri_etcd_config cfg = {.endpoints = (const char *const *)eps, .n_endpoints = n, .connect_timeout_ms = 500,
                          .request_timeout_ms = 2000};
    ri_etcd *c = ri_etcd_open(&cfg, &e);
    ri_etcd_endpoints_free(eps, n);
    assert_non_null(c);
    return c;
}

static void test_endpoints(void **state) {
    (void)state;
    char **eps;
    size_t n;
    ri_etcd_error e;
    assert_true(ri_etcd_parse_endpoints("etcd://a:1,b:2,c:3", &eps, &n, &e));
    assert_int_equal(n, 3);
    assert_string_equal(eps[0], "a:1");
    assert_string_equal(eps[2], "c:3");
    ri_etcd_endpoints_free(eps, n);
    assert_true(ri_etcd_parse_endpoints("etcds://a:1", &eps, &n, &e));
    assert_string_equal(eps[0], "https://a:1");
    ri_etcd_endpoints_free(eps, n);
    assert_false(ri_etcd_parse_endpoints("a:1,,b:2", &eps, &n, &e));
    assert_int_equal(e.code, RI_ETCD_E_INVALID);
    assert_non_null(strstr(e.message, "endpoint 2"));
    assert_false(ri_etcd_parse_endpoints("a:1/x", &eps, &n, &e));

    ri_etcd_config none = {0};
    assert_null(ri_etcd_open(&none, &e));
    assert_int_equal(e.code, RI_ETCD_E_INVALID);
    const char *one[] = {"127.0.0.1:1"};
    ri_etcd_config half_auth = {.endpoints = one, .n_endpoints = 1, .user = "root"};
    assert_null(ri_etcd_open(&half_auth, &e));
    assert_non_null(strstr(e.message, "password"));
}

static void test_arguments(void **state) {
    (void)state;
    ri_etcd *c = client_of("127.0.0.1:1");
    ri_etcd_error e;
    ri_etcd_range r;
    assert_false(ri_etcd_get(c, "", false, &r, &e));
    assert_int_equal(e.code, RI_ETCD_E_INVALID);
    ri_etcd_compare bad = {.key = "k", .target = (ri_etcd_target)9};
    ri_etcd_txn_result t;
    assert_false(ri_etcd_txn(c, &bad, 1, NULL, 0, NULL, 0, &t, &e));
    assert_int_equal(e.code, RI_ETCD_E_INVALID);
    ri_etcd_lease l;
    assert_false(ri_etcd_lease_grant(c, 0, &l, &e));
    assert_int_equal(e.code, RI_ETCD_E_INVALID);
    ri_owner_error oe;
    ri_owner_config oc = {.etcd = c, .server_id = "a/b"};
    assert_null(ri_owner_open(&oc, &oe));
    assert_int_equal(oe.code, RI_OWNER_E_INVALID);
    ri_etcd_close(c);
}

static void test_no_member_answers(void **state) {
    (void)state;
    char list[64];
    int p1 = closed_port(), p2 = closed_port();
    snprintf(list, sizeof list, "127.0.0.1:%d,127.0.0.1:%d", p1, p2);
    ri_etcd *c = client_of(list);
    ri_etcd_error e;
    assert_false(ri_etcd_put(c, "/k", "v", 1, 0, NULL, &e));
    assert_int_equal(e.code, RI_ETCD_E_UNAVAILABLE);
    assert_non_null(strstr(e.message, "2 tried"));
    char port[16];
    snprintf(port, sizeof port, "%d", p2);
    assert_non_null(strstr(e.message, port)); /* the last member tried is named */
    ri_owner_error oe;
    ri_owner_config oc = {.etcd = c, .server_id = "srv"};
    assert_null(ri_owner_open(&oc, &oe));
    assert_int_equal(oe.code, RI_OWNER_E_ETCD);
    assert_int_equal(oe.etcd_code, RI_ETCD_E_UNAVAILABLE);
    ri_etcd_close(c);
}

#define HTTP(status, body)                                                                                  \
    "HTTP/1.1 " status "\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" body

static void test_failover_on_no_leader(void **state) {
    (void)state;
    fake leaderless, good;
    fake_start(&leaderless, HTTP("503 Service Unavailable",
                                 "{\"error\":\"etcdserver: no leader\",\"message\":\"etcdserver: no leader\",\"code\":14}"));
    /* value "dg==" is "v" */
    fake_start(&good, HTTP("200 OK", "{\"header\":{\"revision\":\"7\"},\"kvs\":[{\"key\":\"L2s=\",\"create_revision\":"
                                     "\"5\",\"mod_revision\":\"6\",\"version\":\"2\",\"value\":\"dg==\"}],\"count\":\"1\"}"));
    char list[64];
    snprintf(list, sizeof list, "127.0.0.1:%d,127.0.0.1:%d", leaderless.port, good.port);
    ri_etcd *c = client_of(list);
    ri_etcd_error e;
    ri_etcd_range r;
    assert_true(ri_etcd_get(c, "/k", false, &r, &e));
    assert_int_equal(r.revision, 7);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.kvs[0].key, "/k");
    assert_string_equal((char *)r.kvs[0].value, "v");
    assert_int_equal(r.kvs[0].create_revision, 5);
    assert_int_equal(r.kvs[0].mod_revision, 6);
    ri_etcd_range_free(&r);
    assert_int_equal(ri_etcd_current_endpoint(c), 1);
    /* the member that answered is asked first next time */
    assert_true(ri_etcd_get(c, "/k", false, &r, &e));
    ri_etcd_range_free(&r);
    assert_int_equal(leaderless.served, 1);
    assert_int_equal(good.served, 2);
    ri_etcd_close(c);
    fake_stop(&leaderless);
    fake_stop(&good);
}

static void test_etcd_errors(void **state) {
    (void)state;
    fake not_found, garbage;
    fake_start(&not_found, HTTP("404 Not Found", "{\"error\":\"etcdserver: requested lease not found\",\"message\":"
                                                 "\"etcdserver: requested lease not found\",\"code\":5}"));
    fake_start(&garbage, HTTP("200 OK", "<html>not etcd</html>"));
    char list[64];
    snprintf(list, sizeof list, "127.0.0.1:%d", not_found.port);
    ri_etcd *c = client_of(list);
    ri_etcd_error e;
    assert_false(ri_etcd_lease_revoke(c, 42, &e));
    assert_int_equal(e.code, RI_ETCD_E_LEASE_NOT_FOUND);
    assert_non_null(strstr(e.message, "requested lease not found"));
    assert_false(ri_etcd_put(c, "/k", "v", 1, 0, NULL, &e)); /* not a lease call: the server's error as is */
    assert_int_equal(e.code, RI_ETCD_E_SERVER);
    assert_int_equal(e.grpc_code, 5);
    assert_int_equal(not_found.served, 2); /* an answer that is an error is not retried elsewhere */
    ri_etcd_close(c);
    snprintf(list, sizeof list, "127.0.0.1:%d", garbage.port);
    c = client_of(list);
    ri_etcd_range r;
    assert_false(ri_etcd_get(c, "/k", false, &r, &e));
    assert_int_equal(e.code, RI_ETCD_E_PROTOCOL);
    ri_etcd_close(c);
    fake_stop(&not_found);
    fake_stop(&garbage);
}

int main(void) {
    ri_etcd_error e;
    if (!ri_etcd_global_init(&e)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints),          cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_no_member_answers),  cmocka_unit_test(test_failover_on_no_leader),
        cmocka_unit_test(test_etcd_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ri_etcd_global_cleanup();
    return rc;
}
