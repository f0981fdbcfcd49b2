/* The forward pass of a model described by its stacks (stack.h) — for the encoder–decoder, Vaswani
 * et al. 2017, §3, Figure 1, as PyTorch's nn.Transformer computes it, post-LN or pre-LN, with the
 * final LayerNorm of each stack — batched (every position at once; activations kept in the
 * context for the backward pass) or one step at a time on the KV cache. Both run layer_forward. */
#include "layer.h"
#include "bert.h"
#include "hash.h"
#include "model_params.h"
#include "ops.h"

#include <math.h>
#include <string.h>

/* A fresh seed for each dropout site of the step: hash_site_seed of the step seed and the site. */
static uint64_t site_seed(dropper *dr) { return hash_site_seed(dr->cfg->seed, ++dr->site); }

uint64_t dropper_site_seed(dropper *dr) { return site_seed(dr); }

void dropper_apply(dropper *dr, float *x, uint8_t *mask, size_t n) {
    if (dr->cfg) dropout_forward(x, mask, x, dr->cfg->p, site_seed(dr), n);
}

void stack_embed(const tfm_config *cfg, const pe_kind *pe, const stack_params *sp, pe_state *st, float *x0,
                 const int32_t *ids, size_t ids_stride, size_t B, size_t T, size_t d, size_t pos0) {
    const float scale = tfm_config_embed_scale(cfg); /* √d_model, or the family's (BERT, GPT-2: 1) */
    for (size_t b = 0; b < B; b++) embedding_forward(x0 + b * T * d, ids + b * ids_stride, sp->embed, scale, T, d);
    pe_params pp = sp->pe;
    pp.state = st; /* the calling context's state of this stack (pe.h) */
    if (pe->embed_forward) pe->embed_forward(cfg, &pp, x0, B, T, d, pos0);
}

void stack_final_norm(const tfm_config *cfg, float *out, float *mean, float *rstd, const float *x,
                      const stack_params *sp, size_t N, size_t d) {
    if (cfg->norm == TFM_NORM_RMS)
        rmsnorm_forward(out, rstd, x, sp->norm_weight, N, d, cfg->layer_norm_eps);
    else
        layernorm_forward(out, mean, rstd, x, sp->norm_weight, sp->norm_bias, N, d, cfg->layer_norm_eps);
}

/* One stack over B rows of T positions (pos0 = 0): embedding + PE + dropout, its blocks, its final
 * LayerNorm into acts.stack[s].out. Cross-attention reads the output of stack sd->memory (run
 * before it). */
static void stack_forward(tfm_context *ctx, const model_desc *md, dropper *dr, int s, size_t B, const int32_t *ids,
                          size_t ids_stride) {
    const tfm_config *cfg = &ctx->m->cfg;
    const stack_desc *sd = &md->stack[s];
    const stack_params *sp = &ctx->m->p.stack[s];
    stack_acts *A = &ctx->acts.stack[s];
    const size_t T = (size_t)A->T, d = (size_t)cfg->d_model, N = B * T;
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < T; t++) A->pad[b * T + t] = (uint8_t)(ids[b * ids_stride + t] == cfg->pad_id);
    /* a target row starts with the decoder's start token, never padding, even where that token is
     * the pad id (Marian: decoder_start_token_id = pad_token_id) */
    if (sd->input == STACK_INPUT_TARGET)
        for (size_t b = 0; b < B; b++) A->pad[b * T] = 0;
    const pe_kind *pe = pe_of(cfg);
    stack_embed(cfg, pe, sp, &ctx->pe.stack[s], A->x0, ids, ids_stride, B, T, d, 0);
    /* BERT: + token type 0, LayerNorm (its mean/rstd in the final norm's buffers, not used yet) */
    bert_embed_finish(cfg, sp, A->x0, A->out_mean, A->out_rstd, N, d);
    dropper_apply(dr, A->x0, A->x0_drop, N * d);
    const stack_acts *M = sd->memory >= 0 ? &ctx->acts.stack[sd->memory] : NULL;
    layer_call c = {cfg, pe, sp, &sd->block, B, T, 0, A->pad, T, M ? (size_t)M->T : 0, M ? M->pad : NULL,
                    NULL, NULL, 0, &ctx->kernels, !ctx->kernels.fused_layers, NULL, 0, NULL, NULL};
    const float *x = A->x0;
    for (int l = 0; l < sd->n_layers; l++) {
        layer_acts *L = &A->layers[l];
        if (M) cross_kv_forward(&ctx->kernels, L->cross_attn.qkv, &sp->layers[l].cross_attn, M->out, B * c.S_mem, d);
        x = layer_forward(dr, &c, L, &sp->layers[l], x);
    }
    if (sd->no_final_norm)
        memcpy(A->out, x, N * d * sizeof(float)); /* BERT, Marian: the last block's LayerNorm is the output */
    else
        stack_final_norm(cfg, A->out, A->out_mean, A->out_rstd, x, sp, N, d);
}

