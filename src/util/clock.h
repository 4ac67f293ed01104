/* The host's clocks, for the host's own timing (timeouts, leases, logs, progress): never
 * for anything a sandbox sees, which has its virtual clock. */
#ifndef RI_UTIL_CLOCK_H
#define RI_UTIL_CLOCK_H

#include <stdint.h>

int64_t ri_clock_wall_ms(void);  /* CLOCK_REALTIME, milliseconds since the epoch */
int64_t ri_clock_wall_ns(void);
int64_t ri_clock_mono_ms(void);  /* CLOCK_MONOTONIC */
int64_t ri_clock_mono_us(void);
int64_t ri_clock_mono_ns(void);

#endif
