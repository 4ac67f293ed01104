/* `ri delta create|apply|info`: WSNP v2 delta images as files (docs/SNAPSHOT_FORMAT.md,
 * section PRNT). create writes a full image as the pages that differ from a parent
 * image; apply rebuilds the full image, byte for byte, from the parent and the delta
 * (refusing any other parent); info names a delta's parent. Outputs are written
 * atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/files.h"
#include "cli/output.h"
#include "cli/suggest.h"
#include "ri/sandbox.h"

#define CMD "ri delta"

static void usage(FILE *f) {
    fprintf(f,
            "usage: ri delta create -o OUT PARENT FULL\n"
            "       ri delta apply -o OUT PARENT DELTA\n"
            "       ri delta info DELTA\n"
            "\n"
            "WSNP v2 delta images: a snapshot stored as the memory pages that differ from a\n"
            "parent snapshot, which it names by the SHA-256 of the parent file.\n"
            "\n"
            "  create   write FULL (a v2 snapshot of the same module) as a delta on PARENT;\n"
            "           compressed with zstd unless FULL's pages are stored raw\n"
            "  apply    rebuild the full snapshot from PARENT and DELTA: the same bytes as\n"
            "           the full snapshot the delta was made from. Another parent is refused\n"
            "           (exit 3: \"Snapshot parent mismatch\")\n"
            "  info     print the parent's SHA-256 and length\n"
            "\n"
            "A delta alone is not a snapshot: `ri run --restore`, `ri inspect` and `ri diff`\n"
            "refuse it; apply it first.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE  where to write (atomically)\n"
            "  -h, --help         show this help\n"
            "\n%s",
            ri_exit_codes_help);
}

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

static int read_snapshot(const char *path, blob *b) {
    char why[512];
    int rc = ri_read_file(path, RI_SNAPSHOT_FILE_MAX, &b->data, &b->len, why, sizeof why);
    if (rc != RI_EXIT_OK) return ri_fail(rc, CMD, "%s: %s", path, why);
    return RI_EXIT_OK;
}

/* Whether the FULL image keeps its pages raw (written uncompressed): byte 9 of each
 * memory header says so, but any raw memory is ambiguous (zstd falls back to raw when
 * not smaller), so ask the reader: compressed if any memory is zstd. */
static ri_snap_compression compression_of(const blob *full) {
    ri_snap_image img;
    ri_snap_error e;
    ri_snap_compression c = RI_SNAP_COMPRESS_NONE;
    if (!ri_snap_read(full->data, full->len, &img, &e)) return RI_SNAP_COMPRESS_ZSTD;
    for (uint32_t i = 0; i < img.nmemories; i++)
        if (img.memories[i].encoding == RI_SNAP_ENC_ZSTD) c = RI_SNAP_COMPRESS_ZSTD;
    ri_snap_image_free(&img);
    return c;
}

int ri_cmd_delta(int argc, char **argv) {
    ri_args a;
    ri_args_init(&a, argc, argv);
    const char *mode = NULL, *out = NULL, *pos[2] = {NULL, NULL};
    int npos = 0;
    for (;;) {
        ri_arg arg = ri_args_next(&a);
        if (arg.kind == RI_ARG_END) break;
        if (arg.kind == RI_ARG_POSITIONAL) {
            if (!mode) mode = arg.text;
            else if (npos < 2) pos[npos++] = arg.text;
            else return ri_usage(CMD, "too many arguments");
        } else if (ri_arg_is(&arg, "--help") || ri_arg_is(&arg, "-h")) {
            usage(stdout);
            return ri_finish_output(CMD, RI_EXIT_OK);
        } else if (ri_arg_is(&arg, "--output") || ri_arg_is(&arg, "-o")) {
            out = ri_args_value(&a, &arg);
            if (!out) return ri_usage(CMD, "%s needs a FILE", arg.text);
        } else {
            return ri_unknown_option(CMD, arg.text, usage);
        }
    }
    if (!mode) return ri_usage(CMD, "missing the mode: create, apply or info");
    bool info = strcmp(mode, "info") == 0;
    if (!info && strcmp(mode, "create") != 0 && strcmp(mode, "apply") != 0)
        return ri_usage(CMD, "unknown mode '%s' (create, apply, info)", mode);
    if (npos != (info ? 1 : 2)) return ri_usage(CMD, "%s takes %s", mode, info ? "DELTA" : "PARENT and a file");
    if (!info && !out) return ri_usage(CMD, "%s needs -o OUT", mode);

    blob first = {NULL, 0}, second = {NULL, 0};
    int rc = read_snapshot(pos[0], &first);
    if (rc == RI_EXIT_OK && !info) rc = read_snapshot(pos[1], &second);
    if (rc != RI_EXIT_OK) {
        free(first.data);
        return rc;
    }
    if (info) {
        ri_snap_delta_info di;
        if (!ri_snap_is_delta(first.data, first.len, &di)) {
            free(first.data);
            return ri_fail(RI_EXIT_INPUT, CMD, "%s: not a WSNP v2 delta image", pos[0]);
        }
        char hex[2 * RI_SNAP_SHA256_BYTES + 1];
        ri_snap_hex(di.parent_sha256, hex);
        printf("%s: WSNP v2 delta, %zu bytes; parent sha256:%s, %llu bytes; rebuilds a %s image\n", pos[0],
               first.len, hex, (unsigned long long)di.parent_len,
               di.compression == RI_SNAP_COMPRESS_NONE ? "raw" : "zstd");
        free(first.data);
        return ri_finish_output(CMD, RI_EXIT_OK);
    }
    blob result = {NULL, 0};
    ri_snap_error e;
    bool ok = strcmp(mode, "create") == 0
                  ? ri_snap_delta_encode(first.data, first.len, second.data, second.len, compression_of(&second),
                                         &result.data, &result.len, &e)
                  : ri_snap_delta_apply(first.data, first.len, second.data, second.len, &result.data, &result.len, &e);
    free(first.data);
    free(second.data);
    if (!ok) return ri_fail(e.code == RI_SNAP_ERR_NOMEM ? RI_EXIT_INTERNAL : RI_EXIT_INPUT, CMD, "%s", e.message);
    char why[512];
    rc = ri_write_file_atomic(out, result.data, result.len, why, sizeof why);
    free(result.data);
    if (rc != RI_EXIT_OK) return ri_fail(rc, CMD, "%s: %s", out, why);
    printf("%s: %zu bytes\n", out, result.len);
    return ri_finish_output(CMD, RI_EXIT_OK);
}
