/* The position encodings (pe.h). Today: the paper's sinusoid, added at the embeddings, no tensors. */
#include "pe.h"

#include "ops.h"

/* PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)) (Vaswani et al.
 * 2017, §3.5), added to every row of x. A fixed table: its backward is the identity. */
static void sinusoidal_forward(const pe_params *p, float *x, size_t B, size_t T, size_t d, size_t pos0) {
    (void)p;
    pe_sinusoidal_add(x, B, T, d, pos0);
}

static const pe_kind k_sinusoidal = {
    .name = "sinusoidal",
    .embed_forward = sinusoidal_forward,
};

const pe_kind *pe_of(const tfm_config *cfg) {
    switch (cfg->pe) {
    case TFM_PE_SINUSOIDAL: return &k_sinusoidal;
    }
    return &k_sinusoidal; /* unreachable: tfm_config_validate admits only the kinds above */
}
