/* The encoder–decoder forward pass (Vaswani et al. 2017, §3, Figure 1), as PyTorch's
 * nn.Transformer computes it, post-LN or pre-LN (norm_first), with the final encoder and decoder
 * LayerNorms. Every intermediate is kept in the context's activations for the backward pass. */
#include "model_internal.h"
#include "ops.h"

#include <math.h>
#include <string.h>

/* MultiHead(Q, K, V) = Concat(head_1..head_H) W_O (§3.2.2) with nn.MultiheadAttention's packed
 * in_proj. x (N = B·T, d) gives the queries; for self-attention also the keys and values, for
 * cross-attention those come from mem (B·S, d). */
typedef struct {
    const dropout_cfg *cfg; /* NULL: no dropout (inference, or p = 0) */
    uint64_t site;          /* counts the dropout sites of one forward pass */
} dropper;

/* A fresh seed for each dropout site of the step (splitmix64 of the step seed and the site). */
static uint64_t site_seed(dropper *dr) {
    uint64_t z = dr->cfg->seed + (++dr->site) * 0xD1B54A32D192ED03ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void drop_inplace(dropper *dr, float *x, uint8_t *mask, size_t n) {
    if (dr->cfg) dropout_forward(x, mask, x, dr->cfg->p, site_seed(dr), n);
}

/* Attention of a packed batch (q_pos0 = 0) with this site's dropout on the weights. */
static void attend(dropper *dr, mha_acts *a, const float *q, size_t q_stride, const float *k, const float *v,
                   size_t kv_stride, const uint8_t *key_pad, int causal, size_t B, size_t T, size_t S, size_t H,
                   size_t d_k) {
    attn_args args = attn_args_make(B, T, S, H, d_k, q_stride, kv_stride);
    args.key_pad = key_pad;
    args.key_pad_bstride = S;
    args.causal = causal;
    if (dr->cfg) {
        args.dropout_p = dr->cfg->p;
        args.dropout_seed = site_seed(dr);
    }
    attn_forward(a->att, a->probs, dr->cfg ? a->probs_drop : NULL, q, k, v, &args);
}

static void mha_forward(dropper *dr, mha_acts *a, const mha_params *p, const float *x, const float *mem,
                        const uint8_t *key_pad, int causal, size_t B, size_t T, size_t S, size_t d,
                        size_t H) {
    const size_t N = B * T;
    if (mem == NULL) {
        linear_forward(a->qkv, x, p->in_proj_weight, p->in_proj_bias, N, d, 3 * d);
        attend(dr, a, a->qkv, 3 * d, a->qkv + d, a->qkv + 2 * d, 3 * d, key_pad, causal, B, T, T, H, d / H);
    } else {
        linear_forward(a->q, x, p->in_proj_weight, p->in_proj_bias, N, d, d);
        linear_forward(a->qkv, mem, p->in_proj_weight + d * d, p->in_proj_bias + d, B * S, d, 2 * d);
        attend(dr, a, a->q, d, a->qkv, a->qkv + d, 2 * d, key_pad, 0, B, T, S, H, d / H);
    }
    linear_forward(a->proj, a->att, p->out_proj_weight, p->out_proj_bias, N, d, d);
}

/* FFN(x) = act(x W_1 + b_1) W_2 + b_2 (§3.3, eq. 2). */
static void ffn_forward(dropper *dr, layer_acts *L, const layer_params *p, const float *x, size_t N, size_t d,
                        size_t d_ff, tfm_activation act) {
    linear_forward(L->ff_pre, x, p->linear1_weight, p->linear1_bias, N, d, d_ff);
    if (act == TFM_ACT_GELU)
        gelu_forward(L->ff_act, L->ff_pre, N * d_ff);
    else
        relu_forward(L->ff_act, L->ff_pre, N * d_ff);
    drop_inplace(dr, L->ff_act, L->ff_drop, N * d_ff);
    linear_forward(L->ff_out, L->ff_act, p->linear2_weight, p->linear2_bias, N, d_ff, d);
}

/* The input the sub-layer sees: x itself (post-LN) or LayerNorm(x) (pre-LN). */
static const float *block_enter(block_acts *b, const float *x, const float *w, const float *bias, size_t N,
                                size_t d, const tfm_config *cfg) {
    if (!cfg->norm_first) return x;
    layernorm_forward(b->ln, b->ln_mean, b->ln_rstd, x, w, bias, N, d, cfg->layer_norm_eps);
    return b->ln;
}

/* Drops out the sub-layer output, adds the residual and, post-LN, normalises; returns the block's
 * output. */
static const float *block_leave(dropper *dr, block_acts *b, const float *x, float *sub, const float *w,
                                const float *bias, size_t N, size_t d, const tfm_config *cfg) {
    drop_inplace(dr, sub, b->drop, N * d);
    residual_forward(b->res, x, sub, N * d);
    if (cfg->norm_first) return b->res;
    layernorm_forward(b->ln, b->ln_mean, b->ln_rstd, b->res, w, bias, N, d, cfg->layer_norm_eps);
    return b->ln;
}

static void embed(float *x0, const int32_t *ids, size_t ids_stride, const float *table, size_t B, size_t T,
                  size_t d) {
    for (size_t b = 0; b < B; b++)
        embedding_forward(x0 + b * T * d, ids + b * ids_stride, table, sqrtf((float)d), T, d);
    pe_sinusoidal_add(x0, B, T, d, 0);
}

/* Encoder (§3.1): N layers of self-attention and FFN, then the final LayerNorm into A->memory. */
static void encode(tfm_context *ctx, dropper *dr, size_t B, size_t S, const int32_t *src) {
    const tfm_config *cfg = &ctx->m->cfg;
    activations *A = &ctx->acts;
    const model_params *P = &ctx->m->p;
    const size_t d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, d_ff = (size_t)cfg->d_ff;
    for (size_t i = 0; i < B * S; i++) A->src_pad[i] = (uint8_t)(src[i] == cfg->pad_id);
    embed(A->enc_x0, src, S, P->src_embed, B, S, d);
    drop_inplace(dr, A->enc_x0, A->enc_x0_drop, B * S * d);
    const float *x = A->enc_x0;
    for (int l = 0; l < cfg->n_enc_layers; l++) {
        layer_acts *L = &A->enc[l];
        const layer_params *W = &P->enc[l];
        const float *in = block_enter(&L->blk[0], x, W->norm_weight[0], W->norm_bias[0], B * S, d, cfg);
        mha_forward(dr, &L->self_attn, &W->self_attn, in, NULL, A->src_pad, 0, B, S, S, d, H);
        x = block_leave(dr, &L->blk[0], x, L->self_attn.proj, W->norm_weight[0], W->norm_bias[0], B * S, d, cfg);
        in = block_enter(&L->blk[1], x, W->norm_weight[1], W->norm_bias[1], B * S, d, cfg);
        ffn_forward(dr, L, W, in, B * S, d, d_ff, cfg->activation);
        x = block_leave(dr, &L->blk[1], x, L->ff_out, W->norm_weight[1], W->norm_bias[1], B * S, d, cfg);
    }
    layernorm_forward(A->memory, A->memory_mean, A->memory_rstd, x, P->enc_norm_weight, P->enc_norm_bias, B * S,
                      d, cfg->layer_norm_eps);
}

void model_forward(tfm_context *ctx, int Bi, int Si, int Ti, const int32_t *src, const int32_t *tgt_in,
                   size_t tgt_in_stride, const dropout_cfg *drop) {
    const tfm_config *cfg = &ctx->m->cfg;
    activations *A = &ctx->acts;
    const model_params *P = &ctx->m->p;
    const size_t B = (size_t)Bi, S = (size_t)Si, T = (size_t)Ti;
    const size_t d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, d_ff = (size_t)cfg->d_ff;
    TFM_ASSERT(A->B == Bi && A->S == Si && A->T == Ti);
    dropper dr = {drop && drop->p > 0.0f ? drop : NULL, 0};
    TFM_ASSERT(!dr.cfg || A->training);

    encode(ctx, &dr, B, S, src);
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++) A->tgt_pad[b * T + t] = (uint8_t)(tgt_in[b * tgt_in_stride + t] == cfg->pad_id);

    /* Decoder (§3.1): masked self-attention, attention over the encoder output, FFN. */
    embed(A->dec_x0, tgt_in, tgt_in_stride, P->tgt_embed, B, T, d);
    drop_inplace(&dr, A->dec_x0, A->dec_x0_drop, B * T * d);
    const float *x = A->dec_x0;
    for (int l = 0; l < cfg->n_dec_layers; l++) {
        layer_acts *L = &A->dec[l];
        const layer_params *W = &P->dec[l];
        const float *in = block_enter(&L->blk[0], x, W->norm_weight[0], W->norm_bias[0], B * T, d, cfg);
        mha_forward(&dr, &L->self_attn, &W->self_attn, in, NULL, A->tgt_pad, 1, B, T, T, d, H);
        x = block_leave(&dr, &L->blk[0], x, L->self_attn.proj, W->norm_weight[0], W->norm_bias[0], B * T, d, cfg);
        in = block_enter(&L->blk[1], x, W->norm_weight[1], W->norm_bias[1], B * T, d, cfg);
        mha_forward(&dr, &L->cross_attn, &W->cross_attn, in, A->memory, A->src_pad, 0, B, T, S, d, H);
        x = block_leave(&dr, &L->blk[1], x, L->cross_attn.proj, W->norm_weight[1], W->norm_bias[1], B * T, d, cfg);
        in = block_enter(&L->blk[2], x, W->norm_weight[2], W->norm_bias[2], B * T, d, cfg);
        ffn_forward(&dr, L, W, in, B * T, d, d_ff, cfg->activation);
        x = block_leave(&dr, &L->blk[2], x, L->ff_out, W->norm_weight[2], W->norm_bias[2], B * T, d, cfg);
    }
    layernorm_forward(A->dec_out, A->dec_out_mean, A->dec_out_rstd, x, P->dec_norm_weight, P->dec_norm_bias,
                      B * T, d, cfg->layer_norm_eps);

    /* Generator: logits over the target vocabulary (§3.4); log-softmax is the caller's. */
    linear_forward(A->logits, A->dec_out, P->generator_weight, P->generator_bias, B * T, d,
                   (size_t)cfg->tgt_vocab);
}

