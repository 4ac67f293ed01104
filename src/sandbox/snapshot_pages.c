/*
 * Delta images written from the live sandbox, for callers that know which pages changed
 * (the server's checkpoints): the pages written since the memory's backing image (the
 * last in-memory checkpoint, found through the engine's page tracking in O(pages written)),
 * and a WSNP v2 delta storing only a given page set. Unlike ri_sandbox_snapshot_delta no
 * full image is made or compared: the cost is that of the pages stored. Given the parent's
 * state as a checkpoint, the workspace too is stored as the changes from the parent's.
 */
#include <stdlib.h>
#include <string.h>

#include "sandbox_internal.h"
#include "wasi/wasi.h"
#include "workspace/wsfs.h"

static ri_memory *only_memory(ri_sandbox *sb, ri_sandbox_error *err) {
    if (!sb_snapshot_allowed(sb, err)) return NULL;
    ri_instance *inst = sb->image->instance;
    if (ri_instance_memory_count(inst) != 1) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot track written pages: the instance has %u memories, not 1",
                     ri_instance_memory_count(inst));
        return NULL;
    }
    return ri_instance_memory(inst, 0);
}

int64_t ri_sandbox_written_pages(ri_sandbox *sb, uint8_t *bitmap, size_t bitmap_len, uint32_t *memory_pages,
                                 ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (memory_pages) *memory_pages = 0;
    if (!sb) return sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_written_pages: sandbox is NULL"), -1;
    ri_memory *mem = only_memory(sb, err);
    if (!mem) return -1;
    uint32_t pages = ri_memory_pages(mem);
    if (memory_pages) *memory_pages = pages;
    if (bitmap && bitmap_len < ((size_t)pages + 7) / 8) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "ri_sandbox_written_pages: a bitmap of %zu bytes cannot hold %u pages", bitmap_len, pages);
        return -1;
    }
    if (bitmap) memset(bitmap, 0, ((size_t)pages + 7) / 8);
    int64_t n = ri_memory_written_pages(mem, 0, bitmap);
    if (n < 0) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot find the pages written (pagemap read failed)");
    return n;
}

static bool snapshot_pages(ri_sandbox *sb, const ri_snapshot_options *opts, const uint8_t *select, size_t select_len,
                           const uint8_t parent_sha256[32], uint64_t parent_len, const ri_checkpoint *parent_state,
                           uint8_t **out, size_t *out_len, ri_sandbox_error *err) {
    ri_sandbox_error scratch;
    if (!err) err = &scratch;
    sb_error_clear(err);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!sb || !select || !parent_sha256 || !out || !out_len) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "ri_sandbox_snapshot_pages: a NULL argument");
        return false;
    }
    if (opts && opts->format == RI_SNAPSHOT_V1) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: a delta is a WSNP v2 image, not v1");
        return false;
    }
    ri_memory *mem = only_memory(sb, err);
    if (!mem) return false;
    uint32_t pages = ri_memory_pages(mem);
    if (select_len < ((size_t)pages + 7) / 8) {
        sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR,
                     "ri_sandbox_snapshot_pages: a page set of %zu bytes cannot cover %u pages", select_len, pages);
        return false;
    }
    ri_snap_meta meta;
    if (!sb_snapshot_meta(sb, &meta, err)) return false;
    ri_snap_write_options w;
    memset(&w, 0, sizeof w);
    w.compression = opts && !opts->uncompressed ? RI_SNAP_COMPRESS_ZSTD : RI_SNAP_COMPRESS_NONE;
    if (!opts) w.compression = RI_SNAP_COMPRESS_ZSTD;
    if (opts && opts->include_module) w.module = ri_module_bytes(sb->image->module, &w.module_len);
    ri_snap_delta_target target;
    memset(&target, 0, sizeof target);
    memcpy(target.parent_sha256, parent_sha256, RI_SNAP_SHA256_BYTES);
    target.parent_len = parent_len;
    const uint8_t *sets[1] = {select};
    target.select = sets;
    target.nselect = 1;
    /* The workspace: the changes from the parent state's when there is one (found by
     * walking both trees, what they share skipped), else whole; and the process state. */
    wsfs *base_ws = parent_state && parent_state->wasi ? ri_wasi_workspace(parent_state->wasi) : NULL;
    wsfs *ws = sb->wasi ? ri_wasi_workspace(sb->wasi) : NULL;
    uint8_t *ws_delta = NULL;
    size_t ws_delta_len = 0;
    if (base_ws && ws) {
        wsfs_error we;
        if (wsfs_delta_encode_fs(base_ws, ws, &ws_delta, &ws_delta_len, &we) != WSFS_OK) {
            sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: %s", we.message);
            return false;
        }
        target.workspace_delta = ws_delta;
        target.workspace_delta_len = ws_delta_len;
    }
    sb_wasi_bytes wasi;
    if (!(ws_delta ? sb_wasi_state_options(sb, &w, &wasi, err) : sb_wasi_snapshot_options(sb, &w, &wasi, err))) {
        free(ws_delta);
        return false;
    }
    ri_snap_call call;
    memset(&call, 0, sizeof call);
    if (sb->pending && !sb_snapshot_call(sb, &call, err)) {
        sb_wasi_bytes_free(&wasi);
        free(ws_delta);
        return false;
    }
    ri_snap_error e;
    bool ok = ri_snap_write_delta(sb->image->instance, &meta, &w, sb->pending ? &call : NULL, &target, out, out_len,
                                  &e);
    ri_snap_call_free(&call);
    sb_wasi_bytes_free(&wasi);
    free(ws_delta);
    if (!ok) sb_error_set(err, RI_SANDBOX_SNAPSHOT_ERROR, "Cannot snapshot: %s", e.message);
    return ok;
}

bool ri_sandbox_snapshot_pages(ri_sandbox *sb, const ri_snapshot_options *opts, const uint8_t *select,
                               size_t select_len, const uint8_t parent_sha256[32], uint64_t parent_len, uint8_t **out,
                               size_t *out_len, ri_sandbox_error *err) {
    return snapshot_pages(sb, opts, select, select_len, parent_sha256, parent_len, NULL, out, out_len, err);
}

bool ri_sandbox_snapshot_pages_on(ri_sandbox *sb, const ri_snapshot_options *opts, const uint8_t *select,
                                  size_t select_len, const uint8_t parent_sha256[32], uint64_t parent_len,
                                  const ri_checkpoint *parent_state, uint8_t **out, size_t *out_len,
                                  ri_sandbox_error *err) {
    return snapshot_pages(sb, opts, select, select_len, parent_sha256, parent_len, parent_state, out, out_len, err);
}

bool ri_sandbox_backed_by(ri_sandbox *sb, const ri_checkpoint *cp) {
    if (!sb || !cp || !sb->image || !sb->image->instance) return false;
    ri_instance *inst = sb->image->instance;
    if (cp->nmemories != ri_instance_memory_count(inst)) return false;
    for (uint32_t i = 0; i < cp->nmemories; i++)
        if (ri_memory_backing(ri_instance_memory(inst, i)) != cp->memories[i]) return false;
    return true;
}
