/* RoPE, rotary position embedding (Su, Lu, Pan, Murtadha, Wen and Liu 2021, "RoFormer: Enhanced
 * Transformer with Rotary Position Embedding", §3.2, eq. 13–16): the query and the key of every
 * self-attention head are rotated, pair of dimensions by pair, by an angle proportional to their
 * position, so that q_i·k_j depends on i − j only (§3.4.1). Nothing is added at the embeddings,
 * cross-attention is left alone, and there are no tensors. */
#include "pe.h"

#include "core_internal.h"

#include <math.h>

#define ROPE_BASE 10000.0 /* θ_p = base^(−2p/d_k), the paper's eq. 15; tfm_config.rope_theta: another */

/* Dimensions (a, b) of pair p in a head of d_k: interleaved (2p, 2p + 1) as RoFormer's eq. 34 and
 * GPT-J; half (p, p + d_k/2), "rotate half", as GPT-NeoX and Llama. Both use frequency θ_p. */
static void rope_pair(tfm_rope_pairing pairing, size_t p, size_t d_k, size_t *a, size_t *b) {
    if (pairing == TFM_ROPE_HALF) {
        *a = p;
        *b = p + d_k / 2;
    } else {
        *a = 2 * p;
        *b = 2 * p + 1;
    }
}

void pe_rope_rotate(float *x, size_t stride, size_t n_rows, size_t H, size_t d_k, size_t pos,
                    tfm_rope_pairing pairing, int inverse) {
    pe_rope_rotate_base(x, stride, n_rows, H, d_k, pos, pairing, inverse, ROPE_BASE);
}

void pe_rope_rotate_base(float *x, size_t stride, size_t n_rows, size_t H, size_t d_k, size_t pos,
                         tfm_rope_pairing pairing, int inverse, double base) {
    for (size_t p = 0; p < d_k / 2; p++) {
        /* angle in double: pos·θ_p reaches 10⁴ rad at long positions, where float would lose digits */
        const double theta = pow(base, -2.0 * (double)p / (double)d_k), ang = (double)pos * theta;
        const float c = (float)cos(ang), s = inverse ? -(float)sin(ang) : (float)sin(ang);
        size_t ia, ib;
        rope_pair(pairing, p, d_k, &ia, &ib);
        for (size_t r = 0; r < n_rows; r++)
            for (size_t h = 0; h < H; h++) {
                float *v = x + r * stride + h * d_k;
                const float xa = v[ia], xb = v[ib];
                v[ia] = xa * c - xb * s;
                v[ib] = xa * s + xb * c;
            }
    }
}

static tfm_status rope_validate(const tfm_config *cfg) {
    const int d_k = cfg->n_heads > 0 ? cfg->d_model / cfg->n_heads : 0;
    RETURN_IF(d_k % 2 != 0, TFM_ERR_INVALID_ARG,
              "rope rotates pairs of dimensions: d_k = d_model / n_heads = %d must be even", d_k);
    return TFM_OK;
}

/* Q (columns [0, d)) and K (columns [d, 2d)) of row (b, t) rotated by position pos0 + t: before the
 * scores and before the keys enter the KV cache, so a cached key is rotated once, at its own
 * position, and a decoding step (T = 1, pos0 = cache length) matches the whole-sequence call.
 * Q and K of a row are 2H consecutive heads of d_k; one call per position t covers the B rows at
 * that position, so the angles are computed T·d_k/2 times, not B·T·d_k/2. */
static void rope_forward(const tfm_config *cfg, const pe_params *p, float *qkv, size_t stride, size_t B, size_t T,
                         size_t H, size_t d_k, size_t pos0) {
    (void)p;
    /* the H query heads and the key heads after them (n_kv_heads with grouped-query attention) */
    const size_t heads = H + (cfg->n_kv_heads > 0 ? (size_t)cfg->n_kv_heads : H);
    const double base = cfg->rope_theta > 0.0f ? (double)cfg->rope_theta : ROPE_BASE;
    for (size_t t = 0; t < T; t++)
        pe_rope_rotate_base(qkv + t * stride, T * stride, B, heads, d_k, pos0 + t, cfg->rope_pairing, 0, base);
}

/* y = R(pos)·x with R orthogonal, so dL/dx = R(pos)ᵀ·dL/dy = R(−pos)·dL/dy: the inverse
 * rotation of the gradients of Q and K, in place. */
static void rope_backward(const tfm_config *cfg, pe_params *g, const pe_params *p, float *dqkv, size_t stride,
                          size_t B, size_t T, size_t H, size_t d_k, size_t pos0) {
    (void)g;
    (void)p;
    const double base = cfg->rope_theta > 0.0f ? (double)cfg->rope_theta : ROPE_BASE;
    for (size_t t = 0; t < T; t++) /* training: no grouped-query attention (tfm_trainer_create) */
        pe_rope_rotate_base(dqkv + t * stride, T * stride, B, 2 * H, d_k, pos0 + t, cfg->rope_pairing, 1, base);
}

const pe_kind pe_kind_rope = {
    .name = "rope",
    .options = PE_OPT_ROPE_PAIRING,
    .validate = rope_validate,
    .qk_forward = rope_forward,
    .qk_backward = rope_backward,
};
