/* The committed SentencePiece model the text targets encode with (fuzz/tok400.model: 400 pieces,
 * byte fallback, trained with `tfm tokenize --train --vocab-size 400` on
 * tests/fixtures/tok_train.txt), loaded once per process. */
#ifndef TFM_FUZZ_TOKENIZER_H
#define TFM_FUZZ_TOKENIZER_H

#include "tfm/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef TFM_FUZZ_TOKENIZER
#error "TFM_FUZZ_TOKENIZER (the path of fuzz/tok400.model) must be defined by the build"
#endif

static inline const tfm_tokenizer *fuzz_tokenizer(void) {
    static tfm_tokenizer *tok = NULL;
    if (!tok && tfm_tokenizer_load_file(TFM_FUZZ_TOKENIZER, &tok) != TFM_OK) {
        fprintf(stderr, "fuzz: cannot load %s: %s\n", TFM_FUZZ_TOKENIZER, tfm_last_error());
        abort(); /* a broken build, not a finding */
    }
    return tok;
}

#endif
