/* The strict parser of the canonical form: every count is backed by the bytes left before
 * anything is allocated for it, and the whole tree is checked (references, link counts, one
 * root, no directory cycle, limits, zero reserved bytes, nothing left over) before the file
 * system is handed out. Any failure is a specific message and frees everything. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

typedef struct parser {
    const uint8_t *p;
    size_t len, pos;
    wsfs_error *err;
    wsfs_status code;
} parser;

static bool fail(parser *ps, wsfs_status code, const char *fmt, ...) {
    ps->code = code;
    if (ps->err) {
        ps->err->code = code;
        int n = snprintf(ps->err->message, sizeof ps->err->message, "wsfs image, byte %zu: ", ps->pos);
        va_list ap;
        va_start(ap, fmt);
        if (n > 0 && (size_t)n < sizeof ps->err->message)
            vsnprintf(ps->err->message + n, sizeof ps->err->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool need(parser *ps, uint64_t n, const char *what) {
    if (n > ps->len - ps->pos) return fail(ps, WSFS_ERR_MALFORMED, "truncated: %s needs %llu bytes, %zu left", what,
                                           (unsigned long long)n, ps->len - ps->pos);
    return true;
}

static bool valid_name(const uint8_t *n, size_t len) {
    if (len == 0 || memchr(n, '/', len) || memchr(n, 0, len)) return false;
    return !name_is_dot((const char *)n, len);
}

static int bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    return c ? c : al < bl ? -1 : al > bl ? 1 : 0;
}

static bool parse_file(parser *ps, wsfs *fs, wsfs_inode *in) {
    if (!need(ps, 8, "a file's size")) return false;
    uint64_t size = ri_le_get64(ps->p + ps->pos);
    ps->pos += 8;
    if (size > fs->lim.max_bytes - fs->bytes)
        return fail(ps, WSFS_ERR_LIMIT, "inode %llu: %llu bytes exceed the quota of %llu", (unsigned long long)in->ino,
                    (unsigned long long)size, (unsigned long long)fs->lim.max_bytes);
    if (!need(ps, size, "a file's content")) return false;
    for (uint64_t off = 0; off < size; off += WSFS_BLOCK_SIZE) {
        size_t k = size - off < WSFS_BLOCK_SIZE ? (size_t)(size - off) : WSFS_BLOCK_SIZE;
        const uint8_t *src = ps->p + ps->pos + off;
        size_t z = 0;
        while (z < k && !src[z]) z++;
        if (z == k) continue; /* all zeros: a hole */
        wsfs_block *b = block_new_filled(fs->fam, src, k);
        wsfs_obj **slot = b ? rx_slot(fs->fam, &in->blocks, off / WSFS_BLOCK_SIZE) : NULL;
        if (!slot) {
            if (b) obj_release(fs->fam, &b->h);
            return fail(ps, WSFS_ERR_NOMEM, "out of memory");
        }
        *slot = &b->h;
    }
    ps->pos += (size_t)size;
    in->size = size;
    fs->bytes += size;
    return true;
}

static bool parse_symlink(parser *ps, wsfs *fs, wsfs_inode *in) {
    if (!need(ps, 4, "a symlink's length")) return false;
    uint32_t n = ri_le_get32(ps->p + ps->pos);
    ps->pos += 4;
    if (n == 0 || n > fs->lim.max_path)
        return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: symlink target of %u bytes (1 to %u allowed)",
                    (unsigned long long)in->ino, n, fs->lim.max_path);
    if (!need(ps, n, "a symlink's target")) return false;
    if (memchr(ps->p + ps->pos, 0, n)) return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: NUL in a symlink target",
                                                  (unsigned long long)in->ino);
    if (n > fs->lim.max_bytes - fs->bytes)
        return fail(ps, WSFS_ERR_LIMIT, "inode %llu: the symlink exceeds the quota", (unsigned long long)in->ino);
    in->target = malloc(n);
    if (!in->target) return fail(ps, WSFS_ERR_NOMEM, "out of memory");
    memcpy(in->target, ps->p + ps->pos, n);
    ps->pos += n;
    in->size = n;
    fs->bytes += n;
    return true;
}

