/* One block of a stack (stack.h), for a range of query positions: the single layer code behind the
 * batched pass (training, scoring, encoding: pos0 = 0, keys = the call's own positions) and the
 * cached decoding step (T new positions at pos0 = cache length, keys/values from the KV cache). */
#ifndef TFM_LAYER_H
#define TFM_LAYER_H

#include "model_context.h"
#include "pe.h"

/** The dropout of one forward pass: NULL cfg = none (inference, or p = 0). */
typedef struct {
    const dropout_cfg *cfg;
    uint64_t site; /* counts the dropout sites of one forward pass */
} dropper;

/** A fresh seed for each dropout site of the pass (splitmix64 of the step seed and the site). */
uint64_t dropper_site_seed(dropper *dr);

/** Inverted dropout of x (n) in place, its keep mask saved in mask; nothing without dropout. */
void dropper_apply(dropper *dr, float *x, uint8_t *mask, size_t n);

/** What one call of layer_forward runs: B rows of T query positions pos0..pos0+T−1, whose
 * self-attention keys are positions 0..pos0+T−1. */
typedef struct {
    const tfm_config *cfg;
    const pe_kind *pe;
    const stack_params *sp;   /* the stack's parameters (its position encoding's tensors) */
    const block_desc *bd;
    size_t B, T, pos0;
    const uint8_t *self_pad;  /* (B, ·) nullable key padding of the self-attention keys, row stride
                                 self_pad_bstride */
    size_t self_pad_bstride;
    size_t S_mem;             /* cross-attention: memory keys per row, K|V in L->cross_attn.qkv */
    const uint8_t *mem_pad;   /* (B, S_mem) nullable */
    float *cache_k, *cache_v; /* NULL: pos0 = 0 and the keys/values are this call's own (in
                                 L->self_attn.qkv); else this block's KV cache (B, cap, d), row
                                 stride cache_bstride = cap·d: the T new keys/values are stored at
                                 positions pos0.. and attention reads positions 0..pos0+T−1 */
    size_t cache_bstride;
    const ops_kernels *kern;  /* the context's kernel table (tfm_context.kernels) */
    int reference;            /* 1: the unfused reference kernels for the FFN and the residual
                                 wrappers (!kern->fused_layers); 0: the fused ones */
    const int32_t *mem_row;   /* nullable (B): cross-attention row b reads memory row mem_row[b] (its
                                 K|V and mem_pad row), so the beams of a sentence share one
                                 memory (B_mem rows); NULL: row b reads row b. Forward only. */
    size_t kernel_rows;       /* 0: the linear layers pick their kernel for their own B·T rows; else
                                 for this many (linear_forward_rows): a decoding step passes the rows
                                 its call started with, so the kernel does not change as rows leave */
    const int32_t *row_pos;   /* nullable (B), a decoding step (T = 1, cache_k set) whose rows sit at
                                 different positions: row b's query is at position row_pos[b], its
                                 key/value goes to cache position row_pos[b] and it attends to cache
                                 positions 0..row_pos[b] (pos0 is not read); the position encoding's
                                 hooks run once per row at its position, and its bias (if any) is
                                 one per row, in L->self_attn.bias laid out (B, H, S_self). Row b
                                 then gets the bits of a call of that row alone at pos0 = row_pos[b] */
    const int32_t *cache_row; /* with row_pos (B): row b's keys/values are row cache_row[b] of the
                                 cache (its slot); else row b */
} layer_call;

/** Runs one block (its sub-layers in order, each in its residual + LayerNorm wrapper) on x
 * (B·T, d); every activation goes to L (laid out for this call's sizes). Returns the block's
 * output (a buffer of L). */
const float *layer_forward(dropper *dr, const layer_call *c, layer_acts *L, const layer_params *W, const float *x);

/** The memory keys|values of a cross-attention sub-layer: kv (B·S, 2d) = mem W_{K|V}ᵀ + b (rows
 * [d, 3d) of in_proj), computed once per memory (by the batched pass, or into the KV cache). */
void cross_kv_forward(const ops_kernels *kern, float *kv, const mha_params *p, const float *mem, size_t N, size_t d);

/** x0 (B, T, d) = E[ids]·√d_model (§3.4; tfm_config_embed_scale) + the position encoding at the
 * embeddings (§3.5) of positions pos0..pos0+T−1; ids row b at ids + b·ids_stride; st the calling
 * context's state of this stack (pe.h). The batched pass, the decode step and the prefill embed
 * by it. */
void stack_embed(const tfm_config *cfg, const pe_kind *pe, const stack_params *sp, pe_state *st, float *x0,
                 const int32_t *ids, size_t ids_stride, size_t B, size_t T, size_t d, size_t pos0);

/** A stack's final norm of N rows x (N, d) into out: LayerNorm (mean, rstd (N)), or RMSNorm
 * (cfg->norm; Llama's model.norm; rstd only). */
void stack_final_norm(const tfm_config *cfg, float *out, float *mean, float *rstd, const float *x,
                      const stack_params *sp, size_t N, size_t d);

/** The output of sub-layer k's wrapper: what the next sub-layer reads. */
const float *block_out(const tfm_config *cfg, const block_acts *b);

#endif
