/*
 * The workspace file system's internals (docs/WORKSPACE.md "Copy-on-write structure").
 * Included by the .c files of src/workspace only.
 *
 * Every shared object (radix node, inode, content block) starts with a wsfs_obj: an atomic
 * reference count and a kind. An object with one reference belongs to one file system and
 * may be written in place; with more it is shared and is copied before a write (invariant
 * W1). Radix trees map a 64-bit key to objects: the inode table (ino -> inode) and each
 * file's blocks (block index -> block).
 */
#ifndef RI_WORKSPACE_WSFS_INTERNAL_H
#define RI_WORKSPACE_WSFS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "common/ri_assert.h"
#include "util/le.h"
#include "workspace/wsfs.h"

enum { OBJ_NODE = 1, OBJ_INODE = 2, OBJ_BLOCK = 3 };

typedef struct wsfs_obj {
    atomic_uint_fast32_t refs;
    uint8_t kind;
    uint8_t slab; /* blocks: from a slab of the family (slab.c), else malloc's */
} wsfs_obj;

/* A 2 MiB slab of blocks (slab.c); its header is at its start. */
typedef struct wsfs_slab {
    struct wsfs_slab *prev, *next; /* in the family's list of slabs with room */
    void *free;                    /* freed slots, each holding the next one's address */
    uint32_t live, bump;           /* blocks handed out; slots handed out from the start */
    bool listed;
} wsfs_slab;

/* What an origin and its forks share: counters of live objects (tests, accounting), and
 * the slabs their blocks come from. */
typedef struct wsfs_family {
    atomic_uint_fast32_t refs;
    atomic_int_fast64_t blocks, nodes, inodes;
    pthread_mutex_t lock; /* guards avail */
    wsfs_slab *avail;     /* slabs with a free slot */
    uint32_t empty;       /* empty slabs kept (in avail) */
} wsfs_family;

#define RX_BITS 6
#define RX_FAN (1u << RX_BITS)
#define RX_MAX_HEIGHT 11 /* 66 bits: every uint64_t key */

typedef struct rx_node {
    wsfs_obj h;
    wsfs_obj *slot[RX_FAN]; /* level 0: values; above: rx_node children */
} rx_node;

typedef struct wsfs_radix {
    rx_node *root; /* NULL: empty */
    uint8_t height; /* levels; keys < 64^height */
} wsfs_radix;

typedef struct wsfs_block {
    wsfs_obj h;
    uint8_t data[WSFS_BLOCK_SIZE];
} wsfs_block;

typedef struct wsfs_entry {
    char *name;
    uint32_t len;
    uint64_t ino;
    uint64_t key; /* readdir cookie; increasing with the name order, > 2 */
} wsfs_entry;

typedef struct wsfs_inode {
    wsfs_obj h;
    uint64_t ino;
    uint8_t type; /* WSFS_FILETYPE_* */
    uint32_t nlink;
    uint32_t pins;
    uint64_t atim, mtim, ctim;
    uint64_t parent; /* dirs: the parent (root: itself; removed: 0); others: a dir linking it, or 0 */
    uint64_t size;   /* files: bytes; symlinks: target bytes; dirs: entries */
    wsfs_radix blocks; /* files */
    char *target;      /* symlinks */
    wsfs_entry *ents;  /* dirs: sorted by name bytes */
    uint32_t cap;
} wsfs_inode;

struct wsfs {
    wsfs_radix inodes;
    uint64_t next_ino;
    uint64_t ninodes;
    uint64_t bytes;
    wsfs_limits lim;
    wsfs_clock_fn clock;
    void *clock_ctx;
    wsfs_family *fam;
};

