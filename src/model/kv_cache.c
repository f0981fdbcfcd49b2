/* The KV cache of the generator's stack (the decoder): keys and values of every decoded position,
 * per block, plus the cross-attention keys and values of the memory (the encoder output), and one
 * step's activations, in one arena of the context. */
#include "model_internal.h"

#include <string.h>

/* The cache of the generator's stack (model_describe): per block, the self-attention keys and
 * values of cap positions and (if the block cross-attends) the memory's K|V; then one step's
 * activations, shared by the blocks. */
static void layout(const tfm_config *cfg, int Bi, int Si, int cap, tfm_arena *a, kv_cache *c) {
    const size_t B = (size_t)Bi, S = (size_t)Si, T = (size_t)cap, d = (size_t)cfg->d_model;
    const size_t L = T > S ? T : S;
    model_desc md;
    model_describe(cfg, &md);
    const stack_desc *sd = &md.stack[md.out_stack];
    const int cross = block_has(&sd->block, SUB_CROSS_ATTN);
    for (int l = 0; l < sd->n_layers; l++) {
        c->self_k[l] = arena_take_f32(a, B * T * d);
        c->self_v[l] = arena_take_f32(a, B * T * d);
        c->cross_kv[l] = cross ? arena_take_f32(a, B * S * 2 * d) : NULL;
    }
    c->mem_pad = arena_take_bytes(a, B * S);
    c->x0 = arena_take_f32(a, B * d);
    layer_acts_layout(cfg, &sd->block, B, 1, T, S, 0, 0, a, &c->step);
    c->out = arena_take_f32(a, B * d);
    c->out_mean = arena_take_f32(a, B);
    c->out_rstd = arena_take_f32(a, B);
    c->logits = arena_take_f32(a, B * (size_t)cfg->tgt_vocab);
    c->tmp = arena_take_f32(a, B * L * 2 * d);
}

size_t kv_cache_bytes(const tfm_config *cfg, int B, int S, int cap_T) {
    kv_cache dummy;
    tfm_arena counter = {NULL, 0, 0};
    layout(cfg, B, S, cap_T, &counter, &dummy);
    return counter.used;
}

tfm_status kv_cache_reserve(tfm_context *ctx, int B, int S, int cap_T) {
    const tfm_config *cfg = &ctx->m->cfg;
    kv_cache *c = &ctx->cache;
    RETURN_IF(B < 1 || S < 0 || cap_T < 1, TFM_ERR_INVALID_ARG, "KV cache sizes B=%d S=%d T=%d", B, S, cap_T);
    RETURN_IF(tfm_model_estimate_bytes(cfg, B, S, cap_T) == 0, TFM_ERR_NOMEM,
              "a KV cache of %d x (%d, %d) positions is too large to lay out", B, S, cap_T);
    tfm_arena counter = {NULL, 0, 0};
    layout(cfg, B, S, cap_T, &counter, c);
    if (counter.used > c->arena.cap) { /* grow; a smaller cache re-carves the same block */
        arena_free(&c->arena);
        TRY(arena_init(&c->arena, counter.used, "the KV cache"));
    }
    tfm_arena again = c->arena;
    again.used = 0;
    layout(cfg, B, S, cap_T, &again, c);
    c->B = B;
    c->S = S;
    c->cap_T = cap_T;
    c->len = 0;
    TRY(pe_states_reserve(&ctx->pe, cfg, (size_t)cap_T, 0)); /* positions 0..cap_T−1 are decoded */
    return context_reserve(ctx, B, S, 1, 0);
}

void kv_cache_free(kv_cache *c) {
    arena_free(&c->arena);
    memset(c, 0, sizeof *c);
}

/* dst row b = src row rows[b], rows of `width` floats, through the scratch buffer */
static void gather(float *x, float *tmp, const int *rows, size_t B, size_t width) {
    for (size_t b = 0; b < B; b++) memcpy(tmp + b * width, x + (size_t)rows[b] * width, width * sizeof(float));
    memcpy(x, tmp, B * width * sizeof(float));
}

void kv_cache_reorder(tfm_context *ctx, const int *rows) {
    const tfm_model *m = ctx->m;
    kv_cache *c = &ctx->cache;
    const size_t B = (size_t)c->B, S = (size_t)c->S, T = (size_t)c->cap_T, d = (size_t)m->cfg.d_model;
    const size_t len = (size_t)c->len;
    model_desc md;
    model_describe(&m->cfg, &md);
    for (int l = 0; l < md.stack[md.out_stack].n_layers; l++) {
        /* only the first len positions of each row matter; copy those */
        float *kv[2] = {c->self_k[l], c->self_v[l]};
        for (int k = 0; k < 2; k++) {
            for (size_t b = 0; b < B; b++)
                memcpy(c->tmp + b * len * d, kv[k] + (size_t)rows[b] * T * d, len * d * sizeof(float));
            for (size_t b = 0; b < B; b++) memcpy(kv[k] + b * T * d, c->tmp + b * len * d, len * d * sizeof(float));
        }
        if (c->cross_kv[l]) gather(c->cross_kv[l], c->tmp, rows, B, S * 2 * d);
    }
    uint8_t *pad_tmp = (uint8_t *)c->tmp;
    for (size_t b = 0; b < B; b++) memcpy(pad_tmp + b * S, c->mem_pad + (size_t)rows[b] * S, S);
    memcpy(c->mem_pad, pad_tmp, B * S);
}
