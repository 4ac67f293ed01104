/*
 * Whole-file reads with size caps, and atomic writes (a temporary file in the same
 * directory, fsync, rename, fsync of the directory): a reader never sees half a file,
 * and a crash leaves either the old file or the new one.
 */
#ifndef RI_CLI_FILES_H
#define RI_CLI_FILES_H

#include <stddef.h>
#include <stdint.h>

/* The largest files the commands read: a WSNP image (v1: 13 bytes of header, a memory
 * and a state of up to 4 GiB each), a module (the engine's own limit, 256 MiB, speaks
 * first and more precisely). */
#define RI_SNAPSHOT_FILE_MAX ((size_t)13 + 2 * (size_t)UINT32_MAX)
#define RI_MODULE_FILE_MAX ((size_t)1 << 30)

/* Reads path into *data (malloc'd, never NULL on success, even when empty) and *len.
 * Files over max_len bytes are refused without being read; pipes and devices are read
 * up to 64 MiB at most. Returns RI_EXIT_OK, or
 * RI_EXIT_INPUT (cannot open or read, too large) / RI_EXIT_INTERNAL (out of memory)
 * with a message in why. */
int ri_read_file(const char *path, size_t max_len, uint8_t **data, size_t *len,
                 char *why, size_t why_cap);

/* ri_read_file of a module (up to RI_MODULE_FILE_MAX), refusing WebAssembly text with a
 * message that says how to compile it. */
int ri_read_module(const char *path, uint8_t **data, size_t *len, char *why, size_t why_cap);

/* Writes data to path atomically. Returns RI_EXIT_OK, or RI_EXIT_INPUT (cannot write) /
 * RI_EXIT_INTERNAL (out of memory) with a message in why; on failure no temporary file
 * is left behind and an existing file at path is untouched. */
int ri_write_file_atomic(const char *path, const uint8_t *data, size_t len,
                         char *why, size_t why_cap);

#endif
