/* The training step: forward with dropout, label-smoothed cross-entropy, backward, clipping,
 * Adam or SGD (Vaswani et al. 2017, §5). Every buffer is allocated by tfm_trainer_create. */
#include "dist_internal.h"
#include "checkpoint.h"
#include "model_context.h"
#include "model_grad.h"
#include "model_params.h"
#include "ops.h"
#include "optim.h"
#include "rng.h"
#include "tfm/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tfm_trainer {
    tfm_model *m;
    tfm_context *ctx;   /* the trainer's own workspace (activations) */
    tfm_train_config cfg;
    tfm_arena state;    /* gradients, Adam moments */
    float *grads;       /* [n_params], laid out as the parameters */
    float *adam_m, *adam_v;
    model_params g;     /* named views of grads */
    size_t cap_rows;    /* prediction rows B·(T − 1) that losses and targets hold */
    float *losses;      /* [2 · cap_rows]: the per-row losses, then their log-sum-exps (the backward's) */
    int32_t *targets;   /* [cap_rows] */
    tfm_arena ws_arena; /* the backward workspace, re-carved per batch shape */
    grad_workspace ws;
    tfm_rng rng;        /* dropout seeds */
    int64_t step;
    tfm_train_progress progress;
    tfm_dist *dist;     /* NULL: one process; else each step trains this rank's share (docs/MPI.md) */
};

tfm_train_config tfm_train_config_default(void) {
    tfm_train_config c;
    c.optimizer = TFM_OPTIMIZER_ADAM;
    c.lr = 1e-3;
    c.schedule = TFM_SCHEDULE_CONSTANT;
    c.warmup = 4000;
    c.dropout = 0.0f;
    c.label_smoothing = 0.0f;
    c.clip_norm = 0.0f;
    c.beta1 = 0.9;
    c.beta2 = 0.98;
    c.adam_eps = 1e-9;
    c.seed = 1;
    return c;
}

tfm_status tfm_train_config_check(const tfm_train_config *c) {
    RETURN_IF(!c, TFM_ERR_INVALID_ARG, "tfm_train_config_check: NULL config");
    TRY(tfm_kernel_opts_validate(&c->kernels));
    RETURN_IF(c->optimizer != TFM_OPTIMIZER_ADAM && c->optimizer != TFM_OPTIMIZER_SGD, TFM_ERR_INVALID_ARG,
              "optimizer must be adam or sgd");
    RETURN_IF(c->schedule != TFM_SCHEDULE_CONSTANT && c->schedule != TFM_SCHEDULE_NOAM, TFM_ERR_INVALID_ARG,
              "schedule must be constant or noam");
    RETURN_IF(!(c->lr > 0.0) || !isfinite(c->lr), TFM_ERR_INVALID_ARG, "lr must be positive, got %g", c->lr);
    RETURN_IF(c->schedule == TFM_SCHEDULE_NOAM && c->warmup < 1, TFM_ERR_INVALID_ARG,
              "the noam schedule needs warmup >= 1, got %d", c->warmup);
    RETURN_IF(!(c->dropout >= 0.0f && c->dropout < 1.0f), TFM_ERR_INVALID_ARG, "dropout must be in [0, 1), got %g",
              (double)c->dropout);
    RETURN_IF(!(c->label_smoothing >= 0.0f && c->label_smoothing <= 1.0f), TFM_ERR_INVALID_ARG,
              "label smoothing must be in [0, 1], got %g", (double)c->label_smoothing);
    RETURN_IF(!(c->clip_norm >= 0.0f) || !isfinite(c->clip_norm), TFM_ERR_INVALID_ARG,
              "clip norm must be >= 0 (0: off), got %g", (double)c->clip_norm);
    RETURN_IF(!(c->beta1 >= 0.0 && c->beta1 < 1.0 && c->beta2 >= 0.0 && c->beta2 < 1.0 && c->adam_eps > 0.0),
              TFM_ERR_INVALID_ARG, "Adam needs 0 <= beta1, beta2 < 1 and eps > 0");
    return TFM_OK;
}

