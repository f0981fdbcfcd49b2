/* Backpropagation through the encoder–decoder of forward.c, block by block from the logits down
 * to the embeddings. Every op's backward accumulates (llm.c style), so the residual stream's
 * gradient is one buffer that each block adds its branch into. */
#include "model_internal.h"
#include "ops.h"

#include <math.h>
#include <string.h>

static void zero(float *x, size_t n) { memset(x, 0, n * sizeof *x); }

typedef struct {
    const tfm_config *cfg;
    grad_workspace *w;
    int drop; /* dropout was applied in the forward */
    float p;
    size_t B, S, T, d, H, d_ff;
} bctx;

/* The gradient reaching a sub-layer's output before its dropout: d_sub = dropout⁻¹(dout). */
static const float *undrop(const bctx *c, float *buf, const float *dout, const uint8_t *mask, size_t n) {
    if (!c->drop) return dout;
    zero(buf, n);
    dropout_backward(buf, dout, mask, c->p, n);
    return buf;
}

/* Backward of mha_forward: dout (N, d) is the gradient of the (pre-dropout) projection output;
 * accumulates into dx (N, d) and, for cross-attention, into w->d_memory (B·S, d). */
static void mha_backward(const bctx *c, mha_params *g, const mha_params *p, const mha_acts *a, float *dx,
                         const float *dout, const float *x, const float *mem, size_t T, size_t S) {
    grad_workspace *w = c->w;
    const size_t B = c->B, d = c->d, H = c->H, N = B * T;
    zero(w->d_att, N * d);
    linear_backward(w->d_att, g->out_proj_weight, g->out_proj_bias, dout, a->att, p->out_proj_weight, N, d, d);
    const float *pd = c->drop ? a->probs_drop : NULL;
    if (mem == NULL) {
        zero(w->d_big, N * 3 * d);
        attn_args args = attn_args_make(B, T, T, H, d / H, 3 * d, 3 * d);
        attn_backward(w->d_big, w->d_big + d, w->d_big + 2 * d, w->dprobs, w->d_att, a->probs, pd, a->qkv,
                      a->qkv + d, a->qkv + 2 * d, &args);
        linear_backward(dx, g->in_proj_weight, g->in_proj_bias, w->d_big, x, p->in_proj_weight, N, d, 3 * d);
    } else {
        zero(w->d_q, N * d);
        zero(w->d_kv, B * S * 2 * d);
        attn_args args = attn_args_make(B, T, S, H, d / H, d, 2 * d);
        attn_backward(w->d_q, w->d_kv, w->d_kv + d, w->dprobs, w->d_att, a->probs, pd, a->q, a->qkv, a->qkv + d,
                      &args);
        linear_backward(dx, g->in_proj_weight, g->in_proj_bias, w->d_q, x, p->in_proj_weight, N, d, d);
        linear_backward(w->d_memory, g->in_proj_weight + d * d, g->in_proj_bias + d, w->d_kv, mem,
                        p->in_proj_weight + d * d, B * S, d, 2 * d);
    }
}

/* Backward of ffn_forward: dout (N, d) gradient of linear2's output; accumulates into dx. */
static void ffn_backward(const bctx *c, layer_params *g, const layer_params *p, const layer_acts *L, float *dx,
                         const float *dout, const float *x, size_t N) {
    grad_workspace *w = c->w;
    const size_t d = c->d, d_ff = c->d_ff;
    zero(w->d_big, N * d_ff);
    linear_backward(w->d_big, g->linear2_weight, g->linear2_bias, dout, L->ff_act, p->linear2_weight, N, d_ff, d);
    const float *dact = w->d_big;
    if (c->drop) { /* through the hidden-layer dropout: d_big2 is free until the activation */
        zero(w->d_big2, N * d_ff);
        dropout_backward(w->d_big2, w->d_big, L->ff_drop, c->p, N * d_ff);
        memcpy(w->d_big, w->d_big2, N * d_ff * sizeof(float));
    }
    zero(w->d_big2, N * d_ff);
    if (c->cfg->activation == TFM_ACT_GELU)
        gelu_backward(w->d_big2, dact, L->ff_pre, N * d_ff);
    else
        relu_backward(w->d_big2, dact, L->ff_pre, N * d_ff);
    linear_backward(dx, g->linear1_weight, g->linear1_bias, w->d_big2, x, p->linear1_weight, N, d, d_ff);
}

typedef enum { SUB_SELF, SUB_CROSS, SUB_FFN } sub_kind;

/* One residual block, given G = dL/d(block output) in w->d_stream; on return w->d_stream holds
 * dL/d(block input) x.
 *   post-LN  y = LN(x + f(x)):  d_res = LN'(G);  dx = d_res + f'(d_res)
 *   pre-LN   y = x + f(LN(x)):  dx = G + LN'(f'(G)) */
