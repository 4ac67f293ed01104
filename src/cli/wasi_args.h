/*
 * A WASI command's arguments and environment in its snapshot images: configuration, not
 * process state, so the library's sections do not hold them; `ri run --snapshot` records
 * them in the optional section RARG (docs/SNAPSHOT_FORMAT.md) so that `ri resume` gives the
 * resumed process the same ones. Layout, little-endian: u32 argc, argc times (u32 n, n
 * bytes), u32 nenv, nenv times (u32 n, n bytes "KEY=VALUE").
 */
#ifndef RI_CLI_WASI_ARGS_H
#define RI_CLI_WASI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/snapshot.h"

#define RI_WASI_ARGS_TAG "RARG"

typedef struct ri_wasi_args {
    char **argv; /* argc strings, NUL-terminated, malloc'd */
    uint32_t argc;
    char **env;
    uint32_t nenv;
} ri_wasi_args;

/* image with section RARG set to argv and env: *out malloc'd; false on out of memory or
 * an image that does not read (why). */
bool ri_wasi_args_attach(const uint8_t *image, size_t len, const char *const *argv, uint32_t argc,
                         const char *const *env, uint32_t nenv, uint8_t **out, size_t *out_len, char *why,
                         size_t why_cap);
/* The image's RARG (img read from data); an image without one: none (argc 0). false with
 * why when it is malformed. */
bool ri_wasi_args_read(const ri_snap_image *img, const uint8_t *data, ri_wasi_args *out, char *why, size_t why_cap);
void ri_wasi_args_free(ri_wasi_args *a);

#endif
