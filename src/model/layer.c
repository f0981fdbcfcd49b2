/* One block for a range of query positions (layer.h): self-attention (with the block's mask kind,
 * on the call's own keys or a KV cache), optional cross-attention, FFN, each wrapped in its
 * residual connection and LayerNorm, post-LN or pre-LN, as PyTorch's nn.Transformer*Layer. */
#include "layer.h"

#include "ops.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

const float *block_out(const tfm_config *cfg, const block_acts *b) { return cfg->norm_first ? b->res : b->ln; }

/* The rows the linear layers of this call choose their kernel for (layer_call.kernel_rows). */
static size_t kernel_rows(const layer_call *c) { return c->kernel_rows > c->B * c->T ? c->kernel_rows : c->B * c->T; }

/* out (N, OC) = x (N, IC) · wᵀ + b: linear_forward_rows for the call's kernel_rows. */
static void linear(const layer_call *c, float *out, const float *x, const float *w, const float *b, size_t N, size_t IC,
                   size_t OC) {
    linear_forward_rows(c->kern, out, x, w, b, N, IC, OC, kernel_rows(c));
}

void cross_kv_forward(const ops_kernels *kern, float *kv, const mha_params *p, const float *mem, size_t N, size_t d) {
    linear_forward(kern, kv, mem, p->in_proj_weight + d * d, p->in_proj_bias ? p->in_proj_bias + d : NULL, N, d, 2 * d);
}

/* The input the sub-layer sees: x itself (post-LN) or LayerNorm(x) (pre-LN; RMSNorm with
 * cfg->norm, which tfm_config_validate allows pre-LN only). */
static const float *block_enter(block_acts *b, const float *x, const float *w, const float *bias, size_t N,
                                size_t d, const tfm_config *cfg) {
    if (!cfg->norm_first) return x;
    if (cfg->norm == TFM_NORM_RMS)
        rmsnorm_forward(b->ln, b->ln_rstd, x, w, N, d, cfg->layer_norm_eps);
    else
        layernorm_forward(b->ln, b->ln_mean, b->ln_rstd, x, w, bias, N, d, cfg->layer_norm_eps);
    return b->ln;
}

/* Drops out the sub-layer output, adds the residual and, post-LN, normalises; returns the block's
 * output. Fused (residual_dropout_layernorm_forward: one pass per row), or with reference = 1 the
 * unfused kernels it is tested against. */
static const float *block_leave(dropper *dr, block_acts *b, const float *x, float *sub, const float *w,
                                const float *bias, size_t N, size_t d, const tfm_config *cfg, int reference) {
    if (!reference) {
        const uint64_t seed = dr->cfg ? dropper_site_seed(dr) : 0;
        residual_dropout_layernorm_forward(b->res, dr->cfg ? b->drop : NULL, cfg->norm_first ? NULL : b->ln,
                                           b->ln_mean, b->ln_rstd, x, sub, w, bias, dr->cfg ? dr->cfg->p : 0.0f, seed,
                                           N, d, cfg->layer_norm_eps);
        return cfg->norm_first ? b->res : b->ln;
    }
    dropper_apply(dr, sub, b->drop, N * d);
    residual_forward(b->res, x, sub, N * d);
    if (cfg->norm_first) return b->res;
    layernorm_forward(b->ln, b->ln_mean, b->ln_rstd, b->res, w, bias, N, d, cfg->layer_norm_eps);
    return b->ln;
}

int attn_use_fused(const ops_kernels *kern, const tfm_config *cfg, int cross, int training) {
    if (!training) return 0; /* decoding and scoring: the reference path (T = 1 steps, KV cache) */
    if (!kern->attn_fused) return 0;
    if (cross) return 1; /* no position term, no bias */
    const pe_kind *pe = pe_of(cfg);
    return pe->rel_tables == NULL && pe->bias_backward == NULL;
}

/* Attention with this site's dropout on the weights (attn_args filled by the caller), on the path
 * the layout chose (attn_use_fused): fused when it saved room for the log-sum-exp, else the
 * reference kernels with their [B, H, T, S] weights. */
static void attend(dropper *dr, mha_acts *a, const float *q, const float *k, const float *v, attn_args *args) {
    if (dr->cfg) {
        args->dropout_p = dr->cfg->p;
        args->dropout_seed = dropper_site_seed(dr);
    }
    if (a->lse) {
        a->fused_args = *args; /* the backward recomputes the scores and masks from these */
        attn_fused_forward(a->att, a->lse, q, k, v, args, a->fws, a->fws_slots);
    } else {
        attn_forward(a->att, a->probs, dr->cfg ? a->probs_drop : NULL, q, k, v, args);
    }
}

