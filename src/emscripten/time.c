/*
 * Time for Emscripten builds, from the sandbox's virtual clock (the WASI context's: the
 * event time, advancing deterministically), in UTC: there is no time zone in a sandbox.
 */
#include <string.h>

#include "emscripten/emsc_internal.h"

static int64_t realtime_ms(const ri_wasi *w) { return (int64_t)(wasi_clock_now(w, CLOCK_REALTIME_ID) / 1000000u); }

EMSC_HANDLER(date_now) {
    (void)args;
    double ms = (double)realtime_ms(c->w);
    results[0].type = RI_F64;
    memcpy(&results[0].of.f64_bits, &ms, sizeof ms);
    return 0;
}

EMSC_HANDLER(time_ms) { return emsc_date_now(c, args, results); }

EMSC_HANDLER(now_is_monotonic) {
    (void)c, (void)args;
    results[0] = ri_val_i32(1);
    return 0;
}

EMSC_HANDLER(ticks_ms) {
    (void)args;
    results[0] = ri_val_i32((int32_t)(uint32_t)(wasi_clock_now(c->w, CLOCK_MONOTONIC_ID) / 1000000u));
    return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (Hinnant's algorithms). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* struct tm in Emscripten's wasm32 libc: nine ints (sec, min, hour, mday, mon, year since
 * 1900, wday, yday, isdst), then tm_gmtoff (long) and tm_zone (a pointer). */
#define TM_BYTES 40u

/* Clamped so that every field fits an int (within about 1.9e9 years of 1970). */
static bool write_tm(const wasi_mem *m, int64_t t, uint32_t ptr) {
    uint8_t *p = wasi_mem_range(m, ptr, TM_BYTES);
    if (!p) return false;
    const int64_t lim = INT64_C(60000000000000000);
    if (t > lim) t = lim;
    if (t < -lim) t = -lim;
    int64_t days = t / 86400, secs = t % 86400;
    if (secs < 0) secs += 86400, days--;
    int64_t y, mo, d;
    civil_from_days(days, &y, &mo, &d);
    int64_t yday = days - days_from_civil(y, 1, 1);
    int64_t wday = (days % 7 + 11) % 7; /* 1970-01-01 was a Thursday */
    int32_t f[9] = {(int32_t)(secs % 60), (int32_t)(secs / 60 % 60), (int32_t)(secs / 3600), (int32_t)d,
                    (int32_t)(mo - 1), (int32_t)(y - 1900), (int32_t)wday, (int32_t)yday, 0};
    for (int i = 0; i < 9; i++) ri_le_put32(p + 4 * i, (uint32_t)f[i]);
    ri_le_put32(p + 36, 0); /* tm_gmtoff: UTC */
    return true;
}

EMSC_HANDLER(gmtime) {
    (void)results;
    if (!write_tm(&c->mem, args[0].of.i64, emsc_u32(args, 1)))
        return ri_host_fail(c->call, "_gmtime_js: struct tm at %u is outside memory", emsc_u32(args, 1));
    return 0;
}

EMSC_HANDLER(localtime) { return emsc_gmtime(c, args, results); }

/* mktime: the fields (normalized as mktime does) to seconds, in UTC; writes them back. */
EMSC_HANDLER(mktime) {
    uint32_t ptr = emsc_u32(args, 0);
    uint8_t *p = wasi_mem_range(&c->mem, ptr, TM_BYTES);
    if (!p) return ri_host_fail(c->call, "_mktime_js: struct tm at %u is outside memory", ptr);
    int64_t f[6];
    for (int i = 0; i < 6; i++) f[i] = (int32_t)ri_le_get32(p + 4 * i);
    int64_t mon = f[4], year = f[5] + 1900;
    year += mon / 12;
    mon %= 12;
    if (mon < 0) mon += 12, year--;
    int64_t t = (days_from_civil(year, mon + 1, 1) + f[3] - 1) * 86400 + f[2] * 3600 + f[1] * 60 + f[0];
    write_tm(&c->mem, t, ptr);
    results[0] = ri_val_i64(t);
    return 0;
}

/* _tzset_js(timezone, daylight, std_name, dst_name): UTC, no daylight saving time; the
 * names into the libc's buffers of 7 bytes, as the glue writes them. */
EMSC_HANDLER(tzset) {
    (void)results;
    for (int i = 0; i < 2; i++)
        if (!wasi_store_u32(&c->mem, emsc_u32(args, i), 0))
            return ri_host_fail(c->call, "_tzset_js: pointer %u is outside memory", emsc_u32(args, i));
    for (int i = 2; i < 4; i++) {
        uint8_t *p = wasi_mem_range(&c->mem, emsc_u32(args, i), 4);
        if (!p) return ri_host_fail(c->call, "_tzset_js: pointer %u is outside memory", emsc_u32(args, i));
        memcpy(p, "UTC", 4);
    }
    return 0;
}

/* Not provided: strftime reports that nothing fit (0), so os.date and time.strftime give
 * empty text (docs/LANGUAGES.md). */
EMSC_HANDLER(strftime) {
    (void)c, (void)args;
    results[0] = ri_val_i32(0);
    return 0;
}
