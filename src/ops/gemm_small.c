/* Which small-product kernel runs, and for which sizes (gemm_small.h; docs/KERNELS.md, "Small
 * products"), by the context's kernel table (kernels.h), whose instruction set is what the CPU
 * runs (cpuid at run time), never assumed from the build or the CPU model: the portable build runs
 * the AVX2 or AVX-512 kernel on a CPU that has it and BLIS on any other. */
#include "gemm_small.h"

#include <string.h>

gemm_small_isa gemm_small_active(const ops_kernels *k) {
    if (k->gemm == OPS_GEMM_BLIS) return GEMM_SMALL_NONE;
    return k->isa == OPS_ISA_AVX512 ? GEMM_SMALL_AVX512 : k->isa == OPS_ISA_AVX2 ? GEMM_SMALL_AVX2 : GEMM_SMALL_NONE;
}

gemm_small_isa gemm_small_choice(const ops_kernels *k, int trans_a, int trans_b, size_t M, size_t N, size_t K) {
    (void)trans_b;
    if (M == 0 || N == 0) return GEMM_SMALL_NONE;
    const gemm_small_isa isa = gemm_small_active(k);
    if (isa == GEMM_SMALL_NONE || k->gemm == OPS_GEMM_SMALL || M * N * (K > 0 ? K : 1) <= GEMM_SMALL_MAX_MACS)
        return isa;
    /* Above the bound (the linear layers' tiles): op(A) read in place (A·B, A·Bᵀ) at any size; a
     * transposed A (Aᵀ·B: the weight gradients) only with AVX-512, whose 12-row tiles use each
     * cache line of A they broadcast from twice as often as AVX2's 6-row ones (gemm_small.h). */
    return !trans_a || isa == GEMM_SMALL_AVX512 ? isa : GEMM_SMALL_NONE;
}

void gemm_small(gemm_small_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc) {
    if (isa == GEMM_SMALL_AVX512)
        gemm_small_avx512(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, NULL, C, ldc);
    else if (isa == GEMM_SMALL_AVX2)
        gemm_small_avx2(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, NULL, C, ldc);
}

void gemm_small_bias(gemm_small_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                     const float *A, size_t lda, const float *B, size_t ldb, const float *bias, float *C, size_t ldc) {
    if (isa == GEMM_SMALL_AVX512)
        gemm_small_avx512(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, 1.0f, bias, C, ldc);
    else if (isa == GEMM_SMALL_AVX2)
        gemm_small_avx2(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, 1.0f, bias, C, ldc);
}

void gemm_small_copy_rows(float *band, const float *a, size_t lda, int mr, size_t kc) {
    for (int r = 0; r < mr; r++)
        memcpy(band + (size_t)r * (GEMM_SMALL_KC + GEMM_SMALL_A_PAD), a + (size_t)r * lda, kc * sizeof *band);
}
