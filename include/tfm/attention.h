/* transformer.c — the attention weights of one forward pass (Vaswani et al. 2017, §3.2.1, eq. 1:
 * softmax(QKᵀ/√d_k), per head, §3.2.2), for looking at what a model attends to (tfm attention,
 * docs/STUDY.md). The weights are the model's own: the inference forward pass runs the reference
 * attention kernels, which keep every softmax output in the context's workspace ([B, H, T, S] per
 * sub-layer, what the backward pass reads when training); nothing is recomputed and the normal
 * path is unchanged. */
#ifndef TFM_ATTENTION_H
#define TFM_ATTENTION_H

#include "tfm/export.h"

#include "tfm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The attention sub-layers of a model. */
typedef enum {
    TFM_ATTN_ENCODER_SELF = 0, /* encoder self-attention: source queries over source keys (bidirectional) */
    TFM_ATTN_DECODER_SELF = 1, /* decoder self-attention: target over target, causal (keys <= the query) */
    TFM_ATTN_CROSS = 2         /* encoder–decoder attention: target queries over the encoder's output */
} tfm_attn_kind;

/** "encoder_self", "decoder_self", "cross". */
TFM_API const char *tfm_attn_kind_name(tfm_attn_kind kind);

/** Runs the forward pass of one sequence (batch of one, no padding) with the context's model and
 * keeps every attention weight in the context, until its next call:
 *   encoder–decoder: src [S] the source ids (as tfm_translate encodes them: no BOS/EOS) and
 *                    tgt_in [T] the decoder input (its start token first,
 *                    tfm_config_decoder_start: BOS for tfm's models, the pad id for Marian's,
 *                    then the target's ids);
 *   decoder-only:    tgt_in [T] (BOS first), src NULL and S = 0;
 *   encoder-only:    src [S], tgt_in NULL and T = 0.
 * Errors: TFM_ERR_INVALID_ARG (NULL context, a side the architecture does not have or lacks one
 * it needs, S or T < 1 where needed), TFM_ERR_RANGE (longer than max_len, an id outside the
 * vocabulary or the padding id — but for a decoder start token that is the pad id at position 0 —
 * naming the side and position), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_model_attention(tfm_context *ctx, int S, const int32_t *src, int T, const int32_t *tgt_in);

/** After tfm_model_attention on ctx: the weights of sub-layer `kind` of layer `layer` (0-based),
 * [H, Tq, Tk] row-major (head, query, key): each row sums to 1 over the keys it may see and holds
 * exactly 0 at the others (the decoder's future keys). *H, *Tq and *Tk (nullable) receive the
 * sizes. Valid until the context's next call. NULL when the model has no such sub-layer or layer,
 * or no tfm_model_attention ran on ctx. */
TFM_API const float *tfm_context_attention(const tfm_context *ctx, tfm_attn_kind kind, int layer, int *H, int *Tq,
                                           int *Tk);

#ifdef __cplusplus
}
#endif
#endif
