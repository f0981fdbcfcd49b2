/* Root-mean-square layer normalisation (Zhang & Sennrich 2019, "Root Mean Square Layer
 * Normalization", eq. 4): no mean subtracted, no bias; Llama's LlamaRMSNorm. Inference only (no
 * backward: tfm trains no RMSNorm model). */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

typedef struct {
    float *out, *rstd;
    const float *inp, *weight;
    float eps;
    size_t C;
} rms_job;

static void rms_rows(void *arg, size_t n0, size_t n1) {
    const rms_job *j = arg;
    const size_t C = j->C;
    for (size_t n = n0; n < n1; n++) {
        const float *x = j->inp + n * C;
        double ss = 0.0;
        for (size_t c = 0; c < C; c++) ss += (double)x[c] * (double)x[c];
        const float s = (float)(1.0 / sqrt(ss / (double)C + (double)j->eps));
        float *y = j->out + n * C;
        for (size_t c = 0; c < C; c++) y[c] = j->weight[c] * (x[c] * s); /* LlamaRMSNorm's order */
        if (j->rstd) j->rstd[n] = s;
    }
}

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, size_t N, size_t C, float eps) {
    rms_job j = {out, rstd, inp, weight, eps, C};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(C), ops_team(N * C), rms_rows, &j);
}
