/* Kernels of the Transformer, each a plain function over row-major float tensors, llm.c style:
 * outputs first, then inputs, then sizes. Forward functions save exactly what the backward needs.
 * Only this folder calls CBLAS or runs parallel loops (its thread pool, pool.h;
 * docs/ARCHITECTURE.md).
 *
 * Shape letters: N rows (= B·T flattened), B batch, T query positions, S key positions,
 * C / d model width, H heads, d_k = d / H, V vocabulary. */
#ifndef TFM_OPS_H
#define TFM_OPS_H

#include "hash.h"
#include "kernels.h"

#include <stddef.h>
#include <stdint.h>

/* ---- matmul.c ---------------------------------------------------------------------------- */

/** Internal names of tfm_set_threads / tfm_get_threads (include/tfm/threads.h): the thread count
 * of every kernel's parallel loops (n <= 0: the default). No OpenMP or BLAS global is changed. */
void ops_set_threads(int n);
int ops_threads(void);

/** out[N, OC] = inp[N, IC] · weight[OC, IC]ᵀ + bias[OC] — nn.Linear; bias may be NULL. BLIS,
 * tiled over the threads (ops_gemm, src/ops/parallel.h); N <= linear_rows_max() rows (a decoding
 * step) go to linear_rows_forward and N <= linear_panels_max() to linear_panels_forward, neither of
 * which packs the weight. */
#define OPS_LINEAR_ROWS_MAX 8          /* rows for the dot-product kernels */
#define OPS_LINEAR_ROWS_MAX_AVX512 128 /* rows for the AVX-512 dot-product kernel when the panels are off */
#define OPS_LINEAR_PANELS_MAX 128      /* rows for linear_panels_forward */
void linear_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    size_t IC, size_t OC);

/** linear_forward with the kernel chosen for kernel_rows (>= N) rows instead of N: linear_rows_forward
 * when kernel_rows <= linear_rows_max(), linear_panels_forward when kernel_rows <= linear_panels_max(),
 * else the tiled product with the small-vs-BLIS kernel of kernel_rows rows' full tile. A decoding
 * call passes the rows it started with, so that as finished rows leave the step (kv_cache_compact)
 * every kept row still runs the same kernel: its bits do not depend on which other rows are in the
 * step. linear_forward is kernel_rows = N. */
void linear_forward_rows(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N,
                         size_t IC, size_t OC, size_t kernel_rows);

/** linear_forward without BLIS's packing of the weight (src/ops/linear_rows.c): every output is
 * bias[j] + the dot product of input row n and weight row j, vectorised over IC, the weight read
 * once per call; parallel over fixed blocks of 64 output columns (each output one thread's, the
 * result independent of the thread count). For few rows (the decoding step); agrees with
 * linear_forward to rounding (test_linear_rows). No allocation. */
void linear_rows_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N, size_t IC,
                         size_t OC);

/** linear_forward by the small-product kernel (gemm_small.h: outer-product register tiles of 12 × 32
 * with AVX-512, 6 × 16 with AVX2+FMA, the same bits with either), called directly (no
 * GEMM_SMALL_MAX_MACS cap) on the transposed product outᵀ = weight · inpᵀ: the weight is read in
 * place (never copied: no transposed copy of it is kept anywhere), the few input rows are copied
 * transposed onto the stack as gemm_small's panels; parallel over chunks of output columns (up to
 * 512, src/ops/linear_rows.c). Above 64 rows and at 8 or fewer each chunk runs out = inp · weightᵀ
 * instead, the weight's 32-column panels copied transposed, the rows read in place. Every output is one FMA chain over k in order (per chunk of
 * GEMM_SMALL_KC), bias[j] added with the first chunk (the bits of linear_forward's tiled product,
 * gemm_small_bias), so a row's bits depend neither on the other rows nor on N nor on the thread
 * count. For the 9–128 rows of a batched decoding step, where it is faster than the dot-product
 * kernel (docs/KERNELS.md, "Batched steps"). Agrees with linear_forward to rounding
 * (test_linear_rows). Without AVX2+FMA, or with the small kernels off (a kernel table whose gemm is
 * BLIS), it is linear_rows_forward. No allocation (gemm_small's ~48 KiB and a 32 KiB block of
 * stack per thread). */
void linear_panels_forward(const ops_kernels *kern, float *out, const float *inp, const float *weight, const float *bias, size_t N,
                           size_t IC, size_t OC);

/** The most rows linear_forward sends to linear_rows_forward on this CPU: OPS_LINEAR_ROWS_MAX where
 * linear_panels_forward takes over above it; else (no AVX2+FMA, or the small kernels off)
 * OPS_LINEAR_ROWS_MAX_AVX512 with AVX-512 (the 4 × 4 register-blocked kernel of
 * linear_rows_avx512.c, chosen at run time) and OPS_LINEAR_ROWS_MAX without. */
size_t linear_rows_max(const ops_kernels *kern);

