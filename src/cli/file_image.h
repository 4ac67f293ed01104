/*
 * `ri file`: the workspace of a snapshot, from an image file or a store snapshot, parsed
 * into a file system to read or change, and written back as a new image (a file written
 * atomically, or a snapshot of the store).
 */
#ifndef RI_CLI_FILE_IMAGE_H
#define RI_CLI_FILE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wsfs;

typedef struct ri_file_source {
    const char *cmd;        /* "ri file ls", for messages */
    const char *image;      /* the image's path, or the store snapshot's name */
    const char *store;      /* --store DIR, or NULL */
    uint8_t *bytes;         /* the image */
    size_t len;
    struct wsfs *fs;        /* its workspace */
    bool raw;               /* written uncompressed: the new image is too */
} ri_file_source;

/* Reads the image and parses its workspace; RI_EXIT_OK, or the exit status after a
 * message (a corrupt image, a delta, a v1 image, an image without a workspace). */
int ri_file_source_open(ri_file_source *s, const char *cmd, const char *image, const char *store);
void ri_file_source_close(ri_file_source *s);

/* Writes the image with the changed workspace: to out (a path; or, with a store, a new
 * snapshot's name), or in place of the source when out is NULL. *written: where. */
int ri_file_source_save(ri_file_source *s, const char *out, const char **written);

#endif
