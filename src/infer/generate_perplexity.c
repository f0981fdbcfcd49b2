/* Perplexity of text under a decoder-only model (include/tfm/generate.h): each non-blank line is
 * BOS + its subwords + EOS, scored teacher-forced by tfm_model_score in batches of lines of
 * similar length (batch_plan.h) of at most batch_tokens tokens; the mean negative log-likelihood
 * per predicted token (subwords and EOS), exponentiated. tfm_perplexity_ids: whole id rows as a
 * Hugging Face causal LM's loss counts them (docs/LLM.md). */
#include "batch_plan.h"
#include "core_internal.h"
#include "model_context.h"
#include "ops.h"
#include "tfm/generate.h"
#include "tfm/names.h"
#include "score_internal.h"
#include "tfm/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scores the lines idx[0..B) (row i: BOS ... [EOS], len[i] tokens, T the longest) as one padded
 * batch: their log-probabilities and predicted-token counts into lp[i], nt[i]; with tok_lp (the
 * detail's per-line buffers, rows[i] − 1 entries each) every token's log-probability too, via
 * tok_b (B·(T−1) floats). */
static tfm_status score_batch(tfm_context *ctx, int32_t *const *rows, const size_t *len, const size_t *idx, int B,
                              int T, int32_t *buf, double *lp_b, int *nt_b, double *lp, int *nt, float *tok_b,
                              float *const *tok_lp) {
    const tfm_config *c = context_config(ctx);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            buf[(size_t)b * (size_t)T + (size_t)t] = (size_t)t < len[idx[b]] ? rows[idx[b]][t] : c->pad_id;
    TRY(score_rows(ctx, B, 0, T, NULL, buf, lp_b, nt_b, NULL, tok_lp ? tok_b : NULL));
    for (int b = 0; b < B; b++) {
        lp[idx[b]] = lp_b[b];
        nt[idx[b]] = nt_b[b];
        if (tok_lp)
            memcpy(tok_lp[idx[b]], tok_b + (size_t)b * (size_t)(T - 1), (len[idx[b]] - 1) * sizeof(float));
    }
    return TFM_OK;
}

tfm_status tfm_perplexity_text(tfm_context *ctx, const tfm_tokenizer *tok, const char *const *lines, size_t n,
                               int batch_tokens, tfm_perplexity_stats *stats) {
    return tfm_perplexity_text_detail(ctx, tok, lines, n, batch_tokens, stats, NULL);
}

/* Adds the per-line token log-probabilities into the caller's detail arrays, in the lines' order. */
static void fill_detail(tfm_perplexity_detail *dt, float *const *tok_lp, const size_t *len, size_t n) {
    for (size_t p = 0; p < dt->n_positions; p++) {
        if (dt->nll_at) dt->nll_at[p] = 0.0;
        if (dt->tokens_at) dt->tokens_at[p] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        double sum = 0.0;
        const size_t m = len[i] ? len[i] - 1 : 0; /* predicted tokens of line i */
        for (size_t t = 0; t < m; t++) {
            sum -= (double)tok_lp[i][t];
            if (t < dt->n_positions && dt->nll_at) dt->nll_at[t] -= (double)tok_lp[i][t];
            if (t < dt->n_positions && dt->tokens_at) dt->tokens_at[t]++;
        }
        if (dt->line_nll) dt->line_nll[i] = sum;
        if (dt->line_tokens) dt->line_tokens[i] = m;
    }
}

tfm_status tfm_perplexity_text_detail(tfm_context *ctx, const tfm_tokenizer *tok, const char *const *lines, size_t n,
                                      int batch_tokens, tfm_perplexity_stats *stats, tfm_perplexity_detail *detail) {
    RETURN_IF(!ctx || !tok || !stats || (n > 0 && !lines), TFM_ERR_INVALID_ARG, "perplexity: NULL argument");
    memset(stats, 0, sizeof *stats);
    const tfm_config *c = context_config(ctx);
    RETURN_IF(c->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_INVALID_ARG,
              "perplexity needs a decoder-only model, this one is %s", tfm_arch_name(c->arch));
    TRY(tfm_tokenizer_check_model(tok, c));
    if (batch_tokens < c->max_len + 1) batch_tokens = c->max_len + 1; /* a line alone always fits */
    const size_t m = n ? n : 1;
    int32_t **rows = calloc(m, sizeof *rows);
    size_t *len = calloc(m, sizeof *len); /* 0: a blank line, in no batch */
    double *lp = calloc(m, sizeof *lp);
    int *nt = calloc(m, sizeof *nt);
    float **tok_lp = detail ? calloc(m, sizeof *tok_lp) : NULL; /* per line: each token's log-probability */
    tfm_status st = rows && len && lp && nt && (!detail || tok_lp) ? TFM_OK
                                                                   : tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
    for (size_t i = 0; st == TFM_OK && i < n; i++) {
        const size_t bytes = strlen(lines[i]);
        if (tfm_text_is_blank(lines[i], bytes)) {
            stats->skipped_blank++;
            continue;
        }
        int32_t *ids = NULL;
        size_t n_ids = 0;
        st = tfm_tokenizer_encode(tok, lines[i], bytes, &ids, &n_ids);
        if (st != TFM_OK) {
            st = tfm_error_prefix(st, "line %zu: ", i + 1);
            break;
        }
        /* BOS + tokens + EOS; a line past max_len − 1 tokens keeps max_len of them and no EOS */
        const int cut = n_ids + 1 > (size_t)c->max_len;
        const int L = cut ? c->max_len + 1 : (int)n_ids + 2;
        rows[i] = malloc(sizeof(int32_t) * (size_t)L);
        if (!rows[i]) {
            free(ids);
            st = tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
            break;
        }
        rows[i][0] = c->bos_id;
        for (int t = 1; t < L; t++) rows[i][t] = t - 1 < (int)n_ids ? ids[t - 1] : c->eos_id;
        free(ids);
        len[i] = (size_t)L;
        if (tok_lp && !(tok_lp[i] = malloc(sizeof(float) * (size_t)(L - 1)))) {
            st = tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
            break;
        }
        stats->lines++;
        stats->truncated += (size_t)cut;
    }
    /* batches of similar lengths within batch_tokens (padding included; rows are at least BOS +
     * EOS); buffers sized from the plan, never from batch_tokens alone */
    batch_plan plan = {0};
    const batch_limits lim = {.max_rows = (size_t)batch_tokens / 2, .max_tokens = (size_t)batch_tokens};
    if (st == TFM_OK) st = batch_plan_make(&plan, len, n, lim);
    int32_t *buf = NULL;
    double *lp_b = NULL;
    int *nt_b = NULL;
    float *tok_b = NULL;
    if (st == TFM_OK && plan.n_batches > 0) {
        buf = malloc(sizeof(int32_t) * plan.max_tokens);
        lp_b = malloc(sizeof(double) * plan.max_rows);
        nt_b = malloc(sizeof(int) * plan.max_rows);
        tok_b = detail ? malloc(sizeof(float) * plan.max_tokens) : NULL; /* B·(T−1) < B·T */
        if (!buf || !lp_b || !nt_b || (detail && !tok_b)) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
    }
    for (size_t j = 0; st == TFM_OK && j < plan.n_batches; j++)
        st = score_batch(ctx, rows, len, plan.order + plan.batch[j].start, (int)plan.batch[j].rows,
                         (int)plan.batch[j].len, buf, lp_b, nt_b, lp, nt, tok_b, tok_lp);
    if (st == TFM_OK && detail) fill_detail(detail, tok_lp, len, n);
    /* summed in the lines' order, so the total does not depend on the batching */
    for (size_t i = 0; st == TFM_OK && i < n; i++) {
        if (!len[i]) continue;
        stats->nll -= lp[i];
        stats->tokens += (size_t)nt[i];
    }
    stats->perplexity = stats->tokens > 0 ? exp(stats->nll / (double)stats->tokens) : NAN;
    for (size_t i = 0; rows && i < n; i++) free(rows[i]);
    for (size_t i = 0; tok_lp && i < n; i++) free(tok_lp[i]);
    free(tok_lp);
    free(tok_b);
    free(rows);
    free(len);
    free(lp);
    free(nt);
    batch_plan_free(&plan);
    free(buf);
    free(lp_b);
    free(nt_b);
    return st;
}

/* ---- whole id rows (tfm_perplexity_ids) ------------------------------------------------------ */

/* Rows idx[0..B) as one right-padded batch of T positions (the filler is any id: no real position
 * reads a later one); each row's Σ ln p(rows[i][t + 1] | rows[i][0..t]) for t < len − 1. */
static tfm_status score_whole(tfm_context *ctx, const int32_t *const *rows, const size_t *len, const size_t *idx,
                              int B, int T, int32_t *buf, double *lp, int *nt) {
    const tfm_config *c = context_config(ctx);
    const int32_t filler = c->eos_id;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            buf[(size_t)b * (size_t)T + (size_t)t] = (size_t)t < len[idx[b]] ? rows[idx[b]][t] : filler;
    const int Td = T - 1; /* input positions 0..T−2 predict 1..T−1 */
    TRY(context_reserve(ctx, B, 0, Td, 0));
    model_forward(ctx, B, 0, Td, NULL, buf, (size_t)T, NULL);
    float *logits = context_logits(ctx);
    const size_t V = (size_t)c->tgt_vocab;
    log_softmax_forward(logits, logits, (size_t)B * (size_t)Td, V);
    for (int b = 0; b < B; b++) {
        const size_t L = len[idx[b]];
        double sum = 0.0;
        for (size_t t = 0; t + 1 < L; t++) sum += logits[((size_t)b * (size_t)Td + t) * V + (size_t)rows[idx[b]][t + 1]];
        lp[idx[b]] = sum;
        nt[idx[b]] = (int)(L - 1);
    }
    return TFM_OK;
}

tfm_status tfm_perplexity_ids(tfm_context *ctx, const int32_t *const *rows, const size_t *len_in, size_t n,
                              int batch_tokens, tfm_perplexity_stats *stats) {
    RETURN_IF(!ctx || !stats || (n > 0 && (!rows || !len_in)), TFM_ERR_INVALID_ARG, "perplexity: NULL argument");
    memset(stats, 0, sizeof *stats);
    const tfm_config *c = context_config(ctx);
    RETURN_IF(c->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_INVALID_ARG,
              "perplexity needs a decoder-only model, this one is %s", tfm_arch_name(c->arch));
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < len_in[i] && t < (size_t)c->max_len; t++)
            RETURN_IF(!rows[i] || rows[i][t] < 0 || rows[i][t] >= c->tgt_vocab, TFM_ERR_RANGE,
                      "perplexity: row %zu position %zu: id %d is outside the vocabulary [0, %d)", i + 1, t,
                      rows[i] ? rows[i][t] : -1, c->tgt_vocab);
    if (batch_tokens < c->max_len) batch_tokens = c->max_len; /* a row alone always fits */
    const size_t m = n ? n : 1;
    size_t *len = calloc(m, sizeof *len); /* rows of < 2 ids: 0, in no batch */
    double *lp = calloc(m, sizeof *lp);
    int *nt = calloc(m, sizeof *nt);
    tfm_status st = len && lp && nt ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
    for (size_t i = 0; st == TFM_OK && i < n; i++) {
        const int cut = len_in[i] > (size_t)c->max_len;
        len[i] = cut ? (size_t)c->max_len : len_in[i];
        if (len[i] < 2) len[i] = 0;
        stats->lines++;
        stats->truncated += (size_t)cut;
    }
    batch_plan plan = {0};
    const batch_limits lim = {.max_rows = (size_t)batch_tokens / 2, .max_tokens = (size_t)batch_tokens};
    if (st == TFM_OK) st = batch_plan_make(&plan, len, n, lim);
    int32_t *buf = NULL;
    if (st == TFM_OK && plan.n_batches > 0) {
        buf = malloc(sizeof(int32_t) * plan.max_tokens);
        if (!buf) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
    }
    for (size_t j = 0; st == TFM_OK && j < plan.n_batches; j++)
        st = score_whole(ctx, rows, len, plan.order + plan.batch[j].start, (int)plan.batch[j].rows,
                         (int)plan.batch[j].len, buf, lp, nt);
    for (size_t i = 0; st == TFM_OK && i < n; i++) { /* in the rows' order: independent of the batching */
        if (!len[i]) continue;
        stats->nll -= lp[i];
        stats->tokens += (size_t)nt[i];
    }
    stats->perplexity = stats->tokens > 0 ? exp(stats->nll / (double)stats->tokens) : NAN;
    free(len);
    free(lp);
    free(nt);
    batch_plan_free(&plan);
    free(buf);
    return st;
}
