/* Backpropagation through the forward pass of forward.c, stack by stack from the generator down,
 * block by block from the top of each stack down to its embeddings. Every op's backward
 * accumulates (llm.c style), so the residual stream's gradient is one buffer that each sub-layer
 * adds its branch into; a memory stack (the encoder) receives the gradient that every
 * cross-attention block of the stack reading it (the decoder) accumulated into w->d_memory. */
#include "layer.h"
#include "model_grad.h"
#include "model_params.h"
#include "ops.h"

#include <math.h>
#include <string.h>

static void zero(float *x, size_t n) { memset(x, 0, n * sizeof *x); }

typedef struct {
    const tfm_config *cfg;
    const pe_kind *pe;
    grad_workspace *w;
    int drop; /* dropout was applied in the forward */
    float p;
    size_t B, d, H, d_ff;
    const ops_kernels *kern; /* the context's kernel table */
    int reference;           /* 1: the unfused reference kernels for the FFN and the residual wrappers */
} bctx;

/* The gradient reaching a sub-layer's output before its dropout: d_sub = dropout⁻¹(dout). */
static const float *undrop(const bctx *c, float *buf, const float *dout, const uint8_t *mask, size_t n) {
    if (!c->drop) return dout;
    if (!c->reference) {
        dropout_backward_write(buf, dout, mask, c->p, n);
        return buf;
    }
    zero(buf, n);
    dropout_backward(buf, dout, mask, c->p, n);
    return buf;
}

/* Backward of self_attention (layer.c, batched: pos0 = 0, T keys): dout (N, d) is the gradient of
 * the (pre-dropout) projection output; accumulates into dx (N, d) and the parameter gradients,
 * the position encoding's included. */
static void self_attention_backward(const bctx *c, stack_params *gs, const stack_params *ps, layer_params *gl,
                                    const layer_params *pl, mask_kind mask, const mha_acts *a, float *dx,
                                    const float *dout, const float *x, size_t T) {
    const ops_kernels *kern = c->kern;
    grad_workspace *w = c->w;
    const size_t B = c->B, d = c->d, H = c->H, N = B * T;
    mha_params *g = &gl->self_attn;
    const mha_params *p = &pl->self_attn;
    zero(w->d_att, N * d);
    linear_backward(kern, w->d_att, g->out_proj_weight, g->out_proj_bias, dout, a->att, p->out_proj_weight, N, d, d);
    zero(w->d_big, N * 3 * d);
    attn_args args = attn_args_make(kern, B, T, T, H, d / H, 3 * d, 3 * d);
    args.bias = a->bias; /* for the record: the backward does not read it (P already holds it) */
    args.causal = mask == MASK_CAUSAL;
    if (c->pe->rel_tables) { /* the relative tables, and where their gradients accumulate */
        float *rel_k, *rel_v;
        c->pe->rel_tables(c->cfg, pl, &rel_k, &rel_v, &args.rel_clip);
        args.rel_k = rel_k;
        args.rel_v = rel_v;
        c->pe->rel_tables(c->cfg, gl, &args.drel_k, &args.drel_v, &args.rel_clip);
    }
    TFM_ASSERT(a->lse || w->dprobs); /* a layout and a workspace made with different kernel tables */
    if (a->lse) /* the fused path (attn_use_fused: no relative tables, no learned bias) */
        attn_fused_backward(w->d_big, w->d_big + d, w->d_big + 2 * d, w->d_att, a->att, a->lse, a->qkv,
                            a->qkv + d, a->qkv + 2 * d, &a->fused_args, a->fws, a->fws_slots);
    else
        attn_backward(w->d_big, w->d_big + d, w->d_big + 2 * d, w->dprobs, w->d_att, a->probs,
                      c->drop ? a->probs_drop : NULL, a->qkv, a->qkv + d, a->qkv + 2 * d, &args);
    if (c->pe->bias_backward) c->pe->bias_backward(c->cfg, &gs->pe, gl, w->dprobs, mask, B, H, T, T, 0);
    if (c->pe->qk_backward) c->pe->qk_backward(c->cfg, &gs->pe, &ps->pe, w->d_big, 3 * d, B, T, H, d / H, 0);
    linear_backward(kern, dx, g->in_proj_weight, g->in_proj_bias, w->d_big, x, p->in_proj_weight, N, d, 3 * d);
}