/* Masked multi-head self-attention (§3.2.2–3.2.3) of the call's T positions: Q|K|V of the new
 * positions, the position encoding on q/k, the new keys/values into the cache (if any), attention
 * over keys 0..pos0+T−1, W_O. */
static void self_attention(dropper *dr, const layer_call *c, mha_acts *a, const layer_params *W, const float *x) {
    const ops_kernels *kern = c->kern;
    const tfm_config *cfg = c->cfg;
    const size_t B = c->B, T = c->T, N = B * T, d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, dk = d / H;
    /* Q (d) | K (kvd) | V (kvd) per row; kvd = d unless grouped-query attention (n_kv_heads) */
    const size_t kvd = cfg_kv_dim(cfg), w = d + 2 * kvd;
    const mha_params *p = &W->self_attn;
    linear(c, a->qkv, x, p->in_proj_weight, p->in_proj_bias, N, d, w);
    const int32_t *rp = c->row_pos; /* rows at their own positions (T = 1): each row's hooks alone */
    TFM_ASSERT(!rp || (T == 1 && c->cache_k && c->cache_row));
    size_t S = c->pos0 + T; /* keys per row (with rp: the most a row has) */
    if (rp) {
        S = 0;
        for (size_t b = 0; b < B; b++) S = (size_t)rp[b] + 1 > S ? (size_t)rp[b] + 1 : S;
    }
    if (c->pe->qk_forward) {
        if (rp)
            for (size_t b = 0; b < B; b++)
                c->pe->qk_forward(c->cfg, &c->sp->pe, a->qkv + b * w, w, 1, 1, H, dk, (size_t)rp[b]);
        else
            c->pe->qk_forward(c->cfg, &c->sp->pe, a->qkv, w, B, T, H, dk, c->pos0);
    }
    attn_args args = attn_args_make(kern, B, T, S, H, dk, w, w);
    args.kv_heads = kvd / dk;
    const float *k = a->qkv + d, *v = a->qkv + d + kvd;
    if (c->cache_k) { /* append the new keys and values: the cache keeps them already encoded */
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < T; t++) {
                const float *row = a->qkv + (b * T + t) * w;
                const size_t cb = rp ? (size_t)c->cache_row[b] : b; /* the row's slot */
                const size_t at = cb * c->cache_bstride + ((rp ? (size_t)rp[b] : c->pos0) + t) * kvd;
                memcpy(c->cache_k + at, row + d, kvd * sizeof(float));
                memcpy(c->cache_v + at, row + d + kvd, kvd * sizeof(float));
            }
        k = c->cache_k;
        v = c->cache_v;
        args.kv_stride = kvd;
        args.kv_bstride = c->cache_bstride;
        args.kv_row = rp ? c->cache_row : NULL;
    }
    args.key_pad = c->self_pad;
    args.key_pad_bstride = c->self_pad_bstride;
    args.causal = c->bd->self_mask == MASK_CAUSAL;
    args.q_pos0 = c->pos0;
    args.q_pos = rp;
    if (c->pe->bias_forward) {
        if (rp) { /* one bias per row, (H, 1, S) each: a key's bias does not depend on S */
            for (size_t b = 0; b < B; b++)
                c->pe->bias_forward(c->cfg, &c->sp->pe, W, c->bd->self_mask, a->bias + b * H * S, H, 1, S,
                                    (size_t)rp[b]);
            args.bias_bstride = H * S;
        } else {
            c->pe->bias_forward(c->cfg, &c->sp->pe, W, c->bd->self_mask, a->bias, H, T, S, c->pos0);
        }
        args.bias = a->bias;
        args.bias_hstride = T * S;
        args.bias_tstride = S;
    }
    if (c->pe->rel_tables) { /* Shaw et al. 2018: relative key/value embeddings */
        float *rel_k, *rel_v;
        c->pe->rel_tables(c->cfg, W, &rel_k, &rel_v, &args.rel_clip);
        args.rel_k = rel_k;
        args.rel_v = rel_v;
    }
    attend(dr, a, a->qkv, k, v, &args);
    linear(c, a->proj, a->att, p->out_proj_weight, p->out_proj_bias, N, d, d);
}

/* Attention over the memory (§3.2.3): queries from x, keys|values precomputed in a->qkv. No
 * position term (cross-attention compares positions of two different sequences). */
