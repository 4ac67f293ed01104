/* The host's clocks (see clock.h). */
#include "util/clock.h"

#include <time.h>

static int64_t read_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ri_clock_wall_ms(void) { return read_ns(CLOCK_REALTIME) / 1000000; }
int64_t ri_clock_wall_ns(void) { return read_ns(CLOCK_REALTIME); }
int64_t ri_clock_mono_ms(void) { return read_ns(CLOCK_MONOTONIC) / 1000000; }
int64_t ri_clock_mono_us(void) { return read_ns(CLOCK_MONOTONIC) / 1000; }
int64_t ri_clock_mono_ns(void) { return read_ns(CLOCK_MONOTONIC); }
