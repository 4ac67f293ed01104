/* Images of an initialised interpreter (ri/lang.h): the template's state as a WSNP v2
 * snapshot behind a header that binds it to the module, the library and the config, and a
 * cache of them in a folder (docs/LANGUAGES.md "Images").
 *
 * The file: "RILANGIM", u32 format, u32 language, the key (SHA-256, 32 bytes), the
 * language's state words (4 x i64), u64 payload length, the payload's SHA-256, the payload
 * (the snapshot). Little-endian. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lang/lang_internal.h"
#include "ri/version.h"
#include "util/buf.h"
#include "util/hex.h"
#include "util/le.h"

#define IMAGE_FORMAT 1u
#define MAGIC "RILANGIM"
#define HEADER (8 + 4 + 4 + 32 + 8 * LANG_STATE_WORDS + 8 + 32)

static bool image_error(ri_sandbox_error *err, ri_sandbox_errcode code, const char *why) {
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = code;
        snprintf(err->message, sizeof err->message, "the interpreter's image: %s", why);
    }
    return false;
}

static void put_str(ri_buf *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    ri_buf_u64(b, n);
    ri_buf_put(b, s ? s : "", n);
}

/* What the initialised state depends on: the module, the library, what of the config the
 * initialisation sees (its limits only decide whether it finishes). */
bool lang_image_key(ri_language lang, const uint8_t *wasm, size_t len, const ri_sandbox_config *c,
                      uint8_t key[32]) {
    uint8_t module[32];
    if (!ri_snap_sha256(wasm, len, module)) return false;
    ri_buf b = {0};
    put_str(&b, "ri interpreter image");
    ri_buf_u64(&b, IMAGE_FORMAT);
    put_str(&b, ri_version());
    put_str(&b, ri_language_name(lang));
    const lang_ops *ops = lang_ops_for(lang);
    put_str(&b, ops ? ops->setup : NULL); /* what its initialisation runs as text (JavaScript's runtime) */
    ri_buf_put(&b, module, sizeof module);
    ri_buf_u64(&b, c->deterministic_seed);
    ri_buf_u64(&b, (uint64_t)c->event_timestamp);
    const ri_wasi_config *w = c->wasi;
    ri_buf_u64(&b, w ? w->argc : 0);
    for (uint32_t i = 0; w && i < w->argc; i++) put_str(&b, w->argv[i]);
    ri_buf_u64(&b, w ? w->nenv : 0);
    for (uint32_t i = 0; w && i < w->nenv; i++) put_str(&b, w->env[i]);
    ri_buf_u64(&b, w ? w->terminals : 0);
    ri_buf_u64(&b, w ? w->clock_step_ns : 0);
    ri_buf_u64(&b, w ? w->no_preopen : 0);
    bool ok = !b.failed && ri_snap_sha256(b.data, b.len, key);
    free(b.data);
    return ok;
}

bool ri_interpreter_image(ri_interpreter *it, uint8_t **out, size_t *out_len, ri_sandbox_error *err) {
    if (!it || !out || !out_len) return image_error(err, RI_SANDBOX_INVALID_CONFIG, "a NULL argument");
    *out = NULL;
    *out_len = 0;
    /* the template is in the ready state (it never runs code): its snapshot is the image's */
    ri_snapshot_options opts = {.format = RI_SNAPSHOT_V2, .include_module = false, .uncompressed = false};
    uint8_t *snap = NULL;
    size_t snap_len = 0;
    if (!ri_sandbox_snapshot_with(it->template_sb, &opts, &snap, &snap_len, err)) return false;
    uint8_t digest[32];
    ri_buf b = {0};
    ri_buf_put(&b, MAGIC, 8);
    uint8_t u32le[8];
    for (int i = 0; i < 4; i++) u32le[i] = (uint8_t)(IMAGE_FORMAT >> (8 * i));
    for (int i = 0; i < 4; i++) u32le[4 + i] = (uint8_t)((uint32_t)it->ops->lang >> (8 * i));
    ri_buf_put(&b, u32le, 8);
    ri_buf_put(&b, it->key, 32);
    for (int i = 0; i < LANG_STATE_WORDS; i++) ri_buf_u64(&b, (uint64_t)it->state[i]);
    ri_buf_u64(&b, snap_len);
    if (!ri_snap_sha256(snap, snap_len, digest)) b.failed = true;
    ri_buf_put(&b, digest, 32);
    ri_buf_put(&b, snap, snap_len);
    free(snap);
    if (b.failed) {
        free(b.data);
        return image_error(err, RI_SANDBOX_SNAPSHOT_ERROR, "out of memory");
    }
    *out = b.data;
    *out_len = b.len;
    return true;
}

