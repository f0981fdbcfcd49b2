/* The KV cache of the generator's stack (the decoder): keys and values of every decoded position,
 * per block, plus the cross-attention keys and values of the memory (the encoder output), and one
 * step's activations, in one arena of the context. */
#include "model_internal.h"
#include "ops.h"
#include "tfm/names.h"

#include <string.h>

/* The cache of the generator's stack (model_describe): per block, the self-attention keys and
 * values of cap positions for each of the B = Bm · beams rows and (if the block cross-attends) the
 * memory's K|V once per sentence (Bm rows); then one step's activations, shared by the blocks. */
static void layout(const tfm_config *cfg, int Bmi, int beams, int Si, int cap, tfm_arena *a, kv_cache *c) {
    const size_t Bm = (size_t)Bmi, B = Bm * (size_t)beams, S = (size_t)Si, T = (size_t)cap, d = (size_t)cfg->d_model;
    const size_t kvd = cfg_kv_dim(cfg); /* only the key/value heads are kept (grouped-query attention) */
    model_desc md;
    model_describe(cfg, &md);
    const stack_desc *sd = &md.stack[md.out_stack];
    const int cross = block_has(&sd->block, SUB_CROSS_ATTN);
    for (int l = 0; l < sd->n_layers; l++) {
        c->self_k[l] = arena_take_f32(a, B * T * kvd);
        c->self_v[l] = arena_take_f32(a, B * T * kvd);
        c->cross_kv[l] = cross ? arena_take_f32(a, Bm * S * 2 * d) : NULL;
    }
    c->mem_pad = arena_take_bytes(a, Bm * S);
    c->mem_row = arena_take_bytes(a, B * sizeof(int32_t)); /* also for greedy: kv_cache_compact */
    c->slot = arena_take_bytes(a, B * sizeof(int32_t));
    c->row_len = arena_take_bytes(a, B * sizeof(int32_t)); /* ragged caches (kv_cache_ragged) */
    c->row_slot = arena_take_bytes(a, B * sizeof(int32_t));
    c->cp_dst = arena_take_bytes(a, B * sizeof *c->cp_dst);
    c->cp_src = arena_take_bytes(a, B * sizeof *c->cp_src);
    c->x0 = arena_take_f32(a, B * d);
    /* a decoding step's activations: not a training layout, so no table chooses anything here */
    layer_acts_layout(ops_kernels_tuned(), cfg, &sd->block, B, 1, T, S, 0, 0, a, &c->step);
    if (pe_of(cfg)->bias_forward) /* one bias per row: rows at different positions (layer_call.row_pos) */
        c->step.self_attn.bias = arena_take_f32(a, B * (size_t)cfg->n_heads * T);
    c->out = arena_take_f32(a, B * d);
    c->out_mean = arena_take_f32(a, B);
    c->out_rstd = arena_take_f32(a, B);
    c->logits = arena_take_f32(a, B * (size_t)cfg->tgt_vocab);
    c->tmp = beams > 1 ? arena_take_f32(a, B * T * d) : NULL; /* kv_cache_reorder's: beams only */
}

/* 1 if the model has a stack that decodes (the generator's): encoder-only models have none */
static int has_decoder(const tfm_config *cfg) {
    model_desc md;
    model_describe(cfg, &md);
    return md.out_stack >= 0;
}

size_t kv_cache_bytes_beams(const tfm_config *cfg, int B_mem, int beams, int S, int cap_T) {
    if (!has_decoder(cfg)) return 0;
    kv_cache dummy;
    tfm_arena counter = {NULL, 0, 0};
    layout(cfg, B_mem, beams, S, cap_T, &counter, &dummy);
    return counter.used;
}

size_t kv_cache_bytes(const tfm_config *cfg, int B, int S, int cap_T) { return kv_cache_bytes_beams(cfg, B, 1, S, cap_T); }

tfm_status kv_cache_reserve(tfm_context *ctx, int B, int S, int cap_T) { return kv_cache_reserve_beams(ctx, B, 1, S, cap_T); }

