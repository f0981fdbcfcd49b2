/* The batched prefill of a decoder-only model's KV cache: a row's prompt (its P positions) goes
 * through the decoder in causal forwards of up to PREFILL_CHUNK positions each — the linear layers
 * on up to C rows at a time (matrix × matrix), not P decoding steps of one row each — its keys and
 * values land in the cache at positions [0, P), and the logits of position P − 1 are left where a
 * decoding step leaves them; decoding then continues step by step (model_decode_step) at position
 * P. docs/LLM.md, "How the prompt is processed". */
#ifndef TFM_PREFILL_H
#define TFM_PREFILL_H

#include "activations.h"

/** Positions per chunk of the batched prefill, C (the default of tfm_context.prefill_chunk): a
 * prompt of P positions runs as ceil(P / C) causal forwards of at most C positions at pos0 = 0, C,
 * 2C, ... on the KV cache, each chunk's keys/values appended to the row's cache and its queries
 * attending to positions 0 .. pos0 + T − 1 (what a decoding step does with T = 1). The workspace is
 * then one block's activations of min(P, C) query rows — O(C · d_model + C · d_ff) — and their
 * attention weights over up to P keys, n_heads · C · P floats: linear in P, where one forward of the
 * whole prompt kept n_heads · P² (8192 positions on Qwen2-0.5B's shape, 14 heads, d_model 896:
 * 4.2 GiB, 3.5 GiB of it attention weights; in chunks of 256, 134 MiB; test_decode_memory). 256
 * rows keep the linear layers on the tiled matrix × matrix path (above the panels' 128 rows,
 * docs/KERNELS.md), each weight read once per 256 positions. */
#define PREFILL_CHUNK 256

/** The prefill's workspace, kept with the KV cache (kv_cache.prefill): the embeddings of one chunk
 * and one block's activations for (1, rows) queries over cap_P keys, rows = min(cap_P, chunk),
 * shared by the blocks (as a decoding step shares kv_cache.step) and by the chunks. */
typedef struct {
    int cap_P;       /* positions a prefill may have (model_prefill_reserve); 0: none laid out */
    int chunk;       /* C: positions per chunk (the context's prefill_chunk at model_prefill_reserve) */
    float *x0;       /* (rows, d) embedding + PE of one chunk */
    layer_acts acts; /* one block's activations of (1, rows) queries over cap_P keys */
    tfm_arena arena;
} prefill_ws;

/** Bytes of the prefill workspace of up to P positions in chunks of PREFILL_CHUNK
 * (model_prefill_reserve's layout, counted); 0 for a model without a decoder. */
size_t model_prefill_bytes(const tfm_config *cfg, int P);

/** model_prefill_bytes in chunks of C positions (C >= 1; C >= P: the whole prompt as one forward,
 * the layout before chunking). */
size_t model_prefill_bytes_chunk(const tfm_config *cfg, int P, int C);

/** Lays out the prefill workspace of the context's KV cache for prompts of up to P positions in
 * chunks of the context's prefill_chunk (C, read here and kept until the next reserve; growing the
 * arena only if needed), after kv_cache_reserve / model_decode_start, before the first step:
 * model_prefill_row then allocates nothing. P <= the cache's cap_T. Only decoder-only models (no
 * cross-attention). Errors: TFM_ERR_INVALID_ARG (P out of range, no cache, a model whose decoder
 * attends to a memory, C < 1), TFM_ERR_NOMEM. */
tfm_status model_prefill_reserve(tfm_context *ctx, int P);

/** Prefills row r of the KV cache (0 <= r < the cache's rows; a ragged cache's slot r < B_start,
 * kv_cache_ragged) with tokens[0 .. P) (BOS first when the caller has one; 1 <= P <= the reserved
 * cap_P): causal forwards of those positions alone in chunks of C = the reserved chunk (Vaswani et
 * al. 2017, §3.2.3 — the batched pass's layer code, layer_forward, with B = 1, T = min(C, P −
 * pos0) at pos0 = 0, C, 2C, ..., keys and values stored into and read from row r of the cache:
 * chunk k attends to every position before it and causally within it), so that row r's bits do not
 * depend on the other rows nor on the cache's row count; every chunk's linear layers take the
 * kernel of min(P, C) rows (linear_forward_rows), so the bits depend on P and C alone (P <= C: one
 * forward of the whole prompt). Writes the cached keys/values of positions [0, P) of row r in
 * every block and the logits of position P − 1 into row r of kv_cache_logits; touches no other
 * row, and not cache.len (the caller's: model_prefill). The same logits as model_forward of (1, P)
 * at position P − 1 up to rounding; a row may join a running cache this way (continuous
 * batching). No allocation. */
void model_prefill_row(tfm_context *ctx, int r, const int32_t *tokens, int P);

/** One chunk of model_prefill_row: positions [pos0, pos0 + min(C, P − pos0)) of row r's input
 * tokens[0 .. P) (C the reserved chunk; pos0 a multiple of C below P), after the chunks before it
 * (positions [0, pos0) of row r cached by them: whatever runs in between must leave row r's cache
 * alone, as decoding steps of other rows and kv_cache_grow do); the last chunk also writes the
 * logits of position P − 1 into row r of kv_cache_logits. Returns the positions prefilled so far:
 * P after the last chunk. model_prefill_row is this for pos0 = 0, C, 2C, ... — the same calls,
 * the same bits — so a joining row's prefill can be spread over the steps of a running batch
 * (tfm_gen_batch). No allocation. */
int model_prefill_chunk(tfm_context *ctx, int r, const int32_t *tokens, int P, int pos0);

/** Prefills every row b < the cache's rows with tokens[b · tokens_stride .. + P) by
 * model_prefill_row (each row alone), then sets the cache's length to P: the next
 * model_decode_step decodes position P. The cache must be empty (len 0). No allocation. */
void model_prefill(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride, int P);

#endif
