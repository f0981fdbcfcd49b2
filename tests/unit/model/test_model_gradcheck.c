/* Gradient check of the WHOLE encoder–decoder: model_forward + label-smoothed cross-entropy +
 * model_backward, chained as tfm_trainer_step chains them (trainer.c; it uses the _lse pair of
 * the loss, which gives the same bits as the recomputing pair used here), against central
 * differences of the loss, for every parameter tensor (in_proj_bias, LayerNorms, embeddings and the
 * generator included), post-LN and pre-LN, ReLU and GELU, tied and untied embeddings, with
 * padding in the source and the target and with dropout on (the masks are a pure function of
 * dropout_cfg.seed and the element index, model_internal.h / ops.h, so the same seed gives the
 * same masks in every forward and L(θ) is a fixed smooth-almost-everywhere function).
 *
 * Precision. The model runs in float; the loss is the double mean of float per-row losses. A
 * forward pass carries rounding noise of about 1e-7 relative on the loss (|L| ≈ 2.5, so δ ≈ 3e-7
 * absolute), which the central difference turns into δ/(2h) in the numeric gradient; the
 * truncation error is h²/6·|L'''|. Every parameter is perturbed by the same absolute h (they are
 * all O(0.1..1) here) and divided by the step actually taken in float. The gradients of a mean
 * loss over 10 targets are small (max per tensor 0.02..0.3), so the error of a tensor is taken
 * relative to its largest gradient:
 *   err = max_i |analytic_i − numeric_i| / max(FLOOR, max_i |numeric_i|)
 * with FLOOR = 1e-3 so a tensor whose gradient is (nearly) zero is judged on an absolute scale of
 * 1e-3·TOL instead of amplifying noise. Measured worst err over the five cases:
 *   h = 1e-2: 5.5e-3 (truncation: the embeddings' curvature), h = 1e-3: 4.7e-3 (rounding noise),
 *   h = 3e-3: 1.1e-3  ← H_STEP; TOL = 1e-2 is 9x that.
 * A wrong term in the backward gives err 0.1..2.5 (checked by mutating a copy of backward.c: a
 * flipped sign or a skipped mask in each dropout path, a dropped bias or residual gradient, a
 * gradient written instead of accumulated).
 *
 * ReLU makes L only piecewise smooth: a perturbation that moves an FFN pre-activation across 0
 * gives a difference quotient that averages two slopes (seen: err 6e-2 on the tied case). So the
 * fixture first moves every pre-activation at least KINK_MARGIN away from 0 (clear_kinks), and
 * any perturbation that still flips a sign is skipped and counted (at most 5% allowed).
 *
 * Backward accumulates: the gradient buffer starts at ACC0, which is subtracted before comparing
 * (the += contract of model_backward). */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define H_STEP 3e-3f
#define FLOOR 1e-3
#define TOL 1e-2
#define ACC0 0.25f
#define DROPOUT 0.2f
#define SMOOTHING 0.1f

enum { B = 2, S = 5, T = 7, TD = T - 1 };

/* Row 0 full length, row 1 padded (pad 0); target rows BOS (1) first and EOS (2) last. */
static const int32_t SRC[B * S] = {3, 7, 10, 4, 5, /**/ 6, 9, 3, 0, 0};
static const int32_t TGT[B * T] = {1, 4, 8, 12, 5, 6, 2, /**/ 1, 9, 3, 2, 0, 0, 0};

enum { D_FF = 12, N_HIDDEN = (B * S + B * TD) * D_FF }; /* one encoder and one decoder FFN */

typedef struct {
    tfm_model *m;
    tfm_context *ctx;
    dropout_cfg drop;
    uint8_t sign0[N_HIDDEN]; /* which FFN pre-activations are > 0 at the unperturbed point */
    int32_t y[B * TD]; /* prediction targets: the target rows without their first id */
    float losses[B * TD];
} fixture;

/* The trainer's loss: forward with dropout, then the mean label-smoothed cross-entropy. */
static double loss_of(fixture *f) {
    const tfm_config *c = &f->m->cfg;
    model_forward(f->ctx, B, S, TD, SRC, TGT, T, &f->drop);
    size_t n = 0;
    return cross_entropy_forward(f->losses, &n, f->ctx->acts.logits, f->y, c->pad_id, SMOOTHING, (size_t)(B * TD),
                                 (size_t)c->tgt_vocab);
}