/** The most rows linear_forward sends to linear_panels_forward: OPS_LINEAR_PANELS_MAX when
 * gemm_small_active() names a kernel (AVX2+FMA, with or without AVX-512F), else 0. */
size_t linear_panels_max(const ops_kernels *kern);

/** Backward of linear_forward, all three ACCUMULATED (+=), by ops_gemm:
 *   dinp[N, IC]     += dout[N, OC] · weight[OC, IC]
 *   dweight[OC, IC] += doutᵀ · inp[N, IC]
 *   dbias[OC]       += Σ_n dout[n, :]
 * dinp, dweight and dbias may each be NULL (not wanted). dinp must not alias dout or weight. */
void linear_backward(const ops_kernels *kern, float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                     const float *weight, size_t N, size_t IC, size_t OC);

/* ---- layernorm.c ------------------------------------------------------------------------- */

/** out[N, C] = (inp − mean) · rstd · weight + bias, per row over C (Ba et al. 2016), with
 * rstd = 1/sqrt(var + eps) and the biased variance, as nn.LayerNorm. Saves mean[N] and rstd[N]. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, size_t C, float eps);

/** The parameter gradients of layernorm_forward alone, ACCUMULATED (+=): with x̂ = (inp − mean)·rstd,
 *   dweight[C] += Σ_n dout ⊙ x̂,   dbias[C] += Σ_n dout
 * over the N rows of dout[N, C] and inp[N, C], summed in double over blocks of 64 columns, each
 * block walking the rows in order (independent of the thread count). Either output may be NULL. */
void layernorm_param_grads(float *dweight, float *dbias, const float *dout, const float *inp, const float *mean,
                           const float *rstd, size_t N, size_t C);

/** Backward of layernorm_forward from the saved mean[N] and rstd[N]; all ACCUMULATED (+=):
 * with x̂ = (inp − mean)·rstd and g = dout ⊙ weight, per row
 *   dinp[N, C] += rstd · (g − mean_c(g) − x̂ · mean_c(g ⊙ x̂))
 *   dweight[C] += Σ_n dout ⊙ x̂,   dbias[C] += Σ_n dout   (summed in double, deterministic).
 * dweight / dbias may be NULL. dinp must not alias dout or inp. */
void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                        const float *weight, const float *mean, const float *rstd, size_t N, size_t C);

/* ---- softmax.c --------------------------------------------------------------------------- */

/** In place over one row of n logits; entry j is masked (weight 0) if mask[j] != 0 (mask may be
 * NULL) or j >= limit (limit = t + 1 gives the causal mask, limit = n none):
 * x ← exp(x − max) / Σ exp(x − max) over the unmasked entries. A row with every entry masked
 * becomes all zeros (never NaN). Returns 0 if the row was fully masked, 1 otherwise. */
int softmax_row_masked(float *x, const uint8_t *mask, size_t n, size_t limit);

/** The index of the largest of x[0..n) (greedy decoding's token, a row of logits): the first one
 * where several are equal (−0 and +0 are equal), NaN never chosen — the result of the scalar scan
 * `best = 0; for j: if (x[j] > x[best]) best = j`, so 0 when x[0] is NaN (nothing is larger than
 * a NaN), 0 for n = 0 and for a row of −∞. Vectorised: the max over the row, then its first
 * index. */
size_t row_argmax(const float *x, size_t n);

/** out[N, V] = log_softmax(inp[N, V]) per row, max-subtracted. out may equal inp. */
void log_softmax_forward(float *out, const float *inp, size_t N, size_t V);

/** lse[n] = log Σ_j exp(inp[n, j]) for each row n of inp[N, V] not marked in skip (nullable, N
 * bytes; skipped rows' lse untouched): the very float log_softmax_forward subtracts, so
 * inp[n, j] − lse[n] is bitwise its log-probability. For beam search, which needs a few
 * log-probabilities per row and need not write all V. */
void log_softmax_lse(float *lse, const float *inp, const uint8_t *skip, size_t N, size_t V);

/** Backward of log_softmax_forward from its output out[N, V] (the log-probabilities), ACCUMULATED:
 *   dinp[n, j] += dout[n, j] − exp(out[n, j]) · Σ_k dout[n, k].
 * dinp must not alias dout or out. */
void log_softmax_backward(float *dinp, const float *dout, const float *out, size_t N, size_t V);

/* ---- attention.c ------------------------------------------------------------------------- */

