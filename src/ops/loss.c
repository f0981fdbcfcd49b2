/* Cross-entropy with label smoothing (Szegedy et al. 2016; Vaswani et al. 2017, §5.4), with the
 * semantics of PyTorch's CrossEntropyLoss(label_smoothing=eps, ignore_index=pad): the smoothed
 * target spreads eps/V over all V classes, pad included; rows whose target is pad are ignored and
 * the mean runs over the others. */
#include "ops.h"
#include "parallel.h"

#include <math.h>

/* log Σ_j exp(x_j) of one row, max-subtracted, in double. */
static double row_logsumexp(const float *x, size_t V) {
    float mx = -INFINITY;
    for (size_t j = 0; j < V; j++)
        if (x[j] > mx) mx = x[j];
    double sum = 0.0;
    for (size_t j = 0; j < V; j++) sum += exp((double)x[j] - (double)mx);
    return (double)mx + log(sum);
}

double cross_entropy_forward(float *losses, size_t *n_nonpad, const float *logits,
                             const int32_t *targets, int32_t pad, float eps, size_t N, size_t V) {
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(V)) num_threads(ops_team(N * V))
    for (size_t n = 0; n < N; n++) {
        if (targets[n] == pad || V == 0) {
            losses[n] = 0.0f;
            continue;
        }
        const float *x = logits + n * V;
        const double lse = row_logsumexp(x, V);
        double sum_x = 0.0;
        for (size_t j = 0; j < V; j++) sum_x += x[j];
        /* −Σ q_j (x_j − lse) = lse − (1 − eps)·x_y − eps·mean_j(x_j), since Σ q_j = 1 */
        const double e = (double)eps;
        losses[n] = (float)(lse - (1.0 - e) * (double)x[targets[n]] - e * sum_x / (double)V);
    }
    /* Serial sum in double: the same total whatever the thread count. */
    double total = 0.0;
    size_t count = 0;
    for (size_t n = 0; n < N; n++) {
        if (targets[n] == pad) continue;
        total += losses[n];
        count++;
    }
    if (n_nonpad) *n_nonpad = count;
    return count > 0 ? total / (double)count : 0.0;
}

void cross_entropy_backward(float *dlogits, const float *logits, const int32_t *targets, int32_t pad,
                            float eps, size_t n_nonpad, size_t N, size_t V) {
    const double inv_n = n_nonpad > 0 ? 1.0 / (double)n_nonpad : 0.0;
    const float smooth = V > 0 ? eps / (float)V : 0.0f; /* the eps/V every class gets */
#pragma omp parallel for schedule(dynamic, ops_rows_per_chunk(V)) num_threads(ops_team(N * V))
    for (size_t n = 0; n < N; n++) {
        const float *x = logits + n * V;
        float *dx = dlogits + n * V;
        if (targets[n] == pad || n_nonpad == 0) {
            for (size_t j = 0; j < V; j++) dx[j] = 0.0f;
            continue;
        }
        /* d/dx_j of lse − Σ q_j x_j = softmax_j − q_j; each x_j is read before dx_j is written,
         * so dlogits may alias logits. */
        const double lse = row_logsumexp(x, V);
        const size_t y = (size_t)targets[n];
        for (size_t j = 0; j < V; j++) {
            double q = (double)smooth + (j == y ? 1.0 - (double)eps : 0.0);
            dx[j] = (float)((exp((double)x[j] - lse) - q) * inv_n);
        }
    }
}
