/* Inverted dropout (Srivastava et al. 2014), applied in training as Vaswani et al. 2017, §5.4
 * describe. The keep mask comes from a counter-based hash of (seed, element index), so a run is
 * reproducible from its seed and independent of the thread count. */
#include "ops.h"
#include "parallel.h"

void dropout_forward(float *out, uint8_t *mask, const float *inp, float p, uint64_t seed, size_t n) {
    if (p >= 1.0f) { /* everything dropped (PyTorch: zeros) */
        for (size_t i = 0; i < n; i++) {
            out[i] = 0.0f;
            if (mask) mask[i] = 0;
        }
        return;
    }
    if (p <= 0.0f) {
        for (size_t i = 0; i < n; i++) {
            out[i] = inp[i];
            if (mask) mask[i] = 1;
        }
        return;
    }
    const float scale = 1.0f / (1.0f - p); /* as PyTorch: noise.div_(1 − p), then inp · noise */
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) {
        int keep = dropout_keep(seed, i, p);
        out[i] = keep ? inp[i] * scale : 0.0f;
        if (mask) mask[i] = (uint8_t)keep;
    }
}

void dropout_backward(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n) {
    if (p >= 1.0f) return;
    const float scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++)
        if (mask[i]) dinp[i] += dout[i] * scale;
}
