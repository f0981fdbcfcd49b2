/* bench_tfm: analytic FLOP counts of the encoder–decoder (Vaswani et al. 2017, §3; docs/BENCH.md
 * "What is counted"). A multiply-add counts 2 FLOP. Only matrix products are counted. */
#include "bench.h"

/* Per source token per encoder layer: Q, K, V and output projections 4·d², the S scores and the
 * weighted sum over S positions (all heads together: S·d each), the FFN 2·d·d_ff. */
static double enc_layer_per_token(double d, double ff, double S) { return 2.0 * (4.0 * d * d + 2.0 * S * d + 2.0 * d * ff); }

double bench_flops_forward(const tfm_config *c, double B, double S, double T) {
    const double d = c->d_model, ff = c->d_ff, V = c->tgt_vocab;
    double enc = B * S * c->n_enc_layers * enc_layer_per_token(d, ff, S);
    /* decoder, per target position per layer: self-attention as an encoder layer over T (the full
     * T×T square, as the dense kernels compute it), cross-attention's Q and output projections
     * 2·d², its scores and sum over S; per source token per layer: cross K and V, 2·d². */
    double dec_tok = 2.0 * (4.0 * d * d + 2.0 * T * d + 2.0 * d * ff) + 2.0 * (2.0 * d * d + 2.0 * S * d);
    double dec = B * T * c->n_dec_layers * dec_tok + B * S * c->n_dec_layers * 2.0 * (2.0 * d * d);
    double gen = B * T * 2.0 * d * V;
    return enc + dec + gen;
}

double bench_flops_decode(const tfm_config *c, double B, double S, double hyp_steps, double hyp_pos_sum) {
    const double d = c->d_model, ff = c->d_ff, V = c->tgt_vocab, L = c->n_dec_layers;
    double enc = B * S * c->n_enc_layers * enc_layer_per_token(d, ff, S);
    double cross_kv = B * S * L * 2.0 * (2.0 * d * d);
    /* one new position: its Q, K, V, output projections, scores and sum over the t + 1 cached
     * positions, cross-attention Q/out and over S, FFN; then the generator */
    double per_col = L * 2.0 * (4.0 * d * d + 2.0 * d * ff + 2.0 * d * d + 2.0 * S * d) + 2.0 * d * V;
    double attn_self = L * 2.0 * 2.0 * d * (hyp_pos_sum + hyp_steps);
    return enc + cross_kv + hyp_steps * per_col + attn_self;
}
