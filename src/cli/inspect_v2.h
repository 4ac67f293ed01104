/* `ri inspect` for WSNP v2 images (inspect_v2.c); cmd_inspect.c dispatches on the
 * version byte and describes v1 itself. */
#ifndef RI_CLI_INSPECT_V2_H
#define RI_CLI_INSPECT_V2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ri/sandbox.h"

/* Describes the image on stdout (JSON or text). For an invalid image prints nothing,
 * writes the reason into why and returns RI_EXIT_INPUT. */
int ri_inspect_v2(const char *path, const uint8_t *data, size_t size, bool json, char *why, size_t why_cap);
/* The same for a delta image (PRNT; inspect_delta.c): its parent and the pages it stores. */
int ri_inspect_delta(const char *path, const uint8_t *data, size_t size, bool json, char *why, size_t why_cap);
/* Streams every stored page of every memory: false when a payload does not decompress
 * to exactly the stored pages. */
bool ri_inspect_verify_pages(const ri_snap_image *img, ri_snap_error *err);

#endif
