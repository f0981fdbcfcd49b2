/* Contexts: one thread's working memory for a model — the activation workspace, laid out per batch
 * shape in one arena that grows on demand, and the KV cache. */
#include "model_internal.h"
#include "ops.h"
#include "pe.h"
#include "tfm/threads.h"

#include <stdlib.h>
#include <string.h>

tfm_status tfm_context_create(const tfm_model *model, tfm_context **out) {
    return tfm_context_create_opts(model, NULL, out);
}

tfm_status tfm_context_create_opts(const tfm_model *model, const tfm_kernel_opts *opts, tfm_context **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_context_create: NULL output");
    *out = NULL;
    RETURN_IF(!model, TFM_ERR_INVALID_ARG, "tfm_context_create needs a model");
    const tfm_kernel_opts def = tfm_kernel_opts_default();
    if (!opts) opts = &def;
    TRY(tfm_kernel_opts_validate(opts));
    tfm_context *ctx = calloc(1, sizeof *ctx);
    RETURN_IF(!ctx, TFM_ERR_NOMEM, "out of memory allocating a context");
    ctx->m = model;
    ctx->kernels = ops_kernels_resolve(opts);
    ctx->decode_compact = 1;
    ctx->encode_tokens = ENCODE_TOKENS;
    ctx->prefill_chunk = PREFILL_CHUNK;
    ctx->acts.B = -1; /* nothing laid out yet */
    *out = ctx;
    return TFM_OK;
}

void tfm_context_free(tfm_context *ctx) {
    if (!ctx) return;
    arena_free(&ctx->act_arena);
    kv_cache_free(&ctx->cache);
    pe_states_free(&ctx->pe);
    free(ctx);
}

const tfm_model *tfm_context_model(const tfm_context *ctx) { return ctx->m; }

const tfm_config *context_config(const tfm_context *ctx) { return &ctx->m->cfg; }

float *context_logits(tfm_context *ctx) { return ctx->acts.logits; }

const float *context_stack_output(const tfm_context *ctx, int stack) { return ctx->acts.stack[stack].out; }

const ops_kernels *context_kernels(const tfm_context *ctx) { return &ctx->kernels; }

int context_decode_compact(const tfm_context *ctx) { return ctx->decode_compact; }

const char *tfm_context_kernels(const tfm_context *ctx, char *buf, size_t n) {
    return ops_kernels_describe(&ctx->kernels, buf, n);
}

static void take_block(tfm_arena *a, block_acts *b, size_t N, size_t d, int training) {
    b->ln = arena_take_f32(a, N * d);
    b->ln_mean = arena_take_f32(a, N);
    b->ln_rstd = arena_take_f32(a, N);
    b->res = arena_take_f32(a, N * d);
    b->drop = training ? arena_take_bytes(a, N * d) : NULL;
}

/* An attention sub-layer of B·T queries over S keys; cross: the memory's K|V (B·S, 2d) if own_kv. */
static void take_mha(const ops_kernels *kern, const tfm_config *cfg, tfm_arena *a, mha_acts *m, size_t B, size_t T, size_t S, size_t H,
                     size_t d, int cross, int own_kv, int bias, int training) {
    const size_t N = B * T;
    m->q = cross ? arena_take_f32(a, N * d) : NULL;
    m->qkv = !cross ? arena_take_f32(a, N * cfg_qkv_dim(cfg)) : own_kv ? arena_take_f32(a, B * S * 2 * d) : NULL;
    const int fused = attn_use_fused(kern, cfg, cross, training);
    m->probs = fused ? NULL : arena_take_f32(a, B * H * T * S);
    m->probs_drop = training && !fused ? arena_take_f32(a, B * H * T * S) : NULL;
    m->lse = fused ? arena_take_f32(a, B * H * T) : NULL;
    m->fws = NULL; /* activations_layout points it at the pass's shared scratch */
    m->fws_slots = 0;
    m->bias = bias ? arena_take_f32(a, H * T * S) : NULL;
    m->att = arena_take_f32(a, N * d);
    m->proj = arena_take_f32(a, N * d);
}

void layer_acts_layout(const ops_kernels *kern, const tfm_config *cfg, const block_desc *bd, size_t B, size_t T, size_t S_self,
                       size_t S_mem, int own_mem_kv, int training, tfm_arena *a, layer_acts *L) {
    const size_t d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, d_ff = (size_t)cfg->d_ff, N = B * T;
    const int bias = pe_of(cfg)->bias_forward != NULL;
    memset(L, 0, sizeof *L);
    for (int k = 0; k < bd->n_sub; k++) take_block(a, &L->blk[k], N, d, training);
    take_mha(kern, cfg, a, &L->self_attn, B, T, S_self, H, d, 0, 0, bias, training);
    if (block_has(bd, SUB_CROSS_ATTN)) take_mha(kern, cfg, a, &L->cross_attn, B, T, S_mem, H, d, 1, own_mem_kv, 0, training);
    L->ff_pre = arena_take_f32(a, N * cfg_ff1_rows(cfg)); /* SwiGLU: gate | up */
    L->ff_act = arena_take_f32(a, N * d_ff);
    L->ff_drop = training ? arena_take_bytes(a, N * d_ff) : NULL;
    L->ff_out = arena_take_f32(a, N * d);
}

