/* ALiBi, "Attention with Linear Biases" (Press, Smith and Lewis, ICLR 2022, §3): no position
 * vector anywhere; every self-attention score gets a fixed per-head penalty proportional to the
 * distance between query and key. No tensors, so nothing to learn and no backward. */
#include "pe.h"

#include <math.h>

/* The paper's head slopes (§3 and its reference code, get_slopes): for n a power of two the
 * geometric sequence m_h = 2^(−8(h+1)/n), h = 0..n−1 (n = 8: 1/2, 1/4, ..., 1/256); otherwise the
 * slopes of the largest power of two p < n, followed by the even-indexed slopes of 2p
 * (2^(−4/p), 2^(−12/p), ...) until there are n (n = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8). */
float pe_alibi_slope(size_t h, size_t n) {
    size_t p = 1;
    while (p * 2 <= n) p *= 2;
    if (h < p) return (float)exp2(-8.0 * (double)(h + 1) / (double)p);
    /* from the 2p-head sequence 2^(−8(k+1)/(2p)) take k = 0, 2, 4, ...: k = 2(h − p) */
    const double k = 2.0 * (double)(h - p);
    return (float)exp2(-8.0 * (k + 1.0) / (double)(2 * p));
}

/* bias[h, t, s] = −m_h·|i − j|, query position i = pos0 + t, key position j = s.
 * Decoder (causal mask): keys j <= i only, so this is the paper's −m_h·(i − j) (eq. in §3; keys
 * j > i are masked by the attention and their bias is never used). Encoder (bidirectional): the
 * paper defines only the causal case; we use the symmetric penalty −m_h·|i − j|, the choice of
 * bidirectional ALiBi encoders, so a key at distance k costs the same on either side. */
static void alibi_bias(const tfm_config *cfg, const pe_params *sp, const layer_params *lp, mask_kind mask,
                       float *bias, size_t H, size_t T, size_t S, size_t pos0) {
    (void)cfg;
    (void)sp;
    (void)lp;
    (void)mask; /* both cases are |i − j| on the keys the mask lets through */
    for (size_t h = 0; h < H; h++) {
        const float m = pe_alibi_slope(h, H);
        for (size_t t = 0; t < T; t++) {
            const size_t i = pos0 + t;
            float *row = bias + (h * T + t) * S;
            for (size_t j = 0; j < S; j++) row[j] = -m * (float)(i > j ? i - j : j - i);
        }
    }
}

const pe_kind pe_kind_alibi = {
    .name = "alibi",
    .options = 0,
    .bias_forward = alibi_bias,
};
