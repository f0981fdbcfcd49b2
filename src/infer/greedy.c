/* Greedy decoding, batched over sentences: at each position every live row takes its most likely
 * token (ties: the lowest id), on the KV cache or (reference path) recomputing the prefix. */
#include "decode_internal.h"

#include <stdlib.h>
#include <string.h>

tfm_status greedy_search(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                         int32_t *out, int max_out, int *out_len) {
    const tfm_model *m = ctx->m;
    const tfm_config *cfg = &m->cfg;
    int *limit = malloc((size_t)B * sizeof *limit);
    uint8_t *done = calloc((size_t)B, 1);
    int cap = 1;
    for (int b = 0; limit && b < B; b++) {
        limit[b] = decode_limit(m, dc, src + (size_t)b * (size_t)S, S);
        if (limit[b] + 1 > cap) cap = limit[b] + 1;
    }
    int32_t *prefix = malloc((size_t)B * (size_t)cap * sizeof *prefix); /* (B, cap): BOS, tokens... */
    tfm_status st = limit && done && prefix ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory decoding");
    if (st == TFM_OK) st = decode_begin(ctx, dc, B, S, src, cap);
    for (int b = 0; st == TFM_OK && b < B; b++) {
        out_len[b] = 0;
        for (int t = 0; t < cap; t++) prefix[(size_t)b * (size_t)cap + (size_t)t] = cfg->pad_id;
        prefix[(size_t)b * (size_t)cap] = cfg->bos_id;
    }
    const size_t V = (size_t)cfg->tgt_vocab;
    int live = B;
    for (int t = 0; st == TFM_OK && t < cap && live > 0; t++) {
        float *logits;
        st = decode_step(ctx, dc, B, S, src, prefix, t, cap, &logits);
        if (st != TFM_OK) break;
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
    free(limit);
    free(done);
    free(prefix);
    return st;
}