/* 1 if every block of stacks 0..n−1 has two sub-layers or more: a block's output (its last
 * wrapper's buffer) is then never a buffer its first sub-layer writes, so one layer_acts can serve
 * every block of a stack in turn (block k reads block k−1's output while writing its own). */
static int blocks_can_share(const model_desc *md, int n) {
    for (int s = 0; s < n; s++)
        if (md->stack[s].n_layers > 1 && md->stack[s].block.n_sub < 2) return 0;
    return 1;
}

/* activations_layout, or with `encode` the encoding layout: only the stacks before the
 * generator's, one block's activations shared by every block of a stack, no logits. */
static void layout_pass(const ops_kernels *kern, const tfm_config *cfg, int Bi, int Si, int Ti, int training, int slots,
                        int encode, tfm_arena *a, activations *acts) {
    const size_t B = (size_t)Bi, d = (size_t)cfg->d_model;
    activations dummy;
    if (!acts) acts = &dummy;
    memset(acts, 0, sizeof *acts);
    acts->B = Bi;
    acts->S = Si;
    acts->T = Ti;
    acts->training = training;
    acts->slots = slots;
    acts->encode = encode;
    model_desc md;
    model_describe(cfg, &md);
    const int n_stacks = encode && md.out_stack >= 0 ? md.out_stack : md.n_stacks;
    const int share = encode && !training && blocks_can_share(&md, n_stacks);
    for (int s = 0; s < n_stacks; s++) {
        const stack_desc *sd = &md.stack[s];
        stack_acts *A = &acts->stack[s];
        const size_t T = (size_t)(sd->input == STACK_INPUT_SOURCE ? Si : Ti), N = B * T;
        const size_t S_mem = sd->memory >= 0 ? (size_t)acts->stack[sd->memory].T : 0;
        A->T = (int)T;
        A->pad = arena_take_bytes(a, N);
        A->x0 = arena_take_f32(a, N * d);
        A->x0_drop = training ? arena_take_bytes(a, N * d) : NULL;
        for (int l = 0; l < sd->n_layers; l++) {
            if (share && l > 0)
                A->layers[l] = A->layers[0]; /* the same buffers: the blocks run one after the other */
            else
                layer_acts_layout(kern, cfg, &sd->block, B, T, T, S_mem, 1, training, a, &A->layers[l]);
        }
        A->out = arena_take_f32(a, N * d);
        A->out_mean = arena_take_f32(a, N);
        A->out_rstd = arena_take_f32(a, N);
    }
    /* the fused attention's scratch: one for the pass, its sub-layers run one after the other */
    int cross = 0;
    for (int s = 0; s < n_stacks; s++) cross |= block_has(&md.stack[s].block, SUB_CROSS_ATTN);
    if (attn_use_fused(kern, cfg, 0, training) || (cross && attn_use_fused(kern, cfg, 1, training))) {
        const size_t most = (size_t)(Si > Ti ? Si : Ti); /* no attention has more queries or keys */
        float *fws = arena_take_f32(a, attn_fused_workspace_floats(most, most, slots));
        for (int s = 0; s < n_stacks; s++)
            for (int l = 0; l < md.stack[s].n_layers; l++) {
                layer_acts *L = &acts->stack[s].layers[l];
                L->self_attn.fws = L->cross_attn.fws = fws;
                L->self_attn.fws_slots = L->cross_attn.fws_slots = slots;
            }
    }
    if (md.out_stack >= 0 && !encode)
        acts->logits = arena_take_f32(a, B * (size_t)acts->stack[md.out_stack].T * (size_t)cfg->tgt_vocab);
}

void activations_layout(const ops_kernels *kern, const tfm_config *cfg, int Bi, int Si, int Ti, int training, int slots, tfm_arena *a,
                        activations *acts) {
    layout_pass(kern, cfg, Bi, Si, Ti, training, slots, 0, a, acts);
}

static size_t layout_bytes(const ops_kernels *kern, const tfm_config *cfg, int B, int S, int T, int training, int slots,
                           int encode) {
    tfm_arena counter = {NULL, 0, 0};
    layout_pass(kern, cfg, B, S, T, training, slots, encode, &counter, NULL);
    return counter.used;
}

