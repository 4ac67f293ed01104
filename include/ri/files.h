/*
 * ri files: the host's access to a sandbox's workspace (docs/SANDBOX.md "Files").
 *
 * A sandbox created with enable_wasi has a workspace file system that the WASI program
 * sees as "/" (docs/WORKSPACE.md). These functions let the embedder put files in before
 * a run, read what the program left, list, stat, make directories, remove and rename,
 * without a WASI program and without touching the host's file system.
 *
 * Paths are absolute workspace paths, NUL-terminated: "/", "/data/in.txt". Empty
 * components ("//") and a trailing "/" are allowed; "." and ".." components are refused
 * (RI_FILE_BAD_PATH), so that a path names one place without resolution rules to guess.
 * Symbolic links the program made are followed in directory components and resolve
 * inside the workspace only (an absolute target starts at the workspace's root, ".." of
 * the root is the root): no path leaves the workspace. The workspace's limits (quota of
 * bytes, inodes, path and name lengths) apply as they do to the program.
 *
 * When: the sandbox must not be running a call (a host function calling these during its
 * call is refused, RI_FILE_BUSY). A paused call (status suspended) is allowed: the files
 * change under the paused program as under a process another one shares a disk with; its
 * open descriptors keep their files (a removed open file stays readable to it until
 * closed). Changes are part of the state: snapshots, checkpoints and forks taken after
 * them carry them.
 *
 * Errors are values: false, and err (may be NULL) gets code RI_SANDBOX_FILE_ERROR, the
 * kind's name in err->trap_kind ("not_found", ...; ri_file_error_kind reads it back) and
 * a message naming the path. A sandbox without WASI has no workspace: RI_FILE_NO_WORKSPACE.
 * A destroyed sandbox: RI_SANDBOX_INSTANCE_DESTROYED.
 */
#ifndef RI_FILES_H
#define RI_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/api.h"
#include "ri/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of RI_SANDBOX_FILE_ERROR (err->trap_kind holds the name in quotes). */
typedef enum ri_file_errkind {
    RI_FILE_OK = 0,
    RI_FILE_NOT_FOUND,        /* "not_found": a component is missing */
    RI_FILE_NOT_A_DIRECTORY,  /* "not_a_directory": a component (or the listed path) is not a directory */
    RI_FILE_IS_A_DIRECTORY,   /* "is_a_directory": a file operation on a directory */
    RI_FILE_EXISTS,           /* "exists": RI_FILE_EXCLUSIVE, or mkdir of an existing path */
    RI_FILE_NOT_EMPTY,        /* "not_empty": remove of a non-empty directory without recursive */
    RI_FILE_QUOTA_EXCEEDED,   /* "quota_exceeded": the workspace's bytes or inodes limit */
    RI_FILE_BAD_PATH,         /* "bad_path": not absolute, ".", "..", too long, a name too long */
    RI_FILE_SYMLINK_LOOP,     /* "symlink_loop": too many symbolic links */
    RI_FILE_NO_WORKSPACE,     /* "no_workspace": the sandbox does not enable WASI */
    RI_FILE_BUSY,             /* "busy": a call is running, or the root is removed or renamed */
    RI_FILE_INVALID,          /* "invalid": e.g. a directory renamed into itself */
    RI_FILE_NO_MEMORY,        /* "out_of_memory" */
} ri_file_errkind;

/* "not_found", ...; "ok" for RI_FILE_OK. */
RI_API const char *ri_file_errkind_name(ri_file_errkind kind);
/* The kind of an error these functions returned (RI_FILE_OK when err is not a FILE_ERROR). */
RI_API ri_file_errkind ri_file_error_kind(const ri_sandbox_error *err);

/* WASI's file types (the same values). */
typedef enum ri_file_type {
    RI_FILE_TYPE_UNKNOWN = 0,
    RI_FILE_TYPE_DIRECTORY = 3,
    RI_FILE_TYPE_REGULAR = 4,
    RI_FILE_TYPE_SYMLINK = 7,
} ri_file_type;

/* "directory", "file", "symlink", "unknown". */
RI_API const char *ri_file_type_name(ri_file_type type);

typedef struct ri_file_stat {
    ri_file_type type;
    uint64_t size;         /* bytes of a file, of a symlink's target; 0 for a directory */
    uint64_t ino;          /* the workspace's inode number (never reused) */
    uint64_t nlink;
    uint64_t mtime_ns;     /* the sandbox's virtual clock, not the host's */
    uint64_t ctime_ns;
    uint64_t reserved[4];  /* zero */
} ri_file_stat;

/* ri_sandbox_file_put and ri_sandbox_file_mkdir flags. The workspace has no permission
 * bits or owners: what a file is put with is these. */
#define RI_FILE_PARENTS 1u   /* create missing parent directories (as mkdir -p) */
#define RI_FILE_EXCLUSIVE 2u /* put: fail with RI_FILE_EXISTS if the path exists; mkdir: an
                                existing directory is an error even with RI_FILE_PARENTS */

/* Writes len bytes as the file at path, replacing a file (or symlink) there atomically:
 * the bytes go to a new file in the same directory, which then takes the name; a failure
 * leaves the old file as it was. The new file counts against the quota while both exist.
 * A directory at path: RI_FILE_IS_A_DIRECTORY. */
