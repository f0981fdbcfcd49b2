/* The paper's sinusoidal position encoding: a fixed table added at the embeddings. */
#include "pe.h"

#include "ops.h"

/* PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)) (Vaswani et al.
 * 2017, §3.5), added to every row of x. A fixed table: its backward is the identity. */
static void sinusoidal_forward(const tfm_config *cfg, const pe_params *p, float *x, size_t B, size_t T, size_t d,
                               size_t pos0) {
    (void)cfg;
    (void)p;
    pe_sinusoidal_add(x, B, T, d, pos0);
}

const pe_kind pe_kind_sinusoidal = {
    .name = "sinusoidal",
    .options = 0, /* layout, zero_pad and scale: Position I */
    .embed_forward = sinusoidal_forward,
};
