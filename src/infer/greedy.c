/* Greedy decoding, batched over sentences: at each position every live row takes its most likely
 * token (ties: the lowest id), on the KV cache or (reference path) recomputing the prefix. On the
 * cache, a sentence that has finished leaves the step (decode_compact): a batch's later steps run
 * on its longer sentences only, not on all B rows to the longest one's end. */
#include "decode_internal.h"

#include <stdlib.h>
#include <string.h>

tfm_status greedy_search(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                         int32_t *out, int max_out, int *out_len) {
    const tfm_model *m = tfm_context_model(ctx);
    const tfm_config *cfg = tfm_model_config(m);
    int *limit = malloc((size_t)B * sizeof *limit);
    uint8_t *done = calloc((size_t)B, 1);
    int cap = 1;
    for (int b = 0; limit && b < B; b++) {
        limit[b] = decode_limit(m, dc, src + (size_t)b * (size_t)S, S);
        if (limit[b] + 1 > cap) cap = limit[b] + 1;
        limit[b] = decode_end(cfg, limit[b]); /* the tokens before a forced EOS (forced_eos) */
    }
    int32_t *prefix = malloc((size_t)B * (size_t)cap * sizeof *prefix); /* (B, cap): BOS, tokens... */
    int *sent = malloc((size_t)B * sizeof *sent); /* the sentence of each step row (rows leave) */
    int *keep = malloc((size_t)B * sizeof *keep);
    tfm_status st = limit && done && prefix && sent && keep ? TFM_OK
                                                           : tfm_set_error(TFM_ERR_NOMEM, "out of memory decoding");
    if (st == TFM_OK) st = decode_begin(ctx, dc, B, S, src, cap);
    for (int b = 0; st == TFM_OK && b < B; b++) {
        sent[b] = b;
        out_len[b] = 0;
        for (int t = 0; t < cap; t++) prefix[(size_t)b * (size_t)cap + (size_t)t] = cfg->pad_id;
        prefix[(size_t)b * (size_t)cap] = tfm_config_decoder_start(cfg);
    }
    const size_t V = (size_t)cfg->tgt_vocab;
    int live = B, rows = B; /* rows: of the step; row r decodes sentence sent[r], prefix row r */
    for (int t = 0; st == TFM_OK && t < cap && live > 0; t++) {
        float *logits;
        st = decode_step(ctx, dc, rows, S, src, prefix, t, cap, &logits);
        if (st != TFM_OK) break;
        for (int r = 0; r < rows; r++) {
            const int b = sent[r];
            if (done[b]) continue;
            float *row = logits + (size_t)r * V;
            forbid_specials(cfg, row);
            int y = out_len[b] >= limit[b]                ? cfg->eos_id
                    : dc->force_first && out_len[b] == 0 ? dc->first_id /* decode.h: forced first token */
                                                         : (int)row_argmax(row, V);
            if (y == cfg->eos_id) {
                done[b] = 1;
                live--;
                continue;
            }
            if (out_len[b] < max_out) out[(size_t)b * (size_t)max_out + (size_t)out_len[b]] = y;
            out_len[b]++;
            if (t + 1 < cap) prefix[(size_t)r * (size_t)cap + (size_t)t + 1] = y;
        }
        int n = 0; /* the rows still decoding, in order */
        for (int r = 0; r < rows; r++)
            if (!done[sent[r]]) keep[n++] = r;
        if (live > 0 && decode_compact(ctx, dc, keep, n)) {
            for (int j = 0; j < n; j++) {
                if (keep[j] != j)
                    memcpy(prefix + (size_t)j * (size_t)cap, prefix + (size_t)keep[j] * (size_t)cap,
                           (size_t)cap * sizeof *prefix);
                sent[j] = sent[keep[j]];
            }
            rows = n;
        }
    }
    for (int b = 0; st == TFM_OK && b < B; b++)
        if (out_len[b] > max_out) out_len[b] = max_out;
    free(limit);
    free(done);
    free(prefix);
    free(sent);
    free(keep);
    return st;
}
