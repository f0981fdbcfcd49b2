/* Learned absolute position embeddings (Devlin et al. 2019, BERT, §3.2 "position embeddings";
 * Radford et al. 2019, GPT-2's wpe): one trainable table P (max_len, d_model) per stack, added at
 * the embeddings, x[b, t] = E[id]·√d_model + P[pos0 + t]. Initialised N(0, 0.02²) as BERT and
 * GPT-2 do. */
#include "pe.h"

#include "core_internal.h"
#include "ops.h"

#include <stdio.h>

/* <stack prefix>.pos_embed.weight (max_len, d_model): transformer.encoder.pos_embed.weight for the
 * source side, transformer.decoder.pos_embed.weight for the target side (docs/POSITION.md). */
static void learned_add_params(param_builder *b, const tfm_config *cfg, int stack, const stack_desc *sd,
                               pe_params *sp, layer_params *lp) {
    (void)stack;
    (void)lp;
    char name[TFM_PARAM_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s.pos_embed.weight", sd->prefix);
    param_add(b, name, (size_t)cfg->max_len, (size_t)cfg->d_model, sp ? &sp->w[0] : NULL, PARAM_INIT_POSITION,
              (size_t)cfg->d_model);
}

/* x (B, T, d) += P[pos0 + t]. Every caller keeps positions below max_len (tfm_model_score and the
 * trainer refuse longer batches, translation cuts sources to max_len and stops decoding at
 * max_len − 1 output tokens), so reading past the table is a bug, not bad input. */
static void learned_forward(const tfm_config *cfg, const pe_params *p, float *x, size_t B, size_t T, size_t d,
                            size_t pos0) {
    TFM_ASSERT(pos0 + T <= (size_t)cfg->max_len);
    pos_table_add(x, p->w[0], B, T, d, pos0);
}

/* dP[pos0 + t] += Σ_b dx[b, t] (ACCUMULATED); dx passes through to the token embedding. */
static void learned_backward(const tfm_config *cfg, pe_params *g, const pe_params *p, const float *dx, size_t B,
                             size_t T, size_t d, size_t pos0) {
    (void)p;
    TFM_ASSERT(pos0 + T <= (size_t)cfg->max_len);
    pos_table_backward(g->w[0], dx, B, T, d, pos0);
}

const pe_kind pe_kind_learned = {
    .name = "learned",
    .add_params = learned_add_params,
    .embed_forward = learned_forward,
    .embed_backward = learned_backward,
};
