/* Which small-product kernel runs, and for which sizes (gemm_small.h; docs/KERNELS.md, "Small
 * products"). The instruction set is read from cpuid at run time (cpu.h), never
 * assumed from the build or the CPU model: the portable build runs the AVX2 or AVX-512 kernel on a
 * CPU that has it and BLIS on any other. */
#include "gemm_small.h"

#include "cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* −1: not decided yet; else the gemm_small_isa in use (GEMM_SMALL_NONE when switched off). Every
 * thread that decides finds the same value, so the race is harmless. */
static _Atomic int g_active = -1;
/* 1: TFM_GEMM=small, every product of ops_gemm_serial (no size bound); read with g_active */
static _Atomic int g_unbounded = 0;

static gemm_small_isa cpu_isa(void) {
    if (ops_cpu_avx512()) return GEMM_SMALL_AVX512;
    if (ops_cpu_avx2_fma()) return GEMM_SMALL_AVX2;
    return GEMM_SMALL_NONE;
}

gemm_small_isa gemm_small_active(void) {
    int isa = atomic_load_explicit(&g_active, memory_order_acquire);
    if (isa < 0) {
        const char *env = getenv("TFM_GEMM");
        isa = env && strcmp(env, "blis") == 0 ? GEMM_SMALL_NONE : cpu_isa();
        atomic_store_explicit(&g_unbounded, env && strcmp(env, "small") == 0, memory_order_relaxed);
        atomic_store_explicit(&g_active, isa, memory_order_release); /* publishes g_unbounded */
    }
    return (gemm_small_isa)isa;
}

void gemm_small_select(int enabled) {
    atomic_store_explicit(&g_active, enabled ? (int)cpu_isa() : (int)GEMM_SMALL_NONE, memory_order_relaxed);
}

gemm_small_isa gemm_small_choice(size_t M, size_t N, size_t K) {
    if (M == 0 || N == 0) return GEMM_SMALL_NONE;
    const gemm_small_isa isa = gemm_small_active();
    if (M * N * (K > 0 ? K : 1) > GEMM_SMALL_MAX_MACS && !atomic_load_explicit(&g_unbounded, memory_order_relaxed))
        return GEMM_SMALL_NONE;
    return isa;
}

void gemm_small(gemm_small_isa isa, int trans_a, int trans_b, size_t M, size_t N, size_t K, float alpha,
                const float *A, size_t lda, const float *B, size_t ldb, float beta, float *C, size_t ldc) {
    if (isa == GEMM_SMALL_AVX512)
        gemm_small_avx512(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else if (isa == GEMM_SMALL_AVX2)
        gemm_small_avx2(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