/* ---- incremental decoding on a KV cache ------------------------------------------------------ */

void model_decode_start(tfm_context *ctx, const int32_t *src) {
    const tfm_model *m = ctx->m;
    const tfm_config *cfg = &m->cfg;
    kv_cache *c = &ctx->cache;
    const size_t B = (size_t)c->B, S = (size_t)c->S, d = (size_t)cfg->d_model;
    TFM_ASSERT(ctx->acts.B == c->B && ctx->acts.S == c->S);
    dropper dr = {NULL, 0};
    encode(ctx, &dr, B, S, src);
    memcpy(c->src_pad, ctx->acts.src_pad, B * S);
    /* cross-attention keys and values of the memory, once per sentence (rows [d, 3d) of in_proj) */
    for (int l = 0; l < cfg->n_dec_layers; l++) {
        const mha_params *p = &m->p.dec[l].cross_attn;
        linear_forward(c->cross_kv[l], ctx->acts.memory, p->in_proj_weight + d * d, p->in_proj_bias + d, B * S, d,
                       2 * d);
    }
    c->len = 0;
}

void model_decode_step(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride) {
    const tfm_model *m = ctx->m;
    kv_cache *c = &ctx->cache;
    const tfm_config *cfg = &m->cfg;
    const model_params *P = &m->p;
    const size_t B = (size_t)c->B, S = (size_t)c->S, d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads;
    const size_t d_ff = (size_t)cfg->d_ff, t = (size_t)c->len, cap = (size_t)c->cap_T;
    TFM_ASSERT(c->len < c->cap_T);
    dropper dr = {NULL, 0};
    for (size_t b = 0; b < B; b++)
        embedding_forward(c->x0 + b * d, tokens + b * tokens_stride, P->tgt_embed, sqrtf((float)d), 1, d);
    pe_sinusoidal_add(c->x0, B, 1, d, t);
    const float *x = c->x0;
    for (int l = 0; l < cfg->n_dec_layers; l++) {
        const layer_params *W = &P->dec[l];
        /* masked self-attention: append this position's K, V to the cache, attend over 0..t */
        const float *in = block_enter(&c->blk, x, W->norm_weight[0], W->norm_bias[0], B, d, cfg);
        linear_forward(c->qkv, in, W->self_attn.in_proj_weight, W->self_attn.in_proj_bias, B, d, 3 * d);
        for (size_t b = 0; b < B; b++) {
            memcpy(c->self_k[l] + (b * cap + t) * d, c->qkv + b * 3 * d + d, d * sizeof(float));
            memcpy(c->self_v[l] + (b * cap + t) * d, c->qkv + b * 3 * d + 2 * d, d * sizeof(float));
        }
        attn_args self = attn_args_make(B, 1, t + 1, H, d / H, 3 * d, d);
        self.kv_bstride = cap * d;
        self.causal = 1;
        self.q_pos0 = t;
        attn_forward(c->att, c->scores, NULL, c->qkv, c->self_k[l], c->self_v[l], &self);
        linear_forward(c->sub, c->att, W->self_attn.out_proj_weight, W->self_attn.out_proj_bias, B, d, d);
        x = block_leave(&dr, &c->blk, x, c->sub, W->norm_weight[0], W->norm_bias[0], B, d, cfg);
        /* attention over the encoder output (keys and values computed once) */
        in = block_enter(&c->blk, x, W->norm_weight[1], W->norm_bias[1], B, d, cfg);
        linear_forward(c->qkv, in, W->cross_attn.in_proj_weight, W->cross_attn.in_proj_bias, B, d, d);
        attn_args cross = attn_args_make(B, 1, S, H, d / H, d, 2 * d);
        cross.key_pad = c->src_pad;
        cross.key_pad_bstride = S;
        attn_forward(c->att, c->scores, NULL, c->qkv, c->cross_kv[l], c->cross_kv[l] + d, &cross);
        linear_forward(c->sub, c->att, W->cross_attn.out_proj_weight, W->cross_attn.out_proj_bias, B, d, d);
        x = block_leave(&dr, &c->blk, x, c->sub, W->norm_weight[1], W->norm_bias[1], B, d, cfg);
        in = block_enter(&c->blk, x, W->norm_weight[2], W->norm_bias[2], B, d, cfg);
        ffn_forward(&dr, &c->ffn, W, in, B, d, d_ff, cfg->activation);
        x = block_leave(&dr, &c->blk, x, c->ffn.ff_out, W->norm_weight[2], W->norm_bias[2], B, d, cfg);
    }
    layernorm_forward(c->out, NULL, NULL, x, P->dec_norm_weight, P->dec_norm_bias, B, d, cfg->layer_norm_eps);
    linear_forward(c->logits, c->out, P->generator_weight, P->generator_bias, B, d, (size_t)cfg->tgt_vocab);
    c->len++;
}
