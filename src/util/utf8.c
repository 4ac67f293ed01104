/* Strict UTF-8 (see utf8.h). */
#include "util/utf8.h"

/* The length a lead byte announces, 0 if it is no lead (C0, C1 and F5..FF never are). */
static size_t lead_length(uint8_t b) {
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return 2;
    if (b >= 0xE0 && b <= 0xEF) return 3;
    if (b >= 0xF0 && b <= 0xF4) return 4;
    return 0;
}

/* Whether c may be continuation byte k (1-based) after lead: the second byte's range
 * rules out overlongs, surrogates and code points above U+10FFFF. */
static bool continues(uint8_t lead, size_t k, uint8_t c) {
    if ((c & 0xC0) != 0x80) return false;
    if (k == 1) {
        if (lead == 0xE0 && c < 0xA0) return false;
        if (lead == 0xED && c > 0x9F) return false;
        if (lead == 0xF0 && c < 0x90) return false;
        if (lead == 0xF4 && c > 0x8F) return false;
    }
    return true;
}

size_t ri_utf8_subpart(const uint8_t *s, size_t n) {
    size_t len = lead_length(s[0]);
    if (len == 0) return 0;
    size_t k = 1;
    while (k < len && k < n && continues(s[0], k, s[k])) k++;
    return k;
}

size_t ri_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp) {
    size_t len = lead_length(s[0]);
    if (len == 0 || ri_utf8_subpart(s, n) != len) return 0;
    static const uint8_t lead_mask[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t v = s[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++) v = v << 6 | (s[i] & 0x3Fu);
    *cp = v;
    return len;
}

bool ri_utf8_valid(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = ri_utf8_decode(s + i, n - i, &cp);
        if (!k) return false;
        i += k;
    }
    return true;
}