/* Backward of cross_attention: accumulates into dx (B·T, d), w->d_memory (B·S, d) and the
 * parameter gradients (the memory's K|V projection included). */
static void cross_attention_backward(const bctx *c, mha_params *g, const mha_params *p, const mha_acts *a, float *dx,
                                     const float *dout, const float *x, const float *mem, size_t T, size_t S) {
    const ops_kernels *kern = c->kern;
    grad_workspace *w = c->w;
    const size_t B = c->B, d = c->d, H = c->H, N = B * T;
    zero(w->d_att, N * d);
    linear_backward(kern, w->d_att, g->out_proj_weight, g->out_proj_bias, dout, a->att, p->out_proj_weight, N, d, d);
    zero(w->d_q, N * d);
    zero(w->d_kv, B * S * 2 * d);
    attn_args args = attn_args_make(kern, B, T, S, H, d / H, d, 2 * d);
    TFM_ASSERT(a->lse || w->dprobs);
    if (a->lse)
        attn_fused_backward(w->d_q, w->d_kv, w->d_kv + d, w->d_att, a->att, a->lse, a->q, a->qkv, a->qkv + d,
                            &a->fused_args, a->fws, a->fws_slots);
    else
        attn_backward(w->d_q, w->d_kv, w->d_kv + d, w->dprobs, w->d_att, a->probs, c->drop ? a->probs_drop : NULL,
                      a->q, a->qkv, a->qkv + d, &args);
    linear_backward(kern, dx, g->in_proj_weight, g->in_proj_bias, w->d_q, x, p->in_proj_weight, N, d, d);
    linear_backward(kern, w->d_memory, g->in_proj_weight + d * d, g->in_proj_bias + d, w->d_kv, mem,
                    p->in_proj_weight + d * d, B * S, d, 2 * d);
}

/* Backward of ffn: dout (N, d) gradient of linear2's output; accumulates into dx. */
static void ffn_backward(const bctx *c, layer_params *g, const layer_params *p, const layer_acts *L, float *dx,
                         const float *dout, const float *x, size_t N) {
    const ops_kernels *kern = c->kern;
    grad_workspace *w = c->w;
    const size_t d = c->d, d_ff = c->d_ff;
    if (!c->reference) { /* fused_ffn.c: the hidden gradient written, then one element-wise pass */
        ffn_backward_fused(kern, dx, g->linear1_weight, g->linear1_bias, g->linear2_weight, g->linear2_bias, w->d_big, dout,
                           x, L->ff_pre, L->ff_act, c->drop ? L->ff_drop : NULL, p->linear1_weight, p->linear2_weight,
                           (int)c->cfg->activation, c->p, N, d, d_ff);
        return;
    }
    zero(w->d_big, N * d_ff);
    linear_backward(kern, w->d_big, g->linear2_weight, g->linear2_bias, dout, L->ff_act, p->linear2_weight, N, d_ff, d);
    const float *dact = w->d_big;
    if (c->drop) { /* through the hidden-layer dropout: d_big2 is free until the activation */
        zero(w->d_big2, N * d_ff);
        dropout_backward(w->d_big2, w->d_big, L->ff_drop, c->p, N * d_ff);
        memcpy(w->d_big, w->d_big2, N * d_ff * sizeof(float));
    }
    zero(w->d_big2, N * d_ff);
    if (c->cfg->activation == TFM_ACT_GELU)
        gelu_backward(w->d_big2, dact, L->ff_pre, N * d_ff);
    else if (c->cfg->activation == TFM_ACT_SILU)
        silu_backward(w->d_big2, dact, L->ff_pre, N * d_ff);
    else
        relu_backward(w->d_big2, dact, L->ff_pre, N * d_ff);
    linear_backward(kern, dx, g->linear1_weight, g->linear1_bias, w->d_big2, x, p->linear1_weight, N, d, d_ff);
}

/* Where a block's backward reads and writes: the stack it is in, its memory. */
typedef struct {
    const stack_desc *sd;
    stack_params *gs;
    const stack_params *ps;
    size_t T;          /* positions per row */
    const float *mem;  /* the memory stack's output (B·S_mem, d), or NULL */
    size_t S_mem;
    pe_state *pe_st;   /* the context's position-encoding state of this stack */
} stack_ref;

