/* The training step: forward with dropout, label-smoothed cross-entropy, backward, clipping,
 * Adam or SGD (Vaswani et al. 2017, §5). Every buffer is allocated by tfm_trainer_create. */
#include "model_internal.h"
#include "ops.h"
#include "optim.h"
#include "rng.h"
#include "tfm/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tfm_trainer {
    tfm_model *m;
    tfm_train_config cfg;
    int max_B, max_S, max_T;
    tfm_arena state;    /* gradients, Adam moments, per-row losses, targets */
    float *grads;       /* [n_params], laid out as the parameters */
    float *adam_m, *adam_v;
    model_params g;     /* named views of grads */
    float *losses;      /* [max_B · (max_T − 1)] */
    int32_t *targets;   /* [max_B · (max_T − 1)] */
    tfm_arena ws_arena;
    grad_workspace ws;
    tfm_rng rng;        /* dropout seeds */
    int64_t step;
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

static tfm_status validate(const tfm_train_config *c) {
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

tfm_status tfm_trainer_create(tfm_model *m, const tfm_train_config *cfg, int max_B, int max_S, int max_T,
                              tfm_trainer **out) {
    *out = NULL;
    TRY(validate(cfg));
    RETURN_IF(max_B < 1 || max_S < 0 || max_T < 2, TFM_ERR_INVALID_ARG,
              "trainer sizes must be batch >= 1, source >= 0, target >= 2; got %d, %d, %d", max_B, max_S, max_T);
    RETURN_IF(max_S > m->cfg.max_len || max_T - 1 > m->cfg.max_len, TFM_ERR_RANGE,
              "trainer sizes (source %d, target %d) exceed the model's max_len %d", max_S, max_T - 1, m->cfg.max_len);
    tfm_trainer *t = calloc(1, sizeof *t);
    RETURN_IF(!t, TFM_ERR_NOMEM, "out of memory creating a trainer");
    t->m = m;
    t->cfg = *cfg;
    t->max_B = max_B;
    t->max_S = max_S;
    t->max_T = max_T;
    rng_seed(&t->rng, cfg->seed, 0x7472616eULL);
    const size_t n = m->n_params, rows = (size_t)max_B * (size_t)(max_T - 1);
    const int adam = cfg->optimizer == TFM_OPTIMIZER_ADAM;
    /* the same sequence of takes counts the bytes (base NULL), then hands out the pointers */
    tfm_arena counter = {NULL, 0, 0};
    tfm_status st = TFM_OK;
    for (tfm_arena *a = &counter;; a = &t->state) {
        t->grads = arena_take_f32(a, n);
        t->adam_m = adam ? arena_take_f32(a, n) : NULL;
        t->adam_v = adam ? arena_take_f32(a, n) : NULL;
        t->losses = arena_take_f32(a, rows);
        t->targets = arena_take_bytes(a, rows * sizeof(int32_t));
        if (a == &t->state) break;
        st = arena_init(&t->state, counter.used, "the gradients and optimizer state");
        if (st != TFM_OK) break;
    }
    if (st == TFM_OK) {
        params_layout(&m->cfg, &t->g, t->grads, NULL, NULL);
        tfm_arena wc = {NULL, 0, 0};
        grad_workspace_layout(&m->cfg, max_B, max_S, max_T - 1, &wc, NULL);
        st = arena_init(&t->ws_arena, wc.used, "the backward workspace");
    }
    if (st == TFM_OK) {
        grad_workspace_layout(&m->cfg, max_B, max_S, max_T - 1, &t->ws_arena, &t->ws);
        st = model_reserve(m, max_B, max_S, max_T - 1, 1);
    }
    if (st != TFM_OK) {
        tfm_trainer_free(t);
        return st;
    }
    *out = t;
    return TFM_OK;
}

tfm_status tfm_trainer_step(tfm_trainer *t, int B, int S, int T, const int32_t *src, const int32_t *tgt,
                            tfm_step_stats *stats) {
    tfm_model *m = t->m;
    const tfm_config *c = &m->cfg;
    TRY(model_check_batch(m, B, S, T, src, tgt));
    RETURN_IF(B > t->max_B || S > t->max_S || T > t->max_T, TFM_ERR_INVALID_ARG,
              "batch %d x (%d, %d) is larger than the trainer was created for (%d x (%d, %d))", B, S, T, t->max_B,
              t->max_S, t->max_T);
    const int Td = T - 1;
    const size_t N = (size_t)B * (size_t)Td, V = (size_t)c->tgt_vocab;
    TRY(model_reserve(m, B, S, Td, 1)); /* within capacity: only re-carves, never allocates */
    dropout_cfg drop = {t->cfg.dropout, ((uint64_t)rng_u32(&t->rng) << 32) | rng_u32(&t->rng)};

    model_forward(m, B, S, Td, src, tgt, (size_t)T, &drop);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < Td; i++) t->targets[(size_t)b * (size_t)Td + (size_t)i] = tgt[(size_t)b * (size_t)T + (size_t)i + 1];
    size_t n_tok = 0;
    double loss = cross_entropy_forward(t->losses, &n_tok, m->acts.logits, t->targets, c->pad_id,
                                        t->cfg.label_smoothing, N, V);
    RETURN_IF(!isfinite(loss), TFM_ERR_NUMERIC, "step %lld: the loss is %g; parameters left unchanged",
              (long long)(t->step + 1), loss);
    cross_entropy_backward(m->acts.logits, m->acts.logits, t->targets, c->pad_id, t->cfg.label_smoothing, n_tok, N, V);
    memset(t->grads, 0, m->n_params * sizeof(float));
    model_backward(m, &t->g, &t->ws, src, tgt, (size_t)T, &drop);
    double norm = optim_clip_grad_norm(t->grads, m->n_params, t->cfg.clip_norm);
    RETURN_IF(!isfinite(norm), TFM_ERR_NUMERIC, "step %lld: the gradient norm is %g; parameters left unchanged",
              (long long)(t->step + 1), norm);

    t->step++;
    double lr = lr_schedule(t->cfg.schedule, t->cfg.lr, t->step, c->d_model, t->cfg.warmup);
    float *params = (float *)m->param_arena.base;
    if (t->cfg.optimizer == TFM_OPTIMIZER_ADAM) {
        adam_hparams hp = {t->cfg.beta1, t->cfg.beta2, t->cfg.adam_eps};
        optim_adam_step(params, t->adam_m, t->adam_v, t->grads, m->n_params, lr, &hp, t->step);
    } else {
        optim_sgd_step(params, t->grads, m->n_params, lr);
    }
    if (stats) {
        stats->loss = loss;
        stats->lr = lr;
        stats->grad_norm = norm;
        stats->n_tokens = n_tok;
    }
    return TFM_OK;
}

int64_t tfm_trainer_steps(const tfm_trainer *t) { return t->step; }

void tfm_trainer_free(tfm_trainer *t) {
    if (!t) return;
    arena_free(&t->state);
    arena_free(&t->ws_arena);
    free(t);
}
