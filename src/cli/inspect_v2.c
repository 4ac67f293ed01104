/* `ri inspect` for WSNP v2 images: sections, sizes, module identity, the state, and
 * per memory the pages stored and the compression achieved. The image is read with
 * the library's reader (ri_snap_read, as restore does) and every memory payload is
 * decompressed once, a page at a time, so "valid" means restore would accept it
 * (given a sandbox running its module). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/inspect_v2.h"
#include "cli/jsonw.h"
#include "cli/output.h"
#include "workspace/wsfs.h"

/* A WASI image's workspace: its inodes (the root excluded) and file bytes; false when it
 * does not decompress or parse. */
static bool workspace_usage(const ri_snap_image *img, uint64_t *files, uint64_t *bytes) {
    uint8_t *raw = NULL;
    size_t len = 0;
    ri_snap_error e;
    if (!ri_snap_workspace(img, &raw, &len, &e)) return false;
    wsfs_config cfg;
    memset(&cfg, 0, sizeof cfg);
    wsfs *fs = NULL;
    wsfs_error we;
    bool ok = wsfs_parse(raw, len, &cfg, &fs, &we) == WSFS_OK;
    free(raw);
    if (!ok) return false;
    wsfs_usage u;
    wsfs_get_usage(fs, &u);
    wsfs_free(fs);
    *files = u.inodes ? u.inodes - 1 : 0;
    *bytes = u.bytes;
    return true;
}

#define SHOWN_GLOBALS 16

/* Streams every stored page of every memory: the payloads decompress to exactly the
 * stored pages. */
bool ri_inspect_verify_pages(const ri_snap_image *img, ri_snap_error *err) {
    for (uint32_t i = 0; i < img->nmemories; i++) {
        ri_snap_pages *p = ri_snap_pages_open(img, i, err);
        if (!p) return false;
        uint32_t page;
        const uint8_t *data;
        int r;
        while ((r = ri_snap_pages_next(p, &page, &data, err)) == 1) {
        }
        ri_snap_pages_close(p);
        if (r < 0) return false;
    }
    return true;
}

static uint64_t non_null_entries(const ri_snap_table *t) {
    uint64_t n = 0;
    for (uint32_t e = 0; e < t->size; e++) {
        const uint8_t *p = t->entries + (size_t)e * 4;
        uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        if (v != RI_SNAP_NULL_REF) n++;
    }
    return n;
}

static uint32_t count_set(const uint8_t *flags, uint32_t n) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) k += flags[i] != 0;
    return k;
}


static const char *encoding_name(ri_snap_encoding e) {
    return e == RI_SNAP_ENC_ZSTD ? "zstd" : e == RI_SNAP_ENC_RAW ? "raw" : "flat";
}

static void tag_text(const char tag[4], char out[20]) {
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = (unsigned char)tag[i];
        if (c >= 0x20 && c < 0x7F) out[n++] = (char)c;
        else n += (size_t)snprintf(out + n, 20 - n, "\\x%02X", c);
    }
    out[n] = '\0';
}

