/* Internals of the tokenizer layer (src/text/), shared by the C helpers and the C++ shim. */
#ifndef TFM_TOKENIZER_INTERNAL_H
#define TFM_TOKENIZER_INTERNAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Offset of the first byte of `s[0..len)` that is not part of well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF, no truncated sequence) or that is a NUL
 * byte; `len` if there is none. */
size_t tok_utf8_first_invalid(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
