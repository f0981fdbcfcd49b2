/* A forward pass's saved activations: what every sub-layer, block and stack keeps for the backward
 * pass (or, for inference, just for the next block), and how a batch of (B, S, T) is laid out in
 * one arena. A context holds one such layout (model_context.h); the KV cache keeps one block's for
 * a decoding step (kv_cache.h). */
#ifndef TFM_ACTIVATIONS_H
#define TFM_ACTIVATIONS_H

#include "arena.h"
#include "ops.h"
#include "params.h"
#include "stack.h"
#include "tfm/model.h"

#include <stdint.h>

/* A sub-layer wrapped in its residual connection and LayerNorm (Vaswani et al. 2017, §3.1):
 *   post-LN: res = x + f(x),        ln = LayerNorm(res), output ln
 *   pre-LN:  ln = LayerNorm(x),     res = x + f(ln),     output res   */
typedef struct {
    float *ln;      /* (N, d) LayerNorm output */
    float *ln_mean; /* (N) */
    float *ln_rstd; /* (N) */
    float *res;     /* (N, d) residual sum */
    uint8_t *drop;  /* (N, d) dropout keep mask of the sub-layer output (training only) */
} block_acts;

/* One attention sub-layer of N = B·T query rows over S_k keys. */
typedef struct {
    float *q;      /* (N, d) or, for self-attention, NULL (the queries live in qkv) */
    float *qkv;    /* self: (N, 3d) packed Q|K|V of this call's positions;
                      cross: (B·S, 2d) packed K|V of the memory (in a KV cache: the cache's) */
    float *probs;  /* (B, H, T, S_k) attention weights (reference path only, else NULL) */
    float *probs_drop; /* (B, H, T, S_k) the weights after dropout (training, reference path only) */
    float *lse;    /* (B, H, T) fused path (attn_use_fused): each query row's log-sum-exp; NULL on
                      the reference path, which the forward and backward then take */
    float *fws;    /* fused path: the kernels' scratch, shared by every sub-layer of the pass */
    int fws_slots; /* threads fws has room for (attn_fused_workspace_floats) */
    attn_args fused_args; /* fused path: the forward's masks, bias and dropout, for the backward */
    float *bias;   /* (H, T, S_k) the position encoding's score bias (only if it has one) */
    float *att;    /* (N, d) heads concatenated */
    float *proj;   /* (N, d) after the output projection W_O */
} mha_acts;

/* One block of a stack; blk[k] wraps sub-layer k (stack.h block_desc). */
typedef struct {
    block_acts blk[3];
    mha_acts self_attn;
    mha_acts cross_attn;
    float *ff_pre; /* (N, d_ff) linear1 output */
    float *ff_act; /* (N, d_ff) after ReLU/GELU (and, training, after dropout) */
    uint8_t *ff_drop; /* (N, d_ff) dropout keep mask of the hidden layer (training only) */
    float *ff_out; /* (N, d) linear2 output */
} layer_acts;

/* One stack run over B rows of T positions. */
typedef struct {
    int T;            /* positions per row (S for the encoder, the decoder input's T) */
    uint8_t *pad;     /* (B, T) 1 where the input id == pad_id (the key padding mask) */
    float *x0;        /* (B·T, d) scaled embedding + PE (after dropout when training) */
    uint8_t *x0_drop; /* dropout keep mask (training only) */
    layer_acts layers[TFM_MAX_LAYERS];
    float *out, *out_mean, *out_rstd; /* (B·T, d) the stack's final LayerNorm */
} stack_acts;

typedef struct {
    int B, S, T;  /* the sizes the workspace was laid out for (S: source, T: target positions) */
    int training; /* laid out with the dropout buffers */
    int slots;    /* threads the fused attention's scratch was laid out for */
    int encode;   /* 1: the encoding layout (context_reserve_encode): only the stacks before the
                     generator's, one block's buffers shared by a stack's blocks, no logits */
    stack_acts stack[TFM_MAX_STACKS]; /* as model_describe lists the stacks */
    float *logits; /* (B·T_out, V_tgt) of the generator's stack */
} activations;

/** Lays out the activations of (B, S, T) in `arena` (counting only when its base is NULL); with
 * `training` also the dropout masks and post-dropout attention weights (or, where the table `kern`
 * takes the fused attention, each row's log-sum-exp). A stack over the source
 * has S positions, over the target T. `slots`: the threads the fused attention's scratch is sized
 * for (read once by the caller: the count and the carve must agree, whatever another thread does
 * to tfm_set_threads meanwhile). */
void activations_layout(const ops_kernels *kern, const tfm_config *cfg, int B, int S, int T, int training, int slots, tfm_arena *arena,
                        activations *a);

/** Lays out the activations of one block of N = B·T query rows: self-attention over S_self keys,
 * cross-attention (if the block has it) over S_mem keys whose K|V buffer is laid out only if
 * `own_mem_kv` (a KV cache keeps its own). Counting only when the arena's base is NULL. */
void layer_acts_layout(const ops_kernels *kern, const tfm_config *cfg, const block_desc *bd, size_t B, size_t T, size_t S_self,
                       size_t S_mem, int own_mem_kv, int training, tfm_arena *a, layer_acts *L);

/** Whether an attention sub-layer of a training layout takes the fused kernels
 * (attn_fused_forward/backward; docs/KERNELS.md, "Attention") instead of attn_forward/backward:
 * only with `training` (the layout that keeps what the backward reads), when the kernel table says
 * attn_fused (its context's choice), and, for self-attention (cross = 0), when the position
 * encoding adds no relative key/value tables (Shaw) and no bias with a gradient (T5): those need
 * [B, H, T, S] tensors. A fixed bias (ALiBi) is served. A context and the grad_workspace used with
 * it are laid out with the same table. */
int attn_use_fused(const ops_kernels *kern, const tfm_config *cfg, int cross, int training);

/** Bytes of the activation workspace of a batch of (B, S, T) (with the training buffers if asked),
 * laid out for kernel table `kern` (only training layouts depend on it: the attention's weights or
 * its log-sum-exps). */
size_t activations_bytes(const ops_kernels *kern, const tfm_config *cfg, int B, int S, int T, int training);

/** Bytes of the encoder's workspace for decoding B sources of S tokens with the default group size
 * (context_reserve_encode with ENCODE_TOKENS, model_context.h): the encoding layout — the stacks
 * before the generator's (all of an encoder-only model's), each with one block's activations that
 * its blocks share, no logits — of the largest group any batch of at most B sources of at most S
 * tokens runs. */
size_t activations_encode_bytes(const ops_kernels *kern, const tfm_config *cfg, int B, int S);

#endif