/* The ids a stack reads. */
static const int32_t *stack_ids(const stack_desc *sd, const int32_t *src, size_t S, const int32_t *tgt,
                                size_t tgt_stride, size_t *stride) {
    *stride = sd->input == STACK_INPUT_SOURCE ? S : tgt_stride;
    return sd->input == STACK_INPUT_SOURCE ? src : tgt;
}

void model_forward(tfm_context *ctx, int Bi, int Si, int Ti, const int32_t *src, const int32_t *tgt_in,
                   size_t tgt_in_stride, const dropout_cfg *drop) {
    const ops_kernels *kern = &ctx->kernels;
    const tfm_config *cfg = &ctx->m->cfg;
    activations *A = &ctx->acts;
    TFM_ASSERT(A->B == Bi && A->S == Si && A->T == Ti && !A->encode); /* context_reserve's layout */
    dropper dr = {drop && drop->p > 0.0f ? drop : NULL, 0};
    TFM_ASSERT(!dr.cfg || A->training);
    model_desc md;
    model_describe(cfg, &md);
    for (int s = 0; s < md.n_stacks; s++) { /* a stack's memory comes before it */
        size_t stride;
        const int32_t *ids = stack_ids(&md.stack[s], src, (size_t)Si, tgt_in, tgt_in_stride, &stride);
        stack_forward(ctx, &md, &dr, s, (size_t)Bi, ids, stride);
    }
    /* Generator: logits over the target vocabulary (§3.4); log-softmax is the caller's. */
    if (md.out_stack >= 0) {
        const stack_acts *O = &A->stack[md.out_stack];
        linear_forward(kern, A->logits, O->out, ctx->m->p.generator_weight, ctx->m->p.generator_bias,
                       (size_t)Bi * (size_t)O->T, (size_t)cfg->d_model, (size_t)cfg->tgt_vocab);
    }
}

/* ---- incremental decoding on a KV cache ------------------------------------------------------ */

void model_decode_start(tfm_context *ctx, const int32_t *src) {
    const ops_kernels *kern = &ctx->kernels;
    const tfm_model *m = ctx->m;
    const tfm_config *cfg = &m->cfg;
    kv_cache *c = &ctx->cache;
    const size_t B = (size_t)c->B_mem, S = (size_t)c->S, d = (size_t)cfg->d_model; /* one row per sentence */
    /* the encoder's workspace holds `group` sentences (context_reserve_encode, kv_cache_reserve) */
    TFM_ASSERT(ctx->acts.encode && ctx->acts.B >= 1 && ctx->acts.S == c->S);
    const size_t group = (size_t)ctx->acts.B;
    model_desc md;
    model_describe(cfg, &md);
    TFM_ASSERT(md.out_stack >= 0);
    const stack_desc *od = &md.stack[md.out_stack];
    dropper dr = {NULL, 0};
    for (size_t b0 = 0; b0 < B; b0 += group) {
        const size_t nb = B - b0 < group ? B - b0 : group;
        /* the stacks before the generator's (the encoder, over the source) run whole, once */
        for (int s = 0; s < md.out_stack; s++) {
            TFM_ASSERT(md.stack[s].input == STACK_INPUT_SOURCE);
            stack_forward(ctx, &md, &dr, s, nb, src + b0 * S, S);
        }
        if (od->memory >= 0) {
            const stack_acts *M = &ctx->acts.stack[od->memory];
            memcpy(c->mem_pad + b0 * S, M->pad, nb * S);
            /* cross-attention keys and values of the memory, once per sentence */
            for (int l = 0; l < od->n_layers; l++)
                cross_kv_forward(kern, c->cross_kv[l] + b0 * S * 2 * d, &m->p.stack[md.out_stack].layers[l].cross_attn,
                                 M->out, nb * S, d);
        }
    }
    c->len = 0;
}

