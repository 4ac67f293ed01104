/*
 * Export and import: a snapshot out of the store as something portable, and back in.
 *
 * Binary: the WSNP v2 image with its module embedded (any sandbox restores it alone)
 * and the metadata (name, description, tags, time, origin) as the optional section
 * RIMD, which readers that do not know it skip. JSON: {"format": "ri-snapshot",
 * "version": 1, "snapshot": <the metadata>, "wsnp": <base64 of the image without RIMD>}.
 * Import takes either, or any WSNP v2 image; the metadata it carries is checked
 * against the image itself (every field the image determines: module, its size, status,
 * PRNG, gas, timestamp, memories, their sizes, stored pages, image size) while the image
 * is stored and before any blob is written (ss_put), so an edited export is refused
 * rather than stored with a lie in its metadata. The image's own RIMD is not kept: the
 * store's metadata is the manifest's, and an export writes it anew.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "store_internal.h"

#define EXPORT_FORMAT "ri-snapshot"
#define EXPORT_VERSION 1

static bool export_image(ri_snapstore *st, const char *name, bool metadata, uint8_t **out, size_t *len,
                         ri_snapstore_info *info, ri_snapstore_error *err) {
    ri_snapstore_image_options o;
    memset(&o, 0, sizeof o);
    o.include_module = true;
    o.compress = true;
    o.include_metadata = metadata;
    return ri_snapstore_get_image(st, name, &o, out, len, info, err);
}

static bool export_json(ri_snapstore *st, const char *name, uint8_t **out, size_t *out_len, ri_snapstore_error *err) {
    uint8_t *image;
    size_t len;
    ri_snapstore_info info;
    if (!export_image(st, name, false, &image, &len, &info, err)) return false;
    char *b64 = ri_base64_encode(image, len);
    free(image);
    char *meta = ss_meta_json(&info, true);
    ri_snapstore_info_free(&info);
    json_error_t je;
    json_t *snapshot = meta ? json_loads(meta, 0, &je) : NULL;
    free(meta);
    json_t *doc = json_object();
    bool ok = b64 && snapshot && doc;
    if (ok) {
        json_object_set_new(doc, "format", json_string(EXPORT_FORMAT));
        json_object_set_new(doc, "version", json_integer(EXPORT_VERSION));
        json_object_set_new(doc, "snapshot", snapshot);
        snapshot = NULL;
        json_object_set_new(doc, "wsnp", json_string(b64));
    }
    free(b64);
    json_decref(snapshot);
    char *text = ok ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text) return ss_nomem(err);
    size_t n = strlen(text);
    text[n] = '\n'; /* in place of the NUL: a text file ends with a newline */
    *out = (uint8_t *)text;
    *out_len = n + 1;
    return true;
}

bool ri_snapstore_export(ri_snapstore *st, const char *name, ri_snapstore_export_format format, uint8_t **out,
                         size_t *out_len, ri_snapstore_error *err) {
    ss_ok(err);
    if (out) *out = NULL;
    if (out_len) *out_len = 0;
    if (!st || !out || !out_len) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_export: a NULL argument");
    if (format == RI_SNAPSTORE_EXPORT_BINARY) return export_image(st, name, true, out, out_len, NULL, err);
    if (format == RI_SNAPSTORE_EXPORT_JSON) return export_json(st, name, out, out_len, err);
    return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "Unknown export format %d", (int)format);
}

/* ---- import -------------------------------------------------------------------------------------- */

/* The RIMD section of an image, if it has one. */
static bool read_rimd(const uint8_t *image, size_t len, bool *has, ri_snapstore_info *meta, ri_snapstore_error *err) {
    *has = false;
    ri_snap_image img;
    ri_snap_error e;
    if (!ri_snap_read(image, len, &img, &e)) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "%s", e.message);
    bool ok = true;
    for (uint32_t i = 0; i < img.nsections; i++) {
        const ri_snap_section *s = &img.sections[i];
        if (s->known || memcmp(s->tag, "RIMD", 4) != 0) continue;
        ok = ss_meta_parse((const char *)image + s->offset + RI_SNAP_SECTION_HEADER_BYTES, (size_t)s->length, true,
                           "Invalid export: section RIMD", meta, RI_SNAPSTORE_ERR_INPUT, err);
        *has = ok;
        break;
    }
    ri_snap_image_free(&img);
    return ok;
}

