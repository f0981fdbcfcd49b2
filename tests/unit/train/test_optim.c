/* Optimizers, clipping, LR schedules and the label-smoothed cross-entropy: closed forms worked
 * by hand, and parity with PyTorch 1.13 through the golden files of
 * tests/reference/make_golden_optim.py (tests/golden/optim/, tests/golden/loss/). */
#include "golden_txt.h"
#include "ops.h"
#include "optim.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define NG 50 /* length of the golden optimizer vectors */

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= m)) m = d; /* NaN propagates as a failure */
    }
    return m;
}

/* Closed forms. Adam with a constant gradient g: m̂_t = g and v̂_t = g² at every step, so each
 * step moves p by −lr·g/(|g| + ε). With g = +1 then −1 (β = (0.9, 0.98)):
 *   step 1: m = 0.1, v = 0.02, m̂ = 1, v̂ = 1             → p −= lr·1/(1 + ε)
 *   step 2: m = 0.09 − 0.1 = −0.01, v = 0.0196 + 0.02 = 0.0396, bc1 = 0.19, bc2 = 0.0396
 *           m̂ = −0.01/0.19, v̂ = 1                       → p −= lr·(−0.01/0.19)/(1 + ε) */
static void test_adam_closed_form(void) {
    adam_hparams hp = adam_hparams_default();
    CHECK(hp.beta1 == 0.9 && hp.beta2 == 0.98 && hp.eps == 1e-9, "adam defaults are not (0.9, 0.98, 1e-9)");
    const double lr = 0.01;
    float p[4] = {1.0f, -2.0f, 0.5f, 0.0f}, m[4] = {0}, v[4] = {0};
    const float g[4] = {0.5f, -3.0f, 1e-3f, 0.0f};
    double want[4] = {1.0, -2.0, 0.5, 0.0};
    for (int t = 1; t <= 3; t++) {
        optim_adam_step(p, m, v, g, 1.0f, 4, lr, &hp, t);
        for (int i = 0; i < 4; i++) want[i] -= lr * g[i] / (fabs((double)g[i]) + 1e-9);
        for (int i = 0; i < 4; i++) {
            char name[64];
            snprintf(name, sizeof name, "adam constant-grad step %d elem %d", t, i);
            CHECK_NEAR(p[i], want[i], 1e-6, name);
        }
    }
    float q[1] = {0.0f}, mq[1] = {0}, vq[1] = {0};
    const float gp[1] = {1.0f}, gm[1] = {-1.0f};
    optim_adam_step(q, mq, vq, gp, 1.0f, 1, lr, &hp, 1);
    CHECK_NEAR(mq[0], 0.1, 1e-7, "adam m after step 1");
    CHECK_NEAR(vq[0], 0.02, 1e-7, "adam v after step 1");
    double w = -lr / (1.0 + 1e-9);
    CHECK_NEAR(q[0], w, 1e-7, "adam +1 step 1");
    optim_adam_step(q, mq, vq, gm, 1.0f, 1, lr, &hp, 2);
    CHECK_NEAR(mq[0], -0.01, 1e-7, "adam m after step 2");
    CHECK_NEAR(vq[0], 0.0396, 1e-7, "adam v after step 2");
    w -= lr * (-0.01 / 0.19) / (1.0 + 1e-9);
    CHECK_NEAR(q[0], w, 1e-7, "adam +1,-1 step 2");
}

static void test_sgd_closed_form(void) {
    float p[3] = {1.0f, -1.0f, 0.25f};
    const float g[3] = {2.0f, 0.5f, -4.0f};
    for (int t = 1; t <= 3; t++) optim_sgd_step(p, g, 1.0f, 3, 0.1);
    CHECK_NEAR(p[0], 1.0 - 0.6, 1e-6, "sgd elem 0 after 3 steps");
    CHECK_NEAR(p[1], -1.0 - 0.15, 1e-6, "sgd elem 1 after 3 steps");
    CHECK_NEAR(p[2], 0.25 + 1.2, 1e-6, "sgd elem 2 after 3 steps");
}

