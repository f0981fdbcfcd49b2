/* The layers of the BART family's encoder–decoder (transformers' models/bart names, shared by
 * Marian and M2M100 / NLLB): one reader both formats call (hf_bart.h). */
#include "hf_bart.h"

#include <stdio.h>

/* Reads one tensor (hf_read_f32) and counts its floats in *n. */
static tfm_status read_one(const hf_bart_file *b, const char *name, size_t rows, size_t cols, float *dst, size_t *n) {
    TRY(hf_read_f32(b->f, name, rows, cols, dst, b->what));
    *n += cols ? rows * cols : rows;
    return TFM_OK;
}

/* prefix.attn.{q,k,v}_proj → in_proj (rows [0,d) W_Q, [d,2d) W_K, [2d,3d) W_V, as
 * nn.MultiheadAttention keeps them); prefix.attn.out_proj. */
static tfm_status read_attn(const hf_bart_file *b, const char *prefix, const char *attn, const mha_params *a,
                            size_t d, size_t *n) {
    static const char *const qkv[3] = {"q_proj", "k_proj", "v_proj"};
    char name[224];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s.%s.%s.weight", prefix, attn, qkv[k]);
        TRY(read_one(b, name, d, d, a->in_proj_weight + (size_t)k * d * d, n));
        snprintf(name, sizeof name, "%s.%s.%s.bias", prefix, attn, qkv[k]);
        TRY(read_one(b, name, d, 0, a->in_proj_bias + (size_t)k * d, n));
    }
    snprintf(name, sizeof name, "%s.%s.out_proj.weight", prefix, attn);
    TRY(read_one(b, name, d, d, a->out_proj_weight, n));
    snprintf(name, sizeof name, "%s.%s.out_proj.bias", prefix, attn);
    return read_one(b, name, d, 0, a->out_proj_bias, n);
}

tfm_status hf_bart_read_norm(const hf_bart_file *b, const char *prefix, const char *norm, float *w, float *bias,
                             size_t d, size_t *n) {
    char name[224];
    snprintf(name, sizeof name, "%s.%s.weight", prefix, norm);
    TRY(read_one(b, name, d, 0, w, n));
    snprintf(name, sizeof name, "%s.%s.bias", prefix, norm);
    return read_one(b, name, d, 0, bias, n);
}

tfm_status hf_bart_read_layer(const hf_bart_file *b, const char *prefix, int decoder, layer_params *L, size_t d,
                              size_t d_ff, size_t *n) {
    char name[224];
    TRY(read_attn(b, prefix, "self_attn", &L->self_attn, d, n));
    TRY(hf_bart_read_norm(b, prefix, "self_attn_layer_norm", L->norm_weight[0], L->norm_bias[0], d, n));
    if (decoder) {
        TRY(read_attn(b, prefix, "encoder_attn", &L->cross_attn, d, n));
        TRY(hf_bart_read_norm(b, prefix, "encoder_attn_layer_norm", L->norm_weight[1], L->norm_bias[1], d, n));
    }
    snprintf(name, sizeof name, "%s.fc1.weight", prefix);
    TRY(read_one(b, name, d_ff, d, L->linear1_weight, n));
    snprintf(name, sizeof name, "%s.fc1.bias", prefix);
    TRY(read_one(b, name, d_ff, 0, L->linear1_bias, n));
    snprintf(name, sizeof name, "%s.fc2.weight", prefix);
    TRY(read_one(b, name, d, d_ff, L->linear2_weight, n));
    snprintf(name, sizeof name, "%s.fc2.bias", prefix);
    TRY(read_one(b, name, d, 0, L->linear2_bias, n));
    const int last = decoder ? 2 : 1; /* final_layer_norm: the FFN's, after the attention norms */
    return hf_bart_read_norm(b, prefix, "final_layer_norm", L->norm_weight[last], L->norm_bias[last], d, n);
}
