/* Internals shared by the BLEU / chrF files: UTF-8 decoding with Python's rules, Python's
 * whitespace set, and the mteval-v13a tokeniser. */
#ifndef TFM_BLEU_INTERNAL_H
#define TFM_BLEU_INTERNAL_H

#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

/* Decodes one code point of strict UTF-8 (as Python's "utf-8" codec: no overlong forms, no
 * surrogates, nothing above U+10FFFF) from s[0..n). Returns the number of bytes used (1..4), or
 * 0 if the bytes there are not valid UTF-8. n must be > 0. */
size_t bleu_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Checks that s[0..n) is valid UTF-8. Returns 1 if so; otherwise 0 and the byte offset of the
 * first invalid sequence in *bad_offset. */
int bleu_utf8_valid(const char *s, size_t n, size_t *bad_offset);

/* Whether code point c is whitespace for Python's str.split() / str.rstrip() / str.isspace():
 * \t \n \v \f \r, U+001C..U+001F, space, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000. */
int bleu_is_py_space(uint32_t c);

/* Tokenises one segment as sacreBLEU's Tokenizer13a (mteval-v13a) after BLEU's rstrip():
 * trailing whitespace removed; "<skipped>" and "-\n" deleted; "\n" -> " "; &quot; &amp; &lt;
 * &gt; unescaped (in that order, each over the whole line); ASCII punctuation other than
 * ' , - . split off; "." and "," split off unless between digits; "-" split off after a digit;
 * tokens joined by single spaces. `line` must be valid UTF-8 of length n. On success *out is a
 * malloc'ed NUL-terminated string (free() it) and *out_len its length.
 * Errors: TFM_ERR_NOMEM. */
tfm_status bleu_tokenize_13a(const char *line, size_t n, char **out, size_t *out_len);

#endif
