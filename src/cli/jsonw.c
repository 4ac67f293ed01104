/* Streaming JSON writer with a stable key order (see jsonw.h). Output is indented by two
 * spaces per level, one member or element per line. */
#include "cli/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/utf8.h"

void ri_jsonw_init(ri_jsonw *w, FILE *out) {
    w->out = out;
    w->depth = 0;
    w->has_items[0] = false;
    w->closer[0] = '\0';
    w->flat[0] = false;
    w->after_key = false;
}

void ri_jsonw_finish(ri_jsonw *w) { fputc('\n', w->out); }

static void indent(ri_jsonw *w) {
    fputc('\n', w->out);
    for (int i = 0; i < w->depth; i++) fputs("  ", w->out);
}

/* Before any key or value: the separator and line break its position needs. */
static void before_item(ri_jsonw *w) {
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0) return;
    bool had = w->has_items[w->depth];
    w->has_items[w->depth] = true;
    if (w->flat[w->depth]) {
        if (had) fputs(", ", w->out);
        return;
    }
    if (had) fputc(',', w->out);
    indent(w);
}

static void open_container(ri_jsonw *w, char opener, char closer, bool flat) {
    before_item(w);
    fputc(opener, w->out);
    /* ri's output shapes are fixed and shallow; the bound only guards the arrays. */
    if (w->depth + 1 < RI_JSONW_MAX_DEPTH) {
        w->depth++;
        w->has_items[w->depth] = false;
        w->closer[w->depth] = closer;
        w->flat[w->depth] = flat || w->flat[w->depth - 1];
    }
}

void ri_jsonw_object(ri_jsonw *w) { open_container(w, '{', '}', false); }
void ri_jsonw_array(ri_jsonw *w) { open_container(w, '[', ']', false); }
void ri_jsonw_array_flat(ri_jsonw *w) { open_container(w, '[', ']', true); }

void ri_jsonw_end(ri_jsonw *w) {
    if (w->depth == 0) return;
    bool had_items = w->has_items[w->depth];
    bool flat = w->flat[w->depth];
    char closer = w->closer[w->depth];
    w->depth--;
    if (had_items && !flat) indent(w); /* an empty container stays "{}" / "[]" */
    fputc(closer, w->out);
}

static void write_string(FILE *f, const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = ri_utf8_decode(p + i, n - i, &cp);
        if (len == 0) {
            fputs("\\ufffd", f); /* an invalid byte: JSON text must be UTF-8 */
            i++;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (cp < 0x20 || cp == 0x7F)
                fprintf(f, "\\u%04x", (unsigned)cp);
            else
                fwrite(p + i, 1, len, f);
        }
        i += len;
    }
    fputc('"', f);
}

void ri_jsonw_key(ri_jsonw *w, const char *key) {
    before_item(w);
    write_string(w->out, key, strlen(key));
    fputs(": ", w->out);
    w->after_key = true;
}

void ri_jsonw_str(ri_jsonw *w, const char *s) {
    if (!s) {
        ri_jsonw_null(w);
        return;
    }
    ri_jsonw_strn(w, s, strlen(s));
}

void ri_jsonw_strn(ri_jsonw *w, const char *s, size_t n) {
    before_item(w);
    write_string(w->out, s, n);
}

void ri_jsonw_u64(ri_jsonw *w, uint64_t v) {
    before_item(w);
    fprintf(w->out, "%" PRIu64, v);
}

void ri_jsonw_i64(ri_jsonw *w, int64_t v) {
    before_item(w);
    fprintf(w->out, "%" PRId64, v);
}

void ri_jsonw_ms(ri_jsonw *w, double ms) {
    before_item(w);
    if (isfinite(ms))
        fprintf(w->out, "%.3f", ms);
    else
        fputs("null", w->out);
}

void ri_jsonw_bool(ri_jsonw *w, bool v) {
    before_item(w);
    fputs(v ? "true" : "false", w->out);
}

void ri_jsonw_null(ri_jsonw *w) {
    before_item(w);
    fputs("null", w->out);
}

void ri_jsonw_raw(ri_jsonw *w, const char *json) {
    before_item(w);
    fputs(json, w->out);
}
