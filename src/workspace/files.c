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
        snprintf(err->message, sizeof err->message, "wsfs image, byte %zu: %s", pos, what);
    }
    return WSFS_ERR_MALFORMED;
}

const char *wsfs_record_at(const uint8_t *data, size_t len, size_t pos, bool skeleton, wsfs_record *r) {
    if (len - pos < WSFS_INODE_FIXED + 4) return "truncated inode";
    r->start = pos;
    r->ino = ri_le_get64(data + pos);
    r->type = data[pos + 8];
    r->content = 0;
    r->size = 0;
    pos += WSFS_INODE_FIXED;
    if (r->type == WSFS_FILETYPE_REGULAR_FILE) {
        if (len - pos < 8) return "truncated file size";
        r->size = ri_le_get64(data + pos);
        pos += 8;
        r->content = pos;
        if (!skeleton) {
            if (r->size > len - pos) return "a file's content runs past the end";
            pos += (size_t)r->size;
        }
    } else if (r->type == WSFS_FILETYPE_SYMBOLIC_LINK) {
        uint32_t n = ri_le_get32(data + pos);
        pos += 4;
        if (n > len - pos) return "a symlink target runs past the end";
        pos += n;
    } else if (r->type == WSFS_FILETYPE_DIRECTORY) {
        uint32_t n = ri_le_get32(data + pos);
        pos += 4;
        for (uint32_t k = 0; k < n; k++) {
            if (len - pos < WSFS_ENTRY_FIXED) return "truncated entry";
            uint16_t nl = ri_le_get16(data + pos + 16);
            pos += WSFS_ENTRY_FIXED;
            if (nl > len - pos) return "an entry's name runs past the end";
            pos += nl;
        }
    } else {
        return "unknown file type";
    }
    r->end = pos;
    return NULL;
}

wsfs_status wsfs_walk_files(const uint8_t *data, size_t len, bool skeleton, wsfs_file_fn fn, void *ctx,
                            wsfs_error *err) {
    if (!data || len < WSFS_HEADER_SIZE || memcmp(data, WSFS_MAGIC, 4) || ri_le_get32(data + 4) != WSFS_VERSION)
        return walk_fail(err, 0, "not a WSFS image of version 1");
    uint64_t count = ri_le_get64(data + 16);
    size_t pos = WSFS_HEADER_SIZE;
    if (count > (len - pos) / (WSFS_INODE_FIXED + 4)) return walk_fail(err, pos, "more inodes than bytes");
    for (uint64_t i = 0; i < count; i++) {
        wsfs_record r;
        const char *why = wsfs_record_at(data, len, pos, skeleton, &r);
        if (why) return walk_fail(err, pos, why);
        if (r.type == WSFS_FILETYPE_REGULAR_FILE && fn && !fn(ctx, r.ino, r.content, r.size))
            return walk_fail(err, pos, "stopped");
        pos = r.end;
    }
    if (pos != len) return walk_fail(err, pos, "bytes left over after the last inode");
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}