static void test_clip_closed_form(void) {
    float g[2] = {3.0f, 4.0f}; /* norm 5 */
    double n = optim_clip_grad_norm(g, 2, 1.0);
    CHECK_NEAR(n, 5.0, 1e-6, "clip: returned norm (above threshold)");
    CHECK_NEAR(g[0], 3.0 / (5.0 + 1e-6), 1e-7, "clip: scaled g[0]");
    CHECK_NEAR(g[1], 4.0 / (5.0 + 1e-6), 1e-7, "clip: scaled g[1]");
    float h[2] = {3.0f, 4.0f};
    n = optim_clip_grad_norm(h, 2, 10.0);
    CHECK_NEAR(n, 5.0, 1e-6, "clip: returned norm (below threshold)");
    CHECK(h[0] == 3.0f && h[1] == 4.0f, "clip below the threshold changed the gradients");
    float z[3] = {0.0f, 0.0f, 0.0f};
    n = optim_clip_grad_norm(z, 3, 1.0);
    CHECK(n == 0.0 && z[0] == 0.0f, "clip of zero gradients: norm %g", n);
}

/* The trainer's clipping: optim_clip_coef's factor applied by the optimizer as it reads the
 * gradients gives the bits of optim_clip_grad_norm's in-place scaling followed by a step with 1,
 * and leaves the gradients unscaled. Three steps of Adam and of SGD, clipping active (the norm is
 * ~9, the bound 0.5) and not (bound 100). */
static void test_clip_fused(void) {
    enum { n = 203 };
    static float g[n], gs[n], p0[n], pa[n], ma[n], va[n], pb[n], mb[n], vb[n];
    uint32_t r = 12345u;
    for (int i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        g[i] = (float)((r >> 8) & 0xFFFF) / 65536.0f - 0.5f + (i % 7 == 0 ? 2.0f : 0.0f);
        r = r * 1664525u + 1013904223u;
        p0[i] = (float)((r >> 8) & 0xFFFF) / 65536.0f - 0.5f;
    }
    const double bounds[2] = {0.5, 100.0};
    const adam_hparams hp = adam_hparams_default();
    for (int c = 0; c < 2; c++)
        for (int adam = 0; adam <= 1; adam++) {
            memcpy(pa, p0, sizeof pa), memcpy(pb, p0, sizeof pb);
            memset(ma, 0, sizeof ma), memset(va, 0, sizeof va), memset(mb, 0, sizeof mb), memset(vb, 0, sizeof vb);
            for (int t = 1; t <= 3; t++) {
                memcpy(gs, g, sizeof gs);
                const double na = optim_clip_grad_norm(gs, n, bounds[c]); /* scaled in place */
                float coef = 0.0f;
                const double nb = optim_clip_coef(g, n, bounds[c], &coef);
                CHECK(na == nb, "clip_coef's norm %.9g differs from clip_grad_norm's %.9g", nb, na);
                CHECK(c == 0 ? coef < 0.1f : coef == 1.0f, "bound %g: clipping coefficient %g", bounds[c], coef);
                if (adam) {
                    optim_adam_step(pa, ma, va, gs, 1.0f, n, 0.01, &hp, t);
                    optim_adam_step(pb, mb, vb, g, coef, n, 0.01, &hp, t);
                } else {
                    optim_sgd_step(pa, gs, 1.0f, n, 0.1);
                    optim_sgd_step(pb, g, coef, n, 0.1);
                }
            }
            const char *what = adam ? "adam" : "sgd";
            CHECK(memcmp(pa, pb, sizeof pa) == 0, "%s, bound %g: the fused clipping changed the parameters", what,
                  bounds[c]);
            CHECK(memcmp(ma, mb, sizeof ma) == 0 && memcmp(va, vb, sizeof va) == 0,
                  "%s, bound %g: the fused clipping changed the moments", what, bounds[c]);
            CHECK(memcmp(pa, p0, sizeof pa) != 0, "%s: the steps did not move the parameters", what);
        }
    float h[n];
    memcpy(h, g, sizeof h);
    float coef;
    optim_clip_coef(h, n, 0.5, &coef);
    CHECK(memcmp(h, g, sizeof h) == 0, "optim_clip_coef wrote the gradients");
    optim_clip_coef(h, n, 0.0, &coef);
    CHECK(coef == 1.0f, "max_norm 0 (only measuring) gave a coefficient %g", coef);
}

