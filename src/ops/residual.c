/* The residual connection x + Sublayer(x) (Vaswani et al. 2017, §3.1; He et al. 2016). */
#include "ops.h"
#include "parallel.h"

void residual_forward(float *out, const float *a, const float *b, size_t n) {
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void residual_backward(float *da, float *db, const float *dout, size_t n) {
#pragma omp parallel for schedule(dynamic, OPS_ELEM_CHUNK) num_threads(ops_team(n))
    for (size_t i = 0; i < n; i++) {
        if (da) da[i] += dout[i];
        if (db) db[i] += dout[i];
    }
}
