/*
 * ri-bench-rtt: the execute round trip of `ri serve` measured by a lean client, so that
 * the figure is the server's and the loopback's, not a Python client's (whose own
 * send/receive cycle costs 80-200 us on the shared machine). A minimal RFC 6455 client:
 * HTTP upgrade, masked text frames out, unmasked frames in (pings answered).
 *
 *   ri-bench-rtt PORT INIT_JSON N [MESSAGE_JSON]
 *
 * Creates a sandbox with INIT_JSON (the /create init message), waits for
 * SANDBOX_RUNNING, then sends {"action":"execute","function":"increment"} N + 50 times,
 * each after the previous result, and prints one JSON line: {"n":N,"p50_us":..,"p99_us":..,
 * "min_us":..}. The first 50 are warm-up. With MESSAGE_JSON (an execution, e.g.
 * {"language":"python","code":"print(1+1)"}) that message is sent instead and each round
 * trip ends at its SANDBOX_EXECUTION_DONE, which must say exit code 0.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what) {
    fprintf(stderr, "ri-bench-rtt: %s\n", what);
    return 2;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int write_all(int fd, const void *buf, size_t n) {
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t n) {
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

/* One frame from the client: FIN, opcode, masked (the mask may be zero: RFC 6455 asks
 * for a mask, not for a random one, and the benchmark wants no entropy cost). */
static int send_frame(int fd, int opcode, const char *data, size_t n) {
    uint8_t h[14];
    size_t k = 0;
    h[k++] = (uint8_t)(0x80 | opcode);
    if (n < 126) {
        h[k++] = (uint8_t)(0x80 | n);
    } else if (n < 65536) {
        h[k++] = 0x80 | 126;
        h[k++] = (uint8_t)(n >> 8);
        h[k++] = (uint8_t)n;
    } else {
        h[k++] = 0x80 | 127;
        for (int i = 7; i >= 0; i--) h[k++] = (uint8_t)((uint64_t)n >> (8 * i));
    }
    memset(h + k, 0, 4); /* mask 0: the payload goes as it is */
    k += 4;
    return write_all(fd, h, k) || write_all(fd, data, n) ? -1 : 0;
}

/* The next text frame into *buf (grown as needed, NUL-terminated); pings are answered. */
static int next_text(int fd, char **buf, size_t *cap) {
    for (;;) {
        uint8_t h[2];
        if (read_all(fd, h, 2)) return -1;
        int opcode = h[0] & 0x0F;
        uint64_t n = h[1] & 0x7F;
        if (n == 126 || n == 127) {
            uint8_t ext[8];
            size_t m = n == 126 ? 2 : 8;
            if (read_all(fd, ext, m)) return -1;
            n = 0;
            for (size_t i = 0; i < m; i++) n = n << 8 | ext[i];
        }
        if (n > (64u << 20)) return -1;
        if (n + 1 > *cap) {
            char *nb = realloc(*buf, (size_t)n + 1);
            if (!nb) return -1;
            *buf = nb;
            *cap = (size_t)n + 1;
        }
        if (read_all(fd, *buf, (size_t)n)) return -1;
        (*buf)[n] = 0;
        if (opcode == 0x9 && send_frame(fd, 0xA, *buf, (size_t)n)) return -1;
        if (opcode == 0x8) return -1;
        if (opcode == 0x1) return 0;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) return fail("usage: ri-bench-rtt PORT INIT_JSON N [MESSAGE_JSON]");
    int port = atoi(argv[1]), n = atoi(argv[3]);
    const char *init = argv[2];
    if (port <= 0 || port > 65535 || n <= 0) return fail("bad PORT or N");
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return fail("socket");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) return fail("connect");
    char req[512];
    int len = snprintf(req, sizeof req,
                       "GET /create HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       "Sec-WebSocket-Key: cmktYmVuY2gtcnR0LWtleQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
                       port);
    if (write_all(fd, req, (size_t)len)) return fail("send the upgrade");
    char resp[4096];
    size_t got = 0;
    while (got < sizeof resp - 1) { /* the response head, byte by byte: frames may follow it */
        if (read(fd, resp + got, 1) != 1) return fail("read the upgrade response");
        got++;
        if (got >= 4 && memcmp(resp + got - 4, "\r\n\r\n", 4) == 0) break;
    }
    resp[got] = 0;
    if (!strstr(resp, " 101 ")) return fail("the server did not switch protocols");
    char *buf = NULL;
    size_t cap = 0;
    if (send_frame(fd, 0x1, init, strlen(init))) return fail("send the init message");
    for (;;) {
        if (next_text(fd, &buf, &cap)) return fail("no SANDBOX_RUNNING");
        if (strstr(buf, "SANDBOX_RUNNING")) break;
        if (strstr(buf, "ERROR")) return fail(buf);
    }
    const char *msg = argc == 5 ? argv[4] : "{\"action\":\"execute\",\"function\":\"increment\"}";
    bool execution = argc == 5;
    double *lat = malloc(sizeof *lat * (size_t)n);
    if (!lat) return fail("out of memory");
    for (int i = 0; i < n + 50; i++) {
        double t0 = now_us();
        if (send_frame(fd, 0x1, msg, strlen(msg))) return fail("send");
        for (;;) {
            if (next_text(fd, &buf, &cap)) return fail("no result");
            if (execution ? strstr(buf, "SANDBOX_EXECUTION_DONE") != NULL
                          : strstr(buf, "\"event\":\"result\"") || strstr(buf, "\"event\": \"result\"")) break;
        }
        double dt = now_us() - t0;
        if (execution ? !strstr(buf, "\"exit_code\":0") && !strstr(buf, "\"exit_code\": 0")
                      : !strstr(buf, "\"ok\":true") && !strstr(buf, "\"ok\": true"))
            return fail(buf);
        if (i >= 50) lat[i - 50] = dt;
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    printf("{\"n\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"min_us\":%.1f}\n", n, lat[n / 2], lat[(size_t)n * 99 / 100],
           lat[0]);
    free(lat);
    free(buf);
    close(fd);
    return 0;
}
