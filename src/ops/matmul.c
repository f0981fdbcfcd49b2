#define _POSIX_C_SOURCE 200809L /* BLIS headers need pthread barriers */
/* Matrix products through CBLAS (BLIS), and the thread settings shared by every kernel. */
#include "ops.h"

#include <blis.h>
#include <cblas.h>
#include <omp.h>

static int g_threads = 0;

void ops_set_threads(int n) {
    if (n <= 0) n = omp_get_max_threads(); /* OMP_NUM_THREADS if set, else every core */
    g_threads = n;
    omp_set_num_threads(n);
    /* BLIS threads its own GEMMs; called inside our parallel regions it runs single-threaded
     * because nested OpenMP parallelism is off, so the cores are never oversubscribed. */
    bli_thread_set_num_threads(n);
}

int ops_threads(void) {
    if (g_threads == 0) ops_set_threads(0);
    return g_threads;
}

void linear_forward(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    size_t IC, size_t OC) {
    if (N == 0 || OC == 0) return;
    (void)ops_threads();
    if (bias) {
        for (size_t n = 0; n < N; n++)
            for (size_t o = 0; o < OC; o++) out[n * OC + o] = bias[o];
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)OC, (int)IC, 1.0f, inp, (int)IC,
                weight, (int)IC, bias ? 1.0f : 0.0f, out, (int)OC);
}

void linear_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                     const float *weight, size_t N, size_t IC, size_t OC) {
    if (N == 0 || OC == 0) return;
    (void)ops_threads();
    if (dinp && IC > 0) /* dinp (N, IC) += dout (N, OC) · weight (OC, IC) */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)IC, (int)OC, 1.0f, dout,
                    (int)OC, weight, (int)IC, 1.0f, dinp, (int)IC);
    if (dweight && IC > 0) /* dweight (OC, IC) += doutᵀ (OC, N) · inp (N, IC) */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)OC, (int)IC, (int)N, 1.0f, dout,
                    (int)OC, inp, (int)IC, 1.0f, dweight, (int)IC);
    if (dbias) {
        /* Column sums: each thread owns a block of 64 columns and walks every row, summing in
         * double, so there are no races and the result does not depend on the thread count. */
        const size_t nblk = (OC + 63) / 64;
#pragma omp parallel for schedule(static)
        for (size_t blk = 0; blk < nblk; blk++) {
            const size_t c0 = blk * 64, c1 = c0 + 64 < OC ? c0 + 64 : OC;
            double acc[64] = {0};
            for (size_t n = 0; n < N; n++) {
                const float *row = dout + n * OC;
                for (size_t c = c0; c < c1; c++) acc[c - c0] += row[c];
            }
            for (size_t c = c0; c < c1; c++) dbias[c] += (float)acc[c - c0];
        }
    }
}