static bool parse_dir(parser *ps, wsfs *fs, wsfs_inode *in) {
    if (!need(ps, 4, "a directory's entry count")) return false;
    uint32_t n = ri_le_get32(ps->p + ps->pos);
    ps->pos += 4;
    if ((uint64_t)n * WSFS_ENTRY_FIXED > ps->len - ps->pos)
        return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: %u entries cannot fit in the %zu bytes left",
                    (unsigned long long)in->ino, n, ps->len - ps->pos);
    if (n) {
        in->ents = calloc(n, sizeof *in->ents);
        if (!in->ents) return fail(ps, WSFS_ERR_NOMEM, "out of memory");
        in->cap = n;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!need(ps, WSFS_ENTRY_FIXED, "an entry")) return false;
        const uint8_t *e = ps->p + ps->pos;
        uint64_t key = ri_le_get64(e), ino = ri_le_get64(e + 8);
        uint16_t nl = ri_le_get16(e + 16);
        ps->pos += WSFS_ENTRY_FIXED;
        if (!need(ps, nl, "an entry's name")) return false;
        const uint8_t *name = ps->p + ps->pos;
        if (!valid_name(name, nl)) return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: entry %u has an invalid name",
                                               (unsigned long long)in->ino, i);
        if (nl > fs->lim.max_name)
            return fail(ps, WSFS_ERR_LIMIT, "inode %llu: entry %u's name is longer than %u bytes",
                        (unsigned long long)in->ino, i, fs->lim.max_name);
        if (key <= 2 || (i && key <= in->ents[i - 1].key))
            return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: entry %u's cookie does not increase",
                        (unsigned long long)in->ino, i);
        if (i && bytes_cmp((const uint8_t *)in->ents[i - 1].name, in->ents[i - 1].len, name, nl) >= 0)
            return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: entry %u is not in name order",
                        (unsigned long long)in->ino, i);
        if (ino == 0 || ino == in->ino)
            return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: entry %u names inode %llu", (unsigned long long)in->ino,
                        i, (unsigned long long)ino);
        in->ents[i].name = malloc(nl);
        if (!in->ents[i].name) return fail(ps, WSFS_ERR_NOMEM, "out of memory");
        memcpy(in->ents[i].name, name, nl);
        in->ents[i].len = nl;
        in->ents[i].ino = ino;
        in->ents[i].key = key;
        in->size = i + 1u;
        ps->pos += nl;
    }
    return true;
}

static bool parse_record(parser *ps, wsfs *fs, uint64_t *prev) {
    if (!need(ps, WSFS_INODE_FIXED, "an inode")) return false;
    const uint8_t *r = ps->p + ps->pos;
    uint64_t ino = ri_le_get64(r);
    uint8_t type = r[8];
    if (ino <= *prev) return fail(ps, WSFS_ERR_MALFORMED, "inode %llu is not after inode %llu", (unsigned long long)ino,
                                  (unsigned long long)*prev);
    *prev = ino;
    if (ino >= fs->next_ino)
        return fail(ps, WSFS_ERR_MALFORMED, "inode %llu is not below the counter %llu", (unsigned long long)ino,
                    (unsigned long long)fs->next_ino);
    if (type != WSFS_FILETYPE_DIRECTORY && type != WSFS_FILETYPE_REGULAR_FILE && type != WSFS_FILETYPE_SYMBOLIC_LINK)
        return fail(ps, WSFS_ERR_MALFORMED, "inode %llu has file type %u", (unsigned long long)ino, type);
    if (r[9] || r[10] || r[11] || ri_le_get32(r + 20))
        return fail(ps, WSFS_ERR_MALFORMED, "inode %llu: reserved bytes are not zero", (unsigned long long)ino);
    wsfs_inode *in = inode_alloc(fs->fam, ino, type);
    wsfs_obj **slot = in ? rx_slot(fs->fam, &fs->inodes, ino) : NULL;
    if (!slot) {
        if (in) obj_release(fs->fam, &in->h);
        return fail(ps, WSFS_ERR_NOMEM, "out of memory");
    }
    *slot = &in->h;
    fs->ninodes++;
    in->nlink = ri_le_get32(r + 12);
    in->pins = ri_le_get32(r + 16);
    in->atim = ri_le_get64(r + 24);
    in->mtim = ri_le_get64(r + 32);
    in->ctim = ri_le_get64(r + 40);
    in->parent = ri_le_get64(r + 48);
    ps->pos += WSFS_INODE_FIXED;
    if (type == WSFS_FILETYPE_REGULAR_FILE) return parse_file(ps, fs, in);
    if (type == WSFS_FILETYPE_SYMBOLIC_LINK) return parse_symlink(ps, fs, in);
    return parse_dir(ps, fs, in);
}

/* Per inode, what the entries say about it. */
typedef struct links {
    uint32_t refs;   /* entries naming it */
    uint64_t linker; /* the (last) directory naming it */
    bool reached;
} links;

