/* The batched prefill of a decoder-only model's KV cache: a row's prompt (its P positions) goes
 * through the decoder as one causal forward — the linear layers on P rows (matrix × matrix), not
 * P decoding steps of one row each — its keys and values land in the cache at positions [0, P),
 * and the logits of position P − 1 are left where a decoding step leaves them; decoding then
 * continues step by step (model_decode_step) at position P. docs/LLM.md, "How the prompt is
 * processed". */
#ifndef TFM_PREFILL_H
#define TFM_PREFILL_H

#include "activations.h"

/** The prefill's workspace, kept with the KV cache (kv_cache.prefill): the embeddings of the P
 * positions and one block's activations for (1, P) queries over P keys, shared by the blocks (as
 * a decoding step shares kv_cache.step), laid out for up to cap_P positions. */
typedef struct {
    int cap_P;       /* positions a prefill may have (model_prefill_reserve); 0: none laid out */
    float *x0;       /* (cap_P, d) embedding + PE */
    layer_acts acts; /* one block's activations of (1, cap_P) queries over cap_P keys */
    tfm_arena arena;
} prefill_ws;

/** Bytes of the prefill workspace of up to P positions (model_prefill_reserve's layout, counted);
 * 0 for a model without a decoder. */
size_t model_prefill_bytes(const tfm_config *cfg, int P);

/** Lays out the prefill workspace of the context's KV cache for prompts of up to P positions
 * (growing its arena only if needed), after kv_cache_reserve / model_decode_start, before the
 * first step: model_prefill_row then allocates nothing. P <= the cache's cap_T. Only decoder-only
 * models (no cross-attention). Errors: TFM_ERR_INVALID_ARG (P out of range, no cache, a model
 * whose decoder attends to a memory), TFM_ERR_NOMEM. */
tfm_status model_prefill_reserve(tfm_context *ctx, int P);

/** Prefills row r of the KV cache (0 <= r < the cache's rows; a ragged cache's slot r < B_start,
 * kv_cache_ragged) with tokens[0 .. P) (BOS first when
 * the caller has one; 1 <= P <= the reserved cap_P): one causal forward of those positions alone
 * (Vaswani et al. 2017, §3.2.3 — the batched pass's layer code, layer_forward, with B = 1, T = P,
 * pos0 = 0, keys and values stored into and read from row r of the cache), so that row r's bits do
 * not depend on the other rows nor on the cache's row count. Writes the cached keys/values of
 * positions [0, P) of row r in every block and the logits of position P − 1 into row r of
 * kv_cache_logits; touches no other row, and not cache.len (the caller's: model_prefill). The same
 * logits as model_forward of (1, P) at position P − 1 up to rounding (the generator runs on one
 * row); a row may join a running cache this way (continuous batching). No allocation. */
void model_prefill_row(tfm_context *ctx, int r, const int32_t *tokens, int P);

/** Prefills every row b < the cache's rows with tokens[b · tokens_stride .. + P) by
 * model_prefill_row (each row alone), then sets the cache's length to P: the next
 * model_decode_step decodes position P. The cache must be empty (len 0). No allocation. */
void model_prefill(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride, int P);

#endif