/* Grows the workspaces for B rows of (S, T) that this process itself trains. */
static tfm_status reserve_rows(tfm_trainer *t, int B, int S, int T) {
    tfm_model *m = t->m;
    RETURN_IF(B < 1 || S < 0 || T < 2, TFM_ERR_INVALID_ARG,
              "batch sizes must be B >= 1, S >= 0, T >= 2; got %d, %d, %d", B, S, T);
    RETURN_IF(S > tfm_model_config(m)->max_len || T - 1 > tfm_model_config(m)->max_len, TFM_ERR_RANGE,
              "a batch of source %d and target %d tokens exceeds the model's max_len %d", S, T - 1,
              tfm_model_config(m)->max_len);
    const size_t rows = (size_t)B * (size_t)(T - 1);
    if (rows > t->cap_rows) {
        float *l = realloc(t->losses, 2 * rows * sizeof *l);
        if (l) t->losses = l;
        int32_t *y = l ? realloc(t->targets, rows * sizeof *y) : NULL;
        if (y) t->targets = y;
        RETURN_IF(!l || !y, TFM_ERR_NOMEM, "out of memory reserving a batch of %d x %d targets", B, T - 1);
        t->cap_rows = rows;
    }
    tfm_arena counter = {NULL, 0, 0};
    grad_workspace_layout(context_kernels(t->ctx), tfm_model_config(m), B, S, T - 1, &counter, NULL);
    if (counter.used > t->ws_arena.cap) {
        arena_free(&t->ws_arena);
        TRY(arena_init(&t->ws_arena, counter.used, "the backward workspace"));
    }
    return context_reserve(t->ctx, B, S, T - 1, 1);
}

tfm_status tfm_trainer_reserve(tfm_trainer *t, int B, int S, int T) {
    /* with ranks, a step trains only this rank's share of the B rows */
    return reserve_rows(t, t->dist && B >= 1 ? dist_share_max(t->dist, B) : B, S, T);
}

tfm_status tfm_trainer_create(tfm_model *m, const tfm_train_config *cfg, int max_B, int max_S, int max_T,
                              tfm_trainer **out) {
    *out = NULL;
    RETURN_IF(tfm_model_config(m)->arch == TFM_ARCH_ENCODER_ONLY, TFM_ERR_UNSUPPORTED,
              "an encoder-only model has no generator and no training loss here: it runs for inference only "
              "(docs/BERT.md)");
    RETURN_IF(tfm_model_config(m)->embed_norm || tfm_model_config(m)->type_vocab, TFM_ERR_UNSUPPORTED,
              "BERT's embedding block (type_vocab, embed_norm) has no backward pass here: inference only "
              "(docs/BERT.md)");
    RETURN_IF(tfm_config_decoder_start(tfm_model_config(m)) != tfm_model_config(m)->bos_id, TFM_ERR_UNSUPPORTED,
              "the model's decoder starts from id %d, not from its BOS %d (a Marian or NLLB model): tfm's training "
              "data starts every target with BOS, so it trains models that start from BOS only (docs/MODELS.md)",
              tfm_config_decoder_start(tfm_model_config(m)), tfm_model_config(m)->bos_id);
    const char *llm = tfm_config_inference_only(tfm_model_config(m));
    RETURN_IF(llm, TFM_ERR_UNSUPPORTED, "%s has no backward pass here: this model runs for inference only (docs/LLM.md)",
              llm);
    TRY(tfm_train_config_check(cfg));
    tfm_trainer *t = calloc(1, sizeof *t);
    RETURN_IF(!t, TFM_ERR_NOMEM, "out of memory creating a trainer");
    t->m = m;
    t->cfg = *cfg;
    rng_seed(&t->rng, cfg->seed, 0x7472616eULL);
    t->progress.best_valid_loss = INFINITY;
    const size_t n = model_n_params(m);
    const int adam = cfg->optimizer == TFM_OPTIMIZER_ADAM;
    /* the same sequence of takes counts the bytes (base NULL), then hands out the pointers */
    tfm_arena counter = {NULL, 0, 0};
    tfm_status st = TFM_OK;
    for (tfm_arena *a = &counter;; a = &t->state) {
        t->grads = arena_take_f32(a, n);
        t->adam_m = adam ? arena_take_f32(a, n) : NULL;
        t->adam_v = adam ? arena_take_f32(a, n) : NULL;
        if (a == &t->state) break;
        st = arena_init(&t->state, counter.used, "the gradients and optimizer state");
        if (st != TFM_OK) break;
    }
    if (st == TFM_OK) st = tfm_context_create_opts(m, &cfg->kernels, &t->ctx);
    if (st == TFM_OK) {
        params_layout(tfm_model_config(m), &t->g, t->grads, NULL, NULL);
        st = tfm_trainer_reserve(t, max_B, max_S, max_T);
    }
    if (st != TFM_OK) {
        tfm_trainer_free(t);
        return st;
    }
    *out = t;
    return TFM_OK;
}