size_t activations_bytes(const ops_kernels *kern, const tfm_config *cfg, int B, int S, int T, int training) {
    return layout_bytes(kern, cfg, B, S, T, training, tfm_get_threads(), 0);
}

int encode_rows(int B, int S, int tokens) {
    const int rows = S > 0 ? tokens / S : B;
    return rows < 1 ? 1 : rows > B ? B : rows;
}

/* Sentences whose layout at S tokens is at least that of any group encode_rows(B, S', tokens)
 * at S' <= S: ceil(tokens / S) (capped at B). A group's layout is about rows · S' tokens (<= tokens)
 * of bytes growing with S' (the attention weights), so reserving this once lets every shorter
 * batch's groups re-carve the same block. */
static int encode_room(int B, int S, int tokens) {
    const int rows = S > 0 ? (tokens + S - 1) / S : B;
    return rows < 1 ? 1 : rows > B ? B : rows;
}

size_t activations_encode_bytes(const ops_kernels *kern, const tfm_config *cfg, int B, int S) {
    const int room = encode_room(B, S, ENCODE_TOKENS);
    return layout_bytes(kern, cfg, room, S, 1, 0, tfm_get_threads(), 1);
}

/* context_reserve, or with `encode` > 0 the encoding layout of B sentences whose arena holds at
 * least `encode` of them (T = 1, training 0) */
static tfm_status reserve(tfm_context *ctx, int B, int S, int T, int training, int encode) {
    const tfm_config *cfg = &ctx->m->cfg;
    ctx->attn_maps = 0; /* a new pass overwrites the weights tfm_context_attention reads */
    /* the size products must not wrap around: the estimate refuses what could overflow */
    RETURN_IF(tfm_model_estimate_bytes(cfg, B, S, T) == 0, TFM_ERR_NOMEM,
              "a batch of %d x (%d, %d) tokens is too large to lay out", B, S, T);
    TRY(pe_states_reserve(&ctx->pe, cfg, (size_t)(S > T ? S : T), training));
    ops_blas_reserve(ops_threads()); /* BLIS's pools for the team: no product allocates later */
    const int slots = tfm_get_threads(); /* once: the size and the carve below must agree */
    const int enc = encode > 0;
    const size_t need = layout_bytes(&ctx->kernels, cfg, enc && encode > B ? encode : B, S, T, training, slots, enc);
    if (need > ctx->act_arena.cap) {
        /* grow: what a batch needs is its layout's bytes, not the largest B, S and T seen apart */
        arena_free(&ctx->act_arena);
        TRY(arena_init(&ctx->act_arena, need, "the activation workspace"));
        ctx->acts.B = -1;
    }
    activations *A = &ctx->acts;
    if (A->B != B || A->S != S || A->T != T || A->training != training || A->slots != slots || A->encode != enc) {
        tfm_arena again = ctx->act_arena; /* re-carve the same block for this batch's sizes */
        again.used = 0;
        layout_pass(&ctx->kernels, cfg, B, S, T, training, slots, enc, &again, A);
    }
    return TFM_OK;
}

tfm_status context_reserve(tfm_context *ctx, int B, int S, int T, int training) {
    return reserve(ctx, B, S, T, training, 0);
}

tfm_status context_reserve_encode(tfm_context *ctx, int B, int S) {
    const int rows = encode_rows(B, S, ctx->encode_tokens);
    return reserve(ctx, rows, S, 1, 0, encode_room(B, S, ctx->encode_tokens));
}

void grad_workspace_layout(const ops_kernels *kern, const tfm_config *cfg, int Bi, int Si, int Ti, tfm_arena *a, grad_workspace *w) {
    const size_t B = (size_t)Bi, S = (size_t)Si, T = (size_t)Ti;
    const size_t d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, d_ff = (size_t)cfg->d_ff;
    const size_t N = B * (S > T ? S : T), L = S > T ? S : T, wide = 3 * d > d_ff ? 3 * d : d_ff;
    grad_workspace dummy;
    if (!w) w = &dummy;
    w->d_stream = arena_take_f32(a, N * d);
    w->d_res = arena_take_f32(a, N * d);
    w->d_sub = arena_take_f32(a, N * d);
    w->d_att = arena_take_f32(a, N * d);
    w->d_q = arena_take_f32(a, N * d);
    w->d_kv = arena_take_f32(a, N * 2 * d);
    w->d_big = arena_take_f32(a, N * wide);
    w->d_big2 = arena_take_f32(a, N * d_ff);
    /* only the reference attention's backward needs dL/d(score) materialised */
    const int all_fused = attn_use_fused(kern, cfg, 0, 1) && attn_use_fused(kern, cfg, 1, 1);
    w->dprobs = all_fused ? NULL : arena_take_f32(a, B * H * L * L);
    w->d_memory = arena_take_f32(a, N * d);
}

