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
    int encode_tokens;   /* the KV cache's encoder runs on sentences in groups of about this many
                            source tokens (encode_rows; default ENCODE_TOKENS; tests lower it) */
    int prefill_chunk;   /* the batched prefill's positions per chunk (model_prefill_reserve; default
                            PREFILL_CHUNK; tests lower it): a prompt's bits depend on it */
    int attn_maps;       /* 1 after tfm_model_attention (include/tfm/attention.h) until the next
                            context_reserve: the workspace holds that pass's attention weights */
};

/** Makes sure the context's workspace holds a batch of (B, S, T) (with the training buffers if
 * asked) and lays it out for those sizes; grows the arena only if the batch needs more bytes than
 * it has — a trainer reserves every batch shape up front so a training step never allocates.
 * Errors: TFM_ERR_NOMEM. */
tfm_status context_reserve(tfm_context *ctx, int B, int S, int T, int training);

/** Source tokens per pass of the KV cache's encoder (model_decode_start): its sentences are encoded in
 * groups of encode_rows(B, S, ENCODE_TOKENS), so the encoder's workspace holds about this many
 * tokens' activations whatever the batch (d_model 512, d_ff 2048, 8 heads, S 230: ~45 MiB; a batch
 * of 32 such sentences in one pass took ten times that). Each row's bits do not depend on the
 * group (the linear layers sum every output in one order whatever the rows: gemm_small, or the
 * tiled product's kernel of a full tile; attention and LayerNorm are per row), which
 * test_decode_rows checks. */
#define ENCODE_TOKENS 1024

/** Sentences per encoder pass for B sentences of S tokens and a budget of `tokens` tokens: at
 * least 1, at most B. */
int encode_rows(int B, int S, int tokens);

/** context_reserve for encoding only (the KV cache's model_decode_start), B sources of S tokens, a
 * group of encode_rows(B, S, ctx->encode_tokens) sentences at a time: the stacks before the
 * generator's, inference, each stack's blocks sharing one block's buffers (a block reads only its
 * predecessor's output and overwrites nothing its successor reads; stacks whose blocks have a
 * single sub-layer keep a layout per block), no decoder activations or logits. What is read
 * afterwards is each such stack's output (acts.stack[s].out, pad) for the group just encoded;
 * acts.B is the group's size. The arena is sized for the largest group of any batch of at most B
 * sources of at most S tokens, so a call with a smaller batch re-carves it. The workspace is thus
 * about one block's for ~encode_tokens tokens instead of every block's of both stacks for the
 * batch. model_forward must not run on this layout (context_reserve lays out another). Errors:
 * TFM_ERR_NOMEM. */
tfm_status context_reserve_encode(tfm_context *ctx, int B, int S);

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
