/* The start of a generation on the KV cache: each row's prompt positions as causal forwards in
 * chunks (the model's batched prefill, src/model/prefill.h) instead of one decoding step per
 * position; without the cache, the reference path's first step (decode_internal.h). */
#include "decode_internal.h"

tfm_status decode_begin_prefill(tfm_context *ctx, const tfm_decode_config *dc, int B, int cap, int P) {
    TRY(decode_begin(ctx, dc, B, 0, NULL, cap));
    return dc->use_cache ? model_prefill_reserve(ctx, P) : TFM_OK;
}

tfm_status decode_prefill(tfm_context *ctx, const tfm_decode_config *dc, int B, const int32_t *prefix, int t, int cap,
                          float **logits) {
    if (!dc->use_cache) return decode_step(ctx, dc, B, 0, NULL, prefix, t, cap, logits);
    model_prefill(ctx, prefix, (size_t)cap, t + 1);
    *logits = kv_cache_logits(ctx);
    return TFM_OK;
}
