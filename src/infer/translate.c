/* tfm_model_translate: argument checks, then greedy or beam search. */
#include "decode_internal.h"
#include "tfm/names.h"

#include <math.h>

tfm_decode_config tfm_decode_config_default(void) {
    tfm_decode_config c;
    c.beam = 1;
    c.lenpen = 1.0f;
    c.max_len_a = 1.5f;
    c.max_len_b = 10;
    c.use_cache = 1;
    c.beam_stop = TFM_BEAM_STOP_FINISHED;
    c.force_first = 0;
    c.first_id = 0;
    return c;
}

/* The checks tfm_model_translate and tfm_context_reserve_decode share: the model, B, S, the config. */
static tfm_status check_call(const tfm_context *ctx, const tfm_decode_config *dc, int B, int S) {
    RETURN_IF(!ctx || !dc, TFM_ERR_INVALID_ARG, "translate: NULL context or config");
    const tfm_config *cfg = context_config(ctx);
    RETURN_IF(cfg->arch != TFM_ARCH_ENCODER_DECODER, TFM_ERR_INVALID_ARG,
              "translate needs an encoder-decoder model, this one is %s (a decoder-only model writes with "
              "tfm_generate / tfm generate)", tfm_arch_name(cfg->arch));
    RETURN_IF(B < 1 || S < 0, TFM_ERR_INVALID_ARG, "translate needs B >= 1, S >= 0, got B=%d S=%d", B, S);
    RETURN_IF(S > cfg->max_len, TFM_ERR_RANGE, "source length %d exceeds the model's max_len %d", S, cfg->max_len);
    TRY(tfm_decode_config_validate(dc));
    RETURN_IF(dc->force_first && (dc->first_id < 0 || dc->first_id >= cfg->tgt_vocab), TFM_ERR_INVALID_ARG,
              "the forced first token %d is outside the target vocabulary [0, %d)", dc->first_id, cfg->tgt_vocab);
    return TFM_OK;
}

tfm_status tfm_decode_config_validate(const tfm_decode_config *dc) {
    RETURN_IF(!dc, TFM_ERR_INVALID_ARG, "decode config: NULL");
    RETURN_IF(dc->beam < 1 || dc->beam > 256, TFM_ERR_INVALID_ARG, "beam must be in [1, 256], got %d", dc->beam);
    RETURN_IF(!(dc->max_len_a >= 0.0f) || dc->max_len_b < 0, TFM_ERR_INVALID_ARG,
              "the length limit a·source + b needs a >= 0 and b >= 0");
    RETURN_IF(!(dc->lenpen >= 0.0f && dc->lenpen <= 10.0f), TFM_ERR_INVALID_ARG, "lenpen must be in [0, 10], got %g",
              (double)dc->lenpen);
    RETURN_IF(dc->beam_stop != TFM_BEAM_STOP_FINISHED && dc->beam_stop != TFM_BEAM_STOP_BOUND, TFM_ERR_INVALID_ARG,
              "beam_stop must be TFM_BEAM_STOP_FINISHED or TFM_BEAM_STOP_BOUND, got %d", (int)dc->beam_stop);
    RETURN_IF(dc->force_first != 0 && dc->force_first != 1, TFM_ERR_INVALID_ARG, "force_first must be 0 or 1, got %d",
              dc->force_first);
    return TFM_OK;
}

tfm_status tfm_context_reserve_decode(tfm_context *ctx, const tfm_decode_config *dc, int B, int S) {
    TRY(check_call(ctx, dc, B, S));
    if (!dc->use_cache) return TFM_OK;
    const tfm_config *cfg = context_config(ctx);
    double lim = (double)dc->max_len_a * S + dc->max_len_b; /* decode_limit's bound for S tokens */
    if (lim > cfg->max_len - 1) lim = cfg->max_len - 1;
    const int cap = (int)lim + 1; /* lim >= 0: a, b >= 0 */
    return kv_cache_reserve_beams(ctx, B, dc->beam, S, cap);
}

/* The checks of a translate call's arguments past check_call: max_out and every source id. */
static tfm_status check_src(const tfm_config *cfg, int B, int S, const int32_t *src, int max_out) {
    RETURN_IF(max_out < 0, TFM_ERR_INVALID_ARG, "translate needs max_out >= 0, got %d", max_out);
    for (size_t i = 0; i < (size_t)B * (size_t)S; i++)
        RETURN_IF(src[i] < 0 || src[i] >= cfg->src_vocab, TFM_ERR_RANGE,
                  "source token id %d at row %zu, position %zu is outside the vocabulary [0, %d)", src[i],
                  i / (size_t)(S ? S : 1), i % (size_t)(S ? S : 1), cfg->src_vocab);
    return TFM_OK;
}

tfm_status tfm_model_translate(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                               int32_t *out, int max_out, int *out_len) {
    TRY(check_call(ctx, dc, B, S));
    TRY(check_src(context_config(ctx), B, S, src, max_out));
    if (S == 0) { /* nothing to translate: every row is empty */
        for (int b = 0; b < B; b++) out_len[b] = 0;
        return TFM_OK;
    }
    if (dc->beam == 1) return greedy_search(ctx, dc, B, S, src, out, max_out, out_len);
    return beam_search(ctx, dc, B, S, src, out, max_out, out_len);
}

tfm_status tfm_model_translate_nbest(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                                     int n_best, int32_t *out, int max_out, int *out_len, double *out_score) {
    TRY(check_call(ctx, dc, B, S));
    RETURN_IF(n_best < 1 || n_best > dc->beam, TFM_ERR_INVALID_ARG,
              "n_best must be in [1, beam %d], got %d (a beam of K keeps at most K hypotheses)", dc->beam, n_best);
    TRY(check_src(context_config(ctx), B, S, src, max_out));
    if (dc->beam == 1 || S == 0) { /* greedy (n_best 1), or nothing to translate: no scores */
        TRY(tfm_model_translate(ctx, dc, B, S, src, out, max_out, out_len));
        for (int b = 0; out_score && b < B; b++) out_score[b] = S == 0 ? 0.0 : NAN;
        if (S == 0) /* each row's one hypothesis is the empty one; no others */
            for (int b = B - 1; b >= 0; b--)
                for (int k = n_best - 1; k >= 0; k--) {
                    out_len[b * n_best + k] = k == 0 ? 0 : -1;
                    if (out_score) out_score[b * n_best + k] = k == 0 ? 0.0 : -INFINITY;
                }
        return TFM_OK;
    }
    return beam_search_nbest(ctx, dc, B, S, src, n_best, out, max_out, out_len, out_score);
}
