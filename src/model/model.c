/* Model lifetime: allocation, initialisation (DESIGN.md §2), the forward workspace. */
#include "model_internal.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tfm_status model_alloc(const tfm_config *cfg, tfm_model **out) {
    *out = NULL;
    TRY(tfm_config_validate(cfg));
    tfm_model *m = calloc(1, sizeof *m);
    RETURN_IF(!m, TFM_ERR_NOMEM, "out of memory allocating a model");
    m->cfg = *cfg;
    m->n_params = params_layout(cfg, NULL, NULL, NULL, &m->n_entries);
    m->entries = calloc(m->n_entries, sizeof *m->entries);
    size_t bytes;
    if (!m->entries || !size_mul_ok(m->n_params, sizeof(float), &bytes)) {
        tfm_model_free(m);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory allocating the parameter table");
    }
    tfm_status st = arena_init(&m->param_arena, bytes, "the model parameters");
    if (st != TFM_OK) {
        tfm_model_free(m);
        return st;
    }
    params_layout(cfg, &m->p, (float *)m->param_arena.base, m->entries, &m->n_entries);
    *out = m;
    return TFM_OK;
}

static void init_tensor(float *w, const param_entry *e, tfm_rng *rng, size_t d_model) {
    switch (e->init) {
    case PARAM_INIT_XAVIER: {
        /* Glorot & Bengio 2010: U(−a, a), a = √(6 / (fan_in + fan_out)); the packed in_proj
         * (3d, d) counts as one matrix, as nn.Transformer's _reset_parameters does. */
        double a = sqrt(6.0 / (double)(e->shape[0] + e->shape[1]));
        for (size_t i = 0; i < e->numel; i++) w[i] = (float)((2.0 * rng_uniform(rng) - 1.0) * a);
        break;
    }
    case PARAM_INIT_ZERO: memset(w, 0, e->numel * sizeof *w); break;
    case PARAM_INIT_ONE:
        for (size_t i = 0; i < e->numel; i++) w[i] = 1.0f;
        break;
    case PARAM_INIT_LINEAR_BIAS: {
        double a = 1.0 / sqrt((double)e->fan_in);
        for (size_t i = 0; i < e->numel; i++) w[i] = (float)((2.0 * rng_uniform(rng) - 1.0) * a);
        break;
    }
    case PARAM_INIT_EMBEDDING: {
        float sd = (float)(1.0 / sqrt((double)d_model));
        for (size_t i = 0; i < e->numel; i++) w[i] = rng_normal(rng) * sd;
        break;
    }
    }
}

tfm_status tfm_model_create(const tfm_config *cfg, uint64_t seed, tfm_model **out) {
    TRY(model_alloc(cfg, out));
    tfm_model *m = *out;
    float *base = (float *)m->param_arena.base;
    for (size_t i = 0; i < m->n_entries; i++) {
        const param_entry *e = &m->entries[i];
        if (e->alias_of >= 0) continue;
        /* one stream per tensor: adding a layer does not change the others' values */
        tfm_rng rng;
        rng_seed(&rng, seed, (uint64_t)i + 1);
        init_tensor(base + e->offset, e, &rng, (size_t)cfg->d_model);
    }
    return TFM_OK;
}

void tfm_model_free(tfm_model *m) {
    if (!m) return;
    arena_free(&m->param_arena);
    arena_free(&m->act_arena);
    free(m->entries);
    free(m->tokenizer);
    free(m);
}

const tfm_config *tfm_model_config(const tfm_model *m) { return &m->cfg; }

const unsigned char *tfm_model_tokenizer(const tfm_model *m, size_t *len) {
    *len = m->tokenizer_len;
    return m->tokenizer;
}

tfm_status tfm_model_set_tokenizer(tfm_model *m, const unsigned char *bytes, size_t len) {
    unsigned char *copy = NULL;
    if (len > 0) {
        copy = malloc(len);
        RETURN_IF(!copy, TFM_ERR_NOMEM, "out of memory storing a %zu-byte tokenizer", len);
        memcpy(copy, bytes, len);
    }
    free(m->tokenizer);
    m->tokenizer = copy;
    m->tokenizer_len = len;
    return TFM_OK;
}

