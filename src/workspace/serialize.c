/* The canonical bytes of a workspace file system (docs/WORKSPACE.md "Serialized form"):
 * little-endian, inodes in ino order, entries in name order, each file's content contiguous
 * after its length (holes written as zeros). The same state always gives the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

static bool add(size_t *total, uint64_t n) {
    if (n > SIZE_MAX - *total) return false;
    *total += (size_t)n;
    return true;
}

bool fs_record_size(const wsfs_inode *in, size_t *total) {
    if (!add(total, WSFS_INODE_FIXED)) return false;
    switch (in->type) {
    case WSFS_FILETYPE_REGULAR_FILE: return add(total, 8) && add(total, in->size);
    case WSFS_FILETYPE_SYMBOLIC_LINK: return add(total, 4) && add(total, in->size);
    default:
        if (!add(total, 4)) return false;
        for (uint64_t i = 0; i < in->size; i++)
            if (!add(total, WSFS_ENTRY_FIXED + (uint64_t)in->ents[i].len)) return false;
        return true;
    }
}

static uint8_t *put_file(const wsfs_inode *in, uint8_t *p) {
    ri_le_put64(p, in->size);
    p += 8;
    for (uint64_t off = 0; off < in->size; off += WSFS_BLOCK_SIZE) {
        size_t k = in->size - off < WSFS_BLOCK_SIZE ? (size_t)(in->size - off) : WSFS_BLOCK_SIZE;
        const wsfs_block *b = (const wsfs_block *)rx_get(&in->blocks, off / WSFS_BLOCK_SIZE);
        if (b) memcpy(p, b->data, k);
        else memset(p, 0, k);
        p += k;
    }
    return p;
}

void fs_put_fixed(const wsfs_inode *in, uint8_t *p) {
    ri_le_put64(p, in->ino);
    p[8] = in->type;
    p[9] = p[10] = p[11] = 0;
    ri_le_put32(p + 12, in->nlink);
    ri_le_put32(p + 16, in->pins);
    ri_le_put32(p + 20, 0);
    ri_le_put64(p + 24, in->atim);
    ri_le_put64(p + 32, in->mtim);
    ri_le_put64(p + 40, in->ctim);
    ri_le_put64(p + 48, in->parent);
}

uint8_t *fs_put_record(const wsfs_inode *in, uint8_t *p) {
    fs_put_fixed(in, p);
    p += WSFS_INODE_FIXED;
    switch (in->type) {
    case WSFS_FILETYPE_REGULAR_FILE: return put_file(in, p);
    case WSFS_FILETYPE_SYMBOLIC_LINK:
        ri_le_put32(p, (uint32_t)in->size);
        memcpy(p + 4, in->target, (size_t)in->size);
        return p + 4 + in->size;
    default:
        ri_le_put32(p, (uint32_t)in->size);
        p += 4;
        for (uint64_t i = 0; i < in->size; i++) {
            const wsfs_entry *e = &in->ents[i];
            ri_le_put64(p, e->key);
            ri_le_put64(p + 8, e->ino);
            ri_le_put16(p + 16, (uint16_t)e->len);
            memcpy(p + WSFS_ENTRY_FIXED, e->name, e->len);
            p += WSFS_ENTRY_FIXED + e->len;
        }
        return p;
    }
}

wsfs_status wsfs_serialize(const wsfs *fs, uint8_t **out, size_t *len, wsfs_error *err) {
    size_t total = WSFS_HEADER_SIZE;
    uint64_t key = 0;
    wsfs_obj *v;
    for (bool more = rx_next(&fs->inodes, 0, &key, &v); more; more = rx_next(&fs->inodes, key + 1, &key, &v))
        if (!fs_record_size((const wsfs_inode *)v, &total)) {
            if (err) {
                err->code = WSFS_ERR_NOMEM;
                snprintf(err->message, sizeof err->message, "wsfs serialize: the image does not fit in memory");
            }
            return WSFS_ERR_NOMEM;
        }
    uint8_t *buf = malloc(total), *p = buf;
    if (!buf) {
        if (err) {
            err->code = WSFS_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "wsfs serialize: out of memory (%zu bytes)", total);
        }
        return WSFS_ERR_NOMEM;
    }
    memcpy(p, WSFS_MAGIC, 4);
    ri_le_put32(p + 4, WSFS_VERSION);
    ri_le_put64(p + 8, fs->next_ino);
    ri_le_put64(p + 16, fs->ninodes);
    p += WSFS_HEADER_SIZE;
    for (bool more = rx_next(&fs->inodes, 0, &key, &v); more; more = rx_next(&fs->inodes, key + 1, &key, &v))
        p = fs_put_record((const wsfs_inode *)v, p);
    RI_ASSERT((size_t)(p - buf) == total, "W7");
    *out = buf;
    *len = total;
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}
