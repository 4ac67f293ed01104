/*
 * Memory pages in WSNP v2: only pages with a non-zero byte are stored (a bitmap says
 * which), and their bytes, in page order, form one payload: a zstd frame at a fixed
 * level and fixed parameters (so equal memories give equal bytes), or the bytes as
 * they are when zstd does not make them smaller or was not wanted.
 *
 * Reading never trusts the payload: its content must be exactly present_pages * 64 KiB
 * (the frame header says so, the frame ends exactly at the payload's end, and
 * decompression yields exactly that many bytes), and streaming decompression refuses
 * frames that would need a large window.
 */
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "snapshot_internal.h"

bool snap_page_is_zero(const uint8_t *page) {
    /* OR-reduce in blocks of 256 bytes (vectorised by the compiler), stop early. */
    for (size_t off = 0; off < RI_SNAP_PAGE_BYTES; off += 256) {
        uint64_t acc = 0;
        for (size_t k = 0; k < 256; k += 8) {
            uint64_t w;
            memcpy(&w, page + off + k, 8);
            acc |= w;
        }
        if (acc) return false;
    }
    return true;
}

/* ---- writing -------------------------------------------------------------------------------- */

bool snap_zstd_params(void *cctx_, uint64_t content) {
    ZSTD_CCtx *cctx = cctx_;
    /* Every parameter that shapes the frame, set explicitly: the output must not depend
     * on a library default. Our CSUM covers the bytes, so no zstd checksum. */
    return !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, RI_SNAP_ZSTD_LEVEL)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0)) &&
           !ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, content));
}

/* Feeds the present pages to zstd one page at a time, straight from the memory (no
 * copy), into b. The bitmap is in b at bitmap_at: an offset, since b may move as it
 * grows. Returns the frame's length, or 0 on failure (b->failed or zstd); content
 * when a fixed buffer filled up with room for the raw pages (the frame is not smaller). */
static size_t compress_pages(snap_buf *b, const uint8_t *data, size_t bitmap_at, uint32_t pages, uint64_t content,
                             ri_snap_error *err) {
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (!cctx) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory creating a zstd context"), 0;
    size_t start = b->len, out_chunk = ZSTD_CStreamOutSize();
    bool ok = snap_zstd_params(cctx, content);
    for (uint32_t i = 0; ok && i <= pages; i++) {
        bool last = i == pages;
        if (!last && !snap_bit(b->data + bitmap_at, i)) continue;
        ZSTD_inBuffer in = {last ? NULL : data + (size_t)i * RI_SNAP_PAGE_BYTES, last ? 0 : RI_SNAP_PAGE_BYTES, 0};
        ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
        for (;;) {
            if (b->fixed && b->cap == b->len) {
                /* The caller's buffer is full. If it had room for the pages as they are,
                 * the frame is not smaller than them: say so, as for any such frame. */
                if (b->cap - start >= content) {
                    ZSTD_freeCCtx(cctx);
                    b->len = start;
                    return (size_t)content;
                }
                b->failed = b->too_small = true;
                ok = false;
                break;
            }
            if (!b->fixed && !snap_buf_reserve(b, out_chunk)) {
                ok = false;
                break;
            }
            ZSTD_outBuffer out = {b->data + b->len, b->cap - b->len, 0};
            size_t left = ZSTD_compressStream2(cctx, &out, &in, mode);
            b->len += out.pos;
            if (ZSTD_isError(left)) {
                ok = false;
                break;
            }
            if (last ? left == 0 : in.pos == in.size) break;
        }
    }
    ZSTD_freeCCtx(cctx);
    if (!ok) {
        if (b->too_small) snap_fail(err, RI_SNAP_ERR_TOO_SMALL, "the buffer is too small for the compressed pages");
        else if (b->failed) snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory compressing memory pages");
        else snap_fail(err, RI_SNAP_ERR_NOMEM, "zstd failed to compress memory pages");
        return 0;
    }
    return b->len - start;
}

bool snap_write_memory(snap_buf *b, const uint8_t *data, uint32_t pages, ri_memtype type,
                       ri_snap_compression compression, uint32_t index, ri_snap_error *err) {
    return snap_write_memory_pages(b, data, pages, type, compression, index, NULL, err);
}

