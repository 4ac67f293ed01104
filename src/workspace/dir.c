/* Directories: sorted entries, readdir cookies, ancestry. */
#include <stdlib.h>
#include <string.h>

#include "workspace/wsfs_internal.h"

/* Cookies 0, 1 and 2 are the start, after "." and after ".."; entries' keys are above. */
#define KEY_FIRST 2u
#define KEY_STEP ((uint64_t)1 << 32)

static int name_cmp(const char *a, size_t al, const char *b, size_t bl) {
    size_t m = al < bl ? al : bl;
    int c = m ? memcmp(a, b, m) : 0;
    if (c) return c;
    return al < bl ? -1 : al > bl ? 1 : 0;
}

long dir_find(const wsfs_inode *d, const char *name, size_t len) {
    size_t lo = 0, hi = (size_t)d->size;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(d->ents[mid].name, d->ents[mid].len, name, len);
        if (c == 0) return (long)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -(long)lo - 1;
}

/* Keys increase with the name order and are kept across changes, so that a cookie resumes
 * right after its entry whatever was added or removed meanwhile. A new entry takes a key
 * between its neighbours'; when there is no room left, the directory is renumbered evenly. */
static uint64_t key_between(wsfs_inode *d, size_t pos) {
    uint64_t lo = pos > 0 ? d->ents[pos - 1].key : KEY_FIRST;
    uint64_t hi = pos < d->size ? d->ents[pos].key : UINT64_MAX;
    if (hi - lo >= 2) {
        uint64_t half = (hi - lo) / 2;
        return lo + (half < KEY_STEP ? half : KEY_STEP);
    }
    return 0;
}

static void renumber(wsfs_inode *d) {
    uint64_t step = (UINT64_MAX - KEY_FIRST - 1) / (d->size + 1);
    for (uint64_t i = 0; i < d->size; i++) d->ents[i].key = KEY_FIRST + step * (i + 1);
}

wsfs_errno dir_insert(wsfs_inode *d, const char *name, size_t len, uint64_t ino) {
    long at = dir_find(d, name, len);
    RI_ASSERT(at < 0, "W4");
    size_t pos = (size_t)(-at - 1);
    if (d->size == d->cap) {
        uint32_t ncap = d->cap ? d->cap * 2 : 4;
        if (d->cap > UINT32_MAX / 2) return WSFS_ENOSPC;
        wsfs_entry *n = realloc(d->ents, (size_t)ncap * sizeof *n);
        if (!n) return WSFS_ENOMEM;
        d->ents = n;
        d->cap = ncap;
    }
    char *copy = malloc(len ? len : 1);
    if (!copy) return WSFS_ENOMEM;
    memcpy(copy, name, len);
    uint64_t key = key_between(d, pos); /* from the neighbours, before the insertion */
    memmove(&d->ents[pos + 1], &d->ents[pos], (size_t)(d->size - pos) * sizeof *d->ents);
    d->ents[pos] = (wsfs_entry){.name = copy, .len = (uint32_t)len, .ino = ino, .key = key};
    d->size++;
    if (!key) renumber(d);
    return WSFS_ESUCCESS;
}

void dir_remove_at(wsfs_inode *d, size_t idx) {
    free(d->ents[idx].name);
    memmove(&d->ents[idx], &d->ents[idx + 1], (size_t)(d->size - idx - 1) * sizeof *d->ents);
    d->size--;
}

bool dir_is_within(const wsfs *fs, uint64_t d, uint64_t other) {
    /* the parent chain of a linked directory ends at the root (W5); bounded regardless */
    for (uint64_t steps = 0; steps <= fs->ninodes; steps++) {
        if (d == other) return true;
        const wsfs_inode *in = fs_inode(fs, d);
        if (!in || in->parent == d || in->parent == 0) return false;
        d = in->parent;
    }
    return false;
}

static size_t first_after(const wsfs_inode *d, uint64_t cookie) {
    size_t lo = 0, hi = (size_t)d->size;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->ents[mid].key <= cookie) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

wsfs_errno wsfs_readdir(const wsfs *fs, uint64_t dir, uint64_t cookie, wsfs_dirent *out, size_t max, size_t *n) {
    *n = 0;
    const wsfs_inode *d = fs_inode(fs, dir);
    if (!d) return WSFS_EBADF;
    if (d->type != WSFS_FILETYPE_DIRECTORY) return WSFS_ENOTDIR;
    size_t k = 0;
    if (cookie == 0 && k < max)
        out[k++] = (wsfs_dirent){.next = 1, .ino = d->ino, .filetype = WSFS_FILETYPE_DIRECTORY, .namelen = 1,
                                 .name = "."};
    if (cookie <= 1 && k < max)
        out[k++] = (wsfs_dirent){.next = 2, .ino = d->parent ? d->parent : d->ino,
                                 .filetype = WSFS_FILETYPE_DIRECTORY, .namelen = 2, .name = ".."};
    for (size_t i = first_after(d, cookie); i < d->size && k < max; i++) {
        const wsfs_entry *e = &d->ents[i];
        const wsfs_inode *t = fs_inode(fs, e->ino);
        out[k++] = (wsfs_dirent){.next = e->key, .ino = e->ino, .filetype = t ? t->type : WSFS_FILETYPE_UNKNOWN,
                                 .namelen = e->len, .name = e->name};
    }
    *n = k;
    return WSFS_ESUCCESS;
}
