/* Golden parity of the relative position encodings with their PyTorch twin
 * (tests/reference/make_golden_rel.py): t5 (few buckets, so short sentences reach the log
 * buckets), alibi (6 heads, pre-LN GELU), rope interleaved and rope half. For each: every logit of
 * a padded batch, the label-smoothed loss, and every parameter's gradient (the T5 tables
 * included) within 1e-4 of PyTorch; encoder and decoder both carry the encoding. */
#include "model_internal.h"
#include "ops.h"
#include "safetensors.h"
#include "golden_case.h"
#include "golden_grads.h"

#include <stdint.h>

#define TOL 1e-4
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

static void run_case(const char *name, tfm_pe want_pe) {
    char p[512];
    golden_case g;
    if (!golden_case_load(name, &g)) {
        golden_case_free(&g);
        return;
    }
    tfm_model *m = g.m;
    const tfm_config *c = &m->cfg;
    CHECK(c->pe == want_pe, "%s: the checkpoint's pe is %s", name, tfm_pe_name(c->pe));
    const int B = g.B, S = g.S, T = g.T, Td = T - 1;
    const size_t V = (size_t)c->tgt_vocab, N = (size_t)(B * Td);
    int32_t *y = malloc(sizeof(int32_t) * N);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Td; t++) y[b * Td + t] = g.tgt_ids[b * T + t + 1];
    tfm_context *ctx = g.ctx;
    CHECK(context_reserve(ctx, B, S, Td, 1) == TFM_OK, "%s: reserve: %s", name, tfm_last_error());
    model_forward(ctx, B, S, Td, g.src_ids, g.tgt_ids, (size_t)T, NULL);

    /* logits, every position (padded ones too: both sides compute them alike) */
    float *want = malloc(sizeof(float) * N * V);
    snprintf(p, sizeof p, "tests/golden/%s/logits.f32", name);
    FILE *f = fopen(test_path(p), "rb");
    CHECK(f && fread(want, sizeof(float), N * V, f) == N * V, "%s: logits.f32 missing or short", name);
    if (f) fclose(f);
    const double lerr = max_err(ctx->acts.logits, want, N * V);
    CHECK(lerr <= TOL, "%s: logits: max error %.3g > %g", name, lerr, TOL);

    float *losses = malloc(sizeof(float) * N);
    size_t n_nonpad = 0;
    const double loss = cross_entropy_forward(losses, &n_nonpad, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, N, V);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, n_nonpad, N, V);
    const double want_loss = golden_loss(name);
    CHECK_NEAR(loss, want_loss, 1e-5, name);

    float *gbase = calloc(m->n_params, sizeof(float));
    CHECK(gbase && golden_backward(ctx, gbase, B, S, T, g.src_ids, g.tgt_ids, NULL), "%s: backward", name);

    st_file gf;
    snprintf(p, sizeof p, "tests/golden/%s/grads.safetensors", name);
    CHECK(st_open(test_path(p), &gf) == TFM_OK, "%s: grads file: %s", name, tfm_last_error());
    float *ref = malloc(sizeof(float) * m->n_params);
    double worst = 0.0;
    const char *worst_name = "";
    int pe_tensors = 0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(&gf, e->name);
        CHECK(t != NULL && t->end - t->begin == e->numel * sizeof(float), "%s: golden gradient of %s", name, e->name);
        if (!t || t->end - t->begin != e->numel * sizeof(float)) continue;
        st_read(&gf, t, ref);
        const double err = max_err(gbase + e->offset, ref, e->numel);
        CHECK(err <= TOL, "%s: gradient of %s: max error %.3g > %g", name, e->name, err, TOL);
        if (strstr(e->name, "relative_attention_bias")) pe_tensors++;
        if (!(err <= worst)) {
            worst = err;
            worst_name = e->name;
        }
    }
    CHECK(pe_tensors == (want_pe == TFM_PE_T5 ? 2 : 0), "%s: %d relative_attention_bias tables", name, pe_tensors);
    printf("%s: max |logit - PyTorch| = %.3g, loss %.7f (PyTorch %.7f), max |grad - PyTorch| = %.3g (%s)\n", name, lerr,
           loss, want_loss, worst, worst_name);
    st_close(&gf);
    free(ref);
    free(gbase);
    free(losses);
    free(want);
    free(y);
    golden_case_free(&g);
}

int main(void) {
    run_case("rel_t5", TFM_PE_T5);
    run_case("rel_alibi", TFM_PE_ALIBI);
    run_case("rel_rope_interleaved", TFM_PE_ROPE);
    run_case("rel_rope_half", TFM_PE_ROPE);
    return test_finish("golden_rel");
}
