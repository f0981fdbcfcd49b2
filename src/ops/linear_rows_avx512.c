/* The AVX-512 kernel of linear_rows_forward (linear_rows.c): out[n, j] = bias[j] + x_n · w_j for a
 * block of up to 4 input rows × 4 weight rows, 16 accumulators of 16 lanes over IC, then one
 * reduction of the 16 accumulators into one vector. Register blocking: per 16 values of IC, 4 loads
 * of the weight, 4 of the input, 16 FMAs — the weight is read once per 4 rows, not once per row as
 * in the plain kernel, which is what makes it worth it up to batch-32 and beam-4 × batch-32 steps.
 *
 * Every output goes through the same arithmetic, whatever its position in the block, the number
 * of rows, or the thread count: lane l of its accumulator sums k ≡ l (mod 16) in increasing k (FMA,
 * a masked tail), and the reduction (avx512_reduce16) adds the 16 lanes of every accumulator in
 * the same fixed tree. A block with fewer than 4 rows or columns repeats its last one and writes
 * only the real outputs. So a row's outputs do not depend on the other rows of the call (a
 * sentence decodes to the same bits alone or in a batch) — test_linear_rows checks this. Every
 * function here holds AVX-512 code: helpers are always inlined into the *_avx512 entry point
 * (scripts/check-portable allows AVX only in functions so named). */
#include "cpu.h"
#include "linear_rows_internal.h"

#if OPS_X86_KERNELS
#include "avx512_reduce.h"

#define ATTR __attribute__((target("avx512f")))

/* R (1..4) input rows x[r] × 4 weight rows w[c]: tot[4c + r] = x_r · w_c (rows r >= R repeat the
 * last one in the reduction, so each output's tree is the same as in a full block) */
ATTR static inline __attribute__((always_inline)) void block(float tot[16], const float *const x[4],
                                                             const float *const w[4], size_t IC, int R) {
    __m512 acc[4][4];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) acc[r][c] = _mm512_setzero_ps();
    size_t k = 0;
    for (; k + 16 <= IC; k += 16) {
        const __m512 w0 = _mm512_loadu_ps(w[0] + k), w1 = _mm512_loadu_ps(w[1] + k);
        const __m512 w2 = _mm512_loadu_ps(w[2] + k), w3 = _mm512_loadu_ps(w[3] + k);
        for (int r = 0; r < R; r++) {
            const __m512 xv = _mm512_loadu_ps(x[r] + k);
            acc[r][0] = _mm512_fmadd_ps(xv, w0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(xv, w1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(xv, w2, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(xv, w3, acc[r][3]);
        }
    }
    if (k < IC) {
        const __mmask16 m = (__mmask16)((1u << (IC - k)) - 1u);
        const __m512 w0 = _mm512_maskz_loadu_ps(m, w[0] + k), w1 = _mm512_maskz_loadu_ps(m, w[1] + k);
        const __m512 w2 = _mm512_maskz_loadu_ps(m, w[2] + k), w3 = _mm512_maskz_loadu_ps(m, w[3] + k);
        for (int r = 0; r < R; r++) {
            const __m512 xv = _mm512_maskz_loadu_ps(m, x[r] + k);
            acc[r][0] = _mm512_fmadd_ps(xv, w0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(xv, w1, acc[r][1]);
            acc[r][2] = _mm512_fmadd_ps(xv, w2, acc[r][2]);
            acc[r][3] = _mm512_fmadd_ps(xv, w3, acc[r][3]);
        }
    }
    __m512 v[16];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) v[r * 4 + c] = acc[r < R ? r : R - 1][c];
    _mm512_storeu_ps(tot, avx512_reduce16(v));
}

ATTR void linear_rows_cols_avx512(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                                  size_t IC, size_t OC, size_t j0, size_t j1) {
    float tot[16];
    for (size_t j = j0; j < j1; j += 4) {
        const size_t nc = j1 - j < 4 ? j1 - j : 4;
        const float *w[4];
        for (size_t c = 0; c < 4; c++) w[c] = weight + (j + (c < nc ? c : nc - 1)) * IC;
        for (size_t n = 0; n < N; n += 4) {
            const size_t nr = N - n < 4 ? N - n : 4;
            const float *x[4];
            for (size_t r = 0; r < 4; r++) x[r] = inp + (n + (r < nr ? r : nr - 1)) * IC;
            switch (nr) { /* one instance per row count: the row loop unrolled, no wasted FMAs */
            case 4: block(tot, x, w, IC, 4); break;
            case 3: block(tot, x, w, IC, 3); break;
            case 2: block(tot, x, w, IC, 2); break;
            default: block(tot, x, w, IC, 1); break;
            }
            for (size_t r = 0; r < nr; r++)
                for (size_t c = 0; c < nc; c++)
                    out[(n + r) * OC + j + c] = (bias ? bias[j + c] : 0.0f) + tot[4 * c + r];
        }
    }
}
#else /* no x86: never called (no kernel table has the AVX-512 isa there) */
void linear_rows_cols_avx512(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                             size_t IC, size_t OC, size_t j0, size_t j1) {
    (void)out, (void)inp, (void)weight, (void)bias, (void)N, (void)IC, (void)OC, (void)j0, (void)j1;
}
#endif
