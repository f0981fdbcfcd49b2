/* BERT's embedding block: token type + LayerNorm (bert.h). */
#include "bert.h"

#include "ops.h"

void bert_embed_finish(const tfm_config *cfg, const stack_params *sp, float *x0, float *mean, float *rstd, size_t N,
                       size_t d) {
    if (cfg->type_vocab > 0) {
        const float *t0 = sp->type_embed; /* segment A: type id 0 for every token */
        for (size_t n = 0; n < N; n++) {
            float *x = x0 + n * d;
            for (size_t c = 0; c < d; c++) x[c] += t0[c];
        }
    }
    if (cfg->embed_norm) /* in place: layernorm_forward reads each element before writing it */
        layernorm_forward(x0, mean, rstd, x0, sp->embed_norm_weight, sp->embed_norm_bias, N, d, cfg->layer_norm_eps);
}
