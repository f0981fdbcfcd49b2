/* Greedy decoding, batched over sentences, on the KV cache or (reference path) recomputing the
 * prefix at every step; and the entry point that dispatches to beam search. */
#include "decode_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tfm_decode_config tfm_decode_config_default(void) {
    tfm_decode_config c;
    c.beam = 1;
    c.lenpen = 1.0f;
    c.max_len_a = 1.5f;
    c.max_len_b = 10;
    c.use_cache = 1;
    return c;
}

int decode_limit(const tfm_model *m, const tfm_decode_config *dc, const int32_t *src_row, int S) {
    int n = 0;
    for (int s = 0; s < S; s++) n += src_row[s] != m->cfg.pad_id;
    double lim = (double)dc->max_len_a * n + dc->max_len_b;
    int cap = m->cfg.max_len - 1;
    if (lim > cap) lim = cap;
    return lim < 0 ? 0 : (int)lim;
}

void forbid_specials(const tfm_config *cfg, float *row) {
    row[cfg->pad_id] = -INFINITY;
    row[cfg->bos_id] = -INFINITY;
}

int argmax_row(const float *x, size_t n) {
    size_t best = 0;
    for (size_t j = 1; j < n; j++)
        if (x[j] > x[best]) best = j;
    return (int)best;
}

tfm_status reference_step(tfm_model *m, int B, int S, const int32_t *src, const int32_t *prefix, int t, int cap,
                          float **logits) {
    TRY(model_reserve(m, B, S, t + 1, 0));
    model_forward(m, B, S, t + 1, src, prefix, (size_t)cap, NULL);
    /* rows of the last position, gathered to the front of the logits buffer: (B, V) */
    const size_t V = (size_t)m->cfg.tgt_vocab;
    for (int b = 0; b < B; b++)
        memmove(m->acts.logits + (size_t)b * V, m->acts.logits + ((size_t)b * (size_t)(t + 1) + (size_t)t) * V,
                V * sizeof(float));
    *logits = m->acts.logits;
    return TFM_OK;
}

static tfm_status greedy(tfm_model *m, const tfm_decode_config *dc, int B, int S, const int32_t *src, int32_t *out,
                         int max_out, int *out_len) {
    const tfm_config *cfg = &m->cfg;
    int *limit = malloc((size_t)B * sizeof *limit);
    uint8_t *done = calloc((size_t)B, 1);
    int cap = 1;
    for (int b = 0; limit && b < B; b++) {
        limit[b] = decode_limit(m, dc, src + (size_t)b * (size_t)S, S);
        if (limit[b] + 1 > cap) cap = limit[b] + 1;
    }
    int32_t *prefix = malloc((size_t)B * (size_t)cap * sizeof *prefix); /* (B, cap): BOS, tokens... */
    int32_t *tok = malloc((size_t)B * sizeof *tok);                      /* this step's inputs */
    kv_cache c;
    memset(&c, 0, sizeof c);
    tfm_status st = limit && done && prefix && tok ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory decoding");
    if (st == TFM_OK && dc->use_cache) st = kv_cache_create(m, B, S, cap, &c);
    if (st == TFM_OK && dc->use_cache) model_decode_start(m, &c, src);
    for (int b = 0; st == TFM_OK && b < B; b++) {
        out_len[b] = 0;
        for (int t = 0; t < cap; t++) prefix[(size_t)b * (size_t)cap + (size_t)t] = cfg->pad_id;
        prefix[(size_t)b * (size_t)cap] = cfg->bos_id;
    }
    const size_t V = (size_t)cfg->tgt_vocab;
    int live = B;
    for (int t = 0; st == TFM_OK && t < cap && live > 0; t++) {
        float *logits;
        if (dc->use_cache) {
            for (int b = 0; b < B; b++) tok[b] = prefix[(size_t)b * (size_t)cap + (size_t)t];
            model_decode_step(m, &c, tok);
            logits = c.logits;
        } else {
            st = reference_step(m, B, S, src, prefix, t, cap, &logits);
            if (st != TFM_OK) break;
        }
        for (int b = 0; b < B; b++) {
            if (done[b]) continue;
            float *row = logits + (size_t)b * V;
            forbid_specials(cfg, row);
            int y = out_len[b] >= limit[b] ? cfg->eos_id : argmax_row(row, V);
            if (y == cfg->eos_id) {
                done[b] = 1;
                live--;
                continue;
            }
            if (out_len[b] < max_out) out[(size_t)b * (size_t)max_out + (size_t)out_len[b]] = y;
            out_len[b]++;
            if (t + 1 < cap) prefix[(size_t)b * (size_t)cap + (size_t)t + 1] = y;
        }
    }
    for (int b = 0; st == TFM_OK && b < B; b++)
        if (out_len[b] > max_out) out_len[b] = max_out;
    if (dc->use_cache) kv_cache_free(&c);
    free(limit);
    free(done);
    free(prefix);
    free(tok);
    return st;
}

tfm_status tfm_model_translate(tfm_model *m, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                               int32_t *out, int max_out, int *out_len) {
    const tfm_config *cfg = &m->cfg;
    RETURN_IF(B < 1 || S < 0 || max_out < 0, TFM_ERR_INVALID_ARG, "translate needs B >= 1, S >= 0, got B=%d S=%d", B,
              S);
    RETURN_IF(S > cfg->max_len, TFM_ERR_RANGE, "source length %d exceeds the model's max_len %d", S, cfg->max_len);
    RETURN_IF(dc->beam < 1 || dc->beam > 256, TFM_ERR_INVALID_ARG, "beam must be in [1, 256], got %d", dc->beam);
    RETURN_IF(!(dc->max_len_a >= 0.0f) || dc->max_len_b < 0, TFM_ERR_INVALID_ARG,
              "the length limit a·source + b needs a >= 0 and b >= 0");
    RETURN_IF(!(dc->lenpen >= 0.0f && dc->lenpen <= 10.0f), TFM_ERR_INVALID_ARG, "lenpen must be in [0, 10], got %g",
              (double)dc->lenpen);
    for (size_t i = 0; i < (size_t)B * (size_t)S; i++)
        RETURN_IF(src[i] < 0 || src[i] >= cfg->src_vocab, TFM_ERR_RANGE,
                  "source token id %d at row %zu, position %zu is outside the vocabulary [0, %d)", src[i],
                  i / (size_t)(S ? S : 1), i % (size_t)(S ? S : 1), cfg->src_vocab);
    if (S == 0) { /* nothing to translate: every row is empty */
        for (int b = 0; b < B; b++) out_len[b] = 0;
        return TFM_OK;
    }
    if (dc->beam == 1) return greedy(m, dc, B, S, src, out, max_out, out_len);
    return beam_search(m, dc, B, S, src, out, max_out, out_len);
}
