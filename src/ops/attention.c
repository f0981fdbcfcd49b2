#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers */
/* Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.1–3.2.2), one (batch, head)
 * pair per OpenMP iteration, each with two CBLAS products on strided views of the packed
 * projections (no copies); and its backward, four CBLAS products per pair. */
#include "ops.h"
#include "parallel.h"

#include <cblas.h>
#include <math.h>

/* The forward of both entry points; probs_drop == NULL means no dropout. */
static void attention_forward_impl(float *out, float *probs, float *probs_drop, const float *q,
                                   size_t q_stride, const float *k, const float *v, size_t kv_stride,
                                   const uint8_t *key_pad, int causal, float p, uint64_t seed,
                                   size_t B, size_t T, size_t S, size_t H, size_t d_k) {
    const float scale = 1.0f / sqrtf((float)d_k);
    const float keep_scale = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    const size_t d = H * d_k;
    (void)ops_threads();
#pragma omp parallel for schedule(dynamic, 1) collapse(2) num_threads(ops_team(B * H * T * S * d_k))
        for (size_t b = 0; b < B; b++) {
            for (size_t h = 0; h < H; h++) {
                const size_t off = ((b * H + h) * T) * S; /* first element of this (b, h) in [B,H,T,S] */
                float *P = probs + off;                   /* (T, S) */
                const float *Q = q + b * T * q_stride + h * d_k;
                const float *K = k + b * S * kv_stride + h * d_k;
                const float *Vh = v + b * S * kv_stride + h * d_k;
                float *O = out + b * T * d + h * d_k;
                if (S > 0 && T > 0)
                    ops_gemm_serial(0, 1, T, S, d_k, scale, Q, q_stride, K, kv_stride, 0.0f, P, S);
                const uint8_t *pad = key_pad ? key_pad + b * S : NULL;
                for (size_t t = 0; t < T; t++) softmax_row_masked(P + t * S, pad, S, causal ? t + 1 : S);
                const float *Pv = P; /* the weights that multiply V */
                if (probs_drop) {
                    float *Pd = probs_drop + off;
                    for (size_t i = 0; i < T * S; i++) {
                        if (p <= 0.0f)
                            Pd[i] = P[i];
                        else
                            Pd[i] = dropout_keep(seed, off + i, p) ? P[i] * keep_scale : 0.0f;
                    }
                    Pv = Pd;
                }
                if (T > 0 && d_k > 0) {
                    if (S > 0)
                        ops_gemm_serial(0, 0, T, d_k, S, 1.0f, Pv, S, Vh, kv_stride, 0.0f, O, d);
                    else
                        for (size_t t = 0; t < T; t++)
                            for (size_t c = 0; c < d_k; c++) O[t * d + c] = 0.0f;
                }
            }
        }
}

void attention_forward(float *out, float *probs, const float *q, size_t q_stride, const float *k,
                       const float *v, size_t kv_stride, const uint8_t *key_pad, int causal,
                       size_t B, size_t T, size_t S, size_t H, size_t d_k) {
    attention_forward_impl(out, probs, NULL, q, q_stride, k, v, kv_stride, key_pad, causal, 0.0f, 0,
                           B, T, S, H, d_k);
}

void attention_forward_dropout(float *out, float *probs, float *probs_drop, const float *q,
                               size_t q_stride, const float *k, const float *v, size_t kv_stride,
                               const uint8_t *key_pad, int causal, float p, uint64_t seed, size_t B,
                               size_t T, size_t S, size_t H, size_t d_k) {
    attention_forward_impl(out, probs, probs_drop, q, q_stride, k, v, kv_stride, key_pad, causal, p,
                           seed, B, T, S, H, d_k);
}

