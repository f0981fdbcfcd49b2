/* Gradient clipping inside tfm_trainer_step: the step computes the global norm, and Adam or SGD
 * multiplies each gradient by the clipping coefficient as it reads it (optim_clip_coef, ops.h's
 * grad_scale). One step with a bound below the norm must give the bits of the step done by hand
 * from the same unclipped gradients — optim_clip_grad_norm on a copy, then optim_adam_step or
 * optim_sgd_step with no scale — and must differ from the same step without clipping. */
#include "dist_internal.h"
#include "model_internal.h"
#include "optim.h"
#include "test_tiny_model.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, S = 7, T = 8 };

static const int32_t SRC[B * S] = {3, 7, 10, 4, 5, 8, 9, /**/ 6, 9, 3, 12, 0, 0, 0, /**/ 5, 5, 7, 3, 9, 0, 0};
static const int32_t TGT[B * T] = {1, 4, 8, 12, 5, 6, 7, 2, /**/ 1, 9, 3, 2, 0, 0, 0, 0, /**/ 1, 3, 4, 5, 6, 2, 0, 0};

static tfm_model *make_model(void) {
    tfm_config c = test_tiny_config();
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 5, &m) == TFM_OK, "model: %s", tfm_last_error());
    return m;
}

/* One step of a fresh model (seed 5) with this optimizer and bound; its parameters (malloc'd) and,
 * if grads is not NULL, a copy of the step's gradients (before clipping). */
static float *one_step(tfm_optimizer opt, float clip, float *grads, tfm_step_stats *st, size_t *n_out) {
    tfm_model *m = make_model();
    if (!m) return NULL;
    tfm_train_config tc = tfm_train_config_default();
    tc.optimizer = opt;
    tc.lr = 0.01;
    tc.schedule = TFM_SCHEDULE_CONSTANT;
    tc.clip_norm = clip;
    tfm_trainer *t = NULL;
    float *p = NULL;
    if (tfm_trainer_create(m, &tc, B, S, T, &t) == TFM_OK && tfm_trainer_step(t, B, S, T, SRC, TGT, st) == TFM_OK) {
        *n_out = m->n_params;
        p = malloc(m->n_params * sizeof *p);
        memcpy(p, m->param_arena.base, m->n_params * sizeof *p);
        if (grads) memcpy(grads, trainer_gradients(t), m->n_params * sizeof *grads);
    } else {
        CHECK(0, "trainer: %s", tfm_last_error());
    }
    tfm_trainer_free(t);
    tfm_model_free(m);
    return p;
}

static void check(tfm_optimizer opt, const char *name) {
    tfm_model *m0 = make_model(); /* the parameters before the step */
    if (!m0) return;
    const size_t n = m0->n_params;
    float *g = malloc(n * sizeof *g), *want = malloc(n * sizeof *want), *mom = calloc(n, sizeof *mom),
          *vel = calloc(n, sizeof *vel);
    tfm_step_stats sc, sn;
    size_t n1 = 0, n2 = 0;
    float *clipped = one_step(opt, 0.05f, g, &sc, &n1), *plain = one_step(opt, 0.0f, NULL, &sn, &n2);
    if (clipped && plain && n1 == n && n2 == n) {
        CHECK(sc.grad_norm > 0.5 && sc.grad_norm == sn.grad_norm, "%s: gradient norm %g (clipped run) vs %g", name,
              sc.grad_norm, sn.grad_norm);
        memcpy(want, m0->param_arena.base, n * sizeof *want);
        const double norm = optim_clip_grad_norm(g, n, 0.05); /* g scaled in place */
        CHECK(norm == sc.grad_norm, "%s: the step's norm %.9g, by hand %.9g", name, sc.grad_norm, norm);
        if (opt == TFM_OPTIMIZER_ADAM) {
            const tfm_train_config tc = tfm_train_config_default();
            const adam_hparams hp = {tc.beta1, tc.beta2, tc.adam_eps};
            optim_adam_step(want, mom, vel, g, 1.0f, n, 0.01, &hp, 1);
        } else {
            optim_sgd_step(want, g, 1.0f, n, 0.01);
        }
        size_t i = 0;
        while (i < n && clipped[i] == want[i]) i++;
        CHECK(i == n, "%s: the clipped step differs from clipping then stepping by hand at %zu: %.9g vs %.9g", name, i,
              (double)clipped[i < n ? i : 0], (double)want[i < n ? i : 0]);
        CHECK(memcmp(clipped, plain, n * sizeof *plain) != 0, "%s: clipping changed nothing", name);
    }
    free(g), free(want), free(mom), free(vel), free(clipped), free(plain);
    tfm_model_free(m0);
}

int main(void) {
    check(TFM_OPTIMIZER_ADAM, "adam");
    check(TFM_OPTIMIZER_SGD, "sgd");
    return test_finish("test_trainer_clip");
}