static void take_block(tfm_arena *a, block_acts *b, size_t N, size_t d, int training) {
    b->ln = arena_take_f32(a, N * d);
    b->ln_mean = arena_take_f32(a, N);
    b->ln_rstd = arena_take_f32(a, N);
    b->res = arena_take_f32(a, N * d);
    b->drop = training ? arena_take_bytes(a, N * d) : NULL;
}

static void take_mha(tfm_arena *a, mha_acts *m, size_t B, size_t T, size_t S, size_t H, size_t d, int cross,
                     int training) {
    const size_t N = B * T;
    m->q = cross ? arena_take_f32(a, N * d) : NULL;
    m->qkv = cross ? arena_take_f32(a, B * S * 2 * d) : arena_take_f32(a, N * 3 * d);
    m->probs = arena_take_f32(a, B * H * T * S);
    m->probs_drop = training ? arena_take_f32(a, B * H * T * S) : NULL;
    m->att = arena_take_f32(a, N * d);
    m->proj = arena_take_f32(a, N * d);
}

static void take_ffn(tfm_arena *a, layer_acts *l, size_t N, size_t d, size_t d_ff, int training) {
    l->ff_pre = arena_take_f32(a, N * d_ff);
    l->ff_act = arena_take_f32(a, N * d_ff);
    l->ff_drop = training ? arena_take_bytes(a, N * d_ff) : NULL;
    l->ff_out = arena_take_f32(a, N * d);
}

void activations_layout(const tfm_config *cfg, int Bi, int Si, int Ti, int training, tfm_arena *a,
                        activations *acts) {
    const size_t B = (size_t)Bi, S = (size_t)Si, T = (size_t)Ti;
    const size_t d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, d_ff = (size_t)cfg->d_ff;
    activations dummy;
    if (!acts) acts = &dummy;
    memset(acts, 0, sizeof *acts);
    acts->B = Bi;
    acts->S = Si;
    acts->T = Ti;
    acts->src_pad = arena_take_bytes(a, B * S);
    acts->tgt_pad = arena_take_bytes(a, B * T);
    acts->training = training;
    acts->enc_x0 = arena_take_f32(a, B * S * d);
    acts->enc_x0_drop = training ? arena_take_bytes(a, B * S * d) : NULL;
    for (int l = 0; l < cfg->n_enc_layers; l++) {
        layer_acts *L = &acts->enc[l];
        take_block(a, &L->blk[0], B * S, d, training);
        take_block(a, &L->blk[1], B * S, d, training);
        take_mha(a, &L->self_attn, B, S, S, H, d, 0, training);
        take_ffn(a, L, B * S, d, d_ff, training);
    }
    acts->memory = arena_take_f32(a, B * S * d);
    acts->memory_mean = arena_take_f32(a, B * S);
    acts->memory_rstd = arena_take_f32(a, B * S);
    acts->dec_x0 = arena_take_f32(a, B * T * d);
    acts->dec_x0_drop = training ? arena_take_bytes(a, B * T * d) : NULL;
    for (int l = 0; l < cfg->n_dec_layers; l++) {
        layer_acts *L = &acts->dec[l];
        for (int k = 0; k < 3; k++) take_block(a, &L->blk[k], B * T, d, training);
        take_mha(a, &L->self_attn, B, T, T, H, d, 0, training);
        take_mha(a, &L->cross_attn, B, T, S, H, d, 1, training);
        take_ffn(a, L, B * T, d, d_ff, training);
    }
    acts->dec_out = arena_take_f32(a, B * T * d);
    acts->dec_out_mean = arena_take_f32(a, B * T);
    acts->dec_out_rstd = arena_take_f32(a, B * T);
    acts->logits = arena_take_f32(a, B * T * (size_t)cfg->tgt_vocab);
}

static size_t workspace_bytes(const tfm_config *cfg, int B, int S, int T, int training) {
    tfm_arena counter = {NULL, 0, 0};
    activations_layout(cfg, B, S, T, training, &counter, NULL);
    return counter.used;
}

