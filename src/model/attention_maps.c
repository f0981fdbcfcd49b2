/* The attention weights of one forward pass (include/tfm/attention.h): a batch of one through
 * model_forward, whose inference layout runs the reference attention and keeps each sub-layer's
 * softmax output (activations.h: mha_acts.probs, [B, H, T, S_k]); read back from there. */
#include "core_internal.h"
#include "model_context.h"
#include "stack.h"
#include "tfm/attention.h"
#include "tfm/names.h"

#include <stddef.h>

const char *tfm_attn_kind_name(tfm_attn_kind kind) {
    switch (kind) {
    case TFM_ATTN_ENCODER_SELF: return "encoder_self";
    case TFM_ATTN_DECODER_SELF: return "decoder_self";
    case TFM_ATTN_CROSS: return "cross";
    }
    return "?";
}

/* Ids of one side: within the vocabulary and never the padding id (a pad would be masked out),
 * except at position `pad_ok` (-1: none): the decoder's start token, which may be the pad id
 * (Marian) and is never masked (forward.c). */
static tfm_status check_side(const int32_t *ids, int n, int vocab, int pad, int pad_ok, const char *side) {
    for (int i = 0; i < n; i++)
        RETURN_IF(ids[i] < 0 || ids[i] >= vocab || (ids[i] == pad && i != pad_ok), TFM_ERR_RANGE,
                  "%s position %d: id %d is %s", side, i, (int)ids[i],
                  ids[i] == pad ? "the padding id" : "outside the vocabulary");
    return TFM_OK;
}

tfm_status tfm_model_attention(tfm_context *ctx, int S, const int32_t *src, int T, const int32_t *tgt_in) {
    RETURN_IF(!ctx, TFM_ERR_INVALID_ARG, "tfm_model_attention: NULL context");
    const tfm_config *c = context_config(ctx);
    const int need_src = c->arch != TFM_ARCH_DECODER_ONLY, need_tgt = c->arch != TFM_ARCH_ENCODER_ONLY;
    RETURN_IF(need_src != (S > 0 || src != NULL) || (need_src && (S < 1 || !src)), TFM_ERR_INVALID_ARG,
              "a %s model %s a source (S = %d)", tfm_arch_name(c->arch), need_src ? "needs" : "has no", S);
    RETURN_IF(need_tgt != (T > 0 || tgt_in != NULL) || (need_tgt && (T < 1 || !tgt_in)), TFM_ERR_INVALID_ARG,
              "a %s model %s a decoder input (T = %d)", tfm_arch_name(c->arch), need_tgt ? "needs" : "has no", T);
    RETURN_IF(S > c->max_len, TFM_ERR_RANGE, "the source has %d tokens, more than the model's max_len %d", S, c->max_len);
    RETURN_IF(T > c->max_len, TFM_ERR_RANGE, "the decoder input has %d tokens, more than the model's max_len %d", T,
              c->max_len);
    TRY(check_side(src, S, c->src_vocab, c->pad_id, -1, "source"));
    const int start_is_pad = tgt_in && tgt_in[0] == tfm_config_decoder_start(c);
    TRY(check_side(tgt_in, T, c->tgt_vocab, c->pad_id, start_is_pad ? 0 : -1, "decoder input"));
    const int Tf = need_tgt ? T : 1; /* an encoder-only pass lays out one (unused) target position */
    TRY(context_reserve(ctx, 1, S, Tf, 0));
    model_forward(ctx, 1, S, Tf, src, tgt_in, (size_t)Tf, NULL);
    ctx->attn_maps = 1;
    return TFM_OK;
}

const float *tfm_context_attention(const tfm_context *ctx, tfm_attn_kind kind, int layer, int *H, int *Tq, int *Tk) {
    if (!ctx || !ctx->attn_maps || layer < 0) return NULL;
    const tfm_config *c = context_config(ctx);
    model_desc md;
    model_describe(c, &md);
    const stack_input want = kind == TFM_ATTN_ENCODER_SELF ? STACK_INPUT_SOURCE : STACK_INPUT_TARGET;
    for (int s = 0; s < md.n_stacks; s++) {
        const stack_desc *sd = &md.stack[s];
        if (sd->input != want || layer >= sd->n_layers) continue;
        if (kind == TFM_ATTN_CROSS && !block_has(&sd->block, SUB_CROSS_ATTN)) return NULL;
        const stack_acts *A = &ctx->acts.stack[s];
        const mha_acts *a = kind == TFM_ATTN_CROSS ? &A->layers[layer].cross_attn : &A->layers[layer].self_attn;
        if (!a->probs) return NULL; /* not a reference-path layout (cannot happen after tfm_model_attention) */
        if (H) *H = c->n_heads;
        if (Tq) *Tq = A->T;
        if (Tk) *Tk = kind == TFM_ATTN_CROSS ? ctx->acts.stack[sd->memory].T : A->T;
        return a->probs;
    }
    return NULL;
}
