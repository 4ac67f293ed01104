/*
 * The workspace file system (docs/WORKSPACE.md): a sandbox's files, held by the host.
 *
 * A wsfs is one version of a tree of inodes (directories, regular files, symbolic links)
 * with limits, a deterministic inode counter and a clock supplied by its owner. Forks share
 * all structure copy-on-write (wsfs_fork is O(1)); a write copies only the inode-table path
 * and the file blocks it touches. Operations return WASI preview1 errno values, so that the
 * WASI layer passes them through; the parser and the constructor return a wsfs_error
 * (code and message).
 *
 * Handles are inode numbers: a WASI descriptor keeps the number and pins the inode
 * (wsfs_pin), so an unlinked file that is still open stays readable until it is unpinned.
 *
 * Thread safety: one wsfs is used by one thread at a time; different forks of the same
 * origin may be used from different threads at once (shared nodes are reference counted
 * atomically and never written while shared).
 */
#ifndef RI_WORKSPACE_WSFS_H
#define RI_WORKSPACE_WSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* WASI preview1 errno (legacy/preview1/witx/typenames.witx), the values this layer returns. */
typedef uint16_t wsfs_errno;
enum {
    WSFS_ESUCCESS = 0,
    WSFS_EBADF = 8,
    WSFS_EBUSY = 10,
    WSFS_EEXIST = 20,
    WSFS_EFBIG = 22,
    WSFS_EILSEQ = 25,
    WSFS_EINVAL = 28,
    WSFS_EISDIR = 31,
    WSFS_ELOOP = 32,
    WSFS_EMLINK = 34,
    WSFS_ENAMETOOLONG = 37,
    WSFS_ENOENT = 44,
    WSFS_ENOMEM = 48,
    WSFS_ENOSPC = 51,
    WSFS_ENOTDIR = 54,
    WSFS_ENOTEMPTY = 55,
    WSFS_EOVERFLOW = 61,
    WSFS_EPERM = 63,
    WSFS_ERANGE = 68,
    WSFS_EXDEV = 75,
};

/* WASI filetype values. */
enum {
    WSFS_FILETYPE_UNKNOWN = 0,
    WSFS_FILETYPE_DIRECTORY = 3,
    WSFS_FILETYPE_REGULAR_FILE = 4,
    WSFS_FILETYPE_SYMBOLIC_LINK = 7,
};

/* WASI filestat, field for field. */
typedef struct wsfs_filestat {
    uint64_t dev;
    uint64_t ino;
    uint8_t filetype;
    uint64_t nlink;
    uint64_t size;
    uint64_t atim;
    uint64_t mtim;
    uint64_t ctim;
} wsfs_filestat;

/* Limits; a zero field takes its default (docs/WORKSPACE.md "Limits"). */
typedef struct wsfs_limits {
    uint64_t max_bytes;    /* quota: file sizes + symlink targets (256 MiB) */
    uint64_t max_inodes;   /* inodes, the root included (65,536) */
    uint32_t max_path;     /* bytes of a path, also after symlink expansion (4,096) */
    uint32_t max_name;     /* bytes of one name (255) */
    uint32_t max_symlinks; /* symlinks followed in one resolution (40) */
} wsfs_limits;

#define WSFS_DEFAULT_MAX_BYTES (256ull << 20)
#define WSFS_DEFAULT_MAX_INODES 65536u
#define WSFS_DEFAULT_MAX_PATH 4096u
#define WSFS_DEFAULT_MAX_NAME 255u
#define WSFS_DEFAULT_MAX_SYMLINKS 40u
#define WSFS_BLOCK_SIZE 16384u /* bytes per content block, the unit of sharing */
#define WSFS_ROOT_INO 1u

/* The owner's clock (the sandbox's virtual clock), nanoseconds; NULL reads as 0. */
typedef uint64_t (*wsfs_clock_fn)(void *ctx);

typedef struct wsfs_config {
    wsfs_limits limits;
    wsfs_clock_fn clock;
    void *clock_ctx;
} wsfs_config;

/* Errors of the constructor and the parser. */
typedef enum wsfs_status {
    WSFS_OK = 0,
    WSFS_ERR_MALFORMED, /* the bytes are not a canonical WSFS image */
    WSFS_ERR_LIMIT,     /* a well-formed image that exceeds the configured limits */
    WSFS_ERR_NOMEM,
    WSFS_ERR_ARG, /* a caller's mistake (NULL, bad config) */
} wsfs_status;

typedef struct wsfs_error {
    wsfs_status code;
    char message[192];
} wsfs_error;

typedef struct wsfs wsfs;