/* sum_squares' lanes and blocks: integers whose squares and sums are exact in double, so any
 * order gives the exact total; lengths around the 16 lanes and the 65,536-element blocks. */
static void test_sum_squares(void) {
    static float x[3 * 65536 + 21];
    const size_t lens[] = {0, 1, 15, 16, 17, 37, 65535, 65536, 65537, 3 * 65536 + 21};
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)((int)(i % 2001) - 1000);
    for (size_t c = 0; c < sizeof lens / sizeof lens[0]; c++) {
        double want = 0.0;
        for (size_t i = 0; i < lens[c]; i++) want += (double)x[i] * (double)x[i];
        const double got = sum_squares(x, lens[c]);
        CHECK(got == want, "sum_squares over %zu elements: %.17g, want %.17g", lens[c], got, want);
    }
}

static void test_schedules(void) {
    /* factor · d^−0.5 · min(step^−0.5, step · warmup^−1.5), d = 512, warmup = 4000 (the paper) */
    struct { int64_t step; double want; } noam[] = {
        {1, 1.746928107421711e-07},     {100, 1.746928107421711e-05},
        {3999, 0.0006985965501579421},  {4000, 0.0006987712429686843}, /* the peak */
        {4001, 0.000698683912937353},   {16000, 0.00034938562148434214},
    };
    for (size_t i = 0; i < sizeof noam / sizeof noam[0]; i++) {
        double got = lr_schedule(TFM_SCHEDULE_NOAM, 1.0, noam[i].step, 512, 4000);
        char name[64];
        snprintf(name, sizeof name, "noam lr at step %lld", (long long)noam[i].step);
        CHECK(fabs(got - noam[i].want) <= 1e-12 * noam[i].want, "%s: got %.17g want %.17g", name, got,
              noam[i].want);
    }
    double peak = lr_schedule(TFM_SCHEDULE_NOAM, 1.0, 4000, 512, 4000);
    CHECK(peak > lr_schedule(TFM_SCHEDULE_NOAM, 1.0, 3999, 512, 4000) &&
              peak > lr_schedule(TFM_SCHEDULE_NOAM, 1.0, 4001, 512, 4000),
          "noam does not peak at step = warmup");
    CHECK_NEAR(lr_schedule(TFM_SCHEDULE_NOAM, 2.0, 10, 256, 400), 0.00015625, 1e-15, "noam factor 2, d 256, w 400, step 10");
    CHECK(lr_schedule(TFM_SCHEDULE_NOAM, 1.0, 0, 512, 4000) == 0.0, "noam at step 0 is not 0");
    CHECK(lr_schedule(TFM_SCHEDULE_CONSTANT, 3e-4, 1, 512, 4000) == 3e-4, "constant schedule");
    CHECK(lr_schedule(TFM_SCHEDULE_CONSTANT, 3e-4, 99999, 512, 4000) == 3e-4, "constant schedule late");
}

/* Parity with torch.optim over 3 steps on a 50-vector, pinned to 1e-6 (absolute; |p| < 4). */
static void test_golden_optimizer(const char *file, int adam) {
    const char *path = test_path(file);
    float p[NG], want[NG], g[NG], m[NG] = {0}, v[NG] = {0};
    if (!golden_txt_read(path, "params0", p, NG)) {
        CHECK(0, "%s: cannot read params0", file);
        return;
    }
    adam_hparams hp = adam_hparams_default();
    for (int t = 1; t <= 3; t++) {
        char gname[32], pname[32];
        snprintf(gname, sizeof gname, "grads%d", t);
        snprintf(pname, sizeof pname, "params%d", t);
        if (!golden_txt_read(path, gname, g, NG) || !golden_txt_read(path, pname, want, NG)) {
            CHECK(0, "%s: cannot read step %d", file, t);
            return;
        }
        if (adam)
            optim_adam_step(p, m, v, g, 1.0f, NG, 0.01, &hp, t);
        else
            optim_sgd_step(p, g, 1.0f, NG, 0.1);
        double err = max_abs_diff(p, want, NG);
        printf("%s step %d: max |ours - torch| = %.3g\n", adam ? "adam" : "sgd", t, err);
        CHECK(err <= 1e-6, "%s step %d vs torch: max abs error %.3g > 1e-6", adam ? "adam" : "sgd", t, err);
    }
}

