/* transformer.c — training: label-smoothed cross-entropy, hand-written backpropagation, Adam or
 * SGD, the paper's warm-up schedule, gradient clipping. */
#ifndef TFM_TRAIN_H
#define TFM_TRAIN_H

#include "tfm/export.h"

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
    float clip_norm;        /* global gradient-norm clipping; 0: off (negative is refused) */
    double beta1, beta2, adam_eps; /* Adam: 0.9, 0.98, 1e-9 (§5.3) */
    uint64_t seed;          /* dropout masks */
    tfm_kernel_opts kernels; /* the kernels of the trainer's contexts (tfm/kernels.h); all zeros:
                                the tuned ones */
} tfm_train_config;

/** Adam, constant lr 1e-3, no dropout or smoothing or clipping, warm-up 4000, β (0.9, 0.98), ε 1e-9. */
TFM_API tfm_train_config tfm_train_config_default(void);

/** Checks a configuration as tfm_trainer_create does, so a program can refuse bad settings before
 * loading anything: optimizer and schedule known, lr positive and finite, warmup >= 1 with noam,
 * dropout in [0, 1), label_smoothing in [0, 1], clip_norm >= 0 and finite, 0 <= beta1, beta2 < 1,
 * adam_eps > 0. Errors: TFM_ERR_INVALID_ARG naming the setting and its value ("dropout must be in
 * [0, 1), got 1.5"). */
TFM_API tfm_status tfm_train_config_check(const tfm_train_config *c);

typedef struct tfm_trainer tfm_trainer;

/** Which quantity of a training step was not finite (tfm_step_stats.non_finite). A step checks
 * these two; tfm_train_loop checks more (parameters, validation loss, Adam moments: tfm/train_loop.h)
 * and names them in its own error. */
typedef enum {
    TFM_NON_FINITE_NONE = 0,  /* both were finite */
    TFM_NON_FINITE_LOSS,      /* the training loss (no backward pass was run) */
    TFM_NON_FINITE_GRAD_NORM  /* the global L2 norm of the gradient, before clipping */
} tfm_non_finite;

/** What one step did. */
typedef struct {
    double loss;      /* mean label-smoothed cross-entropy over the non-pad targets, nats */
    double lr;        /* the learning rate this step used */
    double grad_norm; /* global L2 norm of the gradient before clipping */
    size_t n_tokens;  /* non-pad targets in the batch */
    /* wall-clock seconds of the step's parts (bench/, docs/BENCH.md): forward with the loss;
     * backward from the loss's gradient; update: the gradient allreduce (MPI), clipping and the
     * optimizer. Their sum is the step less the batch checks and the workspace layout. */
    double forward_s, backward_s, update_s;
    /* Which quantity was not finite when the step returns TFM_ERR_NUMERIC (TFM_NON_FINITE_LOSS or
     * TFM_NON_FINITE_GRAD_NORM) and its value (NaN, +inf or -inf); the fields above keep what the
     * step had measured (loss and n_tokens; with GRAD_NORM also grad_norm). Otherwise NONE and 0. */
    tfm_non_finite non_finite;
    double non_finite_value;
} tfm_step_stats;

