/* Where the regular files' contents lie in a canonical image (docs/WORKSPACE.md "Serialized
 * form"), for a store that keeps each file's bytes by content: a walk of the records by
 * their structure only (every length against the bytes left), not the full parser. The
 * same walk reads a skeleton, the image with every file's content cut out. */
#include <stdio.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

static wsfs_status walk_fail(wsfs_error *err, size_t pos, const char *what) {
    if (err) {
        err->code = WSFS_ERR_MALFORMED;
        snprintf(err->message, sizeof err->message, "wsfs %s, byte %zu: %s", "image", pos, what);
    }
    return WSFS_ERR_MALFORMED;
}

wsfs_status wsfs_walk_files(const uint8_t *data, size_t len, bool skeleton, wsfs_file_fn fn, void *ctx,
                            wsfs_error *err) {
    if (!data || len < WSFS_HEADER_SIZE || memcmp(data, WSFS_MAGIC, 4) || get_u32(data + 4) != WSFS_VERSION)
        return walk_fail(err, 0, "not a WSFS image of version 1");
    uint64_t count = get_u64(data + 16);
    size_t pos = WSFS_HEADER_SIZE;
    if (count > (len - pos) / (WSFS_INODE_FIXED + 4)) return walk_fail(err, pos, "more inodes than bytes");
    for (uint64_t i = 0; i < count; i++) {
        if (len - pos < WSFS_INODE_FIXED + 4) return walk_fail(err, pos, "truncated inode");
        uint64_t ino = get_u64(data + pos);
        uint8_t type = data[pos + 8];
        pos += WSFS_INODE_FIXED;
        if (type == WSFS_FILETYPE_REGULAR_FILE) {
            if (len - pos < 8) return walk_fail(err, pos, "truncated file size");
            uint64_t size = get_u64(data + pos);
            pos += 8;
            if (!skeleton && size > len - pos) return walk_fail(err, pos, "a file's content runs past the end");
            if (fn && !fn(ctx, ino, pos, size)) return walk_fail(err, pos, "stopped");
            if (!skeleton) pos += (size_t)size;
        } else if (type == WSFS_FILETYPE_SYMBOLIC_LINK) {
            uint32_t n = get_u32(data + pos);
            pos += 4;
            if (n > len - pos) return walk_fail(err, pos, "a symlink target runs past the end");
            pos += n;
        } else if (type == WSFS_FILETYPE_DIRECTORY) {
            uint32_t n = get_u32(data + pos);
            pos += 4;
            for (uint32_t k = 0; k < n; k++) {
                if (len - pos < WSFS_ENTRY_FIXED) return walk_fail(err, pos, "truncated entry");
                uint16_t nl = get_u16(data + pos + 16);
                pos += WSFS_ENTRY_FIXED;
                if (nl > len - pos) return walk_fail(err, pos, "an entry's name runs past the end");
                pos += nl;
            }
        } else {
            return walk_fail(err, pos, "unknown file type");
        }
    }
    if (pos != len) return walk_fail(err, pos, "bytes left over after the last inode");
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}
