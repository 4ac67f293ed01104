/* A WASI command's arguments in section RARG (see wasi_args.h). */
#include "cli/wasi_args.h"
#include "util/le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool put_strings(uint8_t **p, const char *const *s, uint32_t n) {
    memcpy(*p, &(uint8_t[4]){(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)}, 4);
    *p += 4;
    for (uint32_t i = 0; i < n; i++) {
        size_t len = strlen(s[i]);
        if (len > UINT32_MAX) return false;
        uint32_t l = (uint32_t)len;
        memcpy(*p, &(uint8_t[4]){(uint8_t)l, (uint8_t)(l >> 8), (uint8_t)(l >> 16), (uint8_t)(l >> 24)}, 4);
        memcpy(*p + 4, s[i], len);
        *p += 4 + len;
    }
    return true;
}

bool ri_wasi_args_attach(const uint8_t *image, size_t len, const char *const *argv, uint32_t argc,
                         const char *const *env, uint32_t nenv, uint8_t **out, size_t *out_len, char *why,
                         size_t why_cap) {
    size_t total = 8;
    for (uint32_t i = 0; i < argc; i++) total += 4 + strlen(argv[i]);
    for (uint32_t i = 0; i < nenv; i++) total += 4 + strlen(env[i]);
    uint8_t *buf = malloc(total), *p = buf;
    if (!buf || !put_strings(&p, argv, argc) || !put_strings(&p, env, nenv)) {
        free(buf);
        snprintf(why, why_cap, "out of memory");
        return false;
    }
    ri_snap_error e;
    bool ok = ri_snap_set_section(image, len, RI_WASI_ARGS_TAG, buf, total, out, out_len, &e);
    free(buf);
    if (!ok) snprintf(why, why_cap, "%s", e.message);
    return ok;
}

/* n strings from [*p, end): each checked against the bytes left before anything is kept. */
static bool get_strings(const uint8_t **p, const uint8_t *end, char ***out, uint32_t *count) {
    if (end - *p < 4) return false;
    uint32_t n = ri_le_get32(*p);
    *p += 4;
    if (n > (size_t)(end - *p) / 4) return false; /* each takes at least 4 bytes */
    char **v = calloc(n ? n : 1, sizeof *v);
    if (!v) return false;
    *out = v;
    for (uint32_t i = 0; i < n; i++) {
        if (end - *p < 4) return false;
        uint32_t l = ri_le_get32(*p);
        *p += 4;
        if (l > (size_t)(end - *p) || memchr(*p, 0, l)) return false;
        if (!(v[i] = malloc((size_t)l + 1))) return false;
        memcpy(v[i], *p, l);
        v[i][l] = '\0';
        *count = i + 1;
        *p += l;
    }
    *count = n;
    return true;
}

void ri_wasi_args_free(ri_wasi_args *a) {
    for (uint32_t i = 0; a->argv && i < a->argc; i++) free(a->argv[i]);
    for (uint32_t i = 0; a->env && i < a->nenv; i++) free(a->env[i]);
    free(a->argv);
    free(a->env);
    memset(a, 0, sizeof *a);
}

bool ri_wasi_args_read(const ri_snap_image *img, const uint8_t *data, ri_wasi_args *out, char *why, size_t why_cap) {
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < img->nsections; i++) {
        const ri_snap_section *s = &img->sections[i];
        if (s->known || memcmp(s->tag, RI_WASI_ARGS_TAG, 4) != 0) continue;
        const uint8_t *p = data + s->offset + RI_SNAP_SECTION_HEADER_BYTES, *end = p + s->length;
        if (!get_strings(&p, end, &out->argv, &out->argc) || !get_strings(&p, end, &out->env, &out->nenv) || p != end) {
            ri_wasi_args_free(out);
            snprintf(why, why_cap, "the section %s (the command's arguments) is malformed", RI_WASI_ARGS_TAG);
            return false;
        }
        return true;
    }
    return true;
}
