/* transformer.c — the training loop: steps over a batcher until a step or time limit, validation
 * loss and perplexity every N steps, the best model by validation loss, periodic resumable
 * checkpoints, exact resume, a stop flag a signal handler may set, and progress through a callback.
 * `tfm train` (both its text and id-file modes) is a thin command line over it.
 *
 * A run in C (error handling left out; docs/TRAINING.md has the whole example):
 *
 *     tfm_trainer_create(model, &train_cfg, 1, 1, 2, &tr);   // the loop reserves every batch shape
 *     tfm_loop_config lc = tfm_loop_config_default();
 *     lc.max_steps = 10000; lc.eval_every = 250; lc.save_path = "m.safetensors";
 *     lc.best_path = "m.best.safetensors"; lc.stop = &g_stop; lc.on_event = print_progress;
 *     tfm_status st = tfm_train_loop(tr, train_batches, valid_batches, &lc, &result);
 *     // TFM_OK: a limit was reached; TFM_ERR_INTERRUPTED: *stop was set (m.safetensors resumes)
 *
 * Resume: tfm_model_load(path), tfm_trainer_create with the same tfm_train_config, then
 * tfm_trainer_load_state(tr, path); the loop continues at the data position saved there, with the
 * same batches and dropout masks as a run never stopped (bit for bit, any thread count; a stop by
 * the time limit validates once more, which may update the best checkpoint: docs/TRAINING.md). */
#ifndef TFM_TRAIN_LOOP_H
#define TFM_TRAIN_LOOP_H

#include "tfm/export.h"

#include "tfm/data.h"
#include "tfm/train.h"

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a progress event reports. */
typedef enum {
    TFM_LOOP_EVENT_STEP = 0,       /* a training step finished */
    TFM_LOOP_EVENT_VALIDATION = 1, /* the validation set was scored (and the best model saved if improved) */
    TFM_LOOP_EVENT_SAVE = 2,       /* a checkpoint was written to save_path */
    TFM_LOOP_EVENT_STOP = 3        /* *stop was seen; the final checkpoint follows */
} tfm_loop_event_kind;

/** One progress event. Fields not listed for a kind are 0 (NULL for path). */
typedef struct {
    tfm_loop_event_kind kind;
    int64_t step;            /* all kinds: the trainer's step count (resumed steps included) */
    int64_t run_steps;       /* all kinds: steps taken by this call */
    double elapsed_s;        /* all kinds: wall-clock seconds since this call's first step began */
    tfm_step_stats stats;    /* STEP: loss (nats per target), lr, gradient norm, target tokens */
    double tokens_per_s;     /* STEP: target tokens per second over the last window of >= 2 s (0 before) */
    double valid_loss;       /* VALIDATION: mean negative log-likelihood per target token, nats */
    double valid_perplexity; /* VALIDATION: exp(valid_loss) */
    int improved;            /* VALIDATION: lower than every earlier validation of the run (resumes included) */
    const char *path;        /* SAVE: the file written; VALIDATION: best_path when the best model was saved */
} tfm_loop_event;

/** Receives progress events, on the calling thread, between steps. It may set *cfg->stop to end
 * the run after the current step; it must not free the trainer or the batchers. */
typedef void (*tfm_loop_callback)(const tfm_loop_event *event, void *user);

/** How long to train and what to save. */
typedef struct {
    int64_t max_steps;    /* stop when the trainer's step count reaches this (resumed steps count); >= 1 */
    double time_limit_s;  /* stop after this many seconds of training in this call (from the first
                             step, after the memory reservation); 0: no limit */
    int64_t eval_every;   /* validate every N steps (needs a validation batcher) and after the last
                             step; 0: only after the last step */
    int64_t save_every;   /* also write save_path every N steps; 0: only at the end */
    const char *save_path;/* the checkpoint written at the end (and every save_every steps); NULL: none */
    int save_resumable;   /* 1: save_path holds the train_state. tensors (tfm_trainer_save) so that
                             training can resume; 0: a plain model (tfm_model_save) */
    const char *best_path;/* the model with the lowest validation loss (tfm_model_save); NULL: none */
    volatile sig_atomic_t *stop; /* NULL, or a flag the caller (a signal handler, the callback,
                             another thread) sets non-zero: the loop ends after the current step,
                             writes save_path and returns TFM_ERR_INTERRUPTED */
    tfm_loop_callback on_event; /* NULL: silent */
    void *user;           /* passed to on_event */
} tfm_loop_config;

