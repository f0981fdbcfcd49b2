/* Text in, text out: tokenise, sort by length, decode in batches, detokenise. */
#include "core_internal.h"
#include "tfm/decode.h"
#include "tfm/text.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *ids;
    size_t len;
} encoded;

typedef struct {
    size_t len, index;
} by_len;

static int by_length(const void *a, const void *b) {
    const by_len *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

tfm_status tfm_translate_text(tfm_context *ctx, const tfm_tokenizer *tok, const tfm_decode_config *dc,
                              const char *const *src, size_t n, int batch_sentences, char **out,
                              tfm_translate_stats *stats) {
    const double t0 = tfm_now_s();
    RETURN_IF(!ctx || !tok || !dc || (n > 0 && (!src || !out)), TFM_ERR_INVALID_ARG, "translate: NULL argument");
    tfm_translate_stats unused;
    if (!stats) stats = &unused; /* the caller does not want them */
    const tfm_config *cfg = tfm_model_config(tfm_context_model(ctx));
    memset(stats, 0, sizeof *stats);
    for (size_t i = 0; i < n; i++) out[i] = NULL;
    RETURN_IF(batch_sentences < 1, TFM_ERR_INVALID_ARG, "batch_sentences must be >= 1");
    TRY(tfm_tokenizer_check_model(tok, cfg));
    encoded *enc = calloc(n ? n : 1, sizeof *enc);
    by_len *order = malloc((n ? n : 1) * sizeof *order);
    const int per_batch = batch_sentences / dc->beam > 0 ? batch_sentences / dc->beam : 1;
    const int max_out = cfg->max_len;
    int32_t *srcb = malloc((size_t)per_batch * (size_t)cfg->max_len * sizeof *srcb + 1);
    int32_t *outb = malloc((size_t)per_batch * (size_t)max_out * sizeof *outb);
    int *out_len = malloc((size_t)per_batch * sizeof *out_len);
    tfm_status st = enc && order && srcb && outb && out_len ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory");
    for (size_t i = 0; st == TFM_OK && i < n; i++) {
        order[i] = (by_len){0, i};
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
        order[i] = (by_len){enc[i].len, i};
    }
    if (st == TFM_OK) qsort(order, n, sizeof *order, by_length);
    size_t first = 0; /* empty sources come first and stay empty */
    while (st == TFM_OK && first < n && order[first].len == 0) first++;
    if (st == TFM_OK && first < n) /* the batches grow in length: memory for the longest, once */
        st = tfm_context_reserve_decode(ctx, dc, (int)(n - first < (size_t)per_batch ? n - first : (size_t)per_batch),
                                        (int)order[n - 1].len);
    for (size_t i = first; st == TFM_OK && i < n; i += (size_t)per_batch) {
        const int B = (int)(n - i < (size_t)per_batch ? n - i : (size_t)per_batch);
        const int S = (int)order[i + (size_t)B - 1].len; /* sorted: the last is the longest */
        for (int b = 0; b < B; b++) {
            const encoded *e = &enc[order[i + (size_t)b].index];
            for (int s = 0; s < S; s++) srcb[(size_t)b * (size_t)S + (size_t)s] = (size_t)s < e->len ? e->ids[s] : cfg->pad_id;
        }
        st = tfm_model_translate(ctx, dc, B, S, srcb, outb, max_out, out_len);
        for (int b = 0; st == TFM_OK && b < B; b++) {
            size_t len;
            char **o = &out[order[i + (size_t)b].index];
            st = tfm_tokenizer_decode(tok, outb + (size_t)b * (size_t)max_out, (size_t)out_len[b], o, &len);
            if (st == TFM_OK) tfm_text_one_line(*o, len); /* byte pieces may spell "\n": one line out per line in */
            stats->out_tokens += (size_t)out_len[b];
        }
    }
    for (size_t i = 0; st == TFM_OK && i < n; i++) {
        if (!out[i]) {
            out[i] = calloc(1, 1);
            if (!out[i]) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory");
        }
    }
    for (size_t i = 0; enc && i < n; i++) free(enc[i].ids);
    free(enc);
    free(order);
    free(srcb);
    free(outb);
    free(out_len);
    if (st != TFM_OK) {
        for (size_t i = 0; i < n; i++) {
            free(out[i]);
            out[i] = NULL;
        }
        return st;
    }
    stats->sentences = n;
    stats->seconds = tfm_now_s() - t0;
    return TFM_OK;
}
