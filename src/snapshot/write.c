/*
 * ri_snap_write: an instance and its meta as a canonical WSNP v2 image. Canonical
 * means the bytes are a function of the state and the options alone: the sections
 * in a fixed order, every reserved byte zero, references as function indices (never
 * pointers), zero pages omitted by one rule, zstd at one level with every frame
 * parameter fixed, and nothing about the writing itself (no time, no host, no build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot_internal.h"

static void write_meta(snap_buf *b, const ri_instance *inst, const ri_snap_meta *meta) {
    size_t at = snap_buf_begin_section(b, SNAP_TAG_META, SNAP_FLAG_REQUIRED);
    snap_buf_put(b, meta->module_sha256, RI_SNAP_SHA256_BYTES);
    snap_buf_u64(b, meta->module_size);
    snap_buf_u32(b, (uint32_t)meta->status);
    snap_buf_u32(b, meta->prng_state);
    snap_buf_u64(b, meta->gas_used);
    snap_buf_u64(b, (uint64_t)meta->event_timestamp);
    snap_buf_u32(b, ri_instance_func_count(inst));
    snap_buf_u32(b, ri_instance_memory_count(inst));
    snap_buf_u32(b, ri_instance_table_count(inst));
    snap_buf_u32(b, ri_instance_global_count(inst));
    snap_buf_u32(b, ri_instance_elem_count(inst));
    snap_buf_u32(b, ri_instance_data_count(inst));
    snap_buf_end_section(b, at);
}

/* select: NULL for a full image, else one page bitmap per memory (a delta). */
static bool write_memories(snap_buf *b, const ri_instance *inst, ri_snap_compression compression,
                           const uint8_t *const *select, ri_snap_error *err) {
    size_t at = snap_buf_begin_section(b, SNAP_TAG_MEMS, SNAP_FLAG_REQUIRED);
    uint32_t n = ri_instance_memory_count(inst);
    snap_buf_u32(b, n);
    for (uint32_t i = 0; i < n; i++) {
        ri_memory *mem = ri_instance_memory(inst, i);
        bool ok = select ? snap_write_memory_pages(b, ri_memory_data(mem), ri_memory_pages(mem), ri_memory_type(mem),
                                                   compression, i, select[i], err)
                         : snap_write_memory(b, ri_memory_data(mem), ri_memory_pages(mem), ri_memory_type(mem),
                                             compression, i, err);
        if (!ok) return false;
    }
    snap_buf_end_section(b, at);
    return true;
}

/* A reference as the index of its function in inst's function space: 0, or 1 for a
 * non-null externref, 2 for a function outside the space (the caller says where). */
static int ref_index(const ri_instance *inst, ri_valtype type, void *ref, uint32_t *index) {
    *index = RI_SNAP_NULL_REF;
    if (!ref) return 0;
    if (type != RI_FUNCREF) return 1; /* externref, exnref (an exnref global is always null) */
    return ri_instance_func_index(inst, (const ri_func *)ref, index) ? 0 : 2;
}

static bool ref_refused(int why, const char *where, ri_snap_error *err) {
    if (why == 1)
        return snap_fail(err, RI_SNAP_ERR_STATE,
                         "%s holds a non-null externref: it points at the embedder's data, which a snapshot cannot hold",
                         where);
    return snap_fail(err, RI_SNAP_ERR_STATE,
                     "%s holds a function outside the instance's function index space (of another instance, not "
                     "imported), which a snapshot cannot name",
                     where);
}

static bool write_tables(snap_buf *b, const ri_instance *inst, ri_snap_error *err) {
    size_t at = snap_buf_begin_section(b, SNAP_TAG_TBLS, SNAP_FLAG_REQUIRED);
    uint32_t n = ri_instance_table_count(inst);
    snap_buf_u32(b, n);
    for (uint32_t i = 0; i < n; i++) {
        const ri_table *table = ri_instance_table(inst, i);
        ri_tabletype type = ri_table_type(table);
        uint32_t size = ri_table_size(table);
        snap_buf_u8(b, (uint8_t)type.elem);
        snap_buf_u8(b, type.limits.has_max ? SNAP_TABLE_HAS_MAX : 0);
        snap_buf_zeros(b, 2);
        snap_buf_u32(b, size);
        snap_buf_u32(b, type.limits.has_max ? type.limits.max : 0);
        if (!snap_buf_reserve(b, (size_t)size * 4)) break;
        for (uint32_t k = 0; k < size; k++) {
            void *ref = NULL;
            uint32_t index;
            ri_table_get(table, k, &ref);
            int why = ref_index(inst, type.elem, ref, &index);
            if (why) {
                char where[64];
                snprintf(where, sizeof where, "table %u, entry %u,", i, k);
                return ref_refused(why, where, err);
            }
            ri_le_put32(b->data + b->len, index);
            b->len += 4;
        }
    }
    snap_buf_end_section(b, at);
    return true;
}