static void print_json(const char *path, const ri_snap_image *img) {
    char hex[2 * RI_SNAP_SHA256_BYTES + 1], buf[64];
    ri_jsonw jw;
    ri_jsonw_init(&jw, stdout);
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "file");
    ri_jsonw_str(&jw, path);
    ri_jsonw_key(&jw, "valid");
    ri_jsonw_bool(&jw, true);
    ri_jsonw_key(&jw, "format");
    ri_jsonw_str(&jw, "WSNP");
    ri_jsonw_key(&jw, "version");
    ri_jsonw_u64(&jw, img->version);
    ri_jsonw_key(&jw, "totalBytes");
    ri_jsonw_u64(&jw, img->total_len);

    ri_jsonw_key(&jw, "module");
    ri_jsonw_object(&jw);
    ri_snap_hex(img->meta.module_sha256, hex);
    ri_jsonw_key(&jw, "sha256");
    ri_jsonw_str(&jw, hex);
    ri_jsonw_key(&jw, "bytes");
    ri_jsonw_u64(&jw, img->meta.module_size);
    ri_jsonw_key(&jw, "embedded");
    ri_jsonw_bool(&jw, img->module != NULL);
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "state");
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "status");
    ri_jsonw_str(&jw, ri_snap_status_name(img->meta.status));
    ri_jsonw_key(&jw, "prngState");
    ri_jsonw_u64(&jw, img->meta.prng_state);
    ri_jsonw_key(&jw, "gasUsed");
    ri_jsonw_u64(&jw, img->meta.gas_used);
    ri_jsonw_key(&jw, "timestamp");
    ri_jsonw_i64(&jw, img->meta.event_timestamp);
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "counts");
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "functions");
    ri_jsonw_u64(&jw, img->func_count);
    ri_jsonw_key(&jw, "memories");
    ri_jsonw_u64(&jw, img->nmemories);
    ri_jsonw_key(&jw, "tables");
    ri_jsonw_u64(&jw, img->ntables);
    ri_jsonw_key(&jw, "globals");
    ri_jsonw_u64(&jw, img->nglobals);
    ri_jsonw_key(&jw, "elementSegments");
    ri_jsonw_u64(&jw, img->nelems);
    ri_jsonw_key(&jw, "dataSegments");
    ri_jsonw_u64(&jw, img->ndatas);
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "sections");
    ri_jsonw_array(&jw);
    for (uint32_t i = 0; i < img->nsections; i++) {
        const ri_snap_section *s = &img->sections[i];
        tag_text(s->tag, buf);
        ri_jsonw_object(&jw);
        ri_jsonw_key(&jw, "tag");
        ri_jsonw_str(&jw, buf);
        ri_jsonw_key(&jw, "offset");
        ri_jsonw_u64(&jw, s->offset);
        ri_jsonw_key(&jw, "bytes");
        ri_jsonw_u64(&jw, s->length);
        ri_jsonw_key(&jw, "required");
        ri_jsonw_bool(&jw, s->flags & 1u);
        ri_jsonw_key(&jw, "known");
        ri_jsonw_bool(&jw, s->known);
        ri_jsonw_end(&jw);
    }
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "memories");
    ri_jsonw_array(&jw);
    for (uint32_t i = 0; i < img->nmemories; i++) {
        const ri_snap_memory *m = &img->memories[i];
        uint64_t bytes = (uint64_t)m->pages * RI_SNAP_PAGE_BYTES;
        ri_jsonw_object(&jw);
        ri_jsonw_key(&jw, "index");
        ri_jsonw_u64(&jw, i);
        ri_jsonw_key(&jw, "pages");
        ri_jsonw_u64(&jw, m->pages);
        ri_jsonw_key(&jw, "maxPages");
        if (m->has_max) ri_jsonw_u64(&jw, m->max_pages);
        else ri_jsonw_null(&jw);
        ri_jsonw_key(&jw, "storedPages");
        ri_jsonw_u64(&jw, m->present_pages);
        ri_jsonw_key(&jw, "encoding");
        ri_jsonw_str(&jw, encoding_name(m->encoding));
        ri_jsonw_key(&jw, "memoryBytes");
        ri_jsonw_u64(&jw, bytes);
        ri_jsonw_key(&jw, "rawBytes");
        ri_jsonw_u64(&jw, m->raw_len);
        ri_jsonw_key(&jw, "storedBytes");
        ri_jsonw_u64(&jw, m->payload_len);
        ri_jsonw_key(&jw, "ratio");
        if (m->payload_len) {
            snprintf(buf, sizeof buf, "%.1f", (double)bytes / (double)m->payload_len);
            ri_jsonw_raw(&jw, buf);
        } else {
            ri_jsonw_null(&jw);
        }
        ri_jsonw_end(&jw);
    }
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "tables");
    ri_jsonw_array(&jw);
    for (uint32_t i = 0; i < img->ntables; i++) {
        const ri_snap_table *t = &img->tables[i];
        ri_jsonw_object(&jw);
        ri_jsonw_key(&jw, "index");
        ri_jsonw_u64(&jw, i);
        ri_jsonw_key(&jw, "element");
        ri_jsonw_str(&jw, ri_snap_valtype_name(t->elem));
        ri_jsonw_key(&jw, "size");
        ri_jsonw_u64(&jw, t->size);
        ri_jsonw_key(&jw, "max");
        if (t->has_max) ri_jsonw_u64(&jw, t->max);
        else ri_jsonw_null(&jw);
        ri_jsonw_key(&jw, "nonNull");
        ri_jsonw_u64(&jw, non_null_entries(t));
        ri_jsonw_end(&jw);
    }
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "globals");
    ri_jsonw_array(&jw);
    for (uint32_t i = 0; i < img->nglobals; i++) {
        const ri_snap_global *g = &img->globals[i];
        ri_jsonw_object(&jw);
        ri_jsonw_key(&jw, "index");
        ri_jsonw_u64(&jw, i);
        ri_jsonw_key(&jw, "type");
        ri_jsonw_str(&jw, ri_snap_valtype_name(g->type));
        ri_jsonw_key(&jw, "mutable");
        ri_jsonw_bool(&jw, g->mutable_);
        ri_jsonw_key(&jw, "value");
        ri_snap_global_text(g, RI_SNAP_TEXT_JSON, buf, sizeof buf);
        ri_jsonw_raw(&jw, buf);
        ri_jsonw_key(&jw, "bits");
        ri_snap_global_text(g, RI_SNAP_TEXT_BITS64, buf, sizeof buf);
        ri_jsonw_str(&jw, buf);
        ri_jsonw_end(&jw);
    }
    ri_jsonw_end(&jw);

    ri_jsonw_key(&jw, "segments");
    ri_jsonw_object(&jw);
    ri_jsonw_key(&jw, "elementDropped");
    ri_jsonw_array_flat(&jw);
    for (uint32_t i = 0; i < img->nelems; i++) ri_jsonw_bool(&jw, img->elem_dropped[i] != 0);
    ri_jsonw_end(&jw);
    ri_jsonw_key(&jw, "dataDropped");
    ri_jsonw_array_flat(&jw);
    for (uint32_t i = 0; i < img->ndatas; i++) ri_jsonw_bool(&jw, img->data_dropped[i] != 0);
    ri_jsonw_end(&jw);
    ri_jsonw_end(&jw);

    if (img->has_wasi) { /* only then: a WASI process (WSFS, WASI) */
        uint64_t files = 0, bytes = 0;
        bool parsed = workspace_usage(img, &files, &bytes);
        ri_jsonw_key(&jw, "workspace");
        ri_jsonw_object(&jw);
        ri_jsonw_key(&jw, "files");
        if (parsed) ri_jsonw_u64(&jw, files);
        else ri_jsonw_null(&jw);
        ri_jsonw_key(&jw, "bytes");
        if (parsed) ri_jsonw_u64(&jw, bytes);
        else ri_jsonw_null(&jw);
        ri_jsonw_key(&jw, "serializedBytes");
        ri_jsonw_u64(&jw, img->workspace_len);
        ri_jsonw_key(&jw, "storedBytes");
        ri_jsonw_u64(&jw, img->workspace_payload_len);
        ri_jsonw_key(&jw, "wasiStateBytes");
        ri_jsonw_u64(&jw, img->wasi_state_len);
        ri_jsonw_end(&jw);
    }
    if (img->has_frames) { /* only then: a paused call (FRMS) */
        ri_snap_call call;
        ri_snap_error e;
        ri_jsonw_key(&jw, "suspendedCall");
        if (ri_snap_read_call(img, &call, &e)) {
            ri_jsonw_object(&jw);
            ri_jsonw_key(&jw, "export");
            ri_jsonw_strn(&jw, call.export_name, call.export_name_len);
            ri_jsonw_key(&jw, "function");
            ri_jsonw_u64(&jw, call.suspension.func_index);
            ri_jsonw_key(&jw, "reason");
            ri_jsonw_str(&jw, ri_suspend_reason_name(call.suspension.reason));
            ri_jsonw_key(&jw, "gasUsed");
            ri_jsonw_u64(&jw, call.gas_used);
            ri_jsonw_key(&jw, "gasLeft");
            ri_jsonw_u64(&jw, call.gas_left);
            ri_jsonw_key(&jw, "frames");
            ri_jsonw_array(&jw);
            for (uint32_t i = 0; i < call.suspension.nframes; i++) {
                const ri_susp_frame *f = &call.suspension.frames[i];
                ri_jsonw_object(&jw);
                ri_jsonw_key(&jw, "function");
                ri_jsonw_u64(&jw, f->func_index);
                ri_jsonw_key(&jw, "offset");
                ri_jsonw_u64(&jw, f->wasm_offset);
                static const char *const points[6] = {"entry", "gas", "loop", "call", "trap", "bulk"};
                ri_jsonw_key(&jw, "point");
                ri_jsonw_str(&jw, (unsigned)f->point < 6 ? points[f->point] : "unknown");
                ri_jsonw_key(&jw, "locals");
                ri_jsonw_u64(&jw, f->nlocals);
                ri_jsonw_key(&jw, "operands");
                ri_jsonw_u64(&jw, f->nstack);
                ri_jsonw_end(&jw);
            }
            ri_jsonw_end(&jw);
            ri_jsonw_end(&jw);
            ri_snap_call_free(&call);
        } else {
            ri_jsonw_null(&jw);
        }
    }
    snprintf(buf, sizeof buf, "crc32c:%08" PRIx32, img->checksum);
    ri_jsonw_key(&jw, "checksum");
    ri_jsonw_str(&jw, buf);
    ri_jsonw_key(&jw, "warnings");
    ri_jsonw_array(&jw);
    for (uint32_t i = 0; i < img->nsections; i++) {
        if (img->sections[i].known) continue;
        tag_text(img->sections[i].tag, buf);
        char w[160];
        snprintf(w, sizeof w, "section '%s' (%" PRIu64 " bytes) is unknown to this reader and optional: skipped", buf,
                 img->sections[i].length);
        ri_jsonw_str(&jw, w);
    }
    ri_jsonw_end(&jw);
    ri_jsonw_end(&jw);
    ri_jsonw_finish(&jw);
}

