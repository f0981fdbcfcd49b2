/* Which BLIS kernels the products run (src/ops/blas.c) and that every product path computes the
 * right numbers with them: on a CPU with AVX2+FMA or AVX-512 the library must never run BLIS's
 * portable 'generic' kernels (10× slower; Debian's BLIS 0.9.0 falls back to them on CPUs newer
 * than itself), unless the user chose them with BLIS_ARCH_TYPE; ops_gemm_serial, ops_gemm and
 * ops_gemv_serial (both orientations, strided operands) against a plain triple loop in double. */
#include "gemm_small.h"
#include "hash.h"
#include "parallel.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <stdint.h>

static void kernel_choice(void) {
    const char *info = tfm_blas_kernels();
    printf("%s\n", info);
    CHECK(strncmp(info, "BLIS ", 5) == 0, "tfm_blas_kernels: '%s' does not name BLIS", info);
    CHECK(tfm_blas_kernels() == info, "tfm_blas_kernels: not one static string");
#if !defined(TFM_BLIS_CNTX_INIT)
    printf("SKIP (kernel choice): this BLIS does not export its sub-configurations, so BLIS's own choice stands\n");
#elif defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    const int vector = (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) ||
                       __builtin_cpu_supports("avx512f");
    if (vector && !getenv("BLIS_ARCH_TYPE"))
        CHECK(strstr(info, "'generic' kernels") == NULL,
              "this CPU has AVX2+FMA or AVX-512 but the products run BLIS's portable kernels: %s", info);
#endif
}

/* C[M, N] (ld ldc) = alpha·op(A)·op(B) + beta·C0 in double, op as ops_gemm_serial's flags. */
static double max_gemm_error(int ta, int tb, size_t M, size_t N, size_t K, int tiled) {
    const size_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 7;
    const size_t ra = ta ? K : M, rb = tb ? N : K;
    float *A = malloc(ra * lda * sizeof *A), *B = malloc(rb * ldb * sizeof *B), *C = malloc(M * ldc * sizeof *C);
    float *C0 = malloc(M * ldc * sizeof *C0);
    test_fill_uniform(A, ra * lda, 1), test_fill_uniform(B, rb * ldb, 2), test_fill_uniform(C, M * ldc, 3);
    memcpy(C0, C, M * ldc * sizeof *C);
    const float alpha = 0.75f, beta = 0.5f;
    if (tiled)
        ops_gemm(KERN, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        ops_gemm_serial(KERN, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    double worst = 0.0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0.0;
            for (size_t k = 0; k < K; k++)
                s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) * (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
            const double want = alpha * s + beta * (double)C0[i * ldc + j];
            const double e = fabs(want - (double)C[i * ldc + j]);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
    free(A), free(B), free(C), free(C0);
    return worst;
}

static void products(void) {
    const size_t shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {130, 300, 257}, {33, 1, 70}, {1, 90, 40}};
    /* the default dispatch (mostly the small kernels), then BLIS alone for every shape */
    const ops_kernels blis = test_kernels_with(OPS_ISA_AVX512, 1);
    for (int small = 1; small >= 0; small--) {
        test_kernels_use(small ? NULL : &blis);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++)
                    for (int tiled = 0; tiled < 2; tiled++) {
                        const size_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                        const double e = max_gemm_error(ta, tb, M, N, K, tiled);
                        CHECK(e <= 1e-5 * (double)K, "%s %s %zux%zux%zu ta=%d tb=%d: max error %g",
                              small ? "default" : "BLIS", tiled ? "ops_gemm" : "ops_gemm_serial", M, N, K, ta, tb, e);
                    }
    }
    test_kernels_use(NULL);
    /* y = alpha·op(A)·x (beta 0: y is not read, so NaN there must not leak) and beta = 1 */
    const size_t M = 37, N = 70, lda = N + 4;
    float *A = malloc(M * lda * sizeof *A), x[70], y[70];
    test_fill_uniform(A, M * lda, 4), test_fill_uniform(x, 70, 5);
    for (int trans = 0; trans < 2; trans++)
        for (int beta1 = 0; beta1 < 2; beta1++) {
            const size_t ny = trans ? N : M, nx = trans ? M : N;
            for (size_t i = 0; i < ny; i++) y[i] = beta1 ? 0.25f * (float)i : NAN;
            ops_gemv_serial(trans, M, N, 1.5f, A, lda, x, beta1 ? 1.0f : 0.0f, y);
            double worst = 0.0;
            for (size_t i = 0; i < ny; i++) {
                double s = 0.0;
                for (size_t k = 0; k < nx; k++) s += (double)(trans ? A[k * lda + i] : A[i * lda + k]) * (double)x[k];
                const double want = 1.5 * s + (beta1 ? 0.25 * (double)i : 0.0);
                const double e = fabs(want - (double)y[i]);
                if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
            }
            CHECK(worst <= 1e-4, "ops_gemv_serial trans=%d beta=%d: max error %g", trans, beta1, worst);
        }
    free(A);
}

int main(void) {
    kernel_choice();
    products();
    return test_finish("test_blas_kernels");
}
