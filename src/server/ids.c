/* Sandbox ids and tokens: random (getrandom), validated before they name a path, and
 * compared in constant time. */
#include <string.h>

#include "ri/snapshot.h"
#include "server_internal.h"

bool srv_new_sandbox_id(char out[SRV_ID_LEN + 1]) {
    memcpy(out, SRV_ID_PREFIX, 8);
    return ri_random_hex(out + 8, SRV_ID_HEX);
}

bool srv_id_valid(const char *id) {
    if (!id || strlen(id) != SRV_ID_LEN || memcmp(id, SRV_ID_PREFIX, 8) != 0) return false;
    for (size_t i = 8; i < SRV_ID_LEN; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) return false;
    return true;
}

bool srv_hex_equal_ct(const char *a, const char *b, size_t n) {
    unsigned diff = 0;
    for (size_t i = 0; i < n; i++) diff |= (unsigned)(unsigned char)a[i] ^ (unsigned)(unsigned char)b[i];
    return diff == 0;
}

/* The time depends on the known token's length only: the given token is read up to that
 * length (a shorter one is padded), and its length difference is folded in. */
bool srv_token_equal(const char *known, const char *given) {
    if (!known || !given) return false;
    size_t n = strlen(known);
    unsigned diff = 0;
    size_t i = 0;
    bool ended = false;
    for (; i < n; i++) {
        unsigned char g = ended ? 0 : (unsigned char)given[i];
        if (g == 0) ended = true;
        diff |= (unsigned)(unsigned char)known[i] ^ g;
    }
    if (!ended && given[n] != 0) diff |= 1;
    return diff == 0 && n > 0;
}

void srv_token_hash_hex(const char *token, char out[65]) {
    uint8_t h[RI_SNAP_SHA256_BYTES];
    memset(h, 0, sizeof h);
    ri_snap_sha256((const uint8_t *)token, strlen(token), h);
    ri_hex_encode(h, sizeof h, out);
}

