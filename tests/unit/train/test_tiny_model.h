/* The tiny encoder–decoder the trainer tests share: d_model 16, 2 heads, d_ff 32, one encoder and
 * one decoder layer, vocabularies of 20, max_len 16, every other field tfm_config_default()'s.
 * Small enough for a step in microseconds, large enough that every kind of parameter exists. */
#ifndef TFM_TEST_TINY_MODEL_H
#define TFM_TEST_TINY_MODEL_H

#include "tfm/tfm.h"

static inline tfm_config test_tiny_config(void) {
    tfm_config c = tfm_config_default();
    c.d_model = 16;
    c.n_heads = 2;
    c.d_ff = 32;
    c.n_enc_layers = c.n_dec_layers = 1;
    c.src_vocab = c.tgt_vocab = 20;
    c.max_len = 16;
    return c;
}

#endif
