/* The exit of a residual sub-layer wrapper, fused: LayerNorm(x + Dropout(Sublayer(x))) (post-LN,
 * Vaswani et al. 2017, §3.1 and §5.4; Ba et al. 2016 for the norm) or x + Dropout(Sublayer(x))
 * (pre-LN, Xiong et al. 2020), one pass per row instead of three passes over the whole tensor;
 * and the matching backward, LayerNorm backward + dropout backward, writing its results instead of
 * accumulating into zeroed buffers. The reference path is dropout_forward, residual_forward,
 * layernorm_forward and their backwards: tests/unit/test_fused_norm.c compares the two bit for
 * bit. docs/KERNELS.md, section "Element-wise". */
#include "ops.h"
#include "parallel.h"

#include <math.h>

/* "No dependence between iterations" for a loop that writes, at index c, the array it reads at
 * the same index c (an in-place update): lets GCC vectorise it without a run-time overlap check
 * that the in-place call would fail. */
#if defined(__GNUC__) && !defined(__clang__)
#define LOOP_IVDEP _Pragma("GCC ivdep")
#else
#define LOOP_IVDEP
#endif

void residual_dropout_layernorm_forward(float *res, uint8_t *mask, float *ln_out, float *mean, float *rstd,
                                        const float *x, const float *sub, const float *weight, const float *bias,
                                        float p, uint64_t seed, size_t N, size_t C, float eps) {
    const int drop = mask && p > 0.0f;
    const float scale = drop && p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(C)) num_threads(ops_team(N * C))
    for (size_t n = 0; n < N; n++) {
        const size_t o = n * C;
        float *r = res + o;
        /* dropout_forward (element o + c of the call: the same keep mask) and residual_forward */
        if (drop)
            for (size_t c = 0; c < C; c++) {
                const int keep = p < 1.0f && dropout_keep(seed, o + c, p);
                mask[o + c] = (uint8_t)keep;
                r[c] = x[o + c] + (keep ? sub[o + c] * scale : 0.0f);
            }
        else
            for (size_t c = 0; c < C; c++) r[c] = x[o + c] + sub[o + c];
        if (!ln_out) continue;
        /* layernorm_forward of the row, while it is in cache: the same sums in the same order */
        double m = 0.0;
        for (size_t c = 0; c < C; c++) m += r[c];
        m /= (double)C;
        double v = 0.0;
        for (size_t c = 0; c < C; c++) {
            double dx = r[c] - m;
            v += dx * dx;
        }
        v /= (double)C;
        const float s = (float)(1.0 / sqrt(v + (double)eps));
        const float fm = (float)m;
        float *y = ln_out + o;
        for (size_t c = 0; c < C; c++) y[c] = (r[c] - fm) * s * weight[c] + bias[c];
        if (mean) mean[n] = fm;
        if (rstd) rstd[n] = s;
    }
}

void dropout_backward_write(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n) {
    const float scale = p >= 1.0f ? 0.0f : p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) dinp[i] = mask[i] && p < 1.0f ? dout[i] * scale : 0.0f;
}

void layernorm_dropout_backward(float *dres, float *dsub, float *dweight, float *dbias, const float *dout,
                                const float *res, const float *weight, const float *mean, const float *rstd,
                                const uint8_t *mask, float p, size_t N, size_t C) {
    if (N == 0 || C == 0) return;
    /* 1. dweight, dbias from dout, first: dres may be dout itself and is overwritten in 2. */
    layernorm_param_grads(dweight, dbias, dout, res, mean, rstd, N, C);
    /* 2. per row: dres = rstd·(g − mean(g) − x̂·mean(g·x̂)), g = dout ⊙ weight, then the sub-layer's
     * gradient through its dropout, while the row is in cache */
    const int drop = dsub && mask && p > 0.0f;
    const float scale = p >= 1.0f ? 0.0f : p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(C)) num_threads(ops_team(N * C))
    for (size_t n = 0; n < N; n++) {
        const float *x = res + n * C, *dy = dout + n * C;
        const float mu = mean[n], rs = rstd[n];
        double sum_g = 0.0, sum_gx = 0.0;
        for (size_t c = 0; c < C; c++) {
            float g = dy[c] * weight[c];
            sum_g += g;
            sum_gx += (double)g * (double)((x[c] - mu) * rs);
        }
        const float mg = (float)(sum_g / (double)C), mgx = (float)(sum_gx / (double)C);
        float *dx = dres + n * C; /* may be dy: each element is read before it is written */
        LOOP_IVDEP
        for (size_t c = 0; c < C; c++) {
            float xhat = (x[c] - mu) * rs;
            dx[c] = rs * (dy[c] * weight[c] - mg - xhat * mgx);
        }
        if (drop) {
            const uint8_t *mk = mask + n * C;
            float *ds = dsub + n * C;
            for (size_t c = 0; c < C; c++) ds[c] = mk[c] ? dx[c] * scale : 0.0f;
        } else if (dsub) {
            float *ds = dsub + n * C;
            for (size_t c = 0; c < C; c++) ds[c] = dx[c];
        }
    }
}
