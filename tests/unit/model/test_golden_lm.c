/* Golden parity of arch = decoder-only with its PyTorch twin (tests/reference/make_golden_lm.py):
 * pre-LN tied sinusoidal (the decoder-only defaults), post-LN untied learned positions, rope and
 * t5. For each: every logit of a padded batch, the label-smoothed loss and every parameter's
 * gradient (tied ones summed) within 1e-4 of PyTorch; then the KV cache: decoding the rows one
 * position at a time gives the batched pass's logits at every real position (≤ 1e-5), and
 * tfm_model_score takes the source-less batch (S = 0). */
#include "model_internal.h"
#include "ops.h"
#include "safetensors.h"
#include "golden_case.h"
#include "golden_grads.h"

#include <stdint.h>

#define TOL 1e-4
#define CACHE_TOL 1e-5
#define LABEL_SMOOTHING 0.1f

/* Largest |a − b| over n floats (NaN counts as infinitely wrong). */
static double max_err(const float *a, const float *b, size_t n) {
    double e = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= e)) e = d;
    }
    return e;
}

/* Every gradient of the model against grads.safetensors; returns the worst error. */
static double check_grads(const char *name, const tfm_model *m, const float *gbase) {
    char p[512];
    st_file gf;
    snprintf(p, sizeof p, "tests/golden/%s/grads.safetensors", name);
    CHECK(st_open(test_path(p), &gf) == TFM_OK, "%s: grads file: %s", name, tfm_last_error());
    float *ref = malloc(sizeof(float) * m->n_params);
    double worst = 0.0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(&gf, e->name);
        CHECK(t != NULL && t->end - t->begin == e->numel * sizeof(float), "%s: golden gradient of %s", name, e->name);
        if (!t || t->end - t->begin != e->numel * sizeof(float)) continue;
        st_read(&gf, t, ref);
        const double err = max_err(gbase + e->offset, ref, e->numel);
        CHECK(err <= TOL, "%s: gradient of %s: max error %.3g > %g", name, e->name, err, TOL);
        if (!(err <= worst)) worst = err;
    }
    st_close(&gf);
    free(ref);
    return worst;
}

/* Cached decoding == the batched pass, at every non-pad input position of every row. */
static double check_cache(const char *name, golden_case *g, const float *batched) {
    const tfm_config *c = &g->m->cfg;
    const int B = g->B, T = g->T, Td = T - 1;
    const size_t V = (size_t)c->tgt_vocab;
    CHECK(kv_cache_reserve(g->ctx, B, 0, Td) == TFM_OK, "%s: cache: %s", name, tfm_last_error());
    model_decode_start(g->ctx, NULL);
    double worst = 0.0;
    for (int t = 0; t < Td; t++) {
        model_decode_step(g->ctx, g->tgt_ids + t, (size_t)T);
        for (int b = 0; b < B; b++) {
            if (g->tgt_ids[b * T + t] == c->pad_id) continue;
            const double e = max_err(g->ctx->cache.logits + (size_t)b * V, batched + ((size_t)b * Td + t) * V, V);
            if (!(e <= worst)) worst = e;
        }
    }
    CHECK(worst <= CACHE_TOL, "%s: cached decoding differs from the batched pass by %.3g", name, worst);
    return worst;
}

static void run_case(const char *name, tfm_pe want_pe, int want_tied) {
    char p[512];
    golden_case g;
    if (!golden_case_load(name, &g)) {
        golden_case_free(&g);
        return;
    }
    tfm_model *m = g.m;
    const tfm_config *c = &m->cfg;
    CHECK(c->arch == TFM_ARCH_DECODER_ONLY && c->pe == want_pe && c->tie_embeddings == want_tied,
          "%s: arch %s pe %s tied %d", name, tfm_arch_name(c->arch), tfm_pe_name(c->pe), c->tie_embeddings);
    CHECK(g.S == 0, "%s: a decoder-only case has no source (S = %d)", name, g.S);
    const int B = g.B, S = g.S, T = g.T, Td = T - 1;
    const size_t V = (size_t)c->tgt_vocab, N = (size_t)(B * Td);
    int32_t *y = malloc(sizeof(int32_t) * N);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Td; t++) y[b * Td + t] = g.tgt_ids[b * T + t + 1];
    tfm_context *ctx = g.ctx;
    CHECK(context_reserve(ctx, B, S, Td, 1) == TFM_OK, "%s: reserve: %s", name, tfm_last_error());
    model_forward(ctx, B, S, Td, g.src_ids, g.tgt_ids, (size_t)T, NULL);

    float *want = malloc(sizeof(float) * N * V), *batched = malloc(sizeof(float) * N * V);
    snprintf(p, sizeof p, "tests/golden/%s/logits.f32", name);
    FILE *f = fopen(test_path(p), "rb");
    CHECK(f && fread(want, sizeof(float), N * V, f) == N * V, "%s: logits.f32 missing or short", name);
    if (f) fclose(f);
    const double lerr = max_err(ctx->acts.logits, want, N * V);
    CHECK(lerr <= TOL, "%s: logits: max error %.3g > %g", name, lerr, TOL);
    memcpy(batched, ctx->acts.logits, sizeof(float) * N * V);

    float *losses = malloc(sizeof(float) * N);
    size_t n_nonpad = 0;
    const double loss = cross_entropy_forward(losses, &n_nonpad, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, N, V);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, n_nonpad, N, V);
    const double want_loss = golden_loss(name);
    CHECK_NEAR(loss, want_loss, 1e-5, name);

    float *gbase = calloc(m->n_params, sizeof(float));
    CHECK(gbase && golden_backward(ctx, gbase, B, S, T, g.src_ids, g.tgt_ids, NULL), "%s: backward", name);
    const double gerr = check_grads(name, m, gbase);

    /* the public scorer on the same batch: no source at all */
    double lp[16];
    int nt[16];
    CHECK(B <= 16 && tfm_model_score(ctx, B, 0, T, NULL, g.tgt_ids, lp, nt, NULL) == TFM_OK, "%s: score: %s", name,
          tfm_last_error());
    const double cerr = check_cache(name, &g, batched);
    printf("%s: max |logit - PyTorch| = %.3g, loss %.7f (PyTorch %.7f), max |grad - PyTorch| = %.3g, "
           "max |cached - batched| = %.3g\n",
           name, lerr, loss, want_loss, gerr, cerr);
    free(gbase);
    free(losses);
    free(want);
    free(batched);
    free(y);
    golden_case_free(&g);
}

int main(void) {
    run_case("lm_pre_tied", TFM_PE_SINUSOIDAL, 1);
    run_case("lm_post_learned", TFM_PE_LEARNED, 0);
    run_case("lm_rope", TFM_PE_ROPE, 1);
    run_case("lm_t5", TFM_PE_T5, 1);
    return test_finish("golden_lm");
}