void attention_backward(float *dq, float *dk, float *dv, float *dprobs, const float *dout,
                        const float *probs, const float *probs_drop, const float *q, size_t q_stride,
                        const float *k, const float *v, size_t kv_stride, size_t B, size_t T, size_t S,
                        size_t H, size_t d_k) {
    if (T == 0 || S == 0 || d_k == 0) return; /* no keys: the output was a constant zero */
    const float scale = 1.0f / sqrtf((float)d_k);
    const size_t d = H * d_k;
    (void)ops_threads();
#pragma omp parallel for schedule(dynamic, 1) collapse(2) num_threads(ops_team(B * H * T * S * d_k))
    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < H; h++) {
            const size_t off = ((b * H + h) * T) * S;
            const float *P = probs + off;                        /* (T, S) softmax output */
            const float *Pd = probs_drop ? probs_drop + off : P; /* (T, S) what multiplied V */
            float *dS = dprobs + off;                            /* (T, S) workspace */
            const float *Q = q + b * T * q_stride + h * d_k;     /* (T, d_k), ld q_stride */
            const float *K = k + b * S * kv_stride + h * d_k;    /* (S, d_k), ld kv_stride */
            const float *Vh = v + b * S * kv_stride + h * d_k;
            const float *dO = dout + b * T * d + h * d_k; /* (T, d_k), ld d */
            float *dQ = dq + b * T * q_stride + h * d_k;
            float *dK = dk + b * S * kv_stride + h * d_k;
            float *dV = dv + b * S * kv_stride + h * d_k;
            /* out = P'·V:  dV += P'ᵀ·dO,  dP' = dO·Vᵀ */
            ops_gemm_serial(1, 0, S, d_k, T, 1.0f, Pd, S, dO, d, 1.0f, dV, kv_stride);
            ops_gemm_serial(0, 1, T, S, d_k, 1.0f, dO, d, Vh, kv_stride, 0.0f, dS, S);
            /* Softmax backward through the dropout P' = P ⊙ M/(1−p): with dP = dP' ⊙ M/(1−p),
             * P ⊙ dP = P' ⊙ dP', so dS = P ⊙ (dP − Σ P ⊙ dP) = P' ⊙ dP' − P · Σ(P' ⊙ dP').
             * Masked keys and fully masked rows have P = P' = 0: zero gradient, never NaN. */
            for (size_t t = 0; t < T; t++) {
                float *ds = dS + t * S;
                const float *pr = P + t * S, *pd = Pd + t * S;
                double dot = 0.0;
                for (size_t s = 0; s < S; s++) dot += (double)pd[s] * (double)ds[s];
                const float fdot = (float)dot;
                for (size_t s = 0; s < S; s++) ds[s] = pd[s] * ds[s] - pr[s] * fdot;
            }
            /* scores = Q·Kᵀ/√d_k:  dQ += dS·K/√d_k,  dK += dSᵀ·Q/√d_k */
            ops_gemm_serial(0, 0, T, d_k, S, scale, dS, S, K, kv_stride, 1.0f, dQ, q_stride);
            ops_gemm_serial(1, 0, S, d_k, T, scale, dS, S, Q, q_stride, 1.0f, dK, kv_stride);
        }
    }
}

void attention_query_forward(float *out, float *scores, const float *q, size_t q_stride, const float *k,
                             const float *v, size_t kv_row_stride, size_t kv_batch_stride, size_t L,
                             const uint8_t *key_pad, size_t B, size_t H, size_t d_k) {
    const float scale = 1.0f / sqrtf((float)d_k);
    const size_t d = H * d_k;
    (void)ops_threads();
#pragma omp parallel for schedule(dynamic, 1) collapse(2) num_threads(ops_team(B * H * L * d_k))
    for (size_t b = 0; b < B; b++) {
        for (size_t h = 0; h < H; h++) {
            float *sc = scores + (b * H + h) * L;
            const float *K = k + b * kv_batch_stride + h * d_k, *Vh = v + b * kv_batch_stride + h * d_k;
            float *o = out + b * d + h * d_k;
            if (L == 0) {
                for (size_t c = 0; c < d_k; c++) o[c] = 0.0f;
                continue;
            }
            /* scores = K_h q_h / √d_k, then the weighted sum Vᵀ p: two matrix-vector products */
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)L, (int)d_k, scale, K, (int)kv_row_stride,
                        q + b * q_stride + h * d_k, 1, 0.0f, sc, 1);
            softmax_row_masked(sc, key_pad ? key_pad + b * L : NULL, L, L);
            cblas_sgemv(CblasRowMajor, CblasTrans, (int)L, (int)d_k, 1.0f, Vh, (int)kv_row_stride, sc, 1, 0.0f, o, 1);
        }
    }
}