static void cross_attention(dropper *dr, const layer_call *c, mha_acts *a, const layer_params *W, const float *x) {
    const ops_kernels *kern = c->kern;
    const tfm_config *cfg = c->cfg;
    const size_t B = c->B, T = c->T, N = B * T, d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads;
    const mha_params *p = &W->cross_attn;
    linear(c, a->q, x, p->in_proj_weight, p->in_proj_bias, N, d, d);
    attn_args args = attn_args_make(kern, B, T, c->S_mem, H, d / H, d, 2 * d);
    args.key_pad = c->mem_pad;
    args.key_pad_bstride = c->S_mem;
    args.kv_row = c->mem_row;
    attend(dr, a, a->q, a->qkv, a->qkv + d, &args);
    linear(c, a->proj, a->att, p->out_proj_weight, p->out_proj_bias, N, d, d);
}

/* FFN(x) = act(x W_1 + b_1) W_2 + b_2 (§3.3, eq. 2), with dropout on the hidden layer as PyTorch.
 * Fused (ffn_forward_fused: activation and dropout in one pass), or the unfused reference. */
static void ffn(dropper *dr, const layer_call *c, layer_acts *L, const layer_params *p, const float *x, size_t N,
                size_t d, size_t d_ff, tfm_activation act) {
    const ops_kernels *kern = c->kern;
    if (act == TFM_ACT_GELU_TANH || act == TFM_ACT_SWIGLU) { /* the LM families: inference only */
        TFM_ASSERT(!dr->cfg);
        const int glu = act == TFM_ACT_SWIGLU;
        linear(c, L->ff_pre, x, p->linear1_weight, p->linear1_bias, N, d, glu ? 2 * d_ff : d_ff);
        if (glu)
            silu_glu_forward(L->ff_act, L->ff_pre, N, d_ff);
        else
            gelu_tanh_forward(L->ff_act, L->ff_pre, N * d_ff);
        linear(c, L->ff_out, L->ff_act, p->linear2_weight, p->linear2_bias, N, d_ff, d);
        return;
    }
    if (!c->reference) {
        const uint64_t seed = dr->cfg ? dropper_site_seed(dr) : 0;
        uint8_t *mask = dr->cfg ? L->ff_drop : NULL;
        const float prob = dr->cfg ? dr->cfg->p : 0.0f;
        ffn_forward_fused_rows(kern, L->ff_out, L->ff_pre, L->ff_act, mask, x, p->linear1_weight, p->linear1_bias,
                               p->linear2_weight, p->linear2_bias, (int)act, prob, seed, N, d, d_ff,
                               kernel_rows(c));
        return;
    }
    linear(c, L->ff_pre, x, p->linear1_weight, p->linear1_bias, N, d, d_ff);
    if (act == TFM_ACT_GELU)
        gelu_forward(L->ff_act, L->ff_pre, N * d_ff);
    else if (act == TFM_ACT_SILU)
        silu_forward(L->ff_act, L->ff_pre, N * d_ff);
    else
        relu_forward(L->ff_act, L->ff_pre, N * d_ff);
    dropper_apply(dr, L->ff_act, L->ff_drop, N * d_ff);
    linear(c, L->ff_out, L->ff_act, p->linear2_weight, p->linear2_bias, N, d_ff, d);
}

const float *layer_forward(dropper *dr, const layer_call *c, layer_acts *L, const layer_params *W, const float *x) {
    const tfm_config *cfg = c->cfg;
    const size_t N = c->B * c->T, d = (size_t)cfg->d_model;
    for (int k = 0; k < c->bd->n_sub; k++) {
        block_acts *b = &L->blk[k];
        const float *in = block_enter(b, x, W->norm_weight[k], W->norm_bias[k], N, d, cfg);
        float *sub;
        switch (c->bd->sub[k]) {
        case SUB_SELF_ATTN:
            self_attention(dr, c, &L->self_attn, W, in);
            sub = L->self_attn.proj;
            break;
        case SUB_CROSS_ATTN:
            cross_attention(dr, c, &L->cross_attn, W, in);
            sub = L->cross_attn.proj;
            break;
        default:
            ffn(dr, c, L, W, in, N, d, (size_t)cfg->d_ff, cfg->activation);
            sub = L->ff_out;
            break;
        }
        x = block_leave(dr, b, x, sub, W->norm_weight[k], W->norm_bias[k], N, d, cfg, c->reference);
    }
    return x;
}
