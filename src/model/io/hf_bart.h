/* The BART family's layer names (transformers' models/bart, shared by Marian and M2M100 / NLLB):
 * one reader of an encoder or decoder layer for both formats (hf_bart.c). */
#ifndef TFM_HF_BART_H
#define TFM_HF_BART_H

#include "model_format.h"
#include "model_internal.h"

/** The file a layer is read from, and what the model is for messages ("a Hugging Face Marian
 * model": "tensor 'X' is missing (WHAT needs it)"). */
typedef struct {
    const st_file *f;
    const char *what;
} hf_bart_file;

/** Reads prefix.norm.weight and prefix.norm.bias (each (d)) into w and bias (hf_read_f32) and adds
 * their 2·d floats to *n. Errors: those of hf_read_tensor, naming the file and the tensor. */
tfm_status hf_bart_read_norm(const hf_bart_file *b, const char *prefix, const char *norm, float *w, float *bias,
                             size_t d, size_t *n);

/** Reads the layer `prefix` ("model.encoder.layers.0") into L and adds its floats to *n:
 * self_attn.{q,k,v}_proj → self_attn.in_proj (rows [0,d) W_Q, [d,2d) W_K, [2d,3d) W_V, as
 * nn.MultiheadAttention packs them), self_attn.out_proj, self_attn_layer_norm → norm 0; a decoder
 * layer (`decoder` 1) also encoder_attn.* → cross_attn and encoder_attn_layer_norm → norm 1;
 * fc1 (d_ff, d) → linear1, fc2 (d, d_ff) → linear2, final_layer_norm → norm 1 (encoder) or 2
 * (decoder). Whether the norms run before or after each sub-layer (Marian post-LN, M2M100 pre-LN)
 * is the configuration's norm_first, not the names'. Errors: those of hf_read_tensor. */
tfm_status hf_bart_read_layer(const hf_bart_file *b, const char *prefix, int decoder, layer_params *L, size_t d,
                              size_t d_ff, size_t *n);

#endif