/** The shapes, layouts, masks and extras of one multi-head attention call (attn_forward,
 * attn_backward). Build it with attn_args_make and set what differs.
 *
 * Scores (Vaswani et al. 2017, eq. 1, with an additive bias as relative position encodings need:
 * Shaw et al. 2018 eq. 5, Raffel et al. 2020 §2.1, Press et al. 2022 §3):
 *   score[b, h, t, s] = Q[b, t, h]·K[b, s, h] / √d_k + bias[b, h, t, s]     (masked: −∞)
 *   P = softmax_s(score),  P' = dropout(P),  out[b, t, h] = Σ_s P'[b, h, t, s] V[b, s, h].
 * Relative position representations (Shaw et al. 2018, eq. 3–5), when rel_k / rel_v are set,
 * with r(t, s) = rel_clip + clip(s − (q_pos0 + t), −rel_clip, rel_clip):
 *   score[b, h, t, s] += Q[b, t, h]·a^K[r(t, s)] / √d_k,   out[b, t, h] += Σ_s P'[b, h, t, s] a^V[r(t, s)]
 * Per query the 2k+1 dot products are taken once for the keys that share a row (never a
 * (T, S, d_k) tensor); NULL tables cost nothing.
 * Positions: query t sits at position q_pos0 + t, key s at position s. The causal (look-ahead)
 * mask of §3.2.3 masks key s for query t when s > q_pos0 + t, so a block of new positions
 * against a KV cache (q_pos0 = cached length, S = cached length + T) computes exactly the rows
 * q_pos0.. of the whole-sequence call. */
typedef struct {
    const ops_kernels *kernels;   /* the context's kernel table: the products' route (kernels.h) */
    size_t B, T, S, H, d_k;       /* batch rows, queries per row, keys per row, heads, head width */
    size_t q_stride, q_bstride;   /* query (b, t) starts at q + b·q_bstride + t·q_stride; head h at
                                     column h·d_k; dq is laid out the same way */
    size_t kv_stride, kv_bstride; /* key (b, s) at k + b·kv_bstride + s·kv_stride (v, dk, dv alike);
                                     a KV cache of capacity C per row has kv_bstride = C·kv_stride */
    const uint8_t *key_pad;       /* nullable: key_pad[b·key_pad_bstride + s] != 0 masks key s */
    size_t key_pad_bstride;
    int causal;                   /* 1: mask key s for query t when s > q_pos0 + t */
    size_t q_pos0;                /* position of query 0 (0 for a whole sequence) */
    const float *bias;            /* nullable additive bias, element (b, h, t, s) at
                                     bias[b·bias_bstride + h·bias_hstride + t·bias_tstride + s];
                                     a stride of 0 broadcasts over that index */
    size_t bias_bstride, bias_hstride, bias_tstride;
    float dropout_p;              /* inverted dropout on P (training, §5.4); 0: none */
    uint64_t dropout_seed;        /* keep mask of element i of [B, H, T, S]: dropout_keep(seed, i, p) */
    const float *rel_k;           /* nullable (2·rel_clip + 1, d_k): relative key embeddings a^K of
                                     Shaw et al. 2018, row rel_clip + clip(s − (q_pos0 + t), ±rel_clip)
                                     for query t and key s, shared by heads and batch rows */
    const float *rel_v;           /* nullable (2·rel_clip + 1, d_k): relative value embeddings a^V */
    size_t rel_clip;              /* k: offsets beyond ±k share the edge rows */
    float *drel_k, *drel_v;       /* attn_backward: nullable, (2·rel_clip + 1, d_k), ACCUMULATED */
    size_t kv_heads;              /* grouped-query attention (Ainslie et al. 2023, "GQA", §2.2),
                                     attn_forward only: the keys and values have kv_heads heads
                                     (dividing H) and query head h reads key/value head
                                     h / (H / kv_heads), at column (h / (H / kv_heads))·d_k of k and
                                     v; 0 (attn_args_make) or H: one key/value head per query head.
                                     attn_backward and the fused kernels require 0 or H */
    const int32_t *kv_row;        /* attn_forward only (attn_backward requires NULL): nullable (B),
                                     batch row b reads the keys, values and key_pad row of row
                                     kv_row[b] (k + kv_row[b]·kv_bstride, key_pad + kv_row[b]·
                                     key_pad_bstride): beams of one sentence share its memory */
    const int32_t *q_pos;         /* attn_forward only, with T = 1 only (one query per row: decoding
                                     steps; attn_forward asserts it, as layer.c's row_pos): nullable
                                     (B), rows at different positions (a KV cache whose rows hold
                                     different lengths): row b's query sits at q_pos[b] (q_pos0 is
                                     not read) and the row has keys 0..q_pos[b] only (q_pos[b] + 1 <=
                                     S), so row b is computed as the call with S = q_pos[b] + 1 and
                                     q_pos0 = q_pos[b] computes it, bit for bit; probs and the bias
                                     keep the strides of S. NULL (attn_args_make): every row at
                                     q_pos0 with S keys */
} attn_args;

/** attn_args for a packed batch on kernel table `kern`: q_bstride = T·q_stride, kv_bstride =
 * S·kv_stride, key_pad stride S; no mask, no bias, no dropout, q_pos0 = 0. */
attn_args attn_args_make(const ops_kernels *kern, size_t B, size_t T, size_t S, size_t H, size_t d_k, size_t q_stride,
                         size_t kv_stride);

