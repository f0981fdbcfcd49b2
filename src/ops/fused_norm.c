/* The exit of a residual sub-layer wrapper, fused: LayerNorm(x + Dropout(Sublayer(x))) (post-LN,
 * Vaswani et al. 2017, §3.1 and §5.4; Ba et al. 2016 for the norm) or x + Dropout(Sublayer(x))
 * (pre-LN, Xiong et al. 2020), one pass per row instead of three passes over the whole tensor;
 * and the matching backward, LayerNorm backward + dropout backward, writing its results instead of
 * accumulating into zeroed buffers. The reference path is dropout_forward, residual_forward,
 * layernorm_forward and their backwards: tests/unit/ops/test_fused_norm.c compares the two bit for
 * bit. docs/KERNELS.md, section "Element-wise". */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

/* "No dependence between iterations" for a loop that writes, at index c, the array it reads at
 * the same index c (an in-place update): lets GCC vectorise it without a run-time overlap check
 * that the in-place call would fail. */
#if defined(__GNUC__) && !defined(__clang__)
#define LOOP_IVDEP _Pragma("GCC ivdep")
#else
#define LOOP_IVDEP
#endif

/* residual_dropout_layernorm_forward's pass, as its chunks see it. */
typedef struct {
    float *res, *ln_out, *mean, *rstd;
    uint8_t *mask;
    const float *x, *sub, *weight, *bias;
    float p, scale, eps;
    int drop;
    uint64_t seed;
    size_t N, C;
} res_norm_job;

/* Rows n0 .. n1 − 1 of a res_norm_job. */
static void res_norm_rows(void *arg, size_t n0, size_t n1) {
    const res_norm_job *j = arg;
    const size_t C = j->C;
    /* the fields in locals: a store through mask (a char type) may alias *j for the compiler */
    const float p = j->p, scale = j->scale;
    const float *x = j->x, *sub = j->sub;
    uint8_t *mask = j->mask;
    const uint64_t seed = j->seed;
    for (size_t n = n0; n < n1; n++) {
        const size_t o = n * C;
        float *r = j->res + o;
        /* dropout_forward (element o + c of the call: the same keep mask) and residual_forward */
        if (j->drop)
            for (size_t c = 0; c < C; c++) {
                const int keep = p < 1.0f && dropout_keep(seed, o + c, p);
                mask[o + c] = (uint8_t)keep;
                r[c] = x[o + c] + (keep ? sub[o + c] * scale : 0.0f);
            }
        else
            for (size_t c = 0; c < C; c++) r[c] = x[o + c] + sub[o + c];
        if (!j->ln_out) continue;
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
        const float s = (float)(1.0 / sqrt(v + (double)j->eps));
        const float fm = (float)m;
        float *y = j->ln_out + o;
        const float *weight = j->weight, *bias = j->bias;
        for (size_t c = 0; c < C; c++) y[c] = (r[c] - fm) * s * weight[c] + bias[c];
        if (j->mean) j->mean[n] = fm;
        if (j->rstd) j->rstd[n] = s;
    }
}

void residual_dropout_layernorm_forward(float *res, uint8_t *mask, float *ln_out, float *mean, float *rstd,
                                        const float *x, const float *sub, const float *weight, const float *bias,
                                        float p, uint64_t seed, size_t N, size_t C, float eps) {
    const int drop = mask && p > 0.0f;
    const float scale = drop && p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    const size_t rows = (size_t)ops_rows_per_chunk(C);
    res_norm_job j = {res, ln_out, mean, rstd, mask, x, sub, weight, bias, p, scale, eps, drop, seed, N, C};
    ops_pool_for(N, rows, ops_team(N * C), res_norm_rows, &j);
}

/* dropout_backward_write's pass, as its chunks see it. */
typedef struct {
    float *dinp;
    const float *dout;
    const uint8_t *mask;
    float p, scale;
    size_t n;
} drop_back_job;

static void drop_back_range(void *arg, size_t i0, size_t i1) {
    const drop_back_job *j = arg;
    float *dinp = j->dinp;
    const float *dout = j->dout;
    const uint8_t *mask = j->mask;
    const float p = j->p, scale = j->scale;
    for (size_t i = i0; i < i1; i++) dinp[i] = mask[i] && p < 1.0f ? dout[i] * scale : 0.0f;
}

void dropout_backward_write(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n) {
    const float scale = p >= 1.0f ? 0.0f : p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
    drop_back_job j = {dinp, dout, mask, p, scale, n};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), drop_back_range, &j);
}

/* layernorm_dropout_backward's row pass, as its chunks see it. */
typedef struct {
    float *dres, *dsub;
    const float *dout, *res, *weight, *mean, *rstd;
    const uint8_t *mask;
    int drop;
    float scale;
    size_t N, C;
} norm_back_job;

/* Rows n0 .. n1 − 1 of a norm_back_job: dres = rstd·(g − mean(g) − x̂·mean(g·x̂)), g = dout ⊙ weight,
 * then the sub-layer's gradient through its dropout, while the row is in cache. */
static void norm_back_rows(void *arg, size_t n0, size_t n1) {
    const norm_back_job *j = arg;
    const size_t C = j->C;
    const float *weight = j->weight;
    for (size_t n = n0; n < n1; n++) {
        const float *x = j->res + n * C, *dy = j->dout + n * C;
        const float mu = j->mean[n], rs = j->rstd[n];
        double sum_g = 0.0, sum_gx = 0.0;
        for (size_t c = 0; c < C; c++) {
            float g = dy[c] * weight[c];
            sum_g += g;
            sum_gx += (double)g * (double)((x[c] - mu) * rs);
        }
        const float mg = (float)(sum_g / (double)C), mgx = (float)(sum_gx / (double)C);
        float *dx = j->dres + n * C; /* may be dy: each element is read before it is written */
        LOOP_IVDEP
        for (size_t c = 0; c < C; c++) {
            float xhat = (x[c] - mu) * rs;
            dx[c] = rs * (dy[c] * weight[c] - mg - xhat * mgx);
        }
        if (j->drop) {
            const uint8_t *mk = j->mask + n * C;
            float *ds = j->dsub + n * C;
            const float scale = j->scale;
            for (size_t c = 0; c < C; c++) ds[c] = mk[c] ? dx[c] * scale : 0.0f;
        } else if (j->dsub) {
            float *ds = j->dsub + n * C;
            for (size_t c = 0; c < C; c++) ds[c] = dx[c];
        }
    }
}

void layernorm_dropout_backward(float *dres, float *dsub, float *dweight, float *dbias, const float *dout,
                                const float *res, const float *weight, const float *mean, const float *rstd,
                                const uint8_t *mask, float p, size_t N, size_t C) {
    if (N == 0 || C == 0) return;
    /* 1. dweight, dbias from dout, first: dres may be dout itself and is overwritten in 2. */
    layernorm_param_grads(dweight, dbias, dout, res, mean, rstd, N, C);
    /* 2. per row (norm_back_rows) */
    const int drop = dsub && mask && p > 0.0f;
    const float scale = p >= 1.0f ? 0.0f : p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
    const size_t rows = (size_t)ops_rows_per_chunk(C);
    norm_back_job j = {dres, dsub, dout, res, weight, mean, rstd, mask, drop, scale, N, C};
    ops_pool_for(N, rows, ops_team(N * C), norm_back_rows, &j);
}
