#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers */
/* Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.1–3.2.2), one (batch, head)
 * pair per OpenMP iteration, each with two CBLAS products on strided views of the packed
 * projections (no copies). */
#include "ops.h"

#include <cblas.h>
#include <math.h>

void attention_forward(float *out, float *probs, const float *q, size_t q_stride, const float *k,
                       const float *v, size_t kv_stride, const uint8_t *key_pad, int causal,
                       size_t B, size_t T, size_t S, size_t H, size_t d_k) {
    const float scale = 1.0f / sqrtf((float)d_k);
    const size_t d = H * d_k;
    (void)ops_threads();
#pragma omp parallel for schedule(static) collapse(2)
        for (size_t b = 0; b < B; b++) {
            for (size_t h = 0; h < H; h++) {
                float *P = probs + ((b * H + h) * T) * S; /* (T, S) */
                const float *Q = q + b * T * q_stride + h * d_k;
                const float *K = k + b * S * kv_stride + h * d_k;
                const float *Vh = v + b * S * kv_stride + h * d_k;
                float *O = out + b * T * d + h * d_k;
                if (S > 0 && T > 0)
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)S, (int)d_k,
                                scale, Q, (int)q_stride, K, (int)kv_stride, 0.0f, P, (int)S);
                const uint8_t *pad = key_pad ? key_pad + b * S : NULL;
                for (size_t t = 0; t < T; t++) softmax_row_masked(P + t * S, pad, S, causal ? t + 1 : S);
                if (T > 0 && d_k > 0) {
                    if (S > 0)
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)d_k, (int)S,
                                    1.0f, P, (int)S, Vh, (int)kv_stride, 0.0f, O, (int)d);
                    else
                        for (size_t t = 0; t < T; t++)
                            for (size_t c = 0; c < d_k; c++) O[t * d + c] = 0.0f;
                }
            }
        }
}
