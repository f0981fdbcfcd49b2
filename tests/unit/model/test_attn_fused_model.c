/* The whole model with the fused attention (the default of a training layout, attn_use_fused)
 * against the same model on the reference kernels (a context with attention_reference = 1, as TFM_ATTN=reference):
 * the loss and every parameter gradient of a padded batch with dropout 0.3, 140 queries (two tiles
 * of ATTN_FUSED_BQ, the second partial) over 140 or 150 keys, d_k = 6; encoder–decoder (sinusoidal,
 * ALiBi: a fixed bias the fused path serves) and decoder-only (RoPE). Also: which path each layout
 * takes (Shaw and T5 stay on the reference path; inference layouts too) and that the fused layout
 * is smaller by the [B, H, T, S] weights it no longer keeps.
 *
 * Tolerance: the paths differ by float rounding only (test_attn_fused: ≤ 5e-7 relative per
 * attention output); through two or three layers and the loss that stays far below
 * |g_fused − g_ref| ≤ 2e-5 · max|g_ref| per tensor (measured ≤ 1.1e-6) and 1e-6 relative on the
 * loss (measured 1e-8), while a wrong mask or dropout element moves them by 1e-2..1 (checked by
 * mutating layer.c: the backward without the forward's dropout gave 0.65). */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { B = 3, S = 150, T = 141, TD = T - 1, V = 29 };

static int32_t src_ids[B * S], tgt_ids[B * T], y[B * TD];

/* Loss and gradients (gbase, the model's n_params) of one forward + backward, on a context laid out
 * whose kernel table has the fused path on or off. Returns the loss; *act_bytes: the layout's size. */
static double loss_and_grads(tfm_model *m, int fused, float *gbase, size_t *act_bytes, int *fused_self,
                             int *fused_cross, int *dprobs_kept) {
    const tfm_config *c = &m->cfg;
    const int enc_dec = c->arch == TFM_ARCH_ENCODER_DECODER;
    const int Sx = enc_dec ? S : 0;
    tfm_kernel_opts ko = tfm_kernel_opts_default();
    ko.attention_reference = !fused;
    tfm_context *ctx = NULL;
    double loss = NAN;
    CHECK(tfm_context_create_opts(m, &ko, &ctx) == TFM_OK && context_reserve(ctx, B, Sx, TD, 1) == TFM_OK,
          "reserve: %s", tfm_last_error());
    if (!ctx) return loss;
    *act_bytes = ctx->act_arena.cap; /* the layout's bytes: the arena is grown to exactly them */
    const stack_acts *dec = &ctx->acts.stack[enc_dec ? 1 : 0];
    *fused_self = dec->layers[0].self_attn.lse != NULL && dec->layers[0].self_attn.probs == NULL;
    *fused_cross = enc_dec && dec->layers[0].cross_attn.lse != NULL && dec->layers[0].cross_attn.probs == NULL;
    tfm_arena counter = {NULL, 0, 0}, ws_arena = {NULL, 0, 0};
    grad_workspace ws;
    grad_workspace_layout(&ctx->kernels, c, B, Sx, TD, &counter, NULL);
    CHECK(arena_init(&ws_arena, counter.used, "test workspace") == TFM_OK, "workspace");
    grad_workspace_layout(&ctx->kernels, c, B, Sx, TD, &ws_arena, &ws);
    *dprobs_kept = ws.dprobs != NULL;
    dropout_cfg drop = {.p = 0.3f, .seed = 0x5eedu};
    for (size_t i = 0; i < m->n_params; i++) gbase[i] = 0.0f;
    model_params g;
    params_layout(c, &g, gbase, NULL, NULL);
    model_forward(ctx, B, Sx, TD, enc_dec ? src_ids : NULL, tgt_ids, T, &drop);
    static float losses[B * TD];
    size_t n = 0;
    loss = cross_entropy_forward(losses, &n, ctx->acts.logits, y, c->pad_id, 0.1f, B * TD, V);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, 0.1f, n, B * TD, V);
    model_backward(ctx, &g, &ws, enc_dec ? src_ids : NULL, tgt_ids, T, &drop);
    arena_free(&ws_arena);
    tfm_context_free(ctx);
    return loss;
}

