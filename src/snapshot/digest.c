/*
 * SHA-256 through libmd (the BSD message-digest functions): the module identity in META (a
 * name that must not collide, unlike the image checksum, which is crc32c.c's). libmd rather
 * than libcrypto: loading libcrypto costs more than the rest of `ri run`'s start-up, and
 * a digest is all this layer needs of it. One call per digest; no state kept here.
 */
#include <sha2.h>

#include "snapshot_internal.h"
#include "util/hex.h"

_Static_assert(SHA256_DIGEST_LENGTH == RI_SNAP_SHA256_BYTES, "SHA-256 digest size");

bool ri_snap_sha256(const uint8_t *data, size_t len, uint8_t out[RI_SNAP_SHA256_BYTES]) {
    SHA2_CTX ctx;
    SHA256Init(&ctx);
    if (data && len) SHA256Update(&ctx, data, len);
    SHA256Final(out, &ctx);
    return true;
}

void ri_snap_hex(const uint8_t digest[RI_SNAP_SHA256_BYTES], char out[2 * RI_SNAP_SHA256_BYTES + 1]) {
    ri_hex_encode(digest, RI_SNAP_SHA256_BYTES, out);
}
