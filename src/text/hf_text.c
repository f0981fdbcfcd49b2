/* The text transformers' SentencePiece tokenizers decode to (tok_kind.h, hf_spm_text): what
 * convert_tokens_to_string does with the pieces of MarianTokenizer and NllbTokenizer. */
#include "tok_kind.h"
#include "utf8.h"

#include <string.h>

/* Python's str.isspace() for one code point. */
static int py_space(uint32_t c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

size_t hf_spm_text(char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n;) { /* U+2581 is e2 96 81 */
        if (i + 2 < n && (unsigned char)s[i] == 0xe2 && (unsigned char)s[i + 1] == 0x96 &&
            (unsigned char)s[i + 2] == 0x81) {
            s[k++] = ' ';
            i += 3;
        } else {
            s[k++] = s[i++];
        }
    }
    n = k;
    size_t a = 0, b = n;
    uint32_t cp;
    for (size_t l; a < b && (l = utf8_decode((const unsigned char *)s + a, b - a, &cp)) > 0 && py_space(cp);) a += l;
    while (b > a) { /* back to the start of the last character */
        size_t c = b - 1;
        while (c > a && ((unsigned char)s[c] & 0xc0) == 0x80) c--;
        if (utf8_decode((const unsigned char *)s + c, b - c, &cp) == 0 || !py_space(cp)) break;
        b = c;
    }
    memmove(s, s + a, b - a);
    s[b - a] = '\0';
    return b - a;
}
