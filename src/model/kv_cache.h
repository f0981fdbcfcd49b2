/* The KV cache of incremental decoding: the decoder's keys and values of the positions decoded so
 * far and the memory's cross-attention keys and values, kept in a context (model_context.h); the
 * calls that lay it out, step it, reorder and compact its rows for beam search and finished rows. */
#ifndef TFM_KV_CACHE_H
#define TFM_KV_CACHE_H

#include "activations.h"
#include "prefill.h"

/** Incremental decoding state for B rows (sentences, or sentences × beams) of the generator's
 * stack: the self-attention keys and values of every position decoded so far, per block, and the
 * cross-attention keys and values of the memory, computed once (the "KV cache"); and the
 * activations of one step (one new position per row), shared by the blocks since a step is
 * never differentiated. One arena, grown on demand. */
typedef struct {
    int B, S, cap_T; /* rows, source (memory) length, positions the cache can hold */
    int B_mem, beams; /* sentences (memory rows) and rows per sentence: B = B_mem · beams */
    int B_start;     /* rows at kv_cache_reserve (B_mem · beams): the linear layers' kernels are chosen
                        for these (linear_forward_rows) however many rows kv_cache_compact keeps */
    int len;         /* positions decoded so far (every row alike, unless ragged) */
    int ragged;      /* 1 after kv_cache_ragged: rows hold different lengths (row_len) in slots
                        (row_slot) of the cache; len is unused */
    int32_t *row_len;  /* (B_start) ragged: positions decoded so far by step row b */
    int32_t *row_slot; /* (B_start) ragged: the cache slot (row of self_k/self_v) of step row b */
    float *self_k[TFM_MAX_LAYERS], *self_v[TFM_MAX_LAYERS]; /* (B, cap_T, d) */
    float *cross_kv[TFM_MAX_LAYERS];                        /* (B_mem, S, 2d) packed K|V */
    uint8_t *mem_pad;                                       /* (B_mem, S) key padding of the memory */
    int32_t *mem_row; /* (B) memory row of each row: b / beams, until kv_cache_compact moves rows */
    int32_t *slot;    /* (B) kv_cache_reorder's scratch: staging slot of each source row */
    float **cp_dst;   /* (B) kv_cache_reorder's scratch: the copies of one phase (ops_copy_rows) */
    const float **cp_src;
    float *x0;      /* (B, d) embedding + PE of the newest tokens */
    layer_acts step; /* one block's activations for (B, 1) queries over cap_T / S keys; its
                        self-attention bias (if the encoding has one) holds one per row,
                        (B, H, cap_T), for steps whose rows sit at different positions */
    float *out, *out_mean, *out_rstd; /* (B, d) final LayerNorm */
    float *logits;  /* (B, V_tgt) of the newest position */
    float *tmp;     /* (B, cap_T, d) scratch for reordering rows; NULL with one row per sentence
                       (greedy: nothing is reordered) */
    tfm_arena arena;
    prefill_ws prefill; /* the batched prefill's workspace (prefill.h: model_prefill_reserve) */
} kv_cache;

/** Lays the context's KV cache out for B rows, sources of S tokens and up to cap_T decoded
 * positions (growing its arena only if needed), and reserves the workspace for encoding (B, S).
 * Errors: TFM_ERR_INVALID_ARG (sizes), TFM_ERR_NOMEM. */
tfm_status kv_cache_reserve(tfm_context *ctx, int B, int S, int cap_T);
/** kv_cache_reserve for beam search: B_mem sentences of `beams` rows each (row r = i·beams + k
 * decodes sentence i), B_mem · beams rows in all. Each sentence is encoded once and its memory
 * (cross-attention K|V, mem_pad) stored once: the beams' cross-attention indexes it by sentence
 * (attn_args.kv_row). The workspace is reserved for encoding (B_mem, S). Errors as
 * kv_cache_reserve. */
tfm_status kv_cache_reserve_beams(tfm_context *ctx, int B_mem, int beams, int S, int cap_T);
/** Bytes of the KV cache arena kv_cache_reserve(B, S, cap_T) lays out (its layout, counted). */
size_t kv_cache_bytes(const tfm_config *cfg, int B, int S, int cap_T);
/** Bytes of the arena kv_cache_reserve_beams(B_mem, beams, S, cap_T) lays out. */
size_t kv_cache_bytes_beams(const tfm_config *cfg, int B_mem, int beams, int S, int cap_T);
void kv_cache_free(kv_cache *c);

