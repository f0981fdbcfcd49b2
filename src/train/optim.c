/* Adam (Kingma & Ba 2015) and SGD as PyTorch 1.13 computes them, and global-norm gradient
 * clipping as torch.nn.utils.clip_grad_norm_. The element-wise loops are kernels in src/ops
 * (update.c), where the parallel loops live (docs/ARCHITECTURE.md). */
#include "optim.h"

#include "ops.h"

#include <math.h>

adam_hparams adam_hparams_default(void) {
    adam_hparams hp = {0.9, 0.98, 1e-9}; /* Vaswani et al. 2017, §5.3 */
    return hp;
}

void optim_adam_step(float *params, float *m, float *v, const float *grads, float grad_scale, size_t n, double lr,
                     const adam_hparams *hp, int64_t t) {
    if (t < 1) t = 1;
    /* torch: bias_correction1 = 1 - beta1 ** step; step_size = lr / bias_correction1;
     * bias_correction2_sqrt = math.sqrt(1 - beta2 ** step) — Python floats (double); each becomes
     * a float where it meets a tensor. */
    const double bc1 = 1.0 - pow(hp->beta1, (double)t);
    const double bc2 = 1.0 - pow(hp->beta2, (double)t);
    const double step_size = lr / bc1;
    adam_update(params, m, v, grads, grad_scale, n, (float)hp->beta1, (float)(1.0 - hp->beta1), (float)hp->beta2,
                (float)(1.0 - hp->beta2), (float)step_size, (float)sqrt(bc2), (float)hp->eps);
}

void optim_sgd_step(float *params, const float *grads, float grad_scale, size_t n, double lr) {
    sgd_update(params, grads, grad_scale, n, (float)lr);
}

double optim_clip_coef(const float *grads, size_t n, double max_norm, float *coef) {
    /* torch: total_norm = norm(g) (a float tensor); clip_coef = max_norm / (total_norm + 1e-6),
     * evaluated as reciprocal(total_norm + 1e-6) · max_norm in float; clamped to 1 and multiplied
     * in (a no-op when clamped: 1). */
    const float total = (float)sqrt(sum_squares(grads, n));
    *coef = 1.0f;
    if (max_norm > 0.0) {
        const float c = (1.0f / (total + (float)1e-6)) * (float)max_norm;
        if (c < 1.0f) *coef = c;
    }
    return (double)total;
}

double optim_clip_grad_norm(float *grads, size_t n, double max_norm) {
    float coef;
    const double total = optim_clip_coef(grads, n, max_norm, &coef);
    if (coef < 1.0f) scale_inplace(grads, coef, n);
    return total;
}