tfm_status kv_cache_reserve_beams(tfm_context *ctx, int B_mem, int beams, int S, int cap_T) {
    const tfm_config *cfg = &ctx->m->cfg;
    kv_cache *c = &ctx->cache;
    RETURN_IF(B_mem < 1 || beams < 1 || B_mem > INT32_MAX / beams || S < 0 || cap_T < 1, TFM_ERR_INVALID_ARG,
              "KV cache sizes B=%d x %d beams S=%d T=%d", B_mem, beams, S, cap_T);
    const int B = B_mem * beams;
    RETURN_IF(!has_decoder(cfg), TFM_ERR_INVALID_ARG, "a KV cache needs a decoder; this model is %s",
              tfm_arch_name(cfg->arch));
    RETURN_IF(tfm_model_estimate_bytes(cfg, B, S, cap_T) == 0, TFM_ERR_NOMEM,
              "a KV cache of %d x (%d, %d) positions is too large to lay out", B, S, cap_T);
    tfm_arena counter = {NULL, 0, 0};
    layout(cfg, B_mem, beams, S, cap_T, &counter, c);
    if (counter.used > c->arena.cap) { /* grow; a smaller cache re-carves the same block */
        arena_free(&c->arena);
        TRY(arena_init(&c->arena, counter.used, "the KV cache"));
    }
    tfm_arena again = c->arena;
    again.used = 0;
    layout(cfg, B_mem, beams, S, cap_T, &again, c);
    for (int r = 0; r < B; r++) c->mem_row[r] = r / beams;
    c->B = B;
    c->B_start = B;
    c->B_mem = B_mem;
    c->beams = beams;
    c->S = S;
    c->cap_T = cap_T;
    c->len = 0;
    c->ragged = 0;
    TRY(pe_states_reserve(&ctx->pe, cfg, (size_t)cap_T, 0)); /* positions 0..cap_T−1 are decoded */
    /* the encoder runs on the B_mem sentences, a group of them at a time (model_decode_start) */
    return context_reserve_encode(ctx, B_mem, S);
}

void kv_cache_free(kv_cache *c) {
    arena_free(&c->arena);
    arena_free(&c->prefill.arena);
    memset(c, 0, sizeof *c);
}

void kv_cache_reorder(tfm_context *ctx, const int *rows) {
    const tfm_model *m = ctx->m;
    kv_cache *c = &ctx->cache;
    const size_t B = (size_t)c->B, T = (size_t)c->cap_T, d = cfg_kv_dim(&m->cfg); /* a cached key's width */
    const size_t n = (size_t)c->len * d; /* only the first len positions of a row matter */
    TFM_ASSERT(!c->ragged); /* beams: every row at one position */
    /* A kept row (rows[b] == b) is never written, so it can be read in place; a source that moves
     * itself is staged in tmp (slot) before any row is written. */
    int32_t *slot = c->slot;
    int32_t staged = 0;
    int moved = 0;
    for (size_t b = 0; b < B; b++) slot[b] = -1;
    for (size_t b = 0; b < B; b++) {
        const size_t s = (size_t)rows[b];
        if (s == b) continue;
        /* a row may only take a parent of its own sentence: the cross K/V are not moved */
        TFM_ASSERT(s < B && c->mem_row && c->mem_row[s] == c->mem_row[b]);
        moved = 1;
        if ((size_t)rows[s] != s && slot[s] < 0) slot[s] = staged++;
    }
    if (!moved || n == 0) return;
    model_desc md;
    model_describe(&m->cfg, &md);
    for (int l = 0; l < md.stack[md.out_stack].n_layers; l++) {
        float *kv[2] = {c->self_k[l], c->self_v[l]};
        for (int k = 0; k < 2; k++) {
            /* two phases of independent copies, each across the pool: the staging, then every
             * moved row (whose source is a kept row, never written, or its staged copy) */
            size_t nc = 0;
            for (size_t s = 0; s < B; s++)
                if (slot[s] >= 0) c->cp_dst[nc] = c->tmp + (size_t)slot[s] * n, c->cp_src[nc++] = kv[k] + s * T * d;
            ops_copy_rows(c->cp_dst, c->cp_src, nc, n);
            nc = 0;
            for (size_t b = 0; b < B; b++) {
                const size_t s = (size_t)rows[b];
                if (s == b) continue;
                c->cp_dst[nc] = kv[k] + b * T * d;
                c->cp_src[nc++] = slot[s] >= 0 ? c->tmp + (size_t)slot[s] * n : kv[k] + s * T * d;
            }
            ops_copy_rows(c->cp_dst, c->cp_src, nc, n);
        }
    }
}

void kv_cache_ragged(tfm_context *ctx) {
    kv_cache *c = &ctx->cache;
    TFM_ASSERT(c->beams == 1 && c->B_mem == c->B_start);
    c->ragged = 1;
    c->B = 0;
    c->len = 0;
    for (int r = 0; r < c->B_start; r++) c->row_len[r] = 0, c->row_slot[r] = -1, c->mem_row[r] = 0;
}

void kv_cache_add_row(tfm_context *ctx, int slot, int len) {
    kv_cache *c = &ctx->cache;
    TFM_ASSERT(c->ragged && c->B < c->B_start && slot >= 0 && slot < c->B_start && len >= 0 && len < c->cap_T);
    for (int b = 0; b < c->B; b++) TFM_ASSERT(c->row_slot[b] != slot);
    c->row_slot[c->B] = slot;
    c->row_len[c->B] = len;
    c->mem_row[c->B] = 0;
    c->B++;
}

