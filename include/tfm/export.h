/* transformer.c — which symbols the library exports.
 *
 * The library is compiled with -fvisibility=hidden: only functions declared with TFM_API in the
 * public headers (include/tfm/, all named tfm_*) are visible to a program that links libtfm.so,
 * and the installed libtfm.a holds its internal functions as local symbols (docs/API.md,
 * "Symbols"). A program's own `linear_forward` or `beam_search` therefore never collides with the
 * library's. */
#ifndef TFM_EXPORT_H
#define TFM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define TFM_API __attribute__((visibility("default")))
#else
#define TFM_API
#endif

#endif
