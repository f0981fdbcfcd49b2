/* The inside of a tfm_model (configuration, parameters in one arena, tokenizer: read-only once
 * built) and of a tfm_context (one thread's forward workspace — activations saved for the backward
 * pass, in an arena sized for (B, S, T) — and its KV cache). */
#ifndef TFM_MODEL_INTERNAL_H
#define TFM_MODEL_INTERNAL_H

#include "arena.h"
#include "checkpoint.h"
#include "ops.h"
#include "params.h"
#include "pe.h"
#include "stack.h"
#include "tfm/model.h"

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
    stack_acts stack[TFM_MAX_STACKS]; /* as model_describe lists the stacks */
    float *logits; /* (B·T_out, V_tgt) of the generator's stack */
} activations;

/* Read-only while any context uses it; only a trainer (which owns its own context) writes the
 * parameters, between its forward/backward passes. */
struct tfm_model {
    tfm_config cfg;
    tfm_arena param_arena;
    model_params p;
    param_entry *entries;
    size_t n_entries;
    size_t n_params; /* floats of parameter storage */

    unsigned char *tokenizer; /* serialized tokenizer (tokenizer.model), or NULL */
    size_t tokenizer_len;
};

/** Allocates a model with its parameter arena (zeroed) and table, no workspace yet. */
tfm_status model_alloc(const tfm_config *cfg, tfm_model **out);

/** Checks a batch of src (B, S) and whole target rows tgt (B, T) against the model: sizes, max_len,
 * every id inside its vocabulary. Errors: TFM_ERR_INVALID_ARG, TFM_ERR_RANGE naming row and
 * position. */
tfm_status model_check_batch(const tfm_model *m, int B, int S, int T, const int32_t *src, const int32_t *tgt);

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
 * laid out for the tuned kernel table (the estimates' assumption: tfm/memory.h). */
size_t activations_bytes(const tfm_config *cfg, int B, int S, int T, int training);

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

/** Incremental decoding state for B rows (sentences, or sentences × beams) of the generator's
 * stack: the self-attention keys and values of every position decoded so far, per block, and the
 * cross-attention keys and values of the memory, computed once (the "KV cache"); and the
 * activations of one step (one new position per row), shared by the blocks since a step is
 * never differentiated. One arena, grown on demand. */
typedef struct {
    int B, S, cap_T; /* rows, source (memory) length, positions the cache can hold */
    int B_mem, beams; /* sentences (memory rows) and rows per sentence: B = B_mem · beams */
    int B_start;     /* rows at kv_cache_reserve (B_mem · beams): the linear layers' kernels are chosen
                        for these (linear_forward_rows) however many rows kv_cache_compact keeps */
    int len;         /* positions decoded so far */
    float *self_k[TFM_MAX_LAYERS], *self_v[TFM_MAX_LAYERS]; /* (B, cap_T, d) */
    float *cross_kv[TFM_MAX_LAYERS];                        /* (B_mem, S, 2d) packed K|V */
    uint8_t *mem_pad;                                       /* (B_mem, S) key padding of the memory */
    int32_t *mem_row; /* (B) memory row of each row: b / beams, until kv_cache_compact moves rows */
    int32_t *slot;    /* (B) kv_cache_reorder's scratch: staging slot of each source row */
    float **cp_dst;   /* (B) kv_cache_reorder's scratch: the copies of one phase (ops_copy_rows) */
    const float **cp_src;
    float *x0;      /* (B, d) embedding + PE of the newest tokens */
    layer_acts step; /* one block's activations for (B, 1) queries over cap_T / S keys */
    float *out, *out_mean, *out_rstd; /* (B, d) final LayerNorm */
    float *logits;  /* (B, V_tgt) of the newest position */
    float *tmp;     /* (B, cap_T, d) scratch for reordering rows */
    /* The decoder's linear weights and the generator's, transposed for linear_panels_forward_t:
     * laid out only when the call's B_start rows take them (linear_panels_t_use), copied from the
     * model at every model_decode_start; else all NULL. */
    layer_wt wt[TFM_MAX_LAYERS];
    float *generator_t; /* (d, V_tgt), or NULL: no transposed copies this call */
    tfm_arena arena;
    tfm_arena wt_arena; /* wt and generator_t: their size does not depend on the batch's lengths */
} kv_cache;

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
};