/* Data parallelism (docs/MPI.md): with ranks, this rank trains rows [row0, row0 + rows) of the
 * global batch; the loss is normalised by the global count of non-pad targets (summed over ranks
 * before the backward pass), the gradients are summed over ranks between the backward pass and the
 * clipping, so every rank clips by the global norm and applies the same update. */
/* Wall-clock seconds, for the split of tfm_step_stats. */
static double step_clock_s(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tfm_status tfm_trainer_step(tfm_trainer *t, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                            tfm_step_stats *stats) {
    tfm_model *m = t->m;
    const tfm_config *c = tfm_model_config(m);
    const size_t n_params = model_n_params(m);
    tfm_dist *d = t->dist;
    const int ranks = tfm_dist_size(d);
    if (stats) memset(stats, 0, sizeof *stats);
    TRY(model_check_batch(m, B, S, T, src, tgt));
    int row0 = 0, rows = B;
    dist_share(d, B, &row0, &rows);
    src += (size_t)row0 * (size_t)S;
    tgt += (size_t)row0 * (size_t)T;
    const int Td = T - 1;
    const size_t N = (size_t)rows * (size_t)Td, V = (size_t)c->tgt_vocab;
    if (rows > 0) TRY(reserve_rows(t, rows, S, T)); /* a reserved shape only re-carves: no allocation */
    tfm_arena ws = t->ws_arena;
    ws.used = 0;
    if (rows > 0) grad_workspace_layout(context_kernels(t->ctx), c, rows, S, Td, &ws, &t->ws);
    /* the step's dropout seed: two draws, high half first (rng_u64 fixes the order, which an
     * expression with two rng_u32 calls would leave to the compiler); every rank draws it */
    dropout_cfg drop = {t->cfg.dropout, dist_dropout_seed(d, rng_u64(&t->rng))};
    if (d) d->step = t->step + 1;

    float *logits = context_logits(t->ctx);
    size_t n_tok = 0;
    double loss = 0.0;
    const double t_fwd = step_clock_s();
    if (rows > 0) {
        model_forward(t->ctx, rows, S, Td, src, tgt, (size_t)T, &drop);
        logits = context_logits(t->ctx);
        for (int b = 0; b < rows; b++)
            for (int i = 0; i < Td; i++)
                t->targets[(size_t)b * (size_t)Td + (size_t)i] = tgt[(size_t)b * (size_t)T + (size_t)i + 1];
        loss = cross_entropy_forward_lse(t->losses, t->losses + t->cap_rows, &n_tok, logits, t->targets, c->pad_id,
                                         t->cfg.label_smoothing, N, V);
    }
    if (ranks > 1) { /* the global mean: Σ loss sums / Σ target counts */
        double v[2] = {n_tok ? loss * (double)n_tok : (isfinite(loss) ? 0.0 : loss), (double)n_tok};
        TRY(dist_sum_f64(d, v, 2, "the sum of the loss and the target count"));
        n_tok = (size_t)v[1];
        loss = n_tok ? v[0] / v[1] : v[0];
    }
    if (!isfinite(loss)) {
        if (stats) *stats = (tfm_step_stats){.loss = loss, .n_tokens = n_tok, .non_finite = TFM_NON_FINITE_LOSS,
                                             .non_finite_value = loss};
        return dist_fail(d, tfm_set_error(TFM_ERR_NUMERIC, "step %lld: the loss is %g; parameters left unchanged",
                                          (long long)(t->step + 1), loss), 1);
    }
    const double t_bwd = step_clock_s();
    if (rows > 0)
        cross_entropy_backward_lse(logits, logits, t->losses + t->cap_rows, t->targets, c->pad_id,
                                   t->cfg.label_smoothing, n_tok, N, V);
    memset(t->grads, 0, n_params * sizeof(float));
    if (rows > 0) model_backward(t->ctx, &t->g, &t->ws, src, tgt, (size_t)T, &drop);
    const double t_upd = step_clock_s();
    if (ranks > 1) TRY(dist_sum_f32(d, t->grads, n_params, "the gradient allreduce"));
    float clip_coef; /* applied by the optimizer as it reads the gradients */
    double norm = optim_clip_coef(t->grads, n_params, t->cfg.clip_norm, &clip_coef);
    if (!isfinite(norm)) {
        if (stats) *stats = (tfm_step_stats){.loss = loss, .grad_norm = norm, .n_tokens = n_tok,
                                             .non_finite = TFM_NON_FINITE_GRAD_NORM, .non_finite_value = norm};
        return dist_fail(d, tfm_set_error(TFM_ERR_NUMERIC,
                                          "step %lld: the gradient norm is %g; parameters left unchanged",
                                          (long long)(t->step + 1), norm), 1);
    }

    t->step++;
    double lr = lr_schedule(t->cfg.schedule, t->cfg.lr, t->step, c->d_model, t->cfg.warmup);
    float *params = model_param_data(m);
    if (t->cfg.optimizer == TFM_OPTIMIZER_ADAM) {
        adam_hparams hp = {t->cfg.beta1, t->cfg.beta2, t->cfg.adam_eps};
        optim_adam_step(params, t->adam_m, t->adam_v, t->grads, clip_coef, n_params, lr, &hp, t->step);
    } else {
        optim_sgd_step(params, t->grads, clip_coef, n_params, lr);
    }
    if (stats) {
        stats->loss = loss;
        stats->lr = lr;
        stats->grad_norm = norm;
        stats->n_tokens = n_tok;
        const double t_end = step_clock_s();
        stats->forward_s = t_bwd - t_fwd;
        stats->backward_s = t_upd - t_bwd;
        stats->update_s = t_end - t_upd;
    }
    return TFM_OK;
}

tfm_status tfm_trainer_set_dist(tfm_trainer *t, tfm_dist *d) {
    RETURN_IF(!t, TFM_ERR_INVALID_ARG, "tfm_trainer_set_dist: NULL trainer");
    if (d) TRY(dist_comm_reserve(d, model_n_params(t->m)));
    t->dist = d;
    return TFM_OK;
}

tfm_dist *trainer_dist(const tfm_trainer *t) { return t->dist; }

const float *trainer_gradients(const tfm_trainer *t) { return t->grads; }

int trainer_optimizer_non_finite(const tfm_trainer *t, const char **which, size_t *index) {
    if (!t->adam_m) return 0;
    const float *const moments[2] = {t->adam_m, t->adam_v};
    static const char *const names[2] = {"adam_m", "adam_v"};
    const size_t n = model_n_params(t->m);
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n; i++)
            if (!isfinite(moments[k][i])) {
                *which = names[k];
                *index = i;
                return 1;
            }
    return 0;
}