/** Multi-head scaled dot-product attention (Vaswani et al. 2017, eq. 1 and §3.2.2) as attn_args
 * describes. out [B, T, H·d_k] (contiguous, heads concatenated before W_O); probs [B, H, T, S]
 * saves P; probs_drop [B, H, T, S] saves P' (required when dropout_p > 0, else ignored and may be
 * NULL). A query whose keys are all masked gets a zero row in probs and out, never NaN, whatever
 * the (finite or −∞) bias: a +∞ or NaN bias is the caller's bug.
 * Parallel over B×H; T == 1 uses matrix–vector products (attn_row_scores, attn_row_values). No
 * allocation. */
void attn_forward(float *out, float *probs, float *probs_drop, const float *q, const float *k,
                  const float *v, const attn_args *a);

/** One query over one head (src/ops/attention_decode.c): P[s] = scale · q · K_s for s < S, q (d_k),
 * K_s = K + s·kv_stride (d_k floats). AVX-512 kernel chosen at run time, else BLIS's gemv; each
 * score computed the same way whatever S and the key's place. Serial; no allocation. */
void attn_row_scores(const ops_kernels *kern, float *P, const float *q, const float *K, size_t S, size_t d_k, size_t kv_stride, float scale);

/** O (d_k) = Σ_{s < S} P[s] · V_s, V_s = V + s·kv_stride (d_k floats): O is written (S = 0 gives
 * zeros). As attn_row_scores. */
void attn_row_values(const ops_kernels *kern, float *O, const float *P, const float *V, size_t S, size_t d_k, size_t kv_stride);

/** Backward of attn_forward. ACCUMULATES (+=) into dq, dk, dv, laid out like q, k and v (for
 * self-attention these may be column blocks of one packed (N, 3d) gradient). dout [B, T, H·d_k].
 * probs / probs_drop: what the forward saved (probs_drop NULL when there was no dropout).
 * dprobs [B, H, T, S]: the caller's workspace; on return it holds dL/d(score) — which is exactly
 * dL/d(bias[b, h, t, s]) — so a position encoding that owns the bias reduces it into its own
 * parameter gradients. Masked keys and fully masked rows get zero gradient, never NaN.
 * Per (b, h), with dP' = dO·Vᵀ: dV += P'ᵀ·dO, dS = P' ⊙ dP' − P ⊙ rowsum(P' ⊙ dP'),
 * dQ += dS·K/√d_k, dK += dSᵀ·Q/√d_k. CBLAS per (b, h), parallel over B×H; no allocation.
 * Relative terms (attn_args rel_k / rel_v): dP' gains dO·a^V[r]ᵀ and dQ gains dS·a^K[r]/√d_k;
 * drel_k[r] += Σ dS[b, h, t, s]·Q[b, t, h]/√d_k and drel_v[r] += Σ P'[b, h, t, s]·dO[b, t, h] over
 * the (b, h, t, s) with r(t, s) = r, in a second pass parallel over the rows r (a fixed order: the
 * result does not depend on the thread count). */
void attn_backward(float *dq, float *dk, float *dv, float *dprobs, const float *dout,
                   const float *probs, const float *probs_drop, const float *q, const float *k,
                   const float *v, const attn_args *a);

/* ---- attention_fused.c ------------------------------------------------------------------- */
/* The fused path (docs/KERNELS.md, "Attention"): the same attention as attn_forward/attn_backward
 * without any [B, H, T, S] tensor (Dao et al. 2022, FlashAttention, Alg. 1, 2 and 4). */

/** Query and key tile sizes of the fused kernels: a thread's scratch is three BQ × BK tiles
 * (smaller when T < BQ or S < BK). */
#define ATTN_FUSED_BQ 128
#define ATTN_FUSED_BK 256

/** Floats of the workspace attn_fused_forward/backward need for `slots` threads (slots <= 0 counts
 * as 1) on attentions of at most T queries and S keys: slots · (3·bq·bk + 2·bq) with
 * bq = min(T, ATTN_FUSED_BQ), bk = min(S, ATTN_FUSED_BK). */
size_t attn_fused_workspace_floats(size_t T, size_t S, int slots);

/** attn_forward without P: per (b, h) and tile of ATTN_FUSED_BQ queries, the scores of
 * ATTN_FUSED_BK keys at a time (Q Kᵀ/√d_k + bias, masked as attn_args says), an online softmax
 * (running max m and sum l; the output accumulator rescaled by e^(m_old − m_new)) and
 * out += P'·V per tile, P' = P with attn_forward's dropout mask (dropout_keep of the element's index
 * in [B, H, T, S]): the same numbers as attn_forward up to float rounding.
 * out [B, T, H·d_k]; lse [B, H, T] receives each query row's log-sum-exp of its scores
 * (m + log l), +∞ for a row whose keys are all masked (its output row is 0, never NaN).
 * a->rel_k and a->rel_v must be NULL (Shaw's tables stay on the reference path). ws: at least
 * attn_fused_workspace_floats(a->T, a->S, slots) floats; at most `slots` threads run (parallel over
 * B×H, the result independent of their number). No allocation. */