/** Makes sure the context's workspace holds a batch of (B, S, T) (with the training buffers if
 * asked) and lays it out for those sizes; grows the arena only if the batch needs more bytes than
 * it has — a trainer reserves every batch shape up front so a training step never allocates.
 * Errors: TFM_ERR_NOMEM. */
tfm_status context_reserve(tfm_context *ctx, int B, int S, int T, int training);

/** Lays the context's KV cache out for B rows, sources of S tokens and up to cap_T decoded
 * positions (growing its arena only if needed), and reserves the workspace for encoding (B, S).
 * Errors: TFM_ERR_INVALID_ARG (sizes), TFM_ERR_NOMEM. */
tfm_status kv_cache_reserve(tfm_context *ctx, int B, int S, int cap_T);
/** kv_cache_reserve for beam search: B_mem sentences of `beams` rows each (row r = i·beams + k
 * decodes sentence i), B_mem · beams rows in all. Each sentence is encoded once and its memory
 * (cross-attention K|V, mem_pad) stored once: the beams' cross-attention indexes it by sentence
 * (attn_args.kv_row). The workspace is reserved for encoding (B_mem, S). Errors as
 * kv_cache_reserve. */
tfm_status kv_cache_reserve_beams(tfm_context *ctx, int B_mem, int beams, int S, int cap_T);
/** Bytes of the KV cache arena kv_cache_reserve(B, S, cap_T) lays out (its layout, counted). */
size_t kv_cache_bytes(const tfm_config *cfg, int B, int S, int cap_T);
/** Bytes of the decoder's transposed weights (kv_cache.wt) a call of B rows lays out on kernel
 * table kern: 0 unless linear_panels_t_use(kern, B). */
size_t kv_cache_wt_bytes(const ops_kernels *kern, const tfm_config *cfg, int B);
/** Bytes of the arena kv_cache_reserve_beams(B_mem, beams, S, cap_T) lays out. */
size_t kv_cache_bytes_beams(const tfm_config *cfg, int B_mem, int beams, int S, int cap_T);
void kv_cache_free(kv_cache *c);

/** Beam bookkeeping: row b of the cache becomes (a copy of) row rows[b], for the len cached
 * self-attention positions; rows[b] must decode the same sentence as b (the memory, stored once
 * per sentence, does not move). Rows with rows[b] == b are not touched; a moved row's source is
 * copied in place, or through the scratch buffer when that source moves itself: at most two
 * copies of len positions per moved row, none per kept row. No allocation. */
void kv_cache_reorder(tfm_context *ctx, const int *rows);

/** Drops finished rows: rows keep[0..n) (strictly increasing, n >= 1) become rows 0..n−1 — their
 * len cached self-attention positions and the memory row each reads (mem_row; the memory itself
 * does not move) — and the following steps run on n rows (B = n). A row's results do not depend
 * on the other rows of the step and the decode step's linear layers keep the kernels chosen for
 * B_start rows (linear_forward_rows), so within the decode call the kept rows decode bit for bit
 * as they would with every row kept. No allocation. */
void kv_cache_compact(tfm_context *ctx, const int *keep, int n);

/** Encodes src (B_mem, S, padded with pad_id: one row per sentence) into the context's cache
 * (laid out by kv_cache_reserve or kv_cache_reserve_beams) and fills the cross-attention
 * keys/values once per sentence; len = 0. */
void model_decode_start(tfm_context *ctx, const int32_t *src);

/** Decodes one position for every row: tokens[b · tokens_stride] (b < B) are the inputs at
 * position cache.len (BOS first). Leaves the logits of that position in ctx->cache.logits (B, V_tgt) and advances
 * cache.len. Computes what model_forward computes for the last position of the prefix, without
 * recomputing the prefix. */
void model_decode_step(tfm_context *ctx, const int32_t *tokens, size_t tokens_stride);

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
