/*
 * The server library's lifecycle (include/ri/server.h): new on port 0 (a real port is
 * reported), GET /status and /metrics over a plain socket while ri_server_run serves on
 * another thread, ri_server_stop from outside, run returning true, free. A bad server id
 * and an unusable checkpoint path are refused by ri_server_new with a message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ri/server.h"

static void *serve(void *arg) {
    static bool ok;
    ok = ri_server_run(arg);
    return &ok;
}

/* One HTTP/1.0 GET; the whole response (headers and body), malloc'd. */
static char *http_get(int port, const char *path) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
        if (len + 1 >= cap) break;
    }
    buf[len] = 0;
    close(fd);
    return buf;
}

static void serve_status_metrics_and_stop(void **state) {
    (void)state;
    ri_server_config c = ri_server_config_default();
    c.port = 0;
    c.workers = 2;
    FILE *log = tmpfile();
    c.log = log;
    char err[256] = "";
    ri_server *s = ri_server_new(&c, err, sizeof err);
    assert_non_null(s);
    int port = ri_server_port(s);
    assert_true(port > 0 && port < 65536);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, serve, s), 0);
    char *r = http_get(port, "/status");
    assert_non_null(strstr(r, "200"));
    assert_non_null(strstr(r, "{\"status\":\"ok\","));
    assert_non_null(strstr(r, "\"sandboxes\":{\"total\":0,"));
    free(r);
    r = http_get(port, "/metrics");
    assert_non_null(strstr(r, "# TYPE ri_server_sandboxes_live gauge"));
    assert_non_null(strstr(r, "ri_server_sandboxes_live 0"));
    free(r);
    r = http_get(port, "/nothing");
    assert_non_null(strstr(r, "404"));
    free(r);
    ri_server_stop(s);
    void *ret;
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_true(*(bool *)ret);
    ri_server_free(s);
    /* the log is JSON lines */
    rewind(log);
    char line[2048];
    int lines = 0;
    while (fgets(line, sizeof line, log)) {
        assert_int_equal(line[0], '{');
        assert_non_null(strstr(line, "\"level\":"));
        lines++;
    }
    assert_true(lines >= 2); /* listening, stopped */
    fclose(log);
}

static void refused_configs(void **state) {
    (void)state;
    ri_server_config c = ri_server_config_default();
    c.port = 0;
    char err[256] = "";
    ri_server_errcode code = RI_SERVER_OK;
    c.server_id = "bad id/with slash";
    assert_null(ri_server_open(&c, &code, err, sizeof err));
    assert_non_null(strstr(err, "server id"));
    assert_int_equal(code, RI_SERVER_BAD_CONFIG); /* the caller's to fix */
    c.server_id = NULL;
    /* TLS files: named with the reason, before anything is made */
    c.tls_cert = "/nonexistent/cert.pem";
    c.tls_key = "/nonexistent/key.pem";
    assert_null(ri_server_open(&c, &code, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/cert.pem: No such file or directory"));
    assert_int_equal(code, RI_SERVER_BAD_CONFIG);
    c.tls_key = NULL;
    assert_null(ri_server_open(&c, &code, err, sizeof err));
    assert_non_null(strstr(err, "both a certificate and its private key"));
    c.tls_cert = "/proc/version"; /* readable, not PEM */
    c.tls_key = "/proc/version";
    assert_null(ri_server_open(&c, &code, err, sizeof err));
    assert_non_null(strstr(err, "/proc/version: not a usable PEM certificate"));
    c.tls_cert = c.tls_key = NULL;
    c.checkpoint_path = "/proc/version/not-a-dir";
    err[0] = 0;
    assert_null(ri_server_open(&c, &code, err, sizeof err));
    assert_non_null(strstr(err, "checkpoint path"));
    assert_int_equal(code, RI_SERVER_FAILED);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(serve_status_metrics_and_stop),
        cmocka_unit_test(refused_configs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
