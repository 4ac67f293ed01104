/*
 * The file operations of ri/files.h on a workspace itself (a struct wsfs), with or without
 * a sandbox around it: src/sandbox/files.c wraps them for a sandbox, `ri file` uses them on
 * the workspace of a snapshot image. Paths, flags and errors as in ri/files.h.
 */
#ifndef RI_SANDBOX_FILES_WS_H
#define RI_SANDBOX_FILES_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/files.h"

struct wsfs;

bool files_put(struct wsfs *fs, const char *path, const uint8_t *data, size_t len, uint32_t flags,
               ri_sandbox_error *err);
bool files_get(const struct wsfs *fs, const char *path, uint8_t **out, size_t *len, ri_sandbox_error *err);
bool files_stat(const struct wsfs *fs, const char *path, ri_file_stat *st, ri_sandbox_error *err);
bool files_list(const struct wsfs *fs, const char *path, ri_file_entry **out, size_t *n, ri_sandbox_error *err);
bool files_mkdir(struct wsfs *fs, const char *path, uint32_t flags, ri_sandbox_error *err);
bool files_remove(struct wsfs *fs, const char *path, bool recursive, ri_sandbox_error *err);
bool files_rename(struct wsfs *fs, const char *from, const char *to, ri_sandbox_error *err);

#endif
