/* The position-wise feed-forward network (Vaswani et al. 2017, §3.3, eq. 2) with its element-wise
 * work fused around the two products: forward, linear1 (bias inside the product, as
 * linear_forward), then activation + dropout (§5.4 puts none there, but PyTorch's
 * nn.TransformerEncoderLayer does: dropout(activation(linear1(x)))) in one pass; backward, the
 * dropout mask, the activation's derivative and linear1's bias gradient in one pass over the
 * hidden gradient, which the product with W_2 WRITES (beta = 0) instead of accumulating into a
 * zeroed buffer. The reference path is the unfused kernels (relu/gelu/silu_forward,
 * dropout_forward, their backwards, linear_backward's bias sum): tests/unit/ops/test_fused_ffn.c
 * compares the two bit for bit. docs/KERNELS.md, section "Element-wise". */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

/* See fused_norm.c: the backward pass runs in place (dpre == dact). */
#if defined(__GNUC__) && !defined(__clang__)
#define LOOP_IVDEP _Pragma("GCC ivdep")
#else
#define LOOP_IVDEP
#endif

/* The activation of one element, written as activation.c writes it (so the two paths agree to
 * the bit): ReLU, the exact GELU x·Φ(x), or SiLU x·σ(x) (ops.h OPS_ACT_*). */
static inline float act_of(float x, int act) {
    if (act == OPS_ACT_RELU) return x > 0.0f ? x : 0.0f;
    if (act == OPS_ACT_SILU) return x / (1.0f + expf(-x));
    const float inv_sqrt2 = 0.70710678118654752f;
    return 0.5f * x * (1.0f + erff(x * inv_sqrt2));
}

/* The activation's derivative at x (activation.c's relu/gelu/silu_backward). */
static inline float dact_of(float x, int act) {
    if (act == OPS_ACT_RELU) return x > 0.0f ? 1.0f : 0.0f;
    if (act == OPS_ACT_SILU) {
        const float sg = 1.0f / (1.0f + expf(-x));
        return sg * (1.0f + x * (1.0f - sg));
    }
    const float inv_sqrt2 = 0.70710678118654752f, inv_sqrt_2pi = 0.39894228040143268f;
    float cdf = 0.5f * (1.0f + erff(x * inv_sqrt2));
    float pdf = inv_sqrt_2pi * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

/* ffn_act_dropout_forward's pass with dropout, as its chunks see it. */
typedef struct {
    float *act;
    uint8_t *mask;
    const float *pre;
    int kind; /* OPS_ACT_* */
    float p, scale;
    uint64_t seed;
    size_t n;
} act_drop_job;

/* Elements i0 .. i1 − 1 of an act_drop_job (dropout_keep numbers them as the whole call). */
static void act_drop_range(void *arg, size_t i0, size_t i1) {
    const act_drop_job *j = arg;
    float *act = j->act;
    uint8_t *mask = j->mask;
    const float *pre = j->pre;
    const float p = j->p, scale = j->scale;
    const uint64_t seed = j->seed;
    const int kind = j->kind;
    for (size_t i = i0; i < i1; i++) {
        const int keep = dropout_keep(seed, i, p);
        const float a = act_of(pre[i], kind);
        act[i] = keep ? a * scale : 0.0f;
        mask[i] = (uint8_t)keep;
    }
}

void ffn_act_dropout_forward(float *act, uint8_t *mask, const float *pre, int kind, float p, uint64_t seed,
                             size_t n) {
    if (!mask || p <= 0.0f) { /* inference, or no dropout: the activation alone */
        if (kind == OPS_ACT_GELU)
            gelu_forward(act, pre, n);
        else if (kind == OPS_ACT_SILU)
            silu_forward(act, pre, n);
        else
            relu_forward(act, pre, n);
        return;
    }
    if (p >= 1.0f) { /* everything dropped, as dropout_forward */
        dropout_forward(act, mask, pre, p, seed, n);
        return;
    }
    act_drop_job j = {act, mask, pre, kind, p, 1.0f / (1.0f - p), seed, n};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), act_drop_range, &j);
}

/* Columns per chunk of the backward pass: each chunk owns the bias-gradient sums of its columns
 * and walks every row, so the sums are in row order whatever the thread count. */
#define FFN_COL_BLOCK 128

/* One row's run of n columns of the backward pass: dpre = (dact · scale if kept, else 0) through
 * the activation's derivative, acc += dpre. These are the products of the reference (dropout_backward
 * then relu/gelu_backward into zeroed buffers), in the same order; scale = 1 without dropout
 * (dact · 1 is dact). Written as separate branch-free loops so that the ReLU ones vectorise. */
