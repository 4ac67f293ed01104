/*
 * Reading a WSNP v1 snapshot file without a sandbox (seed 000): `ri inspect` describes
 * one, and `ri run --restore` takes the event timestamp from one.
 *
 * The checks are seed 000's first six, in its order and with its messages. Check 6 is
 * as strict as the library's restore (src/sandbox/wsnp.c), so that inspect accepts
 * exactly the files restore accepts: the state JSON must be an object with exactly the
 * keys prngState {current}, timestamp and gasUsed, no key twice, integer values, current
 * a 32-bit value (signed or unsigned), gasUsed not negative. The seventh check (memory
 * size against an instance) needs a sandbox and stays with restore.
 */
#ifndef RI_CLI_WSNP_FILE_H
#define RI_CLI_WSNP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RI_WSNP_HEADER_BYTES 5u
#define RI_WSNP_PAGE_BYTES 65536u

typedef struct ri_wsnp_view {
    uint8_t version;
    uint32_t memory_len;
    const uint8_t *memory;   /* points into the caller's buffer */
    uint32_t state_len;
    const char *state;       /* the state JSON text, state_len bytes, not NUL-terminated */
    size_t trailing;         /* bytes after the state section, which v1 ignores */
    int64_t prng_current;    /* as written: the original writes it signed */
    int64_t timestamp;
    int64_t gas_used;
} ri_wsnp_view;

/* Parses data; false with seed 000's message ("Snapshot too small — missing header",
 * ...) in msg, and for a corrupted state JSON what is wrong with it in detail (else ""). */
bool ri_wsnp_parse(const uint8_t *data, size_t len, ri_wsnp_view *out, char *msg, size_t msg_cap,
                   char *detail, size_t detail_cap);

/* Pages of the memory section with at least one non-zero byte (a partial last page
 * counts as a page). */
uint64_t ri_wsnp_nonzero_pages(const ri_wsnp_view *view);

#endif
