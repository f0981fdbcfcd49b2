/* Element-wise activations of the position-wise FFN. */
#include "ops.h"

#include <math.h>

void relu_forward(float *out, const float *inp, size_t n) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void gelu_forward(float *out, const float *inp, size_t n) {
    const float inv_sqrt2 = 0.70710678118654752f;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + erff(x * inv_sqrt2));
    }
}