static void run_case(const char *name, tfm_arch arch, tfm_pe pe, int norm_first, int expect_fused) {
    tfm_config c = tfm_config_default();
    c.arch = arch;
    c.d_model = 18;
    c.n_heads = 3; /* d_k = 6 */
    c.d_ff = 24;
    c.n_enc_layers = arch == TFM_ARCH_ENCODER_DECODER ? 2 : 0;
    c.n_dec_layers = 2;
    c.src_vocab = V;
    c.tgt_vocab = V;
    c.max_len = 160;
    c.norm_first = norm_first;
    c.pe = pe;
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 11, &m) == TFM_OK, "%s: create: %s", name, tfm_last_error());
    if (!m) return;
    float *g_fused = malloc(m->n_params * sizeof(float)), *g_ref = malloc(m->n_params * sizeof(float));
    size_t bytes_fused = 0, bytes_ref = 0;
    int fs, fc, dk, fs_r, fc_r, dk_r;
    const double l_fused = loss_and_grads(m, 1, g_fused, &bytes_fused, &fs, &fc, &dk);
    const double l_ref = loss_and_grads(m, 0, g_ref, &bytes_ref, &fs_r, &fc_r, &dk_r);
    const int enc_dec = arch == TFM_ARCH_ENCODER_DECODER;
    CHECK(fs == expect_fused && (!enc_dec || fc) && dk == !expect_fused,
          "%s: default layout: fused self %d cross %d, dprobs %d", name, fs, fc, dk);
    CHECK(!fs_r && !fc_r && dk_r, "%s: the reference path still fused (self %d cross %d) or no dprobs", name, fs_r,
          fc_r);
    if (expect_fused || enc_dec) {
        CHECK(bytes_fused < bytes_ref, "%s: fused layout %zu bytes, reference %zu", name, bytes_fused, bytes_ref);
        printf("%s: activations %zu bytes fused, %zu reference\n", name, bytes_fused, bytes_ref);
    }
    CHECK(fabs(l_fused - l_ref) <= 1e-6 * fabs(l_ref) && isfinite(l_fused), "%s: loss %.9g fused, %.9g reference",
          name, l_fused, l_ref);
    double worst = 0.0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        if (e->alias_of >= 0) continue;
        double mx = 0.0, diff = 0.0;
        for (size_t i = 0; i < e->numel; i++) {
            const double a = g_fused[e->offset + i], r = g_ref[e->offset + i];
            if (fabs(r) > mx) mx = fabs(r);
            const double dd = isnan(a) ? INFINITY : fabs(a - r);
            if (dd > diff) diff = dd;
        }
        const double err = diff / (mx > 1e-6 ? mx : 1e-6);
        if (err > worst) worst = err;
        CHECK(err <= 2e-5, "%s: gradient of %s differs: max |fused - ref| %.3g, max |ref| %.3g", name, e->name, diff,
              mx);
    }
    printf("%s: loss %.9g vs %.9g, worst gradient error %.3g\n", name, l_fused, l_ref, worst);
    free(g_fused), free(g_ref);
    tfm_model_free(m);
}

int main(void) {
    uint64_t s = 0x1234567u;
    for (int b = 0; b < B; b++) { /* row 0 full, rows 1 and 2 padded (pad id 0) */
        const int ls = S - 13 * b, lt = T - 41 * b;
        for (int i = 0; i < S; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            src_ids[b * S + i] = i < ls ? 3 + (int32_t)((s >> 33) % (V - 3)) : 0;
        }
        for (int i = 0; i < T; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            tgt_ids[b * T + i] = i == 0 ? 1 : i == lt - 1 ? 2 : i < lt ? 3 + (int32_t)((s >> 33) % (V - 3)) : 0;
        }
        for (int t = 0; t < TD; t++) y[b * TD + t] = tgt_ids[b * T + t + 1];
    }
    run_case("enc-dec sinusoidal post-LN", TFM_ARCH_ENCODER_DECODER, TFM_PE_SINUSOIDAL, 0, 1);
    run_case("enc-dec alibi pre-LN", TFM_ARCH_ENCODER_DECODER, TFM_PE_ALIBI, 1, 1);
    run_case("decoder-only rope pre-LN", TFM_ARCH_DECODER_ONLY, TFM_PE_ROPE, 1, 1);
    run_case("enc-dec t5 (self on the reference path)", TFM_ARCH_ENCODER_DECODER, TFM_PE_T5, 1, 0);
    run_case("enc-dec shaw (self on the reference path)", TFM_ARCH_ENCODER_DECODER, TFM_PE_SHAW, 1, 0);
    return test_finish("test_attn_fused_model");
}
