/* Optimizers, gradient clipping and learning-rate schedules over flat float arrays: a model's
 * parameters, gradients and Adam moments each live in one allocation (docs/ARCHITECTURE.md),
 * so one call updates everything. None of these functions allocates. */
#ifndef TFM_OPTIM_H
#define TFM_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "tfm/train.h"

/** Adam's hyper-parameters; adam_hparams_default() gives the paper's (Vaswani et al. 2017,
 * §5.3): beta1 0.9, beta2 0.98, eps 1e-9. */
typedef struct {
    double beta1, beta2, eps;
} adam_hparams;

adam_hparams adam_hparams_default(void);

/** One step of Adam (Kingma & Ba 2015, Algorithm 1) exactly as torch.optim.Adam (1.13; no weight
 * decay, no amsgrad), with t the 1-based number of this step (the caller keeps the count, e.g. in
 * its train state), on the gradient g = fl(grads · grad_scale): grad_scale is the clipping
 * coefficient of optim_clip_coef (1: none), applied as this pass reads grads (which stay
 * unscaled) — the bits of optim_clip_grad_norm's in-place scaling followed by a step with 1:
 *   m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²,
 *   p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + ε)        (ε added after the square root)
 * params, m, v, grads: [n]; m and v start at zero. Scalars in double, elements in float, in
 * torch's order of operations (results agree with torch to about one float rounding). t < 1 is
 * treated as 1. */
void optim_adam_step(float *params, float *m, float *v, const float *grads, float grad_scale, size_t n, double lr,
                     const adam_hparams *hp, int64_t t);

/** Plain SGD, torch.optim.SGD without momentum or decay: params ← params − lr·fl(grads·grad_scale)
 * (grad_scale as optim_adam_step's). */
void optim_sgd_step(float *params, const float *grads, float grad_scale, size_t n, double lr);

/** Global-norm clipping as torch.nn.utils.clip_grad_norm_ (1.13, norm_type 2): with
 * total = √(Σ g²) over all n gradients (summed in double, rounded to float),
 * coef = max_norm / (total + 1e-6); if coef < 1 every gradient is multiplied by coef.
 * Returns total, the norm before clipping. max_norm <= 0 only measures (no clipping). */
double optim_clip_grad_norm(float *grads, size_t n, double max_norm);

/** optim_clip_grad_norm without the scaling pass: returns total and sets *coef to the factor it
 * would multiply every gradient by (1 when max_norm <= 0 or coef ≥ 1), for the optimizer step to
 * apply as it reads the gradients (saves one read and write of all n gradients). */
double optim_clip_coef(const float *grads, size_t n, double max_norm, float *coef);

/* tfm_schedule (TFM_SCHEDULE_CONSTANT, TFM_SCHEDULE_NOAM) is public: include/tfm/train.h. */

/** The learning rate of step `step` (counted from 1):
 *   TFM_SCHEDULE_CONSTANT: factor;
 *   TFM_SCHEDULE_NOAM: factor · d_model^−0.5 · min(step^−0.5, step · warmup^−1.5) — linear warm-up
 *   for `warmup` steps, peaking at step = warmup, then inverse square root (Vaswani et al. 2017,
 *   §5.3, eq. 3, there with factor 1 and warmup 4000). warmup <= 0 means no warm-up
 *   (factor · d_model^−0.5 · step^−0.5); step < 1 gives 0. */
double lr_schedule(tfm_schedule kind, double factor, int64_t step, int d_model, int64_t warmup);

#endif