/** max_steps 1, no time limit, eval_every 0, save_every 0, no files, save_resumable 1, no stop
 * flag, no callback. */
TFM_API tfm_loop_config tfm_loop_config_default(void);

/** Why the loop ended. */
typedef enum {
    TFM_LOOP_END_STEPS = 0,  /* the trainer reached max_steps */
    TFM_LOOP_END_TIME = 1,   /* time_limit_s ran out */
    TFM_LOOP_END_STOPPED = 2 /* *stop was set */
} tfm_loop_end;

/** What a run did. */
typedef struct {
    tfm_loop_end end;
    int64_t steps;          /* the trainer's step count at the end */
    int64_t run_steps;      /* steps taken by this call */
    double elapsed_s;       /* wall-clock seconds since this call's first step began */
    double best_valid_loss; /* lowest validation loss, resumes included (INFINITY if never validated) */
    double last_valid_loss; /* the last validation of this call (NAN if none) */
} tfm_loop_result;

/** Trains `tr`'s model on `train` batches until max_steps, time_limit_s or *stop.
 *
 * Before the first step: checks the configuration and that the folders of save_path and best_path
 * exist (nothing is trained otherwise), moves `train` to the data position recorded in the trainer
 * (tfm_trainer_progress: (0, 0) for a new trainer, the saved one after tfm_trainer_load_state) and
 * reserves memory for every batch shape the batcher can produce, so no step allocates.
 *
 * Each step: the next batch, tfm_trainer_step, a STEP event. Then, if `valid` is given, every
 * eval_every steps and after the last step: the validation loss over one pass of `valid` (sum of
 * -ln p(target) over every non-pad target / their number, with dropout off, as tfm_model_score),
 * best_path written if it is the lowest so far, a VALIDATION event. Every save_every steps (except
 * the last, which the final save covers): save_path, a SAVE event. A run stopped by the time limit
 * between validations validates once more; a run stopped by *stop does not (it ends quickly).
 * At the end save_path is written (with the data position and the best validation loss when
 * save_resumable) and the trainer's progress is left at the current position, so a second call
 * continues where this one ended.
 *
 * With MPI ranks (tfm_trainer_set_dist, tfm/dist.h) every rank calls this with the same batchers
 * and configuration: rank 0 alone validates, writes save_path and best_path and calls on_event;
 * *stop (from any rank) and the time limit (rank 0's clock) are agreed before every step; before
 * the first step the ranks check that they hold the same settings, weights, optimizer state and
 * batches, and at every save the same weights (TFM_ERR_INVALID_ARG on every rank otherwise).
 *
 * A step count already at max_steps trains nothing and only saves again. `result` may be NULL.
 * Returns TFM_OK when a limit ended the run; TFM_ERR_INTERRUPTED when *stop did (after save_path
 * was written). Errors (each with tfm_last_error() naming the step, file or setting):
 * TFM_ERR_INVALID_ARG for a bad configuration, or a trainer whose recorded position belongs to other
 * batches (tfm_batcher_batching differs); TFM_ERR_IO for a missing folder or a failed save; those
 * of tfm_trainer_step, tfm_model_score and tfm_trainer_reserve; TFM_ERR_NOMEM.
 * Divergence: TFM_ERR_NUMERIC when the training loss or gradient norm of a step (the trainer
 * refuses the step), a parameter after an update, or a validation loss is NaN or infinite. The run
 * stops at once and writes nothing more: save_path and best_path keep their last finite versions
 * (this run's last saves, or the files as they were before it), and the message says so, e.g.
 * "step 12: validation loss is NaN; training stopped, nothing saved; kept checkpoint m.safetensors
 * from step 10; kept best model m.best.safetensors from step 10" (docs/HARDENING.md). */
TFM_API tfm_status tfm_train_loop(tfm_trainer *tr, tfm_batcher *train, tfm_batcher *valid, const tfm_loop_config *cfg,
                                  tfm_loop_result *result);

#ifdef __cplusplus
}
#endif
#endif
