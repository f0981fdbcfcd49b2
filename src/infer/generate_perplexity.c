/* Perplexity of text under a decoder-only model (include/tfm/generate.h): each non-blank line is
 * BOS + its subwords + EOS, scored teacher-forced by tfm_model_score in batches of about
 * batch_tokens tokens; the mean negative log-likelihood per predicted token (subwords and EOS),
 * exponentiated. */
#include "core_internal.h"
#include "model_internal.h"
#include "tfm/generate.h"
#include "tfm/names.h"
#include "tfm/score.h"
#include "tfm/text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scores rows[0..B) (each BOS ... [EOS], lengths len[]) as one padded batch into *st. */
static tfm_status score_batch(tfm_context *ctx, int32_t *const *rows, const int *len, int B, int32_t *buf,
                              double *lp, int *nt, tfm_perplexity_stats *st) {
    const tfm_config *c = &ctx->m->cfg;
    int T = 2;
    for (int b = 0; b < B; b++)
        if (len[b] > T) T = len[b];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) buf[(size_t)b * (size_t)T + (size_t)t] = t < len[b] ? rows[b][t] : c->pad_id;
    TRY(tfm_model_score(ctx, B, 0, T, NULL, buf, lp, nt, NULL));
    for (int b = 0; b < B; b++) {
        st->nll -= lp[b];
        st->tokens += (size_t)nt[b];
    }
    return TFM_OK;
}

tfm_status tfm_perplexity_text(tfm_context *ctx, const tfm_tokenizer *tok, const char *const *lines, size_t n,
                               int batch_tokens, tfm_perplexity_stats *stats) {
    RETURN_IF(!ctx || !tok || !stats || (n > 0 && !lines), TFM_ERR_INVALID_ARG, "perplexity: NULL argument");
    memset(stats, 0, sizeof *stats);
    const tfm_config *c = &ctx->m->cfg;
    RETURN_IF(c->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_INVALID_ARG,
              "perplexity needs a decoder-only model, this one is %s", tfm_arch_name(c->arch));
    TRY(tfm_tokenizer_check_model(tok, c));
    if (batch_tokens < c->max_len + 1) batch_tokens = c->max_len + 1;
    /* never more than all the lines at their longest: a huge budget must not allocate for nothing */
    const size_t all = (n ? n : 1) * (size_t)(c->max_len + 1);
    if ((size_t)batch_tokens > all) batch_tokens = (int)all;
    const int max_rows = batch_tokens / 2; /* rows are at least BOS + EOS */
    int32_t **rows = calloc((size_t)max_rows, sizeof *rows);
    int *len = malloc(sizeof(int) * (size_t)max_rows), *nt = malloc(sizeof(int) * (size_t)max_rows);
    double *lp = malloc(sizeof(double) * (size_t)max_rows);
    int32_t *buf = malloc(sizeof(int32_t) * (size_t)batch_tokens);
    tfm_status st = rows && len && nt && lp && buf ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
    int B = 0, Tmax = 0;
    for (size_t i = 0; st == TFM_OK && i <= n; i++) {
        int32_t *ids = NULL;
        size_t n_ids = 0;
        if (i < n) {
            const size_t bytes = strlen(lines[i]);
            if (tfm_text_is_blank(lines[i], bytes)) {
                stats->skipped_blank++;
                continue;
            }
            st = tfm_tokenizer_encode(tok, lines[i], bytes, &ids, &n_ids);
            if (st != TFM_OK) {
                st = tfm_error_prefix(st, "line %zu: ", i + 1);
                break;
            }
        }
        /* BOS + tokens + EOS; a line past max_len − 1 tokens keeps max_len of them and no EOS */
        const int cut = n_ids + 1 > (size_t)c->max_len;
        const int L = i < n ? (cut ? c->max_len + 1 : (int)n_ids + 2) : 0;
        const int T2 = L > Tmax ? L : Tmax;
        if (B > 0 && (i == n || B == max_rows || (size_t)(B + 1) * (size_t)T2 > (size_t)batch_tokens)) {
            st = score_batch(ctx, rows, len, B, buf, lp, nt, stats);
            for (int b = 0; b < B; b++) free(rows[b]);
            B = 0;
            Tmax = 0;
        }
        if (i == n || st != TFM_OK) {
            free(ids);
            break;
        }
        int32_t *row = malloc(sizeof(int32_t) * (size_t)L);
        if (!row) {
            free(ids);
            st = tfm_set_error(TFM_ERR_NOMEM, "out of memory scoring text");
            break;
        }
        row[0] = c->bos_id;
        for (int t = 1; t < L; t++) row[t] = t - 1 < (int)n_ids ? ids[t - 1] : c->eos_id;
        free(ids);
        rows[B] = row;
        len[B++] = L;
        if (L > Tmax) Tmax = L;
        stats->lines++;
        stats->truncated += (size_t)cut;
    }
    for (int b = 0; rows && b < B; b++) free(rows[b]);
    stats->perplexity = stats->tokens > 0 ? exp(stats->nll / (double)stats->tokens) : NAN;
    free(rows);
    free(len);
    free(nt);
    free(lp);
    free(buf);
    return st;
}