static void test_golden_clip(void) {
    const char *path = test_path("tests/golden/optim/clip.txt");
    const char *cases[2] = {"above", "below"};
    for (int c = 0; c < 2; c++) {
        char name[64];
        float mx, total, g[NG], want[NG];
        snprintf(name, sizeof name, "%s_max_norm", cases[c]);
        int ok = golden_txt_read(path, name, &mx, 1);
        snprintf(name, sizeof name, "%s_total_norm", cases[c]);
        ok = ok && golden_txt_read(path, name, &total, 1);
        snprintf(name, sizeof name, "%s_grads", cases[c]);
        ok = ok && golden_txt_read(path, name, g, NG);
        snprintf(name, sizeof name, "%s_clipped", cases[c]);
        ok = ok && golden_txt_read(path, name, want, NG);
        if (!ok) {
            CHECK(0, "clip golden %s unreadable", cases[c]);
            continue;
        }
        double n = optim_clip_grad_norm(g, NG, mx);
        double err = max_abs_diff(g, want, NG);
        printf("clip %s: total norm %.9g (torch %.9g), max |ours - torch| = %.3g\n", cases[c], n,
               (double)total, err);
        CHECK(fabs(n - total) <= 1e-6 * total, "clip %s: total norm %.9g vs torch %.9g", cases[c], n,
              (double)total);
        CHECK(err <= 1e-6, "clip %s: gradients vs torch, max abs error %.3g > 1e-6", cases[c], err);
    }
}

/* nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=0): loss and gradient, to 1e-6. */
static void test_golden_cross_entropy(void) {
    const char *path = test_path("tests/golden/loss/ce.txt");
    float sizes[3];
    if (!golden_txt_read(path, "sizes", sizes, 3)) {
        CHECK(0, "ce golden unreadable");
        return;
    }
    const size_t N = (size_t)sizes[0], V = (size_t)sizes[1];
    const int32_t pad = (int32_t)sizes[2];
    float logits[256], tf[64], want[256], dl[256], losses[64];
    int32_t targets[64];
    if (N * V > 256 || N > 64 || !golden_txt_read(path, "logits", logits, N * V) ||
        !golden_txt_read(path, "targets", tf, N)) {
        CHECK(0, "ce golden: bad sizes or arrays");
        return;
    }
    for (size_t n = 0; n < N; n++) targets[n] = (int32_t)tf[n];
    const float epss[2] = {0.0f, 0.1f};
    const char *tags[2] = {"eps0", "eps0.1"};
    for (int e = 0; e < 2; e++) {
        char name[64];
        float want_loss;
        snprintf(name, sizeof name, "%s_loss", tags[e]);
        int ok = golden_txt_read(path, name, &want_loss, 1);
        snprintf(name, sizeof name, "%s_dlogits", tags[e]);
        ok = ok && golden_txt_read(path, name, want, N * V);
        if (!ok) {
            CHECK(0, "ce golden %s unreadable", tags[e]);
            continue;
        }
        size_t nn = 0;
        double loss = cross_entropy_forward(losses, &nn, logits, targets, pad, epss[e], N, V);
        CHECK(nn == 9, "ce %s: %zu non-pad rows, want 9", tags[e], nn);
        cross_entropy_backward(dl, logits, targets, pad, epss[e], nn, N, V);
        double err = max_abs_diff(dl, want, N * V);
        printf("cross-entropy %s: loss %.9g (torch %.9g), max |dlogits - torch| = %.3g\n", tags[e], loss,
               (double)want_loss, err);
        CHECK(fabs(loss - want_loss) <= 1e-6, "ce %s: loss %.9g vs torch %.9g", tags[e], loss, (double)want_loss);
        CHECK(err <= 1e-6, "ce %s: dlogits vs torch, max abs error %.3g > 1e-6", tags[e], err);
        /* in place (dlogits == logits) gives the same gradient */
        float inplace[256];
        memcpy(inplace, logits, N * V * sizeof(float));
        cross_entropy_backward(inplace, inplace, targets, pad, epss[e], nn, N, V);
        CHECK(max_abs_diff(inplace, dl, N * V) == 0.0, "ce %s: in-place backward differs", tags[e]);
        /* the trainer's pair: the forward keeps each row's log-sum-exp, the backward reads it — the
         * same loss and the same gradient, bit for bit, in place too; the lse is that of the row */
        float lse[64], losses2[64];
        for (size_t n = 0; n < N; n++) lse[n] = NAN; /* pad rows keep theirs: not read */
        size_t nn2 = 0;
        const double loss2 = cross_entropy_forward_lse(losses2, lse, &nn2, logits, targets, pad, epss[e], N, V);
        CHECK(fabs(loss2 - want_loss) <= 1e-6 && nn2 == 9, "ce %s: forward_lse: loss %.9g, %zu rows", tags[e], loss2, nn2);
        for (size_t n = 0; n < N; n++) {
            if (targets[n] == pad) {
                CHECK(isnan(lse[n]), "ce %s: pad row %zu's lse written", tags[e], n);
                continue;
            }
            double s = 0.0;
            for (size_t k = 0; k < V; k++) s += exp((double)logits[n * V + k]);
            CHECK(fabs((double)lse[n] - log(s)) <= 1e-5, "ce %s: row %zu lse %.9g vs %.9g", tags[e], n, (double)lse[n], log(s));
        }
        memcpy(inplace, logits, N * V * sizeof(float));
        cross_entropy_backward_lse(inplace, inplace, lse, targets, pad, epss[e], nn, N, V);
        CHECK(memcmp(inplace, dl, N * V * sizeof *dl) == 0, "ce %s: backward from the kept lse differs", tags[e]);
    }
    /* An all-pad batch: loss 0 and zero gradient, never NaN (PyTorch would give NaN). */
    int32_t allpad[4] = {pad, pad, pad, pad};
    size_t nn = 99;
    double loss = cross_entropy_forward(losses, &nn, logits, allpad, pad, 0.1f, 4, V);
    cross_entropy_backward(dl, logits, allpad, pad, 0.1f, nn, 4, V);
    double mx = 0.0;
    for (size_t i = 0; i < 4 * V; i++) mx = fmax(mx, fabs(dl[i]));
    CHECK(nn == 0 && loss == 0.0 && mx == 0.0, "ce all-pad: n %zu loss %g max|grad| %g", nn, loss, mx);
    /* the same from a kept lse (all NaN: none may be read) */
    float lse_pad[4] = {NAN, NAN, NAN, NAN};
    loss = cross_entropy_forward_lse(losses, lse_pad, &nn, logits, allpad, pad, 0.1f, 4, V);
    cross_entropy_backward_lse(dl, logits, lse_pad, allpad, pad, 0.1f, nn, 4, V);
    mx = 0.0;
    for (size_t i = 0; i < 4 * V; i++) mx = fmax(mx, fabs(dl[i]));
    CHECK(nn == 0 && loss == 0.0 && mx == 0.0, "ce all-pad from a kept lse: n %zu loss %g max|grad| %g", nn, loss, mx);
}

int main(void) {
    test_adam_closed_form();
    test_sgd_closed_form();
    test_clip_closed_form();
    test_clip_fused();
    test_sum_squares();
    test_schedules();
    test_golden_optimizer("tests/golden/optim/adam.txt", 1);
    test_golden_optimizer("tests/golden/optim/sgd.txt", 0);
    test_golden_clip();
    test_golden_cross_entropy();
    return test_finish("optim");
}
