/* The blank-line and one-line rules of include/tfm/text.h, over the UTF-8 decoder of utf8.c. */
#include "tfm/text.h"

#include "utf8.h"

#include <stdint.h>
#include <string.h>

/* Code points that may fill a blank line, as sorted, disjoint, inclusive ranges: Cc, White_Space
 * and Default_Ignorable_Code_Point of Unicode 15.1 (text.h lists each). */
static const uint32_t k_blank[][2] = {
    {0x0000, 0x0020},   {0x007F, 0x00A0},   {0x00AD, 0x00AD},   {0x034F, 0x034F},   {0x061C, 0x061C},
    {0x115F, 0x1160},   {0x1680, 0x1680},   {0x17B4, 0x17B5},   {0x180B, 0x180F},   {0x2000, 0x200F},
    {0x2028, 0x202F},   {0x205F, 0x206F},   {0x3000, 0x3000},   {0x3164, 0x3164},   {0xFE00, 0xFE0F},
    {0xFEFF, 0xFEFF},   {0xFFA0, 0xFFA0},   {0xFFF0, 0xFFF8},   {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0xE0000, 0xE0FFF},
};

static int blank_code_point(uint32_t cp) {
    size_t lo = 0, hi = sizeof k_blank / sizeof k_blank[0];
    while (lo < hi) { /* binary search for the range that could hold cp */
        const size_t mid = lo + (hi - lo) / 2;
        if (cp < k_blank[mid][0]) hi = mid;
        else if (cp > k_blank[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

int tfm_text_is_blank(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const size_t k = utf8_decode(u + i, n - i, &cp);
        if (k == 0 || !blank_code_point(cp)) return 0;
        i += k;
    }
    return 1;
}

/* The bytes of a line break starting at u[0..n): 1..3, or 0 if none starts there. */
static size_t line_break_at(const unsigned char *u, size_t n) {
    if ((u[0] >= 0x0A && u[0] <= 0x0D) || (u[0] >= 0x1C && u[0] <= 0x1E)) return 1;
    if (n >= 2 && u[0] == 0xC2 && u[1] == 0x85) return 2;                                  /* U+0085 */
    if (n >= 3 && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9)) return 3; /* U+2028/9 */
    return 0;
}

size_t tfm_text_one_line(char *s, size_t n) {
    unsigned char *u = (unsigned char *)s;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        /* a NUL is no line break, but it ends the line for every C string and file reader */
        const size_t k = u[i] == 0 ? 1 : line_break_at(u + i, n - i);
        if (k) {
            u[w++] = ' ';
            i += k;
        } else {
            u[w++] = u[i++];
        }
    }
    if (w < n) u[w] = '\0';
    return w;
}