/* A JSON export: *image is malloc'd. */
static bool read_json(const uint8_t *data, size_t len, ri_snapstore_info *meta, uint8_t **image, size_t *image_len,
                      ri_snapstore_error *err) {
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &je);
    if (!doc) return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid export: not JSON (%s, line %d)", je.text, je.line);
    const char *why = NULL;
    json_t *format = json_object_get(doc, "format"), *version = json_object_get(doc, "version");
    json_t *snapshot = json_object_get(doc, "snapshot"), *wsnp = json_object_get(doc, "wsnp");
    if (!json_is_object(doc)) why = "not a JSON object";
    else if (!json_is_string(format) || strcmp(json_string_value(format), EXPORT_FORMAT) != 0)
        why = "\"format\" is not \"" EXPORT_FORMAT "\"";
    else if (!json_is_integer(version) || json_integer_value(version) != EXPORT_VERSION)
        why = "\"version\" is not 1";
    else if (!json_is_object(snapshot)) why = "\"snapshot\" is not an object";
    else if (!json_is_string(wsnp)) why = "\"wsnp\" is not a string";
    else if (json_object_size(doc) != 4) why = "it has keys other than format, version, snapshot and wsnp";
    if (why) {
        json_decref(doc);
        return ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid export: %s", why);
    }
    char *meta_text = json_dumps(snapshot, JSON_COMPACT | JSON_PRESERVE_ORDER);
    bool ok = meta_text != NULL || ss_nomem(err);
    if (ok)
        ok = ss_meta_parse(meta_text, strlen(meta_text), true, "Invalid export: \"snapshot\"", meta,
                           RI_SNAPSTORE_ERR_INPUT, err);
    free(meta_text);
    if (ok && !ri_base64_decode(json_string_value(wsnp), json_string_length(wsnp), image, image_len))
        ok = ss_fail(err, RI_SNAPSTORE_ERR_INPUT, "Invalid export: \"wsnp\" is not valid base64");
    json_decref(doc);
    if (!ok) ri_snapstore_info_free(meta);
    return ok;
}

bool ri_snapstore_import(ri_snapstore *st, const uint8_t *data, size_t len, const char *name,
                         const ri_snapstore_put_options *opts, ri_snapstore_info *info, ri_snapstore_error *err) {
    ss_ok(err);
    if (info) memset(info, 0, sizeof *info);
    if (!st || !data) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ri_snapstore_import: a NULL argument");
    ri_snapstore_put_options defaults;
    memset(&defaults, 0, sizeof defaults);
    if (!opts) opts = &defaults;
    if (!ss_abort_at_start(opts->abort, err)) return false;
    ri_snapstore_info meta;
    memset(&meta, 0, sizeof meta);
    bool has_meta = false, ok;
    uint8_t *decoded = NULL;
    const uint8_t *image = data;
    size_t image_len = len;
    size_t at = 0;
    while (at < len && (data[at] == ' ' || data[at] == '\n' || data[at] == '\r' || data[at] == '\t')) at++;
    if (at < len && data[at] == '{') {
        ok = read_json(data, len, &meta, &decoded, &image_len, err);
        has_meta = ok;
        image = decoded;
    } else if (len >= 5 && memcmp(data, "WSNP", 4) == 0 && data[4] == 2) {
        ok = read_rimd(data, len, &has_meta, &meta, err);
    } else {
        ok = ss_fail(err, RI_SNAPSTORE_ERR_INPUT,
                     "Not an export: neither a JSON export nor a WSNP v2 image (WSNP v1 cannot be imported)");
    }
    if (ok && !name && !has_meta)
        ok = ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT,
                     "The image carries no name (it has no RIMD metadata section): give the name to import it as");
    if (ok) ok = ss_put(st, name ? name : meta.name, image, image_len, opts, has_meta ? &meta : NULL, info, NULL, err);
    ri_snapstore_info_free(&meta);
    free(decoded);
    return ok;
}
