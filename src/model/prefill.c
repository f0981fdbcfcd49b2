/* The batched prefill (prefill.h): a row's P prompt positions through the decoder's blocks in
 * causal forwards of up to C positions on the KV cache — forward.c's layer code (layer_forward)
 * with T = min(C, P − pos0) at pos0 = 0, C, 2C, ..., keys and values appended into the cache as a
 * decoding step appends its one position. */
#include "prefill.h"

#include "layer.h"
#include "model_internal.h"
#include "ops.h"
#include "tfm/names.h"

#include <string.h>

/* Query rows of one chunk of a prompt of P positions in chunks of C: min(P, C). */
static int chunk_rows(int P, int C) { return P < C ? P : C; }

/* x0 (rows, d) and one block's activations of (1, rows) queries over P keys, rows = chunk_rows(P,
 * C) (the last chunk has the most keys, P; an earlier one, fewer): the generator's stack's block,
 * without cross-attention (model_prefill_reserve refuses a decoder with a memory). */
static void layout(const ops_kernels *kern, const tfm_config *cfg, int P, int C, tfm_arena *a, prefill_ws *w) {
    model_desc md;
    model_describe(cfg, &md);
    const size_t T = (size_t)chunk_rows(P, C);
    w->x0 = arena_take_f32(a, T * (size_t)cfg->d_model);
    layer_acts_layout(kern, cfg, &md.stack[md.out_stack].block, 1, T, (size_t)P, 0, 0, 0, a, &w->acts);
}

size_t model_prefill_bytes_chunk(const tfm_config *cfg, int P, int C) {
    model_desc md;
    model_describe(cfg, &md);
    if (md.out_stack < 0 || P < 1 || C < 1) return 0;
    prefill_ws dummy;
    tfm_arena counter = {NULL, 0, 0};
    layout(ops_kernels_tuned(), cfg, P, C, &counter, &dummy);
    return counter.used;
}

size_t model_prefill_bytes(const tfm_config *cfg, int P) { return model_prefill_bytes_chunk(cfg, P, PREFILL_CHUNK); }

tfm_status model_prefill_reserve(tfm_context *ctx, int P) {
    const tfm_config *cfg = &ctx->m->cfg;
    kv_cache *c = &ctx->cache;
    model_desc md;
    model_describe(cfg, &md);
    RETURN_IF(md.out_stack < 0 || md.stack[md.out_stack].memory >= 0, TFM_ERR_INVALID_ARG,
              "a prefill needs a decoder-only model; this one is %s", tfm_arch_name(cfg->arch));
    RETURN_IF(P < 1 || P > c->cap_T, TFM_ERR_INVALID_ARG,
              "a prefill of %d positions on a KV cache of %d positions (reserve the cache first)", P, c->cap_T);
    const int C = ctx->prefill_chunk;
    RETURN_IF(C < 1, TFM_ERR_INVALID_ARG, "a prefill in chunks of %d positions (at least 1)", C);
    prefill_ws *w = &c->prefill;
    tfm_arena counter = {NULL, 0, 0};
    layout(&ctx->kernels, cfg, P, C, &counter, w);
    if (counter.used > w->arena.cap) { /* grow; a shorter prompt re-carves the same block */
        arena_free(&w->arena);
        w->cap_P = 0;
        TRY(arena_init(&w->arena, counter.used, "the prefill's workspace"));
    }
    tfm_arena again = w->arena;
    again.used = 0;
    layout(&ctx->kernels, cfg, P, C, &again, w);
    w->cap_P = P;
    w->chunk = C;
    return TFM_OK;
}

int model_prefill_chunk(tfm_context *ctx, int r, const int32_t *tokens, int P, int pos0) {
    const tfm_model *m = ctx->m;
    const tfm_config *cfg = &m->cfg;
    kv_cache *c = &ctx->cache;
    prefill_ws *w = &c->prefill;
    const int C = w->chunk;
    TFM_ASSERT(r >= 0 && r < (c->ragged ? c->B_start : c->B) && P >= 1 && P <= w->cap_P && P <= c->cap_T);
    TFM_ASSERT(pos0 >= 0 && pos0 < P && pos0 % C == 0);
    model_desc md;
    model_describe(cfg, &md);
    const int s = md.out_stack;
    const stack_desc *sd = &md.stack[s];
    TFM_ASSERT(s >= 0 && sd->memory < 0);
    const stack_params *sp = &m->p.stack[s];
    const pe_kind *pe = pe_of(cfg);
    const size_t d = (size_t)cfg->d_model, V = (size_t)cfg->tgt_vocab, T = (size_t)chunk_rows(P - pos0, C);
    const size_t bstride = (size_t)c->cap_T * cfg_kv_dim(cfg); /* a row of one block's cache */
    dropper dr = {NULL, 0};
    stack_embed(cfg, pe, sp, &ctx->pe.stack[s], w->x0, tokens + pos0, T, 1, T, d, (size_t)pos0);
    /* the batched pass's blocks over (1, T) at pos0, causal over the cached positions before it;
     * no key padding, as a decoding step (the prompt's tokens are all attended to, whatever their
     * ids); every chunk's linear layers take the kernel of min(P, C) rows, so the bits depend on
     * P and C alone */
    layer_call call = {cfg, pe, sp, &sd->block, 1, T, (size_t)pos0, NULL, 0, 0, NULL, NULL, NULL, bstride,
                       &ctx->kernels, !ctx->kernels.fused_layers, NULL, (size_t)chunk_rows(P, C), NULL, NULL};
    const float *x = w->x0;
    for (int l = 0; l < sd->n_layers; l++) {
        call.cache_k = c->self_k[l] + (size_t)r * bstride;
        call.cache_v = c->self_v[l] + (size_t)r * bstride;
        x = layer_forward(&dr, &call, &w->acts, &sp->layers[l], x);
    }
    const int done = pos0 + (int)T;
    if (done < P) return done;
    /* only the last position's logits are read (the first new token): one row through the final
     * norm and the generator, into row r of the step's buffers */
    const float *last = x + (T - 1) * d;
    float *out = c->out + (size_t)r * d;
    if (sd->no_final_norm)
        memcpy(out, last, d * sizeof(float));
    else
        stack_final_norm(cfg, out, c->out_mean + r, c->out_rstd + r, last, sp, 1, d);
    linear_forward_rows(&ctx->kernels, c->logits + (size_t)r * V, out, m->p.generator_weight, m->p.generator_bias, 1, d,
                        V, 1);
    return done;
}

void model_prefill_row(tfm_context *ctx, int r, const int32_t *tokens, int P) {
    for (int pos0 = 0; pos0 < P;) pos0 = model_prefill_chunk(ctx, r, tokens, P, pos0);
}

void model_prefill(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride, int P) {
    kv_cache *c = &ctx->cache;
    TFM_ASSERT(c->len == 0);
    for (int r = 0; r < c->B; r++) model_prefill_row(ctx, r, tokens + (size_t)r * tokens_stride, P);
    c->len = P;
}