static bool write_globals(snap_buf *b, const ri_instance *inst, ri_snap_error *err) {
    size_t at = snap_buf_begin_section(b, SNAP_TAG_GLBS, SNAP_FLAG_REQUIRED);
    uint32_t n = ri_instance_global_count(inst);
    snap_buf_u32(b, n);
    for (uint32_t i = 0; i < n; i++) {
        const ri_global *g = ri_instance_global(inst, i);
        ri_globaltype type = ri_global_type(g);
        ri_val v = ri_global_get(g);
        uint64_t bits = 0, high = 0;
        switch (type.type) {
        case RI_I32: bits = (uint32_t)v.of.i32; break;
        case RI_I64: bits = (uint64_t)v.of.i64; break;
        case RI_F32: bits = v.of.f32_bits; break;
        case RI_F64: bits = v.of.f64_bits; break;
        case RI_FUNCREF:
        case RI_EXTERNREF:
        case RI_EXNREF: {
            uint32_t index;
            int why = ref_index(inst, type.type, v.of.ref, &index);
            if (why) {
                char where[32];
                snprintf(where, sizeof where, "global %u", i);
                return ref_refused(why, where, err);
            }
            bits = index; /* RI_SNAP_NULL_REF for null, zero-extended */
            break;
        }
        case RI_V128:
            bits = ri_le_get64(v.of.v128);
            high = ri_le_get64(v.of.v128 + 8);
            break;
        }
        snap_buf_u8(b, (uint8_t)type.type);
        snap_buf_u8(b, type.mutable_ ? 1 : 0);
        snap_buf_zeros(b, 6);
        snap_buf_u64(b, bits);
        if (type.type == RI_V128) snap_buf_u64(b, high); /* a v128's record is 8 bytes longer */
    }
    snap_buf_end_section(b, at);
    return true;
}

static void write_segments(snap_buf *b, const ri_instance *inst) {
    size_t at = snap_buf_begin_section(b, SNAP_TAG_SEGS, SNAP_FLAG_REQUIRED);
    uint32_t nelems = ri_instance_elem_count(inst), ndatas = ri_instance_data_count(inst);
    snap_buf_u32(b, nelems);
    snap_buf_u32(b, ndatas);
    for (uint32_t i = 0; i < nelems; i++) snap_buf_u8(b, ri_instance_elem_dropped(inst, i) ? 1 : 0);
    for (uint32_t i = 0; i < ndatas; i++) snap_buf_u8(b, ri_instance_data_dropped(inst, i) ? 1 : 0);
    snap_buf_end_section(b, at);
}

static bool check_args(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                       uint8_t **out, size_t *out_len, ri_snap_error *err) {
    if (!inst || !meta || !out || !out_len) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write: a NULL argument");
    if (meta->status != RI_SNAP_STATUS_LOADED && meta->status != RI_SNAP_STATUS_SUSPENDED)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write: unknown status %d", (int)meta->status);
    if (meta->gas_used > (uint64_t)INT64_MAX)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write: gas used above 2^63 - 1");
    if (opts && opts->compression != RI_SNAP_COMPRESS_ZSTD && opts->compression != RI_SNAP_COMPRESS_NONE)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write: unknown compression %d", (int)opts->compression);
    if (opts && opts->module) {
        uint8_t digest[RI_SNAP_SHA256_BYTES];
        if (opts->module_len != meta->module_size || !ri_snap_sha256(opts->module, opts->module_len, digest) ||
            memcmp(digest, meta->module_sha256, RI_SNAP_SHA256_BYTES) != 0)
            return snap_fail(err, RI_SNAP_ERR_ARGUMENT,
                             "ri_snap_write: the module to embed is not the one the meta names (SHA-256 and size)");
    }
    return true;
}

bool ri_snap_write(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                   uint8_t **out, size_t *out_len, ri_snap_error *err) {
    return ri_snap_write_call(inst, meta, opts, NULL, out, out_len, err);
}

/* The image into b (growing, or the caller's fixed buffer). On failure err says why;
 * b is the caller's to free. */
