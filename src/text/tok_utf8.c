/* UTF-8 validation for the tokenizer: text is checked before it reaches SentencePiece, whose
 * normalizer would otherwise replace bad bytes silently. */
#include "tokenizer_internal.h"

#include <stdint.h>

/* Each lead byte announces the length of its sequence and the allowed range of the second byte,
 * which is what excludes overlong forms, surrogates and code points above U+10FFFF (RFC 3629 §4,
 * the table of well-formed byte sequences). Later continuation bytes are always 0x80..0xBF. */
size_t tok_utf8_first_invalid(const char *s, size_t len) {
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        uint8_t c = p[i];
        if (c == 0) return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            if (c == 0xE0) lo = 0xA0;      /* overlong below U+0800 */
            else if (c == 0xED) hi = 0x9F; /* surrogates U+D800..U+DFFF */
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            if (c == 0xF0) lo = 0x90;      /* overlong below U+10000 */
            else if (c == 0xF4) hi = 0x8F; /* above U+10FFFF */
        } else {
            return i; /* continuation byte, 0xC0/0xC1 (overlong) or 0xF5..0xFF */
        }
        if (len - i < n) return i;
        if (p[i + 1] < lo || p[i + 1] > hi) return i;
        for (size_t k = 2; k < n; k++)
            if (p[i + k] < 0x80 || p[i + k] > 0xBF) return i;
        i += n;
    }
    return len;
}
