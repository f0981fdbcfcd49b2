/* UTF-8 decoding and validation (utf8.h). Each lead byte announces the length of its sequence
 * and the allowed range of the second byte, which is what excludes overlong forms, surrogates and
 * code points above U+10FFFF (RFC 3629 §4); later continuation bytes are always 0x80..0xBF. */
#include "utf8.h"

static int is_cont(unsigned char b) { return (b & 0xC0u) == 0x80u; }

size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    const unsigned char b0 = s[0];
    if (b0 < 0x80u) {
        *cp = b0;
        return 1;
    }
    size_t len;
    unsigned char lo = 0x80u, hi = 0xBFu; /* the allowed range of the second byte */
    uint32_t c;
    if (b0 >= 0xC2u && b0 <= 0xDFu) { /* C0, C1 would be overlong */
        len = 2;
        c = b0 & 0x1Fu;
    } else if (b0 >= 0xE0u && b0 <= 0xEFu) {
        len = 3;
        c = b0 & 0x0Fu;
        if (b0 == 0xE0u) lo = 0xA0u;      /* overlong below U+0800 */
        else if (b0 == 0xEDu) hi = 0x9Fu; /* surrogates U+D800..U+DFFF */
    } else if (b0 >= 0xF0u && b0 <= 0xF4u) {
        len = 4;
        c = b0 & 0x07u;
        if (b0 == 0xF0u) lo = 0x90u;      /* overlong below U+10000 */
        else if (b0 == 0xF4u) hi = 0x8Fu; /* above U+10FFFF */
    } else {
        return 0; /* a continuation byte, or F5..FF (beyond U+10FFFF) */
    }
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 1; k < len; k++) {
        if (!is_cont(s[k])) return 0;
        c = (c << 6) | (uint32_t)(s[k] & 0x3Fu);
    }
    *cp = c;
    return len;
}

size_t utf8_first_invalid(const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        if (u[i] != 0 && u[i] < 0x80u) { /* fast path for ASCII */
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = u[i] == 0 ? 0 : utf8_decode(u + i, len - i, &cp);
        if (k == 0) return i;
        i += k;
    }
    return len;
}
