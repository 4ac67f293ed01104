/* `ri file`: a snapshot's workspace in and out (see file_image.h). */
#include "cli/file_image.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/files.h"
#include "cli/output.h"
#include "ri/sandbox.h"
#include "ri/store.h"
#include "workspace/wsfs.h"

static int store_fail(const ri_file_source *s, const ri_snapstore_error *err) {
    return ri_fail(err->code == RI_SNAPSTORE_ERR_INVALID_NAME ? RI_EXIT_USAGE : RI_EXIT_INPUT, s->cmd, "%s", err->message);
}

static int read_bytes(ri_file_source *s) {
    if (!s->store) {
        char why[256];
        int rc = ri_read_file(s->image, RI_SNAPSHOT_FILE_MAX, &s->bytes, &s->len, why, sizeof why);
        return rc == RI_EXIT_OK ? rc : ri_fail(rc, s->cmd, "cannot read '%s': %s", s->image, why);
    }
    ri_snapstore_options o = {false};
    ri_snapstore_error err;
    ri_snapstore *st = ri_snapstore_open(s->store, &o, &err);
    if (!st) return store_fail(s, &err);
    ri_snapstore_image_options io;
    memset(&io, 0, sizeof io);
    io.compress = true;
    bool ok = ri_snapstore_get_image(st, s->image, &io, &s->bytes, &s->len, NULL, &err);
    ri_snapstore_close(st);
    return ok ? RI_EXIT_OK : store_fail(s, &err);
}

int ri_file_source_open(ri_file_source *s, const char *cmd, const char *image, const char *store) {
    memset(s, 0, sizeof *s);
    s->cmd = cmd;
    s->image = image;
    s->store = store;
    int rc = read_bytes(s);
    if (rc != RI_EXIT_OK) return rc;
    ri_sandbox_error verr;
    int version = ri_snapshot_version(s->bytes, s->len, &verr);
    if (version == 0) return ri_fail(RI_EXIT_INPUT, cmd, "%s: %s", image, verr.message);
    if (version == 1)
        return ri_fail(RI_EXIT_INPUT, cmd, "%s: a WSNP v1 image holds memory only, no workspace", image);
    if (ri_snap_is_delta(s->bytes, s->len, NULL))
        return ri_fail(RI_EXIT_INPUT, cmd, "%s: a delta image; rebuild the full image first (ri delta apply)", image);
    ri_snap_image img;
    ri_snap_error e;
    if (!ri_snap_read(s->bytes, s->len, &img, &e)) return ri_fail(RI_EXIT_INPUT, cmd, "%s: %s", image, e.message);
    if (!img.has_wasi) {
        ri_snap_image_free(&img);
        return ri_fail(RI_EXIT_INPUT, cmd,
                       "%s: the image holds no workspace (it is not a snapshot of a WASI sandbox: `ri run "
                       "--snapshot OUT COMMAND.wasm` writes one)", image);
    }
    s->raw = img.workspace_encoding == RI_SNAP_ENC_RAW;
    for (uint32_t i = 0; i < img.nmemories; i++) s->raw = s->raw && img.memories[i].encoding != RI_SNAP_ENC_ZSTD;
    uint8_t *ws = NULL;
    size_t ws_len = 0;
    bool ok = ri_snap_workspace(&img, &ws, &ws_len, &e);
    ri_snap_image_free(&img);
    if (!ok) return ri_fail(RI_EXIT_INPUT, cmd, "%s: %s", image, e.message);
    wsfs_config cfg;
    memset(&cfg, 0, sizeof cfg);
    wsfs_error we;
    wsfs_status st = wsfs_parse(ws, ws_len, &cfg, &s->fs, &we);
    free(ws);
    if (st != WSFS_OK)
        return ri_fail(st == WSFS_ERR_NOMEM ? RI_EXIT_INTERNAL : RI_EXIT_INPUT, cmd, "%s: the workspace: %s", image,
                       we.message);
    return RI_EXIT_OK;
}

void ri_file_source_close(ri_file_source *s) {
    wsfs_free(s->fs);
    free(s->bytes);
    memset(s, 0, sizeof *s);
}

int ri_file_source_save(ri_file_source *s, const char *out, const char **written) {
    *written = out ? out : s->image;
    uint8_t *ws = NULL, *image = NULL;
    size_t ws_len = 0, len = 0;
    wsfs_error we;
    if (wsfs_serialize(s->fs, &ws, &ws_len, &we) != WSFS_OK)
        return ri_fail(RI_EXIT_INTERNAL, s->cmd, "cannot serialize the workspace: %s", we.message);
    ri_snap_error e;
    bool ok = ri_snap_replace_workspace(s->bytes, s->len, ws, ws_len, s->raw ? RI_SNAP_COMPRESS_NONE : RI_SNAP_COMPRESS_ZSTD,
                                        &image, &len, &e);
    free(ws);
    if (!ok) return ri_fail(RI_EXIT_INTERNAL, s->cmd, "cannot write the image: %s", e.message);
    int rc = RI_EXIT_OK;
    if (!s->store) {
        char why[256];
        rc = ri_write_file_atomic(*written, image, len, why, sizeof why);
        if (rc != RI_EXIT_OK) ri_fail(rc, s->cmd, "cannot write '%s': %s", *written, why);
    } else {
        ri_snapstore_options o = {false};
        ri_snapstore_error err;
        ri_snapstore *st = ri_snapstore_open(s->store, &o, &err);
        ri_snapstore_put_options po;
        memset(&po, 0, sizeof po);
        po.replace = out == NULL; /* in place: the snapshot's new version */
        if (!st || !ri_snapstore_put(st, *written, image, len, &po, NULL, NULL, &err)) rc = store_fail(s, &err);
        if (st) ri_snapstore_close(st);
    }
    free(image);
    return rc;
}
