/* The one UTF-8 decoder and validator of transformer.c. "Well-formed" is RFC 3629 §4 (the table
 * of well-formed byte sequences), which is also Python's strict "utf-8" codec and what
 * SentencePiece and sacreBLEU expect: no overlong forms, no UTF-16 surrogates U+D800..U+DFFF,
 * nothing above U+10FFFF, no truncated sequence. */
#ifndef TFM_UTF8_H
#define TFM_UTF8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Decodes the code point that starts s[0..n), n > 0, into *cp. Returns the bytes it used
 * (1..4), or 0 if the bytes there are not well-formed UTF-8 (*cp is then unchanged). A NUL byte
 * decodes as U+0000. */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/** Offset in bytes (0-based) of the first byte of s[0..len) that does not start a well-formed
 * sequence, or that is a NUL byte (text never holds one: it ends C strings and marks binary
 * files); `len` if there is none. s may be NULL when len is 0. */
size_t utf8_first_invalid(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
