/* One reduction of 16 AVX-512 accumulators into one vector of their 16 lane sums, for the kernels
 * that compute dot products 16 lanes wide (linear_rows_avx512.c, attention_decode.c). Include only
 * from files whose callers are compiled for AVX-512F (__attribute__((target("avx512f")))). */
#ifndef TFM_AVX512_REDUCE_H
#define TFM_AVX512_REDUCE_H

#include <immintrin.h>

/** Lane 4c + r of the result is the sum of the 16 lanes of v[4r + c] (r, c = 0..3), every sum by
 * the same tree, q_i = (v_i + v_{i+8}) + (v_{i+4} + v_{i+12}) for i = 0..3, then
 * (q_0 + q_2) + (q_1 + q_3): the shuffles are symmetric in their operands, so a dot product gives
 * the same bits whichever of the 16 slots it occupies. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 avx512_reduce16(const __m512 v[16]) {
    __m512 s[8], u[4];
    for (int p = 0; p < 8; p++) { /* 128-bit blocks: [v.b0 + v.b2, v.b1 + v.b3, w.b0 + w.b2, w.b1 + w.b3] */
        const __m512 a = v[2 * p], b = v[2 * p + 1];
        s[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    }
    for (int q = 0; q < 4; q++) { /* block j of u[q]: the 4 partial sums of accumulator 4q + j */
        const __m512 a = s[2 * q], b = s[2 * q + 1];
        u[q] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xDD));
    }
    /* within each block: [a0 + a2, b0 + b2, a1 + a3, b1 + b3] */
    const __m512 c0 = _mm512_add_ps(_mm512_unpacklo_ps(u[0], u[1]), _mm512_unpackhi_ps(u[0], u[1]));
    const __m512 c1 = _mm512_add_ps(_mm512_unpacklo_ps(u[2], u[3]), _mm512_unpackhi_ps(u[2], u[3]));
    /* block j: the totals of accumulators j, 4 + j, 8 + j, 12 + j */
    return _mm512_add_ps(_mm512_shuffle_ps(c0, c1, _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(c0, c1, _MM_SHUFFLE(3, 2, 3, 2)));
}

/** The lane order of avx512_reduce16 undone: lane i of the result is the sum of v[i]. */
__attribute__((target("avx512f"), always_inline)) static inline __m512 avx512_reduce16_ordered(const __m512 v[16]) {
    const __m512i idx = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    return _mm512_permutexvar_ps(idx, avx512_reduce16(v));
}

#endif