void attn_fused_forward(float *out, float *lse, const float *q, const float *k, const float *v,
                        const attn_args *a, float *ws, int slots);

/** Backward of attn_fused_forward, ACCUMULATING (+=) into dq, dk, dv like attn_backward (which it
 * matches up to float rounding), from out and lse of that forward and the same attn_args (masks,
 * bias, dropout seed and p). Per (b, h), query tile i and key tile j (Dao et al. 2022, Alg. 4):
 * P = exp(S − lse) recomputed, P' = P ⊙ M/(1 − p) with M re-derived by dropout_keep,
 * D_t = rowsum(dO ⊙ O) (= Σ_s P'·dP'), dV_j += P'ᵀ·dO_i, dP' = dO_i·V_jᵀ, dS = P' ⊙ dP' − P·D,
 * dQ_i += dS·K_j/√d_k, dK_j += dSᵀ·Q_i/√d_k. dL/d(score) is never materialised: a bias that
 * needs a gradient (T5) must take attn_backward. ws and slots as attn_fused_forward. */
void attn_fused_backward(float *dq, float *dk, float *dv, const float *dout, const float *out,
                         const float *lse, const float *q, const float *k, const float *v,
                         const attn_args *a, float *ws, int slots);

/* ---- embedding.c ------------------------------------------------------------------------- */

/** out[N, d] = table[ids[n], :] · scale (scale = √d_model in the paper, §3.4). Ids must already
 * be checked against the vocabulary. */
void embedding_forward(float *out, const int32_t *ids, const float *table, float scale, size_t N,
                       size_t d);

/** Backward of embedding_forward, ACCUMULATED: dtable[ids[n], :] += scale · dout[n, :].
 * Repeated ids add up; the threads split the columns, so there are no races and the result does
 * not depend on the thread count. */
void embedding_backward(float *dtable, const float *dout, const int32_t *ids, float scale, size_t N,
                        size_t d);

/* ---- position.c -------------------------------------------------------------------------- */

/** The sinusoidal table's column order and options (docs/POSITION.md, section sinusoidal). */
typedef struct {
    int concat;   /* 0: interleaved, sin at column 2i, cos at 2i+1 (the paper; odd d: the last column
                     is a sine); 1: sines in [0, d/2), cosines in [d/2, d) (tensor2tensor, fairseq;
                     d even) */
    int zero_pad; /* 1: position 0 adds the zero vector (TF's zero_pad) */
    double scale; /* every value times this: 1.0, or √d_model for TF's scale */
    int t2t_freq; /* 0: ω_i = 10000^(−2i/d) (the paper); 1: ω_i = 10000^(−i/max(d/2−1, 1))
                     (tensor2tensor's get_timing_signal_1d, fairseq's SinusoidalPositionalEmbedding;
                     with concat = 1, d even) */
} pe_sinusoid_opts;

/** x[B, T, d] += PE[pos0 + t, :] with the sinusoidal encoding of Vaswani et al. 2017, §3.5:
 * PE(p, 2i) = sin(p·ω_i), PE(p, 2i+1) = cos(p·ω_i), ω_i = 10000^(−2i/d) (or tensor2tensor's
 * 10000^(−i/max(d/2−1, 1)) with o->t2t_freq), in log space for any position (no table, nothing
 * truncated), with the columns and options of *o. */
void pe_sinusoidal_add(float *x, size_t B, size_t T, size_t d, size_t pos0, const pe_sinusoid_opts *o);
/* The sinusoidal encoding has no parameters: its backward is the identity (dx passes through). */

/** x[b, t, :] += table[pos0 + t, :] for every batch row b: a learned absolute position table
 * (BERT, Devlin et al. 2019, §3; GPT-2). x (B, T, d), table (at least pos0 + T, d). */
void pos_table_add(float *x, const float *table, size_t B, size_t T, size_t d, size_t pos0);
/** Backward of pos_table_add, ACCUMULATED: dtable[pos0 + t, :] += Σ_b dx[b, t, :]. Threads split
 * the positions; the sum over b is in order, so the result does not depend on the thread count. */
void pos_table_backward(float *dtable, const float *dx, size_t B, size_t T, size_t d, size_t pos0);

/* ---- activation.c ------------------------------------------------------------------------ */

/** out[n] = max(0, inp[n]). out may equal inp. */
void relu_forward(float *out, const float *inp, size_t n);
/** out[n] = inp · Φ(inp) = 0.5·x·(1 + erf(x/√2)), the exact GELU. out may equal inp. */
void gelu_forward(float *out, const float *inp, size_t n);

/** out[n] = x·σ(x) = x / (1 + exp(−x)), x = inp[n]: SiLU / swish (Elfwing et al. 2018), as
 * torch.nn.functional.silu. out may equal inp. */
void silu_forward(float *out, const float *inp, size_t n);

