/*
 * Blobs: the store's content-addressed files. A blob's name is the SHA-256 of its
 * content in hex, under a fan-out directory named by the first two digits
 * (blobs/ab/ab12...); the file is one zstd frame of that content, with its size in
 * the frame header. Equal content is one file, whoever wrote it and how often.
 *
 * Every read is checked before it is used: one complete frame, the size the reader
 * expects, and the decompressed bytes hash to the blob's name. So a damaged, truncated
 * or swapped file is reported as such and never restored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "store_internal.h"

#define BLOB_ZSTD_LEVEL 3

void ss_blob_path(const uint8_t hash[SS_HASH], char out[SS_BLOB_PATH]) {
    char hex[SS_HEX + 1];
    ri_hex_encode(hash, SS_HASH, hex);
    snprintf(out, SS_BLOB_PATH, "%.2s/%s", hex, hex);
}

bool ss_blob_exists(ri_snapstore *st, const uint8_t hash[SS_HASH], bool *exists, ri_snapstore_error *err) {
    char path[SS_BLOB_PATH];
    ss_blob_path(hash, path);
    struct stat sb;
    if (fstatat(st->blobs_fd, path, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
        *exists = S_ISREG(sb.st_mode);
        return true;
    }
    if (errno == ENOENT) {
        *exists = false;
        return true;
    }
    return ss_fail_errno(err, errno, "Cannot look for blob %s", path);
}

bool ss_blob_content_size(ri_snapstore *st, const uint8_t hash[SS_HASH], bool *exists, uint64_t *size,
                          ri_snapstore_error *err) {
    char path[SS_BLOB_PATH];
    ss_blob_path(hash, path);
    *exists = false;
    *size = 0;
    int fd = openat(st->blobs_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) return true;
        return ss_fail_errno(err, errno, "Cannot open blob %s", path);
    }
    uint8_t head[18]; /* the largest zstd frame header */
    ssize_t got;
    do got = pread(fd, head, sizeof head, 0);
    while (got < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (got < 0) return ss_fail_errno(err, e, "Cannot read blob %s", path);
    *exists = true;
    unsigned long long declared = got > 0 ? ZSTD_getFrameContentSize(head, (size_t)got) : ZSTD_CONTENTSIZE_ERROR;
    if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN)
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s has no valid zstd frame header",
                       path + 3);
    *size = declared;
    return true;
}

static ZSTD_CCtx *cctx_of(ri_snapstore *st) {
    if (!st->cctx) {
        ZSTD_CCtx *c = ZSTD_createCCtx();
        if (c && (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, BLOB_ZSTD_LEVEL)) ||
                  ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0)) ||
                  ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)))) {
            ZSTD_freeCCtx(c);
            c = NULL;
        }
        st->cctx = c;
    }
    return st->cctx;
}

static ZSTD_DCtx *dctx_of(ri_snapstore *st) {
    if (!st->dctx) st->dctx = ZSTD_createDCtx();
    return st->dctx;
}

/* Opens blob `hash`'s fan-out directory, making it again if someone removed it. */
static int fanout_dir(ri_snapstore *st, const uint8_t hash[SS_HASH], ri_snapstore_error *err) {
    char fanout[3];
    snprintf(fanout, sizeof fanout, "%02x", hash[0]);
    int dfd = ss_open_dir(st->blobs_fd, fanout);
    if (dfd < 0 && errno == ENOENT) {
        if (mkdirat(st->blobs_fd, fanout, 0755) != 0 && errno != EEXIST) {
            ss_fail_errno(err, errno, "Cannot create the blob directory blobs/%s", fanout);
            return -1;
        }
        if (!ss_fsync_dir(st->blobs_fd, "blobs", err)) return -1;
        dfd = ss_open_dir(st->blobs_fd, fanout);
    }
    if (dfd < 0) ss_fail_errno(err, errno, "Cannot open the blob directory blobs/%s", fanout);
    return dfd;
}

bool ss_blob_prepare(ri_snapstore *st, const uint8_t hash[SS_HASH], const uint8_t *data, size_t len, char tmp[64],
                     uint64_t *written, ri_snapstore_error *err) {
    ZSTD_CCtx *cctx = cctx_of(st);
    if (!cctx) return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "Out of memory creating a zstd context");
    size_t bound = ZSTD_compressBound(len);
    st->scratch.len = 0;
    if (!ri_buf_reserve(&st->scratch, bound)) return ss_nomem(err);
    size_t n = ZSTD_compress2(cctx, st->scratch.data, bound, data, len);
    if (ZSTD_isError(n)) return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "zstd failed: %s", ZSTD_getErrorName(n));
    int dfd = fanout_dir(st, hash, err);
    if (dfd < 0) return false;
    bool ok = ss_write_temp(dfd, st->scratch.data, n, NULL, tmp, err);
    close(dfd);
    if (ok && written) *written = n;
    return ok;
}