uint64_t trainer_weights_fingerprint(const tfm_trainer *t) {
    return dist_fingerprint(0, model_param_data(t->m), model_n_params(t->m) * sizeof(float));
}

int64_t tfm_trainer_steps(const tfm_trainer *t) { return t->step; }

tfm_model *tfm_trainer_model(const tfm_trainer *t) { return t->m; }

const tfm_train_config *tfm_trainer_config(const tfm_trainer *t) { return &t->cfg; }

const char *tfm_trainer_kernels(const tfm_trainer *t, char *buf, size_t n) { return tfm_context_kernels(t->ctx, buf, n); }

void tfm_trainer_set_progress(tfm_trainer *t, const tfm_train_progress *p) { t->progress = *p; }

tfm_train_progress tfm_trainer_progress(const tfm_trainer *t) { return t->progress; }

/* The training settings an exact resume must share, as doubles (train_state.config). */
enum { N_CONFIG = 11 };
static const char *const k_config_names[N_CONFIG] = {"optimizer", "lr", "schedule", "warmup", "dropout",
                                                     "label_smoothing", "clip_norm", "beta1", "beta2",
                                                     "adam_eps", "seed"};

static void config_values(const tfm_train_config *c, double v[N_CONFIG]) {
    const double x[N_CONFIG] = {c->optimizer, c->lr, c->schedule, c->warmup, c->dropout, c->label_smoothing,
                                c->clip_norm, c->beta1, c->beta2, c->adam_eps, (double)c->seed};
    memcpy(v, x, sizeof x);
}