bool snap_write_memory_pages(snap_buf *b, const uint8_t *data, uint32_t pages, ri_memtype type,
                             ri_snap_compression compression, uint32_t index, const uint8_t *select,
                             ri_snap_error *err) {
    size_t bitmap_len = ((size_t)pages + 7) / 8;
    size_t header = b->len;
    snap_buf_u32(b, pages);
    snap_buf_u32(b, type.limits.has_max ? type.limits.max : 0);
    snap_buf_u8(b, (uint8_t)((type.limits.has_max ? SNAP_MEMORY_HAS_MAX : 0) | (type.is64 ? SNAP_MEMORY_IS64 : 0)));
    snap_buf_u8(b, RI_SNAP_ENC_RAW); /* patched below */
    snap_buf_zeros(b, 2);
    snap_buf_u32(b, 0);              /* present pages, patched below */
    snap_buf_u64(b, 0);              /* payload length, patched below */
    size_t bitmap_at = b->len;
    snap_buf_zeros(b, bitmap_len);
    if (b->too_small) return snap_fail(err, RI_SNAP_ERR_TOO_SMALL, "the buffer is too small for memory %u", index);
    if (b->failed) return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing memory %u", index);

    uint32_t present = 0;
    if (compression == RI_SNAP_COMPRESS_NONE && !select) {
        /* Raw: one pass copies each page and tests the copy (still in cache) for zero,
         * instead of a test pass over the memory and a copy pass.
         * The same pass computes the pages' CRC-32C (from register 0) while they are in cache,
         * so that the image checksum need not read them again (snap_buf_crc32c). A caller's
         * fixed buffer is not reserved for every page up front: a sparse memory may fit. */
        uint64_t most = (uint64_t)pages * RI_SNAP_PAGE_BYTES;
        if (!b->fixed && (most > SIZE_MAX || !snap_buf_reserve(b, (size_t)most)))
            return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing memory %u", index);
        size_t payload_at = b->len;
        uint32_t reg = 0;
        for (uint32_t i = 0; i < pages; i++) {
            const uint8_t *src = data + (size_t)i * RI_SNAP_PAGE_BYTES;
            if (b->cap - b->len < RI_SNAP_PAGE_BYTES) {
                /* Only a fixed buffer gets here: a zero page needs no room. */
                if (snap_page_is_zero(src)) continue;
                snap_buf_reserve(b, RI_SNAP_PAGE_BYTES);
                return snap_fail(err, RI_SNAP_ERR_TOO_SMALL, "the buffer is too small for memory %u", index);
            }
            if (!snap_copy_page_crc(b->data + b->len, src, &reg)) continue;
            b->data[bitmap_at + i / 8] |= (uint8_t)(1u << (i % 8));
            b->len += RI_SNAP_PAGE_BYTES;
            present++;
        }
        ri_le_put32(b->data + header + 12, present);
        ri_le_put64(b->data + header + 16, (uint64_t)(b->len - payload_at));
        if (b->nspans < SNAP_CRC_SPANS && b->len > payload_at)
            b->spans[b->nspans++] = (snap_crc_span){payload_at, b->len - payload_at, reg};
        return true;
    }
    for (uint32_t i = 0; i < pages; i++) {
        if (select ? !snap_bit(select, i) : snap_page_is_zero(data + (size_t)i * RI_SNAP_PAGE_BYTES)) continue;
        b->data[bitmap_at + i / 8] |= (uint8_t)(1u << (i % 8));
        present++;
    }
    uint64_t content = (uint64_t)present * RI_SNAP_PAGE_BYTES;
    ri_snap_encoding encoding = RI_SNAP_ENC_RAW;
    size_t payload_at = b->len, payload_len = 0;
    if (present && compression == RI_SNAP_COMPRESS_ZSTD) {
        payload_len = compress_pages(b, data, bitmap_at, pages, content, err);
        if (!payload_len) return false;
        if (payload_len < content) encoding = RI_SNAP_ENC_ZSTD;
        else b->len = payload_at; /* not smaller: store the pages as they are */
    }
    if (encoding == RI_SNAP_ENC_RAW) {
        if (content > SIZE_MAX || !snap_buf_reserve(b, (size_t)content))
            return b->too_small ? snap_fail(err, RI_SNAP_ERR_TOO_SMALL, "the buffer is too small for memory %u", index)
                                : snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory writing memory %u", index);
        for (uint32_t i = 0; i < pages; i++)
            if (snap_bit(b->data + bitmap_at, i)) snap_buf_put(b, data + (size_t)i * RI_SNAP_PAGE_BYTES, RI_SNAP_PAGE_BYTES);
        payload_len = (size_t)content;
    }
    b->data[header + 9] = (uint8_t)encoding;
    ri_le_put32(b->data + header + 12, present);
    ri_le_put64(b->data + header + 16, (uint64_t)payload_len);
    return true;
}

