/* What the golden gradient tests share: the model's gradient after a forward pass, and the loss
 * PyTorch wrote (tests/reference/make_golden*.py). Needs the internal model headers. */
#ifndef TFM_GOLDEN_GRADS_H
#define TFM_GOLDEN_GRADS_H

#include "model_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Backward of the forward pass ctx just ran on (B, S, T) ids (the logits' gradient already in
 * ctx->acts.logits): every parameter's gradient into gbase (n_params floats, zeroed first), through
 * a gradient workspace laid out for the batch and freed after. 0 if the workspace cannot be had. */
static inline int golden_backward(tfm_context *ctx, float *gbase, int B, int S, int T, const int32_t *src,
                                  const int32_t *tgt, const dropout_cfg *drop) {
    const tfm_config *c = &ctx->m->cfg;
    const int Td = T - 1;
    memset(gbase, 0, ctx->m->n_params * sizeof(float));
    model_params grads;
    params_layout(c, &grads, gbase, NULL, NULL);
    tfm_arena counter = {NULL, 0, 0}, ws_arena;
    grad_workspace ws;
    grad_workspace_layout(KERN, c, B, S, Td, &counter, NULL);
    if (arena_init(&ws_arena, counter.used, "test") != TFM_OK) return 0;
    grad_workspace_layout(KERN, c, B, S, Td, &ws_arena, &ws);
    model_backward(ctx, &grads, &ws, src, tgt, (size_t)T, drop);
    arena_free(&ws_arena);
    return 1;
}

/* PyTorch's loss of case `name` (tests/golden/NAME/loss.txt); NaN, with a failed check, if missing. */
static inline double golden_loss(const char *name) {
    char p[512];
    snprintf(p, sizeof p, "tests/golden/%s/loss.txt", name);
    FILE *f = fopen(test_path(p), "r");
    double want = NAN;
    CHECK(f && fscanf(f, "%lf", &want) == 1, "%s: loss.txt missing or unreadable", name);
    if (f) fclose(f);
    return want;
}

#endif
