/*
 * Whole-file reads with size caps, and atomic writes (a temporary file in the same
 * directory, fsync, rename, fsync of the directory): a reader never sees half a file,
 * and a crash leaves either the old file or the new one.
 */
#ifndef RI_CLI_FILES_H
#define RI_CLI_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Reads path into *data (malloc'd, never NULL on success, even when empty) and *len.
 * Files over max_len bytes are refused without being read; pipes and devices are read
 * up to 64 MiB at most. Returns RI_EXIT_OK, or
 * RI_EXIT_INPUT (cannot open or read, too large) / RI_EXIT_INTERNAL (out of memory)
 * with a message in why. */
int ri_read_file(const char *path, size_t max_len, uint8_t **data, size_t *len,
                 char *why, size_t why_cap);

/* Writes data to path atomically. Returns RI_EXIT_OK, or RI_EXIT_INPUT (cannot write) /
 * RI_EXIT_INTERNAL (out of memory) with a message in why; on failure no temporary file
 * is left behind and an existing file at path is untouched. */
int ri_write_file_atomic(const char *path, const uint8_t *data, size_t len,
                         char *why, size_t why_cap);

#endif
