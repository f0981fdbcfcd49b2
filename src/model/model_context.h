/* A context: one thread's working memory for a model (struct tfm_context: the activation
 * workspace, the KV cache, the position encodings' state, the kernel table), how its workspace is
 * reserved for a batch, and the forward pass over it, with what the trainer and the searches read
 * of it (the logits, a stack's output, the kernels). */
#ifndef TFM_MODEL_CONTEXT_H
#define TFM_MODEL_CONTEXT_H

#include "activations.h"
#include "kv_cache.h"
#include "ops.h"
#include "pe.h"
#include "tfm/model.h"

/** One thread's working memory for a model: the activation workspace (re-carved for each batch
 * shape, grown on demand) and the KV cache. Never shared between threads; the model it points to
 * is only read. */
struct tfm_context {
    const tfm_model *m;
    tfm_arena act_arena;
    activations acts;
    kv_cache cache;
    pe_states pe; /* the position encoding's state per stack (FLOATER's cached table), if it keeps one */
    ops_kernels kernels; /* this context's kernel table (src/ops/kernels.h), fixed at creation:
                            the products' route and instruction set, fused or reference attention
                            and FFN / residual wrappers (tests compare the two; docs/KERNELS.md) */
    int decode_compact;  /* 1 (default): decoding drops finished rows from its batch; 0 keeps every
                            row to the end (tests: the same tokens either way) */
    int attn_maps;       /* 1 after tfm_model_attention (include/tfm/attention.h) until the next
                            context_reserve: the workspace holds that pass's attention weights */
};

/** Makes sure the context's workspace holds a batch of (B, S, T) (with the training buffers if
 * asked) and lays it out for those sizes; grows the arena only if the batch needs more bytes than
 * it has — a trainer reserves every batch shape up front so a training step never allocates.
 * Errors: TFM_ERR_NOMEM. */
tfm_status context_reserve(tfm_context *ctx, int B, int S, int T, int training);

/** Dropout of a training forward pass: probability p and the seed of this step's masks. */
typedef struct {
    float p;
    uint64_t seed;
} dropout_cfg;

/** The forward pass of every stack (model_describe; for the encoder–decoder Vaswani et al. 2017,
 * §3, Figure 1) and the generator, for a batch already checked against the vocabularies and
 * max_len: src (B, S) and decoder input tgt_in (B, T), each padded with pad_id; tgt_in row b
 * starts at tgt_in + b·tgt_in_stride. `drop` (NULL for
 * inference) applies inverted dropout where the paper does (§5.4): the embedding + PE sum, each
 * sub-layer output before its residual add, the attention weights and the FFN hidden layer, as
 * nn.Transformer. Leaves every activation, the logits (B·T, V_tgt) included, in ctx->acts (laid
 * out for (B, S, T) by context_reserve). */
void model_forward(tfm_context *ctx, int B, int S, int T, const int32_t *src, const int32_t *tgt_in,
                   size_t tgt_in_stride, const dropout_cfg *drop);

/** The logits (B·T, V_tgt) of the context's last model_forward (a training step's backward turns them
 * into dL/dlogits in place). */
float *context_logits(tfm_context *ctx);

/** The output (B·S or B·T rows, d) of stack `stack` (model_describe's order) in the context's last
 * model_forward: its final LayerNorm, what a sentence embedding pools. */
const float *context_stack_output(const tfm_context *ctx, int stack);

/** The configuration of the context's model (tfm_model_config of tfm_context_model). */
const tfm_config *context_config(const tfm_context *ctx);

/** The context's kernel table (fixed at creation): what its workspaces are laid out for. */
const ops_kernels *context_kernels(const tfm_context *ctx);

/** 1 if decoding on this context drops finished rows from its batch (the default), 0 if it keeps
 * every row to the end. */
int context_decode_compact(const tfm_context *ctx);

#endif