/* Sub-layer k of a block, given G = dL/d(wrapper output) in w->d_stream; on return w->d_stream
 * holds dL/d(wrapper input) x.
 *   post-LN  y = LN(x + f(x)):  d_res = LN'(G);  dx = d_res + f'(d_res)
 *   pre-LN   y = x + f(LN(x)):  dx = G + LN'(f'(G)) */
static void sublayer_backward(const bctx *c, const stack_ref *r, int k, layer_params *g, const layer_params *p,
                              const layer_acts *L, const float *x) {
    grad_workspace *w = c->w;
    const block_acts *b = &L->blk[k];
    const size_t N = c->B * r->T, d = c->d;
    float *G = w->d_stream;
    const float *sub_in; /* what f saw */
    float *dsub_in;      /* where f's input gradient accumulates */
    const float *dout;   /* gradient of f's output before its dropout */
    if (!c->cfg->norm_first && !c->reference) {
        /* fused_norm.c: G ← LN'(G) in place (the residual path), d_sub ← dropout⁻¹(G) (always a
         * buffer of its own: f accumulates its input gradient into G while reading d_sub) */
        layernorm_dropout_backward(G, w->d_sub, g->norm_weight[k], g->norm_bias[k], G, b->res, p->norm_weight[k],
                                   b->ln_mean, b->ln_rstd, c->drop ? b->drop : NULL, c->p, N, d);
        sub_in = x;
        dsub_in = G;
        dout = w->d_sub;
    } else if (!c->cfg->norm_first) {
        zero(w->d_res, N * d);
        layernorm_backward(w->d_res, g->norm_weight[k], g->norm_bias[k], G, b->res, p->norm_weight[k], b->ln_mean,
                           b->ln_rstd, N, d);
        memcpy(G, w->d_res, N * d * sizeof(float)); /* the residual path */
        sub_in = x;
        dsub_in = G;
        dout = undrop(c, w->d_sub, w->d_res, b->drop, N * d);
    } else {
        zero(w->d_res, N * d);
        sub_in = b->ln;
        dsub_in = w->d_res; /* dL/d LN(x), then through the LayerNorm into G */
        dout = undrop(c, w->d_sub, G, b->drop, N * d);
    }
    switch (r->sd->block.sub[k]) {
    case SUB_SELF_ATTN:
        self_attention_backward(c, r->gs, r->ps, g, p, r->sd->block.self_mask, &L->self_attn, dsub_in, dout, sub_in,
                                r->T);
        break;
    case SUB_CROSS_ATTN:
        cross_attention_backward(c, &g->cross_attn, &p->cross_attn, &L->cross_attn, dsub_in, dout, sub_in, r->mem,
                                 r->T, r->S_mem);
        break;
    default: ffn_backward(c, g, p, L, dsub_in, dout, sub_in, N); break;
    }
    if (c->cfg->norm_first)
        layernorm_backward(G, g->norm_weight[k], g->norm_bias[k], w->d_res, x, p->norm_weight[k], b->ln_mean,
                           b->ln_rstd, N, d);
}

/* Embedding + PE backward of a stack: G = dL/dx0 (after its dropout). */
static void embed_backward(const bctx *c, const stack_ref *r, const stack_acts *A, const int32_t *ids,
                           size_t ids_stride) {
    const size_t d = c->d, T = r->T;
    const float *dx = undrop(c, c->w->d_sub, c->w->d_stream, A->x0_drop, c->B * T * d);
    pe_params pp = r->ps->pe;
    pp.state = r->pe_st;
    if (c->pe->embed_backward) c->pe->embed_backward(c->cfg, &r->gs->pe, &pp, dx, c->B, T, d, 0);
    for (size_t b = 0; b < c->B; b++)
        embedding_backward(r->gs->embed, dx + b * T * d, ids + b * ids_stride, tfm_config_embed_scale(c->cfg), T, d);
}

