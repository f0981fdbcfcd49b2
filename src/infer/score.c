/* Teacher-forced scoring: log p(target | source) under the model, per pair. */
#include "core_internal.h"
#include "model_internal.h"
#include "ops.h"
#include "tfm/score.h"

#include <math.h>
#include <string.h>

/* Checks ids against a vocabulary; names the first offender by row and position. */
static tfm_status check_ids(const int32_t *ids, int B, int L, int vocab, const char *what) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int32_t id = ids[(size_t)b * (size_t)L + (size_t)t];
            RETURN_IF(id < 0 || id >= vocab, TFM_ERR_RANGE,
                      "%s token id %d at row %d, position %d is outside the vocabulary [0, %d)", what, id, b, t,
                      vocab);
        }
    return TFM_OK;
}

tfm_status tfm_model_score(tfm_model *m, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                           double *out_logprob, int *out_ntok, float *out_logits) {
    const tfm_config *cfg = &m->cfg;
    RETURN_IF(B <= 0 || S < 0 || T < 2, TFM_ERR_INVALID_ARG,
              "score needs B >= 1, S >= 0 and T >= 2 (BOS and EOS), got B=%d S=%d T=%d", B, S, T);
    RETURN_IF(S > cfg->max_len, TFM_ERR_RANGE, "source length %d exceeds the model's max_len %d", S, cfg->max_len);
    RETURN_IF(T - 1 > cfg->max_len, TFM_ERR_RANGE, "target length %d exceeds the model's max_len %d", T - 1,
              cfg->max_len);
    TRY(check_ids(src, B, S, cfg->src_vocab, "source"));
    TRY(check_ids(tgt, B, T, cfg->tgt_vocab, "target"));
    const int Td = T - 1; /* decoder positions */
    TRY(model_reserve(m, B, S, Td));
    model_forward(m, B, S, Td, src, tgt, (size_t)T);

    const size_t V = (size_t)cfg->tgt_vocab, N = (size_t)B * (size_t)Td;
    if (out_logits) memcpy(out_logits, m->acts.logits, N * V * sizeof(float));
    /* log-softmax in place: the logits are not needed afterwards */
    log_softmax_forward(m->acts.logits, m->acts.logits, N, V);
    for (int b = 0; b < B; b++) {
        double sum = 0.0;
        int n = 0;
        for (int t = 0; t < Td; t++) {
            int32_t y = tgt[(size_t)b * (size_t)T + (size_t)t + 1];
            if (y == cfg->pad_id) continue;
            sum += m->acts.logits[((size_t)b * (size_t)Td + (size_t)t) * V + (size_t)y];
            n++;
        }
        if (out_logprob) out_logprob[b] = sum;
        if (out_ntok) out_ntok[b] = n;
    }
    return TFM_OK;
}