/* Records (into sign) which FFN pre-activations of the last forward are positive. */
static void hidden_signs(const fixture *f, uint8_t *sign) {
    const float *enc = f->ctx->acts.stack[0].layers[0].ff_pre, *dec = f->ctx->acts.stack[1].layers[0].ff_pre;
    for (size_t i = 0; i < (size_t)(B * S * D_FF); i++) sign[i] = enc[i] > 0.0f;
    for (size_t i = 0; i < (size_t)(B * TD * D_FF); i++) sign[B * S * D_FF + i] = dec[i] > 0.0f;
}

/* With ReLU, L is only piecewise smooth: if a perturbation moves some FFN pre-activation across 0
 * the difference quotient averages two slopes and says nothing about the gradient at θ. Such
 * entries are detected (a sign differs from the unperturbed forward) and skipped, and counted. */
static int crossed_kink(const fixture *f) {
    if (f->m->cfg.activation != TFM_ACT_RELU) return 0;
    uint8_t now[N_HIDDEN];
    hidden_signs(f, now);
    return memcmp(now, f->sign0, sizeof now) != 0;
}

/* Moves the point away from ReLU kinks: while some FFN pre-activation lies within KINK_MARGIN of
 * 0, shifts that hidden unit's linear1 bias (which moves the unit's pre-activation in every row
 * alike) and runs the forward again. Returns the smallest |pre-activation| left. */
#define KINK_MARGIN 0.02f
static float clear_kinks(fixture *f) {
    tfm_model *m = f->m;
    float closest = 0.0f;
    for (int iter = 0; iter < 50; iter++) {
        loss_of(f);
        closest = INFINITY;
        int moved = 0;
        for (int side = 0; side < 2; side++) {
            const float *z = side == 0 ? f->ctx->acts.stack[0].layers[0].ff_pre : f->ctx->acts.stack[1].layers[0].ff_pre;
            float *bias = side == 0 ? m->p.stack[0].layers[0].linear1_bias : m->p.stack[1].layers[0].linear1_bias;
            const size_t rows = side == 0 ? (size_t)(B * S) : (size_t)(B * TD);
            for (size_t j = 0; j < D_FF; j++)
                for (size_t r = 0; r < rows; r++) {
                    const float a = fabsf(z[r * D_FF + j]);
                    if (a < closest) closest = a;
                    if (a < KINK_MARGIN) {
                        bias[j] += 2.5f * KINK_MARGIN;
                        moved = 1;
                        break;
                    }
                }
        }
        if (!moved) break;
    }
    return closest;
}

