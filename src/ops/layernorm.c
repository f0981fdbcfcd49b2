/* Layer normalisation (Ba et al. 2016), as nn.LayerNorm: biased variance, eps inside the root. */
#include "ops.h"
#include "parallel.h"

#include <math.h>

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, size_t C, float eps) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(C)) num_threads(ops_team(N * C))
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C;
        double m = 0.0;
        for (size_t c = 0; c < C; c++) m += x[c];
        m /= (double)C;
        double v = 0.0;
        for (size_t c = 0; c < C; c++) {
            double dx = x[c] - m;
            v += dx * dx;
        }
        v /= (double)C;
        float s = (float)(1.0 / sqrt(v + (double)eps));
        float fm = (float)m;
        float *y = out + n * C;
        for (size_t c = 0; c < C; c++) y[c] = (x[c] - fm) * s * weight[c] + bias[c];
        if (mean) mean[n] = fm;
        if (rstd) rstd[n] = s;
    }
}

/* Columns per chunk of the parameter-gradient sums: each chunk owns its columns and walks every
 * row in order, so the sums do not depend on the thread count. */
#define NORM_COL_BLOCK 64

void layernorm_param_grads(float *dweight, float *dbias, const float *dout, const float *inp, const float *mean,
                           const float *rstd, size_t N, size_t C) {
    if (N == 0 || C == 0 || (!dweight && !dbias)) return;
    const size_t nblk = (C + NORM_COL_BLOCK - 1) / NORM_COL_BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ops_team(N * C))
    for (size_t blk = 0; blk < nblk; blk++) {
        const size_t c0 = blk * NORM_COL_BLOCK, c1 = c0 + NORM_COL_BLOCK < C ? c0 + NORM_COL_BLOCK : C;
        double aw[NORM_COL_BLOCK] = {0}, ab[NORM_COL_BLOCK] = {0};
        for (size_t n = 0; n < N; n++) {
            const float *x = inp + n * C, *dy = dout + n * C;
            const float mu = mean[n], rs = rstd[n];
            for (size_t c = c0; c < c1; c++) {
                aw[c - c0] += (double)dy[c] * (double)((x[c] - mu) * rs);
                ab[c - c0] += dy[c];
            }
        }
        for (size_t c = c0; c < c1; c++) {
            if (dweight) dweight[c] += (float)aw[c - c0];
            if (dbias) dbias[c] += (float)ab[c - c0];
        }
    }
}

void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                        const float *weight, const float *mean, const float *rstd, size_t N, size_t C) {
    if (N == 0 || C == 0) return;
    /* dinp: rows are independent. */
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(C)) num_threads(ops_team(N * C))
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C, *dy = dout + n * C;
        const float mu = mean[n], rs = rstd[n];
        double sum_g = 0.0, sum_gx = 0.0; /* Σ g and Σ g·x̂ over the row */
        for (size_t c = 0; c < C; c++) {
            float g = dy[c] * weight[c];
            sum_g += g;
            sum_gx += (double)g * (double)((x[c] - mu) * rs);
        }
        const float mg = (float)(sum_g / (double)C), mgx = (float)(sum_gx / (double)C);
        float *dx = dinp + n * C;
        for (size_t c = 0; c < C; c++) {
            float xhat = (x[c] - mu) * rs;
            dx[c] += rs * (dy[c] * weight[c] - mg - xhat * mgx);
        }
    }
    layernorm_param_grads(dweight, dbias, dout, inp, mean, rstd, N, C);
}