bool ss_blob_publish(ri_snapstore *st, const uint8_t hash[SS_HASH], const char *tmp, ss_dirty *dirty,
                     ri_snapstore_error *err) {
    char path[SS_BLOB_PATH];
    ss_blob_path(hash, path);
    int dfd = fanout_dir(st, hash, err);
    if (dfd < 0) return false;
    int e = ss_rename(dfd, tmp, path + 3, false);
    if (e) unlinkat(dfd, tmp, 0);
    close(dfd);
    if (e) return ss_fail_errno(err, e, "Cannot rename a blob into place as blobs/%s", path);
    dirty->bits[hash[0] / 8] |= (uint8_t)(1u << (hash[0] % 8));
    return true;
}

void ss_blob_discard(ri_snapstore *st, const uint8_t hash[SS_HASH], const char *tmp) {
    char fanout[3];
    snprintf(fanout, sizeof fanout, "%02x", hash[0]);
    int dfd = ss_open_dir(st->blobs_fd, fanout);
    if (dfd < 0) return;
    unlinkat(dfd, tmp, 0);
    close(dfd);
}

bool ss_blob_sync(ri_snapstore *st, ss_dirty *dirty, ri_snapstore_error *err) {
    for (unsigned i = 0; i < 256; i++) {
        if (!(dirty->bits[i / 8] & (1u << (i % 8)))) continue;
        char fanout[3];
        snprintf(fanout, sizeof fanout, "%02x", i);
        int dfd = ss_open_dir(st->blobs_fd, fanout);
        if (dfd < 0) return ss_fail_errno(err, errno, "Cannot open the blob directory blobs/%s", fanout);
        bool ok = ss_fsync_dir(dfd, fanout, err);
        close(dfd);
        if (!ok) return false;
        dirty->bits[i / 8] &= (uint8_t)~(1u << (i % 8));
    }
    return true;
}

/* Reads the blob's frame into st->scratch, checking it is one frame of `expected`
 * bytes of content. */
static bool read_frame(ri_snapstore *st, const uint8_t hash[SS_HASH], size_t expected, const char *what,
                       ri_snapstore_error *err) {
    char path[SS_BLOB_PATH];
    ss_blob_path(hash, path);
    uint8_t *data;
    size_t len;
    bool missing;
    uint64_t max = (uint64_t)ZSTD_compressBound(expected) + 64;
    if (!ss_read_file(st->blobs_fd, path, max, &data, &len, &missing, err)) {
        if (missing)
            return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s (%s) is missing", path + 3, what);
        if (err && err->code == RI_SNAPSTORE_ERR_CORRUPT)
            return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s (%s) is larger than %zu bytes of "
                           "content can compress to", path + 3, what, expected);
        return false;
    }
    size_t frame = ZSTD_findFrameCompressedSize(data, len);
    unsigned long long declared = ZSTD_getFrameContentSize(data, len);
    if (ZSTD_isError(frame) || frame != len) {
        free(data);
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s (%s) is not one complete zstd frame "
                       "(truncated or damaged)", path + 3, what);
    }
    if (declared != (unsigned long long)expected) {
        free(data);
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s (%s) declares %llu bytes, expected %zu",
                       path + 3, what, declared, expected);
    }
    ri_buf_free(&st->scratch);
    st->scratch.data = data;
    st->scratch.len = st->scratch.cap = len;
    return true;
}

static bool decompress_verify(ri_snapstore *st, const uint8_t hash[SS_HASH], uint8_t *dst, size_t expected,
                              const char *what, ri_snapstore_error *err) {
    char path[SS_BLOB_PATH];
    ss_blob_path(hash, path);
    ZSTD_DCtx *dctx = dctx_of(st);
    if (!dctx) return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "Out of memory creating a zstd context");
    size_t got = ZSTD_decompressDCtx(dctx, dst, expected ? expected : 1, st->scratch.data, st->scratch.len);
    if (ZSTD_isError(got) || got != expected)
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: blob %s (%s) does not decompress (%s)", path + 3,
                       what, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong length");
    uint8_t digest[SS_HASH];
    if (!ri_snap_sha256(dst, expected, digest))
        return ss_fail(err, RI_SNAPSTORE_ERR_NOMEM, "libcrypto failed to compute a SHA-256");
    if (memcmp(digest, hash, SS_HASH) != 0)
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT,
                       "Corrupt store: blob %s (%s) does not match its hash: the file is damaged", path + 3, what);
    return true;
}

bool ss_blob_read(ri_snapstore *st, const uint8_t hash[SS_HASH], uint8_t *dst, size_t expected, const char *what,
                  ri_snapstore_error *err) {
    return read_frame(st, hash, expected, what, err) && decompress_verify(st, hash, dst, expected, what, err);
}

bool ss_blob_read_alloc(ri_snapstore *st, const uint8_t hash[SS_HASH], size_t expected, uint8_t **out,
                        const char *what, ri_snapstore_error *err) {
    *out = NULL;
    if (expected > SS_MAX_MODULE)
        return ss_fail(err, RI_SNAPSTORE_ERR_CORRUPT, "Corrupt store: %s is said to be %zu bytes, above the limit",
                       what, expected);
    if (!read_frame(st, hash, expected, what, err)) return false;
    uint8_t *buf = malloc(expected ? expected : 1);
    if (!buf) return ss_nomem(err);
    if (!decompress_verify(st, hash, buf, expected, what, err)) {
        free(buf);
        return false;
    }
    *out = buf;
    return true;
}