static double run_case(const char *name, int norm_first, tfm_activation act, int tied) {
    tfm_config c = tfm_config_default();
    c.d_model = 8;
    c.n_heads = 2;
    c.d_ff = D_FF;
    c.n_enc_layers = 1;
    c.n_dec_layers = 1;
    c.src_vocab = tied ? 13 : 11; /* tying needs one vocabulary */
    c.tgt_vocab = 13;
    c.max_len = 16;
    c.norm_first = norm_first;
    c.activation = act;
    c.tie_embeddings = tied;
    fixture f = {0};
    CHECK(tfm_model_create(&c, 7, &f.m) == TFM_OK, "%s: create: %s", name, tfm_last_error());
    if (!f.m) return INFINITY;
    tfm_model *m = f.m;
    /* Move LayerNorm weights off 1 and every bias off 0, so a backward that ignored a weight or a
     * bias could not pass by accident. */
    float *base = (float *)m->param_arena.base;
    uint64_t s = 0x9E3779B97F4A7C15ULL + (uint64_t)(norm_first * 2 + (int)act + 4 * tied);
    for (size_t i = 0; i < m->n_params; i++) base[i] += 0.1f * test_frand(&s);
    f.drop.p = DROPOUT;
    f.drop.seed = 0x5eed;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < TD; t++) f.y[b * TD + t] = TGT[b * T + t + 1];
    CHECK(model_check_batch(m, B, S, T, SRC, TGT) == TFM_OK, "%s: batch: %s", name, tfm_last_error());
    CHECK(tfm_context_create(m, &f.ctx) == TFM_OK && context_reserve(f.ctx, B, S, TD, 1) == TFM_OK,
          "%s: reserve: %s", name, tfm_last_error());

    /* analytic: as tfm_trainer_step */
    float *gbase = malloc(m->n_params * sizeof(float));
    for (size_t i = 0; i < m->n_params; i++) gbase[i] = ACC0;
    model_params g;
    params_layout(&c, &g, gbase, NULL, NULL);
    tfm_arena counter = {NULL, 0, 0}, ws_arena = {NULL, 0, 0};
    grad_workspace ws;
    grad_workspace_layout(KERN, &c, B, S, TD, &counter, NULL);
    CHECK(arena_init(&ws_arena, counter.used, "test workspace") == TFM_OK, "%s: workspace", name);
    grad_workspace_layout(KERN, &c, B, S, TD, &ws_arena, &ws);
    if (act == TFM_ACT_RELU) {
        float closest = clear_kinks(&f);
        CHECK(closest >= KINK_MARGIN, "%s: could not move the FFN pre-activations off 0 (%g)", name, (double)closest);
    }
    const double loss0 = loss_of(&f);
    hidden_signs(&f, f.sign0);
    size_t n_tok = 0;
    cross_entropy_forward(f.losses, &n_tok, f.ctx->acts.logits, f.y, c.pad_id, SMOOTHING, (size_t)(B * TD),
                          (size_t)c.tgt_vocab);
    cross_entropy_backward(f.ctx->acts.logits, f.ctx->acts.logits, f.y, c.pad_id, SMOOTHING, n_tok, (size_t)(B * TD),
                           (size_t)c.tgt_vocab);
    model_backward(f.ctx, &g, &ws, SRC, TGT, T, &f.drop);

    /* numeric: every entry of every tensor (tied aliases share storage: checked once) */
    double worst = 0.0;
    const char *worst_name = "";
    size_t checked = 0, skipped = 0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        if (e->alias_of >= 0) continue;
        double max_diff = 0.0, max_num = 0.0;
        int nan = 0;
        for (size_t i = 0; i < e->numel; i++) {
            float *x = base + e->offset + i;
            const float x0 = *x, xp = x0 + H_STEP, xm = x0 - H_STEP;
            *x = xp;
            const double lp = loss_of(&f);
            int kink = crossed_kink(&f);
            *x = xm;
            const double lm = loss_of(&f);
            kink |= crossed_kink(&f);
            *x = x0;
            if (kink) {
                skipped++;
                continue;
            }
            const double num = (lp - lm) / ((double)xp - (double)xm);
            const double ana = (double)gbase[e->offset + i] - (double)ACC0;
            if (isnan(num) || isnan(ana)) nan = 1;
            if (fabs(num) > max_num) max_num = fabs(num);
            if (fabs(ana - num) > max_diff) max_diff = fabs(ana - num);
            checked++;
        }
        const double err = max_diff / fmax(FLOOR, max_num);
        if (getenv("TFM_GRADCHECK_VERBOSE"))
            printf("    %-52s max|g|=%-9.3g err=%.2e\n", e->name, max_num, err);
        CHECK(!nan && err <= TOL, "%s: gradient of %s: error %.3g > %g%s", name, e->name, err, TOL,
              nan ? " (NaN)" : "");
        if (!(err <= worst)) {
            worst = err;
            worst_name = e->name;
        }
    }
    printf("  %-16s loss %.5f, %zu parameters checked (%zu skipped at a ReLU kink), worst error %.2e (%s)\n", name,
           loss0, checked, skipped, worst, worst_name);
    /* a handful of kinks is expected; many would mean the check no longer looks at much */
    CHECK(skipped * 20 <= checked, "%s: %zu of %zu perturbations crossed a ReLU kink", name, skipped, checked);
    arena_free(&ws_arena);
    free(gbase);
    tfm_context_free(f.ctx);
    tfm_model_free(m);
    return worst;
}

int main(void) {
    ops_set_threads(1); /* a tiny model: OpenMP barriers would cost more than the work */
    printf("whole-model gradient check: dropout %.2f, label smoothing %.1f, h %.0e, tol %.0e\n", (double)DROPOUT,
           (double)SMOOTHING, (double)H_STEP, TOL);
    run_case("post-LN ReLU", 0, TFM_ACT_RELU, 0);
    run_case("post-LN GELU", 0, TFM_ACT_GELU, 0);
    run_case("pre-LN ReLU", 1, TFM_ACT_RELU, 0);
    run_case("pre-LN GELU", 1, TFM_ACT_GELU, 0);
    run_case("post-LN tied", 0, TFM_ACT_RELU, 1);
    return test_finish("model_gradcheck");
}
