/* Teacher-forced scoring with each predicted token's log-probability (score.c), for the library's
 * own callers (tfm_perplexity_text_detail: the loss per position). */
#ifndef TFM_SCORE_INTERNAL_H
#define TFM_SCORE_INTERNAL_H

#include "tfm/score.h"

/** tfm_model_score, and with out_token_lp (nullable, [B, T-1]) the log-probability ln p(tgt[b, t+1])
 * of every target, in nats as float (0 where the target is pad_id). */
tfm_status score_rows(tfm_context *ctx, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                      double *out_logprob, int *out_ntok, float *out_logits, float *out_token_lp);

#endif
