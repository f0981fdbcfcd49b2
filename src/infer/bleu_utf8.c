/* UTF-8 decoding and Python's notion of whitespace, so that BLEU and chrF see the same code
 * points and the same word boundaries as sacreBLEU, which works on Python str. */
#include "bleu_internal.h"

static int is_cont(unsigned char b) { return (b & 0xC0u) == 0x80u; }

size_t bleu_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char b0 = s[0];
    if (b0 < 0x80u) {
        *cp = b0;
        return 1;
    }
    /* Lead bytes C0, C1 (overlong) and F5..FF (beyond U+10FFFF) are never valid. */
    if (b0 >= 0xC2u && b0 <= 0xDFu) {
        if (n < 2 || !is_cont(s[1])) return 0;
        *cp = ((uint32_t)(b0 & 0x1Fu) << 6) | (uint32_t)(s[1] & 0x3Fu);
        return 2;
    }
    if (b0 >= 0xE0u && b0 <= 0xEFu) {
        if (n < 3 || !is_cont(s[1]) || !is_cont(s[2])) return 0;
        if (b0 == 0xE0u && s[1] < 0xA0u) return 0; /* overlong */
        if (b0 == 0xEDu && s[1] >= 0xA0u) return 0; /* surrogates U+D800..U+DFFF */
        *cp = ((uint32_t)(b0 & 0x0Fu) << 12) | ((uint32_t)(s[1] & 0x3Fu) << 6) |
              (uint32_t)(s[2] & 0x3Fu);
        return 3;
    }
    if (b0 >= 0xF0u && b0 <= 0xF4u) {
        if (n < 4 || !is_cont(s[1]) || !is_cont(s[2]) || !is_cont(s[3])) return 0;
        if (b0 == 0xF0u && s[1] < 0x90u) return 0; /* overlong */
        if (b0 == 0xF4u && s[1] >= 0x90u) return 0; /* above U+10FFFF */
        *cp = ((uint32_t)(b0 & 0x07u) << 18) | ((uint32_t)(s[1] & 0x3Fu) << 12) |
              ((uint32_t)(s[2] & 0x3Fu) << 6) | (uint32_t)(s[3] & 0x3Fu);
        return 4;
    }
    return 0;
}

int bleu_utf8_valid(const char *s, size_t n, size_t *bad_offset) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80u) { /* fast path for ASCII */
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = bleu_utf8_decode(u + i, n - i, &cp);
        if (k == 0) {
            if (bad_offset) *bad_offset = i;
            return 0;
        }
        i += k;
    }
    return 1;
}

int bleu_is_py_space(uint32_t c) {
    if (c <= 0x20u) return c == 0x20u || (c >= 0x09u && c <= 0x0Du) || (c >= 0x1Cu && c <= 0x1Fu);
    if (c < 0x85u) return 0;
    switch (c) {
    case 0x85u: case 0xA0u: case 0x1680u: case 0x2028u: case 0x2029u: case 0x202Fu:
    case 0x205Fu: case 0x3000u:
        return 1;
    default:
        return c >= 0x2000u && c <= 0x200Au;
    }
}
