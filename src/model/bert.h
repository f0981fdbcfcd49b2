/* BERT's embedding block (Devlin et al. 2019, §3 "Input/Output Representations", Figure 2) on top
 * of the shared embedding code, for configurations with type_vocab > 0 or embed_norm = 1
 * (docs/BERT.md). Forward only: encoder-only models are inference-only in this build. */
#ifndef TFM_BERT_H
#define TFM_BERT_H

#include "params.h"

/** Finishes the input representation x0 (N, d) = E[id] + P[pos] (token and position embeddings,
 * already summed by forward.c, unscaled when embed_norm): adds the token-type embedding of type 0
 * (row 0 of sp->type_embed, when cfg->type_vocab > 0; every input is one segment) and, when
 * cfg->embed_norm, applies the embedding LayerNorm in place (eps cfg->layer_norm_eps), saving its
 * mean and rstd (N each) in `mean`/`rstd`. Does nothing for other configurations. */
void bert_embed_finish(const tfm_config *cfg, const stack_params *sp, float *x0, float *mean, float *rstd, size_t N,
                       size_t d);

#endif