static bool check_tree(parser *ps, wsfs *fs, uint64_t count) {
    links *lk = calloc(count, sizeof *lk);
    uint64_t *inos = malloc(count * sizeof *inos);
    uint64_t *queue = malloc(count * sizeof *queue);
    bool ok = false;
    if (!lk || !inos || !queue) {
        fail(ps, WSFS_ERR_NOMEM, "out of memory");
        goto out;
    }
    uint64_t key = 0, k = 0;
    wsfs_obj *v;
    for (bool more = rx_next(&fs->inodes, 0, &key, &v); more; more = rx_next(&fs->inodes, key + 1, &key, &v))
        inos[k++] = key;
#define POS_OF(ino, outp)                                                                                            \
    do {                                                                                                             \
        uint64_t lo_ = 0, hi_ = count;                                                                               \
        while (lo_ < hi_) {                                                                                          \
            uint64_t mid_ = lo_ + (hi_ - lo_) / 2;                                                                   \
            if (inos[mid_] < (ino)) lo_ = mid_ + 1;                                                                  \
            else hi_ = mid_;                                                                                         \
        }                                                                                                            \
        (outp) = lo_ < count && inos[lo_] == (ino) ? lo_ : UINT64_MAX;                                               \
    } while (0)
    if (count == 0 || inos[0] != WSFS_ROOT_INO) {
        fail(ps, WSFS_ERR_MALFORMED, "no root directory (inode 1)");
        goto out;
    }
    const wsfs_inode *root = fs_inode(fs, WSFS_ROOT_INO);
    if (root->type != WSFS_FILETYPE_DIRECTORY || root->parent != WSFS_ROOT_INO) {
        fail(ps, WSFS_ERR_MALFORMED, "inode 1 is not a root directory (its own parent)");
        goto out;
    }
    for (uint64_t i = 0; i < count; i++) {
        const wsfs_inode *d = fs_inode(fs, inos[i]);
        if (d->type != WSFS_FILETYPE_DIRECTORY) continue;
        for (uint64_t j = 0; j < d->size; j++) {
            uint64_t t;
            POS_OF(d->ents[j].ino, t);
            if (t == UINT64_MAX) {
                fail(ps, WSFS_ERR_MALFORMED, "directory %llu names inode %llu, which does not exist",
                     (unsigned long long)d->ino, (unsigned long long)d->ents[j].ino);
                goto out;
            }
            if (lk[t].refs == UINT32_MAX) {
                fail(ps, WSFS_ERR_MALFORMED, "inode %llu has too many links", (unsigned long long)d->ents[j].ino);
                goto out;
            }
            lk[t].refs++;
            lk[t].linker = d->ino;
        }
    }
    /* link counts, parents, orphans */
    for (uint64_t i = 0; i < count; i++) {
        const wsfs_inode *in = fs_inode(fs, inos[i]);
        unsigned long long ino = (unsigned long long)in->ino;
        if (in->type == WSFS_FILETYPE_DIRECTORY) {
            uint64_t subdirs = 0;
            for (uint64_t j = 0; j < in->size; j++)
                if (fs_inode(fs, in->ents[j].ino)->type == WSFS_FILETYPE_DIRECTORY) subdirs++;
            bool linked = in->ino == WSFS_ROOT_INO || lk[i].refs;
            if (in->ino == WSFS_ROOT_INO && lk[i].refs) {
                fail(ps, WSFS_ERR_MALFORMED, "the root directory is named by an entry");
                goto out;
            }
            if (lk[i].refs > 1) {
                fail(ps, WSFS_ERR_MALFORMED, "directory %llu is linked %u times", ino, lk[i].refs);
                goto out;
            }
            if (linked && (in->nlink != 2 + subdirs || (in->ino != WSFS_ROOT_INO && in->parent != lk[i].linker))) {
                fail(ps, WSFS_ERR_MALFORMED, "directory %llu: link count %u or parent %llu is wrong", ino, in->nlink,
                     (unsigned long long)in->parent);
                goto out;
            }
            if (!linked && (in->nlink || in->parent || in->size || !in->pins)) {
                fail(ps, WSFS_ERR_MALFORMED, "directory %llu is removed but not empty, unpinned or linked", ino);
                goto out;
            }
        } else {
            if (in->nlink != lk[i].refs) {
                fail(ps, WSFS_ERR_MALFORMED, "inode %llu: link count %u, but %u entries name it", ino, in->nlink,
                     lk[i].refs);
                goto out;
            }
            if (!lk[i].refs && (!in->pins || in->parent)) {
                fail(ps, WSFS_ERR_MALFORMED, "inode %llu has no link and is not pinned", ino);
                goto out;
            }
            if (lk[i].refs) {
                const wsfs_inode *p = fs_inode(fs, in->parent);
                bool found = false;
                for (uint64_t j = 0; p && p->type == WSFS_FILETYPE_DIRECTORY && j < p->size && !found; j++)
                    found = p->ents[j].ino == in->ino;
                if (!found) {
                    fail(ps, WSFS_ERR_MALFORMED, "inode %llu: its parent %llu does not name it", ino,
                         (unsigned long long)in->parent);
                    goto out;
                }
            }
        }
    }
    /* every linked directory is reachable from the root: no cycle */
    uint64_t qh = 0, qt = 0, linked_dirs = 0, reached = 1;
    queue[qt++] = 0;
    lk[0].reached = true;
    for (uint64_t i = 0; i < count; i++)
        if (fs_inode(fs, inos[i])->type == WSFS_FILETYPE_DIRECTORY && (i == 0 || lk[i].refs)) linked_dirs++;
    while (qh < qt) {
        const wsfs_inode *d = fs_inode(fs, inos[queue[qh++]]);
        for (uint64_t j = 0; j < d->size; j++) {
            uint64_t t;
            POS_OF(d->ents[j].ino, t);
            if (fs_inode(fs, inos[t])->type != WSFS_FILETYPE_DIRECTORY || lk[t].reached) continue;
            lk[t].reached = true;
            queue[qt++] = t;
            reached++;
        }
    }
#undef POS_OF
    if (reached != linked_dirs) {
        fail(ps, WSFS_ERR_MALFORMED, "%llu directories are not reachable from the root (a cycle)",
             (unsigned long long)(linked_dirs - reached));
        goto out;
    }
    ok = true;
out:
    free(lk);
    free(inos);
    free(queue);
    return ok;
}