/* ---- lifetime ---------------------------------------------------------------------- */
/* A file system with only the root directory (ino 1, times from the clock). */
wsfs_status wsfs_new(const wsfs_config *cfg, wsfs **out, wsfs_error *err);
void wsfs_free(wsfs *fs);
/* A fork: the same state, sharing everything copy-on-write. O(1). NULL on no memory. */
wsfs *wsfs_fork(const wsfs *fs);
/* The clock of a fork or a parsed file system (the fork keeps its origin's). */
void wsfs_set_clock(wsfs *fs, wsfs_clock_fn clock, void *ctx);
const wsfs_limits *wsfs_get_limits(const wsfs *fs);

/* ---- paths ------------------------------------------------------------------------- */
/* Paths are byte strings (ptr, len) relative to a directory inode; a leading '/' starts at
 * the root, ".." of the root is the root. follow: whether a final symlink is followed. */
wsfs_errno wsfs_lookup(const wsfs *fs, uint64_t dir, const char *path, size_t len, bool follow, uint64_t *ino);

enum {
    WSFS_O_CREAT = 1,     /* create a regular file if missing */
    WSFS_O_EXCL = 2,      /* with CREAT: EEXIST if it exists */
    WSFS_O_TRUNC = 4,     /* size 0 (regular files; EISDIR on a directory) */
    WSFS_O_DIRECTORY = 8, /* ENOTDIR unless a directory */
    WSFS_O_NOFOLLOW = 16, /* a final symlink is not followed: ELOOP (as O_NOFOLLOW) */
};
/* Opens (or creates) and gives the inode; it does not pin (the WASI layer pins). */
wsfs_errno wsfs_open(wsfs *fs, uint64_t dir, const char *path, size_t len, uint32_t oflags, uint64_t *ino);
wsfs_errno wsfs_mkdir(wsfs *fs, uint64_t dir, const char *path, size_t len);
wsfs_errno wsfs_unlink(wsfs *fs, uint64_t dir, const char *path, size_t len);
wsfs_errno wsfs_rmdir(wsfs *fs, uint64_t dir, const char *path, size_t len);
wsfs_errno wsfs_rename(wsfs *fs, uint64_t odir, const char *opath, size_t olen, uint64_t ndir, const char *npath,
                       size_t nlen);
wsfs_errno wsfs_symlink(wsfs *fs, const char *target, size_t tlen, uint64_t dir, const char *path, size_t len);
/* Copies up to cap bytes of the target (a short buffer truncates, as readlink(2) does);
 * *n is the target's full length, so that the caller sees the truncation. */
wsfs_errno wsfs_readlink(const wsfs *fs, uint64_t dir, const char *path, size_t len, char *buf, size_t cap,
                         size_t *n);
/* A hard link to what opath names (follow: its final symlink is followed); EPERM for a directory. */
wsfs_errno wsfs_link(wsfs *fs, uint64_t odir, const char *opath, size_t olen, bool follow, uint64_t ndir,
                     const char *npath, size_t nlen);
wsfs_errno wsfs_stat_path(const wsfs *fs, uint64_t dir, const char *path, size_t len, bool follow,
                          wsfs_filestat *st);

/* ---- inodes ------------------------------------------------------------------------ */
wsfs_errno wsfs_stat(const wsfs *fs, uint64_t ino, wsfs_filestat *st);
/* Open references: an inode with no link left lives while pinned (an open descriptor). */
wsfs_errno wsfs_pin(wsfs *fs, uint64_t ino);
wsfs_errno wsfs_unpin(wsfs *fs, uint64_t ino);
wsfs_errno wsfs_pread(const wsfs *fs, uint64_t ino, void *buf, size_t len, uint64_t off, size_t *n);
wsfs_errno wsfs_pwrite(wsfs *fs, uint64_t ino, const void *buf, size_t len, uint64_t off, size_t *n);
wsfs_errno wsfs_truncate(wsfs *fs, uint64_t ino, uint64_t size);
/* Makes the file at least off + len bytes long (fd_allocate). */
wsfs_errno wsfs_allocate(wsfs *fs, uint64_t ino, uint64_t off, uint64_t len);
/* WASI fstflags: the same bits. */
enum { WSFS_ATIM = 1, WSFS_ATIM_NOW = 2, WSFS_MTIM = 4, WSFS_MTIM_NOW = 8 };
wsfs_errno wsfs_set_times(wsfs *fs, uint64_t ino, uint64_t atim, uint64_t mtim, uint32_t fstflags);

/* One directory entry as fd_readdir gives it. name points into the file system and is
 * valid until the next change to it. */
typedef struct wsfs_dirent {
    uint64_t next; /* the cookie that resumes after this entry */
    uint64_t ino;
    uint8_t filetype;
    uint32_t namelen;
    const char *name;
} wsfs_dirent;
/* Entries of a directory from cookie on (0: the start, "." and ".." first, then names in
 * byte order); at most max, *n of them. Cookies stay valid across unrelated changes: a
 * resumed listing gives every entry that was there throughout exactly once. */