RI_API bool ri_sandbox_file_put(ri_sandbox *sb, const char *path, const uint8_t *data, size_t len, uint32_t flags,
                                ri_sandbox_error *err);
/* The file's bytes (a final symlink followed): *out allocated (ri_free; NULL when empty),
 * *len its length. */
RI_API bool ri_sandbox_file_get(ri_sandbox *sb, const char *path, uint8_t **out, size_t *len, ri_sandbox_error *err);
/* What path names (a final symlink not followed: its type is RI_FILE_TYPE_SYMLINK). */
RI_API bool ri_sandbox_file_stat(ri_sandbox *sb, const char *path, ri_file_stat *st, ri_sandbox_error *err);

typedef struct ri_file_entry {
    char *name;            /* NUL-terminated (names hold no NUL) */
    ri_file_type type;
    uint64_t size;         /* as ri_file_stat's */
    uint64_t reserved[2];
} ri_file_entry;

/* The entries of a directory (a final symlink followed), without "." and "..", sorted by
 * the bytes of their names: the same tree gives the same list everywhere. *out: an array
 * of *n entries (NULL when empty), freed with ri_file_list_free. */
RI_API bool ri_sandbox_file_list(ri_sandbox *sb, const char *path, ri_file_entry **out, size_t *n,
                                 ri_sandbox_error *err);
RI_API void ri_file_list_free(ri_file_entry *list, size_t n);

/* Makes a directory (flags: RI_FILE_PARENTS, RI_FILE_EXCLUSIVE). Without RI_FILE_PARENTS
 * an existing path is RI_FILE_EXISTS; with it, an existing directory is fine. */
RI_API bool ri_sandbox_file_mkdir(ri_sandbox *sb, const char *path, uint32_t flags, ri_sandbox_error *err);
/* Removes a file, a symlink (not what it names) or an empty directory; recursive: a
 * directory with everything below it. A recursive removal that fails midway (out of
 * memory only) leaves what it had not reached. The root cannot be removed (RI_FILE_BUSY;
 * recursive on "/" empties it instead). */
RI_API bool ri_sandbox_file_remove(ri_sandbox *sb, const char *path, bool recursive, ri_sandbox_error *err);
/* POSIX rename: replaces a file, or an empty directory with a directory. */
RI_API bool ri_sandbox_file_rename(ri_sandbox *sb, const char *from, const char *to, ri_sandbox_error *err);

/* ---- what changed in the files between two snapshots --------------------------------- */

typedef enum ri_file_change_kind {
    RI_FILE_ADDED = 0,
    RI_FILE_REMOVED = 1,
    RI_FILE_CHANGED = 2,   /* a file's bytes or a symlink's target, at the same path */
    RI_FILE_MOVED = 3,     /* the same file (inode) under another path, its content unchanged */
} ri_file_change_kind;

/* "added", "removed", "changed", "moved". */
RI_API const char *ri_file_change_kind_name(ri_file_change_kind kind);

typedef struct ri_file_change {
    ri_file_change_kind kind;
    ri_file_type type;
    char *path;            /* in the new workspace (the old one's for REMOVED) */
    char *old_path;        /* MOVED: the path in the old workspace; else NULL */
    uint64_t old_size;     /* 0 when added */
    uint64_t new_size;     /* 0 when removed */
    uint64_t changed_bytes; /* CHANGED files: byte offsets whose content differs, a size difference
                               counting in full; ADDED and REMOVED: the size; MOVED: 0 */
    uint64_t reserved[2];
} ri_file_change;

typedef struct ri_file_diff {
    bool old_has_workspace, new_has_workspace; /* an image without one compares as an empty tree */
    size_t nchanges;
    ri_file_change *changes; /* sorted by path (then kind): directories only when added, removed or moved */
    uint64_t added, removed, changed, moved; /* counts by kind */
    uint64_t reserved[4];
} ri_file_diff;

/* What changed in the workspace from snapshot old_snap to new_snap (full WSNP images of
 * either version; a v1 image or one without WASI has no workspace). Files are matched by
 * inode number, as the workspace keeps them across a sandbox's life: a rename shows as
 * MOVED, a file whose path and bytes both changed as REMOVED (the old path) and ADDED.
 * Free with ri_file_diff_free. */
RI_API bool ri_snapshot_diff_files(const uint8_t *old_snap, size_t old_len, const uint8_t *new_snap, size_t new_len,
                                   ri_file_diff *out, ri_sandbox_error *err);
/* The same from a snapshot (old) to the live sandbox's workspace (new). */
RI_API bool ri_sandbox_diff_files(ri_sandbox *sb, const uint8_t *snapshot, size_t len, ri_file_diff *out,
                                  ri_sandbox_error *err);
RI_API void ri_file_diff_free(ri_file_diff *diff);
/* The diff as JSON text (an object: oldHasWorkspace, newHasWorkspace, added, removed,
 * changed, moved, and "changes": [{kind, type, path, oldPath, oldSize, newSize,
 * changedBytes}]), allocated (ri_free); NULL on out of memory. */
RI_API char *ri_file_diff_json(const ri_file_diff *diff);

#ifdef __cplusplus
}
#endif
#endif
