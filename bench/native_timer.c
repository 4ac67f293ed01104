/* main() for the native builds of the benchmark programs: calls run() once, prints its
 * result like ../shared/bench/src/native_main.c does, and the time of the call alone on
 * stderr, so native times compare with ri-bench-run's and Node's in-process timers. */
/* clock_gettime is POSIX, not C11; the build defines _GNU_SOURCE, a standalone build may not. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdio.h>
#include <time.h>

unsigned run(void);

static uint64_t now_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

int main(void) {
    uint64_t t0 = now_ns();
    unsigned result = run();
    uint64_t t1 = now_ns();
    printf("%u\n", result);
    fprintf(stderr, "call_ns=%llu\n", (unsigned long long)(t1 - t0));
    return 0;
}
