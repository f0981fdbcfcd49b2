/* Softmax and log-softmax over rows, max-subtracted for stability. */
#include "ops.h"
#include "parallel.h"
#include "vmath.h"

#include <math.h>

int softmax_row_masked(float *x, const uint8_t *mask, size_t n, size_t limit) {
    if (limit > n) limit = n;
    float mx = -INFINITY;
    for (size_t j = 0; j < limit; j++)
        if (!(mask && mask[j]) && x[j] > mx) mx = x[j];
    if (mx == -INFINITY) { /* every key masked (or n == 0): a zero row, never NaN */
        for (size_t j = 0; j < n; j++) x[j] = 0.0f;
        return 0;
    }
    float sum = 0.0f;
    if (mask) {
#pragma omp simd reduction(+ : sum)
        for (size_t j = 0; j < limit; j++) {
            const float e = mask[j] ? 0.0f : ops_expf(x[j] - mx);
            x[j] = e;
            sum += e;
        }
    } else {
#pragma omp simd reduction(+ : sum)
        for (size_t j = 0; j < limit; j++) {
            const float e = ops_expf(x[j] - mx);
            x[j] = e;
            sum += e;
        }
    }
    for (size_t j = limit; j < n; j++) x[j] = 0.0f;
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < limit; j++) x[j] *= inv;
    return 1;
}

/* log Σ_j exp(x[j]) of one row, max-subtracted. Not inlined: log_softmax_forward and
 * log_softmax_lse must get the same bits (a vectorised sum's order may differ per inlined copy). */
/* one compiled copy whatever the optimiser does: noipa (GCC) also forbids clones */
#if defined(__clang__)
#define ROW_LSE_ONE_COPY __attribute__((noinline))
#else
#define ROW_LSE_ONE_COPY __attribute__((noipa))
#endif
ROW_LSE_ONE_COPY static float row_lse(const float *x, size_t V) {
    float mx = -INFINITY;
    for (size_t j = 0; j < V; j++)
        if (x[j] > mx) mx = x[j];
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (size_t j = 0; j < V; j++) sum += ops_expf(x[j] - mx);
    return mx + logf(sum);
}

void log_softmax_forward(float *out, const float *inp, size_t N, size_t V) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(V)) num_threads(ops_team(N * V))
    for (size_t n = 0; n < N; n++) {
        const float *x = inp + n * V;
        float *y = out + n * V;
        const float lse = row_lse(x, V);
        for (size_t j = 0; j < V; j++) y[j] = x[j] - lse;
    }
}

void log_softmax_lse(float *lse, const float *inp, const uint8_t *skip, size_t N, size_t V) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(V)) num_threads(ops_team(N * V))
    for (size_t n = 0; n < N; n++)
        if (!(skip && skip[n])) lse[n] = row_lse(inp + n * V, V);
}

void log_softmax_backward(float *dinp, const float *dout, const float *out, size_t N, size_t V) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(V)) num_threads(ops_team(N * V))
    for (size_t n = 0; n < N; n++) {
        const float *dy = dout + n * V, *y = out + n * V;
        double s = 0.0;
        for (size_t j = 0; j < V; j++) s += dy[j];
        const float fs = (float)s;
        float *dx = dinp + n * V;
#pragma omp simd
        for (size_t j = 0; j < V; j++) dx[j] += dy[j] - ops_expf(y[j]) * fs;
    }
}
