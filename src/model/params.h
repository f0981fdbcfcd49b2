/* The parameter table: every tensor of a model, its PyTorch name and shape, written once here and
 * used for sizing, initialisation, checkpoints and (with a second base pointer) gradients. The
 * model is a list of stacks (stack.h); the table walks it. */
#ifndef TFM_PARAMS_H
#define TFM_PARAMS_H

#include "tfm/model.h"

#include <stddef.h>

#define TFM_MAX_LAYERS 64
#define TFM_MAX_STACKS 2
#define TFM_PARAM_NAME_MAX 96
#define TFM_PE_MAX_TENSORS 8

/** Width of the self-attention keys (and of the values): n_kv_heads·d_k, d_model without
 * grouped-query attention (tfm_config.n_kv_heads 0). */
static inline size_t cfg_kv_dim(const tfm_config *c) {
    const int h = c->n_kv_heads > 0 ? c->n_kv_heads : c->n_heads;
    return (size_t)h * (size_t)(c->d_model / c->n_heads);
}

/** Rows of the self-attention in_proj (Q, then K, then V): d_model + 2·cfg_kv_dim (3·d_model). */
static inline size_t cfg_qkv_dim(const tfm_config *c) { return (size_t)c->d_model + 2 * cfg_kv_dim(c); }

/** Rows of linear1: d_ff, or 2·d_ff for SwiGLU (W_gate then W_up). */
static inline size_t cfg_ff1_rows(const tfm_config *c) {
    return c->activation == TFM_ACT_SWIGLU ? 2 * (size_t)c->d_ff : (size_t)c->d_ff;
}

/** nn.MultiheadAttention's packed projections: rows [0,d) are W_Q, [d,2d) W_K, [2d,3d) W_V. */
typedef struct {
    float *in_proj_weight;  /* (3d, d); self-attention (cfg_qkv_dim, d): W_Q (d rows), W_K, W_V
                               (cfg_kv_dim rows each) */
    float *in_proj_bias;    /* (3d), or NULL (no_linear_bias) */
    float *out_proj_weight; /* (d, d)  W_O */
    float *out_proj_bias;   /* (d), or NULL (no_linear_bias) */
} mha_params;

struct pe_state;

/** A position encoding's own tensors (pe.h), per stack or per layer, in the order its kind
 * registers them; NULL where it has none (the sinusoidal encoding has none at all). `state`: in the
 * copy of a stack's pe_params that forward.c/backward.c hand to the embedding hooks, the calling
 * context's state of that stack (pe.h pe_state; kinds with a state_floats hook only); NULL in the
 * model's own table, which is read-only and shared by contexts. */
typedef struct {
    float *w[TFM_PE_MAX_TENSORS];
    struct pe_state *state;
} pe_params;

/** One block (nn.TransformerEncoderLayer / nn.TransformerDecoderLayer). Sub-layer k of the block
 * (stack.h: self-attention, cross-attention, FFN in that order, those the block has) is guarded by
 * norm k+1: encoder norm1 self-attention, norm2 FFN; decoder norm1 self-attention, norm2
 * cross-attention (`multihead_attn`), norm3 FFN. */
typedef struct {
    mha_params self_attn;
    mha_params cross_attn; /* blocks with cross-attention only */
    float *linear1_weight; /* (d_ff, d); SwiGLU (2·d_ff, d): W_gate then W_up */
    float *linear1_bias;   /* (d_ff) or (2·d_ff); NULL with no_linear_bias */
    float *linear2_weight; /* (d, d_ff) */
    float *linear2_bias;   /* (d), or NULL (no_linear_bias) */
    float *norm_weight[3]; /* (d) each, one per sub-layer */
    float *norm_bias[3];   /* NULL with RMSNorm */
    pe_params pe;          /* the position encoding's per-layer tensors (Shaw et al. 2018: per layer) */
} layer_params;

/** One stack: its token embedding, its blocks, its final LayerNorm (transformer.<stack>.norm). */
typedef struct {
    float *embed;                          /* (V, d) src_embed / tgt_embed */
    layer_params layers[TFM_MAX_LAYERS];
    float *norm_weight, *norm_bias;        /* (d) */
    pe_params pe;                          /* the position encoding's per-stack tensors */
    float *type_embed;                     /* (type_vocab, d) token-type embeddings, or NULL */
    float *embed_norm_weight, *embed_norm_bias; /* (d) BERT's embedding LayerNorm, or NULL */
} stack_params;

typedef struct {
    stack_params stack[TFM_MAX_STACKS];
    float *generator_weight; /* (V_tgt, d) */
    float *generator_bias;   /* (V_tgt) */
} model_params;

typedef enum {
    PARAM_INIT_XAVIER,   /* Xavier-uniform weight matrix */
    PARAM_INIT_ZERO,     /* attention biases, LayerNorm biases */
    PARAM_INIT_ONE,      /* LayerNorm weights */
    PARAM_INIT_LINEAR_BIAS, /* U(−1/√fan_in, 1/√fan_in) as nn.Linear */
    PARAM_INIT_EMBEDDING, /* N(0, d^−1/2) */
    PARAM_INIT_POSITION   /* N(0, 0.02²): learned position tables, as BERT and GPT-2 */
} param_init;

typedef struct {
    char name[TFM_PARAM_NAME_MAX];
    int ndim;          /* 1 or 2 */
    size_t shape[2];
    size_t numel;
    size_t offset;     /* in floats from the base */
    int alias_of;      /* index of the entry whose storage this one shares (tied), or −1 */
    param_init init;
    size_t fan_in;     /* for PARAM_INIT_LINEAR_BIAS */
} param_entry;

/** What registers tensors: params_layout's walk, handed to a position encoding's add_params so its
 * tensors join the one table (names, shapes, init, checkpoint, gradients). */
typedef struct {
    float *base;
    param_entry *entries;
    size_t n;
    size_t total;
} param_builder;

/** Registers a tensor `name` of shape (rows) or (rows, cols) (cols 0: 1-D); with a base, points
 * *slot at its storage. */
void param_add(param_builder *b, const char *name, size_t rows, size_t cols, float **slot, param_init init,
               size_t fan_in);

/** Lays out every parameter of `cfg`. With p == NULL / entries == NULL only counts. Returns the
 * number of floats of storage (tied tensors counted once) and sets *n_entries. With a base,
 * points every field of *p into it. The order (and so every initial value, one RNG stream per
 * entry) is: the stacks' embeddings, each stack's blocks and final norm (with its position
 * encoding's tensors), the generator. */
size_t params_layout(const tfm_config *cfg, model_params *p, float *base, param_entry *entries,
                     size_t *n_entries);

#endif
