/* Shared by greedy.c and beam.c. */
#ifndef TFM_DECODE_INTERNAL_H
#define TFM_DECODE_INTERNAL_H

#include "core_internal.h"
#include "model_internal.h"
#include "tfm/decode.h"

/** The output length limit of a source row: min(floor(a · n + b), max_len − 1), n its non-pad
 * tokens. */
int decode_limit(const tfm_model *m, const tfm_decode_config *dc, const int32_t *src_row, int S);

/** Makes pad and BOS impossible outputs of a logit or log-probability row (−∞). */
void forbid_specials(const tfm_config *cfg, float *row);

/** Index of the largest entry (the lowest index among ties). */
int argmax_row(const float *x, size_t n);

/** The reference path: logits of position t for every row, recomputing the whole prefix
 * (B, t + 1) — rows of `prefix` hold cap ids, BOS first — through model_forward. *logits (B, V)
 * points into the model's workspace. Errors: TFM_ERR_NOMEM. */
tfm_status reference_step(tfm_model *m, int B, int S, const int32_t *src, const int32_t *prefix, int t, int cap,
                          float **logits);

/** Beam search (beam > 1); same contract as tfm_model_translate. */
tfm_status beam_search(tfm_model *m, const tfm_decode_config *dc, int B, int S, const int32_t *src, int32_t *out,
                       int max_out, int *out_len);

#endif
