/* What greedy and beam search ask of the model: length limits, forbidden outputs, and one decoding
 * step on the KV cache or (reference path) by recomputing the prefix. */
#include "decode_internal.h"

#include <math.h>
#include <string.h>


int decode_limit(const tfm_model *m, const tfm_decode_config *dc, const int32_t *src_row, int S) {
    int n = 0;
    for (int s = 0; s < S; s++) n += src_row[s] != tfm_model_config(m)->pad_id;
    double lim = (double)dc->max_len_a * n + dc->max_len_b;
    int cap = tfm_model_config(m)->max_len - 1;
    if (lim > cap) lim = cap;
    return lim < 0 ? 0 : (int)lim;
}

int decode_end(const tfm_config *cfg, int limit) { return cfg->forced_eos && limit > 0 ? limit - 1 : limit; }

float decode_eos_logp(const tfm_config *cfg, const float *logits, float lse) {
    return cfg->forced_eos ? 0.0f : logits[cfg->eos_id] - lse;
}

void forbid_specials(const tfm_config *cfg, float *row) {
    if (cfg->suppress == TFM_SUPPRESS_NONE) return;
    row[cfg->pad_id] = -INFINITY;
    if (cfg->suppress == TFM_SUPPRESS_PAD_BOS) row[cfg->bos_id] = -INFINITY;
}

tfm_status decode_begin(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src, int cap) {
    return decode_begin_beams(ctx, dc, B, 1, S, src, cap);
}

tfm_status decode_begin_beams(tfm_context *ctx, const tfm_decode_config *dc, int B, int beams, int S,
                              const int32_t *src, int cap) {
    if (!dc->use_cache) return TFM_OK;
    TRY(kv_cache_reserve_beams(ctx, B, beams, S, cap));
    model_decode_start(ctx, src);
    return TFM_OK;
}

tfm_status decode_step(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                       const int32_t *prefix, int t, int cap, float **logits) {
    if (dc->use_cache) {
        model_decode_step(ctx, prefix + t, (size_t)cap);
        *logits = kv_cache_logits(ctx);
        return TFM_OK;
    }
    TRY(context_reserve(ctx, B, S, t + 1, 0));
    model_forward(ctx, B, S, t + 1, src, prefix, (size_t)cap, NULL);
    /* rows of the last position, gathered to the front of the logits buffer: (B, V) */
    const size_t V = (size_t)context_config(ctx)->tgt_vocab;
    float *all = context_logits(ctx);
    for (int b = 0; b < B; b++)
        memmove(all + (size_t)b * V, all + ((size_t)b * (size_t)(t + 1) + (size_t)t) * V, V * sizeof(float));
    *logits = all;
    return TFM_OK;
}

void decode_reorder(tfm_context *ctx, const tfm_decode_config *dc, const int *rows) {
    if (dc->use_cache) kv_cache_reorder(ctx, rows);
}

int decode_compact(tfm_context *ctx, const tfm_decode_config *dc, const int *keep, int n) {
    if (!dc->use_cache || n < 1 || n == kv_cache_rows(ctx) || !context_decode_compact(ctx)) return 0;
    kv_cache_compact(ctx, keep, n);
    return 1;
}