static void print_text(const char *path, const ri_snap_image *img) {
    char hex[2 * RI_SNAP_SHA256_BYTES + 1], buf[64];
    ri_printf_safe(stdout, "%s: WSNP snapshot, format version %u, %zu bytes\n", path, (unsigned)img->version,
                   img->total_len);
    ri_snap_hex(img->meta.module_sha256, hex);
    printf("  module     sha256:%s, %" PRIu64 " bytes, %s\n", hex, img->meta.module_size,
           img->module ? "embedded" : "not embedded");
    printf("  state      %s, prngState %" PRIu32 ", gasUsed %" PRIu64 ", timestamp %" PRId64 "\n",
           ri_snap_status_name(img->meta.status), img->meta.prng_state, img->meta.gas_used, img->meta.event_timestamp);
    printf("  instance   %" PRIu32 " functions, %" PRIu32 " memor%s, %" PRIu32 " table%s, %" PRIu32
           " global%s, %" PRIu32 " element and %" PRIu32 " data segment%s\n",
           img->func_count, img->nmemories, img->nmemories == 1 ? "y" : "ies", img->ntables,
           img->ntables == 1 ? "" : "s", img->nglobals, img->nglobals == 1 ? "" : "s", img->nelems, img->ndatas,
           img->ndatas == 1 ? "" : "s");
    printf("  sections  ");
    for (uint32_t i = 0; i < img->nsections; i++) {
        tag_text(img->sections[i].tag, buf);
        ri_printf_safe(stdout, "%s %s %" PRIu64 "%s", i ? "," : "", buf, img->sections[i].length,
                       img->sections[i].known ? "" : " (unknown, skipped)");
    }
    printf(" (bytes of content)\n");
    for (uint32_t i = 0; i < img->nmemories; i++) {
        const ri_snap_memory *m = &img->memories[i];
        uint64_t bytes = (uint64_t)m->pages * RI_SNAP_PAGE_BYTES;
        printf("  memory %-3" PRIu32 " %" PRIu32 " page%s = %" PRIu64 " bytes", i, m->pages, m->pages == 1 ? "" : "s",
               bytes);
        if (m->has_max) printf(" (max %" PRIu32 ")", m->max_pages);
        printf(", %" PRIu32 " stored, %s %" PRIu64 " -> %" PRIu64 " bytes", m->present_pages, encoding_name(m->encoding),
               m->raw_len, m->payload_len);
        if (m->payload_len) printf(", %.1f:1 overall", (double)bytes / (double)m->payload_len);
        printf("\n");
    }
    for (uint32_t i = 0; i < img->ntables; i++) {
        const ri_snap_table *t = &img->tables[i];
        printf("  table %-4" PRIu32 " %s, %" PRIu32 " entries", i, ri_snap_valtype_name(t->elem), t->size);
        if (t->has_max) printf(" (max %" PRIu32 ")", t->max);
        printf(", %" PRIu64 " non-null\n", non_null_entries(t));
    }
    for (uint32_t i = 0; i < img->nglobals && i < SHOWN_GLOBALS; i++) {
        const ri_snap_global *g = &img->globals[i];
        ri_snap_global_text(g, RI_SNAP_TEXT_PLAIN, buf, sizeof buf);
        printf("  global %-3" PRIu32 " %s%s %s\n", i, g->mutable_ ? "mut " : "", ri_snap_valtype_name(g->type), buf);
    }
    if (img->nglobals > SHOWN_GLOBALS) printf("  ...        %" PRIu32 " more globals (--json has all)\n",
                                              img->nglobals - SHOWN_GLOBALS);
    if (img->nelems || img->ndatas)
        printf("  segments   %" PRIu32 " of %" PRIu32 " element and %" PRIu32 " of %" PRIu32 " data segments dropped\n",
               count_set(img->elem_dropped, img->nelems), img->nelems, count_set(img->data_dropped, img->ndatas),
               img->ndatas);
    if (img->has_wasi) {
        uint64_t files = 0, bytes = 0;
        if (workspace_usage(img, &files, &bytes))
            printf("  workspace  %" PRIu64 " files and directories, %" PRIu64 " bytes of content", files, bytes);
        else
            printf("  workspace  (does not parse)");
        printf("; %s %" PRIu64 " -> %" PRIu64 " bytes; WASI state %" PRIu64 " bytes\n",
               encoding_name(img->workspace_encoding), img->workspace_len, img->workspace_payload_len,
               img->wasi_state_len);
    }
    ri_snap_call call;
    ri_snap_error e;
    if (img->has_frames && ri_snap_read_call(img, &call, &e)) {
        printf("  paused     call to '");
        ri_put_safe(stdout, call.export_name, call.export_name_len);
        printf("' (function %" PRIu32 "), %" PRIu32 " frames, paused on %s, %" PRIu64 " gas used, %" PRIu64 " left\n",
               call.suspension.func_index, call.suspension.nframes, ri_suspend_reason_name(call.suspension.reason),
               call.gas_used, call.gas_left);
        ri_snap_call_free(&call);
    }
    printf("  checksum   crc32c:%08" PRIx32 "\n", img->checksum);
}

int ri_inspect_v2(const char *path, const uint8_t *data, size_t size, bool json, char *why, size_t why_cap) {
    ri_snap_image img;
    ri_snap_error err;
    if (!ri_snap_read(data, size, &img, &err) || !ri_inspect_verify_pages(&img, &err)) {
        snprintf(why, why_cap, "%s", err.message);
        ri_snap_image_free(&img);
        return RI_EXIT_INPUT;
    }
    if (json) print_json(path, &img);
    else print_text(path, &img);
    ri_snap_image_free(&img);
    return RI_EXIT_OK;
}