/* ---- objects (object.c) ---- */
void obj_retain(wsfs_obj *o);
void obj_release(wsfs_family *fam, wsfs_obj *o);
bool obj_shared(const wsfs_obj *o);
wsfs_family *family_new(void);
void family_release(wsfs_family *fam);
wsfs_block *block_new(wsfs_family *fam); /* zeroed */
/* A block from the family's slabs (h.slab set, data unset), or NULL: use malloc (a small
 * family, or no mapping); its free; the empty slabs' unmapping at the family's end. */
wsfs_block *slab_block_alloc(wsfs_family *fam);
void slab_block_free(wsfs_family *fam, wsfs_block *b);
void slab_release_all(wsfs_family *fam);
/* A block holding src's n bytes (n >= 1), zero after them (n = 0: data left unset). */
wsfs_block *block_new_filled(wsfs_family *fam, const uint8_t *src, size_t n);
wsfs_inode *inode_alloc(wsfs_family *fam, uint64_t ino, uint8_t type);
/* A private copy of a shared inode (dirs: entries copied; files: blocks shared). */
wsfs_inode *inode_clone(wsfs_family *fam, const wsfs_inode *in);

/* ---- radix trees (radix.c) ---- */
wsfs_obj *rx_get(const wsfs_radix *t, uint64_t key);
/* The slot for key in nodes owned by this tree (copying shared ones on the way, growing the
 * tree); NULL on no memory. The caller replaces the value (releasing the old one). */
wsfs_obj **rx_slot(wsfs_family *fam, wsfs_radix *t, uint64_t key);
/* The first key >= from that has a value; false when none. */
bool rx_next(const wsfs_radix *t, uint64_t from, uint64_t *key, wsfs_obj **val);
void rx_share(wsfs_radix *dst, const wsfs_radix *src);
void rx_clear(wsfs_family *fam, wsfs_radix *t);
/* Drops every key >= from (values released), owning the path. false on no memory. */
bool rx_truncate(wsfs_family *fam, wsfs_radix *t, uint64_t from);
/* Calls fn for each key whose values differ (by pointer; NULL = absent), in key order,
 * skipping subtrees shared by both. fn returns false to stop; rx_diff returns false then. */
typedef bool (*rx_diff_fn)(void *ctx, uint64_t key, wsfs_obj *a, wsfs_obj *b);
bool rx_diff(const wsfs_radix *a, const wsfs_radix *b, rx_diff_fn fn, void *ctx);

/* ---- inodes of a file system (fs.c) ---- */
/* An empty file system (no inodes yet) with cfg's limits and clock; the parser's start. */
wsfs *fs_alloc(const wsfs_config *cfg);
wsfs_inode *fs_inode(const wsfs *fs, uint64_t ino);
/* The inode, made private to fs (invariant W1); NULL if missing or no memory (*e says). */
wsfs_inode *fs_inode_mut(wsfs *fs, uint64_t ino, wsfs_errno *e);
/* A new inode numbered from the counter, in the table; checks max_inodes. */
wsfs_errno fs_inode_create(wsfs *fs, uint8_t type, wsfs_inode **out);
/* Frees an inode with no links and no pins from the table. */
void fs_inode_drop(wsfs *fs, uint64_t ino);
uint64_t fs_now(const wsfs *fs);
void fs_fill_stat(const wsfs_inode *in, wsfs_filestat *st);

/* ---- file contents (fileio.c) ---- */
/* Sets a regular file's size (quota checked; W6 kept). */
wsfs_errno file_set_size(wsfs *fs, wsfs_inode *in, uint64_t size);

/* ---- directories (dir.c) ---- */
/* Index of name, or -(insertion point) - 1. */
long dir_find(const wsfs_inode *d, const char *name, size_t len);
wsfs_errno dir_insert(wsfs_inode *d, const char *name, size_t len, uint64_t ino);
void dir_remove_at(wsfs_inode *d, size_t idx);
/* Whether d (a directory) is other or below it. */
bool dir_is_within(const wsfs *fs, uint64_t d, uint64_t other);

