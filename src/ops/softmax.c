/* Softmax and log-softmax over rows, max-subtracted for stability. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"
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

size_t row_argmax(const float *x, size_t n) {
    if (n == 0 || x[0] != x[0]) return 0;
    float mx = -INFINITY; /* the largest non-NaN value (x[0] is one), or −FLT_MAX: see below */
#pragma omp simd reduction(max : mx)
    for (size_t j = 0; j < n; j++) {
        const float v = x[j] != x[j] ? -INFINITY : x[j];
        mx = v > mx ? v : mx;
    }
    size_t j = 0;
    while (j < n && !(x[j] == mx)) j++; /* the first index that holds it */
    /* not found: every non-NaN value is −∞ (clang starts the reduction's lanes at −FLT_MAX), and
     * x[0] is one of them: the scan's answer is 0 */
    return j < n ? j : 0;
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
    const float mx = ops_max_f(x, V); /* NaN if a logit is NaN: the lse is NaN either way */
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (size_t j = 0; j < V; j++) sum += ops_expf(x[j] - mx);
    return mx + logf(sum);
}

/* A log-softmax pass, as its chunks see it (pool.h): rows of V floats. */
typedef struct {
    float *y;              /* forward: out; lse: lse; backward: dinp */
    const float *x, *out;  /* x: inp (forward, lse) or dout (backward); out: the forward's output */
    const uint8_t *skip;
    size_t V;
} lsm_job;

static void forward_rows(void *arg, size_t n0, size_t n1) {
    const lsm_job *j = arg;
    const size_t V = j->V;
    for (size_t n = n0; n < n1; n++) {
        const float *x = j->x + n * V;
        float *y = j->y + n * V;
        const float lse = row_lse(x, V);
        for (size_t k = 0; k < V; k++) y[k] = x[k] - lse;
    }
}

void log_softmax_forward(float *out, const float *inp, size_t N, size_t V) {
    lsm_job j = {out, inp, NULL, NULL, V};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(V), ops_team(N * V), forward_rows, &j);
}

static void lse_rows(void *arg, size_t n0, size_t n1) {
    const lsm_job *j = arg;
    for (size_t n = n0; n < n1; n++)
        if (!(j->skip && j->skip[n])) j->y[n] = row_lse(j->x + n * j->V, j->V);
}

void log_softmax_lse(float *lse, const float *inp, const uint8_t *skip, size_t N, size_t V) {
    lsm_job j = {lse, inp, NULL, skip, V};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(V), ops_team(N * V), lse_rows, &j);
}

static void backward_rows(void *arg, size_t n0, size_t n1) {
    const lsm_job *j = arg;
    const size_t V = j->V;
    for (size_t n = n0; n < n1; n++) {
        const float *dy = j->x + n * V, *y = j->out + n * V;
        double s = 0.0;
        for (size_t k = 0; k < V; k++) s += dy[k];
        const float fs = (float)s;
        float *dx = j->y + n * V;
#pragma omp simd
        for (size_t k = 0; k < V; k++) dx[k] += dy[k] - ops_expf(y[k]) * fs;
    }
}

void log_softmax_backward(float *dinp, const float *dout, const float *out, size_t N, size_t V) {
    lsm_job j = {dinp, dout, out, NULL, V};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(V), ops_team(N * V), backward_rows, &j);
}
