/* transformer.c — two rules about lines of text that every command and the library share
 * (docs/HARDENING.md): what a blank line is, and how decoded text is kept to one line.
 *
 * Blank: a line is blank when every code point in it is one of
 *   - Unicode White_Space (PropList.txt, Unicode 15.1): U+0009..000D, 0020, 0085, 00A0, 1680,
 *     2000..200A, 2028, 2029, 202F, 205F, 3000;
 *   - Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1; the list is the same
 *     in 16.0): U+00AD, 034F, 061C, 115F..1160, 17B4..17B5, 180B..180F, 200B..200F, 202A..202E,
 *     2060..206F, 3164, FE00..FE0F, FEFF, FFA0, FFF0..FFF8, 1BCA0..1BCA3, 1D173..1D17A,
 *     E0000..E0FFF (format controls, zero-width characters, fillers, variation selectors, tags);
 *   - a control character, general category Cc: U+0000..001F, 007F, 0080..009F (C0, DEL, C1).
 *     None of them prints anything in a sentence, and a lone one is noise, not a sentence.
 * The empty line is blank. Bytes that are not well-formed UTF-8 make a line not blank (the caller's
 * UTF-8 check then reports them). A blank source line is not translated: its output is empty.
 *
 * One line: the line breaks of Python's str.splitlines() — U+000A LF, 000B VT, 000C FF, 000D CR,
 * 001C..001E (file, group and record separators), 0085 NEL, 2028 LINE SEPARATOR, 2029 PARAGRAPH
 * SEPARATOR — are each replaced by one space (U+0020), so one input line always gives one output
 * line, whichever tool later splits the file. */
#ifndef TFM_TEXT_H
#define TFM_TEXT_H

#include "tfm/export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** 1 if s[0..n) is blank (see above: White_Space, default-ignorable and control code points only,
 * or nothing), else 0. s may be NULL when n is 0. Never fails. */
TFM_API int tfm_text_is_blank(const char *s, size_t n);

/** Replaces, in place, every line break of s[0..n) (see above), and every NUL byte (which would
 * cut the line short in a C string and is refused by the text readers), by one space and returns the new
 * length (<= n: a multi-byte break becomes one byte); s[new length] is set to NUL when the text
 * shrank, so a NUL-terminated string stays one. Invalid UTF-8 bytes are left as they are. */
TFM_API size_t tfm_text_one_line(char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