/* ---- path resolution (path.c) ---- */
typedef struct wsfs_walk {
    uint64_t dir;   /* the directory holding the last component */
    uint64_t ino;   /* what the path names; 0 if the last component does not exist */
    const char *name; /* the last component (in buf) */
    size_t namelen;
    bool trailing_slash;
    char *buf; /* owned: free with walk_done */
} wsfs_walk;
/* Resolves all but the last component (and the last too, following it if follow). ENOENT
 * only for a missing intermediate directory; a missing last leaves ino 0. */
wsfs_errno walk_path(const wsfs *fs, uint64_t dir, const char *path, size_t len, bool follow, wsfs_walk *w);
void walk_done(wsfs_walk *w);
bool name_is_dot(const char *name, size_t len);

/* ---- bytes: little-endian, every host (util/le.h) ---- */

/* ---- the serialized form (serialize.c, parse.c) ---- */
#define WSFS_MAGIC "WSFS"
#define WSFS_VERSION 1u
#define WSFS_HEADER_SIZE 24u
#define WSFS_INODE_FIXED 56u /* ino .. parent */
#define WSFS_ENTRY_FIXED 18u /* key, ino, name length */

/* The record of one inode: its length (added to *total; false on overflow) and its bytes
 * (at p, returning the end). serialize.c. */
bool fs_record_size(const wsfs_inode *in, size_t *total);
/* The first WSFS_INODE_FIXED bytes of an inode's record (what every type has). */
void fs_put_fixed(const wsfs_inode *in, uint8_t *p);
uint8_t *fs_put_record(const wsfs_inode *in, uint8_t *p);
/* parse.c, for deltas applied to a file system (delta_fs.c): exactly one record of len
 * bytes into fs (its inode's slot empty, fs->next_ino already the result's counter), with
 * the parser's rules for one record; and the parser's whole-tree checks of fs. */
wsfs_status fs_parse_one(wsfs *fs, const uint8_t *data, size_t len, wsfs_error *err);
wsfs_status fs_check_tree(wsfs *fs, wsfs_error *err);

/* ---- the workspace delta's format (delta.c, delta_fs.c) ---- */
#define WSFS_DELTA_MAGIC "WSFD"
#define WSFS_DELTA_VERSION 1u
#define WSFS_DELTA_HEADER 48u
#define WSFS_DELTA_OP_HEADER 16u
#define WSFS_DELTA_RANGE_HEADER 16u
#define WSFS_DELTA_GAP 32u /* equal bytes that do not split a range */
enum { WSFS_OP_REMOVED = 1, WSFS_OP_RECORD = 2, WSFS_OP_FILE = 3 };
/* A growing output buffer; failed sticks after the first allocation failure. */
typedef struct wsfs_dbuf {
    uint8_t *p;
    size_t len, cap;
    bool failed;
} wsfs_dbuf;
uint8_t *wsfs_dbuf_grow(wsfs_dbuf *b, size_t n);
void wsfs_dbuf_op(wsfs_dbuf *b, uint64_t ino, uint8_t kind, uint32_t k);
void wsfs_dbuf_put(wsfs_dbuf *b, const void *src, size_t n);
/* The header, written over the first WSFS_DELTA_HEADER bytes of b. */
void wsfs_dbuf_header(wsfs_dbuf *b, uint64_t blen, uint64_t clen, uint64_t counter, uint64_t count, uint64_t nops);

/* One record of a canonical image (files.c), found by structure only. */
typedef struct wsfs_record {
    uint64_t ino;
    uint8_t type;
    size_t start, end;   /* the record's bytes */
    size_t content;      /* regular files: where the content starts (skeleton: where it was cut) */
    uint64_t size;       /* regular files: the content's length */
} wsfs_record;
/* The record at pos (pos < len); NULL, or what is wrong with it. */
const char *wsfs_record_at(const uint8_t *data, size_t len, size_t pos, bool skeleton, wsfs_record *r);

#endif
