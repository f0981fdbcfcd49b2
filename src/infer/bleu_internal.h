/* Internals shared by the BLEU / chrF files: Python's whitespace set and the mteval-v13a
 * tokeniser. UTF-8 is decoded and checked by src/core/utf8.h (Python's strict rules). */
#ifndef TFM_BLEU_INTERNAL_H
#define TFM_BLEU_INTERNAL_H

#include "tfm/status.h"
#include "utf8.h"

#include <stddef.h>
#include <stdint.h>

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
