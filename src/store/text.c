/*
 * Text the store accepts and makes: hex digests, UTF-8 checks, the rules for names,
 * ids, descriptions and tags (a name becomes a file name, so its alphabet is small and
 * nothing in it needs quoting), random ids, the wall clock.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "store_internal.h"

bool ss_utf8_valid(const char *s, size_t n) { return ri_utf8_valid((const uint8_t *)s, n); }

/* UTF-8 without control characters (C0, DEL, C1); newline and tab when allow_lines. */
static bool plain_text(const char *s, size_t n, bool allow_lines) {
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = ri_utf8_decode(p + i, n - i, &cp);
        if (!k) return false;
        bool control = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0);
        if (control && !(allow_lines && (cp == '\n' || cp == '\t'))) return false;
        i += k;
    }
    return true;
}

bool ss_description_valid(const char *s, ri_snapstore_error *err) {
    size_t n = strlen(s);
    if (n > RI_SNAPSTORE_DESCRIPTION_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid description: %zu bytes (at most %d)", n,
                       RI_SNAPSTORE_DESCRIPTION_MAX);
    if (!plain_text(s, n, true))
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME,
                       "Invalid description: it must be UTF-8 without control characters (newline and tab allowed)");
    return true;
}

bool ss_tag_valid(const char *s, ri_snapstore_error *err) {
    size_t n = strlen(s);
    if (n == 0 || n > RI_SNAPSTORE_TAG_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid tag: tags are 1 to %d bytes (this one is %zu)",
                       RI_SNAPSTORE_TAG_MAX, n);
    if (!plain_text(s, n, false))
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid tag: it must be UTF-8 without control characters");
    return true;
}

bool ss_tags_valid(const char *const *tags, uint32_t ntags, ri_snapstore_error *err) {
    if (ntags > RI_SNAPSTORE_TAGS_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Too many tags: %u (at most %d)", ntags,
                       RI_SNAPSTORE_TAGS_MAX);
    if (ntags && !tags) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ntags is %u but tags is NULL", ntags);
    for (uint32_t i = 0; i < ntags; i++) {
        if (!tags[i]) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "tag %u is NULL", i);
        if (!ss_tag_valid(tags[i], err)) return false;
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(tags[k], tags[i]) == 0)
                return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid tags: '%s' is given twice", tags[i]);
    }
    return true;
}

static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

/* The offending character, printable, for a message. */
static void describe_char(char c, char out[8]) {
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7F) {
        out[0] = '\'';
        out[1] = c;
        out[2] = '\'';
        out[3] = '\0';
    } else {
        static const char digits[] = "0123456789ABCDEF";
        memcpy(out, "\\x", 2);
        out[2] = digits[u >> 4];
        out[3] = digits[u & 15];
        out[4] = '\0';
    }
}

bool ri_snapstore_name_valid(const char *s, ri_snapstore_error *err) {
    static const char rule[] =
        "names are 1 to 128 characters from A-Z a-z 0-9 . _ - and do not start with '.' or '-'";
    if (!s) return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid snapshot name: none given (%s)", rule);
    size_t n = strlen(s);
    if (n == 0) return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid snapshot name: it is empty (%s)", rule);
    if (n > RI_SNAPSTORE_NAME_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid snapshot name: %zu characters (%s)", n, rule);
    for (size_t i = 0; i < n; i++) {
        if (!name_char(s[i])) {
            char what[8];
            describe_char(s[i], what);
            return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME,
                           "Invalid snapshot name: character %s at position %zu (%s)", what, i + 1, rule);
        }
    }
    if (s[0] == '.' || s[0] == '-')
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid snapshot name '%s': it starts with '%c' (%s)", s,
                       s[0], rule);
    return true;
}

bool ri_snapstore_origin_valid(const char *s, ri_snapstore_error *err) {
    static const char rule[] =
        "ids are 1 to 63 characters from A-Z a-z 0-9 . _ - and start with a letter or a digit";
    if (!s) return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid id: none given (%s)", rule);
    size_t n = strlen(s);
    if (n == 0 || n > RI_SNAPSTORE_ORIGIN_MAX)
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid id: %zu characters (%s)", n, rule);
    for (size_t i = 0; i < n; i++) {
        if (!name_char(s[i])) {
            char what[8];
            describe_char(s[i], what);
            return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid id: character %s at position %zu (%s)", what,
                           i + 1, rule);
        }
    }
    if (s[0] == '.' || s[0] == '_' || s[0] == '-')
        return ss_fail(err, RI_SNAPSTORE_ERR_INVALID_NAME, "Invalid id '%s': it starts with '%c' (%s)", s, s[0], rule);
    return true;
}

bool ss_random_hex(char *out, size_t n_bytes, ri_snapstore_error *err) {
    uint8_t bytes[32];
    if (n_bytes > sizeof bytes) return ss_fail(err, RI_SNAPSTORE_ERR_ARGUMENT, "ss_random_hex: too many bytes");
    if (!ri_random_bytes(bytes, n_bytes)) return ss_fail_errno(err, errno, "Cannot get random bytes for an id");
    ri_hex_encode(bytes, n_bytes, out);
    return true;
}