wsfs_status fs_parse_one(wsfs *fs, const uint8_t *data, size_t len, wsfs_error *err) {
    parser ps = {.p = data, .len = data ? len : 0, .err = err, .code = WSFS_OK};
    uint64_t prev = 0;
    bool ok = parse_record(&ps, fs, &prev);
    if (ok && ps.pos != len) ok = fail(&ps, WSFS_ERR_MALFORMED, "%zu bytes left over after the record", len - ps.pos);
    return ok ? WSFS_OK : ps.code;
}

wsfs_status fs_check_tree(wsfs *fs, wsfs_error *err) {
    parser ps = {.p = NULL, .len = 0, .err = err, .code = WSFS_OK};
    if (fs->ninodes > fs->lim.max_inodes) {
        fail(&ps, WSFS_ERR_LIMIT, "%llu inodes exceed the limit of %llu", (unsigned long long)fs->ninodes,
             (unsigned long long)fs->lim.max_inodes);
        return ps.code;
    }
    return check_tree(&ps, fs, fs->ninodes) ? WSFS_OK : ps.code;
}

wsfs_status wsfs_parse(const uint8_t *data, size_t len, const wsfs_config *cfg, wsfs **out, wsfs_error *err) {
    parser ps = {.p = data, .len = data ? len : 0, .err = err};
    *out = NULL;
    wsfs *fs = fs_alloc(cfg);
    if (!fs) {
        fail(&ps, WSFS_ERR_NOMEM, "out of memory");
        return ps.code;
    }
    bool ok = need(&ps, WSFS_HEADER_SIZE, "the header");
    if (ok && memcmp(data, WSFS_MAGIC, 4)) ok = fail(&ps, WSFS_ERR_MALFORMED, "not a WSFS image (bad magic)");
    if (ok && ri_le_get32(data + 4) != WSFS_VERSION)
        ok = fail(&ps, WSFS_ERR_MALFORMED, "version %u is not supported (1 is)", ri_le_get32(data + 4));
    uint64_t count = 0;
    if (ok) {
        fs->next_ino = ri_le_get64(data + 8);
        count = ri_le_get64(data + 16);
        ps.pos = WSFS_HEADER_SIZE;
        if (count > fs->lim.max_inodes)
            ok = fail(&ps, WSFS_ERR_LIMIT, "%llu inodes exceed the limit of %llu", (unsigned long long)count,
                      (unsigned long long)fs->lim.max_inodes);
        else if (count > (len - ps.pos) / (WSFS_INODE_FIXED + 4))
            ok = fail(&ps, WSFS_ERR_MALFORMED, "%llu inodes cannot fit in %zu bytes", (unsigned long long)count,
                      len - ps.pos);
        else if (fs->next_ino == 0 || fs->next_ino == UINT64_MAX)
            ok = fail(&ps, WSFS_ERR_MALFORMED, "the inode counter %llu is out of range",
                      (unsigned long long)fs->next_ino);
    }
    uint64_t prev = 0;
    for (uint64_t i = 0; ok && i < count; i++) {
        ok = parse_record(&ps, fs, &prev);
    }
    if (ok && ps.pos != len) ok = fail(&ps, WSFS_ERR_MALFORMED, "%zu bytes left over after the last inode", len - ps.pos);
    if (ok) ok = check_tree(&ps, fs, count);
    if (!ok) {
        wsfs_free(fs);
        return ps.code;
    }
    *out = fs;
    if (err) err->code = WSFS_OK, err->message[0] = 0;
    return WSFS_OK;
}
