/* Python's notion of whitespace, so that BLEU and chrF see the same word boundaries as
 * sacreBLEU, which works on Python str. */
#include "bleu_internal.h"

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
