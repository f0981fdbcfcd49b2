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

/** Internal names of tfm_set_threads / tfm_get_threads (include/tfm/threads.h): the thread count
 * of every kernel's parallel loops (n <= 0: the default). No OpenMP or BLAS global is changed. */
void ops_set_threads(int n);
int ops_threads(void);

/** out[N, OC] = inp[N, IC] · weight[OC, IC]ᵀ + bias[OC] — nn.Linear; bias may be NULL. BLIS,
 * tiled over the threads (ops_gemm, src/ops/parallel.h). */
void linear_forward(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    size_t IC, size_t OC);

/** Backward of linear_forward, all three ACCUMULATED (+=), by ops_gemm:
 *   dinp[N, IC]     += dout[N, OC] · weight[OC, IC]
 *   dweight[OC, IC] += doutᵀ · inp[N, IC]
 *   dbias[OC]       += Σ_n dout[n, :]
 * dinp, dweight and dbias may each be NULL (not wanted). dinp must not alias dout or weight. */
void linear_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                     const float *weight, size_t N, size_t IC, size_t OC);

/* ---- layernorm.c ------------------------------------------------------------------------- */

/** out[N, C] = (inp − mean) · rstd · weight + bias, per row over C (Ba et al. 2016), with
 * rstd = 1/sqrt(var + eps) and the biased variance, as nn.LayerNorm. Saves mean[N] and rstd[N]. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, size_t C, float eps);

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

/** out[N, V] = log_softmax(inp[N, V]) per row, max-subtracted. out may equal inp. */
void log_softmax_forward(float *out, const float *inp, size_t N, size_t V);

/** Backward of log_softmax_forward from its output out[N, V] (the log-probabilities), ACCUMULATED:
 *   dinp[n, j] += dout[n, j] − exp(out[n, j]) · Σ_k dout[n, k].
 * dinp must not alias dout or out. */
void log_softmax_backward(float *dinp, const float *dout, const float *out, size_t N, size_t V);

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

/** attention_forward with inverted dropout on the attention weights (Vaswani et al. 2017, §5.4;
 * nn.MultiheadAttention's dropout): out_h = P'V_h with P' = P ⊙ M / (1 − p), where the keep mask
 * M of element i of [B, H, T, S] is dropout_keep(seed, i, p) (so it does not depend on the thread
 * count). probs [B, H, T, S] saves P (before dropout), probs_drop [B, H, T, S] saves P'; both are
 * what attention_backward needs. p = 0 gives probs_drop == probs (copied). */
void attention_forward_dropout(float *out, float *probs, float *probs_drop, const float *q,
                               size_t q_stride, const float *k, const float *v, size_t kv_stride,
                               const uint8_t *key_pad, int causal, float p, uint64_t seed, size_t B,
                               size_t T, size_t S, size_t H, size_t d_k);

/** Attention of one query per row over L keys — the newest decoder position against a KV cache
 * (Vaswani et al. 2017, eq. 1, one row of it):
 *   out[b, h] = Σ_s softmax_s(q[b, h]·k[b, s, h] / √d_k + M[b, s]) v[b, s, h]
 * q: row b at q + b·q_stride (heads at h·d_k). k, v: key s of row b at k + b·kv_batch_stride +
 * s·kv_row_stride (likewise v). key_pad [B, L] (nullable, row stride L): 1 = masked.
 * out [B, H·d_k]. scores: workspace of B·H·L floats. All keys masked: a zero row. */
void attention_query_forward(float *out, float *scores, const float *q, size_t q_stride, const float *k,
                             const float *v, size_t kv_row_stride, size_t kv_batch_stride, size_t L,
                             const uint8_t *key_pad, size_t B, size_t H, size_t d_k);

/** Backward of attention_forward (and attention_forward_dropout). ACCUMULATES (+=) into
 *   dq (rows and heads laid out exactly like q: row (b, t) at dq + (b·T + t)·q_stride),
 *   dk, dv (laid out like k and v, stride kv_stride) — for self-attention these are the column
 *   blocks of one packed (N, 3d) gradient, as in the forward.
 * dout [B, T, H·d_k]: gradient of out. probs [B, H, T, S]: the saved P. probs_drop: the saved P'
 * of attention_forward_dropout, or NULL when there was no dropout.
 * dprobs [B, H, T, S]: caller's workspace (overwritten; on return it holds dL/d(scores) before the
 * 1/√d_k scale). Masks need not be passed: masked keys have P = 0 exactly, so their gradient is
 * zero, and a fully masked query row (P all zero) gets zero gradient, never NaN.
 * Per (b, h), with dP' = dO·Vᵀ:  dV += P'ᵀ·dO,  dS = P' ⊙ dP' − P ⊙ rowsum(P' ⊙ dP')  (the
 * softmax backward, through the dropout when P' ≠ P),  dQ += dS·K/√d_k,  dK += dSᵀ·Q/√d_k.
 * CBLAS per (b, h), OpenMP over B×H; no allocation. */
