/* Golden parity of the backward pass and the optimizers with PyTorch (tests/reference/
 * make_golden.py): the label-smoothed loss and every parameter's gradient after one backward, and
 * every parameter after three SGD steps and after three Adam steps (tfm_trainer_step), post-LN and
 * pre-LN, ReLU and GELU, tied embeddings, padding in source and target. */
#include "model_internal.h"
#include "ops.h"
#include "safetensors.h"
#include "golden_case.h"
#include "golden_grads.h"

#include <stdint.h>

#define TOL_GRAD 1e-4
#define TOL_LOSS 1e-5
#define LABEL_SMOOTHING 0.1f

static void run_case(const char *name) {
    char p[512];
    golden_case g;
    if (!golden_case_load(name, &g)) {
        golden_case_free(&g);
        return;
    }
    tfm_model *m = g.m;
    const tfm_config *c = &m->cfg;
    const int B = g.B, S = g.S, T = g.T, Td = T - 1;
    const size_t V = (size_t)c->tgt_vocab, N = (size_t)(B * Td);
    const int32_t *sb = g.src_ids, *tb = g.tgt_ids;
    int32_t *y = malloc(sizeof(int32_t) * N);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Td; t++) y[b * Td + t] = tb[b * T + t + 1];

    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK && context_reserve(ctx, B, S, Td, 1) == TFM_OK, "%s: reserve", name);
    model_forward(ctx, B, S, Td, sb, tb, (size_t)T, NULL);
    float *losses = malloc(sizeof(float) * N);
    size_t n_nonpad = 0;
    double loss = cross_entropy_forward(losses, &n_nonpad, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, N, V);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, n_nonpad, N, V);

    float *gbase = calloc(m->n_params, sizeof(float));
    CHECK(gbase && golden_backward(ctx, gbase, B, S, T, sb, tb, NULL), "%s: backward", name);

    const double want_loss = golden_loss(name);
    CHECK_NEAR(loss, want_loss, TOL_LOSS, name);

    st_file gf;
    snprintf(p, sizeof p, "tests/golden/%s/grads.safetensors", name);
    CHECK(st_open(test_path(p), &gf) == TFM_OK, "%s: grads file: %s", name, tfm_last_error());
    double worst = 0.0;
    const char *worst_name = "";
    float *ref = malloc(sizeof(float) * m->n_params);
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(&gf, e->name);
        CHECK(t != NULL && t->end - t->begin == e->numel * sizeof(float), "%s: golden gradient of %s", name, e->name);
        if (!t || t->end - t->begin != e->numel * sizeof(float)) continue;
        st_read(&gf, t, ref);
        double err = 0.0;
        for (size_t i = 0; i < e->numel; i++) {
            double d = fabs((double)gbase[e->offset + i] - (double)ref[i]);
            if (!(d <= err)) err = d;
        }
        CHECK(err <= TOL_GRAD, "%s: gradient of %s: max error %.3g > %g", name, e->name, err, TOL_GRAD);
        if (!(err <= worst)) {
            worst = err;
            worst_name = e->name;
        }
    }
    printf("%s: loss %.7f (PyTorch %.7f), max |grad - PyTorch| = %.3g (%s)\n", name, loss, want_loss, worst,
           worst_name);
    st_close(&gf);
    free(ref);
    free(gbase);
    free(losses);
    free(y);
    tfm_context_free(ctx);
    golden_case_free(&g);
}

/* Three steps of `opt` from the golden model compared with PyTorch's parameters afterwards. The
 * key rows [d, 2d) of every in_proj_bias have an exactly-zero true gradient (a constant added to a
 * query's scores cancels in the softmax), so their float gradient is rounding noise that Adam
 * scales up to lr-sized steps in any implementation (docs/NUMERICS.md): compared under SGD only. */
static void train_case(const char *name, tfm_optimizer opt, const char *golden, double lr) {
    char p[512];
    golden_case g;
    if (!golden_case_load(name, &g)) {
        golden_case_free(&g);
        return;
    }
    tfm_model *m = g.m;
    const int B = g.B, S = g.S, T = g.T;
    const int32_t *sb = g.src_ids, *tb = g.tgt_ids;
    tfm_train_config tc = tfm_train_config_default();
    tc.optimizer = opt;
    tc.lr = lr;
    tc.label_smoothing = LABEL_SMOOTHING;
    tfm_trainer *tr = NULL;
    CHECK(tfm_trainer_create(m, &tc, B, S, T, &tr) == TFM_OK, "%s: trainer: %s", name, tfm_last_error());
    for (int i = 0; tr && i < 3; i++) {
        tfm_step_stats stats;
        CHECK(tfm_trainer_step(tr, B, S, T, sb, tb, &stats) == TFM_OK, "%s: step %d: %s", name, i + 1, tfm_last_error());
    }
    st_file gf;
    snprintf(p, sizeof p, "tests/golden/%s/%s.safetensors", name, golden);
    CHECK(st_open(test_path(p), &gf) == TFM_OK, "%s: %s", name, tfm_last_error());
    float *ref = malloc(sizeof(float) * m->n_params);
    const float *base = (const float *)m->param_arena.base;
    const size_t d = (size_t)m->cfg.d_model;
    double worst = 0.0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(&gf, e->name);
        if (!t || t->end - t->begin != e->numel * sizeof(float)) {
            CHECK(0, "%s: %s lacks %s", name, golden, e->name);
            continue;
        }
        st_read(&gf, t, ref);
        int key_bias = opt == TFM_OPTIMIZER_ADAM && strstr(e->name, "in_proj_bias") != NULL;
        double err = 0.0;
        for (size_t i = 0; i < e->numel; i++) {
            if (key_bias && i >= d && i < 2 * d) continue;
            double dd = fabs((double)base[e->offset + i] - (double)ref[i]);
            if (!(dd <= err)) err = dd;
        }
        CHECK(err <= TOL_GRAD, "%s %s: %s after 3 steps: max error %.3g", name, golden, e->name, err);
        if (!(err <= worst)) worst = err;
    }
    printf("%s: after 3 %s steps max |param - PyTorch| = %.3g\n", name, golden, worst);
    st_close(&gf);
    free(ref);
    tfm_trainer_free(tr);
    golden_case_free(&g);
}

int main(void) {
    const char *cases[] = {"post_ln_relu", "pre_ln_gelu", "post_ln_tied"};
    for (int i = 0; i < 3; i++) {
        run_case(cases[i]);
        train_case(cases[i], TFM_OPTIMIZER_SGD, "sgd3", 0.05);
        train_case(cases[i], TFM_OPTIMIZER_ADAM, "adam3", 1e-3);
    }
    return test_finish("golden_backward");
}
