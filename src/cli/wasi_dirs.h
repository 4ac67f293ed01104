/*
 * `ri run --dir HOST[::GUEST]` for WASI commands: host directories copied into the
 * sandbox's workspace before the run, and (--dir-writeback) the workspace's version
 * written back afterwards. The sandbox itself never touches host files.
 */
#ifndef RI_CLI_WASI_DIRS_H
#define RI_CLI_WASI_DIRS_H

#include <stdbool.h>

struct wsfs;

typedef struct ri_wasi_dir {
    const char *host;  /* as given */
    char *guest;       /* normalized absolute workspace path ("/", "/data"), malloc'd */
} ri_wasi_dir;

/* dir + "/" + name (one slash), malloc'd; NULL on out of memory. */
char *ri_path_join(const char *dir, const char *name);

/* Parses HOST[::GUEST]; GUEST defaults to HOST under "/" ("data" -> "/data", "." -> "/").
 * A usage error is printed and its exit status returned. */
int ri_wasi_dir_parse(const char *cmd, const char *spec, ri_wasi_dir *out);

/* Copies HOST's tree (regular files, directories, symlinks as symlinks) into the
 * workspace at GUEST, in name order; a special file is refused. RI_EXIT_OK, or the exit
 * status after a message on stderr. */
int ri_wasi_dir_copy_in(const char *cmd, struct wsfs *fs, const ri_wasi_dir *d);

/* Makes HOST's tree what the workspace holds under GUEST: new and changed files written
 * atomically, symlinks replaced, entries the workspace no longer has removed. */
int ri_wasi_dir_write_back(const char *cmd, const struct wsfs *fs, const ri_wasi_dir *d);

#endif
