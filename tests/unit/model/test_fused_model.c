/* The whole model on the fused element-wise kernels (the default) against the same model on the
 * unfused reference kernels (a context with layers_reference = 1): model_forward + label-smoothed
 * cross-entropy + model_backward as tfm_trainer_step chains them (with the recomputing loss pair,
 * the same bits as the trainer's _lse pair: test_optim, test_pool_kernels), post-LN and pre-LN, ReLU and
 * GELU, dropout 0 and 0.1, padded source and target rows. The fused kernels compute the same floats
 * in the same order, so the logits and every parameter gradient must be bit-identical; and the
 * fused path must give the same bits with 1 thread as with 2. */
#include "model_internal.h"
#include "ops.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, S = 9, T = 8, TD = T - 1 };

/* Rows 1 and 2 padded (pad 0); target rows BOS (1) first and EOS (2) last. */
static const int32_t SRC[B * S] = {3, 7, 10, 4, 5, 8, 9, 11, 6, /**/ 6, 9, 3, 12, 4, 0, 0, 0, 0,
                                   /**/ 5, 5, 7, 3, 9, 10, 11, 0, 0};
static const int32_t TGT[B * T] = {1, 4, 8, 12, 5, 6, 7, 2, /**/ 1, 9, 3, 2, 0, 0, 0, 0, /**/ 1, 3, 4, 5, 6, 2, 0, 0};

/* Runs one training step's forward and backward; returns the gradients (malloc'd, n_params) and
 * copies the logits into logits (B·TD·V). */
static float *step_grads(tfm_model *m, int reference, int threads, float p, float *logits) {
    const tfm_config *c = &m->cfg;
    ops_set_threads(threads);
    tfm_context *ctx = NULL;
    tfm_kernel_opts ko = tfm_kernel_opts_default();
    ko.layers_reference = reference;
    if (tfm_context_create_opts(m, &ko, &ctx) != TFM_OK || context_reserve(ctx, B, S, TD, 1) != TFM_OK) {
        CHECK(0, "context: %s", tfm_last_error());
        return NULL;
    }
    CHECK(ctx->kernels.fused_layers == !reference, "the context's table ignores layers_reference");
    float *grads = calloc(m->n_params, sizeof(float));
    model_params g;
    params_layout(c, &g, grads, NULL, NULL);
    tfm_arena counter = {NULL, 0, 0}, ws_arena = {NULL, 0, 0};
    grad_workspace ws;
    grad_workspace_layout(&ctx->kernels, c, B, S, TD, &counter, NULL);
    CHECK(arena_init(&ws_arena, counter.used, "test workspace") == TFM_OK, "workspace");
    grad_workspace_layout(&ctx->kernels, c, B, S, TD, &ws_arena, &ws);
    dropout_cfg drop = {p, 0x5eedULL};
    int32_t y[B * TD];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < TD; t++) y[b * TD + t] = TGT[b * T + t + 1];
    float losses[B * TD];
    const size_t N = (size_t)(B * TD), V = (size_t)c->tgt_vocab;
    model_forward(ctx, B, S, TD, SRC, TGT, T, &drop);
    size_t n_tok = 0;
    cross_entropy_forward(losses, &n_tok, ctx->acts.logits, y, c->pad_id, 0.1f, N, V);
    memcpy(logits, ctx->acts.logits, N * V * sizeof(float));
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, 0.1f, n_tok, N, V);
    model_backward(ctx, &g, &ws, SRC, TGT, T, &drop);
    arena_free(&ws_arena);
    tfm_context_free(ctx);
    return grads;
}

static void run_case(int norm_first, tfm_activation act, float p) {
    char name[64];
    snprintf(name, sizeof name, "%s %s dropout %.1f", norm_first ? "pre-LN" : "post-LN",
             act == TFM_ACT_GELU ? "GELU" : "ReLU", (double)p);
    tfm_config c = tfm_config_default();
    c.d_model = 16;
    c.n_heads = 2;
    c.d_ff = 40;
    c.n_enc_layers = 2;
    c.n_dec_layers = 2;
    c.src_vocab = 13;
    c.tgt_vocab = 13;
    c.max_len = 16;
    c.norm_first = norm_first;
    c.activation = act;
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 7, &m) == TFM_OK, "%s: create: %s", name, tfm_last_error());
    if (!m) return;
    const size_t nl = (size_t)(B * TD * c.tgt_vocab);
    float *lf = malloc(nl * sizeof(float)), *lr = malloc(nl * sizeof(float)), *l1 = malloc(nl * sizeof(float));
    float *gf = step_grads(m, 0, 2, p, lf), *gr = step_grads(m, 1, 2, p, lr), *g1 = step_grads(m, 0, 1, p, l1);
    if (gf && gr && g1) {
        size_t i = 0;
        while (i < nl && lf[i] == lr[i]) i++;
        CHECK(i == nl, "%s: logits differ from the reference path at %zu: %.9g vs %.9g", name, i,
              (double)lf[i < nl ? i : 0], (double)lr[i < nl ? i : 0]);
        CHECK(memcmp(lf, l1, nl * sizeof(float)) == 0, "%s: logits differ between 1 and 2 threads", name);
        for (size_t k = 0; k < m->n_entries; k++) { /* per tensor, so a failure names it */
            const param_entry *e = &m->entries[k];
            if (e->alias_of >= 0) continue;
            size_t j = 0;
            while (j < e->numel && gf[e->offset + j] == gr[e->offset + j]) j++;
            CHECK(j == e->numel, "%s: gradient of %s differs from the reference path at %zu: %.9g vs %.9g", name,
                  e->name, j, (double)gf[e->offset + (j < e->numel ? j : 0)],
                  (double)gr[e->offset + (j < e->numel ? j : 0)]);
            CHECK(memcmp(gf + e->offset, g1 + e->offset, e->numel * sizeof(float)) == 0,
                  "%s: gradient of %s differs between 1 and 2 threads", name, e->name);
        }
    }
    free(lf), free(lr), free(l1), free(gf), free(gr), free(g1);
    tfm_model_free(m);
}

int main(void) {
    for (int nf = 0; nf < 2; nf++)
        for (int a = 0; a < 2; a++) {
            run_case(nf, a ? TFM_ACT_GELU : TFM_ACT_RELU, 0.0f);
            run_case(nf, a ? TFM_ACT_GELU : TFM_ACT_RELU, 0.1f);
        }
    return test_finish("test_fused_model");
}
