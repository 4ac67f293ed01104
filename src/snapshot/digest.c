/*
 * SHA-256 through libcrypto's EVP interface: the module identity in META (a name that
 * must not collide, unlike the image checksum, which is crc32c.c's). One call per
 * digest; no state kept here.
 */
#include <openssl/evp.h>

#include "snapshot_internal.h"
#include "util/hex.h"

bool ri_snap_sha256(const uint8_t *data, size_t len, uint8_t out[RI_SNAP_SHA256_BYTES]) {
    static const uint8_t none[1] = {0};
    unsigned int n = 0;
    /* EVP_Digest wants a pointer even for zero bytes. */
    if (!EVP_Digest(data && len ? (const void *)data : (const void *)none, data ? len : 0, out, &n, EVP_sha256(),
                    NULL))
        return false;
    return n == RI_SNAP_SHA256_BYTES;
}

void ri_snap_hex(const uint8_t digest[RI_SNAP_SHA256_BYTES], char out[2 * RI_SNAP_SHA256_BYTES + 1]) {
    ri_hex_encode(digest, RI_SNAP_SHA256_BYTES, out);
}
