/*
 * The clocks: deterministic, never the host's.
 *
 *   monotonic  a virtual clock, 0 when the process starts; every clock_time_get call (of
 *              any clock) first advances it by the step (ri_wasi_config.clock_step_ns,
 *              default 1 us), so two reads never give the same time; poll_oneoff with a
 *              clock subscription advances it to the deadline instead of sleeping. It
 *              never goes back.
 *   realtime   the event timestamp (ms since the epoch) in ns, plus the monotonic clock.
 *   process_cputime_id, thread_cputime_id: the monotonic clock.
 * The resolution of each is the step. Unknown clock ids are EINVAL.
 */
#include "wasi_internal.h"

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* The event time in ns, 0 for times before the epoch, saturating far in the future. */
static uint64_t realtime_base(const ri_wasi *w) {
    if (w->realtime_base_ns <= 0) return 0;
    uint64_t ms = (uint64_t)w->realtime_base_ns;
    return ms > UINT64_MAX / 1000000u ? UINT64_MAX : ms * 1000000u;
}

static bool known_clock(uint32_t id) { return id <= CLOCK_THREAD_CPUTIME_ID; }

uint64_t wasi_clock_now(const ri_wasi *w, uint32_t id) {
    return id == CLOCK_REALTIME_ID ? sat_add(realtime_base(w), w->monotonic_ns) : w->monotonic_ns;
}

void wasi_clock_advance_to(ri_wasi *w, uint64_t monotonic_ns) {
    if (monotonic_ns > w->monotonic_ns) w->monotonic_ns = monotonic_ns;
}

/* A deadline on clock id (absolute, or relative to `start`) as a monotonic time. */
uint64_t wasi_clock_deadline(const ri_wasi *w, uint32_t id, uint64_t timeout, bool absolute, uint64_t start) {
    if (!absolute) return sat_add(start, timeout);
    if (id != CLOCK_REALTIME_ID) return timeout;
    uint64_t base = realtime_base(w);
    return timeout > base ? timeout - base : 0;
}

WASI_HANDLER(clock_res_get) {
    uint32_t id = wasi_arg32(args, 0);
    if (!known_clock(id)) return WASI_EINVAL;
    return wasi_store_u64(&c->mem, wasi_arg32(args, 1), c->w->clock_step_ns) ? WASI_ESUCCESS : WASI_EFAULT;
}

WASI_HANDLER(clock_time_get) {
    uint32_t id = wasi_arg32(args, 0);
    uint32_t ptr = wasi_arg32(args, 2); /* args[1], the precision, changes nothing here */
    if (!known_clock(id)) return WASI_EINVAL;
    if (!wasi_mem_range(&c->mem, ptr, 8)) return WASI_EFAULT;
    c->w->monotonic_ns = sat_add(c->w->monotonic_ns, c->w->clock_step_ns);
    wasi_store_u64(&c->mem, ptr, wasi_clock_now(c->w, id));
    return WASI_ESUCCESS;
}