size_t tfm_model_estimate_bytes(const tfm_config *cfg, int max_batch, int max_src, int max_tgt) {
    if (max_batch < 0 || max_src < 0 || max_tgt < 0) return 0;
    /* the layout multiplies at most four sizes; reject what could overflow in 64 bits */
    double approx = (double)max_batch * ((double)max_src + max_tgt + 1) *
                    ((double)cfg->n_heads * ((double)max_src + max_tgt) + 16.0 * cfg->d_model + cfg->d_ff +
                     cfg->tgt_vocab) * (cfg->n_enc_layers + cfg->n_dec_layers + 2) * 4.0;
    if (approx > 1e18) return 0;
    return tfm_config_param_count(cfg) * sizeof(float) + workspace_bytes(cfg, max_batch, max_src, max_tgt, 0);
}

tfm_status model_reserve(tfm_model *m, int B, int S, int T, int training) {
    /* the size products must not wrap around: the estimate refuses what could overflow */
    RETURN_IF(tfm_model_estimate_bytes(&m->cfg, B, S, T) == 0, TFM_ERR_NOMEM,
              "a batch of %d x (%d, %d) tokens is too large to lay out", B, S, T);
    const size_t need = workspace_bytes(&m->cfg, B, S, T, training);
    if (need > m->act_arena.cap) {
        /* grow: what a batch needs is its layout's bytes, not the largest B, S and T seen apart */
        arena_free(&m->act_arena);
        TRY(arena_init(&m->act_arena, need, "the activation workspace"));
        m->acts.B = -1;
    }
    if (m->acts.B != B || m->acts.S != S || m->acts.T != T || m->acts.training != training) {
        tfm_arena again = m->act_arena; /* re-carve the same block for this batch's sizes */
        again.used = 0;
        activations_layout(&m->cfg, B, S, T, training, &again, &m->acts);
    }
    return TFM_OK;
}

void grad_workspace_layout(const tfm_config *cfg, int Bi, int Si, int Ti, tfm_arena *a, grad_workspace *w) {
    const size_t B = (size_t)Bi, S = (size_t)Si, T = (size_t)Ti;
    const size_t d = (size_t)cfg->d_model, H = (size_t)cfg->n_heads, d_ff = (size_t)cfg->d_ff;
    const size_t N = B * (S > T ? S : T), L = S > T ? S : T, wide = 3 * d > d_ff ? 3 * d : d_ff;
    grad_workspace dummy;
    if (!w) w = &dummy;
    w->d_stream = arena_take_f32(a, N * d);
    w->d_res = arena_take_f32(a, N * d);
    w->d_sub = arena_take_f32(a, N * d);
    w->d_att = arena_take_f32(a, N * d);
    w->d_q = arena_take_f32(a, B * T * d);
    w->d_kv = arena_take_f32(a, B * S * 2 * d);
    w->d_big = arena_take_f32(a, N * wide);
    w->d_big2 = arena_take_f32(a, N * d_ff);
    w->dprobs = arena_take_f32(a, B * H * L * L);
    w->d_memory = arena_take_f32(a, B * S * d);
}

/* Checks ids against a vocabulary; names the first offender by row and position. */
static tfm_status check_ids(const int32_t *ids, int B, int L, int vocab, const char *what) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int32_t id = ids[(size_t)b * (size_t)L + (size_t)t];
            RETURN_IF(id < 0 || id >= vocab, TFM_ERR_RANGE,
                      "%s token id %d at row %d, position %d is outside the vocabulary [0, %d)", what, id, b, t,
                      vocab);
        }
    return TFM_OK;
}

tfm_status model_check_batch(const tfm_model *m, int B, int S, int T, const int32_t *src, const int32_t *tgt) {
    const tfm_config *cfg = &m->cfg;
    RETURN_IF(B <= 0 || S < 0 || T < 2, TFM_ERR_INVALID_ARG,
              "a batch needs B >= 1, S >= 0 and T >= 2 (BOS and EOS), got B=%d S=%d T=%d", B, S, T);
    RETURN_IF(S > cfg->max_len, TFM_ERR_RANGE, "source length %d exceeds the model's max_len %d", S, cfg->max_len);
    RETURN_IF(T - 1 > cfg->max_len, TFM_ERR_RANGE, "target length %d exceeds the model's max_len %d", T - 1,
              cfg->max_len);
    TRY(check_ids(src, B, S, cfg->src_vocab, "source"));
    TRY(check_ids(tgt, B, T, cfg->tgt_vocab, "target"));
    return TFM_OK;
}