void model_decode_step(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride) {
    const ops_kernels *kern = &ctx->kernels;
    const tfm_model *m = ctx->m;
    const tfm_config *cfg = &m->cfg;
    kv_cache *c = &ctx->cache;
    const size_t B = (size_t)c->B, d = (size_t)cfg->d_model, t = (size_t)c->len, cap = (size_t)c->cap_T;
    const int32_t *rp = c->ragged ? c->row_len : NULL; /* rows at their own positions (kv_cache_ragged) */
    TFM_ASSERT(rp || c->len < c->cap_T);
    for (size_t b = 0; rp && b < B; b++) TFM_ASSERT(rp[b] < c->cap_T);
    model_desc md;
    model_describe(cfg, &md);
    const int s = md.out_stack;
    const stack_desc *sd = &md.stack[s];
    const stack_params *sp = &m->p.stack[s];
    const pe_kind *pe = pe_of(cfg);
    dropper dr = {NULL, 0};
    if (rp) /* each row at its own position */
        for (size_t b = 0; b < B; b++)
            stack_embed(cfg, pe, sp, &ctx->pe.stack[s], c->x0 + b * d, tokens + b * tokens_stride, tokens_stride, 1,
                        1, d, (size_t)rp[b]);
    else
        stack_embed(cfg, pe, sp, &ctx->pe.stack[s], c->x0, tokens, tokens_stride, B, 1, d, t);
    /* the batched pass's layer code with T = 1 at pos0 = t: keys and values from the cache */
    /* row b reads memory row mem_row[b]: its sentence's (beams), after kv_cache_compact */
    /* the linear layers' kernels are those of the rows the call started with (B_start), so rows
     * kv_cache_compact keeps decode with the same kernels, bit for bit, as before it */
    const size_t kr = (size_t)c->B_start;
    layer_call call = {cfg, pe, sp, &sd->block, B, 1, t, NULL, 0, (size_t)c->S, c->mem_pad, NULL, NULL, cap * cfg_kv_dim(cfg),
                       &ctx->kernels, !ctx->kernels.fused_layers, c->mem_row, kr, rp, rp ? c->row_slot : NULL};
    const float *x = c->x0;
    for (int l = 0; l < sd->n_layers; l++) {
        call.cache_k = c->self_k[l];
        call.cache_v = c->self_v[l];
        c->step.cross_attn.qkv = c->cross_kv[l]; /* the memory's K|V, computed at decode start */
        x = layer_forward(&dr, &call, &c->step, &sp->layers[l], x);
    }
    if (sd->no_final_norm)
        memcpy(c->out, x, B * d * sizeof(float)); /* post-LN Marian: the last block's LayerNorm is the output */
    else
        stack_final_norm(cfg, c->out, c->out_mean, c->out_rstd, x, sp, B, d);
    linear_forward_rows(kern, c->logits, c->out, m->p.generator_weight, m->p.generator_bias, B, d, (size_t)cfg->tgt_vocab,
                        kr);
    if (rp)
        for (size_t b = 0; b < B; b++) c->row_len[b]++;
    else
        c->len++;
}