/** dinp[n] += dout[n] · (inp[n] > 0), ACCUMULATED; inp is relu_forward's input. */
void relu_backward(float *dinp, const float *dout, const float *inp, size_t n);
/** dinp[n] += dout[n] · (Φ(x) + x·φ(x)), x = inp[n], φ(x) = exp(−x²/2)/√(2π): the derivative of
 * the exact GELU, ACCUMULATED. */
void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n);
/** dinp[n] += dout[n] · σ(x)(1 + x(1 − σ(x))), x = inp[n]: the derivative of SiLU, ACCUMULATED. */
void silu_backward(float *dinp, const float *dout, const float *inp, size_t n);

/* ---- activation_llm.c: the language-model families' activations (docs/LLM.md) ------------ */

/** out[n] = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), x = inp[n]: the tanh approximation of the
 * GELU (Hendrycks & Gimpel 2016, §2) that GPT-2 uses (transformers' `gelu_new`,
 * NewGELUActivation). It differs from gelu_forward's exact x·Φ(x) by at most ~5e-4 (near
 * |x| ≈ 2; docs/NUMERICS.md). out may equal inp. Inference only. */
void gelu_tanh_forward(float *out, const float *inp, size_t n);

/** The gated SiLU of a SwiGLU FFN (Shazeer 2020, "GLU Variants Improve Transformer", eq. 6;
 * Llama's LlamaMLP): pre[N, 2F] holds each row's gate (columns [0, F)) then up ([F, 2F)), the
 * output of one product with W_gate and W_up stacked; out[N, F] = silu(gate) · up with
 * silu(g) = g / (1 + e^−g). out must not overlap pre. Inference only. */
void silu_glu_forward(float *out, const float *pre, size_t N, size_t F);

/* ---- rmsnorm.c --------------------------------------------------------------------------- */

/** out[N, C] = weight ⊙ (inp · rstd), rstd = 1/√(mean_c(inp²) + eps) per row: RMSNorm (Zhang &
 * Sennrich 2019, eq. 4; Llama's LlamaRMSNorm, in its operation order), the mean of squares summed
 * in double. rstd[N] saved when not NULL. out may equal inp. Inference only. */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, size_t N, size_t C, float eps);

/* ---- dropout.c --------------------------------------------------------------------------- */

/** The keep decision of inverted dropout for element i of a call seeded with `seed`: a
 * counter-based hash (hash_stream: splitmix64, Steele et al. 2014, of seed + golden-gamma·(i+1)),
 * so masks are reproducible and independent of the thread count. Keeps with probability 1 − p.
 * Derive a fresh seed per call from the training tfm_rng (rng_u64) or with hash_site_seed. */
static inline int dropout_keep(uint64_t seed, uint64_t i, float p) {
    const uint64_t z = hash_stream(seed, i + 1u);
    return (float)(z >> 40) * (1.0f / 16777216.0f) >= p; /* uniform in [0, 1), 24 bits */
}

/** Inverted dropout (Srivastava et al. 2014; Vaswani et al. 2017, §5.4), training only:
 * mask[i] = dropout_keep(seed, i, p), out[i] = inp[i] · mask[i] / (1 − p). mask [n] (uint8, 1 =
 * kept) may be NULL if the backward will not need it. p ≥ 1 zeroes everything; p ≤ 0 copies.
 * out may equal inp. */
void dropout_forward(float *out, uint8_t *mask, const float *inp, float p, uint64_t seed, size_t n);
/** dinp[i] += dout[i] · mask[i] / (1 − p), ACCUMULATED (p ≥ 1: adds nothing). */
void dropout_backward(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n);

/* ---- copy_rows.c ------------------------------------------------------------------------- */

/** dst[i][0..n) = src[i][0..n) for i < count, across the thread pool (rows of ~64 KB a chunk;
 * one thread below OPS_PAR_MIN_WORK floats in all). No destination may overlap a source or another
 * destination: the copies run in any order. */
void ops_copy_rows(float *const *dst, const float *const *src, size_t count, size_t n);

/* ---- residual.c -------------------------------------------------------------------------- */
/** out[n] = a[n] + b[n]. out may equal a or b. */
void residual_forward(float *out, const float *a, const float *b, size_t n);
/** Backward of residual_forward: da[n] += dout[n] and db[n] += dout[n], ACCUMULATED; either may
 * be NULL. (With accumulating backwards a residual stream often needs no call at all: pass the
 * same gradient buffer on to both branches.) */
void residual_backward(float *da, float *db, const float *dout, size_t n);

/* ---- loss.c ------------------------------------------------------------------------------ */

/** Cross-entropy with label smoothing, as PyTorch's CrossEntropyLoss(label_smoothing=eps,
 * ignore_index=pad, reduction='mean') (Szegedy et al. 2016; Vaswani et al. 2017, §5.4): the target
 * distribution of a row with target y is q = (1 − eps)·onehot(y) + eps/V over all V classes (pad
 * included), and
 *   losses[n] = −Σ_j q_j · log_softmax(logits[n])_j   (0 for rows whose target is pad),
 * returning the mean of losses over the non-pad rows, and their count in *n_nonpad (nullable).
 * logits [N, V]; targets [N], each in [0, V) or == pad; losses [N] is required (the caller's
 * workspace; the mean is summed from it serially in double, so it is thread-count independent).
 * With no non-pad row the mean is 0 (PyTorch returns NaN there). */
