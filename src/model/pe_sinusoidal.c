/* The paper's sinusoidal position encoding and its variants: a fixed table added at the
 * embeddings, nothing trained. */
#include "pe.h"

#include "core_internal.h"
#include "ops.h"
#include "tfm/names.h"

#include <math.h>

/* The options as the kernel takes them. */
static pe_sinusoid_opts opts_of(const tfm_config *cfg) {
    pe_sinusoid_opts o;
    o.concat = cfg->pe_layout == TFM_PE_LAYOUT_CONCAT || cfg->pe_layout == TFM_PE_LAYOUT_TENSOR2TENSOR;
    o.t2t_freq = cfg->pe_layout == TFM_PE_LAYOUT_TENSOR2TENSOR;
    o.zero_pad = cfg->pe_zero_pad;
    o.scale = cfg->pe_scale ? sqrt((double)cfg->d_model) : 1.0;
    return o;
}

/* x (B, T, d) += PE(pos0 + t) (Vaswani et al. 2017, §3.5): PE(p, 2i) = sin(p / 10000^(2i/d)),
 * PE(p, 2i+1) = cos(p / 10000^(2i/d)), with
 *   pe_layout concat: the same values, all sines (columns 0..d/2−1) then all cosines — the column
 *     order of tensor2tensor's get_timing_signal_1d and fairseq's SinusoidalPositionalEmbedding
 *     (both also use other frequencies, 10000^(−i/(d/2−1)), which concat does not: interleaved and
 *     concat hold the same numbers permuted);
 *   pe_layout tensor2tensor: concat's order with those toolkits' frequencies, ω_i =
 *     10000^(−i/max(d/2−1, 1)) (get_timing_signal_1d with min_timescale 1, max_timescale 10^4;
 *     fairseq's get_embedding the same, without the max); positions start at 0 (fairseq starts
 *     at padding_idx + 1: a fairseq model's position p is tfm's p − padding_idx − 1);
 *   pe_zero_pad, pe_scale: the semantics of positional_encoding(inputs, num_units, zero_pad,
 *     scale) of the TensorFlow implementation our notes quote (Kyubyong Park's "transformer",
 *     modules.py): zero_pad replaces row 0 of the lookup table by zeros (the first token of a
 *     sequence, absolute position 0, gets no encoding), scale multiplies the looked-up table by
 *     num_units ** 0.5 = √d_model (after zero_pad; the token embedding is scaled by √d_model as
 *     always). That code's exponent 2·j/d for column j (not 2i/d for both of pair i) is the typo
 *     docs/NUMERICS.md mentions, and is not followed.
 * cfg->pe_offset shifts every position (the first is pe_offset; fairseq's models start at
 * padding_idx + 1). A fixed table computed per call (no memory, no allocation): its backward is
 * the identity. */
static void sinusoidal_forward(const tfm_config *cfg, const pe_params *p, float *x, size_t B, size_t T, size_t d,
                               size_t pos0) {
    (void)p;
    const pe_sinusoid_opts o = opts_of(cfg);
    pe_sinusoidal_add(x, B, T, d, pos0 + (size_t)cfg->pe_offset, &o); /* fairseq/NLLB: from padding_idx + 1 */
}

/* The concatenated layout splits the columns in two halves: an odd d_model has no such split
 * (tensor2tensor and fairseq append a zero column there; tfm refuses rather than guess). */
static tfm_status sinusoidal_validate(const tfm_config *cfg) {
    RETURN_IF(cfg->pe_layout != TFM_PE_LAYOUT_INTERLEAVED && cfg->d_model % 2 != 0, TFM_ERR_INVALID_ARG,
              "pe_layout %s needs an even d_model (half sines, half cosines), got d_model %d",
              tfm_pe_layout_name(cfg->pe_layout), cfg->d_model);
    return TFM_OK;
}

const pe_kind pe_kind_sinusoidal = {
    .name = "sinusoidal",
    .options = PE_OPT_LAYOUT | PE_OPT_ZERO_PAD | PE_OPT_SCALE,
    .validate = sinusoidal_validate,
    .embed_forward = sinusoidal_forward,
};
