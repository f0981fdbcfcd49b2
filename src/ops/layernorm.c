/* Layer normalisation (Ba et al. 2016), as nn.LayerNorm: biased variance, eps inside the root. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

/* A LayerNorm pass over rows, as its chunks see it (the fields each pass uses). */
typedef struct {
    float *out, *mean, *rstd;          /* forward: written */
    float *dinp, *dweight, *dbias;     /* backward: accumulated */
    const float *inp, *weight, *bias, *dout;
    const float *mean_c, *rstd_c;      /* backward: the forward's statistics */
    float eps;
    size_t N, C;
} norm_job;

/* Rows n0 .. n1 − 1 of a forward norm_job. */
static void forward_rows(void *arg, size_t n0, size_t n1) {
    const norm_job *j = arg;
    const size_t C = j->C;
    const float *weight = j->weight, *bias = j->bias;
    for (size_t n = n0; n < n1; n++) {
        const float *x = j->inp + n * C;
        double m = 0.0;
        for (size_t c = 0; c < C; c++) m += x[c];
        m /= (double)C;
        double v = 0.0;
        for (size_t c = 0; c < C; c++) {
            double dx = x[c] - m;
            v += dx * dx;
        }
        v /= (double)C;
        float s = (float)(1.0 / sqrt(v + (double)j->eps));
        float fm = (float)m;
        float *y = j->out + n * C;
        for (size_t c = 0; c < C; c++) y[c] = (x[c] - fm) * s * weight[c] + bias[c];
        if (j->mean) j->mean[n] = fm;
        if (j->rstd) j->rstd[n] = s;
    }
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, size_t C, float eps) {
    const size_t rows = (size_t)ops_rows_per_chunk(C);
    norm_job j = {.out = out, .mean = mean, .rstd = rstd, .inp = inp, .weight = weight, .bias = bias, .eps = eps,
                  .N = N, .C = C};
    ops_pool_for(N, rows, ops_team(N * C), forward_rows, &j);
}

/* Columns per chunk of the parameter-gradient sums: each chunk owns its columns and walks every
 * row in order, so the sums do not depend on the thread count. */
#define NORM_COL_BLOCK 64

/* Columns NORM_COL_BLOCK·blk .. of layernorm_param_grads. */
static void param_grad_block(void *arg, size_t blk) {
    const norm_job *j = arg;
    const size_t C = j->C, c0 = blk * NORM_COL_BLOCK, c1 = c0 + NORM_COL_BLOCK < C ? c0 + NORM_COL_BLOCK : C;
    double aw[NORM_COL_BLOCK] = {0}, ab[NORM_COL_BLOCK] = {0};
    for (size_t n = 0; n < j->N; n++) {
        const float *x = j->inp + n * C, *dy = j->dout + n * C;
        const float mu = j->mean_c[n], rs = j->rstd_c[n];
        for (size_t c = c0; c < c1; c++) {
            aw[c - c0] += (double)dy[c] * (double)((x[c] - mu) * rs);
            ab[c - c0] += dy[c];
        }
    }
    for (size_t c = c0; c < c1; c++) {
        if (j->dweight) j->dweight[c] += (float)aw[c - c0];
        if (j->dbias) j->dbias[c] += (float)ab[c - c0];
    }
}

void layernorm_param_grads(float *dweight, float *dbias, const float *dout, const float *inp, const float *mean,
                           const float *rstd, size_t N, size_t C) {
    if (N == 0 || C == 0 || (!dweight && !dbias)) return;
    norm_job j = {.dweight = dweight, .dbias = dbias, .dout = dout, .inp = inp, .mean_c = mean, .rstd_c = rstd,
                  .N = N, .C = C};
    ops_pool_run((C + NORM_COL_BLOCK - 1) / NORM_COL_BLOCK, ops_team(N * C), param_grad_block, &j);
}

/* Rows n0 .. n1 − 1 of a backward norm_job: dinp += rstd·(g − mean(g) − x̂·mean(g·x̂)), g = dout ⊙ weight. */
static void backward_rows(void *arg, size_t n0, size_t n1) {
    const norm_job *j = arg;
    const size_t C = j->C;
    const float *weight = j->weight;
    for (size_t n = n0; n < n1; n++) {
        const float *x = j->inp + n * C, *dy = j->dout + n * C;
        const float mu = j->mean_c[n], rs = j->rstd_c[n];
        double sum_g = 0.0, sum_gx = 0.0; /* Σ g and Σ g·x̂ over the row */
        for (size_t c = 0; c < C; c++) {
            float g = dy[c] * weight[c];
            sum_g += g;
            sum_gx += (double)g * (double)((x[c] - mu) * rs);
        }
        const float mg = (float)(sum_g / (double)C), mgx = (float)(sum_gx / (double)C);
        float *dx = j->dinp + n * C;
        for (size_t c = 0; c < C; c++) {
            float xhat = (x[c] - mu) * rs;
            dx[c] += rs * (dy[c] * weight[c] - mg - xhat * mgx);
        }
    }
}

void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                        const float *weight, const float *mean, const float *rstd, size_t N, size_t C) {
    if (N == 0 || C == 0) return;
    /* dinp: rows are independent. */
    const size_t rows = (size_t)ops_rows_per_chunk(C);
    norm_job j = {.dinp = dinp, .dout = dout, .inp = inp, .weight = weight, .mean_c = mean, .rstd_c = rstd,
                  .N = N, .C = C};
    ops_pool_for(N, rows, ops_team(N * C), backward_rows, &j);
    layernorm_param_grads(dweight, dbias, dout, inp, mean, rstd, N, C);
}