/* Whether image (a header and its payload) is one for this key; why when not. */
static bool image_matches(ri_language lang, const uint8_t key[32], const uint8_t *image, size_t len,
                          ri_sandbox_error *err) {
    if (len < HEADER || memcmp(image, MAGIC, 8) != 0) return image_error(err, RI_SANDBOX_INVALID_MODULE, "not an image");
    uint32_t format = (uint32_t)ri_le_get64(image + 8) & 0xffffffffu, l = (uint32_t)(ri_le_get64(image + 8) >> 32);
    if (format != IMAGE_FORMAT) return image_error(err, RI_SANDBOX_INVALID_MODULE, "another image format");
    if (l != (uint32_t)lang) return image_error(err, RI_SANDBOX_INVALID_MODULE, "another language's");
    if (memcmp(image + 16, key, 32) != 0)
        return image_error(err, RI_SANDBOX_INVALID_MODULE, "made from another module, library version or config");
    uint64_t payload = ri_le_get64(image + HEADER - 40);
    if (payload != len - HEADER) return image_error(err, RI_SANDBOX_INVALID_MODULE, "truncated");
    uint8_t digest[32];
    if (!ri_snap_sha256(image + HEADER, (size_t)payload, digest) || memcmp(digest, image + HEADER - 32, 32) != 0)
        return image_error(err, RI_SANDBOX_INVALID_MODULE, "damaged (its checksum does not match)");
    return true;
}

static ri_interpreter *open_keyed(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                                  const ri_sandbox_config *config, const uint8_t key[32], const uint8_t *image,
                                  size_t image_len, ri_sandbox_error *err) {
    ri_interpreter *it = image ? lang_prepare(factory, lang, wasm, len, config, err)
                               : ri_interpreter_open(factory, lang, wasm, len, config, err);
    if (!it) return NULL;
    (void)key; /* lang_prepare computed it->key from the same module and config */
    if (!image) return it;
    for (int i = 0; i < LANG_STATE_WORDS; i++) it->state[i] = (int64_t)ri_le_get64(image + 48 + 8 * i);
    if (!ri_sandbox_restore(it->template_sb, image + HEADER, image_len - HEADER, err)) {
        ri_interpreter_free(it);
        return NULL;
    }
    return lang_ready(it, err);
}

ri_interpreter *ri_interpreter_open_image(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                                          const ri_sandbox_config *config, const uint8_t *image, size_t image_len,
                                          ri_sandbox_error *err) {
    uint8_t key[32];
    if (!wasm || !config || !image) return image_error(err, RI_SANDBOX_INVALID_CONFIG, "a NULL argument"), NULL;
    if (!lang_image_key(lang, wasm, len, config, key)) return image_error(err, RI_SANDBOX_INVALID_CONFIG, "out of memory"), NULL;
    if (!image_matches(lang, key, image, image_len, err)) return NULL;
    return open_keyed(factory, lang, wasm, len, config, key, image, image_len, err);
}

/* ---- the cache folder -------------------------------------------------------------------- */

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    *len = 0;
    if (!f) return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && (data = malloc((size_t)st.st_size)) != NULL &&
        fread(data, 1, (size_t)st.st_size, f) == (size_t)st.st_size) {
        *len = (size_t)st.st_size;
    } else {
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

/* Atomic: a temporary file beside it, written, fsync'd, renamed over it, the folder fsync'd. */
static bool write_atomic(const char *dir, const char *path, const uint8_t *data, size_t len) {
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) return false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    bool ok = done == len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        unlink(tmp);
        return false;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return true;
}

ri_interpreter *ri_interpreter_open_cached(ri_sandboxes *factory, ri_language lang, const uint8_t *wasm, size_t len,
                                           const ri_sandbox_config *config, const char *cache_dir, ri_image_use *used,
                                           ri_sandbox_error *err) {
    ri_image_use scratch_use;
    if (!used) used = &scratch_use;
    *used = RI_IMAGE_NOT_CACHED;
    uint8_t key[32];
    const char *name = ri_language_name(lang);
    if (!name || !wasm || !config) return image_error(err, RI_SANDBOX_INVALID_CONFIG, "a NULL argument or an unknown language"), NULL;
    if (!lang_image_key(lang, wasm, len, config, key)) return image_error(err, RI_SANDBOX_INVALID_CONFIG, "out of memory"), NULL;
    char hex[65], path[4096];
    ri_hex_encode(key, 16, hex);
    bool cached = cache_dir && cache_dir[0] &&
                  (size_t)snprintf(path, sizeof path, "%s/%s-%s.image", cache_dir, name, hex) < sizeof path;
    if (cached) {
        size_t image_len;
        uint8_t *image = read_file(path, &image_len);
        ri_sandbox_error ignored;
        /* a damaged or mismatching image is ignored (and replaced below), never trusted */
        ri_interpreter *it = image && image_matches(lang, key, image, image_len, &ignored)
                                 ? open_keyed(factory, lang, wasm, len, config, key, image, image_len, &ignored)
                                 : NULL;
        free(image);
        if (it) {
            *used = RI_IMAGE_RESTORED;
            return it;
        }
    }
    ri_interpreter *it = open_keyed(factory, lang, wasm, len, config, key, NULL, 0, err);
    if (it && cached) {
        uint8_t *image;
        size_t image_len;
        ri_sandbox_error ignored;
        if (ri_interpreter_image(it, &image, &image_len, &ignored)) {
            if (write_atomic(cache_dir, path, image, image_len)) *used = RI_IMAGE_WRITTEN;
            free(image);
        }
    }
    return it;
}
