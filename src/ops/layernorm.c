/* Layer normalisation (Ba et al. 2016), as nn.LayerNorm: biased variance, eps inside the root. */
#include "ops.h"

#include <math.h>

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, size_t C, float eps) {
#pragma omp parallel for schedule(static)
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * C;
        double m = 0.0;
        for (size_t c = 0; c < C; c++) m += x[c];
        m /= (double)C;
        double v = 0.0;
        for (size_t c = 0; c < C; c++) {
            double dx = x[c] - m;
            v += dx * dx;
        }
        v /= (double)C;
        float s = (float)(1.0 / sqrt(v + (double)eps));
        float fm = (float)m;
        float *y = out + n * C;
        for (size_t c = 0; c < C; c++) y[c] = (x[c] - fm) * s * weight[c] + bias[c];
        if (mean) mean[n] = fm;
        if (rstd) rstd[n] = s;
    }
}