double cross_entropy_forward(float *losses, size_t *n_nonpad, const float *logits,
                             const int32_t *targets, int32_t pad, float eps, size_t N, size_t V);

/** cross_entropy_forward that also keeps each non-pad row's log Σ_j exp(logits[n, j]) in lse[N]
 * (pad rows: not written; lse NULL: none kept, cross_entropy_forward), for
 * cross_entropy_backward_lse: the backward then reads it instead of computing it again (two passes
 * over each row of V logits fewer). lse must not overlap losses or logits. */
double cross_entropy_forward_lse(float *losses, float *lse, size_t *n_nonpad, const float *logits,
                                 const int32_t *targets, int32_t pad, float eps, size_t N, size_t V);

/** Gradient of cross_entropy_forward's MEAN loss, WRITTEN (not accumulated):
 *   dlogits[n, j] = (softmax(logits[n])_j − q_j) / n_nonpad,   0 for pad rows (and when
 *   n_nonpad == 0). dlogits may equal logits (in place: saves a [N, V] buffer). */
void cross_entropy_backward(float *dlogits, const float *logits, const int32_t *targets, int32_t pad,
                            float eps, size_t n_nonpad, size_t N, size_t V);

/** cross_entropy_backward from the log-sum-exps cross_entropy_forward_lse kept for these logits
 * (lse[N], read for non-pad rows only; NULL: computed again, cross_entropy_backward): the same
 * bits either way. lse must not overlap logits or dlogits. */
void cross_entropy_backward_lse(float *dlogits, const float *logits, const float *lse, const int32_t *targets,
                                int32_t pad, float eps, size_t n_nonpad, size_t N, size_t V);

/* ---- update.c ---------------------------------------------------------------------------- */
/* Element-wise optimizer kernels over flat arrays, called by src/train/optim.c (which keeps the
 * step count and the scalar bookkeeping; the threads live here, docs/ARCHITECTURE.md). */

/** One Adam update with torch.optim.Adam's float operation order (1.13, _single_tensor_adam), on
 * the gradient g = grads[i] · grad_scale (one float multiply: clip_grad_norm_'s in-place scaling
 * fused into this pass, the same bits; 1 for none; grads is not written):
 *   m = m·beta1 + (1−beta1)·g;  v = v·beta2 + (1−beta2)·g·g;
 *   p = p − step_size · m / (√v / bc2_sqrt + eps)
 * where step_size = lr/(1 − beta1^t) and bc2_sqrt = √(1 − beta2^t) are computed by the caller. */
void adam_update(float *params, float *m, float *v, const float *grads, float grad_scale, size_t n, float beta1,
                 float one_minus_beta1, float beta2, float one_minus_beta2, float step_size, float bc2_sqrt,
                 float eps);
/** params[i] −= lr · (grads[i] · grad_scale) (the product rounded first, as adam_update). */
void sgd_update(float *params, const float *grads, float grad_scale, size_t n, float lr);
/** Σ x[i]² in double, over blocks fixed by n, each summed in 16 interleaved lanes added in a fixed
 * tree (the same bits for any thread count; within ~n·2⁻⁵³ relative of the exact sum). */
double sum_squares(const float *x, size_t n);
/** x[i] *= s. */
void scale_inplace(float *x, float s, size_t n);

/* ---- fused_ffn.c, fused_norm.c: element-wise work fused around the products ------------------
 * docs/KERNELS.md, section "Element-wise". Each has the unfused kernels above as its reference
 * path (named in its comment) and gives the same bits; tests/unit/ops/test_fused_ffn.c and
 * test_fused_norm.c hold them to it. Masks and parameter-gradient sums are those of the reference
 * kernels, so the results do not depend on the thread count. */

/** The FFN's activations, the `kind` argument of the fused FFN kernels below: the values of
 * tfm_activation (include/tfm/model.h). */
enum { OPS_ACT_RELU = 0, OPS_ACT_GELU = 1, OPS_ACT_SILU = 2 };

/** The FFN's hidden layer after linear1: act[n] = dropout(φ(pre[n])), φ = ReLU, the exact GELU or
 * SiLU (kind OPS_ACT_*), in one pass; mask[n] = dropout_keep(seed, n, p) saved. mask NULL or
 * p ≤ 0: the activation alone (inference). Reference: relu/gelu/silu_forward, then
 * dropout_forward(act, mask, act, p, seed, n). act may equal pre. */
void ffn_act_dropout_forward(float *act, uint8_t *mask, const float *pre, int kind, float p, uint64_t seed,
                             size_t n);

