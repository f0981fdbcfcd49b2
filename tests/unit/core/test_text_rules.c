/* The blank-line and one-line rules of include/tfm/text.h (issue 12, kinds 1 and 2): every
 * White_Space, default-ignorable and control code point alone and mixed is blank, their
 * neighbours are not, invalid UTF-8 is not; every line break of any kind becomes one space. */
#include "test_util.h"

#include "tfm/text.h"

#include <stdint.h>
#include <string.h>

/* UTF-8 of one code point into buf (NUL-terminated); returns its length. */
static size_t put_utf8(char *buf, uint32_t cp) {
    size_t n;
    if (cp < 0x80) {
        buf[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        buf[0] = (char)(0xF0 | (cp >> 18));
        buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buf[n] = '\0';
    return n;
}

/* Every code point text.h lists as blank, as inclusive ranges. */
static const uint32_t k_blank[][2] = {
    {0x0001, 0x001F}, {0x0020, 0x0020}, {0x007F, 0x009F}, {0x00A0, 0x00A0}, {0x00AD, 0x00AD},
    {0x034F, 0x034F}, {0x061C, 0x061C}, {0x115F, 0x1160}, {0x1680, 0x1680}, {0x17B4, 0x17B5},
    {0x180B, 0x180F}, {0x2000, 0x200A}, {0x200B, 0x200F}, {0x2028, 0x2029}, {0x202A, 0x202E},
    {0x202F, 0x202F}, {0x205F, 0x205F}, {0x2060, 0x206F}, {0x3000, 0x3000}, {0x3164, 0x3164},
    {0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFF8}, {0x1BCA0, 0x1BCA3},
    {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF},
};

/* Printing neighbours of those ranges and other look-alikes that are not blank. */
static const uint32_t k_not_blank[] = {
    'a', '0', '.', 0x00A1, 0x00AC, 0x00AE, 0x034E, 0x0350, 0x061B, 0x061D, 0x115E, 0x1161, 0x167F, 0x1681,
    0x17B3, 0x17B6, 0x180A, 0x1810, 0x2010, 0x2027, 0x2030, 0x205E, 0x2070, 0x2FFF, 0x3001, 0x3163,
    0x3165, 0xFDFF, 0xFE10, 0xFEFE, 0xFF00, 0xFF9F, 0xFFA1, 0xFFEF, 0xFFF9, 0xFFFD, 0x1BC9F, 0x1BCA4,
    0x1D172, 0x1D17B, 0xE1000, 0x2800 /* BRAILLE PATTERN BLANK prints a blank cell but is a symbol */,
};

static void test_blank(void) {
    char buf[8], line[64];
    CHECK(tfm_text_is_blank(NULL, 0) && tfm_text_is_blank("", 0), "the empty line is blank");
    size_t n_checked = 0;
    for (size_t r = 0; r < sizeof k_blank / sizeof k_blank[0]; r++) {
        for (uint32_t cp = k_blank[r][0]; cp <= k_blank[r][1]; cp++) {
            const size_t n = put_utf8(buf, cp);
            CHECK(tfm_text_is_blank(buf, n), "U+%04X alone is blank", (unsigned)cp);
            n_checked++;
        }
    }
    CHECK(n_checked > 4000, "%zu blank code points checked", n_checked);
    for (size_t i = 0; i < sizeof k_not_blank / sizeof k_not_blank[0]; i++) {
        const size_t n = put_utf8(buf, k_not_blank[i]);
        CHECK(!tfm_text_is_blank(buf, n), "U+%04X alone is not blank", (unsigned)k_not_blank[i]);
        /* nor is it hidden among blank characters */
        snprintf(line, sizeof line, " \xc2\xa0\xe2\x80\x8b%s\xe3\x80\x80\t", buf);
        CHECK(!tfm_text_is_blank(line, strlen(line)), "U+%04X among blanks is not blank", (unsigned)k_not_blank[i]);
    }
    /* mixtures of the examples */
    static const char *const blank_lines[] = {
        "\xc2\xa0",                         /* U+00A0 */
        "\xe3\x80\x80\xe3\x80\x80",         /* U+3000 twice */
        "\xe2\x80\xa8",                     /* U+2028 */
        "\xc2\x85",                         /* U+0085 */
        "\xe2\x80\x83 \t",                  /* U+2003, space, tab */
        "\xe2\x80\x8b\xef\xbb\xbf\xc2\xad", /* ZWSP, BOM, soft hyphen */
        "\x1b",                             /* a lone control */
        "\r\v\f",
        "\xf3\xa0\x80\x81\xf3\xa0\x81\xbf", /* tags U+E0001, U+E007F */
    };
    for (size_t i = 0; i < sizeof blank_lines / sizeof blank_lines[0]; i++)
        CHECK(tfm_text_is_blank(blank_lines[i], strlen(blank_lines[i])), "blank line %zu", i);
    /* the length is honoured: a printing byte past n does not count, one before n does */
    CHECK(tfm_text_is_blank(" x", 1) && !tfm_text_is_blank(" x", 2), "only n bytes are read");
    /* invalid UTF-8 is never blank, so the caller's UTF-8 check reports it */
    static const char *const invalid[] = {"\xa0", "\xc2", "\xe3\x80", "\xed\xa0\x80", "\xc0\xa0", "\xff", " \x80 "};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        CHECK(!tfm_text_is_blank(invalid[i], strlen(invalid[i])), "invalid UTF-8 %zu is not blank", i);
}

static void test_one_line(void) {
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"a\nb", "a b"},
        {"a\r\nb", "a  b"},
        {"a\vb\fc", "a b c"},
        {"a\x1c" "b\x1d" "c\x1e" "d", "a b c d"},
        {"a\xc2\x85" "b", "a b"},         /* NEL */
        {"a\xe2\x80\xa8" "b", "a b"},     /* LINE SEPARATOR */
        {"a\xe2\x80\xa9" "b", "a b"},     /* PARAGRAPH SEPARATOR */
        {"\n\n\n", "   "},
        {"no break\ttab \xc2\xa0 nbsp", "no break\ttab \xc2\xa0 nbsp"}, /* not breaks: unchanged */
        {"\xe2\x80\xaf\xe2\x80\xa7\xc2\x84", "\xe2\x80\xaf\xe2\x80\xa7\xc2\x84"},  /* neighbours */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        const size_t n = strlen(cases[i].in);
        memcpy(buf, cases[i].in, n + 1);
        const size_t m = tfm_text_one_line(buf, n);
        CHECK(m == strlen(cases[i].out) && memcmp(buf, cases[i].out, m) == 0 && buf[m] == '\0',
              "one_line case %zu: got '%.*s' (%zu bytes)", i, (int)m, buf, m);
    }
    /* NUL bytes (a byte-fallback piece <0x00> decodes to one) become spaces: the length is kept */
    {
        char nul[] = {'a', '\0', 'b', '\0', '\0', 'c'};
        const size_t m = tfm_text_one_line(nul, sizeof nul);
        CHECK(m == 6 && memcmp(nul, "a b  c", 6) == 0, "NUL bytes: got %zu bytes '%.*s'", m, (int)m, nul);
    }
    /* every code point: after one_line no line break remains, whatever the text */
    char buf[8];
    for (uint32_t cp = 1; cp < 0x3000; cp++) {
        const size_t n = put_utf8(buf, cp);
        const size_t m = tfm_text_one_line(buf, n);
        CHECK(memchr(buf, '\n', m) == NULL && memchr(buf, '\r', m) == NULL && memchr(buf, '\v', m) == NULL &&
                  memchr(buf, '\f', m) == NULL && strstr(buf, "\xe2\x80\xa8") == NULL &&
                  strstr(buf, "\xe2\x80\xa9") == NULL && strstr(buf, "\xc2\x85") == NULL,
              "U+%04X leaves no line break", (unsigned)cp);
    }
}

int main(void) {
    test_blank();
    test_one_line();
    return test_finish("text_rules");
}
