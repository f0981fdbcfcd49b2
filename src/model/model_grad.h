/* The backward pass: the scratch buffers of the activations' gradients and backpropagation through
 * a context's last forward pass into a gradient buffer laid out as the parameters (params.h). */
#ifndef TFM_MODEL_GRAD_H
#define TFM_MODEL_GRAD_H

#include "arena.h"
#include "model_context.h"
#include "ops.h"
#include "params.h"

#include <stdint.h>

/** Gradients of the loss w.r.t. the activations, one set of scratch buffers reused layer by layer
 * (sizes for the largest batch: N = max(B·S, B·T)). */
typedef struct {
    float *d_stream; /* (N, d) gradient of the residual stream being walked */
    float *d_res;    /* (N, d) gradient at a LayerNorm input/output */
    float *d_sub;    /* (N, d) gradient of a sub-layer output before dropout */
    float *d_att;    /* (N, d) gradient of the concatenated heads */
    float *d_q;      /* (N, d) gradient of cross-attention queries */
    float *d_kv;     /* (N, 2d) gradient of cross-attention keys|values */
    float *d_big;    /* (N, max(3d, d_ff)) packed Q|K|V gradient, or the FFN hidden gradient */
    float *d_big2;   /* (N, d_ff) FFN pre-activation gradient */
    float *dprobs;   /* (B, H, max(S,T), max(S,T)) reference attention backward workspace; NULL
                        when every attention takes the fused path (attn_use_fused) */
    float *d_memory; /* (N, d) gradient of a memory stack's output, summed over the blocks reading it */
} grad_workspace;

/** Lays out a grad_workspace for (B, S, T) in `arena` (counting only when its base is NULL). */
void grad_workspace_layout(const ops_kernels *kern, const tfm_config *cfg, int B, int S, int T, tfm_arena *arena, grad_workspace *w);

/** Backpropagation through model_forward's last call on ctx: reads dL/dlogits from ctx->acts.logits
 * (B·T, V_tgt), ACCUMULATES every parameter gradient into *grads (a model_params laid out over a
 * gradient buffer by params_layout; tied tensors share one gradient). src and tgt_in as given to
 * the forward. No allocation. */
void model_backward(tfm_context *ctx, model_params *grads, grad_workspace *w, const int32_t *src,
                    const int32_t *tgt_in, size_t tgt_in_stride, const dropout_cfg *drop);

#endif
