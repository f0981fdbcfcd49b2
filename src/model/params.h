/* The parameter table: every tensor of a model, its PyTorch name and shape, written once here and
 * used for sizing, initialisation, checkpoints and (with a second base pointer) gradients. */
#ifndef TFM_PARAMS_H
#define TFM_PARAMS_H

#include "tfm/model.h"

#include <stddef.h>

#define TFM_MAX_LAYERS 64
#define TFM_PARAM_NAME_MAX 96

/** nn.MultiheadAttention's packed projections: rows [0,d) are W_Q, [d,2d) W_K, [2d,3d) W_V. */
typedef struct {
    float *in_proj_weight;  /* (3d, d) */
    float *in_proj_bias;    /* (3d) */
    float *out_proj_weight; /* (d, d)  W_O */
    float *out_proj_bias;   /* (d) */
} mha_params;

/** One encoder or decoder layer (nn.TransformerEncoderLayer / nn.TransformerDecoderLayer).
 * Encoder: norm1 guards self-attention, norm2 the FFN. Decoder: norm1 self-attention, norm2
 * cross-attention (`multihead_attn`), norm3 the FFN. */
typedef struct {
    mha_params self_attn;
    mha_params cross_attn; /* decoder only */
    float *linear1_weight; /* (d_ff, d) */
    float *linear1_bias;   /* (d_ff) */
    float *linear2_weight; /* (d, d_ff) */
    float *linear2_bias;   /* (d) */
    float *norm_weight[3]; /* (d) each: norm1, norm2, norm3 (decoder) */
    float *norm_bias[3];
} layer_params;

typedef struct {
    float *src_embed;        /* (V_src, d) */
    float *tgt_embed;        /* (V_tgt, d) */
    layer_params enc[TFM_MAX_LAYERS];
    layer_params dec[TFM_MAX_LAYERS];
    float *enc_norm_weight, *enc_norm_bias; /* (d) transformer.encoder.norm */
    float *dec_norm_weight, *dec_norm_bias; /* (d) transformer.decoder.norm */
    float *generator_weight; /* (V_tgt, d) */
    float *generator_bias;   /* (V_tgt) */
} model_params;

typedef enum {
    PARAM_INIT_XAVIER,   /* Xavier-uniform weight matrix */
    PARAM_INIT_ZERO,     /* attention biases, LayerNorm biases */
    PARAM_INIT_ONE,      /* LayerNorm weights */
    PARAM_INIT_LINEAR_BIAS, /* U(−1/√fan_in, 1/√fan_in) as nn.Linear */
    PARAM_INIT_EMBEDDING /* N(0, d^−1/2) */
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

/** Lays out every parameter of `cfg`. With p == NULL / entries == NULL only counts. Returns the
 * number of floats of storage (tied tensors counted once) and sets *n_entries. With a base,
 * points every field of *p into it. */
size_t params_layout(const tfm_config *cfg, model_params *p, float *base, param_entry *entries,
                     size_t *n_entries);

#endif