/* ---- reading: the whole payload at once (restore) -------------------------------------------------- */

/* Exactly one frame, exactly the payload, declaring exactly the expected content. */
static bool check_frame(const ri_snap_memory *m, uint32_t index, ri_snap_error *err) {
    size_t frame = ZSTD_findFrameCompressedSize(m->payload, (size_t)m->payload_len);
    if (ZSTD_isError(frame) || frame != m->payload_len)
        return snap_fail(err, RI_SNAP_ERR_CORRUPT,
                         "Invalid snapshot — memory %u: the payload is not one complete zstd frame", index);
    unsigned long long declared = ZSTD_getFrameContentSize(m->payload, (size_t)m->payload_len);
    if (declared != m->raw_len)
        return snap_fail(err, RI_SNAP_ERR_CORRUPT,
                         "Invalid snapshot — memory %u: the zstd frame does not declare the %llu bytes of its %u "
                         "stored pages",
                         index, (unsigned long long)m->raw_len, m->present_pages);
    return true;
}

bool snap_inflate(const ri_snap_memory *m, uint32_t index, const uint8_t **content, uint8_t **owned,
                  ri_snap_error *err) {
    *content = NULL;
    *owned = NULL;
    if (m->encoding != RI_SNAP_ENC_ZSTD) {
        *content = m->payload; /* raw (and flat): the read already checked its length */
        return true;
    }
    if (!check_frame(m, index, err)) return false;
    if (m->raw_len > SIZE_MAX) return snap_fail(err, RI_SNAP_ERR_NOMEM, "memory %u does not fit the address space", index);
    uint8_t *buf = malloc(m->raw_len ? (size_t)m->raw_len : 1);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!buf || !dctx) {
        free(buf);
        ZSTD_freeDCtx(dctx);
        return snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory decompressing memory %u (%llu bytes)", index,
                         (unsigned long long)m->raw_len);
    }
    size_t got = ZSTD_decompressDCtx(dctx, buf, (size_t)m->raw_len, m->payload, (size_t)m->payload_len);
    ZSTD_freeDCtx(dctx);
    if (ZSTD_isError(got) || got != m->raw_len) {
        free(buf);
        return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot — memory %u: the zstd frame does not decompress (%s)",
                         index, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong length");
    }
    *content = buf;
    *owned = buf;
    return true;
}

/* ---- reading: one page at a time (diff, inspect) ------------------------------------------------- */

struct ri_snap_pages {
    const ri_snap_memory *mem;
    uint32_t index;            /* the memory's index, for messages */
    uint32_t next;             /* the next page to look at */
    uint64_t raw_pos;          /* raw/flat: offset into the payload */
    ZSTD_DCtx *dctx;           /* zstd */
    ZSTD_inBuffer in;
    size_t last;               /* zstd: what the last call returned (0: the frame ended) */
    uint8_t *page;             /* zstd: one page of output */
};

