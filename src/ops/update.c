/* Element-wise optimizer kernels over flat parameter arrays (the scalar bookkeeping — step count,
 * bias corrections, learning rate — lives in src/train/optim.c). */
#include "ops.h"
#include "parallel.h"

#include <math.h>

void adam_update(float *params, float *m, float *v, const float *grads, size_t n, float beta1,
                 float one_minus_beta1, float beta2, float one_minus_beta2, float step_size,
                 float bc2_sqrt, float eps) {
    /* torch.optim.Adam (1.13, _single_tensor_adam), operation by operation:
     *   exp_avg.mul_(beta1).add_(grad, alpha=1-beta1)        (the add is a fused multiply-add)
     *   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2)
     *   denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
     *   param.addcdiv_(exp_avg, denom, value=-step_size)     (param + (value·m)/denom) */
    const float neg_step = -step_size;
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) {
        const float g = grads[i];
        const float mi = fmaf(g, one_minus_beta1, m[i] * beta1);
        const float vi = v[i] * beta2 + one_minus_beta2 * g * g;
        m[i] = mi;
        v[i] = vi;
        const float denom = sqrtf(vi) / bc2_sqrt + eps;
        params[i] = params[i] + neg_step * mi / denom;
    }
}

void sgd_update(float *params, const float *grads, size_t n, float lr) {
    /* torch.optim.SGD without momentum: param.add_(grad, alpha=-lr) */
    const float neg_lr = -lr;
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) params[i] = fmaf(grads[i], neg_lr, params[i]);
}

double sum_squares(const float *x, size_t n) {
    /* Partial sums over blocks fixed by n alone (at most SS_BLOCKS of them), added in block
     * order: the same total whatever the thread count and whichever thread sums which block. */
    enum { SS_BLOCKS = 1024, SS_MIN_BLOCK = 1 << 16 };
    double part[SS_BLOCKS];
    size_t blk = (n + SS_BLOCKS - 1) / SS_BLOCKS;
    if (blk < SS_MIN_BLOCK) blk = SS_MIN_BLOCK;
    const size_t nblk = (n + blk - 1) / blk;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ops_team(n))
    for (size_t b = 0; b < nblk; b++) {
        const size_t i1 = (b + 1) * blk < n ? (b + 1) * blk : n;
        double s = 0.0;
        for (size_t i = b * blk; i < i1; i++) s += (double)x[i] * (double)x[i];
        part[b] = s;
    }
    double s = 0.0;
    for (size_t b = 0; b < nblk; b++) s += part[b];
    return s;
}

void scale_inplace(float *x, float s, size_t n) {
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) x[i] *= s;
}
