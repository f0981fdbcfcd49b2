/* Model lifetime: allocation, initialisation (docs/NUMERICS.md), batch checks. */
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
    case PARAM_INIT_POSITION:
        for (size_t i = 0; i < e->numel; i++) w[i] = rng_normal(rng) * 0.02f;
        break;
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
    free(m->entries);
    free(m->tokenizer);
    free(m);
}

const tfm_config *tfm_model_config(const tfm_model *m) { return &m->cfg; }

size_t model_n_params(const tfm_model *m) { return m->n_params; }

float *model_param_data(tfm_model *m) { return (float *)m->param_arena.base; }

int model_params_non_finite(const tfm_model *m, const char **tensor, size_t *index, float *value) {
    const float *base = (const float *)m->param_arena.base;
    for (size_t e = 0; e < m->n_entries; e++) {
        const param_entry *pe = &m->entries[e];
        if (pe->alias_of >= 0) continue; /* tied: checked with its owner */
        for (size_t i = 0; i < pe->numel; i++)
            if (!isfinite(base[pe->offset + i])) {
                *tensor = pe->name;
                *index = i;
                *value = base[pe->offset + i];
                return 1;
            }
    }
    return 0;
}

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

size_t tfm_model_estimate_bytes(const tfm_config *cfg, int max_batch, int max_src, int max_tgt) {
    if (max_batch < 0 || max_src < 0 || max_tgt < 0) return 0;
    /* the layout multiplies at most four sizes; reject what could overflow in 64 bits */
    double approx = (double)max_batch * ((double)max_src + max_tgt + 1) *
                    ((double)cfg->n_heads * ((double)max_src + max_tgt) + 16.0 * cfg->d_model + cfg->d_ff +
                     cfg->tgt_vocab) * (cfg->n_enc_layers + cfg->n_dec_layers + 2) * 4.0;
    if (approx > 1e18) return 0;
    return tfm_config_param_count(cfg) * sizeof(float) + activations_bytes(ops_kernels_tuned(), cfg, max_batch, max_src, max_tgt, 0);
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
