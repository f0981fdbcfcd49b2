/* The decoder's KV cache: keys and values of every decoded position, per layer, plus the
 * cross-attention keys and values of the encoder output, in one arena. */
#include "model_internal.h"

#include <string.h>

static void layout(const tfm_config *cfg, int Bi, int Si, int cap, tfm_arena *a, kv_cache *c) {
    const size_t B = (size_t)Bi, S = (size_t)Si, T = (size_t)cap, d = (size_t)cfg->d_model;
    const size_t H = (size_t)cfg->n_heads, L = T > S ? T : S;
    for (int l = 0; l < cfg->n_dec_layers; l++) {
        c->self_k[l] = arena_take_f32(a, B * T * d);
        c->self_v[l] = arena_take_f32(a, B * T * d);
        c->cross_kv[l] = arena_take_f32(a, B * S * 2 * d);
    }
    c->src_pad = arena_take_bytes(a, B * S);
    c->x0 = arena_take_f32(a, B * d);
    c->qkv = arena_take_f32(a, B * 3 * d);
    c->att = arena_take_f32(a, B * d);
    c->sub = arena_take_f32(a, B * d);
    c->out = arena_take_f32(a, B * d);
    c->logits = arena_take_f32(a, B * (size_t)cfg->tgt_vocab);
    c->scores = arena_take_f32(a, B * H * L);
    c->tmp = arena_take_f32(a, B * L * 2 * d);
    c->blk.ln = arena_take_f32(a, B * d);
    c->blk.ln_mean = arena_take_f32(a, B);
    c->blk.ln_rstd = arena_take_f32(a, B);
    c->blk.res = arena_take_f32(a, B * d);
    c->blk.drop = NULL;
    c->ffn.ff_pre = arena_take_f32(a, B * (size_t)cfg->d_ff);
    c->ffn.ff_act = arena_take_f32(a, B * (size_t)cfg->d_ff);
    c->ffn.ff_drop = NULL;
    c->ffn.ff_out = arena_take_f32(a, B * d);
}

tfm_status kv_cache_reserve(tfm_context *ctx, int B, int S, int cap_T) {
    const tfm_config *cfg = &ctx->m->cfg;
    kv_cache *c = &ctx->cache;
    RETURN_IF(B < 1 || S < 0 || cap_T < 1, TFM_ERR_INVALID_ARG, "KV cache sizes B=%d S=%d T=%d", B, S, cap_T);
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
    for (int l = 0; l < m->cfg.n_dec_layers; l++) {
        /* only the first len positions of each row matter; copy those */
        float *kv[2] = {c->self_k[l], c->self_v[l]};
        for (int k = 0; k < 2; k++) {
            for (size_t b = 0; b < B; b++)
                memcpy(c->tmp + b * len * d, kv[k] + (size_t)rows[b] * T * d, len * d * sizeof(float));
            for (size_t b = 0; b < B; b++) memcpy(kv[k] + b * T * d, c->tmp + b * len * d, len * d * sizeof(float));
        }
        gather(c->cross_kv[l], c->tmp, rows, B, S * 2 * d);
    }
    uint8_t *pad_tmp = (uint8_t *)c->tmp;
    for (size_t b = 0; b < B; b++) memcpy(pad_tmp + b * S, c->src_pad + (size_t)rows[b] * S, S);
    memcpy(c->src_pad, pad_tmp, B * S);
}