/** Beam bookkeeping: row b of the cache becomes (a copy of) row rows[b], for the len cached
 * self-attention positions; rows[b] must decode the same sentence as b (the memory, stored once
 * per sentence, does not move). Rows with rows[b] == b are not touched; a moved row's source is
 * copied in place, or through the scratch buffer when that source moves itself: at most two
 * copies of len positions per moved row, none per kept row. No allocation. */
void kv_cache_reorder(tfm_context *ctx, const int *rows);

/** Drops finished rows: rows keep[0..n) (strictly increasing, n >= 1; n >= 0 when ragged) become
 * rows 0..n−1 — their len cached self-attention positions (ragged: their slot and length only,
 * no copy) and the memory row each reads (mem_row; the memory itself does not move) — and the
 * following steps run on n rows (B = n). A row's results do not depend
 * on the other rows of the step and the decode step's linear layers keep the kernels chosen for
 * B_start rows (linear_forward_rows), so within the decode call the kept rows decode bit for bit
 * as they would with every row kept. No allocation. */
void kv_cache_compact(tfm_context *ctx, const int *keep, int n);

/** Rows at different positions, for continuous batching (tfm_gen_batch, include/tfm/generate.h):
 * after kv_cache_reserve(ctx, R, 0, cap_T) of a decoder-only model, the cache has R slots
 * (B_start = R) and no row (B = 0). A row joins in a free slot, its input prefilled there
 * (model_prefill_row with r = the slot) and then added with its length (kv_cache_add_row), leaves with
 * kv_cache_compact (its slot free again; nothing is copied: step row b keeps its keys in slot
 * row_slot[b]), and model_decode_step decodes every row at its own position row_len[b]. The linear
 * layers keep the kernels chosen for R rows (linear_forward_rows) and each row's attention and
 * position encoding are computed as for that row alone, so a row decodes bit for bit as it would
 * in a call of that row alone with B_start = R (R <= 8: as a single row, docs/KERNELS.md),
 * whatever the other rows and their positions. */
void kv_cache_ragged(tfm_context *ctx);

/** Appends step row B (ragged, B < B_start) in cache slot `slot` (< B_start, not held by another
 * row: the caller's bookkeeping) holding `len` positions (0 <= len < cap_T): those model_prefill_row
 * wrote into that slot, so its next step decodes position len. No allocation. */
void kv_cache_add_row(tfm_context *ctx, int slot, int len);

/** Makes a ragged cache hold at least cap_T positions per slot (nothing if it does), keeping every
 * slot's cached positions (a slot prefilled but not added yet too): a new arena, the slots copied
 * whole, the old one freed; the position
 * encoding's state grows too. Between steps only. Errors: TFM_ERR_INVALID_ARG (not ragged, or
 * cap_T above max_len), TFM_ERR_NOMEM (the cache is then unchanged). */
tfm_status kv_cache_grow(tfm_context *ctx, int cap_T);

/** Encodes src (B_mem, S, padded with pad_id: one row per sentence) into the context's cache
 * (laid out by kv_cache_reserve or kv_cache_reserve_beams) and fills the cross-attention
 * keys/values once per sentence; len = 0. */
void model_decode_start(tfm_context *ctx, const int32_t *src);

/** Decodes one position for every row: tokens[b · tokens_stride] (b < B) are the inputs at
 * position cache.len (BOS first), or, in a ragged cache, row b's at position row_len[b]. Leaves
 * the logits of that position in ctx->cache.logits (B, V_tgt) and advances cache.len (ragged:
 * every row_len[b]). Computes what model_forward computes for the last position of the prefix,
 * without recomputing the prefix. */
void model_decode_step(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride);

/** The logits (B, V_tgt) of the position model_decode_step decoded last. */
float *kv_cache_logits(tfm_context *ctx);

/** Rows the cache decodes now (B: kv_cache_compact lowers it). */
int kv_cache_rows(const tfm_context *ctx);

/** Positions each row (slot) of the cache holds (cap_T). */
int kv_cache_positions(const tfm_context *ctx);

/** A ragged cache's slot of each step row (B entries, valid until the cache changes). */
const int32_t *kv_cache_row_slots(const tfm_context *ctx);

#endif