ri_snap_pages *ri_snap_pages_open(const ri_snap_image *img, uint32_t index, ri_snap_error *err) {
    snap_ok(err);
    if (!img || index >= img->nmemories) {
        snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_pages_open: no memory %u", index);
        return NULL;
    }
    const ri_snap_memory *m = &img->memories[index];
    if (m->encoding == RI_SNAP_ENC_ZSTD && !check_frame(m, index, err)) return NULL;
    ri_snap_pages *p = calloc(1, sizeof *p);
    if (!p) {
        snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading memory %u", index);
        return NULL;
    }
    p->mem = m;
    p->index = index;
    if (m->encoding == RI_SNAP_ENC_ZSTD) {
        p->dctx = ZSTD_createDCtx();
        p->page = malloc(RI_SNAP_PAGE_BYTES);
        if (!p->dctx || !p->page ||
            ZSTD_isError(ZSTD_DCtx_setParameter(p->dctx, ZSTD_d_windowLogMax, SNAP_ZSTD_WINDOW_LOG_MAX))) {
            ri_snap_pages_close(p);
            snap_fail(err, RI_SNAP_ERR_NOMEM, "out of memory reading memory %u", index);
            return NULL;
        }
        p->in.src = m->payload;
        p->in.size = (size_t)m->payload_len;
        p->in.pos = 0;
        p->last = 1;
    }
    return p;
}

/* The next page of zstd output, exactly 64 KiB. */
static bool zstd_page(ri_snap_pages *p, ri_snap_error *err) {
    ZSTD_outBuffer out = {p->page, RI_SNAP_PAGE_BYTES, 0};
    while (out.pos < out.size) {
        size_t before_in = p->in.pos, before_out = out.pos;
        size_t r = ZSTD_decompressStream(p->dctx, &out, &p->in);
        if (ZSTD_isError(r))
            return snap_fail(err, RI_SNAP_ERR_CORRUPT, "Invalid snapshot — memory %u: the zstd frame does not decompress (%s)",
                             p->index, ZSTD_getErrorName(r));
        p->last = r;
        if (out.pos < out.size && (r == 0 || (p->in.pos == before_in && out.pos == before_out)))
            return snap_fail(err, RI_SNAP_ERR_CORRUPT,
                             "Invalid snapshot — memory %u: the zstd frame ends before its stored pages do", p->index);
    }
    return true;
}

int ri_snap_pages_next(ri_snap_pages *p, uint32_t *page, const uint8_t **data, ri_snap_error *err) {
    snap_ok(err);
    if (!p || !page || !data) return snap_fail(err, RI_SNAP_ERR_ARGUMENT, "ri_snap_pages_next: a NULL argument"), -1;
    const ri_snap_memory *m = p->mem;
    for (; p->next < m->pages; p->next++) {
        uint32_t i = p->next;
        if (m->encoding == RI_SNAP_ENC_FLAT) {
            /* v1: every page is there; report the non-zero ones, as v2 stores them. */
            const uint8_t *d = m->payload + (size_t)i * RI_SNAP_PAGE_BYTES;
            if (snap_page_is_zero(d)) continue;
            p->next++;
            *page = i;
            *data = d;
            return 1;
        }
        if (!snap_bit(m->bitmap, i)) continue;
        p->next++;
        *page = i;
        if (m->encoding == RI_SNAP_ENC_RAW) {
            *data = m->payload + p->raw_pos; /* the read checked payload_len == raw_len */
            p->raw_pos += RI_SNAP_PAGE_BYTES;
            return 1;
        }
        if (!zstd_page(p, err)) return -1;
        *data = p->page;
        return 1;
    }
    if (m->encoding == RI_SNAP_ENC_ZSTD) {
        /* All pages out: the frame must end here, with nothing after it. */
        uint8_t extra;
        ZSTD_outBuffer out = {&extra, 1, 0};
        size_t r = p->last == 0 ? 0 : ZSTD_decompressStream(p->dctx, &out, &p->in);
        if (ZSTD_isError(r) || r != 0 || out.pos != 0 || p->in.pos != p->in.size)
            return snap_fail(err, RI_SNAP_ERR_CORRUPT,
                             "Invalid snapshot — memory %u: the zstd frame holds more than its stored pages", p->index),
                   -1;
    }
    return 0;
}

void ri_snap_pages_close(ri_snap_pages *p) {
    if (!p) return;
    ZSTD_freeDCtx(p->dctx);
    free(p->page);
    free(p);
}
