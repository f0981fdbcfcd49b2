/* Teacher-forced scoring: log p(target | source) under the model, per pair. */
#include "core_internal.h"
#include "model_context.h"
#include "model_params.h"
#include "ops.h"
#include "score_internal.h"

#include <math.h>
#include <string.h>

tfm_status tfm_model_score(tfm_context *ctx, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                           double *out_logprob, int *out_ntok, float *out_logits) {
    return score_rows(ctx, B, S, T, src, tgt, out_logprob, out_ntok, out_logits, NULL);
}

tfm_status score_rows(tfm_context *ctx, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                      double *out_logprob, int *out_ntok, float *out_logits, float *out_token_lp) {
    const tfm_config *cfg = context_config(ctx);
    RETURN_IF(cfg->arch == TFM_ARCH_ENCODER_ONLY, TFM_ERR_UNSUPPORTED,
              "an encoder-only model has no generator: it embeds (tfm embed), it does not score targets");
    TRY(model_check_batch(tfm_context_model(ctx), B, S, T, src, tgt));
    const int Td = T - 1; /* decoder positions */
    TRY(context_reserve(ctx, B, S, Td, 0));
    model_forward(ctx, B, S, Td, src, tgt, (size_t)T, NULL);
    float *logits = context_logits(ctx);

    const size_t V = (size_t)cfg->tgt_vocab, N = (size_t)B * (size_t)Td;
    if (out_logits) memcpy(out_logits, logits, N * V * sizeof(float));
    /* log-softmax in place: the logits are not needed afterwards */
    log_softmax_forward(logits, logits, N, V);
    for (int b = 0; b < B; b++) {
        double sum = 0.0;
        int n = 0;
        for (int t = 0; t < Td; t++) {
            int32_t y = tgt[(size_t)b * (size_t)T + (size_t)t + 1];
            float *lp = out_token_lp ? &out_token_lp[(size_t)b * (size_t)Td + (size_t)t] : NULL;
            if (lp) *lp = 0.0f;
            if (y == cfg->pad_id) continue;
            const float v = logits[((size_t)b * (size_t)Td + (size_t)t) * V + (size_t)y];
            if (lp) *lp = v;
            sum += v;
            n++;
        }
        if (out_logprob) out_logprob[b] = sum;
        if (out_ntok) out_ntok[b] = n;
    }
    return TFM_OK;
}
