#define _POSIX_C_SOURCE 200809L /* setenv */
/* The public thread setting (include/tfm/threads.h) and the parallel loops of src/ops
 * (src/ops/parallel.h): the setting changes no OpenMP global, small loops stay on one thread, the
 * tiled GEMM computes the product, and every result is bit-identical for 1, 2 and 3 threads. */
#include "ops.h"
#include "parallel.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <omp.h>
#include <stdint.h>

static void setting_cases(void) {
    const int omp_before = omp_get_max_threads();
    tfm_set_threads(0);
    CHECK(tfm_get_threads() == omp_before, "default threads %d, want omp_get_max_threads() %d",
          tfm_get_threads(), omp_before);
    tfm_set_threads(3);
    CHECK(tfm_get_threads() == 3, "tfm_set_threads(3) then get: %d", tfm_get_threads());
    CHECK(ops_team(1000) == 1, "a loop of 1000 floats must not open a region (team %d)", ops_team(1000));
    CHECK(ops_team(OPS_PAR_MIN_WORK) == 3, "a big loop gets the set threads (team %d)", ops_team(OPS_PAR_MIN_WORK));
    static float x[1 << 18];
    test_fill_uniform(x, 1 << 18, 7);
    relu_forward(x, x, 1 << 18); /* a kernel that opens a region */
    CHECK(omp_get_max_threads() == omp_before, "the library changed omp_get_max_threads: %d, was %d",
          omp_get_max_threads(), omp_before);
    tfm_set_threads(-5);
    CHECK(tfm_get_threads() == omp_before, "n <= 0 must restore the default: %d", tfm_get_threads());
    /* TFM_NO_REEXEC-free case: a set GOMP_SPINCOUNT means nothing to do (returns, no exec). */
    setenv("GOMP_SPINCOUNT", "10000", 1);
    char arg0[] = "test_threads";
    char *argv[] = {arg0, NULL};
    CHECK(tfm_reexec_for_shared_cores(argv) == 0, "reexec with GOMP_SPINCOUNT set must do nothing");
}

/* C[M, N] = alpha·op(A)·op(B) + beta·C in double, row-major, as ops_gemm documents. */
static void gemm_ref(int ta, int tb, size_t M, size_t N, size_t K, float alpha, const float *A,
                     size_t lda, const float *B, size_t ldb, float beta, double *C, const float *C0,
                     size_t ldc) {
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0.0;
            for (size_t k = 0; k < K; k++)
                s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) * (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
            C[i * ldc + j] = alpha * s + beta * (double)C0[i * ldc + j];
        }
}

static void gemm_cases(void) {
    enum { M = 300, N = 700, K = 70 }; /* 3 × 3 tiles of 128 × 256, ragged at both edges */
    static float A[M * K], B[K * N], C0[M * N], C1[M * N], C2[M * N], C3[M * N];
    static double R[M * N];
    test_fill_uniform(A, M * K, 1);
    test_fill_uniform(B, K * N, 2);
    test_fill_uniform(C0, M * N, 3);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            const size_t lda = ta ? M : K, ldb = tb ? K : N;
            float *outs[3] = {C1, C2, C3};
            for (int t = 1; t <= 3; t++) {
                memcpy(outs[t - 1], C0, sizeof C0);
                tfm_set_threads(t);
                ops_gemm(KERN, ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.25f, outs[t - 1], N);
            }
            gemm_ref(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 0.25f, R, C0, N);
            double worst = 0.0;
            for (size_t i = 0; i < (size_t)M * N; i++) {
                double e = fabs((double)C1[i] - R[i]);
                if (e > worst || isnan(C1[i])) worst = isnan(C1[i]) ? INFINITY : e;
            }
            CHECK(worst < 1e-4, "ops_gemm ta=%d tb=%d: max error %g", ta, tb, worst);
            CHECK(memcmp(C1, C2, sizeof C1) == 0 && memcmp(C1, C3, sizeof C1) == 0,
                  "ops_gemm ta=%d tb=%d differs between 1, 2 and 3 threads", ta, tb);
        }
    /* a small product (one 64-row tile at first): tiles shrink, the result stays exact */
    enum { m = 64, n = 256, k = 256 };
    static float a[m * k], b[k * n], c1[m * n], c2[m * n];
    test_fill_uniform(a, m * k, 4);
    test_fill_uniform(b, k * n, 5);
    tfm_set_threads(1);
    ops_gemm(KERN, 0, 1, m, n / 2, k, 1.0f, a, k, b, k, 0.0f, c1, n / 2);
    tfm_set_threads(2);
    ops_gemm(KERN, 0, 1, m, n / 2, k, 1.0f, a, k, b, k, 0.0f, c2, n / 2);
    CHECK(memcmp(c1, c2, sizeof(float) * m * (n / 2)) == 0, "small ops_gemm differs between 1 and 2 threads");
    tfm_set_threads(0);
}

/* linear_backward and sum_squares, whose sums are split into blocks: identical for any count. */
static void determinism_cases(void) {
    enum { N = 1024, IC = 256, OC = 1000 };
    static float x[N * IC], w[OC * IC], dy[N * OC], dx[2][N * IC], dw[2][OC * IC], db[2][OC];
    test_fill_uniform(x, N * IC, 11);
    test_fill_uniform(w, OC * IC, 12);
    test_fill_uniform(dy, N * OC, 13);
    double ss[2];
    for (int t = 0; t < 2; t++) {
        tfm_set_threads(t + 1);
        memset(dx[t], 0, sizeof dx[t]);
        memset(dw[t], 0, sizeof dw[t]);
        memset(db[t], 0, sizeof db[t]);
        linear_backward(KERN, dx[t], dw[t], db[t], dy, x, w, N, IC, OC);
        ss[t] = sum_squares(dy, (size_t)N * OC);
    }
    CHECK(memcmp(dx[0], dx[1], sizeof dx[0]) == 0, "linear_backward dinp depends on the thread count");
    CHECK(memcmp(dw[0], dw[1], sizeof dw[0]) == 0, "linear_backward dweight depends on the thread count");
    CHECK(memcmp(db[0], db[1], sizeof db[0]) == 0, "linear_backward dbias depends on the thread count");
    CHECK(ss[0] == ss[1], "sum_squares depends on the thread count: %.17g vs %.17g", ss[0], ss[1]);
    double ref = 0.0;
    for (size_t i = 0; i < (size_t)N * OC; i++) ref += (double)dy[i] * (double)dy[i];
    CHECK_NEAR(ss[0], ref, 1e-9 * ref, "sum_squares");
    tfm_set_threads(0);
}

int main(void) {
    setting_cases();
    gemm_cases();
    determinism_cases();
    return test_finish("test_threads");
}