/* One stack, top down, from dL/d(its final LayerNorm output) in dout (B·T, d). */
static void stack_backward(const bctx *c, const stack_ref *r, const stack_acts *A, const float *dout,
                           const int32_t *ids, size_t ids_stride) {
    grad_workspace *w = c->w;
    const size_t N = c->B * r->T, d = c->d;
    const int nl = r->sd->n_layers, ns = r->sd->block.n_sub;
    const float *top = nl > 0 ? block_out(c->cfg, &A->layers[nl - 1].blk[ns - 1]) : A->x0;
    if (r->sd->no_final_norm) /* the stack's output is its last block's (BERT, Marian) */
        memcpy(w->d_stream, dout, N * d * sizeof(float));
    else if (!c->reference) /* the final LayerNorm's input gradient written, not added to a zeroed buffer */
        layernorm_dropout_backward(w->d_stream, NULL, r->gs->norm_weight, r->gs->norm_bias, dout, top,
                                   r->ps->norm_weight, A->out_mean, A->out_rstd, NULL, 0.0f, N, d);
    else {
        zero(w->d_stream, N * d);
        layernorm_backward(w->d_stream, r->gs->norm_weight, r->gs->norm_bias, dout, top, r->ps->norm_weight,
                           A->out_mean, A->out_rstd, N, d);
    }
    if (r->mem) zero(w->d_memory, c->B * r->S_mem * d); /* this stack's cross-attention fills it */
    for (int l = nl - 1; l >= 0; l--) {
        const layer_acts *L = &A->layers[l];
        for (int k = ns - 1; k >= 0; k--) {
            /* the input of sub-layer k: the previous wrapper's output, or the block's input */
            const float *x = k > 0 ? block_out(c->cfg, &L->blk[k - 1])
                             : l > 0 ? block_out(c->cfg, &A->layers[l - 1].blk[ns - 1])
                                     : A->x0;
            sublayer_backward(c, r, k, &r->gs->layers[l], &r->ps->layers[l], L, x);
        }
    }
    embed_backward(c, r, A, ids, ids_stride);
}

void model_backward(tfm_context *ctx, model_params *grads, grad_workspace *w, const int32_t *src,
                    const int32_t *tgt_in, size_t tgt_in_stride, const dropout_cfg *drop) {
    const tfm_config *cfg = &ctx->m->cfg;
    const activations *A = &ctx->acts;
    const model_params *P = &ctx->m->p;
    bctx c = {cfg, pe_of(cfg), w, drop && drop->p > 0.0f, drop ? drop->p : 0.0f, (size_t)A->B, (size_t)cfg->d_model,
              (size_t)cfg->n_heads, (size_t)cfg->d_ff, &ctx->kernels, !ctx->kernels.fused_layers};
    const ops_kernels *kern = &ctx->kernels;
    const size_t B = c.B, d = c.d;
    model_desc md;
    model_describe(cfg, &md);
    TFM_ASSERT(md.out_stack == md.n_stacks - 1); /* the generator reads the last stack */

    /* generator: dL/d(output stack's final LayerNorm output) into w->d_res */
    const stack_acts *O = &A->stack[md.out_stack];
    const size_t NO = B * (size_t)O->T;
    zero(w->d_res, NO * d);
    linear_backward(kern, w->d_res, grads->generator_weight, grads->generator_bias, A->logits, O->out, P->generator_weight,
                    NO, d, (size_t)cfg->tgt_vocab);
    /* the stacks top down; a memory stack's output gradient is what its reader left in d_memory
     * (each is consumed by the stack's final LayerNorm backward before anything overwrites it) */
    for (int s = md.n_stacks - 1; s >= 0; s--) {
        const stack_desc *sd = &md.stack[s];
        const stack_acts *SA = &A->stack[s];
        const stack_acts *M = sd->memory >= 0 ? &A->stack[sd->memory] : NULL;
        stack_ref r = {sd, &grads->stack[s], &P->stack[s], (size_t)SA->T, M ? M->out : NULL, M ? (size_t)M->T : 0,
                       &ctx->pe.stack[s]};
        const float *dout = s == md.out_stack ? w->d_res : w->d_memory;
        const int32_t *ids = sd->input == STACK_INPUT_SOURCE ? src : tgt_in;
        const size_t stride = sd->input == STACK_INPUT_SOURCE ? (size_t)A->S : tgt_in_stride;
        stack_backward(&c, &r, SA, dout, ids, stride);
    }
}
