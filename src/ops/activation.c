/* Element-wise activations of the position-wise FFN. */
#include "ops.h"
#include "parallel.h"

#include <math.h>

void relu_forward(float *out, const float *inp, size_t n) {
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void gelu_forward(float *out, const float *inp, size_t n) {
    const float inv_sqrt2 = 0.70710678118654752f;
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + erff(x * inv_sqrt2));
    }
}

void relu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0.0f) dinp[i] += dout[i];
}

void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    /* d/dx [x·Φ(x)] = Φ(x) + x·φ(x) (Hendrycks & Gimpel 2016, exact form). */
    const float inv_sqrt2 = 0.70710678118654752f, inv_sqrt_2pi = 0.39894228040143268f;
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float cdf = 0.5f * (1.0f + erff(x * inv_sqrt2));
        float pdf = inv_sqrt_2pi * expf(-0.5f * x * x);
        dinp[i] += dout[i] * (cdf + x * pdf);
    }
}
