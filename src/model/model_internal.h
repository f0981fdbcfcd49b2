/* The inside of a tfm_model: configuration, parameters in one arena, and the forward workspace
 * (activations saved for the backward pass) in a second arena sized for (B, S, T). */
#ifndef TFM_MODEL_INTERNAL_H
#define TFM_MODEL_INTERNAL_H

#include "arena.h"
#include "params.h"
#include "tfm/model.h"

/* A sub-layer wrapped in its residual connection and LayerNorm (Vaswani et al. 2017, §3.1):
 *   post-LN: res = x + f(x),        ln = LayerNorm(res), output ln
 *   pre-LN:  ln = LayerNorm(x),     res = x + f(ln),     output res   */
typedef struct {
    float *ln;      /* (N, d) LayerNorm output */
    float *ln_mean; /* (N) */
    float *ln_rstd; /* (N) */
    float *res;     /* (N, d) residual sum */
} block_acts;

typedef struct {
    float *q;      /* (N, d) or, for self-attention, NULL (the queries live in qkv) */
    float *qkv;    /* self: (N, 3d) packed Q|K|V;  cross: (B·S, 2d) packed K|V of the memory */
    float *probs;  /* (B, H, T, S_k) attention weights */
    float *att;    /* (N, d) heads concatenated */
    float *proj;   /* (N, d) after the output projection W_O */
} mha_acts;

typedef struct {
    block_acts blk[3]; /* encoder: 0 self-attn, 1 FFN; decoder: 0 self, 1 cross, 2 FFN */
    mha_acts self_attn;
    mha_acts cross_attn;
    float *ff_pre; /* (N, d_ff) linear1 output */
    float *ff_act; /* (N, d_ff) after ReLU/GELU */
    float *ff_out; /* (N, d) linear2 output */
} layer_acts;

typedef struct {
    int B, S, T; /* the sizes the workspace was laid out for (T: decoder positions) */
    uint8_t *src_pad; /* (B, S) 1 where src == pad_id */
    uint8_t *tgt_pad; /* (B, T) 1 where the decoder input == pad_id */
    float *enc_x0;    /* (B·S, d) scaled embedding + PE */
    float *dec_x0;    /* (B·T, d) */
    layer_acts enc[TFM_MAX_LAYERS];
    layer_acts dec[TFM_MAX_LAYERS];
    float *memory, *memory_mean, *memory_rstd;    /* (B·S, d) final encoder LayerNorm */
    float *dec_out, *dec_out_mean, *dec_out_rstd; /* (B·T, d) final decoder LayerNorm */
    float *logits; /* (B·T, V_tgt) */
} activations;

struct tfm_model {
    tfm_config cfg;
    tfm_arena param_arena;
    model_params p;
    param_entry *entries;
    size_t n_entries;
    size_t n_params; /* floats of parameter storage */

    unsigned char *tokenizer; /* serialized tokenizer (tokenizer.model), or NULL */
    size_t tokenizer_len;

    tfm_arena act_arena;
    int cap_B, cap_S, cap_T; /* the workspace holds any batch up to these sizes */
    activations acts;
};

/** Allocates a model with its parameter arena (zeroed) and table, no workspace yet. */
tfm_status model_alloc(const tfm_config *cfg, tfm_model **out);

/** Lays out the activations of (B, S, T) in `arena` (counting only when its base is NULL). */
void activations_layout(const tfm_config *cfg, int B, int S, int T, tfm_arena *arena, activations *a);

/** Makes sure the workspace holds a batch of (B, S, T); grows it (outside any hot loop) if not.
 * Errors: TFM_ERR_NOMEM. */
tfm_status model_reserve(tfm_model *m, int B, int S, int T);

/** The encoder–decoder forward pass (Vaswani et al. 2017, §3, Figure 1) for a batch already
 * checked against the vocabularies and max_len: src (B, S) and decoder input tgt_in (B, T), each
 * padded with pad_id. Leaves every activation, the logits (B·T, V_tgt) included, in m->acts. */
void model_forward(tfm_model *m, int B, int S, int T, const int32_t *src, const int32_t *tgt_in,
                   size_t tgt_in_stride);

#endif
