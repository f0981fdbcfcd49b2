/* The parts of nllb_tok.c shared with its data file (nllb_langs.c). */
#ifndef TFM_NLLB_TOK_INTERNAL_H
#define TFM_NLLB_TOK_INTERNAL_H

#include "nllb_tok.h"

#define NLLB_N_DEFAULT_LANGS 202
/** NLLB-200's language codes in id order (nllb_langs.c). */
extern const char *const nllb_default_langs[NLLB_N_DEFAULT_LANGS];

#endif
