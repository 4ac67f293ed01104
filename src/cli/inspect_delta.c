/* `ri inspect` for WSNP v2 delta images (section PRNT): the parent it needs (SHA-256
 * and size), the compression of the full image it rebuilds, and per memory its size and
 * the pages the delta stores (those that differ from the parent). The rest of the state
 * is described once the delta is applied (`ri delta apply`), which needs the parent.
 * Read with the library's delta reader, every payload decompressed, as for a full image. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/inspect_v2.h"
#include "cli/jsonw.h"
#include "cli/output.h"

static const char *compression_name(ri_snap_compression c) { return c == RI_SNAP_COMPRESS_NONE ? "raw" : "zstd"; }

static void print_json(const char *path, size_t size, const ri_snap_delta_info *di, const ri_snap_image *img) {
    char hex[2 * RI_SNAP_SHA256_BYTES + 1], module[2 * RI_SNAP_SHA256_BYTES + 1];
    ri_snap_hex(di->parent_sha256, hex);
    ri_snap_hex(img->meta.module_sha256, module);
    ri_jsonw w;
    ri_jsonw_init(&w, stdout);
    ri_jsonw_object(&w);
    ri_jsonw_key(&w, "file");
    ri_jsonw_str(&w, path);
    ri_jsonw_key(&w, "valid");
    ri_jsonw_bool(&w, true);
    ri_jsonw_key(&w, "format");
    ri_jsonw_str(&w, "WSNP");
    ri_jsonw_key(&w, "version");
    ri_jsonw_u64(&w, RI_SNAP_VERSION);
    ri_jsonw_key(&w, "delta");
    ri_jsonw_bool(&w, true);
    ri_jsonw_key(&w, "totalBytes");
    ri_jsonw_u64(&w, size);
    ri_jsonw_key(&w, "parent");
    ri_jsonw_object(&w);
    ri_jsonw_key(&w, "sha256");
    ri_jsonw_str(&w, hex);
    ri_jsonw_key(&w, "bytes");
    ri_jsonw_u64(&w, di->parent_len);
    ri_jsonw_end(&w);
    ri_jsonw_key(&w, "rebuildsCompression");
    ri_jsonw_str(&w, compression_name(di->compression));
    ri_jsonw_key(&w, "moduleSha256");
    ri_jsonw_str(&w, module);
    ri_jsonw_key(&w, "status");
    ri_jsonw_str(&w, ri_snap_status_name(img->meta.status));
    ri_jsonw_key(&w, "memories");
    ri_jsonw_array(&w);
    for (uint32_t i = 0; i < img->nmemories; i++) {
        ri_jsonw_object(&w);
        ri_jsonw_key(&w, "pages");
        ri_jsonw_u64(&w, img->memories[i].pages);
        ri_jsonw_key(&w, "storedPages");
        ri_jsonw_u64(&w, img->memories[i].present_pages);
        ri_jsonw_key(&w, "payloadBytes");
        ri_jsonw_u64(&w, img->memories[i].payload_len);
        ri_jsonw_end(&w);
    }
    ri_jsonw_end(&w);
    ri_jsonw_end(&w);
    ri_jsonw_finish(&w);
}

static void print_text(const char *path, size_t size, const ri_snap_delta_info *di, const ri_snap_image *img) {
    char hex[2 * RI_SNAP_SHA256_BYTES + 1];
    ri_snap_hex(di->parent_sha256, hex);
    ri_printf_safe(stdout, "%s: WSNP v2 delta image, %zu bytes\n", path, size);
    printf("  parent   sha256:%s, %" PRIu64 " bytes (a full v2 image)\n", hex, di->parent_len);
    printf("  rebuilds a %s image, status %s\n", compression_name(di->compression),
           ri_snap_status_name(img->meta.status));
    for (uint32_t i = 0; i < img->nmemories; i++) {
        const ri_snap_memory *m = &img->memories[i];
        printf("  memory %" PRIu32 " %" PRIu32 " page%s of 64 KiB, %" PRIu32 " stored (differ from the parent), "
               "%" PRIu64 " bytes\n",
               i, m->pages, m->pages == 1 ? "" : "s", m->present_pages, m->payload_len);
    }
    ri_printf_safe(stdout, "  the full state: ri delta apply -o FULL.wsnp PARENT.wsnp %s; ri inspect FULL.wsnp\n",
                   path);
}

int ri_inspect_delta(const char *path, const uint8_t *data, size_t size, bool json, char *why, size_t why_cap) {
    ri_snap_delta_info di;
    ri_snap_image img;
    uint8_t *backing = NULL;
    ri_snap_error err;
    bool ok = ri_snap_delta_read(data, size, &di, &img, &backing, &err) && ri_inspect_verify_pages(&img, &err);
    if (ok) {
        if (json) print_json(path, size, &di, &img);
        else print_text(path, size, &di, &img);
    } else {
        snprintf(why, why_cap, "%s", err.message);
    }
    ri_snap_image_free(&img);
    free(backing);
    return ok ? RI_EXIT_OK : RI_EXIT_INPUT;
}