/** Prepares to train `model` (which the trainer updates in place and does not own): gradients,
 * Adam moments, and every activation buffer for a batch of max_batch × (max_src, max_tgt) tokens
 * (max_tgt counts whole target rows, BOS and EOS included) are allocated here; other batch shapes
 * are reserved with tfm_trainer_reserve, so no step allocates.
 * Errors: TFM_ERR_INVALID_ARG (bad config or sizes), TFM_ERR_RANGE, TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_trainer_create(tfm_model *model, const tfm_train_config *cfg, int max_batch, int max_src,
                                      int max_tgt, tfm_trainer **out);

/** Grows the trainer's and the model's workspaces (if needed) so that a batch of B × (S, T) —
 * T whole target rows — trains without allocating. Reserving every batch shape of an epoch before
 * the first step (the shapes of tfm_batcher repeat every epoch) sizes memory by what batches really
 * need, not by the largest B, S and T seen apart. Errors: TFM_ERR_INVALID_ARG, TFM_ERR_RANGE
 * (longer than max_len), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_trainer_reserve(tfm_trainer *t, int B, int S, int T);

/** One training step on a batch: forward with dropout, loss, backward, clipping, one optimizer
 * update. src (B, S) and tgt (B, T) are laid out as for tfm_model_score (rows padded with pad_id;
 * target rows BOS first, EOS last). A batch needing more workspace than reserved grows it first
 * (the only case in which a step allocates). With MPI ranks (tfm_trainer_set_dist, tfm/dist.h)
 * the batch is the global batch, the same on every rank: this rank trains its share of the rows,
 * the loss is the mean over the global batch's targets and the gradient is summed over the ranks
 * before clipping and the update (docs/MPI.md). Errors: TFM_ERR_INVALID_ARG / TFM_ERR_RANGE as
 * tfm_model_score; TFM_ERR_NOMEM; TFM_ERR_NUMERIC if the loss or gradient norm is not finite (the
 * parameters are then left unchanged; stats->non_finite says which, with its value); with ranks,
 * TFM_ERR_IO when another rank does not answer within the timeout. stats may be NULL; else the
 * step zeroes it first. */
TFM_API tfm_status tfm_trainer_step(tfm_trainer *t, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                                    tfm_step_stats *stats);

/** Where training stands besides the weights and the optimizer: the data position and the best
 * validation loss so far. The caller keeps it up to date; tfm_trainer_save stores it. */
typedef struct {
    uint64_t epoch, index;  /* the batcher position of the next batch (tfm_batcher_position) */
    double best_valid_loss; /* INFINITY before the first validation */
    int64_t batch_tokens;   /* the batching the position refers to (the caller checks it on resume) */
} tfm_train_progress;

/** Records the progress that tfm_trainer_save stores (call it before saving). */
TFM_API void tfm_trainer_set_progress(tfm_trainer *t, const tfm_train_progress *p);
/** The progress last recorded or restored by tfm_trainer_load_state ({0, 0, INFINITY} at first). */
TFM_API tfm_train_progress tfm_trainer_progress(const tfm_trainer *t);

/** Writes a resumable checkpoint atomically: every model tensor and the tokenizer, as
 * tfm_model_save, plus under train_state.: the Adam moments (adam_m, adam_v, F32 as the
 * parameters), the step count (step, I64), the dropout RNG (rng, U8), the progress (position I64
 * [3]: epoch, index, batch_tokens; best_valid_loss F64) and the training configuration (config
 * F64 [11]). A reader that ignores train_state. sees an ordinary model.
 * Errors: TFM_ERR_IO naming the path, TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_trainer_save(const tfm_trainer *t, const char *path);

/** Restores the optimizer state, step count, RNG and progress saved by tfm_trainer_save (the
 * weights are the model's: load the same checkpoint with tfm_model_load first), so training goes on
 * as if never stopped. The trainer's configuration must be the one saved (an exact resume needs
 * the same learning rate, schedule, dropout, seed, ...). Errors: TFM_ERR_IO; TFM_ERR_FORMAT naming
 * a missing or malformed train_state. tensor (e.g. a checkpoint saved without them);
 * TFM_ERR_INVALID_ARG naming the first setting that differs. */
TFM_API tfm_status tfm_trainer_load_state(tfm_trainer *t, const char *path);

/** The model the trainer updates (the one given to tfm_trainer_create). */
TFM_API tfm_model *tfm_trainer_model(const tfm_trainer *t);

/** The configuration the trainer was created with (owned by the trainer). */
TFM_API const tfm_train_config *tfm_trainer_config(const tfm_trainer *t);

/** The kernels the trainer's steps run, as tfm_context_kernels names them (written to buf, n bytes,
 * truncated); returns buf. */
TFM_API const char *tfm_trainer_kernels(const tfm_trainer *t, char *buf, size_t n);

/** Steps taken so far (the t of Adam's bias correction and of the schedule). */
TFM_API int64_t tfm_trainer_steps(const tfm_trainer *t);

/** Releases the trainer's gradients, optimizer state and workspaces, not the model (NULL is fine). */
TFM_API void tfm_trainer_free(tfm_trainer *t);

#ifdef __cplusplus
}
#endif
#endif
