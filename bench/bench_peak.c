/* bench_tfm peak: the fp32 FMA throughput this CPU reaches, the denominator of the bench's "% of
 * peak" (docs/BENCH.md). The instruction set is found at run time (__builtin_cpu_supports reads
 * cpuid), never assumed from the build: AVX-512F, else AVX2 with FMA, else SSE2 (a multiply and an
 * add: x86-64 without FMA has no fused instruction). Each kernel keeps 12 independent accumulator
 * registers, so a core with 2 FMA pipes of latency 4–5 never waits on a result (Agner Fog's
 * instruction tables: Zen 3 2 × 256-bit FMA/cycle latency 4, Skylake-X 2 × 512-bit latency 4). The
 * accumulator loop is unrolled by force: at -O2 GCC kept the array in memory, and the stores and
 * reloads between FMAs held a Zen 5 core to a third of its rate (84 GFLOP/s on one core of an EPYC
 * whose sgemm ran at 235). */
#include "bench.h"

#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACC 12

#define FMA_BODY(T, SET1, FMA, ADD, STORE, LANES)                                                      \
    T a[ACC];                                                                                          \
    const T m = SET1(0.9999999f), b = SET1(1e-7f);                                                    \
    for (int j = 0; j < ACC; j++) a[j] = SET1(1.0f + 0.001f * (float)j);                              \
    for (long i = 0; i < iters; i++) {                                                                 \
        _Pragma("GCC unroll 12") for (int j = 0; j < ACC; j++) a[j] = FMA(a[j], m, b);                 \
    }                                                                                                  \
    for (int j = 1; j < ACC; j++) a[0] = ADD(a[0], a[j]);                                              \
    float out[LANES];                                                                                  \
    STORE(out, a[0]);                                                                                  \
    return out[0];

__attribute__((target("avx512f"))) static float kernel_avx512(long iters) {
    FMA_BODY(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, 16)
}

__attribute__((target("avx2,fma"))) static float kernel_avx2(long iters) {
    FMA_BODY(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, 8)
}

static inline __m128 sse_muladd(__m128 x, __m128 m, __m128 b) { return _mm_add_ps(_mm_mul_ps(x, m), b); }

static float kernel_sse(long iters) {
    FMA_BODY(__m128, _mm_set1_ps, sse_muladd, _mm_add_ps, _mm_storeu_ps, 4)
}

typedef float (*kernel_fn)(long);

static kernel_fn pick_kernel(const char **isa, int *lanes) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        *isa = "avx512f", *lanes = 16;
        return kernel_avx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        *isa = "avx2+fma", *lanes = 8;
        return kernel_avx2;
    }
    *isa = "sse2", *lanes = 4;
    return kernel_sse;
}

static volatile float g_sink;

double bench_fma_peak_gflops(int threads, double seconds, const char **isa_out) {
    const char *isa = NULL;
    int lanes = 0;
    kernel_fn k = pick_kernel(&isa, &lanes);
    if (isa_out) *isa_out = isa;
    if (threads < 1) threads = 1;
    /* calibrate: grow the iteration count until one run takes >= 20 ms */
    long iters = 1 << 14;
    for (;;) {
        double t0 = bench_now_s();
        g_sink = k(iters);
        if (bench_now_s() - t0 >= 0.02 || iters > (1L << 40)) break;
        iters *= 2;
    }
    const double flop_per_run = 2.0 * ACC * lanes * (double)iters;
    double best = 0.0, t_end = bench_now_s() + seconds;
    do { /* the best of repeated runs: the peak is what the CPU can do, not the mean under load */
        double t0 = bench_now_s();
#pragma omp parallel num_threads(threads)
        {
            float r = k(iters);
#pragma omp atomic
            g_sink += r;
        }
        double dt = bench_now_s() - t0;
        double g = flop_per_run * threads / dt * 1e-9;
        if (g > best) best = g;
    } while (bench_now_s() < t_end);
    return best;
}

int bench_cmd_peak(int argc, char **argv) {
    double seconds = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_tfm peak [--seconds X]\n");
            return 2;
        }
    }
    const int n = tfm_get_threads();
    const char *isa = NULL;
    const double g1 = bench_fma_peak_gflops(1, seconds, &isa);
    const double gn = n > 1 ? bench_fma_peak_gflops(n, seconds, &isa) : g1;
    printf("FMA peak (%s, fp32, found at run time): %.1f GFLOP/s on 1 thread, %.1f on %d threads\n", isa, g1,
           gn, n);
    printf("RESULT peak isa=%s gflops_1=%.2f gflops_all=%.2f threads=%d rss_mib=%.1f\n", isa, g1, gn, n,
           bench_peak_rss_mib());
    return 0;
}