wsfs_errno wsfs_readdir(const wsfs *fs, uint64_t dir, uint64_t cookie, wsfs_dirent *out, size_t max, size_t *n);

/* ---- accounting --------------------------------------------------------------------- */
typedef struct wsfs_usage {
    uint64_t bytes;  /* counted against max_bytes */
    uint64_t inodes; /* counted against max_inodes */
    uint64_t next_ino;
    /* shared by an origin and all its forks (the same family): what exists in memory */
    int64_t family_blocks; /* content blocks allocated */
    int64_t family_nodes;  /* inode-table and block-table nodes */
    int64_t family_inodes; /* inode objects (versions) */
} wsfs_usage;
void wsfs_get_usage(const wsfs *fs, wsfs_usage *u);

/* ---- diff --------------------------------------------------------------------------- */
typedef enum wsfs_change_kind { WSFS_ADDED, WSFS_REMOVED, WSFS_CHANGED, WSFS_MOVED } wsfs_change_kind;
typedef struct wsfs_change {
    wsfs_change_kind kind;
    uint64_t ino;
    uint8_t filetype;
    const char *path;     /* in `to` (in `from` for REMOVED); "" for an unlinked open inode */
    const char *old_path; /* MOVED (and CHANGED when also moved): the path in `from` */
    uint64_t bytes;       /* regular files: byte offsets whose content differs */
} wsfs_change;
typedef bool (*wsfs_change_fn)(void *ctx, const wsfs_change *c); /* false stops */
/* Changes from `from` to `to`, in inode order; shared subtrees and blocks are skipped
 * without being read. Directories are listed only when added, removed or moved. */
wsfs_errno wsfs_diff(const wsfs *from, const wsfs *to, wsfs_change_fn fn, void *ctx);

/* ---- canonical serialization (docs/WORKSPACE.md "Serialized form") --------------------- */
/* The canonical bytes of the whole state (malloc'd). */
wsfs_status wsfs_serialize(const wsfs *fs, uint8_t **out, size_t *len, wsfs_error *err);
/* A file system from canonical bytes, checked completely first; cfg gives limits and clock. */
wsfs_status wsfs_parse(const uint8_t *data, size_t len, const wsfs_config *cfg, wsfs **out, wsfs_error *err);

/* The regular files' contents in a canonical image (skeleton false) or in its skeleton, the
 * image with every file's content cut out (skeleton true): fn gets each file's inode, the
 * offset of its content (skeleton: where it was cut) and its size, in image order. A walk
 * by structure only, every length checked against the bytes; WSFS_ERR_MALFORMED when the
 * bytes are not so structured or fn returns false. Not the full parser's checks. */
typedef bool (*wsfs_file_fn)(void *ctx, uint64_t ino, size_t at, uint64_t size);
wsfs_status wsfs_walk_files(const uint8_t *data, size_t len, bool skeleton, wsfs_file_fn fn, void *ctx,
                            wsfs_error *err);

/* ---- deltas (docs/SNAPSHOT_FORMAT.md "WSFS in a delta") ---------------------------------- */
/* The delta from canonical image base to canonical image child (*out malloc'd): removed
 * inodes, added or changed records, and for a file that stays a file only its new fields,
 * size and the byte ranges that differ. Both are walked by structure, not fully parsed. */
wsfs_status wsfs_delta_encode(const uint8_t *base, size_t blen, const uint8_t *child, size_t clen, uint8_t **out,
                              size_t *len, wsfs_error *err);
/* The child's canonical bytes from base and a delta (*out malloc'd), strictly: truncation,
 * wrong order, a base that is not the delta's, any inconsistency is WSFS_ERR_MALFORMED with
 * the byte offset and the rule; nothing is allocated for the result before all is checked. */
wsfs_status wsfs_delta_apply(const uint8_t *base, size_t blen, const uint8_t *delta, size_t dlen, uint8_t **out,
                             size_t *len, wsfs_error *err);

/* The same bytes as wsfs_delta_encode of the two file systems' serializations, from the
 * file systems themselves: what they share (a fork and its origin) is skipped unread, so
 * the cost follows the changes. */
wsfs_status wsfs_delta_encode_fs(const wsfs *base, const wsfs *child, uint8_t **out, size_t *len, wsfs_error *err);
/* The child as a fork of base with the delta applied in place (*out; shares all base
 * inodes the delta does not name), checked as wsfs_parse checks an image (base's limits);
 * its serialization is what wsfs_delta_apply gives. WSFS_ERR_MALFORMED / _LIMIT / _NOMEM
 * with the byte offset and the rule. */
wsfs_status wsfs_delta_apply_fs(const wsfs *base, const uint8_t *delta, size_t dlen, wsfs **out, wsfs_error *err);

const char *wsfs_errno_name(wsfs_errno e);

#endif
