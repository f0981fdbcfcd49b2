/* The two matrix–vector products of one query's attention over one head (a decoding step, T = 1,
 * Vaswani et al. 2017 §3.2.1): scores P = scale · K q and output O = Vᵀ P, K and V the head's
 * (S, d_k) slices of the cache at row stride kv_stride. BLIS's gemv pays its set-up at every call
 * (B·H calls per sub-layer and step, S ≈ 40 keys); with AVX-512 these kernels do the work inline:
 * 16 keys at a time, each key's dot product 16 lanes wide over d_k and the 16 sums reduced together
 * (avx512_reduce.h), and the output 64 columns at a time with one FMA chain per 16 columns. Without
 * AVX-512, BLIS (ops_gemv_serial). Every score and output is computed the same way whatever S,
 * the key's place in its block of 16, or the thread (test_attn_decode). */
#include "cpu.h"
#include "ops.h"
#include "parallel.h"

#if OPS_X86_KERNELS
#include "avx512_reduce.h"

#define ATTR __attribute__((target("avx512f")))

ATTR static void scores_avx512(float *P, const float *q, const float *K, size_t S, size_t d_k, size_t kv_stride,
                               float scale) {
    const __m512 sc = _mm512_set1_ps(scale);
    for (size_t s0 = 0; s0 < S; s0 += 16) {
        const size_t ns = S - s0 < 16 ? S - s0 : 16;
        const float *k[16];
        for (size_t i = 0; i < 16; i++) k[i] = K + (s0 + (i < ns ? i : ns - 1)) * kv_stride;
        __m512 acc[16];
        for (int i = 0; i < 16; i++) acc[i] = _mm512_setzero_ps();
        for (size_t c = 0; c < d_k; c += 16) {
            const __mmask16 m = d_k - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (d_k - c)) - 1u);
            const __m512 qv = _mm512_maskz_loadu_ps(m, q + c);
            for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, k[i] + c), acc[i]);
        }
        _mm512_mask_storeu_ps(P + s0, (__mmask16)((1u << ns) - 1u), _mm512_mul_ps(sc, avx512_reduce16_ordered(acc)));
    }
}

ATTR static void values_avx512(float *O, const float *P, const float *V, size_t S, size_t d_k, size_t kv_stride) {
    for (size_t c = 0; c < d_k; c += 64) {
        __mmask16 m[4];
        for (size_t j = 0; j < 4; j++) {
            const size_t c0 = c + 16 * j, left = c0 < d_k ? d_k - c0 : 0;
            m[j] = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
        }
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (size_t s = 0; s < S; s++) {
            const __m512 p = _mm512_set1_ps(P[s]);
            const float *v = V + s * kv_stride + c;
            a0 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m[0], v), a0);
            a1 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m[1], v + 16), a1);
            a2 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m[2], v + 32), a2);
            a3 = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m[3], v + 48), a3);
        }
        _mm512_mask_storeu_ps(O + c, m[0], a0);
        _mm512_mask_storeu_ps(O + c + 16, m[1], a1);
        _mm512_mask_storeu_ps(O + c + 32, m[2], a2);
        _mm512_mask_storeu_ps(O + c + 48, m[3], a3);
    }
}

#else /* no x86: never called (no kernel table has the AVX-512 isa there) */
static void scores_avx512(float *P, const float *q, const float *K, size_t S, size_t d_k, size_t kv_stride,
                          float scale) {
    ops_gemv_serial(0, S, d_k, scale, K, kv_stride, q, 0.0f, P);
}
static void values_avx512(float *O, const float *P, const float *V, size_t S, size_t d_k, size_t kv_stride) {
    ops_gemv_serial(1, S, d_k, 1.0f, V, kv_stride, P, 0.0f, O);
}
#endif

void attn_row_scores(const ops_kernels *kern, float *P, const float *q, const float *K, size_t S, size_t d_k, size_t kv_stride, float scale) {
    if (S == 0) return;
    if (kern->isa == OPS_ISA_AVX512)
        scores_avx512(P, q, K, S, d_k, kv_stride, scale);
    else
        ops_gemv_serial(0, S, d_k, scale, K, kv_stride, q, 0.0f, P);
}

void attn_row_values(const ops_kernels *kern, float *O, const float *P, const float *V, size_t S, size_t d_k, size_t kv_stride) {
    if (S == 0) {
        for (size_t c = 0; c < d_k; c++) O[c] = 0.0f;
        return;
    }
    if (kern->isa == OPS_ISA_AVX512)
        values_avx512(O, P, V, S, d_k, kv_stride);
    else
        ops_gemv_serial(1, S, d_k, 1.0f, V, kv_stride, P, 0.0f, O);
}