/** Backward of ffn_act_dropout_forward over pre[N, F], in one pass:
 *   dpre[N, F] = dact · mask/(1 − p) · φ'(pre)     WRITTEN (not accumulated); dpre may equal dact
 *   dbias[F]  += Σ_n dpre[n, :]                      ACCUMULATED (linear1's bias gradient), summed
 *                                                    in double in row order; dbias may be NULL.
 * mask NULL or p ≤ 0: no dropout. Reference: dropout_backward and relu/gelu/silu_backward
 * into zeroed buffers, then linear_backward's bias sum. */
void ffn_act_dropout_backward(float *dpre, float *dbias, const float *dact, const uint8_t *mask, const float *pre,
                              int kind, float p, size_t N, size_t F);

/** The position-wise FFN (Vaswani et al. 2017, §3.3, eq. 2) with PyTorch's hidden dropout:
 *   pre[N, F] = x[N, d]·W_1ᵀ + b_1,  act[N, F] = dropout(φ(pre)),  out[N, d] = act·W_2ᵀ + b_2.
 * W_1 (F, d), W_2 (d, F); mask [N·F] as ffn_act_dropout_forward (NULL: no dropout). Saves pre,
 * act and mask for ffn_backward_fused. */
void ffn_forward_fused(const ops_kernels *kern, float *out, float *pre, float *act, uint8_t *mask, const float *x, const float *w1,
                       const float *b1, const float *w2, const float *b2, int kind, float p, uint64_t seed, size_t N,
                       size_t d, size_t F);
/** ffn_forward_fused with both products' kernel chosen for kernel_rows rows (linear_forward_rows). */
void ffn_forward_fused_rows(const ops_kernels *kern, float *out, float *pre, float *act, uint8_t *mask, const float *x, const float *w1,
                            const float *b1, const float *w2, const float *b2, int kind, float p, uint64_t seed,
                            size_t N, size_t d, size_t F, size_t kernel_rows);

/** Backward of ffn_forward_fused from dout[N, d]: dx[N, d], dw1, db1, dw2, db2 ACCUMULATED (+=; any
 * parameter gradient may be NULL); dhid [N, F] is the caller's workspace (overwritten: the product
 * dout·W_2 is WRITTEN into it, then the activation/dropout backward runs in place with db1's sum).
 * Reference: linear_backward, dropout_backward, relu/gelu_backward, linear_backward. */
void ffn_backward_fused(const ops_kernels *kern, float *dx, float *dw1, float *db1, float *dw2, float *db2, float *dhid, const float *dout,
                        const float *x, const float *pre, const float *act, const uint8_t *mask, const float *w1,
                        const float *w2, int kind, float p, size_t N, size_t d, size_t F);

/** The exit of a residual wrapper, one pass per row of C (Vaswani et al. 2017, §3.1, §5.4):
 *   res[N, C] = x + dropout(sub)   (mask[N·C] saved; mask NULL or p ≤ 0: no dropout)
 *   post-LN (ln_out != NULL): ln_out[N, C] = LayerNorm(res) as layernorm_forward, with mean[N] and
 *   rstd[N] saved; pre-LN: ln_out, mean, rstd NULL. sub is not modified.
 * Reference: dropout_forward (in place on sub), residual_forward, layernorm_forward. */
void residual_dropout_layernorm_forward(float *res, uint8_t *mask, float *ln_out, float *mean, float *rstd,
                                        const float *x, const float *sub, const float *weight, const float *bias,
                                        float p, uint64_t seed, size_t N, size_t C, float eps);

/** Backward of the post-LN exit, from dout[N, C] = dL/d LayerNorm(res):
 *   dres[N, C] = LayerNorm backward of dout (layernorm_backward's formula), WRITTEN; dres may
 *                equal dout (in place)
 *   dsub[N, C] = dres · mask/(1 − p), WRITTEN (the sub-layer's output gradient through its
 *                dropout; mask NULL or p ≤ 0: a copy of dres); dsub NULL: not wanted
 *   dweight[C], dbias[C] ACCUMULATED (nullable), summed in double in row order.
 * Reference: layernorm_backward into a zeroed buffer, then dropout_backward into a zeroed one. */
void layernorm_dropout_backward(float *dres, float *dsub, float *dweight, float *dbias, const float *dout,
                                const float *res, const float *weight, const float *mean, const float *rstd,
                                const uint8_t *mask, float p, size_t N, size_t C);

/** Fills BLIS's internal pools (small blocks, packing buffers) for `threads` products running at
 * once (at most 64), so that later products allocate nothing however they overlap; once per
 * process for the largest count asked (thread-safe). Called by context_reserve with
 * tfm_get_threads(): a training step then makes no allocator call (test_step_noalloc). */
void ops_blas_reserve(int threads);

/** dinp[i] = dout[i] · mask[i]/(1 − p), WRITTEN (p ≥ 1: zeros): dropout_backward without the
 * zeroed buffer it accumulates into. */
void dropout_backward_write(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n);

#endif
