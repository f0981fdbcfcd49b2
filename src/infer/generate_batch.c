/* Several generations at once on one KV cache (include/tfm/generate.h, tfm_generate_batch): B rows
 * whose prompts have the same length share every position, so one decoding step serves them all;
 * each row samples with its own configuration and budget, and a finished row leaves the step
 * (decode_compact, as a finished sentence leaves beam search). */
#include "decode_internal.h"
#include "tfm/generate.h"
#include "tfm/names.h"

#include <stdlib.h>
#include <string.h>

tfm_status tfm_generate_batch(tfm_context *ctx, int B, const tfm_sample_config *sc, const int32_t *prompts,
                              int n_prompt, const int *max_tokens, int use_cache, int32_t *out, int max_out,
                              int *out_len, tfm_row_token_fn on_token, void *user) {
    RETURN_IF(!ctx || !sc || !max_tokens || !out_len || B < 1 || (n_prompt > 0 && !prompts) || (max_out > 0 && !out),
              TFM_ERR_INVALID_ARG, "generate_batch: NULL argument or B < 1");
    for (int b = 0; b < B; b++) out_len[b] = 0;
    const tfm_config *cfg = context_config(ctx);
    RETURN_IF(cfg->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_INVALID_ARG,
              "generate needs a decoder-only model, this one is %s", tfm_arch_name(cfg->arch));
    RETURN_IF(n_prompt < 0 || max_out < 0, TFM_ERR_INVALID_ARG,
              "generate_batch: the prompt length (%d) and max_out (%d) must be >= 0", n_prompt, max_out);
    RETURN_IF(n_prompt + 1 > cfg->max_len, TFM_ERR_RANGE,
              "generate: BOS + a prompt of %d tokens exceeds the model's max_len %d", n_prompt, cfg->max_len);
    int longest = 0; /* the most tokens a row may generate */
    for (int b = 0; b < B; b++) {
        TRY(tfm_error_prefix(tfm_sample_config_validate(&sc[b]), "row %d: ", b));
        RETURN_IF(max_tokens[b] < 0, TFM_ERR_INVALID_ARG, "generate_batch: row %d: max_tokens %d < 0", b, max_tokens[b]);
        for (int i = 0; i < n_prompt; i++)
            RETURN_IF(prompts[(size_t)b * (size_t)n_prompt + (size_t)i] < 0 ||
                          prompts[(size_t)b * (size_t)n_prompt + (size_t)i] >= cfg->tgt_vocab,
                      TFM_ERR_RANGE, "generate: row %d: prompt token %d (id %d) is outside the vocabulary [0, %d)", b,
                      i, prompts[(size_t)b * (size_t)n_prompt + (size_t)i], cfg->tgt_vocab);
        /* as tfm_generate: token k is predicted at position n_prompt + k, which must be < max_len */
        const int lim = max_tokens[b] < cfg->max_len - n_prompt ? max_tokens[b] : cfg->max_len - n_prompt;
        if (lim > longest) longest = lim;
    }
    if (longest == 0) return TFM_OK;
    const int cap = n_prompt + longest; /* positions read: BOS, the prompt, all tokens but the last */
    const size_t V = (size_t)cfg->tgt_vocab;
    /* step row j decodes row act[j]; prefix row j is its BOS + prompt + tokens */
    int32_t *prefix = malloc(sizeof(int32_t) * (size_t)B * (size_t)(cap + 1));
    int32_t *scratch = malloc(sizeof(int32_t) * V);
    int *act = malloc(sizeof(int) * (size_t)B * 2), *keep = act ? act + B : NULL;
    unsigned char *live = malloc((size_t)B);
    tfm_status st = prefix && scratch && act && live ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory generating");
    tfm_decode_config dc = tfm_decode_config_default();
    dc.use_cache = use_cache ? 1 : 0;
    int rows = B, n_live = B;
    if (st == TFM_OK) {
        for (int b = 0; b < B; b++) {
            int32_t *p = prefix + (size_t)b * (size_t)(cap + 1);
            for (int i = 0; i <= cap; i++) p[i] = cfg->pad_id; /* a finished row's later inputs, if it stays */
            p[0] = cfg->bos_id;
            for (int i = 0; i < n_prompt; i++) p[i + 1] = prompts[(size_t)b * (size_t)n_prompt + (size_t)i];
            act[b] = b;
            live[b] = max_tokens[b] > 0; /* a row with no budget generates nothing */
            n_live -= !live[b];
        }
        st = decode_begin_prefill(ctx, &dc, B, cap, n_prompt + 1); /* cap positions, as tfm_generate */
    }
    for (int t = n_prompt; st == TFM_OK && t < cap && n_live > 0; t++) {
        float *logits;
        /* BOS + the prompt in one forward per row (on the cache: each row's prefill alone, the bits
         * of tfm_generate's), then a step each */
        st = t == n_prompt ? decode_prefill(ctx, &dc, rows, prefix, t, cap + 1, &logits)
                           : decode_step(ctx, &dc, rows, 0, NULL, prefix, t, cap + 1, &logits);
        if (st != TFM_OK) continue;
        const int k = t - n_prompt;
        for (int j = 0; j < rows; j++) {
            const int b = act[j];
            if (!live[b]) continue;
            const int lim = max_tokens[b] < cfg->max_len - n_prompt ? max_tokens[b] : cfg->max_len - n_prompt;
            const int32_t y = tfm_sample_token(&sc[b], cfg, logits + (size_t)j * V, (int)V, (uint64_t)k, scratch);
            int stop = tfm_config_is_eos(cfg, y);
            if (!stop) {
                if (out_len[b] < max_out) out[(size_t)b * (size_t)max_out + (size_t)out_len[b]] = y;
                out_len[b]++;
                prefix[(size_t)j * (size_t)(cap + 1) + (size_t)t + 1] = y;
                stop = (on_token && on_token(b, y, user)) || k + 1 >= lim;
            }
            if (stop) {
                live[b] = 0;
                n_live--;
            }
        }
        /* finished rows leave the step: the live ones move to the front, in order */
        int n = 0;
        for (int j = 0; j < rows; j++)
            if (live[act[j]]) keep[n++] = j;
        if (n_live > 0 && n < rows && decode_compact(ctx, &dc, keep, n)) {
            for (int j = 0; j < n; j++) {
                if (keep[j] == j) continue;
                act[j] = act[keep[j]];
                memcpy(prefix + (size_t)j * (size_t)(cap + 1), prefix + (size_t)keep[j] * (size_t)(cap + 1),
                       (size_t)(t + 2) * sizeof *prefix);
            }
            rows = n;
        }
    }
    for (int b = 0; b < B; b++)
        if (out_len[b] > max_out) out_len[b] = max_out;
    free(prefix);
    free(scratch);
    free(act);
    free(live);
    return st;
}