void attention_backward(float *dq, float *dk, float *dv, float *dprobs, const float *dout,
                        const float *probs, const float *probs_drop, const float *q, size_t q_stride,
                        const float *k, const float *v, size_t kv_stride, size_t B, size_t T, size_t S,
                        size_t H, size_t d_k);

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

/** x[B, T, d] += PE[pos0 + t, :] with the sinusoidal encoding of Vaswani et al. 2017, §3.5:
 * PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)), computed in log
 * space for any position (no table, nothing truncated). */
void pe_sinusoidal_add(float *x, size_t B, size_t T, size_t d, size_t pos0);
/* The sinusoidal encoding has no parameters: its backward is the identity (dx passes through). */

/* ---- activation.c ------------------------------------------------------------------------ */

/** out[n] = max(0, inp[n]). out may equal inp. */
void relu_forward(float *out, const float *inp, size_t n);
/** out[n] = inp · Φ(inp) = 0.5·x·(1 + erf(x/√2)), the exact GELU. out may equal inp. */
void gelu_forward(float *out, const float *inp, size_t n);

/** dinp[n] += dout[n] · (inp[n] > 0), ACCUMULATED; inp is relu_forward's input. */
void relu_backward(float *dinp, const float *dout, const float *inp, size_t n);
/** dinp[n] += dout[n] · (Φ(x) + x·φ(x)), x = inp[n], φ(x) = exp(−x²/2)/√(2π): the derivative of
 * the exact GELU, ACCUMULATED. */
void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n);

/* ---- dropout.c --------------------------------------------------------------------------- */

/** The keep decision of inverted dropout for element i of a call seeded with `seed`: a
 * counter-based hash (splitmix64's finaliser, Steele et al. 2014, of seed + golden-ratio·(i+1)),
 * so masks are reproducible and independent of the thread count. Keeps with probability 1 − p.
 * Derive a fresh seed per call from the training tfm_rng, e.g. (rng_u32 << 32) | rng_u32. */
static inline int dropout_keep(uint64_t seed, uint64_t i, float p) {
    uint64_t z = seed + (i + 1u) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f) >= p; /* uniform in [0, 1), 24 bits */
}

/** Inverted dropout (Srivastava et al. 2014; Vaswani et al. 2017, §5.4), training only:
 * mask[i] = dropout_keep(seed, i, p), out[i] = inp[i] · mask[i] / (1 − p). mask [n] (uint8, 1 =
 * kept) may be NULL if the backward will not need it. p ≥ 1 zeroes everything; p ≤ 0 copies.
 * out may equal inp. */
void dropout_forward(float *out, uint8_t *mask, const float *inp, float p, uint64_t seed, size_t n);
/** dinp[i] += dout[i] · mask[i] / (1 − p), ACCUMULATED (p ≥ 1: adds nothing). */
void dropout_backward(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n);

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

/** Gradient of cross_entropy_forward's MEAN loss, WRITTEN (not accumulated):
 *   dlogits[n, j] = (softmax(logits[n])_j − q_j) / n_nonpad,   0 for pad rows (and when
 *   n_nonpad == 0). dlogits may equal logits (in place: saves a [N, V] buffer). */
void cross_entropy_backward(float *dlogits, const float *logits, const int32_t *targets, int32_t pad,
                            float eps, size_t n_nonpad, size_t N, size_t V);

/* ---- update.c ---------------------------------------------------------------------------- */
/* Element-wise optimizer kernels over flat arrays, called by src/train/optim.c (which keeps the
 * step count and the scalar bookkeeping; OpenMP lives here, DESIGN.md §1). */

/** One Adam update with torch.optim.Adam's float operation order (1.13, _single_tensor_adam):
 *   m = m·beta1 + (1−beta1)·g;  v = v·beta2 + (1−beta2)·g·g;
 *   p = p − step_size · m / (√v / bc2_sqrt + eps)
 * where step_size = lr/(1 − beta1^t) and bc2_sqrt = √(1 − beta2^t) are computed by the caller. */
void adam_update(float *params, float *m, float *v, const float *grads, size_t n, float beta1,
                 float one_minus_beta1, float beta2, float one_minus_beta2, float step_size,
                 float bc2_sqrt, float eps);
/** params[i] −= lr · grads[i]. */
void sgd_update(float *params, const float *grads, size_t n, float lr);
/** Σ x[i]² in double, over blocks fixed by n (the same for any thread count). */
double sum_squares(const float *x, size_t n);
/** x[i] *= s. */
void scale_inplace(float *x, float s, size_t n);

#endif
