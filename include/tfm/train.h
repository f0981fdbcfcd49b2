/* transformer.c — training: label-smoothed cross-entropy, hand-written backpropagation, Adam or
 * SGD, the paper's warm-up schedule, gradient clipping. */
#ifndef TFM_TRAIN_H
#define TFM_TRAIN_H

#include "tfm/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TFM_OPTIMIZER_ADAM = 0, /* torch.optim.Adam semantics (Kingma & Ba 2015) */
    TFM_OPTIMIZER_SGD = 1   /* plain SGD, no momentum, no decay */
} tfm_optimizer;

typedef enum {
    TFM_SCHEDULE_CONSTANT = 0, /* lr = factor */
    TFM_SCHEDULE_NOAM = 1      /* Vaswani et al. 2017, §5.3, eq. 3 */
} tfm_schedule;

typedef struct {
    tfm_optimizer optimizer;
    double lr;              /* the learning rate (constant) or the factor of the noam schedule */
    tfm_schedule schedule;
    int warmup;             /* noam warm-up steps */
    float dropout;          /* P_drop of §5.4 (0.1 in the paper) */
    float label_smoothing;  /* ε_ls of §5.4 (0.1 in the paper) */
    float clip_norm;        /* global gradient-norm clipping; <= 0: off */
    double beta1, beta2, adam_eps; /* Adam: 0.9, 0.98, 1e-9 (§5.3) */
    uint64_t seed;          /* dropout masks */
} tfm_train_config;

/** Adam, constant lr 1e-3, no dropout or smoothing or clipping, warm-up 4000, β (0.9, 0.98), ε 1e-9. */
tfm_train_config tfm_train_config_default(void);

typedef struct tfm_trainer tfm_trainer;

/** What one step did. */
typedef struct {
    double loss;      /* mean label-smoothed cross-entropy over the non-pad targets, nats */
    double lr;        /* the learning rate this step used */
    double grad_norm; /* global L2 norm of the gradient before clipping */
    size_t n_tokens;  /* non-pad targets in the batch */
} tfm_step_stats;

/** Prepares to train `model` (which the trainer updates in place and does not own): gradients,
 * Adam moments and every activation buffer for batches of up to max_batch × (max_src, max_tgt)
 * tokens (max_tgt counts whole target rows, BOS and EOS included) are allocated here, so no
 * step allocates. Errors: TFM_ERR_INVALID_ARG (bad config or sizes), TFM_ERR_NOMEM. */
tfm_status tfm_trainer_create(tfm_model *model, const tfm_train_config *cfg, int max_batch, int max_src,
                              int max_tgt, tfm_trainer **out);

/** One training step on a batch: forward with dropout, loss, backward, clipping, one optimizer
 * update. src (B, S) and tgt (B, T) are laid out as for tfm_model_score (rows padded with pad_id;
 * target rows BOS first, EOS last). Errors: TFM_ERR_INVALID_ARG / TFM_ERR_RANGE as
 * tfm_model_score, also for a batch larger than the trainer was created for; TFM_ERR_NUMERIC if the
 * loss or gradient is not finite (the parameters are then left unchanged). */
tfm_status tfm_trainer_step(tfm_trainer *t, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                            tfm_step_stats *stats);

/** Steps taken so far (the t of Adam's bias correction and of the schedule). */
int64_t tfm_trainer_steps(const tfm_trainer *t);

void tfm_trainer_free(tfm_trainer *t);

#ifdef __cplusplus
}
#endif
#endif
