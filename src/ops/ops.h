/* Kernels of the Transformer, each a plain function over row-major float tensors, llm.c style:
 * outputs first, then inputs, then sizes. Forward functions save exactly what the backward needs.
 * Only this folder calls CBLAS or opens OpenMP regions (DESIGN.md §1).
 *
 * Shape letters: N rows (= B·T flattened), B batch, T query positions, S key positions,
 * C / d model width, H heads, d_k = d / H, V vocabulary. */
#ifndef TFM_OPS_H
#define TFM_OPS_H

#include <stddef.h>
#include <stdint.h>

/* ---- matmul.c ---------------------------------------------------------------------------- */

/** Sets the thread count of the BLAS and of our OpenMP regions (n <= 0: all cores). */
void ops_set_threads(int n);
int ops_threads(void);

/** out[N, OC] = inp[N, IC] · weight[OC, IC]ᵀ + bias[OC] — nn.Linear; bias may be NULL. CBLAS. */
void linear_forward(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    size_t IC, size_t OC);

/* ---- layernorm.c ------------------------------------------------------------------------- */

/** out[N, C] = (inp − mean) · rstd · weight + bias, per row over C (Ba et al. 2016), with
 * rstd = 1/sqrt(var + eps) and the biased variance, as nn.LayerNorm. Saves mean[N] and rstd[N]. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, size_t C, float eps);

/* ---- softmax.c --------------------------------------------------------------------------- */

/** In place over one row of n logits; entry j is masked (weight 0) if mask[j] != 0 (mask may be
 * NULL) or j >= limit (limit = t + 1 gives the causal mask, limit = n none):
 * x ← exp(x − max) / Σ exp(x − max) over the unmasked entries. A row with every entry masked
 * becomes all zeros (never NaN). Returns 0 if the row was fully masked, 1 otherwise. */
int softmax_row_masked(float *x, const uint8_t *mask, size_t n, size_t limit);

/** out[N, V] = log_softmax(inp[N, V]) per row, max-subtracted. out may equal inp. */
void log_softmax_forward(float *out, const float *inp, size_t N, size_t V);

/* ---- attention.c ------------------------------------------------------------------------- */

/** Multi-head scaled dot-product attention (Vaswani et al. 2017, eq. 1 and §3.2.2):
 *   for each batch b and head h:  P = softmax(Q_h K_hᵀ / √d_k + M),  out_h = P V_h
 * q  : row (b, t) of the queries starts at q + (b·T + t)·q_stride; head h at column h·d_k.
 * k, v: row (b, s) starts at k + (b·S + s)·kv_stride (likewise v); head h at column h·d_k.
 * key_pad [B, S] (nullable): 1 where the key is padding (masked for every query).
 * causal: 1 masks keys s > t (the decoder's look-ahead mask, §3.2.3).
 * out   [B, T, H·d_k]: the heads concatenated (before the output projection).
 * probs [B, H, T, S]: the attention weights P, saved for the backward pass.
 * A query whose keys are all masked gets a zero row in probs and out (never NaN). */
void attention_forward(float *out, float *probs, const float *q, size_t q_stride, const float *k,
                       const float *v, size_t kv_stride, const uint8_t *key_pad, int causal,
                       size_t B, size_t T, size_t S, size_t H, size_t d_k);

/* ---- embedding.c ------------------------------------------------------------------------- */

/** out[N, d] = table[ids[n], :] · scale (scale = √d_model in the paper, §3.4). Ids must already
 * be checked against the vocabulary. */
void embedding_forward(float *out, const int32_t *ids, const float *table, float scale, size_t N,
                       size_t d);

/** x[B, T, d] += PE[pos0 + t, :] with the sinusoidal encoding of Vaswani et al. 2017, §3.5:
 * PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)), computed in log
 * space for any position (no table, nothing truncated). */
void pe_sinusoidal_add(float *x, size_t B, size_t T, size_t d, size_t pos0);

/* ---- activation.c ------------------------------------------------------------------------ */

/** out[n] = max(0, inp[n]). out may equal inp. */
void relu_forward(float *out, const float *inp, size_t n);
/** out[n] = inp · Φ(inp) = 0.5·x·(1 + erf(x/√2)), the exact GELU. out may equal inp. */
void gelu_forward(float *out, const float *inp, size_t n);

/* ---- residual.c -------------------------------------------------------------------------- */

/** out[n] = a[n] + b[n]. out may equal a or b. */
void residual_forward(float *out, const float *a, const float *b, size_t n);

#endif
