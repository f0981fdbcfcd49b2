/* Golden parity of the absolute position encodings with their PyTorch twin
 * (tests/reference/make_golden_pe.py, files in tests/golden/pe_<variant>/): sinusoidal interleaved
 * and concatenated, with TF's zero_pad and scale, none, and learned (tied token embeddings, three
 * Adam steps). Per variant: logits and per-pair scores of tfm_model_score, the label-smoothed loss,
 * and every parameter's gradient (the learned tables' included) within 1e-4 of PyTorch. The
 * variants load from the checkpoint's metadata, so each case also checks that the pe keys are
 * read back as written. */
#include "model_internal.h"
#include "ops.h"
#include "safetensors.h"
#include "golden_case.h"
#include "golden_grads.h"

#include <stdint.h>

#define TOL 1e-4 /* logits, scores, gradients, parameters after 3 Adam steps */
#define TOL_LOSS 1e-5
#define LABEL_SMOOTHING 0.1f

/* Reads n float32 values of `path`; NULL when the file is missing or holds another count. */
static float *read_f32(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    float *p = malloc(n * sizeof *p + 1);
    size_t got = fread(p, sizeof *p, n + 1, f);
    fclose(f);
    if (got != n) {
        free(p);
        return NULL;
    }
    return p;
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (isnan(e)) return e; /* a NaN fails every comparison with the tolerance */
        if (e > worst) worst = e;
    }
    return worst;
}

/* Every model tensor of `m` (stored at base) against the same-named tensor of golden file `file`;
 * skip_key_bias: leave out the key rows [d, 2d) of every in_proj_bias (see adam_case). */
static double compare_tensors(const char *name, const tfm_model *m, const float *base, const char *file,
                              const char *what, int skip_key_bias) {
    const size_t d = (size_t)m->cfg.d_model;
    char p[512];
    snprintf(p, sizeof p, "tests/golden/%s/%s", name, file);
    st_file gf;
    if (st_open(test_path(p), &gf) != TFM_OK) {
        CHECK(0, "%s: %s: %s", name, file, tfm_last_error());
        return INFINITY;
    }
    float *ref = malloc(sizeof(float) * m->n_params);
    double worst = 0.0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(&gf, e->name);
        CHECK(t && t->end - t->begin == e->numel * sizeof(float), "%s: %s lacks %s", name, file, e->name);
        if (!t || t->end - t->begin != e->numel * sizeof(float)) continue;
        st_read(&gf, t, ref);
        double err = max_abs_diff(base + e->offset, ref, e->numel);
        if (skip_key_bias && strstr(e->name, "in_proj_bias")) { /* rows [0, d) and [2d, 3d); NaN kept */
            const double q = max_abs_diff(base + e->offset, ref, d);
            const double v = max_abs_diff(base + e->offset + 2 * d, ref + 2 * d, d);
            err = isnan(q) || q > v ? q : v;
        }
        CHECK(err <= TOL, "%s: %s of %s: max |tfm - PyTorch| = %.3g > %g", name, what, e->name, err, TOL);
        if (isnan(err) || err > worst) worst = err; /* the worst is printed; each tensor is CHECKed */
    }
    free(ref);
    st_close(&gf);
    return worst;
}

/* The forward pass through the public API: logits and scores. */
static void forward_case(const char *name, golden_case *g) {
    char p[512];
    const tfm_config *c = tfm_model_config(g->m);
    const size_t nl = (size_t)g->B * (size_t)(g->T - 1) * (size_t)c->tgt_vocab;
    float *logits = malloc(sizeof(float) * nl);
    double *lp = malloc(sizeof(double) * (size_t)g->B);
    int *nt = malloc(sizeof(int) * (size_t)g->B);
    CHECK(tfm_model_score(g->ctx, g->B, g->S, g->T, g->src_ids, g->tgt_ids, lp, nt, logits) == TFM_OK, "%s: score: %s",
          name, tfm_last_error());
    snprintf(p, sizeof p, "tests/golden/%s/logits.f32", name);
    float *ref = read_f32(test_path(p), nl);
    CHECK(ref != NULL, "%s: logits.f32 missing or not %zu floats", name, nl);
    if (ref) {
        double worst = max_abs_diff(logits, ref, nl);
        CHECK(worst <= TOL, "%s: max |logit - PyTorch| = %.3g > %g", name, worst, TOL);
        printf("%s: max |logit - PyTorch| = %.3g\n", name, worst);
    }
    snprintf(p, sizeof p, "tests/golden/%s/scores.txt", name);
    FILE *f = fopen(test_path(p), "r");
    CHECK(f != NULL, "%s: cannot open scores.txt", name);
    for (int b = 0; f && b < g->B; b++) {
        double want = NAN;
        int wn = -1;
        CHECK(fscanf(f, "%lf %d", &want, &wn) == 2, "%s: scores.txt line %d", name, b + 1);
        CHECK_NEAR(lp[b], want, TOL, name);
        CHECK(nt[b] == wn, "%s: pair %d: %d targets, want %d", name, b, nt[b], wn);
    }
    if (f) fclose(f);
    free(ref);
    free(logits);
    free(lp);
    free(nt);
}

