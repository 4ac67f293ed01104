/* File contents: blocks of WSFS_BLOCK_SIZE in a radix tree per file; holes (no block) read
 * as zeros; a write copies only the shared blocks it touches. The bytes of the last block
 * past the file's size are zero (invariant W6), so growing a file needs no clearing. */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

/* Block idx of `in`, private to fs (copied if shared; created zeroed if absent and create). */
static wsfs_block *block_mut(wsfs *fs, wsfs_inode *in, uint64_t idx, bool create, wsfs_errno *e) {
    wsfs_obj **slot = rx_slot(fs->fam, &in->blocks, idx);
    if (!slot) {
        *e = WSFS_ENOMEM;
        return NULL;
    }
    wsfs_block *b = (wsfs_block *)*slot;
    if (!b && !create) return NULL;
    if (b && !obj_shared(&b->h)) return b;
    wsfs_block *c = block_new(fs->fam);
    if (!c) {
        *e = WSFS_ENOMEM;
        return NULL;
    }
    if (b) {
        memcpy(c->data, b->data, WSFS_BLOCK_SIZE);
        obj_release(fs->fam, &b->h);
    }
    *slot = &c->h;
    return c;
}

static wsfs_errno file_kind(const wsfs_inode *in) {
    if (!in) return WSFS_EBADF;
    if (in->type == WSFS_FILETYPE_DIRECTORY) return WSFS_EISDIR;
    if (in->type != WSFS_FILETYPE_REGULAR_FILE) return WSFS_EINVAL;
    return WSFS_ESUCCESS;
}

wsfs_errno file_set_size(wsfs *fs, wsfs_inode *in, uint64_t size) {
    if (size > in->size && size - in->size > fs->lim.max_bytes - fs->bytes) return WSFS_ENOSPC;
    if (size < in->size) {
        uint64_t keep = size / WSFS_BLOCK_SIZE + (size % WSFS_BLOCK_SIZE ? 1 : 0);
        wsfs_errno e = WSFS_ESUCCESS;
        if (size % WSFS_BLOCK_SIZE && rx_get(&in->blocks, size / WSFS_BLOCK_SIZE)) {
            wsfs_block *b = block_mut(fs, in, size / WSFS_BLOCK_SIZE, false, &e);
            if (!b) return e;
            size_t from = (size_t)(size % WSFS_BLOCK_SIZE);
            memset(b->data + from, 0, WSFS_BLOCK_SIZE - from); /* W6 */
        }
        if (!rx_truncate(fs->fam, &in->blocks, keep)) return WSFS_ENOMEM;
        fs->bytes -= in->size - size;
    } else {
        const wsfs_block *last = (const wsfs_block *)rx_get(&in->blocks, in->size / WSFS_BLOCK_SIZE);
        RI_ASSERT(!last || last->data[in->size % WSFS_BLOCK_SIZE] == 0, "W6");
        (void)last;
        fs->bytes += size - in->size;
    }
    in->size = size;
    in->mtim = in->ctim = fs_now(fs);
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_truncate(wsfs *fs, uint64_t ino, uint64_t size) {
    wsfs_errno e = file_kind(fs_inode(fs, ino));
    if (e) return e;
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    return in ? file_set_size(fs, in, size) : e;
}

wsfs_errno wsfs_allocate(wsfs *fs, uint64_t ino, uint64_t off, uint64_t len) {
    const wsfs_inode *cur = fs_inode(fs, ino);
    wsfs_errno e = file_kind(cur);
    if (e) return e;
    if (len == 0) return WSFS_EINVAL;
    if (off > UINT64_MAX - len) return WSFS_EFBIG;
    if (off + len <= cur->size) return WSFS_ESUCCESS;
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    return in ? file_set_size(fs, in, off + len) : e;
}

wsfs_errno wsfs_pread(const wsfs *fs, uint64_t ino, void *buf, size_t len, uint64_t off, size_t *n) {
    *n = 0;
    const wsfs_inode *in = fs_inode(fs, ino);
    wsfs_errno e = file_kind(in);
    if (e) return e;
    if (off >= in->size || len == 0) return WSFS_ESUCCESS;
    uint64_t avail = in->size - off;
    size_t total = avail < len ? (size_t)avail : len;
    uint8_t *out = buf;
    size_t done = 0;
    while (done < total) {
        uint64_t pos = off + done;
        size_t in_block = (size_t)(pos % WSFS_BLOCK_SIZE);
        size_t k = WSFS_BLOCK_SIZE - in_block;
        if (k > total - done) k = total - done;
        const wsfs_block *b = (const wsfs_block *)rx_get(&in->blocks, pos / WSFS_BLOCK_SIZE);
        if (b) memcpy(out + done, b->data + in_block, k);
        else memset(out + done, 0, k); /* a hole */
        done += k;
    }
    *n = total;
    return WSFS_ESUCCESS;
}

wsfs_errno wsfs_pwrite(wsfs *fs, uint64_t ino, const void *buf, size_t len, uint64_t off, size_t *n) {
    *n = 0;
    const wsfs_inode *cur = fs_inode(fs, ino);
    wsfs_errno e = file_kind(cur);
    if (e) return e;
    if (len == 0) return WSFS_ESUCCESS;
    if (off > UINT64_MAX - len) return WSFS_EFBIG;
    uint64_t end = off + len;
    if (end > cur->size && end - cur->size > fs->lim.max_bytes - fs->bytes) return WSFS_ENOSPC;
    wsfs_inode *in = fs_inode_mut(fs, ino, &e);
    if (!in) return e;
    const uint8_t *src = buf;
    size_t done = 0;
    while (done < len) {
        uint64_t pos = off + done;
        size_t in_block = (size_t)(pos % WSFS_BLOCK_SIZE);
        size_t k = WSFS_BLOCK_SIZE - in_block;
        if (k > len - done) k = len - done;
        if (k == WSFS_BLOCK_SIZE) {
            /* a whole block: written once into a new one where it would be copied or
             * zeroed first (a shared block stays with its other owners) */
            wsfs_obj **slot = rx_slot(fs->fam, &in->blocks, pos / WSFS_BLOCK_SIZE);
            wsfs_block *old = slot ? (wsfs_block *)*slot : NULL;
            if (slot && (!old || obj_shared(&old->h))) {
                wsfs_block *c = block_new_filled(fs->fam, src + done, k);
                if (!c) {
                    e = WSFS_ENOMEM;
                    break;
                }
                if (old) obj_release(fs->fam, &old->h);
                *slot = &c->h;
                done += k;
                continue;
            }
        }
        wsfs_block *b = block_mut(fs, in, pos / WSFS_BLOCK_SIZE, true, &e);
        if (!b) break; /* no memory: what was written stays written */
        memcpy(b->data + in_block, src + done, k);
        done += k;
    }
    if (off + done > in->size) {
        fs->bytes += off + done - in->size;
        in->size = off + done;
    }
    if (done) in->mtim = in->ctim = fs_now(fs);
    *n = done;
    return done == len ? WSFS_ESUCCESS : e;
}
