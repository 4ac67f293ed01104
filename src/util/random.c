/* Random bytes from the kernel (see random.h). */
#include "util/random.h"

#include <errno.h>
#include <sys/random.h>

#include "util/hex.h"

bool ri_random_bytes(uint8_t *out, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        got += (size_t)r;
    }
    return true;
}

bool ri_random_hex(char *out, size_t nhex) {
    uint8_t raw[64];
    char digits[2 * sizeof raw + 1];
    size_t nbytes = (nhex + 1) / 2;
    if (nbytes > sizeof raw) {
        errno = EINVAL;
        return false;
    }
    if (!ri_random_bytes(raw, nbytes)) return false;
    ri_hex_encode(raw, nbytes, digits);
    for (size_t i = 0; i < nhex; i++) out[i] = digits[i];
    out[nhex] = '\0';
    return true;
}