static bool write_image(snap_buf *b_, const ri_instance *inst, const ri_snap_meta *meta,
                        const ri_snap_write_options *opts, const ri_snap_call *call,
                        const ri_snap_delta_target *target, ri_snap_error *err) {
    ri_snap_compression compression = opts ? opts->compression : RI_SNAP_COMPRESS_ZSTD;
    snap_buf b = *b_;
    snap_buf_put(&b, "WSNP", 4);
    snap_buf_u8(&b, RI_SNAP_VERSION);
    snap_buf_zeros(&b, 3);
    write_meta(&b, inst, meta);
    if (opts && opts->module) {
        size_t at = snap_buf_begin_section(&b, SNAP_TAG_MODL, 0); /* optional: the hash names it anyway */
        snap_buf_put(&b, opts->module, opts->module_len);
        snap_buf_end_section(&b, at);
    }
    bool ok = write_memories(&b, inst, compression, target ? target->select : NULL, err) &&
              write_tables(&b, inst, err) && write_globals(&b, inst, err);
    if (ok) write_segments(&b, inst);
    if (ok && call) ok = snap_write_frames(&b, call, ri_instance_func_count(inst), err);
    if (ok)
        ok = snap_write_wasi(&b, opts, target ? target->workspace_delta : NULL,
                             target ? target->workspace_delta_len : 0, err);
    if (ok && target) {
        /* PRNT as docs/SNAPSHOT_FORMAT.md lays it out (src/snapshot/delta.c reads it) */
        uint8_t prnt[RI_SNAP_PARENT_BYTES];
        memset(prnt, 0, sizeof prnt);
        memcpy(prnt, target->parent_sha256, RI_SNAP_SHA256_BYTES);
        ri_le_put64(prnt + 32, target->parent_len);
        prnt[40] = compression == RI_SNAP_COMPRESS_NONE ? 1 : 0;
        snap_buf_put(&b, "PRNT", 4);
        snap_buf_u32(&b, SNAP_FLAG_REQUIRED);
        snap_buf_u64(&b, RI_SNAP_PARENT_BYTES);
        snap_buf_put(&b, prnt, RI_SNAP_PARENT_BYTES);
    }
    if (ok && !b.failed) {
        /* The checksum covers every byte before its own section (the raw pages' part
         * was computed as they were copied). */
        uint32_t crc = snap_buf_crc32c(&b);
        size_t at = snap_buf_begin_section(&b, SNAP_TAG_CSUM, SNAP_FLAG_REQUIRED);
        snap_buf_u32(&b, crc);
        snap_buf_end_section(&b, at);
    }
    if (b.too_small) ok = snap_fail(err, RI_SNAP_ERR_TOO_SMALL, "the buffer is too small for the snapshot");
    else if (ok && b.failed) ok = snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing the snapshot");
    if (!ok && err && err->code == RI_SNAP_OK) snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing the snapshot");
    *b_ = b;
    return ok;
}

static bool check_call(const ri_snap_meta *meta, const ri_snap_call *call, ri_snap_error *err) {
    if (call && meta->status != RI_SNAP_STATUS_SUSPENDED)
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_call: a suspended call needs status suspended");
    return true;
}

/* A full image (target NULL) or a delta on target's parent, malloc'd into *out. */
static bool write_alloc(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                        const ri_snap_call *call, const ri_snap_delta_target *target, uint8_t **out,
                        size_t *out_len, ri_snap_error *err) {
    snap_ok(err);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!check_args(inst, meta, opts, out, out_len, err) || !check_call(meta, call, err)) return false;
    snap_buf b;
    memset(&b, 0, sizeof b);
    if (target && (!target->select || target->nselect != ri_instance_memory_count(inst)))
        return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_delta: %u page sets for %u memories",
                         target->select ? target->nselect : 0, ri_instance_memory_count(inst));
    for (uint32_t i = 0; target && i < target->nselect; i++)
        if (!target->select[i])
            return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_delta: no page set for memory %u", i);
    if (!write_image(&b, inst, meta, opts, call, target, err)) {
        snap_buf_free(&b);
        return false;
    }
    /* Give back large slack only: shrinking a big buffer by a little moves it for
     * nothing, and a block of the same size as the last is what the allocator reuses. */
    uint8_t *exact = b.cap - b.len > b.len / 8 + 65536 ? realloc(b.data, b.len) : NULL;
    *out = exact ? exact : b.data;
    *out_len = b.len;
    return true;
}

bool ri_snap_write_call(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                        const ri_snap_call *call, uint8_t **out, size_t *out_len, ri_snap_error *err) {
    return write_alloc(inst, meta, opts, call, NULL, out, out_len, err);
}

bool ri_snap_write_delta(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                         const ri_snap_call *call, const ri_snap_delta_target *target, uint8_t **out,
                         size_t *out_len, ri_snap_error *err) {
    if (!target) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_delta: a NULL argument");
    return write_alloc(inst, meta, opts, call, target, out, out_len, err);
}

bool ri_snap_write_into(const ri_instance *inst, const ri_snap_meta *meta, const ri_snap_write_options *opts,
                        const ri_snap_call *call, uint8_t *buf, size_t cap, size_t *out_len, ri_snap_error *err) {
    snap_ok(err);
    if (out_len) *out_len = 0;
    uint8_t *unused = NULL;
    if (!out_len || (!buf && cap)) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_write_into: a NULL argument");
    if (!check_args(inst, meta, opts, &unused, out_len, err) || !check_call(meta, call, err)) return false;
    snap_buf b;
    memset(&b, 0, sizeof b);
    b.data = buf;
    b.cap = cap;
    b.fixed = true;
    if (write_image(&b, inst, meta, opts, call, NULL, err)) {
        *out_len = b.len;
        return true;
    }
    if (err && err->code != RI_SNAP_ERR_TOO_SMALL) return false;
    /* Too small: the exact length, from the same writer into a buffer of its own (the
     * rare path; a caller that reuses its buffer pays it once). */
    ri_snap_error e;
    uint8_t *img = NULL;
    size_t len = 0;
    if (!ri_snap_write_call(inst, meta, opts, call, &img, &len, &e)) {
        if (err) *err = e;
        return false;
    }
    free(img);
    *out_len = len;
    return snap_fail(err, RI_SNAP_ERR_TOO_SMALL,
                     "ri_snap_write_into: the image needs %zu bytes, the buffer holds %zu", len, cap);
}