static void relu_cols(float *dpre, double *acc, const float *dact, const uint8_t *mk, const float *pre, float scale,
                      size_t n) {
    if (mk) {
        LOOP_IVDEP
        for (size_t c = 0; c < n; c++) {
            const float g = dact[c] * scale;
            const float v = ((mk[c] != 0) & (pre[c] > 0.0f)) ? g : 0.0f;
            dpre[c] = v;
            acc[c] += v;
        }
    } else {
        LOOP_IVDEP
        for (size_t c = 0; c < n; c++) {
            const float v = pre[c] > 0.0f ? dact[c] : 0.0f;
            dpre[c] = v;
            acc[c] += v;
        }
    }
}

static void smooth_cols(float *dpre, double *acc, const float *dact, const uint8_t *mk, const float *pre, float scale,
                        int act, size_t n) {
    for (size_t c = 0; c < n; c++) {
        const float g = mk ? (mk[c] ? dact[c] * scale : 0.0f) : dact[c];
        const float v = g * dact_of(pre[c], act);
        dpre[c] = v;
        acc[c] += v;
    }
}

/* ffn_act_dropout_backward's pass, as its chunks see it (mask NULL: no dropout). */
typedef struct {
    float *dpre, *dbias;
    const float *dact;
    const uint8_t *mask;
    const float *pre;
    int act; /* OPS_ACT_* */
    float scale;
    size_t N, F;
} act_back_job;

/* Columns FFN_COL_BLOCK·blk .. of an act_back_job, every row in order. */
static void act_back_block(void *arg, size_t blk) {
    const act_back_job *j = arg;
    const size_t F = j->F, c0 = blk * FFN_COL_BLOCK, nc = F - c0 < FFN_COL_BLOCK ? F - c0 : FFN_COL_BLOCK;
    double acc[FFN_COL_BLOCK] = {0};
    for (size_t r = 0; r < j->N; r++) {
        const size_t o = r * F + c0;
        const uint8_t *mk = j->mask ? j->mask + o : NULL;
        if (j->act != OPS_ACT_RELU) /* GELU, SiLU */
            smooth_cols(j->dpre + o, acc, j->dact + o, mk, j->pre + o, j->scale, j->act, nc);
        else
            relu_cols(j->dpre + o, acc, j->dact + o, mk, j->pre + o, j->scale, nc);
    }
    if (j->dbias)
        for (size_t c = 0; c < nc; c++) j->dbias[c0 + c] += (float)acc[c];
}

void ffn_act_dropout_backward(float *dpre, float *dbias, const float *dact, const uint8_t *mask, const float *pre,
                              int kind, float p, size_t N, size_t F) {
    if (N == 0 || F == 0) return;
    const int drop = mask && p > 0.0f;
    const float scale = drop ? (p < 1.0f ? 1.0f / (1.0f - p) : 0.0f) : 1.0f;
    act_back_job j = {dpre, dbias, dact, drop ? mask : NULL, pre, kind, scale, N, F};
    ops_pool_run((F + FFN_COL_BLOCK - 1) / FFN_COL_BLOCK, ops_team(N * F), act_back_block, &j);
}

void ffn_forward_fused(const ops_kernels *kern, float *out, float *pre, float *act, uint8_t *mask, const float *x, const float *w1,
                       const float *b1, const float *w2, const float *b2, int kind, float p, uint64_t seed, size_t N,
                       size_t d, size_t F) {
    ffn_forward_fused_rows(kern, out, pre, act, mask, x, w1, b1, w2, b2, kind, p, seed, N, d, F, N);
}

void ffn_forward_fused_rows(const ops_kernels *kern, float *out, float *pre, float *act, uint8_t *mask, const float *x, const float *w1,
                            const float *b1, const float *w2, const float *b2, int kind, float p, uint64_t seed,
                            size_t N, size_t d, size_t F, size_t kernel_rows) {
    linear_forward_rows(kern, pre, x, w1, b1, N, d, F, kernel_rows);
    ffn_act_dropout_forward(act, mask, pre, kind, p, seed, N * F);
    linear_forward_rows(kern, out, act, w2, b2, N, F, d, kernel_rows);
}

void ffn_backward_fused(const ops_kernels *kern, float *dx, float *dw1, float *db1, float *dw2, float *db2, float *dhid, const float *dout,
                        const float *x, const float *pre, const float *act, const uint8_t *mask, const float *w1,
                        const float *w2, int kind, float p, size_t N, size_t d, size_t F) {
    if (N == 0) return;
    /* dhid (N, F) = dout (N, d) · W_2 (d, F), WRITTEN: no zeroed buffer to accumulate into */
    ops_gemm(kern, 0, 0, N, F, d, 1.0f, dout, d, w2, F, 0.0f, dhid, F);
    linear_backward(kern, NULL, dw2, db2, dout, act, w2, N, F, d);
    ffn_act_dropout_backward(dhid, db1, dhid, mask, pre, kind, p, N, F); /* in place */
    linear_backward(kern, dx, dw1, NULL, dhid, x, w1, N, d, F);
}
