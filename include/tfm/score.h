/* transformer.c — teacher-forced scoring of (source, target) pairs: the forward pass of the whole
 * encoder–decoder (Vaswani et al. 2017, §3) followed by log-softmax over the generator's logits. */
#ifndef TFM_SCORE_H
#define TFM_SCORE_H

#include "tfm/export.h"

#include "tfm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread-safety (tfm/model.h): these calls read the model and write only the context they are
 * given; threads with their own contexts may call them concurrently on one model. */
/** Scores a batch of B pairs with the context's model, in the context's workspace (grown if this
 * batch needs more).
 *
 * src  [B, S]  source ids, each row padded at the end with pad_id (the key padding mask of the
 *              encoder and of cross-attention is `src == pad_id`).
 * tgt  [B, T]  whole target rows, BOS first and EOS last, padded with pad_id; the decoder input is
 *              tgt[:, 0:T-1], the prediction targets are tgt[:, 1:T] (docs/FORMATS.md). T >= 2.
 * out_logprob [B]  (nullable) sum over the non-pad targets of ln p(target), in nats.
 * out_ntok    [B]  (nullable) the number of those targets.
 * out_logits  [B, T-1, V_tgt] (nullable) the generator's logits (before log-softmax), row-major.
 *
 * S and T may not exceed the model's max_len. Errors: TFM_ERR_INVALID_ARG (bad sizes),
 * TFM_ERR_RANGE (a token id outside its vocabulary, naming the row and position; a sequence longer
 * than max_len), TFM_ERR_NOMEM (the workspace could not grow). */
TFM_API tfm_status tfm_model_score(tfm_context *ctx, int B, int S, int T, const int32_t *src,
                                   const int32_t *tgt, double *out_logprob, int *out_ntok, float *out_logits);

#ifdef __cplusplus
}
#endif
#endif
