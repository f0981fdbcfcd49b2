/* Text in, text out: tokenise, sort by length, decode in batches, detokenise. */
#include "batch_plan.h"
#include "core_internal.h"
#include "tfm/decode.h"
#include "tfm/text.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *ids;
    size_t len;
} encoded;

tfm_status tfm_translate_text(tfm_context *ctx, const tfm_tokenizer *tok, const tfm_decode_config *dc,
                              const char *const *src, size_t n, int batch_sentences, char **out,
                              tfm_translate_stats *stats) {
    return tfm_translate_text_nbest(ctx, tok, dc, src, n, batch_sentences, 1, out, stats);
}

tfm_status tfm_translate_text_nbest(tfm_context *ctx, const tfm_tokenizer *tok, const tfm_decode_config *dc,
                                    const char *const *src, size_t n, int batch_sentences, int n_best, char **out,
                                    tfm_translate_stats *stats) {
    const double t0 = tfm_now_s();
    RETURN_IF(!ctx || !tok || !dc || (n > 0 && (!src || !out)), TFM_ERR_INVALID_ARG, "translate: NULL argument");
    tfm_translate_stats unused;
    if (!stats) stats = &unused; /* the caller does not want them */
    const tfm_config *cfg = tfm_model_config(tfm_context_model(ctx));
    memset(stats, 0, sizeof *stats);
    RETURN_IF(n_best < 1, TFM_ERR_INVALID_ARG, "n_best must be >= 1, got %d", n_best);
    const size_t N = (size_t)n_best;
    for (size_t i = 0; i < n * N; i++) out[i] = NULL;
    RETURN_IF(batch_sentences < 1, TFM_ERR_INVALID_ARG, "batch_sentences must be >= 1");
    TRY(tfm_decode_config_validate(dc)); /* before the beam divides anything */
    RETURN_IF(n_best > dc->beam, TFM_ERR_INVALID_ARG,
              "n_best must be in [1, beam %d], got %d (a beam of K keeps at most K hypotheses)", dc->beam, n_best);
    TRY(tfm_tokenizer_check_model(tok, cfg));
    encoded *enc = calloc(n ? n : 1, sizeof *enc);
    size_t *len = calloc(n ? n : 1, sizeof *len); /* 0: a blank line, in no batch */
    const int per_batch = batch_sentences / dc->beam > 0 ? batch_sentences / dc->beam : 1;
    const int max_out = cfg->max_len;
    batch_plan plan = {0};
    int32_t *srcb = NULL, *outb = NULL;
    int *out_len = NULL;
    tfm_status st = enc && len ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == TFM_OK && i < n; i++) {
        if (tfm_text_is_blank(src[i], strlen(src[i]))) continue; /* nothing to translate (text.h): an empty line out */
        st = tfm_tokenizer_encode(tok, src[i], strlen(src[i]), &enc[i].ids, &enc[i].len);
        if (st != TFM_OK) {
            st = tfm_error_prefix(st, "line %zu: ", i + 1);
            break;
        }
        stats->src_tokens += enc[i].len;
        if (enc[i].len > (size_t)cfg->max_len) {
            if (stats->n_truncated++ == 0) stats->first_truncated = i;
            enc[i].len = (size_t)cfg->max_len;
        }
        len[i] = enc[i].len;
    }
    /* the batches' buffers are sized from the plan (the sentences there are), never from
     * batch_sentences alone, which may be far larger than the input */
    if (st == TFM_OK) st = batch_plan_make(&plan, len, n, (batch_limits){.max_rows = (size_t)per_batch});
    if (st == TFM_OK && plan.n_batches > 0) {
        srcb = malloc(plan.max_tokens * sizeof *srcb);
        outb = malloc(plan.max_rows * N * (size_t)max_out * sizeof *outb);
        out_len = malloc(plan.max_rows * N * sizeof *out_len);
        if (!srcb || !outb || !out_len) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory");
    }
    if (st == TFM_OK && plan.n_batches > 0) /* the batches grow in length: memory for the longest, once */
        st = tfm_context_reserve_decode(ctx, dc, (int)plan.max_rows, (int)plan.max_len);
    for (size_t j = 0; st == TFM_OK && j < plan.n_batches; j++) {
        const size_t *rows = plan.order + plan.batch[j].start;
        const int B = (int)plan.batch[j].rows, S = (int)plan.batch[j].len;
        for (int b = 0; b < B; b++) {
            const encoded *e = &enc[rows[b]];
            for (int s = 0; s < S; s++) srcb[(size_t)b * (size_t)S + (size_t)s] = (size_t)s < e->len ? e->ids[s] : cfg->pad_id;
        }
        st = n_best == 1 ? tfm_model_translate(ctx, dc, B, S, srcb, outb, max_out, out_len)
                         : tfm_model_translate_nbest(ctx, dc, B, S, srcb, n_best, outb, max_out, out_len, NULL);
        for (size_t h = 0; st == TFM_OK && h < (size_t)B * N; h++) {
            if (out_len[h] < 0) continue; /* fewer hypotheses than n_best: NULL */
            size_t out_bytes;
            char **o = &out[rows[h / N] * N + h % N];
            st = tfm_tokenizer_decode(tok, outb + h * (size_t)max_out, (size_t)out_len[h], o, &out_bytes);
            if (st == TFM_OK) tfm_text_one_line(*o, out_bytes); /* byte pieces may spell "\n": one line out per line in */
            if (h % N == 0) stats->out_tokens += (size_t)out_len[h];
        }
    }
    for (size_t i = 0; st == TFM_OK && i < n; i++) { /* blank lines: an empty translation */
        if (!out[i * N]) {
            out[i * N] = calloc(1, 1);
            if (!out[i * N]) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory");
        }
    }
    for (size_t i = 0; enc && i < n; i++) free(enc[i].ids);
    free(enc);
    free(len);
    batch_plan_free(&plan);
    free(srcb);
    free(outb);
    free(out_len);
    if (st != TFM_OK) {
        for (size_t i = 0; i < n * N; i++) {
            free(out[i]);
            out[i] = NULL;
        }
        return st;
    }
    stats->sentences = n;
    stats->seconds = tfm_now_s() - t0;
    return TFM_OK;
}