uint64_t trainer_fingerprint(const tfm_trainer *t) {
    double config[N_CONFIG];
    config_values(&t->cfg, config);
    const size_t n = model_n_params(t->m);
    uint64_t h = dist_fingerprint(trainer_weights_fingerprint(t), config, sizeof config);
    h = dist_fingerprint(h, &n, sizeof n);
    /* the model's configuration as its checkpoint metadata states it: two models with the same
     * tensor shapes but another position encoding, norm placement, epsilon ... must not mix */
    model_meta meta;
    const size_t nm = model_metadata(tfm_model_config(t->m), &meta);
    for (size_t i = 0; i < 2 * nm; i++) h = dist_fingerprint(h, meta.kv[i], strlen(meta.kv[i]) + 1);
    h = dist_fingerprint(h, &t->step, sizeof t->step);
    h = dist_fingerprint(h, &t->rng, sizeof t->rng);
    if (t->adam_m) {
        h = dist_fingerprint(h, t->adam_m, n * sizeof(float));
        h = dist_fingerprint(h, t->adam_v, n * sizeof(float));
    }
    return h;
}

/* The tensors of train_state. (tfm_trainer_save) over the given buffers, in the order they are
 * written and read; returns their count (the Adam moments only with Adam). */
static size_t state_tensors(const tfm_trainer *t, int64_t *step, tfm_rng *rng, int64_t position[3], double *best,
                            double config[N_CONFIG], ckpt_tensor x[7]) {
    const size_t n = model_n_params(t->m);
    size_t k = 0;
    if (t->adam_m) {
        x[k++] = (ckpt_tensor){"train_state.adam_m", "F32", n, t->adam_m};
        x[k++] = (ckpt_tensor){"train_state.adam_v", "F32", n, t->adam_v};
    }
    x[k++] = (ckpt_tensor){"train_state.step", "I64", 1, step};
    x[k++] = (ckpt_tensor){"train_state.rng", "U8", sizeof *rng, rng};
    x[k++] = (ckpt_tensor){"train_state.position", "I64", 3, position};
    x[k++] = (ckpt_tensor){"train_state.config", "F64", N_CONFIG, config};
    x[k++] = (ckpt_tensor){"train_state.best_valid_loss", "F64", 1, best};
    return k;
}

tfm_status tfm_trainer_save(const tfm_trainer *t, const char *path) {
    int64_t step = t->step;
    int64_t position[3] = {(int64_t)t->progress.epoch, (int64_t)t->progress.index, t->progress.batch_tokens};
    double best = t->progress.best_valid_loss;
    double config[N_CONFIG];
    config_values(&t->cfg, config);
    tfm_rng rng = t->rng;
    ckpt_tensor x[7];
    const size_t k = state_tensors(t, &step, &rng, position, &best, config, x);
    return model_save_extra(t->m, path, x, k);
}

tfm_status tfm_trainer_load_state(tfm_trainer *t, const char *path) {
    int64_t step = 0, position[3] = {0, 0, 0};
    double config[N_CONFIG], mine[N_CONFIG];
    config_values(&t->cfg, mine);
    double best = INFINITY;
    tfm_rng rng;
    ckpt_tensor x[7];
    const size_t k = state_tensors(t, &step, &rng, position, &best, config, x);
    tfm_status st = model_read_extra(path, x, k, "not a resumable checkpoint (save one with tfm train --data)");
    for (int i = 0; st == TFM_OK && i < N_CONFIG; i++)
        if (config[i] != mine[i])
            st = tfm_set_error(TFM_ERR_INVALID_ARG,
                               "%s was trained with %s %g but this run has %g: an exact resume needs the same "
                               "training settings",
                               path, k_config_names[i], config[i], mine[i]);
    if (st == TFM_OK && (step < 0 || position[0] < 0 || position[1] < 0))
        st = tfm_set_error(TFM_ERR_FORMAT, "%s: train_state holds a negative step or position", path);
    TRY(st);
    t->step = step;
    t->rng = rng;
    t->progress.epoch = (uint64_t)position[0];
    t->progress.index = (uint64_t)position[1];
    t->progress.best_valid_loss = best;
    t->progress.batch_tokens = position[2];
    return TFM_OK;
}

void tfm_trainer_free(tfm_trainer *t) {
    if (!t) return;
    free(t->losses);
    free(t->targets);
    arena_free(&t->state);
    arena_free(&t->ws_arena);
    tfm_context_free(t->ctx);
    free(t);
}
