/* Generation with a decoder-only model (include/tfm/generate.h): BOS + prompt through the decoder
 * as causal forwards of up to PREFILL_CHUNK positions that fill the KV cache (the prefill; or
 * recomputed every step, the reference path), then one sampled token per step until EOS, the token budget, the model's
 * max_len, or the caller says stop. */
#include "decode_internal.h"
#include "tfm/generate.h"
#include "tfm/names.h"

#include <stdlib.h>

tfm_status generate_check(const tfm_config *cfg, const tfm_sample_config *sc, int bos, const int32_t *prompt,
                          int n_prompt, int max_tokens, int *limit) {
    RETURN_IF(!sc || (n_prompt > 0 && !prompt), TFM_ERR_INVALID_ARG, "generate: NULL argument");
    RETURN_IF(cfg->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_INVALID_ARG,
              "generate needs a decoder-only model, this one is %s", tfm_arch_name(cfg->arch));
    TRY(tfm_sample_config_validate(sc));
    RETURN_IF(max_tokens < 0 || n_prompt < 0, TFM_ERR_INVALID_ARG,
              "generate: max_tokens (%d) and the prompt length (%d) must be >= 0", max_tokens, n_prompt);
    RETURN_IF(!bos && n_prompt < 1, TFM_ERR_INVALID_ARG, "generate: a prefix needs at least one token");
    RETURN_IF(n_prompt + bos > cfg->max_len, TFM_ERR_RANGE,
              "generate: %sa prompt of %d tokens exceeds the model's max_len %d", bos ? "BOS + " : "", n_prompt,
              cfg->max_len);
    for (int i = 0; i < n_prompt; i++)
        RETURN_IF(prompt[i] < 0 || prompt[i] >= cfg->tgt_vocab, TFM_ERR_RANGE,
                  "generate: prompt token %d (id %d) is outside the vocabulary [0, %d)", i, prompt[i], cfg->tgt_vocab);
    /* token k is predicted at position P + k (P = n_prompt + bos − 1), which must be < max_len */
    *limit = cfg->max_len - (n_prompt + bos - 1);
    if (max_tokens < *limit) *limit = max_tokens;
    return TFM_OK;
}

/* tfm_generate (bos = 1: BOS, then the prompt) and tfm_generate_prefix (bos = 0: the prompt is the
 * whole prefix, its first id at position 0). */
static tfm_status generate(tfm_context *ctx, const tfm_sample_config *sc, int bos, const int32_t *prompt, int n_prompt,
                           int max_tokens, int use_cache, int32_t *out, int max_out, int *out_len, tfm_token_fn on_token,
                           void *user) {
    RETURN_IF(!ctx || !out_len || (n_prompt > 0 && !prompt) || (max_out > 0 && !out), TFM_ERR_INVALID_ARG,
              "generate: NULL argument");
    *out_len = 0;
    RETURN_IF(max_out < 0, TFM_ERR_INVALID_ARG, "generate: max_out (%d) must be >= 0", max_out);
    const tfm_config *cfg = context_config(ctx);
    int limit;
    TRY(generate_check(cfg, sc, bos, prompt, n_prompt, max_tokens, &limit));
    /* the prefix: BOS + the prompt (n_prompt + 1 positions), or the prompt alone (n_prompt);
     * P = n_prompt + bos − 1 is its last position, whose logits give the first new token */
    const int P = n_prompt + bos - 1;
    if (limit == 0) return TFM_OK;
    const int cap = P + limit; /* positions read: the prefix, all tokens but the last */
    const size_t V = (size_t)cfg->tgt_vocab;
    int32_t *prefix = malloc(sizeof(int32_t) * (size_t)(cap + 1));
    int32_t *scratch = malloc(sizeof(int32_t) * V);
    tfm_status st = prefix && scratch ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory generating");
    tfm_decode_config dc = tfm_decode_config_default();
    dc.use_cache = use_cache ? 1 : 0;
    if (st == TFM_OK) {
        if (bos) prefix[0] = cfg->bos_id;
        for (int i = 0; i < n_prompt; i++) prefix[i + bos] = prompt[i];
        st = decode_begin_prefill(ctx, &dc, 1, cap, P + 1);
    }
    for (int t = P; st == TFM_OK && t < cap; t++) {
        float *logits;
        /* the prefix's P + 1 positions in one forward (on the cache: the prefill), then a step each */
        st = t == P ? decode_prefill(ctx, &dc, 1, prefix, t, cap, &logits)
                    : decode_step(ctx, &dc, 1, 0, NULL, prefix, t, cap, &logits);
        if (st != TFM_OK) continue;
        const int k = t - P;
        const int32_t y = tfm_sample_token(sc, cfg, logits, (int)V, (uint64_t)k, scratch);
        if (tfm_config_is_eos(cfg, y)) break;
        if (*out_len < max_out) out[*out_len] = y;
        ++*out_len;
        prefix[t + 1] = y;
        if (on_token && on_token(y, user)) break;
    }
    if (*out_len > max_out) *out_len = max_out;
    free(prefix);
    free(scratch);
    return st;
}

tfm_status tfm_generate(tfm_context *ctx, const tfm_sample_config *sc, const int32_t *prompt, int n_prompt,
                        int max_tokens, int use_cache, int32_t *out, int max_out, int *out_len, tfm_token_fn on_token,
                        void *user) {
    return generate(ctx, sc, 1, prompt, n_prompt, max_tokens, use_cache, out, max_out, out_len, on_token, user);
}

tfm_status tfm_generate_prefix(tfm_context *ctx, const tfm_sample_config *sc, const int32_t *prefix, int n_prefix,
                               int max_tokens, int use_cache, int32_t *out, int max_out, int *out_len,
                               tfm_token_fn on_token, void *user) {
    return generate(ctx, sc, 0, prefix, n_prefix, max_tokens, use_cache, out, max_out, out_len, on_token, user);
}
