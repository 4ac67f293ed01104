/* Mulberry32, the original's PRNG: 32 bits of state, one step per __get_random call.
 * All arithmetic is unsigned 32-bit (wrapping), shifts are logical. */
#include "sandbox_internal.h"

uint32_t ri_mulberry32_next(uint32_t *state) {
    if (!state) return 0;
    *state += 0x6D2B79F5u; /* the stored state is the sum, not the output */
    uint32_t t = *state;
    t = (t ^ (t >> 15)) * (t | 1u);
    t = (t + ((t ^ (t >> 7)) * (t | 61u))) ^ t;
    return t ^ (t >> 14);
}
