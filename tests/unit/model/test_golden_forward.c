/* Golden parity of the forward pass with PyTorch's nn.Transformer (files made by
 * tests/reference/make_golden.py): logits and per-pair scores, post-LN and pre-LN, ReLU and GELU,
 * tied embeddings, padding in source and target. Also: a pair scores the same alone as inside a
 * batch of longer lines (padding is fully masked). */
#include "golden_f32.h"
#include "golden_case.h"

#include <stdint.h>

#define TOL_LOGIT 1e-4
#define TOL_SCORE 1e-4
#define TOL_ALONE 1e-5

static void run_case(const char *name) {
    char p[512];
    golden_case g;
    if (!golden_case_load(name, &g)) {
        golden_case_free(&g);
        return;
    }
    tfm_model *m = g.m;
    const tfm_config *c = tfm_model_config(m);
    const int B = g.B, S = g.S, T = g.T, V = c->tgt_vocab;
    int32_t *sb = malloc(sizeof(int32_t) * (size_t)(B * S)), *tb = malloc(sizeof(int32_t) * (size_t)(B * T));
    memcpy(sb, g.src_ids, sizeof(int32_t) * (size_t)(B * S));
    memcpy(tb, g.tgt_ids, sizeof(int32_t) * (size_t)(B * T));
    float *logits = malloc(sizeof(float) * (size_t)(B * (T - 1) * V));
    double *lp = malloc(sizeof(double) * (size_t)B);
    int *nt = malloc(sizeof(int) * (size_t)B);
    CHECK(tfm_model_score(g.ctx, B, S, T, sb, tb, lp, nt, logits) == TFM_OK, "%s: score: %s", name, tfm_last_error());

    size_t n_ref = 0;
    snprintf(p, sizeof p, "tests/golden/%s/logits.f32", name);
    float *ref = read_f32(test_path(p), &n_ref);
    CHECK(ref && n_ref == (size_t)(B * (T - 1) * V), "%s: golden logits have %zu floats, want %d", name, n_ref,
          B * (T - 1) * V);
    if (ref && n_ref == (size_t)(B * (T - 1) * V)) {
        double worst = 0.0;
        for (size_t i = 0; i < n_ref; i++) {
            double e = fabs((double)logits[i] - (double)ref[i]);
            if (!(e <= worst)) worst = e; /* NaN propagates into worst */
        }
        CHECK(worst <= TOL_LOGIT, "%s: max |logit - PyTorch| = %.3g > %g", name, worst, TOL_LOGIT);
        printf("%s: max |logit - PyTorch| = %.3g\n", name, worst);
    }
    snprintf(p, sizeof p, "tests/golden/%s/scores.txt", name);
    FILE *f = fopen(test_path(p), "r");
    CHECK(f != NULL, "%s: cannot open scores.txt", name);
    for (int b = 0; f && b < B; b++) {
        double want;
        int wn;
        CHECK(fscanf(f, "%lf %d", &want, &wn) == 2, "%s: scores.txt line %d", name, b + 1);
        CHECK_NEAR(lp[b], want, TOL_SCORE, name);
        CHECK(nt[b] == wn, "%s: pair %d predicted %d tokens, want %d", name, b, nt[b], wn);
    }
    if (f) fclose(f);

    /* each pair alone (no padding at all) gives the score it got inside the padded batch */
    for (int b = 0; b < B; b++) {
        int ls = (int)tfm_id_lines_len(&g.src, (size_t)b), lt = (int)tfm_id_lines_len(&g.tgt, (size_t)b);
        double alone;
        int na;
        golden_pack(sb, &g.src, (size_t)b, 1, ls, c->pad_id);
        golden_pack(tb, &g.tgt, (size_t)b, 1, lt, c->pad_id);
        CHECK(tfm_model_score(g.ctx, 1, ls, lt, sb, tb, &alone, &na, NULL) == TFM_OK, "%s: alone: %s", name,
              tfm_last_error());
        CHECK(fabs(alone - lp[b]) <= TOL_ALONE && na == nt[b], "%s: pair %d alone %.9g (%d) vs in batch %.9g (%d)",
              name, b, alone, na, lp[b], nt[b]);
    }
    free(ref);
    free(sb);
    free(tb);
    free(logits);
    free(lp);
    free(nt);
    golden_case_free(&g);
}

/* An empty source (every key of cross-attention masked) gives finite scores, never NaN. */
static void empty_source(void) {
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    CHECK(tfm_model_load(test_path("tests/golden/post_ln_relu/model.safetensors"), &m) == TFM_OK &&
              tfm_context_create(m, &ctx) == TFM_OK,
          "load: %s", tfm_last_error());
    if (!ctx) {
        tfm_model_free(m);
        return;
    }
    int32_t src[2 * 3] = {5, 6, 7, 0, 0, 0}; /* row 1 is all padding */
    int32_t tgt[2 * 4] = {1, 4, 5, 2, 1, 6, 2, 0};
    double lp[2];
    int nt[2];
    float logits[2 * 3 * 19];
    CHECK(tfm_model_score(ctx, 2, 3, 4, src, tgt, lp, nt, logits) == TFM_OK, "empty source: %s", tfm_last_error());
    int finite = 1;
    for (size_t i = 0; i < sizeof logits / sizeof logits[0]; i++) finite &= isfinite(logits[i]) != 0;
    CHECK(finite && isfinite(lp[0]) && isfinite(lp[1]), "empty source gives non-finite logits");
    CHECK(nt[0] == 3 && nt[1] == 2, "empty source: token counts %d %d", nt[0], nt[1]);
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    run_case("post_ln_relu");
    run_case("pre_ln_gelu");
    run_case("post_ln_tied");
    empty_source();
    return test_finish("golden_forward");
}