/* The loss and every gradient of one backward pass (no dropout). */
static void backward_case(const char *name, golden_case *g) {
    tfm_model *m = g->m;
    const tfm_config *c = &m->cfg;
    const int B = g->B, S = g->S, T = g->T, Td = T - 1;
    const size_t V = (size_t)c->tgt_vocab, N = (size_t)B * (size_t)Td;
    int32_t *y = malloc(sizeof(int32_t) * N);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Td; t++) y[b * Td + t] = g->tgt_ids[b * T + t + 1];
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK && context_reserve(ctx, B, S, Td, 1) == TFM_OK, "%s: reserve", name);
    if (!ctx) {
        free(y);
        return;
    }
    model_forward(ctx, B, S, Td, g->src_ids, g->tgt_ids, (size_t)T, NULL);
    float *losses = malloc(sizeof(float) * N);
    size_t n_nonpad = 0;
    double loss = cross_entropy_forward(losses, &n_nonpad, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, N, V);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, n_nonpad, N, V);
    float *gbase = calloc(m->n_params, sizeof(float));
    CHECK(gbase && golden_backward(ctx, gbase, B, S, T, g->src_ids, g->tgt_ids, NULL), "%s: backward", name);

    const double want = golden_loss(name);
    CHECK_NEAR(loss, want, TOL_LOSS, name);
    double worst = compare_tensors(name, m, gbase, "grads.safetensors", "gradient", 0);
    printf("%s: loss %.7f (PyTorch %.7f), max |grad - PyTorch| = %.3g\n", name, loss, want, worst);
    free(gbase);
    free(losses);
    free(y);
    tfm_context_free(ctx);
}

/* Three Adam steps through the trainer (every tensor has its moments, the tables included). The
 * key rows [d, 2d) of every in_proj_bias have an exactly-zero true gradient, so Adam turns their
 * rounding noise into lr-sized steps in any implementation (docs/NUMERICS.md): left out, as in
 * test_golden_backward. */
static void adam_case(const char *name, golden_case *g) {
    tfm_train_config tc = tfm_train_config_default();
    tc.optimizer = TFM_OPTIMIZER_ADAM;
    tc.lr = 1e-3;
    tc.label_smoothing = LABEL_SMOOTHING;
    tfm_trainer *tr = NULL;
    CHECK(tfm_trainer_create(g->m, &tc, g->B, g->S, g->T, &tr) == TFM_OK, "%s: trainer: %s", name, tfm_last_error());
    for (int i = 0; tr && i < 3; i++) {
        tfm_step_stats stats;
        CHECK(tfm_trainer_step(tr, g->B, g->S, g->T, g->src_ids, g->tgt_ids, &stats) == TFM_OK, "%s: step %d: %s",
              name, i + 1, tfm_last_error());
    }
    double worst = compare_tensors(name, g->m, (const float *)g->m->param_arena.base, "adam3.safetensors",
                                   "parameter after 3 Adam steps", 1);
    printf("%s: after 3 Adam steps max |param - PyTorch| = %.3g\n", name, worst);
    tfm_trainer_free(tr);
}

static void run_case(const char *name, tfm_pe pe, int has_adam) {
    golden_case g;
    if (golden_case_load(name, &g)) {
        CHECK(tfm_model_config(g.m)->pe == pe, "%s: metadata pe %d, want %d", name, (int)tfm_model_config(g.m)->pe,
              (int)pe);
        forward_case(name, &g);
        backward_case(name, &g);
        if (has_adam) adam_case(name, &g);
    }
    golden_case_free(&g);
}

int main(void) {
    run_case("pe_interleaved", TFM_PE_SINUSOIDAL, 0);
    run_case("pe_concat", TFM_PE_SINUSOIDAL, 0);
    run_case("pe_zero_pad", TFM_PE_SINUSOIDAL, 0);
    run_case("pe_scale", TFM_PE_SINUSOIDAL, 0);
    run_case("pe_none", TFM_PE_NONE, 0);
    run_case("pe_learned", TFM_PE_LEARNED, 1);
    return test_finish("golden_pe");
}