static void block_backward(const bctx *c, sub_kind kind, int k, layer_params *g, const layer_params *p,
                           const layer_acts *L, const float *x, const float *mem, size_t T, size_t S) {
    grad_workspace *w = c->w;
    const block_acts *b = &L->blk[k];
    const size_t N = c->B * T, d = c->d;
    float *G = w->d_stream;
    const float *sub_in; /* what f saw */
    const float *dsub;   /* gradient of f's output (after its dropout) */
    float *dsub_in;      /* where f's input gradient accumulates */
    if (!c->cfg->norm_first) {
        zero(w->d_res, N * d);
        layernorm_backward(w->d_res, g->norm_weight[k], g->norm_bias[k], G, b->res, p->norm_weight[k], b->ln_mean,
                           b->ln_rstd, N, d);
        memcpy(G, w->d_res, N * d * sizeof(float)); /* the residual path */
        sub_in = x;
        dsub = w->d_res;
        dsub_in = G;
    } else {
        zero(w->d_res, N * d);
        sub_in = b->ln;
        dsub = G;
        dsub_in = w->d_res; /* dL/d LN(x), then through the LayerNorm into G */
    }
    const uint8_t *mask = b->drop;
    if (kind == SUB_FFN) {
        const float *dff = undrop(c, w->d_sub, dsub, mask, N * d);
        ffn_backward(c, g, p, L, dsub_in, dff, sub_in, N);
    } else {
        const float *dproj = undrop(c, w->d_sub, dsub, mask, N * d);
        const mha_acts *a = kind == SUB_SELF ? &L->self_attn : &L->cross_attn;
        mha_params *ga = kind == SUB_SELF ? &g->self_attn : &g->cross_attn;
        const mha_params *pa = kind == SUB_SELF ? &p->self_attn : &p->cross_attn;
        mha_backward(c, ga, pa, a, dsub_in, dproj, sub_in, kind == SUB_CROSS ? mem : NULL, T, S);
    }
    if (c->cfg->norm_first)
        layernorm_backward(G, g->norm_weight[k], g->norm_bias[k], w->d_res, x, p->norm_weight[k], b->ln_mean,
                           b->ln_rstd, N, d);
}

/* The output of block k of a layer (its successor's input). */
static const float *block_out(const tfm_config *cfg, const block_acts *b) { return cfg->norm_first ? b->res : b->ln; }

static void embed_backward(const bctx *c, float *dtable, const float *G, const uint8_t *mask, const int32_t *ids,
                           size_t ids_stride, size_t T) {
    const size_t d = c->d;
    const float *dx = undrop(c, c->w->d_sub, G, mask, c->B * T * d);
    for (size_t b = 0; b < c->B; b++)
        embedding_backward(dtable, dx + b * T * d, ids + b * ids_stride, sqrtf((float)d), T, d);
}

void model_backward(tfm_context *ctx, model_params *grads, grad_workspace *w, const int32_t *src,
                    const int32_t *tgt_in, size_t tgt_in_stride, const dropout_cfg *drop) {
    const tfm_config *cfg = &ctx->m->cfg;
    const activations *A = &ctx->acts;
    const model_params *P = &ctx->m->p;
    bctx c = {cfg, w, drop && drop->p > 0.0f, drop ? drop->p : 0.0f, (size_t)A->B, (size_t)A->S, (size_t)A->T,
              (size_t)cfg->d_model, (size_t)cfg->n_heads, (size_t)cfg->d_ff};
    const size_t B = c.B, S = c.S, T = c.T, d = c.d, NT = B * T, NS = B * S;

    /* generator and final decoder LayerNorm */
    zero(w->d_res, NT * d);
    linear_backward(w->d_res, grads->generator_weight, grads->generator_bias, A->logits, A->dec_out,
                    P->generator_weight, NT, d, (size_t)cfg->tgt_vocab);
    const int nd = cfg->n_dec_layers, ne = cfg->n_enc_layers;
    const float *dec_top = nd > 0 ? block_out(cfg, &A->dec[nd - 1].blk[2]) : A->dec_x0;
    zero(w->d_stream, NT * d);
    layernorm_backward(w->d_stream, grads->dec_norm_weight, grads->dec_norm_bias, w->d_res, dec_top,
                       P->dec_norm_weight, A->dec_out_mean, A->dec_out_rstd, NT, d);

    /* decoder layers, top down: FFN, cross-attention, self-attention */
    zero(w->d_memory, NS * d);
    for (int l = nd - 1; l >= 0; l--) {
        const layer_acts *L = &A->dec[l];
        const float *x0 = l > 0 ? block_out(cfg, &A->dec[l - 1].blk[2]) : A->dec_x0;
        const float *x1 = block_out(cfg, &L->blk[0]), *x2 = block_out(cfg, &L->blk[1]);
        block_backward(&c, SUB_FFN, 2, &grads->dec[l], &P->dec[l], L, x2, NULL, T, S);
        block_backward(&c, SUB_CROSS, 1, &grads->dec[l], &P->dec[l], L, x1, A->memory, T, S);
        block_backward(&c, SUB_SELF, 0, &grads->dec[l], &P->dec[l], L, x0, NULL, T, S);
    }
    embed_backward(&c, grads->tgt_embed, w->d_stream, A->dec_x0_drop, tgt_in, tgt_in_stride, T);

    /* final encoder LayerNorm, then the encoder layers top down */
    const float *enc_top = ne > 0 ? block_out(cfg, &A->enc[ne - 1].blk[1]) : A->enc_x0;
    zero(w->d_stream, NS * d);
    layernorm_backward(w->d_stream, grads->enc_norm_weight, grads->enc_norm_bias, w->d_memory, enc_top,
                       P->enc_norm_weight, A->memory_mean, A->memory_rstd, NS, d);
    for (int l = ne - 1; l >= 0; l--) {
        const layer_acts *L = &A->enc[l];
        const float *x0 = l > 0 ? block_out(cfg, &A->enc[l - 1].blk[1]) : A->enc_x0;
        const float *x1 = block_out(cfg, &L->blk[0]);
        block_backward(&c, SUB_FFN, 1, &grads->enc[l], &P->enc[l], L, x1, NULL, S, S);
        block_backward(&c, SUB_SELF, 0, &grads->enc[l], &P->enc[l], L, x0, NULL, S, S);
    }
    embed_backward(&c, grads->src_embed, w->d_stream, A->enc_x0_drop, src, S, S);
}
