/* Which small-product kernel runs, and for which sizes (gemm_small.h; docs/KERNELS.md, "Small
 * products"). The instruction set is read from cpuid at run time (cpu.h), never
 * assumed from the build or the CPU model: the portable build runs the AVX2 or AVX-512 kernel on a
 * CPU that has it and BLIS on any other. */
#include "gemm_small.h"

#include "cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* TFM_GEMM, read once: −1 not read yet, 0 unset (or another value), 1 "blis", 2 "small". Every
 * thread that reads it finds the same value, so the race is harmless. */
enum { ENV_UNREAD = -1, ENV_DEFAULT = 0, ENV_BLIS = 1, ENV_SMALL = 2 };
static _Atomic int g_env = ENV_UNREAD;
/* gemm_small_select's switch (1: the default) */
static _Atomic int g_enabled = 1;

static int env_mode(void) {
    int m = atomic_load_explicit(&g_env, memory_order_relaxed);
    if (m == ENV_UNREAD) {
        const char *env = getenv("TFM_GEMM");
        m = !env ? ENV_DEFAULT : strcmp(env, "blis") == 0 ? ENV_BLIS : strcmp(env, "small") == 0 ? ENV_SMALL : ENV_DEFAULT;
        atomic_store_explicit(&g_env, m, memory_order_relaxed);
    }
    return m;
}

/* The AVX-512 kernel copies transposed panels with the AVX2 file's transposes: it needs both. Read
 * at every call (cheap), so ops_cpu_avx512_select() reaches this dispatch too. */
static gemm_small_isa cpu_isa(void) {
    if (ops_cpu_avx2_fma() && ops_cpu_avx512()) return GEMM_SMALL_AVX512;
    if (ops_cpu_avx2_fma()) return GEMM_SMALL_AVX2;
    return GEMM_SMALL_NONE;
}

gemm_small_isa gemm_small_active(void) {
    if (!atomic_load_explicit(&g_enabled, memory_order_relaxed) || env_mode() == ENV_BLIS) return GEMM_SMALL_NONE;
    return cpu_isa();
}

void gemm_small_select(int enabled) { atomic_store_explicit(&g_enabled, enabled != 0, memory_order_relaxed); }

gemm_small_isa gemm_small_choice(int trans_a, int trans_b, size_t M, size_t N, size_t K) {
    (void)trans_b;
    if (M == 0 || N == 0) return GEMM_SMALL_NONE;
    const gemm_small_isa isa = gemm_small_active();
    if (isa == GEMM_SMALL_NONE || env_mode() == ENV_SMALL || M * N * (K > 0 ? K : 1) <= GEMM_SMALL_MAX_MACS)
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