tfm_status kv_cache_grow(tfm_context *ctx, int cap_T) {
    const tfm_config *cfg = &ctx->m->cfg;
    kv_cache *c = &ctx->cache;
    RETURN_IF(!c->ragged || cap_T > cfg->max_len, TFM_ERR_INVALID_ARG,
              "KV cache: growing to %d positions needs a ragged cache and at most max_len (%d)", cap_T, cfg->max_len);
    if (cap_T <= c->cap_T) return TFM_OK;
    RETURN_IF(tfm_model_estimate_bytes(cfg, c->B_start, c->S, cap_T) == 0, TFM_ERR_NOMEM,
              "a KV cache of %d x %d positions is too large to lay out", c->B_start, cap_T);
    TRY(pe_states_reserve(&ctx->pe, cfg, (size_t)cap_T, 0));
    kv_cache n = *c; /* the new layout; the prefill workspace stays */
    tfm_arena counter = {NULL, 0, 0};
    layout(cfg, c->B_mem, c->beams, c->S, cap_T, &counter, &n);
    TRY(arena_init(&n.arena, counter.used, "the KV cache"));
    layout(cfg, c->B_mem, c->beams, c->S, cap_T, &n.arena, &n);
    const size_t kvd = cfg_kv_dim(cfg), d = (size_t)cfg->d_model, R = (size_t)c->B_start, Bm = (size_t)c->B_mem;
    const size_t S = (size_t)c->S, old_T = (size_t)c->cap_T, T = (size_t)cap_T;
    model_desc md;
    model_describe(cfg, &md);
    for (int l = 0; l < md.stack[md.out_stack].n_layers; l++) {
        for (size_t r = 0; r < R; r++) { /* every slot whole: a row prefilled but not added yet too */
            memcpy(n.self_k[l] + r * T * kvd, c->self_k[l] + r * old_T * kvd, old_T * kvd * sizeof(float));
            memcpy(n.self_v[l] + r * T * kvd, c->self_v[l] + r * old_T * kvd, old_T * kvd * sizeof(float));
        }
        if (c->cross_kv[l]) memcpy(n.cross_kv[l], c->cross_kv[l], Bm * S * 2 * d * sizeof(float));
    }
    memcpy(n.mem_pad, c->mem_pad, Bm * S);
    memcpy(n.mem_row, c->mem_row, R * sizeof(int32_t));
    memcpy(n.row_len, c->row_len, R * sizeof(int32_t));
    memcpy(n.row_slot, c->row_slot, R * sizeof(int32_t));
    arena_free(&c->arena);
    n.cap_T = cap_T;
    *c = n;
    return TFM_OK;
}

void kv_cache_compact(tfm_context *ctx, const int *keep, int n) {
    kv_cache *c = &ctx->cache;
    TFM_ASSERT(n >= (c->ragged ? 0 : 1) && n <= c->B);
    if (c->ragged) { /* the rows' slots and lengths move; their keys stay where they are */
        for (int j = 0; j < n; j++) {
            TFM_ASSERT(keep[j] >= j && keep[j] < c->B && (j == 0 || keep[j] > keep[j - 1]));
            c->row_slot[j] = c->row_slot[keep[j]];
            c->row_len[j] = c->row_len[keep[j]];
        }
        c->B = n;
        return;
    }
    const size_t T = (size_t)c->cap_T, d = cfg_kv_dim(&ctx->m->cfg), len = (size_t)c->len * d; /* a cached key's width */
    model_desc md;
    model_describe(&ctx->m->cfg, &md);
    const int layers = md.stack[md.out_stack].n_layers;
    for (int j = 0; j < n; j++) {
        const int s = keep[j];
        /* increasing, so row s >= j is read before anything overwrites it */
        TFM_ASSERT(s >= j && s < c->B && (j == 0 || s > keep[j - 1]));
        if (s == j) continue;
        for (int l = 0; l < layers; l++) {
            memcpy(c->self_k[l] + (size_t)j * T * d, c->self_k[l] + (size_t)s * T * d, len * sizeof(float));
            memcpy(c->self_v[l] + (size_t)j * T * d, c->self_v[l] + (size_t)s * T * d, len * sizeof(float));
        }
        c->mem_row[j] = c->mem_row[s];
    }
    c->B = n;
}

float *kv_cache_logits(tfm_context *ctx) { return ctx->cache.logits; }

int kv_cache_rows(const tfm_context *ctx) { return ctx->cache.B; }

int kv_cache_positions(const tfm_context *ctx) { return ctx->cache.cap_T; }

const int32_t *kv_cache_row_slots(const tfm_context *ctx) { return ctx->cache.row_slot; }
